/**
 * Builds held open on purpose: a hook in front of the real builder of each node that runs builds
 * (one node, or a cluster's workers) makes a build of a gated commit wait until the test
 * releases it, so fairness tests depend on no timing.
 */
import assert from 'node:assert/strict';
import type { Builder } from '../../src/domain/builds/ports.js';
import type { RunningServer } from '../../src/main/server.js';
import { writePythonAlgorithm } from './algorithms.js';
import { createUser, type TestUser } from './fixtures.js';
import { announcedBuildId, clone, git, gitUrl, removeClone } from './git.js';
import { client, type Client } from './http.js';
import { type DatabaseKind, startTestServer, type TestServer } from './server.js';

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

export interface BuildGates {
  /** Commits whose build reached a builder (on any node). */
  entered: Set<string>;
  gate(sha: string): void;
  release(sha: string): void;
  releaseAll(): void;
}

export function gateBuilds(servers: RunningServer[]): BuildGates {
  const gates = new Map<string, { promise: Promise<void>; resolve: () => void }>();
  const entered = new Set<string>();
  for (const server of servers) {
    const builder = server.services.builder as Builder;
    const real = builder.build.bind(builder);
    builder.build = async (req, log, signal) => {
      entered.add(req.build.commitSha);
      await gates.get(req.build.commitSha)?.promise;
      return real(req, log, signal);
    };
  }
  return {
    entered,
    gate: (sha) => void gates.set(sha, deferred()),
    release: (sha) => gates.get(sha)?.resolve(),
    releaseAll: () => {
      for (const g of gates.values()) g.resolve();
    },
  };
}

/** Polls until `probe` gives a value (not undefined or false); a minute at most. */
export async function waitFor<T>(what: string, probe: () => T | undefined | Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 1200; i++) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`gave up waiting for ${what}`);
}

/** A Python algorithm that answers with its owner and name, and sleeps when asked to. */
export function writeAlgorithm(dir: string, owner: string, name: string): void {
  writePythonAlgorithm(
    dir,
    owner,
    name,
    [
      'import time',
      '',
      'def apply(input):',
      '    if isinstance(input, dict) and input.get("sleep"):',
      '        time.sleep(input["sleep"])',
      `    return "${owner}/${name} answers " + str(input)`,
      '',
    ].join('\n'),
  );
}

export interface PushedBuild {
  user: TestUser;
  name: string;
  sha: string;
  id: string;
}

/** A server (one node or a cluster) with alice and mallory, its build gates, and helpers to push and look. */
export interface FairnessWorld {
  srv: TestServer;
  api: Client;
  alice: TestUser;
  mallory: TestUser;
  gates: BuildGates;
  /** Creates user/name, commits the algorithm (gated when asked) and pushes without waiting for the build. */
  push(user: TestUser, name: string, gated: boolean): Promise<PushedBuild>;
  status(b: PushedBuild): Promise<string>;
  close(): Promise<void>;
}

export async function startFairnessWorld(o: {
  database?: DatabaseKind;
  topology?: 'node' | 'cluster';
  env: Record<string, string>;
}): Promise<FairnessWorld> {
  const srv = await startTestServer({ database: o.database, topology: o.topology, env: o.env });
  const api = client(srv.url);
  const alice = await createUser(api, srv.adminKey, 'alice');
  const mallory = await createUser(api, srv.adminKey, 'mallory');
  const gates = gateBuilds(srv.runnerServers);
  const clones: string[] = [];
  return {
    srv,
    api,
    alice,
    mallory,
    gates,
    async push(user, name, gated) {
      assert.equal((await api.post(`/v1/algorithms/${user.name}`, { key: user.key, body: { name } })).status, 200);
      const c = await clone(gitUrl(srv.url, user.name, user.key, user.name, name));
      assert.equal(c.result.code, 0, c.result.stderr);
      clones.push(c.dir);
      writeAlgorithm(c.dir, user.name, name);
      await git(['add', '-A'], c.dir);
      assert.equal((await git(['commit', '-q', '-m', name], c.dir)).code, 0);
      const sha = (await git(['rev-parse', 'HEAD'], c.dir)).stdout.trim();
      if (gated) gates.gate(sha);
      const pushed = await git(['push', 'origin', 'HEAD:main'], c.dir);
      assert.equal(pushed.code, 0, pushed.stderr);
      const id = announcedBuildId(pushed.stderr);
      assert.ok(id, pushed.stderr);
      return { user, name, sha, id };
    },
    async status(b) {
      return (await api.get(`/v1/algorithms/${b.user.name}/${b.name}/builds/${b.id}`, { key: b.user.key })).body.status as string;
    },
    async close() {
      gates.releaseAll();
      for (const d of clones) await removeClone(d);
      await srv.stop();
    },
  };
}
