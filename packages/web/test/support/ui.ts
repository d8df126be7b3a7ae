/**
 * What the browser tests share: the built app (scripts/build-web.sh, rebuilt only when its
 * sources changed), a real algohost node serving it (ALGOHOST_WEB_DIR), Debian's Chromium
 * driven by playwright-core (it never downloads a browser), axe-core run inside each page, and
 * screenshots of each page at desktop and phone widths in test-output/screenshots/.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import axe from 'axe-core';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../../../server/test/support/browser.js';
import { createUser, type TestUser } from '../../../server/test/support/fixtures.js';
import { client, type Client } from '../../../server/test/support/http.js';
import { startTestServer, type TestServer } from '../../../server/test/support/server.js';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
export const WEB_DIST = path.join(ROOT, 'packages', 'web', 'dist');
const SCREENSHOTS = path.join(ROOT, 'test-output', 'screenshots');
/** axe-core's own bundle, to evaluate inside each page. */
const AXE_SOURCE = axe.source;

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

let built: Promise<unknown> | undefined;
function buildWeb(): Promise<unknown> {
  built ??= promisify(execFile)('bash', [path.join(ROOT, 'scripts', 'build-web.sh')], { cwd: ROOT });
  return built;
}

export interface Ui {
  srv: TestServer;
  api: Client;
  browser: Browser;
  /** A fresh browser context (its own storage) and page; page errors fail `assertNoPageErrors`. */
  newPage(): Promise<Page>;
  /** A user with a password and a full API key. */
  user(name: string, extra?: Record<string, unknown>): Promise<TestUser & { password: string }>;
  stop(): Promise<void>;
}

const pageErrors = new WeakMap<Page, string[]>();

export async function startUi(opts: { env?: Record<string, string> } = {}): Promise<Ui> {
  await buildWeb();
  const srv = await startTestServer({ env: { ALGOHOST_WEB_DIR: WEB_DIST, ...opts.env } });
  const browser = await launchChromium();
  const api = client(srv.url);
  return {
    srv,
    api,
    browser,
    async newPage() {
      const context = await browser.newContext({ viewport: DESKTOP, baseURL: srv.url, permissions: ['clipboard-read', 'clipboard-write'] });
      const page = await context.newPage();
      const errors: string[] = [];
      pageErrors.set(page, errors);
      page.on('pageerror', (err) => errors.push(`page error: ${err.message}`));
      page.on('console', (msg) => {
        // A refused request is logged by the browser as a console error; what counts here is
        // script errors and anything the Content-Security-Policy blocked.
        if (msg.type() === 'error' && !/Failed to load resource/.test(msg.text())) errors.push(`console: ${msg.text()}`);
      });
      return page;
    },
    async user(name, extra = {}) {
      const password = `pw-${name}-0123456789`;
      return { ...(await createUser(api, srv.adminKey, name, { password, ...extra })), password };
    },
    async stop() {
      await browser.close();
      await srv.stop();
    },
  };
}

export function assertNoPageErrors(page: Page): void {
  assert.deepEqual(pageErrors.get(page) ?? [], []);
}

export async function signIn(page: Page, username: string, password: string): Promise<void> {
  await page.goto('/');
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Dashboard', level: 1 }).waitFor();
}

export async function signInWithKey(page: Page, key: string): Promise<void> {
  await page.goto('/');
  await page.getByRole('button', { name: 'API key' }).click();
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Dashboard', level: 1 }).waitFor();
}

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** axe-core inside the page: no serious or critical violation. */
export async function assertAccessible(page: Page, what: string): Promise<void> {
  // Evaluated through the DevTools protocol, which the page's CSP does not govern (a script tag would be refused).
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (ctx: Document, opts: object) => Promise<{ violations: AxeViolation[] }> } }).axe;
    return (await axe.run(document, { resultTypes: ['violations'] })).violations;
  });
  const bad = violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  assert.deepEqual(bad, [], `accessibility of ${what}`);
}

/**
 * Checks the page as it is now at both widths (axe at each) and writes a screenshot of each:
 * test-output/screenshots/<name>-1280.png and -390.png. Leaves the page at desktop width.
 */
export async function checkPage(page: Page, name: string): Promise<void> {
  await fs.promises.mkdir(SCREENSHOTS, { recursive: true });
  for (const size of [DESKTOP, PHONE]) {
    await page.setViewportSize(size);
    await assertAccessible(page, `${name} at ${size.width} px`);
    // Responsive: the page itself never scrolls sideways (wide tables scroll inside their frame).
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= size.width, `${name} is ${width} px wide at ${size.width} px`);
    await page.screenshot({ path: path.join(SCREENSHOTS, `${name}-${size.width}.png`), fullPage: true });
  }
  await page.setViewportSize(DESKTOP);
}
