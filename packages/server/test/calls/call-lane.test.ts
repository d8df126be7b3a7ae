/**
 * The call lane (api/call-lane.ts) answers plain warm calls without Fastify. Each kind of call is
 * sent twice: with a Content-Length (the lane takes it) and chunked (the lane leaves it to the
 * Fastify route), and the two answers must be the same: status, body (timings and request id
 * aside) and headers. The lane's own count tells which of the two answered.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createAndBuild } from '../support/algorithms.js';
import { createUser, type TestUser } from '../support/fixtures.js';
import { FIXTURES_DIR } from '../support/fixtures-algorithms.js';
import { client, type Client } from '../support/http.js';
import { startTestServer, type TestServer } from '../support/server.js';

const HELLO = path.join(FIXTURES_DIR, 'python', 'hello');

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** One POST; `chunked` sends the body without a Content-Length (so the route, not the lane, takes it). */
function post(
  base: string,
  p: string,
  o: { key?: string; type?: string; body: string | Buffer; chunked: boolean; headers?: Record<string, string> },
) {
  return new Promise<Answer>((resolve, reject) => {
    const body = Buffer.from(o.body);
    const headers: Record<string, string> = { ...o.headers };
    if (o.key) headers.authorization = `Simple ${o.key}`;
    if (o.type) headers['content-type'] = o.type;
    if (o.chunked) headers['transfer-encoding'] = 'chunked';
    else headers['content-length'] = String(body.length);
    const req = http.request(`${base}${p}`, { method: 'POST', headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * What must agree between the two answers: the body without its timings and request id, and the
 * headers but those of the connection, Content-Length (the timings' digits vary; it must match
 * the body) and Retry-After (seconds to the window's end: it may tick).
 */
function comparable(a: Answer) {
  let body: unknown = a.body.toString('base64');
  if ((a.headers['content-type'] ?? '').includes('json')) {
    body = JSON.parse(a.body.toString('utf8'));
    const meta = (body as { metadata?: Record<string, unknown> } | null)?.metadata;
    if (meta) {
      assert.equal(typeof meta.request_id, 'string');
      for (const k of ['duration', 'request_id', 'queue_ms', 'start_ms', 'run_ms', 'cold_start']) delete meta[k];
    }
  }
  const headers = Object.fromEntries(
    Object.entries(a.headers).filter(
      ([k]) => !['date', 'connection', 'keep-alive', 'transfer-encoding', 'retry-after', 'content-length'].includes(k),
    ),
  );
  assert.equal(a.headers['content-length'], String(a.body.length));
  return { status: a.status, headers, body };
}

describe('the call lane answers a warm call exactly as the route does', () => {
  let srv: TestServer;
  let api: Client;
  let alice: TestUser;
  let bob: TestUser;
  let sha: string;
  const taken = () => srv.server.lane?.taken ?? -1;

  /** The same call through the lane and through the route; returns the lane's answer after comparing both. */
  async function both(p: string, o: { key?: string; type?: string; body: string | Buffer; headers?: Record<string, string> }) {
    const viaLane = await throughLane(p, o);
    const before = taken();
    const viaRoute = await post(srv.url, p, { ...o, chunked: true });
    assert.equal(taken(), before, `the route took the chunked ${p}`);
    assert.deepEqual(comparable(viaLane), comparable(viaRoute), p);
    return viaLane;
  }

  /** The call sent so that the lane takes it (a Content-Length, a Simple key), and proof that it did. */
  async function throughLane(p: string, o: { key?: string; type?: string; body: string | Buffer; headers?: Record<string, string> }) {
    const before = taken();
    const res = await post(srv.url, p, { ...o, chunked: false });
    assert.equal(taken(), before + 1, `the lane did not take ${p}`);
    return res;
  }

  before(async () => {
    srv = await startTestServer({ topology: 'node' });
    api = client(srv.url);
    alice = await createUser(api, srv.adminKey, 'alice');
    bob = await createUser(api, srv.adminKey, 'bob');
    sha = await createAndBuild(srv.url, api, alice, 'alice', 'Hello', HELLO, { environment: 'python311' });
    // Warm.
    for (const user of [alice, bob])
      await post(srv.url, `/v1/algo/alice/Hello/${sha}`, { key: user.key, type: 'application/json', body: '1', chunked: true });
  });
  after(() => srv?.stop());

  test('JSON, text and binary inputs, in the envelope and with output=raw', async () => {
    const hello = `/v1/algo/alice/Hello/${sha}`;
    const json = await both(hello, { key: alice.key, type: 'application/json', body: '{"a":[1,2.5,"x"]}' });
    assert.equal(json.status, 200);
    assert.deepEqual(JSON.parse(json.body.toString()).result.echo, { a: [1, 2.5, 'x'] });
    const text = await both(hello, { key: alice.key, type: 'text/plain', body: 'there' });
    assert.equal(JSON.parse(text.body.toString()).result, 'hello there');
    await both(hello, { key: alice.key, type: 'application/octet-stream', body: Buffer.from([0, 1, 250, 255]) });
    const raw = await both(`${hello}?output=raw`, {
      key: alice.key,
      type: 'application/octet-stream',
      body: Buffer.from([0, 1, 250, 255]),
    });
    assert.deepEqual(raw.body, Buffer.from([255, 250, 1, 0]));
    assert.equal(raw.headers['content-type'], 'application/octet-stream');
    const rawText = await both(`${hello}?output=raw`, { key: alice.key, type: 'text/plain', body: 'you' });
    assert.equal(rawText.body.toString(), 'hello you');
    const rawJson = await both(`${hello}?output=raw`, { key: alice.key, type: 'application/json', body: '[1]' });
    assert.equal(JSON.parse(rawJson.body.toString()).kind, 'list');
    // The security headers of every answer.
    assert.equal(rawJson.headers['x-content-type-options'], 'nosniff');
  });

  test('stdout (any case of true), a timeout, and an algorithm error', async () => {
    const hello = `/v1/algo/alice/Hello/${sha}`;
    const printed = await both(`${hello}?stdout=True&timeout=30`, {
      key: alice.key,
      type: 'application/json',
      body: '{"probe":"print","arg":"out!"}',
    });
    assert.equal(JSON.parse(printed.body.toString()).metadata.stdout, 'out!');
    const failed = await both(`${hello}?output=raw`, { key: alice.key, type: 'application/json', body: '{"probe":"raise","arg":"boom"}' });
    assert.equal(failed.status, 200);
    assert.match(JSON.parse(failed.body.toString()).error.message, /boom/);
    // Another account may not see alice's unpublished algorithm: the same 404 both ways.
    const bobs = await both(`${hello}?stdout=true`, { key: bob.key, type: 'application/json', body: '{"probe":"print","arg":"x"}' });
    assert.equal(bobs.status, 404);
  });

  test('refusals leave as the same error envelope: unknown version, malformed JSON input, no such algorithm', async () => {
    for (const [p, body, status] of [
      ['/v1/algo/alice/Hello/9.9.9', '1', 404],
      [`/v1/algo/alice/Hello/${sha}`, '{"a":', 400],
      ['/v1/algo/alice/Nope', '1', 404],
    ] as const) {
      const res = await both(p, { key: alice.key, type: 'application/json', body });
      assert.equal(res.status, status, `${p}: ${res.body.toString()}`);
      const error = JSON.parse(res.body.toString()).error;
      assert.equal(typeof error.code, 'number');
      assert.equal(res.headers['x-error-message'], error.message);
    }
  });

  test('what the lane leaves to the route: an unknown query, an async call, a session, a cross-origin call', async () => {
    const hello = `/v1/algo/alice/Hello/${sha}`;
    const lanes = taken();
    const send = (p: string, o: { key?: string; headers?: Record<string, string> } = {}) =>
      post(srv.url, p, { key: alice.key, type: 'application/json', body: '1', chunked: false, ...o });
    const unknown = await send(`${hello}?colour=red`);
    assert.equal(unknown.status, 400, unknown.body.toString());
    assert.equal((await send(`${hello}?timeout=0`)).status, 400);
    assert.equal((await send(`${hello}?stdout=yes`)).status, 400);
    assert.equal((await send(`${hello}?output=raw&output=raw`)).status, 400);
    const async = await send(`${hello}?output=void`);
    assert.equal(JSON.parse(async.body.toString()).async, true);
    const withOrigin = await send(hello, { headers: { origin: 'https://elsewhere.example' } });
    assert.equal(withOrigin.status, 200);
    const noKey = await send(hello, { key: '' });
    assert.equal(noKey.status, 401);
    assert.equal(taken(), lanes, 'none of these took the lane');
  });

  test('a key the cache does not hold is looked up by the lane, as the route would: a new key, an unknown one, a burst', async () => {
    const hello = `/v1/algo/alice/Hello/${sha}`;
    // carol's key, never used: the lane looks it up. She may not see alice's unpublished algorithm.
    const carol = await createUser(api, srv.adminKey, 'carol');
    const first = await throughLane(hello, { key: carol.key, type: 'application/json', body: '1' });
    assert.equal(first.status, 404, first.body.toString());
    assert.deepEqual(
      comparable(first),
      comparable(await post(srv.url, hello, { key: carol.key, type: 'application/json', body: '1', chunked: true })),
    );
    // A key no account has: the same 401 both ways.
    const unknown = await both(hello, { key: 'simNOSUCHKEYNOSUCHKEYNOSUCHKEY', type: 'application/json', body: '1' });
    assert.equal(unknown.status, 401);
    // A new key of alice's, never used, in a burst of calls that all miss the cache together:
    // each is answered with its own result.
    const fresh = await api.post('/v1/users/alice/keys', { key: alice.key, body: {} });
    assert.equal(fresh.status, 200, fresh.text);
    const before = taken();
    const burst = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        post(srv.url, hello, { key: fresh.body.key, type: 'application/json', body: `{"n":${i}}`, chunked: false }),
      ),
    );
    assert.equal(taken(), before + 8);
    burst.forEach((res, i) => {
      assert.equal(res.status, 200, res.body.toString());
      assert.deepEqual(JSON.parse(res.body.toString()).result.echo, { n: i });
    });
  });

  test('what the lane cannot be used for: a revoked key, a path with dots, a key in the wrong place', async () => {
    const hello = `/v1/algo/alice/Hello/${sha}`;
    // A second key of alice's, used (and so cached) through the lane, then revoked: refused at once.
    const spare = await api.post('/v1/users/alice/keys', { key: alice.key, body: {} });
    assert.equal(spare.status, 200, spare.text);
    const send = (key: string, p = hello) => post(srv.url, p, { key, type: 'text/plain', body: 'x', chunked: false });
    assert.equal((await throughLane(hello, { key: spare.body.key, type: 'text/plain', body: 'x' })).status, 200);
    const lanes = taken();
    assert.equal((await api.delete(`/v1/users/alice/keys/${spare.body.id}`, { key: alice.key })).status, 204);
    const revoked = await send(spare.body.key);
    assert.equal(revoked.status, 401, revoked.body.toString());
    assert.equal(taken(), lanes + 1, 'a revoked key is no longer cached: the lane looks it up and refuses it');
    // Versions that are no version (dots and stars in the wrong places) are the domain's to refuse, the same both ways.
    for (const p of ['/v1/algo/alice/Hello/1..2', '/v1/algo/alice/Hello/.x', '/v1/algo/alice/Hello/*.*']) {
      const res = await both(p, { key: alice.key, type: 'text/plain', body: 'x' });
      assert.ok(res.status >= 400 && res.status < 500, `${p}: ${res.status}`);
    }
    // A key in the query string is no credential anywhere.
    const inQuery = await post(srv.url, `${hello}?key=${alice.key}`, { type: 'text/plain', body: 'x', chunked: false });
    assert.equal(inQuery.status, 401);
  });

  test('a client that leaves before its input arrives gives the input budget back, and the next call is answered', async () => {
    const u = new URL(srv.url);
    const until = async (done: () => boolean) => {
      while (!done()) await new Promise((r) => setTimeout(r, 10));
    };
    let tookLane = false;
    // As throughLane: when alice's key had just left the key cache, the route takes the call.
    for (let attempt = 0; attempt < 3 && !tookLane; attempt++) {
      const lanes = taken();
      const socket = net.connect(Number(u.port), u.hostname);
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write(
        `POST /v1/algo/alice/Hello/${sha} HTTP/1.1\r\nHost: x\r\nAuthorization: Simple ${alice.key}\r\nContent-Type: text/plain\r\nContent-Length: 1000\r\n\r\nabc`,
      );
      // Whichever takes it holds the 1000 announced bytes of the budget once it has the head.
      await until(() => srv.server.inputBudget.inUse > 0);
      tookLane = taken() === lanes + 1;
      socket.destroy();
      await until(() => srv.server.inputBudget.inUse === 0);
    }
    assert.ok(tookLane, 'the lane took one of the calls');
    const next = await throughLane(`/v1/algo/alice/Hello/${sha}`, { key: alice.key, type: 'text/plain', body: 'again' });
    assert.equal(JSON.parse(next.body.toString()).result, 'hello again');
  });
});

describe('the call lane counts against the same rate limits as the route', () => {
  let srv: TestServer;
  let alice: TestUser;
  before(async () => {
    srv = await startTestServer({
      topology: 'node',
      env: { ALGOHOST_RATE_LIMIT_WINDOW: '3600', ALGOHOST_RATE_LIMIT_PER_KEY: '6', ALGOHOST_RATE_LIMIT_PER_ADDRESS: '0' },
    });
    alice = await createUser(client(srv.url), srv.adminKey, 'alice');
  });
  after(() => srv?.stop());

  test('calls through either count in one window per key; past it both answer the same 429', async () => {
    const send = (chunked: boolean) =>
      post(srv.url, '/v1/algo/alice/Nope', { key: alice.key, type: 'application/json', body: '1', chunked });
    // createUser's requests with this key count too: spend what is left, alternating lane and route.
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await send(i % 2 === 0)).status);
    const first429 = statuses.indexOf(429);
    assert.ok(first429 > 0, `limited within 8 calls: ${statuses.join(',')}`);
    assert.ok(
      statuses.slice(first429).every((s) => s === 429),
      statuses.join(','),
    );
    const viaLane = await send(false);
    const viaRoute = await send(true);
    assert.ok((srv.server.lane?.taken ?? 0) > 0, 'the lane took some of them');
    assert.deepEqual(comparable(viaLane), comparable(viaRoute));
    assert.equal(viaLane.status, 429);
    assert.ok(Number(viaLane.headers['retry-after']) >= 1);
  });
});

describe('keys the lane has not seen are refused as the route refuses them, after the limit by address', () => {
  let srv: TestServer;
  before(async () => {
    srv = await startTestServer({
      topology: 'node',
      env: { ALGOHOST_RATE_LIMIT_WINDOW: '3600', ALGOHOST_RATE_LIMIT_PER_KEY: '0', ALGOHOST_RATE_LIMIT_PER_ADDRESS: '4' },
    });
  });
  after(() => srv?.stop());

  test('a flood of made-up keys: 401 each until the address is over its limit, then 429, the same through lane and route', async () => {
    const send = (i: number, chunked: boolean) =>
      post(srv.url, '/v1/algo/alice/Hello', {
        key: `simGUESS${String(i).padStart(21, '0')}`,
        type: 'application/json',
        body: '1',
        chunked,
      });
    const before = srv.server.lane?.taken ?? 0;
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await send(i, false)).status);
    assert.equal(srv.server.lane?.taken, before + 6, 'the lane took every one');
    assert.deepEqual(statuses.slice(0, 4), [401, 401, 401, 401], statuses.join(','));
    assert.deepEqual(statuses.slice(4), [429, 429], statuses.join(','));
    const viaLane = await send(100, false);
    const viaRoute = await send(101, true);
    assert.equal(viaLane.status, 429);
    assert.deepEqual(comparable(viaLane), comparable(viaRoute));
  });
});
