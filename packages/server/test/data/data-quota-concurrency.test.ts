/**
 * Issue 17, "the per-account data quota holds under concurrent uploads": many parallel uploads
 * of one account whose sizes add up past the quota. Whatever the interleaving, the bytes stored
 * never exceed the quota, every refused upload gets the documented 413 (code 7003, naming
 * ALGOHOST_DATA_QUOTA), and nothing of a refused upload stays behind: no file record, no blob,
 * no temporary file, no reservation. With declared lengths and with chunked bodies, on SQLite
 * and PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { checkedClient } from '../support/assertions.js';
import { accountId, blobFiles, streamPut } from '../support/data.js';
import { createUser, type TestUser } from '../support/fixtures.js';
import type { Client } from '../support/http.js';
import { DATABASES, startTestServer, type TestServer } from '../support/server.js';

const QUOTA = 1_000_000;
const PARALLEL = 24;

for (const database of DATABASES) {
  describe(`hosted data quota under concurrent uploads (${database})`, () => {
    let srv: TestServer;
    let api: Client;
    let alice: TestUser;
    let aliceId: string;

    const stored = async () => {
      const rows = await srv.server.services.db
        .selectFrom('data_files')
        .select(['name', 'size', 'blob_key'])
        .where('account_id', '=', aliceId)
        .execute();
      return rows.map((r) => ({ name: r.name, size: Number(r.size), blobKey: r.blob_key }));
    };
    const reservations = () => srv.server.services.db.selectFrom('data_reservations').selectAll().execute();

    /** The refused uploads left nothing: each blob on disk is a stored file's, and no reservation is held. */
    const assertNothingLeft = async () => {
      const files = await stored();
      const blobs = blobFiles(srv);
      assert.deepEqual(blobs.tmp, [], 'no temporary file of an upload remains');
      assert.equal(blobs.objects.length, files.length, 'one blob per stored file, none of a refused upload');
      for (const f of files)
        assert.ok(
          blobs.objects.some((o) => o.endsWith(f.blobKey)),
          `the blob of ${f.name} exists`,
        );
      assert.deepEqual(await reservations(), [], 'every reservation was committed or released');
    };

    const clear = async () => {
      for (const f of await stored()) await api.delete(`/v1/data/alice/q/${f.name}`, { key: alice.key });
      assert.deepEqual(await stored(), []);
    };

    const assertRefusal = (res: { status: number; text: string }) => {
      assert.equal(res.status, 413, res.text);
      const body = JSON.parse(res.text) as { error: { code: number; message: string } };
      assert.equal(body.error.code, 7003);
      assert.match(body.error.message, /data quota exceeded: the account may store 1000000 bytes \(ALGOHOST_DATA_QUOTA\)/);
    };

    before(async () => {
      srv = await startTestServer({ database, env: { ALGOHOST_DATA_QUOTA: String(QUOTA) } });
      api = checkedClient(srv.url);
      alice = await createUser(api, srv.adminKey, 'alice');
      aliceId = await accountId(api, srv.adminKey, 'alice');
      await api.post('/v1/data/alice', { key: alice.key, body: { name: 'q' } });
    });
    after(() => srv.stop());

    test(`${PARALLEL} parallel uploads with declared lengths: exactly as many as fit are stored, the rest get 413`, async () => {
      const size = 100_000; // ten fit
      const results = await Promise.all(
        Array.from({ length: PARALLEL }, (_, i) =>
          streamPut(srv.url, `/v1/data/alice/q/f${i}`, alice.key, [Buffer.alloc(size / 2, i), Buffer.alloc(size / 2, i)], {
            contentLength: size,
          }),
        ),
      );
      const statuses = results.map((r) => ('status' in r ? r.status : 0));
      assert.equal(statuses.filter((s) => s === 200).length, QUOTA / size, `statuses: ${statuses.join(' ')}`);
      for (const r of results) if ('status' in r && r.status !== 200) assertRefusal(r);
      const files = await stored();
      assert.equal(files.length, QUOTA / size);
      assert.ok(files.reduce((n, f) => n + f.size, 0) <= QUOTA);
      await assertNothingLeft();
      await clear();
    });

    test(`${PARALLEL} parallel chunked uploads (no declared length): the total stored stays within the quota`, async () => {
      // 24 × 160 kB = 3.84 MB offered against 1 MB; each body arrives in pieces, so the check
      // happens while bytes of the others are being written.
      const results = await Promise.all(
        Array.from({ length: PARALLEL }, (_, i) =>
          streamPut(
            srv.url,
            `/v1/data/alice/q/c${i}`,
            alice.key,
            Array.from({ length: 10 }, () => Buffer.alloc(16_000, i)),
          ),
        ),
      );
      const statuses = results.map((r) => ('status' in r ? r.status : 0));
      assert.ok(
        statuses.every((s) => s === 200 || s === 413),
        `statuses: ${statuses.join(' ')}`,
      );
      assert.ok(statuses.includes(200), 'some fit');
      assert.ok(statuses.includes(413), 'some do not');
      for (const r of results) if ('status' in r && r.status !== 200) assertRefusal(r);
      const files = await stored();
      assert.equal(files.length, statuses.filter((s) => s === 200).length);
      for (const f of files) assert.equal(f.size, 160_000, `${f.name} is whole`);
      assert.ok(files.reduce((n, f) => n + f.size, 0) <= QUOTA, `stored ${files.reduce((n, f) => n + f.size, 0)} bytes`);
      await assertNothingLeft();
      // With the uploads over, what is left of the quota is usable again.
      const left = QUOTA - files.reduce((n, f) => n + f.size, 0);
      const last = await api.put('/v1/data/alice/q/last', { key: alice.key, raw: Buffer.alloc(left, 1) });
      assert.equal(last.status, 200, last.text);
      await clear();
    });

    test('parallel replacements of one file count that file once', async () => {
      assert.equal((await api.put('/v1/data/alice/q/big', { key: alice.key, raw: Buffer.alloc(900_000, 1) })).status, 200);
      // Each replacement needs the 900 kB of the file it replaces: alone it fits, and replacing
      // does not charge the old bytes twice while the new ones are written.
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          streamPut(srv.url, '/v1/data/alice/q/big', alice.key, [Buffer.alloc(950_000, i + 2)], { contentLength: 950_000 }),
        ),
      );
      const statuses = results.map((r) => ('status' in r ? r.status : 0));
      assert.ok(statuses.includes(200), `statuses: ${statuses.join(' ')}`);
      for (const r of results) if ('status' in r && r.status !== 200) assertRefusal(r);
      const files = await stored();
      assert.deepEqual(
        files.map((f) => [f.name, f.size]),
        [['big', 950_000]],
      );
      await assertNothingLeft();
      await clear();
    });
  });
}
