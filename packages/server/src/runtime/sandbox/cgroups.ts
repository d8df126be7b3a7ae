/**
 * Resource limits through cgroups. These machines have only v1 controllers (memory, pids,
 * cpu); on hosts with a unified v2 hierarchy, v2 is used, after the service has moved its own
 * processes into a leaf group so that its group can delegate the controllers (v2Support).
 * Child groups are created under the service's own group, one per sandboxed process tree.
 * Detection reports which limits hold; the supervisor refuses user code without memory and
 * pids limits unless told otherwise (ALGOHOST_REQUIRE_CGROUPS).
 */
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export interface Limits {
  memoryBytes?: number;
  pids?: number;
  /** CPU share as a number of cores (e.g. 1.5); undefined = unlimited. */
  cpus?: number;
  /**
   * A parent group (a name of letters, digits, '-' and '_', e.g. one per account) to make the
   * group under, for the CPU: parents weigh the same (cpu.shares / cpu.weight defaults), so
   * under contention each parent gets an equal part of the CPU however many groups it holds.
   */
  cpuGroup?: string;
}

export interface CgroupGroup {
  /** Files a child writes its pid into, in order, before it execs the sandbox. */
  procsFiles: string[];
  /** True once the kernel OOM-killed something in this group. */
  oomKilled(): Promise<boolean>;
  /** Removes the group once its processes are gone (retrying while the kernel still holds it). */
  remove(): Promise<void>;
}

const ROOT = '/sys/fs/cgroup';
/** The controllers a sandbox's group needs: memory and pids for safety, cpu for fairness. */
const CONTROLLERS = ['memory', 'pids', 'cpu'] as const;
type Controller = (typeof CONTROLLERS)[number];
/**
 * On cgroup v2, the leaf group the service's own processes move into at start-up, so that its
 * own group may hand controllers down (cgroup v2's "no internal processes" rule).
 */
export const SERVER_LEAF = 'algohost-server';

/** Where detection looks (tests point these at a fake tree). */
export interface CgroupOptions {
  /** Mount point of the cgroup file system. */
  root?: string;
  /** This process's cgroup membership (`/proc/self/cgroup`). */
  procSelfCgroup?: string;
}

/** Which limits hold for sandboxes on this host, and why not where they do not. */
export interface CgroupReport {
  version: 1 | 2 | 0;
  limits: Record<Controller, boolean>;
  /** What is missing and what the operator must do; undefined when every limit holds. */
  problem?: string;
  /** What start-up changed to make the limits hold (cgroup v2: processes moved, controllers enabled). */
  actions: string[];
}

export interface CgroupSupport extends CgroupReport {
  /** Makes a group with its limits (asynchronously: runners start while calls are served). */
  create(name: string, limits: Limits): Promise<CgroupGroup | undefined>;
  /**
   * Removes sandbox groups (and per-account parents left empty) that hold no process, were made
   * more than `olderThanMs` ago and that `inUse` does not claim: what a node killed before its
   * sandboxes' groups were removed left, or a removal that gave up while a process tree took long
   * to die. Returns how many went.
   */
  sweepStale(olderThanMs: number, inUse: (group: string) => boolean): Promise<number>;
}

/**
 * The name `Supervisor.start` gives a sandbox's group: `s-<pid of its node>-<uuid>` (`s-<uuid>`
 * before the pid was part of it).
 */
const SANDBOX_GROUP = /^s-(?:([1-9][0-9]{0,9})-)?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A sandbox group's name for a node (`pid`) and a sandbox (`id`, a UUID). */
export function sandboxGroupName(pid: number, id: string): string {
  return `s-${pid}-${id}`;
}

/**
 * Whether a sandbox group may still be in use: one of this node's (`self`) that it has not
 * removed yet (`live`), or one of another node that still runs (`runs`). A group of a node that
 * is gone, or named before groups carried their node, is not.
 */
export function sandboxGroupInUse(group: string, self: number, live: ReadonlySet<string>, runs: (pid: number) => boolean): boolean {
  const owner = SANDBOX_GROUP.exec(group)?.[1];
  if (owner === undefined) return false;
  const pid = Number(owner);
  return pid === self ? live.has(group) : runs(pid);
}

