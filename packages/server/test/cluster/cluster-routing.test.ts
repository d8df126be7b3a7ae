/**
 * Cluster mode, how work finds a worker: one API node and two workers (one declaring a GPU),
 * each a separate `npm start` process with its own data directory (in its own network namespace
 * when this machine allows), sharing PostgreSQL, NATS, S3 and an SQS server (ElasticMQ):
 *
 *   ALGOHOST_TEST_SERVICES=postgres,nats,s3,sqs bash scripts/with-services.sh \
 *     bash scripts/run-tests.sh packages/server/test/cluster/cluster-routing.test.ts
 *
 * GPU environments build and run only on the GPU worker; cold starts go to the least loaded
 * worker; a worker stopped without a goodbye (SIGSTOP) is drained (no sync calls once its
 * presence entry expired, its async call redelivered); a worker killed in the middle of an event
 * delivery leaves the message to the other worker, which delivers it once; with no GPU worker a
 * GPU call is refused with 503 and a GPU build waits queued, saying why, until one joins.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CreateQueueCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { createAndBuild } from '../support/algorithms.js';
import {
  type Cluster,
  CLUSTER_SERVICES,
  clusterSkip,
  type Node,
  presenceOf,
  startCluster,
  until,
  warmRunnersOf,
} from '../support/cluster.js';
import { connectAsTest } from '../support/nats.js';
import { publishedPython, sqsMessagesLeft } from '../support/events.js';
import { createUser, type TestUser } from '../support/fixtures.js';
import { announcedBuildId, clone, commitAndPush, gitUrl, removeClone, replaceWorkingFiles } from '../support/git.js';
import type { Client } from '../support/http.js';
import { makeTempDir } from '../support/server.js';
import { natsNames } from '../../src/cluster/nats-cluster.js';

/** This file's NATS names (ALGOHOST_NATS_PREFIX), apart from the clusters of other test files. */
const NATS_PREFIX = `cr-${crypto.randomBytes(3).toString('hex')}`;
const { nats: NATS_URL, sqs: SQS } = CLUSTER_SERVICES;

const SLEEPY = 'import time\n\ndef apply(input):\n    time.sleep(input["sleep"])\n    return {"slept": input["sleep"]}\n';
/** Slow on a message's first receive only: the delivery a worker is killed in the middle of. */
const RELAY = `import json, os, time

def apply(input):
    event = json.loads(os.environ.get("ALGOHOST_EVENT", "{}"))
    if event.get("receive_count") == "1":
        time.sleep(600)
    return {"got": input, "receive_count": event.get("receive_count")}
`;

interface Presence {
  id: string;
  pid: number;
  gpu: boolean;
  load: number;
  warm: string[];
}

