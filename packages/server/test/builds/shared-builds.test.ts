import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createAndBuild, environmentId } from '../support/algorithms.js';
import { createUser, type TestUser } from '../support/fixtures.js';
import { FIXTURES_DIR } from '../support/fixtures-algorithms.js';
import { announcedBuildId, clone, commitAll, gitUrl, pushHead, removeClone, replaceWorkingFiles } from '../support/git.js';
import { client, request, type Client } from '../support/http.js';
import { makeTempDir, startTestServer, type TestServer } from '../support/server.js';
import { prepareSharedBuild } from '../support/shared-builds.js';

/**
 * The run's shared builds (support/shared-builds.ts) that the other files rely on to compile a
 * fixture once: a second algorithm of the same tree gets the first one's artifact without a
 * compile, is recorded as built and answers its calls; `shared: false` builds for real; and a push
 * of a tree being built elsewhere waits for that build instead of compiling beside it.
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

  test('a push of a tree that another test is building waits for that build and reuses its artifact', async () => {
    const tree = await makeTempDir('algohost-shared-tree-');
    await fs.promises.cp(path.join(FIXTURES_DIR, 'python', 'hello'), tree, { recursive: true });
    await fs.promises.writeFile(path.join(tree, 'tree-of-this-test.txt'), randomUUID());
    const created = await api.post('/v1/algorithms/alice', {
      key: alice.key,
      body: { name: 'Builder', settings: { algorithm_environment: await environmentId(api, alice.key, 'python311') } },
    });
    assert.equal(created.status, 200, created.text);
    const { dir } = await clone(gitUrl(srv.url, 'alice', alice.key, 'alice', 'Builder'));
    try {
      replaceWorkingFiles(dir, tree);
      assert.equal((await commitAll(dir, 'tree')).code, 0);
      // The first push takes the tree's build lock, as createAndBuild does, and has not pushed yet.
      const settle = await prepareSharedBuild(srv.url, dir, created.body.id as string, 'python311');
      let waited = true;
      const waiter = createAndBuild(srv.url, api, alice, 'alice', 'Waiter', tree, { environment: 'python311' }).finally(() => {
        waited = false;
      });
      await new Promise((r) => setTimeout(r, 1500));
      assert.equal(waited, true, 'the second push waits while the first builds');
      const builds = await api.get('/v1/algorithms/alice/Waiter/builds', { key: alice.key });
      assert.deepEqual(builds.body.results, [], 'nothing pushed yet');
      let built: string | undefined;
      try {
        const push = await pushHead(dir, { wait: true });
        built = announcedBuildId(push.stderr);
        assert.match(push.stderr, new RegExp(`build ${built} succeeded`), push.stderr);
      } finally {
        await settle(built);
      }
      await waiter;
      assert.doesNotMatch(await lastBuildLog('Builder'), /reusing it/);
      assert.match(await lastBuildLog('Waiter'), /exists already; reusing it/);
    } finally {
      await removeClone(dir);
      await fs.promises.rm(tree, { recursive: true, force: true });
    }
  });
});
