export function OrganizationsPage(_props: any) {
  return <h1>Organizations</h1>;
}
export function OrganizationPage(_props: any) {
  return <h1>Organization</h1>;
}
