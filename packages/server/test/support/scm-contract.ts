/**
 * The one contract suite of the SCM provider port (ARCHITECTURE.md, "External source
 * control"): run against the real Gitea and against the fakes of GitHub, GitLab and Bitbucket.
 * Everything goes through algohost's public API, the provider's own web flow and Git.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { SecretBox } from '../../src/lib/secret-box.js';
import { assertError, checkedClient } from './assertions.js';
import { environmentId } from './algorithms.js';
import { createUser, type TestUser } from './fixtures.js';
import { type Forge, type ForgeUser, mainAtForge, pushAtForge } from './forge.js';
import { clone, commitAndPush, gitUrl, removeClone } from './git.js';
import type { Client } from './http.js';
import { type DatabaseKind, startTestServer, type TestServer } from './server.js';

const CLUSTER_KEY = crypto.randomBytes(32);

/**
 * The scopes docs/users-guide.md promises each provider is asked for: the narrowest that cover
 * creating the repository, pushing the template, registering the webhook and reading the branch.
 * The suite then does all four with the token those scopes gave.
 */
const DOCUMENTED_SCOPES: Record<string, string[]> = {
  github: ['repo', 'read:org'],
  gitlab: ['api'],
  bitbucket: ['repository:write', 'repository:admin', 'webhook', 'account'],
  gitea: ['write:repository', 'write:user', 'write:organization'],
};

