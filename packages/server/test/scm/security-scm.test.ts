/**
 * Attacks through an algorithm whose source lives at a provider (issue 36, items 4 and 5),
 * played against the real Gitea (when the test services run it) and against the fake of GitLab,
 * whose deliveries carry the webhook secret itself (GitLab cannot run here).
 *
 * - Webhook replay: alice's push at the provider is built; mallory keeps the signed delivery;
 *   alice force-pushes the commit away; mallory resends the delivery under a new id, and forges
 *   deliveries naming any commit (with GitLab's secret-in-header, one captured delivery is
 *   enough). main must stay at alice's tip and nothing of the removed commit may be built;
 *   alice's next push is built and her call answers with it.
 * - Size limits: a branch at the provider bigger than the push limit, or one that would take the
 *   repository or the account past its limit, is refused when synced or announced, with the
 *   reason in the answer and in the last delivery; nothing is kept (refs, objects, size, no
 *   staging left) and the algorithm still answers with its previous build.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { SecretBox } from '../../src/lib/secret-box.js';
import { SqlScmStore } from '../../src/storage/scm-store.js';
import { environmentId } from '../support/algorithms.js';
import { assertError, checkedClient } from '../support/assertions.js';
import { startFakeForge } from '../support/fake-forges.js';
import { createUser, type TestUser } from '../support/fixtures.js';
import { type Forge, type ForgeUser, pushAtForge } from '../support/forge.js';
import { giteaForge, giteaSkipReason } from '../support/gitea-forge.js';
import { git } from '../support/git.js';
import type { Client } from '../support/http.js';
import { DATABASES, makeTempDir, POSTGRES_URL, startTestServer, type TestServer } from '../support/server.js';

const CLUSTER_KEY = crypto.randomBytes(32);
const KiB = 1024;
/** Random bytes do not compress: a file of them adds about its own size to a pack and a repository. */
const LIMITS = { push: 256 * KiB, repository: 448 * KiB, account: 640 * KiB };

const suites: { forge: () => Promise<Forge>; label: string; database: (typeof DATABASES)[number]; skip?: string }[] = [
  ...DATABASES.map((database) => ({ forge: () => startFakeForge('gitlab'), label: 'GitLab (fake)', database })),
  {
    forge: async () => giteaForge(),
    label: 'Gitea (real)',
    database: POSTGRES_URL ? ('postgres' as const) : ('sqlite' as const),
    skip: giteaSkipReason,
  },
];

/** The Python source of an algorithm answering `<tag> says hello <input>`. */
const source = (tag: string) => `def apply(input):\n    return "${tag} says hello " + str(input)\n`;

