/**
 * The algorithm flows in a real browser against a real node: the dashboard, creating an
 * algorithm, and every tab of its page, with a real `git push` whose build log the Builds tab
 * shows live through the SSE stream.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page, Request } from 'playwright-core';
import { createOrganization } from '../../server/test/support/fixtures.js';
import { clone, commitAndPush, gitUrl, removeClone } from '../../server/test/support/git.js';
import { assertNoPageErrors, checkPage, signIn, startUi, type Ui } from './support/ui.js';

const ALGORITHM = `
def apply(input):
    if input == "fail":
        raise ValueError("asked to fail")
    print("called with", repr(input))
    if isinstance(input, bytes):
        return input[::-1]
    if isinstance(input, str):
        return "hello " + input
    return {"echo": input}
`;

/** A README that tries to run script three ways; none may reach the page. */
const README = `# Hello from the README

Greets whoever calls it.

<script>window.__pwned = 'script'</script>
<img src="x" onerror="window.__pwned = 'img'">
[click me](javascript:window.__pwned='link')
`;

/** Enough Python to keep the byte-compiler busy for a while: a real, slow build step. */
function slowModule(functions: number): string {
  const lines: string[] = [];
  for (let i = 0; i < functions; i++) lines.push(`def f${i}(x):\n    return x + ${i}\n`);
  return lines.join('');
}

