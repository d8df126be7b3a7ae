/**
 * Build artifacts in the blob store, for cluster mode. A worker that built one uploads its
 * dependency layer once, as a blob of its own (`layers/sha256/<SHA-256 of its tar>`, with an
 * index from the layer's name `<language>/<hash>` to that hash), then the artifact itself (its
 * tree and manifest, one tar) under `artifacts/sha256/<SHA-256>`, and last the artifact's index
 * (`artifacts/index/<key>`: a small JSON naming the tree's hash and the layer it needs). Two
 * builds with the same dependencies name the same layer and so share its blob.
 *
 * A worker asked to start a runner of an artifact it does not have fetches it on that first cold
 * start: the layer only when this node does not hold it already, then the tree; each blob's hash
 * is checked before it is unpacked. It keeps what it fetched within a size bound (least recently
 * fetched artifact first, never one with warm runners or being fetched); a fetched layer goes
 * once no artifact it keeps needs it, and never when a build here used it (lib/removable-layers.ts).
 * An index written by an older node (the plain hash of one tar holding artifact and layer) is
 * still read.
 *
 * Whoever can write to the bucket is not thereby trusted: each index a node writes (an
 * artifact's, a layer's) has its SHA-256 recorded in the database (blob_index_digests), and an
 * index that does not match its record, or has none, is refused with the reason, never used.
 * The index names the tree's and the layer's blobs by their hashes, which are checked in turn;
 * so what a worker runs is what the node that built it stored.
 *
 * Everything read from the blob store was written by another node and is checked as untrusted:
 * the index by pattern (a layer name is `<language>/<hash>` before it is used as a path), each
 * tar made and unpacked by GNU tar as root (it stores links as links, refuses absolute and `..`
 * names on extraction and sets links last, so an entry cannot write through one), and the
 * unpacked set checked to hold exactly the artifact or the layer, through real directories,
 * before anything moves.
 */
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { BlobStore } from '../domain/data/ports.js';
import type { RemovableLayers } from '../lib/removable-layers.js';

/** What the store needs of the builder: where artifacts and layers live, an artifact's layer, the layers it may remove. */
export interface ArtifactDirs {
  dirs: { work: string; artifacts: string; layers: string };
  artifactPath(key: string): string;
  readArtifact(key: string): Promise<{ manifest: { layer: string | null }; layerDir: string | null }>;
  removableLayers: RemovableLayers;
}

/** The artifacts that have runners on this node (the runner pool): never evicted. */
export interface WarmArtifacts {
  warmArtifacts(): Set<string>;
}

const NONE_WARM: WarmArtifacts = { warmArtifacts: () => new Set() };

export interface ArtifactLog {
  warn(obj: object, msg: string): void;
}

/** The digests of index objects recorded in the database (storage/blob-index-digest-store.ts). */
export interface IndexDigests {
  get(key: string): Promise<string | undefined>;
  set(key: string, sha256: string): Promise<void>;
}

const HASH = /^[0-9a-f]{64}$/;
/** The builder's layer names (runtime/build/sandbox-builder.ts), checked before one is used as a path. */
const LAYER_NAME = /^[a-z0-9][a-z0-9-]{0,31}\/[0-9a-f]{32}$/;
const indexKey = (key: string) => `artifacts/index/${key}`;
const blobKey = (hash: string) => `artifacts/sha256/${hash}`;
const layerIndexKey = (name: string) => `layers/index/${name}`;
const layerBlobKey = (hash: string) => `layers/sha256/${hash}`;

interface LayerRef {
  name: string;
  sha256: string;
}

/** An artifact's index: the tree's blob and the layer it needs; `whole` for an older node's single tar. */
type Index = { tree: string; layer: LayerRef | null; whole: false } | { tree: string; layer: null; whole: true };

