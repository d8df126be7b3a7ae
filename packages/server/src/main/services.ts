/**
 * The composition root: the only code that turns configuration into adapters and wires them
 * into domain services, one area at a time (main/wiring/<area>.ts), as the node's role says
 * (main/roles/). Tests build the same graph with their own config.
 */
import fs from 'node:fs';
import type { ApiServices } from '../api/context.js';
import type { NatsCluster } from '../cluster/nats-cluster.js';
import type { ClusterWorker } from '../cluster/worker.js';
import type { Config } from '../config/config.js';
import { ClusterStatusService } from '../domain/cluster/status-service.js';
import type { BlobStore } from '../domain/data/ports.js';
import type { Logger } from '../domain/logger.js';
import type { WorkerLog } from '../events/delivery-policy.js';
import type { KafkaProducers } from '../events/kafka/producers.js';
import { RunningFlows } from '../events/running-flows.js';
import type { GitRepositoryHost } from '../git/repository-host.js';
import { type JobServices, jobCatalog } from '../jobs/catalog.js';
import type { Job } from '../jobs/job-runner.js';
import type { RunnerPool } from '../runtime/runner/runner-pool.js';
import type { SqlAccountStore } from '../storage/account-store.js';
import type { Db } from '../storage/database.js';
import { blobStoreFor } from './blob-store.js';
import { NodeMetrics } from './metrics.js';
import type { CheckedSettings } from './settings.js';
import { wireAccounts, wireKeys } from './wiring/accounts.js';
import { wireAlgorithms, wireBuilds, wireRepositories } from './wiring/algorithms.js';
import { type Base, type NodeAddress, type NodeResources, openBase } from './wiring/base.js';
import { wireAsyncCalls, wireCalls } from './wiring/calls.js';
import { clusterJobs, clusterWorker, hearBuildEvents, uploadingBuilder } from './wiring/cluster.js';
import { wireData } from './wiring/data.js';
import { wireEvents, wireFlowWorkers } from './wiring/events.js';
import { type Sandboxes, startSandboxes, wireSandboxes } from './wiring/runtime.js';
import { wireScmSourcing, wireScmSync } from './wiring/scm.js';

export { type NodeAddress, type NodeResources, openNode } from './wiring/base.js';

/** This server's release, from its package.json. */
export const VERSION = (JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

export interface Services extends ApiServices, Omit<Sandboxes, 'supervisor' | 'artifacts'> {
  db: Db;
  accounts: SqlAccountStore;
  repositories: GitRepositoryHost;
  blobs: BlobStore;
  /** Kafka producers of publisher flows and dead letters (closed after the jobs stop). */
  producers: KafkaProducers;
  /** The background jobs, in start order (`jobs/catalog.ts`); the server runs them. */
  jobs: Job[];
  /** Cluster mode: the NATS connection (closed last but the database) and, on workers, the work loop. */
  nats?: NatsCluster;
  clusterWorker?: ClusterWorker;
  /**
   * The effects on the host, once before the node serves: directories, cgroups, the blob store.
   * Building the services has none (the OpenAPI document is written without this step).
   */
  start: () => Promise<void>;
}

/** Areas in the order their dependencies allow; each area's wiring subscribes to the domain changes it acts on. */
export async function buildServices(
  config: Config,
  checked: CheckedSettings,
  log: Logger & WorkerLog,
  node: NodeAddress,
  resources: NodeResources,
): Promise<Services> {
  const base = await openBase(config, checked, log, node, resources);
  const blobs = await blobStoreFor(config);
  const sandboxes = wireSandboxes(base, blobs);
  const { pool } = sandboxes;
  // Kept by the flow workers (made after the calls they deliver through), read by the metrics,
  // the flows' status and a worker's presence entries.
  const runningFlows = new RunningFlows();
  const metrics = new NodeMetrics({ pool, flows: runningFlows });
  const keys = wireKeys(base);
  const repositories = wireRepositories(base);
  const scm = wireScmSourcing(base, repositories);
  const { algorithms, versions, source } = wireAlgorithms(base, repositories, scm.externalSources);
  const ev = wireEvents(base, metrics, runningFlows);
  const calls = wireCalls(base, { keys, versions, pool, metrics, publisher: ev.publisher, insights: ev.insights });
  const flowWorkers = wireFlowWorkers(base, ev, { calls, metrics, running: runningFlows });
  const builder = uploadingBuilder(metrics.timedBuilder(sandboxes.builder), sandboxes.artifacts);
  const { builds, buildQueue } = wireBuilds(base, { algorithms, repositories, builder });
  hearBuildEvents(base, builds);
  const asyncCalls = wireAsyncCalls(base, calls);
  const data = wireData(base, blobs);
  const { users, organizations, audit } = wireAccounts(base, [algorithms, data]);
  const worker = clusterWorker(base, { keys, builds, asyncCalls, pool, metrics, runningFlows });
  const jobServices: JobServices = {
    builds,
    buildQueue,
    data,
    asyncCalls,
    runners: pool,
    sandboxes: sandboxes.supervisor,
    events: ev.events,
    audit,
    flows: flowWorkers,
    flowChanges: ev.flowChanges,
  };
  const cluster = clusterJobs(base, worker);
  return {
    db: base.db,
    accounts: base.accounts,
    repositories,
    users,
    organizations,
    keys,
    algorithms,
    source,
    cluster: clusterStatus(base, metrics, pool),
    audit,
    catalog: base.catalog,
    builds,
    versions,
    builder: sandboxes.builder,
    egress: sandboxes.egress,
    runnerEgress: sandboxes.runnerEgress,
    runners: sandboxes.runners,
    pool,
    calls,
    asyncCalls,
    metrics: () => metrics.render(),
    links: { publicUrl: node.publicUrl },
    data,
    blobs,
    events: ev.events,
    insights: ev.insights,
    producers: ev.producers,
    scmConfigs: scm.scmConfigs,
    scmAuthorizations: scm.scmAuthorizations,
    scmSources: wireScmSync(base, scm, { repositories, algorithms, builds }),
    ...(base.cluster ? { nats: base.cluster.nats } : {}),
    ...(worker ? { clusterWorker: worker } : {}),
    jobs: jobCatalog(
      { ...jobServices, ...(cluster ? { cluster } : {}) },
      {
        dataSweepMs: config.dataSweepSeconds * 1000,
        runnerIdleMs: config.runnerIdleSeconds * 1000,
        deliveryRetentionMs: config.eventDeliveryRetentionSeconds * 1000,
        auditRetentionMs: config.auditRetentionSeconds * 1000,
      },
    ),
    start: async () => {
      startSandboxes(base, sandboxes);
      await blobs.open();
    },
  };
}

/** The admin status of this node: its facts and live gauges. */
function clusterStatus(base: Base, metrics: NodeMetrics, pool: RunnerPool): ClusterStatusService {
  const { config } = base;
  return new ClusterStatusService({
    facts: {
      version: VERSION,
      database: config.databaseUrl ? 'postgresql' : 'sqlite',
      blobStore: config.blobStore,
      startedAt: base.startedAt,
    },
    gauges: {
      buildCounts: () => base.buildStore.countActive(),
      warmRunners: () => pool.warmRunners(),
      callsInLastMinute: () => metrics.callsInLastMinute(),
    },
    clock: base.clock,
  });
}
