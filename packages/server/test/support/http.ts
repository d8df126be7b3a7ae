/** A small HTTP client for tests: JSON in, parsed JSON (or text) out, status and headers kept. */
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
