/**
 * Every setting of the service, in one schema. Each has an environment variable, a matching
 * command-line flag, a default and a one-line reason. `loadConfig` is called once by the
 * composition root; no other module reads `process.env`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  publicUrl: string;
  clusterDomain: string;
  adminKey: string | undefined;
  logLevel: string;
  defaultEnvironment: string;
  defaultNetworkAccess: 'isolated' | 'full';
  sessionTtlSeconds: number;
  bodyLimitBytes: number;
  gitBinary: string;
  maxPushBytes: number;
  maxRepositoryBytes: number;
  maxAccountRepositoryBytes: number;
  buildTimeoutSeconds: number;
  buildConcurrency: number;
  buildsPerAccount: number;
  buildMemoryMiB: number;
  pipIndexUrl: string | undefined;
  pipFindLinks: string | undefined;
  npmRegistry: string | undefined;
  mavenRepository: string | undefined;
  cranRepository: string | undefined;
  gemSource: string | undefined;
  buildEgressAllow: string | undefined;
  buildCacheDir: string | undefined;
  buildCacheShared: boolean;
  runnerMemoryMiB: number;
  runnerPids: number;
  runnerCpus: number;
  sandboxOpenFiles: number;
  maxArtifactBytes: number;
  environmentMemory: string | undefined;
  corsOrigins: string | undefined;
  maxConnections: number;
  maxConnectionsPerClient: number;
  headersTimeoutSeconds: number;
  requestTimeoutSeconds: number;
  keepAliveTimeoutSeconds: number;
  bodyTimeoutSeconds: number;
  minBodyBytesPerSecond: number;
  callInputBudgetBytes: number;
  runnersPerAlgorithm: number;
  maxRunners: number;
  runnersPerAccount: number;
  runnerMemoryBudgetMiB: number;
  runnerMemoryPerAccountMiB: number;
  runnerIdleSeconds: number;
  maxCallsPerAccount: number;
  cargoRegistry: string | undefined;
  dataQuotaBytes: number;
  dataTempTtlSeconds: number;
  dataSweepSeconds: number;
  blobStore: 'disk' | 's3';
  blobDir: string | undefined;
  s3Endpoint: string | undefined;
  s3Region: string;
  s3Bucket: string | undefined;
  s3AccessKeyId: string | undefined;
  s3SecretAccessKey: string | undefined;
  s3ForcePathStyle: boolean;
}

type Kind = 'string' | 'int' | 'number' | 'optional' | 'bool';

interface Setting {
  key: keyof Config;
  env: string;
  flag: string;
  kind: Kind;
  /** Default as text; a function computes it from the settings read so far. */
  default?: string | ((c: Partial<Config>) => string);
  oneOf?: string[];
  /** Largest value of an int setting. */
  max?: number;
  describe: string;
}

