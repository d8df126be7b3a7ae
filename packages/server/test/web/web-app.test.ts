/**
 * The web UI served at `/` (api/web-app.ts), from a temporary folder holding a fake built app
 * (index.html, a hashed asset, another file, and planted links and dot files), named by
 * ALGOHOST_WEB_DIR: caching headers and revalidation, the fallback to index.html, the API's
 * own 404s left alone, traversal and links out of the folder refused, the security headers.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { assertError } from '../support/assertions.js';
import { rawRequest } from '../support/data.js';
import { client, type Client } from '../support/http.js';
import { makeTempDir, startTestServer, type TestServer } from '../support/server.js';

const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; " +
  "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'";
const INDEX = '<!doctype html><html><head><script type="module" src="/assets/app-3f9a1c.js"></script></head><body>test app</body></html>\n';
const ASSET = 'console.log("the app");\n';
const SECRET = 'root:x:0:0:secret outside the web folder\n';

function assertAppHeaders(headers: Headers | Record<string, unknown>, what: string): void {
  const get = (name: string) => (headers instanceof Headers ? headers.get(name) : (headers[name] as string | undefined));
  assert.equal(get('content-security-policy'), CSP, `${what}: CSP`);
  assert.equal(get('x-content-type-options'), 'nosniff', `${what}: nosniff`);
  assert.equal(get('referrer-policy'), 'no-referrer', `${what}: referrer policy`);
}

describe('the web UI at /', () => {
  let srv: TestServer;
  let api: Client;
  let webDir: string;
  let outside: string;

  before(async () => {
    webDir = await makeTempDir('algohost-web-');
    outside = await makeTempDir('algohost-web-outside-');
    fs.writeFileSync(path.join(outside, 'secret.txt'), SECRET);
    fs.writeFileSync(path.join(webDir, 'index.html'), INDEX);
    fs.writeFileSync(path.join(webDir, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>\n');
    fs.writeFileSync(path.join(webDir, '.env'), SECRET);
    fs.mkdirSync(path.join(webDir, 'assets', 'sub'), { recursive: true });
    fs.writeFileSync(path.join(webDir, 'assets', 'app-3f9a1c.js'), ASSET);
    fs.writeFileSync(path.join(webDir, 'assets', 'sub', 'x.css'), 'body{}\n');
    // Links planted in the folder, pointing out of it: never followed.
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(webDir, 'leak.txt'));
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(webDir, 'assets', 'leak.js'));
    fs.symlinkSync(outside, path.join(webDir, 'assets', 'out'));
    srv = await startTestServer({ env: { ALGOHOST_WEB_DIR: webDir } });
    api = client(srv.url);
  });
  after(async () => {
    await srv.stop();
    await fs.promises.rm(webDir, { recursive: true, force: true });
    await fs.promises.rm(outside, { recursive: true, force: true });
  });

  test('GET / answers index.html, no-cache with an ETag and Last-Modified, and the security headers', async () => {
    const res = await api.get('/');
    assert.equal(res.status, 200);
    assert.equal(res.text, INDEX);
    assert.match(res.headers.get('content-type') ?? '', /^text\/html; charset=utf-8/);
    assert.equal(res.headers.get('cache-control'), 'no-cache');
    assert.ok(res.headers.get('etag'), 'an ETag');
    assert.ok(res.headers.get('last-modified'), 'a Last-Modified date');
    assertAppHeaders(res.headers, 'GET /');
    const named = await api.get('/index.html');
    assert.equal(named.text, INDEX);
    assert.equal(named.headers.get('cache-control'), 'no-cache');
  });

  test('hashed assets are cached for a year as immutable; other files are no-cache', async () => {
    const asset = await api.get('/assets/app-3f9a1c.js');
    assert.equal(asset.status, 200);
    assert.equal(asset.text, ASSET);
    assert.match(asset.headers.get('content-type') ?? '', /javascript/);
    assert.equal(asset.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    assertAppHeaders(asset.headers, 'an asset');
    const nested = await api.get('/assets/sub/x.css');
    assert.equal(nested.status, 200);
    assert.match(nested.headers.get('content-type') ?? '', /^text\/css/);
    const icon = await api.get('/favicon.svg');
    assert.equal(icon.status, 200);
    assert.match(icon.headers.get('content-type') ?? '', /^image\/svg\+xml/);
    assert.equal(icon.headers.get('cache-control'), 'no-cache');
  });

  test('revalidation: a matching ETag or an unchanged date answers 304 without a body', async () => {
    // Over node:http: fetch turns a request with If-None-Match into an end-to-end reload
    // (Cache-Control: no-cache), which is never answered 304.
    for (const p of ['/', '/assets/app-3f9a1c.js', '/algorithms/alice/hello']) {
      const first = await rawRequest(srv.url, 'GET', p);
      const etag = String(first.headers.etag);
      const byTag = await rawRequest(srv.url, 'GET', p, { headers: { 'if-none-match': etag } });
      assert.equal(byTag.status, 304, `${p} by ETag`);
      assert.equal(byTag.text, '');
      assertAppHeaders(byTag.headers, `304 of ${p}`);
      const byDate = await rawRequest(srv.url, 'GET', p, { headers: { 'if-modified-since': String(first.headers['last-modified']) } });
      assert.equal(byDate.status, 304, `${p} by date`);
      const changed = await rawRequest(srv.url, 'GET', p, { headers: { 'if-none-match': 'W/"something-else"' } });
      assert.equal(changed.status, 200, `${p} with another ETag`);
      const reload = await rawRequest(srv.url, 'GET', p, { headers: { 'if-none-match': etag, 'cache-control': 'no-cache' } });
      assert.equal(reload.status, 200, `${p}: a reload asks for the whole file`);
    }
  });

  test("the app's own addresses fall back to index.html (GET and HEAD), so a reload works", async () => {
    for (const p of ['/algorithms/alice/hello', '/settings', '/admin/users?tab=2', '/data/alice/models/', '/dashboard.html']) {
      const res = await api.get(p);
      assert.equal(res.status, 200, p);
      assert.equal(res.text, INDEX, p);
      assert.equal(res.headers.get('cache-control'), 'no-cache', p);
      assertAppHeaders(res.headers, p);
    }
    const head = await api.head('/algorithms/alice/hello');
    assert.equal(head.status, 200);
    assert.equal(head.text, '');
    assert.match(head.headers.get('content-type') ?? '', /^text\/html/);
    assert.equal(head.headers.get('content-length'), String(Buffer.byteLength(INDEX)));
  });

  test('a missing asset is a 404, not the app; folders are never listed', async () => {
    for (const p of ['/assets/app-old.js', '/assets/', '/assets/sub', '/assets/sub/']) {
      const res = await api.get(p);
      assertError(res, 404);
      assert.doesNotMatch(res.text, /x\.css|test app/, p);
    }
  });

  test('/v1, /git and /metrics are untouched: the API keeps its JSON 404 and its own CSP, not the app’s', async () => {
    for (const p of ['/v1/nothing-here', '/v1', '/v1/', '/v1/algorithms/alice/hello/nope']) {
      const res = await api.get(p);
      assertError(res, 404);
      assert.match(res.body.error.message, /no such endpoint/, p);
      // The API's own policy (api/security-headers.ts), not the app's.
      assert.equal(
        res.headers.get('content-security-policy'),
        "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
        p,
      );
    }
    // A page of the app takes GET only: another method is 405 naming them (RFC 9110 §15.5.6).
    const post = await api.post('/algorithms/alice/hello', { body: {} });
    assertError(post, 405);
    assert.equal(post.headers.get('allow'), 'GET, HEAD');
    const known = await api.get('/v1/algorithm-environments/edge/languages');
    assertError(known, 401);
    const metrics = await api.get('/metrics', { key: srv.adminKey });
    assert.equal(metrics.status, 200);
    assert.match(metrics.text, /algohost_calls_total/);
    assertError(await api.get('/metrics/more', { key: srv.adminKey }), 404);
    for (const p of ['/git', '/git/alice/hello', '/git/alice/hello.git/info/refs?service=git-upload-pack']) {
      const res = await api.get(p);
      assert.notEqual(res.status, 200, p);
      assert.doesNotMatch(res.text, /test app/, p);
    }
    const health = await api.get('/healthz');
    assert.deepEqual(health.body, { status: 'ok' });
  });

  test('traversal is refused with a 400, percent-encoded or not, and nothing outside is read', async () => {
    for (const p of [
      '/..%2f..%2fetc/passwd',
      '/assets/../..',
      '/assets/../../etc/passwd',
      '/assets/..%2f..%2fsecret.txt',
      '/%2e%2e/%2e%2e/etc/passwd',
      '/assets/%2e%2e/index.html',
      '/assets/..%5c..%5cetc%5cpasswd',
      '/assets/app-3f9a1c.js%00.html',
      '/./index.html',
    ]) {
      const res = await rawRequest(srv.url, 'GET', p);
      assert.equal(res.status, 400, `${p}: ${res.text}`);
      assert.doesNotMatch(res.text, /root:/, p);
      assert.match(String(res.headers['content-type']), /^application\/json/, p);
    }
    const badEncoding = await rawRequest(srv.url, 'GET', '/%E0%A4%A');
    assert.equal(badEncoding.status, 400, badEncoding.text);
  });

  test('links out of the folder and dot files are never served', async () => {
    const link = await rawRequest(srv.url, 'GET', '/leak.txt');
    assert.equal(link.status, 200);
    assert.equal(link.text, INDEX, 'a link out of the folder is no file of the app: the app answers');
    for (const p of ['/assets/leak.js', '/assets/out/secret.txt', '/assets/out/']) {
      const res = await rawRequest(srv.url, 'GET', p);
      assert.equal(res.status, 404, p);
      assert.doesNotMatch(res.text, /root:/, p);
    }
    const dot = await rawRequest(srv.url, 'GET', '/.env');
    assert.equal(dot.text, INDEX);
  });
});

describe('the web UI when it is not built', () => {
  let srv: TestServer;
  let api: Client;
  let empty: string;

  before(async () => {
    empty = await makeTempDir('algohost-web-empty-');
    srv = await startTestServer({ env: { ALGOHOST_WEB_DIR: path.join(empty, 'dist') } });
    api = client(srv.url);
  });
  after(async () => {
    await srv.stop();
    await fs.promises.rm(empty, { recursive: true, force: true });
  });

  test('GET / answers 200 with a page saying how to build it, not a 404', async () => {
    for (const p of ['/', '/algorithms/alice/hello']) {
      const res = await api.get(p);
      assert.equal(res.status, 200, p);
      assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
      assert.match(res.text, /web UI is not built/);
      assert.match(res.text, /npm run setup/);
      assertAppHeaders(res.headers, p);
    }
    assertError(await api.get('/v1/nothing-here'), 404);
  });

  test('a folder holding no index.html counts as not built', async () => {
    fs.mkdirSync(path.join(empty, 'dist', 'assets'), { recursive: true });
    fs.writeFileSync(path.join(empty, 'dist', 'assets', 'a.js'), ASSET);
    const res = await api.get('/');
    assert.equal(res.status, 200);
    assert.match(res.text, /web UI is not built/);
    fs.writeFileSync(path.join(empty, 'dist', 'index.html'), INDEX);
    const built = await api.get('/');
    assert.equal(built.text, INDEX, 'a build made while the server runs is served at once');
  });
});
