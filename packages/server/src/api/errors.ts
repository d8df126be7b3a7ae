/**
 * The only place that knows HTTP status codes for domain errors, for the REST API and (through
 * `statusOf`, handed to git/ by the composition root) for Git. Every error leaves as JSON
 * `{"error": {"code", "message"}}` with the message repeated in `X-Error-Message`
 * (docs/compatibility.md §1–2); unexpected errors are logged and answered generically.
 */
import type {
  FastifyBaseLogger,
  FastifyError,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  onRequestHookHandler,
  preHandlerHookHandler,
} from 'fastify';
import secureJson from 'secure-json-parse';
import { DomainError, Errors, type ErrorKind } from '../domain/errors.js';
import { nestsDeeperThan } from '../lib/json-scan.js';
import { MAX_PAGE_LIMIT } from '../domain/pagination.js';

const STATUS: Record<ErrorKind, number> = {
  not_found: 404,
  conflict: 409,
  invalid: 400,
  unprocessable: 422,
  forbidden: 403,
  unauthenticated: 401,
  limit: 429,
  too_large: 413,
  unsupported_media_type: 415,
  unavailable: 503,
  upstream: 502,
  internal: 500,
};

export const STORAGE_FULL_MESSAGE =
  "the server's storage is full (no space left on device): nothing was stored; try again once the operator has freed space";

/**
 * Whether `err` (or an error it wraps) says the server's storage is full: ENOSPC or EDQUOT from
 * the file system, SQLITE_FULL from SQLite, 53100 (disk_full) from PostgreSQL.
 */
export function storageFull(err: unknown): boolean {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (typeof e !== 'object') return false;
    if (e.code === 'ENOSPC' || e.code === 'EDQUOT' || e.code === 'SQLITE_FULL' || e.code === '53100') return true;
  }
  return false;
}

/**
 * Why a request failed when `err` says a service the node depends on cannot be reached, or
 * undefined: PostgreSQL refusing or dropping connections (SQLSTATE classes 08 and 57P: shutting
 * down, starting up), the pool's "Connection terminated", a refused or reset connection.
 */
export function backingServiceDown(err: unknown): string | undefined {
  for (
    let e = err as { code?: unknown; message?: unknown; cause?: unknown } | undefined, depth = 0;
    e && depth < 5;
    e = e.cause as typeof e, depth++
  ) {
    if (typeof e !== 'object') return undefined;
    const code = typeof e.code === 'string' ? e.code : '';
    const message = typeof e.message === 'string' ? e.message : '';
    if (
      /^(08|57P)/.test(code) ||
      /^Connection terminated/.test(message) ||
      /the database system is (shutting down|starting up)/.test(message)
    ) {
      return `the database is unavailable (${code || message}); try again shortly`;
    }
    if (code === 'ECONNREFUSED' || code === 'ECONNRESET' || code === 'ETIMEDOUT') {
      return `a service this node depends on (the database or the blob store) is unreachable (${code}); try again shortly`;
    }
  }
  return undefined;
}

/** The HTTP status of a domain error. */
export function statusOf(err: DomainError): number {
  return STATUS[err.kind];
}

