/**
 * Runs one of the core loop's test files unchanged against a cluster (support/server.ts starts
 * an API node and two workers for it), or skips it, saying why, when PostgreSQL, NATS or S3 is
 * not running (scripts/with-services.sh starts all three for `npm test`).
 */
import { test } from 'node:test';

export async function againstCluster(file: string, load: () => Promise<unknown>): Promise<void> {
  const missing = (['ALGOHOST_TEST_POSTGRES_URL', 'ALGOHOST_TEST_NATS_URL', 'ALGOHOST_TEST_S3_ENDPOINT'] as const).filter(
    (name) => !process.env[name],
  );
  if (missing.length > 0) {
    test(`${file} against a cluster`, { skip: `needs ${missing.join(', ')} (scripts/with-services.sh)` }, () => {});
    return;
  }
  process.env.ALGOHOST_TEST_TOPOLOGY = 'cluster';
  await load();
}
