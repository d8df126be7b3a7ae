/**
 * Cluster mode: warm calls per second with two workers against one, through one API node, in
 * the same run, with the ideal beside the measured figure. Needs PostgreSQL, nats-server and an
 * S3 server from scripts/with-services.sh:
 *   ALGOHOST_TEST_SERVICES=postgres,nats,s3 bash scripts/with-services.sh \
 *     node --import tsx bench/cluster-scaling.ts [seconds=10] [connections=16]
 *
 * Two no-op Python algorithms, A and B, each called by half the connections. Today a build warm
 * on a worker gets all its calls on that worker (docs/operators-guide.md, "Cluster mode"), so two workers share
 * the load only when A is warm on one and B on the other: A is warmed while only the first
 * worker runs, then B on the second (its first call goes to any worker; the bench deploys
 * another B until the presence entries show it on the second one). Then the load, then the
 * second worker stops, B warms on the first and the same load runs on one worker.
 *
 * The ideal for two workers is twice the one-worker figure, unless the machine's cores run out
 * first: one call costs (busy CPU of the whole machine) / (calls) in the one-worker run, so the
 * cores allow at most cores / that. Both are printed, with the CPU per call of each process, to
 * show what limits it.
 */
import fs from 'node:fs';
import os from 'node:os';
import { connect } from '@nats-io/transport-node';
import { Kvm } from '@nats-io/kv';
import { clusterEnv, clusterServices, natsWorker } from './cluster-support.js';
import {
  type Algohost,
  benchUser,
  cpuSeconds,
  deployPython,
  load,
  loadAverage,
  machineTicks,
  report,
  startAlgohost,
  tempDir,
} from './support.js';

const SECONDS = Number(process.argv[2] ?? 10);
const CONNECTIONS = Number(process.argv[3] ?? 16);
const services = clusterServices();
const NOOP_PYTHON = `def apply(input):\n    return input\n`;
const CORES = os.cpus().length;

interface Run {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  /** Busy cores of the whole machine during the run (0..CORES). */
  busyCores: number;
  /** CPU ms per call of the API node, of each worker process, and of everything else. */
  apiMs: number;
  workerMs: number[];
  restMs: number;
}

/** Both algorithms under load at once, half the connections each. */
async function run(apiNode: Algohost, workers: Algohost[], targets: string[], key: string): Promise<Run> {
  const pids = [apiNode, ...workers].map((n) => n.process.pid!);
  const cpu0 = pids.map(cpuSeconds);
  const m0 = machineTicks();
  const results = await Promise.all(
    targets.map((url) => load({ url, key, serverPid: apiNode.process.pid!, connections: CONNECTIONS / targets.length, seconds: SECONDS })),
  );
  const m1 = machineTicks();
  const cpu = pids.map((p, i) => cpuSeconds(p) - cpu0[i]!);
  const rps = results.reduce((a, r) => a + r.rps, 0);
  const calls = rps * SECONDS;
  const busySeconds = ((m1.busy - m0.busy) / (m1.total - m0.total)) * CORES * SECONDS;
  const perCall = (s: number) => (s * 1000) / calls;
  return {
    rps,
    p50: Math.max(...results.map((r) => r.p50)),
    p99: Math.max(...results.map((r) => r.p99)),
    errors: results.reduce((a, r) => a + r.errors, 0),
    busyCores: busySeconds / SECONDS,
    apiMs: perCall(cpu[0]!),
    workerMs: cpu.slice(1).map(perCall),
    restMs: perCall(busySeconds - cpu.reduce((a, b) => a + b, 0)),
  };
}

/** The number of warm runners the worker with this pid announces (presence entries, renewed every 5 s). */
async function warmRunnersOf(pid: number): Promise<number> {
  const nc = await connect({ servers: services.nats });
  try {
    const kv = await new Kvm(nc).open('algohost_workers');
    for await (const k of await kv.keys()) {
      const v = (await kv.get(k))?.json<{ pid: number; warmRunners: number }>();
      if (v?.pid === pid) return v.warmRunners;
    }
    return 0;
  } finally {
    await nc.close();
  }
}

