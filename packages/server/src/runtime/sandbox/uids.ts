/**
 * A host uid (and the gid of the same number) per sandbox. The kernel counts many things per
 * uid, not per process or cgroup: inotify instances and watches, POSIX message queue bytes,
 * pending signals, processes (RLIMIT_NPROC), keys, user namespaces. Sandboxes that shared one
 * uid shared those limits, so one tenant could use them up for all. Each runner and each build
 * step gets a uid of its own from a range no account of the host uses, for its whole life.
 *
 * Recycling: a uid returns to the pool only once no process of it exists on the host. Every
 * process of a sandbox runs as its uid (it cannot change to another without privilege), so
 * when its sandbox ends, every process of that uid is killed and the uid waits until /proc
 * lists none; one that lingers keeps the uid out of the pool for as long as this node runs.
 * Files: a sandbox writes on the host only into the directories handed to it (SandboxSpec's
 * `owned` mounts: a build's tree, its layer, its download cache); the supervisor gives them
 * back to the service (owner and modes, `handBack`) after the processes are gone and before
 * the uid is free again. Everything else a sandbox writes is on its own tmpfs mounts, gone with
 * its mount namespace. On top of that uids are handed out in turn through the whole range, so a
 * freed uid is the last one to be given again.
 *
 * Several nodes on one host (docs/cluster.md starts two workers) share the range: a uid is
 * held by an entry in a root-only directory, made with O_EXCL, naming the node's pid and its
 * start time. An entry whose node is gone (killed) is taken back at start-up, after the
 * processes of its uid were killed; that node's build work directories are removed when it
 * starts again (SandboxBuilder.prepare), and a download cache it left handed over is handed to
 * the next build that uses it before that build's steps start, so no other sandbox can reach
 * files of the uid (a sandbox sees no host path but its own mounts).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

export interface UidRange {
  first: number;
  last: number;
}

/**
 * Above every account (useradd's UID_MAX is 60000, systemd's dynamic users end at 65519, nobody
 * is 65534) and below the subordinate ranges useradd gives for rootless containers (from 100000).
 */
export const DEFAULT_SANDBOX_UID_RANGE: UidRange = { first: 70000, last: 99999 };
/** Host-wide (every node on the host must use the same): on tmpfs, so entries go with a reboot. */
const DEFAULT_UID_LOCK_DIR = '/run/algohost-sandbox-uids';
/** How long the processes of an ended sandbox may take to go before its uid is kept out of the pool. */
const REAP_WAIT_MS = 30_000;
/** How many /proc/<pid>/status files a scan for a uid's processes reads at once. */
const PROC_SCAN_BATCH = 64;

class SandboxUidsExhausted extends Error {}

/** Parses `first-last` (ALGOHOST_SANDBOX_UID_RANGE); throws a message naming what is wrong. */
export function parseUidRange(text: string): UidRange {
  const m = /^\s*(\d{1,10})\s*-\s*(\d{1,10})\s*$/.exec(text);
  if (!m) throw new Error(`${JSON.stringify(text)} is not a uid range (first-last, e.g. 70000-99999)`);
  const range = { first: Number(m[1]), last: Number(m[2]) };
  if (range.first > range.last) throw new Error(`the uid range ${text} ends before it starts`);
  // 2^31 and above trip signed 32-bit uids in some tools; 0 is root.
  if (range.first < 1 || range.last >= 2 ** 31 - 1) throw new Error(`the uid range ${text} must lie within 1-2147483646`);
  return range;
}

/**
 * Why `range` cannot hold sandboxes on this host, or undefined when it can: it must not contain
 * root, the service's own uid or gid, any account or group (/etc/passwd, /etc/group), nor a
 * subordinate range given to a user (/etc/subuid, /etc/subgid: their rootless containers would
 * share uids with sandboxes), and it must be mapped in the service's user namespace.
 */
