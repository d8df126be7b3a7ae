/**
 * At-least-once across a crash: algohost runs as its own process (`node --import tsx
 * packages/server/src/main/start.ts`, as a user starts it), is killed with SIGKILL while a Kafka
 * subscriber flow is mid-delivery, and started again on the same data directory: the flow
 * resumes from its committed offsets and every record reaches the publisher's topic at least
 * once (the ones delivered but not yet committed when it died come twice). Nothing is stopped
 * cleanly, unlike events-kafka.test.ts's restart. On SQLite and on PostgreSQL: what the restarted
 * process resumes from is in the database.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createUser, type TestUser } from '../support/fixtures.js';
import { client, type Client } from '../support/http.js';
import { type DatabaseKind, DATABASES, startTestServer, type TestServer } from '../support/server.js';
import { createTopics, eventually, KAFKA, needs, produce, publishedPython, readTopic } from '../support/events.js';
import { serverEntryArgs } from '../support/server-entry.js';

const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const TICK = `import time

def apply(input):
    time.sleep(0.3)
    return input
`;
for (const database of DATABASES) {
  describe(`Event Flows: algohost killed mid-delivery (${database})`, { skip: needs('kafka') }, () => killSuite(database));
}

function killSuite(database: DatabaseKind): void {
  const run = `${database}-${Date.now().toString(36)}`;
  const IN = `kill-in-${run}`;
  const OUT = `kill-out-${run}`;
  let setup: TestServer;
  let alice: TestUser;
  let dataDir: string;
  let child: ChildProcess | undefined;
  let api: Client;
  let flow: string;

  /** algohost as a process of its own on the set-up server's data directory. */
  async function startProcess(): Promise<void> {
    const port = await freePort();
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('ALGOHOST_') && !k.startsWith('NODE_TEST')) env[k] = v;
    child = spawn(process.execPath, serverEntryArgs(), {
      cwd: REPO_ROOT,
      env: {
        ...env,
        ALGOHOST_PORT: String(port),
        ALGOHOST_DATA_DIR: dataDir,
        ALGOHOST_ADMIN_KEY: setup.adminKey,
        ...(setup.config.databaseUrl ? { ALGOHOST_DATABASE_URL: setup.config.databaseUrl } : {}),
        ALGOHOST_LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    api = client(`http://127.0.0.1:${port}`);
    await eventually('algohost answering', async () =>
      (await api.get('/healthz').catch(() => undefined))?.status === 200 ? true : undefined,
    );
  }

  before(async () => {
    // Set up in process (users, a published algorithm, the flows), then leave it to the processes.
    setup = await startTestServer({ database });
    dataDir = setup.dataDir;
    const setupApi = client(setup.url);
    alice = await createUser(setupApi, setup.adminKey, 'alice');
    await publishedPython(setup.url, setupApi, alice, 'Tick', TICK);
    await createTopics(KAFKA!, [IN, OUT], 1);
    const cluster = await setupApi.post('/v1/admin/event-clusters', {
      key: setup.adminKey,
      body: { name: 'main', bootstrap_servers: [KAFKA!] },
    });
    assert.equal(cluster.status, 200, cluster.text);
    for (const [topic, role] of [
      [OUT, 'publisher'],
      [IN, 'subscriber'],
    ] as const) {
      const a = await setupApi.post('/v1/admin/event-clusters/main/assignments', {
        key: setup.adminKey,
        body: { algorithm: 'alice/Tick', topic, role },
      });
      assert.equal(a.status, 200, a.text);
      const on = await setupApi.patch(`/v1/algorithms/alice/Tick/event-flows/${a.body.id}`, { key: alice.key, body: { enabled: true } });
      assert.equal(on.status, 200, on.text);
      if (role === 'subscriber') flow = a.body.id;
    }
    // Wait until the flow has fixed its starting offsets (a new flow starts at the end), then hand over.
    await eventually('the flow running', async () => {
      const res = await setupApi.get(`/v1/algorithms/alice/Tick/event-flows/${flow}`, { key: alice.key });
      return res.body.status?.state === 'running' ? true : undefined;
    });
    await setup.server.close();
  });
  after(async () => {
    await killChild();
    // The set-up server is closed already; this drops its database and data directory.
    await setup.stop();
  });

  /** SIGKILL, and wait until the process is gone (with its database connections). */
  async function killChild(): Promise<void> {
    const killed = child;
    if (!killed || killed.exitCode !== null || killed.signalCode !== null) return;
    const exited = new Promise((resolve) => killed.once('exit', resolve));
    killed.kill('SIGKILL');
    await exited;
  }

  test('SIGKILL mid-delivery, started again: every record delivered at least once, the consumer resumes', async () => {
    await startProcess();
    const running = () =>
      eventually('the flow running', async () => {
        const res = await api.get(`/v1/algorithms/alice/Tick/event-flows/${flow}`, { key: alice.key });
        return res.body.status?.state === 'running' ? true : undefined;
      });
    await running();
    const sent = Array.from({ length: 10 }, (_, i) => `k${i}`);
    await produce(
      KAFKA!,
      IN,
      sent.map((v) => ({ value: JSON.stringify(v) })),
    );
    // Some delivered, the rest waiting: Tick takes 0.3 s a record.
    const delivered = await eventually('a first delivery', async () => {
      const res = await api.get(`/v1/algorithms/alice/Tick/event-deliveries?flow=${flow}`, { key: alice.key });
      return res.body.results.length >= 2 ? (res.body.results.length as number) : undefined;
    });
    await killChild();
    assert.ok(delivered < sent.length, `the kill came mid-way (${delivered} of ${sent.length} delivered)`);

    await startProcess();
    await running();
    const seen = new Set<string>();
    await eventually(
      'every record delivered',
      async () => {
        const out = await readTopic(KAFKA!, OUT, Math.max(sent.length, seen.size));
        // A text result is published as the text itself.
        for (const r of out) seen.add(r.value);
        return sent.every((v) => seen.has(v)) ? true : undefined;
      },
      120_000,
    );
    assert.deepEqual([...seen].sort(), [...sent].sort());
  });
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}
