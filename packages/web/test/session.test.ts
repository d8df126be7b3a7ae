/**
 * Signing in and out in a real browser: a password session that survives a reload and ends on
 * sign-out or expiry, an API key that stops working once revoked, and an admin panel that a
 * non-admin neither sees nor reaches (and the API refuses).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { assertNoPageErrors, checkPage, PHONE, signIn, signInWithKey, startUi, type Ui } from './support/ui.js';

/** Presses Tab until the focused control's label, name or text matches; fails if it never does. */
async function tabTo(page: Page, name: RegExp): Promise<void> {
  for (let i = 0; i < 60; i++) {
    await page.keyboard.press('Tab');
    const label = await page.evaluate(() => {
      const el = document.activeElement as HTMLInputElement | null;
      return (el?.getAttribute('aria-label') ?? el?.labels?.[0]?.textContent ?? el?.textContent ?? '').trim();
    });
    if (name.test(label)) return;
  }
  throw new Error(`nothing matching ${name} is reachable with Tab`);
}

describe('web UI: sessions', () => {
  let ui: Ui;
  let alice: Awaited<ReturnType<Ui['user']>>;

  before(async () => {
    ui = await startUi();
    alice = await ui.user('alice');
  });
  after(() => ui?.stop());

  test('a wrong password is refused with the API message; the right one signs in, survives a reload, and sign-out ends it', async () => {
    const page = await ui.newPage();
    await page.goto('/');
    await checkPage(page, 'sign-in');
    await page.getByLabel('Username').fill('alice');
    await page.getByLabel('Password', { exact: true }).fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: /password/i })
      .waitFor();

    await signIn(page, 'alice', alice.password);
    await page.reload();
    await page.getByRole('heading', { name: 'Dashboard', level: 1 }).waitFor();
    // The token lives in this tab's sessionStorage, never in a cookie.
    assert.deepEqual(await page.context().cookies(), []);
    const stored = await page.evaluate(() => sessionStorage.getItem('algohost.session'));
    assert.match(stored ?? '', /"kind":"token"/);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to algohost' }).waitFor();
    assert.equal(await page.evaluate(() => sessionStorage.getItem('algohost.session')), null);
    await page.reload();
    await page.getByRole('heading', { name: 'Sign in to algohost' }).waitFor();
    assertNoPageErrors(page);
  });

  test('an expired session goes back to sign-in with a message', async () => {
    const page = await ui.newPage();
    await signIn(page, 'alice', alice.password);
    await page.evaluate(() => {
      const s = JSON.parse(sessionStorage.getItem('algohost.session')!) as { expiresAt: string };
      s.expiresAt = new Date(Date.now() - 1000).toISOString();
      sessionStorage.setItem('algohost.session', JSON.stringify(s));
    });
    await page.reload();
    await page.getByRole('status').filter({ hasText: 'Your session has expired' }).waitFor();
    assert.equal(await page.evaluate(() => sessionStorage.getItem('algohost.session')), null);
  });

  test('an API key signs in; once revoked, the next request sends the page back to sign-in', async () => {
    const key = await ui.api.post('/v1/users/alice/keys', { key: alice.key, body: { description: 'browser' } });
    assert.equal(key.status, 200, key.text);
    const page = await ui.newPage();
    await signInWithKey(page, key.body.key);
    await page.getByText('alice · API key').waitFor();
    assert.equal((await ui.api.delete(`/v1/users/alice/keys/${key.body.id}`, { key: alice.key })).status, 204);
    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByRole('status').filter({ hasText: 'refused the API key' }).waitFor();
    await page.getByRole('heading', { name: 'Sign in to algohost' }).waitFor();
    const again = await ui.api.get('/v1/users/alice', { key: key.body.key });
    assert.equal(again.status, 401);
  });

  test('a non-admin sees no admin panel, reaches none by address, and the API refuses the admin status', async () => {
    const page = await ui.newPage();
    await signIn(page, 'alice', alice.password);
    assert.equal(await page.getByRole('link', { name: 'Admin' }).count(), 0);
    await page.goto('/admin');
    await page.getByRole('heading', { name: 'Page not found' }).waitFor();
    const status = await page.evaluate(async () => {
      const token = (JSON.parse(sessionStorage.getItem('algohost.session')!) as { secret: string }).secret;
      const res = await fetch('/v1/admin/status', { headers: { authorization: `Bearer ${token}` } });
      return res.status;
    });
    assert.equal(status, 403);
    assertNoPageErrors(page);
  });

  test('keyboard only, on a phone-sized screen: sign in, open the menu, reach a page, sign out', async () => {
    const page = await ui.newPage();
    await page.setViewportSize(PHONE);
    await page.goto('/');
    await tabTo(page, /^Username$/);
    await page.keyboard.type('alice');
    await tabTo(page, /^Password$/);
    await page.keyboard.type(alice.password);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Dashboard', level: 1 }).waitFor();
    // The navigation folds behind a menu button at this width.
    assert.equal(await page.getByRole('link', { name: 'Account' }).isVisible(), false);
    await tabTo(page, /^Menu$/);
    await page.keyboard.press('Enter');
    await tabTo(page, /^Account$/);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Account', level: 1 }).waitFor();
    await tabTo(page, /^Menu$/);
    await page.keyboard.press('Enter');
    await checkPage(page, 'menu-open');
    await tabTo(page, /^Sign out$/);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Sign in to algohost' }).waitFor();
    assertNoPageErrors(page);
  });
});
