/**
 * Every setting of the service, in one typed schema (TypeBox): each has an environment
 * variable, a matching command-line flag, a default (or a default derived from the settings
 * before it) and a one-line reason. `Config` is the schema's static type. `loadConfig` is
 * called once by the composition root; no other module reads `process.env`.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Type, type Static, type TSchema } from 'typebox';
import { Value } from 'typebox/value';

/** What derived defaults read: settings earlier in the schema, already converted. */
interface Earlier {
  host: string;
  port: number;
  buildConcurrency: number;
  maxRunners: number;
  runnerMemoryBudgetMiB: number;
  s3Endpoint?: string;
}

interface Meta<T> {
  env: string;
  flag: string;
  describe: string;
  default?: T;
  /** A default computed from the settings before this one (in schema order). */
  derive?: (earlier: Earlier) => T;
}

/** A setting: its value's schema, with the variable, flag and description beside it. */
function setting<S extends TSchema>(schema: S, meta: Meta<Static<S>>): S {
  // Onto the schema itself: a copy would lose TypeBox's own (non-enumerable) marks, which Convert reads.
  return Object.assign(schema, meta, { description: meta.describe });
}

/** A setting with no default: unset means "not configured". */
function optional<S extends TSchema>(schema: S, meta: Meta<Static<S>>) {
  return Type.Optional(setting(schema, meta));
}

/** The web UI as `npm run setup` builds it: packages/web/dist beside this package. */
const DEFAULT_WEB_DIR = fileURLToPath(new URL('../../../web/dist', import.meta.url));
/** The shortest audit retention accepted (ALGOHOST_AUDIT_RETENTION), a day. */
const MIN_AUDIT_RETENTION_SECONDS = 24 * 3600;

