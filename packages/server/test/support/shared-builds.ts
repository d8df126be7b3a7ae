/**
 * Builds shared between the test files of one run: a test that only needs a built version of a
 * fixture to call gets the artifact another test of the run built from the same tree, instead of
 * compiling it again (a Rust, Scala or Java fixture takes a minute or more on 2 cores).
 *
 * scripts/run-tests.sh makes a directory for the run (ALGOHOST_TEST_SHARED_BUILDS) and removes
 * it at the end. An entry is keyed by the commit's Git tree hash (the exact files and modes),
 * the environment and the node's build settings (registries, limits), and holds a copy of the
 * artifact and of its dependency layer. Before a push whose entry exists, the artifact is put in
 * place in the node's builder directory as the artifact of (algorithm, environment, commit),
 * where the builder looks first: the push still records a build that succeeds, and the runner
 * mounts that artifact, but nothing compiles. On a cluster the artifact is put in place on every
 * worker, since any of them may take the build; the one that does finds it and stores it in the
 * blob store, as after any build. Without the variable (a file run alone by `node --test`), or
 * for a tree not built yet in the run, the build is real.
 *
 * While a test builds a tree, a lock file beside the entry names its process; a push of the same
 * tree elsewhere waits for the artifact rather than compiling it alongside (on 2 cores, two
 * compiles at once take as long as one after the other), so the run compiles each tree once
 * whatever order its files run in.
 *
 * Tests about building itself (templates-build, security-fairness…) push through their own
 * paths or say `shared: false`; builds.test.ts says `build: true`: it builds, and offers what it
 * made.
 */
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { ArtifactManifest } from '../../src/runtime/build/artifacts.js';
import type { Config } from '../../src/config/config.js';
import assert from 'node:assert/strict';
import { processRuns } from '../../src/runtime/sandbox/supervisor.js';
import { announcedBuildId, git, pushHead } from './git.js';
import { testServerAt, type TestServer } from './server.js';

const exec = promisify(execFile);

/** What of a node's configuration decides what a build makes of a tree. */
const BUILD_SETTINGS: (keyof Config)[] = [
  'pipIndexUrl',
  'pipFindLinks',
  'npmRegistry',
  'mavenRepository',
  'cranRepository',
  'cargoRegistry',
  'gemSource',
  'buildEgressAllow',
  'maxArtifactBytes',
];

interface Entry {
  dir: string;
  srv: TestServer;
}

/** The shared entry for the commit at HEAD of `clone`, or undefined when this push cannot share. */
async function entryFor(base: string, clone: string, environment: string): Promise<Entry | undefined> {
  const srv = testServerAt(base);
  const sharedDir = process.env.ALGOHOST_TEST_SHARED_BUILDS;
  if (!sharedDir || !srv) return undefined;
  const tree = await git(['rev-parse', 'HEAD^{tree}'], clone);
  if (tree.code !== 0) return undefined;
  const settings = JSON.stringify(BUILD_SETTINGS.map((k) => srv.config[k] ?? null));
  const key = crypto.createHash('sha256').update(`${tree.stdout.trim()}\0${environment}\0${settings}`).digest('hex').slice(0, 40);
  return { dir: path.join(sharedDir, key), srv };
}

/**
 * Copies a tree as hard links (a Rust target directory is hundreds of MB; artifacts and layers
 * are never written once made: runners mount them read-only, and a layer's name holds the
 * algorithm that made it, so no other algorithm's build writes it), or by copying across
 * file systems. A cluster's copies are real ones (`link: false`): its workers tar what they
 * build for the blob store, and GNU tar fails on a file whose link count another test changes
 * while it reads ("file changed as we read it").
 */
async function cp(from: string, to: string, link: boolean): Promise<void> {
  if (link) {
    try {
      await exec('cp', ['-a', '--link', '--no-target-directory', from, to]);
      return;
    } catch {
      await fs.promises.rm(to, { recursive: true, force: true });
    }
  }
  await exec('cp', ['-a', '--no-target-directory', from, to]);
}
/** Whether hard links may join this server's artifacts to the run's: not for a cluster's workers. */
const mayLink = (srv: TestServer) => srv.runnerServers.every((s) => s === srv.server);
const exists = (p: string) => fs.existsSync(p);

/**
 * Pushes HEAD of `clone` (a new commit of the algorithm) and waits for its build to succeed,
 * sharing the run's artifact of the tree when `environment` is given; returns the build's id.
 */
export async function pushSharingBuild(base: string, clone: string, algorithmId: string, environment?: string): Promise<string> {
  const settle = environment ? await prepareSharedBuild(base, clone, algorithmId, environment) : undefined;
  let built: string | undefined;
  try {
    const push = await pushHead(clone, { wait: true });
    const id = announcedBuildId(push.stderr);
    assert.match(push.stderr, new RegExp(`build ${id} succeeded`), push.stderr);
    built = id;
  } finally {
    await settle?.(built);
  }
  return built!;
}

/** How long a push waits for another test's build of the same tree before it builds the tree itself. */
const WAIT_FOR_OTHER_BUILD_MS = 15 * 60_000;

/** What a test calls once its push ended: with the build's id when it succeeded, else with nothing. */
export type SettleSharedBuild = (builtId?: string) => Promise<void>;

