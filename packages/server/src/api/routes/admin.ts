import { principalOf } from '../auth.js';
import type { Api, ApiServices } from '../context.js';
import { clusterStatusJson } from '../presenters.js';
import { AUTH_ERRORS, errorResponses } from '../schemas.js';
import { Type } from 'typebox';

/** What cluster admins read about the cluster as a whole. */
export function adminRoutes(app: Api, s: ApiServices): void {
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
}
