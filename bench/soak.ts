/**
 * Soak (issue 17): mixed traffic for a long time at half the capacity measured in the same run,
 * watching for what grows.
 *
 * 1. Capacity: each kind of request alone, closed loop (workers that send the next request when
 *    the last one answered) for a few seconds: calls of a warm no-op Python algorithm, pushes
 *    (push → build succeeded, `-o wait`), data uploads (64 KiB PUT), data downloads (64 KiB GET)
 *    and listings (a collection of 60 files).
 * 2. Soak: all five kinds at once, open loop (requests start on a fixed schedule whether or not
 *    the earlier ones have answered; latency counts from the scheduled start), each kind at
 *    half its capacity divided by the number of kinds, so that together they ask for about half
 *    of what the node can do.
 * 3. Per kind, the p99 of each minute; the server's RSS; its open file descriptors and the
 *    cgroups below it, at rest before and after the soak. The server runs in cgroups of its own
 *    (cgroup v1 hosts), so that the count is of its own sandboxes, not those of other servers
 *    on the machine.
 *
 * Targets: p99 flat (the last minute's p99 ≤ 1.5 × the first minute's, or within 2 ms of it),
 * server RSS growth < 10 %, no growth of open file descriptors or cgroups.
 *
 * Run: node --import tsx bench/soak.ts [--minutes=10] [--capacity-seconds=10]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Algohost, api, deployNoop, git, gitAsync, gitUrl, report, rssMb, startAlgohost, tempDir } from './support.js';

const arg = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const MINUTES = Number(arg('minutes') ?? 10);
const CAPACITY_SECONDS = Number(arg('capacity-seconds') ?? 10);
const MINUTE_MS = 60_000;
const FILE = Buffer.alloc(64 * 1024, 7);
const FILES_LISTED = 60;
const PUSH_REPOS = 4;
/** Requests of one kind allowed in flight in the soak; past it a scheduled one is counted as dropped. */
const MAX_OUTSTANDING = 2000;

type Kind = 'call' | 'push' | 'upload' | 'download' | 'listing';
const KINDS: Kind[] = ['call', 'push', 'upload', 'download', 'listing'];
const WORKERS: Record<Kind, number> = { call: 16, push: 2, upload: 8, download: 8, listing: 8 };

// --- the server in cgroups of its own -----------------------------------------------------------

/** v1 groups (memory, pids, cpu) below this process's own, for the server; undefined elsewhere. */
function makeServerGroups(): string[] | undefined {
  if (!fs.existsSync('/sys/fs/cgroup/memory/cgroup.procs')) return undefined;
  const own = (controller: string) =>
    fs
      .readFileSync('/proc/self/cgroup', 'utf8')
      .split('\n')
      .map((l) => l.split(':'))
      .find((f) => f[1]?.split(',').includes(controller))?.[2] ?? '/';
  const dirs = ['memory', 'pids', 'cpu'].map((c) => path.join('/sys/fs/cgroup', c, own(c), `algohost-soak-${process.pid}`));
  try {
    for (const d of dirs) fs.mkdirSync(d, { recursive: true });
  } catch {
    return undefined;
  }
  return dirs;
}

function countGroups(dir: string): number {
  let n = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory()) n += 1 + countGroups(path.join(dir, e.name));
  }
  return n;
}

/** Removes the server's groups, deepest first (its sandboxes' base group stays after it exits). */
function removeGroups(dirs: string[]): void {
  const remove = (dir: string): void => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) remove(path.join(dir, e.name));
    fs.rmdirSync(dir);
  };
  for (const d of dirs) {
    try {
      remove(d);
    } catch (err) {
      // A group still holding a process stays; say so rather than fail the run.
      console.error(`could not remove ${d}: ${(err as Error).message}`);
    }
  }
}

/** The process's open file descriptors by what they are: sockets, pipes, files… */
function fds(pid: number): { total: number; kinds: string } {
  const kinds = new Map<string, number>();
  const names = fs.readdirSync(`/proc/${pid}/fd`);
  for (const fd of names) {
    let target: string;
    try {
      target = fs.readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue; // closed meanwhile
    }
    const kind = /^(socket|pipe|anon_inode):/.exec(target)?.[1] ?? 'file';
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
  }
  return {
    total: names.length,
    kinds: [...kinds]
      .sort()
      .map(([k, n]) => `${n} ${k}`)
      .join(', '),
  };
}

