import crypto from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { type Clock, isoNow } from '../clock.js';
import { DomainError, Errors, forbidden, invalid, unauthenticated } from '../errors.js';
import { CALL_KEY_CAPABILITIES, isAdmin, type Principal, requireAccountCredential } from './principal.js';
import { type Account, type ApiKey, CAPABILITIES, type Capability, type KeyKind } from './model.js';
import type { AccountStore, ClusterSettingsStore, KeyStore } from './ports.js';
import { generateApiKey, hashApiKey, signJwt, verifyJwt, verifyPassword } from './secrets.js';
import type { SignInThrottle } from './sign-in-throttle.js';
import type { Logger } from '../logger.js';
import { RefreshingCache } from '../../lib/refreshing-cache.js';
import { lruGet } from '../../lib/lru-get.js';
import { type ChangeNotifier, ignoreChanges } from '../changes.js';

export interface KeyInput {
  kind?: unknown;
  capabilities?: unknown;
  description?: unknown;
}

export interface CreatedKey {
  key: ApiKey;
  /** The secret itself: returned once, never stored. */
  secret: string;
}

export interface Session {
  token: string;
  expiresAt: Date;
}

/**
 * How long a resolved key is served without a lookup, unless the composition root says
 * otherwise (`cacheTtlMs`): a revoke on another node of a cluster works within it.
 */
const CACHE_TTL_MS = 5_000;
const CACHE_MAX = 10_000;
/** How stale the caches' idea of "now" may be (lru-cache's default, 1 ms, costs a timer per ms under load). */
const TTL_RESOLUTION_MS = 50;
/**
 * Call keys live while their call runs (revoked when it ends, or at their own expiry). The
 * bound only keeps a leak finite: it is far above the calls one node can hold at once, since
 * evicting a live call key would fail its call's own calls.
 */
const CALL_KEYS_MAX = 100_000;
const JWT_SECRET_SETTING = 'session_jwt_secret';

/** What KeyService is made from (named, so the composition root reads as a list of parts). */
export interface KeyServiceDeps {
  accounts: AccountStore;
  keys: KeyStore;
  settings: ClusterSettingsStore;
  clock: Clock;
  sessionTtlSeconds: number;
  /** Told when a request tree ends, its outermost call key revoked (`call_session_ended`). */
  changes?: ChangeNotifier;
  /** Slows repeated failed sign-ins; none: sign-ins are never delayed. */
  signInThrottle?: SignInThrottle;
  /** Where a failed background refresh of a cached key is reported. */
  log: Logger;
  /**
   * How long a resolved key is served (default CACHE_TTL_MS). A node alone sees every revoke
   * as it happens and forgets the key at once, so it may keep keys longer (main/wiring/base.ts).
   */
  cacheTtlMs?: number;
}

/**
 * Issues, lists and revokes API keys, signs users in, and turns credentials into Principals.
 * Authentication is on every request's path, so resolved keys are cached for a few seconds;
 * a revoke on this node drops the cache entry at once.
 */
export class KeyService {
  /**
   * Resolved keys by hash, never older than the cache's TTL; one in use is looked up again in the
   * background before then, and keys missed together are looked up once (lib/refreshing-cache.ts).
   */
  private readonly cache: RefreshingCache<string, Principal, undefined>;
  /** Call keys by hash, each with its call's time-to-live. */
  private readonly callKeys = new LRUCache<string, Principal>({ max: CALL_KEYS_MAX, ttlResolution: TTL_RESOLUTION_MS });
  private readonly changes: ChangeNotifier;
  private jwtSecret: string | undefined;

  private readonly accounts: AccountStore;
  private readonly keys: KeyStore;
  private readonly settings: ClusterSettingsStore;
  private readonly clock: Clock;
  private readonly sessionTtlSeconds: number;
  private readonly signInThrottle: SignInThrottle | undefined;

  constructor(deps: KeyServiceDeps) {
    this.accounts = deps.accounts;
    this.keys = deps.keys;
    this.settings = deps.settings;
    this.clock = deps.clock;
    this.sessionTtlSeconds = deps.sessionTtlSeconds;
    this.changes = deps.changes ?? ignoreChanges;
    this.signInThrottle = deps.signInThrottle;
    const log = deps.log;
    this.cache = new RefreshingCache({
      max: CACHE_MAX,
      // A key still in use is looked up again in the background before its entry expires.
      ttlMs: deps.cacheTtlMs ?? CACHE_TTL_MS,
      load: (hash) => this.lookUpKey(hash),
      // A key deleted meanwhile is simply gone (the next call with it gets the 401).
      onRefreshError: (err) => {
        if (!(err instanceof DomainError && err.kind === 'unauthenticated')) log.warn({ err }, 'refreshing a cached API key failed');
      },
    });
  }

