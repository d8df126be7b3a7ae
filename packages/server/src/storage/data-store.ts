import { PostgresAdapter, sql, type Expression, type ExpressionBuilder, type Selectable, type SqlBool } from 'kysely';
import { Errors } from '../domain/errors.js';
import type { FileRecord, FolderRecord, SpaceKind, SpaceRef } from '../domain/data/model.js';
import type { DataStore, ReservationGrant, ReservationRequest } from '../domain/data/ports.js';
import { type Db, isUniqueViolation } from './database.js';
import type { Database, DataFilesTable, DataFoldersTable } from './schema.js';

/**
 * Folder and file records of hosted data. "Below a path" is tested with substr/length, which
 * mean the same on SQLite and PostgreSQL; LIKE would not (SQLite's ignores case, and names may
 * hold % and _).
 */
export class SqlDataStore implements DataStore {
  private readonly postgres: boolean;

  constructor(private readonly db: Db) {
    this.postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  }

  async findFolder(space: SpaceRef, path: string): Promise<FolderRecord | undefined> {
    const row = await this.db.selectFrom('data_folders').selectAll().where(inSpace(space)).where('path', '=', path).executeTakeFirst();
    return row && folderFromRow(row);
  }

  async insertFolder(f: FolderRecord): Promise<void> {
    try {
      await this.db
        .insertInto('data_folders')
        .values({
          id: f.id,
          space: f.space.kind,
          space_id: f.space.id,
          account_id: f.accountId,
          path: f.path,
          parent: f.parent,
          name: f.name,
          acl_read: f.aclRead === null ? null : JSON.stringify(f.aclRead),
          created_at: f.createdAt,
          updated_at: f.updatedAt,
        })
        .execute();
    } catch (err) {
      if (isUniqueViolation(err)) throw Errors.dataExists(`folder ${f.path} already exists`);
      throw err;
    }
  }

  async setAcl(folderId: string, aclRead: string[], at: string): Promise<void> {
    await this.db
      .updateTable('data_folders')
      .set({ acl_read: JSON.stringify(aclRead), updated_at: at })
      .where('id', '=', folderId)
      .execute();
  }

  async listFolders(space: SpaceRef, parent: string, after: string | undefined, limit: number): Promise<FolderRecord[]> {
    let q = this.db.selectFrom('data_folders').selectAll().where(inSpace(space)).where('parent', '=', parent);
    if (after !== undefined) q = q.where('name', '>', after);
    const rows = await q.orderBy('name').limit(limit).execute();
    return rows.map(folderFromRow);
  }

  async findFile(space: SpaceRef, folder: string, name: string): Promise<FileRecord | undefined> {
    const row = await this.db
      .selectFrom('data_files')
      .selectAll()
      .where(inSpace(space))
      .where('folder', '=', folder)
      .where('name', '=', name)
      .executeTakeFirst();
    return row && fileFromRow(row);
  }

  async upsertFile(f: FileRecord, reservationId?: string): Promise<string | undefined> {
    return this.db.transaction().execute(async (tx) => {
      // The account's row lock orders this against the account's other commits and
      // reservations, so of two uploads replacing one file each learns the blob it replaced.
      if (this.postgres) await tx.selectFrom('accounts').select('id').where('id', '=', f.accountId).forUpdate().execute();
      const previous = await tx
        .selectFrom('data_files')
        .select('blob_key')
        .where(inSpace(f.space))
        .where('folder', '=', f.folder)
        .where('name', '=', f.name)
        .executeTakeFirst();
      await tx
        .insertInto('data_files')
        .values({
          space: f.space.kind,
          space_id: f.space.id,
          folder: f.folder,
          name: f.name,
          account_id: f.accountId,
          size: f.size,
          blob_key: f.blobKey,
          last_modified: f.lastModified,
        })
        .onConflict((oc) =>
          oc.columns(['space', 'space_id', 'folder', 'name']).doUpdateSet({
            account_id: f.accountId,
            size: f.size,
            blob_key: f.blobKey,
            last_modified: f.lastModified,
          }),
        )
        .execute();
      if (reservationId !== undefined) await tx.deleteFrom('data_reservations').where('id', '=', reservationId).execute();
      return previous?.blob_key;
    });
  }

