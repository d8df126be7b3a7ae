/**
 * The built web UI served precompressed (api/web-app.ts, scripts/precompress-web.ts): the real
 * build (scripts/build-web.sh, rebuilt only when its sources changed) served from
 * packages/web/dist. Each text file goes out as the brotli or gzip copy the client accepts best
 * or as it is, with its own Content-Length and ETag, Vary: Accept-Encoding, ranges and HEAD of
 * the bytes sent; and the first page's JavaScript transfers under 40 KB either way.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { wireRequest, type WireResponse } from '../support/http.js';
import { makeTempDir, startTestServer, type TestServer } from '../support/server.js';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const DIST = path.join(ROOT, 'packages', 'web', 'dist');
/** The bound on what the first page's JavaScript costs over the wire, compressed. */
const FIRST_PAGE_JS_LIMIT = 40 * 1024;

const DECODE = { br: zlib.brotliDecompressSync, gzip: zlib.gunzipSync } as const;
const SUFFIX = { br: '.br', gzip: '.gz' } as const;

/** What the built index.html makes a browser load first: its module scripts and preloaded chunks. */
function firstPageScripts(html: string): string[] {
  const urls = new Set<string>();
  for (const m of html.matchAll(/<script\b[^>]*\btype="module"[^>]*\bsrc="([^"]+)"/g)) urls.add(m[1]!);
  for (const m of html.matchAll(/<link\b[^>]*\brel="modulepreload"[^>]*\bhref="([^"]+)"/g)) urls.add(m[1]!);
  return [...urls];
}

function varies(res: WireResponse): boolean {
  return String(res.headers.vary ?? '')
    .split(',')
    .some((n) => n.trim().toLowerCase() === 'accept-encoding');
}

