export function AlgorithmPage(_props: any) {
  return <h1>AlgorithmPage</h1>;
}
