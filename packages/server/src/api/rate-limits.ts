/**
 * Request-rate limits: every request counts against its client (before anything else, so floods
 * of unauthenticated or malformed requests are limited too): a TCP client by its address (IPv6:
 * its /64), a request on a sandbox's API socket by the account whose code runs there
 * (api/sandbox-sockets.ts). An authenticated one also counts against its credential (an API key, or the account of a session or call key). Past a
 * limit the answer is 429 with Retry-After, the seconds until the window ends. Fixed windows,
 * counted in this node's memory (a cluster of N nodes allows N times as much); the defaults
 * (config.ts) are far above what one user's tools send, and exist to stop runaway clients.
 * Git requests count against the address only (Git authenticates inside its own routes).
 */
import type net from 'node:net';
import type { FastifyInstance } from 'fastify';
import { LRUCache } from 'lru-cache';
import { DomainError, Errors } from '../domain/errors.js';
import type { Principal } from '../domain/accounts/principal.js';
import { lruGet } from '../lib/lru-get.js';
import { clientOf } from './connection-limits.js';
import { sandboxOf } from './sandbox-sockets.js';

export interface RateLimitOptions {
  windowSeconds: number;
  /** Requests per window per credential; 0 = no limit. */
  perKey: number;
  /** Requests per window per client (a TCP address, or a sandbox's owner); 0 = no limit. */
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
    let w = lruGet(this.windows, client);
    if (!w || now - w.start >= this.windowMs) {
      w = { start: now, count: 0 };
      this.windows.set(client, w);
    }
    w.count += 1;
    if (w.count <= this.limit) return undefined;
    return Math.max(1, Math.ceil((w.start + this.windowMs - now) / 1000));
  }
}

/**
 * The node's counters, shared by the Fastify hooks below and the call lane
 * (api/call-lane.ts), so a client is limited the same whichever answers it.
 */
export class RateLimiter {
  private readonly byAddress: FixedWindows | undefined;
  private readonly byKey: FixedWindows | undefined;

  constructor(
    private readonly opts: RateLimitOptions,
    /** Milliseconds since the epoch (tests pass their own). */
    private readonly now: () => number = Date.now,
  ) {
    const windowMs = opts.windowSeconds * 1000;
    if (opts.perAddress > 0) this.byAddress = new FixedWindows(opts.perAddress, windowMs);
    if (opts.perKey > 0) this.byKey = new FixedWindows(opts.perKey, windowMs);
  }

  get limitsAddresses(): boolean {
    return this.byAddress !== undefined;
  }

  get limitsCredentials(): boolean {
    return this.byKey !== undefined;
  }

  /**
   * Counts a request that arrived on `socket` against its client: the TCP address, or the owner
   * of the sandbox whose API socket it is. The refusal when it is over the limit.
   */
  admitClient(socket: net.Socket): DomainError | undefined {
    if (!this.byAddress) return undefined;
    const sandbox = sandboxOf(socket);
    const client = sandbox ? sandbox.key : clientOf(socket.remoteAddress);
    const wait = this.byAddress.take(client, this.now());
    if (wait === undefined) return undefined;
    return this.refuse(sandbox ? sandbox.label : `address ${client}`, this.opts.perAddress, wait);
  }

  /** Counts a request made with `principal`'s credential; the refusal when it is over the limit. */
  admitCredential(principal: Principal | null): DomainError | undefined {
    if (!this.byKey || !principal) return undefined;
    const client = principal.keyId !== null ? `key:${principal.keyId}` : `account:${principal.account.id}`;
    const wait = this.byKey.take(client, this.now());
    return wait === undefined ? undefined : this.refuse('this credential', this.opts.perKey, wait);
  }

  private refuse(who: string, limit: number, retryAfterSeconds: number): DomainError {
    return Errors.tooManyRequests({ who, limit, windowSeconds: this.opts.windowSeconds }, { retryAfterSeconds });
  }
}

export function installRateLimits(app: FastifyInstance, limiter: RateLimiter): void {
  if (limiter.limitsAddresses) {
    // Global and added before the routes: it runs before each route's own authentication hook.
    app.addHook('onRequest', (req, _reply, done) => done(limiter.admitClient(req.socket)));
  }
  if (limiter.limitsCredentials) {
    // preParsing: after the route's authentication (an onRequest hook), before the body is read.
    app.addHook('preParsing', (req, _reply, payload, done) => {
      const refused = limiter.admitCredential(req.principal);
      if (refused) done(refused);
      else done(null, payload);
    });
  }
}
