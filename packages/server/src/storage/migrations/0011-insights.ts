import type { Kysely } from 'kysely';

/**
 * Insights (spec Limits 1: one connection to an external broker): the topic of a connected Kafka
 * cluster that algorithms' reports go to. `slot` is always 1 and the primary key, so the database
 * itself refuses a second connection even when two admins race.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('insights_connection')
    .addColumn('slot', 'integer', (c) => c.primaryKey())
    .addColumn('cluster_id', 'text', (c) => c.notNull().references('kafka_clusters.id').onDelete('cascade'))
    .addColumn('topic', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.references('accounts.id').onDelete('set null'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
}
