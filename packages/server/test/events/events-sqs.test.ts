/**
 * Event Flows from SQS queues, end to end with ElasticMQ (scripts/with-services.sh starts it):
 * a message becomes a call and is deleted; while the algorithm is saturated the message goes
 * back with a delay until the queue's redrive policy moves it to the dead-letter queue; queue
 * URLs the operator did not allow are refused where they enter.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CreateQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { createUser, type TestUser } from '../support/fixtures.js';
import { client, type Client } from '../support/http.js';
import { type DatabaseKind, DATABASES, startTestServer, type TestServer } from '../support/server.js';
import { deadPort, eventually, holdCallSlot, needs, publishedPython, SQS, sqsMessagesLeft } from '../support/events.js';

/** Fails the delivery unless ALGOHOST_EVENT holds the SQS fields the users' guide lists, each a string. */
const ECHO = `import json, os

def apply(input):
    event = json.loads(os.environ["ALGOHOST_EVENT"]) if "ALGOHOST_EVENT" in os.environ else None
    if event is not None:
        types = {k: type(v).__name__ for k, v in event.items()}
        assert types == {"source": "str", "queue": "str", "message_id": "str", "receive_count": "str"}, types
        assert event["source"] == "sqs" and event["receive_count"].isdigit(), event
    return {"got": input, "event": event}
`;
const SLOW = `import time

def apply(input):
    time.sleep(float(input) if isinstance(input, (int, float)) else 0)
    return "done"
`;
const CREDENTIALS = { access_key_id: 'test', secret_access_key: 'test-secret' };

for (const database of DATABASES) describe(`Event Flows: SQS (${database})`, { skip: needs('sqs') }, () => sqsFlowsSuite(database));

