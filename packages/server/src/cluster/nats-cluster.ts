/**
 * The NATS side of cluster mode (ARCHITECTURE.md "Cluster mode"): one connection per node, the
 * JetStream stream and consumers that hold builds and async calls as durable work, the subjects
 * that route sync calls to workers, and the KV bucket where workers announce themselves.
 *
 * Every name below starts with the cluster's prefix (ALGOHOST_NATS_PREFIX, `algohost` unless set;
 * shown here with the default), so clusters sharing a nats-server never take each other's work.
 *
 * Subjects:
 * - `algohost.work.build` / `algohost.work.async` (stream ALGOHOST_WORK, work-queue retention,
 *   file storage): one message per queued build / accepted async call, taken by one worker,
 *   acknowledged once the outcome is recorded, redelivered after the ack wait when the worker
 *   holding it went silent (a live worker reports progress). `algohost.work.gpu.build` /
 *   `algohost.work.gpu.async`: the same for GPU environments, taken only by workers that
 *   declare a GPU (ALGOHOST_WORKER_GPU); they wait in the stream while there is none.
 * - `algohost.run.node.<node id>`: sync calls to one worker, the one the API node picked from
 *   the presence entries (cluster/directory.ts: warm there, else the least loaded).
 * - `algohost.build.<build id>`: live build output from the worker to every node's followers.
 */
import crypto from 'node:crypto';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import {
  AckPolicy,
  DeliverPolicy,
  jetstream,
  jetstreamManager,
  type JetStreamClient,
  RetentionPolicy,
  StorageType,
} from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import { LRUCache } from 'lru-cache';
import { MessageSigner, type SignerLog } from './signed-messages.js';

/** The subjects, stream, consumers and bucket of one cluster, all under its prefix. */
export interface NatsNames {
  stream: string;
  subjects: {
    build: string;
    async: string;
    gpuBuild: string;
    gpuAsync: string;
    runOn: (nodeId: string) => string;
    buildEvents: (buildId: string) => string;
    allBuildEvents: string;
  };
  consumers: { build: string; async: string; gpuBuild: string; gpuAsync: string };
  workersBucket: string;
}

export function natsNames(prefix: string): NatsNames {
  // Stream and bucket names allow neither dots nor (in KV buckets) every character a subject does.
  const upper = prefix.toUpperCase().replaceAll('-', '_');
  return {
    stream: `${upper}_WORK`,
    subjects: {
      build: `${prefix}.work.build`,
      async: `${prefix}.work.async`,
      gpuBuild: `${prefix}.work.gpu.build`,
      gpuAsync: `${prefix}.work.gpu.async`,
      runOn: (nodeId) => `${prefix}.run.node.${nodeId}`,
      buildEvents: (buildId) => `${prefix}.build.${buildId}`,
      allBuildEvents: `${prefix}.build.*`,
    },
    consumers: { build: 'builds', async: 'async-calls', gpuBuild: 'gpu-builds', gpuAsync: 'gpu-async-calls' },
    workersBucket: `${prefix.replaceAll('-', '_')}_workers`,
  };
}

/** A worker's presence entry lives this long unless renewed (workers renew every 5 s). */
export const PRESENCE_TTL_MS = 15_000;
/** The largest message cluster mode sends: a 15 MB output or a 10 MiB input with its envelope. */
export const MIN_MAX_PAYLOAD = 16 * 1024 * 1024;

/** Tokens already made: a node calls a handful of artifacts many times a second. */
const tokens = new LRUCache<string, string>({ max: 10_000 });

/** A short token for an artifact key (which holds "/" and "."): a hash, the same on every node. */
export function artifactToken(artifact: string): string {
  let token = tokens.get(artifact);
  if (token === undefined) {
    token = crypto.createHash('sha256').update(artifact).digest('hex').slice(0, 32);
    tokens.set(artifact, token);
  }
  return token;
}

export interface NatsCluster {
  nc: NatsConnection;
  /** This cluster's subjects, stream, consumers and bucket. */
  names: NatsNames;
  js: JetStreamClient;
  workers: KV;
  /** This process, in presence entries and to skip its own relayed build output. */
  nodeId: string;
  /** Signs what this node sends and checks what it hears (cluster/signed-messages.ts). */
  signer: MessageSigner;
  close(): Promise<void>;
}

export class NatsSetupError extends Error {}

/**
 * Connects (retrying for ever once connected: a restarted nats-server is rejoined by itself) and
 * makes sure the stream, the consumers and the KV bucket exist. Every node does this at start;
 * creating what already exists with the same settings is a no-op.
 */
export async function openNatsCluster(
  url: string,
  opts: { ackWaitMs: number; name: string; prefix: string },
  /** The cluster key (the same on every node) and where dropped messages are reported. */
  trust: { clusterKey: Buffer; log?: SignerLog },
): Promise<NatsCluster> {
  const signer = new MessageSigner(trust.clusterKey, trust.log);
  const names = natsNames(opts.prefix);
  const { stream: STREAM, subjects: SUBJECTS, consumers: CONSUMERS } = names;
  const nc = await connect({ servers: url, name: opts.name, maxReconnectAttempts: -1, reconnectTimeWait: 500 });
  try {
    const maxPayload = nc.info?.max_payload ?? 0;
    if (maxPayload < MIN_MAX_PAYLOAD) {
      throw new NatsSetupError(
        `nats-server at ${url} allows messages of ${maxPayload} bytes; cluster mode carries 10 MiB inputs and 15 MB outputs whole, so set max_payload to at least 16MB (32MB recommended) in its configuration`,
      );
    }
    const jsm = await jetstreamManager(nc);
    const stream = {
      name: STREAM,
      subjects: [`${opts.prefix}.work.>`],
      retention: RetentionPolicy.Workqueue,
      storage: StorageType.File,
      // A retried publish of the same build or request (same message id) is stored once.
      duplicate_window: 120_000_000_000,
    };
    await jsm.streams.add(stream).catch(async () => jsm.streams.update(STREAM, stream));
    const ackWait = Math.round(opts.ackWaitMs * 1_000_000);
    for (const [durable, subject] of [
      [CONSUMERS.build, SUBJECTS.build],
      [CONSUMERS.async, SUBJECTS.async],
      [CONSUMERS.gpuBuild, SUBJECTS.gpuBuild],
      [CONSUMERS.gpuAsync, SUBJECTS.gpuAsync],
    ] as const) {
      const consumer = {
        durable_name: durable,
        filter_subject: subject,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        ack_wait: ackWait,
        max_deliver: -1,
      };
      await jsm.consumers.add(STREAM, consumer).catch(async () => jsm.consumers.update(STREAM, durable, { ack_wait: ackWait }));
    }
    const js = jetstream(nc);
    const workers = await new Kvm(js).create(names.workersBucket, { ttl: PRESENCE_TTL_MS, history: 1 });
    return {
      nc,
      names,
      js,
      workers,
      nodeId: crypto.randomUUID(),
      signer,
      close: async () => {
        if (!nc.isClosed()) await nc.drain().catch(() => nc.close());
      },
    };
  } catch (err) {
    await nc.close();
    throw err;
  }
}
