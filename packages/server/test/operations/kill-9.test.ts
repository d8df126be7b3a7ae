/**
 * Issue 17, "kill -9": the server process is SIGKILLed during a push, a build, a data upload, a
 * publish and an async call, then started again on the same data directory. Every repository
 * passes `git fsck`, every write the server acknowledged before the kill is there, nothing stays
 * "running", and the interrupted async call ends with a clear error. On SQLite and, when the
 * tests have a PostgreSQL server, on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { environmentId } from '../support/algorithms.js';
import { removeDataDir, startChildServer, type ChildServer } from '../support/child-server.js';
import { createUser, type TestUser } from '../support/fixtures.js';
import { GIT_ENV, git, gitUrl } from '../support/git.js';
import { client, request, type Client } from '../support/http.js';
import { createPostgresDatabase, DATABASES, makeTempDir } from '../support/server.js';

const SLEEPY =
  'import time\n\ndef apply(input):\n    if isinstance(input, dict) and "sleep" in input:\n        time.sleep(input["sleep"])\n    return input\n';

/** Waits for `cond`; the bound is a guard against a hung test, not a performance assertion. */
async function until(cond: () => boolean | Promise<boolean>, what: () => string): Promise<void> {
  for (let i = 0; i < 6000; i++) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.fail(`waited in vain: ${what()}`);
}

