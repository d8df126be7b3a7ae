export function DataPage(_props: any) {
  return <h1>DataPage</h1>;
}
