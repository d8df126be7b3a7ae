/**
 * External source control: configurations (spec "SCM configuration", compat §6), each user's
 * authorization (the OAuth flow, endpoint 1's token status, revocation), the webhook receiver
 * and "sync now" of externally hosted algorithms.
 */
import { Type } from 'typebox';
import { principalOf } from '../auth.js';
import type { Api, ApiServices } from '../context.js';
import { buildJson, deliveryJson, scmConfigJson, tokenStatusJson } from '../presenters.js';
import { AUTH_ERRORS, errorResponses, ScmConfigInput } from '../schemas.js';

const IdParams = Type.Object({ id: Type.String() });
const AlgoParams = Type.Object({ owner: Type.String(), name: Type.String() });
const ConfigRef = Type.Ref('ScmConfig');
/** The cookie that ties an authorization to the browser that started it (see AuthorizationService). */
const BROWSER_COOKIE = 'algohost_scm_oauth';
const CALLBACK_PATH = '/v1/scms/oauth/callback';
/** What the SCM routes use. */
type ScmRouteServices = Pick<ApiServices, 'scmConfigs' | 'scmAuthorizations' | 'scmSources' | 'links'>;

/** The largest webhook body read (providers send the pushed commits' list; GitHub caps at 25 MB). */
const MAX_WEBHOOK_BYTES = 25 * 1024 * 1024;

const SyncResult = Type.Object({
  result: Type.String({ description: 'What happened: the build queued, "up to date", or why nothing was built.' }),
  commit_sha: Type.Union([Type.String(), Type.Null()]),
  build: Type.Optional(Type.Ref('Build')),
});

