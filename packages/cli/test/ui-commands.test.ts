/**
 * The commands of what the web UI shows, against a real server with a real push: `algo whoami`,
 * `algo search`, `algo commits`, `algo readme`, `algo admin status` and `algo admin audit` (text, --json, and
 * failures as one line).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createUser, type TestUser } from '../../server/test/support/fixtures.js';
import { clone, commitAndPush, git, gitUrl, removeClone } from '../../server/test/support/git.js';
import { client, type Client } from '../../server/test/support/http.js';
import { startTestServer, type TestServer } from '../../server/test/support/server.js';
import { algo, assertOk, assertOneLineFailure, makeHome, type CliResult } from './support/run-cli.js';

const json = <T = any>(r: CliResult): T => {
  assertOk(r, 'command');
  return JSON.parse(r.stdout) as T;
};

describe('algo whoami, search, commits, readme, admin status', () => {
  let srv: TestServer;
  let api: Client;
  let alice: TestUser;
  let home: string;
  let head: string;
  const run = (args: string[]) => algo(args, { home });

  before(async () => {
    srv = await startTestServer();
    api = client(srv.url);
    alice = await createUser(api, srv.adminKey, 'alice');
    home = await makeHome();
    for (const [name, summary] of [
      ['Hello', 'Greets people'],
      ['Sheep', 'Counts sheep | sleepily'],
    ]) {
      const res = await api.post('/v1/algorithms/alice', {
        key: alice.key,
        body: { name, details: { label: `${name} label`, summary }, settings: { algorithm_callability: 'public' } },
      });
      assert.equal(res.status, 200, res.text);
    }
    const { dir } = await clone(gitUrl(srv.url, 'alice', alice.key, 'alice', 'Hello'));
    try {
      fs.writeFileSync(path.join(dir, 'README.md'), '# Hello\n\nCall it with a name.\n');
      const push = await commitAndPush(dir, 'Write the README');
      assert.equal(push.code, 0, push.stderr);
      head = (await git(['rev-parse', 'HEAD'], dir)).stdout.trim();
    } finally {
      await removeClone(dir);
    }
    assertOk(await run(['auth', '--server', srv.url, '--key', alice.key, '--username', 'alice']), 'auth');
    assertOk(await run(['auth', '--profile', 'admin', '--server', srv.url, '--key', srv.adminKey, '--username', 'admin']), 'auth admin');
  });
  after(async () => {
    await srv.stop();
    await fs.promises.rm(home, { recursive: true, force: true });
  });

  test('--help lists the commands', async () => {
    const help = await run(['--help']);
    assertOk(help, 'help');
    for (const cmd of ['whoami', 'search', 'commits', 'readme', 'admin']) assert.match(help.stdout, new RegExp(`^  ${cmd}\\b`, 'm'), cmd);
  });

  test('whoami: the account, credential, capabilities and organizations', async () => {
    const text = await run(['whoami']);
    assertOk(text, 'whoami');
    assert.match(text.stdout, /^alice\n/);
    assert.match(text.stdout, /credential: +API key/);
    assert.match(text.stdout, /capabilities: +manage_algorithms, call_algorithms, read_data, write_data/);
    assert.match(text.stdout, /organizations: +none/);
    const admin = json(await run(['whoami', '--profile', 'admin', '--json']));
    assert.deepEqual(
      { username: admin.username, admin: admin.admin, credential: admin.credential },
      {
        username: 'admin',
        admin: true,
        credential: 'admin_key',
      },
    );
  });

  test('search: a table, JSON, a notice when nothing matches', async () => {
    const table = await run(['search', 'GREETS']);
    assertOk(table, 'search');
    const lines = table.stdout.trimEnd().split('\n');
    assert.match(lines[0]!, /^ALGORITHM +LABEL +CREATED +SUMMARY$/);
    assert.equal(lines.length, 2);
    assert.match(lines[1]!, /^alice\/Hello +Hello label +\S+ +Greets people$/);
    const all = json<{ owner: string; name: string }[]>(await run(['search', '--json']));
    assert.deepEqual(
      all.map((a) => a.name),
      ['Sheep', 'Hello'],
    );
    const limited = await run(['search', '--limit', '1']);
    assertOk(limited, 'search --limit');
    assert.equal(limited.stdout.trimEnd().split('\n').length, 2);
    assert.match(limited.stderr, /More match: raise --limit/);
    const none = await run(['search', 'zebra']);
    assertOk(none, 'search zebra');
    assert.equal(none.stdout, '');
    assert.match(none.stderr, /No public algorithm matches "zebra"/);
    assertOneLineFailure(await run(['search', 'x'.repeat(101)]), /query is too long/);
  });

  test('commits: newest first, as a table or JSON', async () => {
    const table = await run(['commits', 'alice/Hello']);
    assertOk(table, 'commits');
    const lines = table.stdout.trimEnd().split('\n');
    assert.match(lines[0]!, /^COMMIT +DATE +AUTHOR +MESSAGE$/);
    assert.match(lines[1]!, new RegExp(`^${head.slice(0, 12)} +\\S+ +Test +Write the README$`));
    assert.match(lines[2]!, /algohost +Create alice\/Hello from the/);
    const one = json<{ sha: string }[]>(await run(['commits', 'alice', 'Hello', '--limit', '1', '--json']));
    assert.deepEqual(
      one.map((c) => c.sha),
      [head],
    );
    assertOneLineFailure(await run(['commits', 'alice/Hello', '--limit', '101']), /from 1 to 100/);
    assertOneLineFailure(await run(['commits', 'alice/Nope']), /No such algorithm/);
  });

  test('readme: the text as it is in the repository; --ref; a bad ref fails with one line', async () => {
    const text = await run(['readme', 'alice/Hello']);
    assertOk(text, 'readme');
    assert.equal(text.stdout, '# Hello\n\nCall it with a name.\n');
    const meta = json(await run(['readme', 'alice/Hello', '--json']));
    assert.deepEqual({ commit: meta.commit, path: meta.path }, { commit: head, path: 'README.md' });
    const template = json<{ sha: string }[]>(await run(['commits', 'alice/Hello', '--json']))[1]!.sha;
    const old = json(await run(['readme', 'alice/Hello', '--ref', template, '--json']));
    assert.equal(old.commit, template);
    assertOneLineFailure(await run(['readme', 'alice/Hello', '--ref', '--output=/tmp/x']), /ref must match pattern/);
    assertOneLineFailure(await run(['readme', 'alice/Hello', '--ref', 'nope']), /no commit, branch or tag "nope"/);
  });

  test('admin status: for admins; a user gets one line saying it needs an admin', async () => {
    const status = await run(['admin', 'status', '--profile', 'admin']);
    assertOk(status, 'admin status');
    assert.match(status.stdout, /^version: +\d+\.\d+\.\d+$/m);
    assert.match(status.stdout, /^database: +sqlite$/m);
    assert.match(status.stdout, /^blob store: +disk$/m);
    assert.match(status.stdout, /^builds: +\d+ queued, \d+ running$/m);
    assert.match(status.stdout, /^warm runners: +0$/m);
    assert.match(status.stdout, /^calls per minute: +0$/m);
    assert.match(status.stdout, /^uptime: +(\d+[dhm] )*\d+s$/m);
    const asJson = json(await run(['admin', 'status', '--profile', 'admin', '--json']));
    assert.equal(asJson.blob_store, 'disk');
    assertOneLineFailure(await run(['admin', 'status']), /needs an admin/);
  });

  test('admin audit: the log as a table or JSON, filtered by actor and action; a user gets one line', async () => {
    // The algorithms alice made in before() and the key the admin made for her are in the log.
    const table = await run(['admin', 'audit', '--profile', 'admin', '--actor', 'alice']);
    assertOk(table, 'admin audit');
    assert.match(table.stdout, /^WHEN +ACTOR +CREDENTIAL +ACTION +STATUS +TARGET +ADDRESS$/m);
    assert.match(table.stdout, /^\S+ +alice +key +algorithm\.create +200 +\/v1\/algorithms\/alice +127\.0\.0\.1$/m);
    const keys = json<{ actor: string; action: string }[]>(
      await run(['admin', 'audit', '--profile', 'admin', '--action', 'key', '--json']),
    );
    assert.ok(keys.length >= 1 && keys.every((e) => e.action.startsWith('key.')), JSON.stringify(keys));
    assert.equal(json<unknown[]>(await run(['admin', 'audit', '--profile', 'admin', '--limit', '1', '--json'])).length, 1);
    assertOneLineFailure(await run(['admin', 'audit']), /reading the audit log needs an admin/);
    assertOneLineFailure(await run(['admin', 'audit', '--profile', 'admin', '--action', 'key%']), /action|pattern/);
  });
});
