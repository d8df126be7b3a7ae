import type { Kysely } from 'kysely';

/** Leases: which node runs a once-per-cluster job (sweeps) until when (jobs/cluster-lease.ts). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('leases')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('holder', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
}
