/**
 * Publishing versions (docs/compatibility.md §3), calls by version (docs/compatibility.md §2) and versioned Git addresses
 * (docs/compatibility.md §9.3), on each database.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { environmentId } from '../support/algorithms.js';
import { assertError } from '../support/assertions.js';
import { createUser, type TestUser } from '../support/fixtures.js';
import { announcedBuildId, clone, commitAndPush, git, gitUrl, removeClone } from '../support/git.js';
import { client, request, type Client } from '../support/http.js';
import { DATABASES, makeTempDir, startTestServer, type TestServer } from '../support/server.js';

for (const database of DATABASES) {
  describe(`publishing and calling versions (${database})`, () => {
    let srv: TestServer;
    let api: Client;
    let alice: TestUser;
    let bob: TestUser;
    let work: string;
    const commits: Record<string, string> = {};

    /** Replaces the algorithm's code with one answering `label`, pushes, waits for the build. */
    async function pushLabel(label: string): Promise<string> {
      fs.writeFileSync(path.join(work, 'src', 'Ver.py'), `def apply(input):\n    return ${JSON.stringify(label)}\n`);
      const push = await commitAndPush(work, label, { wait: true });
      const id = announcedBuildId(push.stderr);
      assert.match(push.stderr, new RegExp(`build ${id} succeeded`), push.stderr);
      const sha = (await git(['rev-parse', 'HEAD'], work)).stdout.trim();
      commits[label] = sha;
      return sha;
    }
    const publish = (body: unknown, user = alice, suffix = 'versions') =>
      api.post(`/v1/algorithms/alice/Ver/${suffix}`, { key: user.key, body: body as Record<string, unknown> });
    const call = (user: TestUser, version = '') =>
      request(srv.url, 'POST', `/v1/algo/alice/Ver${version ? `/${version}` : ''}`, { key: user.key, body: null });

    before(async () => {
      srv = await startTestServer({ database });
      api = client(srv.url);
      alice = await createUser(api, srv.adminKey, 'alice');
      bob = await createUser(api, srv.adminKey, 'bob');
      const env = await environmentId(api, alice.key, 'python311');
      const created = await api.post('/v1/algorithms/alice', {
        key: alice.key,
        body: { name: 'Ver', settings: { algorithm_environment: env } },
      });
      assert.equal(created.status, 200, created.text);
      ({ dir: work } = await clone(gitUrl(srv.url, 'alice', alice.key, 'alice', 'Ver')));
      fs.writeFileSync(path.join(work, 'requirements.txt'), '');
    });
    after(async () => {
      await removeClone(work);
      await srv.stop();
    });

    test('publishing with no successful build is error 1007 with a message', async () => {
      const res = await publish({});
      assertError(res, 409, 1007);
      assert.match(res.body.error.message, /no successful build to publish/);
    });

    test('a first publish takes the latest successful build as 0.1.0 (minor by default) and tags its commit', async () => {
      const sha = await pushLabel('v1');
      const res = await publish({});
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.version_info.semantic_version, '0.1.0');
      assert.equal(res.body.version_info.git_hash, sha);
      assert.match(res.body.version_info.version_uuid, /^[0-9a-f-]{36}$/);
      assert.equal(res.body.settings.algorithm_callability, 'private');
      assert.equal(res.body.build.commit_sha, sha);
      const tags = await git(['ls-remote', '--tags', 'origin'], work);
      assert.match(tags.stdout, new RegExp(`^${sha}\\trefs/tags/v0\\.1\\.0$`, 'm'));
    });

    test('a retried identical publish returns the same version; a different one is 1007', async () => {
      const first = await publish({});
      assert.equal(first.status, 200, first.text);
      assert.equal(first.body.version_info.semantic_version, '0.1.0');
      const other = await publish({ version_info: { version_type: 'major' } });
      assertError(other, 409, 1007);
      assert.match(other.body.error.message, /already published as 0\.1\.0/);
    });

    test('a private version: the owner reaches it by number and latestPrivate, others not at all', async () => {
      assert.equal((await call(alice, '0.1.0')).body.result, 'v1');
      assert.equal((await call(alice, 'latestPrivate')).body.result, 'v1');
      const latest = await call(alice);
      assertError(latest, 404, 1001);
      assert.match(latest.body.error.message, /no public version/);
      assertError(await call(bob, '0.1.0'), 404, 1001);
      assertError(await call(bob), 404, 1001);
    });

    test('a public major version: callable by everyone at latest, ranges and its number', async () => {
      const sha = await pushLabel('v2');
      const res = await publish({
        version_info: { version_type: 'major', release_notes: 'Second', sample_input: '"x"', sample_output: { a: 1 } },
        settings: { algorithm_callability: 'public' },
        details: { summary: 'Returns its version' },
      });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.version_info.semantic_version, '1.0.0');
      assert.equal(res.body.version_info.release_notes, 'Second');
      assert.equal(res.body.version_info.sample_output, '{"a":1}');
      assert.equal(res.body.settings.algorithm_callability, 'public');
      assert.equal(res.body.details.summary, 'Returns its version');
      for (const v of ['', 'latest', '1.0.0', '1.0.*', '1.*', '1', '1.0', 'latestPrivate']) {
        const r = await call(bob, v);
        assert.equal(r.status, 200, `${v}: ${r.text}`);
        assert.equal(r.body.result, 'v2', v);
        assert.equal(r.body.metadata.algorithm_version, '1.0.0');
      }
      // Ranges never resolve to private versions; commits are for the owner and members.
      assertError(await call(bob, '0.*'), 404, 1001);
      assertError(await call(alice, '0.*'), 404, 1001);
      assertError(await call(bob, sha), 403, 2001);
      assert.equal((await call(alice, commits.v1)).body.result, 'v1');
      assertError(await call(bob, 'not-a-version'), 400);
    });

    test('a private revision: latest stays at the newest public version; /version (singular) also publishes', async () => {
      await pushLabel('v3');
      const res = await publish({ version_info: { type: 'revision' }, settings: { algorithm_callability: 'private' } }, alice, 'version');
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.version_info.semantic_version, '1.0.1');
      assert.equal((await call(bob)).body.result, 'v2');
      assert.equal((await call(bob, '1.0.*')).body.result, 'v2');
      assert.equal((await call(bob, 'latestPrivate')).body.result, 'v2');
      assertError(await call(bob, '1.0.1'), 404, 1001);
      assert.equal((await call(alice, 'latestPrivate')).body.result, 'v3');
      assert.equal((await call(alice, '1.0.1')).body.result, 'v3');
    });

    test('making the algorithm private hides its public versions at once; public again shows them', async () => {
      assert.equal((await call(bob)).body.result, 'v2');
      const hide = await api.put('/v1/algorithms/alice/Ver', { key: alice.key, body: { settings: { algorithm_callability: 'private' } } });
      assert.equal(hide.status, 200, hide.text);
      assertError(await call(bob), 404, 1001);
      const show = await api.put('/v1/algorithms/alice/Ver', { key: alice.key, body: { settings: { algorithm_callability: 'public' } } });
      assert.equal(show.status, 200, show.text);
      assert.equal((await call(bob)).body.result, 'v2');
    });

    test('others cannot publish; bad version types are refused', async () => {
      assertError(await publish({}, bob), 404, 1001);
      const bad = await publish({ version_info: { version_type: 'huge' } });
      assertError(bad, 400);
      assert.match(bad.body.error.message, /major, minor, revision, patch/);
    });

    test('versions list: highest first, paged, filtered; non-members see public versions only', async () => {
      const first = await api.get('/v1/algorithms/alice/Ver/versions?limit=2', { key: alice.key });
      assert.equal(first.status, 200, first.text);
      assert.deepEqual(
        first.body.results.map((v: { version_info: { semantic_version: string } }) => v.version_info.semantic_version),
        ['1.0.1', '1.0.0'],
      );
      assert.ok(first.body.marker);
      const second = await api.get(`/v1/algorithms/alice/Ver/versions?limit=2&marker=${first.body.marker}`, { key: alice.key });
      assert.deepEqual(
        second.body.results.map((v: { version_info: { semantic_version: string } }) => v.version_info.semantic_version),
        ['0.1.0'],
      );
      assert.equal(second.body.marker, null);
      const priv = await api.get('/v1/algorithms/alice/Ver/versions?callable=false', { key: alice.key });
      assert.deepEqual(
        priv.body.results.map((v: { version_info: { semantic_version: string } }) => v.version_info.semantic_version),
        ['1.0.1', '0.1.0'],
      );
      const pub = await api.get('/v1/algorithms/alice/Ver/versions?callable=True', { key: bob.key });
      assert.deepEqual(
        pub.body.results.map((v: { version_info: { semantic_version: string } }) => v.version_info.semantic_version),
        ['1.0.0'],
      );
      const bobAll = await api.get('/v1/algorithms/alice/Ver/versions', { key: bob.key });
      assert.equal(bobAll.body.results.length, 1);
      assertError(await api.get('/v1/algorithms/alice/Ver/versions?published=maybe', { key: alice.key }), 400);
    });

    test('a version by git hash; builds not yet published are listed with published=false for members', async () => {
      const one = await api.get(`/v1/algorithms/alice/Ver/versions/${commits.v2}`, { key: bob.key });
      assert.equal(one.status, 200, one.text);
      assert.equal(one.body.version_info.semantic_version, '1.0.0');
      assertError(await api.get(`/v1/algorithms/alice/Ver/versions/${commits.v3}`, { key: bob.key }), 404, 1001);
      const sha4 = await pushLabel('v4');
      const unpublished = await api.get('/v1/algorithms/alice/Ver/versions?published=false', { key: alice.key });
      assert.deepEqual(
        unpublished.body.results.map((v: { version_info: { git_hash: string; semantic_version?: string } }) => v.version_info),
        [{ git_hash: sha4 }],
      );
      assert.deepEqual((await api.get('/v1/algorithms/alice/Ver/versions?published=false', { key: bob.key })).body.results, []);
      const build = await api.get(`/v1/algorithms/alice/Ver/versions/${sha4}`, { key: alice.key });
      assert.equal(build.body.version_info.semantic_version, undefined);
      assert.equal(build.body.build.status, 'succeeded');
    });

    test('concurrent identical publishes publish once', async () => {
      const [a, b] = await Promise.all([
        publish({ version_info: { version_type: 'minor' } }),
        publish({ version_info: { version_type: 'minor' } }),
      ]);
      assert.equal(a.status, 200, a.text);
      assert.equal(b.status, 200, b.text);
      assert.equal(a.body.version_info.version_uuid, b.body.version_info.version_uuid);
      assert.equal(a.body.version_info.semantic_version, '1.1.0');
      const all = await api.get('/v1/algorithms/alice/Ver/versions', { key: alice.key });
      assert.equal(all.body.results.length, 4);
    });

    test('the algorithm object shows its latest version and build', async () => {
      const res = await api.get('/v1/algorithms/alice/Ver', { key: alice.key });
      assert.equal(res.body.version_info.semantic_version, '1.1.0');
      assert.equal(res.body.version_info.git_hash, commits.v4);
      assert.equal(res.body.build.commit_sha, commits.v4);
      assert.equal(res.body.build.status, 'succeeded');
    });

    test('Git: a versioned address clones exactly that version and refuses pushes', async () => {
      const { dir } = await clone(gitUrl(srv.url, 'alice', alice.key, 'alice', 'Ver', '0.1.0'));
      try {
        assert.equal((await git(['rev-parse', 'HEAD'], dir)).stdout.trim(), commits.v1);
        assert.match(fs.readFileSync(path.join(dir, 'src', 'Ver.py'), 'utf8'), /"v1"/);
        fs.writeFileSync(path.join(dir, 'extra.txt'), 'x');
        await git(['add', '-A'], dir);
        await git(['commit', '-q', '-m', 'try'], dir);
        const push = await git(['push', 'origin', 'HEAD:main'], dir);
        assert.notEqual(push.code, 0);
        assert.match(push.stderr, /read-only; push to \/git\/alice\/Ver\.git/);
      } finally {
        await removeClone(dir);
      }
      const parent = await makeTempDir('algohost-clone-');
      const missing = await git(['clone', '-q', gitUrl(srv.url, 'alice', alice.key, 'alice', 'Ver', '9.9.9'), path.join(parent, 'x')]);
      assert.notEqual(missing.code, 0);
      assert.match(missing.stderr, /version 9\.9\.9 of alice\/Ver is not published/);
      await fs.promises.rm(parent, { recursive: true, force: true });
    });
  });
}

