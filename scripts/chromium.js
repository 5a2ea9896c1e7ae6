'use strict';
// The system's Chromium (the Debian package at /usr/bin/chromium, or QUICKREALM_CHROMIUM) as
// the console's browser tests and figures drive it: headless, a fresh profile, and none of the
// background connections this machine's closed network would refuse.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const CHROMIUM = process.env.QUICKREALM_CHROMIUM ?? '/usr/bin/chromium';

/**
 * Launches Chromium with puppeteer-core; `close()` ends it and removes its profile.
 * @returns {Promise<{ browser: import('puppeteer-core').Browser, close(): Promise<void> }>}
 */
async function launchChromium() {
  const puppeteer = require('puppeteer-core');
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'qr-chromium-'));
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
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

module.exports = { CHROMIUM, launchChromium };
