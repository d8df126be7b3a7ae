/**
 * A Kafka cluster whose brokers are down, with the real client and no broker (addresses where
 * nothing listens): every place that reports it (the admin API when topics are listed, an
 * assignment or the Insights connection is made, a subscriber flow's status and the node's log)
 * names the cluster (its name and id in algohost), its bootstrap addresses, and what failed at
 * each, never only the client's "metadata failed 3 times.".
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FlowDeliveries } from '../../src/domain/events/deliveries.js';
import type { EventFlow, KafkaConnection } from '../../src/domain/events/model.js';
import { KafkaSubscriber } from '../../src/events/kafka/subscriber.js';
import { assertError } from '../support/assertions.js';
import { deadPort } from '../support/events.js';
import { createUser } from '../support/fixtures.js';
import { client, type Client } from '../support/http.js';
import { startTestServer, type TestServer } from '../support/server.js';

describe('Event Flows: a Kafka cluster that is down is named with its addresses and what failed', () => {
  let srv: TestServer;
  let api: Client;
  let servers: string[];
  let clusterId: string;

  before(async () => {
    srv = await startTestServer();
    api = client(srv.url);
    await createUser(api, srv.adminKey, 'alice');
    servers = [`127.0.0.1:${await deadPort()}`, `127.0.0.1:${await deadPort()}`];
    const res = await api.post('/v1/admin/event-clusters', { key: srv.adminKey, body: { name: 'downstairs', bootstrap_servers: servers } });
    assert.equal(res.status, 200, res.text);
    clusterId = res.body.id;
  });
  after(() => srv?.stop());

  const assertNamesTheCluster = (message: string) => {
    assert.ok(message.includes('"downstairs"'), `names the cluster: ${message}`);
    assert.ok(message.includes(clusterId), `gives its id: ${message}`);
    for (const s of servers) assert.match(message, new RegExp(`${s}: connection refused`), `says what failed at ${s}: ${message}`);
    assert.doesNotMatch(message, /metadata failed \d+ times/);
  };

  test('listing its topics (what assigning a topic asks too) and connecting Insights to it: 503 naming the cluster, its addresses, connection refused', async () => {
    const topics = await api.get(`/v1/admin/event-clusters/downstairs/topics`, { key: srv.adminKey });
    assertError(topics, 503, 8005);
    assertNamesTheCluster(topics.body.error.message);
    assert.match(topics.body.error.message, /listing its topics: /);

    const insights = await api.post('/v1/admin/insights-connection', {
      key: srv.adminKey,
      body: { cluster: 'downstairs', topic: 'insights' },
    });
    assertError(insights, 503, 8005);
    assertNamesTheCluster(insights.body.error.message);
  });

  test('a subscriber flow on it: its status and the log name the cluster, its addresses and connection refused', async () => {
    const connection: KafkaConnection = {
      clusterId,
      clusterName: 'downstairs',
      bootstrapServers: servers,
      tls: false,
      tlsCa: null,
      sasl: null,
    };
    const now = new Date().toISOString();
    const flow: EventFlow = {
      id: 'f-down',
      algorithmId: 'a-down',
      kind: 'kafka',
      role: 'subscriber',
      clusterId,
      topic: 'orders',
      sourceUri: null,
      credentialsKind: null,
      credentialsId: null,
      credentialsSecret: null,
      timeoutSeconds: null,
      enabled: true,
      version: '1.0.0',
      positioned: false,
      createdBy: 'alice',
      createdAt: now,
      updatedAt: now,
    };
    const logged: string[] = [];
    const log = { info() {}, warn() {}, error: (_: object, msg: string) => logged.push(msg) };
    const subscriber = new KafkaSubscriber(flow, connection, {
      // Never reached: the consumer does not start without a broker.
      deliveries: {} as FlowDeliveries,
      sink: { send: () => Promise.reject(new Error('not reached')) },
      markPositioned: () => Promise.resolve(),
      retry: { attempts: 1, baseMs: 10, maxMs: 10, saturatedMs: 10 },
      log,
    });
    await assert.rejects(subscriber.start());
    assert.equal(subscriber.status.state, 'failed');
    assertNamesTheCluster(subscriber.status.error!);
    assert.equal(logged.length, 1);
    assertNamesTheCluster(logged[0]!);
    await subscriber.stop();
  });
});
