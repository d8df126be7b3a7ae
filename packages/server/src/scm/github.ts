/**
 * GitHub (github.com and GitHub Enterprise Server by its base URLs): an OAuth App with PKCE
 * (refresh tokens only when the app issues expiring tokens), REST API v3, webhooks signed with
 * X-Hub-Signature-256.
 */
import type { ProviderEndpoint, ScmProvider } from '../domain/scm/ports.js';
import { readHubWebhook } from './hub-webhook.js';
import { basic, enc, providerFetch, consentUrl } from './http.js';
import { oauthTokenExchange } from './oauth.js';

const NAME = 'GitHub';
/**
 * `repo`: private repositories (the repositories made here are private), pushing to them and their
 * webhooks (`repo` covers repository hooks, so `admin:repo_hook` adds nothing); `read:org`: which
 * organizations the user belongs to. Not `delete_repo`: undoing a half-made repository is the
 * only deletion, and asking every user for it is worse than naming the leftover repository.
 */
const GITHUB_SCOPES = 'repo read:org';
const api = (e: ProviderEndpoint, path: string) => `${e.urls.api}${path}`;
const JSON_HEADERS = { accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28' };

export const githubProvider: ScmProvider = {
  kind: 'github',
  pkce: true,
  defaultApiUrl: (web) => (web.hostname === 'github.com' ? 'https://api.github.com' : `${web.toString().replace(/\/+$/, '')}/api/v3`),

  ...oauthTokenExchange(NAME, (e) => `${e.urls.web}/login/oauth/access_token`),

  authorizeUrl: (e, p) =>
    consentUrl(
      `${e.urls.web}/login/oauth/authorize`,
      {
        client_id: e.clientId,
        redirect_uri: p.redirectUri,
        state: p.state,
        scope: GITHUB_SCOPES,
      },
      p.codeChallenge,
    ),

  async revoke(e, token) {
    await providerFetch(NAME, api(e, `/applications/${enc(e.clientId)}/grant`), {
      method: 'DELETE',
      authorization: basic(e.clientId, e.clientSecret),
      json: { access_token: token },
      headers: JSON_HEADERS,
      accept: [404, 422],
    });
  },

  async currentUser(e, token) {
    const res = await providerFetch<{ login: string }>(NAME, api(e, '/user'), { token, headers: JSON_HEADERS });
    return { username: res.body.login };
  },

  async organizations(e, token) {
    const orgs: { name: string; accessLevel: 'MEMBER' | 'READ' }[] = [];
    for (let page = 1; page <= 10; page++) {
      const res = await providerFetch<{ role: string; state: string; organization: { login: string } }[]>(
        NAME,
        api(e, `/user/memberships/orgs?state=active&per_page=100&page=${page}`),
        { token, headers: JSON_HEADERS },
      );
      for (const m of res.body) {
        let canCreate = m.role === 'admin';
        if (!canCreate) {
          const org = await providerFetch<{ members_can_create_repositories?: boolean; members_can_create_private_repositories?: boolean }>(
            NAME,
            api(e, `/orgs/${enc(m.organization.login)}`),
            { token, headers: JSON_HEADERS },
          );
          canCreate = (org.body.members_can_create_private_repositories ?? org.body.members_can_create_repositories) === true;
        }
        orgs.push({ name: m.organization.login, accessLevel: canCreate ? 'MEMBER' : 'READ' });
      }
      if (res.body.length < 100) break;
    }
    return orgs;
  },

  async repositoryExists(e, token, owner, name) {
    const res = await providerFetch(NAME, api(e, `/repos/${enc(owner)}/${enc(name)}`), { token, headers: JSON_HEADERS, accept: [404] });
    return res.status !== 404;
  },

  async createRepository(e, token, p) {
    const path = p.ownerIsUser ? '/user/repos' : `/orgs/${enc(p.owner)}/repos`;
    const res = await providerFetch<{ clone_url: string; ssh_url: string; html_url: string }>(NAME, api(e, path), {
      token,
      headers: JSON_HEADERS,
      json: { name: p.name, private: true, auto_init: false, description: p.description },
    });
    return { httpsUrl: res.body.clone_url, sshUrl: res.body.ssh_url, webUrl: res.body.html_url };
  },

  async deleteRepository(e, token, owner, name) {
    await providerFetch(NAME, api(e, `/repos/${enc(owner)}/${enc(name)}`), { token, headers: JSON_HEADERS, method: 'DELETE' });
  },

  async createWebhook(e, token, p) {
    const res = await providerFetch<{ id: number }>(NAME, api(e, `/repos/${enc(p.owner)}/${enc(p.name)}/hooks`), {
      token,
      headers: JSON_HEADERS,
      json: {
        name: 'web',
        active: true,
        events: ['push'],
        config: { url: p.url, content_type: 'json', secret: p.secret, insecure_ssl: '0' },
      },
    });
    return String(res.body.id);
  },

  async branchHead(e, token, owner, name, branch) {
    const res = await providerFetch<{ commit?: { sha?: string } }>(
      NAME,
      api(e, `/repos/${enc(owner)}/${enc(name)}/branches/${enc(branch)}`),
      {
        token,
        headers: JSON_HEADERS,
        accept: [404],
      },
    );
    return res.status === 404 ? undefined : res.body.commit?.sha;
  },

  gitCredentials: (token) => ({ username: 'x-access-token', password: token }),

  readWebhook: (headers, body, secret) =>
    readHubWebhook(headers, body, secret, { event: 'x-github-event', delivery: 'x-github-delivery', signatures: ['x-hub-signature-256'] }),
};
