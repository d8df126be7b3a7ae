/**
 * Large hosted files stream through the server in both directions without being held in
 * memory, and an upload cut off mid-body leaves the previous file intact — on the disk store and
 * on an S3-compatible store (s3rver on loopback). The server runs as a child process (as with
 * `npm start`) so that its peak resident memory (VmHWM) can be read on its own.
 *
 * Sizes: ALGOHOST_TEST_DATA_MB (default 256) for the disk store, ALGOHOST_TEST_DATA_S3_MB
 * (default 64: s3rver writes every part twice) for S3. A 1 GB run:
 *   ALGOHOST_TEST_DATA_MB=1024 ALGOHOST_TEST_DATA_S3_MB=1024 bash scripts/run-tests.sh packages/server/test/data/data-large.test.ts
 * (its latest figures are in BENCHMARKS.md).
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { generateApiKey } from '../../src/domain/accounts/secrets.js';
import { checkedClient } from '../support/assertions.js';
import { streamPut, waitFor } from '../support/data.js';
import { createUser, type TestUser } from '../support/fixtures.js';
import { startS3Server, type S3TestServer } from '../support/s3.js';
import { makeTempDir } from '../support/server.js';
import { serverEntryArgs } from '../support/server-entry.js';

const MiB = 1024 * 1024;
const DISK_MB = Number(process.env.ALGOHOST_TEST_DATA_MB ?? 256);
const S3_MB = Number(process.env.ALGOHOST_TEST_DATA_S3_MB ?? 64);
/** The server's peak memory may grow by at most this much while moving a file of any size. */
const RSS_BUDGET_MB = 96;

const REPO = fileURLToPath(new URL('../../../../', import.meta.url));

interface ChildServer {
  url: string;
  adminKey: string;
  dataDir: string;
  /** Peak resident memory of the server process so far, in MiB. */
  peakRssMiB(): number;
  /** Lets the peak be measured from now on (Linux: writing 5 to clear_refs resets VmHWM). */
  resetPeak(): void;
  stop(): Promise<void>;
}

async function startChild(extraEnv: Record<string, string>): Promise<ChildServer> {
  const dataDir = await makeTempDir('algohost-large-');
  const adminKey = generateApiKey();
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('ALGOHOST_') && !k.startsWith('NODE_TEST')) env[k] = v;
  const child: ChildProcess = spawn(process.execPath, serverEntryArgs(), {
    cwd: REPO,
    env: { ...env, ALGOHOST_PORT: '0', ALGOHOST_DATA_DIR: dataDir, ALGOHOST_ADMIN_KEY: adminKey, ALGOHOST_LOG_LEVEL: 'info', ...extraEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (d: Buffer) => {
      output += d.toString();
      const m = /algohost listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (m) resolve(m[1]!);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`server exited (${code}):\n${output}`)));
  });
  const status = () => fs.readFileSync(`/proc/${child.pid}/status`, 'utf8');
  return {
    url,
    adminKey,
    dataDir,
    peakRssMiB: () => Number(/VmHWM:\s+(\d+) kB/.exec(status())![1]) / 1024,
    resetPeak: () => fs.writeFileSync(`/proc/${child.pid}/clear_refs`, '5'),
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** `mb` MiB of data: the same random MiB over and over, except for a counter in each chunk. */
function* payload(mb: number, block: Buffer): Generator<Buffer> {
  for (let i = 0; i < mb; i++) {
    const chunk = Buffer.from(block);
    chunk.writeUInt32BE(i, 0);
    yield chunk;
  }
}

function hashPayload(mb: number, block: Buffer): string {
  const h = crypto.createHash('sha256');
  for (const chunk of payload(mb, block)) h.update(chunk);
  return h.digest('hex');
}

/** Streams a GET into a hash; never holds the body. */
function download(
  base: string,
  rawPath: string,
  key: string,
): Promise<{ status: number; size: number; hash: string; length: string | undefined }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    http
      .get({ host: url.hostname, port: url.port, path: rawPath, headers: { authorization: `Simple ${key}` } }, (res) => {
        const h = crypto.createHash('sha256');
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          h.update(c);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, size, hash: h.digest('hex'), length: res.headers['content-length'] }));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

