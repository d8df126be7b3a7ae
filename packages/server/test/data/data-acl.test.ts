/**
 * Who may read and write hosted data: owners, organization members, other users, admins,
 * keys without data capabilities, the three read ACLs (private, my algorithms, public), and
 * the per-call key of an algorithm: `.my` is the caller's, the caller's rights apply, plus the
 * algorithm's own `.algo` space and the request tree's `.session`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertError, checkedClient } from '../support/assertions.js';
import { accountId, callKey, createAlgorithm, waitFor } from '../support/data.js';
import { createOrganization, createUser, type TestUser } from '../support/fixtures.js';
import { addMember } from '../support/organizations.js';
import { client, type Client } from '../support/http.js';
import { DATABASES, startTestServer, type TestServer } from '../support/server.js';

for (const database of DATABASES) {
  describe(`hosted data access (${database})`, () => {
    let srv: TestServer;
    let api: Client;
    let alice: TestUser; // owns collections, the organization acme and the algorithm Reader
    let bob: TestUser; // another user
    let carol: TestUser; // member of acme
    let reader: { id: string; ownerId: string }; // alice/Reader (private)
    let shared: { id: string; ownerId: string }; // alice/Shared (public)
    let bobAlgo: { id: string; ownerId: string }; // bob/Other

    const read = async (path: string, key: string) => {
      const res = await fetch(`${srv.url}/v1/data/${path}`, { headers: { authorization: `Simple ${key}` } });
      return {
        status: res.status,
        text: await res.text(),
        type: res.headers.get('x-data-type'),
        message: res.headers.get('x-error-message'),
      };
    };
    const put = (path: string, body: string, key: string) => api.put(`/v1/data/${path}`, { key, raw: body });

    before(async () => {
      srv = await startTestServer({ database });
      api = checkedClient(srv.url);
      alice = await createUser(api, srv.adminKey, 'alice');
      bob = await createUser(api, srv.adminKey, 'bob');
      carol = await createUser(api, srv.adminKey, 'carol');
      await createOrganization(api, alice.key, 'acme');
      await addMember(api, 'acme', alice.key, carol);
      const aliceId = await accountId(api, srv.adminKey, 'alice');
      reader = { id: await createAlgorithm(api, 'alice', alice.key, 'Reader'), ownerId: aliceId };
      shared = { id: await createAlgorithm(api, 'alice', alice.key, 'Shared', 'public'), ownerId: aliceId };
      bobAlgo = { id: await createAlgorithm(api, 'bob', bob.key, 'Other'), ownerId: await accountId(api, srv.adminKey, 'bob') };

      for (const [name, acl] of [
        ['priv', { read: [] }],
        ['mine', undefined], // the default: my algorithms
        ['pub', { read: ['user://*'] }],
      ] as const) {
        const res = await api.post('/v1/data/alice', { key: alice.key, body: { name, ...(acl ? { acl } : {}) } });
        assert.equal(res.status, 200, res.text);
        assert.equal((await put(`alice/${name}/file.txt`, `${name} content`, alice.key)).status, 200);
      }
      assert.equal((await api.post('/v1/data/acme', { key: alice.key, body: { name: 'team', acl: { read: [] } } })).status, 200);
      assert.equal((await api.post('/v1/data/bob', { key: bob.key, body: { name: 'bobs' } })).status, 200);
    });
    after(() => srv.stop());

    test('collections carry their read ACL (?acl=true); the default is my algorithms', async () => {
      for (const [name, acl] of [
        ['priv', []],
        ['mine', ['algo://.my/*']],
        ['pub', ['user://*']],
      ] as const) {
        const res = await api.get(`/v1/data/alice/${name}?acl=true`, { key: alice.key });
        assert.deepEqual(res.body.acl, { read: acl }, name);
        assert.equal(res.body.files[0].filename, 'file.txt');
      }
      assert.equal((await api.get('/v1/data/alice/priv', { key: alice.key })).body.acl, undefined, 'only when asked');
    });

    test('the owner reads and writes everything; another user reads only public collections and writes nothing', async () => {
      for (const name of ['priv', 'mine', 'pub']) {
        assert.equal((await read(`alice/${name}/file.txt`, alice.key)).text, `${name} content`);
        assert.equal((await put(`alice/${name}/new.txt`, 'x', alice.key)).status, 200);
      }
      assert.equal((await read('alice/pub/file.txt', bob.key)).text, 'pub content');
      assert.equal((await read('alice/pub', bob.key)).type, 'directory');
      // A collection bob may not read is, for bob, one that does not exist (reads and writes).
      for (const name of ['priv', 'mine']) {
        const res = await read(`alice/${name}/file.txt`, bob.key);
        assert.equal(res.status, 404, name);
        assert.equal(JSON.parse(res.text).error.message, `data://alice/${name}/file.txt does not exist`);
        assertError(await api.get(`/v1/data/alice/${name}`, { key: bob.key }), 404, 7001);
        assertError(await put(`alice/${name}/intruder.txt`, 'x', bob.key), 404, 7001);
        assertError(await api.delete(`/v1/data/alice/${name}/file.txt`, { key: bob.key }), 404, 7001);
        assertError(await api.post(`/v1/data/alice/${name}`, { key: bob.key, body: { name: 'sub' } }), 404, 7001);
        assertError(await api.patch(`/v1/data/alice/${name}`, { key: bob.key, body: { acl: { read: ['user://*'] } } }), 404, 7001);
      }
      // A public one bob knows of: writing there is refused.
      const res = await put('alice/pub/intruder.txt', 'x', bob.key);
      assertError(res, 403);
      assert.match(res.body.error.message, /only alice may write there/);
      assertError(await api.delete('/v1/data/alice/pub/file.txt', { key: bob.key }), 403);
      assertError(await api.post('/v1/data/alice/pub', { key: bob.key, body: { name: 'sub' } }), 403);
      assertError(await api.patch('/v1/data/alice/pub', { key: bob.key, body: { acl: { read: ['user://*'] } } }), 403);
      assertError(await api.post('/v1/data/alice', { key: bob.key, body: { name: 'squat' } }), 403);
      assertError(await api.get('/v1/data/alice/nothing/here', { key: bob.key }), 404, 7001);
      // Listing someone's root shows only what the caller may read.
      assert.deepEqual((await api.get('/v1/data/alice', { key: bob.key })).body, { folders: [{ name: 'pub' }] });
      assert.deepEqual(
        (await api.get('/v1/data/alice', { key: alice.key })).body.folders.map((f: { name: string }) => f.name),
        ['mine', 'priv', 'pub'],
      );
      // .my is always one's own.
      assert.deepEqual((await api.get('/v1/data/.my', { key: bob.key })).body, { folders: [{ name: 'bobs' }] });
    });

    test("organization members read and write the organization's data; others do not", async () => {
      assert.equal((await put('acme/team/plan.txt', 'by carol', carol.key)).status, 200);
      assert.equal((await read('acme/team/plan.txt', alice.key)).text, 'by carol');
      assert.equal((await api.post('/v1/data/acme/team', { key: carol.key, body: { name: 'q1' } })).status, 200);
      assert.equal((await api.post('/v1/data/acme', { key: carol.key, body: { name: 'carols' } })).status, 200);
      assertError(await put('acme/team/x', 'x', bob.key), 404, 7001);
      assert.equal((await read('acme/team/plan.txt', bob.key)).status, 404);
      const res = await api.get('/v1/data/acme/team/plan.txt', { key: bob.key });
      assertError(res, 404, 7001);
      assert.equal(res.body.error.message, 'data://acme/team/plan.txt does not exist');
      assert.deepEqual((await api.get('/v1/data/acme', { key: bob.key })).body, {});
    });

    test("PATCH replaces a collection's ACL (exactly 200); bad ACLs and non-collections are 400", async () => {
      assert.equal((await api.post('/v1/data/alice', { key: alice.key, body: { name: 'flip', acl: { read: [] } } })).status, 200);
      await put('alice/flip/f', 'flipped', alice.key);
      assert.equal((await read('alice/flip/f', bob.key)).status, 404);
      const opened = await api.patch('/v1/data/alice/flip', { key: alice.key, body: { acl: { read: ['user://*'] } } });
      assert.equal(opened.status, 200);
      assert.deepEqual(opened.body, { result: 'data://alice/flip' });
      assert.equal((await read('alice/flip/f', bob.key)).text, 'flipped');
      assert.equal((await api.patch('/v1/data/alice/flip', { key: alice.key, body: { acl: { read: [] } } })).status, 200);
      assert.equal((await read('alice/flip/f', bob.key)).status, 404);

      for (const body of [{ acl: { read: ['user://bob'] } }, { acl: { read: 'user://*' } }, { acl: {} }, {}, { acl: { read: [5] } }]) {
        assertError(await api.patch('/v1/data/alice/flip', { key: alice.key, body }), 400);
      }
      assertError(await api.post('/v1/data/alice', { key: alice.key, body: { name: 'badacl', acl: { read: ['group://x'] } } }), 400);
      await api.post('/v1/data/alice/flip', { key: alice.key, body: { name: 'inner' } });
      assertError(await api.patch('/v1/data/alice/flip/inner', { key: alice.key, body: { acl: { read: [] } } }), 400);
      assertError(await api.patch('/v1/data/alice/flip/f', { key: alice.key, body: { acl: { read: [] } } }), 400);
      assertError(await api.patch('/v1/data/alice/nosuch', { key: alice.key, body: { acl: { read: [] } } }), 404);
      assertError(await api.patch('/v1/data/.my', { key: alice.key, body: { acl: { read: [] } } }), 400);
    });

    test('admins reach everything; keys without read_data / write_data are refused', async () => {
      assert.equal((await read('alice/priv/file.txt', srv.adminKey)).text, 'priv content');
      const readOnly = await api.post('/v1/users/alice/keys', { key: alice.key, body: { capabilities: ['read_data'] } });
      const writeOnly = await api.post('/v1/users/alice/keys', { key: alice.key, body: { capabilities: ['write_data'] } });
      assert.equal((await read('alice/priv/file.txt', readOnly.body.key)).status, 200);
      const refusedWrite = await put('alice/priv/ro.txt', 'x', readOnly.body.key);
      assertError(refusedWrite, 403);
      assert.match(refusedWrite.body.error.message, /write_data/);
      assert.equal((await put('alice/priv/wo.txt', 'x', writeOnly.body.key)).status, 200);
      const refusedRead = await read('alice/priv/wo.txt', writeOnly.body.key);
      assert.equal(refusedRead.status, 403);
      assert.match(refusedRead.message ?? '', /read_data/);
    });

    test("a call key acts as the caller: .my is the caller's, the caller's rights apply, \"my algorithms\" opens the owner's collections", async () => {
      // bob calls alice's algorithm Reader.
      const call = await callKey(srv, bob, reader);
      try {
        assert.deepEqual((await api.get('/v1/data/.my', { key: call.key })).body, { folders: [{ name: 'bobs' }] });
        assert.deepEqual((await api.put('/v1/data/.my/bobs/result.txt', { key: call.key, raw: 'for bob' })).body, {
          result: 'data://.my/bobs/result.txt',
        });
        assert.equal((await read('bob/bobs/result.txt', bob.key)).text, 'for bob');
        assert.equal((await read('alice/mine/file.txt', call.key)).text, 'mine content', "my algorithms: the owner's algorithm reads");
        assert.equal((await read('alice/pub/file.txt', call.key)).text, 'pub content');
        assert.equal((await read('alice/priv/file.txt', call.key)).status, 404, 'private stays private');
        assertError(await put('alice/mine/x', 'x', call.key), 403); // reading is not writing
        assert.deepEqual(
          (await api.get('/v1/data/alice', { key: call.key })).body.folders.map((f: { name: string }) => f.name),
          ['mine', 'pub'],
        );
      } finally {
        call.revoke();
      }
      // The same collection is closed to bob himself and to bob's own algorithm.
      assert.equal((await read('alice/mine/file.txt', bob.key)).status, 404);
      const other = await callKey(srv, bob, bobAlgo);
      try {
        assert.equal((await read('alice/mine/file.txt', other.key)).status, 404);
      } finally {
        other.revoke();
      }
      assert.equal((await read('alice/mine/file.txt', call.key)).status, 401, 'a revoked call key is gone');
      // alice calling her own algorithm keeps all her rights.
      const own = await callKey(srv, alice, reader);
      try {
        assert.equal((await put('.my/priv/from-algo.txt', 'x', own.key)).status, 200);
      } finally {
        own.revoke();
      }
    });

    test("the algorithm's own .algo space: the algorithm and its owner's members, nobody else", async () => {
      const call = await callKey(srv, bob, reader);
      try {
        assert.deepEqual((await api.put('/v1/data/.algo/temp/scratch.txt', { key: call.key, raw: 'temp data' })).body, {
          result: 'data://.algo/temp/scratch.txt',
        });
        assert.equal((await put('.algo/perm/model.bin', 'weights', call.key)).status, 200);
        assert.equal((await api.post('/v1/data/.algo/perm', { key: call.key, body: { name: 'cache' } })).status, 200);
        assert.equal((await put('.algo/alice/Reader/perm/cache/c1', 'c', call.key)).status, 200, 'the explicit form too');
        const first = await api.get('/v1/data/.algo/perm', { key: call.key });
        assert.deepEqual(first.body.folders, [{ name: 'cache' }]);
        assert.equal(first.body.files, undefined);
        const second = await api.get(`/v1/data/.algo/perm?marker=${encodeURIComponent(first.body.marker)}`, { key: call.key });
        assert.deepEqual(
          second.body.files.map((f: { filename: string; size: number }) => [f.filename, f.size]),
          [['model.bin', 7]],
        );
        // The key reaches Reader's space (the algorithm's own), not another algorithm's.
        assertError(await put('.algo/alice/Shared/temp/x', 'x', call.key), 403);
        assertError(await put('.algo/temp', 'x', call.key), 409);
        assertError(await put('.algo/loose', 'x', call.key), 400);
      } finally {
        call.revoke();
      }
      // The owner (and members of an owning organization) from outside, with the explicit form.
      assert.deepEqual((await api.get('/v1/data/.algo/alice/Reader', { key: alice.key })).body, {
        folders: [{ name: 'perm' }, { name: 'temp' }],
      });
      assert.equal((await read('.algo/alice/Reader/temp/scratch.txt', alice.key)).text, 'temp data');
      assert.equal((await read('.algo/alice/Reader/perm/model.bin', alice.key)).text, 'weights');
      assert.deepEqual((await api.get('/v1/data/.algo/alice/Reader/temp?acl=true', { key: alice.key })).body.acl, { read: [] });
      // Others: a private algorithm is not even revealed; a public one's space is still closed.
      assertError(await api.get('/v1/data/.algo/alice/Reader/temp/scratch.txt', { key: bob.key }), 404, 1001);
      assertError(await api.get('/v1/data/.algo/alice/Shared/temp', { key: bob.key }), 403);
      assertError(await api.get('/v1/data/.algo/alice/Nope/temp', { key: alice.key }), 404);
      assertError(await api.post('/v1/data/.algo/alice/Reader', { key: alice.key, body: { name: 'third' } }), 400);
      assertError(await api.delete('/v1/data/.algo/alice/Reader/temp', { key: alice.key }), 400);
      assertError(await api.get('/v1/data/.algo/alice', { key: alice.key }), 400);
      // Outside an algorithm the short forms have no meaning.
      const outside = await api.get('/v1/data/.algo/temp/scratch.txt', { key: alice.key });
      assertError(outside, 400);
      assert.match(outside.body.error.message, /only inside an algorithm/);
      assertError(await api.get('/v1/data/.session', { key: alice.key }), 400);
    });

    test('.session is shared by the calls of one request tree and deleted when its outermost call ends', async () => {
      const root = await callKey(srv, bob, reader);
      const nested = await callKey(srv, bob, shared, root.key); // Reader calls Shared
      const elsewhere = await callKey(srv, bob, reader); // another request of bob's
      assert.equal((await api.put('/v1/data/.session/shared.txt', { key: root.key, raw: 'between calls' })).status, 200);
      assert.equal((await api.post('/v1/data/.session', { key: nested.key, body: { name: 'dir' } })).status, 200);
      assert.equal((await put('.session/dir/x', 'x', nested.key)).status, 200);
      assert.equal((await read('.session/shared.txt', nested.key)).text, 'between calls');
      assert.equal((await read('.session/shared.txt', elsewhere.key)).status, 404);
      const listing = await api.get('/v1/data/.session', { key: root.key });
      assert.deepEqual(listing.body.folders, [{ name: 'dir' }]);
      const files = await api.get(`/v1/data/.session?marker=${encodeURIComponent(listing.body.marker)}`, { key: root.key });
      assert.deepEqual(
        files.body.files.map((f: { filename: string }) => f.filename),
        ['shared.txt'],
      );
      nested.revoke();
      assert.equal((await read('.session/shared.txt', root.key)).text, 'between calls', 'a nested call ending keeps the session');
      const bytesBefore = await srv.server.services.db.selectFrom('data_files').select('blob_key').where('space', '=', 'session').execute();
      assert.equal(bytesBefore.length, 2);
      root.revoke();
      // The session is deleted in the background: its records first, then its blobs one by one.
      // Wait for the whole outcome (records and contents gone), not for the first half of it.
      await waitFor('the session to be deleted', async () => {
        const rows = await srv.server.services.db.selectFrom('data_files').select('name').where('space', '=', 'session').execute();
        return rows.length === 0;
      });
      const blobs = srv.server.services.blobs;
      await waitFor("the session's blobs to be deleted", async () => {
        const left = await Promise.all(bytesBefore.map(({ blob_key }) => blobs.stat(blob_key)));
        return left.every((s) => s === undefined);
      });
      for (const { blob_key } of bytesBefore) assert.equal(await blobs.stat(blob_key), undefined);
      elsewhere.revoke();
    });

    test('HEAD follows the same rules', async () => {
      const plain = client(srv.url);
      assert.equal((await plain.head('/v1/data/alice/pub/file.txt', { key: bob.key })).status, 200);
      const denied = await plain.head('/v1/data/alice/priv/file.txt', { key: bob.key });
      assert.equal(denied.status, 404);
      assert.equal(denied.headers.get('x-error-message'), 'data://alice/priv/file.txt does not exist');
    });
  });
}
