/**
 * Cluster messages are not believed on their own (issue: cluster mode believed every NATS
 * message). One API node and a worker, each a separate `npm start`, sharing PostgreSQL, NATS
 * and S3:
 *
 *   ALGOHOST_TEST_SERVICES=postgres,nats,s3 bash scripts/with-services.sh \
 *     bash scripts/run-tests.sh packages/server/test/cluster/security-cluster-messages.test.ts
 *
 * Mallory reaches NATS with a client of her own (as from a runner that reached it, or with a
 * leaked credential) and the bucket with its credentials, and plays each attack that worked
 * before: a work message of her making runs alice's private algorithm; a first reply replaces
 * alice's result; a message carrying a call key as alice makes the worker adopt it; an async job
 * runs as the caller its message names; a fake presence entry receives alice's calls; a genuine
 * message sent again runs again; an artifact index replaced in the bucket runs her code as
 * alice's. Each is sent both as the old wire format had it and with a signed head of her making.
 * After each, alice's next call returns alice's own result.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { type Msg, type NatsConnection } from '@nats-io/transport-node';
import { jetstream } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import pg from 'pg';
import { generateApiKey } from '../../src/domain/accounts/secrets.js';
import { encodeFrame } from '../../src/cluster/frames.js';
import { artifactToken, natsNames } from '../../src/cluster/nats-cluster.js';
import { MessageSigner } from '../../src/cluster/signed-messages.js';
import { S3BlobStore } from '../../src/storage/blobs/s3-blob-store.js';
import { createAndBuild } from '../support/algorithms.js';
import { PYTHON_API_REQUEST } from '../support/api-socket-python.js';
import { type Cluster, CLUSTER_SERVICES, clusterSkip, type Node, startCluster, until } from '../support/cluster.js';
import { connectAsTest } from '../support/nats.js';
import { createUser, type TestUser } from '../support/fixtures.js';
import type { Client } from '../support/http.js';
import { makeTempDir } from '../support/server.js';

const NATS_PREFIX = `cm-${crypto.randomBytes(3).toString('hex')}`;
const NAMES = natsNames(NATS_PREFIX);
const { nats: NATS_URL } = CLUSTER_SERVICES;

const SECRET = `import time

def apply(input):
    if isinstance(input, dict) and "sleep" in input:
        time.sleep(input["sleep"])
    return {"owner": "alice", "got": input}
`;

/** Mallory's pipeline algorithm: reads alice's private file with the key it is given (its own call key unless the input names one). */
const THIEF = String.raw`
import os, time
${PYTHON_API_REQUEST}

def request(key, path):
    return api_request("GET", path, key=key)

def apply(input):
    if isinstance(input, dict) and "sleep" in input:
        time.sleep(input["sleep"])
        return {"slept": input["sleep"]}
    key = input.get("key") if isinstance(input, dict) else None
    return request(key or os.environ.get("ALGORITHMIA_API_KEY", ""), "/v1/data/alice/private/secret.txt")
`;

const ALICE_DATA = 'alice-private-data-0d6f';

/** A head shaped like a signed one (version, issued-at, nonce, MAC) but made without the cluster key. */
function fakeSigned(payload: Uint8Array): Buffer {
  const head = Buffer.alloc(1 + 8 + 16 + 32);
  head[0] = 1;
  head.writeDoubleBE(Date.now(), 1);
  crypto.randomFillSync(head, 9, 48);
  return Buffer.concat([head, payload]);
}

/** What a message of mallory's making looks like: as the old wire format had it, and with a forged head. */
const forgeries = (payload: Uint8Array) => [Buffer.from(payload), fakeSigned(payload)];

