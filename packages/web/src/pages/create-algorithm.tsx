export function CreateAlgorithmPage(_props: any) {
  return <h1>CreateAlgorithmPage</h1>;
}
