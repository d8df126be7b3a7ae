/**
 * Artifacts in the blob store (cluster/artifact-store.ts), between the builders of two "nodes"
 * (two build roots) over a real disk blob store: what one uploads the other unpacks whole, with
 * its layer; fetched artifacts stay within the cache bound except those with warm runners; a
 * blob that does not match its hash, or a tar holding anything but its artifact and layer, is
 * refused before anything moves into place.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { BlobArtifactStore } from '../src/cluster/artifact-store.js';
import { SandboxBuilder } from '../src/runtime/build/sandbox-builder.js';
import { LANGUAGE_ADAPTERS } from '../src/runtime/languages/index.js';
import { EgressProxy } from '../src/runtime/sandbox/egress-proxy.js';
import { Supervisor } from '../src/runtime/sandbox/supervisor.js';
import { DiskBlobStore } from '../src/storage/blobs/disk-blob-store.js';
import { makeTempDir } from './support/server.js';

const silent = { warn: () => {} };

function builderAt(root: string): SandboxBuilder {
  const builder = new SandboxBuilder(new Supervisor({ maxOpenFiles: 64 }), LANGUAGE_ADAPTERS, {
    root,
    sharedCache: true,
    registries: { pipFindLinks: [] },
    egress: new EgressProxy({ dir: path.join(root, 'egress'), allow: [] }),
    memoryBytes: 256 * 1024 * 1024,
    git: '/usr/bin/git',
    maxArtifactBytes: 0,
  });
  builder.prepare();
  return builder;
}

/** Writes an artifact as the builder leaves one: tree, manifest and a dependency layer. */
function makeArtifact(builder: SandboxBuilder, text: string): string {
  const algorithmId = crypto.randomUUID();
  const commit = crypto.randomBytes(20).toString('hex');
  const key = `${algorithmId}/python311/${commit}`;
  const layer = `python/${crypto.randomBytes(16).toString('hex')}`;
  const dir = builder.artifactPath(key);
  fs.mkdirSync(path.join(dir, 'tree', 'src'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'tree', 'src', 'Algo.py'), text);
  fs.writeFileSync(
    path.join(dir, 'manifest.json'),
    JSON.stringify({ algorithmId, environment: 'python311', language: 'python', commit, layer, builtAt: new Date().toISOString() }),
  );
  fs.mkdirSync(path.join(builder.dirs.layers, layer), { recursive: true });
  fs.writeFileSync(path.join(builder.dirs.layers, layer, 'dep.py'), `# dependency of ${text}\n`);
  return key;
}

