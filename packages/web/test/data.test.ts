/**
 * Hosted data in a real browser: collections of me and my organizations, creating one with an
 * ACL, folders, uploads (file picker and drag and drop) with their progress, downloads,
 * deleting, and changing the ACL.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { createOrganization } from '../../server/test/support/fixtures.js';
import { assertNoPageErrors, checkPage, signIn, startUi, type Ui } from './support/ui.js';

describe('web UI: data', () => {
  let ui: Ui;
  let alice: Awaited<ReturnType<Ui['user']>>;
  let page: Page;

  before(async () => {
    ui = await startUi();
    alice = await ui.user('alice');
    await createOrganization(ui.api, alice.key, 'acme');
    assert.equal((await ui.api.post('/v1/data/acme', { key: alice.key, body: { name: 'shared' } })).status, 200);
    page = await ui.newPage();
    await signIn(page, 'alice', alice.password);
  });
  after(() => ui?.stop());

  test('collections of me and my organizations; a new one with its ACL', async () => {
    await page.getByRole('link', { name: 'Data' }).click();
    await page.getByRole('region', { name: 'Collections of acme' }).getByRole('link', { name: 'shared' }).waitFor();
    const mine = page.getByRole('region', { name: 'Collections of alice' });
    await mine.getByText('No collections yet.').waitFor();
    await mine.getByLabel('New collection of alice').fill('bad name');
    await mine.getByRole('button', { name: 'Create collection' }).click();
    await mine.getByText('Only letters, digits and underscores').waitFor();
    await mine.getByLabel('New collection of alice').fill('models');
    await mine.getByLabel('Who may read it').selectOption('private');
    await mine.getByRole('button', { name: 'Create collection' }).click();
    await mine.getByRole('link', { name: 'models' }).waitFor();
    await checkPage(page, 'data');
    const acl = await ui.api.get('/v1/data/alice/models?acl=true', { key: alice.key });
    assert.deepEqual(acl.body.acl, { read: [] });
  });

  test('upload with progress (picker and drag and drop), folders, download, ACL change, delete', async () => {
    await page.getByRole('link', { name: 'models' }).click();
    await page.getByRole('heading', { name: 'data://alice/models' }).waitFor();
    // Every upload shows a progress bar from its first byte: record that one appeared.
    await page.evaluate(() => {
      new MutationObserver(() => {
        if (document.querySelector('progress[aria-label^="Uploading"]')) (window as unknown as { sawProgress: boolean }).sawProgress = true;
      }).observe(document.body, { subtree: true, childList: true });
    });
    const big = Buffer.alloc(3 * 1024 * 1024, 7);
    await page.getByLabel('Choose files').setInputFiles([
      { name: 'weights.bin', mimeType: 'application/octet-stream', buffer: big },
      { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('hello notes') },
    ]);
    const uploads = page.getByRole('list', { name: 'Uploads' });
    await uploads.getByText('uploaded').nth(1).waitFor();
    assert.equal(await page.evaluate(() => (window as unknown as { sawProgress?: boolean }).sawProgress), true);
    await page.getByRole('cell', { name: 'weights.bin', exact: true }).waitFor();
    await page.getByRole('cell', { name: '3.0 MiB', exact: true }).waitFor();

    const dataTransfer = await page.evaluateHandle(() => {
      const dt = new DataTransfer();
      dt.items.add(new File(['dropped in'], 'dropped.txt', { type: 'text/plain' }));
      return dt;
    });
    await page.dispatchEvent('.dropzone', 'drop', { dataTransfer });
    await page.getByRole('cell', { name: 'dropped.txt', exact: true }).waitFor();
    const dropped = await ui.api.get('/v1/data/alice/models/dropped.txt', { key: alice.key });
    assert.equal(dropped.text, 'dropped in');
    await checkPage(page, 'data-collection');

    const downloading = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download notes.txt' }).click();
    const download = await downloading;
    assert.equal(download.suggestedFilename(), 'notes.txt');
    assert.equal(await fs.promises.readFile((await download.path())!, 'utf8'), 'hello notes');

    await page.getByLabel('Folder name').fill('sub');
    await page.getByRole('button', { name: 'Create folder' }).click();
    await page.getByRole('link', { name: 'sub/' }).click();
    await page.getByRole('heading', { name: 'data://alice/models/sub' }).waitFor();
    await page.getByText('Empty.').waitFor();
    await page.getByRole('navigation', { name: 'Folder path' }).getByRole('link', { name: 'models' }).click();

    await page.getByLabel('Who may read this collection').selectOption('public');
    await page.getByRole('button', { name: 'Change access' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    assert.deepEqual((await ui.api.get('/v1/data/alice/models?acl=true', { key: alice.key })).body.acl, { read: ['user://*'] });

    await page.getByRole('button', { name: 'Delete notes.txt' }).click();
    await page.getByRole('cell', { name: 'notes.txt', exact: true }).waitFor({ state: 'detached' });
    assert.equal((await ui.api.get('/v1/data/alice/models/notes.txt', { key: alice.key })).status, 404);

    await page.getByRole('button', { name: 'Delete collection' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete collection' });
    await dialog.getByLabel('Type models to confirm').fill('models');
    await dialog.getByRole('button', { name: 'Delete collection' }).click();
    // Exactly "Data": the collection's own heading (data://alice/models) also contains the word.
    await page.getByRole('heading', { name: 'Data', exact: true, level: 1 }).waitFor();
    assert.equal((await ui.api.get('/v1/data/alice/models', { key: alice.key })).status, 404);
    assertNoPageErrors(page);
  });

  test('an error from the API is shown next to what caused it', async () => {
    await page.goto('/data/alice');
    const mine = page.getByRole('region', { name: 'Collections of alice' });
    await mine.getByLabel('New collection of alice').fill('twice');
    await mine.getByRole('button', { name: 'Create collection' }).click();
    await mine.getByRole('link', { name: 'twice' }).waitFor();
    await mine.getByLabel('New collection of alice').fill('twice');
    await mine.getByRole('button', { name: 'Create collection' }).click();
    await mine.getByRole('alert').waitFor();
    assert.match((await mine.getByRole('alert').textContent()) ?? '', /exists/);
  });
});
