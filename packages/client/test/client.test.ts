/**
 * AlgohostClient against a real algohost node (users, keys, organizations and invitations,
 * environments, algorithms, builds, compile, calls' error paths), plus the pure
 * parts (SSE reader, names, input encoding) and a check that the library type-checks without
 * Node's types (browsers).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import {
  AlgohostClient,
  AlgohostError,
  collect,
  dataApiPath,
  encodeCallInput,
  joinDataUri,
  parseAlgorithmRef,
  readServerSentEvents,
  splitDataUri,
  type BuildLogEvent,
} from '../src/index.js';
import { createUser, type TestUser } from '../../server/test/support/fixtures.js';
import { announcedBuildId, clone, commitAndPush, gitUrl, removeClone } from '../../server/test/support/git.js';
import { client as httpClient } from '../../server/test/support/http.js';
import { startTestServer, type TestServer } from '../../server/test/support/server.js';

const exec = promisify(execFile);
const REPO_ROOT = new URL('../../../', import.meta.url).pathname;

describe('AlgohostClient against a running server', () => {
  let srv: TestServer;
  let alice: TestUser;
  let admin: AlgohostClient;
  let as: AlgohostClient;

  before(async () => {
    srv = await startTestServer();
    alice = await createUser(httpClient(srv.url), srv.adminKey, 'alice');
    admin = new AlgohostClient({ server: srv.url, apiKey: srv.adminKey });
    as = new AlgohostClient({ server: `${srv.url}/`, apiKey: alice.key });
  });
  after(() => srv.stop());

  test('errors carry status, the platform code and the message', async () => {
    const wrong = new AlgohostClient({ server: srv.url, apiKey: `sim${'z'.repeat(25)}` });
    await assert.rejects(wrong.environments.languages(), (err: unknown) => {
      assert.ok(err instanceof AlgohostError);
      assert.equal(err.status, 401);
      assert.equal(err.code, 2002);
      assert.match(err.message, /invalid API key/i);
      assert.equal(err.endpointMissing, false);
      return true;
    });
    await assert.rejects(as.algorithms.get('alice', 'Nope'), (err: AlgohostError) => {
      assert.equal(err.status, 404);
      assert.match(err.message, /No such algorithm/);
      return true;
    });
    await assert.rejects(as.transport.json('GET', '/v1/nothing-here'), (err: AlgohostError) => err.status === 404 && err.endpointMissing);
    const down = new AlgohostClient({ server: 'http://127.0.0.1:9', apiKey: alice.key });
    await assert.rejects(down.environments.languages(), (err: AlgohostError) => err.status === 0 && /cannot reach/.test(err.message));
  });

  test('users and keys (admin), paging through every user by marker', async () => {
    for (const name of ['carol', 'dave', 'erin']) await admin.users.create({ username: name, email: `${name}@example.test` });
    const page = await admin.users.list({ limit: 1 });
    assert.equal(page.results.length, 1);
    assert.ok(page.marker);
    const all = await collect(admin.users.all({ limit: 1 }));
    const names = all.map((u) => u.username);
    for (const n of ['alice', 'carol', 'dave', 'erin']) assert.ok(names.includes(n), n);
    assert.equal(new Set(names).size, names.length, 'no user twice');
    assert.equal((await admin.users.get('carol')).email, 'carol@example.test');
    assert.equal((await admin.users.update('carol', { fullname: 'Carol C' })).fullname, 'Carol C');
    await admin.users.delete('erin');
    await assert.rejects(admin.users.get('erin'), (e: AlgohostError) => e.status === 404);

    const key = await admin.keys.create('carol', { description: 'lib' });
    assert.match(key.key, /^sim[A-Za-z0-9+/]{25}$/);
    const carol = new AlgohostClient({ server: srv.url, apiKey: key.key });
    assert.ok((await carol.keys.list('carol')).some((k) => k.id === key.id));
    await carol.keys.revoke('carol', key.id);
    assert.ok(!(await admin.keys.list('carol')).some((k) => k.id === key.id));
  });

  test('organizations and members', async () => {
    const types = await as.organizations.types();
    assert.ok(types.some((t) => t.name === 'basic'));
    const org = await as.organizations.create({
      org_name: 'Acme',
      org_label: 'Acme Inc',
      org_contact_name: 'A',
      org_email: 'a@example.test',
      type_id: 'basic',
    });
    assert.equal(org.org_name, 'Acme');
    // An owner invites; carol is a member only once she accepts.
    const invitation = await as.organizations.addMember('Acme', 'carol');
    assert.equal(invitation?.username, 'carol');
    assert.deepEqual(
      (await as.organizations.invitations('Acme')).map((i) => i.username),
      ['carol'],
    );
    assert.deepEqual(
      (await as.organizations.members('Acme')).map((m) => m.username),
      ['alice'],
    );
    const carol = new AlgohostClient({ server: srv.url, apiKey: (await admin.keys.create('carol')).key });
    assert.deepEqual(
      (await carol.users.invitations('carol')).map((i) => i.org_name),
      ['Acme'],
    );
    assert.equal((await carol.users.acceptInvitation('carol', 'Acme')).role, 'member');
    const members = await as.organizations.members('Acme');
    assert.deepEqual(members.map((m) => m.username).sort(), ['alice', 'carol']);
    await as.organizations.removeMember('Acme', 'carol');
    await as.organizations.update('Acme', { org_label: 'Acme Corp' });
    assert.equal((await as.organizations.get('Acme')).org_label, 'Acme Corp');
    await as.organizations.delete('Acme');
    await assert.rejects(as.organizations.get('Acme'), (e: AlgohostError) => e.status === 404);
  });

  test('environments: languages, environments, the template archive without auth', async () => {
    const langs = await as.environments.languages();
    assert.ok(langs.some((l) => l.name === 'python3'));
    const envs = await as.environments.list('python3');
    const py = envs.find((e) => e.name === 'python311')!;
    let progressCalls = 0;
    const anonymous = new AlgohostClient({ server: srv.url });
    const tgz = await anonymous.environments.template(py.environment_specification_id, { onProgress: () => progressCalls++ });
    assert.deepEqual([...tgz.subarray(0, 2)], [0x1f, 0x8b], 'gzip');
    assert.ok(progressCalls > 0);
  });

  test('algorithms: create, get, list (paged), update, patch, compile, delete', async () => {
    for (const name of ['A1', 'A2', 'A3']) await as.algorithms.create('alice', { name, settings: { language: 'python3' } });
    const all = await collect(as.algorithms.all('alice', { limit: 2 }));
    assert.deepEqual(
      all.map((a) => a.name),
      ['A1', 'A2', 'A3'],
    );
    const got = await as.algorithms.get('alice', 'A1');
    assert.equal(got.resource_type, 'algorithm');
    const updated = await as.algorithms.update('alice', 'A1', {
      details: { summary: 'first' },
      settings: {},
      version_info: {},
      source: {},
      scmsCredentials: {},
    });
    assert.equal(updated.details.summary, 'first');
    const patched = await as.algorithms.patch('alice', 'A1', { details: { tagline: 'one' } });
    assert.equal(patched.details.tagline, 'one');
    const compiled = await as.algorithms.compile('alice', 'A1');
    assert.equal(compiled.compilation.successful, true);
    assert.match(compiled.version_info.git_hash, /^[0-9a-f]{40}$/);
    await as.algorithms.delete('alice', 'A3');
    await assert.rejects(as.algorithms.get('alice', 'A3'), (e: AlgohostError) => e.status === 404);
  });

  test('builds: list, get, logs, and follow over server-sent events', async () => {
    const { dir } = await clone(gitUrl(srv.url, 'alice', alice.key, 'alice', 'A2'));
    try {
      fs.appendFileSync(path.join(dir, 'src', 'A2.py'), '\n# edit\n');
      const push = await commitAndPush(dir, 'edit');
      const id = announcedBuildId(push.stderr)!;
      const events: BuildLogEvent[] = [];
      for await (const e of as.builds.follow('alice', 'A2', id)) events.push(e);
      const last = events[events.length - 1];
      assert.equal(last?.type, 'finished');
      assert.equal(last.type === 'finished' && last.build.status, 'succeeded');
      const text = events.map((e) => (e.type === 'log' ? e.text : '')).join('');
      assert.match(text, /Build succeeded/);
      assert.equal((await as.builds.get('alice', 'A2', id)).build_id, id);
      assert.match(await as.builds.logs('alice', 'A2', id), /Build succeeded/);
      const builds = await collect(as.builds.all('alice', 'A2', { limit: 1 }));
      assert.ok(builds.some((b) => b.build_id === id));
    } finally {
      await removeClone(dir);
    }
  });

  test('data: collections, files (bytes, text, streams), stat, paged entries, ACLs, delete; errors', async () => {
    await as.data.mkdir('data://.my/docs', { acl: { read: [] } });
    await as.data.mkdir('data://alice/docs/sub');
    assert.deepEqual(await as.data.put('data://.my/docs/a.txt', 'hello'), { result: 'data://.my/docs/a.txt' });
    await as.data.put('data://alice/docs/b.bin', new Uint8Array([0, 1, 2, 255]));
    // A stream goes up as it is produced, with its size as Content-Length.
    const chunks = [new Uint8Array(70_000).fill(7), new Uint8Array(30_000).fill(9)];
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = chunks.shift();
        if (next) controller.enqueue(next);
        else controller.close();
      },
    });
    await as.data.put('data://alice/docs/sub/streamed.bin', stream, { size: 100_000 });

    assert.equal(await as.data.getText('data://.my/docs/a.txt'), 'hello');
    assert.deepEqual([...(await as.data.get('data://alice/docs/b.bin'))], [0, 1, 2, 255]);
    const res = await as.data.stream('data://alice/docs/sub/streamed.bin');
    assert.equal(res.headers.get('content-length'), '100000');
    const back = new Uint8Array(await res.arrayBuffer());
    assert.deepEqual([back[0], back[69_999], back[70_000], back.length], [7, 7, 9, 100_000]);
    await assert.rejects(as.data.stream('data://alice/docs'), (e: AlgohostError) => e.code === 'EISDIR');
    await assert.rejects(as.data.list('data://alice/docs/a.txt'), (e: AlgohostError) => e.code === 'ENOTDIR');

    const stat = await as.data.stat('data://alice/docs/a.txt');
    assert.equal(stat?.type, 'file');
    assert.equal(stat?.type === 'file' && stat.size, 5);
    assert.match(stat?.type === 'file' ? (stat.lastModified ?? '') : '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/);
    assert.deepEqual(await as.data.stat('data://alice/docs/sub'), { type: 'directory' });
    assert.equal(await as.data.stat('data://alice/docs/nope'), null);
    assert.equal(await as.data.type('data://.my'), 'directory');
    assert.equal(await as.data.exists('data://alice/docs/nope'), false);

    for (let i = 0; i < 7; i++) await as.data.put(`data://alice/docs/sub/f${i}`, String(i));
    const page = await as.data.list('data://alice/docs/sub', { limit: 3 });
    assert.equal(page.files?.length, 3);
    assert.ok(page.marker);
    const all = await collect(as.data.entries('data://alice/docs/sub', { limit: 3 }));
    assert.deepEqual(
      all.map((e) => (e.type === 'file' ? e.filename : e.name)),
      ['f0', 'f1', 'f2', 'f3', 'f4', 'f5', 'f6', 'streamed.bin'],
    );

    assert.deepEqual((await as.data.list('data://alice/docs', { acl: true })).acl, { read: [] });
    await as.data.setAcl('data://alice/docs', { read: ['user://*'] });
    assert.deepEqual((await as.data.list('data://alice/docs', { acl: true })).acl, { read: ['user://*'] });

    // A folder that is not empty needs force; `.` and `..` never reach the server.
    await assert.rejects(as.data.delete('data://alice/docs/sub'), (e: AlgohostError) => e.status === 409);
    assert.deepEqual(await as.data.delete('data://alice/docs/sub', { force: true }), { result: { deleted: 8 } });
    assert.throws(() => dataApiPath('data://alice/docs/../../bob/x'), /"\.\." is not allowed in a data path/);
    await assert.rejects(as.data.get('data://alice/docs/./a.txt'), /"\." is not allowed in a data path/);
    const noRead = new AlgohostClient({
      server: srv.url,
      apiKey: (await admin.keys.create('alice', { capabilities: ['call_algorithms'] })).key,
    });
    await assert.rejects(noRead.data.list('data://.my'), (e: AlgohostError) => e.status === 403);
  });

  test('data: a name holding "%2F" or "%" stays one name (the client sends %252F; the server decodes once)', async () => {
    await as.data.mkdir('data://.my/pct');
    await as.data.mkdir('data://alice/pct/50%2F50 dir');
    assert.deepEqual(await as.data.put('data://alice/pct/50%2F50 dir/100%.txt', 'whole'), {
      result: 'data://alice/pct/50%2F50 dir/100%.txt',
    });
    assert.equal(await as.data.getText('data://.my/pct/50%2F50 dir/100%.txt'), 'whole');
    assert.deepEqual((await as.data.list('data://alice/pct')).folders, [{ name: '50%2F50 dir' }]);
    assert.equal(await as.data.exists('data://alice/pct/50'), false, 'no folder "50" was made');
    assert.deepEqual(await as.data.delete('data://alice/pct', { force: true }), { result: { deleted: 1 } });
  });

  test('calls: an unknown algorithm is an AlgohostError 404 with the platform message', async () => {
    await assert.rejects(
      as.call('alice/Nope', 'x'),
      (e: AlgohostError) => e.status === 404 && /algorithm algo:\/\/alice\/Nope not found/.test(e.message),
    );
    await assert.rejects(as.call('alice/Nope/1.0.0', { a: 1 }), (e: AlgohostError) => e.status === 404 && e.code === 1001);
  });
});

describe('client pieces', () => {
  test('the SSE reader handles events split across chunks and CRLF line ends', async () => {
    const text = 'event: log\r\ndata: {"text":"a"}\r\n\r\n: comment\n\nevent: finished\ndata: {"x":\ndata: 1}\n\n';
    const bytes = new TextEncoder().encode(text);
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < bytes.length; i += 3) c.enqueue(bytes.subarray(i, i + 3));
        c.close();
      },
    });
    const events = await collect(readServerSentEvents(stream));
    assert.deepEqual(
      events.map((e) => [e.event, e.data]),
      [
        ['log', '{"text":"a"}'],
        ['finished', '{"x":\n1}'],
      ],
    );
  });

  test('algorithm references and data URIs', () => {
    assert.deepEqual(parseAlgorithmRef('alice/Hello'), { owner: 'alice', name: 'Hello' });
    assert.deepEqual(parseAlgorithmRef('algo://alice/Hello/1.2.*/'), { owner: 'alice', name: 'Hello', version: '1.2.*' });
    assert.throws(() => parseAlgorithmRef('alice'), /owner\/name/);
    assert.equal(dataApiPath('data://.my/photos/a b.jpg'), '/v1/data/.my/photos/a%20b.jpg');
    assert.equal(dataApiPath('alice/photos'), '/v1/data/alice/photos');
    assert.equal(dataApiPath('s3://bucket/key'), '/v1/connector/s3/bucket/key');
    assert.deepEqual(splitDataUri('data://.my/photos/a.jpg'), { parent: 'data://.my/photos', name: 'a.jpg' });
    assert.equal(joinDataUri('data://.my/photos/', 'b.jpg'), 'data://.my/photos/b.jpg');
  });

  test('call input: the Content-Type follows the value (docs/compatibility.md §2)', () => {
    assert.equal(encodeCallInput('hi').contentType, 'text/plain');
    assert.equal(encodeCallInput({ a: 1 }).contentType, 'application/json');
    assert.equal(encodeCallInput(null).body, 'null');
    assert.equal(encodeCallInput(new Uint8Array([1])).contentType, 'application/octet-stream');
    assert.deepEqual(encodeCallInput('"quoted"', 'json'), { body: '"quoted"', contentType: 'application/json' });
    assert.throws(() => encodeCallInput(5, 'binary'), /binary input/);
  });

  test('the library type-checks for browsers (DOM types, no Node types)', async () => {
    const tsc = path.join(REPO_ROOT, 'node_modules', '.bin', 'tsc');
    await exec(tsc, ['-p', path.join(REPO_ROOT, 'packages/client/tsconfig.json')]);
  });
});

