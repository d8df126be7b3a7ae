/**
 * The audit log (domain/audit/, api/audit.ts, GET /v1/admin/audit): administrative and
 * security-relevant actions done through the real API are read back by an admin, newest first,
 * filtered by actor and by action, paged, without secrets; nobody else may read it. On SQLite,
 * and on PostgreSQL when the test services run.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertError } from '../support/assertions.js';
import { createUser, type TestUser } from '../support/fixtures.js';
import { client, type Client } from '../support/http.js';
import { addMember } from '../support/organizations.js';
import { DATABASES, startTestServer, type TestServer } from '../support/server.js';

interface Entry {
  actor: string | null;
  credential: string | null;
  action: string;
  target: string;
  status: number;
  address: string | null;
  details: { body?: Record<string, unknown>; id?: string };
}

for (const database of DATABASES) {
  describe(`audit log (${database})`, () => {
    let srv: TestServer;
    let api: Client;
    let alice: TestUser;
    let bob: TestUser;
    let carol: TestUser;
    let secret: string;
    const PASSWORD = 'alice has a long password';
    const audit = async (query = '') => {
      const res = await api.get(`/v1/admin/audit${query}`, { key: srv.adminKey });
      assert.equal(res.status, 200, res.text);
      return res.body as { results: Entry[]; marker: string | null; next_link: string | null };
    };

    before(async () => {
      srv = await startTestServer({ database });
      api = client(srv.url);
      alice = await createUser(api, srv.adminKey, 'alice', { password: PASSWORD });
      bob = await createUser(api, srv.adminKey, 'bob');
      carol = await createUser(api, srv.adminKey, 'carol');
      assert.equal((await api.post('/v1/organizations', { key: alice.key, body: { org_name: 'acme' } })).status, 200);
      await addMember(api, 'acme', alice.key, bob);
      const key = await api.post('/v1/users/alice/keys', {
        key: alice.key,
        body: { capabilities: ['call_algorithms'], description: 'ci' },
      });
      assert.equal(key.status, 200, key.text);
      secret = key.body.key as string;
      assert.equal((await api.delete(`/v1/users/alice/keys/${key.body.id as string}`, { key: alice.key })).status, 204);
      assert.equal((await api.post('/v1/algorithms/acme', { key: alice.key, body: { name: 'Hello' } })).status, 200);
      const patched = await api.patch('/v1/algorithms/acme/Hello', {
        key: bob.key,
        body: { settings: { algorithm_callability: 'public' } },
      });
      assert.equal(patched.status, 200, patched.text);
      assert.equal((await api.post('/v1/data/acme', { key: alice.key, body: { name: 'models', acl: { read: [] } } })).status, 200);
      assert.equal((await api.patch('/v1/data/acme/models', { key: bob.key, body: { acl: { read: ['user://*'] } } })).status, 200);
      // Refused and failed attempts.
      assertError(await api.post('/v1/users/alice/keys', { key: carol.key, body: {} }), 403);
      assertError(await api.post('/v1/users/alice/keys', { body: {} }), 401);
      assertError(await api.post('/v1/auth/token', { body: { username: 'alice', password: 'a wrong guess' } }), 401);
      assert.equal((await api.post('/v1/auth/token', { body: { username: 'alice', password: PASSWORD } })).status, 200);
      // Not audited: reading.
      assert.equal((await api.get('/v1/algorithms/acme/Hello', { key: alice.key })).status, 200);
    });
    after(() => srv?.stop());

    test('actions are read back newest first with actor, credential, target, outcome and settings', async () => {
      const { results } = await audit();
      const actions = results.map((e) => `${e.actor ?? '-'} ${e.action} ${e.status}`);
      assert.deepEqual(actions.slice(0, 10), [
        'alice session.create 200',
        'alice session.create 401',
        'carol key.create 403',
        'bob data.update 200',
        'alice data.create 200',
        'bob algorithm.patch 200',
        'alice algorithm.create 200',
        'alice key.revoke 204',
        'alice key.create 200',
        'bob user.invitations.accept 200',
      ]);
      assert.ok(!actions.some((a) => a.startsWith('- ')), 'an unauthenticated request is not logged');
      assert.ok(!actions.some((a) => a.includes('algorithm.get')), 'reads are not logged');
      const patch = results.find((e) => e.action === 'algorithm.patch')!;
      assert.equal(patch.target, '/v1/algorithms/acme/Hello');
      assert.equal(patch.credential, 'key');
      assert.equal(patch.address, '127.0.0.1');
      assert.deepEqual(patch.details.body, { settings: { algorithm_callability: 'public' } });
      const acl = results.find((e) => e.action === 'data.update')!;
      assert.deepEqual(acl.details.body, { acl: { read: ['user://*'] } });
      const created = results.find((e) => e.action === 'key.create' && e.actor === 'alice')!;
      assert.deepEqual(created.details.body, { capabilities: ['call_algorithms'], description: 'ci' });
      assert.match(created.details.id!, /^[0-9a-f-]{36}$/);
      assert.equal(results.find((e) => e.action === 'key.revoke')!.target, `/v1/users/alice/keys/${created.details.id!}`);
      const signIn = results.find((e) => e.action === 'session.create')!;
      assert.equal(signIn.credential, 'password');
      // Admin actions, with the admin key.
      const userCreate = results.find((e) => e.action === 'user.create' && e.details.body?.username === 'alice')!;
      assert.equal(userCreate.actor, 'admin');
      assert.equal(userCreate.credential, 'admin_key');
    });

    test('no secret reaches the log: passwords, key secrets, session tokens', async () => {
      const text = JSON.stringify((await audit('?limit=1000')).results);
      assert.ok(!text.includes(PASSWORD) && !text.includes('a wrong guess'), 'a password was logged');
      assert.ok(!text.includes(secret), 'a key secret was logged');
      assert.ok(!text.includes('eyJ'), 'a session token was logged');
      assert.match(text, /"password":"\[redacted\]"/, 'user.create shows that a password was set, not which');
    });

    test('filtered by actor, by action and by a dotted prefix of actions, and paged', async () => {
      const bobs = (await audit('?actor=bob')).results;
      assert.deepEqual(
        bobs.map((e) => e.action),
        ['data.update', 'algorithm.patch', 'user.invitations.accept'],
      );
      const keys = (await audit('?action=key')).results;
      assert.ok(keys.length >= 5 && keys.every((e) => e.action.startsWith('key.')), JSON.stringify(keys.map((e) => e.action)));
      const revokes = (await audit('?action=key.revoke&actor=alice')).results;
      assert.equal(revokes.length, 1);
      assert.equal((await audit('?action=ke')).results.length, 0, 'a prefix is whole dotted names');
      const first = await audit('?limit=2');
      assert.equal(first.results.length, 2);
      assert.ok(first.marker && first.next_link);
      const second = await audit(`?limit=2&marker=${first.marker}`);
      assert.deepEqual(
        second.results.map((e) => e.action),
        (await audit('?limit=4')).results.slice(2).map((e) => e.action),
      );
    });

    test('only admins read the log; bad filters are 400', async () => {
      assertError(await api.get('/v1/admin/audit', { key: alice.key }), 403);
      assertError(await api.get('/v1/admin/audit'), 401);
      const session = await api.post('/v1/auth/token', { body: { username: 'alice', password: PASSWORD } });
      assertError(await api.get('/v1/admin/audit', { auth: `Bearer ${session.body.token as string}` }), 403);
      assertError(await api.get('/v1/admin/audit?action=key%25', { key: srv.adminKey }), 400);
      assertError(await api.get('/v1/admin/audit?limit=0', { key: srv.adminKey }), 400);
    });

    test("SCM administration is logged without the OAuth application's secret", async () => {
      const made = await api.post('/v1/admin/scms', {
        key: srv.adminKey,
        body: {
          provider: 'gitea',
          urls: { web: 'https://forge.example.org' },
          oauth: { client_id: 'app', client_secret: 'oauth-app-secret' },
        },
      });
      assert.equal(made.status, 200, made.text);
      const disabled = await api.patch(`/v1/admin/scms/${made.body.id as string}`, { key: srv.adminKey, body: { enabled: false } });
      assert.equal(disabled.status, 200, disabled.text);
      const { results } = await audit('?action=scm');
      assert.deepEqual(
        results.map((e) => `${e.actor ?? '-'} ${e.action} ${e.status}`),
        ['admin scm.update 200', 'admin scm.create 200'],
      );
      assert.deepEqual(results[0]!.details.body, { enabled: false });
      assert.ok(!JSON.stringify(results).includes('oauth-app-secret'), 'an OAuth client secret was logged');
    });
  });
}
