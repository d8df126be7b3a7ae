/**
 * `/metrics` (Prometheus text) is not for everyone: tenants' algorithm names and flow ids and
 * the node's load are in it. On the API port it answers an admin credential, or
 * `Authorization: Bearer <ALGOHOST_METRICS_TOKEN>` when that token is set (what a Prometheus
 * scrape config sends with `authorization: {credentials: …}`). With ALGOHOST_METRICS_ADDRESS it
 * is served on that address instead (main/server.ts), and the API port has no /metrics.
 */
import crypto from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { forbidden, unauthenticated } from '../domain/errors.js';
import { isAdmin } from '../domain/accounts/principal.js';
import { authenticateRequest } from './auth.js';
import type { Api, ApiServices } from './context.js';

export interface MetricsOptions {
  /** The bearer token a scraper sends; unset: only admin credentials. */
  token?: string;
  /** Served on an address of its own: the API port has no /metrics. */
  elsewhere?: boolean;
}

export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4';

/** Whether an Authorization header carries the metrics token (compared in constant time). */
export function hasMetricsToken(authorization: string | undefined, token: string | undefined): boolean {
  if (!token || !authorization) return false;
  const given = Buffer.from(authorization.trim());
  const wanted = Buffer.from(`Bearer ${token}`);
  return given.length === wanted.length && crypto.timingSafeEqual(given, wanted);
}

export function metricsRoute(app: Api, s: Pick<ApiServices, 'keys' | 'metrics'>, opts: MetricsOptions): void {
  if (opts.elsewhere) return;
  app.get('/metrics', { config: { auth: 'none' }, schema: { hide: true } }, async (req, reply) => {
    await requireMetricsAccess(req, s, opts.token);
    return reply.type(METRICS_CONTENT_TYPE).send(await s.metrics());
  });
}

async function requireMetricsAccess(
  req: FastifyRequest,
  s: Pick<ApiServices, 'keys' | 'metrics'>,
  token: string | undefined,
): Promise<void> {
  if (hasMetricsToken(req.headers.authorization, token)) return;
  if (!req.headers.authorization) {
    throw unauthenticated(
      `/metrics needs ${token ? 'Authorization: Bearer <ALGOHOST_METRICS_TOKEN> or ' : ''}an admin credential (Authorization: Simple <admin key>)`,
    );
  }
  const principal = await authenticateRequest(req, s.keys);
  if (!isAdmin(principal)) throw forbidden('/metrics is for cluster admins and the metrics token');
}
