/**
 * Resource limits through cgroups. These machines have only v1 controllers (memory, pids,
 * cpu); on hosts with a unified v2 hierarchy with controllers, v2 is used. Child groups are
 * created under the service's own group, one per sandboxed process tree.
 */
import fs from 'node:fs';
import path from 'node:path';

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
  oomKilled(): boolean;
  remove(): void;
}

const ROOT = '/sys/fs/cgroup';

export interface CgroupSupport {
  version: 1 | 2 | 0;
  create(name: string, limits: Limits): CgroupGroup | undefined;
}

export function detectCgroups(): CgroupSupport {
  const v2Controllers = readOr(path.join(ROOT, 'cgroup.controllers'), '');
  if (v2Controllers.includes('memory') && v2Controllers.includes('pids')) return v2Support();
  if (fs.existsSync(path.join(ROOT, 'memory', 'cgroup.procs')) && fs.existsSync(path.join(ROOT, 'pids', 'cgroup.procs')))
    return v1Support();
  return { version: 0, create: () => undefined };
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
    create(name, limits) {
      const dirs: string[] = [];
      const memory = path.join(bases.memory, name);
      const pids = path.join(bases.pids, name);
      const cpuParent = path.join(bases.cpu, parentGroup(limits));
      const cpu = path.join(cpuParent, name);
      for (const d of [memory, pids, cpu]) {
        fs.mkdirSync(d, { recursive: true });
        dirs.push(d);
      }
      if (limits.memoryBytes) {
        fs.writeFileSync(path.join(memory, 'memory.limit_in_bytes'), String(limits.memoryBytes));
        // Without swap accounting the file is absent; the limit above still holds for RAM.
        tryWrite(path.join(memory, 'memory.memsw.limit_in_bytes'), String(limits.memoryBytes));
      }
      if (limits.pids) fs.writeFileSync(path.join(pids, 'pids.max'), String(limits.pids));
      if (limits.cpus) {
        tryWrite(path.join(cpu, 'cpu.cfs_period_us'), '100000');
        tryWrite(path.join(cpu, 'cpu.cfs_quota_us'), String(Math.round(limits.cpus * 100000)));
      }
      return {
        procsFiles: dirs.map((d) => path.join(d, 'cgroup.procs')),
        oomKilled: () => /oom_kill [1-9]/.test(readOr(path.join(memory, 'memory.oom_control'), '')),
        remove: () => {
          removeGroups(dirs);
          removeParent(cpuParent, bases.cpu);
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
    create(name, limits) {
      fs.mkdirSync(base, { recursive: true });
      tryWrite(path.join(base, 'cgroup.subtree_control'), '+memory +pids +cpu');
      const parent = path.join(base, parentGroup(limits));
      if (parent !== base) {
        fs.mkdirSync(parent, { recursive: true });
        tryWrite(path.join(parent, 'cgroup.subtree_control'), '+memory +pids +cpu');
      }
      const dir = path.join(parent, name);
      fs.mkdirSync(dir, { recursive: true });
      if (limits.memoryBytes) {
        fs.writeFileSync(path.join(dir, 'memory.max'), String(limits.memoryBytes));
        tryWrite(path.join(dir, 'memory.swap.max'), '0');
      }
      if (limits.pids) fs.writeFileSync(path.join(dir, 'pids.max'), String(limits.pids));
      if (limits.cpus) tryWrite(path.join(dir, 'cpu.max'), `${Math.round(limits.cpus * 100000)} 100000`);
      return {
        procsFiles: [path.join(dir, 'cgroup.procs')],
        oomKilled: () => /oom_kill [1-9]/.test(readOr(path.join(dir, 'memory.events'), '')),
        remove: () => {
          removeGroups([dir]);
          removeParent(parent, base);
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

/** A parent group goes with its last child (create and remove are synchronous: no race here). */
function removeParent(parent: string, base: string): void {
  if (parent === base) return;
  try {
    fs.rmdirSync(parent);
  } catch {
    // other groups are still in it
  }
}

/** A group can be removed only once its processes are gone; retry briefly. */
function removeGroups(dirs: string[]): void {
  for (const d of dirs) {
    for (let i = 0; i < 50; i++) {
      try {
        fs.rmdirSync(d);
        break;
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') break;
        if (code !== 'EBUSY') break;
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
      }
    }
  }
}

function readOr(file: string, fallback: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return fallback;
  }
}

function tryWrite(file: string, value: string): void {
  try {
    fs.writeFileSync(file, value);
  } catch {
    // optional knob missing on this kernel
  }
}
