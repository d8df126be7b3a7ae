/**
 * The real Gitea that `scripts/with-services.sh` starts (ALGOHOST_TEST_GITEA_*), as a Forge of
 * the external-SCM contract suite: users and organizations through its admin API, the OAuth
 * consent through its web pages (sign-in form, consent form), grants revoked in its settings.
 */
import assert from 'node:assert/strict';
import { CookieJar, type Forge, type ForgeUser, hmacHex } from './forge.js';

export const GITEA_URL = process.env.ALGOHOST_TEST_GITEA_URL;
const ADMIN_TOKEN = process.env.ALGOHOST_TEST_GITEA_ADMIN_TOKEN;

export const giteaSkipReason =
  GITEA_URL && ADMIN_TOKEN ? undefined : 'ALGOHOST_TEST_GITEA_URL is unset: scripts/with-services.sh (npm test) starts Gitea for this test';

export function giteaForge(): Forge {
  const base = GITEA_URL!;
  const api = async (method: string, path: string, body?: unknown, token = ADMIN_TOKEN!) => {
    const res = await fetch(`${base}/api/v1${path}`, {
      method,
      headers: { authorization: `token ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    assert.ok(res.ok, `Gitea ${method} ${path}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  };
  const signIn = async (user: ForgeUser) => {
    const jar = new CookieJar();
    await jar.fetch(`${base}/user/login`);
    const res = await jar.fetch(`${base}/user/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ user_name: user.name, password: user.password }).toString(),
    });
    assert.equal(res.status, 303, `signing in to Gitea as ${user.name}: ${res.status}`);
    return jar;
  };

  return {
    label: 'Gitea 1.26 (real)',
    provider: 'gitea',
    signsBody: true,
    async registerOAuthApp(redirectUri) {
      const app = await api('POST', '/user/applications/oauth2', {
        name: `algohost-${Date.now()}`,
        redirect_uris: [redirectUri],
        confidential_client: true,
      });
      return { provider: 'gitea', urls: { web: base }, oauth: { client_id: app.client_id, client_secret: app.client_secret } };
    },
    async createUser(name) {
      const password = `Pw-${name}-${Math.random().toString(36).slice(2)}`;
      await api('POST', '/admin/users', { username: name, email: `${name}@example.test`, password, must_change_password: false });
      return { name, password };
    },
    async createOrganization(owner, name, reader) {
      await api('POST', `/admin/users/${owner.name}/orgs`, { username: name, visibility: 'public' });
      if (reader) {
        const team = await api('POST', `/orgs/${name}/teams`, {
          name: 'readers',
          permission: 'read',
          can_create_org_repo: false,
          units: ['repo.code'],
        });
        await api('PUT', `/teams/${team.id}/members/${reader.name}`);
      }
    },
    async consent(user, authorizeUrl) {
      const jar = await signIn(user);
      const page = await jar.fetch(authorizeUrl);
      // Granted before: Gitea sends the browser straight back.
      if (page.status === 302 || page.status === 303) return page.headers.get('location')!;
      assert.equal(page.status, 200, `Gitea consent page: ${page.status}`);
      const html = await page.text();
      // Gitea warns of full access when the request names no scope (or one it does not know).
      assert.doesNotMatch(html, /access and write to all your account information/, 'the consent page promises no full access');
      assert.match(
        html,
        new RegExp(`name="scope" value="${new URL(authorizeUrl).searchParams.get('scope')}"`),
        'the grant carries the scopes',
      );
      const field = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? '';
      const granted = await jar.fetch(`${base}/login/oauth/grant`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          client_id: field('client_id'),
          state: field('state'),
          scope: field('scope'),
          nonce: field('nonce'),
          redirect_uri: field('redirect_uri').replace(/&amp;/g, '&'),
          granted: 'true',
        }).toString(),
      });
      assert.equal(granted.status, 303, `Gitea grant: ${granted.status} ${await granted.text()}`);
      return granted.headers.get('location')!;
    },
    async revokeGrants(user) {
      const jar = await signIn(user);
      const page = await (await jar.fetch(`${base}/user/settings/applications`)).text();
      const urls = [...page.matchAll(/data-url="(\/user\/settings\/applications\/oauth2\/\d+\/revoke\/\d+)"/g)].map((m) => m[1]!);
      assert.ok(urls.length > 0, 'the user has a grant to revoke');
      for (const url of urls) {
        const res = await jar.fetch(`${base}${url}`, { method: 'POST' });
        assert.ok(res.status < 400, `revoking ${url}: ${res.status}`);
      }
    },
    async createRepository(user, name) {
      await api('POST', `/admin/users/${user.name}/repos`, { name, private: true });
    },
    cloneUrl(user, owner, repo) {
      const u = new URL(base);
      return `${u.protocol}//${encodeURIComponent(user.name)}:${encodeURIComponent(user.password)}@${u.host}/${owner}/${repo}.git`;
    },
    delivery(secret, p) {
      const body = JSON.stringify({ ref: `refs/heads/${p.branch}`, before: p.before ?? '0'.repeat(40), after: p.after, commits: [] });
      const signature = hmacHex(secret, body);
      return {
        body,
        headers: {
          'content-type': 'application/json',
          'x-gitea-event': 'push',
          'x-gitea-delivery': p.id,
          'x-gitea-signature': signature,
          'x-hub-signature-256': `sha256=${signature}`,
        },
      };
    },
    async disableWebhooks(_user, owner, repo) {
      for (const hook of await api('GET', `/repos/${owner}/${repo}/hooks`)) {
        await api('PATCH', `/repos/${owner}/${repo}/hooks/${hook.id}`, { active: false });
      }
    },
    async stop() {},
  };
}