// --- the five kinds of request --------------------------------------------------------------------

interface Target {
  url: string;
  key: string;
  noop: string;
  /** Checkouts of the algorithms pushed to, each used by one push at a time. */
  repos: { dir: string; name: string; n: number }[];
}

async function check(res: Response, what: string): Promise<void> {
  // The body is read whole in every case: a download is not done until its last byte.
  const body = await res.arrayBuffer();
  if (!res.ok) throw new Error(`${what}: ${res.status} ${Buffer.from(body).toString().slice(0, 200)}`);
}

let uploads = 0;
let downloads = 0;
const free: Target['repos'] = [];
const waiting: ((r: Target['repos'][number]) => void)[] = [];
const takeRepo = () => new Promise<Target['repos'][number]>((resolve) => (free.length ? resolve(free.pop()!) : waiting.push(resolve)));
const giveRepo = (r: Target['repos'][number]) => (waiting.length ? waiting.shift()!(r) : free.push(r));

function operation(t: Target, kind: Kind): () => Promise<void> {
  const auth = { authorization: `Simple ${t.key}` };
  switch (kind) {
    case 'call':
      return async () =>
        check(await fetch(t.noop, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{"x":1}' }), 'call');
    case 'upload':
      return async () =>
        check(
          await fetch(`${t.url}/v1/data/bench/soak/u${uploads++ % 50}`, {
            method: 'PUT',
            headers: { ...auth, 'content-type': 'application/octet-stream' },
            body: FILE,
          }),
          'upload',
        );
    case 'download':
      return async () => check(await fetch(`${t.url}/v1/data/bench/soak/d${downloads++ % 10}`, { headers: auth }), 'download');
    case 'listing':
      return async () => check(await fetch(`${t.url}/v1/data/bench/listed?limit=${FILES_LISTED}`, { headers: auth }), 'listing');
    case 'push':
      // A new commit to one of a few algorithms, pushed with `-o wait`: done when its build has succeeded.
      return async () => {
        const repo = await takeRepo();
        try {
          repo.n++;
          await fs.promises.appendFile(path.join(repo.dir, 'src', `${repo.name}.py`), `# soak ${repo.n}\n`);
          await gitAsync(['commit', '-q', '-am', `soak ${repo.n}`], repo.dir);
          await gitAsync(['push', '-q', '-o', 'wait', 'origin', 'HEAD:main'], repo.dir);
        } finally {
          giveRepo(repo);
        }
      };
  }
}

async function setUp(h: Algohost, work: string): Promise<Target> {
  const { url } = h;
  const { target, key } = await deployNoop(h, work);
  const repos: Target['repos'] = [];
  for (let i = 0; i < PUSH_REPOS; i++) {
    const name = `Pushed${i}`;
    await api(url, key, 'POST', '/v1/algorithms/bench', { name });
    const dir = path.join(work, name);
    git(['clone', '-q', gitUrl(url, 'bench', key, 'bench', name), dir]);
    fs.writeFileSync(path.join(dir, 'src', `${name}.py`), 'def apply(input):\n    return input\n');
    git(['commit', '-q', '-am', 'first'], dir);
    git(['push', '-q', '-o', 'wait', 'origin', 'HEAD:main'], dir);
    repos.push({ dir, name, n: 0 });
  }
  free.push(...repos);
  await api(url, key, 'POST', '/v1/data/bench', { name: 'soak' });
  await api(url, key, 'POST', '/v1/data/bench', { name: 'listed' });
  const put = (p: string) =>
    fetch(`${url}/v1/data/bench/${p}`, { method: 'PUT', headers: { authorization: `Simple ${key}` }, body: FILE }).then((r) =>
      check(r, `PUT ${p}`),
    );
  for (let i = 0; i < 10; i++) await put(`soak/d${i}`);
  for (let i = 0; i < FILES_LISTED; i++) await put(`listed/f${String(i).padStart(2, '0')}`);
  return { url, key, noop: target, repos };
}

// --- measuring --------------------------------------------------------------------------------------

/** Requests per second of `op` alone, with `workers` closed loops for `seconds`. */
async function capacity(op: () => Promise<void>, workers: number, seconds: number): Promise<number> {
  const end = Date.now() + seconds * 1000;
  const start = Date.now();
  let done = 0;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (Date.now() < end) {
        await op();
        done++;
      }
    }),
  );
  return done / ((Date.now() - start) / 1000);
}

