/**
 * Repository sizes and the limits on them: what each repository holds on disk (recorded after
 * each change), and whether a push or a fetch from a provider keeps its repository and its
 * owner's repositories within their limits, counting the transfers accepted and not yet landed.
 */
import crypto from 'node:crypto';
import type { Dirent } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';

/** Inside each bare repository: its size in bytes as measured after its last change. */
const SIZE_FILE = 'algohost-size';

/** Size limits of repositories, in bytes; 0 means no limit. */
export interface RepositoryLimits {
  /** One push: the bytes of the request that carries the pack. */
  maxPushBytes: number;
  /** One algorithm's repository on disk. */
  maxRepositoryBytes: number;
  /** All of one account's algorithm repositories together. */
  maxAccountBytes: number;
}

export const NO_LIMITS: RepositoryLimits = { maxPushBytes: 0, maxRepositoryBytes: 0, maxAccountBytes: 0 };

/** The push being checked: which repository, whose, and how it is named to the pusher. */
export interface IncomingPush {
  pushId: string;
  algorithmId: string;
  ownerId: string;
  ownerName: string;
  name: string;
}

/** The repository a provider's branch is fetched into, and whose it is (its limits are checked like a push's). */
export type IncomingFetch = Omit<IncomingPush, 'pushId'>;

export class RepositorySizes {
  /** Bytes accepted by a pre-receive check whose push has not ended yet (or a fetch not landed yet), by push or fetch id. */
  private readonly pending = new Map<string, { algorithmId: string; ownerId: string; bytes: number }>();

  constructor(
    /** The repository of an algorithm. */
    private readonly pathOf: (algorithmId: string) => string,
    readonly limits: RepositoryLimits,
    /** The ids of every algorithm an account owns (their repositories count towards its limit). */
    private readonly algorithmsOf: (ownerId: string) => Promise<string[]>,
  ) {}

  /**
   * Decides, in the pre-receive hook (objects received and quarantined, no ref updated yet),
   * whether the repository and the account stay within their limits once the push lands.
   * Returns the refusal to show the pusher, or undefined; an accepted push holds its bytes as
   * pending until `pushEnded`, so concurrent pushes of one account cannot pass together.
   */
  async checkIncoming(push: IncomingPush, quarantine: string | undefined): Promise<string | undefined> {
    const { maxRepositoryBytes, maxAccountBytes } = this.limits;
    if (maxRepositoryBytes === 0 && maxAccountBytes === 0) return undefined;
    const incoming = quarantine ? await treeBytes(quarantine) : 0;
    if (incoming === 0) return undefined;
    const over = await this.overLimits(push, incoming, 'push');
    if (over) return `algohost: push refused: ${over}. Nothing was stored.`;
    this.hold(push.pushId, push, incoming);
    return undefined;
  }

  /**
   * Which limit `incoming` new bytes would break in the repository of `into` or in its owner's
   * repositories together (counting other pushes and fetches accepted and not yet landed), or
   * undefined when both hold. `what` names the transfer in the answer ("this push adds …").
   */
  async overLimits(into: IncomingFetch, incoming: number, what: 'push' | 'fetch'): Promise<string | undefined> {
    const { maxRepositoryBytes, maxAccountBytes } = this.limits;
    const pendingFor = (match: (p: { algorithmId: string; ownerId: string }) => boolean) =>
      [...this.pending.values()].filter(match).reduce((sum, p) => sum + p.bytes, 0);
    const label = `${into.ownerName}/${into.name}`;

    const repoBytes = (await this.sizeOf(into.algorithmId)) + pendingFor((p) => p.algorithmId === into.algorithmId) + incoming;
    if (maxRepositoryBytes > 0 && repoBytes > maxRepositoryBytes) {
      return (
        `the repository of ${label} would hold ${formatBytes(repoBytes)} (this ${what} adds ${formatBytes(incoming)}), ` +
        `over the repository size limit of ${formatBytes(maxRepositoryBytes)} (${maxRepositoryBytes} bytes)`
      );
    }
    if (maxAccountBytes > 0) {
      let accountBytes = repoBytes + pendingFor((p) => p.ownerId === into.ownerId && p.algorithmId !== into.algorithmId);
      for (const id of await this.algorithmsOf(into.ownerId)) {
        if (id !== into.algorithmId) accountBytes += await this.recordedSize(id);
      }
      if (accountBytes > maxAccountBytes) {
        return (
          `the repositories of ${into.ownerName} would hold ${formatBytes(accountBytes)} together ` +
          `(this ${what} adds ${formatBytes(incoming)}), over the account's repository size limit of ${formatBytes(maxAccountBytes)} ` +
          `(${maxAccountBytes} bytes)`
        );
      }
    }
    return undefined;
  }

