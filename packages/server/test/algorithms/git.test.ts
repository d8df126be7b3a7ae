import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { createOrganization, createUser, type TestUser } from '../support/fixtures.js';
import { addMember } from '../support/organizations.js';
import { announcedBuildId, clone, commitAndPush, git, gitUrl, removeClone } from '../support/git.js';
import { client, type Client } from '../support/http.js';
import { rawRequest } from '../support/data.js';
import { startTestServer, type TestServer } from '../support/server.js';

describe('Git smart HTTP', () => {
  let srv: TestServer;
  let api: Client;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  const clones: string[] = [];

  const cloneAs = async (user: string, key: string, owner: string, name: string, version?: string) => {
    const c = await clone(gitUrl(srv.url, user, key, owner, name, version));
    clones.push(c.dir);
    return c;
  };

  before(async () => {
    srv = await startTestServer();
    api = client(srv.url);
    alice = await createUser(api, srv.adminKey, 'alice');
    bob = await createUser(api, srv.adminKey, 'bob');
    carol = await createUser(api, srv.adminKey, 'carol');
    assert.equal((await api.post('/v1/algorithms/alice', { key: alice.key, body: { name: 'Hello' } })).status, 200);
    await createOrganization(api, alice.key, 'acme');
    await addMember(api, 'acme', alice.key, bob);
    assert.equal((await api.post('/v1/algorithms/acme', { key: alice.key, body: { name: 'Shared' } })).status, 200);
  });
  after(async () => {
    for (const dir of clones) await removeClone(dir);
    await srv.stop();
  });

  test('the owner clones the template, pushes, and the push announces a build', async () => {
    const { dir, result } = await cloneAs('alice', alice.key, 'alice', 'Hello');
    assert.equal(result.code, 0, result.stderr);
    assert.ok(fs.existsSync(path.join(dir, 'src', 'Hello.py')));
    fs.appendFileSync(path.join(dir, 'src', 'Hello.py'), '\n# edited\n');
    const push = await commitAndPush(dir, 'edit');
    assert.equal(push.code, 0, push.stderr);
    const buildId = announcedBuildId(push.stderr);
    assert.ok(buildId, push.stderr);
    assert.match(push.stderr, /follow it with/);
    const build = await api.get(`/v1/algorithms/alice/Hello/builds/${buildId}`, { key: alice.key });
    assert.equal(build.status, 200);
    const head = (await git(['rev-parse', 'HEAD'], dir)).stdout.trim();
    assert.equal(build.body.commit_sha, head);
  });

  test('protocol v0 and v2 both clone and list refs', async () => {
    const url = gitUrl(srv.url, 'alice', alice.key, 'alice', 'Hello');
    for (const version of ['0', '2']) {
      const ls = await git(['-c', `protocol.version=${version}`, 'ls-remote', url]);
      assert.equal(ls.code, 0, ls.stderr);
      assert.match(ls.stdout, /refs\/heads\/main/);
    }
    const { result } = await cloneAs('alice', alice.key, 'alice', 'Hello');
    assert.equal(result.code, 0);
  });

  test('a gzip-compressed request body is inflated', async () => {
    const body = zlib.gzipSync(Buffer.from(pkt('command=ls-refs\n') + '0001' + '0000'));
    const res = await fetch(`${srv.url}/git/alice/Hello.git/git-upload-pack`, {
      method: 'POST',
      headers: {
        authorization: basic('alice', alice.key),
        'content-type': 'application/x-git-upload-pack-request',
        'content-encoding': 'gzip',
        'git-protocol': 'version=2',
      },
      body,
    });
    assert.equal(res.status, 200);
    assert.match(await res.text(), /refs\/heads\/main/);
  });

  test('organization members read and write; non-members get not found', async () => {
    const member = await cloneAs('bob', bob.key, 'acme', 'Shared');
    assert.equal(member.result.code, 0, member.result.stderr);
    fs.writeFileSync(path.join(member.dir, 'NOTES.md'), 'bob was here\n');
    const push = await commitAndPush(member.dir, 'bob edits');
    assert.equal(push.code, 0, push.stderr);

    const outsider = await cloneAs('carol', carol.key, 'acme', 'Shared');
    assert.notEqual(outsider.result.code, 0);
    assert.match(outsider.result.stderr, /not found/i);
  });

  test('a public algorithm with open source can be cloned by anyone but pushed only by its owner', async () => {
    await api.post('/v1/algorithms/alice', {
      key: alice.key,
      body: { name: 'Open', settings: { license: 'mit', source_visibility: 'open' } },
    });
    await api.patch('/v1/algorithms/alice/Open', { key: alice.key, body: { settings: { algorithm_callability: 'public' } } });
    const c = await cloneAs('carol', carol.key, 'alice', 'Open');
    assert.equal(c.result.code, 0, c.result.stderr);
    fs.writeFileSync(path.join(c.dir, 'x.txt'), 'x');
    const push = await commitAndPush(c.dir, 'not allowed');
    assert.notEqual(push.code, 0);
    assert.match(push.stderr, /no write access to alice\/Open/);
  });

  test('admin keys, wrong keys and mismatched user names are refused with clear messages', async () => {
    const admin = await cloneAs('admin', srv.adminKey, 'alice', 'Hello');
    assert.notEqual(admin.result.code, 0);
    assert.match(admin.result.stderr, /admin keys cannot be used for Git/);

    const wrong = await cloneAs('alice', 'simWRONGWRONGWRONGWRONGWRONG', 'alice', 'Hello');
    assert.notEqual(wrong.result.code, 0);
    assert.match(wrong.result.stderr, /Authentication failed|invalid API key/);

    const mismatch = await cloneAs('bob', alice.key, 'alice', 'Hello');
    assert.notEqual(mismatch.result.code, 0);

    const res = await fetch(`${srv.url}/git/alice/Hello.git/info/refs?service=git-upload-pack`);
    assert.equal(res.status, 401);
    assert.match(res.headers.get('www-authenticate') ?? '', /^Basic/);
  });

  test('a key holding "/" works written as %2F; written raw the address is invalid', async () => {
    let key = '';
    for (let i = 0; i < 60 && !key.includes('/'); i++) {
      const res = await api.post('/v1/users/alice/keys', { key: alice.key, body: {} });
      key = res.body.key;
    }
    assert.ok(key.includes('/'), 'no key with / in 60 tries');
    const encoded = await cloneAs('alice', key, 'alice', 'Hello');
    assert.equal(encoded.result.code, 0, encoded.result.stderr);
    const u = new URL(srv.url);
    const raw = await git(['ls-remote', `http://alice:${key}@${u.host}/git/alice/Hello.git`]);
    assert.notEqual(raw.code, 0);
  });

  test('the versioned address is read-only and unknown versions are not found', async () => {
    const res = await fetch(`${srv.url}/git/alice/Hello/1.0.0.git/info/refs?service=git-receive-pack`, {
      headers: { authorization: basic('alice', alice.key) },
    });
    assert.equal(res.status, 403);
    assert.match(await res.text(), /read-only/);
    const missing = await fetch(`${srv.url}/git/alice/Hello/9.9.9.git/info/refs?service=git-upload-pack`, {
      headers: { authorization: basic('alice', alice.key) },
    });
    assert.equal(missing.status, 404);
  });

  test('path escapes, other services and unknown repositories never reach git', async () => {
    const auth = { authorization: basic('alice', alice.key) };
    for (const p of [
      '/git/alice/../../etc/passwd.git/info/refs?service=git-upload-pack',
      '/git/alice/%2e%2e%2f%2e%2e%2fetc.git/info/refs?service=git-upload-pack',
      '/git/..%2F..%2Froot/Hello.git/info/refs?service=git-upload-pack',
      '/git/alice/Hello.git/info/refs?service=git-upload-archive',
      '/git/alice/Hello.git/HEAD',
      '/git/alice/Nope.git/info/refs?service=git-upload-pack',
      '/git/nobody/Hello.git/info/refs?service=git-upload-pack',
    ]) {
      // Sent byte for byte: fetch would resolve the ".." first, out of /git (into the web UI's paths).
      const res = await rawRequest(srv.url, 'GET', p, { headers: auth });
      assert.ok([400, 403, 404].includes(res.status), `${p} → ${res.status}`);
      assert.doesNotMatch(res.text, /root:|refs\/heads/);
    }
  });

  test('pushing to another branch stores it without a build', async () => {
    const { dir } = await cloneAs('alice', alice.key, 'alice', 'Hello');
    await git(['checkout', '-q', '-b', 'feature'], dir);
    fs.writeFileSync(path.join(dir, 'f.txt'), 'f');
    await git(['add', '-A'], dir);
    await git(['commit', '-q', '-m', 'feature'], dir);
    const push = await git(['push', 'origin', 'feature'], dir);
    assert.equal(push.code, 0, push.stderr);
    assert.match(push.stderr, /only pushes to main are built/);
    assert.equal(announcedBuildId(push.stderr), undefined);
  });
});

function basic(user: string, key: string): string {
  return `Basic ${Buffer.from(`${user}:${key}`).toString('base64')}`;
}

function pkt(s: string): string {
  return (Buffer.byteLength(s) + 4).toString(16).padStart(4, '0') + s;
}
