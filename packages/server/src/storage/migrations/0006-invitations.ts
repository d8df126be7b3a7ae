import type { Kysely } from 'kysely';

/**
 * Pending invitations to organizations: an owner's PUT …/members/{user} for someone not yet a
 * member records one; the user becomes a member only by accepting it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('invitations')
    .addColumn('organization_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('role', 'text', (c) => c.notNull())
    // Who invited (a user, or the organization through its own key); kept when they are deleted.
    .addColumn('invited_by', 'text', (c) => c.references('accounts.id').onDelete('set null'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('invitations_pk', ['organization_id', 'user_id'])
    .execute();
  await db.schema.createIndex('invitations_user').on('invitations').column('user_id').execute();
}
