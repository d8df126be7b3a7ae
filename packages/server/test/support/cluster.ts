/**
 * Nodes of a cluster for the cluster tests: each a separate `npm start` process with its own
 * data directory, in a network namespace of its own when a Lan is given (support/netns.ts).
 * `startCluster` is the whole set-up the cluster test files share: a PostgreSQL database, the
 * shared Git directory, the Lan and the forwarded services, an API node and the workers.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { KvEntry } from '@nats-io/kv';
import { generateApiKey } from '../../src/domain/accounts/secrets.js';
import { natsNames } from '../../src/cluster/nats-cluster.js';
import { MessageSigner } from '../../src/cluster/signed-messages.js';
import { client, type Client } from './http.js';
import { available as netnsAvailable, createLan, type Lan } from './netns.js';
import { clusterSettings, createPostgresDatabase, makeTempDir } from './server.js';
import { workerCredentials } from './nats.js';
import { serverEntryArgs } from './server-entry.js';

const REPO = fileURLToPath(new URL('../../../../', import.meta.url));

/** One algohost process of the cluster. */
export interface Node {
  name: string;
  url: string;
  dataDir: string;
  child: ChildProcess;
  log: string[];
}

/** The line a worker logs once its presence entry is written: API nodes route calls to it from then on. */
const WORKER_ANNOUNCED = /cluster worker \S+ announced/;

/**
 * Starts a node; with `lan`, in a network namespace of its own, listening on its own address there.
 * A worker (ALGOHOST_ROLE=worker) counts as started once it has announced itself, not when it
 * listens: a call sent between the two would find no worker.
 */