  async create(p: Principal, accountName: string, input: KeyInput): Promise<CreatedKey> {
    requireAccountCredential(p, 'creating API keys');
    const account = await this.requireOwnAccount(p, accountName);
    const kind = parseKind(input.kind);
    if (kind === 'admin') {
      if (!isAdmin(p)) throw forbidden('only an admin may create admin keys');
      if (account.kind !== 'user') throw invalid('admin keys belong to users, not organizations');
    }
    const capabilities = parseCapabilities(input.capabilities);
    if (!isAdmin(p)) {
      const missing = capabilities.filter((c) => !p.capabilities.has(c));
      if (missing.length) throw forbidden(`a key cannot grant capabilities its creator lacks: ${missing.join(', ')}`);
    }
    const description = input.description;
    if (description !== undefined && description !== null && (typeof description !== 'string' || description.length > 200)) {
      throw invalid('description must be a string of at most 200 characters');
    }
    return this.issue(account, kind, capabilities, (description as string | undefined) ?? null);
  }

  /** Stores a key for an account; `secret` is given when the operator chose it (ALGOHOST_ADMIN_KEY). */
  async issue(
    account: Account,
    kind: KeyKind,
    capabilities: Capability[],
    description: string | null,
    secret = generateApiKey(),
  ): Promise<CreatedKey> {
    const key: ApiKey = {
      id: crypto.randomUUID(),
      accountId: account.id,
      kind,
      capabilities,
      prefix: secret.slice(0, 7),
      description,
      createdAt: isoNow(this.clock),
    };
    await this.keys.insert({ ...key, keyHash: hashApiKey(secret) });
    return { key, secret };
  }

  async hasKey(secret: string): Promise<boolean> {
    return (await this.keys.findByHash(hashApiKey(secret))) !== undefined;
  }

  async list(p: Principal, accountName: string): Promise<ApiKey[]> {
    requireAccountCredential(p, 'listing API keys');
    const account = await this.requireOwnAccount(p, accountName);
    return this.keys.listForAccount(account.id);
  }

  async revoke(p: Principal, accountName: string, keyId: string): Promise<void> {
    requireAccountCredential(p, 'revoking API keys');
    const account = await this.requireOwnAccount(p, accountName);
    if (!(await this.keys.delete(account.id, keyId))) {
      throw Errors.keyNotFound({ keyId, account: account.name });
    }
    this.forgetCached((principal) => principal.keyId === keyId);
  }

  /** Drops cached keys of a deleted account so they stop working on this node at once. */
  forgetAccount(accountId: string): void {
    this.forgetCached((principal) => principal.account.id === accountId);
  }

  private forgetCached(match: (principal: Principal) => boolean): void {
    this.cache.forget(match);
  }

  /**
   * A key for one call of a pipeline_enabled algorithm: it acts as the caller for calls and
   * hosted data only (never admin, never account or algorithm management, never Git: see
   * CredentialKind) and lives only in this node's memory until `revoke` or its expiry. It also
   * names the algorithm (its own data space) and the request tree: a call made with a call key
   * stays in that key's session, which ends when the outermost call's key is revoked.
   */
  issueCallKey(caller: Principal, ttlMs: number, algorithm?: { id: string; ownerId: string }): { secret: string; revoke: () => void } {
    const secret = generateApiKey();
    const hash = hashApiKey(secret);
    // An admin caller's key holds every capability; the call key still gets only these.
    const capabilities = new Set(CALL_KEY_CAPABILITIES.filter((c) => caller.capabilities.has(c) || isAdmin(caller)));
    const session = caller.call?.session ?? crypto.randomUUID();
    const call = algorithm ? { algorithmId: algorithm.id, algorithmOwnerId: algorithm.ownerId, session } : undefined;
    const principal: Principal = { account: caller.account, via: 'call_key', capabilities, keyId: null, ...(call ? { call } : {}) };
    this.callKeys.set(hash, principal, { ttl: Math.max(1, Math.ceil(ttlMs)) });
    const outermost = !caller.call;
    return {
      secret,
      revoke: () => {
        this.callKeys.delete(hash);
        if (outermost) this.changes.publish({ kind: 'call_session_ended', session });
      },
    };
  }

  /**
   * Cluster mode, on an API node: the principal of a live call key, sent with the call to the
   * worker that runs it (its runner uses the key against that worker's API).
   */
  callKeyPrincipal(secret: string): Principal | undefined {
    return this.callKeys.get(hashApiKey(secret));
  }

