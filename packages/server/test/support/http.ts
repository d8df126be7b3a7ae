/** A small HTTP client for tests: JSON in, parsed JSON (or text) out, status and headers kept. */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';

export interface Response<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  /** API key sent as `Simple <key>`; `auth` overrides the whole header. */
  key?: string;
  auth?: string;
  body?: unknown;
  /** Raw body sent as is (for malformed JSON and other content types). */
  raw?: string | Buffer;
  headers?: Record<string, string>;
}

export async function request<T = any>(base: string, method: string, path: string, opts: RequestOptions = {}): Promise<Response<T>> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.auth !== undefined) headers.authorization = opts.auth;
  else if (opts.key) headers.authorization = `Simple ${opts.key}`;
  let body: string | Buffer | undefined;
  if (opts.raw !== undefined) body = opts.raw;
  else if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(base + path, {
    method,
    headers,
    body: typeof body === 'string' || body === undefined ? body : new Uint8Array(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  if ((res.headers.get('content-type') ?? '').includes('json') && text) parsed = JSON.parse(text);
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}

/** Bound to one server: `api.get('/v1/…', {key})`. */
export function client(base: string) {
  const call = (method: string) => (path: string, opts?: RequestOptions) => request(base, method, path, opts);
  return { get: call('GET'), post: call('POST'), put: call('PUT'), patch: call('PATCH'), delete: call('DELETE'), head: call('HEAD') };
}

export type Client = ReturnType<typeof client>;

/** An answer's bytes as they came over the wire: not decoded, whatever its Content-Encoding. */
export interface WireResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** One request over node:http, which (unlike fetch) sends no Accept-Encoding of its own and decodes nothing. */
export function wireRequest(base: string, method: string, path: string, headers: Record<string, string> = {}): Promise<WireResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(new URL(path, base), { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}
