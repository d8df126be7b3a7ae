/**
 * Cluster mode's async calls: how long from the request to the algorithm starting on a worker
 * (through the API node, the JetStream stream and the worker's pull consumer), against the same
 * on one embedded node, which starts the call in its own process. Same run, same machine.
 * Needs PostgreSQL, nats-server and an S3 server from scripts/with-services.sh:
 *   ALGOHOST_TEST_SERVICES=postgres,nats,s3 bash scripts/with-services.sh \
 *     node --import tsx bench/cluster-async-dispatch.ts [calls=200]
 *
 * The algorithm returns the wall clock (time.time()) when apply() starts; the bench takes the
 * wall clock (with a monotonic offset, to the microsecond) just before it sends the request and
 * when the API answers with the request id (the call is then accepted: stored, and in cluster
 * mode in the stream). Calls go one at a time, each awaited to its result, so none queues
 * behind another: what is measured is the dispatch, not a backlog. Both clocks are this
 * machine's.
 */
import fs from 'node:fs';
import path from 'node:path';
import { clusterEnv, clusterServices, natsWorker } from './cluster-support.js';
import { type Algohost, api, benchUser, deployPython, loadAverage, percentile, report, startAlgohost, tempDir } from './support.js';

const CALLS = Number(process.argv[2] ?? 200);
clusterServices();

const CLOCK_PYTHON = `import time\n\ndef apply(input):\n    return time.time()\n`;

/** Wall-clock milliseconds with sub-millisecond resolution. */
const now = () => performance.timeOrigin + performance.now();

interface Dispatch {
  /** Request sent → algorithm started. */
  toStart: number[];
  /** Request sent → API answered (accepted). */
  toAccept: number[];
  /** API answered → algorithm started (negative when it started before the answer left). */
  acceptToStart: number[];
}

async function measure(h: Algohost, work: string): Promise<Dispatch> {
  const key = await benchUser(h, 'bench');
  const { target } = await deployPython(h, work, { key, name: 'Clock', source: CLOCK_PYTHON });
  const out: Dispatch = { toStart: [], toAccept: [], acceptToStart: [] };
  for (let i = 0; i < CALLS + 10; i++) {
    const sent = now();
    const res = await fetch(`${target}?output=void`, {
      method: 'POST',
      headers: { authorization: `Simple ${key}`, 'content-type': 'application/json' },
      body: '1',
    });
    const accepted = now();
    const { request_id: id } = (await res.json()) as { request_id: string };
    let state: { status: string; result?: number };
    for (;;) {
      await new Promise((r) => setTimeout(r, 5));
      state = await api(h.url, key, 'GET', `/v1/algo/requests/${id}`);
      if (state.status === 'completed') break;
    }
    if (typeof state.result !== 'number') throw new Error(`call ${id} failed: ${JSON.stringify(state)}`);
    if (i < 10) continue; // the first few warm the connection, the runner and the consumer
    const started = state.result * 1000;
    out.toStart.push(started - sent);
    out.toAccept.push(accepted - sent);
    out.acceptToStart.push(started - accepted);
  }
  return out;
}

const ms = (xs: number[]) => `${percentile(xs, 0.5).toFixed(2)} ms / ${percentile(xs, 0.99).toFixed(2)} ms`;

const work = tempDir('bench-async-');
const shared = tempDir('bench-async-shared-');
try {
  const loadBefore = loadAverage();
  const embedded = await startAlgohost();
  let e: Dispatch;
  try {
    e = await measure(embedded, path.join(work, 'embedded'));
  } finally {
    await embedded.stop();
  }
  const env = await clusterEnv(shared);
  const apiNode = await startAlgohost({ ...env, ALGOHOST_ROLE: 'api' });
  const worker = await startAlgohost({ ...env, ...natsWorker(), ALGOHOST_ROLE: 'worker' });
  let c: Dispatch;
  try {
    c = await measure(apiNode, path.join(work, 'cluster'));
  } finally {
    await worker.stop();
    await apiNode.stop();
  }
  report([
    ['load average before / after (1, 5, 15 min)', `${loadBefore} / ${loadAverage()}`],
    [`async calls of a warm Python algorithm, one at a time (${CALLS}), p50 / p99`, ''],
    ['cluster: request sent → started on the worker', ms(c.toStart)],
    ['cluster: request sent → accepted (request id answered)', ms(c.toAccept)],
    ['cluster: accepted → started on the worker', ms(c.acceptToStart)],
    ['embedded: request sent → started', ms(e.toStart)],
    ['embedded: request sent → accepted', ms(e.toAccept)],
    ['embedded: accepted → started', ms(e.acceptToStart)],
    ['added by the cluster, request → start, p50', `${(percentile(c.toStart, 0.5) - percentile(e.toStart, 0.5)).toFixed(2)} ms`],
  ]);
} finally {
  fs.rmSync(work, { recursive: true, force: true });
  fs.rmSync(shared, { recursive: true, force: true });
}
