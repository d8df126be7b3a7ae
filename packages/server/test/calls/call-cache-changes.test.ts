/**
 * A node keeps the keys and resolutions a call needs in caches (a node alone for a minute, a
 * cluster's API node for seconds: main/wiring/base.ts). Every change those answers depend on,
 * made through this node, must apply to the very next call, not when the entry expires. Each
 * test first makes the caller's answer cached (a call that succeeds), then changes one thing
 * and calls again at once.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createAndBuild } from '../support/algorithms.js';
import { createOrganization, createUser, type TestUser } from '../support/fixtures.js';
import { FIXTURES_DIR } from '../support/fixtures-algorithms.js';
import { client, request, type Client } from '../support/http.js';
import { addMember } from '../support/organizations.js';
import { DATABASES, startTestServer, type TestServer } from '../support/server.js';

const HELLO = path.join(FIXTURES_DIR, 'python', 'hello');

for (const database of DATABASES) {
  describe(`cached answers follow changes at once (${database})`, () => {
    let srv: TestServer;
    let api: Client;
    let owner: TestUser;
    let member: TestUser;
    let outsider: TestUser;
    let sha: string;
    const call = (who: TestUser, address: string) => request(srv.url, 'POST', `/v1/algo/${address}`, { key: who.key, body: 'x' });

    before(async () => {
      srv = await startTestServer({ database });
      api = client(srv.url);
      owner = await createUser(api, srv.adminKey, 'cc_owner');
      member = await createUser(api, srv.adminKey, 'cc_member');
      outsider = await createUser(api, srv.adminKey, 'cc_outsider');
      await createOrganization(api, owner.key, 'cc_org');
      await addMember(api, 'cc_org', owner.key, member);
      sha = await createAndBuild(srv.url, api, owner, 'cc_org', 'Hello', HELLO, { environment: 'python311' });
      const published = await api.post('/v1/algorithms/cc_org/Hello/versions', {
        key: owner.key,
        body: { version_info: { version_type: 'major' }, settings: { algorithm_callability: 'public' } },
      });
      assert.equal(published.status, 200, published.text);
    });
    after(() => srv?.stop());

    test('a member removed from the organization cannot call its build by commit on the next call', async () => {
      const before = await call(member, `cc_org/Hello/${sha}`);
      assert.equal(before.status, 200, before.text);
      assert.equal(before.body.result, 'hello x');

      const removed = await api.delete(`/v1/organizations/cc_org/members/${member.name}`, { key: owner.key });
      assert.equal(removed.status, 204, removed.text);
      const after = await call(member, `cc_org/Hello/${sha}`);
      assert.equal(after.status, 403, after.text);
      assert.match(after.body.error.message, /by commit is for its owner and organization members/);

      // Added back (directly, by an admin): the next call runs again.
      const added = await api.put(`/v1/organizations/cc_org/members/${member.name}`, { key: srv.adminKey });
      assert.equal(added.status, 204, added.text);
      const again = await call(member, `cc_org/Hello/${sha}`);
      assert.equal(again.status, 200, again.text);
      assert.equal(again.body.result, 'hello x');
    });

    test('an algorithm made private is gone for others on their next call', async () => {
      const before = await call(outsider, 'cc_org/Hello');
      assert.equal(before.status, 200, before.text);
      assert.equal(before.body.result, 'hello x');

      const patched = await api.patch('/v1/algorithms/cc_org/Hello', {
        key: owner.key,
        body: { settings: { algorithm_callability: 'private' } },
      });
      assert.equal(patched.status, 200, patched.text);
      assert.equal((await call(outsider, 'cc_org/Hello')).status, 404);

      const reopened = await api.patch('/v1/algorithms/cc_org/Hello', {
        key: owner.key,
        body: { settings: { algorithm_callability: 'public' } },
      });
      assert.equal(reopened.status, 200, reopened.text);
      assert.equal((await call(outsider, 'cc_org/Hello')).body.result, 'hello x');
    });

    test('a revoked key is refused on its next call', async () => {
      const spare = await api.post(`/v1/users/${outsider.name}/keys`, { key: outsider.key, body: { description: 'spare' } });
      assert.equal(spare.status, 200, spare.text);
      const withSpare = { ...outsider, key: spare.body.key as string };
      assert.equal((await call(withSpare, 'cc_org/Hello')).body.result, 'hello x');

      const revoked = await api.delete(`/v1/users/${outsider.name}/keys/${spare.body.id}`, { key: outsider.key });
      assert.equal(revoked.status, 204, revoked.text);
      const after = await call(withSpare, 'cc_org/Hello');
      assert.equal(after.status, 401, after.text);
    });

    test("a deleted user's key is refused on its next call", async () => {
      const doomed = await createUser(api, srv.adminKey, 'cc_doomed');
      assert.equal((await call(doomed, 'cc_org/Hello')).body.result, 'hello x');

      const deleted = await api.delete(`/v1/users/${doomed.name}`, { key: srv.adminKey });
      assert.equal(deleted.status, 204, deleted.text);
      const after = await call(doomed, 'cc_org/Hello');
      assert.equal(after.status, 401, after.text);
    });

    // Last: it deletes the organization and its algorithm.
    test("a deleted organization's algorithm is not found on the next call", async () => {
      const before = await call(outsider, 'cc_org/Hello');
      assert.equal(before.status, 200, before.text);
      assert.equal(before.body.result, 'hello x');

      const deleted = await api.delete('/v1/organizations/cc_org', { key: owner.key });
      assert.equal(deleted.status, 204, deleted.text);
      const after = await call(outsider, 'cc_org/Hello');
      assert.equal(after.status, 404, after.text);
    });
  });
}
