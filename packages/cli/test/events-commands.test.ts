/**
 * `algo sqs-trust` and the ExternalId column of `algo flows`, against a real server: the owner
 * reads the ExternalId her SQS flows send when they assume a role (and the trust policy that
 * requires it); another account cannot read hers.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { createUser, type TestUser } from '../../server/test/support/fixtures.js';
import { client, type Client } from '../../server/test/support/http.js';
import { startTestServer, type TestServer } from '../../server/test/support/server.js';
import { algo, assertOk, assertOneLineFailure, makeHome } from './support/run-cli.js';

const ROLE = 'arn:aws:iam::123456789012:role/algohost-orders';

describe('algo sqs-trust, algo flows', () => {
  let srv: TestServer;
  let api: Client;
  let alice: TestUser;
  let home: string;
  let externalId: string;
  let flowId: string;
  const run = (args: string[]) => algo(args, { home });

  before(async () => {
    srv = await startTestServer();
    api = client(srv.url);
    alice = await createUser(api, srv.adminKey, 'alice');
    const mallory = await createUser(api, srv.adminKey, 'mallory');
    const created = await api.post('/v1/algorithms/alice', {
      key: alice.key,
      body: { name: 'Orders', settings: { language: 'python3-1' } },
    });
    assert.equal(created.status, 200, created.text);
    const flow = await api.post('/v1/algorithms/alice/Orders/event-flows', {
      key: alice.key,
      body: {
        source_type: 'sqs',
        source_uri: 'https://sqs.eu-west-1.amazonaws.com/123456789012/orders',
        credentials: { role_arn: ROLE },
      },
    });
    assert.equal(flow.status, 200, flow.text);
    flowId = flow.body.id;
    externalId = flow.body.credentials.external_id;
    assert.match(externalId, /^algohost-/);
    home = await makeHome();
    assertOk(await run(['auth', '--server', srv.url, '--key', alice.key, '--username', 'alice']), 'auth');
    assertOk(await run(['auth', '--profile', 'mallory', '--server', srv.url, '--key', mallory.key, '--username', 'mallory']), 'auth');
  });
  after(async () => {
    await srv.stop();
    await fs.promises.rm(home, { recursive: true, force: true });
  });

  test('sqs-trust: the ExternalId, SourceIdentity and a trust policy requiring it; --json; not another account’s', async () => {
    const text = await run(['sqs-trust', 'alice']);
    assertOk(text, 'sqs-trust');
    assert.match(text.stdout, new RegExp(`^ExternalId: +${externalId}$`, 'm'));
    assert.match(text.stdout, /^SourceIdentity: +algohost-alice$/m);
    assert.ok(text.stdout.includes(`"sts:ExternalId": "${externalId}"`), text.stdout);
    const asJson = JSON.parse((await run(['sqs-trust', 'alice', '--json'])).stdout);
    assert.equal(asJson.external_id, externalId);
    assert.deepEqual(asJson.trust_policy.Statement[0].Condition, { StringEquals: { 'sts:ExternalId': externalId } });
    assertOneLineFailure(await run(['sqs-trust', 'alice', '--profile', 'mallory']), /not found/i);
  });

  test('flows: the ExternalId of a role flow is in its row', async () => {
    const flows = await run(['flows', 'alice/Orders']);
    assertOk(flows, 'flows');
    const row = flows.stdout.split('\n').find((l) => l.startsWith(flowId));
    assert.ok(row?.includes(externalId), flows.stdout);
  });
});
