/** Creating the accounts most tests need, through the public API. */
import assert from 'node:assert/strict';
import type { Client } from './http.js';

export interface TestUser {
  name: string;
  key: string;
  keyId: string;
}

export async function createUser(api: Client, adminKey: string, name: string, extra: Record<string, unknown> = {}): Promise<TestUser> {
  const created = await api.post('/v1/users', { key: adminKey, body: { username: name, email: `${name}@example.test`, ...extra } });
  assert.equal(created.status, 200, created.text);
  const key = await api.post(`/v1/users/${name}/keys`, { key: adminKey, body: {} });
  assert.equal(key.status, 200, key.text);
  return { name, key: key.body.key, keyId: key.body.id };
}

export async function createOrganization(api: Client, ownerKey: string, name: string): Promise<void> {
  const res = await api.post('/v1/organizations', {
    key: ownerKey,
    body: { org_name: name, org_label: `${name} Inc`, org_contact_name: 'Ada', org_email: `${name}@example.test`, type_id: 'basic' },
  });
  assert.equal(res.status, 200, res.text);
}
