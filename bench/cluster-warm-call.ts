/**
 * Cluster mode's warm call: a no-op Python algorithm called through an API node that sends it
 * over NATS to a worker (each a process of its own), against the same call on one embedded
 * node, measured in the same run. Budget (docs/design.md §4): added p50 ≤ 0.5 ms.
 * Needs PostgreSQL, nats-server and an S3 server from scripts/with-services.sh:
 *   ALGOHOST_TEST_SERVICES=postgres,nats,s3 bash scripts/with-services.sh \
 *     node --import tsx bench/cluster-warm-call.ts [seconds=10] [connections=16]
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { deployNoop, load, report, startAlgohost, tempDir } from './support.js';

const SECONDS = Number(process.argv[2] ?? 10);
const CONNECTIONS = Number(process.argv[3] ?? 16);
const { ALGOHOST_TEST_POSTGRES_URL: POSTGRES, ALGOHOST_TEST_NATS_URL: NATS, ALGOHOST_TEST_S3_ENDPOINT: S3 } = process.env;
if (!POSTGRES || !NATS || !S3) {
  console.error('run it under scripts/with-services.sh with ALGOHOST_TEST_SERVICES=postgres,nats,s3');
  process.exit(2);
}

/** A fresh database on the test server for the cluster's nodes. */
async function database(): Promise<string> {
  const name = `bench_${crypto.randomBytes(4).toString('hex')}`;
  const c = new pg.Client({ connectionString: POSTGRES });
  await c.connect();
  await c.query(`CREATE DATABASE ${name}`);
  await c.end();
  const url = new URL(POSTGRES!);
  url.pathname = `/${name}`;
  return url.toString();
}

const work = tempDir('bench-cluster-');
const shared = tempDir('bench-cluster-shared-');
try {
  // The embedded node first, alone on the machine.
  const embedded = await startAlgohost({ ALGOHOST_RUNNERS_PER_ALGORITHM: '1' });
  let e;
  try {
    const { target, key } = await deployNoop(embedded, path.join(work, 'embedded'));
    e = await load({ url: target, key, serverPid: embedded.process.pid!, connections: CONNECTIONS, seconds: SECONDS });
  } finally {
    await embedded.stop();
  }

  const env = {
    ALGOHOST_DATABASE_URL: await database(),
    ALGOHOST_NATS_URL: NATS,
    ALGOHOST_BLOB_STORE: 's3',
    ALGOHOST_S3_ENDPOINT: S3,
    ALGOHOST_S3_BUCKET: `bench-${crypto.randomBytes(4).toString('hex')}`,
    ALGOHOST_S3_ACCESS_KEY_ID: 'bench',
    ALGOHOST_S3_SECRET_ACCESS_KEY: 'bench',
    ALGOHOST_REPOSITORY_DIR: path.join(shared, 'repositories'),
    ALGOHOST_BUILD_LOG_DIR: path.join(shared, 'build-logs'),
    ALGOHOST_CLUSTER_KEY: crypto.randomBytes(32).toString('base64'),
    ALGOHOST_RUNNERS_PER_ALGORITHM: '1',
  };
  const apiNode = await startAlgohost({ ...env, ALGOHOST_ROLE: 'api' });
  const worker = await startAlgohost({ ...env, ALGOHOST_ROLE: 'worker' });
  let c;
  try {
    const { target, key } = await deployNoop(apiNode, path.join(work, 'cluster'));
    c = await load({ url: target, key, serverPid: apiNode.process.pid!, connections: CONNECTIONS, seconds: SECONDS });
  } finally {
    await worker.stop();
    await apiNode.stop();
  }
  report([
    [`warm calls of a no-op Python algorithm, ${CONNECTIONS} connections, ${SECONDS} s each`, ''],
    ['cluster (API node → NATS → worker) p50 / p99', `${c.p50} ms / ${c.p99} ms, ${c.rps.toFixed(0)} calls/s, ${c.errors} errors`],
    ['cluster API node CPU per call (user + system)', `${c.cpuMsPerCall.toFixed(3)} ms`],
    ['embedded p50 / p99', `${e.p50} ms / ${e.p99} ms, ${e.rps.toFixed(0)} calls/s, ${e.errors} errors`],
    ['embedded node CPU per call (user + system)', `${e.cpuMsPerCall.toFixed(3)} ms`],
    ['added p50 (budget ≤ 0.5 ms)', `${(c.p50 - e.p50).toFixed(2)} ms`],
    ['calls/s ratio to embedded', `${(c.rps / e.rps).toFixed(2)}`],
  ]);
} finally {
  fs.rmSync(work, { recursive: true, force: true });
  fs.rmSync(shared, { recursive: true, force: true });
}
