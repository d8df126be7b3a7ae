export function AccountPage(_props: any) {
  return <h1>AccountPage</h1>;
}
