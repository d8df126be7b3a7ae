/**
 * Build artifacts in the blob store, for cluster mode: a worker that built one uploads it (its
 * tree, manifest and dependency layer, as one tar) under the SHA-256 of its bytes, with a small
 * index blob from the artifact's key to that hash; a worker asked to start a runner of an
 * artifact it does not have fetches it on that first cold start, checks the hash, unpacks it
 * beside its own artifacts and keeps it, within a size bound (least recently fetched first,
 * never one with warm runners).
 *
 * The tar is made and unpacked by GNU tar as root: it stores links as links, refuses absolute
 * and `..` names on extraction and sets links last, so an entry cannot write through one. The
 * unpacked set is checked to hold only that artifact and its layer before anything moves.
 */
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { BlobStore } from '../domain/data/ports.js';

/** What the store needs of the builder: where artifacts and layers live, and an artifact's layer. */
export interface ArtifactDirs {
  dirs: { work: string; artifacts: string; layers: string };
  artifactPath(key: string): string;
  readArtifact(key: string): Promise<{ layerDir: string | null }>;
}

export interface ArtifactLog {
  warn(obj: object, msg: string): void;
}

const HASH = /^[0-9a-f]{64}$/;
const indexKey = (key: string) => `artifacts/index/${key}`;
const blobKey = (hash: string) => `artifacts/sha256/${hash}`;

export class BlobArtifactStore {
  /** Artifacts this node fetched, oldest first, with their size, for the cache bound. */
  private readonly fetched = new Map<string, number>();
  private readonly inFlight = new Map<string, Promise<void>>();

  constructor(
    private readonly blobs: BlobStore,
    private readonly builder: ArtifactDirs,
    private readonly settings: { cacheBytes: number; warm: () => Set<string>; tar?: string },
    private readonly log: ArtifactLog,
  ) {}

  /** After a successful build: stores the artifact unless the store has it already. */
  async upload(key: string): Promise<void> {
    if (await this.blobs.stat(indexKey(key))) return;
    const { layerDir } = await this.builder.readArtifact(key);
    const root = path.dirname(this.builder.dirs.artifacts);
    const members = [path.relative(root, this.builder.artifactPath(key))];
    if (layerDir) members.push(path.relative(root, layerDir));
    const temp = await fs.promises.mkdtemp(path.join(this.builder.dirs.work, 'up-'));
    try {
      const file = path.join(temp, 'artifact.tar');
      await this.tar(['-c', '-f', file, '-C', root, '--', ...members]);
      const hash = await sha256(file);
      if (!(await this.blobs.stat(blobKey(hash)))) await this.blobs.put(blobKey(hash), fs.createReadStream(file));
      await this.blobs.put(indexKey(key), Readable.from([Buffer.from(hash)]));
    } finally {
      await fs.promises.rm(temp, { recursive: true, force: true });
    }
  }

