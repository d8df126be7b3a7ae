/**
 * The in-algorithm API client for JavaScript algorithms: `require('algorithmia')` resolves here
 * (the harness puts /opt/algohost/runner/lib on NODE_PATH, after the algorithm's own
 * node_modules). `algorithmia.client().algo('owner/name/version').pipe(input)` calls another
 * algorithm and resolves to {result, metadata}; an error envelope rejects with an Error carrying
 * its message (and error_type). Address: the apiAddress argument, else $ALGORITHMIA_API; when
 * $ALGOHOST_API_SOCKET names a Unix socket every request goes over it. Key: the apiKey argument,
 * else $ALGORITHMIA_API_KEY, which the service sets only for algorithms with pipeline_enabled.
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

class Client {
  constructor(apiKey, apiAddress) {
    this.apiKey = apiKey !== undefined && apiKey !== null ? apiKey : process.env.ALGORITHMIA_API_KEY || undefined;
    this.apiAddress = apiAddress || process.env.ALGORITHMIA_API || undefined;
    this.socketPath = process.env.ALGOHOST_API_SOCKET || undefined;
  }

  algo(ref) {
    return new Algorithm(this, ref);
  }

  /** One HTTP request to the service; resolves to {status, headers, body: Buffer} whatever its status. */
  request(method, path, { body, contentType, query, timeoutMs } = {}) {
    return new Promise((resolve, reject) => {
      if (!this.apiKey) throw new AlgorithmError(KEY_MISSING, 'AlgorithmError');
      if (!this.apiAddress && !this.socketPath) throw new AlgorithmError('no API address: ALGORITHMIA_API is not set');
      const address = new URL(this.apiAddress || 'http://localhost');
      let target = address.pathname.replace(/\/+$/, '') + path;
      const params = new URLSearchParams();
      for (const [k, v] of Object.entries(query || {})) if (v !== undefined && v !== null) params.append(k, String(v));
      if ([...params.keys()].length) target += `?${params}`;
      const headers = { 'Accept-Encoding': 'identity', Connection: 'close', Authorization: `Simple ${this.apiKey}` };
      if (contentType) headers['Content-Type'] = contentType;
      if (body) headers['Content-Length'] = String(body.length);
      const options = { method, path: target, headers, timeout: timeoutMs || (DEFAULT_TIMEOUT_SECONDS + 60) * 1000 };
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
