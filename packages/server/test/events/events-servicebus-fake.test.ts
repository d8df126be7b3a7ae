/**
 * Event Flows from Azure Service Bus queues through `@azure/service-bus`, against a FAKE Service
 * Bus endpoint the test starts itself (test/support/servicebus-fake.ts, AMQP 1.0 on rhea: `$cbs`
 * put-token, peek-lock receive, lock renewal, complete/abandon/dead-letter, max delivery count): no Service Bus
 * emulator can run on these machines, and the real cloud is not reached from tests. A message
 * becomes a call and is completed; while the algorithm is saturated, or when its call fails, the
 * message is abandoned after a delay until the queue's max delivery count dead-letters it; a
 * message refused as invalid input is dead-lettered at once; a call
 * longer than the queue's lock keeps its message (the lock is renewed); queue
 * URIs and credentials are checked where they enter; a disabled flow's lag is not measured, and says why.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createUser, type TestUser } from '../support/fixtures.js';
import { client, type Client } from '../support/http.js';
import { type DatabaseKind, DATABASES, startTestServer, type TestServer } from '../support/server.js';
import { eventually, holdCallSlot, publishedPython } from '../support/events.js';
import { FakeServiceBus } from '../support/servicebus-fake.js';

/**
 * Succeeds only when its event metadata names the message the input expects (so it read it) and
 * has the fields the users' guide lists, each a string.
 */
const CHECK = `import json, os

def apply(input):
    event = json.loads(os.environ["ALGOHOST_EVENT"])
    types = {k: type(v).__name__ for k, v in event.items()}
    assert set(types.values()) == {"str"}, types
    assert {"source", "queue", "message_id", "delivery_count"} <= set(types) <= {"source", "queue", "message_id", "delivery_count", "sequence_number"}, types
    assert event["source"] == "servicebus", event
    assert event["message_id"] == input["expect_id"], event
    assert event["delivery_count"] == "1", event
    return {"checked": event["message_id"]}
`;
const SLOW = `import time

def apply(input):
    time.sleep(float(input))
    return "done"
`;
const KEY = { shared_access_key_name: 'algohost-listen', shared_access_key: 'c2VjcmV0LWtleS1vZi10aGUtcXVldWU=' };

for (const database of DATABASES)
  describe(`Event Flows: Service Bus (against a fake Service Bus endpoint) (${database})`, () => serviceBusFlowsSuite(database));

