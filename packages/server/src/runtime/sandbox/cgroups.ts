/**
 * Resource limits through cgroups. These machines have only v1 controllers (memory, pids,
 * cpu); on hosts with a unified v2 hierarchy with controllers, v2 is used. Child groups are
 * created under the service's own group, one per sandboxed process tree.
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

export interface CgroupSupport {
  version: 1 | 2 | 0;
  /** Makes a group with its limits (asynchronously: runners start while calls are served). */
  create(name: string, limits: Limits): Promise<CgroupGroup | undefined>;
}

/** At start-up: which cgroup version this host offers, read once. */
export function detectCgroups(): CgroupSupport {
  const v2Controllers = readOr(path.join(ROOT, 'cgroup.controllers'), '');
  if (v2Controllers.includes('memory') && v2Controllers.includes('pids')) return v2Support();
  // eslint-disable-next-line no-restricted-syntax -- start-up only: detectCgroups() runs once, when the supervisor is made
  if (fs.existsSync(path.join(ROOT, 'memory', 'cgroup.procs')) && fs.existsSync(path.join(ROOT, 'pids', 'cgroup.procs')))
    return v1Support();
  return { version: 0, create: async () => undefined };
}

/** The group this process sits in for a v1 controller, from /proc/self/cgroup. */
function ownV1Group(controller: string): string {
  for (const line of readOr('/proc/self/cgroup', '').split('\n')) {
    const [, controllers, group] = line.split(':');
    if (controllers?.split(',').includes(controller)) return group ?? '/';
  }
  return '/';
}

function v1Support(): CgroupSupport {
  const bases = {
    memory: path.join(ROOT, 'memory', ownV1Group('memory'), 'algohost'),
    pids: path.join(ROOT, 'pids', ownV1Group('pids'), 'algohost'),
    cpu: path.join(ROOT, 'cpu', ownV1Group('cpu'), 'algohost'),
  };
  return {
    version: 1,
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
  };
}

function v2Support(): CgroupSupport {
  const own = (
    readOr('/proc/self/cgroup', '')
      .split('\n')
      .find((l) => l.startsWith('0::')) ?? '0::/'
  ).slice(3);
  const base = path.join(ROOT, own, 'algohost');
  return {
    version: 2,
    async create(name, limits) {
      await fs.promises.mkdir(base, { recursive: true });
      await tryWrite(path.join(base, 'cgroup.subtree_control'), '+memory +pids +cpu');
      const parent = path.join(base, parentGroup(limits));
      const dir = path.join(parent, name);
      await inTurn(parent, async () => {
        if (parent !== base) {
          await fs.promises.mkdir(parent, { recursive: true });
          await tryWrite(path.join(parent, 'cgroup.subtree_control'), '+memory +pids +cpu');
        }
        await fs.promises.mkdir(dir, { recursive: true });
      });
      if (limits.memoryBytes) {
        await fs.promises.writeFile(path.join(dir, 'memory.max'), String(limits.memoryBytes));
        await tryWrite(path.join(dir, 'memory.swap.max'), '0');
      }
      if (limits.pids) await fs.promises.writeFile(path.join(dir, 'pids.max'), String(limits.pids));
      if (limits.cpus) await tryWrite(path.join(dir, 'cpu.max'), `${Math.round(limits.cpus * 100000)} 100000`);
      return {
        procsFiles: [path.join(dir, 'cgroup.procs')],
        oomKilled: async () => /oom_kill [1-9]/.test(await readOrAsync(path.join(dir, 'memory.events'), '')),
        remove: async () => {
          await removeGroups([dir]);
          await removeParent(parent, base);
        },
      };
    },
  };
}

/** The parent of a new group ('' = none); a name that could leave the base is refused. */
function parentGroup(limits: Limits): string {
  if (limits.cpuGroup === undefined) return '';
  if (!/^[A-Za-z0-9_-]{1,100}$/.test(limits.cpuGroup)) throw new Error(`not a cgroup name: ${limits.cpuGroup}`);
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