const NONE: Record<Controller, boolean> = { memory: false, pids: false, cpu: false };

/*
 * Detection runs once, when the supervisor is made, before the server listens: the file system
 * calls below are synchronous for that reason only.
 */
/* eslint-disable no-restricted-syntax -- start-up only: detectCgroups() runs once, when the supervisor is made */

/** At start-up: which cgroup version this host offers and which limits hold, read (and on v2 set up) once. */
export function detectCgroups(options: CgroupOptions = {}): CgroupSupport {
  const root = options.root ?? ROOT;
  const procSelf = options.procSelfCgroup ?? '/proc/self/cgroup';
  // A unified (v2) hierarchy has cgroup.controllers at its mount point; a v1 or hybrid layout
  // has a tmpfs there with one directory per v1 controller.
  if (fs.existsSync(path.join(root, 'cgroup.controllers'))) return v2Support(root, procSelf);
  if (fs.existsSync(path.join(root, 'memory', 'cgroup.procs')) && fs.existsSync(path.join(root, 'pids', 'cgroup.procs')))
    return v1Support(root, procSelf);
  return noCgroups(
    'no cgroup hierarchy with memory and pids controllers is mounted at ' +
      `${root}: sandboxes run without memory, pids and CPU limits (mount the cgroup file system writable; docs/cluster.md "Privileges")`,
  );
}

/** No cgroups: none on this host (`problem` says why), or none touched by this node (an API node). */
export function noCgroups(problem?: string): CgroupSupport {
  return {
    version: 0,
    limits: NONE,
    ...(problem === undefined ? {} : { problem }),
    actions: [],
    create: async () => undefined,
    sweepStale: async () => 0,
  };
}

/** The group this process sits in for a v1 controller, from /proc/self/cgroup. */
function ownV1Group(procSelf: string, controller: string): string {
  for (const line of readOr(procSelf, '').split('\n')) {
    const [, controllers, group] = line.split(':');
    if (controllers?.split(',').includes(controller)) return group ?? '/';
  }
  return '/';
}

function v1Support(root: string, procSelf: string): CgroupSupport {
  const bases = {
    memory: path.join(root, 'memory', ownV1Group(procSelf, 'memory'), 'algohost'),
    pids: path.join(root, 'pids', ownV1Group(procSelf, 'pids'), 'algohost'),
    cpu: path.join(root, 'cpu', ownV1Group(procSelf, 'cpu'), 'algohost'),
  };
  const cpu = fs.existsSync(path.join(root, 'cpu', 'cgroup.procs'));
  return {
    version: 1,
    limits: { memory: true, pids: true, cpu },
    ...(cpu ? {} : { problem: `no cgroup v1 cpu controller at ${root}/cpu: sandboxes run without CPU quotas` }),
    actions: [],
    async create(name, limits) {
      const dirs: string[] = [];
      const memory = path.join(bases.memory, name);
      const pids = path.join(bases.pids, name);
      const cpuParent = path.join(bases.cpu, parentGroup(limits));
      const cpu = path.join(cpuParent, name);
      await inTurn(cpuParent, async () => {
        for (const d of [memory, pids, cpu]) {
          await fs.promises.mkdir(d, { recursive: true });
          dirs.push(d);
        }
      });
      if (limits.memoryBytes) {
        await fs.promises.writeFile(path.join(memory, 'memory.limit_in_bytes'), String(limits.memoryBytes));
        // Without swap accounting the file is absent; the limit above still holds for RAM.
        await tryWrite(path.join(memory, 'memory.memsw.limit_in_bytes'), String(limits.memoryBytes));
      }
      if (limits.pids) await fs.promises.writeFile(path.join(pids, 'pids.max'), String(limits.pids));
      if (limits.cpus) {
        await tryWrite(path.join(cpu, 'cpu.cfs_period_us'), '100000');
        await tryWrite(path.join(cpu, 'cpu.cfs_quota_us'), String(Math.round(limits.cpus * 100000)));
      }
      return {
        procsFiles: dirs.map((d) => path.join(d, 'cgroup.procs')),
        oomKilled: async () => /oom_kill [1-9]/.test(await readOrAsync(path.join(memory, 'memory.oom_control'), '')),
        remove: async () => {
          await removeGroups(dirs);
          await removeParent(cpuParent, bases.cpu);
        },
      };
    },
    async sweepStale(olderThanMs, inUse) {
      let removed = 0;
      for (const base of Object.values(bases)) removed += await sweepStaleGroups(base, olderThanMs, inUse);
      return removed;
    },
  };
}

