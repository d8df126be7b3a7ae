/**
 * Who is calling, as established by the HTTP edge from an API key or a session token.
 * Every domain operation takes a Principal and decides from it; nothing trusts the path alone.
 */
import { forbidden } from '../errors.js';
import type { Account, Capability } from '../accounts/model.js';

export type CredentialKind = 'admin_key' | 'standard_key' | 'session';

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
    throw forbidden(`this API key lacks the ${capability} capability`);
  }
}
