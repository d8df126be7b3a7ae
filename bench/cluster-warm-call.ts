/**
 * Cluster mode's warm call: a no-op Python algorithm called through an API node that sends it
 * over NATS to a worker (each a process of its own), against the same call on one embedded
 * node, measured in the same run. Budget (docs/design/performance.md): added p50 ≤ 0.5 ms.
 * Needs PostgreSQL, nats-server and an S3 server from scripts/with-services.sh:
 *   ALGOHOST_TEST_SERVICES=postgres,nats,s3 bash scripts/with-services.sh \
 *     node --import tsx bench/cluster-warm-call.ts [seconds=10] [connections=16] [sequential calls=2000] [turns=5]
 * Both modes run side by side. The budget's figure is the added p50 of calls made one at a time
 * (timed to the microsecond), in turns that alternate the two modes, median turn; the autocannon
 * run under load before it (which also warms both up) shows what queueing adds.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { connect } from '@nats-io/transport-node';
import { clusterEnv, clusterServices, natsUrlAsTest, natsWorker } from './cluster-support.js';
import { deployNoop, load, loadAverage, median, percentile, report, ROOT, sequentialLatency, startAlgohost, tempDir } from './support.js';

const SECONDS = Number(process.argv[2] ?? 10);
const CONNECTIONS = Number(process.argv[3] ?? 16);
/** Calls made one at a time for the microsecond p50 (the budget's figure), per mode. */
const SEQUENTIAL = Number(process.argv[4] ?? 2000);
/** Turns those calls are made in, alternating embedded and cluster. */
const TURNS = Number(process.argv[5] ?? 5);
// The stand-ins log in as the tests' `test` user (every permission), in the URL they are given.
const NATS = natsUrlAsTest(clusterServices().nats);

/**
 * One NATS request and its reply between two processes through the same nats-server (this
 * process asks, a stand-in answers at once), one at a time. A cluster call makes this round
 * trip once; the floor under its added latency is topologyFloor's, which also wakes the
 * processes a call passes through.
 */
async function bareNatsRoundTrip(calls: number): Promise<number> {
  const { child: responder } = await standIn(`
    import { connect } from '@nats-io/transport-node';
    const nc = await connect({ servers: process.argv[1] });
    nc.subscribe('bench.echo', { callback: (err, m) => m.respond(m.data) });
    await nc.flush();
    console.log('ready');`);
  const nc = await connect({ servers: NATS });
  const payload = new TextEncoder().encode('{"x":1}');
  const times: number[] = [];
  for (let i = 0; i < calls + 50; i++) {
    const t = process.hrtime.bigint();
    await nc.request('bench.echo', payload, { timeout: 5000 });
    if (i >= 50) times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  await nc.close();
  responder.kill();
  return percentile(times, 0.5);
}

/**
 * A Python process answering each line it reads with that line, for the topology floor's
 * stand-ins (an unbuffered read and write per line, as a harness does).
 */
const ECHO_PY = 'import sys\nfor line in sys.stdin.buffer:\n    sys.stdout.buffer.write(line)\n    sys.stdout.buffer.flush()\n';

/**
 * Node code shared by the stand-ins: `pipe()` starts the Python echo and returns a function that
 * sends it one line and resolves with its answer; `serveHttp(answer)` serves POSTs with
 * `answer(body)` and prints its port.
 */
const STAND_IN_PRELUDE = `
import http from 'node:http';
import { spawn } from 'node:child_process';
function pipe() {
  const py = spawn('/usr/bin/python3', ['-c', ${JSON.stringify(ECHO_PY)}], { stdio: ['pipe', 'pipe', 'inherit'] });
  const waiting = [];
  let buf = '';
  py.stdout.setEncoding('utf8');
  py.stdout.on('data', (d) => {
    buf += d;
    for (let i = buf.indexOf('\\n'); i >= 0; i = buf.indexOf('\\n')) {
      waiting.shift()(buf.slice(0, i));
      buf = buf.slice(i + 1);
    }
  });
  return (line) => new Promise((resolve) => { waiting.push(resolve); py.stdin.write(line + '\\n'); });
}
function serveHttp(answer) {
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      const body = await answer(Buffer.concat(chunks).toString());
      res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    });
  });
  server.listen(0, '127.0.0.1', () => console.log(server.address().port));
}
`;

/** Starts one stand-in (a Node child running `code` after the prelude); resolves with it and the first line it prints. */
async function standIn(code: string): Promise<{ child: ReturnType<typeof spawn>; line: string }> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', STAND_IN_PRELUDE + code, NATS], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((resolve) => child.stdout!.once('data', (d: Buffer) => resolve(d.toString().trim())));
  return { child, line };
}

/**
 * The floor under the added latency that this machine sets for this topology: the same hops
 * with stand-ins that do nothing else. Embedded: an HTTP server writing each body to a Python
 * echo over a pipe. Cluster: an HTTP server that sends each body as a NATS request to a second
 * process, which writes it to its Python echo and replies with the answer. What the cluster
 * adds over the embedded stand-in is the two NATS hops and two processes' wakeups, nothing of
 * algohost's.
 */
