/**
 * Issue 11, item 15: an organization owner could add any user, even as owner, without that
 * user's consent. Now mallory (owner of evil) only invites alice; alice is not a member until
 * she accepts, may decline, and nobody else can accept for her (not mallory, not evil's key,
 * not the key of a call alice makes to mallory's algorithm, not an admin). A cluster admin
 * still adds members directly.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertError, checkedClient } from '../support/assertions.js';
import { accountId, callKey, createAlgorithm } from '../support/data.js';
import { createOrganization, createUser, type TestUser } from '../support/fixtures.js';
import type { Client } from '../support/http.js';
import { DATABASES, startTestServer, type TestServer } from '../support/server.js';

for (const database of DATABASES) {
  describe(`security: organization membership needs the user's consent (${database})`, () => {
    let srv: TestServer;
    let api: Client;
    let alice: TestUser;
    let mallory: TestUser;

    const members = async (org: string, key: string) =>
      ((await api.get(`/v1/organizations/${org}/members`, { key })).body as { username: string; role: string }[]).map(
        (m) => `${m.username}:${m.role}`,
      );
    const invitationsOf = async (user: TestUser) =>
      ((await api.get(`/v1/users/${user.name}/invitations`, { key: user.key })).body as { org_name: string; role: string }[]).map(
        (i) => `${i.org_name}:${i.role}`,
      );
    /** What alice could do as a member of `org`; all of it must be refused while she is not one. */
    const assertNotMember = async (org: string) => {
      assertError(await api.get(`/v1/organizations/${org}`, { key: alice.key }), 403, 2001);
      assertError(await api.get(`/v1/organizations/${org}/members`, { key: alice.key }), 403, 2001);
      assertError(await api.post(`/v1/algorithms/${org}`, { key: alice.key, body: { name: 'ByAlice' } }), 403, 2001);
      assertError(await api.post(`/v1/data/${org}`, { key: alice.key, body: { name: 'alices' } }), 403, 2001);
      assert.ok(!(await members(org, mallory.key)).some((m) => m.startsWith('alice:')), `alice is not listed in ${org}`);
    };

    before(async () => {
      srv = await startTestServer({ database });
      api = checkedClient(srv.url);
      alice = await createUser(api, srv.adminKey, 'alice');
      mallory = await createUser(api, srv.adminKey, 'mallory');
      await createOrganization(api, mallory.key, 'evil');
      await createOrganization(api, alice.key, 'acme');
    });
    after(() => srv.stop());

    test('mallory adding alice (as owner) makes an invitation, not a membership', async () => {
      const res = await api.put('/v1/organizations/evil/members/alice', { key: mallory.key, body: { role: 'owner' } });
      assert.equal(res.status, 202, res.text);
      assert.equal(res.body.org_name, 'evil');
      assert.equal(res.body.username, 'alice');
      assert.equal(res.body.role, 'owner');
      assert.equal(res.body.invited_by, 'mallory');
      await assertNotMember('evil');
      assert.deepEqual(await members('evil', mallory.key), ['mallory:owner']);
      // Both sides see it pending.
      assert.deepEqual(
        ((await api.get('/v1/organizations/evil/invitations', { key: mallory.key })).body as { username: string }[]).map((i) => i.username),
        ['alice'],
      );
      assert.deepEqual(await invitationsOf(alice), ['evil:owner']);
      // Asking again only changes the pending invitation.
      const again = await api.put('/v1/organizations/evil/members/alice', { key: mallory.key });
      assert.equal(again.status, 202, again.text);
      assert.equal(again.body.role, 'member');
      assert.deepEqual(await invitationsOf(alice), ['evil:member']);
      await assertNotMember('evil');
      // mallory's organization key invites the same way.
      const orgKey = await api.post('/v1/users/evil/keys', { key: mallory.key, body: {} });
      assert.equal(orgKey.status, 200, orgKey.text);
      const byOrg = await api.put('/v1/organizations/evil/members/alice', { key: orgKey.body.key, body: { role: 'owner' } });
      assert.equal(byOrg.status, 202, byOrg.text);
      assert.equal(byOrg.body.invited_by, 'evil');
      await assertNotMember('evil');
      // mallory, not an owner of acme, cannot invite anyone into it.
      assertError(await api.put('/v1/organizations/acme/members/mallory', { key: mallory.key }), 403, 2001);
    });

    test('nobody but alice can accept (or see) her invitation', async () => {
      const orgKey = (await api.post('/v1/users/evil/keys', { key: mallory.key, body: {} })).body.key as string;
      const algo = {
        id: await createAlgorithm(api, 'mallory', mallory.key, 'Joiner', 'public'),
        ownerId: await accountId(api, srv.adminKey, 'mallory'),
      };
      const call = await callKey(srv, alice, algo); // alice calls mallory's algorithm; its code holds this key
      const readOnly = await api.post('/v1/users/alice/keys', { key: alice.key, body: { capabilities: ['read_data'] } });
      assert.equal(readOnly.status, 200, readOnly.text);
      try {
        for (const [who, key] of [
          ['mallory', mallory.key],
          ["evil's key", orgKey],
          ['an admin', srv.adminKey],
        ] as const) {
          const res = await api.post('/v1/users/alice/invitations/evil', { key });
          assertError(res, 403, 2001);
          assert.equal(res.body.error.message, 'only alice may accept invitations to alice', who);
        }
        const byCall = await api.post('/v1/users/alice/invitations/evil', { key: call.key });
        assertError(byCall, 403, 2001);
        assert.match(byCall.body.error.message, /accepting an invitation is not allowed with the key of an algorithm call/);
        const restricted = await api.post('/v1/users/alice/invitations/evil', { key: readOnly.body.key });
        assertError(restricted, 403, 2001);
        assert.match(restricted.body.error.message, /accepting an invitation needs a key with every capability/);
        // mallory cannot read alice's invitations either; the answer is the same for a user who does not exist.
        const peek = await api.get('/v1/users/alice/invitations', { key: mallory.key });
        assertError(peek, 403, 2001);
        const nobody = await api.get('/v1/users/nobody_here/invitations', { key: mallory.key });
        assertError(nobody, 403, 2001);
        assert.equal(nobody.body.error.message, peek.body.error.message.replaceAll('alice', 'nobody_here'));
        assertError(await api.get('/v1/users/alice/invitations', { key: call.key }), 403, 2001);
      } finally {
        call.revoke();
      }
      await assertNotMember('evil');
      assert.deepEqual(await invitationsOf(alice), ['evil:owner']);
      // alice's own organization is untouched.
      assert.deepEqual(await members('acme', alice.key), ['alice:owner']);
      assert.equal((await api.get('/v1/organizations/acme', { key: alice.key })).body.org_name, 'acme');
    });

    test('alice declines: no membership, the invitation is gone', async () => {
      assert.equal((await api.delete('/v1/users/alice/invitations/evil', { key: alice.key })).status, 204);
      assert.deepEqual(await invitationsOf(alice), []);
      assert.deepEqual((await api.get('/v1/organizations/evil/invitations', { key: mallory.key })).body, []);
      await assertNotMember('evil');
      const late = await api.post('/v1/users/alice/invitations/evil', { key: alice.key });
      assertError(late, 404, 3102);
      assert.equal(late.body.error.message, 'alice has no pending invitation to organization "evil"');
      assertError(await api.delete('/v1/users/alice/invitations/evil', { key: alice.key }), 404, 3102);
      await assertNotMember('evil');
    });

    test('a withdrawn invitation cannot be accepted; an accepted one makes alice a member with its role', async () => {
      assert.equal((await api.put('/v1/organizations/evil/members/alice', { key: mallory.key })).status, 202);
      assert.equal((await api.delete('/v1/organizations/evil/invitations/alice', { key: mallory.key })).status, 204);
      assertError(await api.delete('/v1/organizations/evil/invitations/alice', { key: mallory.key }), 404, 3102);
      assertError(await api.post('/v1/users/alice/invitations/evil', { key: alice.key }), 404, 3102);
      await assertNotMember('evil');

      assert.equal((await api.put('/v1/organizations/evil/members/alice', { key: mallory.key })).status, 202);
      const accepted = await api.post('/v1/users/alice/invitations/evil', { key: alice.key });
      assert.equal(accepted.status, 200, accepted.text);
      assert.deepEqual(accepted.body, { org_name: 'evil', username: 'alice', role: 'member' });
      assert.deepEqual(await members('evil', mallory.key), ['alice:member', 'mallory:owner']);
      assert.equal((await api.get('/v1/organizations/evil', { key: alice.key })).status, 200);
      assertError(await api.post('/v1/users/alice/invitations/evil', { key: alice.key }), 404, 3102);
      // alice may leave again.
      assert.equal((await api.delete('/v1/organizations/evil/members/alice', { key: alice.key })).status, 204);
      await assertNotMember('evil');
    });

    test('a cluster admin still adds a member directly', async () => {
      const added = await api.put('/v1/organizations/evil/members/alice', { key: srv.adminKey });
      assert.equal(added.status, 204, added.text);
      assert.deepEqual(await members('evil', mallory.key), ['alice:member', 'mallory:owner']);
      assert.equal((await api.get('/v1/organizations/evil', { key: alice.key })).status, 200);
      assert.deepEqual(await invitationsOf(alice), []);
      // A member's role is changed by an owner at once (the member agreed to membership).
      assert.equal((await api.put('/v1/organizations/evil/members/alice', { key: mallory.key, body: { role: 'owner' } })).status, 204);
      assert.deepEqual(await members('evil', alice.key), ['alice:owner', 'mallory:owner']);
    });
  });
}
