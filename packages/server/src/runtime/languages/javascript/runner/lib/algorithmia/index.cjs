/**
 * The in-algorithm API client for JavaScript algorithms: `require('algorithmia')` resolves here
 * (the harness puts /opt/algohost/runner/lib on NODE_PATH, after the algorithm's own
 * node_modules). `algorithmia.client().algo('owner/name/version').pipe(input)` calls another
 * algorithm and resolves to {result, metadata}; an error envelope rejects with an Error carrying
 * its message (and error_type). `client.file('data://.my/c/f')` and `client.dir('data://.my/c')`
 * reach hosted data (docs/compatibility.md §5), every method returning a promise. Address: the apiAddress
 * argument, else $ALGORITHMIA_API; when $ALGOHOST_API_SOCKET names a Unix socket every request
 * goes over it. Key: the apiKey argument, else $ALGORITHMIA_API_KEY read at each request: the
 * runner sets it only while a call runs (pipeline_enabled algorithms only), so a client made
 * when the module loads still uses the key of the call in progress.
 * No dependencies: only node: modules.
 */
'use strict';

const http = require('node:http');
const https = require('node:https');
const { Buffer } = require('node:buffer');
const { URL, URLSearchParams } = require('node:url');

const DEFAULT_TIMEOUT_SECONDS = 300;
const KEY_MISSING =
  'no API key: calling other algorithms and hosted data from an algorithm needs pipeline_enabled in the ' +
  "algorithm's settings (ALGORITHMIA_API_KEY is not set)";

/** A failure reported by the service or the algorithm called, with its error_type when known. */
class AlgorithmError extends Error {
  constructor(message, errorType) {
    super(message);
    this.name = 'AlgorithmError';
    if (errorType) this.error_type = errorType;
  }
}

/** Buffer/Uint8Array → octet-stream, string → text/plain, anything else → JSON (undefined → null). */
function encodeInput(value) {
  if (value instanceof Uint8Array) {
    return { body: Buffer.from(value.buffer, value.byteOffset, value.byteLength), type: 'application/octet-stream' };
  }
  if (typeof value === 'string') return { body: Buffer.from(value, 'utf8'), type: 'text/plain' };
  const json = value === undefined ? 'null' : JSON.stringify(value);
  return { body: Buffer.from(json === undefined ? 'null' : json, 'utf8'), type: 'application/json' };
}

/** The service's reason for a failed response: X-Error-Message, else the JSON error's message. */
function errorMessage(res) {
  const header = res.headers['x-error-message'];
  if (typeof header === 'string' && header) return header;
  try {
    const parsed = JSON.parse(res.body.toString('utf8'));
    const error = parsed && typeof parsed === 'object' ? parsed.error : undefined;
    if (error && typeof error === 'object' && error.message) return String(error.message);
    if (error) return String(error);
  } catch {
    // not JSON
  }
  const text = res.body.toString('utf8').slice(0, 500);
  return `HTTP ${res.status}${text ? `: ${text}` : ''}`;
}

