/**
 * Bitbucket Cloud: OAuth 2 consumers (authorization code, no PKCE, refresh tokens; the callback
 * URL is set on the consumer), REST API 2.0, webhooks signed with X-Hub-Signature (sha256=).
 * Organizations are workspaces.
 */
import type { ProviderEndpoint, ScmProvider } from '../domain/scm/ports.js';
import { pushOf } from './hub-webhook.js';
import { enc, header, hmacMatches, jsonObject, providerFetch } from './http.js';
import { oauthTokenExchange } from './oauth.js';

const NAME = 'Bitbucket';
/**
 * Bitbucket Cloud grants the permissions ticked on the OAuth consumer, whatever the request asks;
 * naming them here makes a consumer that lacks one fail at the consent (invalid_scope, naming the
 * missing scope) instead of at the first repository. `repository:admin` creates the repository
 * (it does not imply the next one), `repository:write` pushes and reads the branch, `webhook`
 * registers the hook, `account` reads the user and the workspaces.
 */
const BITBUCKET_SCOPES = 'repository:write repository:admin webhook account';
const api = (e: ProviderEndpoint, path: string) => `${e.urls.api}${path}`;
const repo = (owner: string, name: string) => `/repositories/${enc(owner)}/${enc(name.toLowerCase())}`;

export const bitbucketProvider: ScmProvider = {
  kind: 'bitbucket',
  pkce: false,
  defaultApiUrl: (web) =>
    web.hostname === 'bitbucket.org' ? 'https://api.bitbucket.org/2.0' : `${web.toString().replace(/\/+$/, '')}/2.0`,

  ...oauthTokenExchange(NAME, (e) => `${e.urls.web}/site/oauth2/access_token`, 'basic'),

  authorizeUrl(e, p) {
    const url = new URL(`${e.urls.web}/site/oauth2/authorize`);
    url.search = new URLSearchParams({ client_id: e.clientId, response_type: 'code', state: p.state, scope: BITBUCKET_SCOPES }).toString();
    return url.toString();
  },

  // Bitbucket Cloud has no revocation endpoint; the user removes the grant in its settings.
  async revoke() {},

  async currentUser(e, token) {
    const res = await providerFetch<{ username: string }>(NAME, api(e, '/user'), { token });
    return { username: res.body.username };
  },

  async organizations(e, token) {
    const orgs: { name: string; accessLevel: 'MEMBER' | 'READ' }[] = [];
    let url: string | undefined = api(e, '/user/permissions/workspaces?pagelen=100');
    for (let page = 0; url && page < 10; page++) {
      const res: { body: { values: { permission: string; workspace: { slug: string } }[]; next?: string } } = await providerFetch(
        NAME,
        url,
        { token },
      );
      for (const v of res.body.values) {
        // Owners and members may create repositories (the workspace default); collaborators may not.
        orgs.push({ name: v.workspace.slug, accessLevel: v.permission === 'owner' || v.permission === 'member' ? 'MEMBER' : 'READ' });
      }
      url = res.body.next && new URL(res.body.next).origin === new URL(e.urls.api).origin ? res.body.next : undefined;
    }
    return orgs;
  },

  async repositoryExists(e, token, owner, name) {
    const res = await providerFetch(NAME, api(e, repo(owner, name)), { token, accept: [404] });
    return res.status !== 404;
  },

  async createRepository(e, token, p) {
    const res = await providerFetch<{ links: { clone: { name: string; href: string }[]; html: { href: string } } }>(
      NAME,
      api(e, repo(p.owner, p.name)),
      {
        token,
        json: { scm: 'git', is_private: true, description: p.description },
      },
    );
    const clone = (kind: string) => res.body.links.clone.find((c) => c.name === kind)?.href ?? '';
    // The https address names the user who made it (https://user@bitbucket.org/…): not part of the repository's address.
    const https = new URL(clone('https'));
    https.username = '';
    return { httpsUrl: https.toString(), sshUrl: clone('ssh'), webUrl: res.body.links.html.href };
  },

  async deleteRepository(e, token, owner, name) {
    await providerFetch(NAME, api(e, repo(owner, name)), { token, method: 'DELETE' });
  },

  async createWebhook(e, token, p) {
    const res = await providerFetch<{ uuid: string }>(NAME, api(e, `${repo(p.owner, p.name)}/hooks`), {
      token,
      json: { description: 'algohost builds', url: p.url, active: true, events: ['repo:push'], secret: p.secret },
    });
    return res.body.uuid;
  },

  async branchHead(e, token, owner, name, branch) {
    const res = await providerFetch<{ target?: { hash?: string } }>(NAME, api(e, `${repo(owner, name)}/refs/branches/${enc(branch)}`), {
      token,
      accept: [404],
    });
    return res.status === 404 ? undefined : res.body.target?.hash;
  },

  gitCredentials: (token) => ({ username: 'x-token-auth', password: token }),

  readWebhook(headers, body, secret) {
    const signature = header(headers, 'x-hub-signature');
    if (!signature) return { refused: 'unsigned', message: 'the delivery is not signed (no X-Hub-Signature header)' };
    if (!hmacMatches(signature, body, secret))
      return { refused: 'bad_signature', message: "the delivery signature does not match this algorithm's webhook secret" };
    const event = header(headers, 'x-event-key');
    if (event !== 'repo:push') return { refused: 'not_a_push', message: `a "${event ?? 'unnamed'}" event: only pushes are built` };
    const deliveryId = header(headers, 'x-request-uuid') ?? header(headers, 'x-hook-uuid');
    if (!deliveryId || deliveryId.length > 200) return { refused: 'malformed', message: 'the delivery has no X-Request-UUID header' };
    const change = jsonObject(body)?.push?.changes?.find?.((c: { new?: { type?: string } }) => c?.new?.type === 'branch');
    if (!change) return { refused: 'not_a_push', message: 'the push moved no branch' };
    return pushOf(deliveryId, `refs/heads/${String(change.new.name)}`, change.new.target?.hash);
  },
};
