/**
 * Slows password guessing on POST /v1/auth/token: failed sign-ins are counted per account name
 * and per client address; past a number of failures, every further attempt for that name (or
 * from that address) is refused for a delay that doubles with each failure (capped), whether or
 * not its password is right, so a guesser learns nothing while blocked. A success clears the
 * name's count (the owner is back); the address's count only ages out, so one account of the
 * guesser's own cannot reset it. Counts live in this node's memory, bounded in size.
 */
import { LRUCache } from 'lru-cache';
import type { Clock } from '../clock.js';
import { Errors } from '../errors.js';

export interface SignInThrottleSettings {
  /** Failures of one account name before the delay starts; 0 = no limit by name. */
  failuresPerAccount: number;
  /** Failures from one address before the delay starts; 0 = no limit by address. */
  failuresPerAddress: number;
  /** The first delay; each further failure doubles it, up to `maxDelaySeconds`. */
  delaySeconds: number;
  maxDelaySeconds: number;
}

interface Failures {
  count: number;
  /** Milliseconds since the epoch before which the next attempt is refused. */
  blockedUntil: number;
}

/** Names and addresses remembered at once: enough for an attack's spread, bounded for memory. */
const MAX_ENTRIES = 100_000;

export class SignInThrottle {
  private readonly failures: LRUCache<string, Failures>;

  constructor(
    private readonly settings: SignInThrottleSettings,
    private readonly clock: Clock,
  ) {
    // A count is forgotten once nobody failed for a whole maximum delay.
    this.failures = new LRUCache({ max: MAX_ENTRIES, ttl: Math.max(1, settings.maxDelaySeconds) * 2000, ttlResolution: 1000 });
  }

  /** Throws 429 (with Retry-After) if this name or address is waiting out a delay. */
  check(name: string, address: string | undefined): void {
    const now = this.clock().getTime();
    const until = Math.max(this.blockedUntil(`n:${name.toLowerCase()}`), address ? this.blockedUntil(`a:${address}`) : 0);
    if (until > now) {
      const seconds = Math.ceil((until - now) / 1000);
      throw Errors.signInThrottled({ seconds }, { retryAfterSeconds: seconds });
    }
  }

  failed(name: string, address: string | undefined): void {
    this.count(`n:${name.toLowerCase()}`, this.settings.failuresPerAccount);
    if (address) this.count(`a:${address}`, this.settings.failuresPerAddress);
  }

  succeeded(name: string): void {
    this.failures.delete(`n:${name.toLowerCase()}`);
  }

  private blockedUntil(key: string): number {
    return this.failures.get(key, { updateAgeOnGet: false })?.blockedUntil ?? 0;
  }

  private count(key: string, allowed: number): void {
    if (allowed <= 0) return;
    const entry = this.failures.get(key) ?? { count: 0, blockedUntil: 0 };
    entry.count += 1;
    const over = entry.count - allowed;
    if (over >= 0) {
      const delay = Math.min(this.settings.delaySeconds * 2 ** Math.min(over, 30), this.settings.maxDelaySeconds);
      entry.blockedUntil = this.clock().getTime() + delay * 1000;
    }
    this.failures.set(key, entry);
  }
}
