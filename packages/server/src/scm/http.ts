/**
 * HTTP to an SCM provider: JSON in and out, a deadline, a bounded answer, and the provider's
 * failures turned into domain errors (401 → the token is no longer accepted; anything else
 * unexpected → `upstream`, naming what the provider said).
 */
import crypto from 'node:crypto';
import { Errors } from '../domain/errors.js';

const TIMEOUT_MS = 30_000;
const MAX_BODY_BYTES = 4 * 1024 * 1024;

export interface ProviderRequest {
  method?: string;
  /** Sent as `Authorization: Bearer …` (or `authorization` verbatim). */
  token?: string;
  authorization?: string;
  json?: unknown;
  form?: Record<string, string>;
  headers?: Record<string, string>;
  /** Statuses answered as a value instead of an error (404 for "does it exist"). */
  accept?: number[];
}

export interface ProviderResponse<T> {
  status: number;
  body: T;
  headers: Headers;
}

export async function providerFetch<T = any>(provider: string, url: string, r: ProviderRequest = {}): Promise<ProviderResponse<T>> {
  const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'algohost', ...r.headers };
  if (r.authorization) headers.authorization = r.authorization;
  else if (r.token) headers.authorization = `Bearer ${r.token}`;
  let body: string | undefined;
  if (r.json !== undefined) {
    body = JSON.stringify(r.json);
    headers['content-type'] = 'application/json';
  } else if (r.form) {
    body = new URLSearchParams(r.form).toString();
    headers['content-type'] = 'application/x-www-form-urlencoded';
  }
  let res: Response;
  try {
    res = await fetch(url, {
      method: r.method ?? (body === undefined ? 'GET' : 'POST'),
      headers,
      body,
      redirect: 'error',
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (err) {
    throw Errors.scmProviderFailed(`${provider} could not be reached at ${new URL(url).origin}: ${(err as Error).message}`);
  }
  const text = await boundedText(res);
  let parsed: unknown = text;
  if (text && (res.headers.get('content-type') ?? '').includes('json')) {
    try {
      parsed = JSON.parse(text);
    } catch {
      throw Errors.scmProviderFailed(`${provider} answered ${res.status} with malformed JSON`);
    }
  }
  if (res.ok || r.accept?.includes(res.status)) return { status: res.status, body: parsed as T, headers: res.headers };
  if (res.status === 401 && (r.token || r.authorization)) throw Errors.scmTokenRejected({ provider });
  throw Errors.scmProviderFailed(
    `${provider} answered ${res.status} to ${r.method ?? (body === undefined ? 'GET' : 'POST')} ${new URL(url).pathname}: ${describe(parsed)}`,
  );
}

export const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** `sha256=<hex>` (or bare hex) against HMAC-SHA256 of the body, compared in constant time. */
export function hmacMatches(signature: string, body: Buffer, secret: string): boolean {
  const hex = signature.replace(/^sha256=/, '');
  if (!/^[0-9a-f]{64}$/i.test(hex)) return false;
  const expected = crypto.createHmac('sha256', secret).update(body).digest();
  return crypto.timingSafeEqual(expected, Buffer.from(hex, 'hex'));
}

/** A secret sent as is (GitLab's X-Gitlab-Token), compared in constant time. */
export function secretMatches(sent: string, secret: string): boolean {
  const a = crypto.createHash('sha256').update(sent).digest();
  const b = crypto.createHash('sha256').update(secret).digest();
  return crypto.timingSafeEqual(a, b);
}

export function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}

/** JSON of a webhook body, or undefined when it is not a JSON object. */
export function jsonObject(body: Buffer): Record<string, any> | undefined {
  try {
    const v: unknown = JSON.parse(body.toString('utf8'));
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, any>) : undefined;
  } catch {
    return undefined;
  }
}

export const enc = encodeURIComponent;

async function boundedText(res: Response): Promise<string> {
  const declared = Number(res.headers.get('content-length') ?? 0);
  if (declared > MAX_BODY_BYTES) {
    await res.body?.cancel();
    throw Errors.scmProviderFailed(`the provider's answer is larger than ${MAX_BODY_BYTES} bytes`);
  }
  const reader = res.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > MAX_BODY_BYTES) {
      await reader.cancel();
      throw Errors.scmProviderFailed(`the provider's answer is larger than ${MAX_BODY_BYTES} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function describe(body: unknown): string {
  if (typeof body === 'object' && body !== null) {
    const b = body as Record<string, unknown>;
    const m = b.message ?? b.error_description ?? b.error ?? (b.error as { message?: unknown } | undefined);
    if (typeof m === 'string') return m.slice(0, 300);
    if (typeof m === 'object' && m !== null && typeof (m as { message?: unknown }).message === 'string')
      return String((m as { message: string }).message).slice(0, 300);
    return JSON.stringify(body).slice(0, 300);
  }
  return String(body).slice(0, 300) || '(no body)';
}

/**
 * The provider's consent page: its address with the authorization-code query, plus the PKCE
 * challenge (S256) when the flow has one (RFC 7636; every provider here accepts the two fields).
 */
export function consentUrl(address: string, query: Record<string, string>, codeChallenge: string | undefined): string {
  const url = new URL(address);
  url.search = new URLSearchParams(query).toString();
  if (codeChallenge) {
    url.searchParams.set('code_challenge', codeChallenge);
    url.searchParams.set('code_challenge_method', 'S256');
  }
  return url.toString();
}
