/**
 * Time until the web UI's dashboard is interactive (signed in, the account's algorithms and
 * the Explore list shown), against a blank HTML page served by the same server in the same
 * run, both in a fresh browser context (empty cache) each time, in Debian's Chromium.
 * Run: node --import tsx bench/web-interactive.ts [iterations]
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { launchChromium } from '../packages/server/test/support/browser.js';
import { api, benchUser, median, report, ROOT, startAlgohost, tempDir, timeAsync } from './support.js';

const N = Number(process.argv[2] ?? 15);

// The app as built, plus a blank page beside it: both answered by the same static route.
await promisify(execFile)('bash', [path.join(ROOT, 'scripts/build-web.sh')]);
const webDir = tempDir('bench-web-');
fs.cpSync(path.join(ROOT, 'packages/web/dist'), webDir, { recursive: true });
fs.writeFileSync(
  path.join(webDir, 'blank.html'),
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>blank</title></head><body></body></html>\n',
);

const h = await startAlgohost({ ALGOHOST_WEB_DIR: webDir });
const browser = await launchChromium();
try {
  await benchUser(h, 'bench');
  await api(h.url, h.adminKey, 'PUT', '/v1/users/bench', { password: 'bench-password-123' });
  for (const name of ['One', 'Two', 'Three']) await api(h.url, h.adminKey, 'POST', '/v1/algorithms/bench', { name });
  const { token, expires_at } = await (
    await fetch(`${h.url}/v1/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'bench', password: 'bench-password-123' }),
    })
  ).json();
  const session = JSON.stringify({ kind: 'token', secret: token, expiresAt: expires_at });

  const blank: number[] = [];
  const interactive: number[] = [];
  for (let i = 0; i < N + 2; i++) {
    // Fresh context each time: no cache, as on a first visit; the session is already in the tab.
    const context = await browser.newContext({ baseURL: h.url });
    await context.addInitScript((s) => sessionStorage.setItem('algohost.session', s), session);
    const page = await context.newPage();
    const b = await timeAsync(() => page.goto('/blank.html', { waitUntil: 'load' }));
    const d = await timeAsync(async () => {
      await page.goto('/', { waitUntil: 'commit' });
      await page.getByRole('link', { name: 'Three' }).first().waitFor();
      await page.getByText('No public algorithms match.').waitFor();
    });
    await context.close();
    if (i < 2) continue; // warm-up: the server's first answers and Chromium's first contexts
    blank.push(b);
    interactive.push(d);
  }
  const mb = median(blank);
  report([
    ['iterations', String(N)],
    ['blank page (load event), median', `${mb.toFixed(1)} ms`],
    ['dashboard interactive, median', `${median(interactive).toFixed(1)} ms`],
    ['ratio dashboard / blank', `${(median(interactive) / mb).toFixed(2)}`],
  ]);
} finally {
  await browser.close();
  await h.stop();
  fs.rmSync(webDir, { recursive: true, force: true });
}
