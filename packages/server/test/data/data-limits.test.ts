/**
 * What keeps hosted data bounded and tidy: the per-account quota (named when hit, nothing left
 * of a refused upload), the expiry of `.algo/…/temp` files by the periodic sweep, the sweep of
 * leftover `.session` data and of deleted algorithms' spaces, account deletion, and the
 * collection of blobs no record names.
 */
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { assertError, checkedClient } from '../support/assertions.js';
import { accountId, blobFiles, callKey, createAlgorithm, streamPut, waitFor } from '../support/data.js';
import { createUser, type TestUser } from '../support/fixtures.js';
import type { Client } from '../support/http.js';
import { DATABASES, startTestServer, type TestServer } from '../support/server.js';

const chunks = (n: number, size: number) => Array.from({ length: n }, (_, i) => Buffer.alloc(size, 65 + i));

for (const database of DATABASES) {
  describe(`hosted data quota (${database})`, () => {
    const QUOTA = 1000;
    let srv: TestServer;
    let api: Client;
    let alice: TestUser;
    let bob: TestUser;
    const put = (path: string, body: string | Buffer, key = alice.key) => api.put(`/v1/data/${path}`, { key, raw: body });
    const read = async (path: string, key = alice.key) =>
      (await fetch(`${srv.url}/v1/data/${path}`, { headers: { authorization: `Simple ${key}` } })).text();

    before(async () => {
      srv = await startTestServer({ database, env: { ALGOHOST_DATA_QUOTA: String(QUOTA) } });
      api = checkedClient(srv.url);
      alice = await createUser(api, srv.adminKey, 'alice');
      bob = await createUser(api, srv.adminKey, 'bob');
      await api.post('/v1/data/alice', { key: alice.key, body: { name: 'q' } });
      await api.post('/v1/data/bob', { key: bob.key, body: { name: 'q' } });
    });
    after(() => srv.stop());

    test('an upload past the quota is 413 naming the quota, checked on the declared length before reading', async () => {
      assert.equal((await put('alice/q/a', Buffer.alloc(600, 1))).status, 200);
      const over = await put('alice/q/b', Buffer.alloc(600, 2));
      assertError(over, 413, 7003);
      assert.match(over.body.error.message, /data quota exceeded: the account may store 1000 bytes \(ALGOHOST_DATA_QUOTA\) and uses 600/);
      assertError(await api.get('/v1/data/alice/q/b', { key: alice.key }), 404);
      // Replacing a file counts only the difference; another account has its own quota.
      assert.equal((await put('alice/q/a', Buffer.alloc(1000, 3))).status, 200);
      assertError(await put('alice/q/a', Buffer.alloc(1001, 4)), 413);
      assert.equal(await read('alice/q/a'), Buffer.alloc(1000, 3).toString(), 'the refused replace left the file as it was');
      assert.equal((await put('bob/q/a', Buffer.alloc(1000, 5), bob.key)).status, 200);
      // Deleting frees the space.
      await api.delete('/v1/data/alice/q/a', { key: alice.key });
      assert.equal((await put('alice/q/b', Buffer.alloc(900, 6))).status, 200);
      await api.delete('/v1/data/alice/q/b', { key: alice.key });
    });

    test('a chunked upload crossing the quota mid-body is refused and leaves nothing behind', async () => {
      assert.equal((await put('alice/q/keep', 'previous')).status, 200);
      const before = blobFiles(srv);
      for (const target of ['alice/q/new', 'alice/q/keep']) {
        const res = await streamPut(srv.url, `/v1/data/${target}`, alice.key, chunks(8, 400));
        assert.ok('status' in res);
        assert.equal(res.status, 413, res.text);
        assert.match(JSON.parse(res.text).error.message, /data quota exceeded.*ALGOHOST_DATA_QUOTA/);
        assert.match(String(res.headers['x-error-message']), /data quota exceeded/);
      }
      assertError(await api.get('/v1/data/alice/q/new', { key: alice.key }), 404);
      assert.equal(await read('alice/q/keep'), 'previous');
      assert.deepEqual(blobFiles(srv), before, 'no blob and no temporary file was left');
      // The connection served the refusal cleanly: the next request works.
      assert.equal((await put('alice/q/after', 'fine')).status, 200);
    });

    test("an algorithm's .algo space counts against its owner", async () => {
      await createAlgorithm(api, 'bob', bob.key, 'Filler');
      // bob already stores 1000 bytes.
      assertError(await put('.algo/bob/Filler/perm/x', 'one byte too many', bob.key), 413);
      await api.delete('/v1/data/bob/q/a', { key: bob.key });
      assert.equal((await put('.algo/bob/Filler/perm/x', Buffer.alloc(999), bob.key)).status, 200);
      assertError(await put('bob/q/more', 'xy', bob.key), 413);
    });
  });

  describe(`hosted data sweeps and cleanup (${database})`, () => {
    let srv: TestServer;
    let api: Client;
    let alice: TestUser;
    const put = (path: string, body: string, key = alice.key) => api.put(`/v1/data/${path}`, { key, raw: body });
    const status = async (path: string, key = alice.key) =>
      (await fetch(`${srv.url}/v1/data/${path}`, { headers: { authorization: `Simple ${key}` } })).status;
    const blobKeys = async (where: { space?: string; account?: string }) => {
      let q = srv.server.services.db.selectFrom('data_files').select('blob_key');
      if (where.space) q = q.where('space', '=', where.space as 'session');
      if (where.account) q = q.where('account_id', '=', where.account);
      return (await q.execute()).map((r) => r.blob_key);
    };

    before(async () => {
      srv = await startTestServer({ database, env: { ALGOHOST_DATA_TEMP_TTL: '1', ALGOHOST_DATA_SWEEP_INTERVAL: '1' } });
      api = checkedClient(srv.url);
      alice = await createUser(api, srv.adminKey, 'alice');
      await createAlgorithm(api, 'alice', alice.key, 'Sweeper');
    });
    after(() => srv.stop());

    test('temp files expire after ALGOHOST_DATA_TEMP_TTL through the periodic sweep; perm files stay', async () => {
      assert.equal((await put('.algo/alice/Sweeper/temp/t.txt', 'short-lived')).status, 200);
      assert.equal((await api.post('/v1/data/.algo/alice/Sweeper/temp', { key: alice.key, body: { name: 'sub' } })).status, 200);
      assert.equal((await put('.algo/alice/Sweeper/temp/sub/u.txt', 'also')).status, 200);
      assert.equal((await put('.algo/alice/Sweeper/perm/p.txt', 'kept')).status, 200);
      const tempBlobs = blobFiles(srv).objects.length;
      await waitFor('temp files to expire', async () => (await status('.algo/alice/Sweeper/temp/t.txt')) === 404);
      await waitFor('the emptied temp folder to go', async () => (await status('.algo/alice/Sweeper/temp/sub')) === 404);
      assert.equal(await status('.algo/alice/Sweeper/temp/sub/u.txt'), 404);
      assert.equal(await status('.algo/alice/Sweeper/perm/p.txt'), 200);
      assert.deepEqual((await api.get('/v1/data/.algo/alice/Sweeper/temp', { key: alice.key })).body, {});
      assert.equal(blobFiles(srv).objects.length, tempBlobs - 2, 'their blobs are deleted too');
      assert.deepEqual(blobFiles(srv).tmp, []);
    });

    test('session data left by a call that never ended is swept once no call key can still use it', async () => {
      const aliceId = await accountId(api, srv.adminKey, 'alice');
      const algoId = (await api.get('/v1/algorithms/alice/Sweeper', { key: alice.key })).body.id;
      const call = await callKey(srv, alice, { id: algoId, ownerId: aliceId });
      assert.equal((await put('.session/left.txt', 'orphaned', call.key)).status, 200);
      const keys = await blobKeys({ space: 'session' });
      assert.equal(keys.length, 1);
      await srv.server.services.data.sweep();
      assert.equal((await blobKeys({ space: 'session' })).length, 1, 'a recent session is kept');
      // As if the node had crashed mid-call three hours ago.
      await srv.server.services.db
        .updateTable('data_files')
        .set({ last_modified: new Date(Date.now() - 3 * 3600_000).toISOString() })
        .where('space', '=', 'session')
        .execute();
      // (The periodic sweep may get there first; either way it is gone after one.)
      await srv.server.services.data.sweep();
      assert.deepEqual(await blobKeys({ space: 'session' }), []);
      assert.equal(await srv.server.services.blobs.stat(keys[0]!), undefined);
    });

    test('the space of a deleted algorithm is deleted by the sweep', async () => {
      await createAlgorithm(api, 'alice', alice.key, 'Doomed');
      assert.equal((await put('.algo/alice/Doomed/perm/model', 'weights')).status, 200);
      const keys = await blobKeys({ space: 'algo' });
      assert.equal((await api.delete('/v1/algorithms/alice/Doomed', { key: alice.key })).status, 204);
      await srv.server.services.data.sweep();
      const left = await blobKeys({ space: 'algo' });
      const gone = keys.filter((k) => !left.includes(k));
      assert.equal(gone.length, 1);
      assert.equal(await srv.server.services.blobs.stat(gone[0]!), undefined);
      // A new algorithm of the same name starts with an empty space.
      await createAlgorithm(api, 'alice', alice.key, 'Doomed');
      assert.equal(await status('.algo/alice/Doomed/perm/model'), 404);
    });

    test('deleting an account deletes its data and blobs', async () => {
      const dave = await createUser(api, srv.adminKey, 'dave');
      const daveId = await accountId(api, srv.adminKey, 'dave');
      await api.post('/v1/data/dave', { key: dave.key, body: { name: 'stuff' } });
      await put('dave/stuff/a', 'a', dave.key);
      await createAlgorithm(api, 'dave', dave.key, 'Algo');
      await put('.algo/dave/Algo/perm/b', 'b', dave.key);
      const keys = await blobKeys({ account: daveId });
      assert.equal(keys.length, 2);
      assert.equal((await api.delete('/v1/users/dave', { key: srv.adminKey })).status, 204);
      assert.deepEqual(await blobKeys({ account: daveId }), []);
      for (const k of keys) assert.equal(await srv.server.services.blobs.stat(k), undefined);
      const folders = await srv.server.services.db.selectFrom('data_folders').select('id').where('account_id', '=', daveId).execute();
      assert.deepEqual(folders, []);
    });

    test('garbage collection deletes old blobs that no file names, and only those', async () => {
      await api.post('/v1/data/alice', { key: alice.key, body: { name: 'gc' } });
      await put('alice/gc/live', 'still here');
      const { blobs, data } = srv.server.services;
      await blobs.put('data/account/stray/0123', Readable.from([Buffer.from('left by a crash')]));
      const removed = await data.collectGarbage(Date.now() + 60_000);
      assert.equal(removed, 1);
      assert.equal(await blobs.stat('data/account/stray/0123'), undefined);
      assert.equal(await status('alice/gc/live'), 200);
      assert.equal(await data.collectGarbage(Date.now() - 60_000), 0, 'recent blobs are left alone (an upload may be finishing)');
    });
  });
}
