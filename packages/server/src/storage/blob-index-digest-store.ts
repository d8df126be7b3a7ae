/**
 * The digests of the index objects nodes wrote to the blob store (migration 0013): what a node
 * fetching an artifact checks the bucket's index against (cluster/artifact-store.ts).
 */
import type { Db } from './database.js';

export class SqlBlobIndexDigestStore {
  constructor(private readonly db: Db) {}

  async get(key: string): Promise<string | undefined> {
    const row = await this.db.selectFrom('blob_index_digests').select('sha256').where('key', '=', key).executeTakeFirst();
    return row?.sha256;
  }

  /** Records (or replaces: the index was written again, by a node that holds what it names) the digest of `key`. */
  async set(key: string, sha256: string): Promise<void> {
    const recordedAt = new Date().toISOString();
    await this.db
      .insertInto('blob_index_digests')
      .values({ key, sha256, recorded_at: recordedAt })
      .onConflict((oc) => oc.column('key').doUpdateSet({ sha256, recorded_at: recordedAt }))
      .execute();
  }
}
