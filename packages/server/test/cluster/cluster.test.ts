/**
 * Cluster mode, end to end: one API node and two workers, each a separate `npm start` process
 * with its own data directory, sharing only PostgreSQL, NATS (JetStream), an S3-compatible store
 * and the Git volume (a directory), all from scripts/with-services.sh:
 *
 *   ALGOHOST_TEST_SERVICES=postgres,nats,s3 bash scripts/with-services.sh \
 *     bash scripts/run-tests.sh packages/server/test/cluster/cluster.test.ts
 *
 * As root with iproute2, each of these nodes runs in a network namespace of its own with its own
 * address (support/netns.ts), reaching the services through ports the test forwards on a bridge.
 *
 * Create, push (build on a worker, its output followed through the API node), sync and async
 * calls, a 10 MiB input and a 15 MB output through NATS, publish, a pipeline; then the failures:
 * a nats-server or the API node restarted, a worker killed in the middle of an async call, a sync
 * call or a build, a worker that joins later, no worker at all.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { createAndBuild } from '../support/algorithms.js';
import { createUser, type TestUser } from '../support/fixtures.js';
import { announcedBuildId, clone, commitAndPush, git, gitUrl, removeClone, replaceWorkingFiles } from '../support/git.js';
import { client, request, type Client } from '../support/http.js';
import { makeTempDir } from '../support/server.js';
import {
  type Cluster,
  CLUSTER_SERVICES,
  clusterSkip,
  type Node,
  startCluster,
  startNode,
  presenceOf,
  stopNode,
  until,
  warmRunnersOf,
} from '../support/cluster.js';
import { connectAsTest, startOwnNats, workerCredentials } from '../support/nats.js';
import { natsNames } from '../../src/cluster/nats-cluster.js';

/** This file's NATS names (ALGOHOST_NATS_PREFIX), apart from the clusters of other test files. */
const NATS_PREFIX = `ct-${crypto.randomBytes(3).toString('hex')}`;

const { nats: NATS_URL } = CLUSTER_SERVICES;
const REPO = fileURLToPath(new URL('../../../../', import.meta.url));

