/**
 * For runner-harness tests: push a fixture algorithm to a test server, wait for its build,
 * and start a warm runner for the artifact through the service's own RunnerFactory.
 */
import assert from 'node:assert/strict';
import type { RunnerProcess } from '../../src/runtime/runner/runner-process.js';
import { environmentId } from './algorithms.js';
import { createUser } from './fixtures.js';
import type { AlgorithmFixture } from './fixtures-algorithms.js';
import { clone, commitAll, gitUrl, removeClone, replaceWorkingFiles } from './git.js';
import { pushSharingBuild } from './shared-builds.js';
import { client } from './http.js';
import type { TestServer } from './server.js';

export async function buildFixture(srv: TestServer, fx: AlgorithmFixture, owner = `r_${fx.language.replace(/\W/g, '_')}`) {
  const api = client(srv.url);
  const user = await createUser(api, srv.adminKey, owner);
  const envId = await environmentId(api, user.key, fx.environment);
  const created = await api.post(`/v1/algorithms/${owner}`, {
    key: user.key,
    body: { name: fx.name, settings: { algorithm_environment: envId } },
  });
  assert.equal(created.status, 200, created.text);
  const { dir } = await clone(gitUrl(srv.url, owner, user.key, owner, fx.name));
  try {
    replaceWorkingFiles(dir, fx.hello);
    const commit = await commitAll(dir, 'fixture');
    assert.equal(commit.code, 0, commit.stderr);
    // The runner suites need the fixture built, not building it (builds.test.ts does that).
    const built = await pushSharingBuild(srv.url, dir, created.body.id as string, fx.environment);
    const build = await api.get(`/v1/algorithms/${owner}/${fx.name}/builds/${built}`, { key: user.key });
    const body = build.body as { build_id: string; commit_sha: string; environment: string };
    return { user, build: { ...body, artifact: await artifactOf(srv, body) } };
  } finally {
    await removeClone(dir);
  }
}

/** A started runner for the fixture's latest build (stop it when done). */
export async function startFixtureRunner(srv: TestServer, fx: AlgorithmFixture, owner?: string): Promise<RunnerProcess> {
  const { build } = await buildFixture(srv, fx, owner);
  const services = srv.server.services;
  const environment = services.catalog.environmentByName(build.environment)!;
  const runner = services.runners.create({
    artifact: build.artifact,
    algorithmName: fx.name,
    environment,
    network: 'none',
  });
  assert.ok(runner, `the ${fx.language} adapter has no runner()`);
  await runner.start();
  return runner;
}

/** The artifact key the service recorded for a build (by id; else the newest succeeded build of the commit). */
export async function artifactOf(srv: TestServer, build: { build_id?: string; environment: string; commit_sha: string }): Promise<string> {
  let q = srv.server.services.db.selectFrom('builds').select('artifact').where('status', '=', 'succeeded');
  q = build.build_id
    ? q.where('id', '=', build.build_id)
    : q.where('commit_sha', '=', build.commit_sha).where('environment_name', '=', build.environment).orderBy('created_at', 'desc');
  const row = await q.executeTakeFirst();
  assert.ok(row?.artifact, `no artifact recorded for ${JSON.stringify(build)}`);
  return row.artifact;
}
