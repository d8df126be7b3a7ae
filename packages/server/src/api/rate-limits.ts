/**
 * Request-rate limits: every request counts against its client address (before anything else,
 * so floods of unauthenticated or malformed requests are limited too), and an authenticated one
 * also against its credential (an API key, or the account of a session or call key). Past a
 * limit the answer is 429 with Retry-After, the seconds until the window ends. Fixed windows,
 * counted in this node's memory (a cluster of N nodes allows N times as much); the defaults
 * (config.ts) are far above what one user's tools send, and exist to stop runaway clients.
 * Git requests count against the address only (Git authenticates inside its own routes).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';
import { Errors } from '../domain/errors.js';

export interface RateLimitOptions {
  windowSeconds: number;
  /** Requests per window per credential; 0 = no limit. */
  perKey: number;
  /** Requests per window per client address; 0 = no limit. */
  perAddress: number;
}

/** Clients tracked at once per kind; the least recently seen are forgotten first. */
const MAX_CLIENTS = 100_000;

interface Window {
  /** Milliseconds since the epoch when this window started. */
  start: number;
  count: number;
}

class FixedWindows {
  private readonly windows = new LRUCache<string, Window>({ max: MAX_CLIENTS });
  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
  ) {}

  /** Counts one request; the seconds to wait when it is over the limit, else undefined. */
  take(client: string, now: number): number | undefined {
    let w = this.windows.get(client);
    if (!w || now - w.start >= this.windowMs) {
      w = { start: now, count: 0 };
      this.windows.set(client, w);
    }
    w.count += 1;
    if (w.count <= this.limit) return undefined;
    return Math.max(1, Math.ceil((w.start + this.windowMs - now) / 1000));
  }
}

export function installRateLimits(app: FastifyInstance, opts: RateLimitOptions): void {
  const windowMs = opts.windowSeconds * 1000;
  const refuse = (who: string, limit: number, retryAfterSeconds: number) =>
    Errors.tooManyRequests({ who, limit, windowSeconds: opts.windowSeconds }, { retryAfterSeconds });
  if (opts.perAddress > 0) {
    const byAddress = new FixedWindows(opts.perAddress, windowMs);
    // Global and added before the routes: it runs before each route's own authentication hook.
    app.addHook('onRequest', (req, _reply, done) => {
      // No address: the API socket inside algorithm sandboxes, whose per-call keys count
      // against their caller's account instead.
      if (!req.ip) return done();
      const wait = byAddress.take(req.ip, Date.now());
      done(wait === undefined ? undefined : refuse(`address ${req.ip}`, opts.perAddress, wait));
    });
  }
  if (opts.perKey > 0) {
    const byKey = new FixedWindows(opts.perKey, windowMs);
    // preParsing: after the route's authentication (an onRequest hook), before the body is read.
    app.addHook('preParsing', (req, _reply, payload, done) => {
      const client = credentialOf(req);
      const wait = client === undefined ? undefined : byKey.take(client, Date.now());
      if (wait === undefined) done(null, payload);
      else done(refuse('this credential', opts.perKey, wait));
    });
  }
}

/** What a request's limit is counted against: its API key, or its account for other credentials. */
function credentialOf(req: FastifyRequest): string | undefined {
  const p = req.principal;
  if (!p) return undefined;
  return p.keyId !== null ? `key:${p.keyId}` : `account:${p.account.id}`;
}