describe('a new build and publish while a call is in flight', () => {
  let srv: TestServer;
  let api: Client;
  let alice: TestUser;
  let work: string;

  async function pushAndPublish(label: string): Promise<void> {
    fs.writeFileSync(
      path.join(work, 'src', 'Slow.py'),
      `import time\n\ndef apply(input):\n    if input == "slow":\n        time.sleep(8)\n    return ${JSON.stringify(label)}\n`,
    );
    const push = await commitAndPush(work, label, { wait: true });
    assert.match(push.stderr, /succeeded/, push.stderr);
    const published = await api.post('/v1/algorithms/alice/Slow/versions', { key: alice.key, body: {} });
    assert.equal(published.status, 200, published.text);
  }

  before(async () => {
    srv = await startTestServer();
    api = client(srv.url);
    alice = await createUser(api, srv.adminKey, 'alice');
    const env = await environmentId(api, alice.key, 'python311');
    const created = await api.post('/v1/algorithms/alice', {
      key: alice.key,
      body: { name: 'Slow', settings: { algorithm_environment: env } },
    });
    assert.equal(created.status, 200, created.text);
    ({ dir: work } = await clone(gitUrl(srv.url, 'alice', alice.key, 'alice', 'Slow')));
    fs.writeFileSync(path.join(work, 'requirements.txt'), '');
    await pushAndPublish('v1');
  });
  after(async () => {
    await removeClone(work);
    await srv.stop();
  });

  test('the call in flight finishes on the old version; the next call runs the new one', async () => {
    const call = (input: string) => request(srv.url, 'POST', '/v1/algo/alice/Slow/latestPrivate', { key: alice.key, body: input });
    assert.equal((await call('warm')).body.result, 'v1');
    let slowDoneAt = 0;
    const slow = call('slow').then((res) => {
      slowDoneAt = Date.now();
      return res;
    });
    await pushAndPublish('v2');
    const publishedAt = Date.now();
    const next = await call('fast');
    assert.equal(next.body.result, 'v2');
    const inFlight = await slow;
    assert.equal(inFlight.status, 200, inFlight.text);
    assert.equal(inFlight.body.result, 'v1');
    // The slow call was still running when the new version was published and called.
    assert.ok(slowDoneAt > publishedAt, 'the slow call outlived the publish');
  });
});
