/**
 * The hosted-data API (docs/compatibility.md §5): every operation with its status codes and headers,
 * listings and their paging, the Accept-driven Content-Type, the connector prefix, and the
 * names that are refused (traversal, NUL, over-long, malformed encoding).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertError, checkedClient } from '../support/assertions.js';
import { rawRequest, storedDataObjects } from '../support/data.js';
import { createUser, type TestUser } from '../support/fixtures.js';
import { client, type Client } from '../support/http.js';
import { DATABASES, startTestServer, type TestServer } from '../support/server.js';

const LAST_MODIFIED = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

for (const database of DATABASES) {
  describe(`hosted data API (${database})`, () => {
    let srv: TestServer;
    let api: Client;
    let plain: Client;
    let alice: TestUser;

    before(async () => {
      srv = await startTestServer({ database });
      api = checkedClient(srv.url);
      plain = client(srv.url);
      alice = await createUser(api, srv.adminKey, 'alice');
    });
    after(() => srv.stop());

    const put = (path: string, body: string | Buffer, headers: Record<string, string> = {}, key = alice.key) =>
      api.put(`/v1/data/${path}`, { key, raw: body, headers });
    const mkdir = (parent: string, name: string, extra: Record<string, unknown> = {}, key = alice.key) =>
      api.post(`/v1/data/${parent}`, { key, body: { name, ...extra } });

    test('POST on a parent creates a collection (exactly 200); .my, the bare root and the owner name are the same place', async () => {
      const created = await mkdir('.my', 'photos');
      assert.equal(created.status, 200);
      assert.deepEqual(created.body, { result: 'data://.my/photos' });
      const byName = await mkdir('alice', 'docs');
      assert.equal(byName.status, 200);
      assert.deepEqual(byName.body, { result: 'data://alice/docs' });
      assertError(await mkdir('alice', 'photos'), 409);
      assertError(await mkdir('.my', 'docs'), 409);

      for (const path of ['/v1/data/.my', '/v1/data/', '/v1/data', '/v1/data/alice', '/v1/data/alice/']) {
        const res = await api.get(path, { key: alice.key });
        assert.equal(res.status, 200, `${path}: ${res.text}`);
        assert.equal(res.headers.get('x-data-type'), 'directory', path);
        assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
        assert.deepEqual(res.body, { folders: [{ name: 'docs' }, { name: 'photos' }] }, path);
      }
      const empty = await api.get('/v1/data/alice/photos', { key: alice.key });
      assert.equal(empty.status, 200);
      assert.deepEqual(empty.body, {}, 'empty folders and files arrays are omitted');
    });

    test('PUT stores the body as is whatever the Content-Type (none, text, JSON that is not JSON, malformed)', async () => {
      await mkdir('alice', 'raw');
      const cases: [string, string | Buffer, Record<string, string>][] = [
        ['plain.txt', 'hello world', { 'content-type': 'text/plain' }],
        ['nojson.json', '{not json at all', { 'content-type': 'application/json' }],
        ['weird.bin', Buffer.from([0, 1, 2, 255, 254]), { 'content-type': 'this is not a media type' }],
        ['none.bin', Buffer.from([9, 8, 7]), {}],
        ['empty', '', { 'content-type': 'application/octet-stream' }],
        ['form', 'a=1&b=2', { 'content-type': 'application/x-www-form-urlencoded' }],
      ];
      for (const [name, body, headers] of cases) {
        const res = await put(`alice/raw/${name}`, body, headers);
        assert.equal(res.status, 200, `${name}: ${res.text}`);
        assert.deepEqual(res.body, { result: `data://alice/raw/${name}` });
        const back = await fetch(`${srv.url}/v1/data/alice/raw/${name}`, { headers: { authorization: `Simple ${alice.key}` } });
        assert.equal(back.status, 200);
        assert.deepEqual(Buffer.from(await back.arrayBuffer()), Buffer.from(body), name);
      }
      const listing = await api.get('/v1/data/alice/raw', { key: alice.key });
      assert.deepEqual(
        listing.body.files.map((f: { filename: string; size: number }) => [f.filename, f.size]),
        [
          ['empty', 0],
          ['form', 7],
          ['nojson.json', 16],
          ['none.bin', 3],
          ['plain.txt', 11],
          ['weird.bin', 5],
        ],
      );
      for (const f of listing.body.files) assert.match(f.last_modified, LAST_MODIFIED);
      assert.equal(listing.body.folders, undefined);
    });

    test('GET of a file: the bytes, X-Data-Type: file, Content-Length, Content-Type following Accept', async () => {
      await mkdir('alice', 'get');
      await put('alice/get/data.json', '{"a": 1}');
      const cases: [string | undefined, RegExp][] = [
        [undefined, /^application\/octet-stream/],
        ['application/json', /^application\/json/],
        ['text/plain', /^text\/plain/],
        ['application/octet-stream', /^application\/octet-stream/],
        ['*/*', /^application\/octet-stream/],
        ['image/png', /^application\/octet-stream/],
        ['text/plain;q=0.5, application/json', /^application\/json/],
        ['text/html, text/plain', /^text\/plain/],
      ];
      for (const [accept, type] of cases) {
        const res = await fetch(`${srv.url}/v1/data/alice/get/data.json`, {
          headers: { authorization: `Simple ${alice.key}`, ...(accept ? { accept } : {}) },
        });
        assert.equal(res.status, 200);
        assert.equal(res.headers.get('x-data-type'), 'file');
        assert.match(res.headers.get('content-type') ?? '', type, `Accept: ${accept}`);
        assert.equal(res.headers.get('content-length'), '8');
        assert.equal(await res.text(), '{"a": 1}');
      }
    });

    test('HEAD: 200 with X-Data-Type for files and folders, else the status with X-Error-Message', async () => {
      await mkdir('alice', 'head');
      await put('alice/head/f', '12345');
      const file = await plain.head('/v1/data/alice/head/f', { key: alice.key });
      assert.equal(file.status, 200);
      assert.equal(file.headers.get('x-data-type'), 'file');
      assert.equal(file.headers.get('content-length'), '5');
      assert.equal(file.text, '');
      const dir = await plain.head('/v1/data/alice/head', { key: alice.key });
      assert.equal(dir.status, 200);
      assert.equal(dir.headers.get('x-data-type'), 'directory');
      assert.equal((await plain.head('/v1/data/.my', { key: alice.key })).status, 200);
      const missing = await plain.head('/v1/data/alice/head/nope', { key: alice.key });
      assert.equal(missing.status, 404);
      assert.match(missing.headers.get('x-error-message') ?? '', /data:\/\/alice\/head\/nope does not exist/);
      assert.equal(missing.text, '');
      const noAuth = await plain.head('/v1/data/alice/head/f');
      assert.equal(noAuth.status, 401);
      assert.ok(noAuth.headers.get('x-error-message'));
      const bad = await rawRequest(srv.url, 'HEAD', '/v1/data/alice/head/%2e%2e', { key: alice.key });
      assert.equal(bad.status, 400);
      assert.match(String(bad.headers['x-error-message']), /not allowed in a data path/);
    });

    test('PUT replaces; DELETE answers {"result": {"deleted": N}}; a non-empty folder needs ?force=true', async () => {
      await mkdir('alice', 'del');
      await put('alice/del/a', 'version one');
      await put('alice/del/a', 'v2');
      const res = await fetch(`${srv.url}/v1/data/alice/del/a`, { headers: { authorization: `Simple ${alice.key}` } });
      assert.equal(await res.text(), 'v2');
      assert.equal((await api.get('/v1/data/alice/del', { key: alice.key })).body.files[0].size, 2);

      const one = await api.delete('/v1/data/alice/del/a', { key: alice.key });
      assert.equal(one.status, 200);
      assert.deepEqual(one.body, { result: { deleted: 1 } });
      assertError(await api.get('/v1/data/alice/del/a', { key: alice.key }), 404);
      assertError(await api.delete('/v1/data/alice/del/a', { key: alice.key }), 404);

      await mkdir('alice/del', 'sub');
      await mkdir('alice/del/sub', 'deeper');
      for (const f of ['x', 'y']) await put(`alice/del/${f}`, f);
      await put('alice/del/sub/z', 'z');
      await put('alice/del/sub/deeper/w', 'w');
      const refused = await api.delete('/v1/data/alice/del', { key: alice.key });
      assertError(refused, 409);
      assert.match(refused.body.error.message, /not empty.*\?force=true/);
      // Query booleans are one helper's: anything but true/false/1/0 (any case) is a 400 naming them.
      const bad = await api.delete('/v1/data/alice/del?force=yes', { key: alice.key });
      assertError(bad, 400);
      assert.match(bad.body.error.message, /force must match pattern.*; got "yes"/);
      // The Python client sends `True`.
      const forced = await api.delete('/v1/data/alice/del?force=True', { key: alice.key });
      assert.deepEqual(forced.body, { result: { deleted: 4 } });
      assertError(await api.get('/v1/data/alice/del', { key: alice.key }), 404);
      assertError(await api.get('/v1/data/alice/del/sub/z', { key: alice.key }), 404);

      await mkdir('alice', 'emptydir');
      assert.deepEqual((await api.delete('/v1/data/alice/emptydir', { key: alice.key })).body, { result: { deleted: 0 } });
      // A collection of the same name starts empty: nothing of the old one survives.
      await mkdir('alice', 'del');
      assert.deepEqual((await api.get('/v1/data/alice/del', { key: alice.key })).body, {});
      assertError(await api.delete('/v1/data/.my', { key: alice.key }), 400);
    });

    test('nested folders; paths that cannot hold what is asked are refused with a reason', async () => {
      await mkdir('alice', 'tree');
      assert.deepEqual((await mkdir('alice/tree', 'a')).body, { result: 'data://alice/tree/a' });
      assert.equal((await put('alice/tree/a/f.txt', 'deep')).status, 200);
      assert.deepEqual((await api.get('/v1/data/alice/tree', { key: alice.key })).body, { folders: [{ name: 'a' }] });

      const noParent = await put('alice/tree/missing/f', 'x');
      assertError(noParent, 404);
      assert.match(noParent.body.error.message, /folder data:\/\/alice\/tree\/missing does not exist: create it first/);
      assertError(await put('alice/nocollection/f', 'x'), 404);
      const atRoot = await put('alice/loose.txt', 'x');
      assertError(atRoot, 400);
      assert.match(atRoot.body.error.message, /files live in collections/);
      assertError(await put('alice/tree/a', 'x'), 409); // a folder is there
      assertError(await put('alice/tree', 'x'), 409);
      assertError(await mkdir('alice/tree/a', 'f.txt'), 409); // a file is there
      assertError(await mkdir('alice/tree/a/f.txt', 'sub'), 409); // a file is no parent
      assertError(await mkdir('alice/tree/nothere', 'sub'), 404);
      const aclBelow = await mkdir('alice/tree', 'b', { acl: { read: ['user://*'] } });
      assertError(aclBelow, 400);
      assert.match(aclBelow.body.error.message, /ACLs belong to collections/);
      assertError(await api.post('/v1/data/alice/tree', { key: alice.key, body: {} }), 400);
      assertError(await api.post('/v1/data/alice/tree', { key: alice.key, body: { name: 5 } }), 400);
      assertError(await mkdir('alice/tree', 'x/y'), 400);
      assertError(await mkdir('alice/tree', '..'), 400);
      assertError(await mkdir('alice/tree', ''), 400);
      assertError(
        await api.post('/v1/data/alice/tree', { key: alice.key, raw: '{"name": ', headers: { 'content-type': 'application/json' } }),
        400,
      );
      assertError(await api.get('/v1/data/nobody_here/x', { key: alice.key }), 404);
      assertError(await api.get('/v1/data/.nonsense/x', { key: alice.key }), 400);
      assertError(await api.get('/v1/data/alice/x', { key: 'sim' + 'x'.repeat(25) }), 401);
      assertError(await api.get('/v1/data/alice/x'), 401);
    });

    test('listing pages with marker: folders first, files after, never on the same page', async () => {
      await mkdir('alice', 'paged');
      for (const d of ['d1', 'd2', 'd3']) await mkdir('alice/paged', d);
      for (const f of ['f1', 'f2', 'f3', 'f4', 'f5']) await put(`alice/paged/${f}`, f);
      const pages: Record<string, unknown>[] = [];
      let marker: string | undefined;
      for (let i = 0; i < 10; i++) {
        const res = await api.get(`/v1/data/alice/paged?limit=2${marker ? `&marker=${encodeURIComponent(marker)}` : ''}`, {
          key: alice.key,
        });
        assert.equal(res.status, 200, res.text);
        pages.push(res.body);
        marker = res.body.marker;
        if (!marker) break;
      }
      const names = (p: Record<string, unknown>, k: 'folders' | 'files') =>
        ((p[k] as { name?: string; filename?: string }[] | undefined) ?? []).map((x) => x.name ?? x.filename);
      assert.deepEqual(
        pages.map((p) => [names(p, 'folders'), names(p, 'files')]),
        [
          [['d1', 'd2'], []],
          [['d3'], []],
          [[], ['f1', 'f2']],
          [[], ['f3', 'f4']],
          [[], ['f5']],
        ],
      );
      for (const p of pages) assert.ok(!(p.folders && p.files), 'folders and files never share a page');
      assert.equal(pages.at(-1)!.marker, undefined, 'the last page has no marker');

      // A folder with files only starts with files; one page when everything fits.
      await mkdir('alice', 'flat');
      for (const f of ['b', 'a']) await put(`alice/flat/${f}`, f);
      const flat = await api.get('/v1/data/alice/flat', { key: alice.key });
      assert.deepEqual(
        flat.body.files.map((f: { filename: string }) => f.filename),
        ['a', 'b'],
      );
      assert.equal(flat.body.marker, undefined);
      assertError(await api.get('/v1/data/alice/paged?marker=not%20a%20marker', { key: alice.key }), 400, 5002);
      assertError(await api.get('/v1/data/alice/paged?limit=0', { key: alice.key }), 400, 5003);
    });

    test('/v1/connector/data/… is the same resource', async () => {
      const created = await api.post('/v1/connector/data/.my', { key: alice.key, body: { name: 'conn' } });
      assert.equal(created.status, 200);
      assert.equal((await api.put('/v1/connector/data/alice/conn/x', { key: alice.key, raw: 'via connector' })).status, 200);
      const res = await fetch(`${srv.url}/v1/data/alice/conn/x`, { headers: { authorization: `Simple ${alice.key}` } });
      assert.equal(await res.text(), 'via connector');
      const listing = await api.get('/v1/connector/data/alice/conn', { key: alice.key });
      assert.equal(listing.headers.get('x-data-type'), 'directory');
      assert.equal(listing.body.files[0].filename, 'x');
      assert.equal((await plain.head('/v1/connector/data/alice/conn/x', { key: alice.key })).status, 200);
      assert.deepEqual((await api.delete('/v1/connector/data/alice/conn?force=true', { key: alice.key })).body, { result: { deleted: 1 } });
    });

    test('traversal, NUL bytes, control characters, malformed encoding and over-long names are 400 with a reason', async () => {
      await mkdir('alice', 'safe');
      const before = await storedDataObjects(srv);
      const attempts: [string, RegExp][] = [
        ['/v1/data/alice/safe/../escape', /not allowed in a data path/],
        ['/v1/data/alice/safe/./x', /not allowed in a data path/],
        ['/v1/data/alice/safe/%2e%2e/escape', /not allowed in a data path/],
        ['/v1/data/alice/safe/%2E%2E', /not allowed in a data path/],
        // %2F separates names like "/" (data-encoded-paths.test.ts), so these are ".." too.
        ['/v1/data/alice/safe/..%2fescape', /not allowed in a data path/],
        ['/v1/data/alice/safe/%2e%2e%2f%2e%2e%2fetc%2fpasswd', /not allowed in a data path/],
        ['/v1/data/../../etc/passwd', /not allowed in a data path/],
        ['/v1/data/alice/safe/a%00b', /NUL/],
        ['/v1/data/alice/safe/a%0Ab', /control character/],
        ['/v1/data/alice/safe/%ZZ', /malformed percent-encoding/],
        ['/v1/data/alice/safe/%E0%A4%A', /malformed percent-encoding/],
        ['/v1/data/alice/safe//x', /empty name/],
        [`/v1/data/alice/safe/${'n'.repeat(256)}`, /at most 255 characters/],
        [`/v1/data/alice/safe/${'%C3%A9'.repeat(256)}`, /at most 255 characters/], // 256 characters, 512 bytes of UTF-8
        [`/v1/data/alice/safe/${Array.from({ length: 6 }, () => 'd'.repeat(200)).join('/')}`, /at most 1024 characters/],
      ];
      for (const [path, reason] of attempts) {
        for (const method of ['GET', 'PUT', 'DELETE', 'POST']) {
          const res = await rawRequest(srv.url, method, path, {
            key: alice.key,
            body: method === 'POST' ? '{"name": "x"}' : method === 'PUT' ? 'payload' : undefined,
            headers: method === 'POST' ? { 'content-type': 'application/json' } : {},
          });
          assert.equal(res.status, 400, `${method} ${path}: ${res.status} ${res.text}`);
          assert.match(JSON.parse(res.text).error.message, reason, `${method} ${path}`);
          assert.match(String(res.headers['x-error-message']), reason);
        }
      }
      const ok255 = `/v1/data/alice/safe/${'n'.repeat(255)}`;
      assert.equal((await rawRequest(srv.url, 'PUT', ok255, { key: alice.key, body: 'ok' })).status, 200, '255 characters are allowed');
      assert.equal((await rawRequest(srv.url, 'GET', '/v1/data/alice/safe/%C3%A9t%C3%A9%20%2B%25', { key: alice.key })).status, 404);
      assert.equal(
        (await rawRequest(srv.url, 'PUT', '/v1/data/alice/safe/%C3%A9t%C3%A9%20%2B%25', { key: alice.key, body: 'accents' })).status,
        200,
      );
      const listing = await api.get('/v1/data/alice/safe', { key: alice.key });
      assert.deepEqual(
        listing.body.files.map((f: { filename: string }) => f.filename),
        ['n'.repeat(255), 'été +%'],
      );
      assert.equal(await storedDataObjects(srv), before + 2, 'nothing but the two accepted files was stored');
    });
  });
}
