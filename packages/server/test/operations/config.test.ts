import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { ConfigError, ConfigSchema, describeSettings, loadConfig, SETTINGS } from '../../src/config/config.js';
import { refuseOldNode } from '../../src/main/node-version.js';
import { serverEntryArgs } from '../support/server-entry.js';

const START = fileURLToPath(new URL('../../src/main/start.ts', import.meta.url));

test('every setting of the schema has one env var, flag and description, all distinct, each in --help', () => {
  assert.deepEqual(SETTINGS.map((s) => s.key).sort(), Object.keys(ConfigSchema.properties).sort());
  const help = describeSettings();
  for (const s of SETTINGS) {
    assert.match(s.env, /^ALGOHOST_[A-Z0-9_]+$/);
    assert.match(s.flag, /^--[a-z0-9-]+$/);
    assert.ok(s.describe.length > 10, s.key);
    assert.ok(help.includes(s.env) && help.includes(s.flag), `--help lists ${s.env} and ${s.flag}`);
  }
  assert.equal(new Set(SETTINGS.map((s) => s.env)).size, SETTINGS.length);
  assert.equal(new Set(SETTINGS.map((s) => s.flag)).size, SETTINGS.length);
});

test('defaults fill every setting that is not optional', () => {
  const config = loadConfig({}, []);
  for (const s of SETTINGS) if (s.kind !== 'optional') assert.notEqual(config[s.key], undefined, s.key);
  assert.equal(config.port, 8080);
  assert.equal(config.host, '127.0.0.1');
  assert.equal(config.publicUrl, 'http://127.0.0.1:8080');
  assert.equal(config.runnersPerAlgorithm, 4);
  assert.equal(config.buildsPerAccount, 1);
  assert.equal(config.runnersPerAccount, 8);
  assert.equal(config.s3ForcePathStyle, false);
  assert.equal(config.runnerMemoryPerAccountMiB, Math.floor(config.runnerMemoryBudgetMiB / 2));
});

test('values are converted to their types; derived defaults follow the settings they come from', () => {
  const config = loadConfig(
    {
      ALGOHOST_BUILD_CACHE_SHARED: '1',
      ALGOHOST_RUNNER_CPUS: '0.5',
      ALGOHOST_MAX_RUNNERS: '40',
      ALGOHOST_S3_ENDPOINT: 'http://minio:9000',
    },
    ['--port=9002', '--host', '0.0.0.0'],
  );
  assert.equal(config.buildCacheShared, true);
  assert.equal(config.runnerCpus, 0.5);
  assert.equal(config.runnersPerAccount, 10);
  assert.equal(config.s3ForcePathStyle, true);
  assert.equal(config.publicUrl, 'http://127.0.0.1:9002');
});

test('flags win over environment variables; bad values are refused with the setting named', () => {
  assert.equal(loadConfig({ ALGOHOST_PORT: '9000' }, ['--port', '9001']).port, 9001);
  assert.throws(() => loadConfig({ ALGOHOST_PORT: '70000' }, []), /ALGOHOST_PORT.*65535/);
  assert.throws(() => loadConfig({ ALGOHOST_PORT: '80.5' }, []), /ALGOHOST_PORT \(--port\) must be a non-negative integer; got "80.5"/);
  assert.throws(() => loadConfig({ ALGOHOST_RUNNER_CPUS: '-1' }, []), /ALGOHOST_RUNNER_CPUS.*non-negative number/);
  assert.throws(() => loadConfig({ ALGOHOST_BUILD_CACHE_SHARED: 'maybe' }, []), /true or false/);
  assert.throws(() => loadConfig({ ALGOHOST_LOG_LEVEL: 'loud' }, []), /ALGOHOST_LOG_LEVEL \(--log-level\) must be one of fatal, error/);
  // A secret too short or malformed is refused without repeating it (the message goes to logs).
  for (const [setting, value] of [
    ['ALGOHOST_METRICS_TOKEN', 'hunter2-secret'],
    ['ALGOHOST_NATS_PASSWORD', 'hunter2'],
  ] as const) {
    assert.throws(
      () => loadConfig({ [setting]: value }, []),
      (err: unknown) => err instanceof ConfigError && err.message.includes(setting) && !err.message.includes(value),
    );
  }
  assert.throws(() => loadConfig({}, ['--nope', 'x']), /unknown option --nope/);
  assert.throws(() => loadConfig({}, ['--port']), /option --port needs a value/);
  assert.throws(() => loadConfig({}, ['stray']), ConfigError);
});

test('counts of what the node runs at once are at least 1: 0 is refused, not taken as 1', () => {
  for (const [setting, flag] of [
    ['ALGOHOST_BUILD_CONCURRENCY', '--build-concurrency'],
    ['ALGOHOST_RUNNERS_PER_ALGORITHM', '--runners-per-algorithm'],
    ['ALGOHOST_MAX_RUNNERS', '--max-runners'],
    ['ALGOHOST_MAX_CALLS_PER_ACCOUNT', '--max-calls-per-account'],
  ] as const) {
    assert.throws(
      () => loadConfig({ [setting]: '0' }, []),
      (err: unknown) => err instanceof ConfigError && err.message === `${setting} (${flag}) must be at least 1; got 0`,
    );
    assert.throws(() => loadConfig({}, [flag, '0']), ConfigError);
    const schema = SETTINGS.find((s) => s.env === setting)?.schema as { minimum?: number } | undefined;
    assert.equal(schema?.minimum, 1, `${setting} declares minimum 1`);
  }
  assert.equal(loadConfig({ ALGOHOST_MAX_RUNNERS: '1', ALGOHOST_RUNNERS_PER_ACCOUNT: '1' }, []).maxRunners, 1);
});

