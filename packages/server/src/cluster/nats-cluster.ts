/**
 * The NATS side of cluster mode (docs/design/cluster.md): one connection per node, the
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
 *
 * - `algohost.reply.<node id>.<call>`: a worker's heartbeats and answer to one sync call.
 *
 * Every node connects with the credentials of its role (ALGOHOST_NATS_USER, docs/cluster.md §3),
 * and the nats-server's subject permissions hold each role to its part: only API nodes publish
 * work and sync calls and read answers; a worker reads only its own subjects and publishes only
 * its presence, build output, acknowledgements and answers. A node's id, its run subject, its
 * presence key and its reply subjects all start with its NATS user, so the permissions of one
 * worker user can name exactly its own subjects, and a node's inbox (`_INBOX.<prefix>.<user>`,
 * where JetStream and the KV bucket answer it) is not readable with another role's credentials.
 * (Not nats-server's allow_responses for the answers: with the many answers of a long call it
 * keeps every call's reply subject for the whole window and scans them all on each message.)
 * A node refuses to start against a nats-server that lets clients in without credentials
 * (ALGOHOST_NATS_ALLOW_ANONYMOUS allows it for a lab).
 */
import crypto from 'node:crypto';
import { AuthorizationError, connect, type NatsConnection } from '@nats-io/transport-node';
import {
  AckPolicy,
  DeliverPolicy,
  jetstream,
  jetstreamManager,
  type JetStreamClient,
  type JetStreamManager,
  RetentionPolicy,
  StorageType,
} from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import { LRUCache } from 'lru-cache';
import { NatsLink } from './nats-link.js';
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
  /** Whether `nc` is connected now, and what to do when it comes back (a restarted nats-server). */
  link: NatsLink;
  /**
   * Where workers' answers to this node's sync calls go: `<prefix>.reply.<node id>` (the node id
   * starts with its NATS user, which alone may subscribe there). Not under the node's inbox, so
   * a worker's user, which may publish answers, cannot publish into the inbox where JetStream and
   * the KV bucket answer this node.
   */
  replyPrefix: string;
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

/** How a node joins the cluster's NATS (ALGOHOST_ROLE, ALGOHOST_NATS_USER, ALGOHOST_NATS_PASSWORD…). */
export interface NatsClusterOptions {
  ackWaitMs: number;
  /** The connection's name (nats-server's connz shows it). */
  name: string;
  prefix: string;
  role: 'api' | 'worker' | 'all';
  /** Unset only with allowAnonymous (config.ts refuses the rest). */
  user?: string;
  password?: string;
  /** ALGOHOST_NATS_ALLOW_ANONYMOUS: a nats-server that lets anyone in is only warned about. */
  allowAnonymous: boolean;
  warn: (message: string) => void;
}

/** How long a worker waits between looks for the stream, consumers and bucket an API node makes. */
const SETUP_RETRY_MS = 1000;

/**
 * Connects (retrying for ever once connected: a restarted nats-server is rejoined by itself),
 * checks the server (payload limit, no anonymous clients), and makes sure the stream, the
 * consumers and the KV bucket exist. API nodes (and `all` nodes) create them (creating what
 * already exists with the same settings is a no-op); a worker's user may not, so it waits for
 * them (an API node that starts later makes them).
 */
