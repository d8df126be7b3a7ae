/**
 * Opens the metadata database: a SQLite file (embedded default) or PostgreSQL (cluster mode),
 * and brings its schema up to date with the numbered, forward-only migrations.
 */
import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import { Migrator, type Migration, type MigrationProvider } from 'kysely/migration';
import pg from 'pg';
import { Errors } from '../domain/errors.js';
import type { Database } from './schema.js';
import * as m0001 from './migrations/0001-initial.js';
import * as m0002 from './migrations/0002-builds.js';
import * as m0003 from './migrations/0003-versions.js';
import * as m0004 from './migrations/0004-data.js';
import * as m0005 from './migrations/0005-async-requests.js';
import * as m0006 from './migrations/0006-invitations.js';
import * as m0007 from './migrations/0007-event-flows.js';
import * as m0008 from './migrations/0008-scm.js';
import * as m0009 from './migrations/0009-audit-log.js';
import * as m0010 from './migrations/0010-leases.js';
import * as m0011 from './migrations/0011-insights.js';
import * as m0012 from './migrations/0012-data-reservations.js';
import * as m0013 from './migrations/0013-blob-index-digests.js';

const MIGRATIONS: Record<string, Migration> = {
  '0001-initial': m0001,
  '0002-builds': m0002,
  '0003-versions': m0003,
  '0004-data': m0004,
  '0005-async-requests': m0005,
  '0006-invitations': m0006,
  '0007-event-flows': m0007,
  '0008-scm': m0008,
  '0009-audit-log': m0009,
  '0010-leases': m0010,
  '0011-insights': m0011,
  '0012-data-reservations': m0012,
  '0013-blob-index-digests': m0013,
};

class StaticMigrationProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return MIGRATIONS;
  }
}

export type Db = Kysely<Database>;

export interface OpenDatabaseOptions {
  /** postgres://… for PostgreSQL; undefined for SQLite at `sqlitePath`. */
  url: string | undefined;
  sqlitePath: string;
}

export function openDatabase(opts: OpenDatabaseOptions): Db {
  if (opts.url) {
    const pool = new pg.Pool({ connectionString: opts.url, max: 10 });
    // An idle connection dropped by the server (restart, admin action) must not crash the
    // process; the pool replaces it on the next query.
    pool.on('error', () => {});
    return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  }
  fs.mkdirSync(path.dirname(opts.sqlitePath), { recursive: true });
  const sqlite = new SQLite(opts.sqlitePath);
  fs.chmodSync(opts.sqlitePath, 0o600); // the WAL and shared-memory files inherit this mode
  // WAL lets readers proceed during a write; foreign keys make deletes cascade as on PostgreSQL.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  return new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
}

/** A SQLite database in memory, gone with the process: for tools that build the services without a node (the OpenAPI document). */
export function openMemoryDatabase(): Db {
  const sqlite = new SQLite(':memory:');
  sqlite.pragma('foreign_keys = ON');
  return new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
}

export async function migrateToLatest(db: Db): Promise<void> {
  const migrator = new Migrator({ db, provider: new StaticMigrationProvider() });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    throw new Error(`database migration ${failed?.migrationName ?? ''} failed: ${String(error)}`);
  }
}

/**
 * PostgreSQL text cannot hold NUL characters and fails the whole query on one; names and keys
 * never contain NUL (they are validated), so a lookup with one matches nothing on any database.
 */
export const hasNul = (value: string | undefined): boolean => value !== undefined && value.includes('\u0000');

/** A paging marker that was never issued: it decodes to a key holding NUL. */
export const invalidMarker = () => Errors.invalidMarker({});

/** True when the error is a unique-constraint violation on either database. */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  return e?.code === '23505' || e?.code === 'SQLITE_CONSTRAINT_UNIQUE' || e?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}
