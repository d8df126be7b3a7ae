/**
 * `algohost backup <dir>` and `algohost restore <dir>` (docs/operators-guide.md, "Failures and backups"): a consistent snapshot
 * of a node's state while it runs, and bringing it back on a new data directory.
 *
 * What a snapshot holds, in the order it is taken:
 * 1. the database: SQLite through its online backup API (a consistent copy while the node
 *    writes), PostgreSQL through `pg_dump` of an exported snapshot (consistent too);
 * 2. the Git repositories, copied after the database, so every commit, tag and version
 *    repository the database names is already there (a push after the snapshot only adds);
 *    each copy must pass `git fsck`, else it is copied again (a repack was moving objects);
 * 3. build artifacts, dependency layers and logs (immutable once in place), so every build the
 *    database calls succeeded answers calls without being rebuilt;
 * 4. hosted data on local disk (an S3 bucket is backed up by the bucket's own means): the
 *    blobs the database snapshot names, hard-linked around the moment of that snapshot; one
 *    missing all the same makes the whole snapshot start again;
 * 5. the cluster key (it decrypts broker credentials) and the initial admin key file.
 * A `backup.json` written last marks the snapshot complete; restore refuses one without it.
 *
 * A snapshot holds the session signing secret, the cluster key and every tenant's source and
 * data, so it is the service user's alone: the target is a directory of that uid with no group
 * or other bits (created 0700 when new; an existing one that is not, or a symbolic link, is
 * refused), the database copy and the key files are created 0600 before a byte is written, and
 * the process's umask is 077 while it runs (pg_dump, the SQLite journal, every directory).
 */
