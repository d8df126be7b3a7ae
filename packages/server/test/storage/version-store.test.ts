/** The store contract for published versions (domain/versions/ports.ts), against SQLite and PostgreSQL. */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { DomainError } from '../../src/domain/errors.js';
import { parsePageRequest } from '../../src/domain/pagination.js';
import type { Version } from '../../src/domain/versions/model.js';
import { migrateToLatest } from '../../src/storage/database.js';
import { SqlVersionStore } from '../../src/storage/version-store.js';
import { emptyDatabase, type OpenedDb } from '../support/database.js';
import { type DatabaseKind, DATABASES } from '../support/server.js';
import { insertAccount, insertAlgorithm } from '../support/store-records.js';

const CREATED = '2024-01-01T00:00:00.000Z';

/** An algorithm of an account of its own, which versions belong to. */
async function algorithmIn(opened: OpenedDb, name: string): Promise<string> {
  const ownerId = await insertAccount(opened.db, `${name}owner`);
  return insertAlgorithm(opened.db, ownerId, `${name}owner`, name);
}

function version(algorithmId: string, semver: string, extra: Partial<Version> = {}): Version {
  const [major, minor, patch] = semver.split('.').map(Number) as [number, number, number];
  return {
    id: crypto.randomUUID(),
    algorithmId,
    buildId: crypto.randomUUID(),
    commitSha: crypto.randomBytes(20).toString('hex'),
    environmentName: 'python311',
    artifact: `python311-${semver}`,
    semanticVersion: semver,
    major,
    minor,
    patch,
    algorithmCallability: 'private',
    insightsEnabled: false,
    releaseNotes: null,
    sampleInput: null,
    sampleOutput: null,
    requestFingerprint: crypto.randomBytes(16).toString('hex'),
    publishedBy: 'alice',
    publishedAt: CREATED,
    ...extra,
  };
}

const isPublishRace = (err: unknown) => err instanceof DomainError && err.kind === 'conflict' && err.code === 1007;

for (const database of DATABASES) describe(`store contract: versions (${database})`, () => contract(database));

function contract(database: DatabaseKind): void {
  let opened: OpenedDb;
  let versions: SqlVersionStore;

  before(async () => {
    opened = await emptyDatabase(database);
    await migrateToLatest(opened.db);
    versions = new SqlVersionStore(opened.db);
  });
  after(() => opened?.close());

  test('insert keeps every field; find by build, by commit and the latest follow semantic order, not text order', async () => {
    const algorithmId = await algorithmIn(opened, 'Ordered');
    const first = version(algorithmId, '1.9.0', {
      algorithmCallability: 'public',
      insightsEnabled: true,
      releaseNotes: 'notes',
      sampleInput: '{"a":1}',
      sampleOutput: '2',
    });
    const tenth = version(algorithmId, '1.10.0', { commitSha: first.commitSha });
    const patch = version(algorithmId, '1.9.1');
    for (const v of [first, tenth, patch]) await versions.insert(v);

    assert.deepEqual(await versions.findByBuild(algorithmId, first.buildId), first);
    assert.deepEqual(await versions.findByCommit(algorithmId, first.commitSha), tenth, 'the highest version of the commit');
    assert.deepEqual(await versions.latest(algorithmId), tenth);
    assert.deepEqual(
      (await versions.listAll(algorithmId)).map((v) => v.semanticVersion),
      ['1.10.0', '1.9.1', '1.9.0'],
    );
    assert.equal(await versions.findByBuild(algorithmId, crypto.randomUUID()), undefined);
    assert.equal(await versions.findByCommit(algorithmId, '0'.repeat(40)), undefined);
    assert.equal(await versions.latest(await algorithmIn(opened, 'Unpublished')), undefined);
  });

  test('the same number or the same build twice is a DomainError conflict (1007); another algorithm may reuse the number', async () => {
    const algorithmId = await algorithmIn(opened, 'Raced');
    const published = version(algorithmId, '1.0.0');
    await versions.insert(published);
    await assert.rejects(versions.insert(version(algorithmId, '1.0.0')), isPublishRace);
    await assert.rejects(versions.insert(version(algorithmId, '1.0.1', { buildId: published.buildId })), isPublishRace);
    const racing = await Promise.allSettled([
      versions.insert(version(algorithmId, '2.0.0')),
      versions.insert(version(algorithmId, '2.0.0')),
    ]);
    assert.deepEqual(racing.map((r) => r.status).sort(), ['fulfilled', 'rejected'], 'one of two racing publishes wins');
    await versions.insert(version(await algorithmIn(opened, 'Neighbour'), '1.0.0'));
    assert.deepEqual(
      (await versions.listAll(algorithmId)).map((v) => v.semanticVersion),
      ['2.0.0', '1.0.0'],
    );
  });

  test('list pages highest first and filters by callability; a marker holding NUL is refused', async () => {
    const algorithmId = await algorithmIn(opened, 'Paged');
    const numbers = ['0.1.0', '0.2.0', '0.10.0', '1.0.0', '2.0.0'];
    for (const n of numbers)
      await versions.insert(version(algorithmId, n, { algorithmCallability: n.startsWith('0.') ? 'private' : 'public' }));
    const first = await versions.list(algorithmId, { page: parsePageRequest('2', undefined) });
    assert.deepEqual(
      first.items.map((v) => v.semanticVersion),
      ['2.0.0', '1.0.0'],
    );
    const second = await versions.list(algorithmId, { page: parsePageRequest('2', first.nextMarker!) });
    assert.deepEqual(
      second.items.map((v) => v.semanticVersion),
      ['0.10.0', '0.2.0'],
    );
    const third = await versions.list(algorithmId, { page: parsePageRequest('2', second.nextMarker!) });
    assert.deepEqual(
      third.items.map((v) => v.semanticVersion),
      ['0.1.0'],
    );
    assert.equal(third.nextMarker, null);
    const publicOnly = await versions.list(algorithmId, { callability: 'public', page: parsePageRequest('10', undefined) });
    assert.deepEqual(
      publicOnly.items.map((v) => v.semanticVersion),
      ['2.0.0', '1.0.0'],
    );
    await assert.rejects(
      versions.list(algorithmId, { page: { limit: 2, after: 'a\u0000' } }),
      (err: unknown) => err instanceof DomainError && err.kind === 'invalid' && err.code === 5002,
    );
  });
}