describe('the web UI, precompressed', () => {
  let srv: TestServer;
  let html: string;
  /** Every text file of the build, as URL paths: index.html, the hashed assets, the icon. */
  let textFiles: string[];

  before(async () => {
    await promisify(execFile)('bash', [path.join(ROOT, 'scripts', 'build-web.sh')], { cwd: ROOT });
    html = fs.readFileSync(path.join(DIST, 'index.html'), 'utf8');
    textFiles = fs
      .readdirSync(DIST, { recursive: true, encoding: 'utf8' })
      .filter((f) => /\.(?:html|js|css|svg)$/.test(f))
      .map((f) => `/${f.split(path.sep).join('/')}`);
    srv = await startTestServer({ env: { ALGOHOST_WEB_DIR: DIST } });
  });
  after(async () => {
    await srv.stop();
  });

  test('the build writes a brotli and a gzip copy beside each text file, each decoding to the file', () => {
    assert.ok(textFiles.length >= 4, `index.html, scripts, styles and the icon: ${textFiles.join(', ')}`);
    for (const f of textFiles) {
      const bytes = fs.readFileSync(path.join(DIST, f));
      for (const coding of ['br', 'gzip'] as const) {
        const copy = path.join(DIST, f + SUFFIX[coding]);
        assert.ok(fs.existsSync(copy), `${f}${SUFFIX[coding]}`);
        assert.deepEqual(DECODE[coding](fs.readFileSync(copy)), bytes, `${f}${SUFFIX[coding]} decodes to ${f}`);
      }
    }
  });

  test('each text file goes out in the coding the client prefers, with its own length and ETag; as it is otherwise', async () => {
    const cases: [string | undefined, 'br' | 'gzip' | undefined][] = [
      [undefined, undefined],
      ['identity', undefined],
      ['br', 'br'],
      ['gzip', 'gzip'],
      ['gzip, deflate, br, zstd', 'br'],
      ['gzip, deflate', 'gzip'],
      ['br;q=0.5, gzip', 'gzip'],
      ['*', 'br'],
      ['br;q=0, *', 'gzip'],
      ['BR;Q=0, gzip;q=0, *', undefined],
      ['gzip;q=0, br;q=0', undefined],
      ['deflate, compress', undefined],
    ];
    for (const f of textFiles) {
      const bytes = fs.readFileSync(path.join(DIST, f));
      const etags = new Map<string, Set<string>>();
      let type: string | undefined;
      for (const [accept, coding] of cases) {
        const what = `${f} with Accept-Encoding ${accept ?? '(none)'}`;
        const res = await wireRequest(srv.url, 'GET', f, accept === undefined ? {} : { 'accept-encoding': accept });
        assert.equal(res.status, 200, what);
        assert.equal(res.headers['content-encoding'], coding, what);
        assert.ok(varies(res), `${what}: Vary names Accept-Encoding`);
        assert.equal(res.headers['content-length'], String(res.body.length), `${what}: Content-Length`);
        assert.deepEqual(coding ? DECODE[coding](res.body) : res.body, bytes, `${what}: the file's bytes`);
        if (coding) assert.deepEqual(res.body, fs.readFileSync(path.join(DIST, f + SUFFIX[coding])), `${what}: the build's copy`);
        type ??= res.headers['content-type'];
        assert.equal(res.headers['content-type'], type, `${what}: the file's own type`);
        const key = coding ?? 'identity';
        etags.set(key, (etags.get(key) ?? new Set()).add(String(res.headers.etag)));
      }
      // One ETag per coding, never one shared by two codings.
      const tags = [...etags.values()].map((set) => [...set]);
      assert.ok(
        tags.every((t) => t.length === 1),
        `${f}: one ETag per coding: ${JSON.stringify(tags)}`,
      );
      assert.equal(new Set(tags.flat()).size, 3, `${f}: three codings, three ETags: ${JSON.stringify(tags)}`);
    }
    assert.match(
      String((await wireRequest(srv.url, 'GET', '/', { 'accept-encoding': 'br' })).headers['content-type']),
      /^text\/html; charset=utf-8/,
    );
  });

  test("the app's own addresses and / answer index.html precompressed too", async () => {
    for (const p of ['/', '/algorithms/alice/hello']) {
      const res = await wireRequest(srv.url, 'GET', p, { 'accept-encoding': 'gzip, deflate, br' });
      assert.equal(res.headers['content-encoding'], 'br', p);
      assert.equal(zlib.brotliDecompressSync(res.body).toString(), html, p);
      assert.equal(res.headers['cache-control'], 'no-cache', p);
    }
  });

  test('HEAD announces the length of the copy a GET would send; a range is a range of the bytes sent', async () => {
    const script = firstPageScripts(html)[0]!;
    for (const coding of ['br', 'gzip'] as const) {
      const copy = fs.readFileSync(path.join(DIST, script + SUFFIX[coding]));
      const head = await wireRequest(srv.url, 'HEAD', script, { 'accept-encoding': coding });
      assert.equal(head.status, 200);
      assert.equal(head.headers['content-encoding'], coding);
      assert.equal(head.headers['content-length'], String(copy.length), `HEAD ${coding}`);
      assert.equal(head.body.length, 0);

      const part = await wireRequest(srv.url, 'GET', script, { 'accept-encoding': coding, range: 'bytes=10-99' });
      assert.equal(part.status, 206, `range of ${coding}`);
      assert.equal(part.headers['content-encoding'], coding);
      assert.equal(part.headers['content-range'], `bytes 10-99/${copy.length}`);
      assert.deepEqual(part.body, copy.subarray(10, 100));
    }
    const plain = fs.readFileSync(path.join(DIST, script));
    const part = await wireRequest(srv.url, 'GET', script, { range: 'bytes=0-9' });
    assert.equal(part.status, 206);
    assert.equal(part.headers['content-encoding'], undefined);
    assert.equal(part.headers['content-range'], `bytes 0-9/${plain.length}`);
  });

  test("revalidation: a coding's ETag answers 304 for that coding, not for another", async () => {
    const script = firstPageScripts(html)[0]!;
    const br = await wireRequest(srv.url, 'GET', script, { 'accept-encoding': 'br' });
    const again = await wireRequest(srv.url, 'GET', script, { 'accept-encoding': 'br', 'if-none-match': String(br.headers.etag) });
    assert.equal(again.status, 304);
    assert.equal(again.body.length, 0);
    const gzip = await wireRequest(srv.url, 'GET', script, { 'accept-encoding': 'gzip', 'if-none-match': String(br.headers.etag) });
    assert.equal(gzip.status, 200, "the brotli copy's ETag does not stand for the gzip copy");
    assert.equal(gzip.headers['content-encoding'], 'gzip');
  });

  test('the first page’s JavaScript transfers under 40 KB with brotli and with gzip', async (t) => {
    const scripts = firstPageScripts(html);
    assert.ok(scripts.length > 0, 'index.html loads a module script');
    for (const coding of ['br', 'gzip'] as const) {
      let total = 0;
      for (const s of scripts) {
        const res = await wireRequest(srv.url, 'GET', s, { 'accept-encoding': coding });
        assert.equal(res.headers['content-encoding'], coding, s);
        total += res.body.length;
      }
      t.diagnostic(`first page JavaScript with ${coding}: ${(total / 1024).toFixed(1)} KB`);
      assert.ok(total < FIRST_PAGE_JS_LIMIT, `${coding}: ${total} bytes`);
    }
  });

  test('a file changed after the build is sent as it is, not as its older copy', async () => {
    const dir = await makeTempDir('algohost-web-stale-');
    const edited = await startTestServer({ env: { ALGOHOST_WEB_DIR: dir } });
    try {
      fs.cpSync(DIST, dir, { recursive: true, preserveTimestamps: true });
      const changed = html.replace('</head>', '<meta name="edited" content="after the build"></head>');
      fs.writeFileSync(path.join(dir, 'index.html'), changed);
      const later = new Date(Date.now() + 60_000);
      fs.utimesSync(path.join(dir, 'index.html'), later, later);
      const res = await wireRequest(edited.url, 'GET', '/', { 'accept-encoding': 'gzip, deflate, br' });
      assert.equal(res.headers['content-encoding'], undefined);
      assert.equal(res.body.toString(), changed);
      const script = firstPageScripts(html)[0]!;
      const untouched = await wireRequest(edited.url, 'GET', script, { 'accept-encoding': 'br' });
      assert.equal(untouched.headers['content-encoding'], 'br', 'a file left as built keeps its copy');
    } finally {
      await edited.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
