/**
 * Starts a real algohost node for a test: its own temporary data directory, a free port, a
 * known admin key, and either SQLite or a fresh database on the PostgreSQL server that
 * `scripts/with-services.sh` started (ALGOHOST_TEST_POSTGRES_URL).
 *
 * With ALGOHOST_TEST_TOPOLOGY=cluster (set by the files in test/cluster/topology/, which run the
 * core loop's tests unchanged) the "server" is a cluster instead: an API node that the test
 * talks to and two workers, each with its own data directory, sharing only PostgreSQL, NATS,
 * the S3 store and the Git volume (the API node's repository directory), as in a deployment.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import pg from 'pg';
import { loadConfig, type Config } from '../../src/config/config.js';
import { startServer, type RunningServer } from '../../src/main/server.js';
import { generateApiKey } from '../../src/domain/accounts/secrets.js';
import { natsCredentials, workerCredentials } from './nats.js';

export type DatabaseKind = 'sqlite' | 'postgres';

export const POSTGRES_URL = process.env.ALGOHOST_TEST_POSTGRES_URL;
/** The core loop's tests run against a cluster (API node + two workers) instead of one node. */
export const CLUSTER_TOPOLOGY = process.env.ALGOHOST_TEST_TOPOLOGY === 'cluster';
/** A cluster keeps its metadata in PostgreSQL only. */
export const DATABASES: DatabaseKind[] = CLUSTER_TOPOLOGY ? ['postgres'] : POSTGRES_URL ? ['sqlite', 'postgres'] : ['sqlite'];
if (!POSTGRES_URL && !process.env.ALGOHOST_TEST_QUIET) {
  console.warn('ALGOHOST_TEST_POSTGRES_URL is unset: PostgreSQL variants are skipped (npm test starts PostgreSQL).');
}

export const BUILD_CACHE_DIR =
  process.env.ALGOHOST_TEST_BUILD_CACHE ??
  (process.getuid?.() === 0 ? '/var/cache/algohost-test' : path.join(os.tmpdir(), 'algohost-test-cache'));

export interface TestServer {
  url: string;
  /** The nodes whose runners serve calls and builds (their /metrics count them): this one, or a cluster's workers. */
  runnerNodeUrls: string[];
  /** The same nodes' servers (in this process), for tests that reach into their services. */
  runnerServers: RunningServer[];
  adminKey: string;
  dataDir: string;
  config: Config;
  server: RunningServer;
  stop(): Promise<void>;
  /** Stops the process-level server but keeps the data directory and database, for restart tests. */
  restart(extraEnv?: Record<string, string>): Promise<TestServer>;
}

export async function makeTempDir(prefix = 'algohost-test-'): Promise<string> {
  return fs.promises.mkdtemp(path.join(os.tmpdir(), prefix));
}

