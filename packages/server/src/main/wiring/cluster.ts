/**
 * Cluster mode (ALGOHOST_NATS_URL): the NATS link, artifacts in the blob store, builds and
 * async calls dispatched over NATS, a worker's work loop and the jobs' leases. A node alone
 * wires none of it.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { BlobArtifactStore } from '../../cluster/artifact-store.js';
import { WorkerDirectory } from '../../cluster/directory.js';
import { natsBuildDispatch, receiveBuildEvents, relayBuildEvent } from '../../cluster/dispatch.js';
import { type NatsCluster, NatsSetupError, openNatsCluster } from '../../cluster/nats-cluster.js';
import { ClusterWorker } from '../../cluster/worker.js';
import { type Config, ConfigError } from '../../config/config.js';
import { BuildEvents } from '../../domain/builds/build-events.js';
import type { BuildService, BuildServiceDeps } from '../../domain/builds/build-service.js';
import type { Builder } from '../../domain/builds/ports.js';
import type { KeyService } from '../../domain/accounts/key-service.js';
import type { AsyncCallService } from '../../domain/calls/async-calls.js';
import type { BlobStore } from '../../domain/data/ports.js';
import type { Logger } from '../../domain/logger.js';
import type { ClusterJobs } from '../../jobs/catalog.js';
import type { SandboxBuilder } from '../../runtime/build/sandbox-builder.js';
import type { RunnerPool } from '../../runtime/runner/runner-pool.js';
import type { FlowWorkers } from '../../events/flow-workers.js';
import { SqlBlobIndexDigestStore } from '../../storage/blob-index-digest-store.js';
import { SqlLeaseStore } from '../../storage/lease-store.js';
import type { ClusterLink } from '../roles/index.js';
import type { NodeMetrics } from '../metrics.js';
import type { Base } from './base.js';
import { wireRunTargets } from './calls.js';

/** NATS and the live workers' presence entries; a server that cannot carry the call limits is a settings error (exit 2). */
export async function openClusterLink(config: Config, key: Buffer, log: Logger): Promise<ClusterLink> {
  const nats = await openNats(config, key, log);
  // The live workers, from their presence entries: where sync calls go, whether a GPU worker is there.
  const directory = new WorkerDirectory(nats);
  await directory.start();
  return { nats, directory };
}

async function openNats(config: Config, key: Buffer, log: Logger): Promise<NatsCluster> {
  try {
    return await openNatsCluster(
      config.natsUrl!,
      {
        ackWaitMs: config.workAckWaitSeconds * 1000,
        name: `algohost-${config.role}`,
        prefix: config.natsPrefix,
        role: config.role,
        ...(config.natsUser ? { user: config.natsUser, password: config.natsPassword! } : {}),
        allowAnonymous: config.natsAllowAnonymous,
        warn: (message) => log.warn({ nats: config.natsUrl }, message),
      },
      // Messages are signed under the cluster key (required in cluster mode, config.ts).
      { clusterKey: key, log },
    );
  } catch (err) {
    if (err instanceof NatsSetupError) throw new ConfigError(`ALGOHOST_NATS_URL: ${err.message}`);
    throw err;
  }
}

/**
 * The key sealing SCM secrets and broker credentials (domain/events/secret-box.ts): ALGOHOST_CLUSTER_KEY, else the
 * key in <data dir>/cluster-key, made (0600) on first start. It never goes into the database, so
 * a copy of the database alone does not reveal the credentials.
 */
