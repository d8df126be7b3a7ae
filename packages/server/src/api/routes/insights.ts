/**
 * Insights (docs/compatibility.md §4): the one broker connection they go to (cluster admins),
 * and the reports algorithms send from inside a call through their in-sandbox client.
 */
import { Type } from 'typebox';
import { Errors } from '../../domain/errors.js';
import { type InsightsConnectionView, MAX_INSIGHTS, MAX_REPORT_BYTES, RESERVED_KEYS } from '../../domain/insights/insights-service.js';
import { principalOf } from '../auth.js';
import { refuseOversizedBody } from '../oversized-body.js';
import type { Api, ApiServices } from '../context.js';
import { AUTH_ERRORS, errorResponses } from '../schemas.js';

const InsightsConnectionSchema = Type.Object({
  cluster: Type.Object(
    { id: Type.String(), name: Type.String() },
    { description: 'A connected Kafka cluster (GET /v1/admin/event-clusters).' },
  ),
  topic: Type.String(),
  created_at: Type.String(),
});

const TOKEN_HEADER = 'x-algohost-insights-token';

export function insightsRoutes(app: Api, s: Pick<ApiServices, 'insights'>): void {
  app.post('/v1/admin/insights-connection', {
    schema: {
      operationId: 'insightsConnection.create',
      tags: ['insights'],
      summary:
        'Send Insights to a topic of a connected Kafka cluster (admin). Insights supports only one broker connection: a second is refused with 409 (code 8008) until the first is deleted.',
      body: Type.Object({
        cluster: Type.String({ description: 'The id or name of a connected Kafka cluster.' }),
        topic: Type.String({ description: 'An existing topic of that cluster.' }),
      }),
      response: { 200: InsightsConnectionSchema, ...errorResponses(...AUTH_ERRORS, 404, 409, 503) },
    },
    handler: async (req) => connectionJson(await s.insights.configure(principalOf(req), req.body)),
  });

  app.get('/v1/admin/insights-connection', {
    schema: {
      operationId: 'insightsConnection.get',
      tags: ['insights'],
      summary: 'Where Insights go (admin); 404 (code 8007) when no connection is configured.',
      response: { 200: InsightsConnectionSchema, ...errorResponses(...AUTH_ERRORS, 404) },
    },
    handler: async (req) => connectionJson(await s.insights.get(principalOf(req))),
  });

  app.delete('/v1/admin/insights-connection', {
    schema: {
      operationId: 'insightsConnection.delete',
      tags: ['insights'],
      summary:
        'Stop sending Insights (admin; 404 when none is configured); reports are then refused with 503 until a connection is configured again.',
      response: { 204: Type.Null(), ...errorResponses(...AUTH_ERRORS, 404) },
    },
    handler: async (req, reply) => {
      await s.insights.remove(principalOf(req));
      return reply.code(204).send(null);
    },
  });

  app.post('/v1/insights', {
    // The platform's clients send no Authorization header: the call's token identifies the report.
    config: { auth: 'none' },
    bodyLimit: MAX_REPORT_BYTES,
    // Refuse an oversized report by its Content-Length, naming the limit, once the client has
    // sent it (api/oversized-body.ts: else it may never read the answer).
    onRequest: (req, _reply, done) => {
      const length = Number(req.headers['content-length'] ?? 0);
      if (length > MAX_REPORT_BYTES) {
        return refuseOversizedBody(req, length, Errors.insightsReportTooLarge({ bytes: length, limit: MAX_REPORT_BYTES }), done);
      }
      done();
    },
    schema: {
      operationId: 'insights.report',
      // Reports come from inside a running call with its token, never with an account's credential.
      security: [],
      tags: ['insights'],
      summary: `Report metrics from inside a running call of a version with insights_enabled (the in-sandbox client does this): at most ${MAX_INSIGHTS} metrics and 25 KB per report.`,
      description: `Sent with header X-Algohost-Insights-Token (the in-sandbox clients read it from ALGOHOST_INSIGHTS_TOKEN, set only while a call of an insights_enabled version runs); without a valid token 403 (code 8009). The report becomes one JSON record on the Insights topic: the metrics as keys, plus ${RESERVED_KEYS.join(', ')} (reserved: a report sending one is 400), key owner/name, headers algohost-algorithm, algohost-version, algohost-request-id and content-type. 202 once the broker has it; 503 when no Insights connection is configured or the broker cannot be reached.`,
      headers: Type.Object({ [TOKEN_HEADER]: Type.Optional(Type.String({ description: 'The token of the running call.' })) }),
      body: Type.Array(Type.Object({ insight_key: Type.String(), insight_value: Type.Unknown() }), {
        description: `At most ${MAX_INSIGHTS} metrics.`,
      }),
      response: { 202: Type.Object({ accepted: Type.Integer() }), ...errorResponses(400, 403, 413, 503) },
    },
    handler: async (req, reply) => reply.code(202).send(await s.insights.report(req.headers[TOKEN_HEADER], req.body)),
  });
}

function connectionJson(c: InsightsConnectionView) {
  return { cluster: c.cluster, topic: c.topic, created_at: c.createdAt };
}
