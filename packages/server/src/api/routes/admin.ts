import { principalOf } from '../auth.js';
import type { Api, ApiServices } from '../context.js';
import { auditEntryJson, clusterStatusJson, pageJson } from '../presenters.js';
import { AUTH_ERRORS, errorResponses, PageQuery, Paged } from '../schemas.js';
import { Type } from 'typebox';
import { requestUrl } from '../context.js';
import { parsePageRequest } from '../../domain/pagination.js';
import { ACTION_FILTER_PATTERN } from '../../domain/audit/audit-service.js';

const AuditEntrySchema = Type.Object(
  {
    id: Type.String(),
    at: Type.String({ description: 'When, ISO 8601.' }),
    actor: Type.Union([Type.String(), Type.Null()], {
      description:
        'The account that acted (for a sign-in, the account whose name was tried, by its own name); null if none (a sign-in for a name no account has: see details.name_hash).',
    }),
    credential: Type.Union([Type.String(), Type.Null()], { description: 'admin_key, key, session, call_key, or password (a sign-in).' }),
    action: Type.String({ description: 'The operation id (key.create, organization.members.add…).' }),
    target: Type.String({ description: 'The request path.' }),
    status: Type.Integer({ description: 'The HTTP status it was answered (2xx, 403, or a sign-in’s 401/429).' }),
    address: Type.Union([Type.String(), Type.Null()], { description: 'The client address.' }),
    details: Type.Record(Type.String(), Type.Unknown(), {
      description:
        'The request body without secrets (`body`) and the id of what it made (`id`). A sign-in: a keyed hash of a name no account has (`name_hash`, never the name), how many attempts a failed entry aggregates (`attempts`, one entry per name, client and outcome per 10 minutes; `rest_of_window` for those past the per-account cap), and whose sandbox it came from (`sandbox`).',
    }),
  },
  { $id: 'AuditEntry' },
);

export const ADMIN_SCHEMAS = [AuditEntrySchema];

/** What cluster admins read about the cluster as a whole. */
export function adminRoutes(app: Api, s: Pick<ApiServices, 'audit' | 'cluster' | 'links'>): void {
  app.get('/v1/admin/status', {
    schema: {
      operationId: 'admin.status',
      tags: ['admin'],
      summary:
        "Cluster health from the server's own data: version, database and blob store kinds, builds queued and running, warm runners, calls in the last minute, uptime (admins).",
      response: { 200: Type.Ref('ClusterStatus'), ...errorResponses(...AUTH_ERRORS) },
    },
    handler: async (req) => clusterStatusJson(await s.cluster.status(principalOf(req))),
  });

  app.get('/v1/admin/audit', {
    schema: {
      operationId: 'admin.audit.list',
      tags: ['admin'],
      summary:
        'The audit log, newest first: account, key, organization and membership changes, algorithm settings, collection ACLs, event-cluster administration, sign-ins (admins).',
      querystring: Type.Object({
        ...PageQuery.properties,
        actor: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'Only this account’s actions.' })),
        action: Type.Optional(
          Type.String({
            pattern: ACTION_FILTER_PATTERN,
            maxLength: 100,
            description: 'An operation id, or a dotted prefix of them (`key`).',
          }),
        ),
      }),
      response: { 200: Paged(Type.Ref('AuditEntry')), ...errorResponses(...AUTH_ERRORS) },
    },
    handler: async (req) => {
      const page = parsePageRequest(req.query.limit, req.query.marker);
      const result = await s.audit.list(principalOf(req), {
        ...(req.query.actor === undefined ? {} : { actor: req.query.actor }),
        ...(req.query.action === undefined ? {} : { action: req.query.action }),
        page,
      });
      return pageJson(result, auditEntryJson, requestUrl(s.links, req.url), page.limit);
    },
  });
}