export const ConfigSchema = Type.Object({
  port: setting(Type.Integer({ minimum: 0, maximum: 65535 }), {
    env: 'ALGOHOST_PORT',
    flag: '--port',
    default: 8080,
    describe: 'TCP port of the HTTP API and Git server (0 picks a free port).',
  }),
  host: setting(Type.String(), {
    env: 'ALGOHOST_HOST',
    flag: '--host',
    default: '127.0.0.1',
    describe: 'Address to listen on; loopback by default so a fresh install is not exposed.',
  }),
  dataDir: setting(Type.String(), {
    env: 'ALGOHOST_DATA_DIR',
    flag: '--data-dir',
    default: './data',
    describe: 'Where the SQLite database, Git repositories and the initial admin key live.',
  }),
  databaseUrl: optional(Type.String(), {
    env: 'ALGOHOST_DATABASE_URL',
    flag: '--database-url',
    describe: 'Unset: SQLite file in the data dir. postgres://… : PostgreSQL (cluster mode).',
  }),
  role: setting(Type.Union([Type.Literal('all'), Type.Literal('api'), Type.Literal('worker')]), {
    env: 'ALGOHOST_ROLE',
    flag: '--role',
    default: 'all',
    describe:
      'all: one node does everything (the embedded default). api: REST, Git and webhooks, sending builds and calls to workers over NATS. worker: runs builds and runners taken from NATS. api and worker need ALGOHOST_NATS_URL and PostgreSQL.',
  }),
  natsUrl: optional(Type.String(), {
    env: 'ALGOHOST_NATS_URL',
    flag: '--nats-url',
    describe:
      'Cluster mode: nats://host:port of a nats-server with JetStream (its max_payload at least 16 MiB), carrying builds, async and sync calls between nodes. Unset: work stays in this process.',
  }),
  natsPrefix: setting(Type.String({ pattern: '^[a-z][a-z0-9-]{0,31}$' }), {
    env: 'ALGOHOST_NATS_PREFIX',
    flag: '--nats-prefix',
    default: 'algohost',
    describe:
      'Cluster mode: the first token of every NATS subject, stream, consumer and KV bucket this cluster uses, so several clusters (staging and production) can share one nats-server. Lower-case letters, digits and dashes; every node of a cluster sets the same.',
  }),
  natsUser: optional(Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }), {
    env: 'ALGOHOST_NATS_USER',
    flag: '--nats-user',
    describe:
      "Cluster mode: this node's NATS user (letters, digits, - and _), one per role with the subject permissions of docs/cluster.md §3: API nodes share one, each worker (or all of them) another. A worker's subjects and presence entry carry this name.",
  }),
  natsPassword: optional(Type.String(), {
    env: 'ALGOHOST_NATS_PASSWORD',
    flag: '--nats-password',
    describe: 'Cluster mode: the password of ALGOHOST_NATS_USER (16 characters or more; `openssl rand -hex 24`).',
  }),
  natsAllowAnonymous: setting(Type.Boolean(), {
    env: 'ALGOHOST_NATS_ALLOW_ANONYMOUS',
    flag: '--nats-allow-anonymous',
    default: false,
    describe:
      'Cluster mode, for a lab only: true lets a node use a nats-server that accepts clients without credentials (anyone who reaches it can read every call and forge work); false: a node refuses to start against one.',
  }),
  workAckWaitSeconds: setting(Type.Number({ minimum: 1 }), {
    env: 'ALGOHOST_WORK_ACK_WAIT',
    flag: '--work-ack-wait',
    default: 30,
    describe:
      'Cluster mode: seconds a worker may go silent on a build or async call before NATS hands it to another worker (a live worker reports progress three times per period).',
  }),
  repositoryDir: optional(Type.String(), {
    env: 'ALGOHOST_REPOSITORY_DIR',
    flag: '--repository-dir',
    describe:
      'Where the bare Git repositories live; unset = <data dir>/repositories. In cluster mode a volume shared by every node (an NFS export, a read-write-many volume).',
  }),
  buildLogDir: optional(Type.String(), {
    env: 'ALGOHOST_BUILD_LOG_DIR',
    flag: '--build-log-dir',
    describe: 'Where build logs are kept; unset = <data dir>/builds/logs. In cluster mode a directory on the shared volume.',
  }),
  workerGpu: setting(Type.Union([Type.Literal('auto'), Type.Literal('true'), Type.Literal('false')]), {
    env: 'ALGOHOST_WORKER_GPU',
    flag: '--worker-gpu',
    default: 'auto',
    describe:
      'Whether this node runs GPU environments: true or false, or auto (true when /dev/nvidia0 exists). In a cluster a worker announces it, and GPU builds and calls go only to workers that declare a GPU.',
  }),
  artifactCacheMiB: setting(Type.Integer({ minimum: 0 }), {
    env: 'ALGOHOST_ARTIFACT_CACHE',
    flag: '--artifact-cache',
    default: 4096,
    describe:
      'Cluster mode: MiB of build artifacts and dependency layers a worker keeps after fetching them from the blob store; the least recently fetched artifact goes first, a layer once no artifact kept needs it (0 = no limit).',
  }),
  publicUrl: setting(Type.String(), {
    env: 'ALGOHOST_PUBLIC_URL',
    flag: '--public-url',
    derive: (c) => `http://${c.host === '0.0.0.0' ? '127.0.0.1' : c.host}:${c.port}`,
    describe: 'Base URL used in links and Git URLs; set it when behind a proxy or on another host name.',
  }),
  adminKey: optional(Type.String(), {
    env: 'ALGOHOST_ADMIN_KEY',
    flag: '--admin-key',
    describe: 'Admin API key of the `admin` account created on first start; generated when unset.',
  }),
  logLevel: setting(
    Type.Union([
      Type.Literal('fatal'),
      Type.Literal('error'),
      Type.Literal('warn'),
      Type.Literal('info'),
      Type.Literal('debug'),
      Type.Literal('trace'),
      Type.Literal('silent'),
    ]),
    {
      env: 'ALGOHOST_LOG_LEVEL',
      flag: '--log-level',
      default: 'info',
      describe: 'Structured log level (pino).',
    },
  ),
  defaultEnvironment: setting(Type.String(), {
    env: 'ALGOHOST_DEFAULT_ENVIRONMENT',
    flag: '--default-environment',
    default: 'python311',
    describe: 'Environment name used when a create request names none.',
  }),
  defaultNetworkAccess: setting(Type.Union([Type.Literal('isolated'), Type.Literal('full')]), {
    env: 'ALGOHOST_DEFAULT_NETWORK_ACCESS',
    flag: '--default-network-access',
    default: 'isolated',
    describe: 'network_access of a new algorithm when the request omits it.',
  }),
  sessionTtlSeconds: setting(Type.Integer({ minimum: 0 }), {
    env: 'ALGOHOST_SESSION_TTL',
    flag: '--session-ttl',
    default: 3600,
    describe: 'Lifetime in seconds of the JWTs issued by POST /v1/auth/token (web UI sessions).',
  }),
  rateLimitWindowSeconds: setting(Type.Integer({ minimum: 1 }), {
    env: 'ALGOHOST_RATE_LIMIT_WINDOW',
    flag: '--rate-limit-window',
    default: 60,
    describe: 'Window in seconds of the request-rate limits (ALGOHOST_RATE_LIMIT_PER_KEY, ALGOHOST_RATE_LIMIT_PER_ADDRESS).',
  }),
  rateLimitPerKey: setting(Type.Integer({ minimum: 0 }), {
    env: 'ALGOHOST_RATE_LIMIT_PER_KEY',
    flag: '--rate-limit-per-key',
    default: 600_000,
    describe:
      'Requests one API key (or the account of a session) may make per window on this node; past it 429 with Retry-After (default 600,000 a minute: 10,000 a second, more than a node on two cores serves flat out; 0 = no limit).',
  }),
  rateLimitPerAddress: setting(Type.Integer({ minimum: 0 }), {
    env: 'ALGOHOST_RATE_LIMIT_PER_ADDRESS',
    flag: '--rate-limit-per-address',
    default: 1_200_000,
    describe:
      'Requests one client address may make per window on this node, authenticated or not; past it 429 with Retry-After (0 = no limit). Behind a reverse proxy every client has its address.',
  }),
  signInFailuresPerAccount: setting(Type.Integer({ minimum: 0 }), {
    env: 'ALGOHOST_SIGNIN_FAILURES_PER_ACCOUNT',
    flag: '--signin-failures-per-account',
    default: 5,
    describe: 'Failed sign-ins (POST /v1/auth/token) of one account name before further attempts wait ALGOHOST_SIGNIN_DELAY (0 = never).',
  }),
  signInFailuresPerAddress: setting(Type.Integer({ minimum: 0 }), {
    env: 'ALGOHOST_SIGNIN_FAILURES_PER_ADDRESS',
    flag: '--signin-failures-per-address',
    default: 20,
    describe: 'Failed sign-ins from one client address, whatever the names, before further attempts from it wait (0 = never).',
  }),
  signInDelaySeconds: setting(Type.Integer({ minimum: 1 }), {
    env: 'ALGOHOST_SIGNIN_DELAY',
    flag: '--signin-delay',
    default: 1,
    describe: 'Seconds a sign-in waits after the allowed failures; doubled by each further failure, up to ALGOHOST_SIGNIN_MAX_DELAY.',
  }),
  signInMaxDelaySeconds: setting(Type.Integer({ minimum: 1 }), {
    env: 'ALGOHOST_SIGNIN_MAX_DELAY',
    flag: '--signin-max-delay',
    default: 900,
    describe: 'Longest wait, in seconds, imposed on sign-ins after repeated failures.',
  }),
  bodyLimitBytes: setting(Type.Integer({ minimum: 0 }), {
    env: 'ALGOHOST_BODY_LIMIT',
    flag: '--body-limit',
    default: 1048576,
    describe: 'Largest JSON body accepted by the management API, in bytes.',
  }),
  gitBinary: setting(Type.String(), {
    env: 'ALGOHOST_GIT',
    flag: '--git',
    default: 'git',
    describe: 'The git executable used for repositories.',
  }),
  maxPushBytes: setting(Type.Integer({ minimum: 0 }), {
    env: 'ALGOHOST_MAX_PUSH_BYTES',
    flag: '--max-push-bytes',
    default: 100 * 1024 * 1024,
    describe:
      'Largest Git push (the pack one push sends), in bytes; a bigger one is refused while it streams (default 100 MiB; 0 = no limit).',
  }),
  maxRepositoryBytes: setting(Type.Integer({ minimum: 0 }), {
    env: 'ALGOHOST_MAX_REPOSITORY_BYTES',
    flag: '--max-repository-bytes',
    default: 1024 * 1024 * 1024,
    describe:
      "Largest size of one algorithm's Git repository on disk, in bytes; a push growing it past this is refused (default 1 GiB; 0 = no limit).",
  }),
  maxAccountRepositoryBytes: setting(Type.Integer({ minimum: 0 }), {
    env: 'ALGOHOST_MAX_ACCOUNT_REPOSITORY_BYTES',
    flag: '--max-account-repository-bytes',
    default: 10 * 1024 * 1024 * 1024,
    describe:
      "Largest total size of an account's algorithm repositories, in bytes; a push growing it past this is refused (default 10 GiB; 0 = no limit).",
  }),
  buildTimeoutSeconds: setting(Type.Integer({ minimum: 0 }), {
    env: 'ALGOHOST_BUILD_TIMEOUT',
    flag: '--build-timeout',
    default: 900,
    describe: 'Wall-clock limit of one build, in seconds (default 15 minutes).',
  }),
  buildConcurrency: setting(Type.Integer({ minimum: 1 }), {
    env: 'ALGOHOST_BUILD_CONCURRENCY',
    flag: '--build-concurrency',
    default: 2,
    describe: "Builds run at once on this node (one algorithm's builds always run one after another).",
  }),
  buildsPerAccount: setting(Type.Integer({ minimum: 0 }), {
    env: 'ALGOHOST_BUILDS_PER_ACCOUNT',
    flag: '--builds-per-account',
    derive: (c) => Math.max(1, Math.floor(c.buildConcurrency / 2)),
    describe:
      "Builds of one account's algorithms running at once on this node; free slots go to the account with the fewest running (default half of ALGOHOST_BUILD_CONCURRENCY, at least 1; 0 = no limit).",
  }),
  buildMemoryMiB: setting(Type.Integer({ minimum: 0 }), {
    env: 'ALGOHOST_BUILD_MEMORY',
    flag: '--build-memory',
    default: 4096,
    describe: 'Memory limit of each build step, in MiB.',
  }),
  pipIndexUrl: optional(Type.String(), {
    env: 'ALGOHOST_PIP_INDEX_URL',
    flag: '--pip-index-url',
    describe: 'Python package index for builds; unset = the public PyPI.',
  }),
  pipFindLinks: optional(Type.String(), {
    env: 'ALGOHOST_PIP_FIND_LINKS',
    flag: '--pip-find-links',
    describe: 'Comma-separated directories of wheels offered to pip (--find-links), e.g. for offline clusters.',
  }),
  npmRegistry: optional(Type.String(), {
    env: 'ALGOHOST_NPM_REGISTRY',
    flag: '--npm-registry',
    describe: "npm registry for JavaScript builds; unset = npm's default.",
  }),
  mavenRepository: optional(Type.String(), {
    env: 'ALGOHOST_MAVEN_REPOSITORY',
    flag: '--maven-repository',
    describe: 'Maven repository (mirror of central) for Java and Scala builds; unset = Maven Central.',
  }),
  cranRepository: optional(Type.String(), {
    env: 'ALGOHOST_CRAN_REPOSITORY',
    flag: '--cran-repository',
    describe: 'CRAN-style repository URL (file:// works offline) for R packages.txt.',
  }),
  buildEgressAllow: optional(Type.String(), {
    env: 'ALGOHOST_BUILD_EGRESS_ALLOW',
    flag: '--build-egress-allow',
    describe:
      'Extra hosts build steps may reach through the egress proxy besides the registries, comma-separated host[:port] (port default 443), e.g. "github.com,nexus.internal:8443".',
  }),
  runnerEgressAllow: optional(Type.String(), {
    env: 'ALGOHOST_RUNNER_EGRESS_ALLOW',
    flag: '--runner-egress-allow',
    describe:
      'Private hosts that runners of network_access "full" algorithms may reach through the egress proxy besides public addresses, comma-separated host[:port] (port default 443), e.g. "api.internal:8443". Metadata addresses and the node\'s own services stay refused.',
  }),
  buildCacheDir: optional(Type.String(), {
    env: 'ALGOHOST_BUILD_CACHE_DIR',
    flag: '--build-cache-dir',
    describe:
      'Download caches of builds (pip, npm, Maven, Cargo…); unset = <data dir>/builds/cache. Share it to keep downloads across clusters.',
  }),
  runnerMemoryMiB: setting(Type.Integer({ minimum: 0 }), {
    env: 'ALGOHOST_RUNNER_MEMORY',
    flag: '--runner-memory',
    default: 2048,
    describe: 'Memory limit of each algorithm runner, in MiB (default 2 GiB).',
  }),
  runnerPids: setting(Type.Integer({ minimum: 0 }), {
    env: 'ALGOHOST_RUNNER_PIDS',
    flag: '--runner-pids',
    default: 128,
    describe:
      'Most processes and threads one runner may have (stops fork bombs); with ALGOHOST_SANDBOX_OPEN_FILES it bounds the files one runner can hold open.',
  }),
  sandboxOpenFiles: setting(Type.Integer({ minimum: 0, maximum: 1048576 }), {
    env: 'ALGOHOST_SANDBOX_OPEN_FILES',
    flag: '--sandbox-open-files',
    default: 1024,
    describe:
      'Open-files limit (RLIMIT_NOFILE, soft and hard) of every sandboxed process, runners and build steps; a runner holds at most this × ALGOHOST_RUNNER_PIDS files.',
  }),
  requireCgroups: setting(Type.Boolean(), {
    env: 'ALGOHOST_REQUIRE_CGROUPS',
    flag: '--require-cgroups',
    default: true,
    describe:
      'true: refuse to run builds and runners where the memory and pids cgroup limits do not hold (the start-up log says why). false: run them without those limits (only where every algorithm is trusted).',
  }),
  sandboxUidRange: setting(Type.String({ pattern: '^[0-9]{1,10}-[0-9]{1,10}$' }), {
    env: 'ALGOHOST_SANDBOX_UID_RANGE',
    flag: '--sandbox-uid-range',
    default: '70000-99999',
    describe:
      'Host uids (first-last; each also a gid) given to sandboxes, one per runner and per build step for its life, so that no per-uid kernel limit (inotify, processes, message queues) is shared between tenants. No account, group or subordinate id range of the host may lie in it; every node on one host uses the same range. It must hold at least twice ALGOHOST_MAX_RUNNERS plus ALGOHOST_BUILD_CONCURRENCY.',
  }),
  maxArtifactBytes: setting(Type.Integer({ minimum: 0 }), {
    env: 'ALGOHOST_MAX_ARTIFACT_BYTES',
    flag: '--max-artifact-bytes',
    default: 2 * 1024 * 1024 * 1024,
    describe:
      "Largest artifact of one build (the algorithm's built tree plus its dependency layer), in bytes; a build growing past it fails (default 2 GiB; 0 = no limit).",
  }),
  runnerCpus: setting(Type.Number({ minimum: 0 }), {
    env: 'ALGOHOST_RUNNER_CPUS',
    flag: '--runner-cpus',
    default: 1,
    describe: 'CPU cores one runner may use, as a CFS quota (0.5 = half a core; 0 = no quota).',
  }),
  environmentMemory: optional(Type.String(), {
    env: 'ALGOHOST_ENVIRONMENT_MEMORY',
    flag: '--environment-memory',
    describe: 'Runner memory per environment in MiB, overriding ALGOHOST_RUNNER_MEMORY: "java17=3072,python311=1024".',
  }),
  metricsToken: optional(Type.String({ minLength: 16 }), {
    env: 'ALGOHOST_METRICS_TOKEN',
    flag: '--metrics-token',
    describe:
      'A secret (16 characters or more) a Prometheus scraper sends as "Authorization: Bearer <token>" to read /metrics. Unset: /metrics answers admin credentials only. Required with an ALGOHOST_METRICS_ADDRESS that is not loopback.',
  }),
  metricsAddress: optional(Type.String({ pattern: '^(?:\\[[0-9A-Fa-f:.]+\\]|[^:\\s\\[\\]]+):[0-9]{1,5}$' }), {
    env: 'ALGOHOST_METRICS_ADDRESS',
    flag: '--metrics-address',
    describe:
      'host:port on which to serve /metrics instead of the API port (e.g. 10.0.0.5:9464, a network only the scraper reaches); anything but a loopback address (127.0.0.0/8, [::1], localhost) needs ALGOHOST_METRICS_TOKEN, which applies whenever it is set.',
  }),
  corsOrigins: optional(Type.String(), {
    env: 'ALGOHOST_CORS_ORIGINS',
    flag: '--cors-origins',
    describe: 'Origins whose web pages may call the API, comma-separated ("https://app.example"), or * for any. Unset: none.',
  }),
  webDir: setting(Type.String(), {
    env: 'ALGOHOST_WEB_DIR',
    flag: '--web-dir',
    default: DEFAULT_WEB_DIR,
    describe:
      'The built web UI (index.html and assets/) served at /; default: packages/web/dist of this checkout, which npm run setup builds.',
  }),
  maxConnections: setting(Type.Integer({ minimum: 0 }), {
    env: 'ALGOHOST_MAX_CONNECTIONS',
    flag: '--max-connections',
    derive: () => connectionsForFileLimit(openFileLimit()),
    describe:
      "TCP connections held at once (API, Git); at the cap an idle one (an anonymous one first) is closed to make room, and only when all are busy is a new one answered 503. Default: half of the process's open-file limit less 512, so files, pipes to runners, the database and the API sockets of sandboxes keep descriptors.",
  }),
  maxConnectionsPerClient: setting(Type.Integer({ minimum: 0 }), {
    env: 'ALGOHOST_MAX_CONNECTIONS_PER_CLIENT',
    flag: '--max-connections-per-client',
    default: 256,
    describe:
      'HTTP connections one client address (IPv6: one /64) may hold; more are answered 503 and closed at once. Raise it or use 0 (no limit) behind a reverse proxy, whose address every client shares.',
  }),
  maxConnectionsPerSandbox: setting(Type.Integer({ minimum: 0 }), {
    env: 'ALGOHOST_MAX_CONNECTIONS_PER_SANDBOX',
    flag: '--max-connections-per-sandbox',
    default: 64,
    describe:
      "Connections one runner's sandbox may hold on its API socket (pipeline_enabled algorithms); more are answered 503 and closed. Counted apart from ALGOHOST_MAX_CONNECTIONS (0 = no limit).",
  }),
  headersTimeoutSeconds: setting(Type.Number({ minimum: 0 }), {
    env: 'ALGOHOST_HEADERS_TIMEOUT',
    flag: '--headers-timeout',
    default: 30,
    describe:
      'Seconds a connection may take to send a complete request head, counted from its opening: idle connections are closed after it.',
  }),
  requestTimeoutSeconds: setting(Type.Number({ minimum: 0 }), {
    env: 'ALGOHOST_REQUEST_TIMEOUT',
    flag: '--request-timeout',
    default: 3600,
    describe:
      'Seconds to receive one whole request (head and body, not the answer: a 3000 s call is not cut); long, for big pushes and uploads, which ALGOHOST_MIN_BODY_RATE watches meanwhile. 0 = no limit.',
  }),
  keepAliveTimeoutSeconds: setting(Type.Number({ minimum: 0 }), {
    env: 'ALGOHOST_KEEP_ALIVE_TIMEOUT',
    flag: '--keep-alive-timeout',
    default: 72,
    describe: "Seconds an idle keep-alive connection stays open between requests (keep it above a proxy's idle timeout).",
  }),
  bodyTimeoutSeconds: setting(Type.Number({ minimum: 0 }), {
    env: 'ALGOHOST_BODY_TIMEOUT',
    flag: '--body-timeout',
    default: 30,
    describe:
      'Window in which a request body still arriving must bring ALGOHOST_MIN_BODY_RATE bytes per second, or the request is answered 408 and closed (time the server itself holds the body back does not count). 0 = no check.',
  }),
  minBodyBytesPerSecond: setting(Type.Integer({ minimum: 0 }), {
    env: 'ALGOHOST_MIN_BODY_RATE',
    flag: '--min-body-rate',
    default: 1024,
    describe: 'Slowest rate, in bytes per second, at which a request body may arrive (see ALGOHOST_BODY_TIMEOUT).',
  }),
  callInputBudgetBytes: setting(Type.Integer({ minimum: 0 }), {
    env: 'ALGOHOST_CALL_INPUT_BUDGET',
    flag: '--call-input-budget',
    default: 256 * 1024 * 1024,
    describe:
      'Bytes of call inputs the node holds at once (being received, or kept until their call ends); past it calls get 503 with Retry-After, and one account may hold a quarter of it (default 256 MiB; 0 = no limit).',
  }),
  runnersPerAlgorithm: setting(Type.Integer({ minimum: 1 }), {
    env: 'ALGOHOST_RUNNERS_PER_ALGORITHM',
    flag: '--runners-per-algorithm',
    default: 4,
    describe:
      'Most warm runners one built algorithm scales to under concurrent calls (it starts with one); at that limit a short call waits inside a busy runner (one per runner) rather than in the pool.',
  }),
  maxRunners: setting(Type.Integer({ minimum: 1 }), {
    env: 'ALGOHOST_MAX_RUNNERS',
    flag: '--max-runners',
    default: 32,
    describe: 'Warm runners on this node; past it the least recently used idle runner stops.',
  }),
  runnersPerAccount: setting(Type.Integer({ minimum: 0 }), {
    env: 'ALGOHOST_RUNNERS_PER_ACCOUNT',
    flag: '--runners-per-account',
    derive: (c) => Math.max(1, Math.floor(c.maxRunners / 4)),
    describe:
      "Runners of one account's algorithms on this node; past it that account's least recently used idle runner stops, and with all busy its call is refused with 429 (default a quarter of ALGOHOST_MAX_RUNNERS; 0 = no limit).",
  }),
  runnerMemoryBudgetMiB: setting(Type.Integer({ minimum: 0 }), {
    env: 'ALGOHOST_RUNNER_MEMORY_BUDGET',
    flag: '--runner-memory-budget',
    derive: () => Math.floor((os.totalmem() * 0.75) / 1024 / 1024),
    describe:
      "Sum of the runners' memory limits on this node, in MiB; a runner that does not fit stops an idle one or is refused with 503 (default 75% of the machine's memory; 0 = no limit).",
  }),
  runnerMemoryPerAccountMiB: setting(Type.Integer({ minimum: 0 }), {
    env: 'ALGOHOST_RUNNER_MEMORY_PER_ACCOUNT',
    flag: '--runner-memory-per-account',
    derive: (c) => Math.floor(c.runnerMemoryBudgetMiB / 2),
    describe:
      "Sum of the memory limits of one account's runners on this node, in MiB (default half of ALGOHOST_RUNNER_MEMORY_BUDGET; 0 = no limit).",
  }),
  runnerIdleSeconds: setting(Type.Integer({ minimum: 0 }), {
    env: 'ALGOHOST_RUNNER_IDLE',
    flag: '--runner-idle',
    default: 600,
    describe: 'Seconds an idle runner stays warm.',
  }),
  maxCallsPerAccount: setting(Type.Integer({ minimum: 1 }), {
    env: 'ALGOHOST_MAX_CALLS_PER_ACCOUNT',
    flag: '--max-calls-per-account',
    default: 64,
    describe: 'Calls one account may have in flight; more get 429 with Retry-After.',
  }),
  buildCacheShared: setting(Type.Boolean(), {
    env: 'ALGOHOST_BUILD_CACHE_SHARED',
    flag: '--build-cache-shared',
    default: false,
    describe:
      "true: one download cache per language for the whole cluster (faster; only for clusters whose users trust each other). false: one per owner, so no build can plant a package in another tenant's cache.",
  }),
  cargoRegistry: optional(Type.String(), {
    env: 'ALGOHOST_CARGO_REGISTRY',
    flag: '--cargo-registry',
    describe: 'Cargo source replacing crates.io for Rust builds (e.g. sparse+https://…); unset = crates.io.',
  }),
  gemSource: optional(Type.String(), {
    env: 'ALGOHOST_GEM_SOURCE',
    flag: '--gem-source',
    describe: "RubyGems source for Bundler; unset = the Gemfile's own source.",
  }),
  dataQuotaBytes: setting(Type.Integer({ minimum: 0 }), {
    env: 'ALGOHOST_DATA_QUOTA',
    flag: '--data-quota',
    default: 0,
    describe: "Bytes of hosted data each account may store (its collections and its algorithms' .algo spaces); 0 = unlimited.",
  }),
  dataTempTtlSeconds: setting(Type.Integer({ minimum: 0 }), {
    env: 'ALGOHOST_DATA_TEMP_TTL',
    flag: '--data-temp-ttl',
    default: 86400,
    describe: 'Seconds a file under data://.algo/…/temp lives after its last change (default one day).',
  }),
  dataSweepSeconds: setting(Type.Integer({ minimum: 0 }), {
    env: 'ALGOHOST_DATA_SWEEP_INTERVAL',
    flag: '--data-sweep-interval',
    default: 300,
    describe: 'Seconds between sweeps deleting expired temp files and ended .session data; 0 = no sweeps.',
  }),
  blobStore: setting(Type.Union([Type.Literal('disk'), Type.Literal('s3')]), {
    env: 'ALGOHOST_BLOB_STORE',
    flag: '--blob-store',
    default: 'disk',
    describe: 'Where hosted data files live: disk (a local directory) or s3 (an S3-compatible bucket, ALGOHOST_S3_*).',
  }),
  blobDir: optional(Type.String(), {
    env: 'ALGOHOST_BLOB_DIR',
    flag: '--blob-dir',
    describe: 'Directory of the disk blob store; unset = <data dir>/blobs. Uploads are written beside it, so keep it on one file system.',
  }),
  s3Endpoint: optional(Type.String(), {
    env: 'ALGOHOST_S3_ENDPOINT',
    flag: '--s3-endpoint',
    describe: 'URL of an S3-compatible service (MinIO, Ceph…) for ALGOHOST_BLOB_STORE=s3; unset = AWS S3.',
  }),
  s3Region: setting(Type.String(), {
    env: 'ALGOHOST_S3_REGION',
    flag: '--s3-region',
    default: 'us-east-1',
    describe: 'Region of the S3 bucket (most self-hosted stores accept any).',
  }),
  s3Bucket: optional(Type.String(), {
    env: 'ALGOHOST_S3_BUCKET',
    flag: '--s3-bucket',
    describe: 'Bucket holding hosted data with ALGOHOST_BLOB_STORE=s3; created on start if missing and allowed.',
  }),
  s3AccessKeyId: optional(Type.String(), {
    env: 'ALGOHOST_S3_ACCESS_KEY_ID',
    flag: '--s3-access-key-id',
    describe: "Access key id for S3; unset = the AWS SDK's default credential chain (instance roles…).",
  }),
  s3SecretAccessKey: optional(Type.String(), {
    env: 'ALGOHOST_S3_SECRET_ACCESS_KEY',
    flag: '--s3-secret-access-key',
    describe: 'Secret access key belonging to ALGOHOST_S3_ACCESS_KEY_ID.',
  }),
  s3ForcePathStyle: setting(Type.Boolean(), {
    env: 'ALGOHOST_S3_FORCE_PATH_STYLE',
    flag: '--s3-force-path-style',
    derive: (c) => c.s3Endpoint !== undefined,
    describe:
      'Address the bucket in the path (http://host/bucket/key), as self-hosted stores need; default true with ALGOHOST_S3_ENDPOINT.',
  }),
  // Checked in loadConfig (CLUSTER_KEY), whose refusal never repeats the value: it is a secret.
  clusterKey: optional(Type.String(), {
    env: 'ALGOHOST_CLUSTER_KEY',
    flag: '--cluster-key',
    describe:
      'Key (32 bytes, base64) sealing broker credentials and SCM OAuth secrets and tokens at rest, and signing every cluster message; give every node of a cluster the same (required in cluster mode). Unset on a node alone = generated on first start into <data dir>/cluster-key (mode 0600).',
  }),
  sqsEndpointAllow: optional(Type.String(), {
    env: 'ALGOHOST_SQS_ENDPOINT_ALLOW',
    flag: '--sqs-endpoint-allow',
    describe:
      'Hosts (host or host:port, comma-separated) besides AWS whose SQS queue URLs Event Flows may name (an SQS-compatible server); unset = AWS queue URLs only.',
  }),
  serviceBusEndpointAllow: optional(Type.String(), {
    env: 'ALGOHOST_SERVICEBUS_ENDPOINT_ALLOW',
    flag: '--servicebus-endpoint-allow',
    describe:
      'Hosts (host or host:port, comma-separated) besides Azure namespaces whose Service Bus queue URIs Event Flows may name, spoken to in plain AMQP (test endpoints only); unset = Azure namespaces only.',
  }),
  sqsRegion: setting(Type.String(), {
    env: 'ALGOHOST_SQS_REGION',
    flag: '--sqs-region',
    default: 'us-east-1',
    describe: 'Region signed into requests to SQS-compatible servers outside AWS (AWS queue URLs name their own).',
  }),
  sqsStsEndpoint: optional(Type.String({ pattern: '^https?://[^/?#@\\s]+/?$' }), {
    env: 'ALGOHOST_SQS_STS_ENDPOINT',
    flag: '--sqs-sts-endpoint',
    describe:
      'STS endpoint (https://host[:port]) where SQS flows assume their roles, e.g. a VPC endpoint; unset = AWS STS of the queue’s region.',
  }),
  eventRetryAttempts: setting(Type.Integer({ minimum: 1, maximum: 100 }), {
    env: 'ALGOHOST_EVENT_RETRY_ATTEMPTS',
    flag: '--event-retry-attempts',
    default: 3,
    describe: 'Calls per Kafka record before it goes to the dead-letter topic <topic>.dlq (SQS: the queue’s maxReceiveCount decides).',
  }),
  eventRetryBackoffMs: setting(Type.Integer({ minimum: 0 }), {
    env: 'ALGOHOST_EVENT_RETRY_BACKOFF_MS',
    flag: '--event-retry-backoff-ms',
    default: 1000,
    describe: 'Wait before retrying a failed delivery, doubled on each attempt up to ALGOHOST_EVENT_RETRY_BACKOFF_MAX_MS.',
  }),
  eventRetryBackoffMaxMs: setting(Type.Integer({ minimum: 0 }), {
    env: 'ALGOHOST_EVENT_RETRY_BACKOFF_MAX_MS',
    flag: '--event-retry-backoff-max-ms',
    default: 60_000,
    describe: 'Longest wait between delivery attempts.',
  }),
  eventSaturationDelayMs: setting(Type.Integer({ minimum: 0 }), {
    env: 'ALGOHOST_EVENT_SATURATION_DELAY_MS',
    flag: '--event-saturation-delay-ms',
    default: 5000,
    describe:
      'When an algorithm’s runners are all busy: how long a Kafka partition waits, and how long an SQS message goes back to its queue, before the next try.',
  }),
  eventDeliveryRetentionSeconds: setting(Type.Integer({ minimum: 60 }), {
    env: 'ALGOHOST_EVENT_DELIVERY_RETENTION',
    flag: '--event-delivery-retention',
    default: 7 * 24 * 3600,
    describe: 'Seconds delivery records of Event Flows are kept (default a week).',
  }),
  auditRetentionSeconds: setting(Type.Integer({ minimum: 0 }), {
    env: 'ALGOHOST_AUDIT_RETENTION',
    flag: '--audit-retention',
    default: 180 * 24 * 3600,
    describe:
      'Seconds audit log entries are kept, at least a day (86400); older ones are deleted hourly. Default 180 days; 0 keeps them for good (entries of no account, failed sign-ins of unknown names, are capped at the newest 100,000 either way).',
  }),
});

