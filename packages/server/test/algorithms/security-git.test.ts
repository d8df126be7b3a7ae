/**
 * Attacks on what a push may store (issue 11, items 12 and 13): trees git must refuse
 * (`..`, `../x`, `.git`, `.GIT`) and pushes past the size limits (one pack, one repository, one
 * account). Each is played with the real `git push` over smart HTTP and must be refused with a
 * message the pusher reads, leave the repository exactly as it was and queue no build; a normal
 * push afterwards still lands and builds.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createUser, type TestUser } from '../support/fixtures.js';
import { announcedBuildId, clone, commitAndPush, git, gitUrl, removeClone } from '../support/git.js';
import { client, type Client } from '../support/http.js';
import { DATABASES, startTestServer, type TestServer } from '../support/server.js';

const KiB = 1024;
const LIMITS = { push: 200 * KiB, repository: 350 * KiB, account: 450 * KiB };
/** Random bytes do not compress: each such file adds about its own size to a pack and a repository. */
const CHUNK = 120 * KiB;

for (const database of DATABASES) {
  describe(`Git push checks and limits (${database})`, () => {
    let srv: TestServer;
    let api: Client;
    const clones: string[] = [];

    before(async () => {
      srv = await startTestServer({
        database,
        env: {
          ALGOHOST_MAX_PUSH_BYTES: String(LIMITS.push),
          ALGOHOST_MAX_REPOSITORY_BYTES: String(LIMITS.repository),
          ALGOHOST_MAX_ACCOUNT_REPOSITORY_BYTES: String(LIMITS.account),
        },
      });
      api = client(srv.url);
    });
    after(async () => {
      for (const dir of clones) await removeClone(dir);
      await srv.stop();
    });

    /** A new user owning the named algorithms, each cloned. */
    async function owner(name: string, algorithms: string[]): Promise<{ user: TestUser; dirs: Record<string, string> }> {
      const user = await createUser(api, srv.adminKey, name);
      const dirs: Record<string, string> = {};
      for (const algo of algorithms) {
        const created = await api.post(`/v1/algorithms/${name}`, { key: user.key, body: { name: algo } });
        assert.equal(created.status, 200, created.text);
        const { dir, result } = await clone(gitUrl(srv.url, name, user.key, name, algo));
        assert.equal(result.code, 0, result.stderr);
        clones.push(dir);
        dirs[algo] = dir;
      }
      return { user, dirs };
    }

    /** What must not change when a push is refused: the server's refs, its size, its builds. */
    async function serverState(user: TestUser, algo: string) {
      const res = await api.get(`/v1/algorithms/${user.name}/${algo}`, { key: user.key });
      assert.equal(res.status, 200, res.text);
      const repo = srv.server.services.repositories.pathOf(res.body.id as string);
      const refs = await git(['for-each-ref', '--format=%(objectname) %(refname)'], repo);
      const builds = await api.get(`/v1/algorithms/${user.name}/${algo}/builds`, { key: user.key });
      assert.equal(builds.status, 200, builds.text);
      return {
        repo,
        refs: refs.stdout,
        bytes: await srv.server.services.repositories.sizeOf(res.body.id as string),
        objectDirs: fs.readdirSync(path.join(repo, 'objects')).sort(),
        builds: (builds.body.results as unknown[]).length,
      };
    }

    async function assertUnchanged(user: TestUser, algo: string, before: Awaited<ReturnType<typeof serverState>>, pushed: string) {
      const now = await serverState(user, algo);
      assert.deepEqual({ ...now, repo: undefined }, { ...before, repo: undefined }, 'the refused push changed the repository');
      // Nothing of the refused push was kept: its commit is not among the repository's objects.
      assert.notEqual((await git(['cat-file', '-e', `${pushed}^{commit}`], now.repo)).code, 0);
    }

    /** Adds a file of `bytes` random bytes and commits it; returns the commit. */
    async function commitRandom(dir: string, name: string, bytes: number): Promise<string> {
      fs.writeFileSync(path.join(dir, name), crypto.randomBytes(bytes));
      await git(['add', '-A'], dir);
      assert.equal((await git(['commit', '-q', '-m', name], dir)).code, 0);
      return (await git(['rev-parse', 'HEAD'], dir)).stdout.trim();
    }

    /** After refused pushes, the clone goes back to what the server has and a small push lands and builds. */
    async function smallPushBuilds(user: TestUser, algo: string, dir: string) {
      assert.equal((await git(['reset', '-q', '--hard', 'origin/main'], dir)).code, 0);
      fs.writeFileSync(path.join(dir, 'requirements.txt'), '');
      fs.appendFileSync(path.join(dir, 'src', `${algo}.py`), '\n# a normal change\n');
      const push = await commitAndPush(dir, 'normal change', { wait: true });
      assert.equal(push.code, 0, push.stderr);
      const id = announcedBuildId(push.stderr);
      assert.match(push.stderr, new RegExp(`build ${id} succeeded`), push.stderr);
      const ls = await git(['ls-remote', 'origin', 'refs/heads/main'], dir);
      assert.equal(ls.stdout.split('\t')[0], (await git(['rev-parse', 'HEAD'], dir)).stdout.trim());
      const res = await api.get(`/v1/algorithms/${user.name}/${algo}/builds/${id}`, { key: user.key });
      assert.equal(res.body.status, 'succeeded', res.text);
    }

    test('trees with "..", "../x", ".git" and ".GIT" entries are refused, naming the problem', async () => {
      const { user, dirs } = await owner('mallory', ['Trees']);
      const dir = dirs.Trees!;
      const head = (await git(['rev-parse', 'HEAD'], dir)).stdout.trim();
      const blob = await hashObject(dir, 'blob', Buffer.from('[core]\n\thooksPath = /tmp\n'));
      const subtree = await hashObject(dir, 'tree', treeBytes([{ mode: '100644', name: 'config', sha: blob }]));
      const headTree = await readTree(dir, 'HEAD^{tree}');
      const attacks: { entry: TreeEntry; problem: RegExp }[] = [
        { entry: { mode: '40000', name: '..', sha: subtree }, problem: /hasDotdot: contains '\.\.'/ },
        { entry: { mode: '100644', name: '../x', sha: blob }, problem: /fullPathname: contains full pathnames/ },
        { entry: { mode: '40000', name: '.git', sha: subtree }, problem: /hasDotgit: contains '\.git'/ },
        { entry: { mode: '40000', name: '.GIT', sha: subtree }, problem: /hasDotgit: contains '\.git'/ },
      ];
      // New repositories check objects themselves; one made before that (config unset) is
      // checked all the same, since the service turns the checks on for every push.
      const { repo } = await serverState(user, 'Trees');
      for (const key of ['receive.fsckObjects', 'transfer.fsckObjects']) {
        assert.equal((await git(['config', '--get', key], repo)).stdout.trim(), 'true');
        assert.equal((await git(['config', '--unset', key], repo)).code, 0);
      }
      const before = await serverState(user, 'Trees');
      for (const { entry, problem } of attacks) {
        const tree = await hashObject(dir, 'tree', treeBytes([...headTree, entry]));
        const commit = (await git(['commit-tree', tree, '-p', head, '-m', `entry ${entry.name}`], dir)).stdout.trim();
        const push = await git(['push', 'origin', `${commit}:refs/heads/main`], dir);
        assert.notEqual(push.code, 0, `a tree with "${entry.name}" was accepted:\n${push.stderr}`);
        assert.match(push.stderr, problem, push.stderr);
        assert.match(push.stderr, /! \[remote rejected\] .* -> main/, push.stderr);
        assert.equal(announcedBuildId(push.stderr), undefined);
        await assertUnchanged(user, 'Trees', before, commit);
      }
      await smallPushBuilds(user, 'Trees', dir);
    });

    test('a push larger than the push limit is refused while it streams, with the limit named', async () => {
      const { user, dirs } = await owner('alice', ['Big']);
      const dir = dirs.Big!;
      const before = await serverState(user, 'Big');
      const commit = await commitRandom(dir, 'big.bin', 300 * KiB);
      // Small enough for git to send with a Content-Length, then in chunks (a small post buffer).
      for (const args of [[], ['-c', 'http.postBuffer=65536']]) {
        const push = await git([...args, 'push', 'origin', 'HEAD:main'], dir);
        assert.notEqual(push.code, 0, push.stderr);
        assert.match(
          push.stderr,
          /remote: algohost: push refused: it sends more than 200 KiB \(204800 bytes\), the most one push may send/,
        );
        assert.match(push.stderr, /! \[remote rejected\] HEAD -> main \(push over the 200 KiB limit\)/, push.stderr);
        await assertUnchanged(user, 'Big', before, commit);
      }
      await smallPushBuilds(user, 'Big', dir);
    });

    test('a repository growing past its limit over several pushes: the push that crosses it is refused', async () => {
      const { user, dirs } = await owner('bob', ['Grows']);
      const dir = dirs.Grows!;
      for (const name of ['a.bin', 'b.bin']) {
        await commitRandom(dir, name, CHUNK);
        const push = await git(['push', 'origin', 'HEAD:main'], dir);
        assert.equal(push.code, 0, push.stderr);
      }
      const before = await serverState(user, 'Grows');
      assert.ok(before.bytes + CHUNK > LIMITS.repository && before.bytes < LIMITS.repository, `repository at ${before.bytes} bytes`);
      const commit = await commitRandom(dir, 'c.bin', CHUNK);
      const push = await git(['push', 'origin', 'HEAD:main'], dir);
      assert.notEqual(push.code, 0, push.stderr);
      assert.match(
        push.stderr,
        /remote: algohost: push refused: the repository of bob\/Grows would hold [\d.]+ KiB \(this push adds [\d.]+ KiB\), over the repository size limit of 350 KiB \(358400 bytes\)/,
      );
      assert.match(push.stderr, /! \[remote rejected\] HEAD -> main \(pre-receive hook declined\)/, push.stderr);
      await assertUnchanged(user, 'Grows', before, commit);
      await smallPushBuilds(user, 'Grows', dir);
    });

    test("an account's repositories together past the account limit: the push that crosses it is refused", async () => {
      const { user, dirs } = await owner('carol', ['First', 'Second']);
      for (const [algo, name] of [
        ['First', 'a.bin'],
        ['First', 'b.bin'],
        ['Second', 'a.bin'],
      ] as const) {
        await commitRandom(dirs[algo]!, name, CHUNK);
        const push = await git(['push', 'origin', 'HEAD:main'], dirs[algo]!);
        assert.equal(push.code, 0, push.stderr);
      }
      const before = await serverState(user, 'Second');
      const first = await serverState(user, 'First');
      // Second alone stays under the repository limit; both together cross the account's.
      assert.ok(before.bytes + CHUNK < LIMITS.repository, `Second at ${before.bytes} bytes`);
      assert.ok(before.bytes + first.bytes + CHUNK > LIMITS.account, `account at ${before.bytes + first.bytes} bytes`);
      const commit = await commitRandom(dirs.Second!, 'b.bin', CHUNK);
      const push = await git(['push', 'origin', 'HEAD:main'], dirs.Second!);
      assert.notEqual(push.code, 0, push.stderr);
      assert.match(
        push.stderr,
        /remote: algohost: push refused: the repositories of carol would hold [\d.]+ KiB together \(this push adds [\d.]+ KiB\), over the account's repository size limit of 450 KiB \(460800 bytes\)/,
      );
      await assertUnchanged(user, 'Second', before, commit);
      await smallPushBuilds(user, 'Second', dirs.Second!);
    });
  });
}

