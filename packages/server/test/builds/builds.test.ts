import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { environmentId } from '../support/algorithms.js';
import { createUser, type TestUser } from '../support/fixtures.js';
import { selectedFixtures } from '../support/fixtures-algorithms.js';
import { announcedBuildId, clone, commitAll, commitAndPush, gitUrl, pushHead, removeClone, replaceWorkingFiles } from '../support/git.js';
import { client, type Client } from '../support/http.js';
import { prepareSharedBuild } from '../support/shared-builds.js';
import { CLUSTER_TOPOLOGY, startTestServer, type TestServer } from '../support/server.js';

/** Per language: the fixture builds, its broken variant fails with the compiler's error. */
describe('builds of the fixture algorithms', () => {
  let srv: TestServer;
  let api: Client;
  before(async () => {
    srv = await startTestServer();
    api = client(srv.url);
  });
  after(() => srv.stop());

  for (const fx of selectedFixtures()) {
    test(`${fx.language}: push builds the fixture; a broken push fails with ${fx.brokenError} and the good build stays`, async () => {
      // One owner per language: the fixture's entry points are named after fixture.json's name.
      const owner: TestUser = await createUser(api, srv.adminKey, `u_${fx.language.replace(/\W/g, '_')}`);
      const envId = await environmentId(api, owner.key, fx.environment);
      const name = fx.name;
      const created = await api.post(`/v1/algorithms/${owner.name}`, {
        key: owner.key,
        body: { name, settings: { algorithm_environment: envId } },
      });
      assert.equal(created.status, 200, created.text);
      const { dir, result } = await clone(gitUrl(srv.url, owner.name, owner.key, owner.name, name));
      assert.equal(result.code, 0, result.stderr);
      try {
        replaceWorkingFiles(dir, fx.hello);
        const commit = await commitAll(dir, 'hello fixture');
        assert.equal(commit.code, 0, commit.stderr);
        // On one node this build is real, and what it makes is offered to the run's later pushes
        // of the same tree. Against a cluster (cluster/topology/builds.test.ts) the good push takes
        // that artifact, once made, so the run compiles each fixture once: the worker still takes
        // the build, stores the artifact in the blob store and reports success, and the broken
        // push below compiles on a worker for real.
        const build = !CLUSTER_TOPOLOGY;
        const settle = await prepareSharedBuild(srv.url, dir, created.body.id as string, fx.environment, { build });
        let goodId: string | undefined;
        try {
          const push = await pushHead(dir, { wait: true });
          assert.equal(push.code, 0, push.stderr);
          const id = announcedBuildId(push.stderr);
          assert.ok(id, push.stderr);
          assert.match(push.stderr, new RegExp(`build ${id} succeeded`), push.stderr);
          goodId = id;
        } finally {
          await settle(goodId);
        }
        const good = await api.get(`/v1/algorithms/${owner.name}/${name}/builds/${goodId}`, { key: owner.key });
        assert.equal(good.body.status, 'succeeded');

        replaceWorkingFiles(dir, fx.broken);
        const bad = await commitAndPush(dir, 'broken fixture', { wait: true });
        const badId = announcedBuildId(bad.stderr)!;
        assert.match(bad.stderr, new RegExp(`build ${badId} failed`));
        const logs = await api.get(`/v1/algorithms/${owner.name}/${name}/builds/${badId}/logs`, { key: owner.key });
        assert.equal(logs.status, 200);
        assert.ok(logs.body.logs.includes(fx.brokenError), `log should name ${fx.brokenError}:\n${logs.body.logs}`);

        const list = await api.get(`/v1/algorithms/${owner.name}/${name}/builds`, { key: owner.key });
        // Newest first; the failed build did not replace the good one.
        assert.deepEqual(
          list.body.results.map((b: { build_id: string; status: string }) => [b.build_id, b.status]),
          [
            [badId, 'failed'],
            [goodId, 'succeeded'],
          ],
        );
      } finally {
        await removeClone(dir);
      }
    });
  }
});