export type Config = Static<typeof ConfigSchema>;

type Kind = 'string' | 'int' | 'number' | 'optional' | 'bool';

export interface Setting {
  key: keyof Config;
  env: string;
  flag: string;
  kind: Kind;
  /** The default's text for --help: a value, "derived" or unset. */
  default?: string;
  describe: string;
  schema: TSchema & Partial<Meta<unknown>>;
}

/** The schema's settings in order, as --help and the tests list them. */
export const SETTINGS: readonly Setting[] = Object.entries(ConfigSchema.properties).map(([key, raw]) => {
  const schema = raw as unknown as TSchema & Meta<unknown> & { type?: string };
  const kind: Kind = !(ConfigSchema.required as readonly string[] | undefined)?.includes(key)
    ? 'optional'
    : schema.type === 'integer'
      ? 'int'
      : schema.type === 'number'
        ? 'number'
        : schema.type === 'boolean'
          ? 'bool'
          : 'string';
  const def = schema.derive ? 'derived' : schema.default === undefined ? undefined : String(schema.default);
  return { key: key as keyof Config, env: schema.env, flag: schema.flag, kind, default: def, describe: schema.describe, schema };
});

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

/** Reads settings from flags (win) and environment variables, applying defaults in order; checks them all. */
export function loadConfig(env: NodeJS.ProcessEnv, argv: readonly string[]): Config {
  const flags = parseFlags(argv);
  const raw: Record<string, unknown> = {};
  for (const s of SETTINGS) {
    const given = flags[s.flag.slice(2)] ?? env[s.env];
    if (given !== undefined && given !== '') raw[s.key] = given;
  }
  Value.Default(ConfigSchema, raw);
  const out: Record<string, unknown> = {};
  for (const s of SETTINGS) {
    let value = raw[s.key];
    if (value === undefined && s.schema.derive) value = s.schema.derive(out as unknown as Earlier);
    if (value !== undefined) out[s.key] = checked(s, value);
  }
  if (!Value.Check(ConfigSchema, out)) {
    const [first] = Value.Errors(ConfigSchema, out);
    throw new ConfigError(`settings do not fit their schema: ${first?.instancePath ?? ''} ${first?.message ?? ''}`.trim());
  }
  return crossChecked(out);
}