function sqsFlowsSuite(database: DatabaseKind): void {
  let srv: TestServer;
  let api: Client;
  let alice: TestUser;
  let sqs: SQSClient;
  let downUrl: string;
  const run = `${database}-${Date.now().toString(36)}`;

  const queue = async (name: string, redrive?: { dlq: string; maxReceives: number }) => {
    const attrs: Record<string, string> = {};
    if (redrive) {
      const dlq = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: redrive.dlq, AttributeNames: ['QueueArn'] }));
      attrs.RedrivePolicy = JSON.stringify({ deadLetterTargetArn: dlq.Attributes!.QueueArn, maxReceiveCount: String(redrive.maxReceives) });
    }
    return (await sqs.send(new CreateQueueCommand({ QueueName: `${name}-${run}`, Attributes: attrs }))).QueueUrl!;
  };
  const flow = async (algo: string, url: string) => {
    const res = await api.post(`/v1/algorithms/alice/${algo}/event-flows`, {
      key: alice.key,
      body: { source_type: 'sqs', source_uri: url, credentials: CREDENTIALS, timeout: 30 },
    });
    assert.equal(res.status, 200, res.text);
    const enabled = await api.patch(`/v1/algorithms/alice/${algo}/event-flows/${res.body.id}`, { key: alice.key, body: { enabled: true } });
    assert.equal(enabled.status, 200, enabled.text);
    return enabled.body;
  };

  before(async () => {
    // An SQS endpoint the operator allows where nothing listens.
    downUrl = `http://127.0.0.1:${await deadPort()}/000000000000/orders`;
    srv = await startTestServer({
      database,
      env: {
        ALGOHOST_SQS_ENDPOINT_ALLOW: `${new URL(SQS!).host},${new URL(downUrl).host}`,
        ALGOHOST_EVENT_SATURATION_DELAY_MS: '1000',
        ALGOHOST_EVENT_RETRY_BACKOFF_MS: '1000',
        // One call at a time per account: a running call saturates alice's algorithms.
        ALGOHOST_MAX_CALLS_PER_ACCOUNT: '1',
      },
    });
    api = client(srv.url);
    alice = await createUser(api, srv.adminKey, 'alice');
    await publishedPython(srv.url, api, alice, 'Echo', ECHO);
    await publishedPython(srv.url, api, alice, 'Slow', SLOW);
    sqs = new SQSClient({ endpoint: SQS, region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
  });
  after(async () => {
    sqs?.destroy();
    await srv?.stop();
  });

  test('a message becomes a call (its id in the metadata) and is deleted after success', async () => {
    const url = await queue('echo');
    const created = await flow('Echo', url);
    assert.deepEqual(created.credentials, { kind: 'static', id: 'test' }, 'the secret is never returned');
    assert.ok(!JSON.stringify(created).includes('test-secret'));
    const sent = await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: '{"hello": "queue"}' }));
    const [delivery] = await eventually('the delivery', async () => {
      const res = await api.get('/v1/algorithms/alice/Echo/event-deliveries', { key: alice.key });
      return res.body.results.length ? res.body.results : undefined;
    });
    assert.equal(delivery.outcome, 'succeeded');
    assert.equal(delivery.source, sent.MessageId);
    assert.match(delivery.request_id, /^req-/);
    // Deleted (just after the record is written): nothing left to receive, not even after the
    // visibility timeout would have passed.
    await eventually('the message deleted', async () => ((await sqsMessagesLeft(sqs, url)) === 0 ? true : undefined));

    const listeners = await api.get('/v1/users/alice/event-listeners', { key: alice.key });
    assert.deepEqual(listeners.body, [
      {
        id: created.id,
        sourceType: 'SQS',
        sourceURI: url,
        algoName: 'Echo',
        algoOwner: 'alice',
        listenerOwner: 'alice',
        credentials: 'test',
      },
    ]);
  });

  test('saturated: the message goes back with a delay, and after the queue’s max receives to its dead-letter queue', async () => {
    const dlq = await queue('slow-dlq');
    const url = await queue('slow', { dlq, maxReceives: 2 });
    // alice's one call in flight: a slow call through the API keeps her algorithms saturated.
    const busy = await holdCallSlot(() => api.post('/v1/algo/alice/Slow/1.0.0', { key: alice.key, body: 10 }), inFlight);
    await flow('Echo', url);
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: '"later"' }));
    const moved = await eventually('the message in the dead-letter queue', async () => {
      const r = await sqs.send(new ReceiveMessageCommand({ QueueUrl: dlq, WaitTimeSeconds: 1 }));
      return r.Messages?.length ? r.Messages : undefined;
    });
    assert.equal(moved[0]!.Body, '"later"');
    const records = (await api.get('/v1/algorithms/alice/Echo/event-deliveries', { key: alice.key })).body.results.filter(
      (d: { source: string }) => d.source === moved[0]!.MessageId,
    );
    assert.deepEqual(records.map((d: { outcome: string }) => d.outcome).sort(), ['dead_lettered', 'returned']);
    for (const d of records) assert.match(d.error, /too many calls in flight/);
    assert.equal((await busy.answer).status, 200);
  });

  test('a disabled queue flow shows what waits in its queue (stopped), and once enabled it drains to 0', async () => {
    const url = await queue('idle');
    const created = await api.post('/v1/algorithms/alice/Echo/event-flows', {
      key: alice.key,
      body: { source_type: 'sqs', source_uri: url, credentials: CREDENTIALS, timeout: 30 },
    });
    assert.equal(created.status, 200, created.text);
    assert.deepEqual(created.body.status, { state: 'stopped', lag: 0, error: null });
    for (const n of [1, 2, 3]) await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: `{"n": ${n}}` }));
    const flowOf = async () => (await api.get(`/v1/algorithms/alice/Echo/event-flows/${created.body.id}`, { key: alice.key })).body;
    // Measured with the flow's credentials (kept a few seconds, hence eventually).
    const stopped = await eventually('3 messages waiting', async () => {
      const f = await flowOf();
      return f.status?.lag === 3 ? f : undefined;
    });
    assert.deepEqual(stopped.status, { state: 'stopped', lag: 3, error: null });

    const on = await api.patch(`/v1/algorithms/alice/Echo/event-flows/${created.body.id}`, { key: alice.key, body: { enabled: true } });
    assert.equal(on.status, 200, on.text);
    assert.equal(on.body.status.state, 'starting');
    let last: unknown;
    await eventually('the three delivered and the lag back to 0', async () => {
      const f = await flowOf();
      const deliveries = await api.get(`/v1/algorithms/alice/Echo/event-deliveries?flow=${created.body.id}`, { key: alice.key });
      // One call at a time for alice here: some come back saturated and are delivered later.
      const succeeded = deliveries.body.results.filter((d: { outcome: string }) => d.outcome === 'succeeded');
      last = { status: f.status, outcomes: deliveries.body.results.map((d: { outcome: string }) => d.outcome) };
      return f.status?.state === 'running' && f.status.lag === 0 && succeeded.length === 3 ? true : undefined;
    }).catch((err: Error) => assert.fail(`${err.message}: ${JSON.stringify(last)}`));
    const off = await api.patch(`/v1/algorithms/alice/Echo/event-flows/${created.body.id}`, { key: alice.key, body: { enabled: false } });
    assert.equal(off.status, 200, off.text);
  });

  test('queue URLs are checked where they enter: AWS URLs or hosts the operator allows, nothing else', async () => {
    // Shaped like a queue URL but not one this cluster may reach: refused by policy (403);
    // not shaped like one at all: a bad request (400).
    for (const [uri, why, status] of [
      ['http://169.254.169.254/000000000000/q', 'the metadata service', 403],
      ['http://127.0.0.1:1/000000000000/q', 'another port of loopback', 403],
      ['https://sqs.us-east-1.amazonaws.com.evil.test/000000000000/q', 'a look-alike host', 403],
      ['file:///etc/passwd', 'a file', 400],
      ['http://user:pw@127.0.0.1/000000000000/q', 'credentials in the URL', 400],
    ] as const) {
      const res = await api.post('/v1/algorithms/alice/Echo/event-flows', {
        key: alice.key,
        body: { source_type: 'sqs', source_uri: uri, credentials: CREDENTIALS },
      });
      assert.equal(res.status, status, `${why}: ${res.text}`);
    }
    const role = await api.post('/v1/algorithms/alice/Echo/event-flows', {
      key: alice.key,
      body: {
        source_type: 'sqs',
        source_uri: 'https://sqs.eu-west-1.amazonaws.com/123456789012/orders',
        credentials: { role_arn: 'not an arn' },
      },
    });
    assert.equal(role.status, 400, role.text);
  });

  test('a queue whose server is down: the flow fails, its status naming the queue and the refused connection', async () => {
    const created = await flow('Echo', downUrl);
    const status = await eventually('the flow failed', async () => {
      const res = await api.get(`/v1/algorithms/alice/Echo/event-flows/${created.id}`, { key: alice.key });
      return res.body.status?.state === 'failed' ? res.body.status : undefined;
    });
    assert.ok(status.error.startsWith(`the SQS queue ${downUrl}: `), status.error);
    assert.match(status.error, new RegExp(`ECONNREFUSED 127\\.0\\.0\\.1:${new URL(downUrl).port}`));
    const off = await api.patch(`/v1/algorithms/alice/Echo/event-flows/${created.id}`, { key: alice.key, body: { enabled: false } });
    assert.equal(off.status, 200, off.text);
  });

  /** Whether alice has a call in flight (the slow one): a call now is refused as too many. */
  async function inFlight(): Promise<boolean> {
    const res = await api.post('/v1/algo/alice/Echo/1.0.0', { key: alice.key, body: 'probe' });
    return res.status === 429;
  }
}
