/**
 * Async calls (output=void): refused at once when a sync call would be, and their results kept
 * in the database, so a restart of the service loses none.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createAndBuild } from '../support/algorithms.js';
import { assertError } from '../support/assertions.js';
import { createUser, type TestUser } from '../support/fixtures.js';
import { client, request, type Client } from '../support/http.js';
import { CLUSTER_TOPOLOGY, type DatabaseKind, DATABASES, makeTempDir, startTestServer, type TestServer } from '../support/server.js';

for (const database of DATABASES) describe(`async calls (${database})`, () => asyncCallsSuite(database));

function asyncCallsSuite(database: DatabaseKind): void {
  let srv: TestServer;
  let api: Client;
  let alice: TestUser;
  let sha: string;
  let tree: string;
  const submit = (input: unknown, address = `alice/Sleepy/${sha}`, query = '') =>
    request(srv.url, 'POST', `/v1/algo/${address}?output=void${query}`, { key: alice.key, body: input });
  const state = async (id: string) => (await api.get(`/v1/algo/requests/${id}`, { key: alice.key })).body;
  async function completed(id: string) {
    for (let i = 0; i < 200; i++) {
      const s = await state(id);
      if (s.status === 'completed') return s;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`request ${id} did not complete`);
  }

  before(async () => {
    tree = await makeTempDir('algohost-sleepy-');
    fs.mkdirSync(path.join(tree, 'src'));
    fs.writeFileSync(path.join(tree, 'requirements.txt'), '');
    fs.writeFileSync(
      path.join(tree, 'src', 'Sleepy.py'),
      'import time\n\ndef apply(input):\n    if isinstance(input, dict) and "sleep" in input:\n        time.sleep(input["sleep"])\n    return input\n',
    );
    srv = await startTestServer({ database });
    api = client(srv.url);
    alice = await createUser(api, srv.adminKey, 'alice');
    sha = await createAndBuild(srv.url, api, alice, 'alice', 'Sleepy', tree, { environment: 'python311' });
  });
  after(async () => {
    await srv.stop();
    fs.rmSync(tree, { recursive: true, force: true });
  });

  test('what a sync call would refuse is refused at once, not accepted', async () => {
    const missing = await submit(1, 'alice/Nope');
    assertError(missing, 404, 1001);
    assert.equal(missing.body.async, undefined);
    assertError(await submit(1, `alice/Sleepy/${sha}`, '&timeout=9999'), 400);
    assertError(await submit(1, 'alice/Sleepy/9.9.9'), 404, 1001);
  });

  test('a finished result survives a restart of the service', async () => {
    const res = await submit({ keep: 'me' });
    assert.equal(res.status, 200, res.text);
    const before = await completed(res.body.request_id);
    assert.deepEqual(before.result, { keep: 'me' });
    srv = await srv.restart();
    api = client(srv.url);
    const after = await state(res.body.request_id);
    assert.equal(after.status, 'completed');
    assert.deepEqual(after.result, { keep: 'me' });
    assert.equal(after.metadata.content_type, 'json');
  });

  // In a cluster the API node restarts while the workers keep running the call, and a worker that
  // stops hands it back to JetStream for another: it completes (cluster.test.ts tests that).
  const oneNode = { skip: CLUSTER_TOPOLOGY ? 'a cluster completes the call on a worker instead' : false };

  test('a call running when the service stops ends as SystemExit instead of running forever', oneNode, async () => {
    const res = await submit({ sleep: 60 });
    assert.equal(res.status, 200, res.text);
    assert.equal((await state(res.body.request_id)).status, 'running');
    srv = await srv.restart();
    api = client(srv.url);
    const after = await state(res.body.request_id);
    assert.equal(after.status, 'completed');
    assert.equal(after.error?.error_type, 'SystemExit', JSON.stringify(after));
  });

  test('a call already running on a warm runner when the service stops also ends as SystemExit', oneNode, async () => {
    await completed((await submit('warm up')).body.request_id);
    const res = await submit({ sleep: 60 });
    await new Promise((r) => setTimeout(r, 500)); // the warm runner has the call by now
    srv = await srv.restart();
    api = client(srv.url);
    const after = await state(res.body.request_id);
    assert.equal(after.status, 'completed');
    assert.equal(after.error?.error_type, 'SystemExit', JSON.stringify(after));
  });

  test("another account's request and an unknown id are the same 404", async () => {
    const res = await submit('mine');
    await completed(res.body.request_id);
    const bob = await createUser(api, srv.adminKey, 'bob');
    assertError(await api.get(`/v1/algo/requests/${res.body.request_id}`, { key: bob.key }), 404);
    assertError(await api.get('/v1/algo/requests/req-00000000-0000-0000-0000-000000000000', { key: alice.key }), 404);
    assertError(await api.get('/v1/algo/requests/not-an-id', { key: alice.key }), 404);
  });
}
