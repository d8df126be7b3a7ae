/**
 * External source control in a real browser against a real node and the real Gitea that
 * scripts/with-services.sh starts (ALGOHOST_TEST_SERVICES=gitea; npm test does): the admin adds
 * the Gitea configuration with an OAuth application registered in Gitea (its secret write-only);
 * a user sees the wizard explain an unauthorized configuration, authorizes it under Account
 * (the confirmation naming the service, Gitea's own sign-in and consent pages, back to the
 * account page with the outcome and the Gitea username), creates an algorithm whose repository
 * the wizard creates at Gitea, follows the Source tab's link to it, syncs it, and revokes.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { pushAtForge, type Forge, type ForgeUser } from '../../server/test/support/forge.js';
import { GITEA_URL, giteaForge, giteaSkipReason } from '../../server/test/support/gitea-forge.js';
import { assertNoPageErrors, checkPage, signIn, signInWithKey, startUi, type Ui } from './support/ui.js';

const tag = crypto.randomBytes(3).toString('hex');

describe('web UI: external source control (real Gitea)', { skip: giteaSkipReason }, () => {
  let ui: Ui;
  let alice: Awaited<ReturnType<Ui['user']>>;
  let admin: Page;
  let page: Page;
  let ada: ForgeUser;
  let app: { oauth: { client_id: string; client_secret: string } };
  const host = GITEA_URL ? new URL(GITEA_URL).host : '';
  // A configuration is named by its name, which is its host until an admin renames it.
  const label = host;
  let forge: Forge;

  before(async () => {
    forge = giteaForge();
    ui = await startUi();
    alice = await ui.user('alice');
    ada = await forge.createUser(`ada_${tag}`);
    // The OAuth application is registered in Gitea as an admin would, through its API.
    app = (await forge.registerOAuthApp(`${ui.srv.url}/v1/scms/oauth/callback`)) as typeof app;
    admin = await ui.newPage();
    await signInWithKey(admin, ui.srv.adminKey);
    page = await ui.newPage();
    await signIn(page, 'alice', alice.password);
  });
  after(() => ui?.stop());

  test('admin: adds the Gitea configuration; the client secret is write-only', async () => {
    await admin.goto('/admin/scm');
    await admin.getByRole('heading', { name: 'Add a source-control provider' }).waitFor();
    // The callback to register at the provider, on the server's public URL.
    await admin.getByText(`${ui.srv.url}/v1/scms/oauth/callback`, { exact: true }).waitFor();
    await admin.getByLabel('Provider', { exact: true }).selectOption('gitea');
    await admin.getByLabel('Web address').fill(GITEA_URL!);
    await admin.getByLabel('OAuth client id').fill(app.oauth.client_id);
    await admin.getByLabel('OAuth client secret').fill(app.oauth.client_secret);
    await admin.getByRole('button', { name: 'Add provider' }).click();
    await admin.getByText(`${label} added.`).waitFor();
    const row = admin.getByTestId('scm-config').filter({ has: admin.getByRole('heading', { name: label }) });
    await row.getByText('enabled', { exact: true }).waitFor();
    assert.equal(await admin.getByLabel('OAuth client secret').inputValue(), '', 'the form forgets the secret');
    assert.ok(!(await admin.content()).includes(app.oauth.client_secret), 'the secret is nowhere in the page');

    // Disabled, it is offered to no user; enabled again for the rest of the test.
    await row.getByRole('button', { name: `Disable ${host}` }).click();
    await row.getByText('disabled', { exact: true }).waitFor();
    await row.getByRole('button', { name: `Enable ${host}` }).click();
    await row.getByText('enabled', { exact: true }).waitFor();
    await checkPage(admin, 'admin-scm');
    assertNoPageErrors(admin);
  });

  test('the wizard explains an unauthorized configuration and links to Account', async () => {
    await page.goto('/create');
    await page.getByRole('radio', { name: `A repository at ${label}` }).check();
    const why = page.getByTestId('scm-unauthorized');
    await why.waitFor();
    assert.match(
      await why.innerText(),
      /Token status unauthorized: algohost is not authorized at .* check under Account, Settings tab, Source Code Management that the one you authorized is/s,
    );
    assert.equal(await page.getByLabel('Repository owner').count(), 0);
    // Creating anyway: the wizard asks the provider again, explains, and creates nothing.
    await page.getByLabel('Name', { exact: true }).fill('TooEarly');
    await page.getByRole('button', { name: 'Create algorithm' }).click();
    const refusal = page.locator('form > [role="alert"]');
    await refusal.waitFor();
    assert.match(await refusal.innerText(), new RegExp(`^Nothing was created: ${host} says algohost is not authorized for your account`));
    assert.equal((await ui.api.get('/v1/algorithms/alice/TooEarly', { key: alice.key })).status, 404);
    await checkPage(page, 'create-scm-unauthorized');
    await why.getByRole('link', { name: 'Authorize it under Account, Settings' }).click();
    await page.getByRole('heading', { name: 'Source Code Management' }).waitFor();
    assert.equal(new URL(page.url()).pathname, '/account/settings');
    assert.equal(
      await page.getByRole('navigation', { name: 'Account' }).getByRole('link', { name: 'Settings' }).getAttribute('aria-current'),
      'page',
    );
    assertNoPageErrors(page);
  });

  test('account: authorize after confirming, through Gitea sign-in and consent, back with the Gitea username', async () => {
    await page.goto('/account/settings');
    const row = page.getByTestId('scm-config').filter({ has: page.getByRole('heading', { name: label }) });
    await row.getByText('unauthorized', { exact: true }).waitFor();
    await row.getByRole('button', { name: `Authorize ${label}` }).click();
    const dialog = page.getByRole('dialog', { name: `Authorize ${label}?` });
    await dialog.getByText(`let algohost act as your account at the external service ${label}`).waitFor();
    // Cancelling goes nowhere.
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    assert.equal(new URL(page.url()).pathname, '/account/settings');

    await row.getByRole('button', { name: `Authorize ${label}` }).click();
    await checkPage(page, 'account-scm-confirm');
    await dialog.getByRole('button', { name: `Continue to ${host}` }).click();
    // Gitea's own pages: sign in, then grant.
    await page.waitForURL((u) => u.origin === GITEA_URL);
    await page.locator('input[name="user_name"]').fill(ada.name);
    await page.locator('input[name="password"]').fill(ada.password);
    await page.locator('form.ui.form button.primary, form button[type="submit"]').first().click();
    await page.locator('#authorize-app, button[name="granted"][value="true"]').first().click();
    await page.waitForURL((u) => u.origin === ui.srv.url && u.pathname === '/account/settings');
    const query = new URL(page.url()).searchParams;
    assert.equal(query.get('scm_status'), 'authorized');

    await page.getByTestId('scm-outcome').getByText(`${label} is authorized.`).waitFor();
    await row.getByText(`as ${ada.name}`).waitFor();
    await row.getByText('authorized', { exact: true }).waitFor();
    await checkPage(page, 'account-scm-authorized');
    await page.getByRole('button', { name: 'Dismiss' }).click();
    await page.getByTestId('scm-outcome').waitFor({ state: 'detached' });
    assert.equal(new URL(page.url()).search, '');
    assertNoPageErrors(page);
  });

  test('the wizard creates the algorithm with its repository at Gitea; the Source tab links there and syncs', async () => {
    await page.goto('/create');
    await page.getByLabel('Name', { exact: true }).fill('Hosted');
    await page.getByLabel('Label').fill('Hosted at Gitea');
    await page.getByRole('radio', { name: `A repository at ${label}` }).check();
    const owner = page.getByLabel('Repository owner');
    await owner.waitFor();
    assert.equal(await owner.inputValue(), ada.name);
    // A name the provider cannot take is said at once.
    await page.getByLabel('Repository name').fill('bad name');
    await page.getByRole('button', { name: 'Create algorithm' }).click();
    await page.getByText('Letters, digits, "_", "." and "-" only').waitFor();
    await page.getByLabel('Repository name').fill(`hosted-${tag}`);
    await page.getByLabel('Initial commit message').fill('Start from the template');
    await checkPage(page, 'create-scm');
    await page.getByRole('button', { name: 'Create algorithm' }).click();
    await page.getByRole('heading', { name: 'alice/Hosted is ready' }).waitFor();
    const repoLink = page.getByRole('link', { name: `Open ${ada.name}/hosted-${tag} at ${host}` });
    assert.equal(await repoLink.getAttribute('href'), `${GITEA_URL}/${ada.name}/hosted-${tag}`);
    await checkPage(page, 'create-scm-done');

    // The same repository name again: the API's refusal (it exists at Gitea) beside the button.
    await page.goto('/create');
    await page.getByLabel('Name', { exact: true }).fill('HostedAgain');
    await page.getByRole('radio', { name: `A repository at ${label}` }).check();
    await page.getByLabel('Repository owner').waitFor();
    await page.getByLabel('Repository name').fill(`hosted-${tag}`);
    await page.getByRole('button', { name: 'Create algorithm' }).click();
    const refusal = page.locator('form > [role="alert"]');
    await refusal.waitFor();
    assert.match(await refusal.innerText(), /exists/i);

    await page.goto('/algorithms/alice/Hosted/source');
    await page.getByRole('heading', { name: `Repository at ${label}` }).waitFor();
    const link = page.getByRole('link', { name: `${ada.name}/hosted-${tag} at ${host}` });
    assert.equal(await link.getAttribute('href'), `${GITEA_URL}/${ada.name}/hosted-${tag}`);
    await page.getByTestId('scm-connection').getByText('active', { exact: false }).first().waitFor();
    await checkPage(page, 'algorithm-source-scm');
    assertNoPageErrors(page);
  });

  test('Sync now brings in a commit pushed while webhooks were off: Recent commits shows it, the build says sync', async () => {
    const repo = `hosted-${tag}`;
    await forge.disableWebhooks(ada, ada.name, repo);
    const sha = await pushAtForge(forge, ada, ada.name, repo, { 'NOTES.md': 'notes\n' }, `Notes written at ${host}`);
    await page.goto('/algorithms/alice/Hosted/source');
    const commits = page.getByRole('region', { name: 'Recent commits' });
    await commits.getByText('Start from the template').waitFor();
    assert.equal(await commits.getByText(`Notes written at ${host}`).count(), 0, 'not here before the sync');

    await page.getByRole('button', { name: 'Sync now' }).click();
    const synced = page.getByRole('status').filter({ hasText: 'Sync:' });
    const failed = page.locator('.sync [role="alert"]');
    await synced.or(failed).waitFor();
    assert.equal(await failed.count(), 0, `the sync failed: ${await failed.allInnerTexts()}`);
    assert.match(await synced.innerText(), new RegExp(`^Sync: build .* queued for ${sha.slice(0, 12)}`));
    // The list reloads after the sync, without reloading the page.
    await commits.getByText(`Notes written at ${host}`).waitFor();
    await commits.getByText(sha.slice(0, 8)).waitFor();
    await checkPage(page, 'algorithm-source-synced');

    await page.getByRole('navigation', { name: 'Algorithm' }).getByRole('link', { name: 'Builds' }).click();
    const row = page.getByRole('row').filter({ hasText: sha.slice(0, 8) });
    await row.waitFor();
    assert.equal(await row.getByRole('cell').nth(2).innerText(), 'sync');
    await checkPage(page, 'algorithm-builds-sync');
    assertNoPageErrors(page);
  });

  test('a configuration with a name shows as its name', async () => {
    const configs = await ui.api.get('/v1/scms', { key: alice.key });
    const gitea = configs.body.results.find((c: { name: string }) => c.name === host);
    const renamed = await ui.api.patch(`/v1/admin/scms/${gitea.id}`, { key: ui.srv.adminKey, body: { name: 'Team Gitea' } });
    assert.equal(renamed.status, 200, renamed.text);
    try {
      await page.goto('/algorithms/alice/Hosted/source');
      await page.getByRole('heading', { name: 'Repository at Team Gitea' }).waitFor();
      await page.getByRole('link', { name: `${ada.name}/hosted-${tag} at Team Gitea` }).waitFor();
      await page.goto('/account/settings');
      const row = page.getByTestId('scm-config').filter({ has: page.getByRole('heading', { name: 'Team Gitea', exact: true }) });
      await row.getByText(/^Gitea at /).waitFor();
      assert.equal(await page.getByText('Gitea at Team Gitea').count(), 0);
      await checkPage(page, 'account-scm-named');
      assertNoPageErrors(page);
    } finally {
      await ui.api.patch(`/v1/admin/scms/${gitea.id}`, { key: ui.srv.adminKey, body: { name: host } });
    }
  });

  test('account: revoke after confirming; the provider is asked again and says unauthorized', async () => {
    await page.goto('/account/settings');
    const row = page.getByTestId('scm-config').filter({ has: page.getByRole('heading', { name: label }) });
    await row.getByText(`as ${ada.name}`).waitFor();
    await row.getByRole('button', { name: `Revoke ${label}` }).click();
    const dialog = page.getByRole('dialog', { name: `Revoke ${label}` });
    await dialog.getByRole('button', { name: `Revoke ${label}` }).click();
    await row.getByText('unauthorized', { exact: true }).waitFor();
    assert.equal(await row.getByRole('button', { name: `Revoke ${label}` }).count(), 0);
    await checkPage(page, 'account-scm-revoked');
    assertNoPageErrors(page);
  });

  test('admin: a configuration that backs an algorithm is not deleted (the API says why); an unused one is', async () => {
    await admin.goto('/admin/scm');
    const gitea = admin.getByTestId('scm-config').filter({ has: admin.getByRole('heading', { name: label }) });
    await gitea.getByRole('button', { name: `Delete ${host}` }).click();
    let dialog = admin.getByRole('dialog', { name: `Delete ${host}` });
    await dialog.getByLabel(`Type ${host} to confirm`).fill(host);
    await dialog.getByRole('button', { name: `Delete ${host}` }).click();
    await dialog.getByRole('alert').waitFor();
    assert.match(await dialog.getByRole('alert').innerText(), /algorithm/i);
    await dialog.getByRole('button', { name: 'Cancel' }).click();

    await admin.getByLabel('Provider', { exact: true }).selectOption('github');
    await admin.getByLabel('Web address').fill('https://github.example.test');
    await admin.getByLabel('OAuth client id').fill('unused-client');
    await admin.getByLabel('OAuth client secret').fill('unused-secret');
    await admin.getByRole('button', { name: 'Add provider' }).click();
    const unused = admin.getByTestId('scm-config').filter({ has: admin.getByRole('heading', { name: 'github.example.test' }) });
    await unused.getByRole('button', { name: 'Delete github.example.test' }).click();
    dialog = admin.getByRole('dialog', { name: 'Delete github.example.test' });
    await dialog.getByLabel('Type github.example.test to confirm').fill('github.example.test');
    await dialog.getByRole('button', { name: 'Delete github.example.test' }).click();
    await unused.waitFor({ state: 'detached' });
    await gitea.waitFor();
    assertNoPageErrors(admin);
  });
});