import { execFile, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import type { Config } from '../config/config.js';
import { predictableGitEnv } from '../lib/git-env.js';

const exec = promisify(execFile);
const MANIFEST = 'backup.json';
const FORMAT = 1;
/** Attempts at a copy that must check out (a repository passing fsck, every blob present). */
const ATTEMPTS = 5;

export interface BackupManifest {
  format: number;
  created_at: string;
  database: 'sqlite' | 'postgres';
  blob_store: 'disk' | 's3';
  repositories: number;
  blobs: number;
}

export class BackupError extends Error {}

/** Writes a snapshot of the node configured by `config` into `dir` (new or empty). */
export async function backup(config: Config, dir: string, log: (line: string) => void = () => {}): Promise<BackupManifest> {
  // Whatever this process or its children (pg_dump, cp, git) create is the service user's only.
  const umask = process.umask(0o077);
  try {
    await privateTarget(dir);
    for (let attempt = 1; ; attempt++) {
      try {
        return await snapshot(config, dir, log);
      } catch (err) {
        // A blob the database snapshot names was replaced and deleted before its copy: start over
        // from a newer snapshot (the repositories too, so they are never older than the database).
        if (!(err instanceof MissingBlobs) || attempt >= ATTEMPTS) throw err;
        log(`${err.message}; starting again`);
        for (const entry of await fs.readdir(dir)) await fs.rm(path.join(dir, entry), { recursive: true, force: true });
      }
    }
  } finally {
    process.umask(umask);
  }
}

class MissingBlobs extends BackupError {}

async function snapshot(config: Config, dir: string, log: (line: string) => void): Promise<BackupManifest> {
  const database = config.databaseUrl ? 'postgres' : 'sqlite';
  // Hosted data is linked (instant, same file system) just before and just after the database
  // snapshot: a blob the snapshot names existed at that moment, so one of the two holds it
  // unless it was both written and deleted within that moment.
  const blobRoot = config.blobStore === 'disk' ? (config.blobDir ?? path.join(config.dataDir, 'blobs')) : undefined;
  const staging = blobRoot ? path.join(blobRoot, 'tmp', `backup-${crypto.randomUUID()}`) : undefined;
  try {
    const linkBlobs = async () => {
      if (blobRoot && staging) await linkTree(path.join(blobRoot, 'objects'), staging);
    };
    await linkBlobs();
    log(`database (${database})…`);
    let keys: string[];
    if (config.databaseUrl) {
      // pg_dump truncates the file it is given and keeps its mode.
      await createPrivateFile(path.join(dir, 'database.sql'));
      keys = await pgDump(config.databaseUrl, path.join(dir, 'database.sql'), linkBlobs);
    } else {
      const live = new SQLite(path.join(config.dataDir, 'algohost.sqlite'), { readonly: true, fileMustExist: true });
      try {
        // An empty file is an empty database to SQLite: the copy is written into this 0600 file
        // (its journal takes the same mode).
        await createPrivateFile(path.join(dir, 'algohost.sqlite'));
        await live.backup(path.join(dir, 'algohost.sqlite'));
      } finally {
        live.close();
      }
      await linkBlobs();
      const copy = new SQLite(path.join(dir, 'algohost.sqlite'), { readonly: true });
      try {
        keys = (copy.prepare('SELECT blob_key FROM data_files').all() as { blob_key: string }[]).map((r) => r.blob_key);
      } finally {
        copy.close();
      }
    }

    const repositories = await copyRepositories(path.join(config.dataDir, 'repositories'), path.join(dir, 'repositories'), log);
    for (const part of ['artifacts', 'layers', 'logs']) {
      const from = path.join(config.dataDir, 'builds', part);
      if (await exists(from)) {
        log(`builds/${part}…`);
        await fs.mkdir(path.join(dir, 'builds'), { recursive: true });
        await cp(from, path.join(dir, 'builds', part));
      }
    }

    let blobs = 0;
    if (staging) {
      log('hosted data…');
      blobs = await copyBlobs(staging, dir, keys);
    }
    for (const file of ['cluster-key', 'initial-admin-key']) {
      // Read and written, not copied: a copy would take the original's mode, whatever it is.
      if (await exists(path.join(config.dataDir, file)))
        await fs.writeFile(path.join(dir, file), await fs.readFile(path.join(config.dataDir, file)), { mode: 0o600, flag: 'wx' });
    }
    const manifest: BackupManifest = {
      format: FORMAT,
      created_at: new Date().toISOString(),
      database,
      blob_store: config.blobStore,
      repositories,
      blobs,
    };
    await fs.writeFile(path.join(dir, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
    return manifest;
  } finally {
    if (staging) await fs.rm(staging, { recursive: true, force: true });
  }
}

/** Hard-links every file under `from` to the same place under `to` (a file already there, or gone meanwhile, is skipped). */
async function linkTree(from: string, to: string): Promise<void> {
  let entries: import('node:fs').Dirent[];
  try {
    entries = await fs.readdir(from, { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  await fs.mkdir(to, { recursive: true, mode: 0o700 });
  for (const e of entries) {
    if (e.isDirectory()) await linkTree(path.join(from, e.name), path.join(to, e.name));
    else if (e.isFile()) {
      await fs.link(path.join(from, e.name), path.join(to, e.name)).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'EEXIST' && err.code !== 'ENOENT') throw err;
      });
    }
  }
}

/**
 * Brings the snapshot in `dir` back for the node configured by `config`: its data directory
 * must be new or empty, and so must its PostgreSQL database. Start the node afterwards.
 */
export async function restore(config: Config, dir: string, log: (line: string) => void = () => {}): Promise<BackupManifest> {
  let manifest: BackupManifest;
  try {
    manifest = JSON.parse(await fs.readFile(path.join(dir, MANIFEST), 'utf8')) as BackupManifest;
  } catch {
    throw new BackupError(`${dir} holds no complete backup (no ${MANIFEST}): was the backup interrupted?`);
  }
  if (manifest.format !== FORMAT) throw new BackupError(`${dir} is a backup of format ${manifest.format}; this algohost reads ${FORMAT}`);
  if (manifest.database !== (config.databaseUrl ? 'postgres' : 'sqlite')) {
    throw new BackupError(
      `${dir} is a backup of a ${manifest.database} node; set ALGOHOST_DATABASE_URL ${manifest.database === 'postgres' ? 'to an empty PostgreSQL database' : 'unset (SQLite)'} to restore it`,
    );
  }
  await emptyDirectory(config.dataDir, 'restore');
  await fs.chmod(config.dataDir, 0o711);
  log('database…');
  if (config.databaseUrl) await pgRestore(config.databaseUrl, path.join(dir, 'database.sql'));
  else await cp(path.join(dir, 'algohost.sqlite'), path.join(config.dataDir, 'algohost.sqlite'));
  for (const part of ['repositories', 'builds', 'cluster-key', 'initial-admin-key']) {
    if (await exists(path.join(dir, part))) {
      log(`${part}…`);
      await cp(path.join(dir, part), path.join(config.dataDir, part));
    }
  }
  if (manifest.blob_store === 'disk' && (await exists(path.join(dir, 'blobs')))) {
    if (config.blobStore !== 'disk')
      throw new BackupError('the backup holds hosted data on disk; restore it with ALGOHOST_BLOB_STORE=disk');
    log('hosted data…');
    const target = config.blobDir ?? path.join(config.dataDir, 'blobs');
    await fs.mkdir(path.dirname(target), { recursive: true });
    await cp(path.join(dir, 'blobs'), target);
  }
  return manifest;
}

async function copyRepositories(from: string, to: string, log: (line: string) => void): Promise<number> {
  if (!(await exists(from))) return 0;
  await fs.mkdir(to, { recursive: true, mode: 0o700 });
  const repos = (await fs.readdir(from)).filter((r) => r.endsWith('.git'));
  log(`${repos.length} repositories…`);
  for (const repo of repos) {
    for (let attempt = 1; ; attempt++) {
      await fs.rm(path.join(to, repo), { recursive: true, force: true });
      await cp(path.join(from, repo), path.join(to, repo));
      // A push's quarantined objects are not part of the repository yet.
      for (const entry of await fs.readdir(path.join(to, repo, 'objects'))) {
        if (entry.startsWith('incoming-') || entry.startsWith('tmp_objdir'))
          await fs.rm(path.join(to, repo, 'objects', entry), { recursive: true });
      }
      const fsck = await exec('git', ['fsck', '--no-dangling', '--connectivity-only'], {
        cwd: path.join(to, repo),
        env: predictableGitEnv(),
      }).then(
        () => undefined,
        (err: { stderr?: string }) => err.stderr ?? String(err),
      );
      if (fsck === undefined) break;
      if (attempt >= ATTEMPTS) throw new BackupError(`the copy of repository ${repo} does not pass git fsck: ${fsck.trim()}`);
    }
  }
  return repos.length;
}

/**
 * Copies exactly the blobs the database snapshot names (`keys`) from the linked copy `root`
 * (uploads in flight and blobs no record names stay behind).
 */
async function copyBlobs(root: string, dir: string, keys: string[]): Promise<number> {
  const target = path.join(dir, 'blobs', 'objects');
  await fs.mkdir(target, { recursive: true, mode: 0o700 });
  await fs.chmod(path.join(dir, 'blobs'), 0o700);
  let missing = 0;
  for (const key of keys) {
    const parts = key.split('/');
    if (parts.some((p) => p === '' || p === '.' || p === '..'))
      throw new BackupError(`the database names an invalid blob key ${JSON.stringify(key)}`);
    await fs.mkdir(path.join(target, ...parts.slice(0, -1)), { recursive: true, mode: 0o700 });
    await fs.copyFile(path.join(root, ...parts), path.join(target, ...parts)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
      missing++;
    });
  }
  if (missing) throw new MissingBlobs(`${missing} hosted files were replaced while they were copied`);
  return keys.length;
}

/**
 * `pg_dump` of one exported snapshot (a repeatable-read transaction held open meanwhile), and
 * the blob keys as that same snapshot sees them; `atSnapshot` runs right after it is taken.
 */
async function pgDump(url: string, file: string, atSnapshot: () => Promise<void>): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const snapshot = (await client.query<{ id: string }>('SELECT pg_export_snapshot() AS id')).rows[0]!.id;
    await atSnapshot();
    const keys = (await client.query<{ blob_key: string }>('SELECT blob_key FROM data_files')).rows.map((r) => r.blob_key);
    await run('pg_dump', ['--no-owner', '--no-privileges', '--format=plain', '--snapshot', snapshot, '--file', file, '--dbname', url]);
    await client.query('COMMIT');
    return keys;
  } finally {
    await client.end();
  }
}

