/**
 * Blobs in an S3-compatible bucket (cluster mode). Uploads go through multipart upload in
 * parts of `partSizeBytes`, a few in flight, so memory stays bounded whatever the size; S3
 * makes an object visible only when its upload completes, which gives the atomic replace, and
 * a failed upload is aborted so no parts stay behind.
 */
import type { Readable } from 'node:stream';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { assertBlobKey, type BlobContent, type BlobInfo, type BlobPage, type BlobStore } from '../../domain/data/ports.js';
import { Errors } from '../../domain/errors.js';

export interface S3Settings {
  /** http(s)://host:port of an S3-compatible service; undefined = AWS. */
  endpoint: string | undefined;
  region: string;
  bucket: string;
  accessKeyId: string | undefined;
  secretAccessKey: string | undefined;
  /** bucket in the path (most self-hosted stores) instead of the host name. */
  forcePathStyle: boolean;
  /** Multipart part size (S3's minimum is 5 MiB). */
  partSizeBytes?: number;
}

const DEFAULT_PART_SIZE = 8 * 1024 * 1024;
/** Parts uploaded at once: memory is about (queue + 1) × part size per upload. */
const QUEUE_SIZE = 2;

export class S3BlobStore implements BlobStore {
  private readonly client: S3Client;
  private readonly bucket: string;

  constructor(private readonly settings: S3Settings) {
    this.bucket = settings.bucket;
    this.client = new S3Client({
      endpoint: settings.endpoint,
      region: settings.region,
      forcePathStyle: settings.forcePathStyle,
      credentials:
        settings.accessKeyId && settings.secretAccessKey
          ? { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey }
          : undefined,
      // Checksums only where S3 requires them: several S3-compatible stores reject the
      // trailing checksums newer SDKs send by default.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  /** Finds the bucket, creating it when the store allows (self-hosted stores usually do). */
  async open(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
      return;
    } catch (err) {
      if (!isNotFound(err))
        throw new Error(`S3 bucket "${this.bucket}" at ${this.where()} is not usable: ${describe(err)}`, { cause: err });
    }
    try {
      await this.client.send(new CreateBucketCommand({ Bucket: this.bucket }));
    } catch (err) {
      throw new Error(`S3 bucket "${this.bucket}" does not exist at ${this.where()} and could not be created: ${describe(err)}`, {
        cause: err,
      });
    }
  }

  async put(key: string, body: Readable): Promise<BlobInfo> {
    assertBlobKey(key);
    // The upload aborts when the body fails; report the body's reason (a dropped connection,
    // the quota), not the abort that followed it.
    let bodyError: unknown;
    body.once('error', (err) => (bodyError ??= err));
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: key, Body: body, ContentType: 'application/octet-stream' },
      partSize: this.settings.partSizeBytes ?? DEFAULT_PART_SIZE,
      queueSize: QUEUE_SIZE,
      leavePartsOnError: false,
    });
    try {
      await this.guard(upload.done());
    } catch (err) {
      throw bodyError ?? err;
    }
    if (bodyError) throw bodyError;
    const info = await this.stat(key);
    if (!info) throw new Error(`S3 object ${key} is missing right after its upload`);
    return info;
  }

  async get(key: string): Promise<BlobContent | undefined> {
    assertBlobKey(key);
    try {
      const res = await this.guard(this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key })));
      return {
        key,
        size: res.ContentLength ?? 0,
        lastModified: res.LastModified ?? new Date(0),
        body: res.Body as Readable,
      };
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async stat(key: string): Promise<BlobInfo | undefined> {
    assertBlobKey(key);
    try {
      const res = await this.guard(this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key })));
      return { key, size: res.ContentLength ?? 0, lastModified: res.LastModified ?? new Date(0) };
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async list(prefix: string, opts: { after?: string; limit?: number } = {}): Promise<BlobPage> {
    const limit = Math.min(opts.limit ?? 1000, 1000);
    const res = await this.guard(
      this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, StartAfter: opts.after, MaxKeys: limit })),
    );
    const items: BlobInfo[] = (res.Contents ?? []).map((o) => ({
      key: o.Key!,
      size: o.Size ?? 0,
      lastModified: o.LastModified ?? new Date(0),
    }));
    return { items, next: res.IsTruncated && items.length ? items[items.length - 1]!.key : null };
  }

  async delete(key: string): Promise<void> {
    assertBlobKey(key);
    await this.guard(this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key })));
  }

  async close(): Promise<void> {
    this.client.destroy();
  }

  /**
   * S3 unreachable or failing (refused connections, timeouts, 5xx, throttling) becomes a 503
   * with Retry-After naming the blob store: the node is fine and recovers by itself when S3
   * does (the client opens new connections). Other errors pass unchanged.
   */
  private async guard<T>(pending: Promise<T>): Promise<T> {
    try {
      return await pending;
    } catch (err) {
      const why = outage(err);
      if (!why) throw err;
      throw Object.assign(Errors.unavailable(`the blob store is unavailable (${why}); try again shortly`, { retryAfterSeconds: 5 }), {
        cause: err,
      });
    }
  }

  private where(): string {
    return this.settings.endpoint ?? `AWS region ${this.settings.region}`;
  }
}

function isNotFound(err: unknown): boolean {
  if (err instanceof S3ServiceException) {
    return err.$metadata.httpStatusCode === 404 || err.name === 'NoSuchKey' || err.name === 'NotFound' || err.name === 'NoSuchBucket';
  }
  return false;
}

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'EPIPE']);

/** Why `err` says S3 is down or overloaded (as opposed to a refusal of this request), or undefined. */
function outage(err: unknown): string | undefined {
  if (err instanceof S3ServiceException) {
    const status = err.$metadata.httpStatusCode ?? 0;
    return status >= 500 || status === 429 || err.name === 'SlowDown' ? `${err.name}, HTTP ${status}` : undefined;
  }
  for (
    let e = err as { code?: unknown; name?: unknown; cause?: unknown } | undefined, depth = 0;
    e && depth < 5;
    e = e.cause as typeof e, depth++
  ) {
    if (typeof e !== 'object') return undefined;
    if (typeof e.code === 'string' && NETWORK_CODES.has(e.code)) return e.code;
    if (e.name === 'TimeoutError') return 'timeout';
  }
  return undefined;
}

function describe(err: unknown): string {
  if (err instanceof S3ServiceException) return `${err.name} (HTTP ${err.$metadata.httpStatusCode ?? '?'}): ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}