export function scmRoutes(app: Api, s: ScmRouteServices): void {
  app.get('/v1/scms', {
    schema: {
      operationId: 'scm.list',
      tags: ['scm'],
      summary: 'SCM configurations: the internal SCM always first, then the external ones (compat §6).',
      response: { 200: Type.Object({ results: Type.Array(ConfigRef) }), ...errorResponses(...AUTH_ERRORS) },
    },
    handler: async (req) => ({ results: (await s.scmConfigs.list(principalOf(req))).map(scmConfigJson) }),
  });

  app.get('/v1/scms/:id', {
    schema: {
      operationId: 'scm.get',
      tags: ['scm'],
      summary: 'One SCM configuration ("internal" or an external one).',
      params: IdParams,
      response: { 200: ConfigRef, ...errorResponses(...AUTH_ERRORS, 404) },
    },
    handler: async (req) => scmConfigJson(await s.scmConfigs.get(principalOf(req), req.params.id)),
  });

  app.post('/v1/admin/scms', {
    schema: {
      operationId: 'scm.create',
      tags: ['scm', 'admin'],
      summary:
        'Create an external SCM configuration (admins): provider github|gitlab|bitbucket|gitea, urls.web, and the OAuth application registered there (its callback: {public URL}/v1/scms/oauth/callback).',
      body: ScmConfigInput,
      response: { 200: ConfigRef, ...errorResponses(...AUTH_ERRORS) },
    },
    handler: async (req) => scmConfigJson(await s.scmConfigs.create(principalOf(req), req.body)),
  });

  app.patch('/v1/admin/scms/:id', {
    schema: {
      operationId: 'scm.update',
      tags: ['scm', 'admin'],
      summary: 'Enable or disable, make default, rename, change addresses or the OAuth client (admins); omitted fields are kept.',
      params: IdParams,
      body: ScmConfigInput,
      response: { 200: ConfigRef, ...errorResponses(...AUTH_ERRORS, 404) },
    },
    handler: async (req) => scmConfigJson(await s.scmConfigs.update(principalOf(req), req.params.id, req.body)),
  });

  app.delete('/v1/admin/scms/:id', {
    schema: {
      operationId: 'scm.delete',
      tags: ['scm', 'admin'],
      summary: "Delete an external SCM configuration that backs no algorithm (admins); its users' authorizations go with it.",
      params: IdParams,
      response: { 204: Type.Null(), ...errorResponses(...AUTH_ERRORS, 404, 409) },
    },
    handler: async (req, reply) => {
      await s.scmConfigs.delete(principalOf(req), req.params.id);
      return reply.code(204).send(null);
    },
  });

  app.post('/v1/scms/:id/token/status', {
    schema: {
      operationId: 'scm.tokenStatus',
      tags: ['scm'],
      summary:
        "Endpoint 1: whether the provider accepts this account's token for the configuration, as which provider account, and its organizations (asks the provider now).",
      params: IdParams,
      response: { 200: Type.Ref('ScmTokenStatus'), ...errorResponses(...AUTH_ERRORS, 404, 502) },
    },
    handler: async (req) => tokenStatusJson(await s.scmAuthorizations.status(principalOf(req), req.params.id)),
  });

  app.post('/v1/scms/:id/authorize', {
    schema: {
      operationId: 'scm.authorize',
      tags: ['scm'],
      summary:
        "Start authorizing the configuration for the caller's account: answers the provider's consent address to send the browser to (and sets a cookie the callback needs). The provider sends the browser back to return_to (default /account) with scm, scm_status=authorized|error and scm_error in the query.",
      params: IdParams,
      body: Type.Union([
        Type.Object({
          return_to: Type.Optional(
            Type.String({ pattern: '^/(?![/\\\\])[\\x21-\\x7e]*$', maxLength: 500, description: 'A path of this service, e.g. /account.' }),
          ),
        }),
        Type.Null(),
      ]),
      response: {
        200: Type.Object({ authorize_url: Type.String(), expires_at: Type.String({ description: 'The flow must end before this.' }) }),
        ...errorResponses(...AUTH_ERRORS, 404),
      },
    },
    // No body at all is the same as an empty one.
    preValidation: (req, _reply, done) => {
      req.body ??= null;
      done();
    },
    handler: async (req, reply) => {
      const started = await s.scmAuthorizations.start(principalOf(req), req.params.id, req.body?.return_to);
      const secure = s.links.publicUrl.startsWith('https:') ? '; Secure' : '';
      reply.header(
        'set-cookie',
        `${BROWSER_COOKIE}=${started.browserNonce}; Path=${CALLBACK_PATH}; Max-Age=600; HttpOnly; SameSite=Lax${secure}`,
      );
      return { authorize_url: started.authorizeUrl, expires_at: started.expiresAt.toISOString() };
    },
  });

  app.get(CALLBACK_PATH, {
    config: { auth: 'none' },
    schema: {
      operationId: 'scm.oauthCallback',
      tags: ['scm'],
      // The browser arrives from the provider with no credential: the state and the cookie decide.
      security: [],
      summary:
        'Where the provider sends the browser back (the OAuth redirect URI to register): stores the tokens and redirects to the page the flow started from.',
      // Bounded so that even a query of 4-byte characters at every limit (12 bytes each once
      // percent-encoded) stays under Node's 16 KiB request-header limit: longer values are a
      // clear 400 from the schema, never a 431 before any route sees them. Providers' codes are
      // tens of characters and their error codes short tokens.
      querystring: Type.Object({
        code: Type.Optional(Type.String({ maxLength: 500 })),
        state: Type.String({ minLength: 1, maxLength: 200, description: 'The state algohost sent to the provider.' }),
        error: Type.Optional(Type.String({ maxLength: 100 })),
        error_description: Type.Optional(Type.String({ maxLength: 300 })),
      }),
      response: { 302: Type.Null(), ...errorResponses(400, 403, 404) },
    },
    handler: async (req, reply) => {
      const q = req.query;
      const target = await s.scmAuthorizations.callback(
        { state: q.state, code: q.code, error: q.error, errorDescription: q.error_description },
        cookie(req.headers.cookie, BROWSER_COOKIE),
      );
      reply.header('set-cookie', `${BROWSER_COOKIE}=; Path=${CALLBACK_PATH}; Max-Age=0; HttpOnly; SameSite=Lax`);
      return reply.redirect(`${s.links.publicUrl}${target}`, 302);
    },
  });

  app.delete('/v1/scms/:id/token', {
    schema: {
      operationId: 'scm.revoke',
      tags: ['scm'],
      summary: "Revoke the caller's authorization of the configuration (at the provider too, where it has an endpoint for that).",
      params: IdParams,
      response: { 204: Type.Null(), ...errorResponses(...AUTH_ERRORS, 404) },
    },
    handler: async (req, reply) => {
      await s.scmAuthorizations.revoke(principalOf(req), req.params.id);
      return reply.code(204).send(null);
    },
  });

  app.post('/v1/algorithms/:owner/:name/scm/sync', {
    schema: {
      operationId: 'scm.sync',
      tags: ['scm', 'algorithms'],
      summary:
        "Sync now: fetch the provider's main branch and build it if it holds a commit not built yet (for providers whose webhooks cannot reach this service); a fetch over the push, repository or account size limit is refused (409) and keeps nothing.",
      params: AlgoParams,
      response: { 200: SyncResult, ...errorResponses(...AUTH_ERRORS, 404, 409, 502) },
    },
    handler: async (req) => {
      const r = await s.scmSources.sync(principalOf(req), req.params.owner, req.params.name);
      return { result: r.result, commit_sha: r.commitSha, build: r.build && buildJson(r.build) };
    },
  });

  app.get('/v1/algorithms/:owner/:name/scm/status', {
    schema: {
      operationId: 'scm.connectionStatus',
      tags: ['scm', 'algorithms'],
      summary:
        'compat §3: active (the source is reachable), unauthorized (the token of the account that created it no longer works) or repository_missing; with the last webhook delivery.',
      params: AlgoParams,
      response: {
        200: Type.Object({
          scm_connection_status: Type.Union([Type.Literal('active'), Type.Literal('unauthorized'), Type.Literal('repository_missing')]),
          last_delivery: Type.Optional(Type.Ref('ScmDelivery')),
        }),
        ...errorResponses(...AUTH_ERRORS, 404, 502),
      },
    },
    handler: async (req) => {
      const r = await s.scmSources.connectionStatus(principalOf(req), req.params.owner, req.params.name);
      return { scm_connection_status: r.status, last_delivery: r.lastDelivery ? deliveryJson(r.lastDelivery) : undefined };
    },
  });
}

