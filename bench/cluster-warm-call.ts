/**
 * Cluster mode's warm call: a no-op Python algorithm called through an API node that sends it
 * over NATS to a worker (each a process of its own), against the same call on one embedded
 * node, measured in the same run. Budget (docs/design.md §4): added p50 ≤ 0.5 ms.
 * Needs PostgreSQL, nats-server and an S3 server from scripts/with-services.sh:
 *   ALGOHOST_TEST_SERVICES=postgres,nats,s3 bash scripts/with-services.sh \
 *     node --import tsx bench/cluster-warm-call.ts [seconds=10] [connections=16] [sequential calls=2000]
 * The budget's figure is the p50 of calls made one at a time (timed to the microsecond); the
 * autocannon run under load beside it shows what queueing adds.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { connect } from '@nats-io/transport-node';
import { clusterEnv, clusterServices } from './cluster-support.js';
import { deployNoop, load, loadAverage, percentile, report, ROOT, sequentialLatency, startAlgohost, tempDir } from './support.js';

const SECONDS = Number(process.argv[2] ?? 10);
const CONNECTIONS = Number(process.argv[3] ?? 16);
/** Calls made one at a time for the microsecond p50 (the budget's figure). */
const SEQUENTIAL = Number(process.argv[4] ?? 2000);
const { nats: NATS } = clusterServices();

/**
 * The floor under the cluster's added latency: one NATS request and its reply between two
 * processes through the same nats-server (this process asks, a child answers at once), one at
 * a time. A cluster call makes this round trip once, plus the API node's and worker's own work.
 */
async function bareNatsRoundTrip(calls: number): Promise<number> {
  const responder = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import { connect } from '@nats-io/transport-node';
       const nc = await connect({ servers: process.argv[1] });
       nc.subscribe('bench.echo', { callback: (err, m) => m.respond(m.data) });
       await nc.flush();
       console.log('ready');`,
      NATS,
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await new Promise<void>((resolve) => responder.stdout.once('data', () => resolve()));
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

const work = tempDir('bench-cluster-');
const shared = tempDir('bench-cluster-shared-');
try {
  // The embedded node first, alone on the machine.
  const embedded = await startAlgohost({ ALGOHOST_RUNNERS_PER_ALGORITHM: '1' });
  let e, es;
  const loadBefore = loadAverage();
  try {
    const { target, key } = await deployNoop(embedded, path.join(work, 'embedded'));
    es = await sequentialLatency(target, key, SEQUENTIAL);
    e = await load({ url: target, key, serverPid: embedded.process.pid!, connections: CONNECTIONS, seconds: SECONDS });
  } finally {
    await embedded.stop();
  }

  const natsFloor = await bareNatsRoundTrip(SEQUENTIAL);
  const env = await clusterEnv(shared, { ALGOHOST_RUNNERS_PER_ALGORITHM: '1' });
  const apiNode = await startAlgohost({ ...env, ALGOHOST_ROLE: 'api' });
  const worker = await startAlgohost({ ...env, ALGOHOST_ROLE: 'worker' });
  let c, cs;
  try {
    const { target, key } = await deployNoop(apiNode, path.join(work, 'cluster'));
    cs = await sequentialLatency(target, key, SEQUENTIAL);
    c = await load({ url: target, key, serverPid: apiNode.process.pid!, connections: CONNECTIONS, seconds: SECONDS });
  } finally {
    await worker.stop();
    await apiNode.stop();
  }
  report([
    ['load average before / after (1, 5, 15 min)', `${loadBefore} / ${loadAverage()}`],
    [`warm calls one at a time (${SEQUENTIAL}), p50 / p99`, ''],
    ['cluster', `${cs.p50.toFixed(3)} ms / ${cs.p99.toFixed(3)} ms`],
    ['embedded', `${es.p50.toFixed(3)} ms / ${es.p99.toFixed(3)} ms`],
    ['added p50, one at a time (budget ≤ 0.5 ms)', `${(cs.p50 - es.p50).toFixed(3)} ms`],
    ['of which the floor: a bare NATS request/reply between two processes, p50', `${natsFloor.toFixed(3)} ms`],
    [`warm calls of a no-op Python algorithm, ${CONNECTIONS} connections, ${SECONDS} s each`, ''],
    ['cluster (API node → NATS → worker) p50 / p99', `${c.p50} ms / ${c.p99} ms, ${c.rps.toFixed(0)} calls/s, ${c.errors} errors`],
    ['cluster API node CPU per call (user + system)', `${c.cpuMsPerCall.toFixed(3)} ms`],
    ['embedded p50 / p99', `${e.p50} ms / ${e.p99} ms, ${e.rps.toFixed(0)} calls/s, ${e.errors} errors`],
    ['embedded node CPU per call (user + system)', `${e.cpuMsPerCall.toFixed(3)} ms`],
    [`added p50 under load, ${CONNECTIONS} connections (whole ms)`, `${(c.p50 - e.p50).toFixed(2)} ms`],
    ['calls/s ratio to embedded', `${(c.rps / e.rps).toFixed(2)}`],
  ]);
} finally {
  fs.rmSync(work, { recursive: true, force: true });
  fs.rmSync(shared, { recursive: true, force: true });
}