/** Fastify's own client errors, mapped to our codes and wording. */
const FASTIFY_ERRORS: Record<string, { kind: ErrorKind; code: number; message: (e: FastifyError) => string }> = {
  FST_ERR_CTP_INVALID_JSON_BODY: { kind: 'invalid', code: Errors.malformedJson.code, message: (e) => `malformed JSON: ${e.message}` },
  FST_ERR_CTP_EMPTY_JSON_BODY: {
    kind: 'invalid',
    code: Errors.malformedJson.code,
    message: () => 'malformed JSON: the body is empty but Content-Type is application/json',
  },
  FST_ERR_CTP_BODY_TOO_LARGE: { kind: 'too_large', code: Errors.badRequest.code, message: () => 'request body too large' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    kind: 'unsupported_media_type',
    code: Errors.badRequest.code,
    message: (e) => `unsupported Content-Type: ${e.message.replace(/^Unsupported Media Type:\s*/, '')}; send application/json`,
  },
  FST_ERR_MAX_PARAM_LENGTH: { kind: 'invalid', code: Errors.badRequest.code, message: () => 'a path segment is too long' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: {
    kind: 'invalid',
    code: Errors.badRequest.code,
    message: () => 'Content-Length does not match the body',
  },
};

export function sendError(reply: FastifyReply, status: number, code: number, message: string): FastifyReply {
  return reply
    .code(status)
    .header('x-error-message', headerSafe(message))
    .type('application/json; charset=utf-8')
    .send({ error: { code, message } });
}

function sendDomainError(reply: FastifyReply, err: DomainError): FastifyReply {
  logRefusal(reply.log, err.kind, err.code);
  if (typeof err.details?.retryAfterSeconds === 'number') reply.header('retry-after', String(err.details.retryAfterSeconds));
  return sendError(reply, statusOf(err), err.code, err.message);
}

/**
 * How an error is answered once the request itself was accepted (the route's own code threw
 * it): a DomainError by its kind, then the backing services and storage, else a 500 naming the
 * request id. Shared by the error handler and the call lane (api/call-lane.ts), which answers
 * warm calls without Fastify and must answer their failures the same way.
 */
export interface Failure {
  status: number;
  code: number;
  message: string;
  retryAfter?: string;
  /**
   * The line it is worth in the log: at which level and why. An expected refusal (a 4xx) goes
   * at debug with its kind, so that an operator following one client's requests sees why each
   * was refused, without a stack or a warning per client mistake.
   */
  log: { level: 'debug' | 'warn' | 'error'; what: string; kind?: ErrorKind };
}

/** Writes the failure's log line: a refusal by its kind and code, anything else with the error. */
export function logFailure(log: FastifyBaseLogger, failure: Failure, err: unknown, reqId?: string): void {
  const { level, what, kind } = failure.log;
  const fields = kind ? { kind, code: failure.code } : { err };
  log[level](reqId === undefined ? fields : { ...fields, reqId }, what);
}

const REFUSED = 'request refused';
const refused = (kind: ErrorKind) => ({ level: 'debug' as const, what: REFUSED, kind });

/** The log line of a refusal answered before any route code ran (validation, framework, no route). */
function logRefusal(log: FastifyBaseLogger, kind: ErrorKind, code: number): void {
  log.debug({ kind, code }, REFUSED);
}

/** How a catalog error is answered: its kind's status, its code and message, Retry-After when it says. */
export function refusalOf(err: DomainError): Failure {
  const status = statusOf(err);
  const retryAfter = typeof err.details?.retryAfterSeconds === 'number' ? String(err.details.retryAfterSeconds) : undefined;
  // A 503 is a state the service says it is in (no worker yet, a backing service away, a
  // saturated algorithm): worth a warning, not an error page for the operator each time.
  const log =
    status === 503
      ? { level: 'warn' as const, what: 'unavailable' }
      : status >= 500
        ? { level: 'error' as const, what: 'domain error' }
        : refused(err.kind);
  return { status, code: err.code, message: err.message, ...(retryAfter !== undefined && { retryAfter }), log };
}

export function failureOf(err: unknown, requestId: string): Failure {
  if (err instanceof DomainError) return refusalOf(err);
  const e = err as { message?: unknown; statusCode?: unknown };
  const message = typeof e?.message === 'string' ? e.message : String(err);
  if (err instanceof SyntaxError || (e?.statusCode === 400 && /JSON/i.test(message))) {
    return { status: 400, code: Errors.malformedJson.code, message: `malformed JSON: ${message}`, log: refused('invalid') };
  }
  if (typeof e?.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    return { status: e.statusCode, code: Errors.badRequest.code, message, log: refused('invalid') };
  }
  const unreachable = backingServiceDown(err);
  if (unreachable) {
    // The database (or the blob store) is down or restarting: the node itself is fine and
    // recovers by itself when it is back (the pool reconnects), so the client should retry.
    return {
      status: 503,
      code: Errors.internal.code,
      message: unreachable,
      retryAfter: '5',
      log: { level: 'error', what: 'backing service unavailable' },
    };
  }
  if (storageFull(err)) {
    // A full disk is the operator's to fix, not a bug: say so, so that clients retry later.
    return { status: 507, code: Errors.internal.code, message: STORAGE_FULL_MESSAGE, log: { level: 'error', what: 'storage full' } };
  }
  return {
    status: 500,
    code: Errors.internal.code,
    message: `internal error; quote request id ${requestId} when reporting it`,
    log: { level: 'error', what: 'unexpected error' },
  };
}

/** The error envelope's body, as Fastify's serializer writes it. */
export function errorBody(code: number, message: string): string {
  return JSON.stringify({ error: { code, message } });
}

/** The headers of an error answer (besides the security headers every answer has). */
export function errorHeaders(failure: Failure): Record<string, string> {
  return {
    ...(failure.retryAfter !== undefined && { 'retry-after': failure.retryAfter }),
    'x-error-message': headerSafe(failure.message),
    'content-type': 'application/json; charset=utf-8',
  };
}

export function installErrorHandling(app: FastifyInstance, bodyLimit: number): void {
  app.setErrorHandler((err: FastifyError, req: FastifyRequest, reply: FastifyReply) => {
    if (err.validation) {
      // The paging parameters keep their own codes (docs/compatibility.md §1: 5002, 5003).
      const query = (req.query ?? {}) as Record<string, unknown>;
      const where = err.validationContext === 'querystring' ? err.validation[0]?.instancePath : undefined;
      if (where === '/limit') return sendDomainError(reply, Errors.invalidLimit({ limit: String(query.limit), max: MAX_PAGE_LIMIT }));
      if (where === '/marker') return sendDomainError(reply, Errors.invalidMarker({ marker: String(query.marker) }));
      logRefusal(req.log, 'invalid', Errors.badRequest.code);
      return sendError(reply, 400, Errors.badRequest.code, `invalid request: ${err.message}${offending(req, err)}`);
    }
    const known = !(err instanceof DomainError) && err.code ? FASTIFY_ERRORS[err.code] : undefined;
    if (known) {
      // The limit of the route that refused the body, not the app-wide default.
      const limit = req.routeOptions?.bodyLimit ?? bodyLimit;
      const message =
        err.code === 'FST_ERR_CTP_BODY_TOO_LARGE' ? `request body too large: the limit is ${limit} bytes` : known.message(err);
      logRefusal(req.log, known.kind, known.code);
      return sendError(reply, STATUS[known.kind], known.code, message);
    }
    const failure = failureOf(err, req.id);
    logFailure(req.log, failure, err);
    if (failure.retryAfter !== undefined) reply.header('retry-after', failure.retryAfter);
    return sendError(reply, failure.status, failure.code, failure.message);
  });

  // A request no route takes: 405 with `Allow` when the path exists for other methods (RFC 9110
  // §15.5.6), an answer to OPTIONS listing them, else 404. Decided in the not-found route's own
  // onRequest hook, before Fastify reads a body (it refuses a QUERY without Content-Type with a
  // 400 first), and at no cost to the requests routes take.
  // Every route's methods and its path as a pattern of the concrete URLs it takes (`:name` one
  // segment, `*` the rest): Fastify's own lookup by pattern would miss `/v1/users/alice/keys/k1`.
  const routes: { methods: string[]; path: RegExp; notFor?: RegExp }[] = [];
  app.addHook('onRoute', (route) => {
    const pattern = route.url
      .split('/')
      .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment === '*' ? '.*' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/');
    routes.push({
      methods: [route.method].flat().map((m) => m.toUpperCase()),
      path: new RegExp(`^${pattern}$`),
      notFor: route.config?.notFor,
    });
  });
  const allowedMethods = (url: string) => {
    const allowed = new Set<string>();
    for (const route of routes) {
      if (!route.path.test(url) || route.notFor?.test(url)) continue;
      for (const method of route.methods) allowed.add(method);
    }
    return [...allowed];
  };
  const answerUnrouted = (req: FastifyRequest, reply: FastifyReply) => {
    const path = req.url.split('?')[0]!;
    const allowed = allowedMethods(path);
    if (allowed.length === 0) {
      logRefusal(req.log, 'not_found', Errors.badRequest.code);
      sendError(reply, 404, Errors.badRequest.code, `no such endpoint: ${req.method} ${path}`);
    } else if (req.method === 'OPTIONS') {
      reply.header('allow', allowed.join(', ')).code(204).send();
    } else {
      logRefusal(req.log, 'invalid', Errors.badRequest.code);
      reply.header('allow', allowed.join(', '));
      sendError(reply, 405, Errors.badRequest.code, `method ${req.method} is not allowed on ${path}: use ${allowed.join(', ')}`);
    }
  };
  // Answers every request it sees, so it never calls its `done`.
  const notFound: onRequestHookHandler = (req, reply) => answerUnrouted(req, reply);
  // Fastify runs the not-found route's hooks from these options (lib/four-oh-four.js) although
  // its types name only preValidation and preHandler. The handler answers the same for a route
  // that hands a request on with reply.callNotFound() (the web UI's fallback for /v1 paths).
  app.setNotFoundHandler({ onRequest: notFound } as { preHandler?: preHandlerHookHandler }, (req, reply) => answerUnrouted(req, reply));
}

/**
 * Errors Fastify raises before a route runs (a URL whose percent-encoding does not decode, an
 * over-long parameter): the same envelope as every other error instead of Fastify's own.
 */
export function frameworkError(err: FastifyError, req: FastifyRequest, reply: FastifyReply): void {
  if (err.code === 'FST_ERR_BAD_URL') {
    logRefusal(req.log, 'invalid', Errors.badRequest.code);
    sendError(reply, 400, Errors.badRequest.code, `malformed percent-encoding in the URL: ${err.message}`);
    return;
  }
  const known = err.code ? FASTIFY_ERRORS[err.code] : undefined;
  logRefusal(req.log, known?.kind ?? 'invalid', known?.code ?? Errors.badRequest.code);
  sendError(reply, known ? STATUS[known.kind] : 400, known?.code ?? Errors.badRequest.code, known ? known.message(err) : err.message);
}

/** How deeply arrays and objects may nest in a JSON request body (the API's own need a few). */
export const MAX_BODY_DEPTH = 64;

/**
 * JSON bodies: an empty body counts as no body (docs/compatibility.md §6 sends `PUT …/members/{user}` empty,
 * some clients with a JSON Content-Type), `__proto__` keys and `constructor.prototype` are dropped
 * (they can never name a field of ours, and an object schema cannot forbid a key at every depth,
 * so refusing them would refuse bodies the OpenAPI document calls valid), and nesting deeper
 * than MAX_BODY_DEPTH is refused before parsing (validation and serialization recurse).
 */
export function installJsonParser(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, undefined);
    if (nestsDeeperThan(Buffer.from(text), MAX_BODY_DEPTH)) {
      const message = `malformed JSON: arrays and objects nest deeper than the limit of ${MAX_BODY_DEPTH} levels`;
      return done(Errors.malformedJson(message), undefined);
    }
    try {
      done(null, secureJson.parse(text, undefined, { protoAction: 'remove', constructorAction: 'remove' }));
    } catch (err) {
      done(Errors.malformedJson(`malformed JSON: ${(err as Error).message}`), undefined);
    }
  });
}