interface TreeEntry {
  mode: string;
  name: string;
  sha: string;
}

/** Writes an object exactly as given (`--literally`: git's own checks would refuse these trees). */
async function hashObject(dir: string, type: 'blob' | 'tree', content: Buffer): Promise<string> {
  const tmp = path.join(dir, '.git', `object-${crypto.randomUUID()}`);
  fs.writeFileSync(tmp, content);
  try {
    const res = await git(['hash-object', '-w', '--literally', '-t', type, tmp], dir);
    assert.equal(res.code, 0, res.stderr);
    return res.stdout.trim();
  } finally {
    fs.rmSync(tmp);
  }
}

async function readTree(dir: string, rev: string): Promise<TreeEntry[]> {
  const res = await git(['ls-tree', '-z', rev], dir);
  return res.stdout
    .split('\0')
    .filter(Boolean)
    .map((line) => {
      const [meta, name] = line.split('\t') as [string, string];
      const [mode, , sha] = meta.split(' ') as [string, string, string];
      return { mode: mode.replace(/^0+/, ''), name, sha };
    });
}

/** The raw bytes of a tree, entries in git's order (a directory sorts as if its name ended in "/"). */
function treeBytes(entries: TreeEntry[]): Buffer {
  const key = (e: TreeEntry) => Buffer.from(e.mode === '40000' ? `${e.name}/` : e.name);
  const sorted = [...entries].sort((a, b) => Buffer.compare(key(a), key(b)));
  return Buffer.concat(sorted.map((e) => Buffer.concat([Buffer.from(`${e.mode} ${e.name}\0`), Buffer.from(e.sha, 'hex')])));
}