class Algorithm {
  constructor(client, ref) {
    this.client = client;
    this.ref = String(ref)
      .replace(/^algo:\/\//, '')
      .replace(/^\/+/, '');
    this.options = {};
  }

  /** Query parameters of the call (timeout, stdout, output). */
  set(options) {
    Object.assign(this.options, options || {});
    return this;
  }

  /** Calls the algorithm; resolves to {result, metadata}, rejects with an Error. */
  pipe(input) {
    const { body, type } = encodeInput(input);
    const timeout = Number(this.options.timeout) || DEFAULT_TIMEOUT_SECONDS;
    const path = `/v1/algo/${this.ref.split('/').map(encodeURIComponent).join('/')}`;
    return this.client
      .request('POST', path, { body, contentType: type, query: this.options, timeoutMs: (timeout + 60) * 1000 })
      .then((res) => {
        if (this.options.output === 'raw') {
          if (res.status >= 300) throw new AlgorithmError(errorMessage(res));
          return res.body.toString('utf8');
        }
        let parsed;
        try {
          parsed = JSON.parse(res.body.toString('utf8'));
        } catch {
          throw new AlgorithmError(errorMessage(res));
        }
        if (!parsed || typeof parsed !== 'object') {
          throw new AlgorithmError(`unexpected response from the service: ${res.body.toString('utf8').slice(0, 500)}`);
        }
        if (parsed.error !== undefined && parsed.error !== null) {
          const error = parsed.error;
          if (error && typeof error === 'object') {
            throw new AlgorithmError(
              String(error.message || errorMessage(res)),
              typeof error.error_type === 'string' ? error.error_type : undefined,
            );
          }
          throw new AlgorithmError(String(error));
        }
        if (res.status >= 300) throw new AlgorithmError(errorMessage(res));
        const metadata = parsed.metadata && typeof parsed.metadata === 'object' ? parsed.metadata : {};
        let result = parsed.result;
        if (metadata.content_type === 'binary' && typeof result === 'string') result = Buffer.from(result, 'base64');
        return { result, metadata, async: parsed.async, request_id: parsed.request_id };
      });
  }
}

/** `data://owner/collection/x` (or `owner/...`) → `owner/collection/x`. */
function dataPath(uri) {
  return String(uri)
    .replace(/^data:\/\//, '')
    .replace(/^\/+|\/+$/g, '');
}

/** The HTTP path of a data path, each segment percent-encoded. */
function dataUrl(path) {
  return `/v1/data/${path.split('/').map(encodeURIComponent).join('/')}`;
}

/** HEAD: true for 200, false for 404, an error otherwise. */
async function existsAt(client, path) {
  const res = await client.request('HEAD', dataUrl(path));
  if (res.status === 200) return true;
  if (res.status === 404) return false;
  throw new AlgorithmError(errorMessage(res));
}

function check(res, exactly200 = false) {
  if (exactly200 ? res.status !== 200 : res.status >= 300) throw new AlgorithmError(errorMessage(res));
  return res;
}

/** A hosted file, data://owner/collection/path (docs/compatibility.md §5). */
class DataFile {
  constructor(client, uri) {
    this.client = client;
    this.path = dataPath(uri);
    this.name = this.path.split('/').pop();
    /** Set for files listed by DataDirectory#files(). */
    this.size = undefined;
    this.lastModified = undefined;
  }

  exists() {
    return existsAt(this.client, this.path);
  }

  /** The content as a Buffer. */
  async getBytes() {
    const res = check(await this.client.request('GET', dataUrl(this.path), { accept: 'application/octet-stream' }), true);
    if (res.headers['x-data-type'] === 'directory') throw new AlgorithmError(`data://${this.path} is a directory, not a file`);
    return res.body;
  }

  /** The content as UTF-8 text. */
  async getString() {
    return (await this.getBytes()).toString('utf8');
  }

  /** Stores a string (as UTF-8 text) or a Buffer/Uint8Array, replacing the file if it exists. */
  async put(content) {
    let body;
    let contentType;
    if (typeof content === 'string') {
      body = Buffer.from(content, 'utf8');
      contentType = 'text/plain; charset=utf-8';
    } else if (content instanceof Uint8Array) {
      body = Buffer.from(content.buffer, content.byteOffset, content.byteLength);
      contentType = 'application/octet-stream';
    } else {
      throw new TypeError('put() takes a string or a Buffer');
    }
    check(await this.client.request('PUT', dataUrl(this.path), { body, contentType }));
    return this;
  }

  async delete() {
    check(await this.client.request('DELETE', dataUrl(this.path)));
    return true;
  }
}

/** A hosted directory or collection, data://owner/collection[/path] (docs/compatibility.md §5). */
class DataDirectory {
  constructor(client, uri) {
    this.client = client;
    this.path = dataPath(uri);
    this.name = this.path.split('/').pop();
  }

  file(name) {
    return new DataFile(this.client, `${this.path}/${name}`);
  }

  dir(name) {
    return new DataDirectory(this.client, `${this.path}/${name}`);
  }

  exists() {
    return existsAt(this.client, this.path);
  }

  /** Creates it in its parent (under data://.my a collection of the caller). */
  async create() {
    const slash = this.path.lastIndexOf('/');
    if (slash < 0) throw new AlgorithmError(`data://${this.path} has no parent to create it in`);
    const body = Buffer.from(JSON.stringify({ name: this.name }), 'utf8');
    check(await this.client.request('POST', dataUrl(this.path.slice(0, slash)), { body, contentType: 'application/json' }), true);
    return this;
  }

  /** Deletes it; force deletes what it holds too. */
  async delete(force = false) {
    check(await this.client.request('DELETE', dataUrl(this.path), { query: force ? { force: 'true' } : undefined }));
    return true;
  }

  /** Every page of the listing (folders and files may come on separate pages). */
  async pages() {
    const pages = [];
    let marker;
    do {
      const res = check(await this.client.request('GET', dataUrl(this.path), { query: marker ? { marker } : undefined }), true);
      const page = JSON.parse(res.body.toString('utf8'));
      pages.push(page);
      marker = page && typeof page.marker === 'string' && page.marker ? page.marker : undefined;
    } while (marker);
    return pages;
  }

  /** Every file in it, each with size and lastModified. */
  async files() {
    const files = [];
    for (const page of await this.pages()) {
      for (const entry of page.files || []) {
        const f = this.file(entry.filename);
        f.size = entry.size;
        f.lastModified = entry.last_modified;
        files.push(f);
      }
    }
    return files;
  }

  /** Every directory in it. */
  async dirs() {
    const dirs = [];
    for (const page of await this.pages()) for (const entry of page.folders || []) dirs.push(this.dir(entry.name));
    return dirs;
  }
}

class Client {
  constructor(apiKey, apiAddress) {
    this.apiKey = apiKey || undefined;
    this.apiAddress = apiAddress || process.env.ALGORITHMIA_API || undefined;
    this.socketPath = process.env.ALGOHOST_API_SOCKET || undefined;
  }

  algo(ref) {
    return new Algorithm(this, ref);
  }

  /** A hosted file, data://owner/collection/path (data://.my/... = the caller). */
  file(uri) {
    return new DataFile(this, uri);
  }

  /** A hosted directory or collection, data://owner/collection[/path]. */
  dir(uri) {
    return new DataDirectory(this, uri);
  }

  /**
   * Insights: reports metrics ({key: value}) from a call of a version with insights_enabled, as
   * POST /v1/insights without an Authorization header. Elsewhere (no $ALGOHOST_INSIGHTS_TOKEN,
   * which the runner sets only while such a call runs) it does nothing and resolves to null, so
   * the same code runs whether or not the version has Insights on.
   */
  async reportInsights(insights) {
    const token = process.env.ALGOHOST_INSIGHTS_TOKEN;
    if (!token) return null;
    const report = Object.entries(insights || {}).map(([k, v]) => ({ insight_key: k, insight_value: v }));
    const body = Buffer.from(JSON.stringify(report));
    const res = await this.request('POST', '/v1/insights', {
      body,
      contentType: 'application/json',
      headers: { 'X-Algohost-Insights-Token': token },
      auth: false,
    });
    if (res.status >= 300) throw new AlgorithmError(errorMessage(res));
    return JSON.parse(res.body.toString('utf8'));
  }

  /** One HTTP request to the service; resolves to {status, headers, body: Buffer} whatever its status. */
  request(method, path, { body, contentType, accept, query, timeoutMs, headers: extra, auth = true } = {}) {
    return new Promise((resolve, reject) => {
      const apiKey = this.apiKey || process.env.ALGORITHMIA_API_KEY;
      if (auth && !apiKey) throw new AlgorithmError(KEY_MISSING, 'AlgorithmError');
      if (!this.apiAddress && !this.socketPath) throw new AlgorithmError('no API address: ALGORITHMIA_API is not set');
      const address = new URL(this.apiAddress || 'http://localhost');
      let target = address.pathname.replace(/\/+$/, '') + path;
      const params = new URLSearchParams();
      for (const [k, v] of Object.entries(query || {})) if (v !== undefined && v !== null) params.append(k, String(v));
      if ([...params.keys()].length) target += `?${params}`;
      const headers = { 'Accept-Encoding': 'identity', Connection: 'close', ...extra };
      if (auth) headers.Authorization = `Simple ${apiKey}`;
      if (contentType) headers['Content-Type'] = contentType;
      if (accept) headers.Accept = accept;
      if (body) headers['Content-Length'] = String(body.length);
      // agent: false = one connection per request, never a pooled socket the service may have closed.
      const options = { method, path: target, headers, agent: false, timeout: timeoutMs || (DEFAULT_TIMEOUT_SECONDS + 60) * 1000 };
      let transport = http;
      if (this.socketPath) {
        options.socketPath = this.socketPath;
        headers.Host = address.host || 'localhost';
      } else {
        transport = address.protocol === 'https:' ? https : http;
        options.hostname = address.hostname;
        if (address.port) options.port = address.port;
      }
      const req = transport.request(options, (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode || 0, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new AlgorithmError(`the request to ${path} timed out`)));
      req.on('error', reject);
      req.end(body);
    });
  }
}

/** algorithmia.client([apiKey], [apiAddress]) as in the Algorithmia Node client. */
function client(apiKey, apiAddress) {
  return new Client(apiKey, apiAddress);
}

module.exports = client;
module.exports.client = client;
module.exports.Client = Client;
module.exports.AlgorithmError = AlgorithmError;
module.exports.DataFile = DataFile;
module.exports.DataDirectory = DataDirectory;
