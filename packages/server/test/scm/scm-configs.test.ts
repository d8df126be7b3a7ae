import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertError, checkedClient } from '../support/assertions.js';
import { createUser, type TestUser } from '../support/fixtures.js';
import type { Client } from '../support/http.js';
import { DATABASES, startTestServer, type TestServer } from '../support/server.js';

const SECRET = 'client-secret-that-never-leaves';

/** SCM configurations (spec "SCM configuration", compat §6): admins manage them, everyone lists them. */
for (const database of DATABASES) {
  describe(`SCM configurations (${database})`, () => {
    let srv: TestServer;
    let api: Client;
    let user: TestUser;
    before(async () => {
      srv = await startTestServer({ database });
      api = checkedClient(srv.url);
      user = await createUser(api, srv.adminKey, 'scm_user');
    });
    after(() => srv.stop());

    const create = (body: unknown) => api.post('/v1/admin/scms', { key: srv.adminKey, body });

    test('the internal SCM is always listed first, as the default', async () => {
      const res = await api.get('/v1/scms', { key: user.key });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body.results[0], {
        id: 'internal',
        name: new URL(srv.url).host,
        provider: 'internal',
        default: true,
        enabled: true,
        urls: { web: srv.url, api: `${srv.url}/v1` },
      });
      const one = await api.get('/v1/scms/internal', { key: user.key });
      assert.deepEqual(one.body, res.body.results[0]);
    });

    test('an admin creates a configuration: fields exactly as the spec table, the secret never shown and sealed at rest', async () => {
      const res = await create({
        provider: 'github',
        urls: { web: 'https://github.com' },
        oauth: { client_id: 'Iv1.abc', client_secret: SECRET },
      });
      assert.equal(res.status, 200, res.text);
      assert.match(res.body.id, /^[0-9a-f-]{36}$/);
      assert.deepEqual(res.body, {
        id: res.body.id,
        name: 'github.com',
        provider: 'github',
        default: false,
        enabled: true,
        scm: { client_id: 'Iv1.abc' },
        oauth: { client_id: 'Iv1.abc' },
        urls: { web: 'https://github.com', api: 'https://api.github.com', ssh: 'ssh://git@github.com' },
      });
      const listed = await api.get('/v1/scms', { key: user.key });
      assert.ok(!listed.text.includes(SECRET));
      assert.deepEqual(
        listed.body.results.map((c: { id: string }) => c.id),
        ['internal', res.body.id],
      );
      // At rest: the database holds the secret sealed, never as written.
      const row = await srv.server.services.db
        .selectFrom('scm_configs')
        .selectAll()
        .where('id', '=', res.body.id)
        .executeTakeFirstOrThrow();
      assert.ok(!row.oauth_client_secret.includes(SECRET));
      assert.match(row.oauth_client_secret, /^v1\./);
    });

    test('GitHub Enterprise, GitLab, Bitbucket and Gitea get their API addresses from the web address', async () => {
      const cases: [string, string, string][] = [
        ['github', 'https://ghe.example.org', 'https://ghe.example.org/api/v3'],
        ['gitlab', 'https://gitlab.example.org', 'https://gitlab.example.org/api/v4'],
        ['bitbucket', 'https://bitbucket.org', 'https://api.bitbucket.org/2.0'],
        ['gitea', 'https://gitea.example.org/sub', 'https://gitea.example.org/sub/api/v1'],
      ];
      for (const [provider, web, apiUrl] of cases) {
        const res = await create({ provider, urls: { web }, oauth: { client_id: 'id', client_secret: 's' } });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.urls.api, apiUrl);
      }
    });

    test('make default, disable, rename: PATCH; the internal SCM stops being the default', async () => {
      const made = await create({
        provider: 'gitea',
        name: 'Our Gitea',
        urls: { web: 'https://git.example.org' },
        oauth: { client_id: 'c', client_secret: 's' },
      });
      const id = made.body.id;
      const patched = await api.patch(`/v1/admin/scms/${id}`, {
        key: srv.adminKey,
        body: { default: true, enabled: false, name: 'Gitea (old)' },
      });
      assert.equal(patched.status, 200, patched.text);
      assert.equal(patched.body.default, true);
      assert.equal(patched.body.enabled, false);
      assert.equal(patched.body.name, 'Gitea (old)');
      const list = await api.get('/v1/scms', { key: user.key });
      const defaults = list.body.results.filter((c: { default: boolean }) => c.default).map((c: { id: string }) => c.id);
      assert.deepEqual(defaults, [id]);
      // Another default takes the flag from it.
      const other = await create({
        provider: 'gitlab',
        default: true,
        urls: { web: 'https://gitlab.com' },
        oauth: { client_id: 'c', client_secret: 's' },
      });
      assert.equal((await api.get(`/v1/scms/${id}`, { key: user.key })).body.default, false);
      assert.equal((await api.get(`/v1/scms/${other.body.id}`, { key: user.key })).body.default, true);
      const deleted = await api.delete(`/v1/admin/scms/${other.body.id}`, { key: srv.adminKey });
      assert.equal(deleted.status, 204);
      assertError(await api.get(`/v1/scms/${other.body.id}`, { key: user.key }), 404, 9001);
      // With no external default, the internal SCM is the default again.
      await api.patch(`/v1/admin/scms/${id}`, { key: srv.adminKey, body: { default: false } });
      assert.equal((await api.get('/v1/scms/internal', { key: user.key })).body.default, true);
    });

    test('bad input is a clear 4xx: provider, addresses, client, unknown and foreign ids, non-admins', async () => {
      const good = { provider: 'gitea', urls: { web: 'https://g.example.org' }, oauth: { client_id: 'c', client_secret: 's' } };
      assertError(await create({ ...good, provider: 'svn' }), 400);
      assertError(await create({ ...good, urls: { web: 'ftp://g.example.org' } }), 400, 6001);
      assertError(await create({ ...good, urls: { web: 'not a url' } }), 400, 6001);
      assertError(await create({ ...good, urls: { web: 'https://u:p@g.example.org' } }), 400, 6001);
      assertError(await create({ ...good, urls: {} }), 400, 6001);
      assertError(await create({ ...good, urls: { web: 'https://g.example.org', ssh: 'git@host; rm -rf /' } }), 400, 6001);
      assertError(await create({ ...good, oauth: { client_id: 'c' } }), 400, 6001);
      assertError(await create({ ...good, oauth: { client_secret: 's' } }), 400, 6001);
      assertError(await create({ ...good, oauth: { client_id: 'a', client_secret: 's' }, scm: { client_id: 'b' } }), 400, 6001);
      assertError(await create({ ...good, default: 'yes' }), 400);
      assertError(await api.post('/v1/admin/scms', { key: user.key, body: good }), 403, 2001);
      assertError(await api.get('/v1/scms/00000000-0000-4000-8000-000000000000', { key: user.key }), 404, 9001);
      assertError(await api.get('/v1/scms/not-an-id', { key: user.key }), 404, 9001);
      assertError(await api.get(`/v1/scms/${encodeURIComponent('x\u0000y')}`, { key: user.key }), 404, 9001);
      assertError(await api.patch('/v1/admin/scms/00000000-0000-4000-8000-000000000000', { key: srv.adminKey, body: {} }), 404, 9001);
      assertError(await api.delete('/v1/admin/scms/internal', { key: srv.adminKey }), 400);
      const made = await create(good);
      assertError(await api.patch(`/v1/admin/scms/${made.body.id}`, { key: srv.adminKey, body: { provider: 'github' } }), 400);
      assertError(await api.patch(`/v1/admin/scms/${made.body.id}`, { key: user.key, body: { enabled: false } }), 403);
      assertError(await api.delete(`/v1/admin/scms/${made.body.id}`, { key: user.key }), 403);
      assertError(await api.get('/v1/scms'), 401);
    });

    test('the OAuth callback bounds its query: a huge code or description is a 400, never a 431 before any route', async () => {
      // 4-byte characters, 12 bytes each percent-encoded: past the schema's limits, still under Node's header limit.
      const emoji = (n: number) => encodeURIComponent('\u{1F60D}'.repeat(n));
      assertError(await api.get(`/v1/scms/oauth/callback?state=s&code=${emoji(501)}`), 400);
      assertError(await api.get(`/v1/scms/oauth/callback?state=&code=${emoji(501)}`), 400);
      assertError(await api.get(`/v1/scms/oauth/callback?state=s&error=x&error_description=${emoji(301)}`), 400);
      // At the limits, every field at once still reaches the route: an unknown state is 404.
      const full = `state=${emoji(200)}&code=${emoji(500)}&error=${emoji(100)}&error_description=${emoji(300)}`;
      assertError(await api.get(`/v1/scms/oauth/callback?${full}`), 404);
    });

    test('token status: unknown configuration 404, never authorized → unauthorized, internal → the account itself', async () => {
      assertError(await api.post('/v1/scms/00000000-0000-4000-8000-000000000000/token/status', { key: user.key }), 404, 9001);
      const made = await create({
        provider: 'gitea',
        urls: { web: 'https://g2.example.org' },
        oauth: { client_id: 'c', client_secret: 's' },
      });
      const status = await api.post(`/v1/scms/${made.body.id}/token/status`, { key: user.key });
      assert.equal(status.status, 200, status.text);
      assert.deepEqual(status.body, { scm_username: '', authorization_status: 'unauthorized', scm_organizations: [] });
      const internal = await api.post('/v1/scms/internal/token/status', { key: user.key });
      assert.deepEqual(internal.body, { scm_username: 'scm_user', authorization_status: 'authorized', scm_organizations: [] });
    });

    test('creating with source: unknown or disabled configuration is a 4xx and nothing is created', async () => {
      const envs = await api.get('/v1/algorithm-environments/edge/languages/python3/environments', { key: user.key });
      const env = envs.body[0].id;
      const source = (scm: string) => ({ scm, repository_name: 'r', repository_owner: 'o', initial_commit_message: 'first' });
      assertError(
        await api.post(`/v1/algorithms/${user.name}`, {
          key: user.key,
          body: { name: 'A1', settings: { algorithm_environment: env }, source: source('00000000-0000-4000-8000-000000000000') },
        }),
        404,
        9001,
      );
      const disabled = await create({
        provider: 'gitea',
        enabled: false,
        urls: { web: 'https://g3.example.org' },
        oauth: { client_id: 'c', client_secret: 's' },
      });
      assertError(
        await api.post(`/v1/algorithms/${user.name}`, {
          key: user.key,
          body: { name: 'A1', settings: { algorithm_environment: env }, source: source(disabled.body.id) },
        }),
        409,
        9002,
      );
      const enabled = await create({
        provider: 'gitea',
        urls: { web: 'https://g4.example.org' },
        oauth: { client_id: 'c', client_secret: 's' },
      });
      assertError(
        await api.post(`/v1/algorithms/${user.name}`, {
          key: user.key,
          body: { name: 'A1', settings: { algorithm_environment: env }, source: source(enabled.body.id) },
        }),
        403,
        9003,
      );
      assertError(await api.get(`/v1/algorithms/${user.name}/A1`, { key: user.key }), 404, 1001);
      // The internal SCM by name is the plain create.
      const internal = await api.post(`/v1/algorithms/${user.name}`, {
        key: user.key,
        body: { name: 'A2', settings: { algorithm_environment: env }, source: { scm: 'internal' } },
      });
      assert.equal(internal.status, 200, internal.text);
      assert.equal(internal.body.source, undefined);
    });
  });
}
