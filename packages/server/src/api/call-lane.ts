/**
 * The call lane: warm sync calls answered straight from Node's HTTP server, without Fastify's
 * request cycle (its routing, hook chain, request and reply objects and serializers cost more
 * server CPU than the rest of a warm call; docs/performance.md, rule 1). It takes only the plain
 * case, decided from the request head before a byte of the body is read:
 *
 *   POST /v1/algo/{owner}/{name}[/{version}] (letters, digits, `_`, `.`, `*` only), a
 *   Content-Length of at most 64 KiB, no Transfer-Encoding, Expect or Origin, an API key
 *   (`Simple <key>` or the bare key), and a query of at most `timeout`, `stdout` and `output`
 *   (not `void`), each once, with values the route's schema accepts.
 *
 * Anything else goes on to Fastify and is answered as before: a session token, an async call, a
 * query with anything odd in it, a cross-origin request, a chunked or large input. A key the key
 * cache does not hold is looked up here as the route would (keys missed together are looked up
 * once): sending the calls that arrive just after it expired through Fastify's colder path, one
 * lookup each, held up every call behind them (docs/performance.md, rule 5).
 *
 * What the route and its hooks do, the lane does in the same order with the same pieces: the
 * security headers, the rate limit by address and then by credential (api/rate-limits.ts, the
 * same counters), the input budget (api/input-budget.ts, the same budget), the call service, the
 * same answer (api/call-answer.ts `callAnswer`) and the same error envelope (api/errors.ts
 * `failureOf`). packages/server/test/calls/call-lane.test.ts sends each kind of call both ways and
 * compares.
 */
import crypto from 'node:crypto';
import type http from 'node:http';
import type net from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import type { CallService } from '../domain/calls/call-service.js';
import type { KeyService } from '../domain/accounts/key-service.js';
import type { Principal } from '../domain/accounts/principal.js';
import { queryBoolean } from './query.js';
import { simpleKeyOf } from './auth.js';
import { errorBody, errorHeaders, failureOf, logFailure } from './errors.js';
import type { InputBudget, InputLease } from './input-budget.js';
import type { RateLimiter } from './rate-limits.js';
import { ASYNC_RESULT, TIMEOUT_PATTERN, readInput } from './routes/calls.js';
import { callAnswer, type RefusalAnswer } from './call-answer.js';

/** Inputs up to this size take the lane; larger ones are the route's (read chunk by chunk). */
const MAX_LANE_INPUT_BYTES = 64 * 1024;
const PREFIX = '/v1/algo/';
/** The path after the prefix: plain characters only (nothing to decode, no `algo://`). */
const PLAIN_ADDRESS = /^[A-Za-z0-9_]+\/[A-Za-z0-9_]+(?:\/[A-Za-z0-9_.*]+)?\/?$/;
/** A query of plain characters only (nothing to decode: no `%`, no `+`). */
const PLAIN_QUERY = /^[A-Za-z0-9_.=&]*$/;
const TIMEOUT = new RegExp(TIMEOUT_PATTERN);
const CONTENT_LENGTH = /^[0-9]{1,5}$/;

export interface CallLaneOptions {
  keys: KeyService;
  calls: CallService;
  limiter: RateLimiter;
  /** Told which connections authenticated (kept over idle anonymous ones at the node's cap); unset: none. */
  connections?: { markAuthenticated(socket: net.Socket): void };
  budget: InputBudget;
  /** The headers every answer carries (api/security-headers.ts); none when empty. */
  securityHeaders: Record<string, string>;
  logger: FastifyBaseLogger;
}

/** What the lane reads from a call's query. */
interface LaneQuery {
  /** Seconds, as the route's schema accepts them (TIMEOUT_PATTERN). */
  timeout?: number;
  stdout: boolean;
  output?: string;
}

export class CallLane {
  private closed = false;
  /** The security headers as writeHead's flat list, made once (no setHeader per answer). */
  private readonly headers: string[];
  /** Calls this lane has taken (each answered by it, successfully or not). */
  taken = 0;

  constructor(private readonly o: CallLaneOptions) {
    this.headers = Object.entries(o.securityHeaders).flat();
  }

  /** From now on every request goes to Fastify (which answers 503 while the node closes). */
  close(): void {
    this.closed = true;
  }

