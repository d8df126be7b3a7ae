/**
 * The lease that keeps a once-per-cluster job (the sweeps) on one node at a time, on SQLite and
 * PostgreSQL: one holder until it lets go or its lease expires, renewals by the holder only.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { migrateToLatest } from '../../src/storage/database.js';
import { SqlLeaseStore } from '../../src/storage/lease-store.js';
import { emptyDatabase, type OpenedDb } from '../support/database.js';
import { DATABASES } from '../support/server.js';

const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();

for (const kind of DATABASES) {
  describe(`leases (${kind})`, () => {
    let opened: OpenedDb;
    let leases: SqlLeaseStore;

    before(async () => {
      opened = await emptyDatabase(kind);
      await migrateToLatest(opened.db);
      leases = new SqlLeaseStore(opened.db);
    });
    after(() => opened?.close());

    test('one holder at a time; the holder renews; another takes over only after the expiry', async () => {
      assert.equal(await leases.acquire('data.sweep', 'node-a', at(0), at(60)), true);
      assert.equal(await leases.acquire('data.sweep', 'node-b', at(10), at(70)), false, 'held by node-a');
      assert.equal(await leases.acquire('data.sweep', 'node-a', at(30), at(90)), true, 'renewed by its holder');
      assert.equal(await leases.acquire('data.sweep', 'node-b', at(80), at(140)), false, 'the renewal moved the expiry');
      assert.equal(await leases.acquire('data.sweep', 'node-b', at(91), at(151)), true, 'expired: node-b takes it');
      assert.equal(await leases.acquire('data.sweep', 'node-a', at(92), at(152)), false);
      assert.equal(await leases.acquire('events.delivery-sweep', 'node-a', at(92), at(152)), true, 'each job has its own lease');
    });

    test('a holder that lets go hands the lease on at once', async () => {
      assert.equal(await leases.acquire('calls.async-sweep', 'node-a', at(0), at(60)), true);
      await leases.release('calls.async-sweep', 'node-b');
      assert.equal(await leases.acquire('calls.async-sweep', 'node-b', at(1), at(61)), false, 'only the holder can let go');
      await leases.release('calls.async-sweep', 'node-a');
      assert.equal(await leases.acquire('calls.async-sweep', 'node-b', at(1), at(61)), true);
    });
  });
}
