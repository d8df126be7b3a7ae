export function AdminPage(_props: any) {
  return <h1>AdminPage</h1>;
}
