/**
 * One contract for every BlobStore: the local directory and an S3-compatible bucket (a real
 * s3rver on loopback). Streams in and out, atomic replace, failed uploads that leave nothing,
 * listing with prefix and paging, delete, and keys that cannot escape.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config/config.js';
import type { BlobStore } from '../../src/domain/data/ports.js';
import { DiskBlobStore } from '../../src/storage/blobs/disk-blob-store.js';
import { S3BlobStore } from '../../src/storage/blobs/s3-blob-store.js';
import { startS3Server, type S3TestServer } from '../support/s3.js';
import { makeTempDir } from '../support/server.js';

const MiB = 1024 * 1024;

/** `total` bytes of a repeatable pattern, produced chunk by chunk (never held whole). */
function pattern(total: number, seed = 1, chunk = 256 * 1024): Readable {
  let sent = 0;
  return new Readable({
    read() {
      if (sent >= total) return void this.push(null);
      const n = Math.min(chunk, total - sent);
      const buf = Buffer.alloc(n);
      for (let i = 0; i < n; i++) buf[i] = ((sent + i) * seed) % 251;
      sent += n;
      this.push(buf);
    },
  });
}

/** Sends `bytes` and then fails, like a connection dropped mid-upload. */
function failingAfter(bytes: number, message = 'connection reset by peer'): Readable {
  let sent = false;
  return new Readable({
    read() {
      if (!sent) {
        sent = true;
        this.push(Buffer.alloc(bytes, 7));
        setTimeout(() => this.destroy(new Error(message)), 20);
      }
    },
  });
}