for (const database of DATABASES)
  describe(`kill -9 of the server, then a restart on the same data directory (${database})`, () => {
    let srv: ChildServer;
    /** The PostgreSQL variant's own database, kept across the restarts. */
    let pgDatabase: { url: string; drop(): Promise<void> } | undefined;
    const dbEnv = (): Record<string, string> => (pgDatabase ? { ALGOHOST_DATABASE_URL: pgDatabase.url } : {});
    let api: Client;
    let alice: TestUser;
    let work: string;
    let clone: string;
    /** Commits the server acknowledged (a push that returned 0), newest last. */
    const acknowledged: string[] = [];

    const restart = async () => {
      await srv.kill9();
      // The same port: the clone's origin keeps working.
      srv = await startChildServer({
        dataDir: srv.dataDir,
        adminKey: srv.adminKey,
        env: { ALGOHOST_PORT: new URL(srv.url).port, ...dbEnv() },
      });
      api = client(srv.url);
    };
    const url = () => gitUrl(srv.url, alice.name, alice.key, 'alice', 'Sleepy');
    const commit = async (files: Record<string, string | Buffer>, message: string) => {
      for (const [f, c] of Object.entries(files)) {
        fs.mkdirSync(path.dirname(path.join(clone, f)), { recursive: true });
        fs.writeFileSync(path.join(clone, f), c);
      }
      await git(['add', '-A'], clone);
      assert.equal((await git(['commit', '-q', '-m', message], clone)).code, 0);
      return (await git(['rev-parse', 'HEAD'], clone)).stdout.trim();
    };
    const builds = async () =>
      (await api.get('/v1/algorithms/alice/Sleepy/builds?limit=100', { key: alice.key })).body.results as {
        build_id: string;
        status: string;
        commit_sha: string;
        error?: string;
      }[];
    /** Every repository of the data directory passes `git fsck --strict`. */
    const fsckAll = async () => {
      const root = path.join(srv.dataDir, 'repositories');
      const repos = fs.readdirSync(root).filter((d) => d.endsWith('.git'));
      assert.ok(repos.length > 0);
      for (const r of repos) {
        const res = await git(['fsck', '--strict', '--no-dangling'], path.join(root, r));
        assert.equal(res.code, 0, `${r}: ${res.stderr}${res.stdout}`);
      }
    };
    /** Nothing is left queued or running for long: waits for the queue to drain, fails on a stuck build. */
    const noBuildRunning = async () => {
      for (let i = 0; i < 600; i++) {
        const list = await builds();
        if (list.every((b) => b.status === 'succeeded' || b.status === 'failed')) return list;
        await new Promise((r) => setTimeout(r, 200));
      }
      assert.fail(`builds still running: ${JSON.stringify(await builds())}`);
    };
    const branchHead = async () => (await git(['ls-remote', url(), 'refs/heads/main'])).stdout.split('\t')[0];

    before(async () => {
      work = await makeTempDir('algohost-kill9-');
      if (database === 'postgres') pgDatabase = await createPostgresDatabase();
      srv = await startChildServer({ env: dbEnv() });
      api = client(srv.url);
      alice = await createUser(api, srv.adminKey, 'alice');
      const env = await environmentId(api, alice.key, 'python311');
      const created = await api.post('/v1/algorithms/alice', {
        key: alice.key,
        body: { name: 'Sleepy', settings: { algorithm_environment: env } },
      });
      assert.equal(created.status, 200, created.text);
      clone = path.join(work, 'clone');
      assert.equal((await git(['clone', '-q', url(), clone])).code, 0);
      fs.rmSync(path.join(clone, 'src'), { recursive: true, force: true });
      acknowledged.push(await commit({ 'src/Sleepy.py': SLEEPY, 'requirements.txt': '' }, 'sleepy'));
      const push = await git(['push', '-q', '-o', 'wait', 'origin', 'HEAD:main'], clone);
      assert.equal(push.code, 0, push.stderr);
      assert.match(push.stderr, /succeeded/, push.stderr);
    });
    after(async () => {
      await srv?.stop();
      if (srv) await removeDataDir(srv.dataDir);
      await pgDatabase?.drop();
      await fs.promises.rm(work, { recursive: true, force: true });
    });

    test('during a push: the repository passes fsck and holds the last acknowledged commit (or the new one, whole)', async () => {
      const big = await commit({ 'blob.bin': crypto.randomBytes(48 * 1024 * 1024) }, 'big');
      const repoDir = path.join(srv.dataDir, 'repositories');
      const pushing = spawn('git', ['push', 'origin', 'HEAD:main'], { cwd: clone, env: GIT_ENV, stdio: 'ignore' });
      const pushed = new Promise<number>((r) => pushing.on('close', (c) => r(c ?? 1)));
      // receive-pack writes the incoming objects to a quarantine directory: the push is streaming.
      const streaming = () =>
        fs
          .readdirSync(repoDir)
          .some(
            (r) =>
              fs.existsSync(path.join(repoDir, r, 'objects')) &&
              fs.readdirSync(path.join(repoDir, r, 'objects')).some((o) => o.startsWith('incoming-') || o.startsWith('tmp_objdir')),
          );
      await until(
        () => streaming() || pushing.exitCode !== null,
        () => 'the push to stream',
      );
      await restart();
      assert.notEqual(await pushed, 0, 'the push was cut off');
      await fsckAll();
      assert.equal(await branchHead(), acknowledged.at(-1), 'the branch is where the last acknowledged push put it');
      // The same push again goes through (nothing half-written is in the way).
      const again = await git(['push', '-q', '-o', 'wait', 'origin', 'HEAD:main'], clone);
      assert.equal(again.code, 0, again.stderr);
      acknowledged.push(big);
      assert.equal(await branchHead(), big);
      await fsckAll();
      await noBuildRunning();
    });

    test('during a build: the build is not left running; it runs again after the restart and ends', async () => {
      // The compile step of this tree sleeps (a compileall.py in the tree shadows the module).
      const sha = await commit({ 'compileall.py': 'import time\nprint("COMPILING", flush=True)\ntime.sleep(5)\n' }, 'slow build');
      // `-o wait` streams the build's log: the kill comes once the compile step is running.
      const pushing = spawn('git', ['push', '-o', 'wait', 'origin', 'HEAD:main'], {
        cwd: clone,
        env: GIT_ENV,
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let log = '';
      pushing.stderr.setEncoding('utf8').on('data', (d: string) => (log += d));
      await until(
        () => log.includes('COMPILING') || pushing.exitCode !== null,
        () => log,
      );
      assert.match(log, /COMPILING/);
      acknowledged.push(sha); // the push itself was acknowledged: its build is running
      const id = /build ([0-9a-f-]{36}) queued/.exec(log)![1]!;
      assert.equal((await builds()).find((b) => b.build_id === id)?.status, 'in-progress');
      await restart();
      const list = await noBuildRunning();
      const build = list.find((b) => b.build_id === id)!;
      assert.equal(build.status, 'succeeded', JSON.stringify(build));
      assert.equal(await branchHead(), sha);
      await fsckAll();
    });

    test('during a data upload: the file acknowledged before is intact, the cut-off upload left nothing', async () => {
      assert.equal((await api.post('/v1/data/alice', { key: alice.key, body: { name: 'kept' } })).status, 200);
      const first = crypto.randomBytes(3 * 1024 * 1024);
      const put = await request(srv.url, 'PUT', '/v1/data/alice/kept/file.bin', { key: alice.key, raw: first });
      assert.equal(put.status, 200, put.text);
      // A second upload of the same file, cut off by the kill after a few MiB arrived.
      const target = new URL(`${srv.url}/v1/data/alice/kept/file.bin`);
      const req = http.request({
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'PUT',
        headers: { authorization: `Simple ${alice.key}`, 'content-length': String(64 * 1024 * 1024) },
      });
      req.on('error', () => {});
      const tmp = path.join(srv.dataDir, 'blobs', 'tmp');
      for (let i = 0; i < 4; i++) req.write(crypto.randomBytes(1024 * 1024));
      const inTmp = () => fs.existsSync(tmp) && fs.readdirSync(tmp).some((f) => fs.statSync(path.join(tmp, f)).size > 0);
      let answered = '';
      req.on('response', (res) => (answered = String(res.statusCode)));
      await until(inTmp, () => `the upload to reach the server (answered ${answered})`);
      await restart();
      req.destroy();
      const got = await fetch(`${srv.url}/v1/data/alice/kept/file.bin`, { headers: { authorization: `Simple ${alice.key}` } });
      assert.equal(got.status, 200);
      assert.ok(Buffer.from(await got.arrayBuffer()).equals(first), 'the acknowledged content');
      const listing = await api.get('/v1/data/alice/kept', { key: alice.key });
      assert.deepEqual(
        listing.body.files.map((f: { filename: string; size: number }) => [f.filename, f.size]),
        [['file.bin', first.length]],
      );
      assert.deepEqual(fs.existsSync(tmp) ? fs.readdirSync(tmp) : [], [], 'no partial upload left behind');
    });

    test('during a publish: an acknowledged version survives; a cut-off one is whole or absent', async () => {
      const published = await api.post('/v1/algorithms/alice/Sleepy/versions', {
        key: alice.key,
        body: { version_info: { version_type: 'major' } },
      });
      assert.equal(published.status, 200, published.text);
      const version = published.body.version_info.semantic_version as string;
      // The next publish, killed while in flight (it needs a new build to have anything to publish).
      const sha = await commit({ 'src/extra.py': 'X = 1\n' }, 'next');
      assert.equal((await git(['push', '-q', '-o', 'wait', 'origin', 'HEAD:main'], clone)).code, 0);
      acknowledged.push(sha);
      const inFlight = api
        .post('/v1/algorithms/alice/Sleepy/versions', { key: alice.key, body: { version_info: { version_type: 'minor' } } })
        .catch(() => undefined);
      await new Promise((r) => setImmediate(r));
      await restart();
      await inFlight;
      const versions = (await api.get('/v1/algorithms/alice/Sleepy/versions', { key: alice.key })).body.results as {
        version_info: { semantic_version: string; git_hash: string };
      }[];
      const names = versions.map((v) => v.version_info.semantic_version);
      assert.ok(names.includes(version), `the acknowledged ${version} is listed: ${names.join(', ')}`);
      for (const v of versions) {
        const dir = path.join(work, `v-${v.version_info.semantic_version}-${crypto.randomUUID()}`);
        const cloned = await git([
          'clone',
          '-q',
          gitUrl(srv.url, alice.name, alice.key, 'alice', 'Sleepy', v.version_info.semantic_version),
          dir,
        ]);
        assert.equal(cloned.code, 0, cloned.stderr);
        assert.equal((await git(['rev-parse', 'HEAD'], dir)).stdout.trim(), v.version_info.git_hash);
        const call = await request(srv.url, 'POST', `/v1/algo/alice/Sleepy/${v.version_info.semantic_version}`, {
          key: alice.key,
          body: { v: 1 },
        });
        assert.deepEqual(call.body.result, { v: 1 }, call.text);
      }
      // Publishing goes on from there.
      const next = await api.post('/v1/algorithms/alice/Sleepy/versions', {
        key: alice.key,
        body: { version_info: { version_type: 'minor' } },
      });
      assert.ok(next.status === 200 || (next.status === 400 && next.body.error?.code === 1007), next.text);
      await fsckAll();
    });

    test('during an async call: after the restart it ends as a SystemExit saying the service restarted', async () => {
      const res = await request(srv.url, 'POST', `/v1/algo/alice/Sleepy/${acknowledged.at(-1)}?output=void`, {
        key: alice.key,
        body: { sleep: 120 },
      });
      assert.equal(res.status, 200, res.text);
      const id = res.body.request_id as string;
      const state = async () => (await api.get(`/v1/algo/requests/${id}`, { key: alice.key })).body;
      assert.equal((await state()).status, 'running');
      await restart();
      let after = await state();
      for (let i = 0; i < 200 && after.status !== 'completed'; i++) {
        await new Promise((r) => setTimeout(r, 50));
        after = await state();
      }
      assert.equal(after.status, 'completed', JSON.stringify(after));
      assert.equal(after.error?.error_type, 'SystemExit', JSON.stringify(after));
      assert.match(after.error.message, /the service restarted while this call was running/);
      // The algorithm itself still answers.
      const call = await request(srv.url, 'POST', `/v1/algo/alice/Sleepy/${acknowledged.at(-1)}`, { key: alice.key, body: { ok: 1 } });
      assert.deepEqual(call.body.result, { ok: 1 }, call.text);
    });

    test('at the end: every acknowledged commit is in the repository, fsck passes, no build is running', async () => {
      const repoDir = path.join(srv.dataDir, 'repositories');
      const repo = fs.readdirSync(repoDir).find((r) => r.endsWith('.git'))!;
      for (const sha of acknowledged) {
        assert.equal((await git(['cat-file', '-e', `${sha}^{commit}`], path.join(repoDir, repo))).code, 0, sha);
      }
      await fsckAll();
      await noBuildRunning();
    });
  });
