import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createAndBuild } from '../support/algorithms.js';
import { createUser, type TestUser } from '../support/fixtures.js';
import { FIXTURES_DIR } from '../support/fixtures-algorithms.js';
import { client, request, type Client } from '../support/http.js';
import { startTestServer, type TestServer } from '../support/server.js';

const PY = path.join(FIXTURES_DIR, 'python');
const expected = JSON.parse(fs.readFileSync(path.join(PY, 'expected-output.json'), 'utf8')) as {
  input: unknown;
  content_type: string;
  result: unknown;
}[];

describe('the call API (Python fixture)', () => {
  let srv: TestServer;
  let api: Client;
  let alice: TestUser;
  let bob: TestUser;
  let sha: string;
  const call = (p: string, opts: Parameters<Client['post']>[1] = {}) =>
    request(srv.url, 'POST', `/v1/algo/${p}`, { key: alice.key, ...opts });

  before(async () => {
    srv = await startTestServer();
    api = client(srv.url);
    alice = await createUser(api, srv.adminKey, 'alice');
    bob = await createUser(api, srv.adminKey, 'bob');
    sha = await createAndBuild(srv.url, api, alice, 'alice', 'Hello', path.join(PY, 'hello'), { environment: 'python311' });
  });
  after(() => srv.stop());

  test('the owner calls a built commit; each expected output comes back in the envelope', async () => {
    for (const e of expected) {
      const res =
        typeof e.input === 'string'
          ? await call(`alice/Hello/${sha}`, { raw: e.input, headers: { 'content-type': 'text/plain' } })
          : await call(`alice/Hello/${sha}`, { body: e.input });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body.result, e.result);
      assert.equal(res.body.metadata.content_type, e.content_type);
      assert.equal(typeof res.body.metadata.duration, 'number');
    }
  });

  test('binary in, binary out (base64 in the envelope, bytes with output=raw)', async () => {
    const bytes = Buffer.from([0, 1, 2, 250, 255]);
    const res = await call(`alice/Hello/${sha}`, { raw: bytes, headers: { 'content-type': 'application/octet-stream' } });
    assert.equal(res.body.metadata.content_type, 'binary');
    assert.deepEqual(Buffer.from(res.body.result, 'base64'), Buffer.from(bytes).reverse());
    const raw = await fetch(`${srv.url}/v1/algo/alice/Hello/${sha}?output=raw`, {
      method: 'POST',
      headers: { authorization: `Simple ${alice.key}`, 'content-type': 'application/octet-stream' },
      body: bytes,
    });
    assert.deepEqual(Buffer.from(await raw.arrayBuffer()), Buffer.from(bytes).reverse());
    const text = await call(`alice/Hello/${sha}?output=raw`, { raw: 'there', headers: { 'content-type': 'text/plain' } });
    assert.equal(text.text, 'hello there');
  });

  test('the first call is cold, the next warm; timings are in metadata and /metrics', async () => {
    const second = await call(`alice/Hello/${sha}`, { body: 'x' });
    assert.equal(second.body.metadata.cold_start, false);
    for (const k of ['queue_ms', 'start_ms', 'run_ms']) assert.equal(typeof second.body.metadata[k], 'number', k);
    // /metrics answers admins (or the metrics token): api/metrics-route.ts.
    // Every node that runs calls and builds (one, or a cluster's workers) reports its own.
    const metrics = (
      await Promise.all(
        srv.runnerNodeUrls.map((url) =>
          fetch(`${url}/metrics`, { headers: { authorization: `Simple ${srv.adminKey}` } }).then((r) => r.text()),
        ),
      )
    ).join('\n');
    assert.match(metrics, /algohost_calls_total [1-9]/);
    assert.match(metrics, /algohost_warm_calls_total [1-9]/);
    assert.match(metrics, /algohost_cold_starts_total [1-9]/);
    // Latency histograms (p50/p99 come from their buckets): calls, cold starts, builds.
    assert.match(metrics, /# TYPE algohost_call_duration_seconds histogram/);
    assert.match(metrics, /algohost_call_duration_seconds_bucket\{le="\+Inf",outcome="ok"\} [1-9]/);
    assert.match(metrics, /algohost_call_duration_seconds_count\{outcome="ok"\} [1-9]/);
    assert.match(metrics, /algohost_cold_start_seconds_count [1-9]/);
    assert.match(metrics, /algohost_build_duration_seconds_count\{outcome="succeeded"\} [1-9]/);
  });

  test('the address tolerates algo:// and a trailing slash; no version is 404 until publishing', async () => {
    const tolerated = await call(`algo://alice/Hello/${sha}/`, { body: 'x' });
    assert.equal(tolerated.body.result, 'hello x', tolerated.text.slice(0, 300));
    const none = await call('alice/Hello', { body: 'x' });
    assert.equal(none.status, 404);
    assert.match(none.body.error.message, /no published version/);
    assert.ok(none.headers.get('x-error-message'));
    assert.equal((await call('alice/Nope/abc', { body: 'x' })).status, 404);
    assert.equal((await call('alice/Hello/not-a-version!', { body: 'x' })).status, 400);
  });

  test('private algorithms are invisible to others; commit calls are for members only', async () => {
    const res = await request(srv.url, 'POST', `/v1/algo/alice/Hello/${sha}`, { key: bob.key, body: 'x' });
    assert.equal(res.status, 404);
    assert.match(res.body.error.message, /algorithm algo:\/\/alice\/Hello.* not found/);
    await api.patch('/v1/algorithms/alice/Hello', { key: alice.key, body: { settings: { algorithm_callability: 'public' } } });
    const pub = await request(srv.url, 'POST', `/v1/algo/alice/Hello/${sha}`, { key: bob.key, body: 'x' });
    assert.equal(pub.status, 403);
    await api.patch('/v1/algorithms/alice/Hello', { key: alice.key, body: { settings: { algorithm_callability: 'private' } } });
  });

  test('bad input: malformed JSON, unknown content type, too large, bad timeouts', async () => {
    assert.equal((await call(`alice/Hello/${sha}`, { raw: '{"a":', headers: { 'content-type': 'application/json' } })).status, 400);
    assert.equal((await call(`alice/Hello/${sha}`, { raw: 'x', headers: { 'content-type': 'image/png' } })).status, 415);
    const big = await call(`alice/Hello/${sha}`, {
      raw: Buffer.alloc(10 * 1024 * 1024 + 10, 65),
      headers: { 'content-type': 'text/plain' },
    });
    assert.equal(big.status, 413);
    assert.match(big.body.error.message, /10485760 bytes/);
    assert.equal((await call(`alice/Hello/${sha}?timeout=abc`, { body: 'x' })).status, 400);
    const tooLong = await call(`alice/Hello/${sha}?timeout=3001`, { body: 'x' });
    assert.equal(tooLong.status, 400);
    assert.match(tooLong.body.error.message, /3000/);
    assert.equal((await request(srv.url, 'POST', `/v1/algo/alice/Hello/${sha}`, { body: 'x' })).status, 401);
  });

  test('async: output=void answers at once; the request id gives the same envelope later', async () => {
    const res = await call(`alice/Hello/${sha}?output=void`, { body: 'async' });
    assert.equal(res.status, 200);
    assert.equal(res.body.async, true);
    assert.match(res.body.request_id, /^req-/);
    let got: any;
    for (let i = 0; i < 100; i++) {
      got = (await api.get(`/v1/algo/requests/${res.body.request_id}`, { key: alice.key })).body;
      if (got.status === 'completed') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(got.status, 'completed');
    assert.equal(got.result, 'hello async');
    assert.equal((await api.get(`/v1/algo/requests/${res.body.request_id}`, { key: bob.key })).status, 404);
  });
});
