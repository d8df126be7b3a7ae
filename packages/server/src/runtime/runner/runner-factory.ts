/**
 * Makes runners for built artifacts: finds the artifact and its dependency layer, asks the
 * language adapter how to start its harness, and applies the node's limits.
 *
 * What the runner mounts comes from the artifact's root-owned manifest, checked by the builder
 * (`readArtifact`); the only files read from the built tree, algorithmia.conf and the protocol
 * file of a compiled harness, are opened without following links and only ever read as data.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Environment } from '../../domain/catalog/model.js';
import type { SandboxBuilder } from '../build/sandbox-builder.js';
import { egressProxyEnv, type EgressProxy } from '../sandbox/egress-proxy.js';
import type { RunnerContext } from '../languages/adapter.js';
import type { Mount, Supervisor } from '../sandbox/supervisor.js';
import { RunnerProcess } from './runner-process.js';
import type { RunnerMounts } from './runner-sandbox.js';

export interface RunnerLimits {
  memoryBytes: number;
  /** Per-environment memory overriding `memoryBytes`, by environment name. */
  memoryBytesByEnvironment?: ReadonlyMap<string, number>;
  pids: number;
  cpus?: number;
  outputLimitBytes: number;
  startTimeoutMs: number;
}

export interface RunnerRequest {
  artifact: string;
  algorithmName: string;
  environment: Environment;
  /** `internet`: a namespace of its own whose only way out is the egress proxy (public addresses only). */
  network: 'none' | 'internet';
  /** Bind an API socket of its own into the sandbox (pipeline_enabled algorithms, insights_enabled versions). */
  pipeline?: boolean;
  /** The account whose code runs (the algorithm's owner): its API socket's requests are charged to it. */
  owner?: { id: string; name: string };
  env?: Record<string, string>;
  extraMounts?: Mount[];
  /** Parent CPU group shared by the runners of one account (cgroups.ts `Limits.cpuGroup`). */
  cpuGroup?: string;
}

/**
 * Serves the API on a Unix socket for one sandbox (api/sandbox-sockets.ts). Each runner gets its
 * own, so the node knows whose code a request comes from and holds each sandbox to its own
 * connection budget; `close()` once the runner is gone.
 */
export interface ApiSocketServer {
  listen(file: string, owner: { id: string; name: string }): Promise<{ close(): Promise<void> }>;
}

const API_SOCKET_INSIDE = '/run/algohost-api.sock';
const LANGUAGES_DIR = fileURLToPath(new URL('../languages/', import.meta.url));

export class RunnerFactory {
  readonly runDir: string;
  /** Where each pipeline runner's API socket is made (searchable, not listable, by the sandbox uid). */
  readonly apiSocketDir: string;
  /** Root-only: each runner's response FIFO is made here and unlinked at once (see RunnerProcess). */
  readonly fifoDir: string;

  constructor(
    private readonly supervisor: Supervisor,
    private readonly builder: SandboxBuilder,
    private readonly limits: RunnerLimits,
    /** The egress proxy with the `internet` policy: full-network runners' only way out. */
    private readonly egress: EgressProxy,
    /** Cluster mode: brings an artifact built on another worker onto this node before its first start. */
    private readonly fetchArtifact?: (key: string) => Promise<void>,
    /** The API for pipeline runners; unset: they get no API socket. */
    private readonly apiSockets?: ApiSocketServer,
  ) {
    this.runDir = path.join(builder.dirs.work, '..', 'run');
    this.apiSocketDir = path.join(this.runDir, 'api');
    this.fifoDir = path.join(this.runDir, 'fifo');
  }

  prepare(): void {
    /* eslint-disable no-restricted-syntax -- start-up only: the composition root calls prepare() before the server listens */
    fs.mkdirSync(this.runDir, { recursive: true });
    fs.chmodSync(this.runDir, 0o711);
    fs.mkdirSync(this.fifoDir, { recursive: true });
    fs.chmodSync(this.fifoDir, 0o700);
    // Sockets of runners of an earlier start, and the one socket all sandboxes shared before.
    fs.rmSync(this.apiSocketDir, { recursive: true, force: true });
    fs.rmSync(path.join(this.runDir, 'api.sock'), { force: true });
    fs.mkdirSync(this.apiSocketDir, { mode: 0o711 });
    fs.chmodSync(this.apiSocketDir, 0o711);
    // Per-runner directories of earlier versions (FIFOs on the host disk, owned by the sandbox uid).
    for (const e of fs.readdirSync(this.runDir, { withFileTypes: true })) {
      if (e.isDirectory() && /^[0-9a-f-]{36}$/.test(e.name)) fs.rmSync(path.join(this.runDir, e.name), { recursive: true, force: true });
    }
    /* eslint-enable no-restricted-syntax */
  }