describe('artifacts in the blob store (cluster mode)', () => {
  let root: string;
  let blobs: DiskBlobStore;
  let built: SandboxBuilder;
  let upload: BlobArtifactStore;
  let keys: string[];

  before(async () => {
    root = await makeTempDir('algohost-artifacts-');
    fs.chmodSync(root, 0o711); // the sandbox user passes through to build directories
    blobs = new DiskBlobStore(path.join(root, 'blobs'));
    await blobs.open();
    built = builderAt(path.join(root, 'a'));
    upload = new BlobArtifactStore(blobs, built, { cacheBytes: 0, warm: () => new Set() }, silent);
    keys = ['one', 'two', 'three'].map((t) => makeArtifact(built, `def apply(x): return "${t}"\n`));
    for (const k of keys) await upload.upload(k);
  });
  after(() => fs.rmSync(root, { recursive: true, force: true }));

  test('another node unpacks an uploaded artifact whole, with its layer, where the runner looks', async () => {
    const other = builderAt(path.join(root, 'b'));
    const store = new BlobArtifactStore(blobs, other, { cacheBytes: 0, warm: () => new Set() }, silent);
    await store.ensure(keys[0]!);
    const info = await other.readArtifact(keys[0]!);
    assert.equal(fs.readFileSync(path.join(info.tree, 'src', 'Algo.py'), 'utf8'), 'def apply(x): return "one"\n');
    assert.ok(info.layerDir);
    assert.equal(fs.readFileSync(path.join(info.layerDir, 'dep.py'), 'utf8'), '# dependency of def apply(x): return "one"\n\n');
    // Uploading again stores nothing new: the index names the same content.
    const before = (await blobs.list('artifacts/')).items.length;
    await upload.upload(keys[0]!);
    assert.equal((await blobs.list('artifacts/')).items.length, before);
  });

  test('fetched artifacts stay within the cache bound, least recently fetched first, never one with warm runners', async () => {
    const other = builderAt(path.join(root, 'c'));
    const warm = new Set([keys[0]!]);
    const store = new BlobArtifactStore(blobs, other, { cacheBytes: 1, warm: () => warm }, silent);
    const has = (k: string) => fs.existsSync(path.join(other.artifactPath(k), 'manifest.json'));
    await store.ensure(keys[0]!);
    await store.ensure(keys[1]!);
    // The second artifact's layer joins the first one's language folder.
    assert.ok((await other.readArtifact(keys[1]!)).layerDir);
    assert.ok(fs.existsSync(path.join((await other.readArtifact(keys[1]!)).layerDir!, 'dep.py')), 'its layer is unpacked too');
    assert.ok(has(keys[0]!), 'warm: kept');
    assert.ok(has(keys[1]!), 'just fetched: kept');
    await store.ensure(keys[2]!);
    assert.ok(has(keys[0]!), 'warm: still kept');
    assert.equal(has(keys[1]!), false, 'the least recently fetched without runners goes');
    assert.ok(has(keys[2]!));
  });

  test('a blob that does not match its hash is refused, and nothing is unpacked', async () => {
    const key = makeArtifact(built, 'def apply(x): return "tampered"\n');
    await upload.upload(key);
    const hash = await text((await blobs.get(`artifacts/index/${key}`))!.body);
    await blobs.put(`artifacts/sha256/${hash}`, Readable.from([Buffer.from('not the artifact')]));
    const other = builderAt(path.join(root, 'd'));
    const store = new BlobArtifactStore(blobs, other, { cacheBytes: 0, warm: () => new Set() }, silent);
    await assert.rejects(store.ensure(key), /does not match its hash/);
    assert.equal(fs.existsSync(other.artifactPath(key)), false);
  });

  test('an artifact that is a symbolic link in the tar is refused (it would point the runner elsewhere)', async () => {
    const key = makeArtifact(built, 'def apply(x): return "link"\n');
    const staging = path.join(root, 'linked');
    const rel = path.relative(path.dirname(built.dirs.artifacts), built.artifactPath(key));
    fs.mkdirSync(path.dirname(path.join(staging, rel)), { recursive: true });
    fs.symlinkSync('/etc', path.join(staging, rel));
    const tar = path.join(root, 'linked.tar');
    execFileSync('/usr/bin/tar', ['-c', '-f', tar, '-C', staging, 'artifacts']);
    const hash = crypto.createHash('sha256').update(fs.readFileSync(tar)).digest('hex');
    await blobs.put(`artifacts/sha256/${hash}`, fs.createReadStream(tar));
    await blobs.put(`artifacts/index/${key}`, Readable.from([Buffer.from(hash)]));
    const other = builderAt(path.join(root, 'f'));
    const store = new BlobArtifactStore(blobs, other, { cacheBytes: 0, warm: () => new Set() }, silent);
    await assert.rejects(store.ensure(key), /is not a directory/);
    assert.equal(fs.existsSync(other.artifactPath(key)), false);
  });

  test('a tar holding more than its artifact and layer is refused before anything moves', async () => {
    const key = makeArtifact(built, 'def apply(x): return "extra"\n');
    const staging = path.join(root, 'evil');
    fs.mkdirSync(path.join(staging, 'etc'), { recursive: true });
    fs.writeFileSync(path.join(staging, 'etc', 'cron'), 'evil');
    const tar = path.join(root, 'evil.tar');
    const builtRoot = path.dirname(built.dirs.artifacts);
    execFileSync('/usr/bin/tar', [
      '-c',
      '-f',
      tar,
      '-C',
      staging,
      'etc',
      '-C',
      builtRoot,
      path.relative(builtRoot, built.artifactPath(key)),
    ]);
    const hash = crypto.createHash('sha256').update(fs.readFileSync(tar)).digest('hex');
    await blobs.put(`artifacts/sha256/${hash}`, fs.createReadStream(tar));
    await blobs.put(`artifacts/index/${key}`, Readable.from([Buffer.from(hash)]));
    const other = builderAt(path.join(root, 'e'));
    const store = new BlobArtifactStore(blobs, other, { cacheBytes: 0, warm: () => new Set() }, silent);
    await assert.rejects(store.ensure(key), /holds more than itself/);
    assert.equal(fs.existsSync(other.artifactPath(key)), false);
    assert.equal(fs.existsSync(path.join(path.dirname(other.dirs.artifacts), 'etc')), false);
  });
});

async function text(body: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of body) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