  async deleteFile(space: SpaceRef, folder: string, name: string): Promise<void> {
    await this.db.deleteFrom('data_files').where(inSpace(space)).where('folder', '=', folder).where('name', '=', name).execute();
  }

  async listFiles(space: SpaceRef, folder: string, after: string | undefined, limit: number): Promise<FileRecord[]> {
    let q = this.db.selectFrom('data_files').selectAll().where(inSpace(space)).where('folder', '=', folder);
    if (after !== undefined) q = q.where('name', '>', after);
    const rows = await q.orderBy('name').limit(limit).execute();
    return rows.map(fileFromRow);
  }

  async hasChildren(space: SpaceRef, path: string): Promise<boolean> {
    const file = await this.db
      .selectFrom('data_files')
      .select('name')
      .where(inSpace(space))
      .where('folder', '=', path)
      .limit(1)
      .executeTakeFirst();
    if (file) return true;
    const folder = await this.db
      .selectFrom('data_folders')
      .select('id')
      .where(inSpace(space))
      .where('parent', '=', path)
      .limit(1)
      .executeTakeFirst();
    return folder !== undefined;
  }

  async filesUnder(space: SpaceRef, path: string): Promise<FileRecord[]> {
    const rows = await this.db
      .selectFrom('data_files')
      .selectAll()
      .where(inSpace(space))
      .where((eb) => atOrBelow(eb, 'folder', path))
      .execute();
    return rows.map(fileFromRow);
  }

  async deleteTree(space: SpaceRef, path: string): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      await tx
        .deleteFrom('data_files')
        .where(inSpace(space))
        .where((eb) => atOrBelow(eb, 'folder', path))
        .execute();
      await tx
        .deleteFrom('data_folders')
        .where(inSpace(space))
        .where((eb) => atOrBelow(eb, 'path', path))
        .execute();
    });
  }

  async usage(accountId: string): Promise<number> {
    const row = await this.db
      .selectFrom('data_files')
      .select((eb) => eb.fn.sum<number | string | null>('size').as('total'))
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return Number(row?.total ?? 0);
  }

  async reserve(r: ReservationRequest): Promise<ReservationGrant> {
    return this.db.transaction().execute(async (tx) => {
      // PostgreSQL: the account's row lock makes the check and the insert one step against
      // every other reservation of the account. SQLite runs one transaction at a time anyway
      // (one connection per process, and cluster mode needs PostgreSQL).
      if (this.postgres) await tx.selectFrom('accounts').select('id').where('id', '=', r.accountId).forUpdate().execute();
      const files = await tx
        .selectFrom('data_files')
        .select((eb) => eb.fn.sum<number | string | null>('size').as('total'))
        .where('account_id', '=', r.accountId)
        .executeTakeFirst();
      const held = await tx
        .selectFrom('data_reservations')
        .select(['id', 'bytes'])
        .where('account_id', '=', r.accountId)
        .where((eb) => eb.or([eb('updated_at', '>=', r.staleBefore), eb('id', '=', r.id)]))
        .execute();
      let own = 0;
      let used = Number(files?.total ?? 0);
      for (const h of held) {
        if (h.id === r.id) own = Number(h.bytes);
        else used += Number(h.bytes);
      }
      const granted = Math.min(r.max, r.limit - used - own);
      if (granted < r.min) return { granted: 0, used };
      await tx
        .insertInto('data_reservations')
        .values({ id: r.id, account_id: r.accountId, bytes: granted, updated_at: r.at })
        .onConflict((oc) => oc.column('id').doUpdateSet({ bytes: own + granted, updated_at: r.at }))
        .execute();
      return { granted, used };
    });
  }

  async touchReservation(id: string, at: string): Promise<void> {
    await this.db.updateTable('data_reservations').set({ updated_at: at }).where('id', '=', id).execute();
  }

  async releaseReservation(id: string): Promise<void> {
    await this.db.deleteFrom('data_reservations').where('id', '=', id).execute();
  }

  async deleteStaleReservations(before: string): Promise<number> {
    const res = await this.db.deleteFrom('data_reservations').where('updated_at', '<', before).executeTakeFirst();
    return Number(res.numDeletedRows);
  }

  async filesOfAccount(accountId: string): Promise<FileRecord[]> {
    const rows = await this.db.selectFrom('data_files').selectAll().where('account_id', '=', accountId).execute();
    return rows.map(fileFromRow);
  }

  async deleteAllOfAccount(accountId: string): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      await tx.deleteFrom('data_files').where('account_id', '=', accountId).execute();
      await tx.deleteFrom('data_folders').where('account_id', '=', accountId).execute();
    });
  }

  async filesModifiedBefore(kind: SpaceKind, root: string, before: string, limit: number): Promise<FileRecord[]> {
    const rows = await this.db
      .selectFrom('data_files')
      .selectAll()
      .where('space', '=', kind)
      .where('last_modified', '<', before)
      .where((eb) => atOrBelow(eb, 'folder', root))
      .limit(limit)
      .execute();
    return rows.map(fileFromRow);
  }

  async foldersCreatedBefore(kind: SpaceKind, root: string, before: string): Promise<FolderRecord[]> {
    const rows = await this.db
      .selectFrom('data_folders')
      .selectAll()
      .where('space', '=', kind)
      .where('created_at', '<', before)
      .where((eb) => (root === '' ? sql<SqlBool>`1 = 1` : below(eb, 'path', root)))
      .execute();
    return rows.map(folderFromRow);
  }

  async deleteFolderRecord(id: string): Promise<void> {
    await this.db.deleteFrom('data_folders').where('id', '=', id).execute();
  }

  async orphanAlgorithmSpaces(): Promise<string[]> {
    const live = this.db.selectFrom('algorithms').select('id');
    const files = await this.db
      .selectFrom('data_files')
      .select('space_id')
      .distinct()
      .where('space', '=', 'algo')
      .where('space_id', 'not in', live)
      .execute();
    const folders = await this.db
      .selectFrom('data_folders')
      .select('space_id')
      .distinct()
      .where('space', '=', 'algo')
      .where('space_id', 'not in', live)
      .execute();
    return [...new Set([...files, ...folders].map((r) => r.space_id))];
  }

  async unreferencedBlobKeys(keys: string[]): Promise<string[]> {
    if (keys.length === 0) return [];
    const rows = await this.db.selectFrom('data_files').select('blob_key').where('blob_key', 'in', keys).execute();
    const named = new Set(rows.map((r) => r.blob_key));
    return keys.filter((k) => !named.has(k));
  }
}

