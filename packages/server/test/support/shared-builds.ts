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
 * mounts that artifact, but nothing compiles. Without the variable (a file run alone by
 * `node --test`), on a cluster, or for a tree not built yet in the run, the build is real.
 *
 * Tests about building itself (builds.test.ts, security-fairness.test.ts, templates-build…)
 * push through their own paths, never through here, or say `shared: false`.
 */
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { ArtifactManifest } from '../../src/runtime/build/artifacts.js';
import type { Config } from '../../src/config/config.js';
import { git } from './git.js';
import { nodeServerAt, type TestServer } from './server.js';

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
  const srv = nodeServerAt(base);
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
 * file systems.
 */
async function cp(from: string, to: string): Promise<void> {
  try {
    await exec('cp', ['-a', '--link', '--no-target-directory', from, to]);
  } catch {
    await fs.promises.rm(to, { recursive: true, force: true });
    await exec('cp', ['-a', '--no-target-directory', from, to]);
  }
}
const exists = (p: string) => fs.existsSync(p);

/**
 * Puts this run's artifact of the same tree in place for (algorithm, environment, HEAD) before
 * the push, when there is one (never with `build: true`, for a test about building). Returns
 * what to call with the build's id once the push built it, so that later pushes of the tree
 * reuse what it made.
 */
export async function prepareSharedBuild(
  base: string,
  clone: string,
  algorithmId: string,
  environment: string,
  opts: { build?: boolean } = {},
): Promise<(buildId: string) => Promise<void>> {
  const entry = await entryFor(base, clone, environment);
  if (!entry) return async () => {};
  const commit = (await git(['rev-parse', 'HEAD'], clone)).stdout.trim();
  if (!opts.build && exists(path.join(entry.dir, 'manifest.json'))) {
    await placeArtifact(entry, `${algorithmId}/${environment}/${commit}`);
    return async () => {};
  }
  return (buildId) => offerArtifact(entry, buildId);
}

/** Copies the entry's artifact (with its manifest naming the new algorithm and commit) and layer into the node. */
async function placeArtifact(entry: Entry, key: string): Promise<void> {
  const builder = entry.srv.server.services.builder;
  const final = builder.artifactPath(key);
  if (exists(final)) return;
  const shared = JSON.parse(fs.readFileSync(path.join(entry.dir, 'manifest.json'), 'utf8')) as ArtifactManifest;
  if (shared.layer !== null) {
    const layer = path.join(builder.dirs.layers, shared.layer);
    if (!exists(layer)) {
      await fs.promises.mkdir(path.dirname(layer), { recursive: true, mode: 0o711 });
      await cp(path.join(entry.dir, 'layer'), layer);
    }
  }
  const [algorithmId, environment, commit] = key.split('/') as [string, string, string];
  const manifest: ArtifactManifest = { ...shared, algorithmId, environment, commit, builtAt: new Date().toISOString() };
  await fs.promises.mkdir(path.dirname(final), { recursive: true, mode: 0o711 });
  const staging = `${final}.shared-${crypto.randomBytes(4).toString('hex')}`;
  await fs.promises.mkdir(staging, { mode: 0o711 });
  await cp(path.join(entry.dir, 'tree'), path.join(staging, 'tree'));
  fs.writeFileSync(path.join(staging, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
  await fs.promises.rename(staging, final);
}

/** Copies a node's artifact and its layer into the run's shared directory (the first of concurrent offers wins). */
async function offerArtifact(entry: Entry, buildId: string): Promise<void> {
  if (exists(entry.dir)) return;
  const { services } = entry.srv.server;
  const row = await services.db.selectFrom('builds').select('artifact').where('id', '=', buildId).executeTakeFirst();
  if (!row?.artifact) return;
  const info = await services.builder.readArtifact(row.artifact);
  const staging = `${entry.dir}.tmp-${crypto.randomBytes(4).toString('hex')}`;
  await fs.promises.mkdir(staging, { recursive: true, mode: 0o700 });
  try {
    await cp(info.tree, path.join(staging, 'tree'));
    if (info.layerDir) await cp(info.layerDir, path.join(staging, 'layer'));
    fs.writeFileSync(path.join(staging, 'manifest.json'), `${JSON.stringify(info.manifest)}\n`);
    await fs.promises.rename(staging, entry.dir).catch((err: unknown) => {
      if (!exists(entry.dir)) throw err;
    });
  } finally {
    await fs.promises.rm(staging, { recursive: true, force: true });
  }
}