for (const suite of suites) {
  describe(`SCM webhooks and fetch limits: ${suite.label} (${suite.database})`, { skip: suite.skip }, () => {
    let forge: Forge;
    let srv: TestServer;
    let api: Client;
    let alice: TestUser;
    let fu: ForgeUser;
    let configId: string;
    let env: string;
    const tag = crypto.randomBytes(3).toString('hex');

    before(async () => {
      forge = await suite.forge();
      srv = await startTestServer({
        database: suite.database,
        env: {
          ALGOHOST_CLUSTER_KEY: CLUSTER_KEY.toString('base64'),
          ALGOHOST_MAX_PUSH_BYTES: String(LIMITS.push),
          ALGOHOST_MAX_REPOSITORY_BYTES: String(LIMITS.repository),
          ALGOHOST_MAX_ACCOUNT_REPOSITORY_BYTES: String(LIMITS.account),
        },
      });
      api = checkedClient(srv.url);
      alice = await createUser(api, srv.adminKey, `alice_${tag}`);
      fu = await forge.createUser(`alice_${tag}`);
      const created = await api.post('/v1/admin/scms', {
        key: srv.adminKey,
        body: await forge.registerOAuthApp(`${srv.url}/v1/scms/oauth/callback`),
      });
      assert.equal(created.status, 200, created.text);
      configId = created.body.id;
      env = await environmentId(api, alice.key, 'python311');
      const started = await api.post(`/v1/scms/${configId}/authorize`, { key: alice.key, body: { return_to: '/account' } });
      assert.equal(started.status, 200, started.text);
      const cookie = started.headers.get('set-cookie')!.split(';')[0]!;
      const back = await fetch(await forge.consent(fu, started.body.authorize_url), { headers: { cookie }, redirect: 'manual' });
      assert.equal(back.status, 302);
    });
    after(async () => {
      await srv?.stop();
      await forge?.stop();
    });

    /** alice's algorithm `name`, its source at the provider as `repo`; answers its id and the template commit. */
    async function hosted(name: string, repo: string): Promise<{ id: string; template: string }> {
      const created = await api.post(`/v1/algorithms/${alice.name}`, {
        key: alice.key,
        body: {
          name,
          details: { label: name },
          settings: { algorithm_environment: env },
          source: { scm: configId, repository_owner: fu.name, repository_name: repo, initial_commit_message: `First commit of ${name}` },
        },
      });
      assert.equal(created.status, 200, created.text);
      const id = created.body.id as string;
      return { id, template: (await srv.server.services.repositories.head(id))! };
    }

    async function waitForBuild(name: string, commit: string): Promise<{ build_id: string; status: string }> {
      const deadline = Date.now() + 180_000;
      for (;;) {
        const list = await api.get(`/v1/algorithms/${alice.name}/${name}/builds`, { key: alice.key });
        const build = list.body.results.find((b: { commit_sha: string }) => b.commit_sha === commit);
        if (build && (build.status === 'succeeded' || build.status === 'failed')) return build;
        assert.ok(Date.now() < deadline, `no finished build of ${commit} for ${name}: ${JSON.stringify(list.body)}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    }

    const builds = async (name: string): Promise<{ commit_sha: string }[]> =>
      (await api.get(`/v1/algorithms/${alice.name}/${name}/builds`, { key: alice.key })).body.results;

    const call = async (name: string, commit: string) => {
      const res = await api.post(`/v1/algo/${alice.name}/${name}/${commit}`, { key: alice.key, body: 'world' });
      assert.equal(res.status, 200, res.text);
      return res.body.result;
    };

    async function webhookSecret(algorithmId: string): Promise<string> {
      const row = await srv.server.services.db
        .selectFrom('algorithm_sources')
        .selectAll()
        .where('algorithm_id', '=', algorithmId)
        .executeTakeFirstOrThrow();
      return new SecretBox(CLUSTER_KEY).open(row.webhook_secret);
    }

    /** As alice at the provider: main reset to `base`, one commit with `files` on it, pushed with --force. */
    async function forcePushAtForge(repo: string, base: string, files: Record<string, string | Buffer>, message: string): Promise<string> {
      const parent = await makeTempDir('algohost-forge-');
      const dir = path.join(parent, 'work');
      try {
        assert.equal((await git(['clone', '-q', forge.cloneUrl(fu, fu.name, repo), dir])).code, 0);
        assert.equal((await git(['reset', '-q', '--hard', base], dir)).code, 0);
        for (const [file, content] of Object.entries(files)) {
          fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
          fs.writeFileSync(path.join(dir, file), content);
        }
        await git(['add', '-A'], dir);
        const commit = await git(['commit', '-q', '-m', message], dir);
        assert.equal(commit.code, 0, commit.stderr);
        const pushed = await git(['push', '-q', '--force', 'origin', 'HEAD:main'], dir);
        assert.equal(pushed.code, 0, pushed.stderr);
        return (await git(['rev-parse', 'HEAD'], dir)).stdout.trim();
      } finally {
        await fs.promises.rm(parent, { recursive: true, force: true });
      }
    }

    /** What a refused fetch must leave as it was: refs, size, object directories, builds; and no staging left. */
    async function state(name: string, id: string) {
      const repo = srv.server.services.repositories.pathOf(id);
      const packs = (dir: string) => (fs.existsSync(dir) ? fs.readdirSync(dir).sort() : []);
      return {
        refs: (await git(['for-each-ref', '--format=%(objectname) %(refname)'], repo)).stdout,
        bytes: await srv.server.services.repositories.sizeOf(id),
        objectDirs: fs.readdirSync(path.join(repo, 'objects')).sort(),
        packs: packs(path.join(repo, 'objects', 'pack')),
        builds: (await builds(name)).length,
        staging: fs.readdirSync(srv.server.services.repositories.root).filter((e) => e.startsWith('.tmp')),
      };
    }

    test('a captured delivery resent after a force-push, or forged naming any commit, does not roll main back or build the removed commit', async () => {
      const name = 'Rollback';
      const repo = `rollback_${tag}`;
      const { id, template } = await hosted(name, repo);
      const hook = `/v1/scm/webhooks/${id}`;
      const secret = await webhookSecret(id);

      // alice's push at the provider, delivered by the provider and built.
      const removed = await pushAtForge(forge, fu, fu.name, repo, { [`src/${name}.py`]: source('removed') }, 'a commit alice takes back');
      assert.equal((await waitForBuild(name, removed)).status, 'succeeded');
      // mallory keeps that delivery (its body and signature, or GitLab's token, as sent).
      const captured = (deliveryId: string) => forge.delivery(secret, { id: deliveryId, branch: 'main', before: template, after: removed });

      // alice takes the commit back: main at the provider no longer contains it.
      const kept = await forcePushAtForge(repo, template, { [`src/${name}.py`]: source('kept') }, 'what alice keeps');
      assert.equal((await waitForBuild(name, kept)).status, 'succeeded');
      assert.equal(await srv.server.services.repositories.head(id), kept);
      const buildsBefore = await builds(name);

      // The replay under a new delivery id (the id is not signed).
      const replay = captured(crypto.randomUUID());
      const replayed = await api.post(hook, { raw: replay.body, headers: replay.headers });
      assert.equal(replayed.status, 200, replayed.text);
      assert.equal(replayed.body.commit_sha, kept, 'what is fetched now is what counts');
      assert.equal(replayed.body.build, undefined, replayed.text);
      assert.match(replayed.body.result, new RegExp(`up to date.*delivery named ${removed.slice(0, 12)}`));
      // Forgeries naming the removed commit, one never pushed, and the template (an ancestor).
      for (const after of [removed, crypto.randomBytes(20).toString('hex'), template]) {
        const forged = forge.delivery(secret, { id: crypto.randomUUID(), branch: 'main', before: kept, after });
        const res = await api.post(hook, { raw: forged.body, headers: forged.headers });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.commit_sha, kept);
        assert.equal(res.body.build, undefined, res.text);
      }
      // The same delivery id again is still turned away (a hint that saves a fetch).
      const twice = captured(crypto.randomUUID());
      assert.equal((await api.post(hook, { raw: twice.body, headers: twice.headers })).status, 200);
      assertError(await api.post(hook, { raw: twice.body, headers: twice.headers }), 409, 9007);

      assert.equal(await srv.server.services.repositories.head(id), kept, 'main did not move back');
      assert.deepEqual(await builds(name), buildsBefore, 'nothing was built');
      assert.equal(
        (await builds(name)).filter((b) => b.commit_sha === removed).length,
        1,
        'the removed commit was built once, before it was removed',
      );
      const status = await api.get(`/v1/algorithms/${alice.name}/${name}/scm/status`, { key: alice.key });
      assert.equal(status.body.last_delivery.commit_sha, kept);

      // alice's next push is built, and her call answers with it.
      const next = await pushAtForge(forge, fu, fu.name, repo, { [`src/${name}.py`]: source('next') }, 'alice carries on');
      assert.equal((await waitForBuild(name, next)).status, 'succeeded');
      assert.equal(await srv.server.services.repositories.head(id), next);
      assert.equal(await call(name, next), 'next says hello world');
    });

    test('delivery ids resent without end keep a bounded number of rows (the ids are not signed)', async () => {
      const { id } = await hosted('Ids', `ids_${tag}`);
      const store = new SqlScmStore(srv.server.services.db);
      const week = new Date(Date.now() - 7 * 24 * 3600 * 1000).toISOString();
      const ids = Array.from({ length: 8 }, (_, i) => `delivery-${i}`);
      for (const [i, deliveryId] of ids.entries()) {
        assert.equal(await store.rememberDelivery(id, deliveryId, new Date(Date.now() + i * 1000).toISOString(), week, 3), true);
      }
      const rows = await srv.server.services.db
        .selectFrom('scm_webhook_deliveries')
        .select('delivery_id')
        .where('algorithm_id', '=', id)
        .execute();
      assert.deepEqual(rows.map((r) => r.delivery_id).sort(), ids.slice(-3));
      assert.equal(await store.rememberDelivery(id, ids.at(-1)!, new Date().toISOString(), week, 3), false, 'a recent id is still known');
    });

    test('a branch over the push, repository or account limit is refused when fetched, keeping nothing; the previous build still answers', async () => {
      const name = 'Big';
      const repo = `big_${tag}`;
      const { id } = await hosted(name, repo);
      const hook = `/v1/scm/webhooks/${id}`;
      const secret = await webhookSecret(id);
      const small = await pushAtForge(forge, fu, fu.name, repo, { [`src/${name}.py`]: source('small') }, 'small');
      assert.equal((await waitForBuild(name, small)).status, 'succeeded');
      // From here on deliveries are sent by the test, so each answer can be read.
      await forge.disableWebhooks(fu, fu.name, repo);

      async function refused(expected: RegExp): Promise<void> {
        const before = await state(name, id);
        const sha = (await git(['ls-remote', forge.cloneUrl(fu, fu.name, repo), 'refs/heads/main'])).stdout.slice(0, 40);
        const d = forge.delivery(secret, { id: crypto.randomUUID(), branch: 'main', after: sha });
        const announced = await api.post(hook, { raw: d.body, headers: d.headers });
        assertError(announced, 409, 9013);
        assert.match(announced.body.error.message, expected);
        assert.match(announced.body.error.message, /Nothing was kept/);
        const synced = await api.post(`/v1/algorithms/${alice.name}/${name}/scm/sync`, { key: alice.key });
        assertError(synced, 409, 9013);
        assert.match(synced.body.error.message, expected);
        const status = await api.get(`/v1/algorithms/${alice.name}/${name}/scm/status`, { key: alice.key });
        assert.equal(status.status, 200, status.text);
        assert.match(status.body.last_delivery.result, /^failed: fetching main from the provider was refused/);
        assert.deepEqual(await state(name, id), before, 'the refused fetch left something behind');
        const { code } = await git(['cat-file', '-e', `${sha}^{commit}`], srv.server.services.repositories.pathOf(id));
        assert.notEqual(code, 0, 'the refused commit is not among the repository objects');
      }

      // One fetch bigger than a push may be.
      await pushAtForge(forge, fu, fu.name, repo, { 'big.bin': crypto.randomBytes(LIMITS.push + 64 * KiB).toString('base64') }, 'too big');
      await refused(/push size limit of 256 KiB/);
      assert.equal(await call(name, small), 'small says hello world');

      // Within the push limit but past the repository's.
      const first = await forcePushAtForge(repo, small, { 'a.bin': crypto.randomBytes(200 * KiB) }, 'first half');
      const accepted = await api.post(`/v1/algorithms/${alice.name}/${name}/scm/sync`, { key: alice.key });
      assert.equal(accepted.status, 200, accepted.text);
      assert.equal(accepted.body.commit_sha, first);
      assert.equal((await waitForBuild(name, first)).status, 'succeeded');
      await pushAtForge(forge, fu, fu.name, repo, { 'b.bin': crypto.randomBytes(240 * KiB) }, 'second half');
      await refused(/repository size limit of 448 KiB/);

      // Within the push and repository limits but past the account's (alice's other repositories count).
      const other = await hosted('Other', `other_${tag}`);
      const otherSha = await pushAtForge(forge, fu, fu.name, `other_${tag}`, { 'c.bin': crypto.randomBytes(200 * KiB) }, 'other');
      assert.equal((await waitForBuild('Other', otherSha)).status, 'succeeded');
      const sizes = await Promise.all(
        [id, other.id, (await api.get(`/v1/algorithms/${alice.name}/Rollback`, { key: alice.key })).body.id].map((a) =>
          srv.server.services.repositories.sizeOf(a),
        ),
      );
      const total = sizes.reduce((a, b) => a + b, 0);
      const past = LIMITS.account - total + 40 * KiB;
      assert.ok(
        past < LIMITS.push - 32 * KiB && sizes[0]! + past < LIMITS.repository - 16 * KiB,
        `sizes ${sizes.join(', ')}: no fetch fits only the account limit`,
      );
      await forcePushAtForge(repo, first, { 'd.bin': crypto.randomBytes(past) }, 'past the account');
      await refused(/account's repository size limit of 640 KiB/);

      // Still alice's previous build, and her next fetch within the limits lands.
      assert.equal(await call(name, first), 'small says hello world');
      const fits = await forcePushAtForge(repo, first, { [`src/${name}.py`]: source('fits') }, 'fits');
      const synced = await api.post(`/v1/algorithms/${alice.name}/${name}/scm/sync`, { key: alice.key });
      assert.equal(synced.status, 200, synced.text);
      assert.equal((await waitForBuild(name, fits)).status, 'succeeded');
      assert.equal(await call(name, fits), 'fits says hello world');
    });
  });
}