/** The v2 group this process sits in, from the `0::` line of /proc/self/cgroup. */
function ownV2Group(procSelf: string): string {
  const own = (
    readOr(procSelf, '')
      .split('\n')
      .find((l) => l.startsWith('0::')) ?? '0::/'
  ).slice(3);
  // A process that an earlier start moved into the leaf (the container's shell that runs the
  // server again) still belongs to the group above it.
  return path.basename(own) === SERVER_LEAF ? path.dirname(own) : own;
}

function words(file: string): string[] {
  // The kernel lists "memory pids"; a file written by hand may hold "+memory +pids".
  return readOr(file, '')
    .split(/\s+/)
    .filter(Boolean)
    .map((w) => w.replace(/^\+/, ''));
}

/**
 * cgroup v2: sandbox groups go under `<own group>/algohost`, and the controllers reach them
 * only if `<own>` and `<own>/algohost` enable them in cgroup.subtree_control. The kernel
 * refuses that for a group that holds processes itself (the "no internal processes" rule),
 * except the host's root group; a container's group (its cgroup namespace's root, `0::/`
 * inside) is not that root. So, as container entrypoints do, every process of `<own>` first
 * moves into the leaf `<own>/algohost-server`, then the controllers are enabled.
 */
function v2Support(root: string, procSelf: string): CgroupSupport {
  const ownRel = ownV2Group(procSelf);
  const own = path.join(root, ownRel);
  const base = path.join(own, 'algohost');
  const actions: string[] = [];
  const problems: string[] = [];
  const available = new Set(words(path.join(own, 'cgroup.controllers')));
  const usable = CONTROLLERS.filter((c) => available.has(c));
  const undelegated = CONTROLLERS.filter((c) => !available.has(c));
  if (undelegated.length) {
    problems.push(
      `the cgroup v2 controller${undelegated.length > 1 ? 's' : ''} ${undelegated.join(', ')} ` +
        `${undelegated.length > 1 ? 'are' : 'is'} not delegated to this process's group ${ownRel} ` +
        `(its cgroup.controllers lists: ${[...available].join(' ') || 'none'}); the host must delegate ` +
        'them (Kubernetes: a privileged container, or one with a private cgroup namespace and a writable ' +
        '/sys/fs/cgroup; systemd: Delegate=yes)',
    );
  }
  const enable = usable.map((c) => `+${c}`).join(' ');
  let enabled: Controller[] = [];
  if (usable.length) {
    try {
      enableBelow(own, usable, enable, actions);
      fs.mkdirSync(base, { recursive: true });
      // The base holds no process (its children are per-account parents and sandbox groups).
      fs.writeFileSync(path.join(base, 'cgroup.subtree_control'), enable);
      const inBase = new Set(words(path.join(base, 'cgroup.subtree_control')));
      enabled = usable.filter((c) => inBase.has(c));
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      problems.push(
        `enabling ${usable.join(', ')} for sandboxes under ${ownRel} was refused (${e.code ?? e.message}: ${e.path ?? ''}); ` +
          'the worker needs a writable cgroup file system and its own group to itself (Kubernetes: privileged: true, ' +
          'or a private cgroup namespace with /sys/fs/cgroup mounted read-write; docs/cluster.md "Privileges")',
      );
    }
  }
  const limits = { memory: enabled.includes('memory'), pids: enabled.includes('pids'), cpu: enabled.includes('cpu') };
  const subtree = enabled.map((c) => `+${c}`).join(' ');
  return {
    version: 2,
    limits,
    ...(problems.length ? { problem: problems.join('; ') } : {}),
    actions,
    async create(name, limits) {
      if (!enabled.length) return undefined;
      await fs.promises.mkdir(base, { recursive: true });
      await tryWrite(path.join(base, 'cgroup.subtree_control'), subtree);
      const parent = path.join(base, parentGroup(limits));
      const dir = path.join(parent, name);
      await inTurn(parent, async () => {
        if (parent !== base) {
          await fs.promises.mkdir(parent, { recursive: true });
          await tryWrite(path.join(parent, 'cgroup.subtree_control'), subtree);
        }
        await fs.promises.mkdir(dir, { recursive: true });
      });
      if (limits.memoryBytes && enabled.includes('memory')) {
        await fs.promises.writeFile(path.join(dir, 'memory.max'), String(limits.memoryBytes));
        await tryWrite(path.join(dir, 'memory.swap.max'), '0');
      }
      if (limits.pids && enabled.includes('pids')) await fs.promises.writeFile(path.join(dir, 'pids.max'), String(limits.pids));
      if (limits.cpus && enabled.includes('cpu')) await tryWrite(path.join(dir, 'cpu.max'), `${Math.round(limits.cpus * 100000)} 100000`);
      return {
        procsFiles: [path.join(dir, 'cgroup.procs')],
        oomKilled: async () => /oom_kill [1-9]/.test(await readOrAsync(path.join(dir, 'memory.events'), '')),
        remove: async () => {
          await removeGroups([dir]);
          await removeParent(parent, base);
        },
      };
    },
    sweepStale: (olderThanMs, inUse) => (enabled.length ? sweepStaleGroups(base, olderThanMs, inUse) : Promise.resolve(0)),
  };
}

