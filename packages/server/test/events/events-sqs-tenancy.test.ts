/**
 * SQS flows across tenants, with ElasticMQ (scripts/with-services.sh starts it) and a fake of AWS
 * STS (support/sts-fake.ts; AWS's cannot run here), on SQLite and PostgreSQL:
 *
 * - The confused deputy: mallory names alice's IAM role and queue in a flow of her own. Every
 *   AssumeRole the node makes carries the ExternalId of the flow's owning account and a
 *   SourceIdentity naming it, so alice's role, whose trust policy requires alice's ExternalId,
 *   refuses mallory's flow (which says why), while alice's flow on the same role still runs.
 * - A message whose input is refused before it runs (100,000-deep JSON) is dead-lettered at
 *   once with its reason, never returned to the queue to be refused again; alice's next message
 *   still runs.
 * - The lag of a disabled flow is measured in its queue as its owner's flow would read it: with
 *   the flow's own keys or its role assumed with its owner's ExternalId (mallory's flow on
 *   alice's role and queue measures nothing), never with the node's own key, and only at a queue
 *   the operator's allow-list names now. A queue the operator stopped naming is not reached at
 *   all: neither measured nor polled by the flow that was enabled on it.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { CreateQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { createUser, type TestUser } from '../support/fixtures.js';
import { client, type Client } from '../support/http.js';
import { DATABASES, startTestServer, type TestServer } from '../support/server.js';
import { eventually, needs, publishedPython, SQS, sqsMessagesLeft } from '../support/events.js';
import { FakeSts } from '../support/sts-fake.js';

const ECHO = `def apply(input):
    return {"got": input}
`;
/** The node's own AWS credentials (the default chain reads them from the environment), which sign its AssumeRole requests. */
const NODE_KEY_ID = 'AKIAALGOHOSTNODE0001';
const ROLE = 'arn:aws:iam::111122223333:role/alice-orders';
const CREDENTIALS = { access_key_id: 'test', secret_access_key: 'test-secret' };
/** JSON nested 100,000 deep: refused by the call API's nesting limit before anything runs. */
const DEEP = '['.repeat(100_000) + ']'.repeat(100_000);

interface Delivery {
  source: string;
  outcome: string;
  attempts: number;
  error: string | null;
  dead_letter: string | null;
  request_id: string | null;
}