/** One setting converted from text to its type, or a ConfigError naming it and what it accepts. */
function checked(s: Setting, value: unknown): unknown {
  const name = `${s.env} (${s.flag})`;
  // Integers are converted as numbers first, so "1.5" is refused instead of truncated.
  const converted = Value.Convert(s.kind === 'int' ? Type.Number() : s.schema, value);
  if (Value.Check(s.schema, converted)) return converted;
  const literals = (s.schema as { anyOf?: { const?: unknown }[] }).anyOf?.map((t) => t.const);
  if (literals) throw new ConfigError(`${name} must be one of ${literals.join(', ')}; got "${String(value)}"`);
  if (s.kind === 'bool') throw new ConfigError(`${name} must be true or false; got "${String(value)}"`);
  const max = (s.schema as { maximum?: number }).maximum;
  if (max !== undefined && typeof converted === 'number' && Number.isInteger(converted) && converted > max) {
    throw new ConfigError(`${name} must be at most ${max}; got ${converted}`);
  }
  // A count of things the node runs at once (builds, runners, calls) has no "0 = none" meaning.
  const min = (s.schema as { minimum?: number }).minimum;
  if (min !== undefined && min > 0 && typeof converted === 'number' && Number.isInteger(converted) && converted < min) {
    throw new ConfigError(`${name} must be at least ${min}; got ${converted}`);
  }
  if (s.kind === 'int') throw new ConfigError(`${name} must be a non-negative integer; got "${String(value)}"`);
  if (s.kind === 'number') throw new ConfigError(`${name} must be a non-negative number; got "${String(value)}"`);
  if (!SECRET_SETTING.test(s.env)) throw new ConfigError(`${name} is invalid: "${String(value)}"`);
  // A secret (token, password, key) ends up in logs with the message: it says what is wrong
  // with the value, never the value itself.
  const minLength = (s.schema as { minLength?: number }).minLength;
  const length = String(value).length;
  if (minLength !== undefined && length < minLength) {
    throw new ConfigError(`${name} must be ${minLength} characters or more; got ${length}`);
  }
  throw new ConfigError(`${name} is invalid (${length} characters; the value is a secret and not shown)`);
}

