/**
 * What the cluster benchmarks share: the services from scripts/with-services.sh, a fresh
 * database on its PostgreSQL, and the settings of one cluster's nodes.
 */
import crypto from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
import { natsCredentials, natsPassword } from '../packages/server/test/support/nats.js';

/** The services' addresses; exits (2) when the bench does not run under scripts/with-services.sh. */
export function clusterServices(): { postgres: string; nats: string; s3: string } {
  const { ALGOHOST_TEST_POSTGRES_URL: postgres, ALGOHOST_TEST_NATS_URL: nats, ALGOHOST_TEST_S3_ENDPOINT: s3 } = process.env;
  if (!postgres || !nats || !s3) {
    console.error('run it under scripts/with-services.sh with ALGOHOST_TEST_SERVICES=postgres,nats,s3');
    process.exit(2);
  }
  return { postgres, nats, s3 };
}

/** A fresh database on the test server for the cluster's nodes. */
async function database(postgres: string): Promise<string> {
  const name = `bench_${crypto.randomBytes(4).toString('hex')}`;
  const c = new pg.Client({ connectionString: postgres });
  await c.connect();
  await c.query(`CREATE DATABASE ${name}`);
  await c.end();
  const url = new URL(postgres);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * The settings every node of one new cluster shares (its own database and bucket; `shared` is
 * the Git volume); add ALGOHOST_ROLE per node.
 */
export async function clusterEnv(shared: string, extra: Record<string, string> = {}): Promise<Record<string, string>> {
  const s = clusterServices();
  return {
    ALGOHOST_DATABASE_URL: await database(s.postgres),
    ALGOHOST_NATS_URL: s.nats,
    ALGOHOST_BLOB_STORE: 's3',
    ALGOHOST_S3_ENDPOINT: s.s3,
    ALGOHOST_S3_BUCKET: `bench-${crypto.randomBytes(4).toString('hex')}`,
    // moto checks no credentials; scripts/with-services.sh's random pair all the same.
    ALGOHOST_S3_ACCESS_KEY_ID: process.env.ALGOHOST_TEST_S3_ACCESS_KEY_ID ?? '',
    ALGOHOST_S3_SECRET_ACCESS_KEY: process.env.ALGOHOST_TEST_S3_SECRET_ACCESS_KEY ?? '',
    // The API node's NATS user; a worker takes natsWorker()'s instead.
    ...natsCredentials('api'),
    ALGOHOST_REPOSITORY_DIR: path.join(shared, 'repositories'),
    ALGOHOST_BUILD_LOG_DIR: path.join(shared, 'build-logs'),
    ALGOHOST_CLUSTER_KEY: crypto.randomBytes(32).toString('base64'),
    ...extra,
  };
}

/** A worker's NATS user (scripts/with-services.sh's worker-1), to spread over a worker's settings. */
export function natsWorker(): Record<string, string> {
  return natsCredentials('worker-1');
}

/** The NATS URL with the `test` user's credentials in it, for a process of the bench's own. */
export function natsUrlAsTest(url: string): string {
  const u = new URL(url);
  u.username = 'test';
  u.password = natsPassword('test');
  return u.toString();
}
