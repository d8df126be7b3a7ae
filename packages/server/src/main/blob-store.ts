/** Builds the BlobStore the configuration names; the S3 client is loaded only when used. */
import path from 'node:path';
import type { Config } from '../config/config.js';
import type { BlobStore } from '../domain/data/ports.js';
import { DiskBlobStore } from '../storage/blobs/disk-blob-store.js';

export async function openBlobStore(config: Config): Promise<BlobStore> {
  let store: BlobStore;
  if (config.blobStore === 's3') {
    const { S3BlobStore } = await import('../storage/blobs/s3-blob-store.js');
    store = new S3BlobStore({
      endpoint: config.s3Endpoint,
      region: config.s3Region,
      bucket: config.s3Bucket!,
      accessKeyId: config.s3AccessKeyId,
      secretAccessKey: config.s3SecretAccessKey,
      forcePathStyle: config.s3ForcePathStyle,
    });
  } else {
    store = new DiskBlobStore(config.blobDir ?? path.join(config.dataDir, 'blobs'));
  }
  await store.open();
  return store;
}