interface KindStats {
  rate: number;
  /** Latencies (ms) of each minute, counted from the scheduled start. */
  minutes: number[][];
  errors: number;
  dropped: number;
  firstError?: string;
}

/** Runs every kind at its rate for `ms`, open loop; resolves when the last request has answered. */
async function soak(ops: Record<Kind, () => Promise<void>>, rates: Record<Kind, number>, ms: number): Promise<Record<Kind, KindStats>> {
  const t0 = performance.now();
  const stats = Object.fromEntries(
    KINDS.map((k) => [k, { rate: rates[k], minutes: [], errors: 0, dropped: 0 } satisfies KindStats]),
  ) as unknown as Record<Kind, KindStats>;
  const pending: Promise<void>[] = [];
  await Promise.all(
    KINDS.map(async (kind) => {
      const s = stats[kind];
      const interval = 1000 / rates[kind];
      let outstanding = 0;
      for (let i = 0; ; i++) {
        const scheduled = t0 + i * interval;
        if (scheduled - t0 >= ms) break;
        const wait = scheduled - performance.now();
        if (wait > 1) await new Promise((r) => setTimeout(r, wait));
        const minute = Math.floor((scheduled - t0) / MINUTE_MS);
        if (outstanding >= MAX_OUTSTANDING) {
          s.dropped++;
          continue;
        }
        outstanding++;
        pending.push(
          ops[kind]()
            .then(
              () => ((s.minutes[minute] ??= []).push(performance.now() - scheduled), undefined),
              (err: unknown) => {
                s.errors++;
                s.firstError ??= err instanceof Error ? err.message : String(err);
              },
            )
            .finally(() => outstanding--),
        );
      }
    }),
  );
  await Promise.all(pending);
  return stats;
}

function p99(xs: number[] | undefined): number {
  if (!xs?.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(s.length * 0.99) - 1)]!;
}

/**
 * Lets idle keep-alive connections close (the server closes them after 5 s idle here) and
 * background work finish, so that counts are taken at rest.
 */
const settle = () => new Promise((r) => setTimeout(r, 10_000));

// --- the run ------------------------------------------------------------------------------------------

const groups = makeServerGroups();
const work = tempDir('bench-soak-');
// Idle keep-alive connections close after 5 s (not the default 72 s), so that the descriptors
// counted at rest are the server's own, not the load generator's parked connections.
const h = await startAlgohost(
  { ALGOHOST_DATA_QUOTA: '0', ALGOHOST_KEEP_ALIVE_TIMEOUT: '5' },
  groups ? { cgroupProcs: groups.map((d) => path.join(d, 'cgroup.procs')) } : {},
);
const pid = h.process.pid!;
let cleaned: Promise<void> | undefined;
const cleanUp = () =>
  (cleaned ??= (async () => {
    await h.stop();
    if (groups) removeGroups(groups);
    fs.rmSync(work, { recursive: true, force: true });
  })());