  /**
   * Answers `req` when it is a plain warm call and returns true; returns false, having touched
   * nothing, for every other request.
   */
  take(req: http.IncomingMessage, res: http.ServerResponse): boolean {
    if (this.closed || req.method !== 'POST') return false;
    const url = req.url ?? '';
    if (!url.startsWith(PREFIX)) return false;
    const headers = req.headers;
    const length = headers['content-length'];
    if (length === undefined || !CONTENT_LENGTH.test(length) || Number(length) > MAX_LANE_INPUT_BYTES) return false;
    if (headers['transfer-encoding'] !== undefined || headers.expect !== undefined || headers.origin !== undefined) return false;
    // No Content-Type: the route's parser decides what a body without one is.
    if (headers['content-type'] === undefined) return false;
    const mark = url.indexOf('?');
    const path = mark < 0 ? url.slice(PREFIX.length) : url.slice(PREFIX.length, mark);
    if (!PLAIN_ADDRESS.test(path) || ASYNC_RESULT.test(path)) return false;
    const query = mark < 0 ? { stdout: false } : plainQuery(url.slice(mark + 1));
    if (!query) return false;
    const secret = simpleKeyOf(headers);
    if (secret === undefined) return false;

    this.taken++;
    // In the route's order: the client (a global onRequest hook), the key (the route's first
    // onRequest hook), then the credential (preParsing).
    const refused = this.o.limiter.admitClient(req.socket);
    if (refused) {
      this.fail(req, res, refused);
      return true;
    }
    const principal = this.o.keys.cachedKey(secret);
    if (principal) this.admit(req, res, path, query, principal);
    else
      this.o.keys.authenticateKey(secret).then(
        (p) => this.admit(req, res, path, query, p),
        (err: unknown) => this.fail(req, res, err),
      );
    return true;
  }

  /** Past the address and the key: the credential's rate limit, the input budget, then the call. */
  private admit(req: http.IncomingMessage, res: http.ServerResponse, path: string, query: LaneQuery, principal: Principal): void {
    this.o.connections?.markAuthenticated(req.socket);
    const refused = this.o.limiter.admitCredential(principal);
    if (refused) return this.fail(req, res, refused);
    // Given back when the call ends, or when reading the input fails (a client gone before it
    // arrived makes Node fail the read with ECONNRESET).
    const lease = this.o.budget.lease(principal.account);
    void this.call(req, res, path, query, principal, lease);
  }

  private async call(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    path: string,
    query: LaneQuery,
    principal: Principal,
    lease: InputLease,
  ): Promise<void> {
    try {
      const body = await readInput(req, req.headers['content-length'], lease);
      const outcome = await this.o.calls.call(principal, {
        address: path,
        contentType: req.headers['content-type'],
        body,
        timeoutSeconds: query.timeout,
        stdout: query.stdout,
      });
      const answer = callAnswer(outcome, query.output);
      if (answer.refusal) return this.refuse(req, res, answer);
      const length = String(Buffer.byteLength(answer.body));
      res.writeHead(200, [...this.headers, 'content-type', answer.contentType, 'content-length', length]).end(answer.body);
    } catch (err) {
      this.fail(req, res, err);
    } finally {
      lease.release();
    }
  }

  private fail(req: http.IncomingMessage, res: http.ServerResponse, err: unknown): void {
    const id = requestIdOf(req);
    const failure = failureOf(err, id);
    logFailure(this.o.logger, failure, err, id);
    if (res.headersSent) return void res.destroy();
    this.send(res, failure.status, errorHeaders(failure), errorBody(failure.code, failure.message));
  }

  /** A call the call service refused, answered as the route answers it. */
  private refuse(req: http.IncomingMessage, res: http.ServerResponse, answer: RefusalAnswer): void {
    logFailure(this.o.logger, answer.refusal, answer.error, requestIdOf(req));
    if (res.headersSent) return void res.destroy();
    this.send(res, answer.status, answer.headers, answer.body);
  }

  private send(res: http.ServerResponse, status: number, headers: Record<string, string>, body: string): void {
    const all = [...this.headers, ...Object.entries(headers).flat(), 'content-length', String(Buffer.byteLength(body))];
    res.writeHead(status, all).end(body);
  }
}

/**
 * `timeout`, `stdout` and `output` at most once each, with values the route's schema accepts,
 * and not an async call (`output=void`); undefined for anything else, which the route answers.
 */
function plainQuery(search: string): LaneQuery | undefined {
  if (!PLAIN_QUERY.test(search)) return undefined;
  const query: LaneQuery = { stdout: false };
  const seen = new Set<string>();
  for (const pair of search.split('&')) {
    const eq = pair.indexOf('=');
    if (eq < 0) return undefined;
    const name = pair.slice(0, eq);
    const value = pair.slice(eq + 1);
    if (seen.has(name)) return undefined;
    seen.add(name);
    if (name === 'timeout') {
      if (!TIMEOUT.test(value)) return undefined;
      query.timeout = Number(value);
    } else if (name === 'stdout') {
      const flag = booleanOrUndefined(value);
      if (flag === null) return undefined;
      query.stdout = flag === true;
    } else if (name === 'output') {
      if (value === 'void') return undefined;
      query.output = value;
    } else {
      return undefined;
    }
  }
  return query;
}

/** A query boolean as the route reads it (api/query.ts); null for a value it refuses. */
function booleanOrUndefined(value: string): boolean | undefined | null {
  try {
    return queryBoolean('stdout', value);
  } catch {
    return null;
  }
}

/** As Fastify names a request in its logs and 500s: the client's X-Request-Id, else a fresh one. */
function requestIdOf(req: http.IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && given ? given : `req-${crypto.randomUUID()}`;
}
