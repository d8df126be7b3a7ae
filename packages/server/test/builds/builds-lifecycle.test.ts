import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createUser, type TestUser } from '../support/fixtures.js';
import { announcedBuildId, clone, commitAndPush, git, gitUrl, removeClone } from '../support/git.js';
import { client, type Client } from '../support/http.js';
import { DATABASES, startTestServer, type TestServer } from '../support/server.js';

/** A Python module that takes the byte-compiler seconds: a real, slow build step. */
function writeSlowModule(dir: string, functions: number): void {
  const lines: string[] = [];
  for (let i = 0; i < functions; i++) lines.push(`def f${i}(x):\n    return x + ${i}\n`);
  fs.writeFileSync(path.join(dir, 'src', 'slow.py'), lines.join(''));
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 600; i++) {
    const v = await probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`gave up waiting for ${what}`);
}

for (const database of DATABASES) {
  describe(`build lifecycle (${database})`, () => {
    let srv: TestServer;
    let api: Client;
    let alice: TestUser;
    const clones: string[] = [];

    const newAlgorithm = async (name: string) => {
      assert.equal((await api.post('/v1/algorithms/alice', { key: alice.key, body: { name } })).status, 200);
      const c = await clone(gitUrl(srv.url, 'alice', alice.key, 'alice', name));
      assert.equal(c.result.code, 0, c.result.stderr);
      clones.push(c.dir);
      return c.dir;
    };
    const build = async (name: string, id: string) => (await api.get(`/v1/algorithms/alice/${name}/builds/${id}`, { key: alice.key })).body;

    before(async () => {
      srv = await startTestServer({ database, env: { ALGOHOST_BUILD_CONCURRENCY: '2' } });
      api = client(srv.url);
      alice = await createUser(api, srv.adminKey, 'alice');
    });
    after(async () => {
      for (const d of clones) await removeClone(d);
      await srv.stop();
    });

    test('compile builds the head again and answers with the outcome and log', async () => {
      const dir = await newAlgorithm('Compiled');
      const head = (await git(['rev-parse', 'HEAD'], dir)).stdout.trim();
      const res = await api.post('/v1/algorithms/alice/Compiled/compile', { key: alice.key, body: {} });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.version_info.git_hash, head);
      assert.equal(res.body.compilation.successful, true);
      assert.match(res.body.compilation.output, /Build succeeded/);
      assert.equal(res.body.build.status, 'succeeded');
      assert.equal(res.body.resource_type, 'algorithm');
      const other = await createUser(api, srv.adminKey, 'mallory');
      assert.equal((await api.post('/v1/algorithms/alice/Compiled/compile', { key: other.key, body: {} })).status, 404);
    });

    test('logs are 404 until the build finishes; the SSE stream follows it live', async () => {
      const dir = await newAlgorithm('Streamed');
      writeSlowModule(dir, 60000);
      const push = await commitAndPush(dir, 'slow');
      const id = announcedBuildId(push.stderr)!;
      const early = await api.get(`/v1/algorithms/alice/Streamed/builds/${id}/logs`, { key: alice.key });
      if ((await build('Streamed', id)).status !== 'succeeded') {
        assert.equal(early.status, 404);
        assert.equal(early.body.error.code, 1011);
      }
      const res = await fetch(`${srv.url}/v1/algorithms/alice/Streamed/builds/${id}/logs/stream`, {
        headers: { authorization: alice.key },
      });
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /text\/event-stream/);
      const text = await res.text();
      assert.match(text, /event: log/);
      const finished = /event: finished\ndata: (.*)\n/.exec(text);
      assert.ok(finished, text.slice(-500));
      assert.equal(JSON.parse(finished[1]!).status, 'succeeded');
      const logs = await api.get(`/v1/algorithms/alice/Streamed/builds/${id}/logs`, { key: alice.key });
      assert.equal(logs.status, 200);
      assert.match(logs.body.logs, /byte-compile/);
    });

    test("one algorithm's builds run in push order, never at the same time", async () => {
      const dir = await newAlgorithm('Ordered');
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        writeSlowModule(dir, 20000 + i);
        ids.push(announcedBuildId((await commitAndPush(dir, `commit ${i}`)).stderr)!);
      }
      const done = await waitFor('three builds', async () => {
        const all = await Promise.all(ids.map((id) => build('Ordered', id)));
        return all.every((b) => b.status === 'succeeded' || b.status === 'failed') ? all : undefined;
      });
      for (let i = 1; i < done.length; i++) {
        assert.ok(done[i].started_at >= done[i - 1].finished_at, `build ${i} started before build ${i - 1} finished`);
      }
      assert.ok(done.every((b) => b.status === 'succeeded'));
    });

    test('a build running at shutdown and builds still queued are built after the restart', async () => {
      const dir = await newAlgorithm('Restarted');
      writeSlowModule(dir, 80000);
      const first = announcedBuildId((await commitAndPush(dir, 'slow')).stderr)!;
      fs.appendFileSync(path.join(dir, 'src', 'Restarted.py'), '\n# second\n');
      const second = announcedBuildId((await commitAndPush(dir, 'queued behind')).stderr)!;
      await waitFor('the first build to start', async () =>
        (await build('Restarted', first)).status === 'in-progress' ? true : undefined,
      );
      srv = await srv.restart();
      api = client(srv.url);
      const results = await waitFor('both builds', async () => {
        const all = [await build('Restarted', first), await build('Restarted', second)];
        return all.every((b) => b.status === 'succeeded' || b.status === 'failed') ? all : undefined;
      });
      assert.deepEqual(
        results.map((b) => b.status),
        ['succeeded', 'succeeded'],
      );
    });

    test('a build left in progress by a crash is retried once, then marked failed', async () => {
      const dir = await newAlgorithm('Crashed');
      const id = announcedBuildId((await commitAndPush(dir, 'c', { wait: true })).stderr)!;
      const db = srv.server.services.db;
      await db.updateTable('builds').set({ status: 'in-progress', attempt: 1, finished_at: null }).where('id', '=', id).execute();
      srv = await srv.restart();
      api = client(srv.url);
      const retried = await waitFor('the retry', async () => {
        const b = await build('Crashed', id);
        return b.status === 'succeeded' || b.status === 'failed' ? b : undefined;
      });
      assert.equal(retried.status, 'succeeded');
      const logs = await api.get(`/v1/algorithms/alice/Crashed/builds/${id}/logs`, { key: alice.key });
      assert.match(logs.body.logs, /retried/);

      await srv.server.services.db
        .updateTable('builds')
        .set({ status: 'in-progress', attempt: 2, finished_at: null })
        .where('id', '=', id)
        .execute();
      srv = await srv.restart();
      api = client(srv.url);
      const failed = await build('Crashed', id);
      assert.equal(failed.status, 'failed');
      assert.match(failed.error, /interrupted/);
    });
  });
}

describe('build time limit', () => {
  let srv: TestServer;
  before(async () => {
    srv = await startTestServer({ env: { ALGOHOST_BUILD_TIMEOUT: '2' } });
  });
  after(() => srv.stop());

  test('a build over its time limit fails and says so', async () => {
    const api = client(srv.url);
    const alice = await createUser(api, srv.adminKey, 'alice');
    await api.post('/v1/algorithms/alice', { key: alice.key, body: { name: 'Slow' } });
    const { dir } = await clone(gitUrl(srv.url, 'alice', alice.key, 'alice', 'Slow'));
    try {
      writeSlowModule(dir, 600000);
      const push = await commitAndPush(dir, 'too slow', { wait: true });
      assert.match(push.stderr, /failed: the build exceeded its time limit of 2 s/);
    } finally {
      await removeClone(dir);
    }
  });
});
