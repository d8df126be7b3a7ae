/**
 * Warm-call overhead of a no-op Python algorithm through algohost's call API, against a bare
 * Node HTTP server that forwards each request to a warm Python pipe process running the same
 * harness on the same algorithm (no auth, no sandbox, no envelope): the smallest thing that
 * serves a call over HTTP with the pipe protocol.
 * Budgets (docs/design.md §4): overhead p50 ≤ +0.25 ms and p99 ≤ 1.0 × the bare p99; calls/s ≥ 0.75 × bare.
 * Run: node --import tsx bench/warm-call.ts [seconds=10] [connections=16]
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import autocannon from 'autocannon';
import { api, benchUser, git, gitUrl, report, ROOT, startAlgohost, tempDir } from './support.js';

const SECONDS = Number(process.argv[2] ?? 10);
const CONNECTIONS = Number(process.argv[3] ?? 16);
const HARNESS = path.join(ROOT, 'packages/server/src/runtime/languages/python/runner/runner.py');

const NOOP = `def apply(input):\n    return input\n`;

/** The baseline: one warm harness process, a FIFO, and a Node server forwarding to it. */
async function startBaseline(appDir: string): Promise<{ url: string; close: () => void }> {
  const fifo = path.join(appDir, 'algoout');
  execFileSync('mkfifo', [fifo]);
  const fd = fs.openSync(fifo, fs.constants.O_RDWR | fs.constants.O_NONBLOCK);
  const responses = new net.Socket({ fd, readable: true, writable: false });
  const py = spawn('/usr/bin/python3', ['-u', HARNESS], {
    cwd: appDir,
    env: { PATH: '/usr/bin:/bin', ALGOHOST_RESPONSE_FIFO: fifo, PYTHONDONTWRITEBYTECODE: '1' },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve) => py.stdout.on('data', (d: Buffer) => d.toString().includes('PIPE_INIT_COMPLETE') && resolve()));
  const queue: ((line: string) => void)[] = [];
  let buf = '';
  responses.setEncoding('utf8').on('data', (d: string) => {
    buf += d;
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      queue.shift()?.(line);
    }
  });
  // One process answers one request at a time: serialize like a single warm runner.
  let chain = Promise.resolve();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      chain = chain.then(
        () =>
          new Promise<void>((done) => {
            queue.push((line) => {
              res.setHeader('content-type', 'application/json');
              res.end(line);
              done();
            });
            py.stdin.write(`${JSON.stringify({ content_type: 'json', data: JSON.parse(Buffer.concat(chunks).toString() || 'null') })}\n`);
          }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    close: () => {
      server.close();
      py.kill();
      responses.destroy();
    },
  };
}

/** CPU seconds (user + system) a process has used so far, from /proc (clock ticks of 10 ms). */
function cpuSeconds(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime
}

async function load(url: string, headers: Record<string, string>, serverPid?: number) {
  const cpu0 = serverPid ? cpuSeconds(serverPid) : 0;
  const r = await autocannon({
    url,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: '{"x":1}',
    connections: CONNECTIONS,
    duration: SECONDS,
  });
  // calls/s swing with whatever else the machine runs; the server's CPU time per call far less.
  const cpuMsPerCall = serverPid ? ((cpuSeconds(serverPid) - cpu0) * 1000) / r.requests.total : NaN;
  return { p50: r.latency.p50, p99: r.latency.p99, rps: r.requests.average, errors: r.errors + r.non2xx, cpuMsPerCall };
}

const work = tempDir('bench-warm-');
const h = await startAlgohost({ ALGOHOST_RUNNERS_PER_ALGORITHM: '1' });
try {
  const key = await benchUser(h, 'bench');
  await api(h.url, key, 'POST', '/v1/algorithms/bench', { name: 'Noop' });
  const dir = path.join(work, 'noop');
  git(['clone', '-q', gitUrl(h.url, 'bench', key, 'bench', 'Noop'), dir]);
  fs.writeFileSync(path.join(dir, 'src', 'Noop.py'), NOOP);
  git(['commit', '-q', '-am', 'noop'], dir);
  git(['push', '-q', '-o', 'wait', 'origin', 'HEAD:main'], dir);
  const sha = git(['rev-parse', 'HEAD'], dir).trim();
  const target = `${h.url}/v1/algo/bench/Noop/${sha}`;
  await fetch(target, { method: 'POST', headers: { authorization: `Simple ${key}`, 'content-type': 'application/json' }, body: '1' }); // warm it

  const baseline = await startBaseline(dir);
  const b = await load(baseline.url, {});
  baseline.close();
  const ours = await load(target, { authorization: `Simple ${key}` }, h.process.pid);
  report([
    [`warm calls, ${CONNECTIONS} connections, ${SECONDS} s each`, ''],
    ['algohost p50 / p99', `${ours.p50} ms / ${ours.p99} ms, ${ours.rps.toFixed(0)} calls/s, ${ours.errors} errors`],
    ['algohost server CPU per call (user + system)', `${ours.cpuMsPerCall.toFixed(3)} ms`],
    ['baseline p50 / p99 (bare Node → warm Python pipe)', `${b.p50} ms / ${b.p99} ms, ${b.rps.toFixed(0)} calls/s, ${b.errors} errors`],
    ['overhead p50 / p99 (budget ≤ 1 ms / ≤ 5 ms)', `${(ours.p50 - b.p50).toFixed(2)} ms / ${(ours.p99 - b.p99).toFixed(2)} ms`],
    ['calls/s ratio to baseline', `${(ours.rps / b.rps).toFixed(2)}`],
  ]);
} finally {
  await h.stop();
  fs.rmSync(work, { recursive: true, force: true });
}
