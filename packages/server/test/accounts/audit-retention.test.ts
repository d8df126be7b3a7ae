/**
 * The audit log's retention (ALGOHOST_AUDIT_RETENTION, 180 days by default): the `audit.sweep`
 * job deletes entries older than the retention and nothing newer, on SQLite and PostgreSQL, and
 * keeps only the newest entries of no account (issue 36 item 7), with or without a retention; in
 * a cluster it runs on the lease holder only.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Principal } from '../../src/domain/accounts/principal.js';
import { AuditService, type NewAuditEntry } from '../../src/domain/audit/audit-service.js';
import { type JobServices, jobCatalog } from '../../src/jobs/catalog.js';
import type { Job } from '../../src/jobs/job-runner.js';
import { SqlAuditStore } from '../../src/storage/audit-store.js';
import { loadConfig } from '../../src/config/config.js';
import { migrateToLatest } from '../../src/storage/database.js';
import { emptyDatabase, type OpenedDb } from '../support/database.js';
import { DATABASES } from '../support/server.js';

const DAY_MS = 24 * 3600 * 1000;
/** Reading the log needs an admin credential; only `via` is looked at. */
const ADMIN = { via: 'admin_key' } as unknown as Principal;

const entry = (action: string): NewAuditEntry => ({
  actor: 'alice',
  actorId: 'alice-id',
  credential: 'key',
  action,
  target: '/v1/users/alice/keys',
  status: 200,
  address: '10.0.0.7',
  details: {},
});

/** The catalog's jobs with only what the audit sweep touches; the others are never run here. */
function catalogWith(audit: AuditService, auditRetentionMs: number, cluster?: JobServices['cluster']): Job[] {
  const services = { audit, buildQueue: undefined, flowChanges: undefined, ...(cluster ? { cluster } : {}) } as unknown as JobServices;
  return jobCatalog(services, { dataSweepMs: 0, runnerIdleMs: 60_000, deliveryRetentionMs: DAY_MS, auditRetentionMs });
}

const sweepOf = (jobs: Job[]) => {
  const job = jobs.find((j) => j.name === 'audit.sweep');
  assert.ok(job, 'the catalog has an audit.sweep job');
  return job;
};

for (const kind of DATABASES) {
  describe(`audit retention (${kind})`, () => {
    let opened: OpenedDb;
    let now = Date.UTC(2026, 0, 31, 12, 0, 0);
    let audit: AuditService;

    before(async () => {
      opened = await emptyDatabase(kind);
      await migrateToLatest(opened.db);
      audit = new AuditService(new SqlAuditStore(opened.db), () => new Date(now));
    });
    after(() => opened?.close());

    test('the sweep deletes entries past the retention and keeps the newer ones', async () => {
      const start = now;
      for (const [daysAgo, action] of [
        [40, 'key.create'],
        [31, 'key.revoke'],
        [29, 'algorithm.create'],
        [1, 'session.create'],
      ] as const) {
        now = start - daysAgo * DAY_MS;
        await audit.record(entry(action));
      }
      now = start;
      const sweep = sweepOf(catalogWith(audit, 30 * DAY_MS));
      assert.equal(sweep.kind, 'interval');
      assert.equal(sweep.kind === 'interval' && sweep.everyMs, 3600_000, 'hourly');
      await sweep.run(new AbortController().signal);
      const left = await audit.list(ADMIN, { page: { limit: 10, after: undefined } });
      assert.deepEqual(
        left.items.map((e) => e.action),
        ['session.create', 'algorithm.create'],
      );
      // A day later the 29-day-old entry is 30 days and a moment old: the next run takes it.
      now = start + DAY_MS + 1;
      await sweep.run(new AbortController().signal);
      assert.deepEqual(
        (await audit.list(ADMIN, { page: { limit: 10, after: undefined } })).items.map((e) => e.action),
        ['session.create'],
      );
      now = start;
    });

    test('the default retention is 180 days; without one the sweep still runs hourly, for the cap on entries of no account', () => {
      assert.equal(loadConfig({}, []).auditRetentionSeconds, 180 * 24 * 3600);
      const sweep = sweepOf(catalogWith(audit, 0));
      assert.equal(sweep.kind === 'interval' && sweep.everyMs, 3600_000);
    });

    test('item 7: entries of no account are capped at the newest ones; entries of accounts are untouched by the cap', async () => {
      const anonymous = (i: number): NewAuditEntry => ({
        ...entry('session.create'),
        actor: null,
        actorId: null,
        credential: 'password',
        status: 401,
        details: { name_hash: `hash-${i}`, attempts: 1 },
      });
      for (let i = 0; i < 6; i++) {
        now += 1000;
        await audit.record(anonymous(i));
        await audit.record(entry(`key.create`));
      }
      const deleted = await audit.sweep(0, 2);
      assert.equal(deleted, 4);
      const left = (await audit.list(ADMIN, { page: { limit: 100, after: undefined } })).items;
      assert.deepEqual(
        left.filter((e) => e.actorId === null).map((e) => e.details.name_hash),
        ['hash-5', 'hash-4'],
      );
      assert.equal(left.filter((e) => e.action === 'key.create').length, 6);
      // Nothing left for the next test.
      now += 2 * DAY_MS;
      await audit.sweep(DAY_MS, 0);
    });

    test('in a cluster the sweep runs on the node holding its lease only', async () => {
      await audit.record(entry('organization.create'));
      now += 40 * DAY_MS;
      let holder = false;
      const leased: string[] = [];
      const cluster = {
        role: 'api' as const,
        lease: async (name: string) => {
          leased.push(name);
          return holder;
        },
        release: async () => {},
      };
      const sweep = sweepOf(catalogWith(audit, 30 * DAY_MS, cluster));
      await sweep.run(new AbortController().signal);
      assert.deepEqual(leased, ['audit.sweep']);
      assert.ok(
        (await audit.list(ADMIN, { page: { limit: 10, after: undefined } })).items.some((e) => e.action === 'organization.create'),
        'a node without the lease deletes nothing',
      );
      holder = true;
      await sweep.run(new AbortController().signal);
      assert.equal((await audit.list(ADMIN, { page: { limit: 10, after: undefined } })).items.length, 0);
    });
  });
}
