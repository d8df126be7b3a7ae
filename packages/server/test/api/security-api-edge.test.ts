/**
 * Issue 11, items 7, 11 and 17: the HTTP edge. Idle and trickling connections must not use up
 * the server's descriptors (caps in total and per client address, head and body timeouts, the
 * health check still answering); deeply nested JSON is refused before any work and call inputs
 * are held within a budget; an over-large call body is refused naming the real limit.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { connectionsForFileLimit, loadConfig, openFileLimit } from '../../src/config/config.js';
import { clientOf } from '../../src/api/connection-limits.js';
import { createAndBuild } from '../support/algorithms.js';
import { assertError } from '../support/assertions.js';
import { createUser, type TestUser } from '../support/fixtures.js';
import { client, request, type Client } from '../support/http.js';
import { DATABASES, makeTempDir, startTestServer, type TestServer } from '../support/server.js';

const HOSTILE = fileURLToPath(new URL('../../../../test/fixtures/hostile/python/', import.meta.url));
const MiB = 1024 * 1024;

interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  body: any;
}

/** One request on its own connection from `localAddress`; `chunks` are written one by one (chunked without a Content-Length). */
function rawRequest(
  base: string,
  opts: {
    method?: string;
    path: string;
    localAddress?: string;
    headers?: Record<string, string | number>;
    body?: string | Buffer;
    chunks?: AsyncIterable<Buffer> | Iterable<Buffer>;
  },
): Promise<RawResponse> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        method: opts.method ?? 'GET',
        path: opts.path,
        localAddress: opts.localAddress,
        headers: opts.headers,
        agent: false,
      },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (d: Buffer) => parts.push(d));
        res.on('end', () => {
          const text = Buffer.concat(parts).toString('utf8');
          let body: unknown = text;
          if ((res.headers['content-type'] ?? '').includes('json') && text) body = JSON.parse(text);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body });
        });
      },
    );
    // The server may answer (and stop reading) before the whole body is written.
    req.on('error', (err) => reject(err));
    if (opts.chunks) {
      void (async () => {
        for await (const chunk of opts.chunks!) {
          if (req.destroyed) return;
          if (!req.write(chunk)) await new Promise((r) => req.once('drain', r));
        }
        req.end();
      })().catch(() => {});
    } else {
      req.end(opts.body);
    }
  });
}

/** A connection that sends nothing; resolves with what the server wrote once it closed it. */
function idleConnection(base: string, localAddress: string): { socket: net.Socket; connected: Promise<void>; closed: Promise<string> } {
  const url = new URL(base);
  const socket = net.connect({ host: url.hostname, port: Number(url.port), localAddress });
  let seen = '';
  socket.on('data', (d) => (seen += d.toString('latin1')));
  socket.on('error', () => {});
  const connected = new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  const closed = new Promise<string>((resolve) => socket.once('close', () => resolve(seen)));
  return { socket, connected, closed };
}

