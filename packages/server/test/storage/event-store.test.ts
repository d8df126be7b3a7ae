/**
 * The store contract for Event Flows (domain/events/ports.ts EventStore) and the Insights
 * connection (domain/insights InsightsStore), which names a Kafka cluster: against SQLite and PostgreSQL.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { DomainError } from '../../src/domain/errors.js';
import type { Delivery, EventFlow, KafkaCluster } from '../../src/domain/events/model.js';
import { parsePageRequest } from '../../src/domain/pagination.js';
import { migrateToLatest } from '../../src/storage/database.js';
import { SqlEventStore } from '../../src/storage/event-store.js';
import { SqlInsightsStore } from '../../src/storage/insights-store.js';
import { emptyDatabase, type OpenedDb } from '../support/database.js';
import { flowRecord } from '../support/events.js';
import { type DatabaseKind, DATABASES } from '../support/server.js';
import { insertAccount, insertAlgorithm } from '../support/store-records.js';

const at = (minute: number) => new Date(Date.UTC(2024, 0, 1, 0, minute)).toISOString();
const isConflict = (code: number) => (err: unknown) => err instanceof DomainError && err.kind === 'conflict' && err.code === code;

function cluster(name: string, minute: number, extra: Partial<KafkaCluster> = {}): KafkaCluster {
  return {
    id: crypto.randomUUID(),
    name,
    bootstrapServers: ['kafka-1:9092', 'kafka-2:9092'],
    tls: false,
    tlsCa: null,
    saslMechanism: null,
    saslUsername: null,
    saslPassword: null,
    createdAt: at(minute),
    ...extra,
  };
}

function flow(algorithmId: string, createdBy: string, minute: number, extra: Partial<EventFlow> = {}): EventFlow {
  return flowRecord({ algorithmId, createdBy, createdAt: at(minute), updatedAt: at(minute), ...extra });
}

for (const database of DATABASES) describe(`store contract: Event Flows and Insights (${database})`, () => contract(database));

function contract(database: DatabaseKind): void {
  let opened: OpenedDb;
  let events: SqlEventStore;
  let ownerId: string;
  let algorithmId: string;

  before(async () => {
    opened = await emptyDatabase(database);
    await migrateToLatest(opened.db);
    events = new SqlEventStore(opened.db);
    ownerId = await insertAccount(opened.db, 'flowowner');
    algorithmId = await insertAlgorithm(opened.db, ownerId, 'flowowner', 'Listener');
  });
  after(() => opened?.close());

  test('Kafka clusters: found by id or by name in any case; a name taken in any case is a conflict (8004)', async () => {
    const main = cluster('Main', 1, {
      tls: true,
      tlsCa: 'PEM',
      saslMechanism: 'SCRAM-SHA-256',
      saslUsername: 'algohost',
      saslPassword: 'sealed',
    });
    const second = cluster('second', 2);
    await events.insertCluster(main);
    await events.insertCluster(second);
    await assert.rejects(events.insertCluster(cluster('MAIN', 3)), isConflict(8004));
    assert.deepEqual(await events.listClusters(), [main, second]);
    assert.deepEqual(await events.findCluster(main.id), main);
    assert.deepEqual(await events.findCluster('main'), main);
    assert.equal(await events.findCluster('ma\u0000in'), undefined);
    assert.equal(await events.findCluster('third'), undefined);
  });

  test('flows: every field kept; updates change only what they name; listed per algorithm, cluster, owner and enabled', async () => {
    const kafka = cluster('flows', 10);
    await events.insertCluster(kafka);
    const subscriber = flow(algorithmId, ownerId, 11, { clusterId: kafka.id, topic: 'in' });
    const publisher = flow(algorithmId, ownerId, 12, {
      clusterId: kafka.id,
      topic: 'out',
      role: 'publisher',
      enabled: true,
      version: '1.0.0',
    });
    const queue = flow(algorithmId, ownerId, 13, {
      kind: 'sqs',
      sourceUri: 'https://sqs.example/123/queue',
      credentialsKind: 'static',
      credentialsId: 'AKIA',
      credentialsSecret: 'sealed',
      timeoutSeconds: 30,
    });
    for (const f of [subscriber, publisher, queue]) await events.insertFlow(f);
    await assert.rejects(events.insertFlow(flow(algorithmId, ownerId, 14, { clusterId: kafka.id, topic: 'in' })), isConflict(8004));
    await events.insertFlow(flow(algorithmId, ownerId, 15, { kind: 'sqs', sourceUri: 'https://sqs.example/123/queue' }));

    assert.deepEqual(await events.findFlow(queue.id), queue);
    assert.equal(await events.findFlow('x\u0000'), undefined);
    await events.updateFlow(subscriber.id, { enabled: true, version: '1.2.3', positioned: true, timeoutSeconds: 5, updatedAt: at(20) });
    await events.updateFlow(subscriber.id, {});
    const updated = { ...subscriber, enabled: true, version: '1.2.3', positioned: true, timeoutSeconds: 5, updatedAt: at(20) };
    assert.deepEqual(await events.findFlow(subscriber.id), updated);

    assert.deepEqual((await events.listFlowsOfAlgorithm(algorithmId)).map((f) => f.id).slice(0, 3), [
      subscriber.id,
      publisher.id,
      queue.id,
    ]);
    assert.deepEqual(await events.listFlowsOfCluster(kafka.id), [updated, publisher]);
    assert.deepEqual(await events.listEnabledFlows(), [updated, publisher]);
    const ofOwner = await events.listFlowsOfOwner(ownerId);
    assert.equal(ofOwner.length, 4);
    assert.deepEqual(ofOwner[0], { ...updated, algorithmName: 'Listener', createdByName: 'flowowner' });
    assert.deepEqual(await events.listFlowsOfOwner(crypto.randomUUID()), []);

    await events.deleteFlow(queue.id);
    assert.equal(await events.findFlow(queue.id), undefined);
    await events.deleteCluster(kafka.id);
    assert.equal(await events.findCluster(kafka.id), undefined);
    assert.deepEqual(await events.listFlowsOfCluster(kafka.id), []);
    assert.equal(await events.findFlow(subscriber.id), undefined, "a cluster's flows go with it");
  });

  test('deliveries: many in one insert, listed newest first per algorithm or flow, paged; deleted by age', async () => {
    const sqs = flow(algorithmId, ownerId, 30, { kind: 'sqs', sourceUri: 'https://sqs.example/123/deliveries' });
    const other = flow(algorithmId, ownerId, 30, { kind: 'sqs', sourceUri: 'https://sqs.example/123/other' });
    await events.insertFlow(sqs);
    await events.insertFlow(other);
    const delivery = (flowId: string, minute: number, n: number, extra: Partial<Delivery> = {}): Delivery => ({
      id: `d${String(n).padStart(2, '0')}`,
      flowId,
      algorithmId,
      source: `message-${n}`,
      attempts: 1,
      outcome: 'succeeded',
      error: null,
      deadLetter: null,
      requestId: `req-${n}`,
      latencyMs: 12,
      createdAt: at(minute),
      ...extra,
    });
    const all = [
      delivery(sqs.id, 31, 1),
      delivery(sqs.id, 32, 2, { outcome: 'failed', attempts: 3, error: 'AlgorithmError: no', requestId: null }),
      delivery(other.id, 32, 3, { outcome: 'dead_lettered', deadLetter: 'dlq' }),
      delivery(sqs.id, 33, 4, { outcome: 'returned' }),
    ];
    await events.insertDeliveries([]);
    await events.insertDeliveries(all);
    const first = await events.listDeliveries(algorithmId, { page: parsePageRequest('2', undefined) });
    assert.deepEqual(first.items, [all[3], all[2]]);
    const second = await events.listDeliveries(algorithmId, { page: parsePageRequest('2', first.nextMarker!) });
    assert.deepEqual(second.items, [all[1], all[0]]);
    assert.equal(second.nextMarker, null);
    const ofFlow = await events.listDeliveries(algorithmId, { flowId: sqs.id, page: parsePageRequest('10', undefined) });
    assert.deepEqual(
      ofFlow.items.map((d) => d.id),
      ['d04', 'd02', 'd01'],
    );
    assert.deepEqual((await events.listDeliveries(algorithmId, { flowId: 'x\u0000', page: parsePageRequest('10', undefined) })).items, []);
    assert.equal(await events.deleteDeliveriesBefore(at(33)), 3);
    assert.deepEqual(
      (await events.listDeliveries(algorithmId, { page: parsePageRequest('10', undefined) })).items.map((d) => d.id),
      ['d04'],
    );
  });

  test('the Insights connection: one at a time (a second is a conflict), read back, deleted', async () => {
    const insights = new SqlInsightsStore(opened.db);
    const kafka = cluster('insights', 40);
    await events.insertCluster(kafka);
    assert.equal(await insights.get(), undefined);
    const connection = { clusterId: kafka.id, topic: 'insights', createdBy: ownerId, createdAt: at(41) };
    await insights.insert(connection);
    await assert.rejects(
      insights.insert({ ...connection, topic: 'other' }),
      (err: unknown) => err instanceof DomainError && err.kind === 'conflict',
    );
    assert.deepEqual(await insights.get(), connection);
    assert.equal(await insights.delete(), true);
    assert.equal(await insights.delete(), false);
    await insights.insert({ ...connection, createdBy: null });
    await events.deleteCluster(kafka.id);
    assert.equal(await insights.get(), undefined, 'the connection goes with its cluster');
  });
}