/** Creates an empty database on the test PostgreSQL server and returns its URL and a drop function. */
export async function createPostgresDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  if (!POSTGRES_URL) throw new Error('ALGOHOST_TEST_POSTGRES_URL is not set');
  const name = `t_${crypto.randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: POSTGRES_URL });
      await c.connect();
      try {
        // pg's Pool.end() resolves before its clients' connections are closed; terminating one of
        // those (WITH (FORCE)) makes the stopped server's pool raise an uncaught error. So wait
        // for them to go (55006: still in use), and force only as a last resort.
        for (let attempt = 0; ; attempt++) {
          try {
            await c.query(`DROP DATABASE IF EXISTS ${name}${attempt >= 100 ? ' WITH (FORCE)' : ''}`);
            break;
          } catch (err) {
            if ((err as { code?: string }).code !== '55006' || attempt >= 100) throw err;
            await new Promise((r) => setTimeout(r, 20));
          }
        }
      } finally {
        await c.end();
      }
    },
  };
}

export async function startTestServer(
  opts: {
    database?: DatabaseKind;
    env?: Record<string, string>;
    /** One node, or an API node and two workers (default: ALGOHOST_TEST_TOPOLOGY). */
    topology?: 'node' | 'cluster';
  } = {},
): Promise<TestServer> {
  if ((opts.topology ?? (CLUSTER_TOPOLOGY ? 'cluster' : 'node')) === 'cluster') return startTestCluster(opts.env ?? {});
  const dataDir = await makeTempDir();
  const pgdb = opts.database === 'postgres' ? await createPostgresDatabase() : undefined;
  const adminKey = generateApiKey();
  const env: Record<string, string> = {
    ALGOHOST_PORT: '0',
    ALGOHOST_DATA_DIR: dataDir,
    ALGOHOST_ADMIN_KEY: adminKey,
    ALGOHOST_LOG_LEVEL: process.env.ALGOHOST_TEST_LOG_LEVEL ?? 'silent',
    // Download caches (pip, npm, Maven, Cargo…) outlive test servers, so repeated runs are fast.
    ALGOHOST_BUILD_CACHE_DIR: BUILD_CACHE_DIR,
    ALGOHOST_BUILD_CACHE_SHARED: 'true',
    ...(pgdb ? { ALGOHOST_DATABASE_URL: pgdb.url } : {}),
    ...opts.env,
  };
  const cleanup = async () => {
    await pgdb?.drop();
    await fs.promises.rm(dataDir, { recursive: true, force: true });
  };
  return launch(env, adminKey, dataDir, cleanup);
}

/** The test servers (single nodes and clusters' API nodes) of this process by URL (support/shared-builds.ts reaches their builders). */
const testServers = new Map<string, TestServer>();

/** The test server (a node, or a cluster by its API node's URL) at `url`, if this process runs it. */
export function testServerAt(url: string): TestServer | undefined {
  return testServers.get(url);
}

async function launch(env: Record<string, string>, adminKey: string, dataDir: string, cleanup: () => Promise<void>): Promise<TestServer> {
  const config = loadConfig(env, []);
  const server = await startServer(config, { level: config.logLevel });
  const self: TestServer = {
    url: server.url,
    runnerNodeUrls: [server.url],
    runnerServers: [server],
    adminKey,
    dataDir,
    config,
    server,
    stop: async () => {
      testServers.delete(server.url);
      await server.close();
      await cleanup();
    },
    restart: async (extraEnv = {}) => {
      testServers.delete(server.url);
      await server.close();
      return launch({ ...env, ...extraEnv }, adminKey, dataDir, cleanup);
    },
  };
  testServers.set(server.url, self);
  return self;
}

/**
 * What every node of a test cluster is given: the services, a NATS prefix and a bucket of its
 * own (other test files run clusters on the same servers at the same time), the one shared
 * directory (the Git volume and the build logs on it), the admin key and a cluster key.
 */
export function clusterSettings(o: {
  databaseUrl: string;
  natsUrl: string;
  s3Endpoint: string;
  sharedDir: string;
  adminKey: string;
  natsPrefix?: string;
}): Record<string, string> {
  return {
    ALGOHOST_DATABASE_URL: o.databaseUrl,
    ALGOHOST_NATS_URL: o.natsUrl,
    ALGOHOST_NATS_PREFIX: o.natsPrefix ?? `t-${crypto.randomBytes(4).toString('hex')}`,
    ALGOHOST_BLOB_STORE: 's3',
    ALGOHOST_S3_ENDPOINT: o.s3Endpoint,
    ALGOHOST_S3_BUCKET: `algohost-${crypto.randomBytes(4).toString('hex')}`,
    // moto (the tests' S3 server) checks no credentials; these are scripts/with-services.sh's
    // random pair all the same, so no guessable pair is written anywhere.
    ALGOHOST_S3_ACCESS_KEY_ID: process.env.ALGOHOST_TEST_S3_ACCESS_KEY_ID ?? `AK${crypto.randomBytes(9).toString('hex').toUpperCase()}`,
    ALGOHOST_S3_SECRET_ACCESS_KEY: process.env.ALGOHOST_TEST_S3_SECRET_ACCESS_KEY ?? crypto.randomBytes(30).toString('base64'),
    // API nodes' user; startCluster and startTestCluster give each worker a worker user instead.
    ...natsCredentials('api'),
    ALGOHOST_REPOSITORY_DIR: path.join(o.sharedDir, 'repositories'),
    ALGOHOST_BUILD_LOG_DIR: path.join(o.sharedDir, 'build-logs'),
    ALGOHOST_ADMIN_KEY: o.adminKey,
    ALGOHOST_CLUSTER_KEY: crypto.randomBytes(32).toString('base64'),
    ALGOHOST_BUILD_CACHE_DIR: BUILD_CACHE_DIR,
    ALGOHOST_BUILD_CACHE_SHARED: 'true',
  };
}

/**
 * An API node (returned as the TestServer: its URL, data directory and configuration) and two
 * workers in this process. Restarting restarts the API node; the workers stay up, as they
 * would while one API node of a deployment is replaced.
 */
async function startTestCluster(extraEnv: Record<string, string>): Promise<TestServer> {
  const { ALGOHOST_TEST_NATS_URL: nats, ALGOHOST_TEST_S3_ENDPOINT: s3 } = process.env;
  if (!POSTGRES_URL || !nats || !s3) {
    throw new Error('ALGOHOST_TEST_TOPOLOGY=cluster needs PostgreSQL, NATS and S3: run under scripts/with-services.sh');
  }
  const dataDir = await makeTempDir('algohost-test-api-');
  const pgdb = await createPostgresDatabase();
  const adminKey = generateApiKey();
  const shared: Record<string, string> = {
    ...clusterSettings({ databaseUrl: pgdb.url, natsUrl: nats, s3Endpoint: s3, sharedDir: dataDir, adminKey }),
    ALGOHOST_PORT: '0',
    ALGOHOST_LOG_LEVEL: process.env.ALGOHOST_TEST_LOG_LEVEL ?? 'silent',
    ...extraEnv,
  };
  const workerDirs = await Promise.all([makeTempDir('algohost-test-worker-'), makeTempDir('algohost-test-worker-')]);
  const startNode = async (env: Record<string, string>) => {
    const config = loadConfig(env, []);
    return { config, server: await startServer(config, { level: config.logLevel }) };
  };
  // The API node first: it makes the schema, the bucket and the admin account.
  const apiEnv = { ...shared, ALGOHOST_ROLE: 'api', ALGOHOST_DATA_DIR: dataDir };
  const removeAll = async () => {
    await pgdb.drop();
    for (const dir of [dataDir, ...workerDirs]) await fs.promises.rm(dir, { recursive: true, force: true });
  };
  let api: Awaited<ReturnType<typeof startNode>>;
  try {
    api = await startNode(apiEnv);
  } catch (err) {
    await removeAll();
    throw err;
  }
  // A node that failed to start must not leave the others running: the test process would
  // never exit.
  const started = await Promise.allSettled(
    workerDirs.map((dir) => startNode({ ...shared, ...workerCredentials(), ALGOHOST_ROLE: 'worker', ALGOHOST_DATA_DIR: dir })),
  );
  const failed = started.find((r) => r.status === 'rejected');
  const workers = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  if (failed) {
    await Promise.all([api, ...workers].map((n) => n.server.close()));
    await removeAll();
    throw failed.reason;
  }
  const cleanup = async () => {
    await Promise.all(workers.map((w) => w.server.close()));
    await removeAll();
  };
  const serverOf = (): TestServer => {
    const self: TestServer = {
      url: api.server.url,
      runnerNodeUrls: workers.map((w) => w.server.url),
      runnerServers: workers.map((w) => w.server),
      adminKey,
      dataDir,
      config: api.config,
      server: api.server,
      stop: async () => {
        testServers.delete(self.url);
        await api.server.close();
        await cleanup();
      },
      restart: async (more = {}) => {
        testServers.delete(self.url);
        await api.server.close();
        api = await startNode({ ...apiEnv, ...more });
        return serverOf();
      },
    };
    testServers.set(self.url, self);
    return self;
  };
  return serverOf();
}
