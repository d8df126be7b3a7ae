/**
 * The signed-in session: a session token (from a password) or an API key, kept in this tab's
 * sessionStorage, so it survives a reload, is readable only by this origin's own scripts (the
 * server's Content-Security-Policy allows no other script), is never sent as a cookie, and is
 * gone when the tab closes. It ends on sign-out, at the token's expiry, or on the first 401
 * from the API (a revoked key, a deleted account, a server whose signing secret changed).
 */
import { AlgohostClient, type Identity, type Session } from '@algohost/client';

const STORAGE_KEY = 'algohost.session';

export interface StoredSession {
  kind: 'token' | 'key';
  secret: string;
  /** ISO time the token expires (tokens only). */
  expiresAt?: string;
}

export interface SignedIn {
  stored: StoredSession;
  client: AlgohostClient;
  me: Identity;
}

type Listener = () => void;

let current: SignedIn | null = null;
let endMessage: string | null = null;
let expiryTimer: ReturnType<typeof setTimeout> | undefined;
const listeners = new Set<Listener>();

export function currentSession(): SignedIn | null {
  return current;
}

/** Why the last session ended without the user asking (shown on the sign-in page once). */
export function takeEndMessage(): string | null {
  const m = endMessage;
  endMessage = null;
  return m;
}

export function onSessionChange(l: Listener): () => void {
  listeners.add(l);
  return () => listeners.delete(l);
}

function notify(): void {
  for (const l of listeners) l();
}

/** A client for anonymous calls (sign-in) on this origin. */
export function anonymousClient(): AlgohostClient {
  return new AlgohostClient({ server: location.origin });
}

function clientFor(stored: StoredSession, baseFetch: typeof fetch = (input, init) => fetch(input, init)): AlgohostClient {
  // Every answer passes here: a 401 means the credential no longer works, whatever the page.
  const guarded: typeof fetch = async (input, init) => {
    const res = await baseFetch(input, init);
    if (res.status === 401 && current?.stored === stored) {
      endSession(
        stored.kind === 'token'
          ? 'Your session has ended (it expired or the server no longer accepts it). Sign in again.'
          : 'The server refused the API key (it may have been revoked). Sign in again.',
      );
    }
    return res;
  };
  return new AlgohostClient({
    server: location.origin,
    ...(stored.kind === 'key' ? { apiKey: stored.secret } : { bearerToken: stored.secret }),
    fetch: guarded,
  });
}

/**
 * A client with the session's credential over another fetch (uploads use one built on
 * XMLHttpRequest, the one browser API that reports upload progress).
 */
export function clientWithFetch(session: SignedIn, baseFetch: typeof fetch): AlgohostClient {
  return clientFor(session.stored, baseFetch);
}

/** The `exp` of a JWT, in ms, or undefined when it cannot be read. */
function jwtExpiry(token: string): number | undefined {
  try {
    const payload = token.split('.')[1];
    if (!payload) return undefined;
    const json = JSON.parse(atob(payload.replace(/-/g, '+').replace(/_/g, '/'))) as { exp?: unknown };
    return typeof json.exp === 'number' ? json.exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}

function expiryOf(stored: StoredSession): number | undefined {
  if (stored.kind !== 'token') return undefined;
  const fromServer = stored.expiresAt ? Date.parse(stored.expiresAt) : NaN;
  return Number.isFinite(fromServer) ? fromServer : jwtExpiry(stored.secret);
}

async function start(stored: StoredSession): Promise<SignedIn> {
  const expires = expiryOf(stored);
  if (expires !== undefined && expires <= Date.now()) throw new Error('Your session has expired. Sign in again.');
  const client = clientFor(stored);
  const me = await client.whoami();
  current = { stored, client, me };
  sessionStorage.setItem(STORAGE_KEY, JSON.stringify(stored));
  clearTimeout(expiryTimer);
  // setTimeout holds at most ~24.8 days; a longer session is checked again on the next load.
  if (expires !== undefined)
    expiryTimer = setTimeout(() => endSession('Your session has expired. Sign in again.'), Math.min(expires - Date.now(), 2 ** 31 - 1));
  endMessage = null;
  notify();
  return current;
}

export async function signInWithPassword(username: string, password: string): Promise<SignedIn> {
  const session: Session = await anonymousClient().keys.signIn(username, password);
  return start({ kind: 'token', secret: session.token, expiresAt: session.expires_at });
}

export function signInWithKey(key: string): Promise<SignedIn> {
  return start({ kind: 'key', secret: key.trim() });
}

/** Picks up the session this tab had before a reload; null when there is none (or it ended). */
export async function resume(): Promise<SignedIn | null> {
  const raw = sessionStorage.getItem(STORAGE_KEY);
  if (!raw) return null;
  let stored: StoredSession;
  try {
    stored = JSON.parse(raw) as StoredSession;
    if ((stored.kind !== 'token' && stored.kind !== 'key') || typeof stored.secret !== 'string') throw new Error('bad');
  } catch {
    sessionStorage.removeItem(STORAGE_KEY);
    return null;
  }
  try {
    return await start(stored);
  } catch (err) {
    endSession(err instanceof Error && err.message ? err.message : 'Your session has ended. Sign in again.');
    return null;
  }
}

/** Asks the server again who we are (after joining or creating an organization). */
export async function refreshMe(): Promise<void> {
  const s = current;
  if (!s) return;
  const me = await s.client.whoami();
  if (current === s) {
    current = { ...s, me };
    notify();
  }
}

/** The names of the organizations the account belongs to. */
export function myOrganizations(s: SignedIn): string[] {
  return (s.me.organizations ?? []).map((o) => o.name);
}

/** Forgets the credential; `message` says why when the user did not ask (expiry, 401). */
export function endSession(message?: string): void {
  clearTimeout(expiryTimer);
  sessionStorage.removeItem(STORAGE_KEY);
  const had = current !== null;
  current = null;
  endMessage = message ?? null;
  if (had || message) notify();
}
