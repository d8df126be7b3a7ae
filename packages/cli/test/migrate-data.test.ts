/**
 * `algo migrate-data` end to end: two algohost servers side by side (dev and prod), the real
 * CLI in a child process. prod is reached through a small HTTP proxy in this test, which can
 * hold an upload mid-body (so that the CLI can be killed in the middle of copying a file) or
 * corrupt a download (so that the read-back check has something to catch). What arrived is
 * checked through prod's API, byte for byte by SHA-256.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createOrganization, createUser, type TestUser } from '../../server/test/support/fixtures.js';
import { client, type Client } from '../../server/test/support/http.js';
import { startTestServer, type TestServer } from '../../server/test/support/server.js';
import { algo, algoOnTerminal, assertOk, assertOneLineFailure, hasScript, makeHome, type CliResult } from './support/run-cli.js';

const MiB = 1024 * 1024;
/** Big enough that holding it in memory would show in the CLI's peak memory. */
const BIG_MB = 160;

interface Report {
  source: string;
  destination: string;
  dry_run: boolean;
  collections: { source: string; destination: string; acl: { read: string[] }; action: string }[];
  files: { source: string; destination: string; size: number; sha256: string | null; action: string }[];
  copied: number;
  skipped: number;
  bytes_copied: number;
  bytes_skipped: number;
  manifest: string;
}

