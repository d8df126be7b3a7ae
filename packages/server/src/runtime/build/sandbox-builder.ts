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
import { INSIDE, type LanguageAdapter, type RegistrySettings, type StepContext } from '../languages/adapter.js';
import { type Mount, type Supervisor } from '../sandbox/supervisor.js';
import type { EgressProxy } from '../sandbox/egress-proxy.js';
import { takeLease } from '../sandbox/uids.js';
import {
  type ArtifactInfo,
  type ArtifactManifest,
  artifactBuilt,
  artifactPath,
  exists,
  packageArtifact,
  readArtifact,
} from './artifacts.js';
import { checkSize, tooLarge, watchSize } from './artifact-size.js';
import { BuildSteps, describe } from './build-steps.js';

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

const BUILDER_VERSION = '1';
/** Names the host reads or once wrote in a tree: never a link or a special file. */
const RESERVED = ['.algohost-artifact.json', 'algorithmia.conf'];
export class SandboxBuilder implements Builder {
  readonly dirs: { work: string; artifacts: string; layers: string; cache: string };
  /** Layers fetched by the cluster's artifact store, which it may remove again unless a build here uses them. */
  readonly removableLayers = new RemovableLayers();
  private readonly steps: BuildSteps;

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
    this.steps = new BuildSteps(supervisor, settings, this.dirs.work);
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
    return artifactPath(this.dirs.artifacts, key);
  }

  /**
   * Reads an artifact's manifest (root-owned, outside anything a build step could write) and
   * checks what it names: the layer by pattern and resolved inside the layers root.
   */
  readArtifact(key: string): Promise<ArtifactInfo> {
    return readArtifact(this.dirs, key);
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
    if (await artifactBuilt(final)) {
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
      const treeBytes = await checkSize('checkout', [src], limit);

      const { ctx, toolMounts, inputMounts } = await this.plan(adapter, req, src);
      const { dir: cache, release } = await this.downloadCache(adapter, req, work, log);
      releaseCache = release;
      await fs.promises.mkdir(cache, { recursive: true });

      const layer = await this.dependencyLayer(
        adapter,
        req,
        ctx,
        { src, cache, mounts: [...toolMounts, ...inputMounts], treeBytes },
        log,
        signal,
      );
      const layerMount: Mount[] = layer ? [{ host: path.join(this.dirs.layers, layer), inside: INSIDE.deps }] : [];
      const layerBytes = layer
        ? (await checkSize('installing dependencies', [path.join(this.dirs.layers, layer)], limit, treeBytes)) - treeBytes
        : 0;

      for (const step of adapter.compile(ctx)) {
        await this.steps.run(
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
      await checkSize('compiling', [src], limit, layerBytes);

      const manifest: ArtifactManifest = {
        algorithmId: req.build.algorithmId,
        environment: env.name,
        language: env.language,
        commit: req.build.commitSha,
        layer,
        builtAt: isoNow(this.settings.clock ?? systemClock),
      };
      await packageArtifact(final, src, manifest);
      return { artifact: key };
    } finally {
      await releaseCache?.();
      // A failed build's work directory goes too, off the event loop (it can be large).
      await fs.promises.rm(work, { recursive: true, force: true });
    }
  }

  /** What the language's steps are planned from (the tree's files), and what they mount besides the tree. */
  private async plan(
    adapter: LanguageAdapter,
    req: BuildRequest,
    src: string,
  ): Promise<{ ctx: StepContext; toolMounts: Mount[]; inputMounts: Mount[] }> {
    const env = req.environment;
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
    return { ctx, toolMounts, inputMounts: [...findLinks, ...localRegistries] };
  }

  /**
   * The download cache the build's steps write: the owner's (or the cluster's shared one) with
   * its lease, or an empty one in the work directory when another build holds it.
   */
  private async downloadCache(
    adapter: LanguageAdapter,
    req: BuildRequest,
    work: string,
    log: (t: string) => void,
  ): Promise<{ dir: string; release: (() => Promise<void>) | undefined }> {
    // Build steps can write the download cache, so tenants do not share one unless told to.
    let cache = path.join(this.dirs.cache, adapter.languages[0]!, this.settings.sharedCache ? 'shared' : req.ownerId);
    await fs.promises.mkdir(path.dirname(cache), { recursive: true, mode: 0o711 });
    // Each step owns the directories it writes (its own uid, handed back after it), so two
    // builds (of this node or another on the host) cannot write one cache at once: while
    // another build holds the cache's lease, this one downloads into an empty cache of its own (made by the caller).
    const release = await takeLease(`${cache}.lease`);
    if (!release) {
      log('The download cache is in use by another build; this build downloads into an empty one\n');
      cache = path.join(work, 'cache');
    }
    return { dir: cache, release };
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
    const watch = watchSize([src], 0, this.settings.maxArtifactBytes, () => tar.kill('cancelled'));
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
          : `${await this.steps.diskFull()}could not check out ${req.build.commitSha}: ${errors.trim() || describe(outcome)}`,
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
        await this.steps.run(step, adapter, mounts, log, signal, { stage: step.title, dirs: [tmp], fixedBytes: where.treeBytes });
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
}

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