/** Settings whose values are secrets: never repeated in an error. */
const SECRET_SETTING = /(TOKEN|PASSWORD|SECRET|_KEY)$/;

/**
 * Checks that involve more than one setting, and normalizations, all before anything touches
 * disk, the database or S3: a bad combination fails start-up with one line (exit code 2).
 */
function crossChecked(config: Config): Config {
  checkAddresses(config);
  checkStorage(config);
  checkCluster(config);
  checkLimits(config);
  return config;
}

/** Directories made absolute, and the public URL without its trailing slash, checked whole. */
function checkAddresses(config: Config): void {
  config.dataDir = path.resolve(config.dataDir);
  config.webDir = path.resolve(config.webDir);
  config.publicUrl = config.publicUrl.replace(/\/+$/, '');
  try {
    new URL(config.publicUrl);
  } catch {
    throw new ConfigError(`ALGOHOST_PUBLIC_URL must be an absolute URL; got "${config.publicUrl}"`);
  }
  if (config.repositoryDir) config.repositoryDir = path.resolve(config.repositoryDir);
  if (config.buildLogDir) config.buildLogDir = path.resolve(config.buildLogDir);
}

/** The blob store and the database: the settings each choice needs, and their form. */
function checkStorage(config: Config): void {
  if (config.blobStore === 's3' && !config.s3Bucket) {
    throw new ConfigError('ALGOHOST_BLOB_STORE=s3 needs ALGOHOST_S3_BUCKET (and usually ALGOHOST_S3_ENDPOINT and credentials)');
  }
  if (!config.s3AccessKeyId !== !config.s3SecretAccessKey) {
    throw new ConfigError(
      'ALGOHOST_S3_ACCESS_KEY_ID and ALGOHOST_S3_SECRET_ACCESS_KEY go together: set both, or neither for the default credential chain',
    );
  }
  if (config.s3Endpoint !== undefined && !isHttpUrl(config.s3Endpoint)) {
    throw new ConfigError(`ALGOHOST_S3_ENDPOINT must be an http(s) URL; got "${config.s3Endpoint}"`);
  }
  if (config.blobDir) config.blobDir = path.resolve(config.blobDir);
  if (config.databaseUrl && !/^postgres(ql)?:\/\//.test(config.databaseUrl)) {
    throw new ConfigError('ALGOHOST_DATABASE_URL must start with postgres:// (leave it unset for SQLite)');
  }
}

