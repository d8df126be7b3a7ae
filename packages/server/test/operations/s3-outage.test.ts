/**
 * Issue 17, "the S3 store stopped mid-run": a node keeps hosted data in an S3-compatible bucket
 * (a real s3rver on loopback, in a process of the test's own) and the S3 server is stopped
 * under it. Reads and writes of file contents get 503 with a message naming the store and
 * Retry-After; everything that does not need the bucket keeps working (listings, users, calls of
 * an algorithm that uses no data); once S3 is back the node serves data again by itself, with
 * nothing lost and nothing half-written.
 *
 * s3rver, not the moto of scripts/with-services.sh: moto keeps objects only in memory, so a
 * stopped moto comes back empty, which is a lost bucket rather than an outage.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { publishedPython } from '../support/events.js';
import { createUser, type TestUser } from '../support/fixtures.js';
import { client, request, type Client } from '../support/http.js';
import { startS3Server, type S3TestServer } from '../support/s3.js';
import { startTestServer, type TestServer } from '../support/server.js';

const ECHO = `def apply(input):
    return {"echo": input}
`;

describe('the S3 store stopped under a running node', () => {
  let s3: S3TestServer;
  let srv: TestServer;
  let api: Client;
  let alice: TestUser;
  const bucket = `outage-${crypto.randomBytes(4).toString('hex')}`;
  const readFile = (path: string) => request(srv.url, 'GET', `/v1/data/alice/kept/${path}`, { key: alice.key });
  const writeFile = (path: string, raw: string) => request(srv.url, 'PUT', `/v1/data/alice/kept/${path}`, { key: alice.key, raw });

  before(async () => {
    s3 = await startS3Server();
    srv = await startTestServer({ env: s3.env(bucket) });
    api = client(srv.url);
    alice = await createUser(api, srv.adminKey, 'alice');
    await publishedPython(srv.url, api, alice, 'Echo', ECHO);
    assert.equal((await api.post('/v1/data/alice', { key: alice.key, body: { name: 'kept' } })).status, 200);
    assert.equal((await writeFile('a.txt', 'before')).status, 200);
  });
  after(async () => {
    await srv?.stop();
    await s3?.stop();
  });

  test('while it is down: file reads and writes get 503 naming the blob store; the rest of the node serves', async () => {
    await s3.halt();
    for (const res of [await readFile('a.txt'), await writeFile('b.txt', 'during'), await writeFile('a.txt', 'replaced')]) {
      assert.equal(res.status, 503, res.text);
      assert.match(res.body.error.message, /the blob store .*(unreachable|unavailable).*try again shortly/);
      assert.equal(res.headers.get('retry-after'), '5');
    }
    // What needs only the database still answers.
    const listing = await api.get('/v1/data/alice/kept', { key: alice.key });
    assert.equal(listing.status, 200, listing.text);
    assert.deepEqual(
      (listing.body.files as { filename: string }[]).map((f) => f.filename),
      ['a.txt'],
      'the refused writes left no file record',
    );
    assert.equal((await api.get('/v1/users/alice', { key: srv.adminKey })).status, 200);
    const call = await api.post('/v1/algo/alice/Echo/1.0.0', { key: alice.key, body: 'still here' });
    assert.equal(call.status, 200, call.text);
    assert.deepEqual(call.body.result, { echo: 'still here' });
    assert.equal((await api.get('/healthz')).status, 200, 'the node itself is up');
  });

  test('once it is back: the node serves data again by itself, nothing lost', async () => {
    await s3.resume();
    // The S3 client opens new connections on the next requests: no restart of the node.
    let res = await readFile('a.txt');
    for (let i = 0; i < 100 && res.status === 503; i++) {
      await new Promise((r) => setTimeout(r, 100));
      res = await readFile('a.txt');
    }
    assert.equal(res.status, 200, res.text);
    assert.equal(res.text, 'before', 'the write refused during the outage did not replace the file');
    assert.equal((await writeFile('b.txt', 'after')).status, 200);
    assert.equal((await readFile('b.txt')).text, 'after');
    const listing = await api.get('/v1/data/alice/kept', { key: alice.key });
    assert.deepEqual((listing.body.files as { filename: string }[]).map((f) => f.filename).sort(), ['a.txt', 'b.txt']);
  });
});
