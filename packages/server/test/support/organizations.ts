/** Organization membership through the public API: an owner invites, the user accepts. */
import assert from 'node:assert/strict';
import type { Client } from './http.js';
import type { TestUser } from './fixtures.js';

/** Makes `user` a member of `org` the way users do: the owner's invitation (202), then the user's acceptance. */
export async function addMember(api: Client, org: string, ownerKey: string, user: TestUser, role?: 'owner' | 'member'): Promise<void> {
  const invited = await api.put(`/v1/organizations/${org}/members/${user.name}`, { key: ownerKey, ...(role ? { body: { role } } : {}) });
  assert.equal(invited.status, 202, invited.text);
  const accepted = await api.post(`/v1/users/${user.name}/invitations/${org}`, { key: user.key });
  assert.equal(accepted.status, 200, accepted.text);
  assert.equal(accepted.body.role, role ?? 'member');
}
