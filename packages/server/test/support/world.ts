/**
 * A small populated cluster for the tests that sweep the whole API (schema fuzzing, the
 * authorization matrix): every kind of resource exists, made through the public API and a real
 * `git push`, so requests reach the code behind the route instead of stopping at a 404.
 *
 *   alice  the owner: owns the organization acme and, directly or through acme (`owner`), the
 *          algorithm Hello (built, published as 0.1.0, public), the collection models (with
 *          hello.txt) and an async call's result; she has a password
 *   bob    a member (role member) of acme
 *   carol  a user with no relation to any of it
 */
import assert from 'node:assert/strict';
import { createAndBuild, environmentId } from './algorithms.js';
import { createOrganization, createUser, type TestUser } from './fixtures.js';
import { selectedFixtures, algorithmFixtures } from './fixtures-algorithms.js';
import { client, type Client } from './http.js';
import { addMember } from './organizations.js';
import type { TestServer } from './server.js';

export interface World {
  url: string;
  adminKey: string;
  alice: TestUser;
  bob: TestUser;
  carol: TestUser;
  /** alice's password (sign-in works with it). */
  alicePassword: string;
  org: string;
  /** Who owns the algorithm and the collection: alice herself, or acme. */
  owner: string;
  algorithm: string;
  buildId: string;
  commit: string;
  version: string;
  collection: string;
  file: string;
  fileContents: string;
  asyncRequestId: string;
  language: string;
  environmentSpecificationId: string;
  /** The id of the environment Hello is built in (new algorithms of the sweeps use it too). */
  environmentId: string;
}

export interface WorldOptions {
  /** `alice` (default): she owns the resources herself; `acme`: her organization owns them. */
  owner?: 'alice' | 'acme';
}

const PYTHON = 'python';

export async function seedWorld(srv: TestServer, opts: WorldOptions = {}): Promise<World> {
  const api = client(srv.url);
  const alicePassword = 'alice has a long password';
  const alice = await createUser(api, srv.adminKey, 'alice', { password: alicePassword, fullname: 'Alice A' });
  const bob = await createUser(api, srv.adminKey, 'bob');
  const carol = await createUser(api, srv.adminKey, 'carol');
  const org = 'acme';
  await createOrganization(api, alice.key, org);
  await addMember(api, org, alice.key, bob);
  const owner = opts.owner ?? 'alice';

  // The Python fixture, whatever ALGOHOST_TEST_LANGUAGES narrows the language suites to.
  const fx = (selectedFixtures().find((f) => f.language === PYTHON) ?? algorithmFixtures().find((f) => f.language === PYTHON))!;
  const commit = await createAndBuild(srv.url, api, alice, owner, fx.name, fx.hello, {
    environment: fx.environment,
    settings: { algorithm_callability: 'public' },
  });
  const builds = await api.get(`/v1/algorithms/${owner}/${fx.name}/builds`, { key: alice.key });
  assert.equal(builds.status, 200, builds.text);
  const buildId = (builds.body.results as { build_id: string; commit_sha: string }[]).find((b) => b.commit_sha === commit)!.build_id;
  const published = await api.post(`/v1/algorithms/${owner}/${fx.name}/versions`, {
    key: alice.key,
    body: { settings: { algorithm_callability: 'public' }, version_info: { version_type: 'minor' } },
  });
  assert.equal(published.status, 200, published.text);
  const version = published.body.version_info.semantic_version as string;

  const collection = 'models';
  const made = await api.post(`/v1/data/${owner}`, { key: alice.key, body: { name: collection, acl: { read: ['algo://.my/*'] } } });
  assert.equal(made.status, 200, made.text);
  const file = 'hello.txt';
  const fileContents = 'hello from the world fixture\n';
  const put = await api.put(`/v1/data/${owner}/${collection}/${file}`, { key: alice.key, raw: fileContents });
  assert.equal(put.status, 200, put.text);

  const asyncCall = await api.post(`/v1/algo/${owner}/${fx.name}/${version}?output=void`, { key: alice.key, body: 'world' });
  assert.equal(asyncCall.status, 200, asyncCall.text);
  const asyncRequestId = asyncCall.body.request_id as string;
  await waitForAsync(api, alice.key, asyncRequestId);

  const envId = await environmentId(api, alice.key, fx.environment);
  const language = await languageOf(api, alice.key, envId);
  return {
    url: srv.url,
    adminKey: srv.adminKey,
    alice,
    bob,
    carol,
    alicePassword,
    org,
    owner,
    algorithm: fx.name,
    buildId,
    commit,
    version,
    collection,
    file,
    fileContents,
    asyncRequestId,
    language: language.name,
    environmentSpecificationId: language.specificationId,
    environmentId: envId,
  };
}

/** The async call's result is kept once it completes; the sweeps read a finished one. */
async function waitForAsync(api: Client, key: string, id: string): Promise<void> {
  for (;;) {
    const res = await api.get(`/v1/algo/requests/${id}`, { key });
    assert.equal(res.status, 200, res.text);
    if (res.body.status !== 'running' && res.body.status !== 'queued') return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function languageOf(api: Client, key: string, envId: string): Promise<{ name: string; specificationId: string }> {
  const langs = await api.get('/v1/algorithm-environments/edge/languages', { key });
  for (const l of langs.body as { name: string }[]) {
    const envs = await api.get(`/v1/algorithm-environments/edge/languages/${l.name}/environments`, { key });
    const env = (envs.body as { id: string; environment_specification_id: string }[]).find((e) => e.id === envId);
    if (env) return { name: l.name, specificationId: env.environment_specification_id };
  }
  throw new Error(`no language lists the environment ${envId}`);
}