export async function startNode(name: string, env: Record<string, string>, lan?: Lan): Promise<Node> {
  const dataDir = await makeTempDir(`algohost-cluster-${name}-`);
  const joined = await lan?.join();
  const argv = [...(joined?.prefix ?? []), process.execPath, ...serverEntryArgs()];
  const child = spawn(argv[0]!, argv.slice(1), {
    cwd: REPO,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      ...env,
      ALGOHOST_DATA_DIR: dataDir,
      ALGOHOST_PORT: '0',
      ...(joined ? { ALGOHOST_HOST: joined.address } : {}),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log: string[] = [];
  const worker = env.ALGOHOST_ROLE === 'worker';
  const listening = new Promise<string>((resolve, reject) => {
    let url: string | undefined;
    let announced = !worker;
    const onLine = (d: Buffer) => {
      for (const line of d.toString().split('\n')) {
        if (!line) continue;
        log.push(line);
        if (log.length > 400) log.shift();
        const m = /algohost listening on (http:\/\/[^"\s]+)/.exec(line);
        if (m) url = m[1]!;
        if (WORKER_ANNOUNCED.test(line)) announced = true;
        if (url && announced) resolve(url);
      }
    };
    child.stdout!.on('data', onLine);
    child.stderr!.on('data', onLine);
    child.once('close', (code) => reject(new Error(`${name} exited (${code}) while starting:\n${log.slice(-30).join('\n')}`)));
  });
  const url = await listening.catch(async (err: unknown) => {
    await fs.promises.rm(dataDir, { recursive: true, force: true });
    throw err;
  });
  return { name, url, dataDir, child, log };
}

export async function stopNode(node: Node, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (node.child.exitCode === null && node.child.signalCode === null) {
    const exited = new Promise((r) => node.child.once('exit', r));
    node.child.kill(signal);
    await exited;
  }
  await fs.promises.rm(node.dataDir, { recursive: true, force: true });
}

export async function until<T>(what: string, probe: () => Promise<T | undefined>, tries = 600): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const v = await probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** The services scripts/with-services.sh started for the cluster tests, as the test process reaches them. */
export const CLUSTER_SERVICES = {
  postgres: process.env.ALGOHOST_TEST_POSTGRES_URL,
  nats: process.env.ALGOHOST_TEST_NATS_URL,
  s3: process.env.ALGOHOST_TEST_S3_ENDPOINT,
  sqs: process.env.ALGOHOST_TEST_SQS_ENDPOINT,
  kafka: process.env.ALGOHOST_TEST_KAFKA_BROKERS,
};

/** A `describe` skip reason naming the services that were not started (false when all were). */
export function clusterSkip(...extra: ('sqs' | 'kafka')[]): string | false {
  const missing = (['postgres', 'nats', 's3', ...extra] as const).filter((s) => !CLUSTER_SERVICES[s]);
  return missing.length ? `needs ${missing.join(', ')} (scripts/with-services.sh)` : false;
}

export interface ClusterOptions {
  /** The workers started with the API node, each with settings of its own beside `env`. */
  workers: { name: string; env?: Record<string, string> }[];
  /** Settings of every node, beside the cluster's own (database, NATS, S3, shared Git directory, keys). */
  env?: Record<string, string>;
  /** ALGOHOST_NATS_PREFIX: keeps this file's stream, consumers and KV bucket apart from other files'. */
  natsPrefix: string;
  /**
   * Settings that name services as the nodes reach them (an endpoint allowed for Event Flows),
   * made once the Lan exists, before the first node starts.
   */
  reach?: (lan: Pick<Cluster, 'forwardUrl' | 'loopback'>) => Promise<Record<string, string>>;
}

export interface Cluster {
  apiNode: Node;
  /** The live workers, in start order: `startWorker` adds, `stop` removes. */
  workers: Node[];
  /** The API node's client. */
  api: Client;
  adminKey: string;
  /** The nodes' settings with the services' addresses as the test process reaches them (loopback). */
  env: Record<string, string>;
  /** The same, with the addresses the nodes reach from their namespaces. */
  nodeEnv: Record<string, string>;
  /** The Lan, when this machine allows namespaces (root, iproute2). */
  lan: Lan | undefined;
  /** A URL on 127.0.0.1 as the nodes reach it (forwarded onto the Lan's bridge, or itself without a Lan). */
  forwardUrl(url: string): Promise<string>;
  /**
   * Makes 127.0.0.1:<port> of the host reachable at the same address from the nodes, for a
   * service that hands its own address to its clients (a Kafka broker's metadata).
   */
  loopback(port: number): Promise<void>;
  startWorker(name: string, env?: Record<string, string>): Promise<Node>;
  /** Restarts the API node on the same settings (a fresh data directory, as a replaced node). */
  restartApi(): Promise<Node>;
  /** Stops a node (SIGKILL: without a goodbye) and forgets it. */
  stop(node: Node, signal?: NodeJS.Signals): Promise<void>;
  close(): Promise<void>;
}

/**
 * The API node (first: it makes the schema, the bucket and the admin account), then the workers,
 * each a separate `npm start`, in a network namespace of its own when this machine allows.
 */
export async function startCluster(o: ClusterOptions): Promise<Cluster> {
  const { postgres, nats, s3 } = CLUSTER_SERVICES;
  if (!postgres || !nats || !s3) throw new Error('a cluster needs PostgreSQL, NATS and S3: run under scripts/with-services.sh');
  const db = await createPostgresDatabase();
  const shared = await makeTempDir('algohost-cluster-shared-');
  const adminKey = generateApiKey();
  const env: Record<string, string> = {
    ...clusterSettings({ databaseUrl: db.url, natsUrl: nats, s3Endpoint: s3, sharedDir: shared, adminKey, natsPrefix: o.natsPrefix }),
    ALGOHOST_LOG_LEVEL: 'info',
    ...o.env,
  };
  const lan = netnsAvailable() ? createLan() : undefined;
  const forwardUrl = async (url: string) => (lan ? lan.forwardUrl(url) : url);
  const loopback = async (port: number) => {
    await lan?.loopback(port);
  };
  const nodeEnv: Record<string, string> = {
    ...env,
    ALGOHOST_DATABASE_URL: await forwardUrl(db.url),
    ALGOHOST_NATS_URL: await forwardUrl(nats),
    ALGOHOST_S3_ENDPOINT: await forwardUrl(s3),
    ...(await o.reach?.({ forwardUrl, loopback })),
  };
  const nodes: Node[] = [];
  const start = async (name: string, role: 'api' | 'worker', extra: Record<string, string> = {}) => {
    // Each worker logs in to NATS with a worker user (in turn), the API node with `api` (nodeEnv).
    const credentials = role === 'worker' ? workerCredentials() : {};
    const node = await startNode(name, { ...nodeEnv, ...credentials, ...extra, ALGOHOST_ROLE: role }, lan);
    nodes.push(node);
    return node;
  };
  const cluster: Cluster = {
    apiNode: undefined as unknown as Node,
    workers: [],
    api: undefined as unknown as Client,
    adminKey,
    env,
    nodeEnv,
    lan,
    forwardUrl,
    loopback,
    async startWorker(name, extra) {
      const worker = await start(name, 'worker', extra);
      cluster.workers.push(worker);
      return worker;
    },
    async restartApi() {
      await stopNode(cluster.apiNode);
      cluster.apiNode = await start('api', 'api');
      cluster.api = client(cluster.apiNode.url);
      return cluster.apiNode;
    },
    async stop(node, signal = 'SIGTERM') {
      cluster.workers = cluster.workers.filter((w) => w !== node);
      await stopNode(node, signal);
    },
    async close() {
      // A worker a test stopped (SIGSTOP) takes its SIGTERM only once it runs again.
      for (const n of nodes) if (n.child.exitCode === null && n.child.signalCode === null) n.child.kill('SIGCONT');
      await Promise.all(nodes.map((n) => stopNode(n)));
      await lan?.close();
      await db.drop();
      await fs.promises.rm(shared, { recursive: true, force: true });
    },
  };
  try {
    cluster.apiNode = await start('api', 'api');
    cluster.api = client(cluster.apiNode.url);
    cluster.workers = await Promise.all(o.workers.map((w) => start(w.name, 'worker', w.env)));
  } catch (err) {
    await cluster.close().catch(() => {});
    throw err;
  }
  return cluster;
}

/** A node's started runners, idle or busy, from its /metrics (all a worker's port serves besides /healthz). */
export async function warmRunnersOf(node: Node, adminKey: string): Promise<number> {
  const res = await fetch(`${node.url}/metrics`, { headers: { authorization: `Simple ${adminKey}` } });
  const text = await res.text();
  if (!res.ok) throw new Error(`${node.name} /metrics: ${res.status} ${text}`);
  const m = /^algohost_runners (\d+)$/m.exec(text);
  if (!m) throw new Error(`${node.name} /metrics has no algohost_runners`);
  return Number(m[1]);
}

/**
 * A worker's presence entry as a node reads it: verified under the cluster's key (the tests hold
 * it, as every node does) for its key in the bucket. Throws when it does not verify.
 */
export function presenceOf<T>(cluster: Pick<Cluster, 'env'>, prefix: string, e: KvEntry): T {
  const signer = new MessageSigner(Buffer.from(cluster.env.ALGOHOST_CLUSTER_KEY!, 'base64'));
  const { payload } = signer.open('presence', `${natsNames(prefix).workersBucket}.${e.key}`, '', e.value);
  return JSON.parse(payload.toString('utf8')) as T;
}