export function clusterKey(config: Config): Buffer {
  if (config.clusterKey) return Buffer.from(config.clusterKey, 'base64');
  const file = path.join(config.dataDir, 'cluster-key');
  try {
    fs.writeFileSync(file, `${crypto.randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const key = Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64');
  if (key.length !== 32) throw new ConfigError(`${file} does not hold a 32-byte base64 key; restore it or set ALGOHOST_CLUSTER_KEY`);
  return key;
}

/**
 * Artifacts go to the blob store after a build and come from it on a worker's first cold start
 * of them; `warm` names the artifacts this node's pool has runners of.
 */
export function clusterArtifacts(
  base: Base,
  blobs: BlobStore,
  builder: SandboxBuilder,
  warm: () => Set<string>,
): BlobArtifactStore | undefined {
  if (!base.cluster) return undefined;
  const { config, db, log } = base;
  return new BlobArtifactStore(
    blobs,
    new SqlBlobIndexDigestStore(db),
    builder,
    { cacheBytes: config.artifactCacheMiB * 1024 * 1024, warm },
    log,
  );
}

/** A build ends only once its artifact is in the blob store, where other workers find it. */
export function uploadingBuilder(inner: Builder, artifacts: BlobArtifactStore | undefined): Builder {
  if (!artifacts) return inner;
  return {
    build: async (req, log, signal) => {
      const result = await inner.build(req, log, signal);
      log('Storing the artifact in the blob store\n');
      await artifacts.upload(result.artifact);
      return result;
    },
  };
}

/** Builds queued on any node go to the workers over NATS; a worker relays their events to the API nodes. */
export function clusterBuilds(base: Base): Pick<BuildServiceDeps, 'dispatch' | 'events'> {
  if (!base.cluster) return {};
  const { nats, directory } = base.cluster;
  return {
    dispatch: natsBuildDispatch(nats, directory, (name) => base.catalog.environmentByName(name)?.machine_type === 'GPU'),
    events: new BuildEvents(base.role.runsWork ? relayBuildEvent(nats) : undefined),
  };
}

/** An API-serving node hears the workers' build events (for the build logs it streams). */
export function hearBuildEvents(base: Base, builds: BuildService): void {
  if (base.cluster && base.role.servesApi) receiveBuildEvents(base.cluster.nats, builds.events);
}

export interface WorkerDeps {
  keys: KeyService;
  builds: BuildService;
  asyncCalls: AsyncCallService;
  pool: RunnerPool;
  metrics: NodeMetrics;
  flowWorkers: FlowWorkers;
}

/** A node that runs work takes builds, async calls and sync calls from NATS. */
export function clusterWorker(base: Base, deps: WorkerDeps): ClusterWorker | undefined {
  if (!base.cluster || !base.role.runsWork) return undefined;
  const { config, accounts } = base;
  const { keys, pool } = deps;
  const runTargets = wireRunTargets(base);
  return new ClusterWorker({
    cluster: base.cluster.nats,
    builds: deps.builds,
    asyncCalls: deps.asyncCalls,
    runtime: deps.metrics.timedRuntime(pool),
    adoptCallKey: async (secret, ref, ttlMs) => {
      const account = await accounts.findById(ref.accountId);
      if (!account) return undefined;
      const { capabilities, call } = ref;
      return keys.adoptCallKey(
        secret,
        { account, via: 'call_key', capabilities: new Set(capabilities), keyId: null, ...(call ? { call } : {}) },
        ttlMs,
      );
    },
    runTarget: (algorithmId, artifact, insights) => runTargets.get(algorithmId, artifact, insights),
    warmArtifacts: () => pool.warmArtifacts(),
    warmRunners: () => pool.warmRunners(),
    flows: () => Object.fromEntries(deps.flowWorkers.statuses().map(({ flow, status }) => [flow.id, status])),
    settings: {
      buildSlots: Math.max(1, config.buildConcurrency),
      asyncSlots: Math.min(16, Math.max(1, config.maxRunners)),
      ackWaitMs: config.workAckWaitSeconds * 1000,
      gpu: base.gpu,
    },
    log: base.log,
  });
}

/** Jobs that one node of the cluster runs at a time hold a lease in the database. */
export function clusterJobs(base: Base, worker: ClusterWorker | undefined): ClusterJobs | undefined {
  if (!base.cluster) return undefined;
  const { nats } = base.cluster;
  const leases = new SqlLeaseStore(base.db);
  return {
    role: base.config.role,
    lease: (name: string, ttlMs: number) => {
      const now = base.clock();
      return leases.acquire(name, nats.nodeId, now.toISOString(), new Date(now.getTime() + ttlMs).toISOString());
    },
    release: (name: string) => leases.release(name, nats.nodeId),
    ...(worker ? { worker } : {}),
  };
}
