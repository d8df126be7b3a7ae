/**
 * Issue 11, items 1 and 4: what a per-call key and a restricted key may reach. Each test plays
 * the attack (mallory's algorithm holding alice's call key, or a key of alice with fewer
 * capabilities) and asserts the refusal; alice's own calls keep returning alice's results.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createAndBuild, writePythonAlgorithm } from '../support/algorithms.js';
import { PYTHON_API_REQUEST } from '../support/api-socket-python.js';
import { assertError } from '../support/assertions.js';
import { accountId, callKey } from '../support/data.js';
import { createOrganization, createUser, type TestUser } from '../support/fixtures.js';
import { FIXTURES_DIR } from '../support/fixtures-algorithms.js';
import { clone, commitAndPush, git, gitUrl, removeClone } from '../support/git.js';
import { client, request, type Client } from '../support/http.js';
import { DATABASES, makeTempDir, startTestServer, type TestServer } from '../support/server.js';

const PASSWORD = 'alice-original-password';

/**
 * Mallory's algorithm: while alice's call runs it takes the call key from its environment and
 * tries, over the service's API socket, everything an attacker would want, reporting each
 * answer's status. With pipeline_enabled it is what any public algorithm could do.
 */
const MALLORY_ALGORITHM = String.raw`
import json
${PYTHON_API_REQUEST}

def request(method, path, body=None):
    if body is None:
        return api_request(method, path)
    return api_request(method, path, body=json.dumps(body).encode(), content_type="application/json")

def apply(input):
    victim = input["victim"]
    return {
        "list_keys": request("GET", "/v1/users/%s/keys" % victim),
        "create_key": request("POST", "/v1/users/%s/keys" % victim, {}),
        "set_password": request("PUT", "/v1/users/%s" % victim, {"password": "owned-by-mallory"}),
        "create_org": request("POST", "/v1/organizations", {"org_name": "evilcorp", "org_label": "x", "org_contact_name": "m", "org_email": "m@example.test", "type_id": "basic"}),
        "create_algorithm": request("POST", "/v1/algorithms/%s" % victim, {"name": "Planted"}),
        "call_victim": request("POST", "/v1/algo/%s/Secret/%s" % (victim, input["secret_version"]), "from mallory"),
    }
`;

