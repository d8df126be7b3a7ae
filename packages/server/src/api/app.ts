/**
 * The HTTP application: Fastify with JSON-Schema validation on every route, the error edge,
 * authentication, and the OpenAPI 3.1 document generated from the route schemas.
 */
import type http from 'node:http';
import type net from 'node:net';
import Fastify, { LogController, type FastifyBaseLogger } from 'fastify';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { installAudit } from './audit.js';
import { installSecurityHeaders } from './security-headers.js';
import { metricsRoute, type MetricsOptions } from './metrics-route.js';
import { installAuth } from './auth.js';
import { installCors } from './cors.js';
import { fixedJsonAnswer, installCompression } from './compression.js';
import { installRateLimits, type RateLimiter } from './rate-limits.js';
import { InputBudget } from './input-budget.js';
import { MAX_INPUT_BYTES } from '../domain/calls/request.js';
import { lazyChildLogger } from './request-logger.js';
import type { Api, ApiServices } from './context.js';
import { frameworkError, installErrorHandling, installJsonParser, sendError } from './errors.js';
import { Errors } from '../domain/errors.js';
import { SHARED_SCHEMAS } from './schemas.js';
import { algorithmRoutes } from './routes/algorithms.js';
import { buildRoutes } from './routes/builds.js';
import { versionRoutes } from './routes/versions.js';
import { callRoutes } from './routes/calls.js';
import { DATA_SCHEMAS, dataRoutes } from './routes/data.js';
import { environmentRoutes } from './routes/environments.js';
import { keyRoutes } from './routes/keys.js';
import { organizationRoutes } from './routes/organizations.js';
import { userRoutes } from './routes/users.js';
import { sourceRoutes } from './routes/source.js';
import { ADMIN_SCHEMAS, adminRoutes } from './routes/admin.js';
import { scmRoutes, scmWebhookRoutes } from './routes/scms.js';
import { webAppRoutes } from './web-app.js';
import { EVENT_SCHEMAS, eventRoutes } from './routes/events.js';
import { insightsRoutes } from './routes/insights.js';

export interface ApiOptions {
  logger: FastifyBaseLogger;
  bodyLimit: number;
  version: string;
  /** One log line per request (debug level): off by default, it costs more than a warm call. */
  logRequests?: boolean;
  /** Origins whose web pages may call the API (`*` for any); none by default. */
  corsOrigins?: string[];
  /** Call inputs held at once (api/input-budget.ts), shared with the call lane; unset: no budget. */
  callInputBudget?: InputBudget;
  /** Node's HTTP timeouts, in ms (see httpServerOptions); Node's defaults when unset. */
  timeouts?: HttpTimeouts;
  /**
   * A server already listening (made with httpServerOptions) for the app to serve; its caller
   * routes requests to `app.routing` once the app is ready. Unset: Fastify makes its own.
   */
  server?: http.Server;
  /** The built web UI served at `/` (api/web-app.ts); unset: no UI, unknown paths are 404s. */
  webDir?: string;
  /** Headers every answer carries (api/security-headers.ts); unset: none. */
  securityHeaders?: Record<string, string>;
  /** Who may read /metrics on the API port (api/metrics-route.ts); unset: admins only. */
  metrics?: MetricsOptions;
  /** Request-rate limits per address and per credential (api/rate-limits.ts), shared with the call lane; unset: none. */
  rateLimits?: RateLimiter;
  /** Told which connections authenticated (api/connection-limits.ts); unset: none is. */
  connections?: { markAuthenticated(socket: net.Socket): void };
  /**
   * A cluster worker (ALGOHOST_ROLE=worker): its TCP port answers only /healthz and /metrics.
   * The API and Git are the API nodes'; a worker serves them only to its own sandboxes, over
   * the API socket bound into them (pipelines, hosted data), so a worker reachable by mistake
   * (a NetworkPolicy missing) lets nobody in through it.
   */
  workerPort?: boolean;
}

/** What a worker's TCP port serves (workerPort). */
const WORKER_PORT_PATHS = new Set(['/healthz', '/metrics']);

export interface HttpTimeouts {
  /** To receive a complete request head, from the connection's opening (idle connections too). */
  headersMs: number;
  /** To receive one whole request, head and body (not the answer); 0 = none. */
  requestMs: number;
  /** Idle time between requests on a keep-alive connection. */
  keepAliveMs: number;
}

/**
 * Options for Node's HTTP server with these timeouts. Node checks the head and request
 * deadlines every `connectionsCheckingInterval` (30 s by default): a fraction of the head
 * timeout here, so a connection is closed soon after its deadline.
 */
export function httpServerOptions(t: HttpTimeouts): {
  headersTimeout: number;
  requestTimeout: number;
  keepAliveTimeout: number;
  connectionsCheckingInterval: number;
} {
  // Node refuses a head timeout longer than a (non-zero) request timeout.
  const headersTimeout = t.requestMs > 0 ? Math.min(t.headersMs, t.requestMs) : t.headersMs;
  return {
    headersTimeout,
    requestTimeout: t.requestMs,
    keepAliveTimeout: t.keepAliveMs,
    connectionsCheckingInterval: Math.min(5000, Math.max(50, Math.floor(headersTimeout / 4))),
  };
}

interface OpenApiOperation {
  parameters?: { name: string; in: string; schema?: unknown }[];
  requestBody?: { required?: boolean };
  'x-wildcard'?: unknown;
  'x-body-optional'?: boolean;
}
interface OpenApiDocument {
  paths?: Record<string, Record<string, OpenApiOperation>>;
}