/**
 * Makes `own` hand `usable` down to its children: a no-op where its cgroup.subtree_control
 * already lists them; else its processes move into the leaf first (not in the host's root
 * group, which alone may hold processes and enable controllers: it has no cgroup.type).
 * Throws the refusal (EACCES, EROFS, EBUSY…) if the kernel will not.
 */
function enableBelow(own: string, usable: Controller[], enable: string, actions: string[]): void {
  const control = path.join(own, 'cgroup.subtree_control');
  const isEnabled = () => {
    const on = new Set(words(control));
    return usable.every((c) => on.has(c));
  };
  if (isEnabled()) return;
  const hostRoot = !fs.existsSync(path.join(own, 'cgroup.type'));
  // A process forked into `own` between the move and the write makes the write fail with
  // EBUSY: move again and retry, a few times.
  for (let attempt = 1; ; attempt++) {
    if (!hostRoot) {
      const moved = moveToLeaf(own);
      if (moved) actions.push(`moved ${moved} process${moved > 1 ? 'es' : ''} of ${own} into ${SERVER_LEAF}`);
    }
    try {
      fs.writeFileSync(control, enable);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EBUSY' || hostRoot || attempt >= 3) throw err;
    }
  }
  actions.push(`enabled ${enable} in ${control}`);
}

/** Moves every process of `group` into its leaf `algohost-server`; returns how many moved. */
function moveToLeaf(group: string): number {
  const leaf = path.join(group, SERVER_LEAF);
  fs.mkdirSync(leaf, { recursive: true });
  let moved = 0;
  // One pid per write: the kernel takes one at a time. 0 is a process outside this PID
  // namespace (none can be in a container's own group; skipped all the same).
  for (const pid of readOr(path.join(group, 'cgroup.procs'), '')
    .split('\n')
    .filter((p) => /^[1-9][0-9]*$/.test(p))) {
    try {
      fs.writeFileSync(path.join(leaf, 'cgroup.procs'), `${pid}\n`, { flag: 'a' });
      moved++;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err; // it exited meanwhile
    }
  }
  return moved;
}

/* eslint-enable no-restricted-syntax */

/** A parent group's name (Limits.cpuGroup): nothing that could leave the base. */
const PARENT_GROUP = /^[A-Za-z0-9_-]{1,100}$/;

