/**
 * The composition root: the only code that turns configuration into adapters and wires them
 * into domain services. Tests build the same graph with their own config.
 */
import fs from 'node:fs';
import path from 'node:path';
import { type Config, ConfigError } from '../config/config.js';
import { systemClock } from '../domain/clock.js';
import { OwnerAccess } from '../domain/accounts/access.js';
import { KeyService } from '../domain/accounts/key-service.js';
import { CAPABILITIES, type Account } from '../domain/accounts/model.js';
import { OrganizationService } from '../domain/accounts/organization-service.js';
import { UserService } from '../domain/accounts/user-service.js';
import { AlgorithmService } from '../domain/algorithms/algorithm-service.js';
import { SourceService } from '../domain/algorithms/source-service.js';
import { ClusterStatusService } from '../domain/cluster/status-service.js';
import { Catalog } from '../domain/catalog/catalog.js';
import { BuildService } from '../domain/builds/build-service.js';
import { SandboxBuilder } from '../runtime/build/sandbox-builder.js';
import { LANGUAGE_ADAPTERS } from '../runtime/languages/index.js';
import { Supervisor } from '../runtime/sandbox/supervisor.js';
import { EgressConfigError, EgressProxy, type EgressTarget, registryTargets } from '../runtime/sandbox/egress-proxy.js';
import type { RegistrySettings } from '../runtime/languages/adapter.js';
import { RunnerFactory } from '../runtime/runner/runner-factory.js';
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