  /** A runner for the artifact, not yet started; undefined when its language has no runner harness. */
  create(req: RunnerRequest): RunnerProcess | undefined {
    const adapter = this.builder.adapterFor(req.environment.language);
    if (!adapter?.runner) return undefined;
    const runner = adapter.runner.bind(adapter);
    // Anything but `internet` (a value from an older node's message, say) gets no network at all.
    const internet = req.network === 'internet';
    // Read when the runner starts (asynchronously, off the request's synchronous path).
    const load = async (): Promise<RunnerMounts> => {
      if (this.fetchArtifact) await this.fetchArtifact(req.artifact);
      const artifact = await this.builder.readArtifact(req.artifact);
      const conf = await readConf(path.join(artifact.tree, 'algorithmia.conf'));
      const harnessProtocol = adapter.runnerProtocolFile
        ? await readProtocol(path.join(artifact.tree, adapter.runnerProtocolFile))
        : undefined;
      const command = runner({
        conf,
        algorithmName: req.algorithmName,
        hasLayer: artifact.layerDir !== null,
        environment: { name: req.environment.name, runtimeVersion: req.environment.runtime.version },
        ...(harnessProtocol !== undefined ? { harnessProtocol } : {}),
      });
      // Last, so that nothing above can fail and leave them open (the runner closes both when it
      // ends). One egress channel per runner, so one runner's connections are capped on their own.
      const egress = internet ? await this.egress.open() : undefined;
      const file = path.join(this.apiSocketDir, `${crypto.randomUUID()}.sock`);
      let apiSocket: Awaited<ReturnType<ApiSocketServer['listen']>> | undefined;
      try {
        apiSocket = req.pipeline && req.owner && this.apiSockets ? await this.apiSockets.listen(file, req.owner) : undefined;
      } catch (err) {
        await egress?.close();
        throw err;
      }
      const opened = apiSocket;
      const extraMounts: Mount[] = opened ? [{ host: file, inside: API_SOCKET_INSIDE, writable: true }] : [];
      return {
        artifactDir: artifact.tree,
        layerDir: artifact.layerDir,
        command,
        extraMounts,
        ...(opened ? { release: () => opened.close() } : {}),
        ...(egress ? { egress } : {}),
      };
    };
    return new RunnerProcess(this.supervisor, {
      artifact: req.artifact,
      load,
      harnessDir: path.join(LANGUAGES_DIR, adapter.folder, 'runner'),
      env: {
        ...req.env,
        ...(req.pipeline ? { ALGORITHMIA_API: 'http://localhost', ALGOHOST_API_SOCKET: API_SOCKET_INSIDE } : {}),
        // The proxy variables HTTP clients read (the JVM harness turns them into its properties).
        // localhost stays direct: the in-algorithm clients address the API as http://localhost
        // over the Unix socket, and those built on proxy-aware HTTP stacks (Ruby's Net::HTTP, R's
        // libcurl) would otherwise send it to the proxy. Nothing else listens on loopback there.
        ...(internet ? { ...egressProxyEnv(), NO_PROXY: 'localhost,127.0.0.1,::1', no_proxy: 'localhost,127.0.0.1,::1' } : {}),
      },
      extraMounts: [...(adapter.toolchainMounts?.() ?? []), ...(req.extraMounts ?? [])],
      network: internet ? 'internet' : 'none',
      memoryBytes: this.limits.memoryBytesByEnvironment?.get(req.environment.name) ?? this.limits.memoryBytes,
      pids: this.limits.pids,
      cpus: this.limits.cpus,
      cpuGroup: req.cpuGroup,
      outputLimitBytes: this.limits.outputLimitBytes,
      fifoDir: this.fifoDir,
      startTimeoutMs: this.limits.startTimeoutMs,
    });
  }
}

/**
 * A small file of the artifact (written by the build, so untrusted): its text, or undefined when
 * absent or unusable. Never follows a link, never blocks on a FIFO, reads at most 64 KiB.
 */
async function readArtifactFile(file: string): Promise<string | undefined> {
  let handle: fs.promises.FileHandle;
  try {
    handle = await fs.promises.open(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const st = await handle.stat();
    if (!st.isFile() || st.size > 64 * 1024) return undefined;
    return await handle.readFile('utf8');
  } catch {
    return undefined;
  } finally {
    await handle.close();
  }
}

/** The artifact's algorithmia.conf as data ({} when absent or unusable: the harness then falls back to the algorithm's name). */
async function readConf(file: string): Promise<RunnerContextConf> {
  const text = await readArtifactFile(file);
  if (text === undefined) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return {};
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return {};
  const conf: RunnerContextConf = {};
  for (const k of ['username', 'algoname', 'language'] as const) {
    const v = (parsed as Record<string, unknown>)[k];
    if (typeof v === 'string') conf[k] = v;
  }
  return conf;
}

/** The protocol an artifact's compiled harness speaks (LanguageAdapter.runnerProtocolFile). */
async function readProtocol(file: string): Promise<string | undefined> {
  return (await readArtifactFile(file))?.trim();
}

type RunnerContextConf = RunnerContext['conf'];
