/**
 * The store contract, continued (store.test.ts has accounts, keys, algorithms, environments and
 * cluster settings): the async requests of calls, the audit log, the cluster's leases and the blob
 * index digests, each against SQLite and PostgreSQL with the same assertions.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { parsePageRequest } from '../../src/domain/pagination.js';
import type { AuditEntry } from '../../src/domain/audit/audit-service.js';
import type { CallEnvelope } from '../../src/domain/calls/request.js';
import { SqlAccountStore } from '../../src/storage/account-store.js';
import { SqlAsyncRequestStore } from '../../src/storage/async-request-store.js';
import { SqlAuditStore } from '../../src/storage/audit-store.js';
import { SqlBlobIndexDigestStore } from '../../src/storage/blob-index-digest-store.js';
import { migrateToLatest } from '../../src/storage/database.js';
import { SqlLeaseStore } from '../../src/storage/lease-store.js';
import { emptyDatabase, type OpenedDb } from '../support/database.js';
import { type DatabaseKind, DATABASES } from '../support/server.js';

const at = (minute: number) => new Date(Date.UTC(2024, 0, 1, 0, minute)).toISOString();

for (const database of DATABASES) describe(`store contract: calls, audit and cluster stores (${database})`, () => contract(database));

function contract(database: DatabaseKind): void {
  let opened: OpenedDb;
  let accountId: string;

  before(async () => {
    opened = await emptyDatabase(database);
    await migrateToLatest(opened.db);
    accountId = crypto.randomUUID();
    await new SqlAccountStore(opened.db).insert({
      id: accountId,
      name: 'asyncowner',
      kind: 'user',
      email: 'asyncowner@example.test',
      fullname: null,
      companyName: null,
      companyRole: null,
      passwordHash: null,
      isAdmin: false,
      organization: null,
      createdAt: at(0),
      updatedAt: at(0),
    });
  });
  after(() => opened?.close());

  test('async requests: insert running, complete once, read back the envelope; unknown ids are undefined', async () => {
    const store = new SqlAsyncRequestStore(opened.db);
    const id = crypto.randomUUID();
    await store.insert({ id, accountId, status: 'running', envelope: null, createdAt: at(1), expiresAt: at(60) });
    assert.deepEqual(await store.get(id), { id, accountId, status: 'running', envelope: null, createdAt: at(1), expiresAt: at(60) });
    const envelope: CallEnvelope = { result: { nested: [1, 'two', null] }, metadata: { content_type: 'json', duration: 0.5 } };
    assert.equal(await store.complete(id, envelope, at(120)), true);
    assert.equal(
      await store.complete(id, { result: 'late', metadata: { content_type: 'text', duration: 1 } }, at(180)),
      false,
      'a completed request is not completed again',
    );
    assert.deepEqual(await store.get(id), { id, accountId, status: 'completed', envelope, createdAt: at(1), expiresAt: at(120) });
    assert.equal(await store.get(crypto.randomUUID()), undefined);
  });

  test('async requests: completeAllRunning completes only the running ones; deleteExpired removes those past their expiry', async () => {
    const store = new SqlAsyncRequestStore(opened.db);
    const running = [crypto.randomUUID(), crypto.randomUUID()];
    for (const id of running) await store.insert({ id, accountId, status: 'running', envelope: null, createdAt: at(2), expiresAt: at(30) });
    const done = crypto.randomUUID();
    const kept: CallEnvelope = { result: 'kept', metadata: { content_type: 'text', duration: 0.1 } };
    await store.insert({ id: done, accountId, status: 'completed', envelope: kept, createdAt: at(2), expiresAt: at(500) });
    const stopped: CallEnvelope = {
      error: { message: 'the service stopped', error_type: 'SystemExit', stacktrace: '', stack_trace: '' },
      metadata: { content_type: 'json', duration: 0 },
    };
    assert.equal(await store.completeAllRunning(stopped, at(400)), 2);
    for (const id of running) assert.deepEqual((await store.get(id))?.envelope, stopped);
    assert.deepEqual((await store.get(done))?.envelope, kept);

    assert.equal(await store.deleteExpired(at(450)), 3, 'the two stopped ones and the first test’s request');
    for (const id of running) assert.equal(await store.get(id), undefined);
    assert.equal((await store.get(done))?.status, 'completed');
    assert.equal(await store.deleteExpired(at(450)), 0);
  });

  test('audit log: newest first, paged by marker, filtered by actor and by action prefix; details are replaced', async () => {
    const store = new SqlAuditStore(opened.db);
    const entry = (n: number, action: string, actor: string | null): AuditEntry => ({
      id: `a${String(n).padStart(3, '0')}`,
      at: at(n),
      actor,
      actorId: actor && accountId,
      credential: actor ? 'key' : null,
      action,
      target: `target-${n}`,
      status: 200,
      address: '203.0.113.9',
      details: { n },
    });
    const entries = [
      entry(10, 'key.create', 'alice'),
      entry(11, 'key.delete', 'alice'),
      entry(12, 'organization.members.add', 'bob'),
      entry(13, 'keyring.open', 'alice'),
      entry(14, 'key.create', null),
    ];
    for (const e of entries) await store.append(e);

    const all = await store.list({ page: parsePageRequest('2', undefined) });
    assert.deepEqual(all.items, [entries[4], entries[3]]);
    const second = await store.list({ page: parsePageRequest('2', all.nextMarker!) });
    assert.deepEqual(
      second.items.map((e) => e.id),
      ['a012', 'a011'],
    );
    const third = await store.list({ page: parsePageRequest('2', second.nextMarker!) });
    assert.deepEqual(
      third.items.map((e) => e.id),
      ['a010'],
    );
    assert.equal(third.nextMarker, null);

    const byAction = await store.list({ action: 'key', page: parsePageRequest('10', undefined) });
    assert.deepEqual(
      byAction.items.map((e) => e.id),
      ['a014', 'a011', 'a010'],
      '"key" matches key.* but not keyring.*',
    );
    const byActor = await store.list({ actor: 'alice', action: 'key.create', page: parsePageRequest('10', undefined) });
    assert.deepEqual(
      byActor.items.map((e) => e.id),
      ['a010'],
    );
    assert.deepEqual((await store.list({ actor: 'alice\u0000', page: parsePageRequest('10', undefined) })).items, []);

    await store.updateDetails('a012', { n: 12, count: 3 });
    const [updated] = (await store.list({ actor: 'bob', page: parsePageRequest('10', undefined) })).items;
    assert.deepEqual(updated, { ...entries[2], details: { n: 12, count: 3 } });
  });

  test('audit log: deleteAnonymousBeyond keeps the newest anonymous entries; deleteBefore removes by time', async () => {
    const store = new SqlAuditStore(opened.db);
    for (let n = 20; n < 25; n++) {
      await store.append({
        id: `b${n}`,
        at: at(n),
        actor: null,
        actorId: null,
        credential: null,
        action: 'auth.token',
        target: '',
        status: 401,
        address: null,
        details: {},
      });
    }
    // Anonymous so far: a014 and b20..b24. Keep the newest two.
    assert.equal(await store.deleteAnonymousBeyond(2), 4);
    const anonymous = (await store.list({ action: 'auth', page: parsePageRequest('10', undefined) })).items.map((e) => e.id);
    assert.deepEqual(anonymous, ['b24', 'b23']);
    assert.equal(await store.deleteAnonymousBeyond(2), 0);

    assert.equal(await store.deleteBefore(at(12)), 2, 'a010 and a011');
    const left = (await store.list({ page: parsePageRequest('100', undefined) })).items.map((e) => e.id);
    assert.deepEqual(left, ['b24', 'b23', 'a013', 'a012']);
  });

  test('leases: one holder at a time; the holder renews; another takes it once expired or released', async () => {
    const leases = new SqlLeaseStore(opened.db);
    assert.equal(await leases.acquire('gc', 'node-a', at(0), at(5)), true);
    assert.equal(await leases.acquire('gc', 'node-b', at(1), at(6)), false, 'held by node-a until minute 5');
    assert.equal(await leases.acquire('gc', 'node-a', at(2), at(7)), true, 'the holder renews');
    assert.equal(await leases.acquire('gc', 'node-b', at(6), at(11)), false, 'renewed until minute 7');
    assert.equal(await leases.acquire('other', 'node-b', at(6), at(11)), true, 'leases are per name');
    assert.equal(await leases.acquire('gc', 'node-b', at(8), at(13)), true, 'expired: node-b takes it');
    assert.equal(await leases.acquire('gc', 'node-a', at(9), at(14)), false);
    await leases.release('gc', 'node-a');
    assert.equal(await leases.acquire('gc', 'node-a', at(9), at(14)), false, 'only the holder releases');
    await leases.release('gc', 'node-b');
    assert.equal(await leases.acquire('gc', 'node-a', at(9), at(14)), true, 'released: free at once');
    const racing = await Promise.all(['n1', 'n2', 'n3', 'n4'].map((holder) => leases.acquire('raced', holder, at(20), at(25))));
    assert.equal(racing.filter(Boolean).length, 1, `one of the racing nodes holds it: ${racing.join(', ')}`);
  });

  test('blob index digests: unknown keys are undefined; set records and replaces', async () => {
    const digests = new SqlBlobIndexDigestStore(opened.db);
    assert.equal(await digests.get('artifacts/x/index.json'), undefined);
    const first = crypto.createHash('sha256').update('one').digest('hex');
    const second = crypto.createHash('sha256').update('two').digest('hex');
    await digests.set('artifacts/x/index.json', first);
    await digests.set('artifacts/y/index.json', second);
    assert.equal(await digests.get('artifacts/x/index.json'), first);
    await digests.set('artifacts/x/index.json', second);
    assert.equal(await digests.get('artifacts/x/index.json'), second);
    assert.equal(await digests.get('artifacts/y/index.json'), second);
  });
}
