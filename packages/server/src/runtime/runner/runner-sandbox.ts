/**
 * A runner's sandbox: what it mounts and runs, and the response FIFO it answers through (see
 * "Isolation between runners" in runner-process.ts).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { RUNNER_INSIDE, type RunnerCommand } from '../languages/adapter.js';
import type { Mount, SandboxSpec } from '../sandbox/supervisor.js';

const execFileAsync = promisify(execFile);
const openAsync = promisify(fs.open);
const closeAsync = promisify(fs.close);

/** What a runner mounts and runs, resolved when it starts. */
export interface RunnerMounts {
  /** Host directory of the built artifact. */
  artifactDir: string;
  /** Host directory of the dependency layer, if the build made one. */
  layerDir: string | null;
  command: RunnerCommand;
  /** Mounts found when the runner starts (the API socket of a pipeline algorithm). */
  extraMounts?: Mount[];
  /** Frees what load() opened for this runner (its API socket) once the runner is gone. */
  release?: () => Promise<void>;
  /**
   * With `network: 'internet'`: the runner's own channel of the egress proxy (public addresses
   * only), closed when the runner ends.
   */
  egress?: { socket: string; close(): Promise<void> };
}

export interface RunnerSpec {
  /** The artifact's key (`<algorithm id>/<environment>/<commit>`), for diagnostics. */
  artifact: string;
  /** Resolves the artifact (its checked manifest) and the harness command; a rejection is a LoadingError. */
  load(): Promise<RunnerMounts>;
  /** Host directory of the language's harness. */
  harnessDir: string;
  /** Extra environment for the algorithm (ALGORITHMIA_API…), merged over the harness's. */
  env?: Record<string, string>;
  extraMounts?: Mount[];
  /** `internet`: outbound to public addresses through the egress proxy (RunnerMounts.egress); never the host's network. */
  network: 'none' | 'internet';
  memoryBytes: number;
  pids: number;
  cpus?: number;
  /** Parent CPU group shared by the runners of one account (cgroups.ts `Limits.cpuGroup`). */
  cpuGroup?: string;
  /** Largest response accepted (docs/compatibility.md §2: 15 MB of output), before base64 overhead. */
  outputLimitBytes: number;
  /** Root-only directory where the response FIFO is made (and unlinked at once). */
  fifoDir: string;
  /** How long load() may take. */
  startTimeoutMs: number;
}

/** Inside the sandbox the response FIFO is fd 3 (SandboxSpec.fds), reopened by path. */
const FIFO_FD_INSIDE = '/proc/self/fd/3';

/** The sandbox of a runner whose artifact `loaded` resolved; `sandboxEnd` is the FIFO's write end. */
export function runnerSandboxSpec(spec: RunnerSpec, loaded: RunnerMounts, mark: string | undefined, sandboxEnd: number): SandboxSpec {
  const mounts: Mount[] = [
    { host: loaded.artifactDir, inside: RUNNER_INSIDE.app },
    { host: spec.harnessDir, inside: RUNNER_INSIDE.harness },
    ...(loaded.layerDir ? [{ host: loaded.layerDir, inside: RUNNER_INSIDE.deps }] : []),
    ...(spec.extraMounts ?? []),
    ...(loaded.extraMounts ?? []),
  ];
  return {
    argv: loaded.command.argv,
    env: {
      PATH: '/usr/local/bin:/usr/bin:/bin',
      HOME: '/tmp',
      LANG: 'C.UTF-8',
      ...loaded.command.env,
      ...spec.env,
      ALGOHOST_RESPONSE_FIFO: RUNNER_INSIDE.responseFifo,
      ...(mark ? { ALGOHOST_OUTPUT_MARK: mark } : {}),
    },
    cwd: RUNNER_INSIDE.app,
    mounts,
    // The runner's writable places are its own tmpfs. A full one is an error for the
    // algorithm (ENOSPC), not a memory kill of the runner; both count against its memory.
    tmpfs: ['/tmp', path.dirname(RUNNER_INSIDE.responseFifo)],
    tmpfsBytes: Math.floor(spec.memoryBytes / 4),
    symlinks: [
      { target: FIFO_FD_INSIDE, inside: RUNNER_INSIDE.responseFifo },
      { target: FIFO_FD_INSIDE, inside: '/tmp/algoout' },
    ],
    fds: [sandboxEnd],
    network: spec.network,
    ...(loaded.egress ? { egressSocket: loaded.egress.socket } : {}),
    limits: { memoryBytes: spec.memoryBytes, pids: spec.pids, cpus: spec.cpus, cpuGroup: spec.cpuGroup },
    // Runners live until stopped; each call has its own timeout.
    wallTimeMs: 365 * 24 * 3600 * 1000,
    outputLimitBytes: Number.MAX_SAFE_INTEGER,
  };
}

/**
 * Makes the response FIFO in `fifoDir`: the host's end (read-write, never EOF) becomes `fifo`,
 * which hands what arrives to `onData`; the write end `sandboxEnd` goes to the sandbox. The name
 * is gone before any sandbox exists.
 */
export async function openResponseFifo(
  fifoDir: string,
  name: string,
  onData: (chunk: string) => void,
): Promise<{ fifo: net.Socket; sandboxEnd: number }> {
  const fifoPath = path.join(fifoDir, name);
  let hostEnd: number | undefined;
  let fifo: net.Socket | undefined;
  try {
    // The supervisor gives it to the runner's uid (the harness reopens it through
    // /proc/self/fd/3, which checks the FIFO's own permissions).
    await execFileAsync('mkfifo', ['-m', '0600', fifoPath]);
    hostEnd = await openAsync(fifoPath, fs.constants.O_RDWR | fs.constants.O_NONBLOCK | fs.constants.O_NOFOLLOW);
    // Blocking for the sandbox (its writes wait rather than fail); open returns at once: a reader exists.
    const sandboxEnd = await openAsync(fifoPath, fs.constants.O_WRONLY | fs.constants.O_NOFOLLOW);
    fifo = new net.Socket({ fd: hostEnd, readable: true, writable: false });
    fifo.setEncoding('utf8');
    fifo.on('data', onData);
    fifo.on('error', () => {});
    return { fifo, sandboxEnd };
  } catch (err) {
    if (hostEnd !== undefined && !fifo) await closeAsync(hostEnd).catch(() => {});
    throw err;
  } finally {
    await fs.promises.rm(fifoPath, { force: true });
  }
}