async function topologyFloor(calls: number): Promise<{ embedded: number; cluster: number }> {
  const embedded = await standIn(`const call = pipe(); serveHttp((body) => call(body));`);
  let e;
  try {
    e = await sequentialLatency(`http://127.0.0.1:${embedded.line}/`, 'unused', calls);
  } finally {
    embedded.child.kill();
  }
  const worker = await standIn(`
    import { connect } from '@nats-io/transport-node';
    const call = pipe();
    const nc = await connect({ servers: process.argv[1] });
    nc.subscribe('bench.floor', { callback: async (err, m) => m.respond(await call(new TextDecoder().decode(m.data))) });
    await nc.flush();
    console.log('ready');`);
  const apiNode = await standIn(`
    import { connect } from '@nats-io/transport-node';
    const nc = await connect({ servers: process.argv[1] });
    serveHttp(async (body) => new TextDecoder().decode((await nc.request('bench.floor', body, { timeout: 5000 })).data));`);
  let c;
  try {
    c = await sequentialLatency(`http://127.0.0.1:${apiNode.line}/`, 'unused', calls);
  } finally {
    apiNode.child.kill();
    worker.child.kill();
  }
  return { embedded: e.p50, cluster: c.p50 };
}

const work = tempDir('bench-cluster-');
const shared = tempDir('bench-cluster-shared-');
const loadBefore = loadAverage();
const natsFloor = await bareNatsRoundTrip(SEQUENTIAL);
const floor = await topologyFloor(SEQUENTIAL);
// Both modes run side by side, each with its own deployment of the same algorithm, so that their
// calls one at a time can alternate in turns (below).
const embedded = await startAlgohost({ ALGOHOST_RUNNERS_PER_ALGORITHM: '1' });
const env = await clusterEnv(shared, { ALGOHOST_RUNNERS_PER_ALGORITHM: '1' });
const apiNode = await startAlgohost({ ...env, ALGOHOST_ROLE: 'api' });
const worker = await startAlgohost({ ...env, ...natsWorker(), ALGOHOST_ROLE: 'worker' });
try {
  const em = await deployNoop(embedded, path.join(work, 'embedded'));
  const cl = await deployNoop(apiNode, path.join(work, 'cluster'));
  // Under load first, which also settles the JIT of both (as bench/warm-call.ts warms up before
  // it measures): a warm call is the steady state, not a process's first thousand calls.
  const e = await load({ url: em.target, key: em.key, serverPid: embedded.process.pid!, connections: CONNECTIONS, seconds: SECONDS });
  const c = await load({ url: cl.target, key: cl.key, serverPid: apiNode.process.pid!, connections: CONNECTIONS, seconds: SECONDS });
  // One call at a time, in TURNS turns that alternate embedded and cluster. Each turn's pair ran
  // back to back, so its difference compares like with like; the median pair is the figure, since
  // the machine's own pace (2 shared cores) drifts within a run and a burst of other work can land
  // in any one turn.
  const perTurn = Math.max(100, Math.round(SEQUENTIAL / TURNS));
  const es: number[] = [];
  const cs: number[] = [];
  for (let turn = 0; turn < TURNS; turn++) {
    es.push((await sequentialLatency(em.target, em.key, perTurn)).p50);
    cs.push((await sequentialLatency(cl.target, cl.key, perTurn)).p50);
  }
  const added = cs.map((x, i) => x - es[i]!);
  const ms = (xs: number[]) => xs.map((x) => x.toFixed(3)).join(', ');
  const floorAdded = floor.cluster - floor.embedded;
  report([
    ['load average before / after (1, 5, 15 min)', `${loadBefore} / ${loadAverage()}`],
    [`warm calls one at a time, ${TURNS} turns of ${perTurn} each, p50 per turn`, ''],
    ['cluster', `${ms(cs)} ms`],
    ['embedded', `${ms(es)} ms`],
    ['added p50 per turn', `${ms(added)} ms`],
    ['added p50, one at a time, median turn (budget ≤ 0.5 ms)', `${median(added).toFixed(3)} ms`],
    ['a bare NATS request/reply between two processes, p50', `${natsFloor.toFixed(3)} ms`],
    [
      'the floor: the same hops with stand-ins that do nothing else, p50 added (cluster / embedded)',
      `${floorAdded.toFixed(3)} ms (${floor.cluster.toFixed(3)} / ${floor.embedded.toFixed(3)} ms)`,
    ],
    ["algohost's own part of the added p50 (median turn − floor)", `${(median(added) - floorAdded).toFixed(3)} ms`],
    [`warm calls of a no-op Python algorithm, ${CONNECTIONS} connections, ${SECONDS} s each`, ''],
    ['cluster (API node → NATS → worker) p50 / p99', `${c.p50} ms / ${c.p99} ms, ${c.rps.toFixed(0)} calls/s, ${c.errors} errors`],
    ['cluster API node CPU per call (user + system)', `${c.cpuMsPerCall.toFixed(3)} ms`],
    ['embedded p50 / p99', `${e.p50} ms / ${e.p99} ms, ${e.rps.toFixed(0)} calls/s, ${e.errors} errors`],
    ['embedded node CPU per call (user + system)', `${e.cpuMsPerCall.toFixed(3)} ms`],
    [`added p50 under load, ${CONNECTIONS} connections (whole ms)`, `${(c.p50 - e.p50).toFixed(2)} ms`],
    ['calls/s ratio to embedded', `${(c.rps / e.rps).toFixed(2)}`],
  ]);
} finally {
  await worker.stop();
  await apiNode.stop();
  await embedded.stop();
  fs.rmSync(work, { recursive: true, force: true });
  fs.rmSync(shared, { recursive: true, force: true });
}
