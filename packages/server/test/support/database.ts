/** A database of its own for a store-level test: an empty SQLite file or a fresh PostgreSQL database. */
import fs from 'node:fs';
import path from 'node:path';
import { type Db, openDatabase } from '../../src/storage/database.js';
import { createPostgresDatabase, type DatabaseKind, makeTempDir } from './server.js';

export interface OpenedDb {
  db: Db;
  /** Closes the connection and removes the database. */
  close(): Promise<void>;
}

/** An empty database of the given kind (no migrations applied), and a function that removes it. */
export async function emptyDatabase(kind: DatabaseKind): Promise<OpenedDb> {
  if (kind === 'postgres') {
    const pg = await createPostgresDatabase();
    const db = openDatabase({ url: pg.url, sqlitePath: '' });
    return {
      db,
      close: async () => {
        await db.destroy();
        await pg.drop();
      },
    };
  }
  const dir = await makeTempDir('algohost-store-');
  const db = openDatabase({ url: undefined, sqlitePath: path.join(dir, 'store.sqlite') });
  return {
    db,
    close: async () => {
      await db.destroy();
      await fs.promises.rm(dir, { recursive: true, force: true });
    },
  };
}
