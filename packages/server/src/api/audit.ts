/**
 * Records the audited operations in the audit log (domain/audit/): account, key, organization
 * and membership changes, algorithm settings, collection ACLs, event-cluster and SCM
 * administration, SCM authorizations and sign-ins. Written in `onSend`, before the answer leaves, so an action a client saw answered is
 * already in the log; a failure to write is logged and does not fail the action (it happened).
 * Recorded: successes, refusals of an authenticated caller (403), and every sign-in outcome
 * (failures aggregated, the name never as typed: domain/audit/audit-service.ts); not
 * unauthenticated or malformed requests, which anyone could send by the million.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AuditService } from '../domain/audit/audit-service.js';
import { chargedClientOf, sandboxOf } from './sandbox-sockets.js';
import { credentialName } from '../domain/accounts/principal.js';

/** The operations (OpenAPI operation ids) the log records. */
export const AUDITED_OPERATIONS: ReadonlySet<string> = new Set([
  'session.create',
  'user.create',
  'user.update',
  'user.delete',
  'key.create',
  'key.revoke',
  'organization.create',
  'organization.update',
  'organization.delete',
  'organization.members.add',
  'organization.members.remove',
  'organization.invitations.withdraw',
  'user.invitations.accept',
  'user.invitations.decline',
  'algorithm.create',
  'algorithm.update',
  'algorithm.patch',
  'algorithm.delete',
  'version.publish',
  'version.publishSingular',
  'data.create',
  'data.update',
  'eventCluster.create',
  'eventCluster.delete',
  'eventAssignment.create',
  'eventAssignment.delete',
  'eventFlow.create',
  'eventFlow.update',
  'eventFlow.delete',
  'scm.create',
  'scm.update',
  'scm.delete',
  'scm.authorize',
  'scm.revoke',
  'scm.sync',
]);

/** Body fields never copied into the log (passwords, secrets, CA certificates, tokens). */
const SECRET_FIELD = /password|secret|token|tls_ca|sasl|credentials/i;
/** Longest `details` kept, as JSON. */
const MAX_DETAILS = 4096;

export function installAudit(app: FastifyInstance, audit: AuditService): void {
  // Only on the audited routes, decided once when each route is added: the call path and the
  // other routes carry no hook at all.
  app.addHook('onRoute', (route) => {
    const action = (route.schema as { operationId?: string } | undefined)?.operationId;
    if (!action || !AUDITED_OPERATIONS.has(action)) return;
    const own = route.onSend === undefined ? [] : Array.isArray(route.onSend) ? route.onSend : [route.onSend];
    route.onSend = [...own, (req: FastifyRequest, reply: FastifyReply, payload: unknown) => record(audit, action, req, reply, payload)];
  });
}

async function record(audit: AuditService, action: string, req: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
  const status = reply.statusCode;
  const success = status >= 200 && status < 300;
  try {
    if (action === 'session.create') {
      const sandbox = sandboxOf(req.socket);
      // The domain decides what is kept of the name tried, and aggregates failures.
      await audit.recordSignIn({
        username: (req.body as { username?: unknown } | undefined)?.username,
        status,
        target: req.url.split('?')[0]!,
        // None on the API socket of sandboxes: there the sandbox's owner is the client.
        address: req.ip || null,
        client: chargedClientOf(req.socket),
        ...(sandbox ? { sandbox: sandbox.label } : {}),
      });
      return payload;
    }
    if (!success && !(status === 403 && req.principal)) return payload;
    const p = req.principal;
    await audit.record({
      actor: p?.account.name ?? null,
      actorId: p?.account.id ?? null,
      credential: p ? credentialName(p) : null,
      action,
      target: req.url.split('?')[0]!,
      status,
      address: req.ip || null,
      details: detailsOf(req, success ? payload : undefined),
    });
  } catch (err) {
    req.log.error({ err, action }, 'audit: the entry could not be written');
  }
  return payload;
}

/** The request's path and query parameters, its JSON body without secrets, and the id of what it made. */
function detailsOf(req: FastifyRequest, payload: unknown): Record<string, unknown> {
  const details: Record<string, unknown> = {};
  const body = redacted(req.body);
  if (body !== undefined) details.body = body;
  if (typeof payload === 'string' && payload.startsWith('{')) {
    try {
      const made = JSON.parse(payload) as { id?: unknown };
      if (typeof made.id === 'string') details.id = made.id;
    } catch {
      // Not JSON after all: nothing to take from it.
    }
  }
  const json = JSON.stringify(details);
  return json.length <= MAX_DETAILS ? details : { truncated: true, ...(details.id ? { id: details.id } : {}) };
}

function redacted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redacted);
  if (value === null || typeof value !== 'object' || Buffer.isBuffer(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, SECRET_FIELD.test(k) ? '[redacted]' : redacted(v)]));
}