/** Cluster mode: NATS, the shared cluster key, NATS credentials and a shared database. */
function checkCluster(config: Config): void {
  if (config.role !== 'all' && !config.natsUrl) {
    throw new ConfigError(`ALGOHOST_ROLE=${config.role} needs ALGOHOST_NATS_URL (the nodes reach each other through NATS)`);
  }
  if (config.natsUrl && !/^(nats|tls):\/\/[^/\s]+$/.test(config.natsUrl)) {
    throw new ConfigError(`ALGOHOST_NATS_URL must be nats://host:port (or tls://…); got "${config.natsUrl}"`);
  }
  if (config.clusterKey !== undefined && !CLUSTER_KEY.test(config.clusterKey)) {
    throw new ConfigError(
      `ALGOHOST_CLUSTER_KEY must be 32 bytes in base64 (43 characters, or 44 with the final "="; openssl rand -base64 32); got ${config.clusterKey.length} characters`,
    );
  }
  if (config.natsUrl && !config.clusterKey) {
    // Each node would make a key of its own: none would believe another's messages (and the
    // sealed credentials would open on one node only).
    throw new ConfigError(
      'ALGOHOST_NATS_URL (cluster mode) needs ALGOHOST_CLUSTER_KEY, the same on every node: 32 random bytes in base64 (openssl rand -base64 32); it signs every cluster message and seals credentials at rest',
    );
  }
  if (!config.natsUser !== !config.natsPassword) {
    throw new ConfigError('ALGOHOST_NATS_USER and ALGOHOST_NATS_PASSWORD go together: set both (docs/cluster.md §3)');
  }
  // Checked here rather than by the schema, whose message would repeat the value.
  if (config.natsPassword !== undefined && config.natsPassword.length < 16) {
    throw new ConfigError('ALGOHOST_NATS_PASSWORD must be 16 characters or more (`openssl rand -hex 24`)');
  }
  if (config.natsUrl && !config.natsUser && !config.natsAllowAnonymous) {
    throw new ConfigError(
      "ALGOHOST_NATS_URL (cluster mode) needs ALGOHOST_NATS_USER and ALGOHOST_NATS_PASSWORD: a nats-server that lets anyone in lets anyone read and forge the cluster's calls (docs/cluster.md §3; ALGOHOST_NATS_ALLOW_ANONYMOUS=true for a lab)",
    );
  }
  if (config.natsUrl && !config.databaseUrl) {
    throw new ConfigError('ALGOHOST_NATS_URL (cluster mode) needs ALGOHOST_DATABASE_URL: every node must see the same PostgreSQL database');
  }
}

