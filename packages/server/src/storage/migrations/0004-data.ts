import type { Kysely } from 'kysely';

// Hosted data (docs/compatibility.md §5): folders (collections carry a read ACL) and file records. Contents are
// blobs named by blob_key. A space is (space, space_id): an account, an algorithm or a session;
// account_id is whose quota the bytes count against, and deleting that account deletes them.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('data_folders')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('space', 'text', (c) => c.notNull())
    .addColumn('space_id', 'text', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('parent', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('acl_read', 'text') // JSON array; collections only
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('data_folders_path', ['space', 'space_id', 'path'])
    .execute();
  await db.schema.createIndex('data_folders_parent').on('data_folders').columns(['space', 'space_id', 'parent', 'name']).execute();
  await db.schema.createIndex('data_folders_account').on('data_folders').column('account_id').execute();

  await db.schema
    .createTable('data_files')
    .addColumn('space', 'text', (c) => c.notNull())
    .addColumn('space_id', 'text', (c) => c.notNull())
    .addColumn('folder', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('blob_key', 'text', (c) => c.notNull())
    .addColumn('last_modified', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('data_files_pk', ['space', 'space_id', 'folder', 'name'])
    .execute();
  await db.schema.createIndex('data_files_account').on('data_files').column('account_id').execute();
  await db.schema.createIndex('data_files_blob').on('data_files').column('blob_key').execute();
  await db.schema.createIndex('data_files_modified').on('data_files').columns(['space', 'last_modified']).execute();
}
