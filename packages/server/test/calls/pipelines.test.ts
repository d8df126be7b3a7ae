import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createAndBuild } from '../support/algorithms.js';
import { createUser, type TestUser } from '../support/fixtures.js';
import { FIXTURES_DIR } from '../support/fixtures-algorithms.js';
import { client, request, type Client } from '../support/http.js';
import { makeTempDir, startTestServer, type TestServer } from '../support/server.js';

/**
 * The same Caller (test/fixtures/pipeline/<dir>/) in every language with an in-sandbox client.
 * ALGOHOST_TEST_LANGUAGES selects one by `language` (as for the algorithm fixtures) or by `dir`.
 * `lonelyWithout`: files the copy without pipeline_enabled leaves out, so that it also covers
 * another way of building (Java: javac instead of Maven, both putting the client on the class path).
 */
const CALLERS: { language: string; dir: string; environment: string; name: string; lonelyWithout?: string[] }[] = [
  { language: 'python', dir: 'python', environment: 'python311', name: 'Caller' },
  { language: 'javascript', dir: 'javascript', environment: 'nodejs20', name: 'JsCaller' },
  { language: 'ruby', dir: 'ruby', environment: 'ruby31', name: 'RbCaller' },
  { language: 'r', dir: 'r', environment: 'r42', name: 'RCaller' },
  { language: 'java', dir: 'java', environment: 'java17', name: 'JavaCaller', lonelyWithout: ['pom.xml'] },
  { language: 'scala2', dir: 'scala', environment: 'scala-2.13', name: 'ScalaCaller' },
  { language: 'rust', dir: 'rust', environment: 'rust-stable', name: 'RustCaller' },
];
const PIPELINE_FIXTURES = fileURLToPath(new URL('../../../../test/fixtures/pipeline/', import.meta.url));

const only = process.env.ALGOHOST_TEST_LANGUAGES?.split(',').map((s) => s.trim());
const selected = CALLERS.filter((c) => !only || only.includes(c.language) || only.includes(c.dir));

/** An algorithm calling another through the in-sandbox client, with a key scoped to the call. */
describe('pipelines (the in-sandbox client of each language)', () => {
  let srv: TestServer;
  let api: Client;
  let alice: TestUser;
  /** The Python fixture algorithm every Caller calls. */
  let hello: string;

  before(async () => {
    srv = await startTestServer();
    api = client(srv.url);
    alice = await createUser(api, srv.adminKey, 'alice');
    hello = await createAndBuild(srv.url, api, alice, 'alice', 'Hello', path.join(FIXTURES_DIR, 'python', 'hello'), {
      environment: 'python311',
    });
  });
  after(() => srv.stop());

  for (const c of selected) {
    describe(c.language, () => {
      /** name → built commit: the Caller with pipeline_enabled, and the same tree without. */
      const versions = new Map<string, string>();
      const lonely = `${c.name}Lonely`;
      const call = (input: unknown, name = c.name) =>
        request(srv.url, 'POST', `/v1/algo/alice/${name}/${versions.get(name)}`, { key: alice.key, body: input });

      before(async () => {
        const tree = path.join(PIPELINE_FIXTURES, c.dir);
        let lonelyTree = tree;
        if (c.lonelyWithout) {
          lonelyTree = await makeTempDir('algohost-pipeline-');
          await fs.promises.cp(tree, lonelyTree, { recursive: true, filter: (f) => !c.lonelyWithout!.includes(path.relative(tree, f)) });
        }
        try {
          for (const [name, enabled, from] of [
            [c.name, true, tree],
            [lonely, false, lonelyTree],
          ] as const) {
            const version = await createAndBuild(srv.url, api, alice, 'alice', name, from, {
              environment: c.environment,
              settings: { pipeline_enabled: enabled },
            });
            versions.set(name, version);
          }
        } finally {
          if (lonelyTree !== tree) await fs.promises.rm(lonelyTree, { recursive: true, force: true });
        }
      });

      test('with pipeline_enabled it calls another algorithm as the caller, over an isolated network', async () => {
        const res = await call({ algo: `alice/Hello/${hello}`, input: 'pipes' });
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(res.body.result, { ok: true, result: 'hello pipes' });
      });

      test('an error of the algorithm called comes back with its message', async () => {
        // Hello raises an error with the message it is given (a hook of the Python fixture).
        const res = await call({ algo: `alice/Hello/${hello}`, input: { probe: 'raise', arg: 'the callee says no' } });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.result.ok, false, res.text);
        assert.match(res.body.result.error, /the callee says no/);
      });

      test('the scoped key dies with the call: no key is stored, a second call gets a fresh one', async () => {
        const res = await call({ algo: `alice/Hello/${hello}`, input: 'again' });
        assert.deepEqual(res.body.result, { ok: true, result: 'hello again' });
        const keys = await api.get('/v1/users/alice/keys', { key: alice.key });
        assert.equal(keys.body.results.length, 1);
      });

      test('hosted data: files and folders in data://.my (the caller) through the client, written then read', async () => {
        const collection = `Pipe_${c.language}`;
        const text = `héllo ✓ from ${c.language}`;
        const res = await call({ data: `data://.my/${collection}`, text });
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(res.body.result, {
          created: true,
          exists: true,
          text,
          size: Buffer.byteLength(text),
          bytes: [0, 255, 1, 128],
          files: ['blob.bin', 'greeting.txt'],
          dirs: ['sub'],
          file_deleted: true,
          dir_deleted: true,
        });
        // data://.my was alice, the caller: what the algorithm left is in her collection.
        const blob = await fetch(`${srv.url}/v1/data/alice/${collection}/blob.bin`, { headers: { authorization: `Simple ${alice.key}` } });
        assert.equal(blob.status, 200);
        assert.deepEqual([...new Uint8Array(await blob.arrayBuffer())], [0, 255, 1, 128]);
        const listing = await api.get(`/v1/data/alice/${collection}`, { key: alice.key });
        assert.deepEqual(
          listing.body.files.map((f: { filename: string }) => f.filename),
          ['blob.bin'],
        );
        assert.equal(listing.body.folders, undefined);
      });

      test('without pipeline_enabled there is no key, and the client says so', async () => {
        const res = await call({ algo: `alice/Hello/${hello}`, input: 'x' }, lonely);
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.result.ok, false, res.text);
        assert.match(res.body.result.error, /pipeline_enabled/);
      });
    });
  }
});