describe('cluster mode: routing work to workers', { skip: clusterSkip('sqs') }, () => {
  let cluster: Cluster;
  let apiNode: Node;
  let api: Client;
  let alice: TestUser;
  let adminKey: string;
  let sqs: SQSClient;
  /** The SQS endpoint as the nodes reach it (forwarded into their namespaces). */
  let sqsForNodes: string;
  let gpuSha: string;
  const cold: { name: string; sha: string }[] = [];
  const trees: string[] = [];

  async function pythonTree(name: string, source: string): Promise<string> {
    const tree = await makeTempDir('algohost-routing-tree-');
    trees.push(tree);
    fs.mkdirSync(path.join(tree, 'src'));
    fs.writeFileSync(path.join(tree, 'requirements.txt'), '');
    fs.writeFileSync(path.join(tree, 'src', `${name}.py`), source);
    return tree;
  }

  const worker = (name: string, gpu: boolean) => cluster.startWorker(name, { ALGOHOST_WORKER_GPU: String(gpu) });

  /** The warm runners a worker reports about itself (its port serves /metrics and /healthz only). */
  const warmOf = (n: Node) => warmRunnersOf(n, adminKey);

  /** Every presence entry in the KV bucket, by the worker's process id. */
  async function presence(): Promise<Map<number, Presence>> {
    const nc = await connectAsTest(NATS_URL!);
    try {
      const kv = await new Kvm(nc).open(natsNames(NATS_PREFIX).workersBucket);
      const out = new Map<number, Presence>();
      for await (const k of await kv.keys()) {
        const e = await kv.get(k);
        if (e?.operation === 'PUT') {
          const v = presenceOf<Presence>(cluster, NATS_PREFIX, e);
          out.set(v.pid, v);
        }
      }
      return out;
    } finally {
      await nc.close();
    }
  }

  async function consumerInfo(name: string) {
    const nc = await connectAsTest(NATS_URL!);
    try {
      return await (await jetstreamManager(nc)).consumers.info(natsNames(NATS_PREFIX).stream, name);
    } finally {
      await nc.close();
    }
  }

  const artifactManifest = async (n: Node, name: string, environment: string, sha: string) => {
    const algorithm = await api.get(`/v1/algorithms/alice/${name}`, { key: alice.key });
    return path.join(n.dataDir, 'builds', 'artifacts', algorithm.body.id, environment, sha, 'manifest.json');
  };

  before(async () => {
    cluster = await startCluster({
      natsPrefix: NATS_PREFIX,
      env: {
        ALGOHOST_WORK_ACK_WAIT: '3',
        // Small runners: every cold start below stays warm beside the others (no eviction).
        ALGOHOST_RUNNER_MEMORY: '256',
        ALGOHOST_WORKER_GPU: 'false',
      },
      reach: async ({ forwardUrl }) => {
        sqsForNodes = await forwardUrl(SQS!);
        return { ALGOHOST_SQS_ENDPOINT_ALLOW: new URL(sqsForNodes).host };
      },
      workers: [{ name: 'worker1' }, { name: 'gpu-worker', env: { ALGOHOST_WORKER_GPU: 'true' } }],
    });
    ({ apiNode, api, adminKey } = cluster);
    alice = await createUser(api, adminKey, 'alice');
    sqs = new SQSClient({ endpoint: SQS, region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
  });

  after(async () => {
    sqs?.destroy();
    await cluster?.close();
    for (const t of trees) fs.rmSync(t, { recursive: true, force: true });
  });

  test('a GPU environment builds and runs only on the worker that declares a GPU', async () => {
    const [cpu, gpu] = cluster.workers as [Node, Node];
    const entries = await until('both workers in the KV bucket', async () => {
      const p = await presence();
      return p.has(cpu.child.pid!) && p.has(gpu.child.pid!) ? p : undefined;
    });
    assert.equal(entries.get(gpu.child.pid!)!.gpu, true);
    assert.equal(entries.get(cpu.child.pid!)!.gpu, false);

    const tree = await pythonTree('Gpu', 'def apply(input):\n    return {"gpu": input}\n');
    gpuSha = await createAndBuild(apiNode.url, api, alice, 'alice', 'Gpu', tree, { environment: 'python37-gpu' });
    // Built on the GPU worker: the artifact is on its disk, never on the other's.
    assert.ok(fs.existsSync(await artifactManifest(gpu, 'Gpu', 'python37-gpu', gpuSha)), 'built on the GPU worker');
    for (let i = 0; i < 4; i++) {
      const call = await api.post(`/v1/algo/alice/Gpu/${gpuSha}`, { key: alice.key, body: i });
      assert.equal(call.status, 200, call.text);
      assert.deepEqual(call.body.result, { gpu: i });
    }
    const queued = await api.post(`/v1/algo/alice/Gpu/${gpuSha}?output=void`, { key: alice.key, body: 'later' });
    assert.equal(queued.status, 200, queued.text);
    const done = await until('the async GPU call', async () => {
      const s = await api.get(`/v1/algo/requests/${queued.body.request_id}`, { key: alice.key });
      return s.body.status === 'completed' ? s.body : undefined;
    });
    assert.deepEqual(done.result, { gpu: 'later' });
    // Not one of those calls started a runner on the CPU worker or fetched the artifact there.
    assert.equal(await warmOf(cpu), 0);
    assert.equal(fs.existsSync(await artifactManifest(cpu, 'Gpu', 'python37-gpu', gpuSha)), false);
    assert.equal(await warmOf(gpu), 1);
  });

  test('cold starts go to the least loaded worker: several cold algorithms spread over both', async () => {
    for (let i = 0; i < 4; i++) {
      const name = `Cold${i}`;
      const tree = await pythonTree(name, `def apply(input):\n    return "${name}"\n`);
      cold.push({ name, sha: await createAndBuild(apiNode.url, api, alice, 'alice', name, tree, { environment: 'python311' }) });
    }
    const before = await Promise.all(cluster.workers.map(warmOf));
    for (const { name, sha } of cold) {
      const call = await api.post(`/v1/algo/alice/${name}/${sha}`, { key: alice.key, body: 1 });
      assert.equal(call.status, 200, call.text);
      assert.equal(call.body.result, name);
      assert.equal(call.body.metadata.cold_start, true);
    }
    const afterCalls = await Promise.all(cluster.workers.map(warmOf));
    const started = afterCalls.map((n, i) => n - before[i]!);
    assert.equal(
      started.reduce((a, b) => a + b, 0),
      cold.length,
    );
    // The GPU worker began with one runner (Gpu): the first cold starts went to the other.
    for (const n of started) assert.ok(n >= 1, `cold starts per worker: ${started.join(', ')}`);
    // Warm now: the next call of each reaches the worker that has it warm.
    for (const { name, sha } of cold) {
      const call = await api.post(`/v1/algo/alice/${name}/${sha}`, { key: alice.key, body: 2 });
      assert.equal(call.body.metadata.cold_start, false, call.text);
    }
    assert.deepEqual(await Promise.all(cluster.workers.map(warmOf)), afterCalls);
  });

  test('a worker stopped without a goodbye (SIGSTOP) is drained: its async call is redelivered, it gets no sync calls', async () => {
    const tree = await pythonTree('Sleepy', SLEEPY);
    const sleepySha = await createAndBuild(apiNode.url, api, alice, 'alice', 'Sleepy', tree, { environment: 'python311' });
    const before = await Promise.all(cluster.workers.map(warmOf));
    const res = await api.post(`/v1/algo/alice/Sleepy/${sleepySha}?output=void`, { key: alice.key, body: { sleep: 8 } });
    assert.equal(res.status, 200, res.text);
    const victim = await until('the worker running the async call', async () => {
      const now = await Promise.all(cluster.workers.map(warmOf));
      const i = now.findIndex((w, k) => w > before[k]!);
      return i < 0 ? undefined : cluster.workers[i]!;
    });
    const survivor = cluster.workers.find((w) => w !== victim)!;
    victim.child.kill('SIGSTOP');
    try {
      // JetStream hands the call to the other worker after the ack wait; it completes once.
      const done = await until(
        'the async call completed on the other worker',
        async () => {
          const s = await api.get(`/v1/algo/requests/${res.body.request_id}`, { key: alice.key });
          return s.body.status === 'completed' ? s.body : undefined;
        },
        1200,
      );
      assert.deepEqual(done.result, { slept: 8 }, JSON.stringify(done));
      // Its presence entry expires (it no longer renews it) while its NATS connection lives on.
      await until(
        'the silent worker’s presence entry to expire',
        async () => ((await presence()).has(victim.child.pid!) ? undefined : true),
        400,
      );
      // Builds that were warm on the silent worker only run on the other one now, each call answered.
      const calls = [...cold, { name: 'Sleepy', sha: sleepySha }];
      for (const { name, sha } of calls) {
        const call = await api.post(`/v1/algo/alice/${name}/${sha}`, {
          key: alice.key,
          body: name === 'Sleepy' ? { sleep: 0 } : 3,
        });
        assert.equal(call.status, 200, call.text);
        assert.equal(call.body.error, undefined, call.text);
      }
      assert.ok((await warmOf(survivor)) >= calls.length, 'the survivor has every build warm');
    } finally {
      victim.child.kill('SIGCONT');
    }
    // Back: it announces itself again, and its late result changed nothing.
    await until('the worker back in the KV bucket', async () => ((await presence()).has(victim.child.pid!) ? true : undefined));
    await until('the async work acknowledged', async () => {
      const info = await consumerInfo('async-calls');
      return info.num_pending === 0 && info.num_ack_pending === 0 ? true : undefined;
    });
    const again = await api.get(`/v1/algo/requests/${res.body.request_id}`, { key: alice.key });
    assert.deepEqual(again.body.result, { slept: 8 });
  });

  test('a worker killed in the middle of an event delivery: the other worker delivers the message, once', async () => {
    await publishedPython(apiNode.url, api, alice, 'Relay', RELAY);
    const queueName = `relay-${crypto.randomBytes(4).toString('hex')}`;
    const url = (await sqs.send(new CreateQueueCommand({ QueueName: queueName }))).QueueUrl!;
    // The nodes reach the queue through the forwarded port.
    const nodeUrl = `${sqsForNodes.replace(/\/$/, '')}${new URL(url).pathname}`;
    const created = await api.post('/v1/algorithms/alice/Relay/event-flows', {
      key: alice.key,
      body: { source_type: 'sqs', source_uri: nodeUrl, credentials: { access_key_id: 'test', secret_access_key: 'test' }, timeout: 20 },
    });
    assert.equal(created.status, 200, created.text);
    const flowPath = `/v1/algorithms/alice/Relay/event-flows/${created.body.id}`;
    const enabled = await api.patch(flowPath, { key: alice.key, body: { enabled: true } });
    assert.equal(enabled.status, 200, enabled.text);
    // The workers run the consumers; the API node shows their status from the presence entries.
    await until('the flow running on the workers', async () => {
      const flow = await api.get(flowPath, { key: alice.key });
      return flow.body.status?.state === 'running' ? true : undefined;
    });
    const before = await Promise.all(cluster.workers.map(warmOf));
    const sent = await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: '{"order": 7}' }));
    const victim = await until('the worker delivering the message', async () => {
      const now = await Promise.all(cluster.workers.map(warmOf));
      const i = now.findIndex((w, k) => w > before[k]!);
      return i < 0 ? undefined : cluster.workers[i]!;
    });
    await cluster.stop(victim, 'SIGKILL');
    // Nothing was recorded for the cut-off delivery; the message reappears after its
    // visibility timeout and the other worker delivers it.
    const records = await until(
      'the delivery record',
      async () => {
        const r = await api.get('/v1/algorithms/alice/Relay/event-deliveries', { key: alice.key });
        return r.body.results.length ? r.body.results : undefined;
      },
      1500,
    );
    assert.equal(records.length, 1, JSON.stringify(records));
    assert.equal(records[0].outcome, 'succeeded');
    assert.equal(records[0].source, sent.MessageId);
    assert.equal(records[0].attempts, 2, 'delivered on its second receive');
    await until('the message deleted', async () => ((await sqsMessagesLeft(sqs, url)) === 0 ? true : undefined));
    const off = await api.patch(flowPath, { key: alice.key, body: { enabled: false } });
    assert.equal(off.status, 200, off.text);
    const later = await api.get('/v1/algorithms/alice/Relay/event-deliveries', { key: alice.key });
    assert.equal(later.body.results.length, 1, 'delivered once');
  });

  test('with no GPU worker, a GPU call is refused with 503 and a GPU build waits queued, saying why, until one joins', async () => {
    // Only CPU workers left: a GPU worker (if any is still there) leaves cleanly.
    for (const w of [...cluster.workers]) {
      const entry = (await presence()).get(w.child.pid!);
      if (entry?.gpu) {
        await cluster.stop(w);
      }
    }
    if (!cluster.workers.length) await worker('worker3', false);
    const call = await api.post(`/v1/algo/alice/Gpu/${gpuSha}`, { key: alice.key, body: 'none' });
    assert.equal(call.status, 503, call.text);
    assert.match(call.body.error.message, /python37-gpu needs a GPU and no live worker of this cluster declares a GPU/);

    const { dir } = await clone(gitUrl(apiNode.url, alice.name, alice.key, 'alice', 'Gpu'));
    let buildId: string;
    try {
      replaceWorkingFiles(dir, await pythonTree('Gpu', 'def apply(input):\n    return "second"\n'));
      const push = await commitAndPush(dir, 'second');
      buildId = announcedBuildId(push.stderr)!;
      assert.ok(buildId, push.stderr);
      assert.match(push.stderr, /needs a GPU and no live worker of this cluster declares a GPU/);
    } finally {
      await removeClone(dir);
    }
    const queued = await api.get(`/v1/algorithms/alice/Gpu/builds/${buildId}`, { key: alice.key });
    assert.equal(queued.body.status, 'queued');
    assert.equal((await consumerInfo('gpu-builds')).num_pending, 1, 'it waits in the GPU work queue');

    await worker('gpu-worker2', true);
    const build = await until(
      'the build on the new GPU worker',
      async () => {
        const b = await api.get(`/v1/algorithms/alice/Gpu/builds/${buildId}`, { key: alice.key });
        return b.body.status === 'succeeded' || b.body.status === 'failed' ? b.body : undefined;
      },
      1200,
    );
    assert.equal(build.status, 'succeeded', JSON.stringify(build));
    // Its log begins with why it waited.
    const logs = await api.get(`/v1/algorithms/alice/Gpu/builds/${buildId}/logs`, { key: alice.key });
    assert.match(logs.body.logs, /^-- python37-gpu needs a GPU and .* the build waits in the queue until one joins --\n/);
    const second = await api.post(`/v1/algo/alice/Gpu/${build.commit_sha}`, { key: alice.key, body: 1 });
    assert.equal(second.body.result, 'second', second.text);
  });
});
