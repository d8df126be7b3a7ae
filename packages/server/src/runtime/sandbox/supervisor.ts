/**
 * The one supervisor for every sandboxed process (build steps and runners): it puts the
 * process tree into its own cgroups, drops to an unprivileged host uid of its own (./uids.ts),
 * wraps it in bubblewrap with
 * only the mounts it is given, enforces wall time and an output cap with kill escalation, and
 * reports a typed outcome. Language code never spawns user code itself.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import type { Duplex, Readable, Writable } from 'node:stream';
import {
  detectCgroups,
  noCgroups,
  sandboxGroupInUse,
  sandboxGroupName,
  type CgroupGroup,
  type CgroupOptions,
  type CgroupReport,
  type CgroupSupport,
  type Limits,
} from './cgroups.js';
import { EGRESS_SOCKET_INSIDE, withForwarder } from './egress-proxy.js';
import { seccompFilter } from './seccomp.js';
import { handBack, handOver, SandboxUids, type UidRange, uidRangeProblem } from './uids.js';

export interface Mount {
  host: string;
  inside: string;
  writable?: boolean;
  /**
   * A host directory the sandbox writes (implies `writable`): handed to the sandbox's uid
   * before it starts, and back to the service (owner and plain modes, uids.ts `handBack`) once
   * every process of that uid is gone, before `done` resolves and before the uid is given again.
   */
  owned?: boolean;
}

export interface SandboxSpec {
  argv: string[];
  env: Record<string, string>;
  /** Working directory inside the sandbox. */
  cwd: string;
  mounts: Mount[];
  /** Empty, writable, private directories (e.g. /tmp). */
  tmpfs?: string[];
  /** Symbolic links made inside after the mounts (`inside` points at `target`). */
  symlinks?: { target: string; inside: string }[];
  /**
   * Host file descriptors handed to the sandboxed process as fds 3, 4, … (in order), e.g. the
   * write end of a runner's response FIFO, which then needs no path on the host. Their files
   * are given to the sandbox's uid (fchown): reopening one through /proc/self/fd checks its owner.
   */
  fds?: number[];
  /** Size cap of each tmpfs in bytes (it also counts against the memory limit). */
  tmpfsBytes?: number;
  /**
   * Always a network namespace of its own with loopback only (never the host's: nothing of the
   * host's loopback, interfaces, abstract sockets or ports is reachable, and nothing it binds is
   * seen outside). `none`: nothing more. `registries` (build steps) and `internet` (runners of
   * full-network algorithms): the only way out is the egress proxy's channel `egressSocket`,
   * whose policy says where (package registries; public addresses), reached through a forwarder
   * on 127.0.0.1:EGRESS_PROXY_PORT.
   */
  network: 'none' | 'registries' | 'internet';
  /** Host path of the egress proxy channel, with `network: 'registries'` or `'internet'`. */
  egressSocket?: string;
  limits: Limits;
  wallTimeMs: number;
  /** Combined stdout+stderr bytes allowed before the process is killed. */
  outputLimitBytes: number;
}

export type KillReason = 'timeout' | 'memory' | 'output_limit' | 'cancelled';

export type Outcome = { kind: 'exited'; code: number } | { kind: 'killed'; reason: KillReason | 'signal'; signal?: string };

export interface SandboxProcess {
  /** Host pid of the sandbox's outermost process (its tree holds the user code). */
  pid: number | undefined;
  /** The host uid (and gid) every process of this sandbox runs as, its own while it lives. */
  uid: number;
  stdin: Writable;
  stdout: Readable;
  stderr: Readable;
  /** Resolves once the whole process tree is gone. */
  done: Promise<Outcome>;
  kill(reason: KillReason): void;
}

/**
 * The uid and gid a sandboxed process sees itself as, inside its user namespace ("nobody", so
 * that tools looking themselves up in /etc/passwd find an entry). On the host each sandbox
 * runs as a uid of its own (SandboxProcess.uid).
 */
const SANDBOX_INSIDE_UID = 65534;
const KILL_GRACE_MS = 2000;
const MAX_TIMER_MS = 2 ** 31 - 1;

/** System paths a sandbox sees read-only; /etc is shown with its secrets masked. */
const SYSTEM_MOUNTS = ['/usr', '/etc'];
const MASKED = [
  '/etc/shadow',
  '/etc/gshadow',
  '/etc/shadow-',
  '/etc/gshadow-',
  '/etc/ssh',
  '/etc/sudoers',
  '/etc/sudoers.d',
  '/etc/ssl/private',
];

export class SandboxUnavailableError extends Error {}

