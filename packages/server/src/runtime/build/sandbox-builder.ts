/**
 * Builds a commit into an immutable artifact, every step inside the sandbox:
 *   1. the commit's tree is unpacked (git archive → tar running in the sandbox);
 *   2. the dependency layer, keyed by the algorithm and the hash of the dependency files, is
 *      reused or made (network on: the package registries, through the egress proxy);
 *   3. the language compiles (layer read-only);
 *   4. the tree becomes the artifact `<algorithm id>/<environment>/<commit>`.
 * An artifact per (algorithm, environment, commit) is made once; a later build of it reuses it.
 * Artifacts are never shared between algorithms (and so between owners): the first build of a
 * commit must not decide what another tenant's algorithm runs.
 *
 * Trust: everything in the tree and the layer was written by user code. The host never
 * follows a link from them and never reads back from them what decides a host path. An
 * artifact is a root-owned directory holding `tree/` (the user's tree, mounted read-only into
 * runners) and `manifest.json` (written by the host after the last step, next to the tree,
 * where no build step can reach it); names read from the manifest are checked again by pattern
 * and resolved inside their root before use. Tree plus layer are bounded by maxArtifactBytes.
 */
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BuildFailure, type Builder, type BuildRequest } from '../../domain/builds/ports.js';
import { type Clock, isoNow, systemClock } from '../../domain/clock.js';
import { predictableGitEnv } from '../../lib/git-env.js';
import { RemovableLayers } from '../../lib/removable-layers.js';
import { INSIDE, type BuildStep, type LanguageAdapter, type RegistrySettings, type StepContext } from '../languages/adapter.js';
import { type Mount, type Outcome, type Supervisor } from '../sandbox/supervisor.js';
import { egressProxyEnv, type EgressProxy } from '../sandbox/egress-proxy.js';
import { takeLease } from '../sandbox/uids.js';

export interface BuilderSettings {
  /** Root for work dirs, artifacts, dependency layers and (by default) download caches. */
  root: string;
  /** The time written into artifact manifests (default: the system clock). */
  clock?: Clock;
  cacheDir?: string;
  /** One download cache per language for the cluster instead of one per owner. */
  sharedCache: boolean;
  registries: RegistrySettings;
  /** The only way out of networked build steps (to the registries). */
  egress: EgressProxy;
  memoryBytes: number;
  git: string;
  /** Largest artifact (its tree plus its dependency layer) in bytes; 0 = no limit. */
  maxArtifactBytes: number;
}

export interface ArtifactManifest {
  algorithmId: string;
  environment: string;
  language: string;
  commit: string;
  /** Dependency layer directory relative to the layers root, or null when none is needed. */
  layer: string | null;
  builtAt: string;
}

/** A built artifact as the runner needs it: host paths, all checked to be inside their roots. */
export interface ArtifactInfo {
  manifest: ArtifactManifest;
  /** The built tree (read-only for runners). */
  tree: string;
  layerDir: string | null;
}

/** An artifact that cannot be run (missing, from an older version, or failing its checks). */
export class ArtifactError extends Error {}

const OUTPUT_LIMIT = 20 * 1024 * 1024;
const BUILDER_VERSION = '1';
const MANIFEST = 'manifest.json';
const TREE = 'tree';
/** Names the host reads or once wrote in a tree: never a link or a special file. */
const RESERVED = ['.algohost-artifact.json', 'algorithmia.conf'];
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const ENVIRONMENT = '[A-Za-z0-9][A-Za-z0-9._-]{0,99}';
const COMMIT = '[0-9a-f]{40}(?:[0-9a-f]{24})?';
const ARTIFACT_KEY = new RegExp(`^(${UUID})/(${ENVIRONMENT})/(${COMMIT})$`);
/** What dependencyLayer() names a layer: `<language>/<32 hex digits>`. */
const LAYER_NAME = /^[a-z0-9][a-z0-9-]*\/[0-9a-f]{32}$/;
/** How often a running step's output is measured against the artifact limit. */
const SIZE_CHECK_MS = 5000;

export class SandboxBuilder implements Builder {
  readonly dirs: { work: string; artifacts: string; layers: string; cache: string };
  /** Layers fetched by the cluster's artifact store, which it may remove again unless a build here uses them. */
  readonly removableLayers = new RemovableLayers();

