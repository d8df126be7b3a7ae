/**
 * GitLab (gitlab.com and self-managed): OAuth2 with PKCE and refresh tokens, REST API v4,
 * webhooks that carry their secret in X-Gitlab-Token (GitLab does not sign bodies).
 */
import type { ProviderEndpoint, ScmProvider } from '../domain/scm/ports.js';
import { pushOf } from './hub-webhook.js';
import { enc, header, jsonObject, providerFetch, secretMatches, consentUrl } from './http.js';
import { oauthTokenExchange } from './oauth.js';

const NAME = 'GitLab';
/**
 * GitLab's OAuth scopes split reading (`read_api`, `read_user`, `read_repository`) from writing
 * over Git (`write_repository`), but creating a project and adding a project hook take `api`,
 * which includes the rest: the one scope that covers the four steps.
 */
const GITLAB_SCOPES = 'api';
const api = (e: ProviderEndpoint, path: string) => `${e.urls.api}${path}`;
const project = (owner: string, name: string) => enc(`${owner}/${name}`);

/** Developer: the lowest role that may create projects in a group (GitLab's default). */
const DEVELOPER = 30;
const GUEST = 10;

export const gitlabProvider: ScmProvider = {
  kind: 'gitlab',
  pkce: true,
  defaultApiUrl: (web) => `${web.toString().replace(/\/+$/, '')}/api/v4`,

  ...oauthTokenExchange(NAME, (e) => `${e.urls.web}/oauth/token`),

  authorizeUrl: (e, p) =>
    consentUrl(
      `${e.urls.web}/oauth/authorize`,
      {
        client_id: e.clientId,
        redirect_uri: p.redirectUri,
        response_type: 'code',
        state: p.state,
        scope: GITLAB_SCOPES,
      },
      p.codeChallenge,
    ),

  async revoke(e, token) {
    await providerFetch(NAME, `${e.urls.web}/oauth/revoke`, { form: { client_id: e.clientId, client_secret: e.clientSecret, token } });
  },

  async currentUser(e, token) {
    const res = await providerFetch<{ username: string }>(NAME, api(e, '/user'), { token });
    return { username: res.body.username };
  },

  async organizations(e, token) {
    const groups = async (minAccess: number) => {
      const names: string[] = [];
      for (let page = 1; page <= 10; page++) {
        const res = await providerFetch<{ full_path: string }[]>(
          NAME,
          api(e, `/groups?min_access_level=${minAccess}&per_page=100&page=${page}`),
          { token },
        );
        names.push(...res.body.map((g) => g.full_path));
        if (res.body.length < 100) break;
      }
      return names;
    };
    const developer = new Set(await groups(DEVELOPER));
    return (await groups(GUEST)).map((name) => ({ name, accessLevel: developer.has(name) ? ('MEMBER' as const) : ('READ' as const) }));
  },

  async repositoryExists(e, token, owner, name) {
    const res = await providerFetch(NAME, api(e, `/projects/${project(owner, name)}`), { token, accept: [404] });
    return res.status !== 404;
  },

  async createRepository(e, token, p) {
    let namespaceId: number | undefined;
    if (!p.ownerIsUser) namespaceId = (await providerFetch<{ id: number }>(NAME, api(e, `/groups/${enc(p.owner)}`), { token })).body.id;
    const res = await providerFetch<{ http_url_to_repo: string; ssh_url_to_repo: string; web_url: string }>(NAME, api(e, '/projects'), {
      token,
      json: {
        name: p.name,
        path: p.name,
        ...(namespaceId === undefined ? {} : { namespace_id: namespaceId }),
        visibility: 'private',
        initialize_with_readme: false,
        default_branch: 'main',
        description: p.description,
      },
    });
    return { httpsUrl: res.body.http_url_to_repo, sshUrl: res.body.ssh_url_to_repo, webUrl: res.body.web_url };
  },

  async deleteRepository(e, token, owner, name) {
    await providerFetch(NAME, api(e, `/projects/${project(owner, name)}`), { token, method: 'DELETE' });
  },

  async createWebhook(e, token, p) {
    const res = await providerFetch<{ id: number }>(NAME, api(e, `/projects/${project(p.owner, p.name)}/hooks`), {
      token,
      json: { url: p.url, push_events: true, token: p.secret, enable_ssl_verification: true },
    });
    return String(res.body.id);
  },

  async branchHead(e, token, owner, name, branch) {
    const res = await providerFetch<{ commit?: { id?: string } }>(
      NAME,
      api(e, `/projects/${project(owner, name)}/repository/branches/${enc(branch)}`),
      {
        token,
        accept: [404],
      },
    );
    return res.status === 404 ? undefined : res.body.commit?.id;
  },

  gitCredentials: (token) => ({ username: 'oauth2', password: token }),

  readWebhook(headers, body, secret) {
    const sent = header(headers, 'x-gitlab-token');
    if (sent === undefined) return { refused: 'unsigned', message: 'the delivery carries no X-Gitlab-Token' };
    if (!secretMatches(sent, secret))
      return { refused: 'bad_signature', message: "the delivery's X-Gitlab-Token is not this algorithm's webhook secret" };
    const event = header(headers, 'x-gitlab-event');
    if (event !== 'Push Hook') return { refused: 'not_a_push', message: `a "${event ?? 'unnamed'}" event: only pushes are built` };
    const deliveryId = header(headers, 'x-gitlab-event-uuid');
    if (!deliveryId || deliveryId.length > 200) return { refused: 'malformed', message: 'the delivery has no X-Gitlab-Event-UUID header' };
    const payload = jsonObject(body);
    return pushOf(deliveryId, payload?.ref, payload?.after);
  },
};
