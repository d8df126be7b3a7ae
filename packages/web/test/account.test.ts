/**
 * The account, organizations and the admin panel in a real browser: profile, password,
 * API keys (shown once, copied, revoked), creating an organization and inviting a member who
 * accepts, roles and removal; an admin's users, organizations, environments and cluster health.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page, Request } from 'playwright-core';
import { assertNoPageErrors, checkPage, signIn, signInWithKey, startUi, type Ui } from './support/ui.js';

describe('web UI: account, organizations, admin', () => {
  let ui: Ui;
  let alice: Awaited<ReturnType<Ui['user']>>;
  let bob: Awaited<ReturnType<Ui['user']>>;
  let page: Page;

  before(async () => {
    ui = await startUi();
    alice = await ui.user('alice');
    bob = await ui.user('bob');
    page = await ui.newPage();
    await signIn(page, 'alice', alice.password);
  });
  after(() => ui?.stop());

  test('account: the Profile tab, and the Settings tab with the password (the current one required) and the SCM section', async () => {
    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByLabel('Full name').fill('Alice Liddell');
    await page.getByLabel('Company', { exact: true }).fill('Wonderland');
    await page.getByRole('button', { name: 'Save profile' }).click();
    await page.getByRole('status').filter({ hasText: 'Profile saved.' }).waitFor();
    const profile = await ui.api.get('/v1/users/alice', { key: ui.srv.adminKey });
    assert.equal(profile.body.fullname, 'Alice Liddell');
    assert.equal(profile.body.company_name, 'Wonderland');
    // The page reads the profile from whoami: a reload shows the saved fields and writes nothing.
    const writes: string[] = [];
    const onRequest = (r: Request) => {
      if (r.method() !== 'GET') writes.push(`${r.method()} ${r.url()}`);
    };
    page.on('request', onRequest);
    await page.reload();
    await page.getByLabel('Full name').waitFor();
    assert.equal(await page.getByLabel('Full name').inputValue(), 'Alice Liddell');
    assert.equal(await page.getByLabel('Email').inputValue(), 'alice@example.test');
    assert.equal(await page.getByLabel('Company', { exact: true }).inputValue(), 'Wonderland');
    page.off('request', onRequest);
    assert.deepEqual(writes, []);
    await checkPage(page, 'account');

    // The Settings tab (the specification's "Settings tab, Source Code Management section"):
    // password, API keys and Source Code Management.
    await page.getByRole('navigation', { name: 'Account' }).getByRole('link', { name: 'Settings' }).click();
    await page.waitForURL((u) => u.pathname === '/account/settings');
    await page.getByRole('heading', { name: 'Source Code Management', level: 2 }).waitFor();
    await page.getByText('No external source-control configuration is enabled on this cluster.').waitFor();
    assert.equal(await page.getByLabel('Full name').count(), 0, 'the profile is its own tab');

    const password = page.getByRole('region', { name: 'Password' });
    await page.getByLabel('Current password').fill('wrong');
    await page.getByLabel('New password', { exact: true }).fill('a-new-password-42');
    await page.getByLabel('New password again').fill('a-new-password-4');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByText('The two new passwords differ.').waitFor();
    await page.getByLabel('New password again').fill('a-new-password-42');
    await page.getByRole('button', { name: 'Change password' }).click();
    await password.getByRole('alert').waitFor();
    assert.match((await password.getByRole('alert').textContent()) ?? '', /password/i);
    await page.getByLabel('Current password').fill(alice.password);
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByRole('status').filter({ hasText: 'Password changed.' }).waitFor();
    const token = await ui.api.post('/v1/auth/token', { body: { username: 'alice', password: 'a-new-password-42' } });
    assert.equal(token.status, 200, token.text);
    alice.password = 'a-new-password-42';
    await checkPage(page, 'account-settings');
    assertNoPageErrors(page);
  });

  test('API keys: created with chosen capabilities, shown once with a copy button, listed, revoked', async () => {
    const keys = page.getByRole('region', { name: 'API keys' });
    await keys.getByLabel('Description').fill('read-only laptop');
    for (const label of ['Manage algorithms', 'Call algorithms', 'Write hosted data']) await keys.getByLabel(label).uncheck();
    await keys.getByRole('button', { name: 'Create API key' }).click();
    const shown = keys.getByLabel('New API key');
    await shown.waitFor();
    const secret = ((await shown.textContent()) ?? '').trim();
    assert.match(secret, /^sim.{25}$/);
    await keys.getByRole('button', { name: 'Copy the key' }).click();
    await keys.getByText('Copied', { exact: true }).waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), secret);
    await checkPage(page, 'account-key-created');
    await keys.getByRole('button', { name: 'I have copied it' }).click();
    assert.equal(await shown.count(), 0);
    const row = keys.getByRole('row').filter({ hasText: 'read-only laptop' });
    await row.getByText('read_data').waitFor();
    assert.equal((await ui.api.get('/v1/data/.my', { key: secret })).status, 200);

    await row.getByRole('button', { name: /^Revoke/ }).click();
    const dialog = page.getByRole('dialog', { name: /^Revoke/ });
    await dialog.getByRole('button', { name: /^Revoke/ }).click();
    await row.waitFor({ state: 'detached' });
    assert.equal((await ui.api.get('/v1/data/.my', { key: secret })).status, 401);
    assertNoPageErrors(page);
  });

  test('organizations: create, invite a member who accepts, change the role, remove', async () => {
    await page.getByRole('link', { name: 'Organizations' }).click();
    await page.getByText('You belong to no organization.').waitFor();
    await checkPage(page, 'organizations');
    await page.getByLabel('Organization name').fill('labs');
    await page.getByLabel('Display name').fill('The Labs');
    await page.getByLabel('Contact email').fill('labs@example.test');
    await page.getByRole('button', { name: 'Create organization' }).click();
    await page.getByRole('heading', { name: 'The Labs', level: 1 }).waitFor();
    await page.getByRole('cell', { name: 'alice', exact: true }).waitFor();

    await page.getByLabel('Username').fill('bob');
    await page.getByRole('button', { name: 'Add member' }).click();
    await page.getByRole('status').filter({ hasText: 'Invited bob' }).waitFor();
    await page.getByRole('button', { name: 'Withdraw bob' }).waitFor();
    await checkPage(page, 'organization');
    await page.getByLabel('Username').fill('nobody_here');
    await page.getByRole('button', { name: 'Add member' }).click();
    await page.getByRole('region', { name: 'Add a member' }).getByRole('alert').waitFor();

    // bob, in a browser of his own, accepts.
    const bobPage = await ui.newPage();
    await signIn(bobPage, 'bob', bob.password);
    await bobPage.getByRole('link', { name: 'Organizations' }).click();
    await bobPage.getByText('labs invites you as member').waitFor();
    await bobPage.getByRole('button', { name: 'Accept labs' }).click();
    await bobPage.getByRole('region', { name: 'Yours' }).getByRole('link', { name: 'labs' }).waitFor();
    // The dashboard now offers labs as an owner of algorithms.
    await bobPage.getByRole('link', { name: 'Create', exact: true }).click();
    await bobPage.getByLabel('Owner').locator('option', { hasText: 'labs' }).waitFor({ state: 'attached' });
    assertNoPageErrors(bobPage);
    await bobPage.context().close();

    await page.reload();
    const role = page.getByLabel('Role of bob');
    await role.waitFor();
    await role.selectOption('owner');
    await page.waitForFunction(async () => {
      const token = (JSON.parse(sessionStorage.getItem('algohost.session')!) as { secret: string }).secret;
      const members = (await (await fetch('/v1/organizations/labs/members', { headers: { authorization: `Bearer ${token}` } })).json()) as {
        username: string;
        role: string;
      }[];
      return members.find((m) => m.username === 'bob')?.role === 'owner';
    });
    await page.getByRole('button', { name: 'Remove bob' }).click();
    await page.getByRole('dialog', { name: 'Remove bob' }).getByRole('button', { name: 'Remove bob' }).click();
    await page.getByRole('cell', { name: 'bob', exact: true }).waitFor({ state: 'detached' });
    const members = await ui.api.get('/v1/organizations/labs/members', { key: alice.key });
    assert.deepEqual(
      members.body.map((m: { username: string }) => m.username),
      ['alice'],
    );
    assertNoPageErrors(page);
  });

  test('admin panel: cluster health, users (create with a password, delete), organizations, environments, source-control placeholder, Event Flows', async () => {
    const admin = await ui.newPage();
    await signInWithKey(admin, ui.srv.adminKey);
    await admin.getByRole('link', { name: 'Admin' }).click();
    const health = admin.getByTestId('cluster-status');
    await health.waitFor();
    const text = (await health.textContent()) ?? '';
    assert.match(text, /Databasesqlite/);
    assert.match(text, /Blob storedisk/);
    assert.match(text, /Builds queued\d+Builds running\d+Warm runners\d+Calls per minute\d+/);
    await checkPage(admin, 'admin-health');

    await admin.getByRole('link', { name: 'Users' }).click();
    await admin.getByRole('cell', { name: 'bob', exact: true }).waitFor();
    await admin.getByLabel('Username').fill('carol');
    await admin.getByLabel('Email').fill('carol@example.test');
    await admin.getByLabel('Password').fill('carol-password-123');
    await admin.getByRole('button', { name: 'Create user' }).click();
    await admin.getByRole('status').filter({ hasText: 'Created carol.' }).waitFor();
    await admin.getByRole('cell', { name: 'carol', exact: true }).waitFor();
    assert.equal((await ui.api.post('/v1/auth/token', { body: { username: 'carol', password: 'carol-password-123' } })).status, 200);
    await admin.getByLabel('Username').fill('carol');
    await admin.getByRole('button', { name: 'Create user' }).click();
    await admin.getByRole('region', { name: 'Create a user' }).getByRole('alert').waitFor();
    await checkPage(admin, 'admin-users');
    await admin.getByRole('button', { name: 'Delete carol' }).click();
    const dialog = admin.getByRole('dialog', { name: 'Delete carol' });
    await dialog.getByLabel('Type carol to confirm').fill('carol');
    await dialog.getByRole('button', { name: 'Delete carol' }).click();
    await admin.getByRole('cell', { name: 'carol', exact: true }).waitFor({ state: 'detached' });
    assert.equal((await ui.api.get('/v1/users/carol', { key: ui.srv.adminKey })).status, 404);

    await admin.getByRole('navigation', { name: 'Admin' }).getByRole('link', { name: 'Organizations' }).click();
    await admin.getByRole('cell', { name: 'The Labs' }).waitFor();
    await checkPage(admin, 'admin-organizations');
    await admin.getByRole('link', { name: 'Environments' }).click();
    await admin
      .getByRole('cell', { name: /Python 3\.11/ })
      .first()
      .waitFor();
    assert.ok((await admin.getByRole('cell', { name: 'GPU', exact: true }).count()) > 0);
    await checkPage(admin, 'admin-environments');
    await admin.getByRole('link', { name: 'Source control' }).click();
    // Configurations are tested with a real Gitea in scm.test.ts: here the form and the internal SCM.
    await admin.getByRole('heading', { name: 'Add a source-control provider' }).waitFor();
    await admin.getByRole('heading', { name: "algohost's own Git server" }).waitFor();
    await admin.getByRole('link', { name: 'Event Flows' }).click();
    // Without Kafka (tested in events.test.ts): the connection form and the empty list.
    await admin.getByRole('heading', { name: 'Connect a Kafka cluster' }).waitFor();
    await admin.getByText('No Kafka cluster is connected.').waitFor();
    await checkPage(admin, 'admin-event-flows');
    assertNoPageErrors(admin);
  });
});
