/** The BlobStore the configuration names, not yet opened; the S3 client is loaded only when used. */
import path from 'node:path';
import type { Config } from '../config/config.js';
import type { BlobStore } from '../domain/data/ports.js';
import { DiskBlobStore } from '../storage/blobs/disk-blob-store.js';

export async function blobStoreFor(config: Config): Promise<BlobStore> {
  if (config.blobStore === 's3') {
    const { S3BlobStore } = await import('../storage/blobs/s3-blob-store.js');
    return new S3BlobStore({
      endpoint: config.s3Endpoint,
      region: config.s3Region,
      bucket: config.s3Bucket!,
      accessKeyId: config.s3AccessKeyId,
      secretAccessKey: config.s3SecretAccessKey,
      forcePathStyle: config.s3ForcePathStyle,
    });
  }
  return new DiskBlobStore(config.blobDir ?? path.join(config.dataDir, 'blobs'));
}