export async function openNatsCluster(
  url: string,
  opts: NatsClusterOptions,
  /** The cluster key (the same on every node) and where dropped messages are reported. */
  trust: { clusterKey: Buffer; log?: SignerLog },
): Promise<NatsCluster> {
  const signer = new MessageSigner(trust.clusterKey, trust.log);
  const names = natsNames(opts.prefix);
  const nodeId = opts.user ? `${opts.user}.${crypto.randomUUID()}` : crypto.randomUUID();
  const nc = await connectNode(url, opts);
  try {
    await checkServer(nc, url, opts);
    const jsm = await jetstreamManager(nc);
    const js = jetstream(nc);
    const kvm = new Kvm(js);
    if (opts.role !== 'worker') await createWorkQueues(jsm, names, opts);
    else await awaitWorkQueues(jsm, names, url, opts);
    // For a worker the bucket exists by now: this reads its settings and never creates (which
    // a worker may not).
    const workers = await kvm.create(names.workersBucket, { ttl: PRESENCE_TTL_MS, history: 1 });
    return {
      nc,
      link: new NatsLink(nc),
      replyPrefix: `${opts.prefix}.reply.${nodeId}`,
      names,
      js,
      workers,
      nodeId,
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

/** The node's connection, with its role's credentials and an inbox only that user may read. */
async function connectNode(url: string, opts: NatsClusterOptions): Promise<NatsConnection> {
  return connect({
    servers: url,
    name: opts.name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    ...(opts.user ? { user: opts.user, pass: opts.password, inboxPrefix: `_INBOX.${opts.prefix}.${opts.user}` } : {}),
  }).catch((err: unknown) => {
    if (err instanceof AuthorizationError) {
      throw new NatsSetupError(
        `nats-server at ${url} refused the user ${opts.user ?? '(none)'}: check ALGOHOST_NATS_USER and ALGOHOST_NATS_PASSWORD against its authorization block (docs/cluster.md §3)`,
      );
    }
    throw err;
  });
}

/** Refuses a nats-server whose messages are too small for a call, or that lets anyone in. */
async function checkServer(nc: NatsConnection, url: string, opts: NatsClusterOptions): Promise<void> {
  const maxPayload = nc.info?.max_payload ?? 0;
  if (maxPayload < MIN_MAX_PAYLOAD) {
    throw new NatsSetupError(
      `nats-server at ${url} allows messages of ${maxPayload} bytes; cluster mode carries 10 MiB inputs and 15 MB outputs whole, so set max_payload to at least 16MB (32MB recommended) in its configuration`,
    );
  }
  // INFO's auth_required is false when no authorization is configured; a no_auth_user lets
  // anonymous clients in all the same, which only a try shows.
  if (!nc.info?.auth_required || (await acceptsAnonymous(url))) {
    if (!opts.allowAnonymous) {
      throw new NatsSetupError(
        `nats-server at ${url} lets clients in without credentials: anyone who reaches it can read every call and forge work. Give it the users and permissions of docs/cluster.md §3, or set ALGOHOST_NATS_ALLOW_ANONYMOUS=true for a lab`,
      );
    }
    opts.warn(
      `ALGOHOST_NATS_ALLOW_ANONYMOUS=true: nats-server at ${url} lets clients in without credentials; anyone who reaches it can read every call, answer in a worker's place and run any algorithm as anyone. Only for a lab.`,
    );
  }
}

/** Each work consumer's durable name and the subject it takes. */
function workConsumers(names: NatsNames): readonly (readonly [durable: string, subject: string])[] {
  const { subjects, consumers } = names;
  return [
    [consumers.build, subjects.build],
    [consumers.async, subjects.async],
    [consumers.gpuBuild, subjects.gpuBuild],
    [consumers.gpuAsync, subjects.gpuAsync],
  ];
}

/** An API node makes the stream and its consumers (making what exists with the same settings is a no-op). */
async function createWorkQueues(jsm: JetStreamManager, names: NatsNames, opts: NatsClusterOptions): Promise<void> {
  const ackWait = Math.round(opts.ackWaitMs * 1_000_000);
  const stream = {
    name: names.stream,
    subjects: [`${opts.prefix}.work.>`],
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
    // A retried publish of the same build or request (same message id) is stored once.
    duplicate_window: 120_000_000_000,
  };
  await jsm.streams.add(stream).catch(async () => jsm.streams.update(names.stream, stream));
  for (const [durable, subject] of workConsumers(names)) {
    const consumer = {
      durable_name: durable,
      filter_subject: subject,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: ackWait,
      max_deliver: -1,
    };
    await jsm.consumers.add(names.stream, consumer).catch(async () => jsm.consumers.update(names.stream, durable, { ack_wait: ackWait }));
  }
}

/** A worker may not make the stream, consumers or bucket: it waits until an API node has. */
async function awaitWorkQueues(jsm: JetStreamManager, names: NatsNames, url: string, opts: NatsClusterOptions): Promise<void> {
  const STREAM = names.stream;
  for (let attempt = 0; ; attempt++) {
    try {
      await jsm.streams.info(STREAM);
      for (const [durable] of workConsumers(names)) await jsm.consumers.info(STREAM, durable);
      await jsm.streams.info(`KV_${names.workersBucket}`);
      return;
    } catch (err) {
      const message = (err as Error).message;
      if (!/not found/i.test(message)) {
        throw new NatsSetupError(
          `the worker could not read the stream ${STREAM}, its consumers or the KV bucket ${names.workersBucket} on ${url} (${message}): check that the user ${opts.user ?? '(none)'} has the worker permissions of docs/cluster.md §3`,
        );
      }
      if (attempt % 30 === 0) {
        opts.warn(
          `waiting for an API node to create the stream ${STREAM}, its consumers and the KV bucket ${names.workersBucket} on ${url}`,
        );
      }
      await new Promise((r) => setTimeout(r, SETUP_RETRY_MS));
    }
  }
}

/** Whether the nats-server at `url` lets in a client that gives no credentials. */
export async function acceptsAnonymous(url: string): Promise<boolean> {
  try {
    const probe = await connect({
      servers: url,
      name: 'algohost-anonymous-check',
      maxReconnectAttempts: 0,
      reconnect: false,
      timeout: 5000,
    });
    await probe.close();
    return true;
  } catch {
    // Refused (an authorization violation), or not even reachable without what the node's own
    // connection has: either way no anonymous client gets in.
    return false;
  }
}