export interface SupervisorOptions {
  bwrap?: string;
  /**
   * RLIMIT_NOFILE (soft and hard) of every sandboxed process. With the pids limit of its
   * cgroup it bounds the files one sandbox can hold open (pids × this), so that sandboxes
   * together cannot use up the host's file table.
   */
  maxOpenFiles?: number;
  /**
   * Where the cgroup hierarchy is looked for (tests: a fake tree); `false`: not at all, for a
   * node that never starts a sandbox (an API node), which then leaves the host's cgroups alone.
   */
  cgroups?: CgroupOptions | false;
  /**
   * Refuse to start a sandbox unless its memory and pids limits hold (default true): without
   * them one algorithm can exhaust the host's memory or process table for every tenant.
   */
  requireCgroups?: boolean;
  /** Host uids for sandboxes, one each (ALGOHOST_SANDBOX_UID_RANGE; default uids.ts DEFAULT_SANDBOX_UID_RANGE). */
  uidRange?: UidRange;
  /** Where the host's nodes record which of those uids they hold (tests: a directory of their own). */
  uidLockDir?: string;
}

export const DEFAULT_MAX_OPEN_FILES = 1024;

export class Supervisor {
  private cgroups: CgroupSupport;
  private readonly cgroupOptions: CgroupOptions | false | undefined;
  private readonly bwrap: string;
  private readonly maxOpenFiles: number;
  private readonly requireCgroups: boolean;
  /** bubblewrap's options for the host's own layout (links into /usr, masked paths), read once at start-up. */
  private readonly hostLayout: string[];
  private bwrapFound = false;
  /** The seccomp program every sandbox gets (./seccomp.ts); undefined on an architecture it does not know. */
  private readonly seccomp = seccompFilter();
  /** This node's sandbox groups from their making until their removal (the sweep leaves them). */
  private readonly liveGroups = new Set<string>();
  readonly uids: SandboxUids;
  private uidProblem: string | undefined;

  constructor(options: SupervisorOptions = {}) {
    this.bwrap = options.bwrap ?? '/usr/bin/bwrap';
    this.maxOpenFiles = options.maxOpenFiles ?? DEFAULT_MAX_OPEN_FILES;
    this.requireCgroups = options.requireCgroups ?? true;
    this.cgroupOptions = options.cgroups;
    // No limits until `prepare` takes the host's cgroups.
    this.cgroups = options.cgroups === false ? noCgroups() : noCgroups('the sandbox supervisor is not prepared yet');
    this.hostLayout = hostLayout();
    this.uids = new SandboxUids(options.uidRange, options.uidLockDir);
  }

  /**
   * Takes the host's cgroups (on cgroup v2 this moves this process into a leaf group:
   * ./cgroups.ts) and checks the uid range; before the first sandbox, never on a node that
   * starts none (`cgroups: false`).
   */
  prepare(): void {
    if (this.cgroupOptions === false) return;
    this.cgroups = detectCgroups(this.cgroupOptions);
    this.uidProblem = uidRangeProblem(this.uids.range);
  }

  /** Throws a clear error when user code cannot be contained on this host (looked up until found once). */
  check(): void {
    if (this.uidProblem) {
      const { first, last } = this.uids.range;
      throw new SandboxUnavailableError(
        `the sandbox uid range ${first}-${last} (ALGOHOST_SANDBOX_UID_RANGE) cannot be used on this host: ${this.uidProblem}`,
      );
    }
    const { limits, problem } = this.cgroups;
    if (this.requireCgroups && !(limits.memory && limits.pids)) {
      throw new SandboxUnavailableError(
        `algohost refuses to run user code without memory and pids limits, which do not hold on this host: ${problem ?? 'no cgroups'}. ` +
          'Fix the host, or set ALGOHOST_REQUIRE_CGROUPS=false to run without them (one algorithm could then exhaust the memory or processes of all)',
      );
    }
    if (this.bwrapFound) return;
    // eslint-disable-next-line no-restricted-syntax -- start-up: the composition root calls check() first; once found it is not looked up again
    this.bwrapFound = fs.existsSync(this.bwrap);
    if (!this.bwrapFound) {
      throw new SandboxUnavailableError(
        'bubblewrap (bwrap) is not installed: algohost refuses to run user code without a sandbox (apt-get install bubblewrap)',
      );
    }
  }

  /**
   * Removes the groups of sandboxes that are gone, made more than `olderThanMs` ago: left by a
   * node that was killed, or by a removal that gave up (the `sandbox.cgroup-sweep` job).
   */
  sweepStaleGroups(olderThanMs: number): Promise<number> {
    return this.cgroups.sweepStale(olderThanMs, (group) => sandboxGroupInUse(group, process.pid, this.liveGroups, processRuns));
  }

