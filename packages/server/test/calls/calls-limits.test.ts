import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createAndBuild } from '../support/algorithms.js';
import { createUser, type TestUser } from '../support/fixtures.js';
import { client, request, type Client } from '../support/http.js';
import { startTestServer, type TestServer } from '../support/server.js';

const HOSTILE = fileURLToPath(new URL('../../../../test/fixtures/hostile/python/', import.meta.url));

describe('call limits: calls in flight per account, GPU environments without a GPU', () => {
  let srv: TestServer;
  let api: Client;
  let alice: TestUser;
  let sha: string;

  before(async () => {
    srv = await startTestServer({ env: { ALGOHOST_MAX_CALLS_PER_ACCOUNT: '1' } });
    api = client(srv.url);
    alice = await createUser(api, srv.adminKey, 'alice');
    sha = await createAndBuild(srv.url, api, alice, 'alice', 'Hostile', HOSTILE, { environment: 'python311' });
  });
  after(() => srv.stop());

  test('a call over the per-account limit is 429 with Retry-After; the next one after it works', async () => {
    const slow = request(srv.url, 'POST', `/v1/algo/alice/Hostile/${sha}?timeout=3`, { key: alice.key, body: { op: 'loop' } });
    await new Promise((r) => setTimeout(r, 500));
    const over = await request(srv.url, 'POST', `/v1/algo/alice/Hostile/${sha}`, { key: alice.key, body: { op: 'echo' } });
    assert.equal(over.status, 429);
    assert.ok(Number(over.headers.get('retry-after')) >= 1);
    assert.match(over.body.error.message, /at most 1 at once/);
    assert.equal((await slow).body.error.error_type, 'TimeoutError');
    const next = await request(srv.url, 'POST', `/v1/algo/alice/Hostile/${sha}`, { key: alice.key, body: { op: 'echo' } });
    assert.deepEqual(next.body.result, { echo: { op: 'echo' } }, next.text.slice(0, 300));
  });

  test(
    'a GPU environment fails at once with a clear message when no worker has a GPU',
    { skip: fs.existsSync('/dev/nvidia0') && 'this machine has a GPU' },
    async () => {
      const gpuSha = await createAndBuild(srv.url, api, alice, 'alice', 'OnGpu', HOSTILE.replace(/\/$/, ''), {
        environment: 'python37-gpu',
      });
      const res = await request(srv.url, 'POST', `/v1/algo/alice/OnGpu/${gpuSha}`, { key: alice.key, body: { op: 'echo' } });
      assert.equal(res.status, 503);
      assert.match(res.body.error.message, /needs a GPU/);
    },
  );
});
