/**
 * Cluster mode, event deliveries when a worker dies: one API node and two workers (each its own
 * `npm start`, in its own network namespace when this machine allows: support/cluster.ts), every
 * worker running every subscriber flow. A worker is SIGKILLed in the middle of a slow delivery;
 * the broker's own redelivery hands the record or message to the other worker, which delivers it
 * once: one `succeeded` delivery record, nothing left uncommitted or locked, the flow running.
 *
 *   ALGOHOST_TEST_SERVICES=postgres,nats,s3,kafka bash scripts/with-services.sh \
 *     bash scripts/run-tests.sh packages/server/test/cluster/cluster-events.test.ts
 *
 * Kafka is the real broker scripts/with-services.sh starts: the dead member's partition goes to
 * the other after the group rebalances. Service Bus is a FAKE endpoint (no Service Bus can run
 * here: test/support/servicebus-fake.ts), forwarded into the namespaces like the other services:
 * the dead worker's lock is no longer renewed, expires, and the message goes to the other
 * worker. (SQS is covered the same way in cluster-routing.test.ts.) Last, a publisher flow: the
 * workers run it, and the API node, which runs no flow itself, reports it running from what the
 * workers say.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Admin } from '@platformatic/kafka';
import { type Cluster, CLUSTER_SERVICES, clusterSkip, type Node, startCluster, until, warmRunnersOf } from '../support/cluster.js';
import { createTopics, produce, publishedPython, readTopic } from '../support/events.js';
import { createUser, type TestUser } from '../support/fixtures.js';
import type { Client } from '../support/http.js';
import { FakeServiceBus } from '../support/servicebus-fake.js';

const NATS_PREFIX = `ce-${crypto.randomBytes(3).toString('hex')}`;
const { kafka: KAFKA } = CLUSTER_SERVICES;
const run = crypto.randomBytes(3).toString('hex');
const SB_KEY = { shared_access_key_name: 'algohost-listen', shared_access_key: 'c2VjcmV0LWtleS1vZi10aGUtcXVldWU=' };
/** Short, so the dead worker's message comes back soon; the live one renews it as long as its call runs. */
const SB_LOCK_MS = 3000;

/**
 * Slow on the first delivery of a message only, whichever worker makes it, broker or not: it
 * leaves a marker in hosted data (pipeline_enabled: the cluster's data is shared) and waits for
 * the kill; a redelivery finds the marker and answers at once. Kafka counts no redeliveries, so
 * the event metadata could not tell.
 */
const RELAY = `import json, os, time
import Algorithmia

def apply(input):
    marker = Algorithmia.client().file("data://alice/relay/" + input["id"])
    if not marker.exists():
        marker.put("first delivery")
        time.sleep(600)
    return {"got": input, "event": json.loads(os.environ.get("ALGOHOST_EVENT", "{}"))}
`;

interface Delivery {
  source: string;
  outcome: string;
  attempts: number;
}

