/** Helpers for the hosted-data tests: raw HTTP (paths sent byte for byte), call keys, algorithms. */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import type { Client } from './http.js';
import type { TestServer } from './server.js';
import type { TestUser } from './fixtures.js';

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/**
 * One request with the path exactly as given: fetch would resolve `..` and `%2e%2e` before
 * sending, and the point is to see what the server does with them.
 */
export function rawRequest(
  base: string,
  method: string,
  rawPath: string,
  opts: { key?: string; body?: string | Buffer; headers?: Record<string, string> } = {},
): Promise<RawResponse> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        method,
        path: rawPath,
        headers: { ...(opts.key ? { authorization: `Simple ${opts.key}` } : {}), ...opts.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString() }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** Creates an algorithm (no build needed: data only needs it to exist) and returns its id. */
export async function createAlgorithm(api: Client, owner: string, key: string, name: string, callability = 'private'): Promise<string> {
  const res = await api.post(`/v1/algorithms/${owner}`, {
    key,
    body: {
      name,
      details: { label: name },
      settings: { language: 'python3-1', environment: 'cpu', algorithm_callability: callability, source_visibility: 'closed' },
    },
  });
  assert.equal(res.status, 200, res.text);
  return res.body.id as string;
}

export async function accountId(api: Client, adminKey: string, name: string): Promise<string> {
  const res = await api.get(`/v1/users/${name}`, { key: adminKey });
  if (res.status === 200) return res.body.id as string;
  const org = await api.get(`/v1/organizations/${name}`, { key: adminKey });
  assert.equal(org.status, 200, org.text);
  return org.body.id as string;
}

/**
 * The key the call service gives one call of `algorithm` made by `caller`: the same call key a
 * pipeline_enabled algorithm receives, without building and running one.
 */
export async function callKey(
  srv: TestServer,
  caller: TestUser | string,
  algorithm: { id: string; ownerId: string },
  parentKey?: string,
): Promise<{ key: string; revoke: () => void }> {
  const keys = srv.server.services.keys;
  const principal = await keys.authenticateKey(parentKey ?? (typeof caller === 'string' ? caller : caller.key));
  const { secret, revoke } = keys.issueCallKey(principal, 60_000, algorithm);
  return { key: secret, revoke };
}

/** Every file under the disk blob store's objects/ and tmp/ directories. */
export function blobFiles(srv: TestServer): { objects: string[]; tmp: string[] } {
  const root = path.join(srv.dataDir, 'blobs');
  const walk = (dir: string): string[] =>
    fs.existsSync(dir)
      ? fs
          .readdirSync(dir, { withFileTypes: true })
          .flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)]))
      : [];
  return { objects: walk(path.join(root, 'objects')), tmp: walk(path.join(root, 'tmp')) };
}

/**
 * How many hosted-data files the blob store holds, on disk or in the S3 bucket (a cluster's):
 * for tests that check nothing but what was accepted got stored.
 */
export async function storedDataObjects(srv: TestServer): Promise<number> {
  const c = srv.config;
  if (c.blobStore !== 's3') return blobFiles(srv).objects.length;
  const s3 = new S3Client({
    region: c.s3Region,
    endpoint: c.s3Endpoint,
    forcePathStyle: c.s3ForcePathStyle,
    credentials: { accessKeyId: c.s3AccessKeyId!, secretAccessKey: c.s3SecretAccessKey! },
  });
  try {
    let count = 0;
    let token: string | undefined;
    do {
      const page = await s3.send(new ListObjectsV2Command({ Bucket: c.s3Bucket!, Prefix: 'data/', ContinuationToken: token }));
      count += page.KeyCount ?? 0;
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return count;
  } finally {
    s3.destroy();
  }
}

export async function waitFor(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * A PUT whose body is sent chunk by chunk (chunked encoding unless `contentLength` is given);
 * with `abortAfter`, the connection is destroyed after that many chunks, mid-body.
 */
export function streamPut(
  base: string,
  rawPath: string,
  key: string,
  chunks: Iterable<Buffer>,
  opts: { contentLength?: number; abortAfter?: number } = {},
): Promise<RawResponse | { aborted: true }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: url.hostname,
      port: url.port,
      method: 'PUT',
      path: rawPath,
      headers: {
        authorization: `Simple ${key}`,
        'content-type': 'application/octet-stream',
        ...(opts.contentLength !== undefined ? { 'content-length': String(opts.contentLength) } : {}),
      },
    });
    let settled = false;
    const settle = (v: RawResponse | { aborted: true }) => {
      if (settled) return;
      settled = true;
      resolve(v);
    };
    req.on('response', (res) => {
      const out: Buffer[] = [];
      res.on('data', (c: Buffer) => out.push(c));
      res.on('end', () => settle({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(out).toString() }));
    });
    req.on('error', (err) => {
      if (opts.abortAfter !== undefined) settle({ aborted: true });
      else if (!settled) reject(err);
    });
    const iterator = chunks[Symbol.iterator]();
    let sent = 0;
    const next = () => {
      if (settled) return;
      if (opts.abortAfter !== undefined && sent >= opts.abortAfter) {
        req.destroy();
        return settle({ aborted: true });
      }
      const item = iterator.next();
      if (item.done) return void req.end();
      sent++;
      if (req.write(item.value)) setImmediate(next);
      else req.once('drain', next);
    };
    next();
  });
}
