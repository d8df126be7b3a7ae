/**
 * API keys, password hashes and session tokens. Keys are 150 random bits, so a plain SHA-256
 * is a sufficient one-way hash for lookup; passwords are low-entropy and get scrypt.
 */
import crypto from 'node:crypto';
import { promisify } from 'node:util';

const scrypt = promisify(crypto.scrypt) as (pw: string, salt: Buffer, len: number) => Promise<Buffer>;

// compat §1: the CLI accepts only 28-character keys starting with "sim"; '/' may occur.
const KEY_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

export function generateApiKey(): string {
  const bytes = crypto.randomBytes(25);
  let out = 'sim';
  for (const b of bytes) out += KEY_ALPHABET[b & 63];
  return out;
}

// Every authenticated request hashes its key: the one-shot crypto.hash skips the Hash object.
export const hashApiKey = (key: string) => crypto.hash('sha256', key, 'hex');

export async function hashPassword(password: string): Promise<string> {
  const salt = crypto.randomBytes(16);
  const hash = await scrypt(password, salt, 32);
  return `scrypt$${salt.toString('base64')}$${hash.toString('base64')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  const actual = await scrypt(password, Buffer.from(salt, 'base64'), expected.length);
  return crypto.timingSafeEqual(actual, expected);
}

/** HS256 JSON Web Tokens for web UI sessions. */
export function signJwt(claims: Record<string, unknown>, secret: string): string {
  const header = b64json({ alg: 'HS256', typ: 'JWT' });
  const body = b64json(claims);
  const sig = crypto.createHmac('sha256', secret).update(`${header}.${body}`).digest('base64url');
  return `${header}.${body}.${sig}`;
}

/** Returns the claims of a valid, unexpired token, else undefined. */
export function verifyJwt(token: string, secret: string, nowSeconds: number): Record<string, unknown> | undefined {
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  const [header, body, sig] = parts as [string, string, string];
  const expected = crypto.createHmac('sha256', secret).update(`${header}.${body}`).digest();
  const given = Buffer.from(sig, 'base64url');
  if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) return undefined;
  try {
    const h = JSON.parse(Buffer.from(header, 'base64url').toString()) as { alg?: string };
    if (h.alg !== 'HS256') return undefined;
    const claims = JSON.parse(Buffer.from(body, 'base64url').toString()) as Record<string, unknown>;
    if (typeof claims.exp !== 'number' || claims.exp <= nowSeconds) return undefined;
    return claims;
  } catch {
    return undefined;
  }
}

const b64json = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
