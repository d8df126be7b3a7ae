/** Creating an algorithm from a directory tree and building it, through the public API and Git. */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { clone, commitAll, gitUrl, removeClone, replaceWorkingFiles } from './git.js';
import { pushSharingBuild } from './shared-builds.js';
import type { Client } from './http.js';
import type { TestUser } from './fixtures.js';

export async function environmentId(api: Client, key: string, environment: string): Promise<string> {
  const langs = await api.get('/v1/algorithm-environments/edge/languages', { key });
  for (const l of langs.body as { name: string }[]) {
    const envs = await api.get(`/v1/algorithm-environments/edge/languages/${l.name}/environments`, { key });
    const env = (envs.body as { name: string; id: string }[]).find((e) => e.name === environment);
    if (env) return env.id;
  }
  throw new Error(`no environment ${environment}`);
}

/** Creates `owner/name` (settings merged), pushes `tree`, waits for the build; returns the commit. */
export async function createAndBuild(
  base: string,
  api: Client,
  user: TestUser,
  owner: string,
  name: string,
  tree: string,
  /** `shared: false` always builds, for tests about the build itself (support/shared-builds.ts). */
  opts: { environment?: string; settings?: Record<string, unknown>; shared?: boolean } = {},
): Promise<string> {
  const settings = { ...(opts.settings ?? {}) } as Record<string, unknown>;
  if (opts.environment) settings.algorithm_environment = await environmentId(api, user.key, opts.environment);
  const created = await api.post(`/v1/algorithms/${owner}`, { key: user.key, body: { name, settings } });
  assert.equal(created.status, 200, created.text);
  const { dir } = await clone(gitUrl(base, user.name, user.key, owner, name));
  try {
    replaceWorkingFiles(dir, tree);
    const commit = await commitAll(dir, 'tree');
    assert.equal(commit.code, 0, commit.stderr);
    const environment = opts.shared === false ? undefined : await environmentOf(api, user.key, owner, name);
    const built = await pushSharingBuild(base, dir, created.body.id as string, environment);
    const build = await api.get(`/v1/algorithms/${owner}/${name}/builds/${built}`, { key: user.key });
    return build.body.commit_sha as string;
  } finally {
    await removeClone(dir);
  }
}

/** The name of the environment an algorithm builds in. */
async function environmentOf(api: Client, key: string, owner: string, name: string): Promise<string> {
  const algorithm = await api.get(`/v1/algorithms/${owner}/${name}`, { key });
  assert.equal(algorithm.status, 200, algorithm.text);
  return algorithm.body.settings.package_set as string;
}

/** Writes a Python algorithm's tree into `dir`: algorithmia.conf, an empty requirements.txt and src/<name>.py = source. */
export function writePythonAlgorithm(dir: string, owner: string, name: string, source: string): void {
  fs.mkdirSync(path.join(dir, 'src'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'algorithmia.conf'), JSON.stringify({ username: owner, algoname: name, language: 'python3' }));
  fs.writeFileSync(path.join(dir, 'requirements.txt'), '# none\n');
  fs.writeFileSync(path.join(dir, 'src', '__init__.py'), '');
  fs.writeFileSync(path.join(dir, 'src', `${name}.py`), source);
}
