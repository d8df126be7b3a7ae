/**
 * Issue 18: some official clients percent-encode the whole hosted-data path, every "/" as %2F.
 * Every data operation must answer the same (status, headers that matter, body) whether the
 * separators arrive as "/", "%2F", "%2f" or a mix, on both prefixes; and nothing refused with
 * plain slashes (traversal, NUL, control characters, over-long names and paths) may become
 * reachable through an encoded separator. A real Python process speaking HTTP the way those
 * clients do (urllib.parse.quote with safe='') runs the usual steps.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { checkedClient } from '../support/assertions.js';
import { accountId, blobFiles, callKey, createAlgorithm, rawRequest, type RawResponse } from '../support/data.js';
import { createUser, type TestUser } from '../support/fixtures.js';
import type { Client } from '../support/http.js';
import { DATABASES, startTestServer, type TestServer } from '../support/server.js';

const exec = promisify(execFile);
const PYTHON = '/usr/bin/python3';
const LAST_MODIFIED = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** How the separators of a path (written with "/") are sent; the query string is left alone. */
type Form = { name: string; prefix: string; sep: (i: number) => string };
const FORMS: Form[] = [
  { name: 'plain "/"', prefix: '/v1/data/', sep: () => '/' },
  { name: '%2F', prefix: '/v1/data/', sep: () => '%2F' },
  { name: '%2f', prefix: '/v1/data/', sep: () => '%2f' },
  { name: 'mixed /, %2F, %2f', prefix: '/v1/data/', sep: (i) => ['/', '%2F', '%2f'][i % 3]! },
  { name: 'connector, %2F', prefix: '/v1/connector/data/', sep: () => '%2F' },
];

function send(form: Form, path: string): string {
  const [p, query] = path.split('?') as [string, string | undefined];
  const parts = p.split('/');
  const joined = parts.map((part, i) => (i === 0 ? part : form.sep(i - 1) + part)).join('');
  return form.prefix + joined + (query === undefined ? '' : `?${query}`);
}

/** What a client sees of one answer, with times (which differ between runs) masked. */
interface Seen {
  step: string;
  status: number;
  dataType: string | undefined;
  contentType: string | undefined;
  contentLength: string | undefined;
  errorMessage: string | undefined;
  body: unknown;
}

function seen(step: string, res: RawResponse): Seen {
  const h = (name: string) => res.headers[name] as string | undefined;
  let body: unknown = res.text;
  if ((h('content-type') ?? '').includes('json') && res.text) {
    body = JSON.parse(res.text, (_k, v: unknown) => (typeof v === 'string' && LAST_MODIFIED.test(v) ? '<time>' : v));
  }
  return {
    step,
    status: res.status,
    dataType: h('x-data-type'),
    contentType: h('content-type'),
    contentLength: h('content-length'),
    errorMessage: h('x-error-message'),
    body,
  };
}