/** `; got <value>` for the value the first validation error is about, so the message names it. */
function offending(req: FastifyRequest, err: FastifyError): string {
  const first = err.validation?.[0];
  const part = err.validationContext === 'querystring' ? req.query : err.validationContext === 'body' ? req.body : req.params;
  if (!first) return '';
  // A `not` says what it forbids in its description.
  const why = (first as unknown as { schema?: { description?: unknown } }).schema?.description;
  if (first.keyword === 'not' && typeof why === 'string') return ` (${why})`;
  const allowed = (first.params as { allowedValues?: unknown[] }).allowedValues;
  const hint = Array.isArray(allowed) ? `: ${allowed.filter((v) => v !== null).join(', ')}` : '';
  const described = (first as unknown as { parentSchema?: { description?: unknown } }).parentSchema?.description;
  const rule = first.keyword === 'pattern' && typeof described === 'string' ? ` (${described})` : '';
  if (part === undefined || part === null) return hint + rule;
  let value: unknown = part;
  for (const key of first.instancePath.split('/').slice(1)) {
    if (value === null || typeof value !== 'object') return hint + rule;
    value = (value as Record<string, unknown>)[key.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  if (value === undefined || (typeof value === 'object' && value !== null)) return hint + rule;
  const shown = JSON.stringify(value);
  return `${hint}${rule}; got ${shown.length > 60 ? `${shown.slice(0, 60)}…` : shown}`;
}

/** Header values must be one line of visible ASCII. */
function headerSafe(message: string): string {
  return message.replace(/[^\x20-\x7e]/g, ' ').slice(0, 1000);
}
