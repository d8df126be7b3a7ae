/**
 * Builds a commit into an immutable artifact, every step inside the sandbox:
 *   1. the commit's tree is unpacked (git archive → tar running in the sandbox);
 *   2. the dependency layer, keyed by the hash of the dependency files, is reused or made
 *      (network on, package registries reachable);
 *   3. the language compiles (layer read-only);
 *   4. the tree becomes the artifact `<environment>/<commit>` with a manifest naming its layer.
 * An artifact per (commit, environment) is made once; a later build of it reuses it.
 */
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BuildFailure, type Builder, type BuildRequest } from '../../domain/builds/ports.js';
import { INSIDE, type BuildStep, type LanguageAdapter, type RegistrySettings, type StepContext } from '../languages/adapter.js';
import { type Mount, type Outcome, SANDBOX_UID, type Supervisor } from '../sandbox/supervisor.js';

export interface BuilderSettings {
  /** Root for work dirs, artifacts, dependency layers and (by default) download caches. */
  root: string;
  cacheDir?: string;
  /** One download cache per language for the cluster instead of one per owner. */
  sharedCache: boolean;
  registries: RegistrySettings;
  memoryBytes: number;
  git: string;
}

export interface ArtifactManifest {
  environment: string;
  language: string;
  commit: string;
  /** Dependency layer directory relative to the layers root, or null when none is needed. */
  layer: string | null;
  builtAt: string;
}

const OUTPUT_LIMIT = 20 * 1024 * 1024;
const BUILDER_VERSION = '1';

