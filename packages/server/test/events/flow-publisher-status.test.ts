/**
 * What a publisher flow reports (the Events tab's State): running from the moment it is in the
 * publisher table, failed with the cluster's error while its records are refused, running again
 * once one is taken, and nothing once it leaves the table. The sink here is the RecordSink port
 * with a switch for the cluster refusing; events-kafka.test.ts sees the running state over a
 * real Kafka.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FlowPublisher, PublisherStates, type RecordSink } from '../../src/domain/events/publishing.js';
import type { Logger } from '../../src/domain/logger.js';
import { flowRecord } from '../support/events.js';

const flow = flowRecord({
  id: 'flow-1',
  algorithmId: 'algo-1',
  createdBy: 'admin',
  role: 'publisher',
  clusterId: 'cluster-1',
  topic: 'results',
  enabled: true,
  version: '1.0.0',
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
});

const call = {
  algorithmId: 'algo-1',
  owner: 'alice',
  name: 'Echo',
  version: '1.0.0',
  requestId: 'req-1',
  contentType: 'json' as const,
  result: { ok: true },
};

test('a publisher is running once in the table, failed while the cluster refuses its records, running again after', async () => {
  let refuse: Error | null = null;
  const sent: string[] = [];
  const sink: RecordSink = {
    send: async (_cluster, topic) => {
      if (refuse) throw refuse;
      sent.push(topic);
    },
  };
  const warnings: string[] = [];
  const log: Logger = { warn: (_context, message) => warnings.push(message) };
  const states = new PublisherStates();
  const publisher = new FlowPublisher(sink, log, states);
  assert.equal(states.status(flow.id), undefined, 'not in the table: no status');

  publisher.load([flow]);
  assert.deepEqual(states.status(flow.id), { state: 'running', lag: null, error: null });

  refuse = new Error('broker kafka-1:9092 is not reachable');
  publisher.succeeded(call);
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(states.status(flow.id), { state: 'failed', lag: null, error: 'broker kafka-1:9092 is not reachable' });
  assert.equal(warnings.length, 1);
  // A reload of the table (every few seconds) keeps what the flow last reported.
  publisher.load([flow]);
  assert.equal(states.status(flow.id)?.state, 'failed');

  refuse = null;
  publisher.succeeded(call);
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(states.status(flow.id), { state: 'running', lag: null, error: null });
  assert.deepEqual(sent, ['results']);
  assert.deepEqual(
    states.statuses().map((s) => s.flow.id),
    [flow.id],
  );

  // Disabled (or its version removed): out of the table, no status.
  publisher.load([{ ...flow, enabled: false }]);
  assert.equal(states.status(flow.id), undefined);
  assert.deepEqual(states.statuses(), []);
});
