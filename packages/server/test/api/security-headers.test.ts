/**
 * Security headers on every kind of answer (api/security-headers.ts), swept over routes: API
 * JSON, errors (400, 401, 403, 404, 405, 429), Git's smart HTTP, the web UI's files, /metrics,
 * /healthz and the OpenAPI document; HSTS only when the public URL is https. And who may read
 * /metrics (api/metrics-route.ts, main/metrics-server.ts): admins, the metrics token, or only
 * its own address.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { assertError } from '../support/assertions.js';
import { createUser, type TestUser } from '../support/fixtures.js';
import { client, request, type Client, type Response } from '../support/http.js';
import { makeTempDir, startTestServer, type TestServer } from '../support/server.js';

const API_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";
const TOKEN = 'a-metrics-token-of-some-length';

function assertSecure(res: Response, what: string, opts: { csp?: 'api' | 'any'; hsts?: boolean } = {}): void {
  const h = (name: string) => res.headers.get(name);
  assert.equal(h('x-content-type-options'), 'nosniff', `${what}: nosniff`);
  assert.equal(h('referrer-policy'), 'no-referrer', `${what}: referrer policy`);
  assert.equal(h('x-frame-options'), 'DENY', `${what}: frame options`);
  const csp = h('content-security-policy');
  if ((opts.csp ?? 'api') === 'api') assert.equal(csp, API_CSP, `${what}: CSP`);
  else assert.match(csp ?? '', /frame-ancestors 'none'/, `${what}: CSP`);
  assert.equal(h('strict-transport-security'), opts.hsts ? 'max-age=31536000' : null, `${what}: HSTS`);
}

describe('security headers on every answer', () => {
  let srv: TestServer;
  let api: Client;
  let alice: TestUser;
  let webDir: string;

  before(async () => {
    webDir = await makeTempDir('algohost-web-');
    fs.writeFileSync(path.join(webDir, 'index.html'), '<!doctype html><title>test app</title>');
    fs.mkdirSync(path.join(webDir, 'assets'));
    fs.writeFileSync(path.join(webDir, 'assets', 'app-1234.js'), 'console.log(1)');
    srv = await startTestServer({
      env: { ALGOHOST_WEB_DIR: webDir, ALGOHOST_RATE_LIMIT_PER_KEY: '50', ALGOHOST_RATE_LIMIT_WINDOW: '3600' },
    });
    api = client(srv.url);
    alice = await createUser(api, srv.adminKey, 'alice');
    assert.equal((await api.post('/v1/algorithms/alice', { key: alice.key, body: { name: 'Hello' } })).status, 200);
  });
  after(async () => {
    await srv?.stop();
    await fs.promises.rm(webDir, { recursive: true, force: true });
  });

  test('API answers and errors of every kind', async () => {
    const sweep: [string, Promise<Response>, number][] = [
      ['JSON', api.get('/v1/algorithms/alice/Hello', { key: alice.key }), 200],
      ['a list', api.get('/v1/algorithms/alice', { key: alice.key }), 200],
      ['the OpenAPI document', api.get('/v1/openapi.json'), 200],
      ['/healthz', api.get('/healthz'), 200],
      ['400', api.post('/v1/algorithms/alice', { key: alice.key, raw: '{"name":', headers: { 'content-type': 'application/json' } }), 400],
      ['401', api.get('/v1/algorithms/alice'), 401],
      ['401 of a wrong key', api.get('/v1/algorithms/alice', { key: 'wrong' }), 401],
      ['403', api.get('/v1/users', { key: alice.key }), 403],
      ['404', api.get('/v1/no-such-endpoint'), 404],
      ['404 of a resource', api.get('/v1/algorithms/alice/Nope', { key: alice.key }), 404],
      ['405', api.patch('/v1/algorithms'), 405],
      [
        '413',
        api.post('/v1/algorithms/alice', {
          key: alice.key,
          raw: JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) }),
          headers: { 'content-type': 'application/json' },
        }),
        413,
      ],
      [
        'an unsupported media type',
        api.post('/v1/algorithms/alice', { key: alice.key, raw: 'x', headers: { 'content-type': 'text/csv' } }),
        415,
      ],
      [
        'a preflight',
        request(srv.url, 'OPTIONS', '/v1/algorithms', {
          headers: { origin: 'https://elsewhere.example', 'access-control-request-method': 'GET' },
        }),
        0,
      ],
    ];
    for (const [what, pending, status] of sweep) {
      const res = await pending;
      if (status) assert.equal(res.status, status, `${what}: ${res.text.slice(0, 200)}`);
      assertSecure(res, what);
    }
  });

  test('Git’s smart HTTP, hijacked streams included', async () => {
    const basic = `Basic ${Buffer.from(`alice:${alice.key}`).toString('base64')}`;
    const refs = await api.get('/git/alice/Hello.git/info/refs?service=git-upload-pack', { auth: basic });
    assert.equal(refs.status, 200, refs.text);
    assertSecure(refs, 'git info/refs');
    assertSecure(await api.get('/git/alice/Hello.git/info/refs?service=git-upload-pack'), 'git without credentials');
    assertSecure(await api.get('/git/alice/Nope.git/info/refs?service=git-upload-pack', { auth: basic }), 'git of nothing');
  });

  test('the web UI keeps its own policy; its assets and /metrics carry the rest', async () => {
    const page = await api.get('/algorithms/alice/Hello');
    assert.equal(page.status, 200);
    assertSecure(page, 'an app page', { csp: 'any' });
    assert.notEqual(page.headers.get('content-security-policy'), API_CSP, 'the app’s own CSP wins');
    const asset = await api.get('/assets/app-1234.js');
    assert.equal(asset.status, 200);
    assertSecure(asset, 'an asset', { csp: 'any' });
    assertSecure(await api.get('/metrics', { key: srv.adminKey }), '/metrics');
    assertSecure(await api.get('/metrics'), '/metrics refused');
  });

  test('a 429 of the rate limits carries them too', async () => {
    let res: Response;
    do res = await api.get('/v1/algorithms/alice', { key: alice.key });
    while (res.status === 200);
    assert.equal(res.status, 429, res.text);
    assertSecure(res, '429');
  });
});

describe('HSTS behind https', () => {
  let srv: TestServer;
  before(async () => {
    srv = await startTestServer({ env: { ALGOHOST_PUBLIC_URL: 'https://algohost.example' } });
  });
  after(() => srv?.stop());

  test('a node whose public URL is https sends Strict-Transport-Security on every answer', async () => {
    const api = client(srv.url);
    assertSecure(await api.get('/healthz'), '/healthz', { hsts: true });
    assertSecure(await api.get('/v1/algorithms/alice'), '401', { hsts: true });
    assertSecure(await api.get('/v1/nothing'), '404', { hsts: true });
  });
});

describe('who may read /metrics', () => {
  test('by default: admins only; a user is refused, an anonymous scrape is told what to send', async () => {
    const srv = await startTestServer();
    try {
      const api = client(srv.url);
      const alice = await createUser(api, srv.adminKey, 'alice');
      const anonymous = await api.get('/metrics');
      assertError(anonymous, 401);
      assert.match(anonymous.body.error.message, /admin credential/);
      assertError(await api.get('/metrics', { key: alice.key }), 403);
      assertError(await api.get('/metrics', { key: 'not-a-key' }), 401);
      assertError(await api.get('/metrics', { auth: `Bearer ${TOKEN}` }), 401);
      const ok = await api.get('/metrics', { key: srv.adminKey });
      assert.equal(ok.status, 200);
      assert.match(ok.text, /algohost_calls_total/);
    } finally {
      await srv.stop();
    }
  });

  test('ALGOHOST_METRICS_TOKEN: the scraper’s bearer token works, a wrong one does not', async () => {
    const srv = await startTestServer({ env: { ALGOHOST_METRICS_TOKEN: TOKEN } });
    try {
      const api = client(srv.url);
      const ok = await api.get('/metrics', { auth: `Bearer ${TOKEN}` });
      assert.equal(ok.status, 200);
      assert.match(ok.headers.get('content-type') ?? '', /^text\/plain/);
      assert.match(ok.text, /algohost_calls_total/);
      assertError(await api.get('/metrics', { auth: `Bearer ${TOKEN}x` }), 401);
      assertError(await api.get('/metrics'), 401);
      assert.equal((await api.get('/metrics', { key: srv.adminKey })).status, 200);
    } finally {
      await srv.stop();
    }
  });

  test('ALGOHOST_METRICS_ADDRESS: served there only (with the token when set), never on the API port', async () => {
    const srv = await startTestServer({ env: { ALGOHOST_METRICS_ADDRESS: '127.0.0.1:0', ALGOHOST_METRICS_TOKEN: TOKEN } });
    try {
      const metricsUrl = srv.server.metricsUrl!;
      assert.ok(metricsUrl && metricsUrl !== srv.url, metricsUrl);
      const ok = await request(metricsUrl, 'GET', '/metrics', { auth: `Bearer ${TOKEN}` });
      assert.equal(ok.status, 200);
      assert.match(ok.text, /algohost_calls_total/);
      assertSecure(ok, 'the metrics address');
      assert.equal((await request(metricsUrl, 'GET', '/metrics')).status, 401);
      assert.equal((await request(metricsUrl, 'GET', '/v1/algorithms', { auth: `Bearer ${TOKEN}` })).status, 404);
      assert.equal((await request(metricsUrl, 'POST', '/metrics', { auth: `Bearer ${TOKEN}` })).status, 405);
      assertError(await client(srv.url).get('/metrics', { key: srv.adminKey }), 404);
    } finally {
      await srv.stop();
    }
  });

  // Issue 36, item 12: the separate address has no other credential, so one that more than this
  // host reaches must ask for the token; a node configured without one does not start.
  test('a metrics address other than loopback without ALGOHOST_METRICS_TOKEN stops the start', async () => {
    for (const address of ['0.0.0.0:0', '[::]:0', '10.0.0.5:9464', 'metrics.internal:9464', '[::ffff:10.0.0.5]:9464']) {
      await assert.rejects(
        startTestServer({ env: { ALGOHOST_METRICS_ADDRESS: address } }),
        (err: Error) => {
          assert.match(
            err.message,
            new RegExp(
              `ALGOHOST_METRICS_ADDRESS=${address.replace(/[[\]]/g, '\\$&')} is not a loopback address: set ALGOHOST_METRICS_TOKEN`,
            ),
          );
          return true;
        },
        address,
      );
    }
  });

  test('on every address (0.0.0.0) the metrics address answers a request without the token 401, even from loopback', async () => {
    const srv = await startTestServer({ env: { ALGOHOST_METRICS_ADDRESS: '0.0.0.0:0', ALGOHOST_METRICS_TOKEN: TOKEN } });
    try {
      const port = new URL(srv.server.metricsUrl!).port;
      const metricsUrl = `http://127.0.0.1:${port}`;
      const refused = await request(metricsUrl, 'GET', '/metrics');
      assert.equal(refused.status, 401);
      assert.doesNotMatch(refused.text, /algohost_/);
      assert.equal((await request(metricsUrl, 'GET', '/metrics', { auth: `Bearer ${TOKEN.slice(0, -1)}` })).status, 401);
      assert.equal((await request(metricsUrl, 'GET', '/metrics', { key: srv.adminKey })).status, 401);
      const ok = await request(metricsUrl, 'GET', '/metrics', { auth: `Bearer ${TOKEN}` });
      assert.equal(ok.status, 200);
      assert.match(ok.text, /algohost_calls_total/);
    } finally {
      await srv.stop();
    }
  });

  test('a loopback metrics address may go without a token (only this host reaches it; runners have their own network)', async () => {
    for (const address of ['127.0.0.1:0', '[::1]:0']) {
      const srv = await startTestServer({ env: { ALGOHOST_METRICS_ADDRESS: address } });
      try {
        const ok = await request(srv.server.metricsUrl!, 'GET', '/metrics');
        assert.equal(ok.status, 200, address);
        assert.match(ok.text, /algohost_calls_total/);
      } finally {
        await srv.stop();
      }
    }
  });

  test('a metrics address that is not host:port stops the start with the setting named', async () => {
    await assert.rejects(
      startTestServer({ env: { ALGOHOST_METRICS_ADDRESS: 'localhost' } }),
      /ALGOHOST_METRICS_ADDRESS|metricsAddress|metrics-address/,
    );
  });
});
