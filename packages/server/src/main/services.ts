/**
 * The composition root: the only code that turns configuration into adapters and wires them
 * into domain services. Tests build the same graph with their own config.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { type Config, ConfigError } from '../config/config.js';
import { systemClock } from '../domain/clock.js';
import { OwnerAccess } from '../domain/accounts/access.js';
import { KeyService } from '../domain/accounts/key-service.js';
import { CAPABILITIES, type Account } from '../domain/accounts/model.js';
import { OrganizationService } from '../domain/accounts/organization-service.js';
import { UserService } from '../domain/accounts/user-service.js';
import { AlgorithmService } from '../domain/algorithm-objects/algorithm-service.js';
import { SourceService } from '../domain/algorithms/source-service.js';
import { ClusterStatusService } from '../domain/cluster/status-service.js';
import { AuditService, SIGN_IN_AUDIT_DEFAULTS } from '../domain/audit/audit-service.js';
import { SqlAuditStore } from '../storage/audit-store.js';
import { Catalog } from '../domain/catalog/catalog.js';
import type { CatalogData } from '../domain/catalog/model.js';
import { BuildService } from '../domain/builds/build-service.js';
import type { Builder } from '../domain/builds/ports.js';
import { SandboxBuilder } from '../runtime/build/sandbox-builder.js';
import { LANGUAGE_ADAPTERS } from '../runtime/languages/index.js';
import { Supervisor } from '../runtime/sandbox/supervisor.js';
import type { CgroupReport } from '../runtime/sandbox/cgroups.js';
import { EgressConfigError, EgressProxy, type EgressTarget, parseEgressEntry } from '../runtime/sandbox/egress-proxy.js';
import { registryTargets } from '../runtime/languages/registries.js';
import { parseUidRange } from '../runtime/sandbox/uids.js';
import type { RegistrySettings } from '../runtime/languages/adapter.js';
import { type ApiSocketServer, RunnerFactory } from '../runtime/runner/runner-factory.js';
import { RunnerPool } from '../runtime/runner/runner-pool.js';
import { CallService } from '../domain/calls/call-service.js';
import type { Logger } from '../domain/logger.js';
import { AsyncCallService } from '../domain/calls/async-calls.js';
import { SqlAsyncRequestStore } from '../storage/async-request-store.js';
import { VersionService } from '../domain/versions/version-service.js';
import { SqlVersionStore } from '../storage/version-store.js';
import { NodeMetrics } from './metrics.js';
import { openBlobStore } from './blob-store.js';
import { DataService } from '../domain/data/data-service.js';
import type { BlobStore } from '../domain/data/ports.js';
import { SqlDataStore } from '../storage/data-store.js';
import { FileBuildLogStore, SqlBuildStore } from '../storage/build-store.js';
import { GitRepositoryHost } from '../git/repository-host.js';
import { jobCatalog } from '../jobs/catalog.js';
import { type Job, JobTrigger } from '../jobs/job-runner.js';
import type { ApiServices } from '../api/context.js';
import { SqlAccountStore, SqlClusterSettingsStore, SqlKeyStore } from '../storage/account-store.js';
import { SqlAlgorithmStore, SqlEnvironmentStore } from '../storage/algorithm-store.js';
import { readCatalog } from '../storage/catalog-files.js';
import { type Db, migrateToLatest, openDatabase } from '../storage/database.js';
import { EventService } from '../domain/events/event-service.js';
import type { ConsumerStatus } from '../domain/events/model.js';
import { FlowDeliveries } from '../domain/events/deliveries.js';
import { FlowPublisher } from '../domain/events/publishing.js';
import { SecretBox } from '../lib/secret-box.js';
import { SqlEventStore } from '../storage/event-store.js';
import { SqlInsightsStore } from '../storage/insights-store.js';
import { InsightsService } from '../domain/insights/insights-service.js';
import { FlowWorkers } from '../events/flow-workers.js';
import { SignInThrottle } from '../domain/accounts/sign-in-throttle.js';
import { KafkaProducers } from '../events/kafka/producers.js';
import { PlatformaticKafkaAdmin } from '../events/kafka/kafka-admin.js';
import type { WorkerLog } from '../events/delivery-policy.js';
import { SqlScmStore } from '../storage/scm-store.js';
import { ScmConfigService } from '../domain/scm/config-service.js';
import { AuthorizationService } from '../domain/scm/authorization-service.js';
import { ExternalSourceService } from '../domain/scm/external-source-service.js';
import { SourceSyncService } from '../domain/scm/source-sync-service.js';
import { SCM_PROVIDER_ADAPTERS } from '../scm/index.js';
import { BuildEvents } from '../domain/builds/build-events.js';
import { SqlLeaseStore } from '../storage/lease-store.js';
import { type NatsCluster, NatsSetupError, openNatsCluster } from '../cluster/nats-cluster.js';
import { NatsRuntime, natsAsyncDispatch, natsBuildDispatch, receiveBuildEvents, relayBuildEvent } from '../cluster/dispatch.js';
import { ClusterWorker } from '../cluster/worker.js';
import { BlobArtifactStore } from '../cluster/artifact-store.js';
import { WorkerDirectory } from '../cluster/directory.js';
import { RunTargets } from '../cluster/run-targets.js';
import { SqlBlobIndexDigestStore } from '../storage/blob-index-digest-store.js';

/** This server's release, from its package.json. */
export const VERSION = (JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

export interface Services extends ApiServices {
  db: Db;
  accounts: SqlAccountStore;
  repositories: GitRepositoryHost;
  builder: SandboxBuilder;
  egress: EgressProxy;
  /** Full-network runners' egress proxy (public addresses only). */
  runnerEgress: EgressProxy;
  runners: RunnerFactory;
  pool: RunnerPool;
  blobs: BlobStore;
  /** Kafka producers of publisher flows and dead letters (closed after the jobs stop). */
  producers: KafkaProducers;
  /** The background jobs, in start order (`jobs/catalog.ts`); the server runs them. */
  jobs: Job[];
  /** Cluster mode: the NATS connection (closed last but the database) and, on workers, the work loop. */
  nats?: NatsCluster;
  clusterWorker?: ClusterWorker;
}

/** Where this node is reached, known once it listens (port 0 picks a free port). */
export interface NodeAddress {
  /** Base of the links and Git URLs the API returns. */
  publicUrl: string;
  /** Serves each pipeline runner's own API socket (api/sandbox-sockets.ts); unset: runners get none. */
  apiSockets?: ApiSocketServer;
}

/**
 * Settings that name catalog entries or hosts, checked (and parsed) before anything touches the
 * disk, a socket or the database: a mistake there is one line and exit code 2, nothing else.
 */
export interface CheckedSettings {
  catalog: CatalogData;
  /** ALGOHOST_ENVIRONMENT_MEMORY by environment name, in bytes. */
  environmentMemory: Map<string, number>;
  registries: RegistrySettings;
  /** Where build steps may connect through the egress proxy. */
  egress: EgressTarget[];
  /** Private hosts full-network runners may reach through the egress proxy (ALGOHOST_RUNNER_EGRESS_ALLOW). */
  runnerEgress: EgressTarget[];
}

export function checkSettings(config: Config): CheckedSettings {
  const catalog = readCatalog();
  const environments = new Set(catalog.environments.map((e) => e.name));
  if (!environments.has(config.defaultEnvironment)) {
    throw new ConfigError(`ALGOHOST_DEFAULT_ENVIRONMENT: "${config.defaultEnvironment}" is not an environment of the catalog`);
  }
  const registries: RegistrySettings = {
    pipIndexUrl: config.pipIndexUrl,
    pipFindLinks: splitList(config.pipFindLinks).map((d) => path.resolve(d)),
    npmRegistry: config.npmRegistry,
    mavenRepository: config.mavenRepository,
    cranRepository: config.cranRepository,
    gemSource: config.gemSource,
    cargoRegistry: config.cargoRegistry,
  };
  return {
    catalog,
    environmentMemory: parseEnvironmentMemory(config.environmentMemory, environments),
    registries,
    egress: egressTargets(registries, config.buildEgressAllow),
    runnerEgress: runnerEgressTargets(config.runnerEgressAllow),
  };
}

/**
 * How long a node alone serves a cached key or resolution (see cacheTtlMs in buildServices): a
 * minute, so a caller who calls every few seconds never waits for a lookup (BENCHMARKS.md,
 * session 16), while a change that some path failed to announce still applies within it.
 */
const ALONE_CACHE_TTL_MS = 60_000;

export async function buildServices(
  config: Config,
  checked: CheckedSettings,
  log: Logger & WorkerLog,
  node: NodeAddress,
): Promise<Services> {
  const { environmentMemory, registries } = checked;
  fs.mkdirSync(config.dataDir, { recursive: true });
  // The sandbox user must pass through the data dir to reach build directories (never list
  // it or read the database: those stay 0600/0700).
  fs.chmodSync(config.dataDir, 0o711);
  const db = openDatabase({ url: config.databaseUrl, sqlitePath: path.join(config.dataDir, 'algohost.sqlite') });
  await migrateToLatest(db);
  // Cluster mode: every node reaches the others through NATS (ARCHITECTURE.md "Cluster mode").
  const nats = config.natsUrl ? await openCluster(config, log) : undefined;
  const runsWork = config.role !== 'api';
  // A node alone makes every change that a cached key or resolution depends on, and forgets
  // the entries a change touches at once: its cache TTL is only a bound on a forgotten case.
  // In a cluster a change made on another node reaches this one when the entry expires, so
  // the services' own few seconds apply.
  const cacheTtlMs = nats ? undefined : ALONE_CACHE_TTL_MS;
  // The live workers, from their presence entries: where sync calls go, whether a GPU worker is there.
  const directory = nats ? new WorkerDirectory(nats) : undefined;
  await directory?.start();
  const gpu = config.workerGpu === 'auto' ? fs.existsSync('/dev/nvidia0') : config.workerGpu === 'true';

  const clock = systemClock;
  const startedAt = clock();
  const accounts = new SqlAccountStore(db);
  const algorithmStore = new SqlAlgorithmStore(db);
  const repositories = new GitRepositoryHost(
    config.repositoryDir ?? path.join(config.dataDir, 'repositories'),
    config.gitBinary,
    {
      maxPushBytes: config.maxPushBytes,
      maxRepositoryBytes: config.maxRepositoryBytes,
      maxAccountBytes: config.maxAccountRepositoryBytes,
    },
    async (ownerId) => (await algorithmStore.listAllByOwner(ownerId)).map((a) => a.id),
    clock,
  );
  const catalog = await Catalog.load(checked.catalog, new SqlEnvironmentStore(db), clock);
  const access = new OwnerAccess(accounts);
  const buildStore = new SqlBuildStore(db);
  const versionStore = new SqlVersionStore(db);
  const clusterSettings = new SqlClusterSettingsStore(db);
  // Credentials kept at rest (SCM OAuth secrets and tokens, broker passwords) are sealed with the cluster key.
  const secrets = new SecretBox(clusterKey(config));
  const scmStore = new SqlScmStore(db);
  const scmConfigs = new ScmConfigService({ store: scmStore, providers: SCM_PROVIDER_ADAPTERS, secrets, clock, publicUrl: node.publicUrl });
  const scmAuthorizations = new AuthorizationService({
    store: scmStore,
    configs: scmConfigs,
    accounts,
    secrets,
    clock,
    redirectUri: `${node.publicUrl}/v1/scms/oauth/callback`,
    log,
  });
  const externalSources = new ExternalSourceService({
    store: scmStore,
    configs: scmConfigs,
    authorizations: scmAuthorizations,
    secrets,
    mirror: repositories,
    clock,
    publicUrl: node.publicUrl,
  });
  // Services made later are named in callbacks that run only once requests arrive.
  const algorithms = new AlgorithmService({
    algorithms: algorithmStore,
    accounts,
    access,
    catalog,
    repositories,
    defaults: { environmentName: config.defaultEnvironment, networkAccess: config.defaultNetworkAccess },
    clock,
    status: { versions: versionStore, builds: buildStore },
    external: externalSources,
    // A settings change (callability, pipeline_enabled…) applies to the next call.
    onChanged: () => calls.forgetResolutions(),
  });
  const cleanup = async (account: Account) => {
    await algorithms.deleteAllOf(account);
    await data.deleteAllOf(account);
  };
  const keys = new KeyService({
    accounts,
    keys: new SqlKeyStore(db),
    settings: clusterSettings,
    clock,
    sessionTtlSeconds: config.sessionTtlSeconds,
    onSessionEnd: (session) => data.sessionEnded(session),
    log,
    cacheTtlMs,
    signInThrottle: new SignInThrottle(
      {
        failuresPerAccount: config.signInFailuresPerAccount,
        failuresPerAddress: config.signInFailuresPerAddress,
        delaySeconds: config.signInDelaySeconds,
        maxDelaySeconds: config.signInMaxDelaySeconds,
      },
      clock,
    ),
  });

  const links = { publicUrl: node.publicUrl };
  // Build steps reach the registries (and the operator's extra hosts) through this proxy only.
  const egress = new EgressProxy({ dir: path.join(config.dataDir, 'egress'), allow: checked.egress });
  egress.prepare();
  // Full-network runners' only way out: public addresses (and the operator's named private
  // hosts), never the node's own services, whatever address they are at.
  const runnerEgress = new EgressProxy({
    dir: path.join(config.dataDir, 'egress-runners'),
    allow: checked.runnerEgress,
    policy: 'internet',
    services: nodeServiceEndpoints(config),
  });
  runnerEgress.prepare();
  // Only nodes that run work touch the host's cgroups (on cgroup v2 that moves this process
  // into a leaf group at start-up: runtime/sandbox/cgroups.ts).
  const supervisor = new Supervisor({
    maxOpenFiles: Math.max(16, config.sandboxOpenFiles),
    cgroups: runsWork ? {} : false,
    requireCgroups: config.requireCgroups,
    uidRange: parseUidRange(config.sandboxUidRange),
  });
  if (runsWork) logCgroups(log, supervisor.cgroupReport, config.requireCgroups);
  const builder = new SandboxBuilder(supervisor, LANGUAGE_ADAPTERS, {
    root: path.join(config.dataDir, 'builds'),
    clock,
    cacheDir: config.buildCacheDir && path.resolve(config.buildCacheDir),
    sharedCache: config.buildCacheShared,
    memoryBytes: config.buildMemoryMiB * 1024 * 1024,
    git: config.gitBinary,
    maxArtifactBytes: config.maxArtifactBytes,
    registries,
    egress,
  });
  builder.prepare();
  const blobs = await openBlobStore(config);
  // Cluster mode: artifacts go to the blob store after a build and come from it on a worker's
  // first cold start of them (pool is made just below; only called once calls arrive).
  const artifacts: BlobArtifactStore | undefined = nats
    ? new BlobArtifactStore(
        blobs,
        new SqlBlobIndexDigestStore(db),
        builder,
        { cacheBytes: config.artifactCacheMiB * 1024 * 1024, warm: (): Set<string> => pool.warmArtifacts() },
        log,
      )
    : undefined;
  const runners = new RunnerFactory(
    supervisor,
    builder,
    {
      memoryBytes: config.runnerMemoryMiB * 1024 * 1024,
      memoryBytesByEnvironment: environmentMemory,
      pids: config.runnerPids,
      cpus: config.runnerCpus > 0 ? config.runnerCpus : undefined,
      outputLimitBytes: 15 * 1000 * 1000,
      startTimeoutMs: 10 * 60 * 1000,
    },
    runnerEgress,
    artifacts && ((key) => artifacts.ensure(key)),
    node.apiSockets,
  );
  runners.prepare();
  const pool = new RunnerPool(runners, {
    maxPerArtifact: config.runnersPerAlgorithm,
    maxTotal: config.maxRunners,
    idleMs: config.runnerIdleSeconds * 1000,
    maxPerAccount: config.runnersPerAccount,
    memoryPerAccount: config.runnerMemoryPerAccountMiB * 1024 * 1024,
    memoryBudget: config.runnerMemoryBudgetMiB * 1024 * 1024,
    memoryOf: (environment) => environmentMemory.get(environment) ?? config.runnerMemoryMiB * 1024 * 1024,
    log,
  });
  const metrics = new NodeMetrics({ pool, flows: (): FlowWorkers => flowWorkers });
  const versions = new VersionService({
    versions: versionStore,
    builds: buildStore,
    algorithms,
    accounts,
    access,
    repositories,
    clock,
    // A publish changes what `latest` and version ranges name for the next call.
    onPublished: () => calls.forgetResolutions(),
  });

  // Event Flows: the publisher table is consulted by every successful call; the workers run
  // subscriber flows as jobs (`events.flows`), woken when a flow changes.
  const eventStore = new SqlEventStore(db);
  const flowChanges = new JobTrigger();
  const events = new EventService({
    store: eventStore,
    accounts,
    algorithms: algorithmStore,
    versions: versionStore,
    access,
    kafka: new PlatformaticKafkaAdmin(),
    secrets,
    clock,
    settings: {
      sqsEndpointAllow: splitList(config.sqsEndpointAllow),
      serviceBusEndpointAllow: splitList(config.serviceBusEndpointAllow),
    },
    // The workers are made below (they need the call service, which needs the publisher made
    // from this service's connections); status is only asked by requests, after all are made.
    // In a cluster the workers run the consumers and report them in their presence entries.
    status: (flowId): ConsumerStatus | undefined => (directory ? directory.flowStatus(flowId) : flowWorkers.status(flowId)),
    onChanged: () => flowChanges.wake(),
  });
  const producers = new KafkaProducers((clusterId) => events.connection(clusterId));
  const publisher = new FlowPublisher(producers, log, (flow, ok) => metrics.flowPublished(flow.id, ok));
  // Insights go to a topic of a connected cluster through the same producers (one per cluster).
  const insights = new InsightsService({
    store: new SqlInsightsStore(db),
    clusters: {
      getCluster: (p, idOrName) => events.getCluster(p, idOrName),
      listTopics: (p, idOrName) => events.listTopics(p, idOrName),
      findCluster: (id) => eventStore.findCluster(id),
    },
    sink: producers,
    clock,
  });

  const calls = new CallService({
    accounts,
    algorithms: algorithmStore,
    versions,
    access,
    catalog,
    // An API node sends each call to a worker over NATS; every other node runs it here.
    runtime: metrics.timedRuntime(
      nats && directory && !runsWork ? new NatsRuntime(nats, directory, (secret) => keys.callKeyPrincipal(secret)) : pool,
    ),
    keys,
    settings: {
      maxInFlightPerAccount: config.maxCallsPerAccount,
      // An API node sends GPU calls to a GPU worker (NatsRuntime), so it asks whether one is live.
      gpuAvailable: directory && !runsWork ? () => directory.hasGpuWorker() : () => gpu,
    },
    onSucceeded: (call) => publisher.succeeded(call),
    insights,
    log,
    resolutionTtlMs: cacheTtlMs,
  });
  const deliveries = new FlowDeliveries(events, calls, clock, (flow, outcome, latencyMs) =>
    metrics.flowDelivered(flow.id, outcome, latencyMs),
  );
  const flowWorkers = new FlowWorkers({
    events,
    deliveries,
    publisher,
    sink: producers,
    retry: {
      attempts: config.eventRetryAttempts,
      baseMs: config.eventRetryBackoffMs,
      maxMs: config.eventRetryBackoffMaxMs,
      saturatedMs: config.eventSaturationDelayMs,
    },
    sqsConcurrency: config.runnersPerAlgorithm,
    // In a cluster the workers consume (a dead worker's messages and partitions go to the others
    // by the broker's own redelivery); API nodes only keep the publisher table.
    subscribers: runsWork,
    sqsDefaultRegion: config.sqsRegion,
    sqsStsEndpoint: config.sqsStsEndpoint,
    log,
  });
  // The build service wakes the `build.schedule` job through this when a build is queued.
  const buildQueue = new JobTrigger();
  const builds = new BuildService({
    builds: buildStore,
    logs: new FileBuildLogStore(config.buildLogDir ?? path.join(config.dataDir, 'builds', 'logs')),
    algorithms,
    repositories,
    builder: artifacts ? uploadingBuilder(metrics.timedBuilder(builder), artifacts) : metrics.timedBuilder(builder),
    settings: {
      concurrency: config.buildConcurrency,
      perAccount: config.buildsPerAccount,
      timeoutMs: config.buildTimeoutSeconds * 1000,
      publicUrl: links.publicUrl,
    },
    clock,
    queue: buildQueue,
    ...(nats && directory
      ? {
          dispatch: natsBuildDispatch(nats, directory, (name) => catalog.environmentByName(name)?.machine_type === 'GPU'),
          events: new BuildEvents(runsWork ? relayBuildEvent(nats) : undefined),
        }
      : {}),
    log,
  });
  if (nats && config.role !== 'worker') receiveBuildEvents(nats, builds.events);

  const scmSources = new SourceSyncService({
    store: scmStore,
    configs: scmConfigs,
    authorizations: scmAuthorizations,
    secrets,
    mirror: repositories,
    repositories,
    algorithms,
    builds,
    clock,
  });

  const asyncCalls = new AsyncCallService({
    calls,
    store: new SqlAsyncRequestStore(db),
    clock,
    log,
    ...(nats ? { dispatch: natsAsyncDispatch(nats), accounts } : {}),
  });
  // What a worker runs for a sync call, read from the database (cluster/run-targets.ts).
  const runTargets = new RunTargets({
    algorithms: algorithmStore,
    builds: buildStore,
    versions: versionStore,
    catalog,
    ttlMs: cacheTtlMs ?? 2000,
  });
  const clusterWorker =
    nats && runsWork
      ? new ClusterWorker({
          cluster: nats,
          builds,
          asyncCalls,
          runtime: metrics.timedRuntime(pool),
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
          flows: () => Object.fromEntries(flowWorkers.statuses().map(({ flow, status }) => [flow.id, status])),
          settings: {
            buildSlots: config.buildConcurrency,
            asyncSlots: Math.min(16, config.maxRunners),
            ackWaitMs: config.workAckWaitSeconds * 1000,
            gpu,
          },
          log,
        })
      : undefined;
  const leases = new SqlLeaseStore(db);
  const data = new DataService({
    store: new SqlDataStore(db),
    blobs,
    accounts,
    algorithms: algorithmStore,
    access,
    settings: {
      quotaBytes: config.dataQuotaBytes,
      tempTtlMs: config.dataTempTtlSeconds * 1000,
    },
    clock,
    log,
  });

  const cluster = new ClusterStatusService({
    facts: { version: VERSION, database: config.databaseUrl ? 'postgresql' : 'sqlite', blobStore: config.blobStore, startedAt },
    gauges: {
      buildCounts: () => buildStore.countActive(),
      warmRunners: () => pool.warmRunners(),
      callsInLastMinute: () => metrics.callsInLastMinute(),
    },
    clock,
  });

  let nameHashKey: string | undefined;
  const audit = new AuditService(new SqlAuditStore(db), clock, {
    accounts,
    // One per cluster, kept in the database beside the session secret; made on first use.
    nameHashKey: async () =>
      (nameHashKey ??= await clusterSettings.setIfAbsent('audit_name_hash_key', crypto.randomBytes(32).toString('base64url'))),
    ...SIGN_IN_AUDIT_DEFAULTS,
  });

  return {
    db,
    accounts,
    repositories,
    users: new UserService({ accounts, clock, cleanup }),
    // Who is a member decides what a caller may call (a private algorithm of the organization).
    organizations: new OrganizationService({ accounts, clock, cleanup, onMembershipChanged: () => calls.forgetResolutions() }),
    keys,
    algorithms,
    source: new SourceService({ algorithms, repositories }),
    cluster,
    audit,
    catalog,
    builds,
    versions,
    builder,
    egress,
    runnerEgress,
    runners,
    pool,
    calls,
    asyncCalls,
    metrics: () => metrics.render(),
    links,
    data,
    blobs,
    events,
    insights,
    producers,
    scmConfigs,
    scmAuthorizations,
    scmSources,
    ...(nats ? { nats } : {}),
    ...(clusterWorker ? { clusterWorker } : {}),
    jobs: jobCatalog(
      {
        builds,
        buildQueue,
        data,
        asyncCalls,
        runners: pool,
        sandboxes: supervisor,
        events,
        audit,
        flows: flowWorkers,
        flowChanges,
        ...(nats
          ? {
              cluster: {
                role: config.role,
                lease: (name: string, ttlMs: number) => {
                  const now = clock();
                  return leases.acquire(name, nats.nodeId, now.toISOString(), new Date(now.getTime() + ttlMs).toISOString());
                },
                release: (name: string) => leases.release(name, nats.nodeId),
                worker: clusterWorker,
              },
            }
          : {}),
      },
      {
        dataSweepMs: config.dataSweepSeconds * 1000,
        runnerIdleMs: config.runnerIdleSeconds * 1000,
        deliveryRetentionMs: config.eventDeliveryRetentionSeconds * 1000,
        auditRetentionMs: config.auditRetentionSeconds * 1000,
      },
    ),
  };
}

/** NATS for cluster mode; a server that cannot carry the call limits is a settings error (exit 2). */
async function openCluster(config: Config, log: Logger): Promise<NatsCluster> {
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
      { clusterKey: clusterKey(config), log },
    );
  } catch (err) {
    if (err instanceof NatsSetupError) throw new ConfigError(`ALGOHOST_NATS_URL: ${err.message}`);
    throw err;
  }
}

