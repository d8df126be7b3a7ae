/**
 * A Kafka cluster whose brokers are down, with the real client and no broker (addresses where
 * nothing listens): every place that reports it (the admin API when topics are listed, an
 * assignment or the Insights connection is made, a subscriber flow's status and the node's log)
 * names the cluster (its name and id in algohost), its bootstrap addresses, and what failed at
 * each, never only the client's "metadata failed 3 times.". The lag of a flow no node runs is
 * measured in the broker: such a cluster, or one that accepts connections and never answers,
 * leaves it null with "lag not measured: …" within the deadline, and the listing still answers.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { FlowDeliveries } from '../../src/domain/events/deliveries.js';
import type { KafkaConnection } from '../../src/domain/events/model.js';
import { KafkaSubscriber } from '../../src/events/kafka/subscriber.js';
import { SqlEventStore } from '../../src/storage/event-store.js';
import { assertError } from '../support/assertions.js';
import { deadPort, flowRecord } from '../support/events.js';
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
    const flow = flowRecord({
      id: 'f-down',
      algorithmId: 'a-down',
      createdBy: 'alice',
      clusterId,
      topic: 'orders',
      enabled: true,
      version: '1.0.0',
    });
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

  test('the lag of a disabled flow on it, or on a cluster that never answers: null, "lag not measured" naming the cluster, within the deadline', async () => {
    // Accepts connections and never says a word: only the deadline ends a wait for it.
    const sockets: net.Socket[] = [];
    let connections = 0;
    const silent = net.createServer((socket) => {
      connections++;
      sockets.push(socket);
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const silentAt = `127.0.0.1:${(silent.address() as net.AddressInfo).port}`;
      const mute = await api.post('/v1/admin/event-clusters', { key: srv.adminKey, body: { name: 'mute', bootstrap_servers: [silentAt] } });
      assert.equal(mute.status, 200, mute.text);
      const created = await api.post('/v1/algorithms/alice', {
        key: srv.adminKey,
        body: { name: 'Orders', settings: { language: 'python3-1', environment: 'cpu' } },
      });
      assert.equal(created.status, 200, created.text);
      // Assigning asks the cluster for its topics, which these cannot answer: the flows are written as an
      // assignment made while they answered, and run once (positioned), so their lag is asked of the broker.
      const store = new SqlEventStore(srv.server.services.db);
      const owner = (await api.get('/v1/users/alice', { key: srv.adminKey })).body.id as string;
      const flowOn = (id: string, cluster: string) =>
        flowRecord({ id, algorithmId: created.body.id as string, createdBy: owner, clusterId: cluster, topic: 'orders', positioned: true });
      await store.insertFlow(flowOn('f-refused', clusterId));
      await store.insertFlow(flowOn('f-mute', mute.body.id));
      await store.insertFlow({ ...flowOn('f-mute-too', mute.body.id), topic: 'returns' });

      // A generous bound, far below what the client's own timeouts and retries would take (15 s a request, 3 tries).
      const started = Date.now();
      const listed = await api.get('/v1/algorithms/alice/Orders/event-flows', { key: srv.adminKey });
      assert.equal(listed.status, 200, listed.text);
      assert.ok(Date.now() - started < 8000, `answered in ${Date.now() - started} ms`);
      const byId = new Map(listed.body.results.map((f: { id: string; status: unknown }) => [f.id, f.status]));
      const refused = byId.get('f-refused') as { state: string; lag: null; error: string };
      assert.equal(refused.state, 'stopped');
      assert.equal(refused.lag, null);
      assert.ok(refused.error.startsWith('lag not measured: the Kafka cluster "downstairs"'), refused.error);
      assertNamesTheCluster(refused.error);
      const silentStatus = byId.get('f-mute') as { state: string; lag: null; error: string };
      assert.equal(silentStatus.lag, null);
      assert.ok(
        silentStatus.error.startsWith(`lag not measured: the Kafka cluster "mute" (${mute.body.id}; bootstrap servers ${silentAt})`),
      );
      assert.match(silentStatus.error, /did not answer within 3 s|timed out/);
      assert.equal((byId.get('f-mute-too') as { lag: null }).lag, null);
      // Both flows on it measured at once over one client: one connection to its one broker.
      assert.equal(connections, 1, 'the measurements in flight on a cluster share one connection');

      // Asked again at once (a refreshing page): the measurement is reused, the broker not asked again.
      const seen = connections;
      const again = await api.get('/v1/algorithms/alice/Orders/event-flows/f-mute', { key: srv.adminKey });
      assert.deepEqual(again.body.status, silentStatus);
      assert.equal(connections, seen);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});