async function sha256(stream: Readable): Promise<{ hash: string; size: number }> {
  const h = crypto.createHash('sha256');
  let size = 0;
  for await (const chunk of stream) {
    h.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { hash: h.digest('hex'), size };
}

const hashOf = (stream: Readable) => sha256(stream).then((r) => r.hash);
const text = async (store: BlobStore, key: string) => {
  const blob = await store.get(key);
  assert.ok(blob, `blob ${key} exists`);
  return Buffer.concat(await blob.body.toArray()).toString();
};

interface Subject {
  name: string;
  make(): Promise<{ store: BlobStore; leftovers(): Promise<string[]>; cleanup(): Promise<void> }>;
}

let s3: S3TestServer | undefined;

const SUBJECTS: Subject[] = [
  {
    name: 'disk',
    make: async () => {
      const dir = await makeTempDir('algohost-blobs-');
      const store = new DiskBlobStore(dir);
      await store.open();
      return {
        store,
        leftovers: async () => fs.readdirSync(path.join(dir, 'tmp')),
        cleanup: async () => fs.rmSync(dir, { recursive: true, force: true }),
      };
    },
  },
  {
    name: 's3 (s3rver on loopback)',
    make: async () => {
      const store = new S3BlobStore({
        endpoint: s3!.endpoint,
        region: 'us-east-1',
        bucket: `contract-${crypto.randomBytes(4).toString('hex')}`,
        accessKeyId: s3!.env('').ALGOHOST_S3_ACCESS_KEY_ID!,
        secretAccessKey: s3!.env('').ALGOHOST_S3_SECRET_ACCESS_KEY!,
        forcePathStyle: true,
        partSizeBytes: 5 * MiB,
      });
      await store.open();
      // S3 shows an object only once its upload completed: nothing else can be left over.
      return { store, leftovers: async () => [], cleanup: () => store.close() };
    },
  },
];

before(async () => {
  s3 = await startS3Server();
});
after(() => s3?.stop());

for (const subject of SUBJECTS) {
  describe(`BlobStore contract: ${subject.name}`, () => {
    let store: BlobStore;
    let leftovers: () => Promise<string[]>;
    let cleanup: () => Promise<void>;
    before(async () => ({ store, leftovers, cleanup } = await subject.make()));
    after(() => cleanup());

    test('put then get and stat: the same bytes, size and a modification time', async () => {
      const started = Date.now() - 2000; // S3 times have whole seconds
      const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
      const info = await store.put('c/roundtrip/a', Readable.from([bytes]));
      assert.equal(info.key, 'c/roundtrip/a');
      assert.equal(info.size, 256);
      assert.ok(info.lastModified.getTime() >= started);
      const blob = await store.get('c/roundtrip/a');
      assert.ok(blob);
      assert.equal(blob.size, 256);
      assert.deepEqual(Buffer.concat(await blob.body.toArray()), bytes);
      const st = await store.stat('c/roundtrip/a');
      assert.equal(st?.size, 256);
      assert.equal(await store.get('c/roundtrip/missing'), undefined);
      assert.equal(await store.stat('c/roundtrip/missing'), undefined);
    });

    test('an empty body is an empty blob', async () => {
      const info = await store.put('c/empty/e', Readable.from([]));
      assert.equal(info.size, 0);
      assert.equal(await text(store, 'c/empty/e'), '');
    });

    test('a 20 MiB stream goes in and out whole (several S3 parts)', async () => {
      const size = 20 * MiB + 123;
      const expected = await hashOf(pattern(size, 3));
      const info = await store.put('c/big/blob', pattern(size, 3));
      assert.equal(info.size, size);
      const blob = await store.get('c/big/blob');
      assert.ok(blob);
      assert.equal(blob.size, size);
      assert.deepEqual(await sha256(blob.body), { hash: expected, size });
    });

    test('put replaces an existing blob', async () => {
      await store.put('c/replace/x', Readable.from([Buffer.from('first version')]));
      const info = await store.put('c/replace/x', Readable.from([Buffer.from('second')]));
      assert.equal(info.size, 6);
      assert.equal(await text(store, 'c/replace/x'), 'second');
      assert.equal((await store.stat('c/replace/x'))?.size, 6);
    });

    test('a body failing mid-upload rejects with its error and leaves the previous blob intact', async () => {
      await store.put('c/atomic/x', Readable.from([Buffer.from('keep me')]));
      await assert.rejects(store.put('c/atomic/x', failingAfter(7 * MiB, 'client went away')), /client went away/);
      assert.equal(await text(store, 'c/atomic/x'), 'keep me');
      await assert.rejects(store.put('c/atomic/x', failingAfter(1000, 'small and broken')), /small and broken/);
      assert.equal(await text(store, 'c/atomic/x'), 'keep me');
      assert.deepEqual(await leftovers(), []);
    });

    test('a failed upload of a new key leaves no blob', async () => {
      await assert.rejects(store.put('c/atomic/new', failingAfter(6 * MiB)), /connection reset/);
      assert.equal(await store.stat('c/atomic/new'), undefined);
      const listed = await store.list('c/atomic/');
      assert.deepEqual(
        listed.items.map((i) => i.key),
        ['c/atomic/x'],
      );
      assert.deepEqual(await leftovers(), []);
    });

    test('list: by prefix, in key order, paged with after/limit', async () => {
      const keys = ['l/a/1', 'l/a/2', 'l/a/3', 'l/a/sub/4', 'l/ab/5', 'l/b/6'];
      for (const k of [...keys].reverse()) await store.put(k, Readable.from([Buffer.from(k)]));
      const all = await store.list('l/a/');
      assert.deepEqual(
        all.items.map((i) => i.key),
        ['l/a/1', 'l/a/2', 'l/a/3', 'l/a/sub/4'],
      );
      assert.equal(all.next, null);
      assert.equal(all.items[0]!.size, 5);
      assert.deepEqual(
        (await store.list('l/a')).items.map((i) => i.key),
        ['l/a/1', 'l/a/2', 'l/a/3', 'l/a/sub/4', 'l/ab/5'],
        'a prefix is a string prefix, not a folder',
      );
      const seen: string[] = [];
      let afterKey: string | undefined;
      for (let pages = 0; pages < 10; pages++) {
        const page = await store.list('l/', { after: afterKey, limit: 2 });
        assert.ok(page.items.length <= 2);
        seen.push(...page.items.map((i) => i.key));
        if (!page.next) break;
        afterKey = page.next;
      }
      assert.deepEqual(seen, [...keys].sort());
      assert.deepEqual((await store.list('nothing/here/')).items, []);
    });

    test('delete removes a blob; deleting a missing one is no error', async () => {
      await store.put('c/del/x', Readable.from([Buffer.from('x')]));
      await store.delete('c/del/x');
      assert.equal(await store.get('c/del/x'), undefined);
      assert.equal(await store.stat('c/del/x'), undefined);
      await store.delete('c/del/x');
      await store.delete('c/del/never');
    });

    test('keys that could escape or are malformed are refused', async () => {
      for (const key of ['', '../x', 'a/../b', '/abs', 'a//b', './a', 'a/.hidden', 'a\u0000b', 'a\\b', 'a/']) {
        await assert.rejects(store.put(key, Readable.from([Buffer.from('x')])), /invalid blob key/, JSON.stringify(key));
        await assert.rejects(store.get(key), /invalid blob key/, JSON.stringify(key));
        await assert.rejects(store.delete(key), /invalid blob key/, JSON.stringify(key));
      }
    });
  });
}

describe('DiskBlobStore specifics', () => {
  test('a reader keeps the old content while the blob is replaced and after it is deleted', async () => {
    const dir = await makeTempDir('algohost-blobs-');
    try {
      const store = new DiskBlobStore(dir);
      await store.open();
      const size = 8 * MiB;
      const expected = await hashOf(pattern(size, 5));
      await store.put('r/x', pattern(size, 5));
      const reading = await store.get('r/x');
      assert.ok(reading);
      await store.put('r/x', Readable.from([Buffer.from('new')]));
      const second = await store.get('r/x');
      await store.delete('r/x');
      assert.equal(await hashOf(reading.body), expected);
      assert.equal(Buffer.concat(await second!.body.toArray()).toString(), 'new');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('open() removes temporary files a crash left; blobs are private to the service', async () => {
    const dir = await makeTempDir('algohost-blobs-');
    try {
      const store = new DiskBlobStore(dir);
      await store.open();
      fs.writeFileSync(path.join(dir, 'tmp', 'half-written'), 'partial');
      await store.open();
      assert.deepEqual(fs.readdirSync(path.join(dir, 'tmp')), []);
      await store.put('p/x', Readable.from([Buffer.from('secret')]));
      assert.equal(fs.statSync(path.join(dir, 'objects', 'p', 'x')).mode & 0o777, 0o600);
      assert.equal(fs.statSync(path.join(dir, 'objects')).mode & 0o777, 0o700);
      await store.delete('p/x');
      assert.deepEqual(fs.readdirSync(path.join(dir, 'objects')), [], 'emptied directories go too');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('blob store settings', () => {
  test('disk is the default; s3 needs a bucket; path-style addressing follows the endpoint', () => {
    const base = { ALGOHOST_DATA_DIR: '/tmp/x' };
    const disk = loadConfig(base, []);
    assert.equal(disk.blobStore, 'disk');
    assert.equal(disk.blobDir, undefined);
    assert.equal(disk.dataQuotaBytes, 0);
    assert.equal(disk.dataTempTtlSeconds, 86400);
    assert.throws(() => loadConfig({ ...base, ALGOHOST_BLOB_STORE: 's3' }, []), /ALGOHOST_S3_BUCKET/);
    assert.throws(() => loadConfig({ ...base, ALGOHOST_BLOB_STORE: 'tape' }, []), /ALGOHOST_BLOB_STORE.*disk, s3/);
    const aws = loadConfig({ ...base, ALGOHOST_BLOB_STORE: 's3', ALGOHOST_S3_BUCKET: 'b' }, []);
    assert.equal(aws.s3ForcePathStyle, false);
    const minio = loadConfig(
      { ...base, ALGOHOST_BLOB_STORE: 's3', ALGOHOST_S3_BUCKET: 'b', ALGOHOST_S3_ENDPOINT: 'http://127.0.0.1:9000' },
      [],
    );
    assert.equal(minio.s3ForcePathStyle, true);
    assert.equal(loadConfig({ ...base, ALGOHOST_BLOB_DIR: 'rel/blobs' }, []).blobDir, path.resolve('rel/blobs'));
  });
});