for (const database of DATABASES) {
  describe(`credentials stay in their lane (${database})`, () => {
    let srv: TestServer;
    let api: Client;
    let alice: TestUser;
    let mallory: TestUser;
    let admin: TestUser;
    let secretVersion: string;
    const callSecret = (input: string) =>
      request(srv.url, 'POST', `/v1/algo/alice/Secret/${secretVersion}`, { key: alice.key, body: input });

    before(async () => {
      srv = await startTestServer({ database });
      api = client(srv.url);
      alice = await createUser(api, srv.adminKey, 'alice', { password: PASSWORD });
      mallory = await createUser(api, srv.adminKey, 'mallory');
      admin = { name: 'admin', key: srv.adminKey, keyId: '' };
      // Alice's private algorithm: the Python hello fixture.
      secretVersion = await createAndBuild(srv.url, api, alice, 'alice', 'Secret', path.join(FIXTURES_DIR, 'python', 'hello'), {
        environment: 'python311',
      });
      const tree = await makeTempDir('algohost-mallory-');
      writePythonAlgorithm(tree, 'mallory', 'Steal', MALLORY_ALGORITHM);
      await createAndBuild(srv.url, api, mallory, 'mallory', 'Steal', tree, {
        environment: 'python311',
        settings: { pipeline_enabled: true, algorithm_callability: 'public' },
      });
      await fs.promises.rm(tree, { recursive: true, force: true });
      // Published, as an algorithm others call would be.
      const published = await api.post('/v1/algorithms/mallory/Steal/versions', {
        key: mallory.key,
        body: { version_info: { version_type: 'major' }, settings: { algorithm_callability: 'public' } },
      });
      assert.equal(published.status, 200, published.text);
    });
    after(() => srv.stop());

    test("mallory's algorithm, called by alice, cannot touch alice's keys, password, organizations or algorithms", async () => {
      const keysBefore = await api.get('/v1/users/alice/keys', { key: alice.key });
      const res = await request(srv.url, 'POST', '/v1/algo/mallory/Steal/1.0.0', {
        key: alice.key,
        body: { victim: 'alice', secret_version: secretVersion },
      });
      assert.equal(res.status, 200, res.text);
      const r = res.body.result as Record<string, { status: number; body: string }>;
      for (const attack of ['list_keys', 'create_key', 'set_password', 'create_org', 'create_algorithm']) {
        assert.equal(r[attack]!.status, 403, `${attack}: ${JSON.stringify(r[attack])}`);
      }
      assert.match(r.list_keys!.body, /key of an algorithm call/);
      assert.match(r.set_password!.body, /key of an algorithm call/);
      // What a call key is for still works: calling alice's algorithm as alice.
      assert.equal(r.call_victim!.status, 200, JSON.stringify(r.call_victim));
      assert.match(r.call_victim!.body, /hello from mallory/);
      // Nothing changed: same keys, the password still signs in, no planted algorithm.
      const keysAfter = await api.get('/v1/users/alice/keys', { key: alice.key });
      assert.deepEqual(keysAfter.body, keysBefore.body);
      const signIn = await api.post('/v1/auth/token', { body: { username: 'alice', password: PASSWORD } });
      assert.equal(signIn.status, 200, signIn.text);
      assertError(await api.get('/v1/algorithms/alice/Planted', { key: alice.key }), 404);
      const next = await callSecret('alice');
      assert.equal(next.body.result, 'hello alice', next.text);
    });

    test("an admin's call key is no admin: it cannot set the admin's password or mint an admin key", async () => {
      const adminId = await accountId(api, srv.adminKey, 'admin');
      const { key, revoke } = await callKey(srv, admin.key, { id: 'x', ownerId: adminId });
      try {
        assertError(await api.put('/v1/users/admin', { key, body: { password: 'owned-by-mallory' } }), 403);
        assertError(await api.post('/v1/users/admin/keys', { key, body: { kind: 'admin' } }), 403);
        assertError(await api.post('/v1/users/mallory/keys', { key, body: {} }), 403);
        assertError(await api.put('/v1/users/mallory', { key, body: { password: 'owned-by-mallory' } }), 403);
        assertError(await api.get('/v1/users', { key }), 403);
        assertError(await api.delete('/v1/users/alice', { key }), 403);
      } finally {
        revoke();
      }
    });

    test("a call key cannot push over Git into alice's algorithms, nor clone them", async () => {
      const aliceId = await accountId(api, srv.adminKey, 'alice');
      const { key, revoke } = await callKey(srv, alice, { id: 'x', ownerId: aliceId });
      const work = await makeTempDir('algohost-callkey-git-');
      try {
        // Clone with alice's real key, then try to push with the call key.
        const { dir } = await clone(gitUrl(srv.url, 'alice', alice.key, 'alice', 'Secret'));
        try {
          fs.writeFileSync(path.join(dir, 'src', 'Secret_planted.py'), 'print("mallory was here")\n');
          await git(['remote', 'set-url', 'origin', gitUrl(srv.url, 'alice', key, 'alice', 'Secret')], dir);
          const push = await commitAndPush(dir, 'planted');
          assert.notEqual(push.code, 0, push.stderr);
          assert.match(push.stderr, /key of an algorithm call/);
        } finally {
          await removeClone(dir);
        }
        const cloned = await git2(srv.url, key, work);
        assert.notEqual(cloned.code, 0);
        const builds = await api.get('/v1/algorithms/alice/Secret/builds', { key: alice.key });
        assert.equal(builds.body.results.length, 1, 'no build was queued by the refused push');
      } finally {
        revoke();
        await fs.promises.rm(work, { recursive: true, force: true });
      }
    });

    test('a call key cannot manage or read organizations, nor manage algorithms', async () => {
      await createOrganization(api, alice.key, `acme_${database}`);
      const aliceId = await accountId(api, srv.adminKey, 'alice');
      const { key, revoke } = await callKey(srv, alice, { id: 'x', ownerId: aliceId });
      try {
        assertError(await api.get(`/v1/organizations/acme_${database}`, { key }), 403);
        assertError(await api.get(`/v1/organizations/acme_${database}/members`, { key }), 403);
        assertError(await api.put(`/v1/organizations/acme_${database}`, { key, body: { org_label: 'pwned' } }), 403);
        assertError(await api.delete(`/v1/organizations/acme_${database}/members/alice`, { key }), 403);
        assertError(await api.delete(`/v1/organizations/acme_${database}`, { key }), 403);
        assertError(await api.put('/v1/algorithms/alice/Secret', { key, body: { settings: { algorithm_callability: 'public' } } }), 403);
        assertError(await api.delete('/v1/algorithms/alice/Secret', { key }), 403);
        assertError(await api.post('/v1/algorithms/alice/Secret/versions', { key, body: { version_type: 'minor' } }), 403);
        const org = await api.get(`/v1/organizations/acme_${database}`, { key: alice.key });
        assert.equal(org.body.org_label, `acme_${database} Inc`);
      } finally {
        revoke();
      }
    });

    describe('a restricted key does only what its capabilities name', () => {
      let reader: string;
      before(async () => {
        const res = await api.post('/v1/users/alice/keys', { key: alice.key, body: { capabilities: ['read_data'] } });
        assert.equal(res.status, 200, res.text);
        reader = res.body.key as string;
      });

      test('it cannot change the password (so cannot mint a session with every capability)', async () => {
        const res = await api.put('/v1/users/alice', { key: reader, body: { password: 'owned-by-mallory', current_password: PASSWORD } });
        assertError(res, 403);
        assert.match(res.text, /every capability/);
        const session = await api.post('/v1/auth/token', { body: { username: 'alice', password: 'owned-by-mallory' } });
        assertError(session, 401);
      });

      test('it cannot list, create or revoke keys', async () => {
        assertError(await api.get('/v1/users/alice/keys', { key: reader }), 403);
        assertError(await api.post('/v1/users/alice/keys', { key: reader, body: { capabilities: ['read_data'] } }), 403);
        assertError(await api.delete(`/v1/users/alice/keys/${alice.keyId}`, { key: reader }), 403);
        const keys = await api.get('/v1/users/alice/keys', { key: alice.key });
        assert.ok(
          keys.body.results.some((k: { id: string }) => k.id === alice.keyId),
          'the full key is still there',
        );
      });

      test('it cannot push or clone over Git: Git needs manage_algorithms', async () => {
        const { dir } = await clone(gitUrl(srv.url, 'alice', alice.key, 'alice', 'Secret'));
        try {
          fs.writeFileSync(path.join(dir, 'planted.txt'), 'x\n');
          await git(['remote', 'set-url', 'origin', gitUrl(srv.url, 'alice', reader, 'alice', 'Secret')], dir);
          const push = await commitAndPush(dir, 'planted');
          assert.notEqual(push.code, 0, push.stderr);
          assert.match(push.stderr, /lacks the manage_algorithms capability/);
        } finally {
          await removeClone(dir);
        }
        const work = await makeTempDir('algohost-reader-git-');
        try {
          assert.notEqual((await git2(srv.url, reader, work)).code, 0);
        } finally {
          await fs.promises.rm(work, { recursive: true, force: true });
        }
      });

      test('it cannot create or manage organizations, and a call made with it is refused', async () => {
        assertError(
          await api.post('/v1/organizations', { key: reader, body: { org_name: 'readers', org_label: 'r', type_id: 'basic' } }),
          403,
        );
        assertError(await api.put(`/v1/organizations/acme_${database}`, { key: reader, body: { org_label: 'pwned' } }), 403);
        const call = await request(srv.url, 'POST', `/v1/algo/alice/Secret/${secretVersion}`, { key: reader, body: 'x' });
        assert.equal(call.status, 403, call.text);
      });
    });

    describe('changing a password', () => {
      test('needs the current password, even with a full key of the account', async () => {
        const without = await api.put('/v1/users/alice', { key: alice.key, body: { password: 'a-new-password' } });
        assertError(without, 403);
        assert.match(without.text, /current_password/);
        const wrong = await api.put('/v1/users/alice', {
          key: alice.key,
          body: { password: 'a-new-password', current_password: 'not-it-at-all' },
        });
        assertError(wrong, 403);
        const ok = await api.put('/v1/users/alice', { key: alice.key, body: { password: 'a-new-password', current_password: PASSWORD } });
        assert.equal(ok.status, 200, ok.text);
        assert.equal((await api.post('/v1/auth/token', { body: { username: 'alice', password: 'a-new-password' } })).status, 200);
      });

      test("an admin sets another account password without it; mallory cannot set alice's", async () => {
        assertError(await api.put('/v1/users/alice', { key: mallory.key, body: { password: 'owned-by-mallory' } }), 403);
        const set = await api.put('/v1/users/alice', { key: srv.adminKey, body: { password: PASSWORD } });
        assert.equal(set.status, 200, set.text);
        assert.equal((await api.post('/v1/auth/token', { body: { username: 'alice', password: PASSWORD } })).status, 200);
        const next = await callSecret('again');
        assert.equal(next.body.result, 'hello again', next.text);
      });
    });
  });
}

/** `git clone` of alice/Secret with `key` into `work`: the outcome only. */
async function git2(base: string, key: string, work: string) {
  return git(['clone', gitUrl(base, 'alice', key, 'alice', 'Secret'), path.join(work, 'c')]);
}