  /** Holds the bytes of an accepted transfer as pending until `release`. */
  hold(id: string, into: IncomingFetch, bytes: number): void {
    this.pending.set(id, { algorithmId: into.algorithmId, ownerId: into.ownerId, bytes });
  }

  /** Drops a transfer's pending bytes; whether it held any. */
  release(id: string): boolean {
    return this.pending.delete(id);
  }

  /** After `git receive-pack` has exited: records the repository's new size, then drops the push's pending bytes. */
  async pushEnded(pushId: string, algorithmId: string): Promise<void> {
    try {
      await this.recordSize(algorithmId);
    } finally {
      this.pending.delete(pushId);
    }
  }

  /** The repository's size on disk now (every file, not counting pushes still in quarantine). */
  async sizeOf(algorithmId: string): Promise<number> {
    return treeBytes(
      this.pathOf(algorithmId),
      (dir, name) => (dir === 'objects' && QUARANTINE.test(name)) || (dir === '' && name.startsWith(SIZE_FILE)),
    );
  }

  /** The size recorded after the repository's last push (measured and recorded now if missing). */
  async recordedSize(algorithmId: string): Promise<number> {
    try {
      const n = Number(await fs.readFile(path.join(this.pathOf(algorithmId), SIZE_FILE), 'utf8'));
      if (Number.isSafeInteger(n) && n >= 0) return n;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    return this.recordSize(algorithmId);
  }

  /** Measures the repository and records its size. */
  async recordSize(algorithmId: string): Promise<number> {
    const dir = this.pathOf(algorithmId);
    const bytes = await this.sizeOf(algorithmId);
    const tmp = path.join(dir, `${SIZE_FILE}.${crypto.randomUUID()}`);
    try {
      await fs.writeFile(tmp, `${bytes}\n`);
      await fs.rename(tmp, path.join(dir, SIZE_FILE));
    } catch (err) {
      await fs.rm(tmp, { force: true });
      // A deleted repository has nothing to record.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    return bytes;
  }
}

/** Quarantine directories of pushes in progress (`objects/tmp_objdir-incoming-…`; `incoming-…` in older git). */
const QUARANTINE = /^(tmp_objdir-)?incoming-/;

/** Whether a directory name (inside `objects/`) is the quarantine of a push. */
export function isQuarantineName(name: string): boolean {
  return QUARANTINE.test(name);
}

/**
 * Bytes of every regular file under `root` (symbolic links are not followed); `skip` leaves
 * out an entry, given its directory relative to `root` and its name. A missing root is 0.
 */
export async function treeBytes(root: string, skip: (dir: string, name: string) => boolean = () => false): Promise<number> {
  let total = 0;
  const walk = async (rel: string): Promise<void> => {
    let entries: Dirent[];
    try {
      entries = await fs.readdir(path.join(root, rel), { withFileTypes: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    for (const e of entries) {
      if (skip(rel, e.name)) continue;
      const child = rel ? path.join(rel, e.name) : e.name;
      if (e.isDirectory()) await walk(child);
      else if (e.isFile()) {
        try {
          total += (await fs.lstat(path.join(root, child))).size;
        } catch (err) {
          // Removed while walking (git gc, a temporary file): it no longer counts.
          if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        }
      }
    }
  };
  await walk('');
  return total;
}

/** 1536 → "1.5 KiB". */
export function formatBytes(n: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${n} bytes` : `${Number.isInteger(v) ? v : v.toFixed(1)} ${units[u]}`;
}