describe('cluster messages are not believed on their own', { skip: clusterSkip() }, () => {
  let cluster: Cluster;
  let apiNode: Node;
  let api: Client;
  let alice: TestUser;
  let mallory: TestUser;
  /** Account ids, as mallory learned them from the messages she read. */
  const ids = { alice: '', mallory: '' };
  let mnc: NatsConnection;
  let workerId: string;
  let secret: { id: string; sha: string; artifact: string };
  let thief: { id: string; sha: string; artifact: string };
  const trees: string[] = [];

  async function pythonTree(name: string, source: string): Promise<string> {
    const tree = await makeTempDir('algohost-cm-tree-');
    trees.push(tree);
    fs.mkdirSync(path.join(tree, 'src'));
    fs.writeFileSync(path.join(tree, 'requirements.txt'), '');
    fs.writeFileSync(path.join(tree, 'src', `${name}.py`), source);
    return tree;
  }

  async function build(user: TestUser, name: string, source: string, settings: Record<string, unknown>) {
    const sha = await createAndBuild(apiNode.url, api, user, user.name, name, await pythonTree(name, source), {
      environment: 'python311',
      settings,
    });
    const id = (await api.get(`/v1/algorithms/${user.name}/${name}`, { key: user.key })).body.id as string;
    return { id, sha, artifact: `${id}/python311/${sha}` };
  }

  /** Alice's call of her private algorithm, as alice: her own result. */
  async function aliceCalls(input: Record<string, unknown> = { n: 1 }): Promise<void> {
    const res = await api.post(`/v1/algo/alice/Secret/${secret.sha}`, { key: alice.key, body: input });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.result, { owner: 'alice', got: input }, res.text);
  }

  /** Everything heard on a fresh subject of mallory's while `act` runs and `ms` after. */
  async function heardOn(subject: string, act: () => Promise<void> | void, ms = 3000): Promise<Msg[]> {
    const heard: Msg[] = [];
    const sub = mnc.subscribe(subject, { callback: (err, m) => void (err || heard.push(m)) });
    await mnc.flush();
    try {
      await act();
      await new Promise((r) => setTimeout(r, ms));
    } finally {
      sub.unsubscribe();
    }
    return heard;
  }

  /** A sync call message as mallory makes it: the old target fields and the new ones, so either release would read it. */
  function runMessage(
    target: { id: string; artifact: string; name: string; owner: 'alice' | 'mallory'; pipeline: boolean },
    input: unknown,
    extra: Record<string, unknown> = {},
    request: Record<string, unknown> = {},
  ): Uint8Array {
    return encodeFrame(
      {
        target: {
          algorithmId: target.id,
          artifact: target.artifact,
          algorithmName: target.name,
          environment: 'python311',
          network: 'none',
          pipeline: target.pipeline,
          owner: { id: ids[target.owner], name: target.owner },
        },
        timeoutMs: 30_000,
        request: { content_type: 'json', ...request },
        hasJson: true,
        ...extra,
      },
      Buffer.from(JSON.stringify(input)),
    );
  }

  const workerLog = () => cluster.workers.map((w) => w.log.join('\n')).join('\n');

  before(async () => {
    cluster = await startCluster({ natsPrefix: NATS_PREFIX, workers: [{ name: 'worker' }] });
    ({ apiNode, api } = cluster);
    alice = await createUser(api, cluster.adminKey, 'alice');
    mallory = await createUser(api, cluster.adminKey, 'mallory');
    assert.equal((await api.post('/v1/data/alice', { key: alice.key, body: { name: 'private' } })).status, 200);
    assert.equal((await api.put('/v1/data/alice/private/secret.txt', { key: alice.key, raw: ALICE_DATA })).status, 200);
    const db = new pg.Client({ connectionString: cluster.env.ALGOHOST_DATABASE_URL });
    await db.connect();
    try {
      for (const name of ['alice', 'mallory'] as const) {
        ids[name] = (await db.query<{ id: string }>('select id from accounts where name = $1', [name])).rows[0]!.id;
      }
    } finally {
      await db.end();
    }
    secret = await build(alice, 'Secret', SECRET, { algorithm_callability: 'private' });
    thief = await build(mallory, 'Thief', THIEF, { pipeline_enabled: true });
    // Mallory holds a NATS credential with every permission (a leaked one): the messages' own
    // signatures must stop her where the server's permissions no longer do.
    mnc = await connectAsTest(NATS_URL!);
    const kv = await new Kvm(mnc).open(NAMES.workersBucket);
    workerId = await until('the worker in the KV bucket', async () => {
      for await (const k of await kv.keys()) return k;
      return undefined;
    });
    await aliceCalls();
  });

  after(async () => {
    await mnc?.close();
    await cluster?.close();
    for (const t of trees) fs.rmSync(t, { recursive: true, force: true });
  });

  test("a work message of mallory's making does not run alice's private algorithm (no answer, nothing run)", async () => {
    const inbox = `_INBOX.mallory.${crypto.randomUUID()}`;
    const heard = await heardOn(inbox, () => {
      for (const data of forgeries(runMessage({ ...secret, name: 'Secret', owner: 'alice', pipeline: false }, { stolen: true }))) {
        mnc.publish(NAMES.subjects.runOn(workerId), data, { reply: inbox });
      }
    });
    assert.deepEqual(
      heard.map((m) => m.data.length),
      [],
      'the worker neither answered nor sent a heartbeat',
    );
    assert.match(workerLog(), /a run message on \S+ was dropped/);
    await aliceCalls();
  });

  test("a first reply published by mallory on alice's reply subject is dropped: alice gets her own result", async () => {
    let raced = 0;
    const racer = mnc.subscribe(`${NATS_PREFIX}.run.node.>`, {
      callback: (err, m) => {
        if (err || !m.reply) return;
        raced++;
        const forged = encodeFrame({
          ok: { response: { result: { owner: 'mallory' } }, stdout: '', cold: false, queueMs: 0, startMs: 0, runMs: 0 },
        });
        for (const data of forgeries(forged)) mnc.publish(m.reply, data);
      },
    });
    await mnc.flush();
    try {
      await aliceCalls({ sleep: 1 });
      await aliceCalls({ n: 2 });
    } finally {
      racer.unsubscribe();
    }
    assert.equal(raced, 2, "mallory saw both calls' reply subjects and answered first");
  });

  test('a message carrying a call key as alice is not run and mints nothing: the key reads none of her data afterwards', async () => {
    const chosen = generateApiKey();
    const inbox = `_INBOX.mallory.${crypto.randomUUID()}`;
    const callKey = {
      accountId: ids.alice,
      capabilities: ['call_algorithms', 'read_data', 'write_data'],
      call: { algorithmId: thief.id, algorithmOwnerId: ids.mallory, session: crypto.randomUUID() },
    };
    const heard = await heardOn(inbox, () => {
      const message = runMessage({ ...thief, name: 'Thief', owner: 'mallory', pipeline: true }, {}, { callKey }, { api_key: chosen });
      for (const data of forgeries(message)) mnc.publish(NAMES.subjects.runOn(workerId), data, { reply: inbox });
    });
    assert.deepEqual(
      heard.map((m) => m.data.length),
      [],
    );
    // Mallory's own call of Thief, on the same worker, with the key she chose: not alice's.
    const res = await api.post(`/v1/algo/mallory/Thief/${thief.sha}`, { key: mallory.key, body: { key: chosen } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.result.status, 401, res.text);
    assert.doesNotMatch(res.text, new RegExp(ALICE_DATA));
    // With her own call key, as herself: alice's private file is not hers either.
    const own = await api.post(`/v1/algo/mallory/Thief/${thief.sha}`, { key: mallory.key, body: {} });
    assert.notEqual(own.body.result.status, 200, own.text);
    assert.doesNotMatch(own.text, new RegExp(ALICE_DATA));
    await aliceCalls();
  });

  test("an async job naming another caller than its request's account is refused: mallory's request gets her own result", async () => {
    const submitted = await api.post(`/v1/algo/mallory/Thief/${thief.sha}?output=void`, { key: mallory.key, body: { sleep: 4 } });
    assert.equal(submitted.status, 200, submitted.text);
    const requestId = submitted.body.request_id as string;
    const job = encodeFrame(
      {
        requestId,
        caller: { accountId: ids.alice, via: 'standard_key', capabilities: ['call_algorithms', 'read_data', 'write_data'], keyId: null },
        input: { path: `alice/Secret/${secret.sha}`, contentType: 'application/json' },
      },
      Buffer.from('{"stolen":true}'),
    );
    const js = jetstream(mnc);
    for (const data of forgeries(job)) await js.publish(NAMES.subjects.async, data, { msgID: crypto.randomUUID() });
    // The same job signed under the cluster key (as a node's would be): the request's account still decides.
    const node = new MessageSigner(Buffer.from(cluster.env.ALGOHOST_CLUSTER_KEY!, 'base64'));
    await js.publish(NAMES.subjects.async, node.sign('work', NAMES.subjects.async, '', job).data, { msgID: crypto.randomUUID() });
    const done = await until('the async request completed', async () => {
      const r = await api.get(`/v1/algo/requests/${requestId}`, { key: mallory.key });
      return r.body.status === 'completed' ? r : undefined;
    });
    assert.deepEqual(done.body.result, { slept: 4 }, done.text);
    assert.match(workerLog(), /an async job naming another caller than its request was dropped/);
    assert.match(workerLog(), /a work message on \S+ was dropped/);
    await aliceCalls();
  });

  test("a fake presence entry receives none of alice's calls", async () => {
    const kv = await new Kvm(mnc).open(NAMES.workersBucket);
    const fakes = ['fake-plain', 'fake-signed'];
    const entry = (id: string) =>
      Buffer.from(
        JSON.stringify({
          id,
          host: 'mallory',
          pid: 1,
          startedAt: new Date().toISOString(),
          gpu: false,
          load: -1000,
          warmRunners: 0,
          callsInFlight: 0,
          warm: [artifactToken(secret.artifact)],
          flows: {},
          seq: 1e9,
        }),
      );
    await kv.put('fake-plain', entry('fake-plain'));
    await kv.put('fake-signed', fakeSigned(entry('fake-signed')));
    const heard = await heardOn(
      `${NATS_PREFIX}.run.node.>`,
      async () => {
        await new Promise((r) => setTimeout(r, 1000)); // the API node's watch has seen them
        for (let i = 0; i < 4; i++) await aliceCalls({ n: i });
      },
      500,
    );
    assert.deepEqual(
      heard.map((m) => m.subject).filter((s) => fakes.some((f) => s.endsWith(`.${f}`))),
      [],
      'no call went to a fake worker',
    );
    assert.ok(heard.length >= 4, "alice's calls went to the real worker");
    for (const k of fakes) await kv.delete(k);
  });

  test('a genuine call message sent again (same reply subject, or another) is not run again', async () => {
    const captured: { subject: string; reply: string; data: Uint8Array }[] = [];
    const tap = mnc.subscribe(`${NATS_PREFIX}.run.node.>`, {
      callback: (err, m) => void (err || !m.reply || captured.push({ subject: m.subject, reply: m.reply, data: m.data })),
    });
    await mnc.flush();
    try {
      await aliceCalls({ replayed: 1 });
    } finally {
      tap.unsubscribe();
    }
    assert.equal(captured.length, 1);
    const [genuine] = captured;
    const answers = await heardOn(genuine!.reply, () => {
      mnc.publish(genuine!.subject, genuine!.data, { reply: genuine!.reply });
    });
    assert.equal(answers.length, 0, 'no second answer: the worker did not run it again');
    const inbox = `_INBOX.mallory.${crypto.randomUUID()}`;
    const toMallory = await heardOn(inbox, () => {
      mnc.publish(genuine!.subject, genuine!.data, { reply: inbox });
    });
    assert.equal(toMallory.length, 0, "alice's result is not sent to mallory's subject");
    await aliceCalls();
  });

  test("an artifact index replaced in the bucket is refused by its recorded digest, with the reason; restored, alice's call returns her result", async () => {
    const blobs = new S3BlobStore({
      endpoint: cluster.env.ALGOHOST_S3_ENDPOINT!,
      region: 'us-east-1',
      bucket: cluster.env.ALGOHOST_S3_BUCKET!,
      accessKeyId: cluster.env.ALGOHOST_S3_ACCESS_KEY_ID!,
      secretAccessKey: cluster.env.ALGOHOST_S3_SECRET_ACCESS_KEY!,
      forcePathStyle: true,
    });
    const read = async (key: string) => {
      const chunks: Buffer[] = [];
      for await (const c of (await blobs.get(key))!.body) chunks.push(c as Buffer);
      return Buffer.concat(chunks);
    };
    try {
      const original = await read(`artifacts/index/${secret.artifact}`);
      // Mallory's own artifact, repacked as alice's (her code under alice's path and name), stored
      // under its hash, and alice's index pointed at it: every check of the tar holds.
      const thiefIndex = JSON.parse((await read(`artifacts/index/${thief.artifact}`)).toString('utf8')) as { tree: string };
      const work = await makeTempDir('algohost-cm-forge-');
      trees.push(work);
      fs.writeFileSync(path.join(work, 'thief.tar'), await read(`artifacts/sha256/${thiefIndex.tree}`));
      const tar = (...args: string[]) => execFileSync('/usr/bin/tar', args, { cwd: work });
      tar('-x', '-f', 'thief.tar');
      const forged = path.join(work, 'artifacts', secret.artifact);
      fs.mkdirSync(path.dirname(forged), { recursive: true });
      fs.renameSync(path.join(work, 'artifacts', thief.artifact), forged);
      fs.writeFileSync(path.join(forged, 'tree', 'src', 'Secret.py'), 'def apply(input):\n    return {"owner": "mallory", "got": input}\n');
      const manifest = JSON.parse(fs.readFileSync(path.join(forged, 'manifest.json'), 'utf8')) as Record<string, unknown>;
      fs.writeFileSync(path.join(forged, 'manifest.json'), JSON.stringify({ ...manifest, algorithmId: secret.id, commit: secret.sha }));
      tar('-c', '-f', 'forged.tar', '--', `artifacts/${secret.artifact}`);
      const forgedTar = fs.readFileSync(path.join(work, 'forged.tar'));
      const tree = crypto.createHash('sha256').update(forgedTar).digest('hex');
      await blobs.put(`artifacts/sha256/${tree}`, Readable.from([forgedTar]));
      await blobs.put(`artifacts/index/${secret.artifact}`, Readable.from([Buffer.from(JSON.stringify({ ...thiefIndex, tree }))]));
      // A worker that does not have alice's artifact fetches it on her next call.
      const [old] = cluster.workers;
      await cluster.startWorker('fresh');
      await cluster.stop(old!);
      const refused = await api.post(`/v1/algo/alice/Secret/${secret.sha}`, { key: alice.key, body: { n: 3 } });
      assert.doesNotMatch(refused.text, /mallory/, refused.text);
      assert.match(refused.text, /does not match the digest recorded in the database/, refused.text);
      await blobs.put(`artifacts/index/${secret.artifact}`, Readable.from([original]));
      await aliceCalls({ n: 4 });
    } finally {
      await blobs.close();
    }
  });
});