export const SETTINGS: readonly Setting[] = [
  {
    key: 'port',
    env: 'ALGOHOST_PORT',
    flag: '--port',
    kind: 'int',
    default: '8080',
    max: 65535,
    describe: 'TCP port of the HTTP API and Git server (0 picks a free port).',
  },
  {
    key: 'host',
    env: 'ALGOHOST_HOST',
    flag: '--host',
    kind: 'string',
    default: '127.0.0.1',
    describe: 'Address to listen on; loopback by default so a fresh install is not exposed.',
  },
  {
    key: 'dataDir',
    env: 'ALGOHOST_DATA_DIR',
    flag: '--data-dir',
    kind: 'string',
    default: './data',
    describe: 'Where the SQLite database, Git repositories and the initial admin key live.',
  },
  {
    key: 'databaseUrl',
    env: 'ALGOHOST_DATABASE_URL',
    flag: '--database-url',
    kind: 'optional',
    describe: 'Unset: SQLite file in the data dir. postgres://… : PostgreSQL (cluster mode).',
  },
  {
    key: 'publicUrl',
    env: 'ALGOHOST_PUBLIC_URL',
    flag: '--public-url',
    kind: 'string',
    default: (c) => `http://${c.host === '0.0.0.0' ? '127.0.0.1' : c.host}:${c.port}`,
    describe: 'Base URL used in links and Git URLs; set it when behind a proxy or on another host name.',
  },
  {
    key: 'clusterDomain',
    env: 'ALGOHOST_CLUSTER_DOMAIN',
    flag: '--cluster-domain',
    kind: 'string',
    default: (c) => new URL(c.publicUrl!).hostname,
    describe: 'Name of this cluster; with owner and name it identifies an algorithm.',
  },
  {
    key: 'adminKey',
    env: 'ALGOHOST_ADMIN_KEY',
    flag: '--admin-key',
    kind: 'optional',
    describe: 'Admin API key of the `admin` account created on first start; generated when unset.',
  },
  {
    key: 'logLevel',
    env: 'ALGOHOST_LOG_LEVEL',
    flag: '--log-level',
    kind: 'string',
    default: 'info',
    oneOf: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
    describe: 'Structured log level (pino).',
  },
  {
    key: 'defaultEnvironment',
    env: 'ALGOHOST_DEFAULT_ENVIRONMENT',
    flag: '--default-environment',
    kind: 'string',
    default: 'python311',
    describe: 'Environment name used when a create request names none.',
  },
  {
    key: 'defaultNetworkAccess',
    env: 'ALGOHOST_DEFAULT_NETWORK_ACCESS',
    flag: '--default-network-access',
    kind: 'string',
    default: 'isolated',
    oneOf: ['isolated', 'full'],
    describe: 'network_access of a new algorithm when the request omits it.',
  },
  {
    key: 'sessionTtlSeconds',
    env: 'ALGOHOST_SESSION_TTL',
    flag: '--session-ttl',
    kind: 'int',
    default: '3600',
    describe: 'Lifetime in seconds of the JWTs issued by POST /v1/auth/token (web UI sessions).',
  },
  {
    key: 'bodyLimitBytes',
    env: 'ALGOHOST_BODY_LIMIT',
    flag: '--body-limit',
    kind: 'int',
    default: '1048576',
    describe: 'Largest JSON body accepted by the management API, in bytes.',
  },
  {
    key: 'gitBinary',
    env: 'ALGOHOST_GIT',
    flag: '--git',
    kind: 'string',
    default: 'git',
    describe: 'The git executable used for repositories.',
  },
  {
    key: 'maxPushBytes',
    env: 'ALGOHOST_MAX_PUSH_BYTES',
    flag: '--max-push-bytes',
    kind: 'int',
    default: String(100 * 1024 * 1024),
    describe:
      'Largest Git push (the pack one push sends), in bytes; a bigger one is refused while it streams (default 100 MiB; 0 = no limit).',
  },
  {
    key: 'maxRepositoryBytes',
    env: 'ALGOHOST_MAX_REPOSITORY_BYTES',
    flag: '--max-repository-bytes',
    kind: 'int',
    default: String(1024 * 1024 * 1024),
    describe:
      "Largest size of one algorithm's Git repository on disk, in bytes; a push growing it past this is refused (default 1 GiB; 0 = no limit).",
  },
  {
    key: 'maxAccountRepositoryBytes',
    env: 'ALGOHOST_MAX_ACCOUNT_REPOSITORY_BYTES',
    flag: '--max-account-repository-bytes',
    kind: 'int',
    default: String(10 * 1024 * 1024 * 1024),
    describe:
      "Largest total size of an account's algorithm repositories, in bytes; a push growing it past this is refused (default 10 GiB; 0 = no limit).",
  },
  {
    key: 'buildTimeoutSeconds',
    env: 'ALGOHOST_BUILD_TIMEOUT',
    flag: '--build-timeout',
    kind: 'int',
    default: '900',
    describe: 'Wall-clock limit of one build, in seconds (default 15 minutes).',
  },
  {
    key: 'buildConcurrency',
    env: 'ALGOHOST_BUILD_CONCURRENCY',
    flag: '--build-concurrency',
    kind: 'int',
    default: '2',
    describe: "Builds run at once on this node (one algorithm's builds always run one after another).",
  },
  {
    key: 'buildsPerAccount',
    env: 'ALGOHOST_BUILDS_PER_ACCOUNT',
    flag: '--builds-per-account',
    kind: 'int',
    default: (c) => String(Math.max(1, Math.floor((c.buildConcurrency ?? 2) / 2))),
    describe:
      "Builds of one account's algorithms running at once on this node; free slots go to the account with the fewest running (default half of ALGOHOST_BUILD_CONCURRENCY, at least 1; 0 = no limit).",
  },
  {
    key: 'buildMemoryMiB',
    env: 'ALGOHOST_BUILD_MEMORY',
    flag: '--build-memory',
    kind: 'int',
    default: '4096',
    describe: 'Memory limit of each build step, in MiB.',
  },
  {
    key: 'pipIndexUrl',
    env: 'ALGOHOST_PIP_INDEX_URL',
    flag: '--pip-index-url',
    kind: 'optional',
    describe: 'Python package index for builds; unset = the public PyPI.',
  },
  {
    key: 'pipFindLinks',
    env: 'ALGOHOST_PIP_FIND_LINKS',
    flag: '--pip-find-links',
    kind: 'optional',
    describe: 'Comma-separated directories of wheels offered to pip (--find-links), e.g. for offline clusters.',
  },
  {
    key: 'npmRegistry',
    env: 'ALGOHOST_NPM_REGISTRY',
    flag: '--npm-registry',
    kind: 'optional',
    describe: "npm registry for JavaScript builds; unset = npm's default.",
  },
  {
    key: 'mavenRepository',
    env: 'ALGOHOST_MAVEN_REPOSITORY',
    flag: '--maven-repository',
    kind: 'optional',
    describe: 'Maven repository (mirror of central) for Java and Scala builds; unset = Maven Central.',
  },
  {
    key: 'cranRepository',
    env: 'ALGOHOST_CRAN_REPOSITORY',
    flag: '--cran-repository',
    kind: 'optional',
    describe: 'CRAN-style repository URL (file:// works offline) for R packages.txt.',
  },
  {
    key: 'buildEgressAllow',
    env: 'ALGOHOST_BUILD_EGRESS_ALLOW',
    flag: '--build-egress-allow',
    kind: 'optional',
    describe:
      'Extra hosts build steps may reach through the egress proxy besides the registries, comma-separated host[:port] (port default 443), e.g. "github.com,nexus.internal:8443".',
  },
  {
    key: 'buildCacheDir',
    env: 'ALGOHOST_BUILD_CACHE_DIR',
    flag: '--build-cache-dir',
    kind: 'optional',
    describe:
      'Download caches of builds (pip, npm, Maven, Cargo…); unset = <data dir>/builds/cache. Share it to keep downloads across clusters.',
  },
  {
    key: 'runnerMemoryMiB',
    env: 'ALGOHOST_RUNNER_MEMORY',
    flag: '--runner-memory',
    kind: 'int',
    default: '2048',
    describe: 'Memory limit of each algorithm runner, in MiB (default 2 GiB).',
  },
  {
    key: 'runnerPids',
    env: 'ALGOHOST_RUNNER_PIDS',
    flag: '--runner-pids',
    kind: 'int',
    default: '128',
    describe:
      'Most processes and threads one runner may have (stops fork bombs); with ALGOHOST_SANDBOX_OPEN_FILES it bounds the files one runner can hold open.',
  },
  {
    key: 'sandboxOpenFiles',
    env: 'ALGOHOST_SANDBOX_OPEN_FILES',
    flag: '--sandbox-open-files',
    kind: 'int',
    default: '1024',
    max: 1048576,
    describe:
      'Open-files limit (RLIMIT_NOFILE, soft and hard) of every sandboxed process, runners and build steps; a runner holds at most this × ALGOHOST_RUNNER_PIDS files.',
  },
  {
    key: 'maxArtifactBytes',
    env: 'ALGOHOST_MAX_ARTIFACT_BYTES',
    flag: '--max-artifact-bytes',
    kind: 'int',
    default: String(2 * 1024 * 1024 * 1024),
    describe:
      "Largest artifact of one build (the algorithm's built tree plus its dependency layer), in bytes; a build growing past it fails (default 2 GiB; 0 = no limit).",
  },
  {
    key: 'runnerCpus',
    env: 'ALGOHOST_RUNNER_CPUS',
    flag: '--runner-cpus',
    kind: 'number',
    default: '1',
    describe: 'CPU cores one runner may use, as a CFS quota (0.5 = half a core; 0 = no quota).',
  },
  {
    key: 'environmentMemory',
    env: 'ALGOHOST_ENVIRONMENT_MEMORY',
    flag: '--environment-memory',
    kind: 'optional',
    describe: 'Runner memory per environment in MiB, overriding ALGOHOST_RUNNER_MEMORY: "java17=3072,python311=1024".',
  },
  {
    key: 'corsOrigins',
    env: 'ALGOHOST_CORS_ORIGINS',
    flag: '--cors-origins',
    kind: 'optional',
    describe: 'Origins whose web pages may call the API, comma-separated ("https://app.example"), or * for any. Unset: none.',
  },
  {
    key: 'maxConnections',
    env: 'ALGOHOST_MAX_CONNECTIONS',
    flag: '--max-connections',
    kind: 'int',
    default: () => String(connectionsForFileLimit(openFileLimit())),
    describe:
      "HTTP connections held at once (API, Git, the algorithms' API socket); more are answered 503 and closed. Default: half of the process's open-file limit less 512, so files, pipes to runners and the database keep descriptors.",
  },
  {
    key: 'maxConnectionsPerClient',
    env: 'ALGOHOST_MAX_CONNECTIONS_PER_CLIENT',
    flag: '--max-connections-per-client',
    kind: 'int',
    default: '256',
    describe:
      'HTTP connections one client address (IPv6: one /64) may hold; more are answered 503 and closed at once. Raise it or use 0 (no limit) behind a reverse proxy, whose address every client shares.',
  },
  {
    key: 'headersTimeoutSeconds',
    env: 'ALGOHOST_HEADERS_TIMEOUT',
    flag: '--headers-timeout',
    kind: 'number',
    default: '30',
    describe:
      'Seconds a connection may take to send a complete request head, counted from its opening: idle connections are closed after it.',
  },
  {
    key: 'requestTimeoutSeconds',
    env: 'ALGOHOST_REQUEST_TIMEOUT',
    flag: '--request-timeout',
    kind: 'number',
    default: '3600',
    describe:
      'Seconds to receive one whole request (head and body, not the answer: a 3000 s call is not cut); long, for big pushes and uploads, which ALGOHOST_MIN_BODY_RATE watches meanwhile. 0 = no limit.',
  },
  {
    key: 'keepAliveTimeoutSeconds',
    env: 'ALGOHOST_KEEP_ALIVE_TIMEOUT',
    flag: '--keep-alive-timeout',
    kind: 'number',
    default: '72',
    describe: "Seconds an idle keep-alive connection stays open between requests (keep it above a proxy's idle timeout).",
  },
  {
    key: 'bodyTimeoutSeconds',
    env: 'ALGOHOST_BODY_TIMEOUT',
    flag: '--body-timeout',
    kind: 'number',
    default: '30',
    describe:
      'Window in which a request body still arriving must bring ALGOHOST_MIN_BODY_RATE bytes per second, or the request is answered 408 and closed (time the server itself holds the body back does not count). 0 = no check.',
  },
  {
    key: 'minBodyBytesPerSecond',
    env: 'ALGOHOST_MIN_BODY_RATE',
    flag: '--min-body-rate',
    kind: 'int',
    default: '1024',
    describe: 'Slowest rate, in bytes per second, at which a request body may arrive (see ALGOHOST_BODY_TIMEOUT).',
  },
  {
    key: 'callInputBudgetBytes',
    env: 'ALGOHOST_CALL_INPUT_BUDGET',
    flag: '--call-input-budget',
    kind: 'int',
    default: String(256 * 1024 * 1024),
    describe:
      'Bytes of call inputs the node holds at once (being received, or kept until their call ends); past it calls get 503 with Retry-After, and one account may hold a quarter of it (default 256 MiB; 0 = no limit).',
  },
  {
    key: 'runnersPerAlgorithm',
    env: 'ALGOHOST_RUNNERS_PER_ALGORITHM',
    flag: '--runners-per-algorithm',
    kind: 'int',
    default: '4',
    describe: 'Most warm runners one built algorithm scales to under concurrent calls (it starts with one).',
  },
  {
    key: 'maxRunners',
    env: 'ALGOHOST_MAX_RUNNERS',
    flag: '--max-runners',
    kind: 'int',
    default: '32',
    describe: 'Warm runners on this node; past it the least recently used idle runner stops.',
  },
  {
    key: 'runnersPerAccount',
    env: 'ALGOHOST_RUNNERS_PER_ACCOUNT',
    flag: '--runners-per-account',
    kind: 'int',
    default: (c) => String(Math.max(1, Math.floor((c.maxRunners ?? 32) / 4))),
    describe:
      "Runners of one account's algorithms on this node; past it that account's least recently used idle runner stops, and with all busy its call is refused with 429 (default a quarter of ALGOHOST_MAX_RUNNERS; 0 = no limit).",
  },
  {
    key: 'runnerMemoryBudgetMiB',
    env: 'ALGOHOST_RUNNER_MEMORY_BUDGET',
    flag: '--runner-memory-budget',
    kind: 'int',
    default: () => String(Math.floor((os.totalmem() * 0.75) / 1024 / 1024)),
    describe:
      "Sum of the runners' memory limits on this node, in MiB; a runner that does not fit stops an idle one or is refused with 503 (default 75% of the machine's memory; 0 = no limit).",
  },
  {
    key: 'runnerMemoryPerAccountMiB',
    env: 'ALGOHOST_RUNNER_MEMORY_PER_ACCOUNT',
    flag: '--runner-memory-per-account',
    kind: 'int',
    default: (c) => String(Math.floor((c.runnerMemoryBudgetMiB ?? 0) / 2)),
    describe:
      "Sum of the memory limits of one account's runners on this node, in MiB (default half of ALGOHOST_RUNNER_MEMORY_BUDGET; 0 = no limit).",
  },
  {
    key: 'runnerIdleSeconds',
    env: 'ALGOHOST_RUNNER_IDLE',
    flag: '--runner-idle',
    kind: 'int',
    default: '600',
    describe: 'Seconds an idle runner stays warm.',
  },
  {
    key: 'maxCallsPerAccount',
    env: 'ALGOHOST_MAX_CALLS_PER_ACCOUNT',
    flag: '--max-calls-per-account',
    kind: 'int',
    default: '64',
    describe: 'Calls one account may have in flight; more get 429 with Retry-After.',
  },
  {
    key: 'buildCacheShared',
    env: 'ALGOHOST_BUILD_CACHE_SHARED',
    flag: '--build-cache-shared',
    kind: 'bool',
    default: 'false',
    describe:
      "true: one download cache per language for the whole cluster (faster; only for clusters whose users trust each other). false: one per owner, so no build can plant a package in another tenant's cache.",
  },
  {
    key: 'cargoRegistry',
    env: 'ALGOHOST_CARGO_REGISTRY',
    flag: '--cargo-registry',
    kind: 'optional',
    describe: 'Cargo source replacing crates.io for Rust builds (e.g. sparse+https://…); unset = crates.io.',
  },
  {
    key: 'gemSource',
    env: 'ALGOHOST_GEM_SOURCE',
    flag: '--gem-source',
    kind: 'optional',
    describe: "RubyGems source for Bundler; unset = the Gemfile's own source.",
  },
  {
    key: 'dataQuotaBytes',
    env: 'ALGOHOST_DATA_QUOTA',
    flag: '--data-quota',
    kind: 'int',
    default: '0',
    describe: "Bytes of hosted data each account may store (its collections and its algorithms' .algo spaces); 0 = unlimited.",
  },
  {
    key: 'dataTempTtlSeconds',
    env: 'ALGOHOST_DATA_TEMP_TTL',
    flag: '--data-temp-ttl',
    kind: 'int',
    default: '86400',
    describe: 'Seconds a file under data://.algo/…/temp lives after its last change (default one day).',
  },
  {
    key: 'dataSweepSeconds',
    env: 'ALGOHOST_DATA_SWEEP_INTERVAL',
    flag: '--data-sweep-interval',
    kind: 'int',
    default: '300',
    describe: 'Seconds between sweeps deleting expired temp files and ended .session data; 0 = no sweeps.',
  },
  {
    key: 'blobStore',
    env: 'ALGOHOST_BLOB_STORE',
    flag: '--blob-store',
    kind: 'string',
    default: 'disk',
    oneOf: ['disk', 's3'],
    describe: 'Where hosted data files live: disk (a local directory) or s3 (an S3-compatible bucket, ALGOHOST_S3_*).',
  },
  {
    key: 'blobDir',
    env: 'ALGOHOST_BLOB_DIR',
    flag: '--blob-dir',
    kind: 'optional',
    describe: 'Directory of the disk blob store; unset = <data dir>/blobs. Uploads are written beside it, so keep it on one file system.',
  },
  {
    key: 's3Endpoint',
    env: 'ALGOHOST_S3_ENDPOINT',
    flag: '--s3-endpoint',
    kind: 'optional',
    describe: 'URL of an S3-compatible service (MinIO, Ceph…) for ALGOHOST_BLOB_STORE=s3; unset = AWS S3.',
  },
  {
    key: 's3Region',
    env: 'ALGOHOST_S3_REGION',
    flag: '--s3-region',
    kind: 'string',
    default: 'us-east-1',
    describe: 'Region of the S3 bucket (most self-hosted stores accept any).',
  },
  {
    key: 's3Bucket',
    env: 'ALGOHOST_S3_BUCKET',
    flag: '--s3-bucket',
    kind: 'optional',
    describe: 'Bucket holding hosted data with ALGOHOST_BLOB_STORE=s3; created on start if missing and allowed.',
  },
  {
    key: 's3AccessKeyId',
    env: 'ALGOHOST_S3_ACCESS_KEY_ID',
    flag: '--s3-access-key-id',
    kind: 'optional',
    describe: "Access key id for S3; unset = the AWS SDK's default credential chain (instance roles…).",
  },
  {
    key: 's3SecretAccessKey',
    env: 'ALGOHOST_S3_SECRET_ACCESS_KEY',
    flag: '--s3-secret-access-key',
    kind: 'optional',
    describe: 'Secret access key belonging to ALGOHOST_S3_ACCESS_KEY_ID.',
  },
  {
    key: 's3ForcePathStyle',
    env: 'ALGOHOST_S3_FORCE_PATH_STYLE',
    flag: '--s3-force-path-style',
    kind: 'bool',
    default: (c) => (c.s3Endpoint ? 'true' : 'false'),
    describe:
      'Address the bucket in the path (http://host/bucket/key), as self-hosted stores need; default true with ALGOHOST_S3_ENDPOINT.',
  },
];