async function pgRestore(url: string, file: string): Promise<void> {
  await run('psql', ['--quiet', '--no-psqlrc', '-v', 'ON_ERROR_STOP=1', '--single-transaction', '--file', file, '--dbname', url]);
}

/** `cp -a`: keeps modes and owners (artifacts are root's, layers the sandbox user's), links as links. */
async function cp(from: string, to: string): Promise<void> {
  await run('cp', ['-a', '--', from, to]);
}

async function run(cmd: string, args: string[]): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', (e) => reject(new BackupError(`${cmd} could not run: ${e.message}`)));
    child.on('close', (code) => (code === 0 ? resolve() : reject(new BackupError(`${cmd} failed (exit ${code}): ${err.trim()}`))));
  });
}

/**
 * The backup target: created 0700 when new; an existing one must be an empty directory (not a
 * symbolic link) of this process's uid that neither its group nor others may enter or list,
 * else a local user could read the snapshot, or have planted the directory to read it later.
 */
async function privateTarget(dir: string): Promise<void> {
  await fs.mkdir(path.dirname(dir), { recursive: true, mode: 0o700 });
  await fs.mkdir(dir, { mode: 0o700 }).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw err;
  });
  const st = await fs.lstat(dir);
  const refuse = (why: string, fix = 'give a new directory (it is created 0700)') =>
    new BackupError(`the backup target ${dir} ${why}, and a backup holds every secret of the node: ${fix}`);
  if (st.isSymbolicLink()) throw refuse('is a symbolic link');
  if (!st.isDirectory()) throw refuse('is not a directory');
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) throw refuse(`belongs to uid ${st.uid}, not to this service's uid ${uid}`);
  if (st.mode & 0o077)
    throw refuse(
      `may be read by its group or others (mode ${(st.mode & 0o777).toString(8).padStart(4, '0')})`,
      `chmod 700 it, or give a new directory`,
    );
  await emptyDirectory(dir, 'backup');
}

/** An empty file of mode 0600 that did not exist (a planted file or link is refused). */
async function createPrivateFile(file: string): Promise<void> {
  await (await fs.open(file, 'wx', 0o600)).close();
}

async function emptyDirectory(dir: string, what: string): Promise<void> {
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const entries = await fs.readdir(dir);
  if (entries.length)
    throw new BackupError(`the ${what} target ${dir} is not empty (${entries.slice(0, 3).join(', ')}…): give a new directory`);
}

async function exists(p: string): Promise<boolean> {
  return fs.lstat(p).then(
    () => true,
    () => false,
  );
}
