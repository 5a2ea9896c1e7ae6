#!/usr/bin/env node
'use strict';
// `node scripts/console-figures.js [--shots]`: the review console's figures, measured in the
// system's Chromium (/usr/bin/chromium, or QUICKREALM_CHROMIUM) over demo sessions in a
// temporary folder: page weight (bytes of HTML, CSS and JS of the list and session pages) and
// time to first render (navigation start to first contentful paint, median of 5 loads with
// the cache off). With --shots it also writes the README's screenshots to docs/console-*.png.

const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { launchChromium } = require('./chromium.js');
const { createConsole, toNodeListener } = require('../lib/console/index.js');
const { SessionManager, policies } = require('../lib/session/index.js');
const { decodeSnapshot, encodeSnapshot } = require('../lib/session/snapshot.js');

const RUNS = 5;

/** @param {string} dir */
async function demoSessions(dir) {
  const operations = {
    'tickets.create': { handler: (/** @type {unknown} */ t) => ({ id: 7, t }), needsApproval: true },
  };
  const policy = {
    ...policies.SAFE_EDIT,
    allowedOperations: [...(policies.SAFE_EDIT.allowedOperations ?? []), 'tickets.create'],
  };
  const manager = new SessionManager({ dir, operations });
  const refactor = await manager.create({
    id: 'refactor-date-utils',
    policy,
    tenant: 'acme',
    budget: { turns: 20, tokens: 50000 },
  });
  refactor.workspace.writeFile(
    'src/dates.js',
    'export function formatDate(d) {\n  return d.getFullYear() + "-" + (d.getMonth() + 1) + "-" + d.getDate();\n}\n\nexport const EPOCH = 0;\n',
  );
  refactor.workspace.writeFile('test/dates.test.js', 'import { formatDate } from "../src/dates.js";\n');
  refactor.consume({ tokens: 18250 });
  await refactor.executeTurn(
    [
      "const src = world.read('src/dates.js');",
      "world.write('src/dates.js', src.replace(/return d\\.getFullYear\\(\\)[^\\n]*/, 'return d.toISOString().slice(0, 10);'));",
      "world.write('test/dates.test.js', world.read('test/dates.test.js') + 'formatDate(new Date(0)) === \"1970-01-01\";\\n');",
      "world.write('src/<img src=x onerror=alert(1)>.js', '<script>alert(1)</script>\\n');",
    ].join('\n'),
  );
  await refactor.executeTurn("const files = world.list('src/**');\nfiles.map((f) => world.read(f).lenght.toFixed());");
  const ask = await manager.create({ id: 'file-release-ticket', policy, tenant: 'globex' });
  await ask.executeTurn(
    "const notes = world.list('**/*').length;\nconst ticket = tickets.create({ title: 'Release 2.4', body: '<script>alert(1)</script>', notes });\nticket.id;",
  );
  for (const [i, tenant] of ['acme', 'initech', 'globex', 'acme'].entries()) {
    const s = await manager.create({ id: `triage-${1041 + i}`, policy: policies.SAFE_ANALYSIS, tenant });
    await s.executeTurn("world.list('**/*').length");
    if (i === 1) await manager.complete(s.id);
  }
  const broken = await manager.create({ id: 'audit-demo', policy, tenant: 'initech' });
  await broken.executeTurn("world.list('**/*'); world.stat('.') ?? null;");
  const store = /** @type {import('../lib/session/index.js').FolderStore} */ (manager.store);
  const stored = await store.get('audit-demo');
  if (!stored) throw new Error('audit-demo was not stored');
  const parts = decodeSnapshot(stored.bytes, undefined, {
    id: 'audit-demo',
    version: stored.version,
    purpose: 'store',
  });
  const ledger = JSON.parse(parts.ledger);
  ledger.audit[0].args = '["secret/**"]';
  const head = await store.head('audit-demo');
  await store.put(
    'audit-demo',
    encodeSnapshot({
      ...parts,
      ledger: JSON.stringify(ledger),
      binding: { id: 'audit-demo', version: stored.version + 1, purpose: 'store' },
    }),
    { expectedVersion: stored.version, meta: head?.meta ?? {} },
  );
  return manager;
}

/** @param {number[]} values */
function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function main() {
  const shots = process.argv.includes('--shots');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'qr-console-figures-'));
  const manager = await demoSessions(dir);
  const server = http.createServer(toNodeListener(createConsole({ manager, authorize: () => true })));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const base = `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (server.address()).port}`;
  const { browser, close } = await launchChromium();
  try {
    const pages = { list: '/', session: '/sessions/refactor-date-utils' };
    const assets = await Promise.all(
      ['/assets/console.css', '/assets/console.js'].map(
        async (p) => (await (await fetch(base + p)).arrayBuffer()).byteLength,
      ),
    );
    for (const [name, route] of Object.entries(pages)) {
      const htmlBytes = (await (await fetch(base + route)).arrayBuffer()).byteLength;
      const paints = [];
      // One tab brought to the front (a background tab does not paint), the cache off.
      const page = await browser.newPage();
      await page.setCacheEnabled(false);
      for (let i = 0; i < RUNS; i++) {
        await page.bringToFront();
        await page.goto(base + route, { waitUntil: 'load' });
        const fcp = await page.evaluate(
          () =>
            new Promise((resolve) => {
              new PerformanceObserver((list) => {
                const entry = list.getEntries().find((e) => e.name === 'first-contentful-paint');
                if (entry) resolve(entry.startTime);
              }).observe({ type: 'paint', buffered: true });
              setTimeout(() => resolve(Number.NaN), 5000);
            }),
        );
        paints.push(Number(fcp));
      }
      await page.close();
      console.log(
        `${name}: HTML ${htmlBytes} B + CSS ${assets[0]} B + JS ${assets[1]} B = ${htmlBytes + assets[0] + assets[1]} B; ` +
          `first contentful paint median ${median(paints).toFixed(1)} ms (${paints.map((p) => p.toFixed(1)).join(', ')})`,
      );
    }
    if (shots) {
      const docs = path.join(__dirname, '..', 'docs');
      fs.mkdirSync(docs, { recursive: true });
      const page = await browser.newPage();
      await page.setViewport({ width: 1100, height: 1000 });
      const views = {
        'console-sessions.png': '/',
        'console-session.png': '/sessions/refactor-date-utils',
        'console-approval.png': '/sessions/file-release-ticket',
        'console-audit.png': '/sessions/audit-demo/audit',
      };
      for (const [file, route] of Object.entries(views)) {
        await page.goto(base + route, { waitUntil: 'load' });
        const out = path.join(docs, file);
        await page.screenshot({ path: /** @type {`${string}.png`} */ (out) });
        console.log(`${path.relative(process.cwd(), out)}: ${fs.statSync(out).size} B`);
      }
    }
  } finally {
    await close();
    server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
