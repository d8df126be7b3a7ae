/**
 * API keys, password hashes and session tokens. Keys are 150 random bits, so a plain SHA-256
 * is a sufficient one-way hash for lookup; passwords are low-entropy and get scrypt.
 */
import crypto from 'node:crypto';
import { promisify } from 'node:util';
import { type JWTPayload, jwtVerify, SignJWT } from 'jose';

const scrypt = promisify(crypto.scrypt) as (pw: string, salt: Buffer, len: number) => Promise<Buffer>;

// docs/compatibility.md §1: the CLI accepts only 28-character keys starting with "sim"; '/' may occur.
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

/** HS256 JSON Web Tokens for web UI sessions (header `{"alg":"HS256","typ":"JWT"}`). */
export function signJwt(claims: JWTPayload, secret: string): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(hmacKey(secret));
}

/** Returns the claims of a valid HS256 token with an `exp` later than now, else undefined. */
export async function verifyJwt(token: string, secret: string, nowSeconds: number): Promise<JWTPayload | undefined> {
  try {
    const { payload } = await jwtVerify(token, hmacKey(secret), {
      algorithms: ['HS256'],
      requiredClaims: ['exp'],
      currentDate: new Date(nowSeconds * 1000),
    });
    return payload;
  } catch {
    return undefined;
  }
}

/** The HMAC key: the secret's UTF-8 bytes, as before tokens were made with jose. */
const hmacKey = (secret: string) => new TextEncoder().encode(secret);
