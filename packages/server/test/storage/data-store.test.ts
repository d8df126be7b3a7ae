/** The store contract for hosted data records and quota reservations (domain/data/ports.ts DataStore), against SQLite and PostgreSQL. */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { FileRecord, FolderRecord, SpaceRef } from '../../src/domain/data/model.js';
import { DomainError } from '../../src/domain/errors.js';
import { SqlDataStore } from '../../src/storage/data-store.js';
import { migrateToLatest } from '../../src/storage/database.js';
import { emptyDatabase, type OpenedDb } from '../support/database.js';
import { DATABASES, type DatabaseKind } from '../support/server.js';
import { insertAccount, insertAlgorithm } from '../support/store-records.js';

const at = (minute: number) => new Date(Date.UTC(2024, 0, 1, 0, minute)).toISOString();

function folder(space: SpaceRef, accountId: string, path: string, minute = 0): FolderRecord {
  const slash = path.lastIndexOf('/');
  return {
    id: crypto.randomUUID(),
    space,
    accountId,
    path,
    parent: slash < 0 ? '' : path.slice(0, slash),
    name: path.slice(slash + 1),
    aclRead: slash < 0 && space.kind === 'account' ? ['algo://.my/*'] : null,
    createdAt: at(minute),
    updatedAt: at(minute),
  };
}

function file(space: SpaceRef, accountId: string, folderPath: string, name: string, size: number, minute = 0): FileRecord {
  return { space, accountId, folder: folderPath, name, size, lastModified: at(minute), blobKey: `blobs/${crypto.randomUUID()}` };
}

const names = (records: { name: string }[]) => records.map((r) => r.name).sort();

for (const database of DATABASES) describe(`store contract: hosted data (${database})`, () => contract(database));

