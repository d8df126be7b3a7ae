/**
 * Makes runners for built artifacts: finds the artifact and its dependency layer, asks the
 * language adapter how to start its harness, and applies the node's limits.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Environment } from '../../domain/catalog/model.js';
import type { ArtifactManifest, SandboxBuilder } from '../build/sandbox-builder.js';
import type { Mount, Supervisor } from '../sandbox/supervisor.js';
import { RunnerProcess } from './runner-process.js';

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
  network: 'none' | 'host';
  /** Bind the service's API socket into the sandbox (pipeline_enabled algorithms). */
  pipeline?: boolean;
  env?: Record<string, string>;
  extraMounts?: Mount[];
}

const API_SOCKET_INSIDE = '/run/algohost-api.sock';
const LANGUAGES_DIR = fileURLToPath(new URL('../languages/', import.meta.url));

export class RunnerFactory {
  readonly runDir: string;
  /** The service's API on a Unix socket, reachable from isolated sandboxes. */
  readonly apiSocket: string;

  constructor(
    private readonly supervisor: Supervisor,
    private readonly builder: SandboxBuilder,
    private readonly limits: RunnerLimits,
  ) {
    this.runDir = path.join(builder.dirs.work, '..', 'run');
    this.apiSocket = path.join(this.runDir, 'api.sock');
  }

  prepare(): void {
    fs.mkdirSync(this.runDir, { recursive: true });
    fs.chmodSync(this.runDir, 0o711);
  }

  /** A runner for the artifact, not yet started; undefined when the language cannot run yet. */
  create(req: RunnerRequest): RunnerProcess | undefined {
    const adapter = this.builder.adapterFor(req.environment.language);
    if (!adapter?.runner) return undefined;
    const artifactDir = this.builder.artifactPath(req.artifact);
    const manifest = JSON.parse(fs.readFileSync(path.join(artifactDir, '.algohost-artifact.json'), 'utf8')) as ArtifactManifest;
    const confFile = path.join(artifactDir, 'algorithmia.conf');
    let conf = {};
    try {
      if (fs.lstatSync(confFile).isFile()) conf = JSON.parse(fs.readFileSync(confFile, 'utf8')) as object;
    } catch {
      // no or unreadable algorithmia.conf: the harness falls back to the algorithm name
    }
    const command = adapter.runner({
      conf,
      algorithmName: req.algorithmName,
      hasLayer: manifest.layer !== null,
      environment: { name: req.environment.name, runtimeVersion: req.environment.runtime.version },
    });
    return new RunnerProcess(this.supervisor, {
      artifactDir,
      layerDir: manifest.layer ? path.join(this.builder.dirs.layers, manifest.layer) : null,
      harnessDir: path.join(LANGUAGES_DIR, adapter.folder, 'runner'),
      command,
      env: {
        ...req.env,
        ...(req.pipeline ? { ALGORITHMIA_API: 'http://localhost', ALGOHOST_API_SOCKET: API_SOCKET_INSIDE } : {}),
      },
      extraMounts: [
        ...(adapter.toolchainMounts?.() ?? []),
        ...(req.pipeline && fs.existsSync(this.apiSocket) ? [{ host: this.apiSocket, inside: API_SOCKET_INSIDE, writable: true }] : []),
        ...(req.extraMounts ?? []),
      ],
      network: req.network,
      memoryBytes: this.limits.memoryBytesByEnvironment?.get(req.environment.name) ?? this.limits.memoryBytes,
      pids: this.limits.pids,
      cpus: this.limits.cpus,
      outputLimitBytes: this.limits.outputLimitBytes,
      runDir: this.runDir,
      startTimeoutMs: this.limits.startTimeoutMs,
    });
  }
}