export class ConfigError extends Error {}

/** The soft limit on this process's open files (RLIMIT_NOFILE), read at start-up; 1024 when unknown. */
export function openFileLimit(limits = readProcLimits()): number {
  const m = /^Max open files\s+(\d+|unlimited)\s/m.exec(limits ?? '');
  if (!m) return 1024;
  return m[1] === 'unlimited' ? 1 << 20 : Number(m[1]);
}

/** Default connection cap for a soft file limit: half of what is left after 512 for everything else. */
export function connectionsForFileLimit(softLimit: number): number {
  return Math.max(16, Math.floor((softLimit - 512) / 2));
}

function readProcLimits(): string | undefined {
  try {
    return fs.readFileSync('/proc/self/limits', 'utf8');
  } catch {
    return undefined;
  }
}

/** Reads settings from flags (win) and environment variables, applying defaults in order. */
export function loadConfig(env: NodeJS.ProcessEnv, argv: readonly string[]): Config {
  const flags = parseFlags(argv);
  const out: Partial<Record<keyof Config, unknown>> = {};
  for (const s of SETTINGS) {
    let raw = flags.get(s.flag) ?? env[s.env];
    if (raw === '') raw = undefined;
    if (raw === undefined && s.default !== undefined) {
      raw = typeof s.default === 'function' ? s.default(out as Partial<Config>) : s.default;
    }
    if (raw === undefined) {
      out[s.key] = undefined;
      continue;
    }
    if (s.oneOf && !s.oneOf.includes(raw)) {
      throw new ConfigError(`${s.env} (${s.flag}) must be one of ${s.oneOf.join(', ')}; got "${raw}"`);
    }
    if (s.kind === 'bool') {
      if (!['true', 'false', '1', '0'].includes(raw)) throw new ConfigError(`${s.env} (${s.flag}) must be true or false; got "${raw}"`);
      out[s.key] = raw === 'true' || raw === '1';
    } else if (s.kind === 'number') {
      const n = Number(raw);
      if (!Number.isFinite(n) || n < 0) throw new ConfigError(`${s.env} (${s.flag}) must be a non-negative number; got "${raw}"`);
      out[s.key] = n;
    } else if (s.kind === 'int') {
      const n = Number(raw);
      if (!Number.isInteger(n) || n < 0) throw new ConfigError(`${s.env} (${s.flag}) must be a non-negative integer; got "${raw}"`);
      if (s.max !== undefined && n > s.max) throw new ConfigError(`${s.env} (${s.flag}) must be at most ${s.max}; got ${n}`);
      out[s.key] = n;
    } else {
      out[s.key] = raw;
    }
  }
  const config = out as unknown as Config;
  for (const s of SETTINGS) {
    if (s.kind !== 'optional' && config[s.key] === undefined) throw new ConfigError(`setting ${s.env} has no value and no default`);
  }
  config.dataDir = path.resolve(config.dataDir);
  config.publicUrl = config.publicUrl.replace(/\/+$/, '');
  try {
    new URL(config.publicUrl);
  } catch {
    throw new ConfigError(`ALGOHOST_PUBLIC_URL must be an absolute URL; got "${config.publicUrl}"`);
  }
  if (config.blobStore === 's3' && !config.s3Bucket) {
    throw new ConfigError('ALGOHOST_BLOB_STORE=s3 needs ALGOHOST_S3_BUCKET (and usually ALGOHOST_S3_ENDPOINT and credentials)');
  }
  if (config.blobDir) config.blobDir = path.resolve(config.blobDir);
  if (config.databaseUrl && !/^postgres(ql)?:\/\//.test(config.databaseUrl)) {
    throw new ConfigError('ALGOHOST_DATABASE_URL must start with postgres:// (leave it unset for SQLite)');
  }
  return config;
}

function parseFlags(argv: readonly string[]): Map<string, string> {
  const known = new Set(SETTINGS.map((s) => s.flag));
  const flags = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    if (!known.has(name)) throw new ConfigError(`unknown option ${name} (see --help)`);
    const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined) throw new ConfigError(`option ${name} needs a value`);
    flags.set(name, value);
  }
  return flags;
}

/** The text of `--help`: the one place where every setting is documented. */
export function describeSettings(): string {
  const lines = ['Settings (flag wins over environment variable):', ''];
  for (const s of SETTINGS) {
    const def = s.default === undefined ? 'unset' : typeof s.default === 'function' ? 'derived' : s.default;
    lines.push(`  ${s.flag.padEnd(26)} ${s.env.padEnd(32)} default: ${def}`);
    lines.push(`      ${s.describe}`);
  }
  return lines.join('\n');
}
