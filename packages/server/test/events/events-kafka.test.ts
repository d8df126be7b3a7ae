/**
 * Event Flows with Kafka, end to end with real brokers (scripts/with-services.sh starts two
 * clusters): a record becomes a call, whose result a publisher flow writes to another topic;
 * failures are retried and dead-lettered; unpublished algorithms cannot be assigned; event
 * listeners list exactly the spec's fields. On PostgreSQL when scripts/with-services.sh started
 * it (events-sqs.test.ts runs on SQLite), so the event store is exercised on both databases.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createUser, type TestUser } from '../support/fixtures.js';
import { client, type Client } from '../support/http.js';
import { POSTGRES_URL, startTestServer, type TestServer } from '../support/server.js';
import { createTopics, deleteTopics, eventually, KAFKA, KAFKA2, needs, produce, publishedPython, readTopic } from '../support/events.js';

const ECHO = `import json, os

def apply(input):
    event = json.loads(os.environ["ALGOHOST_EVENT"]) if "ALGOHOST_EVENT" in os.environ else None
    types = {k: type(v).__name__ for k, v in event.items()} if event else None
    return {"got": input, "event": event, "types": types}
`;
const TICK = `import time

def apply(input):
    time.sleep(0.3)
    return input
`;
const FAIL = `def apply(input):
    raise ValueError("cannot digest " + str(input))
`;

const run = `${Date.now().toString(36)}`;
const topic = (name: string) => `${name}-${run}`;

describe('Event Flows: Kafka', { skip: needs('kafka') }, () => {
  let srv: TestServer;
  let api: Client;
  let alice: TestUser;
  let bob: TestUser;
  let cluster: string;

  const admin = () => srv.adminKey;
  const enable = async (flowId: string, algo = 'Echo') => {
    const res = await api.patch(`/v1/algorithms/alice/${algo}/event-flows/${flowId}`, {
      key: alice.key,
      body: { enabled: true, version: '1.0.0' },
    });
    assert.equal(res.status, 200, res.text);
    return res.body;
  };
  const assign = async (clusterId: string, algorithm: string, t: string, role: 'publisher' | 'subscriber') => {
    const res = await api.post(`/v1/admin/event-clusters/${clusterId}/assignments`, { key: admin(), body: { algorithm, topic: t, role } });
    assert.equal(res.status, 200, res.text);
    return res.body.id as string;
  };
  const running = (algo: string, flowId: string) =>
    eventually(`flow ${flowId} running`, async () => {
      const res = await api.get(`/v1/algorithms/alice/${algo}/event-flows/${flowId}`, { key: alice.key });
      return res.body.status?.state === 'running' ? res.body : undefined;
    });

  before(async () => {
    srv = await startTestServer({
      database: POSTGRES_URL ? 'postgres' : 'sqlite',
      env: { ALGOHOST_EVENT_RETRY_BACKOFF_MS: '50', ALGOHOST_EVENT_RETRY_ATTEMPTS: '3', ALGOHOST_EVENT_SATURATION_DELAY_MS: '200' },
    });
    api = client(srv.url);
    alice = await createUser(api, srv.adminKey, 'alice');
    bob = await createUser(api, srv.adminKey, 'bob');
    await publishedPython(srv.url, api, alice, 'Echo', ECHO);
    await publishedPython(srv.url, api, alice, 'Fail', FAIL);
    await publishedPython(srv.url, api, alice, 'Tick', TICK);
    await createTopics(KAFKA!, [topic('in'), topic('out'), topic('fail')], 2);
    await createTopics(KAFKA!, [topic('deep')], 1);
    await createTopics(KAFKA!, [topic('restart'), topic('restart-out'), topic('lag')], 1);
    const res = await api.post('/v1/admin/event-clusters', { key: admin(), body: { name: 'main', bootstrap_servers: [KAFKA!] } });
    assert.equal(res.status, 200, res.text);
    cluster = res.body.id;
  });
  after(() => srv?.stop());

  test('admins connect clusters and list their topics; credentials are never returned; users may not', async () => {
    const withSasl = await api.post('/v1/admin/event-clusters', {
      key: admin(),
      body: {
        name: 'secured',
        bootstrap_servers: ['kafka.example.test:9093'],
        tls: true,
        sasl: { mechanism: 'SCRAM-SHA-512', username: 'u', password: 'p4ss-w0rd' },
      },
    });
    assert.equal(withSasl.status, 200, withSasl.text);
    assert.deepEqual(withSasl.body.sasl, { mechanism: 'SCRAM-SHA-512', username: 'u' });
    const listed = await api.get('/v1/admin/event-clusters', { key: admin() });
    assert.ok(!listed.text.includes('p4ss-w0rd'), 'the password never leaves the server');
    assert.deepEqual(
      listed.body.results.map((c: { name: string }) => c.name),
      ['main', 'secured'],
    );
    // Stored sealed: the database file does not hold it either.
    const rows = await srv.server.services.db.selectFrom('kafka_clusters').select('sasl_password').where('name', '=', 'secured').execute();
    assert.ok(rows[0]!.sasl_password && !rows[0]!.sasl_password.includes('p4ss-w0rd'));
    assert.equal((await api.delete(`/v1/admin/event-clusters/${withSasl.body.id}`, { key: admin() })).status, 204);

    const topics = await api.get(`/v1/admin/event-clusters/main/topics`, { key: admin() });
    assert.equal(topics.status, 200, topics.text);
    assert.deepEqual(
      topics.body.results.find((t: { name: string }) => t.name === topic('in')),
      { name: topic('in'), partitions: 2 },
    );

    for (const [method, path] of [
      ['GET', '/v1/admin/event-clusters'],
      ['GET', `/v1/admin/event-clusters/${cluster}/topics`],
      ['POST', '/v1/admin/event-clusters'],
    ] as const) {
      const res = await api[method === 'GET' ? 'get' : 'post'](path, {
        key: alice.key,
        body: method === 'POST' ? { name: 'x', bootstrap_servers: ['a:1'] } : undefined,
      });
      assert.equal(res.status, 403, `${method} ${path}: ${res.text}`);
    }
    const bad = await api.post('/v1/admin/event-clusters', { key: admin(), body: { name: 'bad', bootstrap_servers: ['no port'] } });
    assert.equal(bad.status, 400);
    assert.match(bad.body.error.message, /not host:port/);
  });

  test('an unpublished algorithm cannot be assigned: 409 telling to publish a version first', async () => {
    const created = await api.post('/v1/algorithms/alice', {
      key: alice.key,
      body: { name: 'Draft', settings: { language: 'python3-1', environment: 'cpu' } },
    });
    assert.equal(created.status, 200, created.text);
    const res = await api.post(`/v1/admin/event-clusters/${cluster}/assignments`, {
      key: admin(),
      body: { algorithm: 'alice/Draft', topic: topic('in'), role: 'subscriber' },
    });
    assert.equal(res.status, 409, res.text);
    assert.equal(res.body.error.code, 8003);
    assert.match(res.body.error.message, /publish a version first/);
    const missingTopic = await api.post(`/v1/admin/event-clusters/${cluster}/assignments`, {
      key: admin(),
      body: { algorithm: 'alice/Echo', topic: 'no-such-topic', role: 'subscriber' },
    });
    assert.equal(missingTopic.status, 404, missingTopic.text);
    assert.equal(missingTopic.body.error.code, 8006);
    assert.match(missingTopic.body.error.message, /the Kafka cluster "main" has no topic "no-such-topic": create it there first/);
  });

  test('a topic deleted after its assignment: the flow fails at once, its status naming the topic and the cluster and saying to create it', async () => {
    await createTopics(KAFKA!, [topic('gone')], 1);
    const sub = await assign(cluster, 'alice/Echo', topic('gone'), 'subscriber');
    await deleteTopics(KAFKA!, [topic('gone')]);
    await enable(sub);
    const status = await eventually('the flow failed', async () => {
      const res = await api.get(`/v1/algorithms/alice/Echo/event-flows/${sub}`, { key: alice.key });
      return res.body.status?.state === 'failed' ? res.body.status : undefined;
    });
    assert.ok(status.error.includes(`the Kafka cluster "main" (${cluster}; bootstrap servers ${KAFKA}) failed`), status.error);
    assert.ok(status.error.includes(`the topic "${topic('gone')}" does not exist on the cluster: create it there`), status.error);
    const off = await api.patch(`/v1/algorithms/alice/Echo/event-flows/${sub}`, { key: alice.key, body: { enabled: false } });
    assert.equal(off.status, 200, off.text);
  });

  test('record → subscriber call (value as input, topic/partition/offset/key as metadata) → publisher → another topic', async () => {
    const sub = await assign(cluster, 'alice/Echo', topic('in'), 'subscriber');
    const pub = await assign(cluster, 'alice/Echo', topic('out'), 'publisher');
    // Disabled until the owner enables it; bob (not a member) cannot.
    const bobs = await api.patch(`/v1/algorithms/alice/Echo/event-flows/${sub}`, { key: bob.key, body: { enabled: true } });
    assert.equal(bobs.status, 404);
    const wrongVersion = await api.patch(`/v1/algorithms/alice/Echo/event-flows/${sub}`, {
      key: alice.key,
      body: { enabled: true, version: '9.9.9' },
    });
    assert.equal(wrongVersion.status, 404, wrongVersion.text);
    await enable(pub);
    const enabled = await enable(sub);
    assert.equal(enabled.version, '1.0.0');
    await running('Echo', sub);

    await produce(KAFKA!, topic('in'), [
      { key: 'k1', value: JSON.stringify({ n: 1 }), partition: 0 },
      { key: 'k2', value: 'plain text', partition: 1 },
    ]);
    const out = await readTopic(KAFKA!, topic('out'), 2);
    const byKey = new Map(out.map((r) => [JSON.parse(r.value).event.key as string, r]));
    const json = JSON.parse(byKey.get('k1')!.value);
    assert.deepEqual(json.got, { n: 1 });
    assert.deepEqual(json.event, {
      source: 'kafka',
      topic: topic('in'),
      partition: '0',
      offset: '0',
      key: 'k1',
      timestamp: json.event.timestamp,
    });
    // What the algorithm received, as Python types: every field a string (docs/users-guide.md, ALGOHOST_EVENT).
    assert.deepEqual(json.types, { source: 'str', topic: 'str', partition: 'str', offset: 'str', key: 'str', timestamp: 'str' });
    assert.match(json.event.timestamp, /^\d+$/, 'milliseconds since the epoch, in decimal');
    assert.equal(JSON.parse(byKey.get('k2')!.value).got, 'plain text', 'a UTF-8 value that is not JSON is text');
    const headers = byKey.get('k1')!.headers;
    assert.equal(headers['algohost-algorithm'], 'alice/Echo');
    assert.equal(headers['algohost-version'], '1.0.0');
    assert.match(headers['algohost-request-id']!, /^req-/);
    assert.equal(headers['content-type'], 'application/json');

    // Every delivery is recorded, and a direct API call of the version publishes too.
    const deliveries = await eventually('two deliveries', async () => {
      const res = await api.get(`/v1/algorithms/alice/Echo/event-deliveries?flow=${sub}`, { key: alice.key });
      return res.body.results.length === 2 ? res.body.results : undefined;
    });
    for (const d of deliveries) {
      assert.equal(d.outcome, 'succeeded');
      assert.equal(d.attempts, 1);
      assert.match(d.source, new RegExp(`^${topic('in')}/[01]@0$`));
    }
    const direct = await api.post('/v1/algo/alice/Echo/1.0.0', { key: alice.key, body: 'direct' });
    assert.equal(direct.body.result.got, 'direct');
    const again = await readTopic(KAFKA!, topic('out'), 3);
    assert.ok(again.some((r) => JSON.parse(r.value).got === 'direct'));
    // The publisher that sent them says it runs (it reads nothing: no lag), as the Events tab shows.
    const publisher = await running('Echo', pub);
    assert.deepEqual(publisher.status, { state: 'running', lag: null, error: null });
    const metrics = await api.get('/metrics', { key: srv.adminKey });
    assert.match(metrics.text, new RegExp(`algohost_event_delivery_seconds_count\\{flow="${sub}",outcome="succeeded"\\} 2`));
  });

  test('a failing algorithm: retried with backoff, then the record goes to <topic>.dlq with the error', async () => {
    const sub = await assign(cluster, 'alice/Fail', topic('fail'), 'subscriber');
    await enable(sub, 'Fail');
    await running('Fail', sub);
    await produce(KAFKA!, topic('fail'), [{ key: 'bad', value: '"poison"' }]);
    const [dead] = await readTopic(KAFKA!, `${topic('fail')}.dlq`, 1);
    assert.equal(dead!.value, '"poison"');
    assert.equal(dead!.key, 'bad');
    assert.match(dead!.headers['algohost-error']!, /AlgorithmError: cannot digest poison/);
    assert.equal(dead!.headers['algohost-attempts'], '3');
    const [delivery] = await eventually('the dead-letter record', async () => {
      const res = await api.get(`/v1/algorithms/alice/Fail/event-deliveries`, { key: alice.key });
      return res.body.results.length ? res.body.results : undefined;
    });
    assert.equal(delivery.outcome, 'dead_lettered');
    assert.equal(delivery.attempts, 3);
    assert.equal(delivery.dead_letter, `${topic('fail')}.dlq`);
  });

  test('a record refused as invalid input (100,000-deep JSON) goes to <topic>.dlq after one attempt; the next record runs', async () => {
    // Tick, not Echo: Echo publishes to the out topic, whose records the tests below count.
    const sub = await assign(cluster, 'alice/Tick', topic('deep'), 'subscriber');
    await enable(sub, 'Tick');
    await running('Tick', sub);
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    await produce(KAFKA!, topic('deep'), [{ key: 'deep', value: deep }]);
    const [dead] = await readTopic(KAFKA!, `${topic('deep')}.dlq`, 1);
    assert.equal(dead!.value, deep);
    assert.match(dead!.headers['algohost-error']!, /nested too deeply/);
    assert.equal(dead!.headers['algohost-attempts'], '1', 'not retried: every attempt would be refused alike');
    await produce(KAFKA!, topic('deep'), [{ key: 'fine', value: '{"fine": true}' }]);
    const records = await eventually('both records', async () => {
      const res = await api.get(`/v1/algorithms/alice/Tick/event-deliveries?flow=${sub}`, { key: alice.key });
      return res.body.results.length === 2 ? res.body.results : undefined;
    });
    assert.deepEqual(
      records.map((d: { outcome: string; attempts: number }) => [d.outcome, d.attempts]),
      [
        ['succeeded', 1],
        ['dead_lettered', 1],
      ],
    );
    const off = await api.patch(`/v1/algorithms/alice/Tick/event-flows/${sub}`, { key: alice.key, body: { enabled: false } });
    assert.equal(off.status, 200, off.text);
  });

  test('two clusters connected at once: a record on the second reaches a topic of the first', { skip: needs('kafka2') }, async () => {
    await createTopics(KAFKA2!, [topic('far')], 1);
    const second = await api.post('/v1/admin/event-clusters', { key: admin(), body: { name: 'second', bootstrap_servers: [KAFKA2!] } });
    assert.equal(second.status, 200, second.text);
    const sub = await assign(second.body.id, 'alice/Echo', topic('far'), 'subscriber');
    await enable(sub);
    await running('Echo', sub);
    await produce(KAFKA2!, topic('far'), [{ key: 'far', value: '{"from": "second"}' }]);
    // The first three on the out topic came from the test before; the fourth crossed clusters.
    const out = await readTopic(KAFKA!, topic('out'), 4);
    assert.ok(out.some((r) => JSON.parse(r.value).event?.key === 'far'));
  });

  test('event listeners (spec endpoint 7): exactly the spec fields, per account, never someone else’s', async () => {
    const user = await api.get('/v1/users/alice', { key: admin() });
    const res = await api.get(`/v1/users/${user.body.id}/event-listeners`, { key: alice.key });
    assert.equal(res.status, 200, res.text);
    assert.ok(Array.isArray(res.body) && res.body.length >= 2);
    for (const l of res.body) {
      assert.deepEqual(Object.keys(l).sort(), ['algoName', 'algoOwner', 'credentials', 'id', 'listenerOwner', 'sourceType', 'sourceURI']);
      assert.equal(l.algoOwner, 'alice');
      assert.equal(l.sourceType, 'KAFKA');
      assert.equal(l.listenerOwner, 'admin');
      assert.match(l.sourceURI, /^kafka:\/\//);
    }
    assert.ok(
      res.body.some((l: { algoName: string; sourceURI: string }) => l.algoName === 'Echo' && l.sourceURI.endsWith(`/${topic('in')}`)),
    );
    // Publishers are not listeners.
    assert.ok(!res.body.some((l: { sourceURI: string }) => l.sourceURI.endsWith(`/${topic('out')}`)));
    assert.equal((await api.get('/v1/users/alice/event-listeners', { key: bob.key })).status, 404);
    assert.deepEqual((await api.get('/v1/users/bob/event-listeners', { key: bob.key })).body, []);
  });

  test('consumer lag per flow: records behind show in the flow’s status and in Prometheus, and drain to 0', async () => {
    const sub = await assign(cluster, 'alice/Tick', topic('lag'), 'subscriber');
    await enable(sub, 'Tick');
    await running('Tick', sub);
    // Tick takes 0.3 s a record: 40 records are a backlog of about 12 s on one partition.
    await produce(
      KAFKA!,
      topic('lag'),
      Array.from({ length: 40 }, (_, i) => ({ value: String(i) })),
    );
    const lagOf = async () => (await api.get(`/v1/algorithms/alice/Tick/event-flows/${sub}`, { key: alice.key })).body.status?.lag;
    const metricLag = async () => {
      const m = new RegExp(`algohost_event_flow_lag\\{flow="${sub}"[^}]*\\} (\\d+)`).exec(
        (await api.get('/metrics', { key: srv.adminKey })).text,
      );
      return m ? Number(m[1]) : undefined;
    };
    const behind = await eventually('a lag above 0', async () => {
      const lag = await lagOf();
      return lag > 0 ? lag : undefined;
    });
    assert.ok(behind <= 40, String(behind));
    await eventually('the Prometheus gauge above 0', async () => (((await metricLag()) ?? 0) > 0 ? true : undefined));
    await eventually('the lag back to 0', async () => ((await lagOf()) === 0 && (await metricLag()) === 0 ? true : undefined));
    const off = await api.patch(`/v1/algorithms/alice/Tick/event-flows/${sub}`, { key: alice.key, body: { enabled: false } });
    assert.equal(off.status, 200, off.text);
  });

  test('a subscriber no node runs shows its lag from the broker: 0 before it ever ran, what waits while disabled, drained once enabled', async () => {
    await createTopics(KAFKA!, [topic('idle')], 2);
    const sub = await assign(cluster, 'alice/Tick', topic('idle'), 'subscriber');
    const flowOf = async () => (await api.get(`/v1/algorithms/alice/Tick/event-flows/${sub}`, { key: alice.key })).body;
    // Never started: it would start at the end of each partition, so what is there already never waits for it.
    await produce(KAFKA!, topic('idle'), [{ value: '"before"', partition: 0 }]);
    assert.deepEqual((await flowOf()).status, { state: 'stopped', lag: 0, error: null });

    await enable(sub, 'Tick');
    await running('Tick', sub);
    const off = await api.patch(`/v1/algorithms/alice/Tick/event-flows/${sub}`, { key: alice.key, body: { enabled: false } });
    assert.equal(off.status, 200, off.text);
    assert.equal(off.body.status.state, 'stopped');
    // The node lets go of its consumer (it no longer reports the flow), then records arrive.
    await eventually('the consumer stopped', async () =>
      (await api.get('/metrics', { key: srv.adminKey })).text.includes(`algohost_event_flow_paused{flow="${sub}"`) ? undefined : true,
    );
    await produce(KAFKA!, topic('idle'), [
      { value: '1', partition: 0 },
      { value: '2', partition: 0 },
      { value: '3', partition: 1 },
      { value: '4', partition: 1 },
      { value: '5', partition: 1 },
    ]);
    // Measured from the group's committed offsets (kept a few seconds, hence eventually).
    const stopped = await eventually('a lag of 5 while disabled', async () => {
      const f = await flowOf();
      return f.status?.lag === 5 ? f : undefined;
    });
    assert.deepEqual(stopped.status, { state: 'stopped', lag: 5, error: null });
    const listed = await api.get('/v1/algorithms/alice/Tick/event-flows', { key: alice.key });
    assert.deepEqual(listed.body.results.find((f: { id: string }) => f.id === sub).status, stopped.status);

    // Enabled: starting (until a node picks it up), then running, reading them all and down to 0.
    const on = await enable(sub, 'Tick');
    assert.equal(on.status.state, 'starting');
    await eventually('the five delivered and the lag back to 0', async () => {
      const f = await flowOf();
      const deliveries = await api.get(`/v1/algorithms/alice/Tick/event-deliveries?flow=${sub}`, { key: alice.key });
      return f.status?.state === 'running' && f.status.lag === 0 && deliveries.body.results.length === 5 ? true : undefined;
    });
    const done = await api.patch(`/v1/algorithms/alice/Tick/event-flows/${sub}`, { key: alice.key, body: { enabled: false } });
    assert.equal(done.status, 200, done.text);
  });

  test('algohost stopped mid-delivery and started again: every record is delivered at least once, the consumer resumes', async () => {
    const sub = await assign(cluster, 'alice/Tick', topic('restart'), 'subscriber');
    const pub = await assign(cluster, 'alice/Tick', topic('restart-out'), 'publisher');
    await enable(pub, 'Tick');
    await enable(sub, 'Tick');
    await running('Tick', sub);
    const sent = Array.from({ length: 8 }, (_, i) => `r${i}`);
    await produce(
      KAFKA!,
      topic('restart'),
      sent.map((v) => ({ value: v })),
    );
    await eventually('a first delivery', async () => {
      const res = await api.get(`/v1/algorithms/alice/Tick/event-deliveries?flow=${sub}`, { key: alice.key });
      return res.body.results.length >= 1 ? true : undefined;
    });
    srv = await srv.restart();
    api = client(srv.url);
    await running('Tick', sub);
    // Each input at least once on the output topic (some twice: delivered, not yet committed, when the node stopped).
    const seen = new Set<string>();
    await eventually(
      'every record delivered',
      async () => {
        const out = await readTopic(KAFKA!, topic('restart-out'), Math.max(sent.length, seen.size));
        for (const r of out) seen.add(r.value);
        return sent.every((v) => seen.has(v)) ? true : undefined;
      },
      120_000,
    );
  });
});