/** Limits that must agree with one another, and what the retention and metrics settings allow. */
function checkLimits(config: Config): void {
  const budget = config.runnerMemoryBudgetMiB;
  if (budget > 0 && config.runnerMemoryPerAccountMiB > budget) {
    throw new ConfigError(
      `ALGOHOST_RUNNER_MEMORY_PER_ACCOUNT (${config.runnerMemoryPerAccountMiB} MiB) must not exceed ALGOHOST_RUNNER_MEMORY_BUDGET (${budget} MiB)`,
    );
  }
  if (config.runnersPerAccount > config.maxRunners) {
    throw new ConfigError(
      `ALGOHOST_RUNNERS_PER_ACCOUNT (${config.runnersPerAccount}) must not exceed ALGOHOST_MAX_RUNNERS (${config.maxRunners})`,
    );
  }
  if (config.auditRetentionSeconds > 0 && config.auditRetentionSeconds < MIN_AUDIT_RETENTION_SECONDS) {
    // Seconds, like every duration here: a small number is most likely days or hours meant, and
    // would empty the log within the hour.
    throw new ConfigError(
      `ALGOHOST_AUDIT_RETENTION (${config.auditRetentionSeconds}) is in seconds and must be 0 (entries kept for good) or at least ${MIN_AUDIT_RETENTION_SECONDS} (a day)`,
    );
  }
  if (config.metricsAddress !== undefined && !config.metricsToken && !isLoopbackAddress(config.metricsAddress)) {
    // The address has no other credential: whoever reaches it would read every tenant's
    // algorithm names and the node's load. Loopback alone goes without a token, as only this
    // host's processes reach it and no runner shares the node's network namespace.
    throw new ConfigError(
      `ALGOHOST_METRICS_ADDRESS=${config.metricsAddress} is not a loopback address: set ALGOHOST_METRICS_TOKEN (16 characters or more) for the scraper to send, or serve /metrics on 127.0.0.1`,
    );
  }
  {
    // A runner's uid returns to the pool only once its processes are gone, so stopping and
    // starting runners overlap: room for twice the runners, plus one per running build step.
    const [first, last] = config.sandboxUidRange.split('-').map(Number) as [number, number];
    const need = 2 * config.maxRunners + config.buildConcurrency;
    if (first < 1 || last >= 2 ** 31 - 1 || last < first || last - first + 1 < need) {
      throw new ConfigError(
        `ALGOHOST_SANDBOX_UID_RANGE (${config.sandboxUidRange}) must lie within 1-2147483646 and hold at least ${need} uids (twice ALGOHOST_MAX_RUNNERS plus ALGOHOST_BUILD_CONCURRENCY)`,
      );
    }
  }
  if (config.buildsPerAccount > config.buildConcurrency) {
    throw new ConfigError(
      `ALGOHOST_BUILDS_PER_ACCOUNT (${config.buildsPerAccount}) must not exceed ALGOHOST_BUILD_CONCURRENCY (${config.buildConcurrency})`,
    );
  }
}

