// The review console in real Chromium: navigation, diffs, approving and committing from the
// page, CSRF and authorization refusals, hostile names, contents and arguments shown as text,
// the Content-Security-Policy, and a session whose audit no longer verifies.
import { existsSync } from 'node:fs';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SessionManager } from '../../lib/session/index.js';
import { decodeSnapshot } from '../../lib/session/snapshot.js';
import { CHROMIUM, launch, serve } from './browser.js';
import { HOSTILE_IMG, HOSTILE_NAME, HOSTILE_SCRIPT, makeSessions } from './fixtures.js';

const CSP =
  "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

if (!existsSync(CHROMIUM))
  throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium)`);

let chromium: Awaited<ReturnType<typeof launch>>;
let browser: Browser;
beforeAll(async () => {
  chromium = await launch();
  browser = chromium.browser;
}, 30_000);
afterAll(async () => {
  await chromium?.close();
});

let fixture: Awaited<ReturnType<typeof makeSessions>>;
beforeEach(async () => {
  fixture = await makeSessions();
});

/** A page that records dialogs, CSP violations and what the page logs. */
async function openPage() {
  const page = await browser.newPage();
  const dialogs: string[] = [];
  const problems: string[] = [];
  page.on('dialog', async (dialog) => {
    dialogs.push(dialog.message());
    await dialog.dismiss();
  });
  page.on('console', (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(String(error)));
  await page.evaluateOnNewDocument(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      console.error(`Refused to load: CSP violation ${e.violatedDirective} ${e.blockedURI}`);
    });
  });
  return { page, dialogs, problems };
}

async function texts(page: Page, selector: string) {
  return page.$$eval(selector, (nodes) => nodes.map((n) => n.textContent ?? ''));
}

async function stored(id: string) {
  const manager = new SessionManager({ dir: fixture.dir, operations: fixture.operations });
  return manager.get(id);
}

async function decisions(id: string) {
  const s = await fixture.manager.store.get(id);
  const snapshot = decodeSnapshot(s?.bytes, undefined, { id, version: s?.version, purpose: 'store' });
  snapshot.world.dispose();
  return snapshot.meta.pending.requests.map((r: { id: string; status: string }) => [r.id, r.status]);
}

// A real browser on two busy cores (the suite builds the addon from source beside it) can take
// longer than the suite's default to load a page.
describe('review console in Chromium', { timeout: 90_000 }, () => {
  it('navigates from the list to a session and its audit, with the CSP and no violation', async () => {
    const server = await serve({ manager: fixture.manager });
    const { page, dialogs, problems } = await openPage();
    try {
      const response = await page.goto(`${server.url}/`);
      expect(response?.headers()['content-security-policy']).toBe(CSP);
      expect(response?.headers()['x-content-type-options']).toBe('nosniff');
      expect(await texts(page, 'a.session-link')).toEqual(['asks', 'broken', 'edits']);
      await Promise.all([page.waitForNavigation(), page.click('a.session-link[href$="/edits"]')]);
      expect(page.url()).toBe(`${server.url}/sessions/edits`);
      expect(await page.$eval('h1', (h) => h.textContent)).toContain('edits');
      await Promise.all([page.waitForNavigation(), page.click('a.audit-link')]);
      expect(await page.$eval('.verified', (p) => p.textContent)).toBe('Chain intact: 2 entries verified.');
      expect(await texts(page, 'table.audit tbody tr td:nth-child(4)')).toEqual(['world.write', 'world.write']);
      // The stylesheet applied (a blocked one would leave the default font).
      expect(await page.$eval('body', (b) => getComputedStyle(b).fontFamily)).toContain('system-ui');
      // The status filter submits itself on change (console.js ran under the CSP).
      await page.goto(`${server.url}/`);
      await Promise.all([page.waitForNavigation(), page.select('select[name=status]', 'paused')]);
      expect(page.url()).toContain('status=paused');
      expect(await texts(page, 'a.session-link')).toEqual(['asks']);
      expect(dialogs).toEqual([]);
      expect(problems).toEqual([]);
    } finally {
      await page.close();
      await server.close();
    }
  });

  it('shows diffs, hostile file names and contents as text', async () => {
    const server = await serve({ manager: fixture.manager, authorize: () => true });
    const { page, dialogs, problems } = await openPage();
    try {
      await page.goto(`${server.url}/sessions/edits`);
      expect((await texts(page, 'code.path')).sort()).toEqual([HOSTILE_NAME, 'src/app.js'].sort());
      const diffs = await texts(page, 'pre.diff');
      const hostile = diffs.find((d) => d.includes(HOSTILE_IMG)) ?? '';
      expect(hostile).toContain(`+${HOSTILE_SCRIPT}\n+${HOSTILE_IMG}\n`);
      expect(await texts(page, '.d-add')).toContain(`+export const greeting = "${HOSTILE_SCRIPT}";\n`);
      expect(await texts(page, '.d-del')).toContain('-export const greeting = "hello";\n');
      expect(await page.$$eval('main img, main script, main [onerror]', (n) => n.length)).toBe(0);
      expect(await page.$$eval('script', (n) => n.map((s) => s.getAttribute('src')))).toEqual(['/assets/console.js']);
      expect(await page.$eval('.turn .error .code', (n) => n.textContent)).toBe('EVAL_ERROR');
      expect(await page.$eval('.turn .frame', (n) => n.textContent)).toContain('null.boom');
      expect(dialogs).toEqual([]);
      expect(problems).toEqual([]);
    } finally {
      await page.close();
      await server.close();
    }
  });

  it('approves from the page: the decision is in the store, hostile arguments shown as text', async () => {
    const server = await serve({ manager: fixture.manager, authorize: () => true });
    const { page, dialogs, problems } = await openPage();
    try {
      await page.goto(`${server.url}/sessions/asks`);
      const args = JSON.parse((await page.$eval('pre.args', (n) => n.textContent)) ?? '');
      expect(args).toEqual([{ title: HOSTILE_SCRIPT, body: HOSTILE_IMG }]);
      expect(await page.$eval('pre.asked', (n) => n.textContent)).toContain(
        `2const t = tickets.create({ title: "${HOSTILE_SCRIPT}"`,
      );
      expect(await page.$$eval('main img, main script', (n) => n.length)).toBe(0);
      await Promise.all([page.waitForNavigation(), page.click('form.approve button')]);
      expect(await page.$eval('.notice', (n) => n.textContent)).toBe('Request 1.0 approved.');
      expect((await stored('asks'))?.pendingApprovals).toEqual([]);
      expect(await decisions('asks')).toEqual([['1.0', 'approved']]);
      // The host resumes the turn in another process, and the approved call starts (the turn
      // does not wait for it, so the audit says it was still running when the turn ended).
      const resumed = await new SessionManager({ dir: fixture.dir, operations: fixture.operations }).resume('asks');
      expect(resumed?.outcome.tag).toBe('ok');
      const calls = (await stored('asks'))?.audit.forOperation('tickets.create') ?? [];
      expect(calls.map((c) => c.error)).toEqual([
        expect.stringMatching(/awaiting approval/),
        expect.stringMatching(/still running/),
      ]);
      expect(dialogs).toEqual([]);
      expect(problems).toEqual([]);
    } finally {
      await page.close();
      await server.close();
    }
  });

  it('commits from the page: the world in the store has the changes', async () => {
    const server = await serve({ manager: fixture.manager, authorize: () => true });
    const { page, problems } = await openPage();
    try {
      await page.goto(`${server.url}/sessions/edits`);
      await Promise.all([page.waitForNavigation(), page.click('form.commit button')]);
      expect(await page.$eval('.notice', (n) => n.textContent)).toBe('Proposals committed.');
      const session = await stored('edits');
      expect(session?.proposals()).toEqual([]);
      expect(session?.workspace.readText(HOSTILE_NAME)).toBe(`${HOSTILE_SCRIPT}\n${HOSTILE_IMG}\n`);
      expect(problems).toEqual([]);
    } finally {
      await page.close();
      await server.close();
    }
  });

  it('refuses a form without or with a wrong CSRF token, and leaves the store unchanged', async () => {
    const server = await serve({ manager: fixture.manager, authorize: () => true });
    const { page } = await openPage();
    try {
      await page.goto(`${server.url}/sessions/edits`);
      const version = await fixture.manager.store.version?.('edits');
      await page.$eval('form.commit input[name=csrf]', (input) => {
        (input as HTMLInputElement).value = 'forged';
      });
      const [wrong] = await Promise.all([page.waitForNavigation(), page.click('form.commit button')]);
      expect(wrong?.status()).toBe(403);
      expect(await page.$eval('.error-message', (n) => n.textContent)).toContain('CSRF');
      await page.goto(`${server.url}/sessions/edits`);
      await page.$eval('form.commit input[name=csrf]', (input) => input.remove());
      const [missing] = await Promise.all([page.waitForNavigation(), page.click('form.commit button')]);
      expect(missing?.status()).toBe(403);
      expect(await fixture.manager.store.version?.('edits')).toBe(version);
      expect((await stored('edits'))?.proposals()).toHaveLength(2);
    } finally {
      await page.close();
      await server.close();
    }
  });

  it('refuses what authorize refuses', async () => {
    const server = await serve({ manager: fixture.manager, authorize: () => false });
    const { page } = await openPage();
    try {
      await page.goto(`${server.url}/sessions/edits`);
      const [refused] = await Promise.all([page.waitForNavigation(), page.click('form.commit button')]);
      expect(refused?.status()).toBe(403);
      expect(await page.$eval('.error-message', (n) => n.textContent)).toBe('You may not commit in session edits.');
      expect((await stored('edits'))?.proposals()).toHaveLength(2);
    } finally {
      await page.close();
      await server.close();
    }
  });

  it('is read-only without authorize', async () => {
    const server = await serve({ manager: fixture.manager });
    const { page } = await openPage();
    try {
      await page.goto(`${server.url}/sessions/asks`);
      expect(await page.$$eval('form[method=post]', (n) => n.length)).toBe(0);
      expect(await page.$eval('.badge.readonly', (n) => n.textContent)).toBe('read-only');
      // A form the page did not offer (fetch is refused by the CSP's connect-src).
      const [refused] = await Promise.all([
        page.waitForNavigation(),
        page.evaluate(() => {
          const form = document.createElement('form');
          form.method = 'post';
          form.action = '/sessions/asks/approve';
          const request = document.createElement('input');
          request.name = 'request';
          request.value = '1.0';
          form.append(request);
          document.body.append(form);
          form.submit();
        }),
      ]);
      expect(refused?.status()).toBe(403);
      expect(await page.$eval('.error-message', (n) => n.textContent)).toBe('This console is read-only.');
      expect(await decisions('asks')).toEqual([['1.0', 'pending']]);
    } finally {
      await page.close();
      await server.close();
    }
  });

  it('opens a session whose audit no longer verifies, read-only, saying where it breaks', async () => {
    const server = await serve({ manager: fixture.manager, authorize: () => true });
    const { page, problems } = await openPage();
    try {
      const response = await page.goto(`${server.url}/sessions/broken`);
      expect(response?.status()).toBe(200);
      expect(await page.$eval('.audit-broken', (n) => n.textContent)).toContain('broken at entry 1');
      expect(await page.$$eval('form[method=post]', (n) => n.length)).toBe(0);
      await Promise.all([page.waitForNavigation(), page.click('a.audit-link')]);
      expect(await page.$eval('tr.broken td', (n) => n.textContent)).toBe('1');
      expect(problems).toEqual([]);
    } finally {
      await page.close();
      await server.close();
    }
  });
});