/** The parent of a new group ('' = none); a name that could leave the base is refused. */
function parentGroup(limits: Limits): string {
  if (limits.cpuGroup === undefined) return '';
  if (!PARENT_GROUP.test(limits.cpuGroup)) throw new Error(`not a cgroup name: ${limits.cpuGroup}`);
  return limits.cpuGroup;
}

/**
 * Making a group under a parent and removing that parent take turns (one chain per parent):
 * otherwise the last child's removal could take the parent away between a new sibling's
 * making of the parent and of itself.
 */
const parentTurns = new Map<string, Promise<unknown>>();
function inTurn<T>(parent: string, work: () => Promise<T>): Promise<T> {
  const run = (parentTurns.get(parent) ?? Promise.resolve()).then(work, work);
  const settled = run.catch(() => {});
  parentTurns.set(parent, settled);
  void settled.then(() => {
    if (parentTurns.get(parent) === settled) parentTurns.delete(parent);
  });
  return run;
}

/** A parent group goes with its last child. */
async function removeParent(parent: string, base: string): Promise<void> {
  if (parent === base) return;
  await inTurn(parent, () =>
    fs.promises.rmdir(parent).catch(() => {
      // other groups are still in it
    }),
  );
}

/**
 * Under `base`: sandbox groups, directly or in a parent group, then parents left empty. A group
 * goes only if `inUse` does not claim it (a node still running may be about to read its
 * OOM record or remove it itself; nodes on one host share the base), it is older than
 * `olderThanMs` and it lists no process. The kernel refuses a group with a process or a child
 * group anyway (EBUSY).
 */
async function sweepStaleGroups(base: string, olderThanMs: number, inUse: (group: string) => boolean): Promise<number> {
  let removed = 0;
  const stale = async (dir: string) => {
    if (SANDBOX_GROUP.test(path.basename(dir)) && inUse(path.basename(dir))) return false;
    const made = await fs.promises.stat(dir).then(
      (s) => s.mtimeMs,
      () => undefined,
    );
    if (made === undefined || Date.now() - made < olderThanMs) return false;
    // Unreadable: not known to be empty, so left alone.
    if ((await readOrAsync(path.join(dir, 'cgroup.procs'), '?')).trim() !== '') return false;
    return fs.promises.rmdir(dir).then(
      () => true,
      () => false,
    );
  };
  for (const entry of await subdirectories(base)) {
    const dir = path.join(base, entry);
    if (SANDBOX_GROUP.test(entry)) {
      if (await stale(dir)) removed++;
      continue;
    }
    // Only what parentGroup() can name, never the service's own leaf (cgroup v2).
    if (entry === SERVER_LEAF || !PARENT_GROUP.test(entry)) continue;
    for (const child of await subdirectories(dir)) if (SANDBOX_GROUP.test(child) && (await stale(path.join(dir, child)))) removed++;
    // In turn with this node's own making of groups in it (inTurn).
    if (await inTurn(dir, () => stale(dir))) removed++;
  }
  return removed;
}

async function subdirectories(dir: string): Promise<string[]> {
  const entries = await fs.promises.readdir(dir, { withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isDirectory()).map((e) => e.name);
}

/** A group can be removed only once its processes are gone; retry briefly, without blocking. */
async function removeGroups(dirs: string[]): Promise<void> {
  for (const d of dirs) {
    for (let i = 0; i < 50; i++) {
      try {
        await fs.promises.rmdir(d);
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EBUSY') break;
        await sleep(10);
      }
    }
  }
}

/** At start-up only (detecting the hierarchy). */
function readOr(file: string, fallback: string): string {
  try {
    // eslint-disable-next-line no-restricted-syntax -- start-up only: detectCgroups() runs once, when the supervisor is made
    return fs.readFileSync(file, 'utf8');
  } catch {
    return fallback;
  }
}

async function readOrAsync(file: string, fallback: string): Promise<string> {
  return fs.promises.readFile(file, 'utf8').catch(() => fallback);
}

async function tryWrite(file: string, value: string): Promise<void> {
  await fs.promises.writeFile(file, value).catch(() => {
    // optional knob missing on this kernel
  });
}
