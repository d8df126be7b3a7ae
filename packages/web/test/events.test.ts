/**
 * Event Flows in a real browser against a real node and a real Kafka (scripts/with-services.sh
 * starts it: ALGOHOST_TEST_SERVICES=kafka): the admin connects the cluster (and one with TLS and
 * SASL, whose password never comes back), sees its topics, assigns published algorithms and is
 * told to publish an unpublished one first; the owner picks the version, enables the flow, sees
 * records become deliveries (a failing one dead-lettered with its error), pages through them,
 * configures the one Insights connection and removes it,
 * and creates and deletes an SQS queue flow, with the API's refusals shown beside the controls.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { createTopics, KAFKA, needs, produce, publishedPython } from '../../server/test/support/events.js';
import { assertNoPageErrors, checkPage, signIn, signInWithKey, startUi, type Ui } from './support/ui.js';

const ECHO = `def apply(input):
    return {"got": input}
`;
const FAIL = `def apply(input):
    raise ValueError("cannot digest " + str(input))
`;

const run = Date.now().toString(36);
const IN = `orders-${run}`;
const BAD = `bad-${run}`;
const OUT = `results-${run}`;

describe('web UI: Event Flows', { skip: needs('kafka') }, () => {
  let ui: Ui;
  let alice: Awaited<ReturnType<Ui['user']>>;
  let admin: Page;
  let owner: Page;

  before(async () => {
    ui = await startUi({ env: { ALGOHOST_EVENT_RETRY_BACKOFF_MS: '50', ALGOHOST_EVENT_RETRY_ATTEMPTS: '2' } });
    alice = await ui.user('alice');
    await publishedPython(ui.srv.url, ui.api, alice, 'Echo', ECHO);
    await publishedPython(ui.srv.url, ui.api, alice, 'Fail', FAIL);
    const draft = await ui.api.post('/v1/algorithms/alice', {
      key: alice.key,
      body: { name: 'Draft', settings: { language: 'python3-1' } },
    });
    assert.equal(draft.status, 200, draft.text);
    await createTopics(KAFKA!, [IN, BAD, OUT]);
    admin = await ui.newPage();
    await signInWithKey(admin, ui.srv.adminKey);
    owner = await ui.newPage();
    await signIn(owner, 'alice', alice.password);
  });
  after(() => ui?.stop());

  test('admin: connect a cluster, list its topics; a SASL password is write-only', async () => {
    await admin.goto('/admin/events');
    await admin.getByRole('heading', { name: 'Connect a Kafka cluster' }).waitFor();
    await admin.getByText('No Kafka cluster is connected.').waitFor();

    await admin.getByLabel('Cluster name').fill('main');
    await admin.getByLabel('Bootstrap servers').fill(KAFKA!);
    await admin.getByRole('button', { name: 'Connect cluster' }).click();
    const main = admin.getByTestId('cluster').filter({ has: admin.getByRole('heading', { name: 'main' }) });
    await main.getByRole('list', { name: 'Topics of main' }).getByText(IN, { exact: true }).waitFor();

    // Separators and no server: said beside the field before anything is sent.
    await admin.getByLabel('Cluster name').fill('other');
    await admin.getByLabel('Bootstrap servers').fill(' , ');
    await admin.getByRole('button', { name: 'Connect cluster' }).click();
    await admin.getByText('Name at least one server as host:port.').waitFor();

    // A name the API refuses: its message beside the form.
    await admin.getByLabel('Cluster name').fill('other');
    await admin.getByLabel('Bootstrap servers').fill('no-port-here');
    await admin.getByRole('button', { name: 'Connect cluster' }).click();
    const refusal = admin.locator('section[aria-labelledby="connect-cluster"] [role="alert"]');
    await refusal.waitFor();
    assert.match(await refusal.innerText(), /bootstrap server "no-port-here" is not host:port/);

    await admin.getByLabel('Cluster name').fill('secured');
    await admin.getByLabel('Bootstrap servers').fill('kafka.example.test:9093');
    await admin.getByLabel('Connect with TLS').check();
    await admin.getByLabel('SASL mechanism').selectOption('SCRAM-SHA-512');
    await admin.getByLabel('SASL username').fill('algohost');
    await admin.getByLabel('SASL password').fill('p4ss-w0rd-never-shown');
    await admin.getByRole('button', { name: 'Connect cluster' }).click();
    const secured = admin.getByTestId('cluster').filter({ has: admin.getByRole('heading', { name: 'secured' }) });
    await secured.getByText('SCRAM-SHA-512 as algohost (password stored)').waitFor();
    assert.equal(await admin.getByLabel('SASL password').count(), 0, 'the form is blank again (the password forgotten)');
    assert.ok(!(await admin.content()).includes('p4ss-w0rd-never-shown'), 'the password is nowhere in the page');

    // Disconnecting asks for the name first.
    await secured.getByRole('button', { name: 'Disconnect secured' }).click();
    const dialog = admin.getByRole('dialog', { name: 'Disconnect secured' });
    await dialog.getByLabel('Type secured to confirm').fill('secured');
    await dialog.getByRole('button', { name: 'Disconnect secured' }).click();
    await secured.waitFor({ state: 'detached' });
    await checkPage(admin, 'admin-events');
    assertNoPageErrors(admin);
  });

  test('admin: assign published algorithms; an unpublished one is told to publish first', async () => {
    const main = admin.getByTestId('cluster').filter({ has: admin.getByRole('heading', { name: 'main' }) });
    const assign = async (algorithm: string, topic: string) => {
      await main.getByLabel('Algorithm (owner/name) for main').fill(algorithm);
      await main.getByLabel('Topic of main').selectOption(topic);
      await main.getByRole('radio', { name: /Subscriber/ }).check();
      await main.getByRole('button', { name: 'Assign to topic' }).click();
    };
    await assign('alice/Draft', IN);
    const message = main.getByRole('alert');
    await message.waitFor();
    assert.match(await message.innerText(), /alice\/Draft has no published version: publish a version first/);

    await assign('alice/Echo', IN);
    await main.getByRole('link', { name: 'alice/Echo' }).waitFor();
    await assign('alice/Fail', BAD);
    await main.getByRole('link', { name: 'alice/Fail' }).waitFor();
    assert.equal(await main.getByRole('alert').count(), 0, 'the earlier message goes once an assignment works');
    await checkPage(admin, 'admin-events-assigned');
    assertNoPageErrors(admin);
  });

  test('admin: Insights go to one topic; the form is gone once configured and back after stopping', async () => {
    const insights = admin.getByRole('region', { name: 'Insights' });
    await insights.getByLabel('Insights cluster').selectOption('main');
    await insights.getByLabel('Insights topic').getByRole('option', { name: BAD }).waitFor({ state: 'attached' });
    await insights.getByLabel('Insights topic').selectOption(BAD);
    await insights.getByRole('button', { name: 'Send Insights here' }).click();
    const connection = insights.getByTestId('insights-connection');
    await connection.getByText(BAD, { exact: true }).waitFor();
    assert.equal(await insights.getByRole('button', { name: 'Send Insights here' }).count(), 0, 'only one connection');
    const api = await ui.api.get('/v1/admin/insights-connection', { key: ui.srv.adminKey });
    assert.equal(api.body.topic, BAD);
    await checkPage(admin, 'admin-insights');
    await connection.getByRole('button', { name: 'Stop sending Insights' }).click();
    const dialog = admin.getByRole('dialog', { name: 'Stop sending Insights' });
    await dialog.getByLabel(`Type ${BAD} to confirm`).fill(BAD);
    await dialog.getByRole('button', { name: 'Stop sending Insights' }).click();
    await insights.getByRole('button', { name: 'Send Insights here' }).waitFor();
    assertNoPageErrors(admin);
  });

  test('owner: pick the version, enable, see deliveries (with a dead letter), page through them', async () => {
    await owner.goto('/algorithms/alice/Echo/events');
    const flow = owner.getByTestId('flow').filter({ hasText: `Kafka subscriber: main / ${IN}` });
    await flow.getByText('disabled', { exact: true }).waitFor();
    // No consumer runs while it is disabled: the card says so, with what waits for it (nothing:
    // a flow that never ran starts at the end of the topic).
    await flow.getByText('stopped', { exact: true }).waitFor();
    assert.equal(await flow.getByTestId('flow-lag').innerText(), '0 (not consuming: disabled)');

    // The API's refusal beside the control: a timeout above its limit.
    await flow.getByLabel('Timeout (seconds)').fill('5000');
    await flow.getByRole('button', { name: 'Save version and timeout' }).click();
    await flow.getByRole('alert').waitFor();
    assert.match(await flow.getByRole('alert').innerText(), /timeout must be a number of seconds above 0 and at most 3000/);

    await flow.getByLabel('Version').selectOption('1.0.0');
    await flow.getByLabel('Timeout (seconds)').fill('30');
    await saved(owner, () => flow.getByRole('button', { name: 'Save version and timeout' }).click());
    await owner.getByTestId('flow').getByRole('button', { name: 'Enable' }).click();
    const enabled = owner.getByTestId('flow').filter({ hasText: `Kafka subscriber: main / ${IN}` });
    await enabled.getByText('enabled', { exact: true }).waitFor();
    assert.equal(await enabled.getByLabel('Version').inputValue(), '1.0.0');
    assert.equal(await enabled.getByLabel('Timeout (seconds)').inputValue(), '30');

    // The consumer starts at the end of the topic once it has joined its group: wait for that.
    await waitFor(owner, async () => {
      await owner.reload();
      await owner.getByTestId('flow').waitFor();
      return (await owner.getByTestId('flow').getByText('running', { exact: true }).count()) === 1;
    });
    await produce(
      KAFKA!,
      IN,
      Array.from({ length: 21 }, (_, i) => ({ value: JSON.stringify({ n: i }) })),
    );
    // The list does not push: Refresh until all 21 came (the worker first has to join the group).
    const rows = owner.locator('section[aria-labelledby="deliveries"] tbody tr');
    await waitFor(owner, async () => {
      await owner.getByRole('button', { name: 'Refresh' }).click();
      await owner.locator('section[aria-labelledby="deliveries"] [aria-busy="true"]').waitFor({ state: 'detached' });
      return (await rows.count()) === 20 && (await owner.getByRole('button', { name: 'Older', disabled: false }).count()) === 1;
    });
    assert.equal(await rows.filter({ hasText: 'succeeded' }).count(), 20);
    assert.match(await rows.first().innerText(), new RegExp(`${IN}/0@\\d+`));
    await owner.getByRole('button', { name: 'Older' }).click();
    await waitFor(owner, async () => (await rows.count()) === 1);
    assert.equal(await owner.getByRole('button', { name: 'Older' }).isEnabled(), false);
    await owner.getByRole('button', { name: 'Newer' }).click();
    await waitFor(owner, async () => (await rows.count()) === 20);
    await checkPage(owner, 'events-tab');

    // Disabled again, records arrive: the card shows how many wait, measured in the cluster.
    await saved(owner, () => owner.getByTestId('flow').getByRole('button', { name: 'Disable' }).click());
    await waitFor(owner, async () => {
      const res = await ui.api.get('/metrics', { key: ui.srv.adminKey });
      return !/algohost_event_flow_paused\{flow=/.test(res.text);
    });
    await produce(KAFKA!, IN, [{ value: '"a"' }, { value: '"b"' }, { value: '"c"' }]);
    await waitFor(owner, async () => {
      await owner.reload();
      const card = owner.getByTestId('flow').filter({ hasText: `Kafka subscriber: main / ${IN}` });
      await card.waitFor();
      return (await card.getByTestId('flow-lag').innerText()) === '3 (not consuming: disabled)';
    });
    await owner.getByTestId('flow').getByText('stopped', { exact: true }).waitFor();
    await checkPage(owner, 'events-tab-stopped');
    // At a laptop's width every column's header is in view, "At" included, without scrolling the table.
    const frame = await owner.locator('section[aria-labelledby="deliveries"] .table-wrap').boundingBox();
    for (const header of ['At', 'Outcome', 'Source', 'Error or dead letter', 'Flow']) {
      const box = await owner.locator('section[aria-labelledby="deliveries"] th', { hasText: header }).first().boundingBox();
      assert.ok(frame && box && box.x >= frame.x && box.x + box.width <= frame.x + frame.width + 0.5, `${header} is in view at 1280 px`);
    }

    // A failing algorithm: the record is retried, then dead-lettered with the error.
    await owner.goto('/algorithms/alice/Fail/events');
    const failing = owner.getByTestId('flow');
    await failing.getByLabel('Version').selectOption('1.0.0');
    await saved(owner, () => failing.getByRole('button', { name: 'Save version and timeout' }).click());
    await owner.getByTestId('flow').getByRole('button', { name: 'Enable' }).click();
    await owner.getByTestId('flow').getByText('enabled', { exact: true }).waitFor();
    await waitFor(owner, async () => {
      await owner.reload();
      await owner.getByTestId('flow').waitFor();
      return (await owner.getByTestId('flow').getByText('running', { exact: true }).count()) === 1;
    });
    await produce(KAFKA!, BAD, [{ value: 'soup' }]);
    await waitFor(owner, async () => {
      await owner.getByRole('button', { name: 'Refresh' }).click();
      await owner.locator('section[aria-labelledby="deliveries"] [aria-busy="true"]').waitFor({ state: 'detached' });
      return (await rows.count()) === 1;
    });
    const dead = await rows.first().innerText();
    assert.match(dead, /dead_lettered/);
    assert.match(dead, /cannot digest soup/);
    assert.match(dead, new RegExp(`dead letter: ${BAD}\\.dlq`));
    await checkPage(owner, 'events-tab-dead-letter');
    assertNoPageErrors(owner);
  });

  test('owner: a publisher flow that sends results says it is running (and why it has no lag)', async () => {
    const assigned = await ui.api.post('/v1/admin/event-clusters/main/assignments', {
      key: ui.srv.adminKey,
      body: { algorithm: 'alice/Echo', topic: OUT, role: 'publisher' },
    });
    assert.equal(assigned.status, 200, assigned.text);
    await owner.goto('/algorithms/alice/Echo/events');
    const flow = owner.getByTestId('flow').filter({ hasText: `Kafka publisher: main / ${OUT}` });
    await flow.getByLabel('Version').selectOption('1.0.0');
    await saved(owner, () => flow.getByRole('button', { name: 'Save version and timeout' }).click());
    await saved(owner, () =>
      owner
        .getByTestId('flow')
        .filter({ hasText: `Kafka publisher: main / ${OUT}` })
        .getByRole('button', { name: 'Enable' })
        .click(),
    );
    const called = await ui.api.post('/v1/algo/alice/Echo/1.0.0', { key: alice.key, body: { n: 'published' } });
    assert.equal(called.status, 200, called.text);
    // The publisher table is reloaded by the flows job: the card says running once it is in it.
    await waitFor(owner, async () => {
      await owner.reload();
      const card = owner.getByTestId('flow').filter({ hasText: `Kafka publisher: main / ${OUT}` });
      await card.waitFor();
      return (await card.getByText('running', { exact: true }).count()) === 1;
    });
    const card = owner.getByTestId('flow').filter({ hasText: `Kafka publisher: main / ${OUT}` });
    assert.equal(await card.getByText('not running').count(), 0);
    await card.getByText('none: a publisher writes to its topic and reads nothing').waitFor();
    await checkPage(owner, 'events-tab-publisher');
    assertNoPageErrors(owner);
  });

  test('owner: an SQS queue flow is created (a URL the cluster may not reach is refused) and deleted', async () => {
    await owner.goto('/algorithms/alice/Echo/events');
    await owner.getByRole('heading', { name: 'Subscribe to a queue' }).waitFor();
    const form = owner.locator('section[aria-labelledby="new-queue-flow"]');
    // An internal address shaped like a queue: the node must not be made to connect there.
    await form.getByLabel('Queue URL').fill('http://169.254.169.254/123456789012/orders');
    await form.getByLabel('Role ARN').fill('arn:aws:iam::123456789012:role/algohost-orders');
    // Beside the role: the ExternalId the node sends for alice, and the trust policy requiring it.
    const trust = await ui.api.get('/v1/users/alice/sqs-assume-role', { key: alice.key });
    assert.equal(trust.status, 200, trust.text);
    await form.getByText(trust.body.external_id).first().waitFor();
    assert.match(await form.locator('pre').innerText(), new RegExp(`"sts:ExternalId": "${trust.body.external_id}"`));
    await form.getByRole('button', { name: 'Create queue flow' }).click();
    await form.getByRole('alert').waitFor();
    assert.match(await form.getByRole('alert').innerText(), /is not an SQS queue URL this cluster may reach/);

    const url = 'https://sqs.eu-west-1.amazonaws.com/123456789012/orders';
    await form.getByLabel('Queue URL').fill(url);
    await form.getByRole('radio', { name: 'An access key' }).check();
    await form.getByLabel('Access key id').fill('AKIAEXAMPLEEXAMPLE');
    await form.getByLabel('Secret access key').fill('secret-never-shown');
    await form.getByRole('button', { name: 'Create queue flow' }).click();
    const sqs = owner.getByTestId('flow').filter({ hasText: `SQS subscriber: ${url}` });
    await sqs.getByText('access key AKIAEXAMPLEEXAMPLE').waitFor();
    assert.ok(!(await owner.content()).includes('secret-never-shown'), 'the secret key is nowhere in the page');
    await checkPage(owner, 'events-tab-sqs');

    await sqs.getByRole('button', { name: 'Delete flow' }).click();
    await owner.getByRole('dialog', { name: 'Delete flow' }).getByRole('button', { name: 'Delete flow' }).click();
    await sqs.waitFor({ state: 'detached' });
    // Kafka assignments are the admin's: the owner has no delete button for them.
    assert.equal(await owner.getByTestId('flow').getByRole('button', { name: 'Delete flow' }).count(), 0);
    assertNoPageErrors(owner);
  });

  test('owner: a Service Bus queue flow is created with a shared access key (never shown again) and deleted', async () => {
    const form = owner.locator('section[aria-labelledby="new-queue-flow"]');
    await form.getByRole('radio', { name: 'Azure Service Bus' }).check();
    // Not an Azure namespace, and not allowed by the operator: refused.
    await form.getByLabel('Queue URL').fill('sb://10.0.0.1:5672/orders');
    await form.getByLabel('Shared access key name').fill('algohost-listen');
    await form.getByLabel('Shared access key', { exact: true }).fill('sb-key-never-shown');
    await form.getByRole('button', { name: 'Create queue flow' }).click();
    await form.getByRole('alert').waitFor();
    assert.match(await form.getByRole('alert').innerText(), /is not a Service Bus namespace this cluster may reach/);

    const uri = 'sb://contoso-orders.servicebus.windows.net/orders';
    await form.getByLabel('Queue URL').fill(uri);
    await form.getByRole('button', { name: 'Create queue flow' }).click();
    const sb = owner.getByTestId('flow').filter({ hasText: `Service Bus subscriber: ${uri}` });
    await sb.getByText('shared access key algohost-listen').waitFor();
    assert.ok(!(await owner.content()).includes('sb-key-never-shown'), 'the key is nowhere in the page');
    await checkPage(owner, 'events-tab-servicebus');
    await sb.getByRole('button', { name: 'Delete flow' }).click();
    await owner.getByRole('dialog', { name: 'Delete flow' }).getByRole('button', { name: 'Delete flow' }).click();
    await sb.waitFor({ state: 'detached' });
    assertNoPageErrors(owner);
  });
});

describe('web UI: Event Flows (assignment removed)', { skip: needs('kafka') }, () => {
  // Kept apart from the flows above so that it does not depend on their order.
  test('admin removes an assignment: the owner no longer sees the flow', async () => {
    const ui = await startUi();
    try {
      const bob = await ui.user('bob');
      await publishedPython(ui.srv.url, ui.api, bob, 'Echo', ECHO);
      const topic = `gone-${run}`;
      await createTopics(KAFKA!, [topic]);
      const connected = await ui.api.post('/v1/admin/event-clusters', {
        key: ui.srv.adminKey,
        body: { name: 'main', bootstrap_servers: [KAFKA!] },
      });
      assert.equal(connected.status, 200, connected.text);
      const assigned = await ui.api.post('/v1/admin/event-clusters/main/assignments', {
        key: ui.srv.adminKey,
        body: { algorithm: 'bob/Echo', topic, role: 'publisher' },
      });
      assert.equal(assigned.status, 200, assigned.text);

      const owner = await ui.newPage();
      await signIn(owner, 'bob', bob.password);
      await owner.goto('/algorithms/bob/Echo/events');
      await owner.getByTestId('flow').getByText(`Kafka publisher: main / ${topic}`).waitFor();

      const admin = await ui.newPage();
      await signInWithKey(admin, ui.srv.adminKey);
      await admin.goto('/admin/events');
      await admin.getByRole('button', { name: `Remove bob/Echo from ${topic}` }).click();
      await admin.getByText('No algorithm is assigned to a topic of this cluster.').waitFor();

      await owner.reload();
      await owner.getByText('No flows yet').waitFor();
      assertNoPageErrors(admin);
      assertNoPageErrors(owner);
    } finally {
      await ui.stop();
    }
  });
});

/** Does `act` and waits for the flow's PATCH it causes to be answered (so the next click does not race it). */
async function saved(page: Page, act: () => Promise<void>): Promise<void> {
  const answered = page.waitForResponse((r) => r.request().method() === 'PATCH' && r.url().includes('/event-flows/'));
  await act();
  assert.equal((await answered).status(), 200);
}

/** Retries `probe` (which drives the page) until it holds; gives up after a minute. */
async function waitFor(page: Page, probe: () => Promise<boolean>): Promise<void> {
  const end = Date.now() + 60_000;
  while (!(await probe())) {
    if (Date.now() > end) throw new Error('gave up waiting');
    await page.waitForTimeout(250);
  }
}