function contract(database: DatabaseKind): void {
  let opened: OpenedDb;
  let data: SqlDataStore;

  before(async () => {
    opened = await emptyDatabase(database);
    await migrateToLatest(opened.db);
    data = new SqlDataStore(opened.db);
  });
  after(() => opened?.close());

  test('folders: found by path within their space only; a second of one path is a conflict; ACLs set; listed by name after a name', async () => {
    const accountId = await insertAccount(opened.db, 'folderowner');
    const space: SpaceRef = { kind: 'account', id: accountId };
    const coll = folder(space, accountId, 'coll');
    await data.insertFolder(coll);
    for (const path of ['coll/b', 'coll/a', 'coll/c', 'coll/b/deep']) await data.insertFolder(folder(space, accountId, path));
    await assert.rejects(
      data.insertFolder(folder(space, accountId, 'coll/a')),
      (err: unknown) => err instanceof DomainError && err.kind === 'conflict',
    );
    assert.deepEqual(await data.findFolder(space, 'coll'), coll);
    assert.equal(await data.findFolder({ kind: 'account', id: crypto.randomUUID() }, 'coll'), undefined);
    assert.equal(await data.findFolder({ kind: 'session', id: accountId }, 'coll'), undefined, 'another kind of space');

    await data.setAcl(coll.id, ['user://*'], at(5));
    assert.deepEqual(await data.findFolder(space, 'coll'), { ...coll, aclRead: ['user://*'], updatedAt: at(5) });

    assert.deepEqual(
      (await data.listFolders(space, 'coll', undefined, 2)).map((f) => f.name),
      ['a', 'b'],
    );
    assert.deepEqual(
      (await data.listFolders(space, 'coll', 'b', 2)).map((f) => f.name),
      ['c'],
    );
    assert.deepEqual(
      (await data.listFolders(space, '', undefined, 10)).map((f) => f.path),
      ['coll'],
    );
  });

  test('files: upsert returns the blob it replaced; find, list by name after a name, delete; what is under a path, by whole names', async () => {
    const accountId = await insertAccount(opened.db, 'fileowner');
    const space: SpaceRef = { kind: 'account', id: accountId };
    for (const path of ['docs', 'docs/sub', 'docs2', 'été']) await data.insertFolder(folder(space, accountId, path));
    const first = file(space, accountId, 'docs', 'b.txt', 10, 1);
    assert.equal(await data.upsertFile(first), undefined);
    const replaced = { ...file(space, accountId, 'docs', 'b.txt', 15, 2) };
    assert.equal(await data.upsertFile(replaced), first.blobKey);
    assert.deepEqual(await data.findFile(space, 'docs', 'b.txt'), replaced);
    const others = [
      file(space, accountId, 'docs', 'a.txt', 1),
      file(space, accountId, 'docs', 'c.txt', 2),
      file(space, accountId, 'docs/sub', 'deep.txt', 3),
      file(space, accountId, 'docs2', 'next-door.txt', 4),
      file(space, accountId, 'été', 'accent.txt', 5),
    ];
    for (const f of others) await data.upsertFile(f);

    assert.deepEqual(
      (await data.listFiles(space, 'docs', undefined, 2)).map((f) => f.name),
      ['a.txt', 'b.txt'],
    );
    assert.deepEqual(
      (await data.listFiles(space, 'docs', 'b.txt', 5)).map((f) => f.name),
      ['c.txt'],
    );
    assert.deepEqual(names(await data.filesUnder(space, 'docs')), ['a.txt', 'b.txt', 'c.txt', 'deep.txt'], 'docs2 is not under docs');
    assert.deepEqual(names(await data.filesUnder(space, 'été')), ['accent.txt']);
    assert.equal((await data.filesUnder(space, '')).length, 6);
    assert.equal(await data.hasChildren(space, 'docs/sub'), true);
    assert.equal(await data.hasChildren(space, 'docs2'), true);
    assert.equal(await data.hasChildren(space, ''), true);
    assert.equal(await data.usage(accountId), 15 + 1 + 2 + 3 + 4 + 5);

    await data.deleteFile(space, 'docs/sub', 'deep.txt');
    assert.equal(await data.findFile(space, 'docs/sub', 'deep.txt'), undefined);
    assert.equal(await data.hasChildren(space, 'docs/sub'), false);

    await data.deleteTree(space, 'docs');
    assert.equal(await data.findFolder(space, 'docs'), undefined);
    assert.equal(await data.findFolder(space, 'docs/sub'), undefined);
    assert.ok(await data.findFolder(space, 'docs2'), 'a folder whose name starts alike stays');
    assert.deepEqual(names(await data.filesUnder(space, '')), ['accent.txt', 'next-door.txt']);
    assert.deepEqual(
      (await data.unreferencedBlobKeys([others[3]!.blobKey, first.blobKey, replaced.blobKey])).sort(),
      [first.blobKey, replaced.blobKey].sort(),
    );
    assert.deepEqual(await data.unreferencedBlobKeys([]), []);
  });

  test('reservations: granted up to the quota, counting files and fresh reservations; an upsert or release frees them; stale ones go', async () => {
    const accountId = await insertAccount(opened.db, 'quotaowner');
    const space: SpaceRef = { kind: 'account', id: accountId };
    await data.insertFolder(folder(space, accountId, 'up'));
    await data.upsertFile(file(space, accountId, 'up', 'held.bin', 40));
    const reserve = (id: string, min: number, max: number, minute: number) =>
      data.reserve({ id, accountId, min, max, limit: 100, at: at(minute), staleBefore: at(minute - 10) });

    assert.deepEqual(await reserve('r1', 10, 30, 20), { granted: 30, used: 40 });
    assert.deepEqual(await reserve('r2', 10, 50, 20), { granted: 30, used: 70 }, 'only what fits');
    assert.deepEqual(await reserve('r3', 1, 5, 20), { granted: 0, used: 100 }, 'less than min fits: nothing');
    assert.deepEqual(await reserve('r1', 0, 10, 21), { granted: 0, used: 70 }, 'an upload adds to its own reservation');

    await data.upsertFile(file(space, accountId, 'up', 'r1.bin', 30), 'r1');
    assert.deepEqual(await reserve('r4', 1, 100, 22), { granted: 0, used: 100 }, 'the file counts once, the reservation is gone');
    await data.releaseReservation('r2');
    assert.deepEqual(await reserve('r5', 1, 100, 22), { granted: 30, used: 70 });

    await data.touchReservation('r5', at(40));
    assert.deepEqual(await reserve('r6', 1, 100, 45), { granted: 0, used: 100 }, 'r5 was touched: still counts');
    assert.deepEqual(await reserve('r7', 1, 100, 60), { granted: 30, used: 70 }, 'r5 is stale: it no longer counts');
    assert.equal(await data.deleteStaleReservations(at(50)), 1, 'r5');
    assert.equal(await data.deleteStaleReservations(at(50)), 0);
  });

  test("an account's files, old files and folders of a kind of space, orphan algorithm spaces, and deleting all of an account", async () => {
    const accountId = await insertAccount(opened.db, 'sweepowner');
    const live = await insertAlgorithm(opened.db, accountId, 'sweepowner', 'Live');
    const gone = crypto.randomUUID();
    const liveSpace: SpaceRef = { kind: 'algo', id: live };
    const goneSpace: SpaceRef = { kind: 'algo', id: gone };
    const session: SpaceRef = { kind: 'session', id: crypto.randomUUID() };
    const temp = folder(liveSpace, accountId, 'temp', 1);
    await data.insertFolder(temp);
    const models = folder(liveSpace, accountId, 'temp/models', 2);
    await data.insertFolder(models);
    await data.insertFolder(folder(goneSpace, accountId, 'left', 3));
    await data.upsertFile(file(liveSpace, accountId, 'temp', 'old.bin', 1, 5));
    await data.upsertFile(file(liveSpace, accountId, 'temp/models', 'old-model.bin', 1, 6));
    await data.upsertFile(file(liveSpace, accountId, 'temp', 'new.bin', 1, 50));
    await data.upsertFile(file(goneSpace, accountId, 'left', 'orphan.bin', 1, 5));
    await data.upsertFile(file(session, accountId, '', 'session.bin', 1, 5));

    assert.deepEqual(names(await data.filesModifiedBefore('algo', 'temp', at(10), 10)), ['old-model.bin', 'old.bin']);
    assert.deepEqual(names(await data.filesModifiedBefore('algo', '', at(10), 10)), ['old-model.bin', 'old.bin', 'orphan.bin']);
    assert.equal((await data.filesModifiedBefore('algo', '', at(10), 2)).length, 2);
    assert.deepEqual(names(await data.filesModifiedBefore('session', '', at(10), 10)), ['session.bin']);
    assert.deepEqual(
      (await data.foldersCreatedBefore('algo', 'temp', at(10))).map((f) => f.path),
      ['temp/models'],
      'strictly below the root',
    );
    assert.equal((await data.foldersCreatedBefore('algo', '', at(10))).length, 3);
    assert.deepEqual(await data.orphanAlgorithmSpaces(), [gone]);

    await data.deleteFolderRecord(models.id);
    assert.equal(await data.findFolder(liveSpace, 'temp/models'), undefined);
    assert.equal((await data.filesOfAccount(accountId)).length, 5);
    await data.deleteAllOfAccount(accountId);
    assert.deepEqual(await data.filesOfAccount(accountId), []);
    assert.equal(await data.findFolder(liveSpace, 'temp'), undefined);
    assert.deepEqual(await data.orphanAlgorithmSpaces(), []);
    assert.equal(await data.usage(accountId), 0);
  });
}
