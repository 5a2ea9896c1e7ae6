// Chromium for the console's browser tests: the system's Debian package (.ci/run installs it),
// driven by puppeteer-core, headless, with a fresh profile and no network beyond the test server.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer, { type Browser } from 'puppeteer-core';
import { createConsole, toNodeListener } from '../../lib/console/index.js';

export const CHROMIUM = process.env.QUICKREALM_CHROMIUM ?? '/usr/bin/chromium';

export async function launch(): Promise<{ browser: Browser; close(): Promise<void> }> {
  const profile = mkdtempSync(join(tmpdir(), 'qr-chromium-'));
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      `--user-data-dir=${profile}`,
    ],
  });
  return {
    browser,
    async close() {
      await browser.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Serves a console on a free port of 127.0.0.1. */
export async function serve(options: Parameters<typeof createConsole>[0]) {
  const server = createServer(toNodeListener(createConsole(options)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