  /** Which cgroup limits hold for sandboxes on this host, and what start-up did for them (for the start-up log). */
  get cgroupReport(): CgroupReport {
    const { version, limits, problem, actions } = this.cgroups;
    return { version, limits, actions, ...(problem === undefined ? {} : { problem }) };
  }

  async start(spec: SandboxSpec): Promise<SandboxProcess> {
    this.check();
    const { options, argv } = this.command(spec);
    const owned = spec.mounts.filter((m) => m.owned).map((m) => m.host);
    const fds = spec.fds ?? [];
    let uid: number;
    try {
      uid = await this.uids.acquire();
    } catch (err) {
      throw new SandboxUnavailableError((err as Error).message);
    }
    // Once only, whichever of the child's events comes: a second release could free the uid
    // while another sandbox holds it again.
    let retired: Promise<void> | undefined;
    const retire = () => (retired ??= this.retire(uid, owned));
    // Named with this node's pid: another node's sweep leaves it alone while this node runs.
    const name = sandboxGroupName(process.pid, crypto.randomUUID());
    this.liveGroups.add(name);
    let group: CgroupGroup | undefined;
    try {
      await handOver(owned, uid);
      for (const fd of fds) await fchown(fd, uid);
      group = await this.cgroups.create(name, spec.limits);
    } catch (err) {
      this.liveGroups.delete(name);
      await retire();
      throw err;
    }
    // bubblewrap reads its options (host paths of the mounts included) from a pipe, so that the
    // sandbox's pid 1, a copy of bwrap, shows `bwrap --args N -- <command>` in /proc/1/cmdline
    // and nothing of the host's layout. The spawn's cwd is `/` for the same reason.
    const argsFd = 3 + fds.length;
    // The seccomp program comes on the next pipe (bwrap reads it to its end before it execs).
    const seccompFd = this.seccomp ? argsFd + 1 : undefined;
    if (seccompFd !== undefined) options.push('--seccomp', String(seccompFd));
    const child = spawn(
      '/bin/sh',
      ['-c', prelude(group, this.maxOpenFiles), 'sandbox', ...this.wrapper(uid), '--args', String(argsFd), '--', ...argv],
      {
        cwd: '/',
        env: spec.env,
        stdio: ['pipe', 'pipe', 'pipe', ...fds, 'pipe', ...(seccompFd !== undefined ? ['pipe' as const] : [])],
        detached: true, // own process group: a kill reaches the whole tree
      },
    );
    // Read to its end as well (bwrap closes it once read): the child's `close` waits for it.
    const argsPipe = child.stdio[argsFd] as Duplex | null;
    argsPipe?.on('error', () => {});
    argsPipe?.resume();
    argsPipe?.end(`${options.join('\0')}\0`);
    if (seccompFd !== undefined) {
      const seccompPipe = child.stdio[seccompFd] as Duplex | null;
      seccompPipe?.on('error', () => {});
      seccompPipe?.resume();
      seccompPipe?.end(this.seccomp);
    }
    let killReason: KillReason | undefined;
    let output = 0;
    const kill = (reason: KillReason) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      killReason ??= reason;
      signalGroup(child, 'SIGTERM');
      setTimeout(() => signalGroup(child, 'SIGKILL'), KILL_GRACE_MS).unref();
    };
    const count = (d: Buffer) => {
      output += d.length;
      if (output > spec.outputLimitBytes) kill('output_limit');
    };
    child.stdout!.on('data', count);
    child.stderr!.on('data', count);
    // setTimeout holds at most 2^31-1 ms; a longer limit (long-lived runners) means no timer.
    const timer = spec.wallTimeMs <= MAX_TIMER_MS ? setTimeout(() => kill('timeout'), spec.wallTimeMs) : undefined;
    timer?.unref();