type Column = 'folder' | 'path';
type Eb = ExpressionBuilder<Database, 'data_files'> | ExpressionBuilder<Database, 'data_folders'>;

/** The rows of one space (both tables key their rows by the space's kind and id). */
function inSpace(space: SpaceRef): Expression<SqlBool> {
  return sql<SqlBool>`(${sql.ref('space')} = ${space.kind} and ${sql.ref('space_id')} = ${space.id})`;
}

/** `column` is `path` or a path below it; '' (the space root) matches everything. */
function atOrBelow(eb: Eb, column: Column, path: string): Expression<SqlBool> {
  if (path === '') return sql<SqlBool>`1 = 1`;
  return sql<SqlBool>`(${sql.ref(column)} = ${path} or ${below(eb, column, path)})`;
}

function below(_eb: Eb, column: Column, path: string): Expression<SqlBool> {
  const prefix = `${path}/`;
  // Both databases count characters (code points), not UTF-16 units.
  return sql<SqlBool>`substr(${sql.ref(column)}, 1, ${sql.lit([...prefix].length)}) = ${prefix}`;
}

function folderFromRow(r: Selectable<DataFoldersTable>): FolderRecord {
  return {
    id: r.id,
    space: { kind: r.space, id: r.space_id },
    accountId: r.account_id,
    path: r.path,
    parent: r.parent,
    name: r.name,
    aclRead: r.acl_read === null ? null : (JSON.parse(r.acl_read) as string[]),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function fileFromRow(r: Selectable<DataFilesTable>): FileRecord {
  return {
    space: { kind: r.space, id: r.space_id },
    accountId: r.account_id,
    folder: r.folder,
    name: r.name,
    size: Number(r.size),
    lastModified: r.last_modified,
    blobKey: r.blob_key,
  };
}
