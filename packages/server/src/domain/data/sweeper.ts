/**
 * Removing hosted data nobody will read again: `.algo/…/temp` files past their lifetime, the
 * `.session` spaces of ended request trees, the spaces of deleted algorithms and accounts, and
 * blobs no record names.
 */
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import type { DataFiles } from './files.js';
import type { BlobStore, DataStore } from './ports.js';
import { RESERVATION_STALE_MS } from './quota-reservation.js';

export interface SweepResult {
  tempFiles: number;
  sessionFiles: number;
  orphanFiles: number;
  folders: number;
}

/**
 * Call keys live at most the longest call timeout plus a minute (3000 s + 60 s), so a session
 * file untouched for longer belongs to a request tree that has ended.
 */
const SESSION_MAX_AGE_MS = 2 * 60 * 60 * 1000;
/** Blobs no record names are deleted only when older than this: an upload may still be finishing. */
const ORPHAN_BLOB_MIN_AGE_MS = 60 * 60 * 1000;
const SWEEP_BATCH = 500;

export class DataSweeper {
  private lastGarbageCollection = 0;

  constructor(
    private readonly store: DataStore,
    private readonly blobs: BlobStore,
    private readonly files: DataFiles,
    /** How long a file under `.algo/…/temp` lives after its last change. */
    private readonly tempTtlMs: number,
    private readonly clock: Clock,
    /** Sessions that stored something through this node (DataService says why). */
    private readonly sessionsWithData: Set<string>,
    private readonly log: Logger,
  ) {}

  /** See DataService.sweep. */
  async sweep(opts: { collectGarbage?: boolean; signal?: AbortSignal } = {}): Promise<SweepResult> {
    const { signal } = opts;
    const now = this.clock().getTime();
    const result: SweepResult = { tempFiles: 0, sessionFiles: 0, orphanFiles: 0, folders: 0 };
    const tempCutoff = new Date(now - this.tempTtlMs).toISOString();
    const sessionCutoff = new Date(now - SESSION_MAX_AGE_MS).toISOString();
    result.tempFiles = await this.expireFiles('algo', 'temp', tempCutoff);
    signal?.throwIfAborted();
    result.sessionFiles = await this.expireFiles('session', '', sessionCutoff);
    signal?.throwIfAborted();
    result.folders += await this.removeEmptyFolders('algo', 'temp', tempCutoff);
    result.folders += await this.removeEmptyFolders('session', '', sessionCutoff);
    await this.store.deleteStaleReservations(new Date(now - RESERVATION_STALE_MS).toISOString());
    for (const algorithmId of await this.store.orphanAlgorithmSpaces()) {
      signal?.throwIfAborted();
      result.orphanFiles += await this.dropSpace({ kind: 'algo', id: algorithmId });
    }
    signal?.throwIfAborted();
    if (opts.collectGarbage || now - this.lastGarbageCollection >= ORPHAN_BLOB_MIN_AGE_MS) {
      this.lastGarbageCollection = now;
      await this.collectGarbage(now - ORPHAN_BLOB_MIN_AGE_MS);
    }
    return result;
  }

  /** The request tree's `.session` space is deleted when its outermost call ends (in the background). */
  sessionEnded(session: string): void {
    if (!this.sessionsWithData.delete(session)) return;
    this.dropSpace({ kind: 'session', id: session }).catch((err: unknown) =>
      this.log.warn({ err, session }, 'could not delete data://.session; the sweep retries'),
    );
  }

  /** Deletes every file and folder charged to the account (the account is being deleted). */
  async deleteAllOf(accountId: string): Promise<void> {
    const files = await this.store.filesOfAccount(accountId);
    await this.store.deleteAllOfAccount(accountId);
    for (const f of files) await this.files.discard(f.blobKey);
  }

  /** Blobs older than `before` (ms) that no file record names. */
  async collectGarbage(before: number): Promise<number> {
    let removed = 0;
    let after: string | undefined;
    for (;;) {
      const page = await this.blobs.list('data/', { after, limit: SWEEP_BATCH });
      const old = page.items.filter((b) => b.lastModified.getTime() < before).map((b) => b.key);
      for (const key of old.length ? await this.store.unreferencedBlobKeys(old) : []) {
        await this.files.discard(key);
        removed++;
      }
      if (!page.next) return removed;
      after = page.next;
    }
  }

  private async expireFiles(kind: 'algo' | 'session', root: string, before: string): Promise<number> {
    let n = 0;
    for (;;) {
      const files = await this.store.filesModifiedBefore(kind, root, before, SWEEP_BATCH);
      for (const f of files) {
        await this.store.deleteFile(f.space, f.folder, f.name);
        await this.files.discard(f.blobKey);
      }
      n += files.length;
      if (files.length < SWEEP_BATCH) return n;
    }
  }

  /** Deepest first, so a folder emptied by removing its subfolders goes in the same sweep. */
  private async removeEmptyFolders(kind: 'algo' | 'session', root: string, before: string): Promise<number> {
    const folders = await this.store.foldersCreatedBefore(kind, root, before);
    folders.sort((a, b) => b.path.split('/').length - a.path.split('/').length);
    let n = 0;
    for (const f of folders) {
      if (await this.store.hasChildren(f.space, f.path)) continue;
      await this.store.deleteFolderRecord(f.id);
      n++;
    }
    return n;
  }

  private async dropSpace(space: { kind: 'algo' | 'session'; id: string }): Promise<number> {
    const files = await this.store.filesUnder(space, '');
    await this.store.deleteTree(space, '');
    for (const f of files) await this.files.discard(f.blobKey);
    return files.length;
  }
}