/** This server's release, from its package.json. */
export const VERSION = (JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

export interface Services extends ApiServices {
  db: Db;
  accounts: SqlAccountStore;
  repositories: GitRepositoryHost;
  builder: SandboxBuilder;
  egress: EgressProxy;
  runners: RunnerFactory;
  pool: RunnerPool;
  blobs: BlobStore;
  /** The background jobs, in start order (`jobs/catalog.ts`); the server runs them. */
  jobs: Job[];
}

export async function buildServices(config: Config, log: Logger): Promise<Services> {
  fs.mkdirSync(config.dataDir, { recursive: true });
  // The sandbox user must pass through the data dir to reach build directories (never list
  // it or read the database: those stay 0600/0700).
  fs.chmodSync(config.dataDir, 0o711);
  const db = openDatabase({ url: config.databaseUrl, sqlitePath: path.join(config.dataDir, 'algohost.sqlite') });
  await migrateToLatest(db);

  const clock = systemClock;
  const startedAt = clock();
  const accounts = new SqlAccountStore(db);
  const algorithmStore = new SqlAlgorithmStore(db);
  const repositories = new GitRepositoryHost(
    path.join(config.dataDir, 'repositories'),
    config.gitBinary,
    {
      maxPushBytes: config.maxPushBytes,
      maxRepositoryBytes: config.maxRepositoryBytes,
      maxAccountBytes: config.maxAccountRepositoryBytes,
    },
    async (ownerId) => (await algorithmStore.listAllByOwner(ownerId)).map((a) => a.id),
  );
  const catalog = await Catalog.load(readCatalog(), new SqlEnvironmentStore(db), clock);
  const access = new OwnerAccess(accounts);
  const buildStore = new SqlBuildStore(db);
  const versionStore = new SqlVersionStore(db);
  const algorithms = new AlgorithmService(
    algorithmStore,
    accounts,
    access,
    catalog,
    repositories,
    { environmentName: config.defaultEnvironment, networkAccess: config.defaultNetworkAccess },
    clock,
    { versions: versionStore, builds: buildStore },
  );
  const cleanup = async (account: Account) => {
    await algorithms.deleteAllOf(account);
    await data.deleteAllOf(account);
  };
  const keys = new KeyService(accounts, new SqlKeyStore(db), new SqlClusterSettingsStore(db), clock, config.sessionTtlSeconds);

  const links = { publicUrl: config.publicUrl };
  // Settings that name catalog entries are checked before anything touches the disk.
  const environmentMemory = parseEnvironmentMemory(config.environmentMemory, catalog);
  const registries: RegistrySettings = {
    pipIndexUrl: config.pipIndexUrl,
    pipFindLinks: splitList(config.pipFindLinks).map((d) => path.resolve(d)),
    npmRegistry: config.npmRegistry,
    mavenRepository: config.mavenRepository,
    cranRepository: config.cranRepository,
    gemSource: config.gemSource,
    cargoRegistry: config.cargoRegistry,
  };
  // Build steps reach the registries (and the operator's extra hosts) through this proxy only.
  const egress = new EgressProxy({ dir: path.join(config.dataDir, 'egress'), allow: egressTargets(registries, config.buildEgressAllow) });
  egress.prepare();
  const supervisor = new Supervisor({ maxOpenFiles: Math.max(16, config.sandboxOpenFiles) });
  const builder = new SandboxBuilder(supervisor, LANGUAGE_ADAPTERS, {
    root: path.join(config.dataDir, 'builds'),
    cacheDir: config.buildCacheDir && path.resolve(config.buildCacheDir),
    sharedCache: config.buildCacheShared,
    memoryBytes: config.buildMemoryMiB * 1024 * 1024,
    git: config.gitBinary,
    maxArtifactBytes: config.maxArtifactBytes,
    registries,
    egress,
  });
  builder.prepare();
  const runners = new RunnerFactory(supervisor, builder, {
    memoryBytes: config.runnerMemoryMiB * 1024 * 1024,
    memoryBytesByEnvironment: environmentMemory,
    pids: config.runnerPids,
    cpus: config.runnerCpus > 0 ? config.runnerCpus : undefined,
    outputLimitBytes: 15 * 1000 * 1000,
    startTimeoutMs: 10 * 60 * 1000,
  });
  runners.prepare();
  const pool = new RunnerPool(runners, {
    maxPerArtifact: Math.max(1, config.runnersPerAlgorithm),
    maxTotal: Math.max(1, config.maxRunners),
    idleMs: config.runnerIdleSeconds * 1000,
    maxPerAccount: config.runnersPerAccount,
    memoryPerAccount: config.runnerMemoryPerAccountMiB * 1024 * 1024,
    memoryBudget: config.runnerMemoryBudgetMiB * 1024 * 1024,
    memoryOf: (environment) => environmentMemory.get(environment) ?? config.runnerMemoryMiB * 1024 * 1024,
    log,
  });
  const metrics = new NodeMetrics(pool);
  const versions = new VersionService(versionStore, buildStore, algorithms, accounts, access, repositories, clock);
  const calls = new CallService(accounts, algorithmStore, versions, access, catalog, metrics.timedRuntime(pool), keys, {
    maxInFlightPerAccount: Math.max(1, config.maxCallsPerAccount),
    gpuAvailable: fs.existsSync('/dev/nvidia0'),
  });
  // The build service wakes the `build.schedule` job through this when a build is queued.
  const buildQueue = new JobTrigger();
  const builds = new BuildService(
    buildStore,
    new FileBuildLogStore(path.join(config.dataDir, 'builds', 'logs')),
    algorithms,
    repositories,
    metrics.timedBuilder(builder),
    {
      concurrency: Math.max(1, config.buildConcurrency),
      perAccount: config.buildsPerAccount,
      timeoutMs: config.buildTimeoutSeconds * 1000,
      publicUrl: () => links.publicUrl,
    },
    clock,
    buildQueue,
    log,
  );

  const asyncCalls = new AsyncCallService(calls, new SqlAsyncRequestStore(db), clock, log);
  // A publish or a settings change (callability, pipeline_enabled…) applies to the next call.
  versions.onPublished(() => calls.forgetResolutions());
  algorithms.onChanged(() => calls.forgetResolutions());

  const blobs = await openBlobStore(config);
  const data = new DataService(
    new SqlDataStore(db),
    blobs,
    accounts,
    algorithmStore,
    access,
    {
      quotaBytes: config.dataQuotaBytes,
      tempTtlMs: config.dataTempTtlSeconds * 1000,
    },
    clock,
  );
  keys.onSessionEnd((session) => data.sessionEnded(session));

  const cluster = new ClusterStatusService(
    { version: VERSION, database: config.databaseUrl ? 'postgresql' : 'sqlite', blobStore: config.blobStore, startedAt },
    {
      buildCounts: () => buildStore.countActive(),
      warmRunners: () => pool.warmRunners(),
      callsInLastMinute: () => metrics.callsInLastMinute(),
    },
    clock,
  );

  if (!catalog.environmentByName(config.defaultEnvironment)) {
    throw new Error(`ALGOHOST_DEFAULT_ENVIRONMENT "${config.defaultEnvironment}" is not an environment of the catalog`);
  }

  return {
    db,
    accounts,
    repositories,
    users: new UserService(accounts, clock, cleanup),
    organizations: new OrganizationService(accounts, clock, cleanup),
    keys,
    algorithms,
    source: new SourceService(algorithms, repositories),
    cluster,
    catalog,
    builds,
    versions,
    builder,
    egress,
    runners,
    pool,
    calls,
    asyncCalls,
    metrics: () => metrics.render(),
    links,
    data,
    blobs,
    jobs: jobCatalog(
      { builds, buildQueue, data, asyncCalls, runners: pool },
      { dataSweepMs: config.dataSweepSeconds * 1000, runnerIdleMs: config.runnerIdleSeconds * 1000 },
    ),
  };
}

/** `ALGOHOST_ENVIRONMENT_MEMORY`: "name=MiB,…", every name an environment of the catalog. */
function parseEnvironmentMemory(value: string | undefined, catalog: Catalog): Map<string, number> {
  const byEnvironment = new Map<string, number>();
  for (const entry of splitList(value)) {
    const m = /^([^=\s]+)\s*=\s*(\d+)$/.exec(entry);
    if (!m) throw new ConfigError(`ALGOHOST_ENVIRONMENT_MEMORY: "${entry}" is not name=MiB (for example python311=1024)`);
    if (!catalog.environmentByName(m[1]!)) throw new ConfigError(`ALGOHOST_ENVIRONMENT_MEMORY: no environment named "${m[1]}"`);
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