    const done = new Promise<Outcome>((resolve) => {
      child.on('close', async (code, signal) => {
        clearTimeout(timer);
        signalGroup(child, 'SIGKILL'); // stragglers that left the pipe open
        const oom = (await group?.oomKilled()) ?? false;
        await group?.remove();
        this.liveGroups.delete(name);
        await retire();
        if (killReason) resolve({ kind: 'killed', reason: killReason });
        else if (oom) resolve({ kind: 'killed', reason: 'memory' });
        else if (signal) resolve({ kind: 'killed', reason: 'signal', signal });
        else resolve({ kind: 'exited', code: code ?? 1 });
      });
      child.on('error', async () => {
        // Never started: its empty groups are the sweep's.
        this.liveGroups.delete(name);
        await retire();
        resolve({ kind: 'exited', code: 127 });
      });
    });
    return { pid: child.pid, uid, stdin: child.stdin!, stdout: child.stdout!, stderr: child.stderr!, done, kill };
  }

  /** Runs to completion, passing output on as it comes. */
  async run(spec: SandboxSpec, onOutput: (chunk: string) => void, signal?: AbortSignal): Promise<Outcome> {
    const p = await this.start(spec);
    p.stdin.end();
    p.stdout.setEncoding('utf8').on('data', onOutput);
    p.stderr.setEncoding('utf8').on('data', onOutput);
    const onAbort = () => p.kill('cancelled');
    signal?.addEventListener('abort', onAbort);
    try {
      return await p.done;
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /**
   * The end of a sandbox: every process of its uid is killed and gone, then what it wrote in
   * its owned directories is handed back to the service, then the uid is free again. A uid
   * whose processes outlive the wait stays held: never given to another sandbox.
   */
  private async retire(uid: number, owned: string[]): Promise<void> {
    if (!(await this.uids.reap(uid))) return;
    try {
      await handBack(owned);
    } catch {
      // Not given back (removed meanwhile?): the uid's files may remain, so it is not given again.
      return;
    }
    await this.uids.release(uid);
  }

  /** setpriv drops to the sandbox's host uid, then bubblewrap (arguments from `--args`). */
  private wrapper(uid: number): string[] {
    return ['/usr/bin/setpriv', `--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', '--', this.bwrap];
  }

  /**
   * bubblewrap's options, NUL-separated on the `--args` pipe (none may contain a NUL), and the
   * command, which bwrap takes only from its command line (it names inside paths only).
   */
  private command(spec: SandboxSpec): { options: string[]; argv: string[] } {
    // Own user namespace, and none below it: user code cannot make nested user namespaces
    // (and with them mount, network… namespaces of its own) to widen the kernel's surface.
    const args = ['--unshare-all', '--unshare-user', '--disable-userns', '--die-with-parent', '--new-session'];
    // Seen inside as SANDBOX_INSIDE_UID, whatever its host uid.
    args.push('--uid', String(SANDBOX_INSIDE_UID), '--gid', String(SANDBOX_INSIDE_UID));
    args.push(...this.hostLayout);
    args.push('--proc', '/proc', '--dev', '/dev');
    for (const t of spec.tmpfs ?? ['/tmp']) {
      if (spec.tmpfsBytes) args.push('--size', String(spec.tmpfsBytes));
      args.push('--tmpfs', t);
    }
    for (const m of spec.mounts) args.push(m.writable || m.owned ? '--bind' : '--ro-bind', m.host, m.inside);
    for (const l of spec.symlinks ?? []) args.push('--symlink', l.target, l.inside);
    let argv = spec.argv;
    if (spec.network !== 'none') {
      if (!spec.egressSocket) throw new Error(`network '${spec.network}' needs an egress proxy socket`);
      args.push('--bind', spec.egressSocket, EGRESS_SOCKET_INSIDE);
      argv = withForwarder(argv);
    }
    // Last, after every mount point exists: the sandbox's root (bwrap's tmpfs) becomes
    // read-only, so the only writable places are the writable binds and the tmpfs mounts.
    args.push('--remount-ro', '/');
    args.push('--chdir', spec.cwd);
    if (args.some((a) => a.includes('\0'))) throw new Error('a sandbox argument contains a NUL character');
    return { options: args, argv };
  }
}

/** The options that depend on the host's layout (it does not change while the service runs). */
function hostLayout(): string[] {
  /* eslint-disable no-restricted-syntax -- start-up only: called once, from the Supervisor's constructor */
  const args: string[] = [];
  for (const m of SYSTEM_MOUNTS) args.push('--ro-bind', m, m);
  for (const link of ['lib', 'lib64', 'bin', 'sbin']) if (fs.existsSync(`/usr/${link}`)) args.push('--symlink', `usr/${link}`, `/${link}`);
  for (const m of MASKED) {
    if (!fs.existsSync(m)) continue;
    if (fs.statSync(m).isDirectory()) args.push('--tmpfs', m);
    else args.push('--ro-bind', '/dev/null', m);
  }
  /* eslint-enable no-restricted-syntax */
  return args;
}

/**
 * A shell prelude that moves itself into the cgroups and lowers its open-files limit (soft and
 * hard: the sandbox cannot raise it again), then execs the sandbox command.
 */
/** Whether a process runs (signal 0 checks it exists; EPERM: it does, as another user's). */
export function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function prelude(group: CgroupGroup | undefined, maxOpenFiles: number): string {
  const joins = (group?.procsFiles ?? []).map((f) => `echo $$ > '${f}' || exit 125;`).join(' ');
  return `${joins} ulimit -n ${Math.floor(maxOpenFiles)} || exit 125; exec "$@"`;
}

function fchown(fd: number, uid: number): Promise<void> {
  return new Promise((resolve, reject) => fs.fchown(fd, uid, uid, (err) => (err ? reject(err) : resolve())));
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}
