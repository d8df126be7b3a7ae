/**
 * Artifacts in the blob store (cluster/artifact-store.ts), between the builders of several
 * "nodes" (build roots) over a real blob store (moto's S3 server under scripts/with-services.sh,
 * else a directory): what one uploads another unpacks whole, its dependency layer a blob of its
 * own that two artifacts with the same dependencies share and a node holding it does not
 * download again; fetched artifacts and layers stay within the cache bound, except those with
 * warm runners or needed by a kept artifact, and a fetched layer a build here used stays for
 * good; an older node's index (one tar with artifact and layer) still fetches; and what another
 * node wrote is refused before anything moves when it does not hold exactly what it should (a
 * blob not matching its hash, links, extra entries, a layer name that is a path). An index
 * changed in the bucket (not matching the digest recorded in the database when it was written),
 * or one the database has no digest of, is refused before anything is read from it, on SQLite
 * and PostgreSQL; a layer index changed in the bucket is never reused by the next upload.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { BlobArtifactStore } from '../../src/cluster/artifact-store.js';
import type { Build } from '../../src/domain/builds/model.js';
import type { Environment } from '../../src/domain/catalog/model.js';
import type { BlobContent, BlobStore } from '../../src/domain/data/ports.js';
import { SandboxBuilder } from '../../src/runtime/build/sandbox-builder.js';
import { LANGUAGE_ADAPTERS } from '../../src/runtime/languages/index.js';
import { EgressProxy } from '../../src/runtime/sandbox/egress-proxy.js';
import { DiskBlobStore } from '../../src/storage/blobs/disk-blob-store.js';
import { S3BlobStore } from '../../src/storage/blobs/s3-blob-store.js';
import { readCatalog } from '../../src/storage/catalog-files.js';
import { SqlBlobIndexDigestStore } from '../../src/storage/blob-index-digest-store.js';
import { migrateToLatest } from '../../src/storage/database.js';
import { emptyDatabase, type OpenedDb } from '../support/database.js';
import { DATABASES, type DatabaseKind, makeTempDir } from '../support/server.js';
import { preparedSupervisor } from '../support/supervisor.js';

const silent = { warn: () => {} };
const GIT = '/usr/bin/git';

function builderAt(root: string): SandboxBuilder {
  const egress = new EgressProxy({ dir: path.join(root, 'egress'), allow: [] });
  egress.prepare();
  const builder = new SandboxBuilder(preparedSupervisor({ maxOpenFiles: 64 }), LANGUAGE_ADAPTERS, {
    root,
    sharedCache: true,
    registries: { pipFindLinks: [] },
    egress,
    memoryBytes: 256 * 1024 * 1024,
    git: GIT,
    maxArtifactBytes: 0,
  });
  builder.prepare();
  return builder;
}

const newLayer = () => `python/${crypto.randomBytes(16).toString('hex')}`;

/** Writes an artifact as the builder leaves one: tree, manifest and (unless null) its dependency layer. */
function makeArtifact(builder: SandboxBuilder, text: string, layer: string | null = newLayer(), algorithmId = crypto.randomUUID()): string {
  const commit = crypto.randomBytes(20).toString('hex');
  const key = `${algorithmId}/python311/${commit}`;
  const dir = builder.artifactPath(key);
  fs.mkdirSync(path.join(dir, 'tree', 'src'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'tree', 'src', 'Algo.py'), text);
  fs.writeFileSync(
    path.join(dir, 'manifest.json'),
    JSON.stringify({ algorithmId, environment: 'python311', language: 'python', commit, layer, builtAt: new Date().toISOString() }),
  );
  if (layer && !fs.existsSync(path.join(builder.dirs.layers, layer))) {
    fs.mkdirSync(path.join(builder.dirs.layers, layer, 'venv', 'bin'), { recursive: true });
    fs.writeFileSync(path.join(builder.dirs.layers, layer, 'dep.py'), `# dependency of ${text}\n`);
    // Links inside a layer are normal (a virtual environment's interpreter): they travel as links.
    fs.symlinkSync('/usr/bin/python3', path.join(builder.dirs.layers, layer, 'venv', 'bin', 'python'));
  }
  return key;
}