const work = tempDir('bench-scaling-');
const shared = tempDir('bench-scaling-shared-');
try {
  const env = await clusterEnv(shared, { ALGOHOST_RUNNERS_PER_ALGORITHM: '1' });
  const apiNode = await startAlgohost({ ...env, ALGOHOST_ROLE: 'api' });
  const w1 = await startAlgohost({ ...env, ...natsWorker(), ALGOHOST_ROLE: 'worker' });
  let w2: Algohost | undefined;
  try {
    const key = await benchUser(apiNode, 'bench');
    const a = await deployPython(apiNode, work, { key, name: 'Alpha', source: NOOP_PYTHON });
    w2 = await startAlgohost({ ...env, ...natsWorker(), ALGOHOST_ROLE: 'worker' });
    let b: string | undefined;
    for (let i = 0; i < 8 && !b; i++) {
      const candidate = await deployPython(apiNode, work, { key, name: `Beta${i}`, source: NOOP_PYTHON });
      await new Promise((r) => setTimeout(r, 6000)); // one presence renewal
      if ((await warmRunnersOf(w2.process.pid!)) > 0) b = candidate.target;
    }
    if (!b) throw new Error('no B landed on the second worker in 8 tries');
    const loadTwo = loadAverage();
    const two = await run(apiNode, [w1, w2], [a.target, b], key);
    await w2.stop();
    w2 = undefined;
    // B's calls now go to the remaining worker, which starts a runner for it.
    await fetch(b, { method: 'POST', headers: { authorization: `Simple ${key}`, 'content-type': 'application/json' }, body: '1' });
    const loadOne = loadAverage();
    const one = await run(apiNode, [w1], [a.target, b], key);

    const machinePerCall = (one.busyCores * 1000) / one.rps; // CPU ms per call, whole machine
    const coreBound = (CORES * 1000) / machinePerCall;
    const ideal = Math.min(2 * one.rps, coreBound);
    const fmt = (r: Run) =>
      `${r.rps.toFixed(0)} calls/s, p50 ${r.p50} ms, p99 ${r.p99} ms, ${r.errors} errors; ${r.busyCores.toFixed(2)} of ${CORES} cores busy (${((r.busyCores * 1000) / r.rps).toFixed(3)} CPU ms per call)`;
    const cpu = (r: Run) =>
      `API node ${r.apiMs.toFixed(3)}, worker(s) ${r.workerMs.map((m) => m.toFixed(3)).join(' + ')}, the rest (runners, nats-server, PostgreSQL, load generator, other work) ${r.restMs.toFixed(3)}`;
    report([
      [`warm calls of two no-op Python algorithms, ${CONNECTIONS} connections in all, ${SECONDS} s each`, ''],
      ['one worker', fmt(one)],
      ['  CPU ms per call', cpu(one)],
      ['  load average before (1, 5, 15 min)', loadOne],
      ['two workers', fmt(two)],
      ['  CPU ms per call', cpu(two)],
      ['  load average before (1, 5, 15 min)', loadTwo],
      ['two workers / one worker', `${(two.rps / one.rps).toFixed(2)}`],
      ['ideal with two workers: 2 × one worker', `${(2 * one.rps).toFixed(0)} calls/s`],
      [`ideal bounded by ${CORES} cores (${machinePerCall.toFixed(3)} CPU ms per call, whole machine)`, `${coreBound.toFixed(0)} calls/s`],
      ['measured / ideal', `${(two.rps / ideal).toFixed(2)}`],
    ]);
  } finally {
    await w2?.stop();
    await w1.stop();
    await apiNode.stop();
  }
} finally {
  fs.rmSync(work, { recursive: true, force: true });
  fs.rmSync(shared, { recursive: true, force: true });
}