/** Cluster mode: a build ends only once its artifact is in the blob store, where other workers find it. */
function uploadingBuilder(inner: Builder, artifacts: BlobArtifactStore): Builder {
  return {
    build: async (req, log, signal) => {
      const result = await inner.build(req, log, signal);
      log('Storing the artifact in the blob store\n');
      await artifacts.upload(result.artifact);
      return result;
    },
  };
}

/**
 * The key sealing SCM secrets and broker credentials (lib/secret-box.ts): ALGOHOST_CLUSTER_KEY, else the
 * key in <data dir>/cluster-key, made (0600) on first start. It never goes into the database, so
 * a copy of the database alone does not reveal the credentials.
 */
function clusterKey(config: Config): Buffer {
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

/** `ALGOHOST_ENVIRONMENT_MEMORY`: "name=MiB,…", every name an environment of the catalog. */
function parseEnvironmentMemory(value: string | undefined, environments: Set<string>): Map<string, number> {
  const byEnvironment = new Map<string, number>();
  for (const entry of splitList(value)) {
    const m = /^([^=\s]+)\s*=\s*(\d+)$/.exec(entry);
    if (!m) throw new ConfigError(`ALGOHOST_ENVIRONMENT_MEMORY: "${entry}" is not name=MiB (for example python311=1024)`);
    if (!environments.has(m[1]!)) throw new ConfigError(`ALGOHOST_ENVIRONMENT_MEMORY: no environment named "${m[1]}"`);
    const mib = Number(m[2]);
    if (mib < 16) throw new ConfigError(`ALGOHOST_ENVIRONMENT_MEMORY: ${m[1]} needs at least 16 MiB; got ${mib}`);
    byEnvironment.set(m[1]!, mib * 1024 * 1024);
  }
  return byEnvironment;
}

/** The registries' hosts and `ALGOHOST_BUILD_EGRESS_ALLOW` (host[:port], comma-separated). */
function egressTargets(registries: RegistrySettings, allow: string | undefined): EgressTarget[] {
  try {
    return registryTargets(registries, splitList(allow));
  } catch (err) {
    if (err instanceof EgressConfigError) throw new ConfigError(`ALGOHOST_BUILD_EGRESS_ALLOW: ${err.message}`);
    throw err;
  }
}

/** `ALGOHOST_RUNNER_EGRESS_ALLOW` (host[:port], comma-separated). */
function runnerEgressTargets(allow: string | undefined): EgressTarget[] {
  try {
    return splitList(allow).map((e) => parseEgressEntry(e));
  } catch (err) {
    if (err instanceof EgressConfigError) throw new ConfigError(`ALGOHOST_RUNNER_EGRESS_ALLOW: ${err.message}`);
    throw err;
  }
}

/** Where this node's own services are: runners never reach these addresses. */
function nodeServiceEndpoints(config: Config): string[] {
  return [
    config.databaseUrl,
    config.natsUrl,
    config.s3Endpoint,
    config.metricsAddress,
    ...splitList(config.sqsEndpointAllow),
    ...splitList(config.serviceBusEndpointAllow),
  ].filter((e): e is string => e !== undefined && e !== '');
}

const splitList = (v: string | undefined) =>
  v
    ? v
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean)
    : [];