export class BlobArtifactStore {
  /** Artifacts this node fetched, least recently fetched first: the bytes they count and the layer they need. */
  private readonly fetched = new Map<string, { bytes: number; layer: string | null }>();
  private readonly inFlight = new Map<string, Promise<void>>();
  /** The layer each fetch under way needs, registered before it looks whether the layer is here. */
  private readonly using = new Map<string, string>();
  private readonly layerFetches = new Map<string, Promise<void>>();
  private warm: WarmArtifacts = NONE_WARM;

  constructor(
    private readonly blobs: BlobStore,
    private readonly digests: IndexDigests,
    private readonly builder: ArtifactDirs,
    private readonly settings: { cacheBytes: number; tar?: string },
    private readonly log: ArtifactLog,
  ) {}

  /** The runners' pool, made after this store (its runners fetch through it), names what to keep. */
  keepWarm(runners: WarmArtifacts): void {
    this.warm = runners;
  }

  /** After a successful build: stores the artifact (and its layer) unless the store has them already. */
  async upload(key: string): Promise<void> {
    // Stored already, and its index intact: nothing to do. Otherwise (never stored, stored by a
    // release that recorded no digest, or changed since) this node, which holds the artifact,
    // stores it again.
    const recorded = await this.digests.get(indexKey(key));
    if (recorded !== undefined && (await this.digestOf(indexKey(key))) === recorded) return;
    const { manifest, layerDir } = await this.builder.readArtifact(key);
    const root = path.dirname(this.builder.dirs.artifacts);
    const temp = await fs.promises.mkdtemp(path.join(this.builder.dirs.work, 'up-'));
    try {
      const layer =
        manifest.layer && layerDir ? { name: manifest.layer, sha256: await this.uploadLayer(manifest.layer, layerDir, temp) } : null;
      const file = path.join(temp, 'artifact.tar');
      await this.tar(['-c', '-f', file, '-C', root, '--', path.relative(root, this.builder.artifactPath(key))]);
      const tree = await sha256(file);
      if (!(await this.blobs.stat(blobKey(tree)))) await this.blobs.put(blobKey(tree), fs.createReadStream(file));
      // The index last: a node that finds it finds everything it names, and its digest.
      await this.putIndex(indexKey(key), Buffer.from(JSON.stringify({ tree, layer })));
    } finally {
      await fs.promises.rm(temp, { recursive: true, force: true });
    }
  }

  /**
   * Stores a layer once: a layer's name stands for its content (the builder derives it from the
   * algorithm, the environment and the dependency files, and reuses a layer of that name as it
   * is), so the blob already indexed under the name serves every artifact that needs it.
   */
  private async uploadLayer(name: string, dir: string, temp: string): Promise<string> {
    // Only an index matching its recorded digest names the layer: one written by anyone else
    // would have this artifact's index name their layer, and every worker mount it.
    const recorded = await this.digests.get(layerIndexKey(name));
    const known = recorded !== undefined ? await this.blobs.get(layerIndexKey(name)) : undefined;
    if (known) {
      const body = await small(known.body);
      const hash = body.toString('utf8').trim();
      if (digest(body) === recorded && HASH.test(hash) && (await this.blobs.stat(layerBlobKey(hash)))) return hash;
    }
    const file = path.join(temp, 'layer.tar');
    // One top-level entry, the layer's own directory (its hash).
    await this.tar(['-c', '-f', file, '-C', path.dirname(dir), '--', path.basename(dir)]);
    const hash = await sha256(file);
    if (!(await this.blobs.stat(layerBlobKey(hash)))) await this.blobs.put(layerBlobKey(hash), fs.createReadStream(file));
    await this.putIndex(layerIndexKey(name), Buffer.from(hash));
    return hash;
  }

  /** Writes an index object, its digest recorded first: a node that finds the index finds its record. */
  private async putIndex(key: string, body: Buffer): Promise<void> {
    await this.digests.set(key, digest(body));
    await this.blobs.put(key, Readable.from([body]));
  }