/**
 * Puts this run's artifact of the same tree in place for (algorithm, environment, HEAD) before
 * the push, when there is one (never with `build: true`, for a test about building). When a test
 * of another file (or of this one) is building the same tree right now, it waits for that build
 * first, so that the run compiles each tree once whatever order its files run in. Returns what to
 * call once the push ended (in a `finally`): with the build's id when it succeeded, so that later
 * pushes of the tree reuse what it made, and in any case to let the waiting pushes go on.
 */
export async function prepareSharedBuild(
  base: string,
  clone: string,
  algorithmId: string,
  environment: string,
  opts: { build?: boolean } = {},
): Promise<SettleSharedBuild> {
  const entry = await entryFor(base, clone, environment);
  if (!entry) return async () => {};
  const commit = (await git(['rev-parse', 'HEAD'], clone)).stdout.trim();
  const since = Date.now();
  for (;;) {
    if (!opts.build && exists(path.join(entry.dir, 'manifest.json'))) {
      await placeArtifact(entry, `${algorithmId}/${environment}/${commit}`);
      return async () => {};
    }
    if (takeBuildLock(entry)) {
      return async (builtId) => {
        try {
          if (builtId) await offerArtifact(entry, builtId);
        } finally {
          fs.rmSync(`${entry.dir}.lock`, { force: true });
        }
      };
    }
    // Someone else builds the tree. A test about building builds it too (and offers what it
    // made, should it finish first); any other push waits, within a bound, for that artifact.
    if (opts.build || Date.now() - since > WAIT_FOR_OTHER_BUILD_MS) {
      return async (builtId) => (builtId ? offerArtifact(entry, builtId) : undefined);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/**
 * Takes the tree's build lock (a file naming this process): true when this push is the one that
 * builds it. A lock whose process is gone (a test file killed at its time limit) is taken over.
 */
function takeBuildLock(entry: Entry): boolean {
  const lock = `${entry.dir}.lock`;
  try {
    fs.writeFileSync(lock, String(process.pid), { flag: 'wx' });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  let owner: string;
  try {
    owner = fs.readFileSync(lock, 'utf8');
  } catch {
    return takeBuildLock(entry); // released meanwhile
  }
  // Empty: made a moment ago, its pid not written yet.
  if (owner === '' || processRuns(Number(owner))) return false;
  fs.rmSync(lock, { force: true });
  return takeBuildLock(entry);
}

/** The builders that may take a build of this server: its own, or a cluster's workers'. */
const buildersOf = (srv: TestServer) => srv.runnerServers.map((s) => s.services.builder);

/** Copies the entry's artifact (with its manifest naming the new algorithm and commit) and layer into every builder of the server. */
async function placeArtifact(entry: Entry, key: string): Promise<void> {
  const shared = JSON.parse(fs.readFileSync(path.join(entry.dir, 'manifest.json'), 'utf8')) as ArtifactManifest;
  const [algorithmId, environment, commit] = key.split('/') as [string, string, string];
  const manifest: ArtifactManifest = { ...shared, algorithmId, environment, commit, builtAt: new Date().toISOString() };
  for (const builder of buildersOf(entry.srv)) {
    const final = builder.artifactPath(key);
    if (exists(final)) continue;
    if (shared.layer !== null) {
      const layer = path.join(builder.dirs.layers, shared.layer);
      if (!exists(layer)) {
        await fs.promises.mkdir(path.dirname(layer), { recursive: true, mode: 0o711 });
        await cp(path.join(entry.dir, 'layer'), layer, mayLink(entry.srv));
      }
    }
    await fs.promises.mkdir(path.dirname(final), { recursive: true, mode: 0o711 });
    const staging = `${final}.shared-${crypto.randomBytes(4).toString('hex')}`;
    await fs.promises.mkdir(staging, { mode: 0o711 });
    await cp(path.join(entry.dir, 'tree'), path.join(staging, 'tree'), mayLink(entry.srv));
    fs.writeFileSync(path.join(staging, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
    await fs.promises.rename(staging, final);
  }
}

/** Copies the artifact a build made, and its layer, into the run's shared directory (the first of concurrent offers wins). */
async function offerArtifact(entry: Entry, buildId: string): Promise<void> {
  if (exists(entry.dir)) return;
  const row = await entry.srv.server.services.db.selectFrom('builds').select('artifact').where('id', '=', buildId).executeTakeFirst();
  if (!row?.artifact) return;
  // On a cluster, the worker that took the build holds it.
  const builder = buildersOf(entry.srv).find((b) => exists(b.artifactPath(row.artifact!)));
  if (!builder) return;
  const info = await builder.readArtifact(row.artifact);
  const staging = `${entry.dir}.tmp-${crypto.randomBytes(4).toString('hex')}`;
  await fs.promises.mkdir(staging, { recursive: true, mode: 0o700 });
  try {
    await cp(info.tree, path.join(staging, 'tree'), mayLink(entry.srv));
    if (info.layerDir) await cp(info.layerDir, path.join(staging, 'layer'), mayLink(entry.srv));
    fs.writeFileSync(path.join(staging, 'manifest.json'), `${JSON.stringify(info.manifest)}\n`);
    await fs.promises.rename(staging, entry.dir).catch((err: unknown) => {
      if (!exists(entry.dir)) throw err;
    });
  } finally {
    await fs.promises.rm(staging, { recursive: true, force: true });
  }
}