/** The blob store, counting which blobs are read. */
class CountingBlobs implements BlobStore {
  readonly reads: string[] = [];
  constructor(private readonly inner: BlobStore) {}
  open = () => this.inner.open();
  put = (key: string, body: Readable) => this.inner.put(key, body);
  get = (key: string): Promise<BlobContent | undefined> => {
    this.reads.push(key);
    return this.inner.get(key);
  };
  stat = (key: string) => this.inner.stat(key);
  list = (prefix: string, opts?: { after?: string; limit?: number }) => this.inner.list(prefix, opts);
  delete = (key: string) => this.inner.delete(key);
  close = () => this.inner.close();
  layerReads = () => this.reads.filter((k) => k.startsWith('layers/sha256/')).length;
}

async function openBlobs(root: string): Promise<BlobStore> {
  const endpoint = process.env.ALGOHOST_TEST_S3_ENDPOINT;
  const store = endpoint
    ? new S3BlobStore({
        endpoint,
        region: 'us-east-1',
        bucket: `artifacts-${crypto.randomBytes(4).toString('hex')}`,
        accessKeyId: 'test',
        secretAccessKey: 'test',
        forcePathStyle: true,
      })
    : new DiskBlobStore(path.join(root, 'blobs'));
  await store.open();
  return store;
}

async function count(blobs: BlobStore, prefix: string): Promise<number> {
  return (await blobs.list(prefix)).items.length;
}

/** Stores `bytes` as a blob under `prefix`<its SHA-256> and returns the hash, as a node would (or a forger). */
async function putBlob(blobs: BlobStore, prefix: string, file: string): Promise<string> {
  const hash = crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
  await blobs.put(`${prefix}${hash}`, fs.createReadStream(file));
  return hash;
}

/** A migrated database of `kind` and the digest store over it. */
async function digestStore(kind: DatabaseKind): Promise<{ opened: OpenedDb; digests: SqlBlobIndexDigestStore }> {
  const opened = await emptyDatabase(kind);
  await migrateToLatest(opened.db);
  return { opened, digests: new SqlBlobIndexDigestStore(opened.db) };
}

const sha256Of = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');