  /** The SHA-256 of the object under `key` (an index: small), or undefined when there is none. */
  private async digestOf(key: string): Promise<string | undefined> {
    const blob = await this.blobs.get(key);
    return blob && digest(await small(blob.body));
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
    const index = await this.readIndex(key);
    if (!index) return; // readArtifact then says the artifact does not exist
    const temp = await fs.promises.mkdtemp(path.join(this.builder.dirs.work, 'down-'));
    try {
      // The layer first, so the artifact never appears without it.
      if (index.layer) {
        this.using.set(key, index.layer.name); // before looking: from now on no eviction takes it
        await this.ensureLayer(key, index.layer);
      }
      const file = path.join(temp, 'artifact.tar');
      const out = await this.download(key, blobKey(index.tree), index.tree, file, temp);
      const relArtifact = path.relative(path.dirname(this.builder.dirs.artifacts), dir);
      const top = await fs.promises.readdir(out);
      const allowed = index.whole ? ['artifacts', 'layers'] : ['artifacts'];
      if (top.some((n) => !allowed.includes(n))) throw new Error(`artifact ${key} from the blob store holds more than itself`);
      let layer = index.layer?.name ?? null;
      if (index.whole) layer = await this.placeWholeTarLayer(key, out);
      // Every step of the artifact's path a real directory: a link would point the runner elsewhere.
      if (!(await realDirectories(out, relArtifact))) throw new Error(`artifact ${key} from the blob store is not a directory`);
      if (!index.whole && (await manifestLayer(path.join(out, relArtifact))) !== layer) {
        throw new Error(`artifact ${key} from the blob store does not name the layer its index names`);
      }
      await fs.promises.mkdir(path.dirname(dir), { recursive: true, mode: 0o711 });
      await fs.promises.rename(path.join(out, relArtifact), dir).catch(ignoreExists);
      this.fetched.delete(key);
      this.fetched.set(key, { bytes: (await fs.promises.stat(file)).size, layer });
    } finally {
      this.using.delete(key);
      await fs.promises.rm(temp, { recursive: true, force: true });
    }
    await this.evict();
  }

  /** The artifact's index, checked: undefined when there is none. */
  private async readIndex(key: string): Promise<Index | undefined> {
    const blob = await this.blobs.get(indexKey(key));
    if (!blob) return undefined;
    const raw = await small(blob.body);
    const recorded = await this.digests.get(indexKey(key));
    if (recorded === undefined) {
      throw new Error(
        `artifact ${key} has an index in the blob store but no digest recorded in the database (it was not stored by a node of this cluster, or by a release before digests were recorded): it is not run; build the algorithm again to store it`,
      );
    }
    if (digest(raw) !== recorded) {
      throw new Error(
        `the blob store's index of artifact ${key} does not match the digest recorded in the database (it was changed outside algohost): it is not run; build the algorithm again to store it`,
      );
    }
    const body = raw.toString('utf8').trim();
    const damaged = new Error(`the blob store's index of artifact ${key} is damaged`);
    if (HASH.test(body)) return { tree: body, layer: null, whole: true }; // written by an older node
    let index: unknown;
    try {
      index = JSON.parse(body);
    } catch {
      throw damaged;
    }
    if (typeof index !== 'object' || index === null) throw damaged;
    const { tree, layer } = index as { tree?: unknown; layer?: unknown };
    if (typeof tree !== 'string' || !HASH.test(tree)) throw damaged;
    if (layer === null) return { tree, layer: null, whole: false };
    if (typeof layer !== 'object' || layer === undefined) throw damaged;
    const { name, sha256: hash } = layer as { name?: unknown; sha256?: unknown };
    if (typeof name !== 'string' || !LAYER_NAME.test(name) || typeof hash !== 'string' || !HASH.test(hash)) {
      throw new Error(`the blob store's index of artifact ${key} names an invalid dependency layer`);
    }
    return { tree, layer: { name, sha256: hash }, whole: false };
  }

