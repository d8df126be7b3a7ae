import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('versions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('algorithm_id', 'text', (c) => c.notNull().references('algorithms.id').onDelete('cascade'))
    .addColumn('build_id', 'text', (c) => c.notNull())
    .addColumn('commit_sha', 'text', (c) => c.notNull())
    .addColumn('environment_name', 'text', (c) => c.notNull())
    .addColumn('artifact', 'text', (c) => c.notNull())
    .addColumn('semantic_version', 'text', (c) => c.notNull())
    .addColumn('major', 'integer', (c) => c.notNull())
    .addColumn('minor', 'integer', (c) => c.notNull())
    .addColumn('patch', 'integer', (c) => c.notNull())
    // Zero-padded "major.minor.patch": orders numerically as text and serves as the page marker.
    .addColumn('sort_key', 'text', (c) => c.notNull())
    .addColumn('algorithm_callability', 'text', (c) => c.notNull())
    .addColumn('insights_enabled', 'integer', (c) => c.notNull())
    .addColumn('release_notes', 'text')
    .addColumn('sample_input', 'text')
    .addColumn('sample_output', 'text')
    .addColumn('request_fingerprint', 'text', (c) => c.notNull())
    .addColumn('published_by', 'text', (c) => c.notNull())
    .addColumn('published_at', 'text', (c) => c.notNull())
    .execute();
  // One number per algorithm, one version per build: these decide concurrent publishes.
  await db.schema.createIndex('versions_number').unique().on('versions').columns(['algorithm_id', 'semantic_version']).execute();
  await db.schema.createIndex('versions_build').unique().on('versions').columns(['algorithm_id', 'build_id']).execute();
  await db.schema.createIndex('versions_order').on('versions').columns(['algorithm_id', 'sort_key']).execute();
  await db.schema.createIndex('versions_commit').on('versions').columns(['algorithm_id', 'commit_sha']).execute();
}
