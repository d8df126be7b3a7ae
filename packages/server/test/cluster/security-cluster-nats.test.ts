/**
 * The cluster's NATS as an attacker finds it (issue: "cluster mode believes every NATS message").
 * A nats-server of this file's own runs the configuration docs/cluster.md §3 gives, as its
 * commands write it (paths and the port changed), with a second worker user made as that section
 * says (`worker-b`); an API node and a worker (user `worker`) run on it as `npm start` processes,
 * with PostgreSQL and S3 from scripts/with-services.sh:
 *
 *   ALGOHOST_TEST_SERVICES=postgres,nats,s3 bash scripts/with-services.sh \
 *     bash scripts/run-tests.sh packages/server/test/cluster/security-cluster-nats.test.ts
 *
 * mallory holds worker-b's credentials (what a runner that reached a worker's settings would
 * have): she cannot listen to the other worker's calls, the API node's answers or the work
 * queue, cannot publish work, sync calls, into the API node's inbox or another user's presence entry; a client
 * with no credentials is refused; a node refuses a nats-server that lets anonymous clients in
 * unless ALGOHOST_NATS_ALLOW_ANONYMOUS says it is a lab. alice's calls still return her results.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { AuthorizationError, connect, type NatsConnection, PermissionViolationError } from '@nats-io/transport-node';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { generateApiKey } from '../../src/domain/accounts/secrets.js';
import { createAndBuild } from '../support/algorithms.js';
import { createUser, type TestUser } from '../support/fixtures.js';
import { client, type Client } from '../support/http.js';
import { clusterSettings, createPostgresDatabase, makeTempDir } from '../support/server.js';
import { clusterSkip, type Node, startNode, stopNode, until } from '../support/cluster.js';

const REPO = fileURLToPath(new URL('../../../../', import.meta.url));

/** The shell block of docs/cluster.md §3 that writes the passwords, the nodes' files and the configuration. */
function docsNatsSetup(): string {
  const doc = fs.readFileSync(path.join(REPO, 'docs/cluster.md'), 'utf8');
  const block = [...doc.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!).find((b) => b.includes('cat > /etc/nats/algohost.conf'));
  assert.ok(block, 'docs/cluster.md §3 writes /etc/nats/algohost.conf');
  return block;
}

/** Starts nats-server on `conf`; resolves with its URL once it listens, from its log. */
async function startNats(conf: string): Promise<{ url: string; child: ChildProcess; log: () => string }> {
  const child = spawn('nats-server', ['-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
  let out = '';
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr!.on('data', () => {
      const m = /Listening for client connections on (127\.0\.0\.1:\d+)/.exec(out);
      if (m && out.includes('Server is ready')) resolve(`nats://${m[1]}`);
    });
    child.once('exit', () => reject(new Error(`nats-server exited: ${out}`)));
  });
  return { url, child, log: () => out };
}

