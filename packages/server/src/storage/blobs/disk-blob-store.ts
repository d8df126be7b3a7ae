/**
 * Blobs as files under one directory (the embedded default): `<root>/objects/<key>`. An upload
 * is written to `<root>/tmp/` (the same file system), flushed, then renamed over the target, so
 * readers see the old file or the whole new one; a failed upload removes its temporary file.
 * Readers hold an open descriptor, so a replace or delete during a read does not cut it short.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import { assertBlobKey, type BlobContent, type BlobInfo, type BlobPage, type BlobStore } from '../../domain/data/ports.js';

export class DiskBlobStore implements BlobStore {
  private readonly objects: string;
  private readonly tmp: string;

  constructor(readonly root: string) {
    this.objects = path.join(root, 'objects');
    this.tmp = path.join(root, 'tmp');
  }

  /**
   * Creates the directories (0700: sandboxes and other users never see blobs) and removes
   * temporary files a crash left behind. One node owns a disk store, so none is in use now.
   */
  async open(): Promise<void> {
    await fsp.mkdir(this.objects, { recursive: true, mode: 0o700 });
    await fsp.chmod(this.objects, 0o700);
    await fsp.rm(this.tmp, { recursive: true, force: true });
    await fsp.mkdir(this.tmp, { mode: 0o700 });
  }

  async put(key: string, body: Readable): Promise<BlobInfo> {
    assertBlobKey(key);
    const target = this.pathOf(key);
    const tmp = path.join(this.tmp, crypto.randomUUID());
    // flush: fsync before close, so the rename never publishes data still only in memory.
    const out = fs.createWriteStream(tmp, { flags: 'wx', mode: 0o600, flush: true });
    try {
      await pipeline(body, out);
      const { mtime } = await fsp.stat(tmp);
      await fsp.mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
      await fsp.rename(tmp, target);
      await syncDirectory(path.dirname(target));
      return { key, size: out.bytesWritten, lastModified: mtime };
    } catch (err) {
      // The file may still be opening when the body fails: remove it only once it is closed.
      if (!out.closed) await new Promise<void>((resolve) => out.once('close', () => resolve()));
      await fsp.rm(tmp, { force: true });
      throw err;
    }
  }

  async get(key: string): Promise<BlobContent | undefined> {
    assertBlobKey(key);
    let handle: fsp.FileHandle;
    try {
      handle = await fsp.open(this.pathOf(key), 'r');
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
    try {
      const st = await handle.stat();
      if (!st.isFile()) {
        await handle.close();
        return undefined;
      }
      return { key, size: st.size, lastModified: st.mtime, body: handle.createReadStream() };
    } catch (err) {
      await handle.close();
      throw err;
    }
  }

  async stat(key: string): Promise<BlobInfo | undefined> {
    assertBlobKey(key);
    try {
      const st = await fsp.stat(this.pathOf(key));
      return st.isFile() ? { key, size: st.size, lastModified: st.mtime } : undefined;
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
  }

  async list(prefix: string, opts: { after?: string; limit?: number } = {}): Promise<BlobPage> {
    const limit = opts.limit ?? 1000;
    const dirKey = prefix.slice(0, prefix.lastIndexOf('/') + 1);
    if (dirKey) assertBlobKey(dirKey.slice(0, -1));
    const keys: string[] = [];
    await this.walk(dirKey, (key) => {
      if (key.startsWith(prefix) && (opts.after === undefined || key > opts.after)) keys.push(key);
    });
    keys.sort();
    const page = keys.slice(0, limit);
    const items: BlobInfo[] = [];
    for (const key of page) {
      const info = await this.stat(key);
      if (info) items.push(info);
    }
    return { items, next: keys.length > limit ? page[page.length - 1]! : null };
  }

  async delete(key: string): Promise<void> {
    assertBlobKey(key);
    await fsp.rm(this.pathOf(key), { force: true });
    // Remove directories the delete emptied, up to objects/ itself.
    let dir = path.dirname(this.pathOf(key));
    while (dir.startsWith(this.objects + path.sep)) {
      try {
        await fsp.rmdir(dir);
      } catch {
        break; // not empty (or already gone): stop climbing
      }
      dir = path.dirname(dir);
    }
  }

  async close(): Promise<void> {}

  private pathOf(key: string): string {
    return path.join(this.objects, ...key.split('/'));
  }

  private async walk(dirKey: string, visit: (key: string) => void): Promise<void> {
    let entries: fs.Dirent[];
    try {
      entries = await fsp.readdir(path.join(this.objects, ...dirKey.split('/').filter(Boolean)), { withFileTypes: true });
    } catch (err) {
      if (isMissing(err) || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return;
      throw err;
    }
    for (const e of entries) {
      if (e.isDirectory()) await this.walk(`${dirKey}${e.name}/`, visit);
      else if (e.isFile()) visit(`${dirKey}${e.name}`);
    }
  }
}

/** Makes a rename in `dir` durable (the directory entry, not only the file, must reach the disk). */
async function syncDirectory(dir: string): Promise<void> {
  const handle = await fsp.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

const isMissing = (err: unknown) => (err as NodeJS.ErrnoException).code === 'ENOENT';
