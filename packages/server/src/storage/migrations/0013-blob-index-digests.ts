import type { Kysely } from 'kysely';

/**
 * Cluster mode: the SHA-256 of each index object a node wrote to the blob store (an artifact's
 * index, a dependency layer's), recorded here when it is written. A node fetching an artifact
 * believes the index only when it matches (cluster/artifact-store.ts): whoever can write to the
 * bucket but not to this database cannot point a worker at a tree or a layer of their making.
 * The blobs the indexes name are checked against the hashes the indexes hold.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('blob_index_digests')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('recorded_at', 'text', (c) => c.notNull())
    .execute();
}
