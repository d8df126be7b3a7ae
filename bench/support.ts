/** Shared bench helpers: start a real algohost process, run commands, summarise timings. */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import autocannon from 'autocannon';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));

export const GIT_ENV: NodeJS.ProcessEnv = {
  PATH: process.env.PATH,
  HOME: '/nonexistent',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_TERMINAL_PROMPT: '0',
  GIT_AUTHOR_NAME: 'Bench',
  GIT_AUTHOR_EMAIL: 'bench@example.test',
  GIT_COMMITTER_NAME: 'Bench',
  GIT_COMMITTER_EMAIL: 'bench@example.test',
};

export function git(args: string[], cwd?: string): string {
  return execFileSync('git', args, { cwd, env: GIT_ENV, stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 28 }).toString();
}

/** The same, without blocking the event loop (needed when a server runs in this process). */
export function gitAsync(args: string[], cwd?: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { cwd, env: GIT_ENV, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`git ${args[0]} failed: ${err}`))));
  });
}

export function tempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  fs.chmodSync(dir, 0o711);
  return dir;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

export interface Algohost {
  url: string;
  adminKey: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

export interface StartOptions {
  /** A checkout of algohost to run (default: this one); its server is compiled first, as `npm start` does. */
  root?: string;
  /**
   * cgroup.procs files the server process joins before Node starts (so that the groups its
   * sandboxes make sit below them, apart from other servers on the machine).
   */
  cgroupProcs?: string[];
  /** Node flags for the server process, after ALGOHOST_BENCH_NODE_FLAGS (say `--trace-gc-nvp`). */
  nodeFlags?: string[];
  /** Gets what the server prints on stdout (otherwise passed through to this process's stdout). */
  onStdout?: (text: string) => void;
}

/**
 * Starts algohost as `npm start` does: the server compiled to JavaScript (scripts/build-server.ts)
 * run by plain Node. ALGOHOST_BENCH_NODE_FLAGS adds flags for the server process (for example
 * `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile it, or `--trace-gc`).
 */
export async function startAlgohost(env: Record<string, string> = {}, opts: StartOptions = {}): Promise<Algohost> {
  const root = opts.root ?? ROOT;
  execFileSync(process.execPath, ['--import', 'tsx', path.join(root, 'scripts/build-server.ts')], { cwd: root, stdio: 'inherit' });
  const dataDir = tempDir('algohost-bench-');
  const port = await freePort();
  const adminKey = 'simBENCHBENCHBENCHBENCHBENCH';
  const flags = [...(process.env.ALGOHOST_BENCH_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean), ...(opts.nodeFlags ?? [])];
  const command = [process.execPath, ...flags, path.join(root, 'packages/server/dist/main/start.js')];
  // sh writes its own pid (which exec keeps for Node) into each group, then becomes the server.
  const joined = opts.cgroupProcs?.length
    ? ['/bin/sh', '-c', 'for f in $ALGOHOST_BENCH_CGROUPS; do echo $$ > "$f" || exit 1; done; exec "$@"', 'sh', ...command]
    : command;
  const child = spawn(joined[0]!, joined.slice(1), {
    cwd: root,
    env: {
      ...process.env,
      ...(opts.cgroupProcs?.length ? { ALGOHOST_BENCH_CGROUPS: opts.cgroupProcs.join(' ') } : {}),
      ALGOHOST_PORT: String(port),
      ALGOHOST_DATA_DIR: dataDir,
      ALGOHOST_ADMIN_KEY: adminKey,
      ALGOHOST_LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', opts.onStdout ? 'pipe' : 'inherit', 'inherit'],
  });
  if (opts.onStdout) child.stdout!.setEncoding('utf8').on('data', opts.onStdout);
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    try {
      if ((await fetch(`${url}/healthz`)).ok) break;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return {
    url,
    adminKey,
    process: child,
    stop: async () => {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface Baseline {
  url: string;
  pid: number;
  close(): void;
}

/**
 * The warm-call baseline (bench/bare-baseline.ts) in a process of its own, as algohost runs in
 * its own, serving the algorithm checked out in `appDir`. `nodeFlags` go to its Node; `onStdout`
 * gets what it prints after its "listening" line.
 */
export async function startBaseline(
  appDir: string,
  opts: { nodeFlags?: string[]; onStdout?: (text: string) => void } = {},
): Promise<Baseline> {
  const child = spawn(process.execPath, [...(opts.nodeFlags ?? []), '--import', 'tsx', path.join(ROOT, 'bench/bare-baseline.ts'), appDir], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  child.stdout.setEncoding('utf8');
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const onData = (d: string) => {
      out += d;
      const m = /listening (\S+)/.exec(out);
      if (!m) return;
      child.stdout.off('data', onData);
      if (opts.onStdout) child.stdout.on('data', opts.onStdout);
      else child.stdout.resume();
      resolve(m[1]!);
    };
    child.stdout.on('data', onData);
    child.once('exit', (code) => reject(new Error(`the baseline exited (${code}) before listening`)));
  });
  return { url, pid: child.pid!, close: () => child.kill('SIGTERM') };
}

export async function api(base: string, key: string, method: string, p: string, body?: unknown): Promise<any> {
  const res = await fetch(base + p, {
    method,
    headers: { authorization: `Simple ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

/** A user with a standard key. */
export async function benchUser(h: Algohost, name: string): Promise<string> {
  await api(h.url, h.adminKey, 'POST', '/v1/users', { username: name, email: `${name}@example.test` });
  return (await api(h.url, h.adminKey, 'POST', `/v1/users/${name}/keys`, {})).key as string;
}

export function gitUrl(base: string, user: string, key: string, owner: string, name: string): string {
  const u = new URL(base);
  return `http://${user}:${encodeURIComponent(key)}@${u.host}/git/${owner}/${name}.git`;
}

export function time(fn: () => void): number {
  const t = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - t) / 1e6;
}

export async function timeAsync(fn: () => Promise<unknown>): Promise<number> {
  const t = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t) / 1e6;
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** Resident memory of a process in MB, from /proc. */
export function rssMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
}

export function report(rows: [string, string][]): void {
  const w = Math.max(...rows.map((r) => r[0].length));
  for (const [k, v] of rows) console.log(`${k.padEnd(w)}  ${v}`);
}

const NOOP_PYTHON = `def apply(input):\n    return input\n`;

/**
 * A no-op Python algorithm pushed to `h` by a new user, built and called once (warm): its call
 * URL by commit, the user's key and the checkout (which the bare baseline runs).
 */
export async function deployNoop(h: Algohost, work: string): Promise<{ target: string; key: string; dir: string }> {
  const key = await benchUser(h, 'bench');
  return deployPython(h, work, { key, name: 'Noop', source: NOOP_PYTHON });
}

/**
 * A Python algorithm `name` of the user `bench` (whose key is `key`) with `source` as its code,
 * pushed, built and called once (warm on some node): its call URL by commit.
 */
export async function deployPython(
  h: Algohost,
  work: string,
  o: { key: string; name: string; source: string },
): Promise<{ target: string; key: string; dir: string }> {
  const { key, name } = o;
  await api(h.url, key, 'POST', '/v1/algorithms/bench', { name });
  const dir = path.join(work, name.toLowerCase());
  git(['clone', '-q', gitUrl(h.url, 'bench', key, 'bench', name), dir]);
  fs.writeFileSync(path.join(dir, 'src', `${name}.py`), o.source);
  git(['commit', '-q', '-am', name], dir);
  git(['push', '-q', '-o', 'wait', 'origin', 'HEAD:main'], dir);
  const sha = git(['rev-parse', 'HEAD'], dir).trim();
  const target = `${h.url}/v1/algo/bench/${name}/${sha}`;
  await fetch(target, { method: 'POST', headers: { authorization: `Simple ${key}`, 'content-type': 'application/json' }, body: '1' });
  return { target, key, dir };
}

/** Busy and total CPU time of the whole machine so far, in clock ticks (/proc/stat). */
export function machineTicks(): { busy: number; total: number } {
  const [, ...f] = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
  const n = f.map(Number);
  const total = n.slice(0, 8).reduce((a, b) => a + b, 0);
  return { busy: total - n[3]! - n[4]!, total }; // less idle and iowait
}

/** The load averages (1, 5, 15 min), to print beside a run. */
export function loadAverage(): string {
  return fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}

/** CPU seconds (user + system) a process has used so far, from /proc (clock ticks of 10 ms). */
export function cpuSeconds(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime
}

export interface LoadOptions {
  url: string;
  /** API key sent as `Simple <key>` (none for the bare baseline). */
  key?: string;
  /** The server process, whose CPU time per call is reported. */
  serverPid: number;
  connections: number;
  seconds: number;
  /** Calls per second in all (default: as fast as the server answers). */
  rate?: number;
}

/**
 * POSTs `{"x":1}` to a call URL with autocannon. calls/s swing with whatever else the machine
 * runs; the server's CPU time per call far less.
 */
export async function load(o: LoadOptions) {
  const cpu0 = cpuSeconds(o.serverPid);
  const r = await autocannon({
    url: o.url,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(o.key ? { authorization: `Simple ${o.key}` } : {}) },
    body: '{"x":1}',
    connections: o.connections,
    duration: o.seconds,
    ...(o.rate ? { overallRate: o.rate } : {}),
  });
  const cpuMsPerCall = ((cpuSeconds(o.serverPid) - cpu0) * 1000) / r.requests.total;
  return { p50: r.latency.p50, p99: r.latency.p99, rps: r.requests.average, errors: r.errors + r.non2xx, cpuMsPerCall };
}

/**
 * One call at a time over one kept-alive connection, timed to the microsecond (autocannon's
 * latencies are whole milliseconds, too coarse for a sub-millisecond budget): p50 and p99 in ms.
 */
export async function sequentialLatency(url: string, key: string, calls: number): Promise<{ p50: number; p99: number }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const u = new URL(url);
  const body = '{"x":1}';
  const one = () =>
    new Promise<number>((resolve, reject) => {
      const t = process.hrtime.bigint();
      const req = http.request(
        {
          host: u.hostname,
          port: u.port,
          path: u.pathname,
          method: 'POST',
          agent,
          headers: { authorization: `Simple ${key}`, 'content-type': 'application/json', 'content-length': body.length },
        },
        (res) => {
          res.resume();
          res.on('end', () =>
            res.statusCode === 200 ? resolve(Number(process.hrtime.bigint() - t) / 1e6) : reject(new Error(`HTTP ${res.statusCode}`)),
          );
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  for (let i = 0; i < 50; i++) await one(); // the connection and the runner warm
  const times: number[] = [];
  for (let i = 0; i < calls; i++) times.push(await one());
  agent.destroy();
  return { p50: percentile(times, 0.5), p99: percentile(times, 0.99) };
}

/**
 * Calls at a fixed rate for `seconds`, each timed to the microsecond from the millisecond tick
 * at which it was due (autocannon's latencies are whole ms). A small raw HTTP/1.1 client over `connections`
 * kept-alive sockets (Node's http client costs more CPU per call than the servers measured):
 * calls go out in the batches due at each millisecond tick, each on an idle socket (a call due
 * while all are busy waits for one, and its wait counts), and the generator sleeps between
 * ticks, leaving the cores to the servers. The same offered load on two servers compares their
 * latency; at saturation latency only mirrors throughput (connections / calls per second).
 */
export async function pacedLatency(
  url: string,
  key: string | undefined,
  rate: number,
  seconds: number,
  connections = 16,
): Promise<{ p50: number; p99: number; calls: number; errors: number }> {
  const u = new URL(url);
  const request = noopCall(u, key);
  const times: number[] = [];
  let errors = 0;
  const due: bigint[] = [];
  const idle: net.Socket[] = [];
  let outstanding = 0;
  let allSent = false;
  let closedEarly = 0;
  let finished: () => void = () => {};
  const done = new Promise<void>((r) => (finished = r));
  const dispatch = () => {
    while (due.length && idle.length) {
      // Round robin: no socket sits idle long enough for the server's keep-alive timeout.
      const socket = idle.shift()!;
      (socket as net.Socket & { due?: bigint }).due = due.shift()!;
      socket.write(request);
    }
    if (allSent && !due.length && outstanding === 0) finished();
  };
  const sockets = await Promise.all(
    Array.from({ length: connections }, () => {
      return new Promise<net.Socket>((resolve, reject) => {
        const socket = net.connect(Number(u.port), u.hostname, () => resolve(socket));
        socket.setNoDelay(true);
        socket.once('error', reject);
        socket.once('close', () => {
          if (!allSent || outstanding > 0) closedEarly++;
        });
        onResponses(socket, (ok) => {
          const sent = (socket as net.Socket & { due?: bigint }).due!;
          if (ok) times.push(Number(process.hrtime.bigint() - sent) / 1e6);
          else errors++;
          outstanding--;
          idle.push(socket);
          dispatch();
        });
      });
    }),
  );
  idle.push(...sockets);
  const start = process.hrtime.bigint();
  const total = Math.round(rate * seconds);
  const intervalNs = 1e9 / rate;
  let queued = 0;
  while (queued < total) {
    const now = process.hrtime.bigint();
    while (queued < total && start + BigInt(Math.round(queued * intervalNs)) <= now) {
      // Timed from this tick: a wait for a free socket counts.
      due.push(process.hrtime.bigint());
      outstanding++;
      queued++;
    }
    dispatch();
    await new Promise((r) => setTimeout(r, 1));
  }
  allSent = true;
  dispatch();
  await done;
  if (closedEarly) throw new Error(`the server closed ${closedEarly} of the ${connections} connections during the run`);
  for (const socket of sockets) socket.destroy();
  return { p50: percentile(times, 0.5), p99: percentile(times, 0.99), calls: times.length, errors };
}

/**
 * Flat out, timed to the microsecond (autocannon's latencies are whole milliseconds, which makes
 * a p99 of 2.6 and one of 2.4 ms look 3 and 2): `connections` keep-alive connections, each
 * sending its next call the moment the answer to its last one has arrived, for `seconds`.
 */
export async function closedLoopLatency(
  url: string,
  key: string | undefined,
  seconds: number,
  connections = 16,
): Promise<{ p50: number; p99: number; rps: number; errors: number }> {
  const u = new URL(url);
  const request = noopCall(u, key);
  const times: number[] = [];
  let errors = 0;
  const end = Date.now() + seconds * 1000;
  await Promise.all(
    Array.from(
      { length: connections },
      () =>
        new Promise<void>((resolve, reject) => {
          let sent = 0n;
          const send = () => {
            sent = process.hrtime.bigint();
            socket.write(request);
          };
          const socket = net.connect(Number(u.port), u.hostname, send);
          socket.setNoDelay(true);
          socket.once('error', reject);
          onResponses(socket, (ok) => {
            if (ok) times.push(Number(process.hrtime.bigint() - sent) / 1e6);
            else errors++;
            if (Date.now() < end) return send();
            socket.destroy();
            resolve();
          });
        }),
    ),
  );
  return { p50: percentile(times, 0.5), p99: percentile(times, 0.99), rps: times.length / seconds, errors };
}

/** The load generators' call: a no-op's JSON input to `u`, with `key` when given. */
function noopCall(u: URL, key: string | undefined): Buffer {
  const body = '{"x":1}';
  return Buffer.from(
    `POST ${u.pathname} HTTP/1.1\r\nHost: ${u.host}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n` +
      (key ? `Authorization: Simple ${key}\r\n` : '') +
      `\r\n${body}`,
  );
}

/** Calls `answered` for each whole response on `socket` (by Content-Length): true for a 200. */
function onResponses(socket: net.Socket, answered: (ok: boolean) => void): void {
  let buf: Buffer = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
    for (;;) {
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = buf.subarray(0, end).toString('latin1');
      const length = /\r\ncontent-length: *(\d+)/i.exec(head);
      if (!length) {
        socket.destroy(new Error(`a response without Content-Length: ${head}`));
        return;
      }
      const total = end + 4 + Number(length[1]);
      if (buf.length < total) return;
      buf = buf.subarray(total);
      answered(head.startsWith('HTTP/1.1 200'));
    }
  });
}

export function percentile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
}