function serviceBusFlowsSuite(database: DatabaseKind): void {
  let srv: TestServer;
  let api: Client;
  let alice: TestUser;
  let bus: FakeServiceBus;

  const queue = (name: string, maxDeliveryCount = 10) =>
    bus.createQueue(name, { keyName: KEY.shared_access_key_name, key: KEY.shared_access_key, maxDeliveryCount });
  const uri = (name: string) => `sb://${bus.host}/${name}`;
  const flow = async (algo: string, name: string, credentials: Record<string, string> = KEY) => {
    const res = await api.post(`/v1/algorithms/alice/${algo}/event-flows`, {
      key: alice.key,
      body: { source_type: 'servicebus', source_uri: uri(name), credentials, timeout: 30 },
    });
    assert.equal(res.status, 200, res.text);
    const enabled = await api.patch(`/v1/algorithms/alice/${algo}/event-flows/${res.body.id}`, { key: alice.key, body: { enabled: true } });
    assert.equal(enabled.status, 200, enabled.text);
    return enabled.body;
  };
  const deliveries = async (algo: string, source: string) =>
    (await api.get(`/v1/algorithms/alice/${algo}/event-deliveries`, { key: alice.key })).body.results.filter(
      (d: { source: string }) => d.source === source,
    );
  const disable = async (algo: string, id: string) =>
    assert.equal(
      (await api.patch(`/v1/algorithms/alice/${algo}/event-flows/${id}`, { key: alice.key, body: { enabled: false } })).status,
      200,
    );

  before(async () => {
    bus = await FakeServiceBus.start();
    srv = await startTestServer({
      database,
      env: {
        ALGOHOST_SERVICEBUS_ENDPOINT_ALLOW: bus.host,
        ALGOHOST_EVENT_SATURATION_DELAY_MS: '300',
        ALGOHOST_EVENT_RETRY_BACKOFF_MS: '100',
        // One call at a time per account: a running call saturates alice's algorithms.
        ALGOHOST_MAX_CALLS_PER_ACCOUNT: '1',
      },
    });
    api = client(srv.url);
    alice = await createUser(api, srv.adminKey, 'alice');
    await publishedPython(srv.url, api, alice, 'Check', CHECK);
    await publishedPython(srv.url, api, alice, 'Slow', SLOW);
  });
  after(async () => {
    await srv?.stop();
    await bus?.stop();
  });

  test('a message becomes a call that reads its message id, and is completed; the key is never returned', async () => {
    queue('orders');
    const created = await flow('Check', 'orders');
    assert.equal(created.source_type, 'servicebus');
    assert.deepEqual(created.credentials, { kind: 'static', id: KEY.shared_access_key_name });
    assert.ok(!JSON.stringify(created).includes(KEY.shared_access_key), 'the key never leaves the server');
    bus.enqueue('orders', JSON.stringify({ expect_id: 'order-1' }), { messageId: 'order-1', contentType: 'application/json' });

    const [delivery] = await eventually('the delivery', async () => {
      const found = await deliveries('Check', 'order-1');
      return found.length ? found : undefined;
    });
    assert.equal(delivery.outcome, 'succeeded', JSON.stringify(delivery));
    assert.equal(delivery.attempts, 1);
    assert.match(delivery.request_id, /^req-/);
    await eventually('the completion', async () => (bus.settlements.some((s) => s.messageId === 'order-1') ? true : undefined));
    assert.deepEqual(
      bus.settlements.filter((s) => s.messageId === 'order-1'),
      [{ queue: 'orders', messageId: 'order-1', outcome: 'completed' }],
    );
    assert.equal(bus.readyCount('orders'), 0);

    const listeners = await api.get('/v1/users/alice/event-listeners', { key: alice.key });
    assert.deepEqual(listeners.body, [
      {
        id: created.id,
        sourceType: 'SERVICEBUS',
        sourceURI: uri('orders'),
        algoName: 'Check',
        algoOwner: 'alice',
        listenerOwner: 'alice',
        credentials: KEY.shared_access_key_name,
      },
    ]);
    await disable('Check', created.id);
    // Disabled: stopped, and its lag not measured (the count needs Manage rights; the flow holds Listen), saying so.
    const stopped = await api.get(`/v1/algorithms/alice/Check/event-flows/${created.id}`, { key: alice.key });
    assert.equal(stopped.body.status.state, 'stopped');
    assert.equal(stopped.body.status.lag, null);
    assert.match(stopped.body.status.error, /^lag not measured: Service Bus .* only to a shared access policy with Manage rights/);
  });

  test('saturated: the message is abandoned after a delay, and after the queue’s max delivery count dead-lettered', async () => {
    queue('busy', 2);
    // alice's one call in flight: a slow call through the API keeps her algorithms saturated.
    const busy = await holdCallSlot(() => api.post('/v1/algo/alice/Slow/1.0.0', { key: alice.key, body: 6 }), inFlight);
    const created = await flow('Check', 'busy');
    bus.enqueue('busy', JSON.stringify({ expect_id: 'busy-1' }), { messageId: 'busy-1' });
    await eventually('the message dead-lettered', async () => (bus.deadLetters('busy').length ? true : undefined));
    assert.deepEqual(
      bus.deadLetters('busy').map((m) => [m.messageId, m.deadLetterReason]),
      [['busy-1', 'MaxDeliveryCountExceeded']],
    );
    assert.deepEqual(
      bus.settlements.filter((s) => s.messageId === 'busy-1').map((s) => s.outcome),
      ['abandoned', 'abandoned'],
    );
    const records = await eventually('both records', async () => {
      const found = await deliveries('Check', 'busy-1');
      return found.length === 2 ? found : undefined;
    });
    assert.deepEqual(records.map((d: { outcome: string; attempts: number }) => [d.outcome, d.attempts]).sort(), [
      ['returned', 1],
      ['returned', 2],
    ]);
    for (const d of records) assert.match(d.error, /too many calls in flight/);
    await disable('Check', created.id);
    assert.equal((await busy.answer).status, 200);
  });

  test('a failing call: abandoned with backoff, then dead-lettered by the max delivery count with nothing lost', async () => {
    queue('failing', 2);
    const created = await flow('Check', 'failing');
    bus.enqueue('failing', JSON.stringify({ expect_id: 'someone-else' }), { messageId: 'fail-1' });
    await eventually('the message dead-lettered', async () => (bus.deadLetters('failing').length ? true : undefined));
    const records = await eventually('both records', async () => {
      const found = await deliveries('Check', 'fail-1');
      return found.length === 2 ? found : undefined;
    });
    assert.deepEqual(
      records.map((d: { outcome: string }) => d.outcome),
      ['failed', 'failed'],
    );
    for (const d of records) assert.match(d.error, /'message_id': 'fail-1'/, 'the assertion of the algorithm failed');
    await disable('Check', created.id);
  });

  test('a message refused as invalid input (100,000-deep JSON) is dead-lettered at once with its reason; the next one runs', async () => {
    queue('deep', 10);
    const created = await flow('Check', 'deep');
    bus.enqueue('deep', '['.repeat(100_000) + ']'.repeat(100_000), { messageId: 'deep-1', contentType: 'application/json' });
    await eventually('the message dead-lettered', async () => (bus.deadLetters('deep').length ? true : undefined));
    const [dead] = bus.deadLetters('deep');
    assert.equal(dead!.messageId, 'deep-1');
    assert.equal(dead!.deadLetterReason, 'InputRefused');
    assert.match(dead!.deadLetterDescription!, /nested too deeply/);
    assert.deepEqual(
      bus.settlements.filter((s) => s.messageId === 'deep-1').map((s) => s.outcome),
      ['dead-lettered'],
      'never abandoned back to the queue',
    );
    const [record] = await eventually('the record', async () => {
      const found = await deliveries('Check', 'deep-1');
      return found.length ? found : undefined;
    });
    assert.deepEqual([record.outcome, record.attempts, record.dead_letter], ['dead_lettered', 1, 'deep/$DeadLetterQueue']);
    assert.match(record.error, /nested too deeply/);
    // alice's next message still runs as hers.
    bus.enqueue('deep', JSON.stringify({ expect_id: 'deep-2' }), { messageId: 'deep-2', contentType: 'application/json' });
    const [next] = await eventually('the next delivery', async () => {
      const found = await deliveries('Check', 'deep-2');
      return found.length ? found : undefined;
    });
    assert.equal(next.outcome, 'succeeded', JSON.stringify(next));
    await disable('Check', created.id);
  });

  test('a call that outlasts the lock keeps its message: the lock is renewed, and the message completed once', async () => {
    // A 1.5 s lock, a 4 s call: without renewal the lock would expire and the message come back.
    bus.createQueue('long', { keyName: KEY.shared_access_key_name, key: KEY.shared_access_key, lockDurationMs: 1500 });
    const created = await flow('Slow', 'long');
    bus.enqueue('long', '4', { messageId: 'long-1', contentType: 'application/json' });
    const [delivery] = await eventually('the delivery', async () => {
      const found = await deliveries('Slow', 'long-1');
      return found.length ? found : undefined;
    });
    assert.equal(delivery.outcome, 'succeeded', JSON.stringify(delivery));
    assert.equal(delivery.attempts, 1);
    await eventually('the completion', async () => (bus.settlements.some((s) => s.messageId === 'long-1') ? true : undefined));
    assert.deepEqual(
      bus.settlements.filter((s) => s.messageId === 'long-1').map((s) => s.outcome),
      ['completed'],
    );
    assert.ok(bus.renewals('long') >= 2, `the lock was renewed (${bus.renewals('long')} times)`);
    await disable('Slow', created.id);
  });

  test('a wrong key: the namespace refuses the token and the flow says so', async () => {
    queue('locked');
    const created = await flow('Check', 'locked', { ...KEY, shared_access_key: 'not-the-key' });
    const failed = await eventually('the flow failed', async () => {
      const res = await api.get(`/v1/algorithms/alice/Check/event-flows/${created.id}`, { key: alice.key });
      return res.body.status?.state === 'failed' ? res.body.status : undefined;
    });
    assert.match(failed.error, /invalid token/);
    await disable('Check', created.id);
  });

  test('queue URIs and credentials are checked where they enter', async () => {
    const post = (body: Record<string, unknown>) =>
      api.post('/v1/algorithms/alice/Check/event-flows', {
        key: alice.key,
        body: { source_type: 'servicebus', credentials: KEY, ...body },
      });
    // Shaped like a queue URI but not a namespace this cluster may reach: refused by policy (403).
    for (const refused of [
      'sb://10.0.0.1:5672/q',
      'sb://algohost-ns.servicebus.windows.net:77223/q',
      'sb://169.254.169.254/q',
      'sb://algohost-ns.servicebus.windows.net:8080/q',
    ]) {
      const res = await post({ source_uri: refused });
      assert.equal(res.status, 403, `${refused}: ${res.text}`);
      assert.match(res.body.error.message, /ALGOHOST_SERVICEBUS_ENDPOINT_ALLOW/);
    }
    // Not shaped like one at all: a bad request.
    for (const bad of ['https://algohost-ns.servicebus.windows.net/q', 'sb://algohost-ns.servicebus.windows.net/', 'sb://user@host/q']) {
      assert.equal((await post({ source_uri: bad })).status, 400, bad);
    }
    const role = await post({
      source_uri: 'sb://algohost-ns.servicebus.windows.net/orders',
      credentials: { role_arn: 'arn:aws:iam::123456789012:role/x' },
    });
    assert.equal(role.status, 400, role.text);
    const injected = await post({
      source_uri: 'sb://algohost-ns.servicebus.windows.net/orders',
      credentials: { shared_access_key_name: 'a;Endpoint=sb://evil', shared_access_key: 'k' },
    });
    assert.equal(injected.status, 400, injected.text);
    const azure = await post({ source_uri: 'sb://algohost-ns.servicebus.windows.net/orders' });
    assert.equal(azure.status, 200, azure.text);
    const again = await post({ source_uri: 'sb://algohost-ns.servicebus.windows.net/orders' });
    assert.equal(again.status, 409, again.text);
    assert.equal((await api.delete(`/v1/algorithms/alice/Check/event-flows/${azure.body.id}`, { key: alice.key })).status, 204);
  });

  /** Whether alice's one call is taken (another is refused with 429). */
  async function inFlight(): Promise<boolean> {
    const res = await api.post('/v1/algo/alice/Slow/1.0.0', { key: alice.key, body: 0 });
    return res.status === 429;
  }
}
