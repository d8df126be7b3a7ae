/**
 * The hosted-data commands (`ls`, `mkdir`, `rmdir`, `rm`, `cat`, `cp`) against a real algohost
 * node, run as a user would: the real CLI in a child process with its own HOME, two users
 * (alice, the default profile, and bob), local files in a temporary directory. What the CLI
 * did is checked through the API; what the user sees (stdout, one-line errors, exit codes,
 * progress on a terminal only) is checked on the CLI's output.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createUser, type TestUser } from '../../server/test/support/fixtures.js';
import { client, type Client } from '../../server/test/support/http.js';
import { makeTempDir, startTestServer, type TestServer } from '../../server/test/support/server.js';
import { algo, algoOnTerminal, assertOk, assertOneLineFailure, hasScript, makeHome, type CliResult } from './support/run-cli.js';

const MiB = 1024 * 1024;

const json = <T = any>(r: CliResult): T => {
  assertOk(r, 'command');
  return JSON.parse(r.stdout) as T;
};

/** Every file under `dir` (relative paths, sorted) with its content. */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string, rel: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(path.join(d, e.name), r);
      else out[r] = fs.readFileSync(path.join(d, e.name)).toString('base64');
    }
  };
  walk(dir, '');
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

/** SHA-256 of a local file, read in chunks. */
async function hashFile(file: string): Promise<string> {
  const h = crypto.createHash('sha256');
  for await (const chunk of fs.createReadStream(file)) h.update(chunk as Buffer);
  return h.digest('hex');
}

