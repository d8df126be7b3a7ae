/**
 * The browser of the browser tests and the web UI bench: Debian's Chromium driven by
 * playwright-core, which never downloads a browser of its own. Headless, with a fresh profile
 * (playwright-core makes one), and without the background traffic a first run starts (updates,
 * sync, QUIC probes) that the machines here cannot reach anyway.
 */
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      // Root in a VM: Chromium's own sandbox needs an unprivileged user; the pages are our own.
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
