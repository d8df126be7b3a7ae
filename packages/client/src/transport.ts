/**
 * One HTTP exchange with the server over fetch: base URL, the Authorization header, query
 * strings, JSON bodies, error bodies turned into AlgohostError, and paging by marker. Uses only
 * web-platform APIs (fetch, URL, TextDecoder, ReadableStream), so it runs in Node and browsers.
 */
import { AlgohostError, errorFromFetchFailure, errorFromResponse } from './errors.js';
import type { Page } from './types.js';

export interface ClientOptions {
  /** Base address of the API, e.g. `http://127.0.0.1:8080` (a path prefix is kept). */
  server: string;
  /** A standard or admin API key, sent as `Authorization: Simple <key>`. */
  apiKey?: string;
  /** A JWT from `POST /v1/auth/token`, sent as `Authorization: Bearer <token>` when there is no key. */
  bearerToken?: string;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
  /** Extra headers sent with every request. */
  headers?: Record<string, string>;
}

export type Query = Record<string, string | number | boolean | undefined | null>;

export interface SendOptions {
  query?: Query;
  /** A JSON body (sent with Content-Type application/json). */
  json?: unknown;
  /** A raw body with its content type. */
  body?: BodyInit;
  contentType?: string;
  headers?: Record<string, string>;
  /** false: send no Authorization header (template download, docs/compatibility.md §9.2 endpoint 5). */
  auth?: boolean;
  signal?: AbortSignal;
}

/** Called while a body downloads: bytes so far and the total when the server said it. */
export type ProgressListener = (loaded: number, total: number | undefined) => void;

export class Transport {
  readonly server: string;
  private readonly fetchImpl: typeof fetch;

  constructor(private readonly options: ClientOptions) {
    if (!options.server) throw new TypeError('AlgohostClient: `server` is required');
    this.server = options.server.replace(/\/+$/, '');
    this.fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  get authorization(): string | undefined {
    if (this.options.apiKey) return `Simple ${this.options.apiKey}`;
    if (this.options.bearerToken) return `Bearer ${this.options.bearerToken}`;
    return undefined;
  }

  url(path: string, query?: Query): string {
    let url = this.server + path;
    if (query) {
      const params = new URLSearchParams();
      for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null) params.set(k, String(v));
      const qs = params.toString();
      if (qs) url += `?${qs}`;
    }
    return url;
  }

  /** Sends a request and returns the answer when it is 2xx; throws AlgohostError otherwise. */
  async send(method: string, path: string, opts: SendOptions = {}): Promise<Response> {
    const url = this.url(path, opts.query);
    const headers: Record<string, string> = { accept: 'application/json', ...this.options.headers, ...opts.headers };
    const authorization = opts.auth === false ? undefined : this.authorization;
    if (authorization) headers.authorization = authorization;
    let body: BodyInit | undefined;
    if (opts.json !== undefined) {
      body = JSON.stringify(opts.json);
      headers['content-type'] = 'application/json';
    } else if (opts.body !== undefined) {
      body = opts.body;
      if (opts.contentType) headers['content-type'] = opts.contentType;
    }
    // A stream body needs `duplex: 'half'` (the request is sent while the body is produced;
    // RequestInit in the DOM types does not know the field yet) and `redirect: 'error'`: with
    // any other redirect mode fetch clones the request to be able to follow a redirect, and the
    // clone's copy of the stream keeps every byte sent (a 1 GB upload would take 1 GB of
    // memory). A stream cannot be sent twice anyway, so no redirect could be followed.
    const streamed = typeof ReadableStream !== 'undefined' && body instanceof ReadableStream;
    const init = { method, headers, body, signal: opts.signal, ...(streamed ? { duplex: 'half', redirect: 'error' } : {}) } as RequestInit;
    let res: Response;
    try {
      res = await this.fetchImpl(url, init);
    } catch (err) {
      throw errorFromFetchFailure(err, method, url);
    }
    if (!res.ok) throw await errorFromResponse(res, method, url);
    return res;
  }

  /** Sends a request and parses the JSON answer (undefined for 204). */
  async json<T>(method: string, path: string, opts: SendOptions = {}): Promise<T> {
    const res = await this.send(method, path, opts);
    if (res.status === 204) return undefined as T;
    const text = await res.text();
    if (!text) return undefined as T;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new AlgohostError(res.status, 'EBADJSON', `the server answered ${method} ${path} with a body that is not JSON`);
    }
    // docs/compatibility.md §1: a success body never has a top-level `error` key; clients treat one as a failure.
    const error = (parsed as { error?: { code?: number; message?: string } } | null)?.error;
    if (error && typeof error === 'object' && !Array.isArray(parsed)) {
      throw new AlgohostError(res.status, error.code ?? res.status, error.message ?? 'the server reported an error');
    }
    return parsed as T;
  }

  /** Reads a whole body as bytes, reporting progress as it arrives. */
  async bytes(res: Response, onProgress?: ProgressListener): Promise<Uint8Array> {
    const length = res.headers.get('content-length');
    const total = length !== null && /^\d+$/.test(length) ? Number(length) : undefined;
    if (!res.body) return new Uint8Array(0);
    const reader = res.body.getReader();
    const chunks: Uint8Array[] = [];
    let loaded = 0;
    onProgress?.(0, total);
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      chunks.push(value);
      loaded += value.byteLength;
      onProgress?.(loaded, total);
    }
    const out = new Uint8Array(loaded);
    let offset = 0;
    for (const c of chunks) {
      out.set(c, offset);
      offset += c.byteLength;
    }
    return out;
  }
}

/**
 * Every item of a paged listing (docs/compatibility.md §1), page after page, following `marker` until it is
 * null. `fetchPage` gets the marker of the page to fetch (undefined for the first).
 */
export async function* paginate<T>(fetchPage: (marker: string | undefined) => Promise<Page<T>>): AsyncGenerator<T> {
  let marker: string | undefined;
  const seen = new Set<string>();
  for (;;) {
    const page = await fetchPage(marker);
    yield* page.results;
    if (!page.marker) return;
    if (seen.has(page.marker)) throw new AlgohostError(0, 'ELOOP', `the server returned the marker "${page.marker}" twice`);
    seen.add(page.marker);
    marker = page.marker;
  }
}

/** Collects an async iterable into an array. */
export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** Encodes each segment of a path ("a/b c" → "a/b%20c"). */
export function encodePath(path: string): string {
  return path
    .split('/')
    .map((s) => encodeURIComponent(s))
    .join('/');
}

export const seg = encodeURIComponent;
