/**
 * The typed client in a real browser (Chromium, driven by playwright-core): the client bundled
 * for the browser by esbuild, loaded by a page on another origin, calling a running algohost
 * node that allows that origin (ALGOHOST_CORS_ORIGINS).
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../../server/test/support/browser.js';
import { createAndBuild } from '../../server/test/support/algorithms.js';
import { createUser, type TestUser } from '../../server/test/support/fixtures.js';
import { FIXTURES_DIR } from '../../server/test/support/fixtures-algorithms.js';
import { client, type Client } from '../../server/test/support/http.js';
import { startTestServer, type TestServer } from '../../server/test/support/server.js';

const CLIENT_ENTRY = fileURLToPath(new URL('../src/index.ts', import.meta.url));

/** Serves the page and the bundled client from its own origin. */
async function startPageServer(bundle: string): Promise<{ origin: string; close: () => Promise<void> }> {
  const page =
    '<!doctype html><meta charset="utf-8"><title>client</title><script type="module">import * as c from "/client.js"; window.algohost = c; document.title = "ready";</script>';
  const server = http.createServer((req, res) => {
    if (req.url === '/client.js') res.writeHead(200, { 'content-type': 'text/javascript' }).end(bundle);
    else res.writeHead(200, { 'content-type': 'text/html' }).end(page);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { origin: `http://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe('the TypeScript client in Chromium', () => {
  let srv: TestServer;
  let api: Client;
  let alice: TestUser;
  let pages: Awaited<ReturnType<typeof startPageServer>>;
  let browser: Browser;
  let page: Page;

  before(async () => {
    const bundled = await build({ entryPoints: [CLIENT_ENTRY], bundle: true, format: 'esm', platform: 'browser', write: false });
    pages = await startPageServer(bundled.outputFiles[0]!.text);
    srv = await startTestServer({ env: { ALGOHOST_CORS_ORIGINS: pages.origin } });
    api = client(srv.url);
    alice = await createUser(api, srv.adminKey, 'alice');
    await createAndBuild(srv.url, api, alice, 'alice', 'Hello', path.join(FIXTURES_DIR, 'python', 'hello'), { environment: 'python311' });
    const published = await api.post('/v1/algorithms/alice/Hello/versions', { key: alice.key, body: {} });
    assert.equal(published.status, 200, published.text);

    browser = await launchChromium();
    page = await browser.newPage();
    await page.goto(pages.origin);
    await page.waitForFunction(() => document.title === 'ready');
  });
  after(async () => {
    await browser?.close();
    await pages?.close();
    await srv?.stop();
  });

  /** Runs `fn` in the page with a client for `key`; returns what it returns (JSON values). */
  const inPage = <T>(fn: string, key: string = alice.key): Promise<T> =>
    page.evaluate(
      async ({ server, key, fn }) => {
        const { AlgohostClient } = (window as unknown as { algohost: typeof import('../src/index.js') }).algohost;
        const c = new AlgohostClient({ server, apiKey: key });
        return (await new Function('c', `return (async () => { ${fn} })()`)(c)) as T;
      },
      { server: srv.url, key, fn },
    );

  test('lists languages and reads an algorithm with its published version', async () => {
    const languages = await inPage<string[]>('return (await c.environments.languages()).map((l) => l.name);');
    assert.ok(languages.includes('python3'), languages.join(','));
    const algorithm = await inPage<{ name: string; version: string }>(
      'const a = await c.algorithms.get("alice", "Hello"); return { name: a.name, version: a.version_info.semantic_version };',
    );
    assert.deepEqual(algorithm, { name: 'Hello', version: '0.1.0' });
  });

  test('calls an algorithm synchronously (text and JSON) and asynchronously', async () => {
    const text = await inPage<unknown>('return (await c.call("alice/Hello/0.1.0", "world")).result;');
    assert.equal(text, 'hello world');
    const json = await inPage<unknown>('return (await c.call("alice/Hello/latestPrivate", { a: [1, 2] })).result;');
    assert.deepEqual(json, { echo: { a: [1, 2] }, kind: 'dict', json: '{"a": [1, 2]}' });
    const later = await inPage<unknown>(
      'const { request_id } = await c.callAsync("alice/Hello/latestPrivate", "later"); return (await c.waitForRequest(request_id, { intervalMs: 50 })).result;',
    );
    assert.equal(later, 'hello later');
  });

  test('platform errors reach the page with their status and message', async () => {
    const error = await inPage<{ name: string; status: number; message: string }>(
      'try { await c.algorithms.get("alice", "Nope"); return null; } catch (e) { return { name: e.name, status: e.status, message: e.message }; }',
    );
    assert.equal(error.status, 404);
    assert.match(error.message, /No such algorithm/);
    const wrongKey = await inPage<{ status: number }>(
      'try { await c.environments.languages(); return null; } catch (e) { return { status: e.status }; }',
      'simAAAAAAAAAAAAAAAAAAAAAAAAA',
    );
    assert.equal(wrongKey.status, 401);
  });

  test('origins not allowed get no CORS headers, and their preflight is refused', async () => {
    const preflight = await fetch(`${srv.url}/v1/algorithms/alice/Hello`, {
      method: 'OPTIONS',
      headers: { origin: 'http://evil.example', 'access-control-request-method': 'GET' },
    });
    assert.equal(preflight.status, 403);
    assert.match(preflight.headers.get('x-error-message') ?? '', /origin http:\/\/evil\.example may not call this API/);
    const get = await fetch(`${srv.url}/v1/algorithms/alice/Hello`, {
      headers: { origin: 'http://evil.example', authorization: `Simple ${alice.key}` },
    });
    assert.equal(get.status, 200);
    assert.equal(get.headers.get('access-control-allow-origin'), null);
    const allowed = await fetch(`${srv.url}/v1/algorithms/alice/Hello`, {
      method: 'OPTIONS',
      headers: { origin: pages.origin, 'access-control-request-method': 'PUT', 'access-control-request-headers': 'authorization' },
    });
    assert.equal(allowed.status, 204);
    assert.equal(allowed.headers.get('access-control-allow-origin'), pages.origin);
    assert.match(allowed.headers.get('access-control-allow-methods') ?? '', /PUT/);
  });
});