/** The webhook receiver reads the raw body: the signature is over its exact bytes. */
export function scmWebhookRoutes(app: Api, s: Pick<ApiServices, 'scmSources'>): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_WEBHOOK_BYTES }, (_req, body, done) => done(null, body));
  app.post('/v1/scm/webhooks/:algorithmId', {
    config: { auth: 'none' },
    bodyLimit: MAX_WEBHOOK_BYTES,
    schema: {
      operationId: 'scm.webhook',
      tags: ['scm'],
      // The provider signs each delivery with the algorithm's webhook secret: no credential.
      security: [],
      summary:
        "Push webhooks from the provider of an externally hosted algorithm: signed with the secret algohost registered (unsigned and forged deliveries refused, a delivery id seen before refused); fetches the provider's main and builds its tip, never the commit a delivery names; a fetch over the push, repository or account size limit is refused (409) and keeps nothing.",
      params: Type.Object({ algorithmId: Type.String() }),
      response: { 200: SyncResult, ...errorResponses(400, 401, 403, 404, 409, 502) },
    },
    handler: async (req) => {
      const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const r = await s.scmSources.webhook(req.params.algorithmId, req.headers, body);
      return { result: r.result, commit_sha: r.commitSha, build: r.build && buildJson(r.build) };
    },
  });
}

function cookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