  /**
   * Cluster mode, on a worker: makes a call key minted by an API node valid here for the length
   * of the call it came with (the message came through the cluster's NATS, which only nodes
   * reach). The returned function forgets it; the session stays the API node's to end.
   */
  adoptCallKey(secret: string, principal: Principal, ttlMs: number): () => void {
    const hash = hashApiKey(secret);
    this.callKeys.set(hash, { ...principal, via: 'call_key', keyId: null }, { ttl: Math.max(1, Math.ceil(ttlMs)) });
    return () => this.callKeys.delete(hash);
  }

  /** Resolves an API key; throws 401 for an unknown one. */
  async authenticateKey(secret: string): Promise<Principal> {
    const hash = hashApiKey(secret);
    return this.cachedByHash(hash) ?? this.cache.fetch(hash, undefined);
  }

  /**
   * The principal of a call key or of a key resolved within the cache's lifetime, without
   * waiting (nearly every request): undefined means ask authenticateKey.
   */
  cachedKey(secret: string): Principal | undefined {
    return this.cachedByHash(hashApiKey(secret));
  }

  /** A live call key, else a resolved key younger than the cache's TTL (expired entries are not returned). */
  private cachedByHash(hash: string): Principal | undefined {
    return lruGet(this.callKeys, hash) ?? this.cache.get(hash);
  }

  private async lookUpKey(hash: string): Promise<Principal> {
    const key = await this.keys.findByHash(hash);
    const account = key && (await this.accounts.findById(key.accountId));
    if (!key || !account) throw unauthenticated('invalid API key');
    const principal: Principal = {
      account,
      via: key.kind === 'admin' ? 'admin_key' : 'standard_key',
      capabilities: new Set(key.capabilities),
      keyId: key.id,
    };
    return principal;
  }

  /**
   * `client`: what the attempt is charged to, for slowing repeated failures from one place (the
   * address, or the owner of the sandbox whose API socket it came through).
   */
  async signIn(username: unknown, password: unknown, client?: string): Promise<Session> {
    if (typeof username !== 'string' || typeof password !== 'string') throw invalid('username and password are required strings');
    const account = await this.accounts.findByName(username);
    const subject = account ? { accountId: account.id } : { unknownName: username };
    // Before the password is checked: while blocked, a right guess looks like a wrong one.
    this.signInThrottle?.check(subject, client);
    const ok = account?.kind === 'user' && account.passwordHash !== null && (await verifyPassword(password, account.passwordHash));
    if (!ok || !account) {
      this.signInThrottle?.failed(subject, client);
      throw unauthenticated('wrong username or password');
    }
    this.signInThrottle?.succeeded(account.id, client);
    const now = Math.floor(this.clock().getTime() / 1000);
    const exp = now + this.sessionTtlSeconds;
    const token = await signJwt({ sub: account.id, name: account.name, iat: now, exp }, await this.secret());
    return { token, expiresAt: new Date(exp * 1000) };
  }

  async authenticateSession(token: string): Promise<Principal> {
    const claims = await verifyJwt(token, await this.secret(), Math.floor(this.clock().getTime() / 1000));
    const account = typeof claims?.sub === 'string' ? await this.accounts.findById(claims.sub) : undefined;
    if (!account) throw unauthenticated('invalid or expired session token');
    return { account, via: 'session', capabilities: new Set(CAPABILITIES), keyId: null };
  }

  /** The signing secret is per cluster (stored in the database) so every API node accepts it. */
  private async secret(): Promise<string> {
    this.jwtSecret ??= await this.settings.setIfAbsent(JWT_SECRET_SETTING, crypto.randomBytes(32).toString('base64url'));
    return this.jwtSecret;
  }

  /** Admins manage anyone's keys; users their own; organization owners the organization's. */
  private async requireOwnAccount(p: Principal, name: string): Promise<Account> {
    const account = await this.accounts.findByName(name);
    if (isAdmin(p)) {
      if (!account) throw Errors.accountNotFound({ name });
      return account;
    }
    if (account && account.id === p.account.id) return account;
    if (account?.kind === 'organization' && (await this.accounts.membershipRole(account.id, p.account.id)) === 'owner') {
      return account;
    }
    throw forbidden(`you may only manage your own keys, not those of "${name}"`);
  }
}

function parseKind(value: unknown): KeyKind {
  if (value === undefined) return 'standard';
  if (value === 'standard' || value === 'admin') return value;
  throw invalid('kind must be "standard" or "admin"');
}

function parseCapabilities(value: unknown): Capability[] {
  if (value === undefined) return [...CAPABILITIES];
  if (!Array.isArray(value)) throw invalid('capabilities must be an array');
  const out = new Set<Capability>();
  for (const c of value) {
    if (!(CAPABILITIES as readonly unknown[]).includes(c)) {
      throw invalid(`unknown capability "${String(c)}"; known: ${CAPABILITIES.join(', ')}`);
    }
    out.add(c as Capability);
  }
  return [...out];
}