export function uidRangeProblem(range: UidRange, files: { etc?: string; uidMap?: string } = {}): string | undefined {
  /* eslint-disable no-restricted-syntax -- start-up only: Supervisor.prepare checks its range once */
  const etc = files.etc ?? '/etc';
  const inRange = (n: number) => n >= range.first && n <= range.last;
  const overlaps = (start: number, count: number) => start <= range.last && start + count - 1 >= range.first;
  const own = [0, process.getuid?.() ?? 0, process.getgid?.() ?? 0].filter(inRange);
  if (own.length) return `it contains ${own[0]}, root or the service's own uid or gid`;
  const read = (file: string) => {
    try {
      return fs.readFileSync(path.join(etc, file), 'utf8');
    } catch {
      return '';
    }
  };
  for (const [file, what] of [
    ['passwd', 'account'],
    ['group', 'group'],
  ] as const) {
    for (const line of read(file).split('\n')) {
      const [name, , id] = line.split(':');
      if (id !== undefined && /^\d+$/.test(id) && inRange(Number(id))) return `the ${what} ${name} (${id}) of ${etc}/${file} is in it`;
    }
  }
  for (const file of ['subuid', 'subgid']) {
    for (const line of read(file).split('\n')) {
      const [name, start, count] = line.split(':');
      if (start && count && /^\d+$/.test(start) && /^\d+$/.test(count) && overlaps(Number(start), Number(count))) {
        return `it overlaps the subordinate ids ${start}-${Number(start) + Number(count) - 1} of ${name} in ${etc}/${file}`;
      }
    }
  }
  let uidMap: string;
  try {
    uidMap = fs.readFileSync(files.uidMap ?? '/proc/self/uid_map', 'utf8');
  } catch {
    return undefined;
  }
  const mapped = uidMap
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s+/).map(Number))
    .some(([inside, , count]) => inside !== undefined && count !== undefined && inside <= range.first && inside + count - 1 >= range.last);
  if (!mapped) return "it is not mapped in the service's user namespace (/proc/self/uid_map): setuid to it would fail";
  /* eslint-enable no-restricted-syntax */
  return undefined;
}

export class SandboxUids {
  private readonly count: number;
  /** The next uid to try (uids are given in turn, so a freed one is given again last). */
  private cursor = 0;
  /** Held by this node: given to a sandbox, or kept out because its processes would not go. */
  private readonly held = new Set<number>();
  private readonly owner: string;
  private ready: Promise<void> | undefined;

  constructor(
    readonly range: UidRange = DEFAULT_SANDBOX_UID_RANGE,
    private readonly lockDir: string = DEFAULT_UID_LOCK_DIR,
  ) {
    this.count = range.last - range.first + 1;
    this.owner = `${process.pid} ${processStart(process.pid) ?? '?'}\n`;
  }

  /** A uid no other sandbox (of this node or another on the host) holds; throws SandboxUidsExhausted. */
  async acquire(): Promise<number> {
    this.ready ??= this.prepare();
    await this.ready;
    for (let i = 0; i < this.count; i++) {
      const uid = this.range.first + ((this.cursor + i) % this.count);
      if (this.held.has(uid)) continue;
      this.held.add(uid);
      try {
        await fs.promises.writeFile(this.entry(uid), this.owner, { flag: 'wx', mode: 0o600 });
      } catch (err) {
        this.held.delete(uid);
        if ((err as NodeJS.ErrnoException).code === 'EEXIST') continue;
        throw err;
      }
      this.cursor = (this.cursor + i + 1) % this.count;
      return uid;
    }
    throw new SandboxUidsExhausted(
      `all ${this.count} sandbox uids (${this.range.first}-${this.range.last}, ALGOHOST_SANDBOX_UID_RANGE) are in use or still have processes; ` +
        'widen the range or lower ALGOHOST_MAX_RUNNERS and ALGOHOST_BUILD_CONCURRENCY',
    );
  }

