import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createAndBuild } from './support/algorithms.js';
import { createUser, type TestUser } from './support/fixtures.js';
import { FIXTURES_DIR } from './support/fixtures-algorithms.js';
import { client, request, type Client } from './support/http.js';
import { startTestServer, type TestServer } from './support/server.js';

const CALLER = fileURLToPath(new URL('../../../test/fixtures/pipeline/python/', import.meta.url));
/** The same Caller in the other languages with an in-sandbox client. */
const OTHER_CALLERS = [
  { language: 'javascript', environment: 'nodejs20', name: 'JsCaller' },
  { language: 'ruby', environment: 'ruby31', name: 'RbCaller' },
].map((c) => ({ ...c, dir: fileURLToPath(new URL(`../../../test/fixtures/pipeline/${c.language}/`, import.meta.url)) }));

/** An algorithm calling another through the in-sandbox client, with a key scoped to the call. */
describe('pipelines (Algorithmia.client() inside the sandbox)', () => {
  let srv: TestServer;
  let api: Client;
  let alice: TestUser;
  let hello: string;
  let withPipeline: string;
  let without: string;
  /** name → version of every other-language Caller, with and without pipeline_enabled. */
  const others = new Map<string, string>();

  before(async () => {
    srv = await startTestServer();
    api = client(srv.url);
    alice = await createUser(api, srv.adminKey, 'alice');
    hello = await createAndBuild(srv.url, api, alice, 'alice', 'Hello', path.join(FIXTURES_DIR, 'python', 'hello'), {
      environment: 'python311',
    });
    withPipeline = await createAndBuild(srv.url, api, alice, 'alice', 'Caller', CALLER, {
      environment: 'python311',
      settings: { pipeline_enabled: true },
    });
    without = await createAndBuild(srv.url, api, alice, 'alice', 'Lonely', CALLER, {
      environment: 'python311',
      settings: { pipeline_enabled: false },
    });
    for (const c of OTHER_CALLERS) {
      for (const enabled of [true, false]) {
        const name = enabled ? c.name : `${c.name}Lonely`;
        const version = await createAndBuild(srv.url, api, alice, 'alice', name, c.dir, {
          environment: c.environment,
          settings: { pipeline_enabled: enabled },
        });
        others.set(name, version);
      }
    }
  });
  after(() => srv.stop());

  test('with pipeline_enabled it calls another algorithm as the caller, over an isolated network', async () => {
    const res = await request(srv.url, 'POST', `/v1/algo/alice/Caller/${withPipeline}`, {
      key: alice.key,
      body: { algo: `alice/Hello/${hello}`, input: 'pipes' },
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.result, { ok: true, result: 'hello pipes' });
  });

  test('without pipeline_enabled there is no key, and the client says so', async () => {
    const res = await request(srv.url, 'POST', `/v1/algo/alice/Lonely/${without}`, {
      key: alice.key,
      body: { algo: `alice/Hello/${hello}`, input: 'x' },
    });
    assert.equal(res.body.result.ok, false);
    assert.match(res.body.result.error, /pipeline_enabled/);
  });

  test('the scoped key dies with the call', async () => {
    const res = await request(srv.url, 'POST', `/v1/algo/alice/Caller/${withPipeline}`, {
      key: alice.key,
      body: { algo: `alice/Hello/${hello}`, input: 'again' },
    });
    assert.equal(res.body.result.result, 'hello again');
    // Every key the service knows is listed for alice; the call key is not among them and not stored.
    const keys = await api.get('/v1/users/alice/keys', { key: alice.key });
    assert.equal(keys.body.results.length, 1);
  });

  for (const c of OTHER_CALLERS) {
    test(`${c.language}: with pipeline_enabled require the client and call another algorithm`, async () => {
      const res = await request(srv.url, 'POST', `/v1/algo/alice/${c.name}/${others.get(c.name)}`, {
        key: alice.key,
        body: { algo: `alice/Hello/${hello}`, input: 'pipes' },
      });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body.result, { ok: true, result: 'hello pipes' });
    });

    test(`${c.language}: without pipeline_enabled there is no key, and the client says so`, async () => {
      const name = `${c.name}Lonely`;
      const res = await request(srv.url, 'POST', `/v1/algo/alice/${name}/${others.get(name)}`, {
        key: alice.key,
        body: { algo: `alice/Hello/${hello}`, input: 'x' },
      });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.result.ok, false);
      assert.match(res.body.result.error, /pipeline_enabled/);
    });
  }
});