describe('web UI: algorithms', () => {
  let ui: Ui;
  let alice: Awaited<ReturnType<Ui['user']>>;
  let page: Page;
  const clones: string[] = [];

  before(async () => {
    ui = await startUi();
    alice = await ui.user('alice');
    await createOrganization(ui.api, alice.key, 'acme');
    const orgAlgo = await ui.api.post('/v1/algorithms/acme', { key: alice.key, body: { name: 'OrgTool', details: { label: 'Org tool' } } });
    assert.equal(orgAlgo.status, 200, orgAlgo.text);
    page = await ui.newPage();
    await signIn(page, 'alice', alice.password);
  });
  after(async () => {
    for (const d of clones) await removeClone(d);
    await ui?.stop();
  });

  test('create algorithm: the name is checked as the API does, then the Git URL and a clone command are shown', async () => {
    await page.getByRole('link', { name: 'Create', exact: true }).click();
    await page.getByRole('heading', { name: 'Create an algorithm' }).waitFor();
    const owner = page.getByLabel('Owner');
    assert.deepEqual(await owner.locator('option').allTextContents(), ['alice', 'acme']);
    await page.getByLabel('Environment').locator('option').first().waitFor({ state: 'attached' });
    assert.match((await page.getByLabel('Environment').locator('option').allTextContents()).join('|'), /\((CPU|GPU)\)/);
    await checkPage(page, 'create-algorithm');

    await page.getByLabel('Name').fill('1 bad');
    await page.getByRole('button', { name: 'Create algorithm' }).click();
    await page.getByText('The name must start with a letter.').waitFor();

    await page.getByLabel('Name').fill('Hello');
    await page.getByLabel('Label').fill('Hello World');
    await page.getByLabel('Summary').fill('Greets whoever calls it.');
    await page.getByLabel('License').selectOption('mit');
    await page.getByRole('button', { name: 'Create algorithm' }).click();
    // Closed source needs the apl license: the form says so before asking the API.
    await page.getByText('Closed source needs the apl license').waitFor();
    await page.getByLabel('Open: callers may read the source').check();
    await page.getByRole('button', { name: 'Create algorithm' }).click();
    await page.getByRole('heading', { name: 'alice/Hello is ready' }).waitFor();
    const url = await page.getByLabel('Git URL').textContent();
    assert.equal(url, `${ui.srv.url}/git/alice/Hello.git`);
    const cloneCommand = await page.getByLabel('Clone command').textContent();
    assert.equal(cloneCommand, `git clone ${ui.srv.url.replace('http://', 'http://alice:API_KEY@')}/git/alice/Hello.git Hello`);
    await checkPage(page, 'algorithm-created');

    const created = await ui.api.get('/v1/algorithms/alice/Hello', { key: alice.key });
    assert.equal(created.body.details.label, 'Hello World');
    assert.equal(created.body.settings.license, 'mit');
    assert.equal(created.body.settings.source_visibility, 'open');

    // The API's own refusal appears next to the button.
    await page.getByRole('button', { name: 'Create another' }).click();
    await page.getByLabel('Name').fill('hello');
    await page.getByLabel('Open: callers may read the source').check();
    await page.getByRole('button', { name: 'Create algorithm' }).click();
    await page.getByRole('alert').filter({ hasText: 'already exists' }).waitFor();
    assertNoPageErrors(page);
  });

  test("builds: a real git push's build log appears live, from the SSE stream", async () => {
    await page.goto('/algorithms/alice/Hello/builds');
    await page.getByRole('heading', { name: 'Builds', level: 2 }).waitFor();
    const { dir, result } = await clone(gitUrl(ui.srv.url, 'alice', alice.key, 'alice', 'Hello'));
    assert.equal(result.code, 0, result.stderr);
    clones.push(dir);
    fs.writeFileSync(path.join(dir, 'src', 'Hello.py'), ALGORITHM);
    fs.writeFileSync(path.join(dir, 'src', 'slow.py'), slowModule(100_000));
    fs.writeFileSync(path.join(dir, 'README.md'), README);
    const push = await commitAndPush(dir, 'greet, slowly');
    assert.equal(push.code, 0, push.stderr);

    // The log element says where its text came from: 'stream' while following a running build.
    // 'following live' shows from the moment the page follows the running build's stream; the
    // streamed text then stays after the build ends.
    await page.getByText('following live').waitFor();
    const log = page.locator('pre.log[data-source="stream"]');
    await log.filter({ hasText: 'byte-compile' }).waitFor();
    await checkPage(page, 'algorithm-builds-live');
    await page.locator('pre.log[data-source="stream"][data-status="succeeded"]').waitFor({ timeout: 120_000 });
    assert.match((await log.textContent()) ?? '', /succeeded/i);
    await page.locator('tbody .status-succeeded').first().waitFor();
    assertNoPageErrors(page);
  });

  test('overview: the README is rendered without running any of its script, with how to call the algorithm', async () => {
    await page.getByRole('link', { name: 'Overview' }).click();
    await page.getByRole('heading', { name: 'Hello from the README' }).waitFor();
    assert.equal(await page.locator('.markdown script, .markdown img, .markdown a[href^="javascript"]').count(), 0);
    assert.match((await page.locator('.markdown').textContent()) ?? '', /<script>window.__pwned/);
    assert.equal(await page.evaluate(() => (window as unknown as { __pwned?: string }).__pwned), undefined);
    await page.getByRole('button', { name: 'Python' }).click();
    assert.match((await page.getByLabel('Python example').textContent()) ?? '', /client\.algo\('alice\/Hello\/latestPrivate'\)/);
    await checkPage(page, 'algorithm-overview');
  });

  test('source: Git URL, clone command and the pushed commit', async () => {
    await page.getByRole('link', { name: 'Source' }).click();
    await page.getByText('greet, slowly').waitFor();
    assert.equal(await page.getByLabel('Git URL').textContent(), `${ui.srv.url}/git/alice/Hello.git`);
    await checkPage(page, 'algorithm-source');
  });

  test('versions: publish with notes, callability and samples; publishing nothing new shows the API message', async () => {
    await page.getByRole('link', { name: 'Versions' }).click();
    await page.getByText('No version published yet').waitFor();
    await page.getByRole('button', { name: 'Publish a version' }).click();
    const dialog = page.getByRole('dialog', { name: 'Publish a version' });
    await dialog.getByLabel('Minor').check();
    await dialog.getByLabel('Public: everyone').check();
    // Notes over the API's limit: said beside the field, and nothing is sent.
    const publishes: string[] = [];
    const onRequest = (r: Request) => {
      if (r.method() === 'POST' && r.url().includes('/versions')) publishes.push(r.url());
    };
    page.on('request', onRequest);
    await dialog.getByLabel('Release notes').fill('x'.repeat(64 * 1024 + 1));
    await dialog.getByRole('button', { name: 'Publish' }).click();
    await dialog.getByText('At most 65,536 characters.').waitFor();
    page.off('request', onRequest);
    assert.deepEqual(publishes, []);
    await dialog.getByLabel('Release notes').fill('First release');
    assert.equal(await dialog.getByText('At most 65,536 characters.').count(), 0);
    await dialog.getByLabel('Sample input').fill('"world"');
    await dialog.getByLabel('Sample output').fill('"hello world"');
    await checkPage(page, 'algorithm-publish-dialog');
    await dialog.getByRole('button', { name: 'Publish' }).click();
    await page.getByRole('status').filter({ hasText: 'Published version 0.1.0' }).waitFor();
    await page.getByRole('cell', { name: 'First release' }).waitFor();
    await checkPage(page, 'algorithm-versions');

    await page.getByRole('button', { name: 'Publish a version' }).click();
    await dialog.getByLabel('Major').check();
    await dialog.getByRole('button', { name: 'Publish' }).click();
    await dialog.getByRole('alert').filter({ hasText: 'is already published as 0.1.0' }).waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    const versions = await ui.api.get('/v1/algorithms/alice/Hello/versions', { key: alice.key });
    assert.deepEqual(
      versions.body.results.map((v: { version_info: { semantic_version: string } }) => v.version_info.semantic_version),
      ['0.1.0'],
    );
    assertNoPageErrors(page);
  });

  test('run: text, JSON and a file as input, stdout for the owner, and an algorithm error with its stack trace', async () => {
    await page.getByRole('link', { name: 'Run' }).click();
    await page.getByLabel('Version').locator('option', { hasText: '0.1.0' }).waitFor({ state: 'attached' });
    // The newest version is chosen once the list has loaded (a render after its options appear).
    for (;;) {
      if ((await page.getByLabel('Version').inputValue()) === '0.1.0') break;
      await new Promise((r) => setTimeout(r, 20));
    }
    await page.getByLabel('Input', { exact: true }).fill('world');
    await page.getByLabel('Show what the algorithm printed (stdout)').check();
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    const result = page.getByTestId('call-result');
    await result.getByLabel('Result').filter({ hasText: 'hello world' }).waitFor();
    const text = (await result.textContent()) ?? '';
    assert.match(text, /Content typetext/);
    assert.match(text, /Duration[\d.]+ ms/);
    assert.match(text, /Start(cold|warm)/);
    assert.match(text, /Request idreq-[0-9a-f-]+/);
    assert.match(text, /called with 'world'/);
    await checkPage(page, 'algorithm-run');

    await page.getByLabel('JSON (application/json)').check();
    await page.getByLabel('Input', { exact: true }).fill('{"a": [1, 2]');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await page.getByText('This is not JSON').waitFor();
    await page.getByLabel('Input', { exact: true }).fill('{"a": [1, 2]}');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await result.getByLabel('Result').filter({ hasText: '"echo"' }).waitFor();
    assert.deepEqual(JSON.parse((await result.getByLabel('Result').textContent()) ?? ''), { echo: { a: [1, 2] } });

    await page.getByLabel('A file (application/octet-stream)').check();
    await page
      .getByLabel('File', { exact: true })
      .setInputFiles({ name: 'in.bin', mimeType: 'application/octet-stream', buffer: Buffer.from('abc') });
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await result.getByText('3 B of binary data').waitFor();
    await result.getByText('Content typebinary').waitFor();

    await page.getByLabel('Text (text/plain)').check();
    await page.getByLabel('Input', { exact: true }).fill('fail');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    const failure = page.getByTestId('algorithm-error');
    await failure.getByText('AlgorithmError: asked to fail').waitFor();
    assert.match((await failure.textContent()) ?? '', /Stack trace[\s\S]*ValueError/);
    await checkPage(page, 'algorithm-run-error');
    assertNoPageErrors(page);
  });

  test('events: without flows the tab says how to get one (the flows themselves: events.test.ts, with Kafka)', async () => {
    await page.getByRole('link', { name: 'Events' }).click();
    await page
      .getByText('No flows yet: subscribe to an SQS or Service Bus queue below, or ask a cluster admin to assign a Kafka topic.')
      .waitFor();
    await page.getByRole('heading', { name: 'Subscribe to a queue' }).waitFor();
    await page.getByText('No deliveries yet.').waitFor();
    await checkPage(page, 'algorithm-events');
  });

  test("dashboard: my and my organizations' algorithms, recent builds, and Explore with search", async () => {
    await page.getByRole('link', { name: 'Dashboard' }).click();
    const mine = page.getByRole('region', { name: 'Your algorithms' });
    await mine.getByRole('link', { name: 'Hello World' }).waitFor();
    await mine.getByRole('heading', { name: 'acme' }).waitFor();
    await mine.getByRole('link', { name: 'Org tool' }).waitFor();
    const builds = page.getByRole('region', { name: 'Recent builds' });
    await builds.getByRole('link', { name: 'alice/Hello' }).first().waitFor();
    await builds.locator('.status-succeeded').first().waitFor();
    const explore = page.getByRole('region', { name: 'Explore public algorithms' });
    await explore.getByRole('link', { name: 'Hello World' }).waitFor();
    await checkPage(page, 'dashboard');
    await explore.getByLabel('Search').fill('nothing-like-this');
    await explore.getByRole('button', { name: 'Search' }).click();
    await explore.getByText('No public algorithms match.').waitFor();
    await explore.getByLabel('Search').fill('greets');
    await explore.getByRole('button', { name: 'Search' }).click();
    await explore.getByRole('link', { name: 'Hello World' }).waitFor();
    await mine.getByRole('link', { name: 'Org tool' }).click();
    await page.getByRole('heading', { name: 'Org tool', level: 1 }).waitFor();
    assertNoPageErrors(page);
  });

  test('settings: edit details and settings, then delete after typing the name', async () => {
    await page.goto('/algorithms/alice/Hello/settings');
    await page.getByLabel('Tagline').fill('The friendliest algorithm');
    await page.getByLabel('Network access').selectOption('full');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const saved = await ui.api.get('/v1/algorithms/alice/Hello', { key: alice.key });
    assert.equal(saved.body.details.tagline, 'The friendliest algorithm');
    assert.equal(saved.body.settings.network_access, 'full');
    await checkPage(page, 'algorithm-settings');

    await page.getByRole('button', { name: 'Delete algorithm' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete algorithm' });
    const confirm = dialog.getByRole('button', { name: 'Delete algorithm' });
    assert.equal(await confirm.isDisabled(), true);
    await dialog.getByLabel('Type Hello to confirm').fill('Hello');
    await confirm.click();
    await page.getByRole('heading', { name: 'Dashboard', level: 1 }).waitFor();
    assert.equal((await ui.api.get('/v1/algorithms/alice/Hello', { key: alice.key })).status, 404);
    assertNoPageErrors(page);
  });
});
