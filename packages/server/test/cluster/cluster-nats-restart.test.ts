/**
 * A nats-server restarted under a running cluster (docs/cluster.md §10): the nodes reconnect by
 * themselves, the workers announce themselves again at once, and the first call after the
 * restart answers. A call made while NATS is down, or running when it went down, gets a quick
 * 503 that says to call again, never a runner's failure (`SystemExit`) or a wait.
 *
 *   ALGOHOST_TEST_SERVICES=postgres,nats,s3 bash scripts/with-services.sh \
 *     bash scripts/run-tests.sh packages/server/test/cluster/cluster-nats-restart.test.ts
 *
 * The nats-server is this file's own (support/nats.ts startOwnNats), restarted on the same port
 * and JetStream store directory; the nodes run on the host's loopback, beside it.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test, type TestContext } from 'node:test';
import { createAndBuild } from '../support/algorithms.js';
import { createUser, type TestUser } from '../support/fixtures.js';
import { client, type Client, type Response } from '../support/http.js';
import { clusterSettings, createPostgresDatabase, makeTempDir } from '../support/server.js';
import { CLUSTER_SERVICES, clusterSkip, type Node, startNode, stopNode } from '../support/cluster.js';
import { startOwnNats, workerCredentials, type OwnNats } from '../support/nats.js';
import { generateApiKey } from '../../src/domain/accounts/secrets.js';

/** What a call made while NATS cannot be reached answers (503, the spec's error shape). */
const BUS_UNREACHABLE = /message bus \(NATS\).*call again/;

describe('cluster mode: nats-server restarted under a running cluster', { skip: clusterSkip() }, () => {
  let nats: OwnNats;
  let db: { url: string; drop: () => Promise<void> };
  let env: Record<string, string>;
  let apiNode: Node;
  let api: Client;
  let alice: TestUser;
  let sha: string;
  const workers: Node[] = [];
  const dirs: string[] = [];

  const call = (body: unknown): Promise<Response & { ms: number }> => {
    const started = performance.now();
    return api.post(`/v1/algo/alice/Echo/${sha}`, { key: alice.key, body }).then((r) => ({ ...r, ms: performance.now() - started }));
  };

  /** Stops nats-server for `downMs`, then starts it again on the same port and store. */
  async function restartNats(downMs: number): Promise<void> {
    await nats.stop();
    await new Promise((r) => setTimeout(r, downMs));
    await nats.start();
  }

  async function startWorker(name: string): Promise<void> {
    workers.push(await startNode(name, { ...env, ...workerCredentials(), ALGOHOST_ROLE: 'worker' }));
  }

  before(async () => {
    const natsDir = await makeTempDir('algohost-restart-nats-');
    const shared = await makeTempDir('algohost-restart-shared-');
    const tree = await makeTempDir('algohost-restart-tree-');
    dirs.push(natsDir, shared, tree);
    nats = await startOwnNats(natsDir);
    db = await createPostgresDatabase();
    const adminKey = generateApiKey();
    env = {
      ...clusterSettings({
        databaseUrl: db.url,
        natsUrl: nats.url,
        s3Endpoint: CLUSTER_SERVICES.s3!,
        sharedDir: shared,
        adminKey,
        natsPrefix: `nr-${crypto.randomBytes(3).toString('hex')}`,
      }),
      ALGOHOST_LOG_LEVEL: 'info',
    };
    apiNode = await startNode('api', { ...env, ALGOHOST_ROLE: 'api' });
    api = client(apiNode.url);
    await startWorker('worker1');
    alice = await createUser(api, adminKey, 'alice');
    fs.mkdirSync(path.join(tree, 'src'));
    fs.writeFileSync(path.join(tree, 'requirements.txt'), '');
    fs.writeFileSync(
      path.join(tree, 'src', 'Echo.py'),
      'import time\n\ndef apply(input):\n    if isinstance(input, dict) and "sleep" in input:\n        time.sleep(input["sleep"])\n    return {"echo": input}\n',
    );
    sha = await createAndBuild(apiNode.url, api, alice, 'alice', 'Echo', tree, { environment: 'python311' });
    const warm = await call('warm');
    assert.equal(warm.status, 200, warm.text);
    assert.deepEqual(warm.body.result, { echo: 'warm' }, warm.text);
  });

  after(async () => {
    for (const w of workers) await stopNode(w);
    if (apiNode) await stopNode(apiNode);
    await nats?.stop();
    await db?.drop();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  /** The calls right after a restart: each answers with its result, none fails. */
  async function assertCallsAnswer(label: string, t: TestContext): Promise<void> {
    const took: number[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await call(`${label} ${i}`);
      took.push(Math.round(r.ms));
      assert.equal(r.status, 200, `call ${i} after the restart: ${r.text}`);
      assert.deepEqual(r.body.result, { echo: `${label} ${i}` }, `call ${i} after the restart: ${r.text}`);
      // The first may wait for this node to reconnect (half a second between tries); none waits long.
      assert.ok(r.ms < 5000, `call ${i} after the restart took ${Math.round(r.ms)} ms`);
    }
    t.diagnostic(`the calls after the restart took ${took.join(', ')} ms`);
  }

  test('one worker: the first call at once after a restart answers, and so do the next ones', async (t) => {
    await restartNats(1000);
    await assertCallsAnswer('one worker', t);
  });

  test('a call made while NATS is down is a quick 503 saying to call again; the first after it comes back answers', async (t) => {
    const startedAt = performance.now();
    await startWorker('worker2');
    t.diagnostic(`worker2 started in ${Math.round(performance.now() - startedAt)} ms`);
    await nats.stop();
    try {
      const r = await call('while down');
      assert.equal(r.status, 503, r.text);
      assert.equal(r.body.error.code, 5001, r.text);
      assert.match(r.body.error.message, BUS_UNREACHABLE);
      assert.equal(r.body.error.error_type, undefined, `not a runner's failure: ${r.text}`);
      assert.ok(r.ms < 5000, `the refusal took ${Math.round(r.ms)} ms`);
      t.diagnostic(`the call while NATS was down was refused in ${Math.round(r.ms)} ms`);
      // NATS down for 5 s in all, as an operator's restart may take.
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, 5000 - r.ms)));
    } finally {
      await nats.start();
    }
    await assertCallsAnswer('two workers', t);
  });

  test('a call running when NATS goes down ends as that 503, not a runner failure, and quickly', async (t) => {
    const running = call({ sleep: 3 });
    // The call has reached a worker and its runner sleeps.
    await new Promise((r) => setTimeout(r, 1000));
    const stopped = performance.now();
    await nats.stop();
    let r: Response & { ms: number };
    try {
      r = await running;
    } finally {
      await nats.start();
    }
    assert.equal(r.status, 503, r.text);
    assert.equal(r.body.error.code, 5001, r.text);
    assert.match(r.body.error.message, BUS_UNREACHABLE);
    assert.ok(performance.now() - stopped < 5000, `the call ended ${Math.round(performance.now() - stopped)} ms after NATS stopped`);
    await assertCallsAnswer('after the cut', t);
  });
});