  /** Makes sure the layer is on this node, downloading it (once for concurrent fetches) when missing. */
  private async ensureLayer(key: string, layer: LayerRef): Promise<void> {
    await this.builder.removableLayers.settled(layer.name);
    if (await exists(this.layerPath(layer.name))) return;
    let running = this.layerFetches.get(layer.name);
    if (!running) {
      running = this.fetchLayer(key, layer).finally(() => this.layerFetches.delete(layer.name));
      this.layerFetches.set(layer.name, running);
    }
    await running;
  }

  private async fetchLayer(key: string, layer: LayerRef): Promise<void> {
    const temp = await fs.promises.mkdtemp(path.join(this.builder.dirs.work, 'layer-'));
    try {
      const file = path.join(temp, 'layer.tar');
      const out = await this.download(`the layer ${layer.name} of artifact ${key}`, layerBlobKey(layer.sha256), layer.sha256, file, temp);
      const [language, hash] = layer.name.split('/') as [string, string];
      const top = await fs.promises.readdir(out);
      if (top.length !== 1 || top[0] !== hash) throw new Error(`the layer ${layer.name} from the blob store holds more than itself`);
      if (!(await realDirectories(out, hash))) throw new Error(`the layer ${layer.name} from the blob store is not a directory`);
      const target = this.layerPath(layer.name);
      await fs.promises.mkdir(path.join(this.builder.dirs.layers, language), { recursive: true, mode: 0o711 });
      // A build here may have made it meanwhile: then that one stays, the node's own.
      if (await placeOnce(path.join(out, hash), target))
        this.builder.removableLayers.addFetched(layer.name, (await fs.promises.stat(file)).size);
    } finally {
      await fs.promises.rm(temp, { recursive: true, force: true });
    }
  }

  /**
   * An older node's tar holds the layer beside the artifact: checked like a layer of its own and
   * moved into place unless this node has it. Its bytes count with the artifact's tar.
   */
  private async placeWholeTarLayer(key: string, out: string): Promise<string | null> {
    const layers = path.join(out, 'layers');
    if (!(await exists(layers))) return null;
    const names = await fs.promises.readdir(layers);
    if (names.length !== 1) throw new Error(`artifact ${key} from the blob store holds ${names.length} layers`);
    const hashes = (await realDirectories(layers, names[0]!)) ? await fs.promises.readdir(path.join(layers, names[0]!)) : [];
    const name = `${names[0]}/${hashes[0]}`;
    if (hashes.length !== 1 || !LAYER_NAME.test(name) || !(await realDirectories(layers, name))) {
      throw new Error(`the layer of artifact ${key} from the blob store is not one directory`);
    }
    this.using.set(key, name);
    await this.builder.removableLayers.settled(name);
    const target = this.layerPath(name);
    if (await exists(target)) return name;
    await fs.promises.mkdir(path.dirname(target), { recursive: true, mode: 0o711 });
    if (await placeOnce(path.join(layers, name), target)) this.builder.removableLayers.addFetched(name, 0);
    return name;
  }

  /** Downloads a blob to `file`, checks its hash and unpacks it into a fresh directory of `temp`. */
  private async download(what: string, blob: string, hash: string, file: string, temp: string): Promise<string> {
    const content = await this.blobs.get(blob);
    if (!content) throw new Error(`the blob store has the index of ${what} but not its content`);
    await pipeline(content.body, fs.createWriteStream(file));
    if ((await sha256(file)) !== hash) throw new Error(`${what} from the blob store does not match its hash`);
    const out = await fs.promises.mkdtemp(path.join(temp, 'x-'));
    await this.tar(['-x', '-f', file, '-C', out]);
    return out;
  }

  private layerPath(name: string): string {
    // The name matched LAYER_NAME: two plain components, so this stays inside the layers root.
    return path.join(this.builder.dirs.layers, name);
  }

