import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('builds')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('algorithm_id', 'text', (c) => c.notNull().references('algorithms.id').onDelete('cascade'))
    .addColumn('commit_sha', 'text', (c) => c.notNull())
    .addColumn('environment_name', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('trigger', 'text', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('error', 'text')
    .addColumn('artifact', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text')
    .addColumn('finished_at', 'text')
    .execute();
  await db.schema.createIndex('builds_algorithm_created').on('builds').columns(['algorithm_id', 'created_at']).execute();
  await db.schema.createIndex('builds_status').on('builds').column('status').execute();
}