export function scmProviderContract(
  name: string,
  makeForge: () => Promise<Forge>,
  opts: { skip?: string; database?: DatabaseKind } = {},
): void {
  const database = opts.database ?? 'sqlite';
  describe(`SCM provider contract: ${name} (${database})`, { skip: opts.skip }, () => {
    let forge: Forge;
    let srv: TestServer;
    let api: Client;
    let me: TestUser;
    let fu: ForgeUser;
    let other: ForgeUser;
    let configId: string;
    let env: string;
    const tag = crypto.randomBytes(3).toString('hex');
    const org = `org_${tag}`;
    let algorithm = ''; // owner/name of the algorithm hosted at the provider
    let repo = '';
    let templateSha = '';

    before(async () => {
      forge = await makeForge();
      srv = await startTestServer({ database, env: { ALGOHOST_CLUSTER_KEY: CLUSTER_KEY.toString('base64') } });
      api = checkedClient(srv.url);
      me = await createUser(api, srv.adminKey, `me_${tag}`);
      fu = await forge.createUser(`ada_${tag}`);
      other = await forge.createUser(`bob_${tag}`);
      await forge.createOrganization(fu, org, other);
      const created = await api.post('/v1/admin/scms', {
        key: srv.adminKey,
        body: await forge.registerOAuthApp(`${srv.url}/v1/scms/oauth/callback`),
      });
      assert.equal(created.status, 200, created.text);
      configId = created.body.id;
      env = await environmentId(api, me.key, 'python311');
    });
    after(async () => {
      await srv?.stop();
      await forge?.stop();
    });

    /** Authorize (start, consent at the provider, back to algohost with the browser's cookie). */
    async function authorize(as: TestUser, user: ForgeUser): Promise<Response> {
      const started = await api.post(`/v1/scms/${configId}/authorize`, { key: as.key, body: { return_to: '/account' } });
      assert.equal(started.status, 200, started.text);
      const cookie = started.headers.get('set-cookie')!.split(';')[0]!;
      const callback = await forge.consent(user, started.body.authorize_url);
      assert.ok(callback.startsWith(`${srv.url}/v1/scms/oauth/callback?`), callback);
      return fetch(callback, { headers: { cookie }, redirect: 'manual' });
    }

    const sourceBody = (name: string, owner: string, repository: string) => ({
      name,
      details: { label: name },
      settings: { algorithm_environment: env },
      source: { scm: configId, repository_owner: owner, repository_name: repository, initial_commit_message: `First commit of ${name}` },
    });

    async function waitForBuild(
      owner: string,
      name: string,
      commit: string,
    ): Promise<{ build_id: string; status: string; trigger: string }> {
      for (;;) {
        const list = await api.get(`/v1/algorithms/${owner}/${name}/builds`, { key: me.key });
        const build = list.body.results.find((b: { commit_sha: string }) => b.commit_sha === commit);
        if (build && (build.status === 'succeeded' || build.status === 'failed')) return build;
        await new Promise((r) => setTimeout(r, 200));
      }
    }

    /** The webhook secret algohost registered, opened with the cluster key the test gave the server. */
    async function webhookSecret(algorithmId: string): Promise<string> {
      const row = await srv.server.services.db
        .selectFrom('algorithm_sources')
        .selectAll()
        .where('algorithm_id', '=', algorithmId)
        .executeTakeFirstOrThrow();
      return new SecretBox(CLUSTER_KEY).open(row.webhook_secret);
    }

    test('the consent asks the provider for the documented scopes, not the whole account', async () => {
      const started = await api.post(`/v1/scms/${configId}/authorize`, { key: me.key });
      assert.equal(started.status, 200, started.text);
      const scope = new URL(started.body.authorize_url).searchParams.get('scope');
      assert.deepEqual(scope?.split(' '), DOCUMENTED_SCOPES[forge.provider]);
    });

    test('authorization: the provider consent, back to the settings page; the token status asks the provider', async () => {
      const before = await api.post(`/v1/scms/${configId}/token/status`, { key: me.key });
      assert.deepEqual(before.body, { scm_username: '', authorization_status: 'unauthorized', scm_organizations: [] });
      const back = await authorize(me, fu);
      assert.equal(back.status, 302);
      assert.equal(back.headers.get('location'), `${srv.url}/account?scm=${configId}&scm_status=authorized`);
      const status = await api.post(`/v1/scms/${configId}/token/status`, { key: me.key });
      assert.equal(status.status, 200, status.text);
      assert.deepEqual(status.body, {
        scm_username: fu.name,
        authorization_status: 'authorized',
        scm_organizations: [{ scm_org_username: org, access_level: 'MEMBER' }],
      });
      const row = await srv.server.services.db.selectFrom('scm_authorizations').selectAll().executeTakeFirstOrThrow();
      assert.match(row.access_token, /^v1\./, 'the token is sealed at rest');
    });

    test('the callback refuses another browser and a used state; a refusal at the provider returns to the page with scm_status=error', async () => {
      const started = await api.post(`/v1/scms/${configId}/authorize`, { key: me.key });
      assert.equal(started.status, 200, started.text);
      const cookie = started.headers.get('set-cookie')!.split(';')[0]!;
      const callback = await forge.consent(fu, started.body.authorize_url);
      assertError(await api.get(callback.slice(srv.url.length)), 403, 9008);
      const again = await fetch(callback, { headers: { cookie }, redirect: 'manual' });
      assert.equal(again.status, 404, 'a state is used once');
      const third = await api.post(`/v1/scms/${configId}/authorize`, { key: me.key, body: { return_to: '/account?tab=scm' } });
      const state = new URL(third.body.authorize_url).searchParams.get('state')!;
      const denied = await fetch(`${srv.url}/v1/scms/oauth/callback?state=${state}&error=access_denied`, {
        headers: { cookie: third.headers.get('set-cookie')!.split(';')[0]! },
        redirect: 'manual',
      });
      assert.equal(denied.status, 302);
      const to = new URL(denied.headers.get('location')!);
      assert.equal(to.pathname, '/account');
      assert.equal(to.searchParams.get('tab'), 'scm');
      assert.equal(to.searchParams.get('scm_status'), 'error');
      assert.match(to.searchParams.get('scm_error')!, /access_denied/);
      assertError(await api.post(`/v1/scms/${configId}/authorize`, { key: me.key, body: { return_to: 'https://evil.example/' } }), 400);
      assertError(await api.post(`/v1/scms/${configId}/authorize`, { key: me.key, body: { return_to: '//evil.example/' } }), 400);
      // Still authorized: the failed flows changed nothing.
      assert.equal((await api.post(`/v1/scms/${configId}/token/status`, { key: me.key })).body.authorization_status, 'authorized');
    });

    test('every prerequisite is checked before anything is made: foreign owner, existing repository, disabled configuration', async () => {
      assertError(
        await api.post(`/v1/algorithms/${me.name}`, { key: me.key, body: sourceBody('Foreign', other.name, `foreign_${tag}`) }),
        403,
        9004,
      );
      await forge.createRepository(fu, `taken_${tag}`);
      assertError(
        await api.post(`/v1/algorithms/${me.name}`, { key: me.key, body: sourceBody('Taken', fu.name, `taken_${tag}`) }),
        409,
        9005,
      );
      assertError(await api.post(`/v1/algorithms/${me.name}`, { key: me.key, body: sourceBody('BadName', fu.name, 'bad/name') }), 400);
      const noMessage = sourceBody('NoMessage', fu.name, `nomsg_${tag}`);
      delete (noMessage.source as Record<string, unknown>).initial_commit_message;
      assertError(await api.post(`/v1/algorithms/${me.name}`, { key: me.key, body: noMessage }), 400);
      await api.patch(`/v1/admin/scms/${configId}`, { key: srv.adminKey, body: { enabled: false } });
      assertError(
        await api.post(`/v1/algorithms/${me.name}`, { key: me.key, body: sourceBody('Disabled', fu.name, `disabled_${tag}`) }),
        409,
        9002,
      );
      await api.patch(`/v1/admin/scms/${configId}`, { key: srv.adminKey, body: { enabled: true } });
      for (const name of ['Foreign', 'Taken', 'BadName', 'NoMessage', 'Disabled']) {
        assertError(await api.get(`/v1/algorithms/${me.name}/${name}`, { key: me.key }), 404, 1001);
      }
    });

    test('an algorithm hosted at the provider: the template is its first commit there, with the message; source shown; pushes here refused', async () => {
      repo = `hello_${tag}`;
      const created = await api.post(`/v1/algorithms/${me.name}`, { key: me.key, body: sourceBody('Hello', fu.name, repo) });
      assert.equal(created.status, 200, created.text);
      algorithm = `${me.name}/Hello`;
      const source = created.body.source;
      assert.equal(source.repository_name, repo);
      assert.equal(source.repository_owner, fu.name);
      assert.equal(source.scm.id, configId);
      assert.equal(source.scm.provider, forge.provider);
      assert.match(source.repository_https_url, /^https?:\/\//);
      assert.equal(typeof source.repository_ssh_url, 'string');
      const got = await api.get(`/v1/algorithms/${algorithm}`, { key: me.key });
      assert.deepEqual(got.body.source, source);

      const there = await mainAtForge(forge, fu, fu.name, repo);
      assert.deepEqual(
        there.commits.map((c) => c.message),
        ['First commit of Hello'],
      );
      templateSha = there.commits[0]!.sha;
      const { dir, result } = await clone(gitUrl(srv.url, me.name, me.key, me.name, 'Hello'));
      assert.equal(result.code, 0, result.stderr);
      try {
        const { git } = await import('./git.js');
        assert.equal((await git(['rev-parse', 'HEAD'], dir)).stdout.trim(), templateSha, 'the same commit here and there');
        assert.deepEqual((await git(['ls-tree', '-r', '--name-only', 'HEAD'], dir)).stdout.trim().split('\n'), there.files);
        const push = await commitAndPush(dir, 'pushed here');
        assert.notEqual(push.code, 0);
        assert.match(push.stderr, /lives at .*push there/);
      } finally {
        await removeClone(dir);
      }
      // In an organization where the user is MEMBER.
      const inOrg = await api.post(`/v1/algorithms/${me.name}`, { key: me.key, body: sourceBody('InOrg', org, `inorg_${tag}`) });
      assert.equal(inOrg.status, 200, inOrg.text);
      assert.equal(inOrg.body.source.repository_owner, org);
    });

    test('a push at the provider reaches algohost through the webhook and builds like an internal push', async () => {
      const sha = await pushAtForge(forge, fu, fu.name, repo, { 'NOTES.md': 'notes\n' }, 'notes at the provider');
      const build = await waitForBuild(me.name, 'Hello', sha);
      assert.equal(build.status, 'succeeded');
      assert.equal(build.trigger, 'push', 'a webhook delivers a push');
      const got = await api.get(`/v1/algorithms/${algorithm}`, { key: me.key });
      assert.equal(got.body.source.last_delivery.via, 'webhook');
      assert.equal(got.body.source.last_delivery.commit_sha, sha);
      // A forge may deliver the push more than once (Gitea retries a delivery it saw answered
      // slowly): a later one for the same commit fetches main again and finds it already here.
      assert.match(
        got.body.source.last_delivery.result,
        new RegExp(`build ${build.build_id} queued|up to date: ${sha.slice(0, 12)} is already here`),
      );
      const status = await api.get(`/v1/algorithms/${algorithm}/scm/status`, { key: me.key });
      assert.equal(status.body.scm_connection_status, 'active');
    });

    test('webhooks: unsigned, forged and replayed deliveries are refused, a stale one fetches main, and none builds anything', async () => {
      const id = (await api.get(`/v1/algorithms/${algorithm}`, { key: me.key })).body.id;
      const hook = `/v1/scm/webhooks/${id}`;
      const head = (await mainAtForge(forge, fu, fu.name, repo)).commits[0]!.sha;
      const secret = await webhookSecret(id);
      const forged = forge.delivery('not the secret', { id: crypto.randomUUID(), branch: 'main', after: head });
      assertError(await api.post(hook, { raw: forged.body, headers: forged.headers }), 401, 9006);
      const unsigned = forge.delivery(secret, { id: crypto.randomUUID(), branch: 'main', after: head });
      const bare = Object.fromEntries(Object.entries(unsigned.headers).filter(([k]) => !/signature|token/i.test(k)));
      assertError(await api.post(hook, { raw: unsigned.body, headers: bare }), 401, 9006);
      if (forge.signsBody) {
        // Signed, and its body altered afterwards.
        assertError(await api.post(hook, { raw: unsigned.body.replace(head, templateSha), headers: unsigned.headers }), 401, 9006);
      }
      assertError(await api.post(`/v1/scm/webhooks/${crypto.randomUUID()}`, { raw: unsigned.body, headers: unsigned.headers }), 404, 9012);
      // The delivery of what is built already: fine once ("up to date"), refused when replayed.
      const first = await api.post(hook, { raw: unsigned.body, headers: unsigned.headers });
      assert.equal(first.status, 200, first.text);
      assert.match(first.body.result, /up to date/);
      assertError(await api.post(hook, { raw: unsigned.body, headers: unsigned.headers }), 409, 9007);
      // An old delivery arriving late names a commit older than what is here: only a hint, main
      // at the provider is what counts, and that is built already.
      const stale = forge.delivery(secret, { id: crypto.randomUUID(), branch: 'main', after: templateSha });
      const late = await api.post(hook, { raw: stale.body, headers: stale.headers });
      assert.equal(late.status, 200, late.text);
      assert.equal(late.body.commit_sha, head);
      assert.match(late.body.result, new RegExp(`up to date.*the delivery named ${templateSha.slice(0, 12)}`));
      const other = forge.delivery(secret, { id: crypto.randomUUID(), branch: 'feature', after: head });
      const ignored = await api.post(hook, { raw: other.body, headers: other.headers });
      assert.equal(ignored.status, 200);
      assert.match(ignored.body.result, /only pushes to main are built/);
      const builds = await api.get(`/v1/algorithms/${algorithm}/builds`, { key: me.key });
      assert.equal(builds.body.results.length, 1, 'still the one build of the real push');
    });

    test('sync now builds what the provider holds when its webhooks cannot reach algohost', async () => {
      await forge.disableWebhooks(fu, fu.name, repo);
      const sha = await pushAtForge(forge, fu, fu.name, repo, { 'MORE.md': 'more\n' }, 'pushed while webhooks are off');
      const synced = await api.post(`/v1/algorithms/${algorithm}/scm/sync`, { key: me.key });
      assert.equal(synced.status, 200, synced.text);
      assert.equal(synced.body.commit_sha, sha);
      assert.equal(synced.body.build.commit_sha, sha);
      assert.equal(synced.body.build.trigger, 'sync');
      const built = await waitForBuild(me.name, 'Hello', sha);
      assert.equal(built.status, 'succeeded');
      assert.equal(built.trigger, 'sync', 'the builds list says the sync made it, not a push');
      const again = await api.post(`/v1/algorithms/${algorithm}/scm/sync`, { key: me.key });
      assert.match(again.body.result, /up to date/);
      assert.equal(again.body.build, undefined);
      const internal = await api.post(`/v1/algorithms/${me.name}`, {
        key: me.key,
        body: { name: 'Internal', settings: { algorithm_environment: env } },
      });
      assert.equal(internal.status, 200);
      assertError(await api.post(`/v1/algorithms/${me.name}/Internal/scm/sync`, { key: me.key }), 409, 9012);
    });

    test('a grant revoked at the provider: token status says unauthorized (the provider was asked) and creating with source is refused', async () => {
      await forge.revokeGrants(fu);
      const status = await api.post(`/v1/scms/${configId}/token/status`, { key: me.key });
      assert.equal(status.status, 200, status.text);
      assert.deepEqual(status.body, { scm_username: fu.name, authorization_status: 'unauthorized', scm_organizations: [] });
      const refused = await api.post(`/v1/algorithms/${me.name}`, { key: me.key, body: sourceBody('Revoked', fu.name, `revoked_${tag}`) });
      assertError(refused, 403, 9003);
      // The web UI's account page has this Settings tab and section (the specification's words).
      assert.match(refused.body.error.message, /Authorize it in the web UI \(Account, Settings tab, Source Code Management\)/);
      assertError(await api.get(`/v1/algorithms/${me.name}/Revoked`, { key: me.key }), 404, 1001);
      const conn = await api.get(`/v1/algorithms/${algorithm}/scm/status`, { key: me.key });
      assert.equal(conn.body.scm_connection_status, 'unauthorized');
      // Authorized again, then revoked here.
      assert.equal((await authorize(me, fu)).status, 302);
      assert.equal((await api.post(`/v1/scms/${configId}/token/status`, { key: me.key })).body.authorization_status, 'authorized');
      assert.equal((await api.delete(`/v1/scms/${configId}/token`, { key: me.key })).status, 204);
      assert.deepEqual((await api.post(`/v1/scms/${configId}/token/status`, { key: me.key })).body, {
        scm_username: '',
        authorization_status: 'unauthorized',
        scm_organizations: [],
      });
      // A configuration that backs algorithms cannot be deleted.
      assertError(await api.delete(`/v1/admin/scms/${configId}`, { key: srv.adminKey }), 409, 9011);
    });
  });
}