  /** Before a cold start: makes sure the artifact is on this node, fetching it when missing. */
  ensure(key: string): Promise<void> {
    const running = this.inFlight.get(key);
    if (running) return running;
    const p = this.fetch(key).finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, p);
    return p;
  }

  private async fetch(key: string): Promise<void> {
    const dir = this.builder.artifactPath(key);
    if (await exists(path.join(dir, 'manifest.json'))) return;
    const index = await this.blobs.get(indexKey(key));
    if (!index) return; // readArtifact then says the artifact does not exist
    const hash = (await text(index.body)).trim();
    if (!HASH.test(hash)) throw new Error(`the blob store's index of artifact ${key} is damaged`);
    const blob = await this.blobs.get(blobKey(hash));
    if (!blob) throw new Error(`the blob store has the index of artifact ${key} but not its content`);
    const temp = await fs.promises.mkdtemp(path.join(this.builder.dirs.work, 'down-'));
    try {
      const file = path.join(temp, 'artifact.tar');
      await pipeline(blob.body, fs.createWriteStream(file));
      if ((await sha256(file)) !== hash) throw new Error(`artifact ${key} from the blob store does not match its hash`);
      const out = path.join(temp, 'x');
      await fs.promises.mkdir(out);
      await this.tar(['-x', '-f', file, '-C', out]);
      const relArtifact = path.relative(path.dirname(this.builder.dirs.artifacts), dir);
      const top = await fs.promises.readdir(out);
      if (top.some((n) => n !== 'artifacts' && n !== 'layers'))
        throw new Error(`artifact ${key} from the blob store holds more than itself`);
      // The layer first, so the artifact never appears without it.
      const layers = path.join(out, 'layers');
      if (await exists(layers)) {
        const names = await fs.promises.readdir(layers);
        if (names.length !== 1) throw new Error(`artifact ${key} from the blob store holds ${names.length} layers`);
        const language = await fs.promises.readdir(path.join(layers, names[0]!));
        if (language.length !== 1 || !(await realDirectories(layers, path.join(names[0]!, language[0]!)))) {
          throw new Error(`the layer of artifact ${key} from the blob store is not one directory`);
        }
        // Layers are `<language>/<hash>`: this node may hold other layers of the language already.
        const name = path.join(names[0]!, language[0]!);
        const target = path.join(this.builder.dirs.layers, name);
        if (!(await exists(target))) {
          await fs.promises.mkdir(path.dirname(target), { recursive: true, mode: 0o711 });
          await fs.promises.rename(path.join(layers, name), target).catch(ignoreExists);
        }
      }
      // Every step of the artifact's path a real directory: a link would point the runner elsewhere.
      if (!(await realDirectories(out, relArtifact))) throw new Error(`artifact ${key} from the blob store is not a directory`);
      await fs.promises.mkdir(path.dirname(dir), { recursive: true, mode: 0o711 });
      await fs.promises.rename(path.join(out, relArtifact), dir).catch(ignoreExists);
      this.fetched.set(key, (await fs.promises.stat(file)).size);
      await this.evict();
    } finally {
      await fs.promises.rm(temp, { recursive: true, force: true });
    }
  }

  /** Keeps the fetched artifacts within the bound, leaving those with warm runners. */
  private async evict(): Promise<void> {
    const limit = this.settings.cacheBytes;
    if (limit <= 0) return;
    let total = [...this.fetched.values()].reduce((a, b) => a + b, 0);
    const warm = this.settings.warm();
    for (const [key, size] of this.fetched) {
      if (total <= limit) break;
      if (warm.has(key) || this.inFlight.has(key)) continue;
      this.fetched.delete(key);
      total -= size;
      await fs.promises.rm(this.builder.artifactPath(key), { recursive: true, force: true }).catch((err: unknown) => {
        this.log.warn({ err, artifact: key }, 'a cached artifact could not be removed');
      });
    }
  }

  private tar(args: string[]): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.settings.tar ?? '/usr/bin/tar', args, { stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      child.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
      child.once('error', reject);
      child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`tar ${args[0]} failed (${code}): ${err.trim()}`))));
    });
  }
}

/** Whether every component of `rel` below `base` is a directory and none a symbolic link. */
async function realDirectories(base: string, rel: string): Promise<boolean> {
  let at = base;
  for (const part of rel.split(path.sep)) {
    at = path.join(at, part);
    const st = await fs.promises.lstat(at).catch(() => undefined);
    if (!st?.isDirectory()) return false;
  }
  return true;
}

async function sha256(file: string): Promise<string> {
  const hash = crypto.createHash('sha256');
  await pipeline(fs.createReadStream(file), hash);
  return hash.digest('hex');
}

async function text(body: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of body) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8').slice(0, 200);
}

async function exists(p: string): Promise<boolean> {
  return fs.promises.access(p).then(
    () => true,
    () => false,
  );
}

/** Another fetch or build put it there first: as good as ours. */
function ignoreExists(err: NodeJS.ErrnoException): void {
  if (err.code !== 'EEXIST' && err.code !== 'ENOTEMPTY') throw err;
}