  constructor(
    private readonly supervisor: Supervisor,
    private readonly adapters: LanguageAdapter[],
    private readonly settings: BuilderSettings,
  ) {
    this.dirs = {
      work: path.join(settings.root, 'work'),
      artifacts: path.join(settings.root, 'artifacts'),
      layers: path.join(settings.root, 'layers'),
      cache: settings.cacheDir ?? path.join(settings.root, 'cache'),
    };
  }

  /** Creates the directories and checks that the sandbox user can reach them. */
  prepare(): void {
    /* eslint-disable no-restricted-syntax -- start-up only: the composition root calls prepare() before the server listens */
    fs.mkdirSync(this.settings.root, { recursive: true });
    fs.chmodSync(this.settings.root, 0o711);
    for (const dir of Object.values(this.dirs)) {
      fs.mkdirSync(dir, { recursive: true });
      fs.chmodSync(dir, 0o711);
    }
    // Work directories of builds this node ran when it was killed: their files may still belong
    // to the sandbox uids of those builds, which are given to other sandboxes again.
    for (const e of fs.readdirSync(this.dirs.work)) {
      if (e.startsWith('b-')) fs.rmSync(path.join(this.dirs.work, e), { recursive: true, force: true });
    }
    assertTraversable(this.settings.root);
    /* eslint-enable no-restricted-syntax */
  }

  adapterFor(language: string): LanguageAdapter | undefined {
    return this.adapters.find((a) => a.languages.includes(language));
  }

  /** The root-owned directory of an artifact (its tree and manifest); the key is checked first. */
  artifactPath(key: string): string {
    if (!ARTIFACT_KEY.test(key)) {
      throw new ArtifactError(
        /^[^/]+\/[0-9a-f]+$/.test(key)
          ? `the artifact ${key} was built by an earlier version of algohost, whose artifacts were shared between algorithms; build the algorithm again (push, or POST …/compile) and publish a new version`
          : `${JSON.stringify(key)} is not an artifact name`,
      );
    }
    const dir = path.resolve(this.dirs.artifacts, key);
    if (!dir.startsWith(this.dirs.artifacts + path.sep)) throw new ArtifactError(`${key} is not an artifact name`);
    return dir;
  }

  /**
   * Reads an artifact's manifest (root-owned, outside anything a build step could write) and
   * checks what it names: the layer by pattern and resolved inside the layers root.
   */
  async readArtifact(key: string): Promise<ArtifactInfo> {
    const dir = this.artifactPath(key);
    const text = await readHostFile(path.join(dir, MANIFEST), 64 * 1024).catch((err: NodeJS.ErrnoException) => {
      throw new ArtifactError(
        err.code === 'ENOENT'
          ? `the artifact ${key} does not exist on this node (build it again)`
          : `the artifact ${key} is damaged: ${err.message}`,
      );
    });
    let manifest: ArtifactManifest;
    try {
      manifest = JSON.parse(text) as ArtifactManifest;
    } catch {
      throw new ArtifactError(`the manifest of artifact ${key} is not JSON`);
    }
    const [, algorithmId, environment, commit] = ARTIFACT_KEY.exec(key)!;
    if (manifest.algorithmId !== algorithmId || manifest.environment !== environment || manifest.commit !== commit) {
      throw new ArtifactError(`the manifest of artifact ${key} names another artifact`);
    }
    let layerDir: string | null = null;
    if (manifest.layer !== null) {
      if (typeof manifest.layer !== 'string' || !LAYER_NAME.test(manifest.layer)) {
        throw new ArtifactError(`the manifest of artifact ${key} names an invalid dependency layer`);
      }
      layerDir = path.resolve(this.dirs.layers, manifest.layer);
      if (!layerDir.startsWith(this.dirs.layers + path.sep)) throw new ArtifactError(`the layer of artifact ${key} is outside the layers`);
    }
    return { manifest, tree: path.join(dir, TREE), layerDir };
  }