/** Whether `host:port` (or `[v6]:port`) names a loopback host: 127.0.0.0/8, ::1 (any spelling, or v4-mapped), localhost. */
export function isLoopbackAddress(address: string): boolean {
  const host = address.replace(/:[0-9]+$/, '').replace(/^\[(.*)\]$/, '$1');
  if (host.toLowerCase() === 'localhost') return true;
  const loopback = new net.BlockList();
  loopback.addSubnet('127.0.0.0', 8, 'ipv4');
  loopback.addAddress('::1', 'ipv6');
  loopback.addSubnet('::ffff:127.0.0.0', 104, 'ipv6');
  const family = net.isIP(host);
  return family !== 0 && loopback.check(host, family === 4 ? 'ipv4' : 'ipv6');
}

/** 32 bytes in base64 (or base64url). */
const CLUSTER_KEY = /^[A-Za-z0-9+/_-]{43}=?$/;

function isHttpUrl(text: string): boolean {
  try {
    return /^https?:$/.test(new URL(text).protocol);
  } catch {
    return false;
  }
}

/** Flags through node:util's parseArgs: every setting's flag takes a value; anything else is refused. */
function parseFlags(argv: readonly string[]): Record<string, string | undefined> {
  const options = Object.fromEntries(SETTINGS.map((s) => [s.flag.slice(2), { type: 'string' as const }]));
  try {
    return parseArgs({ args: [...argv], options, strict: true, allowPositionals: false }).values as Record<string, string | undefined>;
  } catch (err) {
    const message = (err as Error).message;
    const code = (err as { code?: string }).code;
    const flag = /'(-[^' ]+)/.exec(message)?.[1] ?? '';
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') throw new ConfigError(`unknown option ${flag} (see --help)`);
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') throw new ConfigError(`option ${flag} needs a value`);
    if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') throw new ConfigError(`unexpected argument: ${message} (see --help)`);
    throw new ConfigError(message);
  }
}

/** The text of `--help`: the one place where every setting is documented. */
export function describeSettings(): string {
  const lines = ['Settings (flag wins over environment variable):', ''];
  for (const s of SETTINGS) {
    lines.push(`  ${s.flag.padEnd(26)} ${s.env.padEnd(32)} default: ${s.default ?? 'unset'}`);
    lines.push(`      ${s.describe}`);
  }
  return lines.join('\n');
}
