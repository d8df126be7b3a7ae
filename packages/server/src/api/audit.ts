/**
 * Records the audited operations in the audit log (domain/audit/): account, key, organization
 * and membership changes, algorithm settings, collection ACLs, event-cluster and SCM
 * administration, SCM authorizations and sign-ins. Written in `onSend`, before the answer leaves, so an action a client saw answered is
 * already in the log; a failure to write is logged and does not fail the action (it happened).
 * Recorded: successes, refusals of an authenticated caller (403), and every sign-in outcome;
 * not unauthenticated or malformed requests, which anyone could send by the million.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AuditService } from '../domain/audit/audit-service.js';

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
  const signIn = action === 'session.create';
  const success = status >= 200 && status < 300;
  if (!signIn && !success && !(status === 403 && req.principal)) return payload;
  try {
    await audit.record({
      ...actorOf(req, signIn),
      action,
      target: req.url.split('?')[0]!,
      status,
      // None on the API socket of algorithm sandboxes.
      address: req.ip || null,
      details: detailsOf(req, signIn, success ? payload : undefined),
    });
  } catch (err) {
    req.log.error({ err, action }, 'audit: the entry could not be written');
  }
  return payload;
}

function actorOf(req: FastifyRequest, signIn: boolean): { actor: string | null; actorId: string | null; credential: string | null } {
  const p = req.principal;
  if (p) return { actor: p.account.name, actorId: p.account.id, credential: p.via === 'standard_key' ? 'key' : p.via };
  const username = signIn ? (req.body as { username?: unknown } | undefined)?.username : undefined;
  return { actor: typeof username === 'string' ? username.slice(0, 255) : null, actorId: null, credential: signIn ? 'password' : null };
}

/** The request's path and query parameters, its JSON body without secrets, and the id of what it made. */
function detailsOf(req: FastifyRequest, signIn: boolean, payload: unknown): Record<string, unknown> {
  const details: Record<string, unknown> = {};
  // A sign-in's body is a name (the actor) and a password.
  const body = signIn ? undefined : redacted(req.body);
  if (body !== undefined) details.body = body;
  // A sign-in's answer is a session token: never kept.
  if (!signIn && typeof payload === 'string' && payload.startsWith('{')) {
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
