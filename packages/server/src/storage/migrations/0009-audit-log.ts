import type { Kysely } from 'kysely';

/**
 * The audit log: administrative and security-relevant actions (domain/audit/), append-only,
 * read by admins newest first and filtered by actor or action.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('audit_log')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('at', 'text', (c) => c.notNull())
    // The actor's name as it was (kept when the account is deleted or renamed), and its id.
    .addColumn('actor', 'text')
    .addColumn('actor_id', 'text')
    .addColumn('credential', 'text')
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('target', 'text', (c) => c.notNull())
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('address', 'text')
    .addColumn('details', 'text', (c) => c.notNull()) // JSON object
    .execute();
  await db.schema.createIndex('audit_log_at').on('audit_log').columns(['at', 'id']).execute();
  await db.schema.createIndex('audit_log_actor').on('audit_log').columns(['actor', 'at']).execute();
  await db.schema.createIndex('audit_log_action').on('audit_log').columns(['action', 'at']).execute();
}
