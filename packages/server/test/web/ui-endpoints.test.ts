/**
 * The endpoints the web UI needs, which the API, client and CLI have too (issue 13):
 * whoami, the Explore search, an algorithm's commits and README read from its real repository
 * (after real pushes), and the admin status. Each has its authorization matrix (anonymous,
 * another user, a call key, an admin) and its bad input (4xx with a message, never a 500).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { assertError, checkedClient } from '../support/assertions.js';
import { createAndBuild } from '../support/algorithms.js';
import { accountId, callKey, createAlgorithm } from '../support/data.js';
import { createOrganization, createUser, type TestUser } from '../support/fixtures.js';
import { selectedFixtures } from '../support/fixtures-algorithms.js';
import { clone, commitAndPush, git, gitUrl, removeClone } from '../support/git.js';
import type { Client } from '../support/http.js';
import { DATABASES, startTestServer, type TestServer } from '../support/server.js';

const ALL = ['manage_algorithms', 'call_algorithms', 'read_data', 'write_data'];
const PASSWORD = 'correct horse battery staple';
const ALICE_PROFILE = { email: 'alice@example.test', fullname: null, company_name: null, company_role: null };
const ADMIN_PROFILE = { email: null, fullname: 'Cluster administrator', company_name: null, company_role: null };
const SHA = /^[0-9a-f]{40}$/;
const PACKAGE_VERSION = (
  JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  }
).version;

async function signIn(api: Client, username: string): Promise<string> {
  const res = await api.post('/v1/auth/token', { body: { username, password: PASSWORD } });
  assert.equal(res.status, 200, res.text);
  return `Bearer ${res.body.token as string}`;
}

/** Clones owner/name as `user`, lets `change` edit the work tree, commits and pushes (the build runs on its own). */
async function pushChange(srv: TestServer, user: TestUser, owner: string, name: string, message: string, change: (dir: string) => void) {
  const { dir, result } = await clone(gitUrl(srv.url, user.name, user.key, owner, name));
  assert.equal(result.code, 0, result.stderr);
  try {
    change(dir);
    const push = await commitAndPush(dir, message);
    assert.equal(push.code, 0, push.stderr);
    return (await git(['rev-parse', 'HEAD'], dir)).stdout.trim();
  } finally {
    await removeClone(dir);
  }
}

