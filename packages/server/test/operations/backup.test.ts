/**
 * Issue 17, "Backups": `algohost backup <dir>` snapshots a running node while calls and uploads
 * go on; `algohost restore <dir>` brings it back on a new data directory, where every algorithm
 * answers, every version clones at its commit and every hosted file reads back identical.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { createAndBuild } from '../support/algorithms.js';
import { cleanEnv, REPO_ROOT, removeDataDir, startChildServer, type ChildServer } from '../support/child-server.js';
import { createUser, type TestUser } from '../support/fixtures.js';
import { git, gitUrl } from '../support/git.js';
import { client, request, type Client } from '../support/http.js';
import { createPostgresDatabase, DATABASES, makeTempDir } from '../support/server.js';
import { serverEntryArgs } from '../support/server-entry.js';

const exec = promisify(execFile);

/** Runs `algohost <args>` (the server's entry point) with the given settings. */
async function algohost(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [...serverEntryArgs(), ...args], { cwd: REPO_ROOT, env: cleanEnv(env) });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

for (const database of DATABASES) {
  describe(`backup of a running node and restore on a new data directory (${database})`, () => {
    let srv: ChildServer;
    let restored: ChildServer | undefined;
    let api: Client;
    let alice: TestUser;
    let work: string;
    const algorithms: { name: string; sha: string }[] = [];
    let version: { name: string; sha: string };
    const files = new Map<string, Buffer>();
    /** With PostgreSQL: the node's database and the empty one the backup is restored into. */
    const pg: { url: string; drop: () => Promise<void> }[] = [];
    const dbEnv = (i: number): Record<string, string> => (database === 'postgres' ? { ALGOHOST_DATABASE_URL: pg[i]!.url } : {});

    before(async () => {
      work = await makeTempDir('algohost-backup-');
      if (database === 'postgres') pg.push(await createPostgresDatabase(), await createPostgresDatabase());
      srv = await startChildServer({ env: dbEnv(0) });
      api = client(srv.url);
      alice = await createUser(api, srv.adminKey, 'alice');
      for (const name of ['Echo', 'Other']) {
        const tree = path.join(work, name);
        fs.mkdirSync(path.join(tree, 'src'), { recursive: true });
        fs.writeFileSync(path.join(tree, 'requirements.txt'), '');
        fs.writeFileSync(path.join(tree, 'src', `${name}.py`), `def apply(input):\n    return {"${name}": input}\n`);
        const sha = await createAndBuild(srv.url, api, alice, 'alice', name, tree, { environment: 'python311' });
        algorithms.push({ name, sha });
      }
      const published = await api.post('/v1/algorithms/alice/Echo/versions', {
        key: alice.key,
        body: { version_info: { version_type: 'major' } },
      });
      assert.equal(published.status, 200, published.text);
      version = { name: published.body.version_info.semantic_version, sha: published.body.version_info.git_hash };
      assert.equal((await api.post('/v1/data/alice', { key: alice.key, body: { name: 'things' } })).status, 200);
      for (let i = 0; i < 5; i++) {
        const content = crypto.randomBytes(256 * 1024 + i);
        const put = await request(srv.url, 'PUT', `/v1/data/alice/things/f${i}.bin`, { key: alice.key, raw: content });
        assert.equal(put.status, 200, put.text);
        files.set(`f${i}.bin`, content);
      }
    });
    after(async () => {
      await restored?.stop();
      await srv?.stop();
      if (restored) await removeDataDir(restored.dataDir);
      if (srv) await removeDataDir(srv.dataDir);
      await fs.promises.rm(work, { recursive: true, force: true });
      for (const db of pg) await db.drop();
    });

    test('a target another local user may read, or may have planted, is refused and stays empty', async () => {
      const open = path.join(work, 'open');
      fs.mkdirSync(open, { mode: 0o755 });
      fs.chmodSync(open, 0o755);
      const groupReadable = path.join(work, 'group');
      fs.mkdirSync(groupReadable);
      fs.chmodSync(groupReadable, 0o750);
      const planted = path.join(work, 'planted');
      fs.mkdirSync(planted, { mode: 0o700 });
      fs.chownSync(planted, 65534, 65534);
      const linked = path.join(work, 'linked');
      const linkTarget = path.join(work, 'link-target');
      fs.mkdirSync(linkTarget, { mode: 0o700 });
      fs.symlinkSync(linkTarget, linked);
      for (const [target, why] of [
        [open, /may be read by its group or others \(mode 0755\).*chmod 700 it/],
        [groupReadable, /may be read by its group or others \(mode 0750\)/],
        [planted, /belongs to uid 65534, not to this service's uid/],
        [linked, /is a symbolic link/],
      ] as const) {
        const res = await algohost(['backup', target], srv.env);
        assert.equal(res.code, 1, `${target}: ${res.stdout}`);
        assert.match(res.stderr, why);
        assert.deepEqual(fs.readdirSync(target), [], `nothing was written into ${target}`);
      }
      assert.deepEqual(fs.readdirSync(linkTarget), []);
      // A new target (and its missing parents) is created 0700 and takes the backup.
      const fresh = path.join(work, 'new-parent', 'fresh');
      const ok = await algohost(['backup', fresh], srv.env);
      assert.equal(ok.code, 0, ok.stderr);
      assert.equal(fs.statSync(fresh).mode & 0o777, 0o700);
      assert.equal(fs.statSync(path.dirname(fresh)).mode & 0o777, 0o700);
      // alice's algorithm still answers her on the node that was backed up.
      const res = await request<{ result?: unknown }>(srv.url, 'POST', `/v1/algo/alice/Echo/${version.name}`, {
        key: alice.key,
        body: 'me',
      });
      assert.deepEqual(res.body.result, { Echo: 'me' }, res.text);
    });

    test('backup while calls and uploads run; restore elsewhere; everything answers, clones and reads back', async () => {
      // Traffic during the backup: calls, and uploads of a file of its own (whichever upload the
      // snapshot caught, the restored file must be one of them, whole).
      let stop = false;
      const uploaded: Buffer[] = [];
      const traffic = (async () => {
        let n = 0;
        while (!stop) {
          const res = await request<{ result?: unknown }>(srv.url, 'POST', `/v1/algo/alice/Echo/${version.name}`, {
            key: alice.key,
            body: { n },
          });
          assert.deepEqual(res.body.result, { Echo: { n } }, res.text);
          const content = crypto.randomBytes(64 * 1024);
          uploaded.push(content);
          assert.equal((await request(srv.url, 'PUT', '/v1/data/alice/things/busy.bin', { key: alice.key, raw: content })).status, 200);
          n++;
        }
        return n;
      })();
      const dir = path.join(work, 'snapshot');
      const backedUp = await algohost(['backup', dir], srv.env);
      stop = true;
      assert.ok((await traffic) > 0);
      assert.equal(backedUp.code, 0, backedUp.stderr);
      assert.match(backedUp.stdout, new RegExp(`Backed up 2 repositories and \\d+ hosted files \\(${database}, `));

      // Issue 36, item 10: the snapshot holds the session signing secret and every tenant's data,
      // so no other local user may read it: the target 0700, the database copy and keys 0600.
      const mode = (p: string) => fs.statSync(p).mode & 0o777;
      assert.equal(mode(dir), 0o700, 'the target');
      const dbFile = path.join(dir, database === 'postgres' ? 'database.sql' : 'algohost.sqlite');
      assert.equal(mode(dbFile), 0o600, 'the database copy');
      for (const key of ['cluster-key', 'initial-admin-key', 'backup.json']) {
        if (fs.existsSync(path.join(dir, key))) assert.equal(mode(path.join(dir, key)), 0o600, key);
      }
      // Played as another local user (uid 65534): neither the directory nor the file opens.
      for (const args of [
        ['cat', dbFile],
        ['ls', dir],
      ]) {
        const other = await exec('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', '--', ...args]).then(
          () => 'read',
          (err: { stderr?: string }) => err.stderr ?? '',
        );
        assert.match(other, /Permission denied/, `${args.join(' ')} as uid 65534`);
      }

      // A backup never overwrites anything: the same target again is refused.
      const again = await algohost(['backup', dir], srv.env);
      assert.equal(again.code, 1);
      assert.match(again.stderr, /the backup target .* is not empty/);

      // Restore on a new data directory, then start a node there.
      // Directly under the temporary directory: the sandbox user must reach the data directory.
      const newData = await makeTempDir('algohost-restored-');
      const env = { ...srv.env, ...dbEnv(1), ALGOHOST_DATA_DIR: newData, ALGOHOST_PORT: '0' };
      const back = await algohost(['restore', dir], env);
      assert.equal(back.code, 0, back.stderr);
      assert.match(back.stdout, /Restored 2 repositories/);
      restored = await startChildServer({ dataDir: newData, adminKey: srv.adminKey, env: dbEnv(1) });
      await srv.stop();
      const node = restored;
      const rapi = client(node.url);

      for (const a of algorithms) {
        const res = await request<{ result?: unknown }>(node.url, 'POST', `/v1/algo/alice/${a.name}/${a.sha}`, {
          key: alice.key,
          body: 'back',
        });
        assert.deepEqual(res.body.result, { [a.name]: 'back' }, res.text);
        const dirA = path.join(work, `clone-${a.name}`);
        const cloned = await git(['clone', '-q', gitUrl(node.url, alice.name, alice.key, 'alice', a.name), dirA]);
        assert.equal(cloned.code, 0, cloned.stderr);
        assert.equal((await git(['rev-parse', 'HEAD'], dirA)).stdout.trim(), a.sha);
        assert.equal((await git(['fsck', '--strict'], dirA)).code, 0);
      }
      const called = await request(node.url, 'POST', `/v1/algo/alice/Echo/${version.name}`, { key: alice.key, body: 'v' });
      assert.deepEqual(called.body.result, { Echo: 'v' }, called.text);
      const dirV = path.join(work, 'clone-version');
      const clonedV = await git(['clone', '-q', gitUrl(node.url, alice.name, alice.key, 'alice', 'Echo', version.name), dirV]);
      assert.equal(clonedV.code, 0, clonedV.stderr);
      assert.equal((await git(['rev-parse', 'HEAD'], dirV)).stdout.trim(), version.sha);

      const read = async (name: string) => {
        const res = await fetch(`${node.url}/v1/data/alice/things/${name}`, { headers: { authorization: `Simple ${alice.key}` } });
        assert.equal(res.status, 200, name);
        return Buffer.from(await res.arrayBuffer());
      };
      for (const [name, content] of files) assert.ok((await read(name)).equals(content), `${name} reads back identical`);
      const busy = await read('busy.bin');
      assert.ok(
        uploaded.some((u) => u.equals(busy)),
        'the file being replaced during the backup is one of its uploads, whole',
      );
      // The restored node takes new work: a push builds, an upload lands.
      const more = await request(node.url, 'PUT', '/v1/data/alice/things/new.bin', { key: alice.key, raw: 'new' });
      assert.equal(more.status, 200, more.text);
      const builds = await rapi.get('/v1/algorithms/alice/Echo/builds', { key: alice.key });
      assert.ok(
        (builds.body.results as { status: string }[]).every((b) => b.status === 'succeeded'),
        builds.text,
      );
    });

    test('restore refuses a data directory in use and a directory that is not a complete backup', async () => {
      const notBackup = await makeTempDir('algohost-not-backup-');
      try {
        const res = await algohost(['restore', notBackup], { ...srv.env, ALGOHOST_DATA_DIR: path.join(work, 'x') });
        assert.equal(res.code, 1);
        assert.match(res.stderr, /holds no complete backup \(no backup\.json\)/);
        const used = await algohost(['restore', path.join(work, 'snapshot')], {
          ...srv.env,
          ...dbEnv(1),
          ALGOHOST_DATA_DIR: restored!.dataDir,
        });
        assert.equal(used.code, 1);
        assert.match(used.stderr, /the restore target .* is not empty/);
      } finally {
        await fs.promises.rm(notBackup, { recursive: true, force: true });
      }
    });
  });
}
