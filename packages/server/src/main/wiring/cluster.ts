/**
 * Cluster mode (ALGOHOST_NATS_URL), once the NATS link is open (cluster-link.ts): artifacts in the blob store, builds and
 * async calls dispatched over NATS, a worker's work loop and the jobs' leases. A node alone
 * wires none of it.
 */
import { BlobArtifactStore } from '../../cluster/artifact-store.js';
import { natsBuildDispatch, receiveBuildEvents, relayBuildEvent } from '../../cluster/dispatch.js';
import { ClusterWorker } from '../../cluster/worker.js';
import { BuildEvents } from '../../domain/builds/build-events.js';
import type { BuildService, BuildServiceDeps } from '../../domain/builds/build-service.js';
import type { Builder } from '../../domain/builds/ports.js';
import type { KeyService } from '../../domain/accounts/key-service.js';
import type { AsyncCallService } from '../../domain/calls/async-calls.js';
import type { BlobStore } from '../../domain/data/ports.js';
import type { ClusterJobs } from '../../jobs/catalog.js';
import type { SandboxBuilder } from '../../runtime/build/sandbox-builder.js';
import type { RunnerPool } from '../../runtime/runner/runner-pool.js';
import type { RunningFlows } from '../../events/running-flows.js';
import { SqlBlobIndexDigestStore } from '../../storage/blob-index-digest-store.js';
import { SqlLeaseStore } from '../../storage/lease-store.js';
import type { NodeMetrics } from '../metrics.js';
import type { Base } from './base.js';
import { wireRunTargets } from './calls.js';

/**
 * Artifacts go to the blob store after a build and come from it on a worker's first cold start
 * of them (the runner pool, made after, tells the store which artifacts it keeps warm).
 */
export function clusterArtifacts(base: Base, blobs: BlobStore, builder: SandboxBuilder): BlobArtifactStore | undefined {
  if (!base.cluster) return undefined;
  const { config, db, log } = base;
  return new BlobArtifactStore(blobs, new SqlBlobIndexDigestStore(db), builder, { cacheBytes: config.artifactCacheMiB * 1024 * 1024 }, log);
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
  /** The subscriber flows this node runs, reported in its presence entries. */
  runningFlows: RunningFlows;
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
    flows: () => Object.fromEntries(deps.runningFlows.statuses().map(({ flow, status }) => [flow.id, status])),
    settings: {
      buildSlots: config.buildConcurrency,
      asyncSlots: Math.min(16, config.maxRunners),
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
