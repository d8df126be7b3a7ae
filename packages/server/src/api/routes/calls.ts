/**
 * The call API (docs/compatibility.md §2): POST /v1/algo/{owner}/{name}[/{version}] with the input as the raw
 * body (JSON, text or binary by Content-Type), `timeout`, `stdout`, `output=raw|void`.
 * Async calls (`output=void`) are checked at once, run in the background, and their results
 * kept for an hour (domain/calls/async-calls.ts); GET /v1/algo/requests/{request_id} reads them.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { DomainError, Errors } from '../../domain/errors.js';
import { MAX_INPUT_BYTES, type CallRequest } from '../../domain/calls/request.js';
import { asyncStatusBody, callAnswer, JSON_TYPE, type RefusalAnswer, refusalAnswer } from '../call-answer.js';
import { principalOf } from '../auth.js';
import { queryBoolean } from '../query.js';
import type { InputBudget, InputLease } from '../input-budget.js';
import type { Api, ApiServices } from '../context.js';
import { errorResponses, Query, QueryBoolean } from '../schemas.js';
import { logFailure, sendError } from '../errors.js';

/** Seconds above 0 and at most 3000, as decimals (MAX_TIMEOUT_S in domain/calls/request.ts). */
export const TIMEOUT_PATTERN = '^0*(?:(?:[1-9][0-9]{0,2}|[12][0-9]{3})(?:\\.[0-9]+)?|3000(?:\\.0+)?|\\.[0-9]*[1-9][0-9]*)$';

const CallQuery = Query({
  timeout: Type.Optional(Type.String({ pattern: TIMEOUT_PATTERN, description: 'Seconds, default 300, at most 3000.' })),
  stdout: QueryBoolean('true: include what the algorithm printed (owner and members only).'),
  output: Type.Optional(
    Type.String({ description: 'raw: the bare result as the body; void: run asynchronously; anything else: the envelope.' }),
  ),
});

/*
 * The address after /v1/algo/ (docs/compatibility.md §2): owner/name or an algorithm id, then
 * an optional version: latest, latestPrivate, x.y.z, a range (x.y.*, x.y, x.*, x) or a commit.
 */
const ACCOUNT = '[A-Za-z][A-Za-z0-9_]{0,29}';
const ALGORITHM = '[A-Za-z][A-Za-z0-9_]{0,99}';
const VERSION = '(?:latest|latestPrivate|[0-9]{1,9}(?:\\.[0-9]{1,9}){0,2}|[0-9]{1,9}(?:\\.[0-9]{1,9})?\\.\\*|[0-9a-f]{40})';
/** `requests/{id}` where the id is no algorithm name: an async result's address (GET only). */
export const ASYNC_RESULT = /^requests\/(?![A-Za-z][A-Za-z0-9_]*\/?$)[^/]+\/?$/;

const CALL_ADDRESS = {
  type: 'string',
  pattern: `^(?:algo://)?${ACCOUNT}/${ALGORITHM}(?:/${VERSION})?/?$`,
  description: '{owner}/{name}[/{version}]; a literal algo:// prefix and a trailing / are tolerated.',
};

const AsyncAccepted = Type.Object(
  { async: Type.Literal(true), request_id: Type.String() },
  { description: 'output=void: accepted; poll GET /v1/algo/requests/{request_id}.' },
);

declare module 'fastify' {
  interface FastifyRequest {
    /** The call input's share of the node's input budget (api/input-budget.ts). */
    inputLease: InputLease | null;
  }
}

export interface CallRouteOptions {
  /** Call inputs held at once on this node, shared with the call lane (api/call-lane.ts). */
  budget: InputBudget;
}

