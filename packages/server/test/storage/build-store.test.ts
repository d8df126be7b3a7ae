/** The store contract for builds (domain/builds/ports.ts BuildStore), against SQLite and PostgreSQL. */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Build } from '../../src/domain/builds/model.js';
import { parsePageRequest } from '../../src/domain/pagination.js';
import { SqlBuildStore } from '../../src/storage/build-store.js';
import { migrateToLatest } from '../../src/storage/database.js';
import { emptyDatabase, type OpenedDb } from '../support/database.js';
import { type DatabaseKind, DATABASES } from '../support/server.js';
import { insertAccount, insertAlgorithm } from '../support/store-records.js';

const at = (minute: number) => new Date(Date.UTC(2024, 0, 1, 0, minute)).toISOString();

function build(algorithmId: string, minute: number, extra: Partial<Build> = {}): Build {
  return {
    id: crypto.randomUUID(),
    algorithmId,
    commitSha: crypto.randomBytes(20).toString('hex'),
    environmentName: 'python311',
    status: 'queued',
    trigger: 'push',
    attempt: 0,
    error: null,
    artifact: null,
    createdAt: at(minute),
    startedAt: null,
    finishedAt: null,
    ...extra,
  };
}

for (const database of DATABASES) describe(`store contract: builds (${database})`, () => contract(database));

function contract(database: DatabaseKind): void {
  let opened: OpenedDb;
  let builds: SqlBuildStore;

  before(async () => {
    opened = await emptyDatabase(database);
    await migrateToLatest(opened.db);
    builds = new SqlBuildStore(opened.db);
  });
  after(() => opened?.close());

  test('insert keeps every field; listing pages newest first; the succeeded lookups find the newest success', async () => {
    const owner = await insertAccount(opened.db, 'buildlister');
    const algorithmId = await insertAlgorithm(opened.db, owner, 'buildlister', 'Listed');
    const commit = crypto.randomBytes(20).toString('hex');
    const old = build(algorithmId, 1, {
      commitSha: commit,
      status: 'succeeded',
      attempt: 1,
      artifact: 'art-old',
      startedAt: at(2),
      finishedAt: at(3),
    });
    const failed = build(algorithmId, 4, {
      commitSha: commit,
      status: 'failed',
      trigger: 'compile',
      attempt: 2,
      error: 'exit 1',
      startedAt: at(5),
      finishedAt: at(6),
    });
    const newer = build(algorithmId, 7, {
      commitSha: commit,
      status: 'succeeded',
      attempt: 1,
      artifact: 'art-new',
      startedAt: at(8),
      finishedAt: at(9),
    });
    const queued = build(algorithmId, 10);
    for (const b of [old, failed, newer, queued]) await builds.insert(b);

    assert.deepEqual(await builds.get(failed.id), failed);
    assert.equal(await builds.get(crypto.randomUUID()), undefined);
    const first = await builds.listForAlgorithm(algorithmId, parsePageRequest('3', undefined));
    assert.deepEqual(first.items, [queued, newer, failed]);
    const rest = await builds.listForAlgorithm(algorithmId, parsePageRequest('3', first.nextMarker!));
    assert.deepEqual(rest.items, [old]);
    assert.equal(rest.nextMarker, null);

    assert.deepEqual(await builds.latestSucceeded(algorithmId), newer);
    assert.deepEqual(await builds.findSucceeded(algorithmId, commit), newer);
    assert.equal(await builds.findSucceeded(algorithmId, '0'.repeat(40)), undefined);
    assert.deepEqual(await builds.findSucceededArtifact(algorithmId, 'art-old'), old);
    assert.equal(await builds.findSucceededArtifact(algorithmId, 'art-missing'), undefined);
    assert.equal(await builds.findSucceededArtifact(crypto.randomUUID(), 'art-old'), undefined, "another algorithm's artifact");
  });

  test('the queue: per account, oldest first, one build of an algorithm at a time, in push order', async () => {
    const owner = await insertAccount(opened.db, 'queueowner');
    const one = await insertAlgorithm(opened.db, owner, 'queueowner', 'One');
    const two = await insertAlgorithm(opened.db, owner, 'queueowner', 'Two');
    const other = await insertAccount(opened.db, 'queueother');
    const theirs = await insertAlgorithm(opened.db, other, 'queueother', 'Theirs');

    const oneFirst = build(one, 20);
    const oneSecond = build(one, 21);
    const twoFirst = build(two, 22);
    const theirsFirst = build(theirs, 23);
    for (const b of [oneSecond, oneFirst, twoFirst, theirsFirst]) await builds.insert(b);

    const accounts = await builds.queuedAccounts();
    const byOwner = new Map(accounts.map((a) => [a.ownerId, a.oldestAt]));
    assert.equal(byOwner.get(owner), at(20));
    assert.equal(byOwner.get(other), at(23));
    assert.deepEqual(await builds.countActive(), { queued: 5, running: 0 }, 'with the first test’s queued build');

    assert.deepEqual(await builds.nextQueued(owner), oneFirst);
    assert.equal(await builds.nextQueued(crypto.randomUUID()), undefined);
    assert.equal(await builds.claim(oneSecond.id, at(30)), false, 'a later build of the algorithm waits for the earlier one');
    assert.equal(await builds.claim(oneFirst.id, at(30)), true);
    assert.equal(await builds.claim(oneFirst.id, at(31)), false, 'claimed once');
    const claimed = await builds.get(oneFirst.id);
    assert.deepEqual(claimed, { ...oneFirst, status: 'in-progress', attempt: 1, startedAt: at(30) });
    assert.deepEqual(await builds.nextQueued(owner), twoFirst, 'algorithm One has a build in progress');
    assert.equal(await builds.claim(oneSecond.id, at(31)), false, 'one build of an algorithm in progress at a time');
    assert.deepEqual(await builds.listInProgress(), [claimed]);
    assert.deepEqual(await builds.countActive(), { queued: 4, running: 1 });

    await builds.requeue(oneFirst.id);
    assert.deepEqual(await builds.get(oneFirst.id), { ...oneFirst, attempt: 1 }, 'queued again, the attempt counted');
    assert.equal(await builds.claim(oneFirst.id, at(32)), true);
    await builds.finish(oneFirst.id, { status: 'succeeded', error: null, artifact: 'one-art', finishedAt: at(33) });
    await builds.requeue(oneFirst.id);
    assert.deepEqual(
      await builds.get(oneFirst.id),
      {
        ...oneFirst,
        status: 'succeeded',
        attempt: 2,
        artifact: 'one-art',
        startedAt: at(32),
        finishedAt: at(33),
      },
      'a finished build is not requeued',
    );
    assert.deepEqual(await builds.nextQueued(owner), oneSecond);
    const racing = await Promise.all([builds.claim(oneSecond.id, at(34)), builds.claim(oneSecond.id, at(34))]);
    assert.deepEqual(racing.filter(Boolean).length, 1, 'two workers claiming at once: one wins');
    assert.deepEqual(await builds.countActive(), { queued: 3, running: 1 });
  });
}