async function stopNats(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

/** `KEY=value` lines of a node's env file (the ones docs/cluster.md §3 writes). */
function envFile(file: string): Record<string, string> {
  return Object.fromEntries(
    fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
}

/** A NATS client that records the server's permission refusals. */
class Watched {
  readonly refusals: PermissionViolationError[] = [];
  private constructor(readonly nc: NatsConnection) {
    void (async () => {
      for await (const s of nc.status()) if (s.type === 'error' && s.error instanceof PermissionViolationError) this.refusals.push(s.error);
    })();
  }

  static async open(url: string, user: string, pass: string): Promise<Watched> {
    return new Watched(await connect({ servers: url, user, pass, reconnect: false }));
  }

  /**
   * Whether the server refused `operation` on `subject`. Its refusal comes before the flush's
   * PONG, but reaches the status stream a moment after the flush resolves: waited for a little.
   */
  async refused(operation: 'publish' | 'subscription', subject: string): Promise<boolean> {
    await this.nc.flush();
    for (let i = 0; i < 25; i++) {
      if (this.refusals.some((r) => r.operation === operation && r.subject === subject)) return true;
      await new Promise((r) => setTimeout(r, 20));
    }
    return false;
  }
}

const skip = clusterSkip() || (!hasNatsServer() && 'needs nats-server');

function hasNatsServer(): boolean {
  try {
    execFileSync('nats-server', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('cluster NATS: every client logs in, and each role is held to its subjects', { skip }, () => {
  let dir: string;
  let nats: Awaited<ReturnType<typeof startNats>>;
  let db: Awaited<ReturnType<typeof createPostgresDatabase>>;
  let env: Record<string, string>;
  let apiNode: Node;
  let worker: Node;
  /** The worker's node id (its run subject and presence key end with it). */
  let workerId: string;
  let api: Client;
  let alice: TestUser;
  let sha: string;
  let malloryPassword: string;
  const others: ChildProcess[] = [];

  before(async () => {
    dir = await makeTempDir('algohost-nats-auth-');
    // docs/cluster.md §3's commands, with this test's directories and a port nats-server picks.
    const setup = docsNatsSetup()
      .replaceAll('/etc/nats', path.join(dir, 'nats'))
      .replaceAll('/etc/algohost', path.join(dir, 'algohost'))
      .replaceAll('/var/lib/nats', path.join(dir, 'js'))
      .replace('listen: 127.0.0.1:4222', 'listen: 127.0.0.1:-1')
      .replace(/^http: .*\n/m, '');
    execFileSync('bash', ['-euo', 'pipefail', '-c', setup]);
    const conf = path.join(dir, 'nats', 'algohost.conf');
    // A second worker user, as §3 says: the worker entry copied under another name and password.
    const text = fs.readFileSync(conf, 'utf8');
    const entry = /\n {4}\{\n {6}user: worker\n[\s\S]*?\n {4}\}\n/.exec(text)![0];
    const copy = entry
      .replace('user: worker\n', 'user: worker-b\n')
      .replace('$WORKER_PASSWORD', '$WORKER_B_PASSWORD')
      .replaceAll('.worker.', '.worker-b.');
    fs.writeFileSync(conf, text.replace(entry, entry + copy));
    malloryPassword = crypto.randomBytes(24).toString('hex');
    fs.appendFileSync(path.join(dir, 'nats', 'algohost-passwords.conf'), `WORKER_B_PASSWORD: "${malloryPassword}"\n`);
    nats = await startNats(conf);

    db = await createPostgresDatabase();
    const shared = path.join(dir, 'shared');
    fs.mkdirSync(shared);
    env = {
      ...clusterSettings({
        databaseUrl: db.url,
        natsUrl: nats.url,
        s3Endpoint: process.env.ALGOHOST_TEST_S3_ENDPOINT!,
        sharedDir: shared,
        adminKey: generateApiKey(),
        natsPrefix: 'algohost',
      }),
      ALGOHOST_LOG_LEVEL: 'info',
    };
    apiNode = await startNode('api', { ...env, ...envFile(path.join(dir, 'algohost', 'nats-api.env')), ALGOHOST_ROLE: 'api' });
    worker = await startNode('worker', { ...env, ...envFile(path.join(dir, 'algohost', 'nats-worker.env')), ALGOHOST_ROLE: 'worker' });
    workerId = /cluster worker (\S+) announced/.exec(worker.log.join('\n'))![1]!;
    assert.match(workerId, /^worker\.[0-9a-f-]{36}$/, 'a node id starts with its NATS user');
    api = client(apiNode.url);
    alice = await createUser(api, env.ALGOHOST_ADMIN_KEY!, 'alice');
    const tree = path.join(dir, 'tree');
    fs.mkdirSync(path.join(tree, 'src'), { recursive: true });
    fs.writeFileSync(path.join(tree, 'requirements.txt'), '');
    fs.writeFileSync(path.join(tree, 'src', 'Secret.py'), 'def apply(input):\n    return {"alice": input}\n');
    sha = await createAndBuild(apiNode.url, api, alice, 'alice', 'Secret', tree, { environment: 'python311' });
  });

  after(async () => {
    for (const n of [worker, apiNode]) if (n) await stopNode(n);
    for (const c of others) await stopNats(c);
    await stopNats(nats?.child);
    await db?.drop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** alice's sync and async calls answer with her own results. */
  async function aliceStillGetsHerResults(input: string): Promise<void> {
    const sync = await api.post(`/v1/algo/alice/Secret/${sha}`, { key: alice.key, body: input });
    assert.equal(sync.status, 200, sync.text);
    assert.deepEqual(sync.body.result, { alice: input }, sync.text);
    const queued = await api.post(`/v1/algo/alice/Secret/${sha}?output=void`, { key: alice.key, body: `${input} async` });
    assert.equal(queued.status, 200, queued.text);
    const done = await until('the async call to complete', async () => {
      const r = await api.get(`/v1/algo/requests/${queued.body.request_id}`, { key: alice.key });
      return r.body.status === 'completed' ? r.body : undefined;
    });
    assert.deepEqual(done.result, { alice: `${input} async` });
  }

  test('a client without credentials, or with a wrong password, is refused', async () => {
    await assert.rejects(connect({ servers: nats.url, reconnect: false }), AuthorizationError);
    await assert.rejects(connect({ servers: nats.url, user: 'worker-b', pass: 'x'.repeat(48), reconnect: false }), AuthorizationError);
    await assert.rejects(connect({ servers: nats.url, user: 'api', pass: malloryPassword, reconnect: false }), AuthorizationError);
  });

  test("worker credentials cannot listen to another worker's calls, the API node's answers or the work queue", async () => {
    const mallory = await Watched.open(nats.url, 'worker-b', malloryPassword);
    try {
      const heard: string[] = [];
      const listen = (subject: string) =>
        mallory.nc.subscribe(subject, {
          callback: (err, msg) => {
            if (!err) heard.push(msg.subject);
          },
        });
      const stolen = [
        'algohost.run.node.*',
        'algohost.run.node.>',
        `algohost.run.node.${workerId}`,
        '>',
        '_INBOX.>',
        '_INBOX.algohost.api.>',
        'algohost.reply.>',
        'algohost.reply.api.>',
        'algohost.work.>',
        '$KV.algohost_workers.>',
        'algohost.build.*',
      ];
      for (const subject of stolen) listen(subject);
      // Her own subjects are hers: the user is in, only held to them.
      listen('algohost.run.node.worker-b.*');
      await aliceStillGetsHerResults('while mallory listens');
      for (const subject of stolen) assert.ok(await mallory.refused('subscription', subject), `subscribing to ${subject} was not refused`);
      assert.equal(await mallory.refused('subscription', 'algohost.run.node.worker-b.*'), false);
      assert.deepEqual(heard, [], 'mallory heard nothing of alice');
    } finally {
      await mallory.nc.close();
    }
  });

  test("worker credentials cannot publish work, sync calls, into an API node's inbox or another presence entry", async () => {
    const mallory = await Watched.open(nats.url, 'worker-b', malloryPassword);
    try {
      const forged = JSON.stringify({
        id: workerId,
        host: 'mallory',
        pid: 1,
        startedAt: new Date().toISOString(),
        gpu: false,
        load: -1000,
        warmRunners: 0,
        callsInFlight: 0,
        warm: [],
        flows: {},
        seq: 1e9,
      });
      const attempts: [string, string][] = [
        ['algohost.work.async', 'a job of her making'],
        ['algohost.work.build', crypto.randomUUID()],
        [`algohost.run.node.${workerId}`, 'a sync call of her making'],
        [`$KV.algohost_workers.${workerId}`, forged],
        ['$KV.algohost_workers.api.fake', forged],
        ['_INBOX.algohost.api.x.0_0', 'a forged answer'],
        ['$JS.API.STREAM.MSG.GET.ALGOHOST_WORK', JSON.stringify({ seq: 1 })],
        [
          '$JS.API.CONSUMER.CREATE.ALGOHOST_WORK',
          JSON.stringify({ stream_name: 'ALGOHOST_WORK', config: { deliver_subject: 'algohost.run.node.worker-b.x' } }),
        ],
        ['$JS.API.STREAM.UPDATE.ALGOHOST_WORK', '{}'],
        ['$JS.API.STREAM.DELETE.KV_algohost_workers', ''],
      ];
      for (const [subject, data] of attempts) mallory.nc.publish(subject, data, { reply: '_INBOX.algohost.worker-b.r' });
      for (const [subject] of attempts) assert.ok(await mallory.refused('publish', subject), `publishing to ${subject} was not refused`);
      // Under her own key a presence entry that names the other worker's id is ignored by the API
      // nodes (an entry's id must be its key), so it cannot send that worker's calls anywhere.
      mallory.nc.publish('$KV.algohost_workers.worker-b.fake', forged);
      assert.equal(await mallory.refused('publish', '$KV.algohost_workers.worker-b.fake'), false);
      await aliceStillGetsHerResults('after mallory forged');
      // The nodes' own work needs nothing their users may not do: the server refused them nothing.
      assert.doesNotMatch(nats.log(), /Violation - User "(api|worker)"/);
    } finally {
      await mallory.nc.close();
    }
  });

  test("the real worker's user is held to its subjects too: no work, no calls, nothing into an API node's inbox", async () => {
    const pw = envFile(path.join(dir, 'algohost', 'nats-worker.env')).ALGOHOST_NATS_PASSWORD!;
    const w = await Watched.open(nats.url, 'worker', pw);
    try {
      w.nc.publish('_INBOX.algohost.api.anything.1_1', 'an answer nobody asked for');
      w.nc.publish('algohost.run.node.worker-b.x', 'a call');
      w.nc.publish('algohost.work.async', 'a job');
      assert.ok(await w.refused('publish', '_INBOX.algohost.api.anything.1_1'));
      assert.ok(await w.refused('publish', 'algohost.run.node.worker-b.x'));
      assert.ok(await w.refused('publish', 'algohost.work.async'));
    } finally {
      await w.nc.close();
    }
  });

  test('a node refuses a nats-server that lets anonymous clients in, unless ALGOHOST_NATS_ALLOW_ANONYMOUS is set', async () => {
    const open = path.join(dir, 'open.conf');
    fs.writeFileSync(open, `listen: 127.0.0.1:-1\nmax_payload: 32MB\njetstream { store_dir: "${path.join(dir, 'open-js')}" }\n`);
    const openNats = await startNats(open);
    others.push(openNats.child);
    const apiEnv: Record<string, string> = {
      ...env,
      ...envFile(path.join(dir, 'algohost', 'nats-api.env')),
      ALGOHOST_ROLE: 'api',
      ALGOHOST_NATS_URL: openNats.url,
    };
    await assert.rejects(startNode('open', apiEnv), (err: Error) => {
      assert.match(err.message, /exited \(2\)/);
      assert.match(err.message, /lets clients in without credentials/);
      return true;
    });
    // A nats-server with users that still lets a client without credentials in as one of them.
    const defaulted = path.join(dir, 'nats', 'defaulted.conf');
    fs.writeFileSync(
      defaulted,
      fs
        .readFileSync(path.join(dir, 'nats', 'algohost.conf'), 'utf8')
        .replace(/store_dir: "[^"]*"/, `store_dir: "${path.join(dir, 'defaulted-js')}"`)
        .concat('no_auth_user: worker\n'),
    );
    const defaultedNats = await startNats(defaulted);
    others.push(defaultedNats.child);
    await assert.rejects(
      startNode('defaulted', { ...apiEnv, ALGOHOST_NATS_URL: defaultedNats.url }),
      /lets clients in without credentials/,
    );
    // The lab setting: it starts, saying loudly what it allows.
    const { ALGOHOST_NATS_USER: _u, ALGOHOST_NATS_PASSWORD: _p, ...anonymous } = apiEnv;
    const lab = await startNode('lab', { ...anonymous, ALGOHOST_NATS_ALLOW_ANONYMOUS: 'true' });
    try {
      assert.match(lab.log.join('\n'), /ALGOHOST_NATS_ALLOW_ANONYMOUS=true: nats-server at \S+ lets clients in without credentials/);
    } finally {
      await stopNode(lab);
    }
    // Without credentials and without the lab setting, the settings alone are refused.
    assert.throws(
      () => loadConfig({ ...anonymous }, []),
      (err: Error) => err instanceof ConfigError && /needs ALGOHOST_NATS_USER and ALGOHOST_NATS_PASSWORD/.test(err.message),
    );
    // A guessable (short) password is refused, and the message does not repeat it.
    assert.throws(
      () => loadConfig({ ...apiEnv, ALGOHOST_NATS_PASSWORD: 'short-secret' }, []),
      (err: Error) => err instanceof ConfigError && /16 characters or more/.test(err.message) && !err.message.includes('short-secret'),
    );
    await aliceStillGetsHerResults('after the refusals');
  });
});