  /**
   * Kills every process of `uid` and waits until none is left; false when some outlived the
   * wait (the uid then stays held, never given again while this node runs).
   */
  async reap(uid: number, waitMs = REAP_WAIT_MS): Promise<boolean> {
    const until = Date.now() + waitMs;
    for (let delay = 5; ; delay = Math.min(delay * 2, 500)) {
      const pids = await processesOf(uid);
      if (pids.length === 0) return true;
      for (const pid of pids) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone meanwhile
        }
      }
      if (Date.now() > until) return false;
      await new Promise((r) => setTimeout(r, delay));
    }
  }

  /** Returns a uid whose processes are gone (reap) and whose files were handed back. */
  async release(uid: number): Promise<void> {
    await fs.promises.rm(this.entry(uid), { force: true });
    this.held.delete(uid);
  }

  private entry(uid: number): string {
    return path.join(this.lockDir, String(uid));
  }

  /**
   * Makes the entries' directory (root-only: a sandbox or a local user must not hold or free a
   * uid) and takes back the entries of nodes that are gone.
   */
  private async prepare(): Promise<void> {
    await fs.promises.mkdir(this.lockDir, { recursive: true, mode: 0o700 });
    const st = await fs.promises.lstat(this.lockDir);
    if (!st.isDirectory() || st.uid !== process.getuid?.() || (st.mode & 0o077) !== 0) {
      throw new Error(`${this.lockDir} must be a directory of the service's user that no one else may use (mode 0700)`);
    }
    for (const name of await fs.promises.readdir(this.lockDir)) {
      const uid = Number(name);
      if (!/^\d+$/.test(name) || uid < this.range.first || uid > this.range.last) continue;
      const text = await fs.promises.readFile(this.entry(uid), 'utf8').catch(() => undefined);
      if (text === undefined || ownerRuns(text)) continue;
      // Its node is gone (its sandboxes died with it: bubblewrap's --die-with-parent). Moved
      // aside first, so that of two nodes starting at once only one takes it back.
      const aside = `${this.entry(uid)}.stale-${process.pid}`;
      try {
        await fs.promises.rename(this.entry(uid), aside);
      } catch {
        continue;
      }
      if ((await fs.promises.readFile(aside, 'utf8').catch(() => undefined)) !== text) {
        // Another node took it back and gave it out meanwhile: put its entry back.
        await fs.promises.link(aside, this.entry(uid)).catch(() => {});
      } else if (!(await this.reap(uid))) {
        await fs.promises.writeFile(this.entry(uid), this.owner, { flag: 'wx', mode: 0o600 }).catch(() => {});
        this.held.add(uid);
      }
      await fs.promises.rm(aside, { force: true });
    }
  }
}

/**
 * Gives the directories a sandbox wrote back to the service: owned by it again, its modes made
 * plain (directories 0755, files 0644 or 0755; no setuid, setgid or sticky bit), so that what a
 * build step made is readable by the runners and later steps, whatever their uid, and writable
 * by none of them until handed over again. Links are changed themselves, never followed.
 */
export async function handBack(dirs: readonly string[]): Promise<void> {
  if (dirs.length === 0) return;
  const owner = `${process.getuid?.() ?? 0}:${process.getgid?.() ?? 0}`;
  await execFileAsync('chown', ['-R', '-P', '-h', '--', owner, ...dirs]);
  await execFileAsync('chmod', ['-R', '--', 'u=rwX,go=rX,a-st', ...dirs]);
}

/** Hands the directories to a sandbox's uid (gid the same), links themselves, before it starts. */
export async function handOver(dirs: readonly string[], uid: number): Promise<void> {
  if (dirs.length === 0) return;
  await execFileAsync('chown', ['-R', '-P', '-h', '--', `${uid}:${uid}`, ...dirs]);
}