describe('cluster mode: one API node and two workers', { skip: clusterSkip() }, () => {
  let cluster: Cluster;
  let apiNode: Node;
  let api: Client;
  let alice: TestUser;
  let adminKey: string;
  let sha: string;
  const trees: string[] = [];
  let sleepySha: string;

  async function pythonTree(name: string, source: string): Promise<string> {
    const tree = await makeTempDir('algohost-cluster-tree-');
    trees.push(tree);
    fs.mkdirSync(path.join(tree, 'src'));
    fs.writeFileSync(path.join(tree, 'requirements.txt'), '');
    fs.writeFileSync(path.join(tree, 'src', `${name}.py`), source);
    return tree;
  }

  before(async () => {
    cluster = await startCluster({
      natsPrefix: NATS_PREFIX,
      env: { ALGOHOST_WORK_ACK_WAIT: '3' },
      workers: [{ name: 'worker1' }, { name: 'worker2' }],
    });
    ({ apiNode, api, adminKey } = cluster);
    alice = await createUser(api, adminKey, 'alice');
    const tree = await pythonTree(
      'Echo',
      'import sys\n\ndef apply(input):\n    if isinstance(input, dict) and "big" in input:\n        return "x" * input["big"]\n    if isinstance(input, str) and len(input) > 1000:\n        return len(input)\n    return {"echo": input}\n',
    );
    sha = await createAndBuild(apiNode.url, api, alice, 'alice', 'Echo', tree, { environment: 'python311' });
  });

  after(async () => {
    await cluster?.close();
    for (const t of trees) fs.rmSync(t, { recursive: true, force: true });
  });

  test('both workers announce themselves in the JetStream KV bucket', async () => {
    if (cluster.lan) {
      // Each node listens on its own address in its own namespace, none on the host's loopback.
      const addresses = new Set([apiNode, ...cluster.workers].map((n) => new URL(n.url).hostname));
      assert.equal(addresses.size, 3);
      for (const a of addresses) assert.match(a, /^10\./);
    }
    const nc = await connectAsTest(NATS_URL!);
    try {
      const kv = await new Kvm(nc).open(natsNames(NATS_PREFIX).workersBucket);
      const ids = await until('two workers in the KV bucket', async () => {
        // A set: keys() may give a key twice when its worker renews the entry during the listing.
        const keys = new Set<string>();
        for await (const k of await kv.keys()) keys.add(k);
        return keys.size >= 2 ? [...keys] : undefined;
      });
      assert.equal(ids.length, 2);
      // Signed under the cluster key for its key in the bucket (cluster/signed-messages.ts).
      const entry = presenceOf<{ id: string; warmRunners: number }>(cluster, NATS_PREFIX, (await kv.get(ids[0]!))!);
      assert.equal(entry.id, ids[0]);
      assert.equal(typeof entry.warmRunners, 'number');
    } finally {
      await nc.close();
    }
  });

  test("a worker's port serves /healthz and /metrics only: the API and Git are the API nodes'", async () => {
    const w = cluster.workers[0]!;
    assert.equal((await request(w.url, 'GET', '/healthz')).status, 200);
    assert.equal((await fetch(`${w.url}/metrics`, { headers: { authorization: `Simple ${adminKey}` } })).status, 200);
    // Even the admin's key and a well-formed call or fetch are refused, naming where to go.
    for (const [method, p] of [
      ['GET', '/v1/admin/status'],
      ['POST', `/v1/algo/alice/Echo/${sha}`],
      ['GET', '/git/alice/Echo.git/info/refs?service=git-upload-pack'],
      ['GET', '/v1/openapi.json'],
    ] as const) {
      const res = await request(w.url, method, p, { key: adminKey, ...(method === 'POST' ? { body: { x: 1 } } : {}) });
      assert.equal(res.status, 404, `${method} ${p}: ${res.text}`);
      assert.match(res.body.error.message, /cluster worker .* send .* to an API node/);
    }
    // Its sandboxes still reach the whole API through their socket: the pipelines test below.
  });

  test('a node refuses to start against a nats-server that cannot carry a 15 MB output (exit 2, what to set)', async () => {
    const dir = await makeTempDir('algohost-small-nats-');
    trees.push(dir);
    // Debian's nats-server with its default max_payload (1 MB); -p -1 picks a free port.
    const nats = spawn('nats-server', ['-a', '127.0.0.1', '-p', '-1', '-js', '-sd', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        nats.stderr!.on('data', (d: Buffer) => {
          out += d.toString();
          const m = /Listening for client connections on (127\.0\.0\.1:\d+)/.exec(out);
          if (m) resolve(`nats://${m[1]}`);
        });
        nats.once('exit', () => reject(new Error(`nats-server exited: ${out}`)));
      });
      await assert.rejects(startNode('small', { ...cluster.env, ALGOHOST_ROLE: 'worker', ALGOHOST_NATS_URL: url }), (err: Error) => {
        assert.match(err.message, /exited \(2\)/);
        assert.match(err.message, /set max_payload to at least 16MB/);
        return true;
      });
    } finally {
      nats.kill();
    }
  });

  test('the build ran on a worker: its log is readable through the API node', async () => {
    const builds = await api.get('/v1/algorithms/alice/Echo/builds', { key: alice.key });
    const build = builds.body.results[0];
    assert.equal(build.status, 'succeeded');
    const logs = await api.get(`/v1/algorithms/alice/Echo/builds/${build.build_id}/logs`, { key: alice.key });
    assert.equal(logs.status, 200, logs.text);
    assert.match(logs.body.logs, /Storing the artifact in the blob store/);
    assert.match(logs.body.logs, /Build succeeded/);
  });

  test('sync calls through the API node run on the workers, warm after the first', async () => {
    const first = await api.post(`/v1/algo/alice/Echo/${sha}`, { key: alice.key, body: { a: 1 } });
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(first.body.result, { echo: { a: 1 } });
    const second = await api.post(`/v1/algo/alice/Echo/${sha}`, { key: alice.key, body: 'again' });
    assert.deepEqual(second.body.result, { echo: 'again' });
    assert.equal(second.body.metadata.cold_start, false, 'the second call reaches the worker that has the build warm');
  });

  test('a 10 MiB input and a 15 MB output travel through NATS whole', async () => {
    const input = 'y'.repeat(10 * 1024 * 1024 - 10);
    const big = await request(apiNode.url, 'POST', `/v1/algo/alice/Echo/${sha}`, {
      key: alice.key,
      raw: JSON.stringify(input),
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(big.status, 200, big.text.slice(0, 500));
    assert.equal(big.body.result, input.length);
    const out = await api.post(`/v1/algo/alice/Echo/${sha}`, { key: alice.key, body: { big: 14_999_000 } });
    assert.equal(out.status, 200, out.text.slice(0, 500));
    assert.equal(out.body.result.length, 14_999_000);
  });

  test('an async call runs on a worker and its result is read through the API node', async () => {
    const res = await api.post(`/v1/algo/alice/Echo/${sha}?output=void`, { key: alice.key, body: { later: true } });
    assert.equal(res.status, 200, res.text);
    const done = await until('the async result', async () => {
      const s = await api.get(`/v1/algo/requests/${res.body.request_id}`, { key: alice.key });
      return s.body.status === 'completed' ? s.body : undefined;
    });
    assert.deepEqual(done.result, { echo: { later: true } });
  });

  test('publish, then call the version', async () => {
    const published = await api.post('/v1/algorithms/alice/Echo/versions', {
      key: alice.key,
      body: { version_info: { version_type: 'minor' }, settings: { algorithm_callability: 'private' } },
    });
    assert.equal(published.status, 200, published.text);
    const version = published.body.version_info.semantic_version as string;
    const call = await api.post(`/v1/algo/alice/Echo/${version}`, { key: alice.key, body: 'v' });
    assert.equal(call.status, 200, call.text);
    assert.deepEqual(call.body.result, { echo: 'v' });
    assert.equal(call.body.metadata.algorithm_version, version);
  });

  test('pipelines on a worker: a sync call through the API node calls another algorithm and uses hosted data', async () => {
    const caller = await createAndBuild(apiNode.url, api, alice, 'alice', 'Caller', path.join(REPO, 'test/fixtures/pipeline/python'), {
      environment: 'python311',
      settings: { pipeline_enabled: true },
    });
    const piped = await api.post(`/v1/algo/alice/Caller/${caller}`, {
      key: alice.key,
      body: { algo: `alice/Echo/${sha}`, input: 'pipes' },
    });
    assert.equal(piped.status, 200, piped.text);
    assert.deepEqual(piped.body.result, { ok: true, result: { echo: 'pipes' } });
    const data = await api.post(`/v1/algo/alice/Caller/${caller}`, {
      key: alice.key,
      body: { data: 'data://.my/PipeCluster', text: 'from a worker' },
    });
    assert.equal(data.status, 200, data.text);
    assert.equal(data.body.result.text, 'from a worker', data.text);
    // Written on a worker, read through the API node: the data lives in PostgreSQL and S3.
    const blob = await fetch(`${apiNode.url}/v1/data/alice/PipeCluster/blob.bin`, { headers: { authorization: `Simple ${alice.key}` } });
    assert.equal(blob.status, 200);
    assert.deepEqual([...new Uint8Array(await blob.arrayBuffer())], [0, 255, 1, 128]);
  });

  test('nats-server restarted: queued work survives (file storage) and the nodes reconnect by themselves', async () => {
    // A nats-server of this test's own, so that restarting it leaves the other tests' alone;
    // the same database, bucket and Git volume: Echo is built and its artifact in the store.
    const dir = await makeTempDir('algohost-own-nats-');
    trees.push(dir);
    // The same users and permissions as the tests' nats-server (the nodes refuse one without).
    const nats = await startOwnNats(dir);
    const own = { ...cluster.env, ALGOHOST_NATS_URL: nats.url };
    const ownApi = await startNode('api2', { ...own, ALGOHOST_ROLE: 'api' });
    let ownWorker: Node | undefined;
    try {
      const ownClient = client(ownApi.url);
      // No worker yet: the async call waits in JetStream's file storage across the restart.
      const res = await ownClient.post(`/v1/algo/alice/Echo/${sha}?output=void`, { key: alice.key, body: 'survived' });
      assert.equal(res.status, 200, res.text);
      await nats.stop();
      // While NATS is down: a new async call is refused (503, nothing left running), a sync
      // call is a 503 too, saying to call again, instead of hanging.
      const refused = await ownClient.post(`/v1/algo/alice/Echo/${sha}?output=void`, { key: alice.key, body: 'refused' });
      assert.equal(refused.status, 503, refused.text);
      assert.match(refused.body.error.message, /could not be handed to the workers/);
      const cut = await ownClient.post(`/v1/algo/alice/Echo/${sha}`, { key: alice.key, body: 'cut off' });
      assert.equal(cut.status, 503, cut.text);
      assert.match(cut.body.error.message, /message bus \(NATS\) cannot be reached.*call again/);
      await nats.start();
      ownWorker = await startNode('worker-own', { ...own, ...workerCredentials(), ALGOHOST_ROLE: 'worker' });
      const done = await until('the queued call to complete after the restart', async () => {
        const r = await ownClient.get(`/v1/algo/requests/${res.body.request_id}`, { key: alice.key });
        return r.body.status === 'completed' ? r.body : undefined;
      });
      assert.deepEqual(done.result, { echo: 'survived' });
      // The API node reconnected by itself: sync calls reach the worker through it.
      const call = await until('a sync call through the reconnected API node', async () => {
        const r = await ownClient.post(`/v1/algo/alice/Echo/${sha}`, { key: alice.key, body: 'again' });
        return r.status === 200 && r.body.result ? r.body : undefined;
      });
      assert.deepEqual(call.result, { echo: 'again' });
    } finally {
      if (ownWorker) await stopNode(ownWorker);
      await stopNode(ownApi);
      await nats.stop();
    }
  });

  test('the API node restarted: no acknowledged push, publish or data write is lost', async () => {
    const made = await api.post('/v1/data/alice', { key: alice.key, body: { name: 'Kept' } });
    assert.equal(made.status, 200, made.text);
    const put = await request(apiNode.url, 'PUT', '/v1/data/alice/Kept/note.txt', { key: alice.key, raw: 'kept across a restart' });
    assert.equal(put.status, 200, put.text);
    const versionsBefore = (await api.get('/v1/algorithms/alice/Echo/versions', { key: alice.key })).body.results.length;
    apiNode = await cluster.restartApi();
    api = cluster.api;
    const note = await request(apiNode.url, 'GET', '/v1/data/alice/Kept/note.txt', { key: alice.key });
    assert.equal(note.text, 'kept across a restart');
    const versions = await api.get('/v1/algorithms/alice/Echo/versions', { key: alice.key });
    assert.equal(versions.body.results.length, versionsBefore);
    const { dir, result } = await clone(gitUrl(apiNode.url, alice.name, alice.key, 'alice', 'Echo'));
    try {
      assert.equal(result.code, 0, result.stderr);
      assert.equal((await git(['rev-parse', 'HEAD'], dir)).stdout.trim(), sha, 'the pushed commit is there');
    } finally {
      await removeClone(dir);
    }
    const call = await api.post(`/v1/algo/alice/Echo/${sha}`, { key: alice.key, body: 'after' });
    assert.deepEqual(call.body.result, { echo: 'after' });
  });

  test('a worker killed in the middle of an async call: the call completes once, on the other worker', async () => {
    const tree = await pythonTree(
      'Sleepy',
      'import time\n\ndef apply(input):\n    time.sleep(input["sleep"])\n    return {"slept": input["sleep"]}\n',
    );
    sleepySha = await createAndBuild(apiNode.url, api, alice, 'alice', 'Sleepy', tree, { environment: 'python311' });
    /** The warm runners a worker reports about itself (its port serves /metrics and /healthz only). */
    const warmOf = (n: Node) => warmRunnersOf(n, adminKey);
    const before = await Promise.all(cluster.workers.map(warmOf));
    const res = await api.post(`/v1/algo/alice/Sleepy/${sleepySha}?output=void`, { key: alice.key, body: { sleep: 6 } });
    assert.equal(res.status, 200, res.text);
    // The worker that took it has one more warm runner (the Sleepy runner, busy with the call).
    const victim = await until('the worker running the call', async () => {
      const now = await Promise.all(cluster.workers.map(warmOf));
      const i = now.findIndex((w, k) => w > before[k]!);
      return i < 0 ? undefined : cluster.workers[i]!;
    });
    await cluster.stop(victim, 'SIGKILL');
    const done = await until(
      'the call to complete on the other worker',
      async () => {
        const s = await api.get(`/v1/algo/requests/${res.body.request_id}`, { key: alice.key });
        return s.body.status === 'completed' ? s.body : undefined;
      },
      1200,
    );
    assert.deepEqual(done.result, { slept: 6 }, JSON.stringify(done));
    // Acknowledged once: nothing of it is left in the work queue.
    const nc = await connectAsTest(NATS_URL!);
    try {
      const info = await (await jetstreamManager(nc)).consumers.info(natsNames(NATS_PREFIX).stream, 'async-calls');
      assert.equal(info.num_pending, 0);
      assert.equal(info.num_ack_pending, 0);
    } finally {
      await nc.close();
    }
  });

  test('a sync call that runs longer than the silence limit (6 s) is kept alive by its heartbeats and answered', async () => {
    const res = await api.post(`/v1/algo/alice/Sleepy/${sleepySha}`, { key: alice.key, body: { sleep: 8 } });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.result, { slept: 8 }, res.text);
  });

  test('a worker killed in the middle of a sync call: the caller gets SystemExit, not a wait for its timeout', async () => {
    const [only] = cluster.workers;
    // The worker shows the call in its presence entry (renewed every few seconds): an entry
    // written after the call was sent, so not one left from an earlier call.
    const nc = await connectAsTest(NATS_URL!);
    let pending: ReturnType<typeof api.post>;
    try {
      const kv = await new Kvm(nc).open(natsNames(NATS_PREFIX).workersBucket);
      const entryOf = async () => {
        for await (const k of await kv.keys()) {
          const e = await kv.get(k);
          const v = e?.operation === 'PUT' ? presenceOf<{ pid: number; callsInFlight: number }>(cluster, NATS_PREFIX, e) : undefined;
          if (e && v && v.pid === only!.child.pid) return { revision: e.revision, callsInFlight: v.callsInFlight };
        }
        return undefined;
      };
      const before = (await until('the worker in the KV bucket', entryOf)).revision;
      pending = api.post(`/v1/algo/alice/Sleepy/${sleepySha}`, { key: alice.key, body: { sleep: 120 } });
      await until(
        'the call in flight on the worker',
        async () => {
          const e = await entryOf();
          return e && e.revision > before && e.callsInFlight > 0 ? true : undefined;
        },
        300,
      );
    } finally {
      await nc.close();
    }
    await cluster.stop(only!, 'SIGKILL');
    const res = await pending;
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.error?.error_type, 'SystemExit', res.text);
    assert.match(res.body.error.message, /stopped answering/);
  });

  test('a worker started later fetches the artifact from the blob store on its first cold start', async () => {
    const late = await cluster.startWorker('worker3');
    // Any other worker leaves cleanly: every call now has to run on the new one.
    for (const w of cluster.workers.filter((w) => w !== late)) await cluster.stop(w);
    const algorithm = await api.get('/v1/algorithms/alice/Echo', { key: alice.key });
    const manifest = path.join(late.dataDir, 'builds', 'artifacts', algorithm.body.id, 'python311', sha, 'manifest.json');
    assert.equal(fs.existsSync(manifest), false);
    const call = await api.post(`/v1/algo/alice/Echo/${sha}`, { key: alice.key, body: 'fetched' });
    assert.equal(call.status, 200, call.text);
    assert.deepEqual(call.body.result, { echo: 'fetched' });
    assert.equal(call.body.metadata.cold_start, true);
    assert.equal(fs.existsSync(manifest), true, 'the artifact was unpacked on the new worker');
  });

  test('a worker killed in the middle of a build: the build completes on another worker, never stays running', async () => {
    await cluster.startWorker('worker4');
    // A large module takes the byte-compiling step a few seconds: long enough to be cut off.
    const tree = await pythonTree('Slow', 'def apply(input):\n    return "slow"\n');
    fs.writeFileSync(path.join(tree, 'src', 'big.py'), Array.from({ length: 300_000 }, (_, i) => `v${i} = ${i} * 2\n`).join(''));
    const created = await api.post('/v1/algorithms/alice', { key: alice.key, body: { name: 'Slow', settings: {} } });
    assert.equal(created.status, 200, created.text);
    const { dir } = await clone(gitUrl(apiNode.url, alice.name, alice.key, 'alice', 'Slow'));
    let buildId: string;
    try {
      replaceWorkingFiles(dir, tree);
      const push = await commitAndPush(dir, 'slow');
      buildId = announcedBuildId(push.stderr)!;
      assert.ok(buildId, push.stderr);
    } finally {
      await removeClone(dir);
    }
    // The worker building it has the build's work directory.
    const building = await until('a worker building it', async () => {
      for (const w of cluster.workers) {
        const work = await fs.promises.readdir(path.join(w.dataDir, 'builds', 'work')).catch(() => []);
        if (work.some((n) => n.startsWith('b-'))) return w;
      }
      return undefined;
    });
    await cluster.stop(building, 'SIGKILL');
    const build = await until(
      'the build to finish',
      async () => {
        const b = await api.get(`/v1/algorithms/alice/Slow/builds/${buildId}`, { key: alice.key });
        return b.body.status === 'succeeded' || b.body.status === 'failed' ? b.body : undefined;
      },
      1800,
    );
    const logs = await api.get(`/v1/algorithms/alice/Slow/builds/${buildId}/logs`, { key: alice.key });
    assert.equal(build.status, 'succeeded', logs.text);
    assert.match(logs.body.logs, /the worker running this build stopped; it is retried/);
    const call = await api.post(`/v1/algo/alice/Slow/${build.commit_sha}`, { key: alice.key, body: 1 });
    assert.equal(call.body.result, 'slow', call.text);
  });

  test('with no worker left, a sync call is refused at once with 503', async () => {
    while (cluster.workers.length) await cluster.stop(cluster.workers[0]!);
    const call = await api.post(`/v1/algo/alice/Echo/${sha}`, { key: alice.key, body: 'nobody' });
    assert.equal(call.status, 503, call.text);
    assert.match(call.body.error.message, /no worker is connected/);
  });
});
