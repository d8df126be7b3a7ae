/** Gitea (and Forgejo): OAuth2 with PKCE, REST API v1 (`{web}/api/v1`), webhooks signed like GitHub's. */
import type { ProviderEndpoint, ScmProvider } from '../domain/scm/ports.js';
import { readHubWebhook } from './hub-webhook.js';
import { enc, providerFetch, consentUrl } from './http.js';
import { oauthTokenExchange } from './oauth.js';

const NAME = 'Gitea';
/**
 * Gitea's granular scopes (1.23+). Without any, Gitea grants the OAuth2 token everything the user
 * may do. Creating a repository under the user is a POST in the API's `/user` group and under an
 * organization one in its `/orgs/{org}` group, so each needs its group's write scope besides
 * `write:repository` (the push over Git, the webhook, the refs read). docs/users-guide.md lists them.
 */
const GITEA_SCOPES = 'write:repository write:user write:organization';
const api = (e: ProviderEndpoint, path: string) => `${e.urls.api}${path}`;

export const giteaProvider: ScmProvider = {
  kind: 'gitea',
  pkce: true,
  defaultApiUrl: (web) => `${web.toString().replace(/\/+$/, '')}/api/v1`,

  ...oauthTokenExchange(NAME, (e) => `${e.urls.web}/login/oauth/access_token`),

  authorizeUrl: (e, p) =>
    consentUrl(
      `${e.urls.web}/login/oauth/authorize`,
      {
        client_id: e.clientId,
        redirect_uri: p.redirectUri,
        response_type: 'code',
        state: p.state,
        scope: GITEA_SCOPES,
      },
      p.codeChallenge,
    ),

  // Gitea has no revocation endpoint for OAuth2 grants; the user removes the grant in its settings.
  async revoke() {},

  async currentUser(e, token) {
    const res = await providerFetch<{ login: string }>(NAME, api(e, '/user'), { token });
    return { username: res.body.login };
  },

  async organizations(e, token, username) {
    const orgs: { name: string; accessLevel: 'MEMBER' | 'READ' }[] = [];
    for (let page = 1; page <= 10; page++) {
      const res = await providerFetch<{ username: string }[]>(NAME, api(e, `/user/orgs?limit=50&page=${page}`), { token });
      for (const org of res.body) {
        const perms = await providerFetch<{ can_create_repository?: boolean }>(
          NAME,
          api(e, `/users/${enc(username)}/orgs/${enc(org.username)}/permissions`),
          { token },
        );
        orgs.push({ name: org.username, accessLevel: perms.body.can_create_repository ? 'MEMBER' : 'READ' });
      }
      if (res.body.length < 50) break;
    }
    return orgs;
  },

  async repositoryExists(e, token, owner, name) {
    const res = await providerFetch(NAME, api(e, `/repos/${enc(owner)}/${enc(name)}`), { token, accept: [404] });
    return res.status !== 404;
  },

  async createRepository(e, token, p) {
    const path = p.ownerIsUser ? '/user/repos' : `/orgs/${enc(p.owner)}/repos`;
    const res = await providerFetch<{ clone_url: string; ssh_url: string; html_url: string }>(NAME, api(e, path), {
      token,
      json: { name: p.name, private: true, auto_init: false, default_branch: 'main', description: p.description },
    });
    return { httpsUrl: res.body.clone_url, sshUrl: res.body.ssh_url, webUrl: res.body.html_url };
  },

  async deleteRepository(e, token, owner, name) {
    await providerFetch(NAME, api(e, `/repos/${enc(owner)}/${enc(name)}`), { token, method: 'DELETE' });
  },

  async createWebhook(e, token, p) {
    const res = await providerFetch<{ id: number }>(NAME, api(e, `/repos/${enc(p.owner)}/${enc(p.name)}/hooks`), {
      token,
      json: {
        type: 'gitea',
        active: true,
        events: ['push'],
        branch_filter: '*',
        config: { url: p.url, content_type: 'json', secret: p.secret },
      },
    });
    return String(res.body.id);
  },

  // Read from Git's refs, not /branches/{name}: Gitea fills its branch table from a queue after a
  // push, and until then answers that endpoint with a 500 (a sync right after the repository's
  // first commit met it). The refs endpoint lists every ref starting with the name given.
  async branchHead(e, token, owner, name, branch) {
    type Ref = { ref?: string; object?: { sha?: string } };
    const res = await providerFetch<Ref | Ref[]>(NAME, api(e, `/repos/${enc(owner)}/${enc(name)}/git/refs/heads/${enc(branch)}`), {
      token,
      accept: [404],
    });
    if (res.status === 404) return undefined;
    const refs = Array.isArray(res.body) ? res.body : [res.body];
    return refs.find((r) => r.ref === `refs/heads/${branch}`)?.object?.sha;
  },

  // Gitea takes an OAuth2 access token as the password of Git over HTTP.
  gitCredentials: (token, username) => ({ username, password: token }),

  readWebhook: (headers, body, secret) =>
    readHubWebhook(headers, body, secret, {
      event: 'x-gitea-event',
      delivery: 'x-gitea-delivery',
      signatures: ['x-hub-signature-256', 'x-gitea-signature'],
    }),
};