describe('artifacts in the blob store (cluster mode)', () => {
  let root: string;
  let blobs: BlobStore;
  let database: OpenedDb;
  let digests: SqlBlobIndexDigestStore;
  let built: SandboxBuilder;
  let upload: BlobArtifactStore;
  let keys: string[];
  let n = 0;
  /** A node of its own: a fresh build root and a store over the shared blobs (counted). */
  const node = (settings: { cacheBytes?: number; warm?: Set<string> } = {}) => {
    const builder = builderAt(path.join(root, `node-${n++}`));
    const counted = new CountingBlobs(blobs);
    const store = new BlobArtifactStore(counted, digests, builder, { cacheBytes: settings.cacheBytes ?? 0 }, silent);
    const { warm } = settings;
    if (warm) store.keepWarm({ warmArtifacts: () => warm });
    const has = (k: string) => fs.existsSync(path.join(builder.artifactPath(k), 'manifest.json'));
    const hasLayer = (name: string) => fs.existsSync(path.join(builder.dirs.layers, name));
    return { builder, store, counted, has, hasLayer };
  };

  before(async () => {
    root = await makeTempDir('algohost-artifacts-');
    fs.chmodSync(root, 0o711); // the sandbox user passes through to build directories
    blobs = await openBlobs(root);
    ({ opened: database, digests } = await digestStore('sqlite'));
    built = builderAt(path.join(root, 'a'));
    upload = new BlobArtifactStore(blobs, digests, built, { cacheBytes: 0 }, silent);
    keys = ['one', 'two', 'three'].map((t) => makeArtifact(built, `def apply(x): return "${t}"\n`));
    for (const k of keys) await upload.upload(k);
  });
  after(async () => {
    await blobs.close();
    await database.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  /**
   * Writes an index as a node of the cluster does (its digest recorded): the checks below are
   * those that hold even for an index the database vouches for (a node of another release, a
   * bug, a forger who could also write the database).
   */
  const plantIndex = async (key: string, body: string) => {
    await digests.set(`artifacts/index/${key}`, sha256Of(Buffer.from(body)));
    await blobs.put(`artifacts/index/${key}`, Readable.from([Buffer.from(body)]));
  };

  const layerOf = (k: string) =>
    (JSON.parse(fs.readFileSync(path.join(built.artifactPath(k), 'manifest.json'), 'utf8')) as { layer: string }).layer;
  const indexOf = async (k: string) =>
    JSON.parse(await text((await blobs.get(`artifacts/index/${k}`))!.body)) as {
      tree: string;
      layer: { name: string; sha256: string } | null;
    };

  test('another node unpacks an uploaded artifact whole, with its layer (a blob of its own), where the runner looks', async () => {
    const index = await indexOf(keys[0]!);
    assert.equal(index.layer?.name, layerOf(keys[0]!));
    assert.ok(await blobs.stat(`layers/sha256/${index.layer.sha256}`), 'the layer is a blob of its own');
    assert.equal(await text((await blobs.get(`layers/index/${index.layer.name}`))!.body), index.layer.sha256);
    const tree = execFileSync('/usr/bin/tar', ['-t', '-f', '-'], {
      input: await bytes((await blobs.get(`artifacts/sha256/${index.tree}`))!.body),
    }).toString();
    assert.ok(!tree.includes('layers/'), `the artifact's tar holds only the artifact:\n${tree}`);

    const { builder, store } = node();
    await store.ensure(keys[0]!);
    const info = await builder.readArtifact(keys[0]!);
    assert.equal(fs.readFileSync(path.join(info.tree, 'src', 'Algo.py'), 'utf8'), 'def apply(x): return "one"\n');
    assert.ok(info.layerDir);
    assert.equal(fs.readFileSync(path.join(info.layerDir, 'dep.py'), 'utf8'), '# dependency of def apply(x): return "one"\n\n');
    assert.equal(fs.readlinkSync(path.join(info.layerDir, 'venv', 'bin', 'python')), '/usr/bin/python3', 'links inside a layer stay links');
    // Uploading again stores nothing new: the index names the same content.
    const before = (await count(blobs, 'artifacts/')) + (await count(blobs, 'layers/'));
    await upload.upload(keys[0]!);
    assert.equal((await count(blobs, 'artifacts/')) + (await count(blobs, 'layers/')), before);
  });

  test('two artifacts with the same dependencies share one layer blob, and a node holding the layer does not download it again', async () => {
    const algorithmId = crypto.randomUUID();
    const layer = newLayer();
    const first = makeArtifact(built, 'def apply(x): return "first"\n', layer, algorithmId);
    const layerBlobs = await count(blobs, 'layers/sha256/');
    await upload.upload(first);
    assert.equal(await count(blobs, 'layers/sha256/'), layerBlobs + 1);
    const second = makeArtifact(built, 'def apply(x): return "second"\n', layer, algorithmId);
    await upload.upload(second);
    assert.equal(await count(blobs, 'layers/sha256/'), layerBlobs + 1, 'the second build stored no layer');
    assert.deepEqual((await indexOf(second)).layer, (await indexOf(first)).layer);

    const { builder, store, counted } = node();
    await store.ensure(first);
    assert.equal(counted.layerReads(), 1);
    await store.ensure(second);
    assert.equal(counted.layerReads(), 1, 'the layer was not fetched again');
    assert.equal((await builder.readArtifact(second)).layerDir, (await builder.readArtifact(first)).layerDir);
    assert.ok(fs.existsSync(path.join((await builder.readArtifact(second)).layerDir!, 'dep.py')));
    // Two fetches at once of artifacts sharing a layer download it once.
    const other = node();
    await Promise.all([other.store.ensure(first), other.store.ensure(second)]);
    assert.equal(other.counted.layerReads(), 1);
    assert.ok(other.has(first) && other.has(second));
  });

  test('fetched artifacts stay within the cache bound, least recently fetched first, never one with warm runners', async () => {
    const warm = new Set([keys[0]!]);
    const { builder, store, has } = node({ cacheBytes: 1, warm });
    await store.ensure(keys[0]!);
    await store.ensure(keys[1]!);
    assert.ok(fs.existsSync(path.join((await builder.readArtifact(keys[1]!)).layerDir!, 'dep.py')), 'its layer is unpacked too');
    assert.ok(has(keys[0]!), 'warm: kept');
    assert.ok(has(keys[1]!), 'just fetched: kept');
    await store.ensure(keys[2]!);
    assert.ok(has(keys[0]!), 'warm: still kept');
    assert.equal(has(keys[1]!), false, 'the least recently fetched without runners goes');
    assert.ok(has(keys[2]!));
  });

  test('a fetched layer goes with the last kept artifact needing it, never while a warm one needs it', async () => {
    const algorithmId = crypto.randomUUID();
    const shared = newLayer();
    const [a, b] = ['a', 'b'].map((t) => makeArtifact(built, `def apply(x): return "${t}"\n`, shared, algorithmId));
    const c = makeArtifact(built, 'def apply(x): return "c"\n');
    const d = makeArtifact(built, 'def apply(x): return "d"\n');
    for (const k of [a!, b!, c, d]) await upload.upload(k);
    const warm = new Set<string>();
    const { store, has, hasLayer } = node({ cacheBytes: 1, warm });

    await store.ensure(a!);
    await store.ensure(b!);
    assert.equal(has(a!), false, 'the older artifact goes');
    assert.ok(hasLayer(shared), 'its layer stays: the kept artifact b needs it');
    warm.add(b!);
    await store.ensure(c);
    assert.ok(has(b!) && hasLayer(shared), 'b has warm runners: it and its layer stay');
    assert.equal(has(c), true, 'just fetched');
    warm.delete(b!);
    await store.ensure(d);
    assert.equal(has(b!), false);
    assert.equal(hasLayer(shared), false, 'no kept artifact needs the shared layer any more: it goes');
    assert.equal(has(c), false);
    assert.equal(hasLayer(layerOf(c)), false);
    assert.ok(has(d) && hasLayer(layerOf(d)));
  });

  test('layers this node had or built itself are never removed, nor a fetched one a build here used', async () => {
    const repo = await makeRepository(root);
    const algorithmId = crypto.randomUUID();
    const [first, second] = repo.commits;
    // Node "a" builds the first commit for real (a virtual environment as its layer) and uploads it.
    const firstKey = await realBuild(built, repo.dir, algorithmId, first!);
    await upload.upload(firstKey);
    const layer = layerOf(firstKey);
    assert.ok(layer, 'requirements.txt made a layer');

    const { builder, store, has, hasLayer } = node({ cacheBytes: 1 });
    // A layer this node has of its own (made by a build before this process started).
    const own = makeArtifact(builder, 'def apply(x): return "own"\n');
    const ownLayer = (await builder.readArtifact(own)).manifest.layer!;
    await store.ensure(firstKey);
    assert.ok(hasLayer(layer));
    // A build here of the next commit, same requirements, reuses the fetched layer: it is this node's own now.
    const log: string[] = [];
    const secondKey = await realBuild(builder, repo.dir, algorithmId, second!, (t) => log.push(t));
    assert.match(log.join(''), new RegExp(`reusing layer ${layer}`));
    await store.ensure(keys[2]!);
    assert.equal(has(firstKey), false, 'the fetched artifact goes');
    assert.ok(hasLayer(layer), 'the layer a build here used stays');
    assert.ok(fs.existsSync(path.join((await builder.readArtifact(secondKey)).layerDir!, 'venv', 'bin', 'python')));
    assert.ok(has(own) && hasLayer(ownLayer), "an artifact and layer this node did not fetch are not the cache's");
  });

  test("an older node's index (the hash of one tar with the artifact and its layer) still fetches, and the layer counts as fetched", async () => {
    const key = makeArtifact(built, 'def apply(x): return "old"\n');
    const layer = layerOf(key);
    const builtRoot = path.dirname(built.dirs.artifacts);
    const tar = path.join(root, 'old.tar');
    execFileSync('/usr/bin/tar', ['-c', '-f', tar, '-C', builtRoot, path.relative(builtRoot, built.artifactPath(key)), `layers/${layer}`]);
    const hash = await putBlob(blobs, 'artifacts/sha256/', tar);
    await plantIndex(key, hash);
    const { builder, store, has, hasLayer } = node({ cacheBytes: 1 });
    await store.ensure(key);
    assert.equal(
      fs.readFileSync(path.join((await builder.readArtifact(key)).tree, 'src', 'Algo.py'), 'utf8'),
      'def apply(x): return "old"\n',
    );
    assert.ok(hasLayer(layer));
    await store.ensure(keys[0]!);
    assert.equal(has(key), false);
    assert.equal(hasLayer(layer), false, 'its layer goes with it');
  });

  test('a blob that does not match its hash is refused, and nothing is unpacked', async () => {
    const key = makeArtifact(built, 'def apply(x): return "tampered"\n');
    await upload.upload(key);
    const { tree } = await indexOf(key);
    await blobs.put(`artifacts/sha256/${tree}`, Readable.from([Buffer.from('not the artifact')]));
    const { builder, store } = node();
    await assert.rejects(store.ensure(key), /does not match its hash/);
    assert.equal(fs.existsSync(builder.artifactPath(key)), false);
  });

  test('a layer blob that does not match its hash is refused, and neither layer nor artifact appears', async () => {
    const key = makeArtifact(built, 'def apply(x): return "tampered layer"\n');
    await upload.upload(key);
    const { layer } = await indexOf(key);
    await blobs.put(`layers/sha256/${layer!.sha256}`, Readable.from([Buffer.from('not the layer')]));
    const { builder, store, hasLayer } = node();
    await assert.rejects(store.ensure(key), /layer .* does not match its hash/);
    assert.equal(hasLayer(layer!.name), false);
    assert.equal(fs.existsSync(builder.artifactPath(key)), false);
  });

  test('an artifact that is a symbolic link in the tar is refused (it would point the runner elsewhere)', async () => {
    const key = makeArtifact(built, 'def apply(x): return "link"\n', null);
    const staging = path.join(root, 'linked');
    const rel = path.relative(path.dirname(built.dirs.artifacts), built.artifactPath(key));
    fs.mkdirSync(path.dirname(path.join(staging, rel)), { recursive: true });
    fs.symlinkSync('/etc', path.join(staging, rel));
    const tar = path.join(root, 'linked.tar');
    execFileSync('/usr/bin/tar', ['-c', '-f', tar, '-C', staging, 'artifacts']);
    const tree = await putBlob(blobs, 'artifacts/sha256/', tar);
    await plantIndex(key, JSON.stringify({ tree, layer: null }));
    const { builder, store } = node();
    await assert.rejects(store.ensure(key), /is not a directory/);
    assert.equal(fs.existsSync(builder.artifactPath(key)), false);
  });

  test('a tar holding more than its artifact is refused before anything moves (a layer too, in the new format)', async () => {
    const key = makeArtifact(built, 'def apply(x): return "extra"\n');
    const staging = path.join(root, 'evil');
    fs.mkdirSync(path.join(staging, 'etc'), { recursive: true });
    fs.writeFileSync(path.join(staging, 'etc', 'cron'), 'evil');
    const builtRoot = path.dirname(built.dirs.artifacts);
    const rel = path.relative(builtRoot, built.artifactPath(key));
    for (const extra of [
      ['-C', staging, 'etc'],
      ['-C', builtRoot, `layers/${layerOf(key)}`],
    ]) {
      const tar = path.join(root, 'evil.tar');
      execFileSync('/usr/bin/tar', ['-c', '-f', tar, ...extra, '-C', builtRoot, rel]);
      const tree = await putBlob(blobs, 'artifacts/sha256/', tar);
      await plantIndex(key, JSON.stringify({ tree, layer: null }));
      const { builder, store } = node();
      await assert.rejects(store.ensure(key), /holds more than itself/);
      assert.equal(fs.existsSync(builder.artifactPath(key)), false);
      assert.equal(fs.existsSync(path.join(path.dirname(builder.dirs.artifacts), 'etc')), false);
      assert.deepEqual(fs.readdirSync(builder.dirs.layers), []);
    }
  });

  test('an artifact whose manifest names another layer than its index is refused (the runner would mount one never checked)', async () => {
    const key = makeArtifact(built, 'def apply(x): return "other layer"\n');
    await upload.upload(key);
    const index = await indexOf(key);
    const decoy = makeArtifact(built, 'def apply(x): return "decoy"\n');
    await upload.upload(decoy);
    await plantIndex(key, JSON.stringify({ ...index, layer: (await indexOf(decoy)).layer }));
    const { builder, store } = node();
    await assert.rejects(store.ensure(key), /does not name the layer its index names/);
    assert.equal(fs.existsSync(builder.artifactPath(key)), false);
  });

  test('a layer index naming a path is refused before it is used as one', async () => {
    const key = makeArtifact(built, 'def apply(x): return "path"\n');
    await upload.upload(key);
    const index = await indexOf(key);
    const { builder, store } = node();
    for (const name of [
      '../x',
      'python/../../../etc',
      '/etc/cron.d',
      'python/abc',
      '../python/' + 'a'.repeat(32),
      `python/${'a'.repeat(32)}/..`,
    ]) {
      await plantIndex(key, JSON.stringify({ ...index, layer: { ...index.layer, name } }));
      await assert.rejects(store.ensure(key), /names an invalid dependency layer/, name);
    }
    for (const damaged of [
      '{"tree":"../../x","layer":null}',
      '{"layer":null}',
      '[1]',
      'not json',
      `{"tree":"${index.tree}","layer":"python"}`,
    ]) {
      await plantIndex(key, damaged);
      await assert.rejects(store.ensure(key), /index of artifact .* is (damaged|names an invalid)/, damaged);
    }
    assert.equal(fs.existsSync(builder.artifactPath(key)), false);
    assert.deepEqual(fs.readdirSync(builder.dirs.layers), []);
  });

  test('a layer tar holding an extra top-level entry, or a link for the layer, is refused before anything moves', async () => {
    const key = makeArtifact(built, 'def apply(x): return "evil layer"\n');
    await upload.upload(key);
    const index = await indexOf(key);
    const name = index.layer!.name;
    const hash = name.split('/')[1]!;
    const layersOfLanguage = path.dirname(path.join(built.dirs.layers, name));
    const staging = path.join(root, 'evil-layer');
    fs.mkdirSync(staging, { recursive: true });
    fs.writeFileSync(path.join(staging, 'cron'), 'evil');
    fs.mkdirSync(path.join(staging, 'link'));
    fs.symlinkSync('/etc', path.join(staging, 'link', hash));
    const cases: [string[], RegExp][] = [
      [['-C', layersOfLanguage, hash, '-C', staging, 'cron'], /holds more than itself/],
      [['-C', path.join(staging, 'link'), hash], /is not a directory/],
    ];
    for (const [members, refusal] of cases) {
      const tar = path.join(root, 'evil-layer.tar');
      execFileSync('/usr/bin/tar', ['-c', '-f', tar, ...members]);
      const sha256 = await putBlob(blobs, 'layers/sha256/', tar);
      await plantIndex(key, JSON.stringify({ ...index, layer: { name, sha256 } }));
      const { builder, store } = node();
      await assert.rejects(store.ensure(key), refusal);
      assert.deepEqual(fs.readdirSync(builder.dirs.layers), [], 'nothing moved into the layers');
      assert.equal(fs.existsSync(builder.artifactPath(key)), false);
    }
  });
});

for (const kind of DATABASES) {
  describe(`an index changed in the bucket is refused by the digest in the database (${kind})`, () => {
    let root: string;
    let blobs: BlobStore;
    let database: OpenedDb;
    let digests: SqlBlobIndexDigestStore;
    let built: SandboxBuilder;
    let upload: BlobArtifactStore;
    let n = 0;
    const fresh = () => {
      const builder = builderAt(path.join(root, `node-${n++}`));
      return { builder, store: new BlobArtifactStore(blobs, digests, builder, { cacheBytes: 0 }, silent) };
    };
    const indexBody = async (k: string) => bytes((await blobs.get(`artifacts/index/${k}`))!.body);
    const source = (builder: SandboxBuilder, k: string) =>
      fs.readFileSync(path.join(builder.artifactPath(k), 'tree', 'src', 'Algo.py'), 'utf8');

    before(async () => {
      root = await makeTempDir('algohost-artifact-digests-');
      fs.chmodSync(root, 0o711);
      blobs = await openBlobs(root);
      ({ opened: database, digests } = await digestStore(kind));
      built = builderAt(path.join(root, 'built'));
      upload = new BlobArtifactStore(blobs, digests, built, { cacheBytes: 0 }, silent);
    });
    after(async () => {
      await blobs.close();
      await database.close();
      fs.rmSync(root, { recursive: true, force: true });
    });

    test("mallory's index written over alice's is refused with the reason and nothing is unpacked; the node that built it stores it again", async () => {
      const alice = makeArtifact(built, 'def apply(x): return "alice"\n', null);
      const mallory = makeArtifact(built, 'def apply(x): return "mallory"\n', null);
      await upload.upload(alice);
      await upload.upload(mallory);
      // With the bucket's credentials: alice's index now names mallory's tree (a valid blob of its hash).
      await blobs.put(`artifacts/index/${alice}`, Readable.from([await indexBody(mallory)]));
      const victim = fresh();
      await assert.rejects(victim.store.ensure(alice), /index of artifact .* does not match the digest recorded in the database/);
      assert.equal(fs.existsSync(victim.builder.artifactPath(alice)), false, 'nothing of the forged index was unpacked');
      // Uploading again (a rebuild of alice's algorithm) finds the index changed and stores alice's own.
      await upload.upload(alice);
      const next = fresh();
      await next.store.ensure(alice);
      assert.match(source(next.builder, alice), /"alice"/);
    });

    test('an index the database has no digest of (not written by a node of this cluster) is refused', async () => {
      const alice = makeArtifact(built, 'def apply(x): return "alice"\n', null);
      const mallory = makeArtifact(built, 'def apply(x): return "mallory"\n', null);
      await upload.upload(mallory);
      await blobs.put(`artifacts/index/${alice}`, Readable.from([await indexBody(mallory)]));
      const victim = fresh();
      await assert.rejects(victim.store.ensure(alice), /no digest recorded in the database/);
      assert.equal(fs.existsSync(victim.builder.artifactPath(alice)), false);
    });

    test("a layer index changed in the bucket is not reused: the next artifact needing the layer names the node's own", async () => {
      const layer = newLayer();
      const first = makeArtifact(built, 'def apply(x): return "first"\n', layer);
      await upload.upload(first);
      // Mallory's own layer blob, and the layer's index pointed at it.
      const planted = path.join(root, 'planted.tar');
      fs.writeFileSync(planted, 'not a layer of this cluster');
      const forged = await putBlob(blobs, 'layers/sha256/', planted);
      await blobs.put(`layers/index/${layer}`, Readable.from([Buffer.from(forged)]));
      const second = makeArtifact(built, 'def apply(x): return "second"\n', layer);
      await upload.upload(second);
      const index = JSON.parse((await indexBody(second)).toString('utf8')) as { layer: { sha256: string } };
      assert.notEqual(index.layer.sha256, forged);
      const next = fresh();
      await next.store.ensure(second);
      assert.match(source(next.builder, second), /"second"/);
      assert.ok(fs.existsSync(path.join(next.builder.dirs.layers, layer, 'dep.py')), 'the layer fetched is the node-built one');
    });
  });
}

/** A Git repository of a Python algorithm with a requirement (pip itself: a layer, no network) and two commits. */
async function makeRepository(root: string): Promise<{ dir: string; commits: string[] }> {
  const dir = path.join(root, 'repo');
  const git = (...args: string[]) =>
    execFileSync(GIT, ['-C', dir, ...args], {
      env: {
        PATH: process.env.PATH,
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_CONFIG_GLOBAL: '/dev/null',
        HOME: root,
        GIT_AUTHOR_NAME: 't',
        GIT_AUTHOR_EMAIL: 't@example.com',
        GIT_COMMITTER_NAME: 't',
        GIT_COMMITTER_EMAIL: 't@example.com',
      },
    })
      .toString()
      .trim();
  fs.mkdirSync(path.join(dir, 'src'), { recursive: true });
  git('init', '-q', '-b', 'main');
  fs.writeFileSync(path.join(dir, 'requirements.txt'), 'pip\n');
  const commits: string[] = [];
  for (const t of ['first', 'second']) {
    fs.writeFileSync(path.join(dir, 'src', 'Algo.py'), `def apply(x):\n    return "${t}"\n`);
    git('add', '-A');
    git('commit', '-q', '-m', t);
    commits.push(git('rev-parse', 'HEAD'));
  }
  return { dir, commits };
}

/** Builds a commit with the real builder (sandboxed steps), as a worker does for a queued build. */
async function realBuild(
  builder: SandboxBuilder,
  repositoryPath: string,
  algorithmId: string,
  commitSha: string,
  log: (t: string) => void = () => {},
): Promise<string> {
  const catalog = readCatalog();
  const spec = catalog.environments.find((e) => e.name === 'python311')!;
  const environment: Environment = {
    ...spec,
    id: crypto.randomUUID(),
    createdAt: new Date().toISOString(),
    languageSpec: catalog.languages.find((l) => l.name === spec.language)!,
  };
  const build = { id: crypto.randomUUID(), algorithmId, commitSha, environmentName: spec.name } as Build;
  const { artifact } = await builder.build(
    { build, ownerId: crypto.randomUUID(), environment, repositoryPath },
    log,
    new AbortController().signal,
  );
  return artifact;
}

async function bytes(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of body) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

async function text(body: Readable): Promise<string> {
  return (await bytes(body)).toString('utf8');
}