const report = (r: CliResult): Report => {
  assertOk(r, 'migrate-data');
  return JSON.parse(r.stdout) as Report;
};
const actions = (rep: Report) => Object.fromEntries(rep.files.map((f) => [f.source.replace(/^data:\/\/alice\//, ''), f.action]));
const sha256 = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');

/**
 * A pass-through proxy to one server. `holdUpload` stops forwarding the body of the next PUT
 * matching it after `after` bytes and calls `held`; `corruptDownload` flips the first byte of
 * the next GET of a matching file.
 */
class Proxy {
  url = '';
  holdUpload: { match: RegExp; after: number; held: () => void } | undefined;
  /** Cuts the connection of the next PUT matching it after `after` bytes (a network failure). */
  dropUpload: { match: RegExp; after: number } | undefined;
  corruptDownload: RegExp | undefined;
  private readonly server: http.Server;

  constructor(private readonly target: string) {
    this.server = http.createServer((req, res) => this.forward(req, res));
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private forward(req: http.IncomingMessage, res: http.ServerResponse): void {
    const target = new URL(this.target);
    const up = http.request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
      (ures) => {
        const corrupt = req.method === 'GET' && this.corruptDownload?.test(req.url ?? '') && ures.headers['x-data-type'] === 'file';
        if (corrupt) this.corruptDownload = undefined;
        res.writeHead(ures.statusCode ?? 502, ures.headers);
        let first = true;
        ures.on('data', (chunk: Buffer) => {
          if (corrupt && first && chunk.length > 0) chunk[0] = chunk[0]! ^ 0xff;
          first = false;
          res.write(chunk);
        });
        ures.on('end', () => res.end());
      },
    );
    up.on('error', () => res.destroy());
    // The CLI went away (killed): the server sees its upload cut off, as over a real network.
    res.on('close', () => {
      if (!res.writableFinished) up.destroy();
    });
    const hold = req.method === 'PUT' && this.holdUpload?.match.test(req.url ?? '') ? this.holdUpload : undefined;
    if (hold) this.holdUpload = undefined;
    const drop = req.method === 'PUT' && this.dropUpload?.match.test(req.url ?? '') ? this.dropUpload : undefined;
    if (drop) this.dropUpload = undefined;
    let seen = 0;
    let holding = false;
    req.on('data', (chunk: Buffer) => {
      if (holding) return;
      if (drop && seen + chunk.length >= drop.after) {
        holding = true;
        up.destroy();
        req.socket.destroy();
        return;
      }
      up.write(chunk);
      seen += chunk.length;
      if (hold && seen >= hold.after) {
        holding = true;
        req.pause();
        hold.held();
      }
    });
    req.on('end', () => up.end());
  }
}

describe('algo migrate-data between two clusters', () => {
  let dev: TestServer;
  let prod: TestServer;
  let proxy: Proxy;
  let devApi: Client;
  let prodApi: Client;
  let alice: TestUser;
  let bob: TestUser;
  let prodAlice: TestUser;
  let home: string;
  let bigHash: string;
  const run = (args: string[], extra: { onSpawn?: (c: ChildProcess) => void } = {}) => algo(args, { home, timeoutMs: 300_000, ...extra });
  const manifestFile = () =>
    path.join(
      home,
      '.algorithmia',
      'migrations',
      `data--alice@${new URL(dev.url).host}--alice@${new URL(proxy.url).host}.jsonl`.replace(/:/g, '_'),
    );
  const manifestPaths = () =>
    fs
      .readFileSync(manifestFile(), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { path: string }).path);

  const put = async (api: Client, key: string, p: string, body: string | Buffer) => {
    const res = await api.put(`/v1/data/${p}`, { key, raw: body });
    assert.equal(res.status, 200, res.text);
  };
  const mkdir = async (api: Client, key: string, parent: string, name: string, acl?: string[]) => {
    const res = await api.post(`/v1/data/${parent}`, { key, body: { name, ...(acl ? { acl: { read: acl } } : {}) } });
    assert.equal(res.status, 200, res.text);
  };
  /** SHA-256 of a hosted file, streamed. */
  const hashOf = async (server: TestServer, key: string, p: string): Promise<string | null> => {
    const res = await fetch(`${server.url}/v1/data/${p}`, { headers: { authorization: `Simple ${key}` } });
    if (res.status === 404) return null;
    assert.equal(res.status, 200, `GET ${p}`);
    const h = crypto.createHash('sha256');
    for await (const chunk of res.body!) h.update(chunk);
    return h.digest('hex');
  };
  const aclOf = async (api: Client, key: string, p: string) => (await api.get(`/v1/data/${p}?acl=true`, { key })).body.acl?.read;

  const MODELS = ['models/a.txt', 'models/b.bin', 'models/big.bin', 'models/c.txt', 'models/sub/d.txt', 'models/sub/deeper/e.txt'];

  before(async () => {
    [dev, prod] = await Promise.all([startTestServer(), startTestServer()]);
    devApi = client(dev.url);
    prodApi = client(prod.url);
    proxy = new Proxy(prod.url);
    await proxy.start();
    alice = await createUser(devApi, dev.adminKey, 'alice');
    bob = await createUser(devApi, dev.adminKey, 'bob');
    prodAlice = await createUser(prodApi, prod.adminKey, 'alice');
    await createOrganization(devApi, alice.key, 'team');
    home = await makeHome();

    // dev: alice/models (the default ACL) with nested and empty folders and one big file,
    // alice/secret (private) and alice/open (public); bob/bobs (private).
    await mkdir(devApi, alice.key, 'alice', 'models');
    await mkdir(devApi, alice.key, 'alice/models', 'sub');
    await mkdir(devApi, alice.key, 'alice/models/sub', 'deeper');
    await mkdir(devApi, alice.key, 'alice/models', 'empty');
    await put(devApi, alice.key, 'alice/models/a.txt', 'alpha');
    await put(devApi, alice.key, 'alice/models/b.bin', crypto.randomBytes(100_000));
    const big = Buffer.alloc(BIG_MB * MiB);
    const block = crypto.randomBytes(MiB);
    for (let i = 0; i < BIG_MB; i++) {
      block.copy(big, i * MiB);
      big.writeUInt32BE(i, i * MiB);
    }
    bigHash = sha256(big);
    await put(devApi, alice.key, 'alice/models/big.bin', big);
    await put(devApi, alice.key, 'alice/models/c.txt', 'gamma');
    await put(devApi, alice.key, 'alice/models/sub/d.txt', 'delta');
    await put(devApi, alice.key, 'alice/models/sub/deeper/e.txt', '');
    await mkdir(devApi, alice.key, 'alice', 'secret', []);
    await put(devApi, alice.key, 'alice/secret/s.txt', 'secret');
    await mkdir(devApi, alice.key, 'alice', 'open', ['user://*']);
    await put(devApi, alice.key, 'alice/open/o.txt', 'open');
    await mkdir(devApi, bob.key, 'bob', 'bobs', []);
    await put(devApi, bob.key, 'bob/bobs/x.txt', 'x');

    assertOk(await run(['auth', '--profile', 'dev', '--server', dev.url, '--key', alice.key, '--username', 'alice']), 'auth dev');
    assertOk(await run(['auth', '--profile', 'prod', '--server', proxy.url, '--key', prodAlice.key, '--username', 'alice']), 'auth prod');
  });
  after(async () => {
    await proxy.stop();
    await Promise.all([dev.stop(), prod.stop()]);
    await fs.promises.rm(home, { recursive: true, force: true });
  });

  test('--dry-run lists the collections and files it would copy and changes nothing', async () => {
    const rep = report(await run(['migrate-data', 'alice', '--profile', 'dev', '--to', 'prod', '--dry-run', '--json']));
    assert.equal(rep.dry_run, true);
    assert.deepEqual(
      rep.collections.map((c) => [c.source, c.destination, c.acl.read, c.action]),
      [
        ['data://alice/models', 'data://alice/models', ['algo://.my/*'], 'would-create'],
        ['data://alice/open', 'data://alice/open', ['user://*'], 'would-create'],
        ['data://alice/secret', 'data://alice/secret', [], 'would-create'],
      ],
    );
    assert.deepEqual(Object.keys(actions(rep)).sort(), [...MODELS, 'open/o.txt', 'secret/s.txt'].sort());
    assert.ok(Object.values(actions(rep)).every((a) => a === 'planned'));
    assert.equal(rep.copied, 8);
    assert.equal(rep.bytes_copied, 5 + 100_000 + BIG_MB * MiB + 5 + 5 + 0 + 6 + 4);
    assert.deepEqual((await prodApi.get('/v1/data/alice', { key: prodAlice.key })).body, {}, 'nothing at the destination');
    assert.ok(!fs.existsSync(manifestFile()), 'no manifest for a dry run');
  });

  test('killed in the middle of a large file, then run again: it skips what was verified and completes', async () => {
    // First run: prod receives 8 MiB of big.bin, then the CLI is killed.
    let child: ChildProcess | undefined;
    const held = new Promise<void>((resolve) => (proxy.holdUpload = { match: /\/models\/big\.bin$/, after: 8 * MiB, held: resolve }));
    const first = run(['migrate-data', 'data://alice/models', '--profile', 'dev', '--to', 'prod'], { onSpawn: (c) => (child = c) });
    await held;
    child!.kill('SIGKILL');
    const killed = await first;
    assert.notEqual(killed.code, 0);
    assert.match(killed.stderr, /created: data:\/\/alice\/models \(read ACL: my algorithms\)/);
    assert.match(killed.stderr, /\[1\/6\] verified models\/a\.txt \(sha256 [0-9a-f]{16}…\)/);
    assert.match(killed.stderr, /\[3\/6\] copying models\/big\.bin \(160 MB\)/);
    assert.match(
      killed.stderr,
      /^resume manifest: ~\/\.algorithmia\/migrations\/data--alice@127\.0\.0\.1_\d+--alice@127\.0\.0\.1_\d+\.jsonl$/m,
    );
    assert.deepEqual(manifestPaths(), ['models/a.txt', 'models/b.bin'], 'the manifest holds what was verified');
    assert.equal(await hashOf(prod, prodAlice.key, 'alice/models/a.txt'), sha256(Buffer.from('alpha')));
    assert.equal(await hashOf(prod, prodAlice.key, 'alice/models/big.bin'), null, 'the cut-off upload left nothing');

    // Second run, watching the CLI's peak memory while it moves the big file.
    let peak = 0;
    let timer: NodeJS.Timeout | undefined;
    const watch = (c: ChildProcess) => {
      timer = setInterval(() => {
        try {
          const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${c.pid}/status`, 'utf8'));
          if (m) peak = Math.max(peak, Number(m[1]) / 1024);
        } catch {
          // exited
        }
      }, 20);
    };
    const resumed = await run(['migrate-data', 'data://alice/models', '--profile', 'dev', '--to', 'prod', '--json'], { onSpawn: watch });
    clearInterval(timer);
    const rep = report(resumed);
    assert.deepEqual(actions(rep), {
      'models/a.txt': 'skipped',
      'models/b.bin': 'skipped',
      'models/big.bin': 'copied',
      'models/c.txt': 'copied',
      'models/sub/d.txt': 'copied',
      'models/sub/deeper/e.txt': 'copied',
    });
    assert.deepEqual([rep.copied, rep.skipped, rep.bytes_skipped], [4, 2, 100_005]);
    assert.equal(rep.bytes_copied, BIG_MB * MiB + 10);
    assert.equal(rep.files.find((f) => f.source.endsWith('big.bin'))!.sha256, bigHash);
    assert.equal(rep.collections[0]!.action, 'exists');
    assert.match(resumed.stderr, /skipped models\/a\.txt \(5 B, copied and verified before\)/);
    assert.match(resumed.stderr, /\[1\/4\] verified models\/big\.bin/);
    assert.ok(resumed.stderr.includes(`resume manifest: ~/.algorithmia/migrations/${path.basename(manifestFile())}`), resumed.stderr);
    assert.equal(rep.manifest, manifestFile());
    for (const f of MODELS) {
      assert.equal(await hashOf(prod, prodAlice.key, `alice/${f}`), await hashOf(dev, alice.key, `alice/${f}`), f);
    }
    assert.deepEqual((await prodApi.get('/v1/data/alice/models', { key: prodAlice.key })).body.folders, [
      { name: 'empty' },
      { name: 'sub' },
    ]);
    assert.deepEqual(await aclOf(prodApi, prodAlice.key, 'alice/models'), ['algo://.my/*']);

    const baseline = await (async () => {
      let p = 0;
      let t: NodeJS.Timeout | undefined;
      await run(['ls', 'data://.my', '--profile', 'dev'], {
        onSpawn: (c) =>
          (t = setInterval(() => {
            try {
              p = Math.max(p, Number(/VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${c.pid}/status`, 'utf8'))![1]) / 1024);
            } catch {
              // exited
            }
          }, 20)),
      });
      clearInterval(t);
      return p;
    })();
    // Streamed, the copy's peak stays near 100 MiB above an idle CLI whatever the file's size
    // (fetch's socket and stream buffers, and chunks V8 has not collected yet: a copy of 800 MiB
    // peaks about 20 MiB above one of 160); a copy held whole would add at least the file's 160.
    assert.ok(
      peak - baseline < BIG_MB * 0.8,
      `peak ${peak.toFixed(0)} MiB while copying ${BIG_MB} MiB, against ${baseline.toFixed(0)} MiB for ls`,
    );
  });

  test("all of an owner's collections with their ACLs; a rerun copies only what changed", async () => {
    const all = await run(['migrate-data', 'alice', '--profile', 'dev', '--to', 'prod']);
    assertOk(all, 'migrate-data alice');
    assert.match(all.stdout, /^COLLECTION\s+DESTINATION\s+ACL\s+ACTION$/m);
    assert.match(all.stdout, /^data:\/\/alice\/models\s+data:\/\/alice\/models\s+my algorithms\s+exists$/m);
    assert.match(all.stdout, /^data:\/\/alice\/open\s+data:\/\/alice\/open\s+public\s+created$/m);
    assert.match(all.stdout, /^data:\/\/alice\/secret\s+data:\/\/alice\/secret\s+private\s+created$/m);
    assert.match(all.stdout, /Copied 2 files \(10 B\), skipped 6 already copied \(160 MB\); every copy verified by SHA-256/);
    assert.deepEqual(await aclOf(prodApi, prodAlice.key, 'alice/open'), ['user://*']);
    assert.deepEqual(await aclOf(prodApi, prodAlice.key, 'alice/secret'), []);
    assert.equal(await hashOf(prod, prodAlice.key, 'alice/secret/s.txt'), sha256(Buffer.from('secret')));

    // A changed source file, a copy deleted at the destination, an ACL changed there.
    await put(devApi, alice.key, 'alice/models/a.txt', 'alpha, second edition');
    assert.equal((await prodApi.delete('/v1/data/alice/models/b.bin', { key: prodAlice.key })).status, 200);
    assert.equal((await prodApi.patch('/v1/data/alice/open', { key: prodAlice.key, body: { acl: { read: [] } } })).status, 200);
    const rep = report(await run(['migrate-data', 'data://alice', '--profile', 'dev', '--to', 'prod', '--json']));
    assert.deepEqual(
      Object.entries(actions(rep))
        .filter(([, a]) => a === 'copied')
        .map(([f]) => f),
      ['models/a.txt', 'models/b.bin'],
    );
    assert.equal(rep.skipped, 6);
    assert.deepEqual(
      rep.collections.map((c) => c.action),
      ['exists', 'acl-updated', 'exists'],
    );
    assert.deepEqual(await aclOf(prodApi, prodAlice.key, 'alice/open'), ['user://*']);
    assert.equal(await hashOf(prod, prodAlice.key, 'alice/models/a.txt'), sha256(Buffer.from('alpha, second edition')));
    assert.equal(await hashOf(prod, prodAlice.key, 'alice/models/b.bin'), await hashOf(dev, alice.key, 'alice/models/b.bin'));
  });

  test('a copy that does not read back the same fails the run; the next run copies it again', async () => {
    await put(devApi, alice.key, 'alice/models/c.txt', 'gamma, changed');
    proxy.corruptDownload = /\/models\/c\.txt$/;
    const bad = await run(['migrate-data', 'data://alice/models', '--profile', 'dev', '--to', 'prod']);
    // The per-file progress comes first; the failure is the one last line.
    assert.notEqual(bad.code, 0);
    assert.doesNotMatch(bad.stderr, /\n\s+at .+:\d+:\d+/, 'no stack trace');
    const message = bad.stderr.trimEnd().split('\n').at(-1)!;
    assert.match(message, /^algo: data:\/\/alice\/models\/c\.txt does not match data:\/\/alice\/models\/c\.txt after copying/);
    assert.match(bad.stderr, /\[1\/1\] copying models\/c\.txt \(14 B\)\n/);
    assert.match(
      message,
      /source: 14 bytes, SHA-256 ([0-9a-f]{64}); destination: 14 bytes, SHA-256 (?!\1)[0-9a-f]{64}\); run the command again/,
    );
    assert.equal(proxy.corruptDownload, undefined, 'the read-back went through the proxy');
    const rep = report(await run(['migrate-data', 'data://alice/models', '--profile', 'dev', '--to', 'prod', '--json']));
    assert.deepEqual(
      rep.files.filter((f) => f.action === 'copied').map((f) => f.source),
      ['data://alice/models/c.txt'],
    );
    assert.equal(await hashOf(prod, prodAlice.key, 'alice/models/c.txt'), sha256(Buffer.from('gamma, changed')));
  });

  test('a connection dropped mid-copy fails the run naming the file; the next run copies it again', async () => {
    const changed = crypto.randomBytes(200_000);
    await put(devApi, alice.key, 'alice/models/b.bin', changed);
    proxy.dropUpload = { match: /\/models\/b\.bin$/, after: 64 * 1024 };
    const cut = await run(['migrate-data', 'data://alice/models', '--profile', 'dev', '--to', 'prod']);
    assert.notEqual(cut.code, 0);
    assert.equal(proxy.dropUpload, undefined, 'the upload went through the proxy');
    const message = cut.stderr.trimEnd().split('\n').at(-1)!;
    assert.match(
      message,
      /^algo: copying data:\/\/alice\/models\/b\.bin to data:\/\/alice\/models\/b\.bin failed: cannot reach http:\/\/127\.0\.0\.1:\d+: .*check api_server of profile "prod"\); run the command again to resume$/,
    );
    assert.notEqual(await hashOf(prod, prodAlice.key, 'alice/models/b.bin'), sha256(changed), 'the cut-off copy was not stored');
    const rep = report(await run(['migrate-data', 'data://alice/models', '--profile', 'dev', '--to', 'prod', '--json']));
    assert.deepEqual(
      rep.files.filter((f) => f.action === 'copied').map((f) => f.source),
      ['data://alice/models/b.bin'],
    );
    assert.equal(await hashOf(prod, prodAlice.key, 'alice/models/b.bin'), sha256(changed));
  });

  test('failures end with one line: same place, unreadable or missing sources, bad arguments', async () => {
    assertOneLineFailure(
      await run(['migrate-data', 'alice', '--profile', 'dev']),
      /source and destination are both alice on .*--to-owner or --to/,
    );
    assertOneLineFailure(
      await run(['migrate-data', 'data://bob/bobs', '--profile', 'dev', '--to', 'prod']),
      // bob's private collection is, for alice, one that does not exist.
      /^algo: data:\/\/bob\/bobs does not exist$/,
    );
    assertOneLineFailure(
      await run(['migrate-data', 'bob', '--profile', 'dev', '--to', 'prod']),
      /data:\/\/bob has no collections you can read/,
    );
    assertOneLineFailure(
      await run(['migrate-data', 'data://alice/nothere', '--profile', 'dev', '--to', 'prod']),
      /data:\/\/alice\/nothere does not exist/,
    );
    assertOneLineFailure(
      await run(['migrate-data', 'data://alice/models/sub', '--profile', 'dev', '--to', 'prod']),
      /not an owner or a collection/,
    );
    assertOneLineFailure(
      await run(['migrate-data', 's3://bucket', '--profile', 'dev', '--to', 'prod']),
      /copies hosted data \(data:\/\/…\), not s3:\/\//,
    );
    assertOneLineFailure(await run(['migrate-data', 'alice', '--profile', 'dev', '--to', 'nowhere']), /no profile "nowhere"/);
    assertOneLineFailure(
      await run(['migrate-data', 'data://alice/open', '--profile', 'dev', '--to', 'prod', '--to-owner', 'nobody_here']),
      /no user or organization "nobody_here"/,
    );
  });

  test(
    'to another owner on the same cluster, with a progress bar on a terminal and none in a pipe',
    { skip: !hasScript && 'util-linux script is not installed' },
    async () => {
      const tty = await algoOnTerminal(['migrate-data', 'data://alice/open', '--profile', 'dev', '--to-owner', 'team'], { home });
      assertOk(tty, 'migrate-data on a terminal');
      // eslint-disable-next-line no-control-regex
      assert.match(tty.stdout, /\r\x1b\[2K\[1\/1\] open\/o\.txt \[[#.]{24}\]\s+\d+% /);
      assert.match(tty.stdout, /Copied 1 file \(4 B\)/);
      assert.deepEqual(await aclOf(devApi, alice.key, 'team/open'), ['user://*']);
      assert.equal(await hashOf(dev, alice.key, 'team/open/o.txt'), sha256(Buffer.from('open')));

      // data://.my is the profile's account.
      const piped = await run(['migrate-data', 'data://.my/secret', '--profile', 'dev', '--to-owner', 'team', '--json']);
      assertOk(piped, 'migrate-data into a pipe');
      // eslint-disable-next-line no-control-regex
      assert.doesNotMatch(piped.stderr, /\r|\x1b/);
      assert.match(piped.stderr, /\[1\/1\] verified secret\/s\.txt/);
      const rep = report(piped);
      assert.deepEqual([rep.source, rep.destination, rep.copied], ['data://alice/secret', 'data://team/secret', 1]);
      assert.deepEqual(await aclOf(devApi, alice.key, 'team/secret'), []);
    },
  );
});