const SUBJECTS = [
  { name: 'disk', mb: DISK_MB, s3: false },
  { name: 's3', mb: S3_MB, s3: true },
];

for (const subject of SUBJECTS) {
  describe(`large hosted files (${subject.name}, ${subject.mb} MiB)`, () => {
    let s3: S3TestServer | undefined;
    let srv: ChildServer;
    let alice: TestUser;
    const block = crypto.randomBytes(MiB);

    before(async () => {
      if (subject.s3) s3 = await startS3Server();
      srv = await startChild(s3 ? s3.env('large-files') : {});
      const api = checkedClient(srv.url);
      alice = await createUser(api, srv.adminKey, 'alice');
      assert.equal((await api.post('/v1/data/alice', { key: alice.key, body: { name: 'big' } })).status, 200);
    });
    after(async () => {
      await srv?.stop();
      await s3?.stop();
    });

    test(`a ${subject.mb} MiB file goes up and comes back whole, the server's memory staying flat`, async () => {
      const expected = hashPayload(subject.mb, block);
      // Warm up (JIT, buffers, the S3 client) so the peak below measures the transfer alone.
      await streamPut(srv.url, '/v1/data/alice/big/warmup', alice.key, payload(8, block));
      await download(srv.url, '/v1/data/alice/big/warmup', alice.key);
      srv.resetPeak();
      const base = srv.peakRssMiB();
      const up = await streamPut(srv.url, '/v1/data/alice/big/file.bin', alice.key, payload(subject.mb, block), {
        contentLength: subject.mb * MiB,
      });
      assert.ok('status' in up);
      assert.equal(up.status, 200, up.text);
      const afterUpload = srv.peakRssMiB();
      const down = await download(srv.url, '/v1/data/alice/big/file.bin', alice.key);
      assert.equal(down.status, 200);
      assert.equal(down.length, String(subject.mb * MiB));
      assert.equal(down.size, subject.mb * MiB);
      assert.equal(down.hash, expected);
      const peak = srv.peakRssMiB();
      const grew = peak - base;
      console.log(
        `# ${subject.name}: ${subject.mb} MiB up and down; server peak RSS ${base.toFixed(0)} → ${afterUpload.toFixed(0)} (upload) → ${peak.toFixed(0)} MiB (download): +${grew.toFixed(0)} MiB`,
      );
      assert.ok(grew < RSS_BUDGET_MB, `the server's peak memory grew by ${grew.toFixed(0)} MiB moving ${subject.mb} MiB`);
    });

    test('an upload cut off mid-body leaves the previous file intact and nothing behind', async () => {
      const previous = hashPayload(2, block);
      const first = await streamPut(srv.url, '/v1/data/alice/big/replace-me', alice.key, payload(2, block));
      assert.ok('status' in first && first.status === 200);
      const cut = await streamPut(srv.url, '/v1/data/alice/big/replace-me', alice.key, payload(32, block), {
        contentLength: 32 * MiB,
        abortAfter: 12,
      });
      assert.deepEqual(cut, { aborted: true });
      const cutNew = await streamPut(srv.url, '/v1/data/alice/big/never-finished', alice.key, payload(32, block), { abortAfter: 12 });
      assert.deepEqual(cutNew, { aborted: true });
      const tmp = path.join(srv.dataDir, 'blobs', 'tmp');
      await waitFor('the interrupted uploads to be cleaned up', () => !fs.existsSync(tmp) || fs.readdirSync(tmp).length === 0);
      const again = await download(srv.url, '/v1/data/alice/big/replace-me', alice.key);
      assert.equal(again.status, 200);
      assert.equal(again.hash, previous);
      assert.equal((await download(srv.url, '/v1/data/alice/big/never-finished', alice.key)).status, 404);
      const listing = await checkedClient(srv.url).get('/v1/data/alice/big', { key: alice.key });
      assert.deepEqual(
        listing.body.files.map((f: { filename: string }) => f.filename),
        ['file.bin', 'replace-me', 'warmup'],
      );
    });
  });
}