for (const database of DATABASES) {
  describe(`endpoints of the web UI (${database})`, () => {
    let srv: TestServer;
    let api: Client;
    let alice: TestUser;
    let bob: TestUser;
    let aliceId: string;
    /** alice's key holding only read_data. */
    let aliceReader: string;

    before(async () => {
      srv = await startTestServer({ database });
      api = checkedClient(srv.url);
      alice = await createUser(api, srv.adminKey, 'alice', { password: PASSWORD });
      bob = await createUser(api, srv.adminKey, 'bob');
      aliceId = await accountId(api, srv.adminKey, 'alice');
      const reader = await api.post('/v1/users/alice/keys', { key: alice.key, body: { capabilities: ['read_data'] } });
      aliceReader = reader.body.key as string;
      // alice's public closed-source Hello, private Secret and public open-source Open; bob's public Zebra.
      const hello = await api.post('/v1/algorithms/alice', {
        key: alice.key,
        body: {
          name: 'Hello',
          details: { label: 'Hello World', summary: 'Greets people by name' },
          settings: { language: 'python3-1', environment: 'cpu', algorithm_callability: 'public' },
        },
      });
      assert.equal(hello.status, 200, hello.text);
      await createAlgorithm(api, 'alice', alice.key, 'Secret');
      const open = await api.post('/v1/algorithms/alice', {
        key: alice.key,
        body: {
          name: 'Open',
          details: { summary: '100% open_source' },
          settings: { language: 'python3-1', algorithm_callability: 'public', license: 'mit', source_visibility: 'open' },
        },
      });
      assert.equal(open.status, 200, open.text);
      const zebra = await api.post('/v1/algorithms/bob', {
        key: bob.key,
        body: { name: 'Zebra', details: { label: 'Stripes', summary: 'It greets zebras' }, settings: { algorithm_callability: 'public' } },
      });
      assert.equal(zebra.status, 200, zebra.text);
    });
    after(() => srv.stop());

    describe('GET /v1/auth/whoami', () => {
      test('a standard key, a restricted key and a session say who and what', async () => {
        const mine = await api.get('/v1/auth/whoami', { key: alice.key });
        assert.equal(mine.status, 200, mine.text);
        assert.deepEqual(mine.body, {
          username: 'alice',
          admin: false,
          credential: 'key',
          capabilities: ALL,
          organizations: [],
          ...ALICE_PROFILE,
        });
        const reader = await api.get('/v1/auth/whoami', { key: aliceReader });
        assert.deepEqual(reader.body, {
          username: 'alice',
          admin: false,
          credential: 'key',
          capabilities: ['read_data'],
          organizations: [],
          ...ALICE_PROFILE,
        });
        const session = await api.get('/v1/auth/whoami', { auth: await signIn(api, 'alice') });
        assert.deepEqual(session.body, {
          username: 'alice',
          admin: false,
          credential: 'session',
          capabilities: ALL,
          organizations: [],
          ...ALICE_PROFILE,
        });
      });

      test('the organizations of the account, with its role in each (members only once they accept)', async () => {
        await createOrganization(api, alice.key, 'zeta');
        await createOrganization(api, alice.key, 'acme');
        const invited = await api.put('/v1/organizations/acme/members/bob', { key: alice.key });
        assert.equal(invited.status, 202, invited.text);
        assert.deepEqual((await api.get('/v1/auth/whoami', { key: bob.key })).body.organizations, [], 'an invitation is no membership');
        const accepted = await api.post('/v1/users/bob/invitations/acme', { key: bob.key });
        assert.equal(accepted.status, 200, accepted.text);
        assert.deepEqual((await api.get('/v1/auth/whoami', { key: bob.key })).body.organizations, [{ name: 'acme', role: 'member' }]);
        assert.deepEqual((await api.get('/v1/auth/whoami', { key: alice.key })).body.organizations, [
          { name: 'acme', role: 'owner' },
          { name: 'zeta', role: 'owner' },
        ]);
        const call = await callKey(srv, alice, { id: 'x', ownerId: aliceId });
        try {
          const res = await api.get('/v1/auth/whoami', { key: call.key });
          assert.equal(res.body.organizations, undefined, 'a call key may not read organizations');
        } finally {
          call.revoke();
        }
      });

      test('an admin key, an admin session, and an admin call key (which is no admin)', async () => {
        const admin = await api.get('/v1/auth/whoami', { key: srv.adminKey });
        assert.deepEqual(admin.body, {
          username: 'admin',
          admin: true,
          credential: 'admin_key',
          capabilities: ALL,
          organizations: [],
          ...ADMIN_PROFILE,
        });
        const set = await api.put('/v1/users/admin', { key: srv.adminKey, body: { password: PASSWORD } });
        assert.equal(set.status, 200, set.text);
        const session = await api.get('/v1/auth/whoami', { auth: await signIn(api, 'admin') });
        assert.deepEqual(session.body, {
          username: 'admin',
          admin: true,
          credential: 'session',
          capabilities: ALL,
          organizations: [],
          ...ADMIN_PROFILE,
        });
        const adminId = await accountId(api, srv.adminKey, 'admin');
        const call = await callKey(srv, srv.adminKey, { id: 'x', ownerId: adminId });
        try {
          const res = await api.get('/v1/auth/whoami', { key: call.key });
          assert.deepEqual(res.body, {
            username: 'admin',
            admin: false,
            credential: 'call_key',
            capabilities: ['call_algorithms', 'read_data', 'write_data'],
          });
        } finally {
          call.revoke();
        }
      });

      test("a call key holds at most what its caller's key held", async () => {
        const call = await callKey(srv, { name: 'alice', key: aliceReader, keyId: '' }, { id: 'x', ownerId: aliceId });
        try {
          const res = await api.get('/v1/auth/whoami', { key: call.key });
          assert.deepEqual(res.body, { username: 'alice', admin: false, credential: 'call_key', capabilities: ['read_data'] });
        } finally {
          call.revoke();
        }
      });

      test("the account's own profile, as it is after an edit, for any of its credentials but a call key", async () => {
        const edited = await api.put('/v1/users/bob', {
          key: bob.key,
          body: { fullname: 'Bob Builder', company_name: 'Bob & Co', company_role: 'CTO', email: 'bob@bob.example' },
        });
        assert.equal(edited.status, 200, edited.text);
        const me = await api.get('/v1/auth/whoami', { key: bob.key });
        assert.equal(me.status, 200, me.text);
        assert.deepEqual(
          { email: me.body.email, fullname: me.body.fullname, company_name: me.body.company_name, company_role: me.body.company_role },
          { email: 'bob@bob.example', fullname: 'Bob Builder', company_name: 'Bob & Co', company_role: 'CTO' },
        );
        // Another account's profile never shows: whoami answers only for the credential's own account.
        assert.equal((await api.get('/v1/auth/whoami', { key: alice.key })).body.email, 'alice@example.test');
        const bobId = await accountId(api, srv.adminKey, 'bob');
        const call = await callKey(srv, bob, { id: 'x', ownerId: bobId });
        try {
          const res = await api.get('/v1/auth/whoami', { key: call.key });
          for (const field of ['email', 'fullname', 'company_name', 'company_role']) {
            assert.equal(field in res.body, false, `a call key is not told the ${field}`);
          }
        } finally {
          call.revoke();
        }
      });

      test('anonymous and a wrong key are 401', async () => {
        assertError(await api.get('/v1/auth/whoami'), 401, 2001);
        assertError(await api.get('/v1/auth/whoami', { key: `sim${'q'.repeat(25)}` }), 401, 2002);
        assertError(await api.get('/v1/auth/whoami', { auth: 'Bearer not-a-token' }), 401);
      });
    });

    describe('GET /v1/algorithms (Explore)', () => {
      const names = (res: { body: { results: { owner: string; name: string }[] } }) => res.body.results.map((a) => `${a.owner}/${a.name}`);

      test('public algorithms of every owner, newest first; never a private one, not even for its owner', async () => {
        const all = await api.get('/v1/algorithms', { key: alice.key });
        assert.equal(all.status, 200, all.text);
        assert.deepEqual(names(all), ['bob/Zebra', 'alice/Open', 'alice/Hello']);
        assert.equal(all.body.marker, null);
        assert.equal(all.body.next_link, null);
        assert.equal(all.body.results[0].resource_type, 'algorithm');
        assert.equal(all.body.results[0].details.label, 'Stripes');
        const secret = await api.get('/v1/algorithms?query=secret', { key: alice.key });
        assert.deepEqual(names(secret), []);
      });

      test('the query matches owner, name, label and summary, ignoring case', async () => {
        const q = async (text: string) => names(await api.get(`/v1/algorithms?query=${encodeURIComponent(text)}`, { key: bob.key }));
        assert.deepEqual(await q('GREETS'), ['bob/Zebra', 'alice/Hello'], 'summary');
        assert.deepEqual(await q('hello'), ['alice/Hello'], 'name');
        assert.deepEqual(await q('world'), ['alice/Hello'], 'label');
        assert.deepEqual(await q('stripes'), ['bob/Zebra'], 'label');
        assert.deepEqual(await q('ALIC'), ['alice/Open', 'alice/Hello'], 'owner');
        assert.deepEqual(await q('  zebra '), ['bob/Zebra'], 'trimmed');
        assert.deepEqual(await q('nothing like it'), []);
        // LIKE's wildcards are literal characters here.
        assert.deepEqual(await q('%'), ['alice/Open']);
        assert.deepEqual(await q('_'), ['alice/Open']);
        assert.deepEqual(await q('n%s'), []);
        assert.deepEqual(await q('o_s'), [], '"_" matches only itself');
        assert.deepEqual(await q('\\'), []);
      });

      test('pages like every other list: limit, marker, next_link; both null on the last page', async () => {
        const first = await api.get('/v1/algorithms?limit=2', { key: bob.key });
        assert.deepEqual(names(first), ['bob/Zebra', 'alice/Open']);
        assert.ok(first.body.marker);
        const next = new URL(first.body.next_link as string);
        assert.equal(next.pathname, '/v1/algorithms');
        assert.equal(next.searchParams.get('marker'), first.body.marker);
        assert.equal(next.searchParams.get('limit'), '2');
        const second = await api.get(`${next.pathname}${next.search}`, { key: bob.key });
        assert.deepEqual(names(second), ['alice/Hello']);
        assert.equal(second.body.marker, null);
        assert.equal(second.body.next_link, null);
        const filtered = await api.get('/v1/algorithms?query=greets&limit=1', { key: bob.key });
        assert.match(filtered.body.next_link, /query=greets/);
        const rest = await api.get(`/v1/algorithms?query=greets&limit=1&marker=${encodeURIComponent(filtered.body.marker)}`, {
          key: bob.key,
        });
        assert.deepEqual(names(rest), ['alice/Hello']);
      });

      test('bad input is a 400 with a message', async () => {
        const long = await api.get(`/v1/algorithms?query=${'x'.repeat(101)}`, { key: bob.key });
        assertError(long, 400);
        assert.match(long.body.error.message, /query is too long: at most 100 characters/);
        assert.equal((await api.get(`/v1/algorithms?query=${'x'.repeat(100)}`, { key: bob.key })).status, 200);
      });

      test('limits and markers are checked', async () => {
        assertError(await api.get('/v1/algorithms?limit=0', { key: bob.key }), 400, 5003);
        assertError(await api.get('/v1/algorithms?limit=abc', { key: bob.key }), 400, 5003);
        assertError(await api.get('/v1/algorithms?limit=1001', { key: bob.key }), 400, 5003);
        // Any base64url marker names a position (domain/pagination.ts), even a forged one: it is a
        // value compared with, never SQL. Other characters are 5002.
        assert.equal((await api.get('/v1/algorithms?marker=garbage', { key: bob.key })).status, 200);
        const forged = Buffer.from(JSON.stringify({ k: "x' or 1=1" })).toString('base64url');
        assert.equal((await api.get(`/v1/algorithms?marker=${forged}`, { key: bob.key })).status, 200);
        assertError(await api.get('/v1/algorithms?marker=not%20base64!', { key: bob.key }), 400, 5002);
        assertError(await api.get('/v1/algorithms?query=%00', { key: bob.key }), 400);
      });

      test('who may search: any credential (call keys and restricted keys too), not anonymous', async () => {
        assertError(await api.get('/v1/algorithms'), 401);
        const call = await callKey(srv, bob, { id: 'x', ownerId: aliceId });
        try {
          assert.equal((await api.get('/v1/algorithms', { key: call.key })).body.results.length, 3);
        } finally {
          call.revoke();
        }
        assert.equal((await api.get('/v1/algorithms', { key: aliceReader })).body.results.length, 3);
        assert.equal((await api.get('/v1/algorithms', { key: srv.adminKey })).body.results.length, 3, 'admins explore public ones too');
      });
    });

    describe('GET …/source/commits and …/source/readme', () => {
      let template: string;
      let second: string;
      let third: string;

      before(async () => {
        template = (await api.get('/v1/algorithms/alice/Hello/source/commits', { key: alice.key })).body.results[0].sha;
        second = await pushChange(srv, alice, 'alice', 'Hello', 'Describe the algorithm\nwrapped subject line\n\nThe body.', (dir) => {
          fs.writeFileSync(path.join(dir, 'README.md'), '# Hello\n\nSays <b>hello</b>: <script>alert(1)</script>\n');
        });
        third = await pushChange(srv, alice, 'alice', 'Hello', 'Second change', (dir) => {
          fs.writeFileSync(path.join(dir, 'notes.txt'), 'notes\n');
        });
      });

      test('the newest commits of the repository, newest first, with author, subject and time', async () => {
        const res = await api.get('/v1/algorithms/alice/Hello/source/commits', { key: alice.key });
        assert.equal(res.status, 200, res.text);
        const commits = res.body.results as { sha: string; author_name: string; message: string; committed_at: string }[];
        assert.deepEqual(
          commits.map((c) => c.sha),
          [third, second, template],
        );
        assert.equal(commits[0]!.message, 'Second change');
        assert.equal(commits[0]!.author_name, 'Test');
        assert.equal(commits[1]!.message, 'Describe the algorithm wrapped subject line', 'the subject, without the body');
        assert.match(commits[2]!.message, /^Create alice\/Hello from the python\S* template$/);
        assert.equal(commits[2]!.author_name, 'algohost');
        for (const c of commits) {
          assert.match(c.sha, SHA);
          assert.equal(new Date(c.committed_at).toISOString(), c.committed_at, 'ISO 8601 in UTC');
        }
        const two = await api.get('/v1/algorithms/alice/Hello/source/commits?limit=2', { key: alice.key });
        assert.deepEqual(
          two.body.results.map((c: { sha: string }) => c.sha),
          [third, second],
        );
      });

      test('limit is 1–100, default 20: anything else is a 400', async () => {
        for (const limit of ['0', '101', 'abc', '1.5', '-1']) {
          const res = await api.get(`/v1/algorithms/alice/Hello/source/commits?limit=${limit}`, { key: alice.key });
          assertError(res, 400, 5003);
          assert.match(res.body.error.message, /from 1 to 100/);
        }
        assert.equal((await api.get('/v1/algorithms/alice/Hello/source/commits?limit=100', { key: alice.key })).status, 200);
      });

      test('commits: only who may fetch the source over Git, and admins', async () => {
        const path = (name: string) => `/v1/algorithms/alice/${name}/source/commits`;
        assertError(await api.get(path('Hello')), 401);
        // bob: another user. A private algorithm is the same 404 as none; a public one's closed source is a 403.
        assertError(await api.get(path('Secret'), { key: bob.key }), 404, 1001);
        assertError(await api.get(path('Nope'), { key: bob.key }), 404, 1001);
        const closed = await api.get(path('Hello'), { key: bob.key });
        assertError(closed, 403);
        assert.match(closed.body.error.message, /source of alice\/Hello is closed/);
        const open = await api.get(path('Open'), { key: bob.key });
        assert.equal(open.status, 200, open.text);
        assert.equal(open.body.results.length, 1);
        // alice's restricted key: Git needs manage_algorithms for her own algorithms.
        assertError(await api.get(path('Hello'), { key: aliceReader }), 403);
        const call = await callKey(srv, alice, { id: 'x', ownerId: aliceId });
        try {
          assertError(await api.get(path('Hello'), { key: call.key }), 403);
          assertError(await api.get(path('Secret'), { key: call.key }), 403);
        } finally {
          call.revoke();
        }
        assert.equal((await api.get(path('Secret'), { key: srv.adminKey })).status, 200, 'an admin key');
        assert.equal((await api.get(path('Secret'), { auth: await signIn(api, 'alice') })).status, 200, "alice's session");
      });

      test('the README of the default branch, as raw text', async () => {
        const res = await api.get('/v1/algorithms/alice/Hello/source/readme', { key: alice.key });
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(res.body, {
          commit: third,
          path: 'README.md',
          content: '# Hello\n\nSays <b>hello</b>: <script>alert(1)</script>\n',
        });
        assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      });

      test('a ref names a commit, branch or tag; the template commit has its own README', async () => {
        const old = await api.get(`/v1/algorithms/alice/Hello/source/readme?ref=${template}`, { key: alice.key });
        assert.equal(old.status, 200, old.text);
        assert.equal(old.body.commit, template);
        assert.doesNotMatch(old.body.content, /<script>/);
        const short = await api.get(`/v1/algorithms/alice/Hello/source/readme?ref=${second.slice(0, 10)}`, { key: alice.key });
        assert.equal(short.body.commit, second);
        const branch = await api.get('/v1/algorithms/alice/Hello/source/readme?ref=main', { key: alice.key });
        assert.equal(branch.body.commit, third);
        const full = await api.get('/v1/algorithms/alice/Hello/source/readme?ref=refs/heads/main', { key: alice.key });
        assert.equal(full.body.commit, third);
        const missing = await api.get('/v1/algorithms/alice/Hello/source/readme?ref=no-such-branch', { key: alice.key });
        assertError(missing, 404, 1013);
        assert.match(missing.body.error.message, /no commit, branch or tag "no-such-branch"/);
        assertError(await api.get('/v1/algorithms/alice/Hello/source/readme?ref=deadbeef', { key: alice.key }), 404, 1013);
      });

      test('a ref is never an option nor a path out: refused (400, or 404 for a shape no ref has) before git runs', async () => {
        const target = path.join(srv.dataDir, 'x-written-by-git');
        for (const ref of [
          `--output=${target}`,
          '-n',
          '--all',
          '../../etc/passwd',
          'main..other',
          'main@{1}',
          'HEAD~1',
          'HEAD^',
          'a b',
          'main:README.md',
          '.hidden',
          'x.lock',
          'ends/',
          'x'.repeat(201),
        ]) {
          const res = await api.get(`/v1/algorithms/alice/Hello/source/readme?ref=${encodeURIComponent(ref)}`, { key: alice.key });
          // Characters no ref holds: 400 naming what a ref may hold; a shape git never gives a ref
          // (`-n`, `a..b`): no such ref. Either way git never sees it.
          if (res.status === 400) assert.match(res.body.error.message, /ref must match pattern/, ref);
          else {
            assertError(res, 404, 1013);
            assert.match(res.body.error.message, /no commit, branch or tag/, ref);
          }
        }
        assert.equal(fs.existsSync(target), false, 'git wrote no file');
      });

      test('README names in any case and order of preference; none is a 404 that says what was looked for', async () => {
        const withTwo = await pushChange(srv, alice, 'alice', 'Open', 'Two readmes', (dir) => {
          fs.rmSync(path.join(dir, 'README.md'));
          fs.writeFileSync(path.join(dir, 'README.txt'), 'plain text\n');
          fs.writeFileSync(path.join(dir, 'readme.MarkDown'), '*markdown*\n');
          fs.mkdirSync(path.join(dir, 'docs'));
          fs.writeFileSync(path.join(dir, 'docs', 'README.md'), 'not at the root\n');
        });
        const res = await api.get('/v1/algorithms/alice/Open/source/readme', { key: bob.key });
        assert.deepEqual(res.body, { commit: withTwo, path: 'readme.MarkDown', content: '*markdown*\n' });
        const none = await pushChange(srv, alice, 'alice', 'Open', 'No readme at the root', (dir) => {
          for (const f of ['README.txt', 'readme.MarkDown']) fs.rmSync(path.join(dir, f));
          // A link named README is not a file.
          fs.symlinkSync('/etc/passwd', path.join(dir, 'README'));
        });
        const missing = await api.get('/v1/algorithms/alice/Open/source/readme', { key: bob.key });
        assertError(missing, 404, 1012);
        assert.match(
          missing.body.error.message,
          new RegExp(`no README at the root of commit ${none.slice(0, 12)}.*README\\.md, README\\.markdown, README\\.txt and README`),
        );
      });

      test('a README over 256 KiB is cut there and marked truncated, never mid-character', async () => {
        const big = 'é'.repeat(140 * 1024); // 280 KiB of two-byte characters
        const commit = await pushChange(srv, alice, 'alice', 'Secret', 'A long README', (dir) => {
          fs.writeFileSync(path.join(dir, 'README.md'), big);
        });
        const res = await api.get('/v1/algorithms/alice/Secret/source/readme', { key: alice.key });
        assert.equal(res.status, 200);
        assert.equal(res.body.commit, commit);
        assert.equal(res.body.truncated, true);
        assert.equal(Buffer.byteLength(res.body.content), 256 * 1024);
        assert.equal(res.body.content, big.slice(0, 128 * 1024));
        const other = await api.get(`/v1/algorithms/alice/Secret/source/readme?ref=${template}`, { key: alice.key });
        assertError(other, 404, 1013);
        assert.match(other.body.error.message, /alice\/Secret/, "a commit of another algorithm's repository is not found here");
      });

      test('README: anyone who may read the algorithm (it is documentation); others get the same 404', async () => {
        const readme = (name: string) => `/v1/algorithms/alice/${name}/source/readme`;
        assertError(await api.get(readme('Hello')), 401);
        assert.equal((await api.get(readme('Hello'), { key: bob.key })).status, 200, 'another user, public closed source');
        assertError(await api.get(readme('Secret'), { key: bob.key }), 404, 1001);
        assertError(await api.get(readme('Nope'), { key: bob.key }), 404, 1001);
        const call = await callKey(srv, bob, { id: 'x', ownerId: aliceId });
        try {
          assert.equal((await api.get(readme('Hello'), { key: call.key })).status, 200, "a call key reads a public algorithm's README");
          assertError(await api.get(readme('Secret'), { key: call.key }), 404, 1001);
        } finally {
          call.revoke();
        }
        assert.equal((await api.get(readme('Secret'), { key: aliceReader })).status, 200, "alice's restricted key reads her own");
        assert.equal((await api.get(readme('Secret'), { key: srv.adminKey })).status, 200, 'an admin');
      });

      test('an empty repository has no commits and no README', async () => {
        const id = await createAlgorithm(api, 'alice', alice.key, 'Empty');
        // Git refuses to delete the branch HEAD names over a push: empty the bare repository in place.
        const emptied = await git(['update-ref', '-d', 'refs/heads/main'], srv.server.services.repositories.pathOf(id));
        assert.equal(emptied.code, 0, emptied.stderr);
        const commits = await api.get('/v1/algorithms/alice/Empty/source/commits', { key: alice.key });
        assert.deepEqual(commits.body, { results: [] });
        const readme = await api.get('/v1/algorithms/alice/Empty/source/readme', { key: alice.key });
        assertError(readme, 404, 1012);
        assert.match(readme.body.error.message, /no commits yet/);
      });
    });

    describe('GET /v1/admin/status', () => {
      test('admins only: anonymous 401, a user 403, an admin call key 403', async () => {
        assertError(await api.get('/v1/admin/status'), 401);
        assertError(await api.get('/v1/admin/status', { key: alice.key }), 403, 2001);
        assertError(await api.get('/v1/admin/status', { auth: await signIn(api, 'alice') }), 403, 2001);
        const adminId = await accountId(api, srv.adminKey, 'admin');
        const call = await callKey(srv, srv.adminKey, { id: 'x', ownerId: adminId });
        try {
          assertError(await api.get('/v1/admin/status', { key: call.key }), 403, 2001);
        } finally {
          call.revoke();
        }
        const res = await api.get('/v1/admin/status', { key: srv.adminKey });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.version, PACKAGE_VERSION);
        assert.equal(res.body.database, database === 'postgres' ? 'postgresql' : 'sqlite');
        assert.equal(res.body.blob_store, 'disk');
        assert.ok(Number.isInteger(res.body.uptime_seconds) && res.body.uptime_seconds >= 0, res.text);
      });
    });
  });

  describe(`the admin status counts from the node's own data (${database})`, () => {
    let srv: TestServer;
    let api: Client;
    let alice: TestUser;
    let adminSession: string;
    const status = async () => (await api.get('/v1/admin/status', { auth: adminSession })).body;

    before(async () => {
      srv = await startTestServer({ database });
      api = checkedClient(srv.url);
      alice = await createUser(api, srv.adminKey, 'alice');
      await api.put('/v1/users/admin', { key: srv.adminKey, body: { password: PASSWORD } });
      adminSession = await signIn(api, 'admin');
    });
    after(() => srv.stop());

    test('a node that has done nothing: no builds, no runners, no calls', async () => {
      const s = await status();
      assert.deepEqual(
        { builds: s.builds, runners: s.runners, calls_per_minute: s.calls_per_minute },
        {
          builds: { queued: 0, running: 0 },
          runners: { warm: 0 },
          calls_per_minute: 0,
        },
      );
    });

    test('builds queued and running are read from the build queue (the database)', async () => {
      const algorithmId = await createAlgorithm(api, 'alice', alice.key, 'Queued');
      // Rows the scheduler is never woken for (nothing was pushed on this node yet), so they stay as written.
      const row = (id: string, status: 'queued' | 'in-progress' | 'failed') => ({
        id,
        algorithm_id: algorithmId,
        commit_sha: '0'.repeat(40),
        environment_name: 'python311',
        status,
        trigger: 'push' as const,
        attempt: 0,
        error: null,
        artifact: null,
        created_at: new Date().toISOString(),
        started_at: null,
        finished_at: null,
      });
      const ids = ['a', 'b', 'c', 'd'].map((c) => `${c.repeat(8)}-0000-4000-8000-000000000000`);
      const db = srv.server.services.db;
      await db
        .insertInto('builds')
        .values([row(ids[0]!, 'queued'), row(ids[1]!, 'queued'), row(ids[2]!, 'in-progress'), row(ids[3]!, 'failed')])
        .execute();
      try {
        assert.deepEqual((await status()).builds, { queued: 2, running: 1 });
      } finally {
        await db.deleteFrom('builds').where('id', 'in', ids).execute();
      }
      assert.deepEqual((await status()).builds, { queued: 0, running: 0 });
    });

    const python = selectedFixtures().find((f) => f.language === 'python');
    test(
      'calls of the last minute and warm runners, after a real build and calls',
      { skip: !python && 'python is not selected' },
      async () => {
        const sha = await createAndBuild(srv.url, api, alice, 'alice', 'Hello', python!.hello, { environment: python!.environment });
        for (let i = 0; i < 3; i++) {
          const call = await api.post(`/v1/algo/alice/Hello/${sha}`, {
            key: alice.key,
            raw: 'world',
            headers: { 'content-type': 'text/plain' },
          });
          assert.equal(call.body.result, 'hello world', call.text);
        }
        const s = await status();
        assert.equal(s.calls_per_minute, 3);
        assert.equal(s.runners.warm, 1);
        assert.deepEqual(s.builds, { queued: 0, running: 0 }, 'the build has finished');
      },
    );
  });
}
