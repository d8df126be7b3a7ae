/**
 * Issue 17, "Full disk": the node's data directory is on a small file system this test mounts (a
 * sized tmpfs; the tests run as root). With the disk full, pushes, uploads and builds fail with
 * an error naming the cause (HTTP 507 for the API), nothing already stored is damaged, and
 * everything works again once space is freed.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { environmentId } from '../support/algorithms.js';
import { startChildServer, type ChildServer } from '../support/child-server.js';
import { createUser, type TestUser } from '../support/fixtures.js';
import { git, gitUrl } from '../support/git.js';
import { client, request, type Client } from '../support/http.js';
import { makeTempDir } from '../support/server.js';

const exec = promisify(execFile);
const DISK_MIB = 64;

describe('a full disk under the data directory', { skip: process.getuid?.() !== 0 ? 'needs root to mount a file system' : false }, () => {
  let mount: string;
  let srv: ChildServer;
  let api: Client;
  let alice: TestUser;
  let clone: string;
  let work: string;
  let sha: string;
  const stored = crypto.randomBytes(512 * 1024);
  const filler = () => path.join(mount, 'filler');

  /** Fills the file system up to its last block. */
  const fill = async () => {
    const out = await fs.promises.open(filler(), 'a');
    const chunk = Buffer.alloc(1024 * 1024, 1);
    try {
      for (;;) await out.write(chunk);
    } catch (err) {
      assert.equal((err as NodeJS.ErrnoException).code, 'ENOSPC');
    }
    // And the last partial megabyte.
    try {
      for (;;) await out.write(chunk.subarray(0, 4096));
    } catch (err) {
      assert.equal((err as NodeJS.ErrnoException).code, 'ENOSPC');
    } finally {
      await out.close();
    }
  };
  const free = () => fs.promises.rm(filler(), { force: true });
  const commit = async (files: Record<string, string | Buffer>, message: string) => {
    for (const [f, c] of Object.entries(files)) fs.writeFileSync(path.join(clone, f), c);
    await git(['add', '-A'], clone);
    assert.equal((await git(['commit', '-q', '-m', message], clone)).code, 0);
    return (await git(['rev-parse', 'HEAD'], clone)).stdout.trim();
  };
  const readStored = async () => {
    const res = await fetch(`${srv.url}/v1/data/alice/kept/stored.bin`, { headers: { authorization: `Simple ${alice.key}` } });
    assert.equal(res.status, 200);
    return Buffer.from(await res.arrayBuffer());
  };
  const nothingDamaged = async () => {
    assert.ok((await readStored()).equals(stored), 'the stored file reads back identical');
    const call = await request(srv.url, 'POST', `/v1/algo/alice/Tiny/${sha}`, { key: alice.key, body: 'x' });
    assert.equal(call.body.result, 'x', call.text);
    const repos = path.join(srv.dataDir, 'repositories');
    for (const r of fs.readdirSync(repos).filter((d) => d.endsWith('.git'))) {
      const fsck = await git(['fsck', '--no-dangling'], path.join(repos, r));
      assert.equal(fsck.code, 0, fsck.stderr);
    }
  };

  before(async () => {
    mount = await makeTempDir('algohost-small-disk-');
    await exec('mount', ['-t', 'tmpfs', '-o', `size=${DISK_MIB}m,mode=0755`, 'algohost-test', mount]);
    work = await makeTempDir('algohost-full-disk-');
    srv = await startChildServer({ dataDir: path.join(mount, 'data') });
    api = client(srv.url);
    alice = await createUser(api, srv.adminKey, 'alice');
    const env = await environmentId(api, alice.key, 'python311');
    const created = await api.post('/v1/algorithms/alice', {
      key: alice.key,
      body: { name: 'Tiny', settings: { algorithm_environment: env } },
    });
    assert.equal(created.status, 200, created.text);
    clone = path.join(work, 'clone');
    assert.equal((await git(['clone', '-q', gitUrl(srv.url, alice.name, alice.key, 'alice', 'Tiny'), clone])).code, 0);
    fs.rmSync(path.join(clone, 'src'), { recursive: true });
    fs.mkdirSync(path.join(clone, 'src'));
    sha = await commit({ 'src/Tiny.py': 'def apply(input):\n    return input\n', 'requirements.txt': '' }, 'tiny');
    const push = await git(['push', '-q', '-o', 'wait', 'origin', 'HEAD:main'], clone);
    assert.match(push.stderr, /succeeded/, push.stderr);
    assert.equal((await api.post('/v1/data/alice', { key: alice.key, body: { name: 'kept' } })).status, 200);
    const put = await request(srv.url, 'PUT', '/v1/data/alice/kept/stored.bin', { key: alice.key, raw: stored });
    assert.equal(put.status, 200, put.text);
  });
  after(async () => {
    await srv?.stop();
    if (mount) {
      await exec('umount', ['--lazy', mount]).catch(() => {});
      await fs.promises.rm(mount, { recursive: true, force: true });
    }
    if (work) await fs.promises.rm(work, { recursive: true, force: true });
  });

  test('a build that cannot write its checkout fails naming the full disk', async () => {
    // Room for the push (compressed: a file of zeros packs small) but not for the checkout.
    await fill();
    await free();
    const big = Buffer.alloc(Math.floor(fs.statfsSync(mount).bavail * fs.statfsSync(mount).bsize * 1.2));
    await fill();
    await fs.promises.truncate(filler(), Math.max(0, fs.statSync(filler()).size - 2 * 1024 * 1024));
    const next = await commit({ 'zeros.bin': big }, 'zeros');
    const push = await git(['push', '-o', 'wait', 'origin', 'HEAD:main'], clone);
    assert.equal(push.code, 0, push.stderr);
    assert.match(push.stderr, /Build failed/, push.stderr);
    const builds = (await api.get('/v1/algorithms/alice/Tiny/builds', { key: alice.key })).body.results as {
      commit_sha: string;
      error?: string;
    }[];
    const failed = builds.find((b) => b.commit_sha === next)!;
    assert.match(
      failed.error ?? '',
      /^the server's disk is full \(no space left on device where builds are made\)/,
      JSON.stringify(failed),
    );
    await nothingDamaged();
    await free();
    // Back to the small tree for the rest.
    await git(['rm', '-q', 'zeros.bin'], clone);
    assert.equal((await git(['commit', '-q', '-m', 'no zeros'], clone)).code, 0);
  });

  test('with the disk full: an upload is 507 naming the cause, a push is refused naming it; nothing stored is damaged', async () => {
    await fill();
    const put = await request(srv.url, 'PUT', '/v1/data/alice/kept/new.bin', { key: alice.key, raw: crypto.randomBytes(256 * 1024) });
    assert.equal(put.status, 507, put.text);
    assert.match(put.body.error.message, /storage is full \(no space left on device\)/);
    const replace = await request(srv.url, 'PUT', '/v1/data/alice/kept/stored.bin', {
      key: alice.key,
      raw: crypto.randomBytes(256 * 1024),
    });
    assert.equal(replace.status, 507, replace.text);

    await commit({ 'more.bin': crypto.randomBytes(256 * 1024) }, 'more');
    const push = await git(['push', 'origin', 'HEAD:main'], clone);
    assert.notEqual(push.code, 0, push.stderr);
    assert.match(push.stderr, /No space left on device|unpack failed|disk is full|storage is full/i, push.stderr);

    const health = await api.get('/healthz');
    assert.equal(health.status, 200);
    await nothingDamaged();
    const listing = await api.get('/v1/data/alice/kept', { key: alice.key });
    assert.deepEqual(
      (listing.body.files as { filename: string; size: number }[]).map((f) => [f.filename, f.size]),
      [['stored.bin', stored.length]],
    );
  });

  test('once space is freed, pushes, builds and uploads work again', async () => {
    await free();
    const push = await git(['push', '-o', 'wait', 'origin', 'HEAD:main'], clone);
    assert.equal(push.code, 0, push.stderr);
    assert.match(push.stderr, /succeeded/, push.stderr);
    const head = (await git(['rev-parse', 'HEAD'], clone)).stdout.trim();
    const call = await request(srv.url, 'POST', `/v1/algo/alice/Tiny/${head}`, { key: alice.key, body: 'again' });
    assert.equal(call.body.result, 'again', call.text);
    const content = crypto.randomBytes(256 * 1024);
    const put = await request(srv.url, 'PUT', '/v1/data/alice/kept/new.bin', { key: alice.key, raw: content });
    assert.equal(put.status, 200, put.text);
    const res = await fetch(`${srv.url}/v1/data/alice/kept/new.bin`, { headers: { authorization: `Simple ${alice.key}` } });
    assert.ok(Buffer.from(await res.arrayBuffer()).equals(content));
    await nothingDamaged();
  });
});