export class SandboxBuilder implements Builder {
  readonly dirs: { work: string; artifacts: string; layers: string; cache: string };

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
    fs.mkdirSync(this.settings.root, { recursive: true });
    fs.chmodSync(this.settings.root, 0o711);
    for (const dir of Object.values(this.dirs)) {
      fs.mkdirSync(dir, { recursive: true });
      fs.chmodSync(dir, 0o711);
    }
    assertTraversable(this.settings.root);
  }

  adapterFor(language: string): LanguageAdapter | undefined {
    return this.adapters.find((a) => a.languages.includes(language));
  }

  artifactPath(key: string): string {
    return path.join(this.dirs.artifacts, key);
  }

  async build(req: BuildRequest, log: (text: string) => void, signal: AbortSignal): Promise<{ artifact: string }> {
    const env = req.environment;
    const adapter = this.adapterFor(env.language);
    if (!adapter) throw new BuildFailure(`no builder for language ${env.language} on this cluster yet`);
    const key = `${env.name}/${req.build.commitSha}`;
    const final = this.artifactPath(key);
    if (fs.existsSync(path.join(final, '.algohost-artifact.json'))) {
      log(`The artifact of ${req.build.commitSha.slice(0, 12)} for ${env.name} exists already; reusing it\n`);
      return { artifact: key };
    }
    this.supervisor.check();

    const work = fs.mkdtempSync(path.join(this.dirs.work, 'b-'));
    fs.chmodSync(work, 0o711);
    const src = path.join(work, 'src');
    fs.mkdirSync(src);
    fs.chownSync(src, SANDBOX_UID, SANDBOX_UID);
    try {
      log('$ checkout\n');
      await this.checkout(req, src, log, signal);

      const files = new Set(fs.readdirSync(src));
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
      const cache = path.join(this.dirs.cache, adapter.languages[0]!, this.settings.sharedCache ? 'shared' : req.ownerId);
      ensureSandboxDir(path.dirname(cache));
      ensureSandboxDir(cache);

      const layer = await this.dependencyLayer(
        adapter,
        req,
        ctx,
        { src, cache, mounts: [...toolMounts, ...findLinks, ...localRegistries] },
        log,
        signal,
      );
      const layerMount: Mount[] = layer ? [{ host: path.join(this.dirs.layers, layer), inside: INSIDE.deps }] : [];

      for (const step of adapter.compile(ctx)) {
        await this.step(
          step,
          adapter,
          [
            { host: src, inside: INSIDE.src, writable: true },
            { host: cache, inside: INSIDE.cache, writable: true },
            ...layerMount,
            ...toolMounts,
          ],
          log,
          signal,
        );
      }

      const manifest: ArtifactManifest = {
        environment: env.name,
        language: env.language,
        commit: req.build.commitSha,
        layer,
        builtAt: new Date().toISOString(),
      };
      fs.writeFileSync(path.join(src, '.algohost-artifact.json'), JSON.stringify(manifest, null, 2));
      fs.mkdirSync(path.dirname(final), { recursive: true, mode: 0o711 });
      try {
        fs.renameSync(src, final);
      } catch (err) {
        // Another build of the same commit finished first: its artifact is as good as ours.
        if (!fs.existsSync(path.join(final, '.algohost-artifact.json'))) throw err;
      }
      return { artifact: key };
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
  }

  /** `git archive` on the host (trusted), `tar -x` in the sandbox (it writes user content). */
  private async checkout(req: BuildRequest, src: string, log: (t: string) => void, signal: AbortSignal): Promise<void> {
    const tar = this.supervisor.start({
      argv: ['/usr/bin/tar', '-x', '--no-same-owner', '-C', INSIDE.src],
      env: { PATH: '/usr/bin:/bin' },
      cwd: '/',
      mounts: [{ host: src, inside: INSIDE.src, writable: true }],
      network: 'none',
      limits: { memoryBytes: 512 * 1024 * 1024, pids: 16 },
      wallTimeMs: 10 * 60 * 1000,
      outputLimitBytes: 1024 * 1024,
    });
    const onAbort = () => tar.kill('cancelled');
    signal.addEventListener('abort', onAbort);
    const archive = spawn(this.settings.git, ['archive', '--format=tar', req.build.commitSha], {
      cwd: req.repositoryPath,
      env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', HOME: '/nonexistent' },
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
    if (code !== 0 || outcome.kind !== 'exited' || outcome.code !== 0) {
      log(errors);
      throw new BuildFailure(
        signal.aborted ? 'cancelled' : `could not check out ${req.build.commitSha}: ${errors.trim() || describe(outcome)}`,
      );
    }
  }

  private async dependencyLayer(
    adapter: LanguageAdapter,
    req: BuildRequest,
    ctx: StepContext,
    where: { src: string; cache: string; mounts: Mount[] },
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
    if (fs.existsSync(final)) {
      log(`Dependencies unchanged: reusing layer ${layer}\n`);
      return layer;
    }
    fs.mkdirSync(path.dirname(final), { recursive: true, mode: 0o711 });
    const tmp = fs.mkdtempSync(`${final}.tmp-`);
    fs.chmodSync(tmp, 0o755);
    fs.chownSync(tmp, SANDBOX_UID, SANDBOX_UID);
    try {
      for (const step of steps) {
        const mounts: Mount[] = [
          { host: where.src, inside: INSIDE.src },
          // Mounted at its final inside path so that absolute paths baked in (venv scripts) hold.
          { host: tmp, inside: INSIDE.deps, writable: true },
          { host: where.cache, inside: INSIDE.cache, writable: true },
          ...where.mounts,
        ];
        await this.step(step, adapter, mounts, log, signal);
      }
      try {
        fs.renameSync(tmp, final);
      } catch (err) {
        if (!fs.existsSync(final)) throw err;
      }
      return layer;
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  }

  private async step(
    step: BuildStep,
    adapter: LanguageAdapter,
    mounts: Mount[],
    log: (t: string) => void,
    signal: AbortSignal,
  ): Promise<void> {
    if (signal.aborted) throw new BuildFailure('cancelled');
    log(`$ ${step.title}: ${step.argv.join(' ')}\n`);
    const outcome: Outcome = await this.supervisor.run(
      {
        argv: step.argv,
        env: { HOME: '/tmp', LANG: 'C.UTF-8', ...adapter.env(), ...step.env },
        cwd: INSIDE.src,
        mounts,
        network: step.network ? 'host' : 'none',
        limits: { memoryBytes: this.settings.memoryBytes, pids: 1024 },
        wallTimeMs: 24 * 60 * 60 * 1000, // the build's own time limit aborts through `signal`
        outputLimitBytes: OUTPUT_LIMIT,
      },
      log,
      signal,
    );
    if (outcome.kind === 'exited' && outcome.code === 0) return;
    throw new BuildFailure(`${step.title} failed: ${describe(outcome)}`);
  }
}

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

/**
 * Reads a regular file of the checked-out tree on the host. Nothing outside the tree is ever
 * read: the file itself must not be a symlink and its real path must stay inside the tree
 * (a symlinked directory on the way could point anywhere on the host).
 */
function readRegularFile(root: string, name: string): string | undefined {
  try {
    const file = path.join(root, name);
    if (!fs.realpathSync(file).startsWith(fs.realpathSync(root) + path.sep)) return undefined;
    const st = fs.lstatSync(file);
    if (!st.isFile() || st.size > 5 * 1024 * 1024) return undefined;
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

function ensureSandboxDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true });
  fs.chownSync(dir, SANDBOX_UID, SANDBOX_UID);
}

/** The sandbox user must be able to pass through every parent of the directory. */
function assertTraversable(dir: string): void {
  let current = path.resolve(dir);
  for (;;) {
    const mode = fs.statSync(current).mode;
    if ((mode & 0o001) === 0) {
      throw new Error(
        `the build directory ${dir} is not reachable by the sandbox user (uid ${SANDBOX_UID}): ${current} lacks o+x; choose ALGOHOST_DATA_DIR elsewhere or chmod o+x ${current}`,
      );
    }
    const parent = path.dirname(current);
    if (parent === current) return;
    current = parent;
  }
}