/**
 * Takes the lease `file` for this process (a file made with O_EXCL naming the process, as the
 * uid entries are): the function that gives it up, or undefined while a running process holds
 * it. A lease left by a process that is gone is taken over.
 */
export async function takeLease(file: string): Promise<(() => Promise<void>) | undefined> {
  const owner = `${process.pid} ${processStart(process.pid) ?? '?'}\n`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await fs.promises.writeFile(file, owner, { flag: 'wx', mode: 0o600 });
      return () => fs.promises.rm(file, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const text = await fs.promises.readFile(file, 'utf8').catch(() => undefined);
    if (text === undefined || ownerRuns(text)) return undefined;
    // Moved aside, then checked: of two processes taking it over at once only one removes it.
    const aside = `${file}.stale-${process.pid}`;
    if (
      !(await fs.promises.rename(file, aside).then(
        () => true,
        () => false,
      ))
    )
      continue;
    if ((await fs.promises.readFile(aside, 'utf8').catch(() => undefined)) !== text) await fs.promises.link(aside, file).catch(() => {});
    await fs.promises.rm(aside, { force: true });
  }
  return undefined;
}

/** Whether the process an entry names ("pid start-time") still runs. */
function ownerRuns(text: string): boolean {
  const [pid, start] = text.trim().split(' ');
  return pid !== undefined && start !== undefined && /^\d+$/.test(pid) && processStart(Number(pid)) === start;
}

/**
 * The pids of the host whose real, effective, saved or file-system uid is `uid`, zombies left
 * out. A zombie has exited (every thread of it: see threadsRun): it runs no code, holds no file,
 * memory or namespace, and only waits for its parent to collect its status. A sandbox's inner
 * bwrap is one as it ends: orphaned, it waits for the host's init, which may collect it late
 * (seconds on some VMs) or never (a container whose PID 1 is Node). Counting it would hold the
 * end of every sandbox, and there the uid for ever.
 */
async function processesOf(uid: number): Promise<number[]> {
  const pids: number[] = [];
  const want = String(uid);
  const names = (await fs.promises.readdir('/proc')).filter((name) => /^\d+$/.test(name));
  // Read side by side, a batch at a time: a third of the CPU of one file after the other (this
  // runs at the end of every sandbox), and no more files open at once than a batch.
  for (let i = 0; i < names.length; i += PROC_SCAN_BATCH) {
    const batch = names.slice(i, i + PROC_SCAN_BATCH);
    const statuses = await Promise.all(batch.map((name) => fs.promises.readFile(`/proc/${name}/status`, 'utf8').catch(() => '')));
    for (const [j, status] of statuses.entries()) {
      const line = /^Uid:\s*(.*)$/m.exec(status)?.[1];
      if (!line?.split(/\s+/).includes(want)) continue;
      if (DEAD.test(status) && !(await threadsRun(batch[j]!))) continue;
      pids.push(Number(batch[j]));
    }
  }
  return pids;
}

/** A task's State line when it has exited: a zombie (Z) or dead (X). */
const DEAD = /^State:\s*[ZX]/m;

/**
 * Whether a process whose first thread shows as a zombie still has a thread that runs: the
 * first thread of a process may exit alone (pthread_exit) and show as a zombie while the others
 * run on, with the uid. Such a process is still the uid's, and gets the reap's SIGKILL.
 */
async function threadsRun(pid: string): Promise<boolean> {
  const tids = await fs.promises.readdir(`/proc/${pid}/task`).catch(() => [] as string[]);
  for (const tid of tids) {
    const status = await fs.promises.readFile(`/proc/${pid}/task/${tid}/status`, 'utf8').catch(() => '');
    if (status && !DEAD.test(status)) return true;
  }
  return false;
}

/** A process's start time (field 22 of /proc/<pid>/stat), which tells it from a later one of the same pid. */
function processStart(pid: number): string | undefined {
  try {
    // eslint-disable-next-line no-restricted-syntax -- one small /proc file: at start-up, and per stale entry
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}