for (const database of DATABASES) {
  describe(`hosted data paths with percent-encoded slashes (${database})`, () => {
    let srv: TestServer;
    let api: Client;
    let alice: TestUser;
    let bob: TestUser;
    let algorithm: { id: string; ownerId: string };

    before(async () => {
      srv = await startTestServer({ database });
      api = checkedClient(srv.url);
      alice = await createUser(api, srv.adminKey, 'alice');
      bob = await createUser(api, srv.adminKey, 'bob');
      algorithm = {
        id: await createAlgorithm(api, 'alice', alice.key, 'Algo'),
        ownerId: await accountId(api, srv.adminKey, 'alice'),
      };
    });
    after(() => srv.stop());

    /**
     * Every operation on every kind of place, each step with the status it must have. It leaves
     * nothing behind, so that each form runs it on the same (empty) state.
     */
    async function scenario(form: Form): Promise<Seen[]> {
      const transcript: Seen[] = [];
      const call = await callKey(srv, alice, algorithm);
      const step = async (
        label: string,
        expected: number,
        method: string,
        path: string,
        opts: { key?: string; json?: unknown; body?: string | Buffer; accept?: string } = {},
      ) => {
        const res = await rawRequest(srv.url, method, send(form, path), {
          key: opts.key ?? alice.key,
          body: opts.json !== undefined ? JSON.stringify(opts.json) : opts.body,
          headers: {
            ...(opts.json !== undefined ? { 'content-type': 'application/json' } : {}),
            ...(opts.accept ? { accept: opts.accept } : {}),
          },
        });
        assert.equal(res.status, expected, `${form.name}: ${label} (${method} ${send(form, path)}): ${res.text}`);
        transcript.push(seen(label, res));
      };
      try {
        // Collections and folders.
        await step('create a private collection', 200, 'POST', 'alice', { json: { name: 'enc', acl: { read: [] } } });
        await step('create it again', 409, 'POST', '.my', { json: { name: 'enc' } });
        await step('create a folder', 200, 'POST', 'alice/enc', { json: { name: 'sub' } });
        await step('create a folder below it', 200, 'POST', '.my/enc/sub', { json: { name: 'deeper' } });
        await step('create a folder in a missing one', 404, 'POST', 'alice/enc/nosuch', { json: { name: 'x' } });
        // Files: names that need encoding, and a name holding the characters "%2F" (sent %252F).
        await step('put a file', 200, 'PUT', 'alice/enc/sub/a.txt', { body: 'hello' });
        await step('put bytes', 200, 'PUT', '.my/enc/sub/b.bin', { body: Buffer.from([0, 1, 2, 255]) });
        await step('put an accented name', 200, 'PUT', 'alice/enc/sub/%C3%A9t%C3%A9%20%2B%25.txt', { body: 'accents' });
        await step('put a name holding %2F', 200, 'PUT', 'alice/enc/sub/50%252F50', { body: 'one name' });
        await step('put into a missing folder', 404, 'PUT', 'alice/enc/nosuch/x', { body: 'x' });
        await step('put over a folder', 409, 'PUT', 'alice/enc/sub/deeper', { body: 'x' });
        await step('replace a file', 200, 'PUT', 'alice/enc/sub/a.txt', { body: 'hello again' });
        await step('get a file as text', 200, 'GET', 'alice/enc/sub/a.txt', { accept: 'text/plain' });
        await step('get bytes', 200, 'GET', '.my/enc/sub/b.bin');
        await step('get the name holding %2F', 200, 'GET', 'alice/enc/sub/50%252F50');
        await step('"50" is no folder', 404, 'GET', 'alice/enc/sub/50');
        await step('get a missing file', 404, 'GET', 'alice/enc/sub/nope.txt');
        await step('head a file', 200, 'HEAD', 'alice/enc/sub/a.txt');
        await step('head a folder', 200, 'HEAD', 'alice/enc/sub');
        await step('head a missing file', 404, 'HEAD', 'alice/enc/sub/nope.txt');
        // Listings, with a trailing separator, paged with markers, with the ACL.
        await step('list the root', 200, 'GET', 'alice');
        await step('list a folder, trailing separator', 200, 'GET', 'alice/enc/sub/');
        await step('page 1', 200, 'GET', 'alice/enc/sub?limit=2');
        const marker = (transcript.at(-1)!.body as { marker: string }).marker;
        await step('page 2', 200, 'GET', `alice/enc/sub?limit=2&marker=${encodeURIComponent(marker)}`);
        const marker2 = (transcript.at(-1)!.body as { marker: string }).marker;
        await step('page 3', 200, 'GET', `alice/enc/sub?limit=2&marker=${encodeURIComponent(marker2)}`);
        await step('a bad marker', 400, 'GET', 'alice/enc/sub?marker=not%20a%20marker');
        await step('list with the ACL', 200, 'GET', 'alice/enc?acl=true');
        // ACLs decide what bob sees, whichever way the path is sent.
        await step('bob cannot see a private collection', 404, 'GET', 'alice/enc/sub/a.txt', { key: bob.key });
        await step('make it public', 200, 'PATCH', 'alice/enc', { json: { acl: { read: ['user://*'] } } });
        await step('bob reads it now', 200, 'GET', 'alice/enc/sub/a.txt', { key: bob.key });
        await step('bob may not write', 403, 'PUT', 'alice/enc/sub/planted', { key: bob.key, body: 'x' });
        await step('bob may not delete', 403, 'DELETE', 'alice/enc/sub/a.txt', { key: bob.key });
        await step('an ACL on a folder', 400, 'PATCH', 'alice/enc/sub', { json: { acl: { read: [] } } });
        await step('private again', 200, 'PATCH', '.my/enc', { json: { acl: { read: [] } } });
        await step('bob sees nothing again', 404, 'HEAD', 'alice/enc/sub', { key: bob.key });
        // An algorithm's space, from outside and from inside a call.
        await step("put into the algorithm's temp", 200, 'PUT', '.algo/alice/Algo/temp/t.txt', { body: 'temp' });
        await step("list the algorithm's space", 200, 'GET', '.algo/alice/Algo');
        await step('the call reads it as .algo/temp', 200, 'GET', '.algo/temp/t.txt', { key: call.key });
        await step('the call writes its session', 200, 'PUT', '.session/s.txt', { key: call.key, body: 'session' });
        await step('the call reads its session', 200, 'GET', '.session/s.txt', { key: call.key });
        await step('the call deletes its session file', 200, 'DELETE', '.session/s.txt', { key: call.key });
        await step('the call deletes the temp file', 200, 'DELETE', '.algo/temp/t.txt', { key: call.key });
        // Deleting: a file, a folder that is not empty, then forced.
        await step('delete a file', 200, 'DELETE', 'alice/enc/sub/a.txt');
        await step('delete it again', 404, 'DELETE', 'alice/enc/sub/a.txt');
        await step('delete a full folder', 409, 'DELETE', 'alice/enc/sub');
        await step('force it', 200, 'DELETE', 'alice/enc/sub?force=true');
        await step('delete the collection', 200, 'DELETE', '.my/enc?force=true');
        await step('gone', 404, 'HEAD', 'alice/enc');
      } finally {
        call.revoke();
      }
      return transcript;
    }

    test('every data operation answers the same with the separators sent as /, %2F, %2f, mixed, on both prefixes', async () => {
      const plain = await scenario(FORMS[0]!);
      // The plain run is the reference; a few of its answers pinned here, so that it is right too.
      const at = (step: string) => plain.find((s) => s.step === step)!;
      assert.deepEqual(at('put a name holding %2F').body, { result: 'data://alice/enc/sub/50%2F50' });
      assert.equal(at('get a file as text').body, 'hello again');
      assert.equal(at('get a file as text').dataType, 'file');
      // Folders and files never share a page: the folder first, then a marker to the files.
      assert.deepEqual((at('list a folder, trailing separator').body as { folders: unknown }).folders, [{ name: 'deeper' }]);
      const pages = ['page 1', 'page 2', 'page 3'].map(
        (p) => at(p).body as { folders?: { name: string }[]; files?: { filename: string }[] },
      );
      assert.deepEqual(
        pages.flatMap((p) => [...(p.folders ?? []).map((f) => f.name), ...(p.files ?? []).map((f) => f.filename)]),
        ['deeper', '50%2F50', 'a.txt', 'b.bin', 'été +%.txt'],
      );
      assert.deepEqual(at('list with the ACL').body, { folders: [{ name: 'sub' }], acl: { read: [] } });
      assert.deepEqual(at('force it').body, { result: { deleted: 3 } });
      for (const form of FORMS.slice(1)) {
        const encoded = await scenario(form);
        assert.equal(encoded.length, plain.length);
        for (let i = 0; i < plain.length; i++) assert.deepEqual(encoded[i], plain[i], `${form.name}: ${plain[i]!.step}`);
      }
    });

    test('traversal, NUL, control characters and over-long names stay refused when separators are encoded', async () => {
      assert.equal((await api.post('/v1/data/alice', { key: alice.key, body: { name: 'safe', acl: { read: [] } } })).status, 200);
      assert.equal((await api.post('/v1/data/bob', { key: bob.key, body: { name: 'private', acl: { read: [] } } })).status, 200);
      assert.equal((await api.put('/v1/data/bob/private/secret.txt', { key: bob.key, raw: 'bob only' })).status, 200);
      const blobsBefore = blobFiles(srv).objects.length;
      const MALFORMED = /malformed percent-encoding/;
      const relative = /not allowed in a data path: paths are absolute, never relative/;
      const attempts: [string, RegExp][] = [
        ['alice%2Fsafe%2F..%2Fescape', relative],
        ['alice/safe/..%2Fescape', relative],
        ['alice/safe/..%2fescape', relative],
        ['alice%2Fsafe%2F%2E%2E%2Fescape', relative],
        ['alice%2fsafe%2f%2e%2E%2F%2E%2e%2fetc%2Fpasswd', relative],
        ['%2E%2E%2F%2E%2E%2Fetc%2Fpasswd', relative],
        ['..%2F..%2Fetc%2Fpasswd', relative],
        ['.my%2F..%2Fbob%2Fprivate%2Fsecret.txt', relative],
        ['alice%2Fsafe%2F..%2F..%2Fbob%2Fprivate%2Fsecret.txt', relative],
        ['.algo%2F..%2Fbob%2Fprivate', relative],
        ['alice%2Fsafe%2F.%2Fx', relative],
        ['alice%2Fsafe%2F%2E%2Fx', relative],
        ['alice%2Fsafe%2F%2E', relative],
        ['alice%2Fsafe%2F%2Fx', /empty name/],
        ['alice%2Fsafe/%2Fx', /empty name/],
        ['alice%2Fsafe%2Fa%00b', /NUL/],
        ['alice%2Fsafe%2Fa%0Ab', /control character/],
        ['alice%2Fsafe%2Fa%7Fb', /control character/],
        // An overlong UTF-8 "/" is no separator and no name: malformed.
        ['alice%2Fsafe%2F..%C0%AFescape', MALFORMED],
        ['alice%2Fsafe%2F%ZZ', MALFORMED],
        [`alice%2Fsafe%2F${'n'.repeat(256)}`, /at most 255 characters/],
        [`alice%2Fsafe%2F${'%C3%A9'.repeat(256)}`, /at most 255 characters/],
        [`alice%2Fsafe%2F${Array.from({ length: 6 }, () => 'd'.repeat(200)).join('%2F')}`, /at most 1024 characters/],
      ];
      const methods: [string, { body?: string; headers?: Record<string, string> }][] = [
        ['GET', {}],
        ['HEAD', {}],
        ['PUT', { body: 'payload' }],
        ['POST', { body: '{"name": "x"}', headers: { 'content-type': 'application/json' } }],
        ['PATCH', { body: '{"acl": {"read": ["user://*"]}}', headers: { 'content-type': 'application/json' } }],
        ['DELETE', {}],
        ['DELETE?force', {}],
      ];
      for (const [path, reason] of attempts) {
        for (const prefix of ['/v1/data/', '/v1/connector/data/']) {
          for (const [method, opts] of methods) {
            const force = method === 'DELETE?force';
            const url = `${prefix}${path}${force ? '?force=true' : ''}`;
            const res = await rawRequest(srv.url, force ? 'DELETE' : method, url, { key: alice.key, ...opts });
            assert.equal(res.status, 400, `${method} ${url}: ${res.status} ${res.text}`);
            assert.match(String(res.headers['x-error-message']), reason, `${method} ${url}`);
            if (method !== 'HEAD') {
              const body = JSON.parse(res.text) as { error: { code: number; message: string } };
              // A URL that does not decode at all is refused by the router before the data service (2015).
              assert.equal(body.error.code, reason === MALFORMED ? 2015 : 6001, `${method} ${url}: ${body.error.message}`);
              assert.match(body.error.message, reason, `${method} ${url}`);
            }
          }
        }
      }
      // Nothing was stored, changed or deleted: bob's file is his, alice's collection empty and private.
      assert.equal(blobFiles(srv).objects.length, blobsBefore);
      assert.equal((await api.get('/v1/data/bob/private/secret.txt', { key: bob.key })).text, 'bob only');
      assert.deepEqual((await api.get('/v1/data/alice/safe?acl=true', { key: alice.key })).body, { acl: { read: [] } });
      assert.equal((await api.get('/v1/data/bob/private?acl=true', { key: bob.key })).body.acl.read.length, 0);

      // One decoding only: %252F is the three characters "%2F" inside one name, never a separator.
      const literal = await rawRequest(srv.url, 'PUT', '/v1/data/alice%2Fsafe%2F..%252Fescape', { key: alice.key, body: 'a name' });
      assert.equal(literal.status, 200, literal.text);
      assert.deepEqual(JSON.parse(literal.text), { result: 'data://alice/safe/..%2Fescape' });
      const listing = await api.get('/v1/data/alice/safe', { key: alice.key });
      assert.deepEqual(
        listing.body.files.map((f: { filename: string }) => f.filename),
        ['..%2Fescape'],
      );
      // And bob's collection, reached with encoded separators, is still a 404 for alice, as plain.
      const plainProbe = await rawRequest(srv.url, 'GET', '/v1/data/bob/private/secret.txt', { key: alice.key });
      const encodedProbe = await rawRequest(srv.url, 'GET', '/v1/data/bob%2Fprivate%2Fsecret.txt', { key: alice.key });
      assert.equal(plainProbe.status, 404);
      assert.deepEqual(seen('probe', encodedProbe), seen('probe', plainProbe));
    });

    test('a Python client that encodes the whole path (quote(path, safe="")) creates, writes, lists, shares and deletes', async () => {
      // What such a client does, in a real interpreter: http.client, every "/" after /v1/data/ as %2F.
      const script = String.raw`
import http.client, json, sys
from urllib.parse import quote, urlparse
base, key = urlparse(sys.argv[1]), sys.argv[2]
def req(method, path, body=None, json_body=None, query=""):
    conn = http.client.HTTPConnection(base.hostname, base.port, timeout=30)
    headers = {"Authorization": key}
    if json_body is not None:
        body = json.dumps(json_body).encode()
        headers["Content-Type"] = "application/json"
    conn.request(method, "/v1/data/" + quote(path, safe="") + query, body=body, headers=headers)
    res = conn.getresponse()
    data = res.read()
    conn.close()
    ctype = res.getheader("Content-Type") or ""
    return [res.status, res.getheader("X-Data-Type"), json.loads(data) if "json" in ctype and data else data.decode("utf-8", "replace")]
out = [
    req("POST", ".my", json_body={"name": "py"}),
    req("POST", "alice/py", json_body={"name": "nested dir"}),
    req("PUT", ".my/py/nested dir/n\u00e4me 1.txt", body=b"from python"),
    req("GET", "alice/py/nested dir/n\u00e4me 1.txt"),
    req("HEAD", "alice/py/nested dir"),
    req("GET", "data/../alice/py"),
    req("GET", "alice/py/nested dir/"),
    req("PATCH", "alice/py", json_body={"acl": {"read": ["user://*"]}}),
    req("GET", "alice/py", query="?acl=true"),
    req("DELETE", "alice/py/nested dir", query="?force=true"),
    req("DELETE", ".my/py"),
]
print(json.dumps(out))
`;
      const { stdout } = await exec(PYTHON, ['-c', script, srv.url, alice.key]);
      const out = JSON.parse(stdout) as [number, string | null, unknown][];
      const masked = JSON.parse(JSON.stringify(out), (_k, v: unknown) => (typeof v === 'string' && LAST_MODIFIED.test(v) ? '<time>' : v));
      assert.deepEqual(masked, [
        [200, null, { result: 'data://.my/py' }],
        [200, null, { result: 'data://alice/py/nested dir' }],
        [200, null, { result: 'data://.my/py/nested dir/näme 1.txt' }],
        [200, 'file', 'from python'],
        [200, 'directory', ''],
        [400, null, { error: { code: 6001, message: '".." is not allowed in a data path: paths are absolute, never relative' } }],
        [200, 'directory', { files: [{ filename: 'näme 1.txt', size: 11, last_modified: '<time>' }] }],
        [200, null, { result: 'data://alice/py' }],
        [200, 'directory', { folders: [{ name: 'nested dir' }], acl: { read: ['user://*'] } }],
        [200, null, { result: { deleted: 1 } }],
        [200, null, { result: { deleted: 0 } }],
      ]);
    });
  });
}
