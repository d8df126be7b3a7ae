import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createAndBuild } from '../support/algorithms.js';
import { createUser, type TestUser } from '../support/fixtures.js';
import { FIXTURES_DIR } from '../support/fixtures-algorithms.js';
import { client, request, type Client } from '../support/http.js';
import { makeTempDir, startTestServer, type TestServer } from '../support/server.js';

/**
 * The run's shared builds (support/shared-builds.ts) that the other files rely on to compile a
 * fixture once: a second algorithm of the same tree gets the first one's artifact without a
 * compile, is recorded as built and answers its calls; `shared: false` builds for real.
 */
describe('shared builds of one test run', () => {
  let srv: TestServer;
  let api: Client;
  let alice: TestUser;
  let ownDir: string | undefined;
  // A tree no other file of the run builds (the hello fixture plus a file of its own), so that the
  // first build here is a real one even when other files shared theirs before.
  let hello: string;

  before(async () => {
    // Run alone (node --test), the file makes the run's directory itself.
    if (!process.env.ALGOHOST_TEST_SHARED_BUILDS) process.env.ALGOHOST_TEST_SHARED_BUILDS = ownDir = await makeTempDir('algohost-shared-');
    hello = await makeTempDir('algohost-shared-tree-');
    await fs.promises.cp(path.join(FIXTURES_DIR, 'python', 'hello'), hello, { recursive: true });
    await fs.promises.writeFile(path.join(hello, 'tree-of-this-test.txt'), randomUUID());
    srv = await startTestServer();
    api = client(srv.url);
    alice = await createUser(api, srv.adminKey, 'alice');
  });
  after(async () => {
    await srv.stop();
    await fs.promises.rm(hello, { recursive: true, force: true });
    if (ownDir) {
      delete process.env.ALGOHOST_TEST_SHARED_BUILDS;
      await fs.promises.rm(ownDir, { recursive: true, force: true });
    }
  });

  const lastBuildLog = async (name: string) => {
    const builds = await api.get(`/v1/algorithms/alice/${name}/builds`, { key: alice.key });
    const id = builds.body.results[0].build_id as string;
    assert.equal(builds.body.results[0].status, 'succeeded');
    return (await api.get(`/v1/algorithms/alice/${name}/builds/${id}/logs`, { key: alice.key })).body.logs as string;
  };

  test('the same tree in another algorithm reuses the artifact, runs, and shared: false compiles again', async () => {
    const first = await createAndBuild(srv.url, api, alice, 'alice', 'First', hello, { environment: 'python311' });
    assert.doesNotMatch(await lastBuildLog('First'), /reusing it/);
    const second = await createAndBuild(srv.url, api, alice, 'alice', 'Second', hello, { environment: 'python311' });
    assert.match(await lastBuildLog('Second'), /exists already; reusing it/);
    for (const [name, commit] of [
      ['First', first],
      ['Second', second],
    ] as const) {
      const res = await request(srv.url, 'POST', `/v1/algo/alice/${name}/${commit}`, { key: alice.key, body: 'shared' });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.result, 'hello shared');
    }
    await createAndBuild(srv.url, api, alice, 'alice', 'Third', hello, { environment: 'python311', shared: false });
    assert.doesNotMatch(await lastBuildLog('Third'), /reusing it/);
  });
});
