/**
 * Starts a real algohost node for a test: its own temporary data directory, a free port, a
 * known admin key, and either SQLite or a fresh database on the PostgreSQL server that
 * `scripts/with-services.sh` started (ALGOHOST_TEST_POSTGRES_URL).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import pg from 'pg';
import { loadConfig, type Config } from '../../src/config/config.js';
import { startServer, type RunningServer } from '../../src/main/server.js';
import { generateApiKey } from '../../src/domain/accounts/secrets.js';

export type DatabaseKind = 'sqlite' | 'postgres';

export const POSTGRES_URL = process.env.ALGOHOST_TEST_POSTGRES_URL;
export const DATABASES: DatabaseKind[] = POSTGRES_URL ? ['sqlite', 'postgres'] : ['sqlite'];
if (!POSTGRES_URL && !process.env.ALGOHOST_TEST_QUIET) {
  console.warn('ALGOHOST_TEST_POSTGRES_URL is unset: PostgreSQL variants are skipped (npm test starts PostgreSQL).');
}

export const BUILD_CACHE_DIR =
  process.env.ALGOHOST_TEST_BUILD_CACHE ??
  (process.getuid?.() === 0 ? '/var/cache/algohost-test' : path.join(os.tmpdir(), 'algohost-test-cache'));

export interface TestServer {
  url: string;
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

export async function startTestServer(opts: { database?: DatabaseKind; env?: Record<string, string> } = {}): Promise<TestServer> {
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

async function launch(env: Record<string, string>, adminKey: string, dataDir: string, cleanup: () => Promise<void>): Promise<TestServer> {
  const config = loadConfig(env, []);
  const server = await startServer(config, { level: config.logLevel });
  const self: TestServer = {
    url: server.url,
    adminKey,
    dataDir,
    config,
    server,
    stop: async () => {
      await server.close();
      await cleanup();
    },
    restart: async (extraEnv = {}) => {
      await server.close();
      return launch({ ...env, ...extraEnv }, adminKey, dataDir, cleanup);
    },
  };
  return self;
}