describe('cluster mode: an event delivery survives a killed worker', { skip: clusterSkip('kafka') }, () => {
  let cluster: Cluster;
  let api: Client;
  let alice: TestUser;
  let bus: FakeServiceBus;
  /** The fake Service Bus as the nodes reach it (host:port forwarded onto the Lan). */
  let busForNodes: string;

  /** The warm runners a worker reports about itself (its port serves /metrics and /healthz only). */
  const warmOf = (n: Node) => warmRunnersOf(n, cluster.adminKey);
  const deliveries = async (flowId: string): Promise<Delivery[]> => {
    const res = await api.get(`/v1/algorithms/alice/Relay/event-deliveries?flow=${flowId}`, { key: alice.key });
    assert.equal(res.status, 200, res.text);
    return res.body.results;
  };
  /** The flow's delivery records once the other worker has delivered: one, a success. */
  const deliveredOnce = async (flowId: string): Promise<Delivery[]> => {
    const records = await until(
      'the delivery by the other worker',
      async () => {
        const found = await deliveries(flowId);
        return found.length ? found : undefined;
      },
      1200,
    );
    assert.equal(records.length, 1, JSON.stringify(records));
    assert.equal(records[0]!.outcome, 'succeeded');
    return records;
  };
  const flowStatus = async (flowId: string) =>
    (await api.get(`/v1/algorithms/alice/Relay/event-flows/${flowId}`, { key: alice.key })).body.status as
      { state: string; lag: number | null } | undefined;
  /** The Kafka cluster, connected once for the tests that need it. */
  let kafkaClusterId: string | undefined;
  const connectKafka = async (): Promise<string> => {
    if (kafkaClusterId) return kafkaClusterId;
    const connected = await api.post('/v1/admin/event-clusters', {
      key: cluster.adminKey,
      body: { name: 'main', bootstrap_servers: [KAFKA!] },
    });
    assert.equal(connected.status, 200, connected.text);
    kafkaClusterId = connected.body.id as string;
    return kafkaClusterId;
  };
  const assign = async (topic: string, role: 'publisher' | 'subscriber'): Promise<string> => {
    const assigned = await api.post(`/v1/admin/event-clusters/${await connectKafka()}/assignments`, {
      key: cluster.adminKey,
      body: { algorithm: 'alice/Relay', topic, role },
    });
    assert.equal(assigned.status, 200, assigned.text);
    return assigned.body.id as string;
  };
  const enable = async (flowId: string, enabled: boolean) => {
    const res = await api.patch(`/v1/algorithms/alice/Relay/event-flows/${flowId}`, { key: alice.key, body: { enabled } });
    assert.equal(res.status, 200, res.text);
  };

  /**
   * Waits until a worker is in the middle of the first delivery of `id` (its marker written),
   * then SIGKILLs that worker; returns the survivor.
   */
  async function killTheDeliveringWorker(id: string, warmBefore: number[]): Promise<{ victim: Node; survivor: Node }> {
    await until('a worker in the middle of the first delivery', async () => {
      const marker = await api.head(`/v1/data/alice/relay/${id}`, { key: alice.key });
      return marker.status === 200 ? true : undefined;
    });
    const workers = [...cluster.workers];
    const warm = await Promise.all(workers.map(warmOf));
    const started = workers.filter((_, i) => warm[i]! > warmBefore[i]!);
    assert.equal(started.length, 1, `one worker started the algorithm (warm runners: ${warm.join(', ')})`);
    const victim = started[0]!;
    await cluster.stop(victim, 'SIGKILL');
    return { victim, survivor: cluster.workers[0]! };
  }

  before(async () => {
    bus = await FakeServiceBus.start();
    cluster = await startCluster({
      natsPrefix: NATS_PREFIX,
      reach: async ({ forwardUrl, loopback }) => {
        // A Kafka client connects next to what the broker's metadata names (127.0.0.1:port): the
        // same address must work inside the namespaces.
        await loopback(Number(KAFKA!.split(':').pop()));
        busForNodes = new URL(await forwardUrl(`http://${bus.host}`)).host;
        return { ALGOHOST_SERVICEBUS_ENDPOINT_ALLOW: busForNodes };
      },
      workers: [{ name: 'worker1' }, { name: 'worker2' }],
    });
    api = cluster.api;
    alice = await createUser(api, cluster.adminKey, 'alice');
    await publishedPython(cluster.apiNode.url, api, alice, 'Relay', RELAY);
    const pipeline = await api.patch('/v1/algorithms/alice/Relay', { key: alice.key, body: { settings: { pipeline_enabled: true } } });
    assert.equal(pipeline.status, 200, pipeline.text);
    const collection = await api.post('/v1/data/alice', { key: alice.key, body: { name: 'relay' } });
    assert.equal(collection.status, 200, collection.text);
  });

  after(async () => {
    await cluster?.close();
    await bus?.stop();
  });

  test('Kafka: the killed worker’s partition goes to the other after the group rebalances; the record is delivered once', async () => {
    const topic = `cluster-relay-${run}`;
    await createTopics(KAFKA!, [topic], 1);
    const flowId = await assign(topic, 'subscriber');
    const groupId = `algohost-flow-${flowId}`;
    await enable(flowId, true);

    const admin = new Admin({ clientId: 'cluster-events-test', bootstrapBrokers: [KAFKA!] });
    try {
      const members = async () => (await admin.describeGroups({ groups: [groupId] })).get(groupId)?.members.size ?? 0;
      const committed = async () => {
        const [group] = await admin.listConsumerGroupOffsets({ groups: [groupId] });
        return group?.topics.find((t) => t.name === topic)?.partitions.find((p) => p.partitionIndex === 0)?.committedOffset;
      };
      // Both workers in the flow's consumer group: one holds the partition, the other waits.
      await until('both workers in the consumer group', async () => ((await members()) === 2 ? true : undefined));
      await until('the flow running', async () => ((await flowStatus(flowId))?.state === 'running' ? true : undefined));

      const warmBefore = await Promise.all(cluster.workers.map(warmOf));
      const id = `kafka-${run}`;
      await produce(KAFKA!, topic, [{ value: JSON.stringify({ id }) }]);
      const { survivor } = await killTheDeliveringWorker(id, warmBefore);

      // Nothing was recorded or committed for the cut-off delivery. Once the group's session
      // timeout drops the dead member, the survivor takes the partition from the last commit.
      const records = await deliveredOnce(flowId);
      assert.equal(records[0]!.source, `${topic}/0@0`);
      assert.equal(records[0]!.attempts, 1, 'the first (and only) attempt of the worker that delivered it');
      assert.equal(await warmOf(survivor), 1, 'the survivor ran it');
      assert.equal(await members(), 1, 'the group rebalanced to the survivor alone');
      // Its offset committed (nothing stuck), the flow still running with nothing left to read.
      await until('the offset committed', async () => ((await committed()) === 1n ? true : undefined));
      await until('no lag', async () => {
        const s = await flowStatus(flowId);
        return s?.state === 'running' && s.lag === 0 ? true : undefined;
      });
      assert.equal((await deliveries(flowId)).length, 1, 'delivered once');
    } finally {
      await admin.close();
    }
    await enable(flowId, false);
  });

  test('Service Bus (FAKE endpoint): the killed worker’s lock expires and the other worker completes the message once', async () => {
    // Two workers with nothing warm, so the one that starts the algorithm is the one delivering
    // (the Kafka test killed one worker, and the other has the algorithm warm).
    for (const w of [...cluster.workers]) await cluster.stop(w);
    await Promise.all([cluster.startWorker('worker3'), cluster.startWorker('worker4')]);
    const queue = `relay-${run}`;
    bus.createQueue(queue, { keyName: SB_KEY.shared_access_key_name, key: SB_KEY.shared_access_key, lockDurationMs: SB_LOCK_MS });
    const created = await api.post('/v1/algorithms/alice/Relay/event-flows', {
      key: alice.key,
      body: { source_type: 'servicebus', source_uri: `sb://${busForNodes}/${queue}`, credentials: SB_KEY, timeout: 30 },
    });
    assert.equal(created.status, 200, created.text);
    const flowId = created.body.id as string;
    await enable(flowId, true);
    await until('the flow running', async () => ((await flowStatus(flowId))?.state === 'running' ? true : undefined));

    const warmBefore = await Promise.all(cluster.workers.map(warmOf));
    const id = `servicebus-${run}`;
    const messageId = bus.enqueue(queue, JSON.stringify({ id }), { contentType: 'application/json' });
    await killTheDeliveringWorker(id, warmBefore);

    const records = await deliveredOnce(flowId);
    assert.equal(records[0]!.source, messageId);
    assert.equal(records[0]!.attempts, 2, 'delivered on its second delivery');
    // The lock lapsed once (the dead worker's), then the survivor completed it; nothing waits or is locked.
    await until('the completion', async () =>
      bus.settlements.some((s) => s.messageId === messageId && s.outcome === 'completed') ? true : undefined,
    );
    assert.deepEqual(
      bus.settlements.filter((s) => s.messageId === messageId).map((s) => s.outcome),
      ['lock-expired', 'completed'],
    );
    assert.equal(bus.readyCount(queue), 0);
    assert.equal(bus.deadLetters(queue).length, 0);
    assert.equal((await flowStatus(flowId))?.state, 'running');
    await enable(flowId, false);
    assert.equal((await deliveries(flowId)).length, 1, 'delivered once');
  });

  test('Kafka publisher: the workers send each result to the topic, and the API node reports the flow running', async () => {
    const topic = `cluster-results-${run}`;
    await createTopics(KAFKA!, [topic], 1);
    const flowId = await assign(topic, 'publisher');
    // The workers run it; the API node, which runs no flow, reports what they say.
    await enable(flowId, true);
    const status = await until('the publisher running', async () => {
      const s = await flowStatus(flowId);
      return s?.state === 'running' ? s : undefined;
    });
    assert.deepEqual(status, { state: 'running', lag: null, error: null });

    // Its marker exists, so Relay answers at once (the slow first delivery is the other tests').
    const id = `published-${run}`;
    const marker = await api.put(`/v1/data/alice/relay/${id}`, { key: alice.key, body: 'answer at once' });
    assert.equal(marker.status, 200, marker.text);
    const call = await api.post('/v1/algo/alice/Relay/1.0.0', { key: alice.key, body: { id } });
    assert.equal(call.status, 200, call.text);
    const [record] = await readTopic(KAFKA!, topic, 1);
    assert.deepEqual(JSON.parse(record!.value).got, { id });
    assert.deepEqual(await flowStatus(flowId), { state: 'running', lag: null, error: null });
    await enable(flowId, false);
  });
});