export interface BootstrapResult {
  /** The generated admin key, when this start created it; undefined otherwise. */
  generatedKey?: string;
  keyFile?: string;
}

/**
 * First start: create the `admin` account with an admin key (ALGOHOST_ADMIN_KEY, or a
 * generated one written to <data dir>/initial-admin-key, mode 0600). Later starts keep the
 * stored state; an ALGOHOST_ADMIN_KEY not yet stored is added, so operators can recover access.
 */
export async function bootstrapAdmin(s: Services, config: Config): Promise<BootstrapResult> {
  const existing = await s.accounts.findByName('admin');
  const admin = existing ?? (await s.users.createUnchecked({ username: 'admin', fullname: 'Cluster administrator' }, true));
  if (config.adminKey) {
    if (!(await s.keys.hasKey(config.adminKey)))
      await s.keys.issue(admin, 'admin', [...CAPABILITIES], 'ALGOHOST_ADMIN_KEY', config.adminKey);
    return {};
  }
  if (existing) return {};
  const keyFile = path.join(config.dataDir, 'initial-admin-key');
  const { secret } = await s.keys.issue(admin, 'admin', [...CAPABILITIES], 'initial admin key');
  fs.writeFileSync(keyFile, `${secret}\n`, { mode: 0o600 });
  return { generatedKey: secret, keyFile };
}

/** One start-up line saying which sandbox limits hold; a warning naming what is missing when not all do. */
function logCgroups(log: WorkerLog, report: CgroupReport, required: boolean): void {
  const holding = (['memory', 'pids', 'cpu'] as const).filter((c) => report.limits[c]);
  const facts = { cgroupVersion: report.version, limits: holding, changes: report.actions };
  if (!report.problem) {
    log.info(facts, `sandbox limits: memory, pids and cpu hold (cgroup v${report.version})`);
    return;
  }
  const safe = report.limits.memory && report.limits.pids;
  const consequence = safe
    ? 'sandboxes run with them'
    : required
      ? 'builds and runners are refused until they do (ALGOHOST_REQUIRE_CGROUPS=false runs them without)'
      : 'builds and runners run WITHOUT memory or pids limits (ALGOHOST_REQUIRE_CGROUPS=false)';
  log.warn(
    { ...facts, problem: report.problem },
    `sandbox limits: only ${holding.join(', ') || 'none'} of memory, pids and cpu hold; ${consequence}. ${report.problem}`,
  );
}
