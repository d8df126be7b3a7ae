import type { Kysely } from 'kysely';

/**
 * Quota reservations of uploads in progress: an upload reserves its bytes here, atomically with
 * the quota check, before it writes them, and its file record replaces the reservation in one
 * transaction when it ends. Concurrent uploads of one account (on one node or several) thus
 * never store more than the quota together. `updated_at` is refreshed while an upload runs;
 * a reservation left by a crashed node stops counting once it is stale and the data sweep
 * deletes it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('data_reservations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('bytes', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('data_reservations_account').on('data_reservations').column('account_id').execute();
}
