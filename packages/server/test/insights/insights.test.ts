/**
 * Insights (docs/compatibility.md §4) with a real Kafka (scripts/with-services.sh): the one broker
 * connection admins configure, reports from inside running calls in every language's in-sandbox
 * client, enriched and written to the Insights topic; the limits (25 metrics, 25 KB) and the
 * calls that may not report. Each language's Caller (test/fixtures/pipeline/) is a Kafka
 * subscriber, so its report also carries the topic, partition, offset and key the algorithm read
 * from its call's event metadata (ALGOHOST_EVENT; com.algorithmia.Algorithmia.event() on the JVM).
 * ALGOHOST_TEST_LANGUAGES selects languages as in pipelines.test.ts.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createAndBuild } from '../support/algorithms.js';
import { createUser, type TestUser } from '../support/fixtures.js';
import { client, request, type Client } from '../support/http.js';
import { type DatabaseKind, DATABASES, startTestServer, type TestServer } from '../support/server.js';
import { createTopics, eventually, KAFKA, needs, produce, publishedPython, readTopic, type ReadRecord } from '../support/events.js';

const CALLERS: { language: string; dir: string; environment: string; name: string }[] = [
  { language: 'python', dir: 'python', environment: 'python311', name: 'Caller' },
  { language: 'javascript', dir: 'javascript', environment: 'nodejs20', name: 'JsCaller' },
  { language: 'ruby', dir: 'ruby', environment: 'ruby31', name: 'RbCaller' },
  { language: 'r', dir: 'r', environment: 'r42', name: 'RCaller' },
  { language: 'java', dir: 'java', environment: 'java17', name: 'JavaCaller' },
  { language: 'scala2', dir: 'scala', environment: 'scala-2.13', name: 'ScalaCaller' },
  { language: 'rust', dir: 'rust', environment: 'rust-stable', name: 'RustCaller' },
];
const PIPELINE_FIXTURES = fileURLToPath(new URL('../../../../test/fixtures/pipeline/', import.meta.url));
const only = process.env.ALGOHOST_TEST_LANGUAGES?.split(',').map((s) => s.trim());
const selected = CALLERS.filter((c) => !only || only.includes(c.language) || only.includes(c.dir));

const REPORTER = `import Algorithmia

def apply(input):
    try:
        answer = Algorithmia.client().report_insights(input)
    except Exception as e:
        return {"ok": False, "error": str(e)}
    return {"ok": True, "answer": None if answer is None else answer.json()}
`;

for (const database of DATABASES) describe(`Insights (${database})`, { skip: needs('kafka') }, () => insightsSuite(database));

function insightsSuite(database: DatabaseKind): void {
  const run = `${database}-${Date.now().toString(36)}`;
  const INSIGHTS_TOPIC = `insights-${run}`;
  // What a language's caller adds is its runtime, not the database: the second database runs the
  // parts that touch the stores (the connection, enriched reports, limits) and one caller.
  const callers = database === DATABASES[0] ? selected : selected.filter((c) => c.language === 'python');
  let srv: TestServer;
  let api: Client;
  let alice: TestUser;
  /** Every record read from the Insights topic so far (it is read from the start each time). */
  let seen: ReadRecord[] = [];

  const admin = () => srv.adminKey;
  const call = async (algo: string, input: unknown) => {
    const res = await request(srv.url, 'POST', `/v1/algo/alice/${algo}`, { key: alice.key, body: input });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.error, undefined, res.text);
    return res.body as { result: Record<string, unknown>; metadata: { request_id: string } };
  };
  /** Waits for `count` records on the Insights topic in all; returns the new ones. */
  const insightsRecords = async (count: number) => {
    const all = await readTopic(KAFKA!, INSIGHTS_TOPIC, count);
    const fresh = all.slice(seen.length);
    seen = all;
    return fresh;
  };

  before(async () => {
    srv = await startTestServer({ database, env: { ALGOHOST_EVENT_RETRY_BACKOFF_MS: '50' } });
    api = client(srv.url);
    alice = await createUser(api, srv.adminKey, 'alice');
    await createTopics(KAFKA!, [INSIGHTS_TOPIC, ...callers.map((c) => `in-${c.dir}-${run}`)]);
    const cluster = await api.post('/v1/admin/event-clusters', { key: admin(), body: { name: 'main', bootstrap_servers: [KAFKA!] } });
    assert.equal(cluster.status, 200, cluster.text);
    // Reporter 1.0.0 has Insights on; Quiet 1.0.0 does not.
    await publishedPython(srv.url, api, alice, 'Quiet', REPORTER);
    await publishedPython(srv.url, api, alice, 'Reporter', REPORTER, { insights_enabled: true });
  });
  after(() => srv?.stop());

  test('one connection: admins configure it on a topic of a connected cluster; a second is refused; users may not', async () => {
    const none = await api.get('/v1/admin/insights-connection', { key: admin() });
    assert.equal(none.status, 404, none.text);
    assert.match(none.body.error.message, /no broker connection is configured for Insights/);
    const byUser = await api.post('/v1/admin/insights-connection', { key: alice.key, body: { cluster: 'main', topic: INSIGHTS_TOPIC } });
    assert.equal(byUser.status, 403, byUser.text);
    const noTopic = await api.post('/v1/admin/insights-connection', { key: admin(), body: { cluster: 'main', topic: 'no-such-topic' } });
    assert.equal(noTopic.status, 404, noTopic.text);
    const noCluster = await api.post('/v1/admin/insights-connection', {
      key: admin(),
      body: { cluster: 'elsewhere', topic: INSIGHTS_TOPIC },
    });
    assert.equal(noCluster.status, 404, noCluster.text);
    const badTopic = await api.post('/v1/admin/insights-connection', {
      key: admin(),
      body: { cluster: 'main', topic: 'a topic/with spaces' },
    });
    assert.equal(badTopic.status, 400, badTopic.text);

    const made = await api.post('/v1/admin/insights-connection', { key: admin(), body: { cluster: 'main', topic: INSIGHTS_TOPIC } });
    assert.equal(made.status, 200, made.text);
    assert.deepEqual({ cluster: made.body.cluster.name, topic: made.body.topic }, { cluster: 'main', topic: INSIGHTS_TOPIC });
    const second = await api.post('/v1/admin/insights-connection', { key: admin(), body: { cluster: 'main', topic: `in-python-${run}` } });
    assert.equal(second.status, 409, second.text);
    assert.equal(second.body.error.code, 8008);
    assert.match(second.body.error.message, /only one broker connection/);
    const read = await api.get('/v1/admin/insights-connection', { key: admin() });
    assert.equal(read.body.topic, INSIGHTS_TOPIC);
    assert.equal((await api.get('/v1/admin/insights-connection', { key: alice.key })).status, 403);
  });

  test('a report from a call of an insights_enabled version lands on the topic, enriched', async () => {
    const out = await call('Reporter/1.0.0', { accuracy: 0.93, label: 'cat', nested: { a: [1, 2] } });
    assert.deepEqual(out.result, { ok: true, answer: { accepted: 3 } });
    const [record] = await insightsRecords(seen.length + 1);
    assert.ok(record);
    const value = JSON.parse(record.value);
    assert.deepEqual(
      { ...value, timestamp: typeof value.timestamp, duration_milliseconds: typeof value.duration_milliseconds },
      {
        accuracy: 0.93,
        label: 'cat',
        nested: { a: [1, 2] },
        algorithm_owner: 'alice',
        algorithm_name: 'Reporter',
        algorithm_version: '1.0.0',
        request_id: out.metadata.request_id,
        timestamp: 'string',
        duration_milliseconds: 'number',
      },
    );
    assert.equal(record.key, 'alice/Reporter');
    assert.deepEqual(record.headers, {
      'algohost-algorithm': 'alice/Reporter',
      'algohost-version': '1.0.0',
      'algohost-request-id': out.metadata.request_id,
      'content-type': 'application/json',
    });
  });

  test('limits: more than 25 metrics or a reserved key is 400, more than 25 KB is 413; the call goes on', async () => {
    const many = Object.fromEntries(Array.from({ length: 26 }, (_, i) => [`m${i}`, i]));
    const tooMany = await call('Reporter/1.0.0', many);
    assert.equal(tooMany.result.ok, false);
    assert.match(String(tooMany.result.error), /at most 25 metrics; this one has 26/);
    const reserved = await call('Reporter/1.0.0', { request_id: 'mine' });
    assert.match(String(reserved.result.error), /insight_key "request_id" is reserved/);
    const big = await call('Reporter/1.0.0', { blob: 'x'.repeat(26 * 1024) });
    assert.match(String(big.result.error), /exceeds the limit of 25 KB/);
    const exactly25 = await call('Reporter/1.0.0', Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`m${i}`, i])));
    assert.deepEqual(exactly25.result, { ok: true, answer: { accepted: 25 } });
    await insightsRecords(seen.length + 1);
  });

  test('a version without insights_enabled: the client reports nothing and the call goes on; without a running call’s token the API refuses', async () => {
    const quiet = await call('Quiet/1.0.0', { accuracy: 1 });
    assert.deepEqual(quiet.result, { ok: true, answer: null });
    const noToken = await request(srv.url, 'POST', '/v1/insights', { body: [{ insight_key: 'a', insight_value: 1 }] });
    assert.equal(noToken.status, 403, noToken.text);
    assert.equal(noToken.body.error.code, 8009);
    const forged = await request(srv.url, 'POST', '/v1/insights', {
      body: [{ insight_key: 'a', insight_value: 1 }],
      headers: { 'x-algohost-insights-token': 'forged' },
    });
    assert.equal(forged.status, 403, forged.text);
    const notArray = await request(srv.url, 'POST', '/v1/insights', { body: { a: 1 } });
    assert.equal(notArray.status, 400, notArray.text);
    // Nothing more reached the topic: the next record read is the next test's.
  });

  for (const c of callers) {
    test(`${c.language}: a Kafka record → a call whose algorithm reads its topic, partition, offset and key and reports them as Insights`, async () => {
      const inTopic = `in-${c.dir}-${run}`;
      await createAndBuild(srv.url, api, alice, 'alice', c.name, path.join(PIPELINE_FIXTURES, c.dir), { environment: c.environment });
      const published = await api.post(`/v1/algorithms/alice/${c.name}/versions`, {
        key: alice.key,
        body: { settings: { insights_enabled: true }, version_info: { version_type: 'major' } },
      });
      assert.equal(published.status, 200, published.text);
      const assigned = await api.post('/v1/admin/event-clusters/main/assignments', {
        key: admin(),
        body: { algorithm: `alice/${c.name}`, topic: inTopic, role: 'subscriber' },
      });
      assert.equal(assigned.status, 200, assigned.text);
      const flow = assigned.body.id as string;
      const enabled = await api.patch(`/v1/algorithms/alice/${c.name}/event-flows/${flow}`, {
        key: alice.key,
        body: { enabled: true, version: '1.0.0' },
      });
      assert.equal(enabled.status, 200, enabled.text);
      await eventually(`the ${c.language} flow running`, async () => {
        const res = await api.get(`/v1/algorithms/alice/${c.name}/event-flows/${flow}`, { key: alice.key });
        return res.body.status?.state === 'running' ? true : undefined;
      });
      await produce(KAFKA!, inTopic, [{ key: `key-${c.dir}`, value: JSON.stringify({ report: { lang: c.language, n: 7 } }) }]);

      const [record] = await insightsRecords(seen.length + 1);
      assert.ok(record);
      const delivery = await eventually('the delivery record', async () => {
        const res = await api.get(`/v1/algorithms/alice/${c.name}/event-deliveries`, { key: alice.key });
        return res.body.results.find((d: { outcome: string }) => d.outcome === 'succeeded');
      });
      const value = JSON.parse(record.value);
      assert.match(value.event_timestamp, /^\d+$/, 'the record’s own timestamp (ms)');
      assert.deepEqual(
        { ...value, timestamp: typeof value.timestamp, duration_milliseconds: typeof value.duration_milliseconds, event_timestamp: 'ms' },
        {
          lang: c.language,
          n: 7,
          event_source: 'kafka',
          event_topic: inTopic,
          event_partition: '0',
          event_offset: '0',
          event_key: `key-${c.dir}`,
          event_timestamp: 'ms',
          algorithm_owner: 'alice',
          algorithm_name: c.name,
          algorithm_version: '1.0.0',
          request_id: delivery.request_id,
          timestamp: 'string',
          duration_milliseconds: 'number',
        },
      );
      const disabled = await api.patch(`/v1/algorithms/alice/${c.name}/event-flows/${flow}`, { key: alice.key, body: { enabled: false } });
      assert.equal(disabled.status, 200, disabled.text);
    });
  }
}
