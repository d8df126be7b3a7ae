/**
 * Who is calling, as established by the HTTP edge from an API key or a session token.
 * Every domain operation takes a Principal and decides from it; nothing trusts the path alone.
 */
import { forbidden } from '../errors.js';
import { type Account, CAPABILITIES, type Capability } from './model.js';

/**
 * How the caller proved who it is. `call_key` is the key one running algorithm call holds
 * (pipelines, hosted data): it acts for the caller but only within CALL_KEY_CAPABILITIES, and
 * everything that administers an account refuses it (docs/api-guide.md, "Credentials and capabilities"). `event_flow` is
 * no credential anyone presents: an Event Flow's delivery calls its algorithm for the
 * algorithm's owner (flowPrincipal), holding only what a call key holds.
 */
export type CredentialKind = 'admin_key' | 'standard_key' | 'session' | 'call_key' | 'event_flow';

/** What a per-call key may ever hold, whatever its caller held: calls and hosted data. */
export const CALL_KEY_CAPABILITIES: readonly Capability[] = ['call_algorithms', 'read_data', 'write_data'];
/** What an Event Flow's calls hold: what the key of a call would (shared, never changed). */
const FLOW_CAPABILITIES: ReadonlySet<Capability> = new Set(CALL_KEY_CAPABILITIES);

/**
 * An Event Flow acting for `owner`, the owner of the algorithm it delivers to: its calls count
 * against the owner's limits, and a pipeline's calls inside them act for the owner too.
 */
export function flowPrincipal(owner: Account): Principal {
  return { account: owner, via: 'event_flow', capabilities: FLOW_CAPABILITIES, keyId: null };
}

export interface Principal {
  account: Account;
  via: CredentialKind;
  capabilities: ReadonlySet<Capability>;
  keyId: string | null;
  /** Set for the key of one call of an algorithm (pipelines and hosted data inside it). */
  call?: CallContext;
}

/** What a per-call key knows beyond the caller it acts for. */
export interface CallContext {
  /** The algorithm running: its own data://.algo space, and its owner's "my algorithms" ACLs. */
  algorithmId: string;
  algorithmOwnerId: string;
  /** The request tree (a call and the calls it makes): data://.session. */
  session: string;
}

/** Cluster administrators: an admin key, or a signed-in admin account. */
export function isAdmin(p: Principal): boolean {
  return p.via === 'admin_key' || (p.via === 'session' && p.account.isAdmin);
}

export function requireAdmin(p: Principal, action: string): void {
  if (!isAdmin(p)) throw forbidden(`${action} needs an admin API key`);
}

export function requireCapability(p: Principal, capability: Capability): void {
  if (isAdmin(p)) return;
  if (!p.capabilities.has(capability)) {
    if (p.via === 'call_key') throw forbidden(`the key of an algorithm call may not do this: it lacks the ${capability} capability`);
    throw forbidden(`this API key lacks the ${capability} capability`);
  }
}

/**
 * Refuses the key of a running algorithm call: it may call algorithms and use hosted data,
 * nothing else. An Event Flow acting for the owner holds no more than such a key, so it is
 * refused the same way.
 */
export function refuseCallKey(p: Principal, action: string): void {
  if (p.via === 'call_key') {
    throw forbidden(`${action} is not allowed with the key of an algorithm call; it may only call algorithms and use hosted data`);
  }
  if (p.via === 'event_flow') throw forbidden(`${action} is not allowed for an Event Flow; it may only call its algorithm`);
}

/**
 * Account administration (API keys, profile and password, organizations and their members)
 * needs a full credential: a signed-in session, an admin key, or a standard key holding every
 * capability. A restricted key cannot mint a broader key, a password or a session.
 */
export function requireAccountCredential(p: Principal, action: string): void {
  refuseCallKey(p, action);
  if (isAdmin(p) || p.via === 'session') return;
  const missing = CAPABILITIES.filter((c) => !p.capabilities.has(c));
  if (missing.length) {
    throw forbidden(`${action} needs a key with every capability or a signed-in session; this API key lacks ${missing.join(', ')}`);
  }
}

/**
 * How a caller proved who it is, as `GET /v1/auth/whoami` and the audit log name it. An
 * Event Flow is never an HTTP request's caller, so whoami never names it.
 */
export type CredentialName = 'session' | 'key' | 'call_key' | 'admin_key' | 'event_flow';

export function credentialName(p: Principal): CredentialName {
  return p.via === 'standard_key' ? 'key' : p.via;
}

/** Who the caller is and what its credential may do: what a page needs to decide what to show. */
export interface Identity {
  username: string;
  admin: boolean;
  credential: CredentialName;
  /** In the order of CAPABILITIES. */
  capabilities: Capability[];
  /** The organizations the account belongs to; absent for a call key, which may not read organizations. */
  organizations?: { name: string; role: 'owner' | 'member' }[];
  /**
   * The account's own profile, so that a page reads it without the admin-only user lookup;
   * absent for a call key, which runs tenant code that has no business with the owner's e-mail.
   */
  profile?: { email: string | null; fullname: string | null; companyName: string | null; companyRole: string | null };
}

export function identityOf(p: Principal): Identity {
  return {
    username: p.account.name,
    admin: isAdmin(p),
    credential: credentialName(p),
    capabilities: CAPABILITIES.filter((c) => p.capabilities.has(c)),
  };
}