  /**
   * Keeps what this node fetched within the bound: first layers no kept artifact needs, then the
   * least recently fetched artifact without warm runners and not being fetched, until under it.
   * Each choice and the start of its removal happen without an await between them.
   */
  private async evict(): Promise<void> {
    const limit = this.settings.cacheBytes;
    if (limit <= 0) return;
    // Warm artifacts this store did not fetch (built here, or here before this process started):
    // their layers are read now, as reading needs an await.
    const warmLayers = new Set<string>();
    for (const key of this.warm.warmArtifacts()) {
      if (this.fetched.has(key)) continue;
      const layer = await this.builder.readArtifact(key).then(
        (a) => a.manifest.layer,
        () => null,
      );
      if (layer) warmLayers.add(layer);
    }
    for (;;) {
      const layers = this.builder.removableLayers.entries();
      let total = layers.reduce((a, [, bytes]) => a + bytes, 0);
      for (const { bytes } of this.fetched.values()) total += bytes;
      if (total <= limit) return;
      const warm = this.warm.warmArtifacts();
      const needed = new Set([...warmLayers, ...this.using.values()]);
      for (const { layer } of this.fetched.values()) if (layer) needed.add(layer);
      const orphan = layers.find(([name]) => !needed.has(name));
      if (orphan) {
        const [name] = orphan;
        const removal = this.builder.removableLayers.remove(name, () => this.removeLayer(name));
        if (!removal) return; // cannot happen: entries() holds only removable layers
        await removal;
        continue;
      }
      const victim = [...this.fetched.keys()].find((k) => !warm.has(k) && !this.inFlight.has(k));
      if (!victim) return;
      this.fetched.delete(victim);
      await fs.promises.rm(this.builder.artifactPath(victim), { recursive: true, force: true }).catch((err: unknown) => {
        this.log.warn({ err, artifact: victim }, 'a cached artifact could not be removed');
      });
    }
  }

  /** Moves the layer out of its place in one step (it is whole there or gone), then deletes it. */
  private async removeLayer(name: string): Promise<void> {
    const gone = path.join(this.builder.dirs.work, `gone-${crypto.randomBytes(8).toString('hex')}`);
    try {
      await fs.promises.rename(this.layerPath(name), gone);
      await fs.promises.rm(gone, { recursive: true, force: true });
    } catch (err) {
      this.log.warn({ err, layer: name }, 'a cached dependency layer could not be removed');
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

/**
 * The layer an unpacked artifact's manifest names (the runner resolves it through the same
 * manifest, so it must be the layer the index made this node fetch). Read only as a regular file.
 */
async function manifestLayer(dir: string): Promise<string | null | undefined> {
  const file = path.join(dir, 'manifest.json');
  const st = await fs.promises.lstat(file).catch(() => undefined);
  if (!st?.isFile() || st.size > 64 * 1024) return undefined;
  try {
    const { layer } = JSON.parse(await fs.promises.readFile(file, 'utf8')) as { layer?: unknown };
    return typeof layer === 'string' || layer === null ? layer : undefined;
  } catch {
    return undefined;
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

/** An index object's bytes. An index is small: more than a few hundred bytes is not one (and is not read whole). */
async function small(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const c of body) {
    chunks.push(c as Buffer);
    length += (c as Buffer).length;
    if (length > 4096) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, 4097);
}

function digest(bytes: Buffer): string {
  return crypto.createHash('sha256').update(bytes).digest('hex');
}

async function exists(p: string): Promise<boolean> {
  return fs.promises.access(p).then(
    () => true,
    () => false,
  );
}

/** Renames `from` to `to`; false when something is there already (then that stays). */
async function placeOnce(from: string, to: string): Promise<boolean> {
  try {
    await fs.promises.rename(from, to);
    return true;
  } catch (err) {
    ignoreExists(err as NodeJS.ErrnoException);
    return false;
  }
}

/** Another fetch or build put it there first: as good as ours. */
function ignoreExists(err: NodeJS.ErrnoException): void {
  if (err.code !== 'EEXIST' && err.code !== 'ENOTEMPTY') throw err;
}