describe('connections: caps in total and per client address; the health check keeps answering', () => {
  let srv: TestServer;

  before(async () => {
    srv = await startTestServer({
      env: {
        ALGOHOST_MAX_CONNECTIONS: '30',
        ALGOHOST_MAX_CONNECTIONS_PER_CLIENT: '20',
        ALGOHOST_HEADERS_TIMEOUT: '600',
        ALGOHOST_REQUEST_TIMEOUT: '600',
      },
    });
  });
  after(() => srv.stop());

  test('idle connections past the per-client cap are closed at once; another address still gets /healthz and the API', async () => {
    // The attacker: 60 idle connections from 127.0.0.1 (no request from this test used that
    // address before, so its whole allowance of 20 is free).
    const flood = Array.from({ length: 60 }, () => idleConnection(srv.url, '127.0.0.1'));
    await Promise.all(flood.map((c) => c.connected));
    const refused: string[] = [];
    await new Promise<void>((resolve) => {
      for (const c of flood) {
        void c.closed.then((seen) => {
          refused.push(seen);
          if (refused.length === 40) resolve();
        });
      }
    });
    for (const seen of refused) {
      assert.match(seen, /^HTTP\/1\.1 503 /);
      assert.match(seen, /too many connections from 127\.0\.0\.1: at most 20 at once/);
    }
    const held = flood.filter((c) => !c.socket.destroyed && c.socket.readyState === 'open');
    assert.equal(held.length, 20, 'the 20 connections within the cap stay open');
    assert.equal(srv.server.connections.open, 20);

    // One more request from the attacker's address is refused with the same answer.
    const more = idleConnection(srv.url, '127.0.0.1');
    assert.match(await more.closed, /at most 20 at once/);

    // Everyone else is served: the health check and an ordinary authenticated request.
    const health = await rawRequest(srv.url, { path: '/healthz', localAddress: '127.0.0.2' });
    assert.equal(health.status, 200);
    assert.deepEqual(health.body, { status: 'ok' });
    const me = await rawRequest(srv.url, {
      path: '/v1/users/admin',
      localAddress: '127.0.0.2',
      headers: { authorization: `Simple ${srv.adminKey}` },
    });
    assert.equal(me.status, 200, me.text);
    assert.equal(me.body.username, 'admin');

    // The total cap: 10 more held from a third address fill it. A fourth address still gets in:
    // the longest-held idle connection of the address that holds the most (the attacker's) is
    // closed to make room (issue 36 item 6), and its request is answered.
    const others = Array.from({ length: 10 }, () => idleConnection(srv.url, '127.0.0.3'));
    await Promise.all(others.map((c) => c.connected));
    const late = await rawRequest(srv.url, {
      path: '/v1/users/admin',
      localAddress: '127.0.0.4',
      headers: { authorization: `Simple ${srv.adminKey}` },
    });
    assert.equal(late.status, 200, late.text);
    assert.equal(late.body.username, 'admin');
    const evicted = held.filter((c) => c.socket.destroyed || c.socket.readyState !== 'open');
    assert.ok(evicted.length >= 1, 'an idle connection of the address holding the most was closed');
    assert.ok(
      others.every((c) => c.socket.readyState === 'open'),
      'the address holding fewer kept its connections',
    );
    assert.ok(srv.server.connections.open <= 30);

    // Once the attacker lets go, the server answers from every address again.
    for (const c of [...held, ...others]) c.socket.destroy();
    await Promise.all([...held, ...others].map((c) => c.closed));
    for (;;) {
      const again = await rawRequest(srv.url, { path: '/healthz', localAddress: '127.0.0.1' }).catch(() => undefined);
      if (again?.status === 200) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(srv.server.connections.open <= 1, true);
  });

  test('the default cap is below the open-file limit, read from /proc/self/limits', () => {
    const limits =
      'Limit                     Soft Limit           Hard Limit           Units\nMax open files            20000                1048576              files\n';
    assert.equal(openFileLimit(limits), 20000);
    assert.equal(connectionsForFileLimit(20000), 9744);
    assert.equal(openFileLimit(''), 1024);
    // This process's own limit, as a server started with defaults uses it.
    const own = openFileLimit();
    assert.equal(loadConfig({}, []).maxConnections, connectionsForFileLimit(own));
    assert.ok(loadConfig({}, []).maxConnections < own);
  });

  test('client addresses: IPv4-mapped IPv6 counts as IPv4, IPv6 by its /64', () => {
    assert.equal(clientOf('::ffff:10.0.0.7'), '10.0.0.7');
    assert.equal(clientOf('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64');
    assert.equal(clientOf('2001:db8:1:2:bbbb:cccc:dddd:eeee'), '2001:db8:1:2::/64');
    assert.equal(clientOf('::1'), '0:0:0:0::/64');
  });
});

describe('timeouts: a connection without a request, a slow head and a trickled body are closed', () => {
  let srv: TestServer;

  before(async () => {
    srv = await startTestServer({
      env: {
        ALGOHOST_HEADERS_TIMEOUT: '0.5',
        ALGOHOST_REQUEST_TIMEOUT: '600',
        ALGOHOST_BODY_TIMEOUT: '0.5',
        ALGOHOST_MIN_BODY_RATE: '1000',
      },
    });
  });
  after(() => srv.stop());

  test('a connection that sends nothing is answered 408 and closed after the head timeout', async () => {
    const idle = idleConnection(srv.url, '127.0.0.5');
    await idle.connected;
    assert.match(await idle.closed, /^HTTP\/1\.1 408 /);
  });

  test('a head sent a line at a time (slowloris) is cut at the head timeout', async () => {
    const slow = idleConnection(srv.url, '127.0.0.5');
    await slow.connected;
    slow.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
    const drip = setInterval(() => slow.socket.writable && slow.socket.write('X-Slow: 1\r\n'), 100);
    const seen = await slow.closed;
    clearInterval(drip);
    assert.match(seen, /^HTTP\/1\.1 408 /);
  });

  test('a body trickled below the minimum rate is answered 408 and closed; the server goes on answering', async () => {
    const slow = idleConnection(srv.url, '127.0.0.5');
    await slow.connected;
    slow.socket.write(
      `POST /v1/algo/admin/Nothing/1.0.0 HTTP/1.1\r\nHost: x\r\nAuthorization: Simple ${srv.adminKey}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n[',
    );
    const drip = setInterval(() => slow.socket.writable && slow.socket.write('1,'), 100);
    const seen = await slow.closed;
    clearInterval(drip);
    assert.match(seen, /^HTTP\/1\.1 408 /);
    assert.match(seen, /arrived too slowly: at least 1000 bytes per second over 0\.5 s/);
    const health = await rawRequest(srv.url, { path: '/healthz', localAddress: '127.0.0.6' });
    assert.equal(health.status, 200);
  });
});

for (const database of DATABASES) {
  describe(`call inputs (${database}): nesting limit, input budget, the real size limit`, () => {
    let srv: TestServer;
    let api: Client;
    let alice: TestUser;
    let mallory: TestUser;
    let sha: string;
    const call = (user: TestUser, path: string, opts: Parameters<typeof request>[3] = {}) =>
      request(srv.url, 'POST', `/v1/algo/alice/Hostile/${path}`, { key: user.key, ...opts });

    before(async () => {
      // A budget of 24 MiB: one account may hold 10 MiB of inputs at once (a quarter, but at
      // least one input of the largest size).
      srv = await startTestServer({ database, env: { ALGOHOST_CALL_INPUT_BUDGET: String(24 * MiB) } });
      api = client(srv.url);
      alice = await createUser(api, srv.adminKey, 'alice');
      mallory = await createUser(api, srv.adminKey, 'mallory');
      sha = await createAndBuild(srv.url, api, alice, 'alice', 'Hostile', HOSTILE, {
        environment: 'python311',
        settings: { algorithm_callability: 'public' },
      });
      const published = await api.post('/v1/algorithms/alice/Hostile/versions', {
        key: alice.key,
        body: { version_info: { version_type: 'major' }, settings: { algorithm_callability: 'public' } },
      });
      assert.equal(published.status, 200, published.text);
    });
    after(() => srv.stop());

    test("100,000 levels of nesting are refused (400, naming the limit) before any work; alice's warm runner goes on", async () => {
      const warm = await call(alice, '1.0.0', { body: { op: 'loads' } });
      assert.equal(warm.status, 200, warm.text);
      assert.equal(warm.body.result, 1);

      const deep = '['.repeat(100_000) + ']'.repeat(100_000);
      const res = await call(mallory, '1.0.0', { raw: deep, headers: { 'content-type': 'application/json' } });
      assertError(res, 400);
      assert.match(res.body.error.message, /nest deeper than the limit of 128 levels/);
      const objects = '{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000);
      const res2 = await call(mallory, '1.0.0?output=void', { raw: objects, headers: { 'content-type': 'application/json' } });
      assertError(res2, 400);
      assert.match(res2.body.error.message, /limit of 128 levels/);

      // Alice's next call: her own answer, from the same warm runner (loaded once).
      const next = await call(alice, '1.0.0', { body: { op: 'loads' } });
      assert.equal(next.status, 200, next.text);
      assert.equal(next.body.result, 1);
      assert.equal(next.body.metadata.cold_start, false);
      const echo = await call(alice, '1.0.0', { body: { who: 'alice' } });
      assert.deepEqual(echo.body.result, { echo: { who: 'alice' } });
    });

    test('JSON inputs reach the algorithm as sent: at the nesting limit, pretty-printed, brackets inside strings', async () => {
      const atLimit = '['.repeat(127) + '{"op":"echo-deep"}' + ']'.repeat(127);
      const res = await call(alice, '1.0.0', { raw: atLimit, headers: { 'content-type': 'application/json' } });
      assert.equal(res.status, 200, res.text.slice(0, 300));
      let v: unknown = res.body.result.echo;
      for (let i = 0; i < 127; i++) v = (v as unknown[])[0];
      assert.deepEqual(v, { op: 'echo-deep' });

      const input = { text: '[[[[ "quoted" \\ {{ é 😀', list: [1, -2.5e-3, true, null], nested: { a: { b: [] } } };
      const pretty = JSON.stringify(input, null, 2).replace(/\n/g, '\r\n');
      const echoed = await call(alice, '1.0.0', { raw: pretty, headers: { 'content-type': 'application/json; charset=utf-8' } });
      assert.deepEqual(echoed.body.result, { echo: input });
      assertError(await call(alice, '1.0.0', { raw: '{"a": [1, 2,]}', headers: { 'content-type': 'application/json' } }), 400);
    });

    test('a deeply nested body to a management route or the data API is 400, naming the limit', async () => {
      const deep = '{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000);
      const created = await request(srv.url, 'POST', '/v1/algorithms/mallory', {
        key: mallory.key,
        raw: `{"name":"Deep","details":${deep}}`,
        headers: { 'content-type': 'application/json' },
      });
      assertError(created, 400);
      assert.match(created.body.error.message, /nest deeper than the limit of 64 levels/);
      const acl = await request(srv.url, 'PATCH', '/v1/connector/data/mallory/anything', {
        key: mallory.key,
        raw: `{"acl":{"read":${'['.repeat(100_000)}${']'.repeat(100_000)}}}`,
        headers: { 'content-type': 'application/json' },
      });
      assertError(acl, 400);
      assert.match(acl.body.error.message, /limit of 64 levels/);
      const echo = await call(alice, '1.0.0', { body: { who: 'alice' } });
      assert.deepEqual(echo.body.result, { echo: { who: 'alice' } });
    });

    test("call inputs held at once are bounded: past an account's share 429, past the node's budget 503, both with Retry-After", async () => {
      const padded = (op: string, bytes: number) => JSON.stringify({ op, pad: 'p'.repeat(bytes) });
      // Alice's input (9 MiB) is held while her async call runs.
      const held = await call(alice, `${sha}?output=void&timeout=8`, {
        raw: padded('loop', 9 * MiB),
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(held.status, 200, held.text);
      const second = await call(alice, `${sha}`, { raw: padded('echo', 2 * MiB), headers: { 'content-type': 'application/json' } });
      assertError(second, 429);
      assert.match(second.body.error.message, /too much call input in flight for alice: at most 10485760 bytes at once/);
      assert.ok(Number(second.headers.get('retry-after')) >= 1);

      // Mallory holds 9 MiB too; the admin's 9 MiB would pass the node's 24 MiB.
      const heldToo = await call(mallory, '1.0.0?output=void&timeout=8', {
        raw: padded('loop', 9 * MiB),
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(heldToo.status, 200, heldToo.text);
      const over = await request(srv.url, 'POST', '/v1/algo/alice/Hostile/1.0.0', {
        key: srv.adminKey,
        raw: padded('echo', 9 * MiB),
        headers: { 'content-type': 'application/json' },
      });
      assertError(over, 503);
      assert.match(over.body.error.message, /holds as much call input as it may \(25165824 bytes\)/);
      assert.ok(Number(over.headers.get('retry-after')) >= 1);

      // When the calls end, their inputs are given back: alice's next big input is served.
      for (const id of [held.body.request_id, heldToo.body.request_id]) {
        for (;;) {
          const r = await api.get(`/v1/algo/requests/${id}`, { key: id === held.body.request_id ? alice.key : mallory.key });
          if (r.body.status === 'completed') break;
          await new Promise((r) => setTimeout(r, 200));
        }
      }
      const after = await call(alice, `${sha}`, { raw: padded('echo', 2 * MiB), headers: { 'content-type': 'application/json' } });
      assert.equal(after.status, 200, after.text.slice(0, 300));
      assert.equal(after.body.result.echo.pad.length, 2 * MiB);
    });

    test('a call body over 10 MiB is refused naming 10 MiB (10485760 bytes), chunked or not; a chunked input within it is served', async () => {
      const tooBig = Buffer.alloc(10 * MiB + 10, 65);
      const plain = await call(alice, '1.0.0', { raw: tooBig, headers: { 'content-type': 'text/plain' } });
      assertError(plain, 413);
      assert.match(plain.body.error.message, /10 MiB \(10485760 bytes\)/);

      function* pieces(total: number, fill: number) {
        for (let sent = 0; sent < total; sent += 64 * 1024) yield Buffer.alloc(Math.min(64 * 1024, total - sent), fill);
      }
      const chunked = await rawRequest(srv.url, {
        method: 'POST',
        path: '/v1/algo/alice/Hostile/1.0.0',
        headers: { authorization: `Simple ${alice.key}`, 'content-type': 'text/plain' },
        chunks: pieces(11 * MiB, 66),
      });
      assert.equal(chunked.status, 413, chunked.text);
      assert.match(chunked.body.error.message, /10 MiB \(10485760 bytes\)/);
      assert.doesNotMatch(chunked.body.error.message, /1048576 bytes/);

      const within = await rawRequest(srv.url, {
        method: 'POST',
        path: '/v1/algo/alice/Hostile/1.0.0',
        headers: { authorization: `Simple ${alice.key}`, 'content-type': 'application/json' },
        chunks: [Buffer.from('{"who":'), Buffer.from(JSON.stringify('x'.repeat(3 * MiB))), Buffer.from('}')],
      });
      assert.equal(within.status, 200, within.text.slice(0, 300));
      assert.equal(within.body.result.echo.who.length, 3 * MiB);
      // The management API's own limit is named as what it is.
      const mgmt = await request(srv.url, 'POST', '/v1/algorithms/alice', {
        key: alice.key,
        raw: JSON.stringify({ name: 'Big', details: { summary: 'y'.repeat(2 * MiB) } }),
        headers: { 'content-type': 'application/json' },
      });
      assertError(mgmt, 413);
      assert.match(mgmt.body.error.message, /the limit is 1048576 bytes/);
      const echo = await call(alice, '1.0.0', { body: { who: 'alice' } });
      assert.deepEqual(echo.body.result, { echo: { who: 'alice' } });
    });

    test('a body a little over its limit is read before the 413, so a client that sends it all first reads the reason', async (t) => {
      // As the in-sandbox clients send a report: the head, then the body in a second write,
      // asking for Connection: close. Answered at the head, the connection closed under the
      // body and the client saw a broken pipe instead of the 413 (insights.test.ts, at random).
      const body = Buffer.alloc(26 * 1024, 120);
      // Through an API socket as sandboxes get one: a write to a Unix socket the server has
      // closed fails at once (EPIPE), where TCP would still take it.
      const dir = await makeTempDir('algohost-api-socket-');
      const file = path.join(dir, 'api.sock');
      const sandboxSocket = await srv.server.apiSockets.listen(file, { id: 'test-sandbox', name: 'test' });
      t.after(async () => {
        await sandboxSocket.close();
        await fs.promises.rm(dir, { recursive: true, force: true });
      });
      const socket = net.connect({ path: file });
      const received: Buffer[] = [];
      const outcome = new Promise<string>((resolve, reject) => {
        socket.on('data', (d: Buffer) => received.push(d));
        socket.on('error', reject);
        socket.on('end', () => resolve(Buffer.concat(received).toString()));
      });
      // Awaited below; a reset before then must not count as unhandled.
      outcome.catch(() => {});
      await new Promise((r) => socket.once('connect', r));
      socket.write(
        `POST /v1/insights HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
      );
      // The body goes once the server has answered the head, or after a moment if it waits for it
      // (as it should): either way the server's answer must be the 413, not a closed connection.
      await Promise.race([new Promise((r) => socket.once('data', r)), new Promise((r) => setTimeout(r, 300))]);
      const sent = await new Promise<Error | null | undefined>((r) => socket.write(body, r));
      assert.equal(sent ?? null, null, 'the whole body could be sent');
      socket.end();
      const text = await outcome;
      assert.match(text, /^HTTP\/1\.1 413 /);
      assert.match(text, /an Insights report of 26624 bytes exceeds the limit of 25 KB/);
    });
  });
}