// Interrupted (Ctrl-C): the server, its groups and the checkouts go too.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void cleanUp().then(() => process.exit(130)));
const cgroups = () => (groups ? countGroups(groups[0]!) : NaN);
try {
  const load0 = os.loadavg();
  const t = await setUp(h, work);
  const ops = Object.fromEntries(KINDS.map((k) => [k, operation(t, k)])) as Record<Kind, () => Promise<void>>;

  const caps = {} as Record<Kind, number>;
  for (const k of KINDS) {
    caps[k] = await capacity(ops[k], WORKERS[k], CAPACITY_SECONDS);
    console.log(`capacity of ${k} alone: ${caps[k].toFixed(1)}/s`);
  }
  const rates = Object.fromEntries(KINDS.map((k) => [k, (caps[k] * 0.5) / KINDS.length])) as Record<Kind, number>;

  await settle();
  const before = { rss: rssMb(pid), fds: fds(pid), cgroups: cgroups() };
  const rssEachMinute: number[] = [];
  const fdsEachMinute: number[] = [];
  const loadEachMinute: number[] = [];
  const sampler = setInterval(() => {
    rssEachMinute.push(rssMb(pid));
    fdsEachMinute.push(fds(pid).total);
    loadEachMinute.push(os.loadavg()[0]!);
  }, MINUTE_MS);
  console.log(`soaking for ${MINUTES} min at ${KINDS.map((k) => `${k} ${rates[k].toFixed(2)}/s`).join(', ')}`);
  const stats = await soak(ops, rates, MINUTES * MINUTE_MS);
  clearInterval(sampler);
  await settle();
  const after = { rss: rssMb(pid), fds: fds(pid), cgroups: cgroups() };
  const load1 = os.loadavg();

  const minutes = Math.ceil(MINUTES);
  const header = ['kind', 'rate/s', ...Array.from({ length: minutes }, (_, i) => `m${i + 1}`), 'last/first', 'errors', 'dropped'];
  const rows = KINDS.map((k) => {
    const s = stats[k];
    const per = Array.from({ length: minutes }, (_, i) => p99(s.minutes[i]));
    const first = per[0]!;
    const last = per[per.length - 1]!;
    return [k, s.rate.toFixed(2), ...per.map((v) => v.toFixed(0)), (last / first).toFixed(2), String(s.errors), String(s.dropped)];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  console.log(`\np99 latency per minute (ms), open loop, counted from the scheduled start`);
  for (const r of [header, ...rows]) console.log(r.map((c, i) => c.padStart(widths[i]!)).join('  '));
  for (const k of KINDS) if (stats[k].firstError) console.log(`first ${k} error: ${stats[k].firstError}`);

  const flat = KINDS.filter((k) => {
    const m = stats[k].minutes;
    const first = p99(m[0]);
    const last = p99(m[minutes - 1]);
    return last <= Math.max(1.5 * first, first + 2);
  });
  const rssGrowth = (after.rss - before.rss) / before.rss;
  const verdicts: [string, boolean][] = [
    [
      `p99 flat for ${flat.length} of ${KINDS.length} kinds (${KINDS.filter((k) => !flat.includes(k)).join(', ') || 'all flat'})`,
      flat.length === KINDS.length,
    ],
    [
      `server RSS ${before.rss.toFixed(0)} → ${after.rss.toFixed(0)} MB (${(rssGrowth * 100).toFixed(1)} %; target < 10 %)`,
      rssGrowth < 0.1,
    ],
    [
      `open file descriptors at rest ${before.fds.total} (${before.fds.kinds}) → ${after.fds.total} (${after.fds.kinds}) (target: no growth)`,
      after.fds.total <= before.fds.total,
    ],
    [`cgroups below the server ${before.cgroups} → ${after.cgroups} (target: no growth)`, !(after.cgroups > before.cgroups)],
    [`no errors`, KINDS.every((k) => stats[k].errors === 0 && stats[k].dropped === 0)],
  ];
  console.log('');
  report([
    ['capacity alone (per s)', KINDS.map((k) => `${k} ${caps[k].toFixed(1)}`).join(', ')],
    ['server RSS each minute (MB)', rssEachMinute.map((r) => r.toFixed(0)).join(' ')],
    ['server open file descriptors each minute', fdsEachMinute.join(' ')],
    ['load average (1 min) each minute', loadEachMinute.map((l) => l.toFixed(1)).join(' ')],
    ['load average (1 min) before / after', `${load0[0]!.toFixed(2)} / ${load1[0]!.toFixed(2)} on ${os.cpus().length} cores`],
    ...verdicts.map(([what, ok]) => [ok ? 'met' : 'MISSED', what] as [string, string]),
    ['verdict', verdicts.every(([, ok]) => ok) ? 'all targets met' : 'targets missed (see above)'],
  ]);
} finally {
  await cleanUp();
}