for (const database of DATABASES) {
  describe(`SQS flows between tenants (${database})`, { skip: needs('sqs') }, () => {
    let srv: TestServer;
    let api: Client;
    let alice: TestUser;
    let mallory: TestUser;
    let sqs: SQSClient;
    const sts = new FakeSts();
    const run = `${database}-${Date.now().toString(36)}`;
    const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };

    const queue = async (name: string, redrive?: { dlq: string; maxReceives: number }) => {
      const attrs: Record<string, string> = {};
      if (redrive) {
        attrs.RedrivePolicy = JSON.stringify({
          deadLetterTargetArn: await arnOf(redrive.dlq),
          maxReceiveCount: String(redrive.maxReceives),
        });
      }
      return (await sqs.send(new CreateQueueCommand({ QueueName: `${name}-${run}`, Attributes: attrs }))).QueueUrl!;
    };
    const arnOf = async (url: string) =>
      (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }))).Attributes!.QueueArn!;
    const flow = async (user: TestUser, url: string, credentials: object) => {
      const res = await api.post(`/v1/algorithms/${user.name}/Echo/event-flows`, {
        key: user.key,
        body: { source_type: 'sqs', source_uri: url, credentials, timeout: 30 },
      });
      assert.equal(res.status, 200, res.text);
      const enabled = await api.patch(`/v1/algorithms/${user.name}/Echo/event-flows/${res.body.id}`, {
        key: user.key,
        body: { enabled: true },
      });
      assert.equal(enabled.status, 200, enabled.text);
      return enabled.body;
    };
    const deliveries = async (user: TestUser, flowId: string): Promise<Delivery[]> => {
      const res = await api.get(`/v1/algorithms/${user.name}/Echo/event-deliveries?flow=${flowId}`, { key: user.key });
      assert.equal(res.status, 200, res.text);
      return res.body.results;
    };
    const deliveryOf = (user: TestUser, flowId: string, source: string) =>
      eventually(`the delivery of ${source}`, async () => (await deliveries(user, flowId)).find((d) => d.source === source));

    before(async () => {
      await sts.start();
      process.env.AWS_ACCESS_KEY_ID = NODE_KEY_ID;
      process.env.AWS_SECRET_ACCESS_KEY = 'the-node-own-secret';
      srv = await startTestServer({
        database,
        env: {
          ALGOHOST_SQS_ENDPOINT_ALLOW: new URL(SQS!).host,
          ALGOHOST_SQS_STS_ENDPOINT: sts.url,
          ALGOHOST_EVENT_RETRY_BACKOFF_MS: '1000',
        },
      });
      api = client(srv.url);
      alice = await createUser(api, srv.adminKey, 'alice');
      mallory = await createUser(api, srv.adminKey, 'mallory');
      await publishedPython(srv.url, api, alice, 'Echo', ECHO);
      await publishedPython(srv.url, api, mallory, 'Echo', ECHO);
      sqs = new SQSClient({ endpoint: SQS, region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
    });
    after(async () => {
      sqs?.destroy();
      await srv?.stop();
      await sts.stop();
      for (const [name, value] of [
        ['AWS_ACCESS_KEY_ID', saved.id],
        ['AWS_SECRET_ACCESS_KEY', saved.secret],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    });

    test('mallory naming alice’s role and queue is refused by its ExternalId; alice’s flow on the same role runs', async () => {
      // alice reads her ExternalId and puts it in her role's trust policy.
      const settings = await api.get('/v1/users/alice/sqs-assume-role', { key: alice.key });
      assert.equal(settings.status, 200, settings.text);
      const aliceId: string = settings.body.external_id;
      assert.match(aliceId, /^algohost-[\w-]{32}$/);
      assert.equal(settings.body.source_identity, 'algohost-alice');
      assert.deepEqual(settings.body.trust_policy.Statement[0].Condition, { StringEquals: { 'sts:ExternalId': aliceId } });
      assert.equal((await api.get('/v1/users/alice/sqs-assume-role', { key: mallory.key })).status, 404, 'not mallory’s to read');
      sts.requireExternalId(ROLE, aliceId);

      const url = await queue('orders');
      const alices = await flow(alice, url, { role_arn: ROLE });
      assert.deepEqual(alices.credentials, { kind: 'role', id: ROLE, external_id: aliceId, source_identity: 'algohost-alice' });
      // mallory names the same role and queue: her flow shows her own ExternalId, never alice's.
      const mallorys = await flow(mallory, url, { role_arn: ROLE });
      const malloryId: string = mallorys.credentials.external_id;
      assert.match(malloryId, /^algohost-[\w-]{32}$/);
      assert.notEqual(malloryId, aliceId);

      // mallory's flow fails, and says what the role's trust policy would have to hold.
      const failed = await eventually('mallory’s flow refused', async () => {
        const res = await api.get(`/v1/algorithms/mallory/Echo/event-flows/${mallorys.id}`, { key: mallory.key });
        return res.body.status?.state === 'failed' ? res.body.status : undefined;
      });
      assert.match(failed.error, /AccessDenied/);
      assert.ok(failed.error.includes(`"sts:ExternalId": "${malloryId}"`), failed.error);
      assert.ok(!failed.error.includes(aliceId), 'mallory is never told alice’s ExternalId');

      // alice's messages go to alice's flow only.
      const first = await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: '{"order": 1}' }));
      assert.equal((await deliveryOf(alice, alices.id, first.MessageId!)).outcome, 'succeeded');

      // What STS was asked: every request signed with the node's own key, each carrying its
      // owning account's ExternalId and naming that account; only alice's was granted.
      const asked = sts.requests.filter((r) => r.roleArn === ROLE);
      assert.ok(
        asked.every((r) => r.signedBy === NODE_KEY_ID),
        JSON.stringify(asked),
      );
      const byAlice = asked.filter((r) => r.sourceIdentity === 'algohost-alice');
      const byMallory = asked.filter((r) => r.sourceIdentity === 'algohost-mallory');
      assert.ok(byAlice.length > 0 && byMallory.length > 0, JSON.stringify(asked));
      assert.ok(byAlice.every((r) => r.externalId === aliceId && r.granted));
      assert.ok(byMallory.every((r) => r.externalId === malloryId && !r.granted));
      assert.equal(asked.length, byAlice.length + byMallory.length, 'every AssumeRole names its tenant');
      assert.deepEqual(await deliveries(mallory, mallorys.id), [], 'mallory’s flow received nothing');

      // alice's next message still runs as hers.
      const second = await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: '{"order": 2}' }));
      const next = await deliveryOf(alice, alices.id, second.MessageId!);
      assert.equal(next.outcome, 'succeeded');
      assert.match(next.request_id!, /^req-/);
      await eventually('the queue emptied', async () => ((await sqsMessagesLeft(sqs, url)) === 0 ? true : undefined));
    });

    test('a 100,000-deep JSON message goes to the dead-letter queue at once with its reason; the next message runs', async () => {
      const dlq = await queue('deep-dlq');
      const url = await queue('deep', { dlq, maxReceives: 5 });
      const f = await flow(alice, url, CREDENTIALS);
      const sent = await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: DEEP }));
      const record = await deliveryOf(alice, f.id, sent.MessageId!);
      assert.equal(record.outcome, 'dead_lettered');
      assert.equal(record.attempts, 1, 'refused on its first receive, never returned');
      assert.match(record.error!, /nested too deeply/);
      assert.equal(record.dead_letter, await arnOf(dlq));

      const moved = await eventually('the message in the dead-letter queue', async () => {
        const r = await sqs.send(
          new ReceiveMessageCommand({ QueueUrl: dlq, WaitTimeSeconds: 1, MessageAttributeNames: ['All'], MaxNumberOfMessages: 10 }),
        );
        return r.Messages?.length ? r.Messages : undefined;
      });
      assert.equal(moved.length, 1);
      assert.equal(moved[0]!.Body, DEEP);
      assert.match(moved[0]!.MessageAttributes!['algohost-error']!.StringValue!, /nested too deeply/);

      // alice's next message runs; by then (past the 1 s backoff) the deep one was not received again.
      const next = await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: '{"fine": true}' }));
      assert.equal((await deliveryOf(alice, f.id, next.MessageId!)).outcome, 'succeeded');
      await new Promise((r) => setTimeout(r, 2500));
      assert.equal((await deliveries(alice, f.id)).filter((d) => d.source === sent.MessageId).length, 1, 'delivered once');
      assert.equal(await sqsMessagesLeft(sqs, url), 0);
    });

    test('without a dead-letter queue a refused message is deleted at once, and its record says why', async () => {
      const url = await queue('deep-alone');
      const f = await flow(alice, url, CREDENTIALS);
      const sent = await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: DEEP }));
      const record = await deliveryOf(alice, f.id, sent.MessageId!);
      assert.equal(record.outcome, 'dead_lettered');
      assert.equal(record.dead_letter, null);
      assert.match(record.error!, /nested too deeply.*deleted: the queue has no dead-letter queue/);
      await eventually('the message deleted', async () => ((await sqsMessagesLeft(sqs, url)) === 0 ? true : undefined));
      const next = await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: '"fine"' }));
      assert.equal((await deliveryOf(alice, f.id, next.MessageId!)).outcome, 'succeeded');
      await new Promise((r) => setTimeout(r, 2500));
      assert.equal((await deliveries(alice, f.id)).filter((d) => d.source === sent.MessageId).length, 1, 'delivered once');
    });

    test('a disabled flow’s lag is read as its owner’s: alice’s role sees what waits, mallory’s flow on it is refused', async () => {
      const aliceId: string = (await api.get('/v1/users/alice/sqs-assume-role', { key: alice.key })).body.external_id;
      sts.requireExternalId(ROLE, aliceId);
      const url = await queue('waiting');
      for (const n of [1, 2]) await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: `{"order": ${n}}` }));
      const disabledFlow = async (user: TestUser) => {
        const res = await api.post(`/v1/algorithms/${user.name}/Echo/event-flows`, {
          key: user.key,
          body: { source_type: 'sqs', source_uri: url, credentials: { role_arn: ROLE } },
        });
        assert.equal(res.status, 200, res.text);
        return res.body.id as string;
      };
      const alices = await disabledFlow(alice);
      const mallorys = await disabledFlow(mallory);
      const statusOf = async (user: TestUser, id: string) =>
        (await api.get(`/v1/algorithms/${user.name}/Echo/event-flows/${id}`, { key: user.key })).body.status;

      assert.deepEqual(await statusOf(alice, alices), { state: 'stopped', lag: 2, error: null });
      const refused = await statusOf(mallory, mallorys);
      assert.equal(refused.state, 'stopped');
      assert.equal(refused.lag, null, 'mallory learns nothing of alice’s queue');
      assert.ok(refused.error.startsWith(`lag not measured: the SQS queue ${url}: `), refused.error);
      assert.match(refused.error, /AccessDenied/);
      assert.ok(!refused.error.includes(aliceId), 'mallory is never told alice’s ExternalId');
      const byMallory = sts.requests.filter((r) => r.roleArn === ROLE && r.sourceIdentity === 'algohost-mallory');
      assert.ok(byMallory.length > 0 && byMallory.every((r) => !r.granted && r.externalId !== aliceId && r.signedBy === NODE_KEY_ID));
      assert.equal(await sqsMessagesLeft(sqs, url), 2, 'measuring receives nothing');
    });

    test('a queue is measured and polled only while the allow-list names it, with the flow’s own keys, never the node’s', async () => {
      // A stand-in for a host inside the operator's network: it counts who reaches it and with which key.
      const seen: string[] = [];
      const inside = http.createServer((req, res) => {
        seen.push(/Credential=([^/]+)\//.exec(req.headers.authorization ?? '')?.[1] ?? '(unsigned)');
        res.writeHead(400, { 'content-type': 'text/plain' }).end('not a queue');
      });
      await new Promise<void>((resolve) => inside.listen(0, '127.0.0.1', resolve));
      const host = `127.0.0.1:${(inside.address() as AddressInfo).port}`;
      const url = `http://${host}/000000000000/orders`;
      // A node of its own whose operator allows that host (for now). One node, also where this
      // file runs against a cluster: restarting a cluster's test server restarts its API node
      // only, and the operator's narrower list must reach the node that polls.
      let node = await startTestServer({ database, topology: 'node', env: { ALGOHOST_SQS_ENDPOINT_ALLOW: host } });
      try {
        const own = client(node.url);
        const bob = await createUser(own, node.adminKey, 'bob');
        await publishedPython(node.url, own, bob, 'Echo', ECHO);
        const created = await own.post('/v1/algorithms/bob/Echo/event-flows', {
          key: bob.key,
          body: { source_type: 'sqs', source_uri: url, credentials: { access_key_id: 'AKIABOBSOWNKEY000001', secret_access_key: 's' } },
        });
        assert.equal(created.status, 200, created.text);
        assert.equal(created.body.status.lag, null);
        assert.ok(created.body.status.error.startsWith(`lag not measured: the SQS queue ${url}: it failed: `), created.body.status.error);
        assert.deepEqual(seen, ['AKIABOBSOWNKEY000001'], 'asked once, signed with the flow’s key (the node’s is in its environment)');
        // Enabled, the flow polls it, with its own key too.
        const enabled = await own.patch(`/v1/algorithms/bob/Echo/event-flows/${created.body.id}`, {
          key: bob.key,
          body: { enabled: true },
        });
        assert.equal(enabled.status, 200, enabled.text);
        await eventually('the flow polling the queue', async () => (seen.length > 1 ? true : undefined));
        assert.ok(
          seen.every((key) => key === 'AKIABOBSOWNKEY000001'),
          seen.join(', '),
        );

        // The operator stops allowing it: the stored flow is not a way around that.
        node = await node.restart({ ALGOHOST_SQS_ENDPOINT_ALLOW: new URL(SQS!).host });
        const reached = seen.length;
        // A negative: the node's flows ran at its start and once more after FLOWS_RECONCILE_MS (5 s).
        await new Promise((resolve) => setTimeout(resolve, 6000));
        const after = await client(node.url).get(`/v1/algorithms/bob/Echo/event-flows/${created.body.id}`, { key: bob.key });
        assert.equal(after.status, 200, after.text);
        assert.deepEqual(after.body.status, {
          state: 'starting',
          lag: null,
          error: `lag not measured: the SQS queue ${url}: not a queue this cluster may reach now (ALGOHOST_SQS_ENDPOINT_ALLOW does not name its host)`,
        });
        assert.equal(seen.length, reached, 'neither polled nor measured again');
      } finally {
        await node.stop();
        await new Promise((resolve) => inside.close(resolve));
      }
    });
  });
}