  async build(req: BuildRequest, log: (text: string) => void, signal: AbortSignal): Promise<{ artifact: string }> {
    const env = req.environment;
    const adapter = this.adapterFor(env.language);
    if (!adapter) throw new BuildFailure(`no builder for language ${env.language} on this cluster`);
    const key = `${req.build.algorithmId}/${env.name}/${req.build.commitSha}`;
    let final: string;
    try {
      final = this.artifactPath(key);
    } catch (err) {
      throw new BuildFailure((err as Error).message);
    }
    if (await exists(path.join(final, MANIFEST))) {
      log(`The artifact of ${req.build.commitSha.slice(0, 12)} for ${env.name} exists already; reusing it\n`);
      return { artifact: key };
    }
    this.supervisor.check();

    const work = await fs.promises.mkdtemp(path.join(this.dirs.work, 'b-'));
    const src = path.join(work, 'src');
    let releaseCache: (() => Promise<void>) | undefined;
    try {
      await fs.promises.chmod(work, 0o711);
      await fs.promises.mkdir(src);
      log('$ checkout\n');
      await this.checkout(req, src, log, signal);
      const reserved = [...RESERVED, ...adapter.dependencyFiles];
      refuseLinks(src, reserved);
      const limit = this.settings.maxArtifactBytes;
      const checkSize = async (stage: string, dirs: string[], fixedBytes = 0) => {
        const used = fixedBytes + (await sizeOf(dirs, limit ? limit - fixedBytes : Infinity));
        if (limit && used > limit) throw new BuildFailure(tooLarge(stage, used, limit));
        return used;
      };
      const treeBytes = await checkSize('checkout', [src]);

      const files = new Set(await fs.promises.readdir(src));
      const read = (name: string) => readRegularFile(src, name);
      const ctx: StepContext = {
        environment: { name: env.name, runtimeVersion: env.runtime.version },
        files,
        registries: this.settings.registries,
        extraInputs: [],
        read,
      };
      const toolMounts = adapter.toolchainMounts?.() ?? [];
      const findLinks = this.settings.registries.pipFindLinks.map((host, i) => ({ host, inside: `/inputs/${i}` }));
      ctx.extraInputs.push(...findLinks.map((m) => m.inside));
      // A file:// registry (a local CRAN-style repository…) is seen read-only at its own path, so its URL holds inside.
      const localRegistries = Object.values(this.settings.registries).flatMap((u) =>
        typeof u === 'string' && u.startsWith('file:') ? [{ host: fileURLToPath(u), inside: fileURLToPath(u) }] : [],
      );

      // Build steps can write the download cache, so tenants do not share one unless told to.
      let cache = path.join(this.dirs.cache, adapter.languages[0]!, this.settings.sharedCache ? 'shared' : req.ownerId);
      await fs.promises.mkdir(path.dirname(cache), { recursive: true, mode: 0o711 });
      // Each step owns the directories it writes (its own uid, handed back after it), so two
      // builds (of this node or another on the host) cannot write one cache at once: while
      // another build holds the cache's lease, this one downloads into an empty cache of its own.
      releaseCache = await takeLease(`${cache}.lease`);
      if (!releaseCache) {
        log('The download cache is in use by another build; this build downloads into an empty one\n');
        cache = path.join(work, 'cache');
      }
      await fs.promises.mkdir(cache, { recursive: true });

      const layer = await this.dependencyLayer(
        adapter,
        req,
        ctx,
        { src, cache, mounts: [...toolMounts, ...findLinks, ...localRegistries], treeBytes },
        log,
        signal,
      );
      const layerMount: Mount[] = layer ? [{ host: path.join(this.dirs.layers, layer), inside: INSIDE.deps }] : [];
      const layerBytes = layer
        ? (await checkSize('installing dependencies', [path.join(this.dirs.layers, layer)], treeBytes)) - treeBytes
        : 0;

      for (const step of adapter.compile(ctx)) {
        await this.step(
          step,
          adapter,
          [
            { host: src, inside: INSIDE.src, owned: true },
            { host: cache, inside: INSIDE.cache, owned: true },
            ...layerMount,
            ...toolMounts,
          ],
          log,
          signal,
          { stage: step.title, dirs: [src], fixedBytes: layerBytes },
        );
      }
      refuseLinks(src, reserved);
      await checkSize('compiling', [src], layerBytes);

      const manifest: ArtifactManifest = {
        algorithmId: req.build.algorithmId,
        environment: env.name,
        language: env.language,
        commit: req.build.commitSha,
        layer,
        builtAt: isoNow(this.settings.clock ?? systemClock),
      };
      // Tree and manifest go into a fresh root-owned directory, renamed into place whole.
      await fs.promises.mkdir(path.dirname(final), { recursive: true, mode: 0o711 });
      const staging = await fs.promises.mkdtemp(`${final}.tmp-`);
      try {
        await fs.promises.chmod(staging, 0o711);
        await fs.promises.rename(src, path.join(staging, TREE));
        await writeNewFile(path.join(staging, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
        try {
          await fs.promises.rename(staging, final);
        } catch (err) {
          // Another build of the same commit finished first: its artifact is as good as ours.
          if (!(await exists(path.join(final, MANIFEST)))) throw err;
        }
      } finally {
        await fs.promises.rm(staging, { recursive: true, force: true });
      }
      return { artifact: key };
    } finally {
      await releaseCache?.();
      // A failed build's work directory goes too, off the event loop (it can be large).
      await fs.promises.rm(work, { recursive: true, force: true });
    }
  }

  /** `git archive` on the host (trusted), `tar -x` in the sandbox (it writes user content). */
  private async checkout(req: BuildRequest, src: string, log: (t: string) => void, signal: AbortSignal): Promise<void> {
    const tar = await this.supervisor.start({
      argv: ['/usr/bin/tar', '-x', '--no-same-owner', '-C', INSIDE.src],
      env: { PATH: '/usr/bin:/bin' },
      cwd: '/',
      mounts: [{ host: src, inside: INSIDE.src, owned: true }],
      network: 'none',
      limits: { memoryBytes: 512 * 1024 * 1024, pids: 16 },
      wallTimeMs: 10 * 60 * 1000,
      outputLimitBytes: 1024 * 1024,
    });
    const onAbort = () => tar.kill('cancelled');
    signal.addEventListener('abort', onAbort);
    const watch = this.watchSize([src], 0, () => tar.kill('cancelled'));
    const archive = spawn(this.settings.git, ['archive', '--format=tar', req.build.commitSha], {
      cwd: req.repositoryPath,
      env: predictableGitEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let errors = '';
    archive.stderr.on('data', (d: Buffer) => (errors += d.toString()));
    tar.stderr.on('data', (d: Buffer) => (errors += d.toString()));
    tar.stdout.resume();
    archive.stdout.pipe(tar.stdin);
    tar.stdin.on('error', () => {});
    const [code, outcome] = await Promise.all([new Promise<number>((r) => archive.on('close', (c) => r(c ?? 1))), tar.done]);
    signal.removeEventListener('abort', onAbort);
    watch.stop();
    const over = watch.over();
    if (over !== undefined) throw new BuildFailure(tooLarge('checkout', over, this.settings.maxArtifactBytes));
    if (code !== 0 || outcome.kind !== 'exited' || outcome.code !== 0) {
      log(errors);
      throw new BuildFailure(
        signal.aborted
          ? 'cancelled'
          : `${await this.diskFull()}could not check out ${req.build.commitSha}: ${errors.trim() || describe(outcome)}`,
      );
    }
  }

  private async dependencyLayer(
    adapter: LanguageAdapter,
    req: BuildRequest,
    ctx: StepContext,
    where: { src: string; cache: string; mounts: Mount[]; treeBytes: number },
    log: (t: string) => void,
    signal: AbortSignal,
  ): Promise<string | null> {
    const steps = adapter.installDependencies(ctx);
    if (steps.length === 0) return null;
    // Keyed per algorithm too: a layer step may read more of the tree than the dependency
    // files (a local package, vendored gems), so layers are never shared between algorithms.
    const hash = crypto
      .createHash('sha256')
      .update(`${BUILDER_VERSION}\0${req.build.algorithmId}\0${req.environment.name}\0${JSON.stringify(this.settings.registries)}\0`);
    for (const f of adapter.dependencyFiles) hash.update(`${f}\0${ctx.read(f) ?? '<absent>'}\0`);
    const layer = `${adapter.languages[0]}/${hash.digest('hex').slice(0, 32)}`;
    const final = path.join(this.dirs.layers, layer);
    // A layer fetched from the blob store becomes this node's own once a build here uses it
    // (and if it is being removed, the removal ends first and the layer is made anew).
    await this.removableLayers.claim(layer);
    if (await exists(final)) {
      log(`Dependencies unchanged: reusing layer ${layer}\n`);
      return layer;
    }
    await fs.promises.mkdir(path.dirname(final), { recursive: true, mode: 0o711 });
    const tmp = await fs.promises.mkdtemp(`${final}.tmp-`);
    try {
      await fs.promises.chmod(tmp, 0o755);
      for (const step of steps) {
        const mounts: Mount[] = [
          { host: where.src, inside: INSIDE.src },
          // Mounted at its final inside path so that absolute paths baked in (venv scripts) hold.
          { host: tmp, inside: INSIDE.deps, owned: true },
          { host: where.cache, inside: INSIDE.cache, owned: true },
          ...where.mounts,
        ];
        await this.step(step, adapter, mounts, log, signal, { stage: step.title, dirs: [tmp], fixedBytes: where.treeBytes });
      }
      try {
        await fs.promises.rename(tmp, final);
      } catch (err) {
        if (!(await exists(final))) throw err;
      }
      return layer;
    } finally {
      await fs.promises.rm(tmp, { recursive: true, force: true });
    }
  }

  /**
   * Runs one step. With a size budget, the directories it writes are measured while it runs
   * and it is stopped once the artifact would pass the limit.
   */
  private async step(
    step: BuildStep,
    adapter: LanguageAdapter,
    mounts: Mount[],
    log: (t: string) => void,
    buildSignal: AbortSignal,
    budget?: { stage: string; dirs: string[]; fixedBytes: number },
  ): Promise<void> {
    if (buildSignal.aborted) throw new BuildFailure('cancelled');
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    buildSignal.addEventListener('abort', onAbort);
    const watch = budget && this.watchSize(budget.dirs, budget.fixedBytes, () => stop.abort());
    try {
      await this.runStep(step, adapter, mounts, log, stop.signal);
    } catch (err) {
      const over = watch?.over();
      if (over !== undefined) throw new BuildFailure(tooLarge(budget!.stage, over, this.settings.maxArtifactBytes));
      throw err;
    } finally {
      watch?.stop();
      buildSignal.removeEventListener('abort', onAbort);
    }
  }

  /**
   * Measures the directories a running step writes every few seconds and calls `kill` once,
   * with `fixedBytes` added, they pass the artifact limit. `over()` is the size then.
   */
  private watchSize(dirs: string[], fixedBytes: number, kill: () => void): { stop(): void; over(): number | undefined } {
    const limit = this.settings.maxArtifactBytes;
    let stopped = !limit;
    let over: number | undefined;
    let timer: NodeJS.Timeout | undefined;
    const measure = async () => {
      const used = fixedBytes + (await sizeOf(dirs, limit - fixedBytes).catch(() => 0));
      if (stopped) return;
      if (used > limit) {
        over = used;
        kill();
      } else timer = setTimeout(() => void measure(), SIZE_CHECK_MS);
    };
    if (!stopped) timer = setTimeout(() => void measure(), SIZE_CHECK_MS);
    return {
      stop: () => {
        stopped = true;
        clearTimeout(timer);
      },
      over: () => over,
    };
  }

  private async runStep(
    step: BuildStep,
    adapter: LanguageAdapter,
    mounts: Mount[],
    log: (t: string) => void,
    signal: AbortSignal,
  ): Promise<void> {
    if (signal.aborted) throw new BuildFailure('cancelled');
    log(`$ ${step.title}: ${step.argv.join(' ')}\n`);
    // A networked step gets its own namespace too; its only way out is a channel of the egress proxy.
    const egress = step.network ? await this.settings.egress.open(log) : undefined;
    let outcome: Outcome;
    try {
      outcome = await this.supervisor.run(
        {
          argv: step.argv,
          env: { HOME: '/tmp', LANG: 'C.UTF-8', ...adapter.env(), ...step.env, ...(egress ? egressProxyEnv() : {}) },
          cwd: INSIDE.src,
          mounts,
          network: egress ? 'registries' : 'none',
          egressSocket: egress?.socket,
          limits: { memoryBytes: this.settings.memoryBytes, pids: BUILD_PIDS },
          wallTimeMs: 24 * 60 * 60 * 1000, // the build's own time limit aborts through `signal`
          outputLimitBytes: OUTPUT_LIMIT,
        },
        log,
        signal,
      );
    } finally {
      await egress?.close();
    }
    if (outcome.kind === 'exited' && outcome.code === 0) return;
    throw new BuildFailure(`${await this.diskFull()}${step.title} failed: ${describe(outcome)}`);
  }

  /**
   * The cause to name first when a step failed because the file system of the build
   * directories is full (tools say it in their own words, `tar` as "Wrote only 7168 of 10240
   * bytes"): checked right after the failure, before the work directory is removed.
   */
  private async diskFull(): Promise<string> {
    const st = await fs.promises.statfs(this.dirs.work).catch(() => undefined);
    if (!st || st.bavail * st.bsize >= DISK_FULL_BYTES) return '';
    return "the server's disk is full (no space left on device where builds are made); ask the operator to free space, then push again or rebuild. ";
  }
}

/** Free space under which a failed step is blamed on the full disk. */
const DISK_FULL_BYTES = 1024 * 1024;

function describe(o: Outcome): string {
  if (o.kind === 'exited') return `exit code ${o.code}`;
  switch (o.reason) {
    case 'memory':
      return 'out of memory';
    case 'output_limit':
      return `printed more than ${OUTPUT_LIMIT / 1024 / 1024} MB`;
    case 'timeout':
      return 'timed out';
    case 'cancelled':
      return 'cancelled';
    default:
      return `killed by ${o.signal ?? 'a signal'}`;
  }
}

/** Processes and threads of one build step. */
const BUILD_PIDS = 512;
const READ_LIMIT = 5 * 1024 * 1024;

/**
 * Where `name` (a relative path like `requirements.txt` or `.cargo/config.toml`) is in the tree,
 * with every directory on the way checked to be a real directory: a link there is refused, so
 * nothing outside the tree is reached. Undefined when the name is absent.
 */
/*
 * pathInTree, readRegularFile and refuseLinks stay synchronous for now: adapters plan their
 * steps through the synchronous StepContext.read (small files of one checkout, at most
 * READ_LIMIT each). Making that interface asynchronous is left for later (issue 12).
 */
/* eslint-disable no-restricted-syntax -- build planning reads through the synchronous StepContext.read; see above */
function pathInTree(root: string, name: string): string | undefined {
  const parts = name.split('/');
  if (path.isAbsolute(name) || parts.some((p) => p === '' || p === '.' || p === '..')) throw new Error(`not a relative name: ${name}`);
  let at = root;
  for (const [i, part] of parts.slice(0, -1).entries()) {
    at = path.join(at, part);
    let st: fs.Stats;
    try {
      st = fs.lstatSync(at);
    } catch {
      return undefined;
    }
    if (st.isSymbolicLink()) throw new BuildFailure(notRegular(parts.slice(0, i + 1).join('/'), 'a symbolic link'));
    if (!st.isDirectory()) return undefined;
  }
  return path.join(root, name);
}

/**
 * Reads a regular file of the checked-out tree on the host; undefined when absent. Opened with
 * O_NOFOLLOW (a link is refused, never followed) and O_NONBLOCK (a FIFO cannot hang the
 * service), then checked on the open descriptor, so what is read is what was checked. No build
 * step runs while the host reads (steps that run user code see the tree read-only or have ended).
 */
function readRegularFile(root: string, name: string): string | undefined {
  const file = pathInTree(root, name);
  if (file === undefined) return undefined;
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    if (code === 'ELOOP') throw new BuildFailure(notRegular(name, 'a symbolic link'));
    throw new BuildFailure(`cannot read ${name} of the repository: ${code ?? (err as Error).message}`);
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw new BuildFailure(notRegular(name, 'not a regular file'));
    if (st.size > READ_LIMIT) throw new BuildFailure(`${name} is larger than ${READ_LIMIT / 1024 / 1024} MiB, the most algohost reads`);
    return fs.readFileSync(fd, 'utf8');
  } finally {
    fs.closeSync(fd);
  }
}

/** Refuses a tree in which a name the host reads (or once wrote) is a link or a special file. */
function refuseLinks(root: string, names: readonly string[]): void {
  for (const name of new Set(names)) {
    const file = pathInTree(root, name);
    if (file === undefined) continue;
    let st: fs.Stats;
    try {
      st = fs.lstatSync(file);
    } catch {
      continue;
    }
    if (st.isSymbolicLink()) throw new BuildFailure(notRegular(name, 'a symbolic link'));
    if (!st.isFile()) throw new BuildFailure(notRegular(name, 'not a regular file'));
  }
}

/* eslint-enable no-restricted-syntax */

const notRegular = (name: string, what: string) =>
  `${name} in the repository is ${what}; algohost reads ${name} itself and accepts only a regular file under that name (reserved: ${RESERVED.join(', ')} and the dependency files)`;

function tooLarge(stage: string, used: number, limit: number): string {
  return `the artifact (the built tree plus its dependency layer) grew to more than ${bytes(limit)} during ${stage}, the most this cluster keeps per build (${bytes(used)} counted so far; limit ${limit} bytes)`;
}

function bytes(n: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${i === 0 ? n : n.toFixed(n < 10 ? 1 : 0)} ${units[i]}`;
}

/**
 * Bytes used by the trees (each file counted by its size or the blocks it holds, whichever is
 * more; hard links once), without following links; stops counting once past `stopAbove`.
 */
async function sizeOf(dirs: string[], stopAbove: number): Promise<number> {
  let total = 0;
  const seen = new Set<string>();
  const stack = [...dirs];
  while (stack.length) {
    const dir = stack.pop()!;
    let entries: string[];
    try {
      entries = await fs.promises.readdir(dir);
    } catch {
      continue;
    }
    for (const e of entries) {
      const p = path.join(dir, e);
      let st: fs.Stats;
      try {
        st = await fs.promises.lstat(p);
      } catch {
        continue;
      }
      if (st.nlink > 1 && !st.isDirectory()) {
        const id = `${st.dev}:${st.ino}`;
        if (seen.has(id)) continue;
        seen.add(id);
      }
      total += Math.max(st.size, st.blocks * 512);
      if (total > stopAbove) return total;
      if (st.isDirectory()) stack.push(p);
    }
  }
  return total;
}

/** Creates a file that must not exist yet (O_EXCL, no link followed) and writes it whole. */
async function writeNewFile(file: string, text: string): Promise<void> {
  const handle = await fs.promises.open(
    file,
    fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW,
    0o600,
  );
  try {
    await handle.writeFile(text);
  } finally {
    await handle.close();
  }
}

const exists = (file: string) =>
  fs.promises.access(file).then(
    () => true,
    () => false,
  );

/** Reads a small root-owned regular file of the host without following a link. */
async function readHostFile(file: string, maxBytes: number): Promise<string> {
  const handle = await fs.promises.open(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  try {
    const st = await handle.stat();
    if (!st.isFile() || st.uid !== process.getuid?.() || st.size > maxBytes) {
      throw Object.assign(new Error('not a small regular file of the service'), { code: 'EINVAL' });
    }
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}

/** The sandbox users must be able to pass through every parent of the directory (start-up only, from prepare()). */
function assertTraversable(dir: string): void {
  let current = path.resolve(dir);
  for (;;) {
    // eslint-disable-next-line no-restricted-syntax -- start-up only: called from prepare()
    const mode = fs.statSync(current).mode;
    if ((mode & 0o001) === 0) {
      throw new Error(
        `the build directory ${dir} is not reachable by the sandbox users (uids of ALGOHOST_SANDBOX_UID_RANGE): ${current} lacks o+x; choose ALGOHOST_DATA_DIR elsewhere or chmod o+x ${current}`,
      );
    }
    const parent = path.dirname(current);
    if (parent === current) return;
    current = parent;
  }
}
