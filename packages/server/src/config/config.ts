/**
 * Every setting of the service, in one schema. Each has an environment variable, a matching
 * command-line flag, a default and a one-line reason. `loadConfig` is called once by the
 * composition root; no other module reads `process.env`.
 */
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
  buildTimeoutSeconds: number;
  buildConcurrency: number;
  buildMemoryMiB: number;
  pipIndexUrl: string | undefined;
  pipFindLinks: string | undefined;
  npmRegistry: string | undefined;
  mavenRepository: string | undefined;
  cranRepository: string | undefined;
  gemSource: string | undefined;
  buildCacheDir: string | undefined;
  buildCacheShared: boolean;
  runnerMemoryMiB: number;
  runnerPids: number;
  runnersPerAlgorithm: number;
  maxRunners: number;
  runnerIdleSeconds: number;
  maxCallsPerAccount: number;
  cargoRegistry: string | undefined;
}

type Kind = 'string' | 'int' | 'optional' | 'bool';

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
    default: '256',
    describe: 'Most processes and threads one runner may have (stops fork bombs).',
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
];

export class ConfigError extends Error {}

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
