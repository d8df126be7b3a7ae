/**
 * Issue 36, items 14 and 16 in a real browser: alice opens mallory's published algorithm, whose
 * sample input tries to break out of every example's quoting. What the Overview shows and what
 * its copy button puts on the clipboard are exactly the quoted examples (call-snippets.test.ts
 * runs those through bash, python3 and node); the Overview and the Run tab of a
 * `pipeline_enabled` algorithm say that calling it hands over the caller's hosted data, and how
 * to withhold it.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { createAndBuild } from '../../server/test/support/algorithms.js';
import { FIXTURES_DIR } from '../../server/test/support/fixtures-algorithms.js';
import { callSnippets, SNIPPET_LANGUAGES } from '../src/call-snippets.js';
import { assertNoPageErrors, checkPage, signIn, startUi, type Ui } from './support/ui.js';

const HOSTILE_SAMPLE = `1); __import__("os").system("touch PWNED") #
'; touch PWNED; echo ' $(touch PWNED) \`touch PWNED\` """ ''' \\ \u2028`;

describe('web UI: the Overview examples of a hostile publisher', () => {
  let ui: Ui;
  let alice: Awaited<ReturnType<Ui['user']>>;
  let page: Page;

  before(async () => {
    ui = await startUi();
    alice = await ui.user('alice');
    const mallory = await ui.user('mallory');
    await createAndBuild(ui.srv.url, ui.api, mallory, 'mallory', 'Greeter', path.join(FIXTURES_DIR, 'python', 'hello'), {
      environment: 'python311',
      settings: { pipeline_enabled: true, algorithm_callability: 'public' },
    });
    const published = await ui.api.post('/v1/algorithms/mallory/Greeter/versions', {
      key: mallory.key,
      body: { version_info: { version_type: 'major', sample_input: HOSTILE_SAMPLE }, settings: { algorithm_callability: 'public' } },
    });
    assert.equal(published.status, 200, published.text);
    page = await ui.newPage();
    await signIn(page, 'alice', alice.password);
  });
  after(async () => {
    await ui?.stop();
  });

  test('every example shown and copied is the quoted one; the hint says how to withhold hosted data', async () => {
    await page.goto('/algorithms/mallory/Greeter');
    await page.getByRole('heading', { name: 'How to call it' }).waitFor();
    const expected = callSnippets(ui.srv.url, 'mallory/Greeter/1.0.0', HOSTILE_SAMPLE);
    for (const lang of SNIPPET_LANGUAGES) {
      await page.getByRole('button', { name: lang, exact: true }).click();
      const shown = page.getByLabel(`${lang} example`);
      assert.equal(await shown.textContent(), expected[lang], lang);
      await page.getByRole('button', { name: 'Copy the example' }).click();
      await page.getByText('Copied', { exact: true }).waitFor();
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), expected[lang], `${lang} as copied`);
    }
    // The Python example as shown: the sample is one string literal, never code.
    await page.getByRole('button', { name: 'Python', exact: true }).click();
    assert.match((await page.getByLabel('Python example').textContent()) ?? '', /\.pipe\('1\); __import__\("os"\)/);
    assert.match(
      (await page.getByRole('region', { name: 'How to call it' }).textContent()) ?? '',
      /read_data.*write_data: a key without them withholds your data/,
    );
    await checkPage(page, 'algorithm-overview-hostile-sample');
    assertNoPageErrors(page);
  });

  test('the Run tab of a pipeline_enabled algorithm says that a call hands over the caller’s hosted data', async () => {
    await page.getByRole('link', { name: 'Run' }).click();
    const note = page.getByText('it can read and write all of your hosted data');
    await note.waitFor();
    assert.match((await note.textContent()) ?? '', /To withhold your data, call it with an API key holding only call_algorithms/);
    await checkPage(page, 'algorithm-run-pipeline-note');
    assertNoPageErrors(page);
  });
});
