/**
 * Slows password guessing on POST /v1/auth/token: failed sign-ins are counted per account (or,
 * for a name no account has, per name) and per client (a TCP address, IPv6 by its /64, or the
 * owner of the sandbox whose API socket the request came through); past a number of failures,
 * every further attempt for that account (or from that client) is refused for a delay that
 * doubles with each failure (capped), whether or not its password is right, so a guesser learns
 * nothing while blocked. A name no account has is throttled exactly like an account, so the
 * answers never tell which names exist. A success clears the account's count; a client's count
 * only ages out, so one account of the guesser's own cannot reset it.
 *
 * What bounds a lock-out that anyone can cause by failing for alice's name:
 * - a client from which alice signed in within KNOWN_CLIENT_MS is held only by the failures from
 *   that client for her (and its own count), not by the block others cause: her own browser
 *   still signs in while a flood elsewhere keeps her name blocked;
 * - a block lasts at most `maxDelaySeconds` after the last failure, and attempts refused while
 *   blocked neither count nor extend it;
 * - API keys are not sign-ins: key sign-in (the web UI takes a key) and every API call still
 *   work, and an admin can make a key for her (docs/operators-guide.md, "Security", Sign-in).
 *
 * Counts live in this node's memory, in separate tables so that no kind can push another out:
 * accounts' failures are forgotten only when they age out (an account is made by an admin, so
 * their number is not the guesser's to choose), while failures of unknown names and of clients,
 * which a guesser can make up by the million, are bounded and forget their least recent first.
 */
import { LRUCache } from 'lru-cache';
import type { Clock } from '../clock.js';
import { Errors } from '../errors.js';

export interface SignInThrottleSettings {
  /** Failures of one account (or name) before the delay starts; 0 = no limit by name. */
  failuresPerAccount: number;
  /** Failures from one client before the delay starts; 0 = no limit by client. */
  failuresPerAddress: number;
  /** The first delay; each further failure doubles it, up to `maxDelaySeconds`. */
  delaySeconds: number;
  maxDelaySeconds: number;
}

/** Who a sign-in names: an existing account (by id), or a name no account has. */
export type SignInSubject = { accountId: string } | { unknownName: string };

interface Failures {
  count: number;
  /** Milliseconds since the epoch before which the next attempt is refused. */
  blockedUntil: number;
}

/** Unknown names, clients and known clients remembered at once: enough for an attack's spread, bounded for memory. */
const MAX_ENTRIES = 100_000;
/** How long a client an account signed in from stays exempt from that account's block. */
const KNOWN_CLIENT_MS = 30 * 24 * 3600 * 1000;

/**
 * Counts that nothing pushes out: each is forgotten once it is `ttlMs` old since its last
 * failure (looked at when read, and swept whenever the table doubled since the last sweep).
 */
class AgingCounts {
  private readonly entries = new Map<string, Failures & { touched: number }>();
  private sweptAt = 1024;

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number,
  ) {}

  get(key: string): Failures | undefined {
    const e = this.entries.get(key);
    if (e && this.now() - e.touched > this.ttlMs) {
      this.entries.delete(key);
      return undefined;
    }
    return e;
  }

  set(key: string, value: Failures): void {
    this.entries.set(key, { ...value, touched: this.now() });
    if (this.entries.size >= this.sweptAt * 2) this.sweep();
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  private sweep(): void {
    const now = this.now();
    for (const [key, e] of this.entries) if (now - e.touched > this.ttlMs) this.entries.delete(key);
    this.sweptAt = Math.max(1024, this.entries.size);
  }
}

/** The tables' common part. */
interface Counts {
  get(key: string): Failures | undefined;
  set(key: string, value: Failures): void;
}

export class SignInThrottle {
  /** Failures of existing accounts, by id. */
  private readonly accounts: AgingCounts;
  /** Failures of names no account has, by name (lower case). */
  private readonly unknownNames: LRUCache<string, Failures>;
  /** Failures per client, and per account and known client (`account|client`). */
  private readonly clients: LRUCache<string, Failures>;
  /** `account|client` for each client an account signed in from lately. */
  private readonly knownClients: LRUCache<string, true>;

  constructor(
    private readonly settings: SignInThrottleSettings,
    private readonly clock: Clock,
  ) {
    // A count is forgotten once nobody failed for a whole maximum delay.
    const ttl = Math.max(1, settings.maxDelaySeconds) * 2000;
    this.accounts = new AgingCounts(ttl, () => this.clock().getTime());
    this.unknownNames = new LRUCache({ max: MAX_ENTRIES, ttl, ttlResolution: 1000 });
    this.clients = new LRUCache({ max: MAX_ENTRIES, ttl, ttlResolution: 1000 });
    this.knownClients = new LRUCache({ max: MAX_ENTRIES, ttl: KNOWN_CLIENT_MS, ttlResolution: 1000 });
  }

  /** Throws 429 (with Retry-After) if this account (or name) or client is waiting out a delay. */
  check(subject: SignInSubject, client: string | undefined): void {
    const now = this.clock().getTime();
    const until = Math.max(this.subjectBlockedUntil(subject, client), client ? blockedUntil(this.clients, `c:${client}`) : 0);
    if (until > now) {
      const seconds = Math.ceil((until - now) / 1000);
      throw Errors.signInThrottled({ seconds }, { retryAfterSeconds: seconds });
    }
  }

  failed(subject: SignInSubject, client: string | undefined): void {
    const allowed = this.settings.failuresPerAccount;
    const known = this.knownPair(subject, client);
    if (known !== undefined) this.count(this.clients, known, allowed);
    else if ('accountId' in subject) this.count(this.accounts, subject.accountId, allowed);
    else this.count(this.unknownNames, subject.unknownName.toLowerCase(), allowed);
    if (client) this.count(this.clients, `c:${client}`, this.settings.failuresPerAddress);
  }

  /**
   * The owner is back: this client is known for the account from now on, and the count that held
   * it starts again. A known client's success leaves the account's own count alone: it may have
   * passed a block that others caused, which must not hand them fresh guesses.
   */
  succeeded(accountId: string, client: string | undefined): void {
    const known = this.knownPair({ accountId }, client);
    if (known !== undefined) this.clients.delete(known);
    else this.accounts.delete(accountId);
    if (client) this.knownClients.set(`${accountId}|${client}`, true);
  }

  private subjectBlockedUntil(subject: SignInSubject, client: string | undefined): number {
    const known = this.knownPair(subject, client);
    if (known !== undefined) return blockedUntil(this.clients, known);
    if ('accountId' in subject) return blockedUntil(this.accounts, subject.accountId);
    return blockedUntil(this.unknownNames, subject.unknownName.toLowerCase());
  }

  /** The count key of an account and a client it signed in from lately; undefined otherwise. */
  private knownPair(subject: SignInSubject, client: string | undefined): string | undefined {
    if (!client || !('accountId' in subject)) return undefined;
    const pair = `${subject.accountId}|${client}`;
    return this.knownClients.has(pair) ? `k:${pair}` : undefined;
  }

  private count(table: Counts, key: string, allowed: number): void {
    if (allowed <= 0) return;
    const entry = table.get(key) ?? { count: 0, blockedUntil: 0 };
    entry.count += 1;
    const over = entry.count - allowed;
    if (over >= 0) {
      const delay = Math.min(this.settings.delaySeconds * 2 ** Math.min(over, 30), this.settings.maxDelaySeconds);
      entry.blockedUntil = this.clock().getTime() + delay * 1000;
    }
    table.set(key, entry);
  }
}

function blockedUntil(table: Counts, key: string): number {
  return table.get(key)?.blockedUntil ?? 0;
}
