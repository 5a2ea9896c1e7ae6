// Chromium for the console's browser tests: the system's Debian package (.ci/run installs it),
// driven by puppeteer-core, headless, with a fresh profile and no network beyond the test server
// (scripts/chromium.js, shared with scripts/console-figures.js).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'puppeteer-core';
import { launchChromium } from '../../scripts/chromium.js';
import { createConsole, toNodeListener } from '../../lib/console/index.js';

export { CHROMIUM } from '../../scripts/chromium.js';

export async function launch(): Promise<{ browser: Browser; close(): Promise<void> }> {
  return launchChromium();
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