/**
 * What route schemas say that @fastify/swagger has no place for: `x-wildcard` is the schema of a
 * `*` path parameter (the data and call paths, checked by the domain rather than by Fastify,
 * which would otherwise see only "a string"), and `x-body-optional` marks a body that may be
 * left out (the plugin marks every body required).
 */
function finishDocument(doc: OpenApiDocument): OpenApiDocument {
  for (const path of Object.values(doc.paths ?? {})) {
    for (const op of Object.values(path)) {
      if (op['x-wildcard'] !== undefined) {
        const param = op.parameters?.find((p) => p.in === 'path' && p.name === '*');
        if (param) param.schema = op['x-wildcard'];
        delete op['x-wildcard'];
      }
      if (op['x-body-optional'] !== undefined) {
        if (op.requestBody) op.requestBody.required = false;
        delete op['x-body-optional'];
      }
    }
  }
  return doc;
}

export async function buildApi(services: ApiServices, opts: ApiOptions): Promise<Api> {
  const timeouts = opts.timeouts ? httpServerOptions(opts.timeouts) : undefined;
  const server = opts.server;
  const app = Fastify({
    loggerInstance: opts.logger,
    bodyLimit: opts.bodyLimit,
    // Fastify makes the server from `http` and then sets its own two timeouts: both agree.
    ...(timeouts && { http: timeouts, requestTimeout: timeouts.requestTimeout, keepAliveTimeout: timeouts.keepAliveTimeout }),
    ...(server && { serverFactory: () => server }),
    // Request bodies are checked, not coerced: "wrong types" must be a 400, not a silent cast.
    // verbose: an error carries its schema, so a refused `not` can say why (api/errors.ts).
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, allErrors: false, verbose: true } },
    requestIdHeader: 'x-request-id',
    // Two log lines per request cost more than a warm call itself; failures are still logged
    // by the error handler, and ALGOHOST_LOG_LEVEL=debug brings per-request lines back.
    logController: new LogController({ disableRequestLogging: !opts.logRequests }),
    return503OnClosing: true,
    frameworkErrors: frameworkError,
    childLoggerFactory: lazyChildLogger,
  }).withTypeProvider<TypeBoxTypeProvider>();

  for (const schema of [...SHARED_SCHEMAS, ...EVENT_SCHEMAS, ...ADMIN_SCHEMAS, ...DATA_SCHEMAS]) app.addSchema(schema);
  installJsonParser(app);
  installErrorHandling(app, opts.bodyLimit);
  // First of the hooks: even a 429 or a 401 carries them.
  if (opts.securityHeaders) installSecurityHeaders(app, opts.securityHeaders);
  if (opts.rateLimits) installRateLimits(app, opts.rateLimits);
  if (opts.workerPort) {
    app.addHook('onRequest', (req, reply, done) => {
      // The API socket inside sandboxes has no client address (a Unix socket): served in full.
      if (!req.ip) return done();
      const path = req.url.split('?')[0]!;
      if (WORKER_PORT_PATHS.has(path)) return done();
      sendError(
        reply,
        404,
        Errors.badRequest.code,
        `this node is a cluster worker (ALGOHOST_ROLE=worker): its port serves only /healthz and /metrics; send ${req.method} ${path} to an API node`,
      );
    });
  }
  // After the error handler (the preflight route it adds keeps the handler set before it), before
  // authentication (preflights carry no key).
  await installCors(app, opts.corsOrigins ?? []);
  installAuth(app, services.keys, opts.connections);
  installAudit(app, services.audit);
  installCompression(app);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'algohost API',
        version: opts.version,
        description: 'Self-hosted algorithm hosting: accounts, algorithms, environments, builds and calls.',
      },
      components: {
        securitySchemes: {
          simple: { type: 'apiKey', in: 'header', name: 'Authorization', description: '"Simple <API key>" or the bare key' },
          bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        },
      },
      security: [{ simple: [] }, { bearer: [] }],
    },
    refResolver: { buildLocalReference: (json, _base, _frag, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
    transformObject: (documentObject) =>
      'openapiObject' in documentObject ? finishDocument(documentObject.openapiObject as OpenApiDocument) : documentObject.swaggerObject,
  });

  app.get(
    '/v1/openapi.json',
    { config: { auth: 'none' }, schema: { hide: true } },
    fixedJsonAnswer(() => JSON.stringify(app.swagger())),
  );
  // Answered without the database or a runner, so it keeps answering under load.
  app.get('/healthz', { config: { auth: 'none' }, schema: { hide: true } }, async () => ({ status: 'ok' }));

  userRoutes(app, services);
  keyRoutes(app, services);
  organizationRoutes(app, services);
  environmentRoutes(app, services);
  algorithmRoutes(app, services);
  sourceRoutes(app, services);
  buildRoutes(app, services);
  versionRoutes(app, services);
  adminRoutes(app, services);
  eventRoutes(app, services);
  scmRoutes(app, services);
  await app.register(async (scope) => scmWebhookRoutes(scope, services));
  insightsRoutes(app, services);
  await app.register(async (scope) => callRoutes(scope, services, { budget: opts.callInputBudget ?? new InputBudget(0, MAX_INPUT_BYTES) }));
  await app.register(async (scope) => dataRoutes(scope, services));
  metricsRoute(app, services, opts.metrics ?? {});
  if (opts.webDir !== undefined) await webAppRoutes(app, opts.webDir);
  return app;
}