test('a setting refused at start ends the process with exit code 2 and one line on stderr', () => {
  const run = spawnSync(process.execPath, serverEntryArgs(), {
    env: { ...process.env, ALGOHOST_MAX_RUNNERS: '0' },
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(run.status, 2, run.stderr);
  assert.equal(run.stderr, 'algohost: ALGOHOST_MAX_RUNNERS (--max-runners) must be at least 1; got 0\n');
});

test('settings that contradict each other are refused before anything starts, each in one line', () => {
  const refused = (env: Record<string, string>, pattern: RegExp) =>
    assert.throws(
      () => loadConfig(env, []),
      (err: unknown) => err instanceof ConfigError && pattern.test(err.message) && !err.message.includes('\n'),
    );
  refused({ ALGOHOST_BLOB_STORE: 's3' }, /ALGOHOST_S3_BUCKET/);
  refused({ ALGOHOST_S3_ACCESS_KEY_ID: 'k' }, /ALGOHOST_S3_SECRET_ACCESS_KEY go together/);
  refused({ ALGOHOST_S3_ENDPOINT: 'minio:9000' }, /ALGOHOST_S3_ENDPOINT must be an http\(s\) URL/);
  refused(
    { ALGOHOST_RUNNER_MEMORY_BUDGET: '1024', ALGOHOST_RUNNER_MEMORY_PER_ACCOUNT: '2048' },
    /PER_ACCOUNT \(2048 MiB\) must not exceed/,
  );
  refused(
    { ALGOHOST_MAX_RUNNERS: '4', ALGOHOST_RUNNERS_PER_ACCOUNT: '5' },
    /ALGOHOST_RUNNERS_PER_ACCOUNT \(5\) must not exceed ALGOHOST_MAX_RUNNERS \(4\)/,
  );
  refused({ ALGOHOST_BUILD_CONCURRENCY: '2', ALGOHOST_BUILDS_PER_ACCOUNT: '3' }, /ALGOHOST_BUILDS_PER_ACCOUNT \(3\) must not exceed/);
  refused({ ALGOHOST_PUBLIC_URL: 'not a url' }, /ALGOHOST_PUBLIC_URL must be an absolute URL/);
  refused({ ALGOHOST_DATABASE_URL: 'mysql://x' }, /must start with postgres:\/\//);
  // Cluster mode signs every message under the cluster key: each node making its own would
  // believe no other's. A short key is refused without repeating it (it is a secret).
  const cluster = {
    ALGOHOST_NATS_URL: 'nats://nats:4222',
    ALGOHOST_DATABASE_URL: 'postgres://db/algohost',
    ALGOHOST_NATS_USER: 'api',
    ALGOHOST_NATS_PASSWORD: 'p'.repeat(24),
  };
  refused(cluster, /ALGOHOST_NATS_URL \(cluster mode\) needs ALGOHOST_CLUSTER_KEY, the same on every node/);
  refused({ ...cluster, ALGOHOST_CLUSTER_KEY: 'c2hvcnQta2V5' }, /^ALGOHOST_CLUSTER_KEY must be 32 bytes in base64 .*; got 12 characters$/);
  assert.doesNotThrow(() => loadConfig({ ...cluster, ALGOHOST_CLUSTER_KEY: 'A'.repeat(43) + '=' }, []));
  // Seconds: "30" (days meant) would empty the audit log within the hour.
  refused(
    { ALGOHOST_AUDIT_RETENTION: '30' },
    /ALGOHOST_AUDIT_RETENTION \(30\) is in seconds and must be 0 \(entries kept for good\) or at least 86400/,
  );
  assert.equal(loadConfig({ ALGOHOST_AUDIT_RETENTION: '86400' }, []).auditRetentionSeconds, 86400);
  assert.equal(loadConfig({}, []).auditRetentionSeconds, 180 * 86400, 'kept 180 days by default');
  assert.equal(loadConfig({ ALGOHOST_AUDIT_RETENTION: '0' }, []).auditRetentionSeconds, 0, '0 keeps entries for good');
  // 0 means "no limit" and contradicts nothing.
  assert.equal(
    loadConfig({ ALGOHOST_RUNNER_MEMORY_BUDGET: '0', ALGOHOST_RUNNER_MEMORY_PER_ACCOUNT: '4096' }, []).runnerMemoryPerAccountMiB,
    4096,
  );
});

test('a Node.js older than 24 is refused, naming the one found and how to get 24', () => {
  assert.throws(
    () => refuseOldNode('20.20.2', '/usr/bin/node'),
    (err: unknown) =>
      err instanceof ConfigError &&
      err.message.startsWith('algohost needs Node.js 24 or newer; /usr/bin/node is Node.js 20.20.2. `npm run setup` installs'),
  );
  for (const version of ['24.0.0', '24.22.3', '25.1.0']) refuseOldNode(version, '/opt/node/bin/node');
});

// Debian 12's own node is 20; a machine whose system node is 24 has no older one to try.
const systemNode = '/usr/bin/node';
const systemMajor = fs.existsSync(systemNode)
  ? Number(execFileSync(systemNode, ['-p', 'process.versions.node'], { encoding: 'utf8' }).split('.')[0])
  : undefined;
test(
  'started on an older Node.js, the node exits with code 2 and that one line',
  { skip: systemMajor !== undefined && systemMajor < 24 ? false : `${systemNode} is not older than Node.js 24` },
  () => {
    const run = spawnSync(systemNode, ['--import', 'tsx', START], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(run.status, 2, run.stderr);
    assert.match(run.stderr, /^algohost: algohost needs Node\.js 24 or newer; \/usr\/bin\/node is Node\.js 20\.[\d.]+\. [^\n]+\n$/);
  },
);
