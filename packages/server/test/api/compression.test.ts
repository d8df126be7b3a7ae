/**
 * Large JSON answers compressed for clients that accept it (api/compression.ts): the OpenAPI
 * document and listings go out in brotli or gzip with Vary and a Content-Length of the coded
 * bytes, and decode to the JSON a client without Accept-Encoding gets; small answers, errors and
 * answers to anything but GET and HEAD go out as they are; fetch (what the official clients use)
 * reads the compressed answers as before.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import zlib from 'node:zlib';
import { createUser, type TestUser } from '../support/fixtures.js';
import { client, wireRequest, type Client, type WireResponse } from '../support/http.js';
import { DATABASES, startTestServer, type TestServer } from '../support/server.js';

const DECODE = { br: zlib.brotliDecompressSync, gzip: zlib.gunzipSync } as const;

function varies(res: WireResponse): boolean {
  return String(res.headers.vary ?? '')
    .split(',')
    .some((n) => n.trim().toLowerCase() === 'accept-encoding');
}

for (const database of DATABASES) {
  describe(`large JSON answers compressed (${database})`, () => {
    let srv: TestServer;
    let api: Client;
    let alice: TestUser;
    const auth = () => ({ authorization: `Simple ${alice.key}` });

    before(async () => {
      srv = await startTestServer({ database });
      api = client(srv.url);
      alice = await createUser(api, srv.adminKey, 'alice');
      for (let i = 0; i < 12; i++) {
        const res = await api.post('/v1/algorithms/alice', {
          key: alice.key,
          body: {
            name: `algo_${i}`,
            details: { label: `Algorithm number ${i}`, summary: `What algorithm ${i} does, said at some length. `.repeat(4) },
            settings: { language: 'python3-1', environment: 'cpu', algorithm_callability: 'private', source_visibility: 'closed' },
          },
        });
        assert.equal(res.status, 200, res.text);
      }
    });
    after(async () => {
      await srv.stop();
    });

    test('the OpenAPI document and a listing: the coding asked for, decoding to the uncoded JSON', async () => {
      for (const p of ['/v1/openapi.json', '/v1/algorithms/alice', '/v1/algorithm-environments/edge/languages']) {
        const plain = await wireRequest(srv.url, 'GET', p, auth());
        assert.equal(plain.status, 200, p);
        assert.equal(plain.headers['content-encoding'], undefined, `${p} without Accept-Encoding`);
        assert.ok(varies(plain), `${p}: Vary even when sent uncoded`);
        assert.ok(plain.body.length >= 1024, `${p} is a large answer: ${plain.body.length} bytes`);
        const json: unknown = JSON.parse(plain.body.toString());
        for (const [accept, coding] of [
          ['gzip, deflate, br', 'br'],
          ['gzip', 'gzip'],
          ['br;q=0, *', 'gzip'],
        ] as const) {
          const res = await wireRequest(srv.url, 'GET', p, { ...auth(), 'accept-encoding': accept });
          const what = `${p} with ${accept}`;
          assert.equal(res.status, 200, what);
          assert.equal(res.headers['content-encoding'], coding, what);
          assert.ok(varies(res), what);
          assert.match(String(res.headers['content-type']), /^application\/json/, what);
          assert.equal(res.headers['content-length'], String(res.body.length), `${what}: Content-Length`);
          assert.ok(res.body.length < plain.body.length / 2, `${what}: ${res.body.length} against ${plain.body.length} bytes`);
          assert.deepEqual(JSON.parse(DECODE[coding](res.body).toString()), json, `${what}: the same JSON`);
        }
        for (const accept of ['identity', 'br;q=0, gzip;q=0', 'deflate']) {
          const res = await wireRequest(srv.url, 'GET', p, { ...auth(), 'accept-encoding': accept });
          assert.equal(res.headers['content-encoding'], undefined, `${p} with ${accept}`);
          assert.deepEqual(res.body, plain.body, `${p} with ${accept}`);
        }
      }
    });

    test('HEAD announces the length its GET sends', async () => {
      const get = await wireRequest(srv.url, 'GET', '/v1/algorithms/alice', { ...auth(), 'accept-encoding': 'br' });
      const head = await wireRequest(srv.url, 'HEAD', '/v1/algorithms/alice', { ...auth(), 'accept-encoding': 'br' });
      assert.equal(head.status, 200);
      assert.equal(head.headers['content-encoding'], 'br');
      assert.equal(head.headers['content-length'], String(get.body.length));
      assert.equal(head.body.length, 0);
    });

    test('small answers, errors and answers to other methods go out as they are', async () => {
      const accept = { 'accept-encoding': 'gzip, deflate, br' };
      const health = await wireRequest(srv.url, 'GET', '/healthz', accept);
      assert.equal(health.headers['content-encoding'], undefined, 'a small answer');
      assert.ok(!varies(health), 'a small answer does not vary');
      assert.deepEqual(JSON.parse(health.body.toString()), { status: 'ok' });

      const missing = await wireRequest(srv.url, 'GET', '/v1/algorithms/alice/nothing_here', { ...auth(), ...accept });
      assert.equal(missing.status, 404);
      assert.equal(missing.headers['content-encoding'], undefined, 'an error');

      // A large answer to a POST (its summary makes it so): never compressed, as a key's creation is not.
      const created = await api.post('/v1/algorithms/alice', {
        key: alice.key,
        headers: accept,
        body: {
          name: 'long_summary',
          details: { label: 'Long', summary: 'A summary long enough to make the answer large. '.repeat(40) },
          settings: { language: 'python3-1', environment: 'cpu', algorithm_callability: 'private', source_visibility: 'closed' },
        },
      });
      assert.equal(created.status, 200, created.text);
      assert.ok(created.text.length > 1024, `a large answer: ${created.text.length} bytes`);
      assert.equal(created.headers.get('content-encoding'), null, 'an answer to a POST');
      const key = await api.post('/v1/users/alice/keys', { key: alice.key, headers: accept, body: { description: 'x'.repeat(200) } });
      assert.equal(key.status, 200, key.text);
      assert.equal(key.headers.get('content-encoding'), null, "a key's creation");

      const read = await wireRequest(srv.url, 'GET', '/v1/algorithms/alice/long_summary', { ...auth(), ...accept });
      assert.equal(read.headers['content-encoding'], 'br', 'the same algorithm read with GET');
    });

    test('fetch, as the official clients send it, reads the compressed answers', async () => {
      // fetch sends its own Accept-Encoding and decodes what comes back.
      const listing = await api.get('/v1/algorithms/alice', { key: alice.key });
      assert.equal(listing.status, 200);
      assert.ok(
        ['br', 'gzip'].includes(listing.headers.get('content-encoding') ?? ''),
        `coded: ${listing.headers.get('content-encoding')}`,
      );
      const plain = await wireRequest(srv.url, 'GET', '/v1/algorithms/alice', auth());
      assert.deepEqual(listing.body, JSON.parse(plain.body.toString()));
      assert.ok((listing.body as { results: unknown[] }).results.length >= 12);
    });
  });
}