export async function callRoutes(app: Api, s: Pick<ApiServices, 'calls' | 'asyncCalls'>, { budget }: CallRouteOptions): Promise<void> {
  app.decorateRequest('inputLease', null);

  // The input is the raw body whatever its type; the call service interprets it. Read here,
  // not by Fastify's buffer parser: chunk by chunk against the input budget, and refused past
  // MAX_INPUT_BYTES with a message naming that limit (not the management API's body limit).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (req, payload, done) => {
    const lease = budget.lease(principalOf(req).account);
    req.inputLease = lease;
    readInput(payload, req.headers['content-length'], lease).then(
      (body) => done(null, body),
      (err: Error) => {
        lease.release();
        done(err, undefined);
      },
    );
  });
  // Inputs refused before the handler (a bad query, a body that failed) give their bytes back
  // with the answer; a handler gives them back when its call no longer needs them.
  const releaseUnlessHandled = (req: FastifyRequest) => {
    if (req.inputLease?.holder === 'request') req.inputLease.release();
  };
  app.addHook('onResponse', (req, _reply, done) => {
    releaseUnlessHandled(req);
    done();
  });
  app.addHook('onRequestAbort', (req, done) => {
    releaseUnlessHandled(req);
    done();
  });

  app.post('/v1/algo/*', {
    bodyLimit: MAX_INPUT_BYTES,
    // An async result's address is not a call (answered like an unknown path, without POST in Allow).
    config: { notFor: new RegExp(`^/v1/algo/${ASYNC_RESULT.source.slice(1)}`) },
    // Refuse an oversized input before reading it, naming the limit (docs/compatibility.md §2:
    // 10 MiB); after authentication (api/auth.ts puts its hook first). Callback style: on every
    // call, an async hook would cost a promise and a tick.
    onRequest: (req, _reply, done) => {
      const length = Number(req.headers['content-length'] ?? 0);
      if (length > MAX_INPUT_BYTES) throw Errors.inputTooLarge({ bytes: length, limit: MAX_INPUT_BYTES });
      done();
    },
    schema: {
      operationId: 'algorithm.call',
      'x-wildcard': CALL_ADDRESS,
      // The input is the raw body, any Content-Type; none is the JSON null.
      'x-body-optional': true,
      tags: ['calls'],
      summary: 'Call an algorithm: /v1/algo/{owner}/{name}[/{version}] (version: x.y.z, x.y.*, latest, latestPrivate or a commit SHA).',
      params: Type.Object({ '*': Type.String() }),
      querystring: CallQuery,
      response: {
        200: Type.Union([Type.Ref('CallResult'), Type.Ref('CallFailure'), AsyncAccepted]),
        ...errorResponses(400, 401, 403, 404, 413, 415, 429, 503),
      },
    },
    handler: async (req, reply) => {
      // `requests/req-…` is the address of an async result (GET only), never an algorithm's.
      if (ASYNC_RESULT.test(req.params['*'])) {
        const raw = (reply as unknown as FastifyReply).header('allow', 'GET, HEAD');
        return sendError(raw, 405, Errors.badRequest.code, `method POST is not allowed on /v1/algo/${req.params['*']}: use GET, HEAD`);
      }
      const lease = req.inputLease;
      if (lease) lease.holder = 'handler';
      try {
        const principal = principalOf(req);
        const query = req.query;
        const input: CallRequest = {
          address: req.params['*'],
          contentType: req.headers['content-type'],
          body: (req.body as Buffer | undefined) ?? Buffer.alloc(0),
          timeoutSeconds: query.timeout === undefined ? undefined : Number(query.timeout),
          stdout: queryBoolean('stdout', query.stdout) === true,
        };
        if (query.output === 'void') {
          const accepted = await s.asyncCalls.submit(principal, input);
          if (!accepted.ok) return sendRefusal(reply as FastifyReply, refusalAnswer(accepted));
          // The call runs on, holding its input, after this answer.
          if (lease) {
            lease.holder = 'async';
            void accepted.done.finally(() => lease.release());
          }
          return reply.send({ async: true, request_id: accepted.requestId });
        }
        const outcome = await s.calls.call(principal, input);
        const answer = callAnswer(outcome, query.output);
        if (answer.refusal) return sendRefusal(reply as FastifyReply, answer);
        return (reply as FastifyReply).type(answer.contentType).send(answer.body);
      } finally {
        if (lease?.holder === 'handler') lease.release();
      }
    },
  });

  app.get('/v1/algo/requests/:request_id', {
    // The envelope a sync call would have answered, and answered the same way (api/compression.ts).
    config: { compress: false },
    schema: {
      operationId: 'algorithm.call.result',
      tags: ['calls'],
      summary: 'Status of an async call (output=void) and, once completed, the envelope a sync call would have returned.',
      params: Type.Object({ request_id: Type.String() }),
      response: { 200: Type.Ref('AsyncCallStatus'), ...errorResponses(401, 404) },
    },
    handler: async (req, reply) => {
      const principal = principalOf(req);
      const { request_id: id } = req.params;
      const entry = await s.asyncCalls.get(principal, id);
      return (reply as FastifyReply).type(JSON_TYPE).send(asyncStatusBody(id, entry.status, entry.envelope));
    },
  });
}

/** A refused call, logged and answered as the error handler answers any refusal. */
function sendRefusal(reply: FastifyReply, answer: RefusalAnswer): FastifyReply {
  logFailure(reply.log, answer.refusal, answer.error);
  return reply.code(answer.status).headers(answer.headers).send(answer.body);
}

/**
 * The body as one buffer, counted against the input budget as it arrives (all at once when
 * Content-Length announces it) and refused past MAX_INPUT_BYTES, chunked or not.
 */
export function readInput(payload: NodeJS.ReadableStream, contentLength: string | undefined, lease: InputLease): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = contentLength === undefined ? undefined : Number(contentLength);
    // Announced (Node holds the body to Content-Length): reserved and allocated at once, so
    // the input is never held twice. Chunked: reserved chunk by chunk, joined at the end.
    let buffer: Buffer | undefined;
    try {
      if (declared !== undefined && Number.isSafeInteger(declared) && declared > 0 && declared <= MAX_INPUT_BYTES) {
        lease.growTo(declared);
        buffer = Buffer.allocUnsafe(declared);
      }
    } catch (err) {
      return reject(err as Error);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = (err: Error) => {
      payload.removeListener('data', onData);
      payload.removeListener('end', onEnd);
      // What is still on its way is read and dropped by Node (a request answered early).
      reject(err);
    };
    const onData = (chunk: Buffer) => {
      if (size + chunk.length > MAX_INPUT_BYTES) return stop(tooLarge());
      try {
        lease.growTo(size + chunk.length);
      } catch (err) {
        return stop(err as Error);
      }
      if (buffer && size + chunk.length <= buffer.length) chunk.copy(buffer, size);
      else if (buffer) return stop(tooLarge());
      else chunks.push(chunk);
      size += chunk.length;
    };
    const onEnd = () => resolve(buffer ? buffer.subarray(0, size) : Buffer.concat(chunks, size));
    payload.on('data', onData);
    payload.on('end', onEnd);
    payload.once('error', stop);
  });
}

function tooLarge(): DomainError {
  return Errors.inputTooLarge({ limit: MAX_INPUT_BYTES });
}