describe('AlgohostClient: whoami, Explore, commits, README, admin status', () => {
  let srv: TestServer;
  let alice: TestUser;
  let as: AlgohostClient;
  let admin: AlgohostClient;

  before(async () => {
    srv = await startTestServer();
    alice = await createUser(httpClient(srv.url), srv.adminKey, 'alice');
    as = new AlgohostClient({ server: srv.url, apiKey: alice.key });
    admin = new AlgohostClient({ server: srv.url, apiKey: srv.adminKey });
    for (const [name, summary] of [
      ['First', 'finds faces'],
      ['Second', 'counts sheep'],
      ['Third', 'finds more faces'],
    ] as const) {
      await as.algorithms.create('alice', { name, details: { summary }, settings: { algorithm_callability: 'public' } });
    }
    await as.algorithms.create('alice', { name: 'Private', details: { summary: 'finds secrets' } });
  });
  after(() => srv.stop());

  test('whoami', async () => {
    const me = await as.whoami();
    assert.equal(me.username, 'alice');
    assert.equal(me.admin, false);
    assert.equal(me.credential, 'key');
    assert.deepEqual(me.organizations, []);
    assert.equal((await admin.whoami()).admin, true);
    const anonymous = new AlgohostClient({ server: srv.url });
    await assert.rejects(anonymous.whoami(), (err: AlgohostError) => err.status === 401);
  });

  test('searchAlgorithms pages newest first; searchAllAlgorithms follows the marker', async () => {
    const page = await as.searchAlgorithms({ query: 'FACES', limit: 1 });
    assert.deepEqual(
      page.results.map((a) => a.name),
      ['Third'],
    );
    assert.ok(page.marker);
    const next = await as.searchAlgorithms({ query: 'faces', limit: 1, marker: page.marker! });
    assert.deepEqual(
      next.results.map((a) => a.name),
      ['First'],
    );
    const all = await collect(as.searchAllAlgorithms({ limit: 1 }));
    assert.deepEqual(
      all.map((a) => a.name),
      ['Third', 'Second', 'First'],
    );
    await assert.rejects(as.searchAlgorithms({ query: 'x'.repeat(101) }), (err: AlgohostError) => err.status === 400);
  });

  test('algorithmCommits and algorithmReadme read the repository', async () => {
    const { results } = await as.algorithmCommits('alice', 'First', { limit: 5 });
    assert.equal(results.length, 1);
    assert.match(results[0]!.sha, /^[0-9a-f]{40}$/);
    assert.match(results[0]!.message, /^Create alice\/First/);
    const readme = await as.algorithmReadme('alice', 'First');
    assert.equal(readme.commit, results[0]!.sha);
    assert.equal(readme.path, 'README.md');
    assert.equal(typeof readme.content, 'string');
    assert.equal(readme.truncated, undefined);
    assert.equal((await as.algorithmReadme('alice', 'First', { ref: results[0]!.sha })).commit, results[0]!.sha);
    await assert.rejects(as.algorithmReadme('alice', 'First', { ref: '--output=/tmp/x' }), (err: AlgohostError) => err.status === 400);
    await assert.rejects(
      as.algorithmCommits('alice', 'First', { limit: 0 }),
      (err: AlgohostError) => err.status === 400 && err.code === 5003,
    );
  });

  test('adminStatus: admins only', async () => {
    const status = await admin.adminStatus();
    assert.equal(status.database, 'sqlite');
    assert.equal(status.blob_store, 'disk');
    assert.deepEqual(status.builds, { queued: 0, running: 0 });
    await assert.rejects(as.adminStatus(), (err: AlgohostError) => err.status === 403);
  });
});