describe('algo data commands against a running server', () => {
  let srv: TestServer;
  let api: Client;
  let alice: TestUser;
  let bob: TestUser;
  let home: string;
  let work: string;
  const run = (args: string[], extra: { timeoutMs?: number } = {}) => algo(args, { home, ...extra });
  /** The bytes of a hosted file, read through the API. */
  const fetchFile = async (p: string, key = alice.key) => {
    const res = await fetch(`${srv.url}/v1/data/${p}`, { headers: { authorization: `Simple ${key}` } });
    assert.equal(res.status, 200, `GET ${p}: ${res.status}`);
    return Buffer.from(await res.arrayBuffer());
  };
  const put = async (p: string, body: string | Buffer, key = alice.key) => {
    const res = await api.put(`/v1/data/${p}`, { key, raw: body });
    assert.equal(res.status, 200, res.text);
  };
  const mkdir = async (parent: string, name: string, acl?: string[], key = alice.key) => {
    const res = await api.post(`/v1/data/${parent}`, { key, body: { name, ...(acl ? { acl: { read: acl } } : {}) } });
    assert.equal(res.status, 200, res.text);
  };

  before(async () => {
    srv = await startTestServer();
    api = client(srv.url);
    alice = await createUser(api, srv.adminKey, 'alice');
    bob = await createUser(api, srv.adminKey, 'bob');
    home = await makeHome();
    work = await makeTempDir('algo-cli-data-');
    assertOk(await run(['auth', '--server', srv.url, '--key', alice.key, '--username', 'alice']), 'auth alice');
    assertOk(await run(['auth', '--profile', 'bob', '--server', srv.url, '--key', bob.key, '--username', 'bob']), 'auth bob');
  });
  after(async () => {
    await srv.stop();
    await fs.promises.rm(home, { recursive: true, force: true });
    await fs.promises.rm(work, { recursive: true, force: true });
  });

  test('mkdir creates collections (data://.my or the owner) and nested folders; an existing one or a missing parent fail', async () => {
    const r = await run(['mkdir', 'data://.my/photos']);
    assertOk(r, 'mkdir');
    assert.equal(r.stdout.trim(), 'Created data://.my/photos');
    assertOk(await run(['mkdir', 'data://alice/photos/2024']), 'mkdir nested');
    assertOk(await run(['mkdir', 'alice/docs']), 'mkdir without the scheme');
    const root = await api.get('/v1/data/alice', { key: alice.key });
    assert.deepEqual(root.body, { folders: [{ name: 'docs' }, { name: 'photos' }] });
    assert.deepEqual((await api.get('/v1/data/alice/photos', { key: alice.key })).body, { folders: [{ name: '2024' }] });
    assert.equal((await api.get('/v1/data/alice/photos?acl=true', { key: alice.key })).body.acl.read[0], 'algo://.my/*', 'the default ACL');

    assertOneLineFailure(await run(['mkdir', 'data://.my/photos']), /data:\/\/\.my\/photos already exists/);
    assertOneLineFailure(await run(['mkdir', 'data://.my/nothere/sub']), /data:\/\/\.my\/nothere does not exist/);
  });

  test('cp uploads a file: into a folder (trailing "/" or an existing folder) or to a new name', async () => {
    fs.writeFileSync(path.join(work, 'hello.txt'), 'hello world\n');
    const into = await run(['cp', path.join(work, 'hello.txt'), 'data://.my/docs/']);
    assertOk(into, 'cp into');
    assert.match(into.stdout, /Copied 1 file \(12 B\) to data:\/\/\.my\/docs\//);
    assert.equal((await fetchFile('alice/docs/hello.txt')).toString(), 'hello world\n');
    assertOk(await run(['cp', path.join(work, 'hello.txt'), 'data://alice/photos']), 'cp into an existing folder');
    assert.equal((await fetchFile('alice/photos/hello.txt')).toString(), 'hello world\n');
    assertOk(await run(['cp', path.join(work, 'hello.txt'), 'data://.my/docs/renamed.txt']), 'cp to a name');
    assert.equal((await fetchFile('alice/docs/renamed.txt')).toString(), 'hello world\n');
    // Several sources go into the destination folder.
    fs.writeFileSync(path.join(work, 'a.txt'), 'A');
    fs.writeFileSync(path.join(work, 'b.txt'), 'B');
    const several = await run(['cp', path.join(work, 'a.txt'), path.join(work, 'b.txt'), 'data://.my/docs']);
    assertOk(several, 'cp several');
    assert.match(several.stdout, /Copied 2 files/);
    assert.equal((await fetchFile('alice/docs/b.txt')).toString(), 'B');
    // Replacing a file replaces it.
    fs.writeFileSync(path.join(work, 'a.txt'), 'A2');
    assertOk(await run(['cp', path.join(work, 'a.txt'), 'data://.my/docs/a.txt']), 'cp replaces');
    assert.equal((await fetchFile('alice/docs/a.txt')).toString(), 'A2');
  });

  test('cp failures: a missing local file, a missing folder, a directory without -r, two local paths', async () => {
    assertOneLineFailure(await run(['cp', path.join(work, 'nope.txt'), 'data://.my/docs/']), /no such file or directory: .*nope\.txt/);
    const noFolder = await run(['cp', path.join(work, 'hello.txt'), 'data://.my/nothere/x.txt']);
    assertOneLineFailure(noFolder, /folder data:\/\/\.my\/nothere does not exist.*algo mkdir/);
    fs.mkdirSync(path.join(work, 'adir'), { recursive: true });
    assertOneLineFailure(await run(['cp', path.join(work, 'adir'), 'data://.my/docs/']), /is a directory: use "algo cp -r"/);
    assertOneLineFailure(
      await run(['cp', path.join(work, 'hello.txt'), path.join(work, 'x.txt')]),
      /one side of "algo cp" must be a data:\/\//,
    );
    assertOneLineFailure(await run(['cp', 'data://.my/docs/hello.txt']), /give at least one source and a destination/);
    assertOneLineFailure(await run(['cp', 'data://.my/docs/missing.txt', work]), /data:\/\/\.my\/docs\/missing\.txt does not exist/);
    assertOneLineFailure(await run(['cp', 'data://.my/docs', work]), /data:\/\/\.my\/docs is a directory: use "algo cp -r"/);
  });

  test('ls lists names, -l a table with sizes and times, --json the entries; no argument lists the collections', async () => {
    const names = await run(['ls', 'data://.my/docs']);
    assertOk(names, 'ls');
    assert.deepEqual(names.stdout.trim().split('\n'), ['a.txt', 'b.txt', 'hello.txt', 'renamed.txt']);
    const long = await run(['ls', '-l', 'data://alice/docs']);
    assertOk(long, 'ls -l');
    const lines = long.stdout.trim().split('\n');
    assert.match(lines[0]!, /^SIZE\s+LAST MODIFIED\s+NAME$/);
    assert.match(
      lines.find((l) => l.endsWith('hello.txt'))!,
      /^12\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\s+hello\.txt$/,
    );
    const entries = json<{ type: string; filename?: string; name?: string; size?: number; last_modified?: string }[]>(
      await run(['ls', 'data://.my/photos', '--json']),
    );
    assert.deepEqual(
      entries.map((e) => [e.type, e.name ?? e.filename, e.size]),
      [
        ['folder', '2024', undefined],
        ['file', 'hello.txt', 12],
      ],
    );
    const collections = await run(['ls']);
    assertOk(collections, 'ls');
    assert.deepEqual(collections.stdout.trim().split('\n'), ['docs/', 'photos/']);
    // A file is listed as itself.
    const one = await run(['ls', '-l', 'data://.my/docs/hello.txt']);
    assertOk(one, 'ls of a file');
    assert.match(one.stdout, /^12\s+\S+\s+hello\.txt$/m);
    assertOneLineFailure(await run(['ls', 'data://.my/nothere']), /data:\/\/\.my\/nothere does not exist/);
  });

  test('ls pages through more entries than one page holds (folders first, then files)', async () => {
    await mkdir('alice', 'many');
    const folders = Array.from({ length: 55 }, (_, i) => `dir${String(i).padStart(3, '0')}`);
    const files = Array.from({ length: 130 }, (_, i) => `file${String(i).padStart(3, '0')}.txt`);
    for (const d of folders) await mkdir('alice/many', d);
    for (const f of files) await put(`alice/many/${f}`, f);
    const r = await run(['ls', 'data://.my/many']);
    assertOk(r, 'ls many');
    assert.deepEqual(r.stdout.trim().split('\n'), [...folders.map((d) => `${d}/`), ...files]);
    const entries = json<{ type: string }[]>(await run(['ls', 'data://.my/many', '--json']));
    assert.equal(entries.length, folders.length + files.length);
    assert.equal(entries.filter((e) => e.type === 'folder').length, folders.length);
  });

  test('cat prints text and binary files byte for byte; a directory or a missing file fail', async () => {
    const text = await run(['cat', 'data://.my/docs/hello.txt', 'data://alice/docs/b.txt']);
    assertOk(text, 'cat');
    assert.equal(text.stdout, 'hello world\nB');
    const binary = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7) % 256));
    await put('alice/docs/bin.dat', binary);
    const bin = await run(['cat', 'data://.my/docs/bin.dat']);
    assertOk(bin, 'cat binary');
    assert.ok(bin.stdoutBytes.equals(binary), 'the bytes come out unchanged');
    assertOneLineFailure(await run(['cat', 'data://.my/docs']), /data:\/\/\.my\/docs is a directory: use "algo ls"/);
    assertOneLineFailure(await run(['cat', 'data://.my/docs/missing.txt']), /data:\/\/\.my\/docs\/missing\.txt does not exist/);
  });

  test('cp -r uploads a directory tree, cp -r downloads it again unchanged; files and folders download too', async () => {
    const src = path.join(work, 'tree');
    fs.mkdirSync(path.join(src, 'sub', 'deeper'), { recursive: true });
    fs.mkdirSync(path.join(src, 'empty'), { recursive: true });
    fs.writeFileSync(path.join(src, 'top.txt'), 'top');
    fs.writeFileSync(path.join(src, 'sub', 'mid.bin'), crypto.randomBytes(70_000));
    fs.writeFileSync(path.join(src, 'sub', 'deeper', 'low.txt'), 'low');
    fs.writeFileSync(path.join(src, 'zero.txt'), '');

    // A collection that does not exist yet is created as the copy of the directory.
    const up = await run(['cp', '-r', src, 'data://.my/tree']);
    assertOk(up, 'cp -r up');
    assert.match(up.stdout, /Copied 4 files \(68 KB\) to data:\/\/\.my\/tree/);
    assert.deepEqual((await api.get('/v1/data/alice/tree', { key: alice.key })).body.folders, [{ name: 'empty' }, { name: 'sub' }]);
    assert.equal((await fetchFile('alice/tree/sub/deeper/low.txt')).toString(), 'low');
    assert.equal((await fetchFile('alice/tree/zero.txt')).length, 0);
    // Into an existing folder, the directory keeps its name.
    assertOk(await run(['cp', '-r', src, 'data://.my/photos/']), 'cp -r into');
    assert.equal((await fetchFile('alice/photos/tree/top.txt')).toString(), 'top');

    const down = path.join(work, 'down');
    const back = await run(['cp', '-r', 'data://.my/tree', down]);
    assertOk(back, 'cp -r down');
    assert.deepEqual(tree(down), tree(src));
    assert.ok(fs.statSync(path.join(down, 'empty')).isDirectory(), 'empty folders come down too');
    // Into an existing local directory it keeps its name.
    assertOk(await run(['cp', '-r', 'data://alice/tree', down]), 'cp -r into a directory');
    assert.deepEqual(tree(path.join(down, 'tree')), tree(src));

    // One file down, to a name or into a directory.
    assertOk(await run(['cp', 'data://.my/tree/sub/mid.bin', path.join(work, 'mid-copy.bin')]), 'cp down');
    assert.ok(fs.readFileSync(path.join(work, 'mid-copy.bin')).equals(fs.readFileSync(path.join(src, 'sub', 'mid.bin'))));
    assertOk(await run(['cp', 'data://.my/tree/top.txt', 'data://.my/tree/zero.txt', work]), 'cp several down');
    assert.equal(fs.readFileSync(path.join(work, 'top.txt'), 'utf8'), 'top');
    assert.equal(fs.readFileSync(path.join(work, 'zero.txt'), 'utf8'), '');
    // Nothing half-written is left next to the files.
    assert.deepEqual(
      fs.readdirSync(work).filter((f) => f.includes('.algo-')),
      [],
    );
  });

  test('rm deletes files; rmdir deletes an empty folder, a non-empty one only with --force', async () => {
    const rm = await run(['rm', 'data://.my/docs/a.txt', 'data://alice/docs/b.txt']);
    assertOk(rm, 'rm');
    assert.equal(rm.stdout, 'Deleted data://.my/docs/a.txt\nDeleted data://alice/docs/b.txt\n');
    assert.equal((await api.get('/v1/data/alice/docs/a.txt', { key: alice.key })).status, 404);
    assertOneLineFailure(await run(['rm', 'data://.my/docs/a.txt']), /no such file: data:\/\/\.my\/docs\/a\.txt/);
    assertOneLineFailure(await run(['rm', 'data://.my/docs']), /data:\/\/\.my\/docs is a directory: use "algo rmdir"/);

    await mkdir('alice/docs', 'emptysub');
    assertOk(await run(['rmdir', 'data://.my/docs/emptysub']), 'rmdir empty');
    assert.equal((await api.get('/v1/data/alice/docs/emptysub', { key: alice.key })).status, 404);
    const refused = await run(['rmdir', 'data://.my/tree']);
    assertOneLineFailure(refused, /data:\/\/\.my\/tree is not empty: use "algo rmdir --force"/);
    assert.equal((await api.get('/v1/data/alice/tree/top.txt', { key: alice.key })).status, 200, 'nothing was deleted');
    const forced = await run(['rmdir', '--force', 'data://.my/tree']);
    assertOk(forced, 'rmdir --force');
    assert.equal(forced.stdout.trim(), 'Deleted data://.my/tree (4 files)');
    assert.equal((await api.get('/v1/data/alice/tree', { key: alice.key })).status, 404);
    assertOneLineFailure(await run(['rmdir', 'data://.my/tree']), /no such directory: data:\/\/\.my\/tree/);
    assertOneLineFailure(await run(['rmdir', 'data://.my/docs/hello.txt']), /is a file: use "algo rm"/);
  });

  test("another user's private collection: one-line errors; a public one can be read but not changed", async () => {
    await mkdir('alice', 'secret', []);
    await put('alice/secret/s.txt', 'secret');
    await mkdir('alice', 'open', ['user://*']);
    await put('alice/open/o.txt', 'open');
    const asBob = (args: string[]) => run([...args, '--profile', 'bob']);

    // For bob, alice's private collection is one that does not exist: the same one-line error.
    for (const args of [
      ['ls', 'data://alice/secret'],
      ['cat', 'data://alice/secret/s.txt'],
      ['cp', 'data://alice/secret/s.txt', work],
      ['cp', '-r', 'data://alice/secret', path.join(work, 'stolen')],
      ['rm', 'data://alice/secret/s.txt'],
      ['rmdir', '--force', 'data://alice/secret'],
      ['mkdir', 'data://alice/secret/x'],
    ]) {
      const line = assertOneLineFailure(await asBob(args), /(data:\/\/alice\/secret.* does not exist|no such .*data:\/\/alice\/secret)/);
      const missing = assertOneLineFailure(await asBob(args.map((a) => a.replace('secret', 'nosuch'))));
      assert.equal(line.replace('secret', 'nosuch'), missing, args.join(' '));
    }
    assert.ok(!fs.existsSync(path.join(work, 'stolen')), 'nothing was created locally');
    assertOneLineFailure(await asBob(['mkdir', 'data://alice/mine']), /bob may not change data:\/\/alice/);
    assertOneLineFailure(await asBob(['cp', path.join(work, 'hello.txt'), 'data://alice/open/']), /only alice may write there/);
    assertOneLineFailure(await asBob(['rm', 'data://alice/open/o.txt']), /only alice may write there/);

    const cat = await asBob(['cat', 'data://alice/open/o.txt']);
    assertOk(cat, 'bob reads a public file');
    assert.equal(cat.stdout, 'open');
    // bob sees only the public collection of alice's, and his own .my is empty.
    const listed = await asBob(['ls', 'data://alice']);
    assertOk(listed, 'bob lists alice');
    assert.equal(listed.stdout, 'open/\n');
    const mine = await asBob(['ls']);
    assertOk(mine, 'bob ls');
    assert.equal(mine.stdout, '');
    assertOneLineFailure(await run(['ls', 'data://nobody_here/x']), /no user or organization "nobody_here" \(HTTP 404/);
  });

  test('bad paths are refused with the reason, before or by the server', async () => {
    assertOneLineFailure(await run(['ls', 'data://alice/../bob']), /"\.\." is not allowed in a data path/);
    assertOneLineFailure(await run(['cat', 'data://.my/docs/./hello.txt']), /"\." is not allowed in a data path/);
    assertOneLineFailure(await run(['cat', 'data://.my/docs//hello.txt']), /empty name in data path/);
    assertOneLineFailure(await run(['ls', 'data://.nonsense/x']), /unknown data space "\.nonsense"/);
    assertOneLineFailure(await run(['mkdir', `data://.my/docs/${'n'.repeat(300)}`]), /1–255 characters/);
    assertOneLineFailure(
      await run(['ls', 's3://bucket/x']),
      /this server does not support the s3:\/\/ connector yet: GET \/v1\/connector\/s3\/bucket\/x answered 404/,
    );
    fs.writeFileSync(path.join(work, 'loose.txt'), 'x');
    assertOneLineFailure(await run(['cp', path.join(work, 'loose.txt'), 'data://.my/loose.txt']), /files live in collections/);
  });

  test('a large file goes up and down streamed: the CLI does not hold it in memory', async () => {
    // Big enough that holding it would show above what streaming costs (buffers that the
    // garbage collector frees in its own time: tens of MiB, whatever the size).
    const size = 256 * MiB;
    const file = path.join(work, 'large.bin');
    const block = crypto.randomBytes(MiB);
    const h = crypto.createHash('sha256');
    const fd = fs.openSync(file, 'w');
    for (let i = 0; i < size / MiB; i++) {
      block.writeUInt32BE(i, 0);
      fs.writeSync(fd, block);
      h.update(block);
    }
    fs.closeSync(fd);
    const hash = h.digest('hex');

    /** Runs the CLI and reads its peak resident memory (VmHWM) until it exits. */
    const peakOf = async (args: string[]) => {
      let peak = 0;
      let timer: NodeJS.Timeout | undefined;
      const r = await algo(args, {
        home,
        timeoutMs: 300_000,
        onSpawn: (child) => {
          timer = setInterval(() => {
            try {
              const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'));
              if (m) peak = Math.max(peak, Number(m[1]) / 1024);
            } catch {
              // exited
            }
          }, 20);
        },
      });
      clearInterval(timer);
      assertOk(r, args.join(' '));
      return peak;
    };
    const baseline = await peakOf(['ls', 'data://.my/docs']);
    const up = await peakOf(['cp', file, 'data://.my/docs/large.bin']);
    const stored = await api.get('/v1/data/alice/docs', { key: alice.key });
    assert.equal(stored.body.files.find((f: { filename: string }) => f.filename === 'large.bin').size, size);
    const down = await peakOf(['cp', 'data://.my/docs/large.bin', path.join(work, 'large-back.bin')]);
    assert.equal(await hashFile(path.join(work, 'large-back.bin')), hash);
    for (const [what, peak] of [
      ['upload', up],
      ['download', down],
    ] as const) {
      assert.ok(peak - baseline < 96, `${what}: peak ${peak.toFixed(0)} MiB against ${baseline.toFixed(0)} MiB for ls (file: 256 MiB)`);
    }
    fs.rmSync(path.join(work, 'large-back.bin'));
    fs.rmSync(file);
  });

  test(
    'cp draws a progress bar on a terminal, and prints none into a pipe',
    { skip: !hasScript && 'util-linux script is not installed' },
    async () => {
      const file = path.join(work, 'progress.bin');
      fs.writeFileSync(file, crypto.randomBytes(4 * MiB));
      const tty = await algoOnTerminal(['cp', file, 'data://.my/docs/'], { home });
      assertOk(tty, 'cp on a terminal');
      // eslint-disable-next-line no-control-regex
      assert.match(tty.stdout, /\r\x1b\[2KCopying 1 file \[[#.]{24}\]\s+\d+% /, 'a bar with the bytes so far');
      assert.match(tty.stdout, /Copied 1 file \(4\.0 MB\)/);
      const ttyDown = await algoOnTerminal(['cp', 'data://.my/docs/progress.bin', path.join(work, 'progress-back.bin')], { home });
      assertOk(ttyDown, 'cp down on a terminal');
      assert.match(ttyDown.stdout, /Copying 1 file \[/);

      const piped = await run(['cp', file, 'data://.my/docs/']);
      assertOk(piped, 'cp into a pipe');
      assert.equal(piped.stderr, '', 'no progress on stderr when it is not a terminal');
      // eslint-disable-next-line no-control-regex
      assert.doesNotMatch(piped.stdout, /\r|\x1b/);
    },
  );
});
