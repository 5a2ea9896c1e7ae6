// The review console over sessions a model wrote: hostile file names, contents, operation
// arguments and turn code never reach a page as markup, and each page (and the scan for the
// lines of a turn that asked) stays within the host bounds of DESIGN §4.4.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { createConsole } from '../../lib/console/index.js';
import { policies, SessionManager } from '../../lib/index.js';
import { expectBounded, hostileText, inputSize, MiB, measure, PARAMS, PATHOLOGICAL } from './bounds.js';

const require = createRequire(__filename);
const { escapeHtml } = require('../../lib/console/html.js') as { escapeHtml(value: unknown): string };
const { callLines } = require('../../lib/console/review.js') as {
  callLines(code: string, operation: string): { line: number; text: string }[];
};

/** Markup a model would try to smuggle in, and text made of HTML's special characters. */
const PAYLOADS = [
  '<script>alert(1)</script>',
  '<img src=x onerror=alert(2)>',
  '"><svg onload=alert(3)>',
  "'><iframe src=javascript:alert(4)>",
  '</pre><form action=/x><button>',
  '&lt;b&gt;',
  '<!--',
  ']]><x>',
];
const markupText = fc.oneof(
  fc.constantFrom(...PAYLOADS),
  fc.stringMatching(/^[<>"'&/= a-z]{1,80}$/),
  fc.tuple(fc.constantFrom(...PAYLOADS), hostileText(64 * 1024)).map(([p, t]) => `${t}${p}`),
);

const operations = {
  'tickets.create': { handler: (t: unknown) => ({ id: 1, t }), needsApproval: true },
};
const policy = {
  ...policies.SAFE_EDIT,
  allowedOperations: [...(policies.SAFE_EDIT.allowedOperations ?? []), 'tickets.create'],
};

const CONSOLE_SOURCE = join(__dirname, '../../lib/console');
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Tag names in a page: anything but the console's own means model text became markup. */
function tagNames(page: string): Set<string> {
  return new Set([...page.matchAll(/<\/?([A-Za-z][\w-]*)/g)].map((m) => m[1].toLowerCase()));
}

describe('review console over hostile sessions', () => {
  it('shows every model-written string as text, within the bounds', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'qr-console-prop-'));
    dirs.push(dir);
    const manager = new SessionManager({ dir, operations });
    const review = createConsole({ manager });
    const page = async (path: string) => (await review(new Request(`http://console.test${path}`))).text();

    // The tags the console's own templates write.
    const allowed = new Set(
      readdirSync(CONSOLE_SOURCE)
        .filter((f) => f.endsWith('.js'))
        .flatMap((f) => [...tagNames(readFileSync(join(CONSOLE_SOURCE, f), 'utf8'))]),
    );
    expect(allowed).not.toContain('img');

    let n = 0;
    await fc.assert(
      fc.asyncProperty(markupText, markupText, markupText, markupText, async (name, content, arg, thrown) => {
        const id = `hostile-${n++}`;
        const session = await manager.create({ id, policy, metadata: { note: name.slice(0, 1000) } });
        const lit = (v: unknown) => JSON.stringify(v);
        await session.executeTurn(`world.write(${lit(`src/${name.slice(0, 200)}`)}, ${lit(content)}); return 1;`);
        await session.executeTurn(`throw new Error(${lit(thrown)})`);
        await session.executeTurn(`// ${thrown.replace(/\n/g, ' ')}\ntickets.create(${lit({ arg })});`);
        const bytes = inputSize(name) + inputSize(content) + inputSize(arg) + 2 * inputSize(thrown);
        for (const path of ['/', `/sessions/${id}`, `/sessions/${id}/audit`, `/api/sessions/${id}`]) {
          const cost = await measure(() => page(path));
          expectBounded(`GET ${path}`, cost, bytes);
          if (path.startsWith('/api/')) continue;
          for (const tag of tagNames(cost.value)) expect(allowed, `${path}: <${tag}> from model text`).toContain(tag);
        }
        // The argument is on the session page as the JSON the approval shows, escaped.
        const shown = await page(`/sessions/${id}`);
        expect(shown).toContain(escapeHtml(JSON.stringify(arg).slice(1, 200)));
        session.workspace.dispose();
      }),
      PARAMS,
    );
  });

  it('escapes every special character and loses nothing', () => {
    const unescape = (s: string) =>
      s
        .replace(/&lt;/g, '<')
        .replace(/&gt;/g, '>')
        .replace(/&quot;/g, '"')
        .replace(/&#39;/g, "'")
        .replace(/&amp;/g, '&');
    fc.assert(
      fc.property(fc.oneof(markupText, fc.string({ unit: 'grapheme', maxLength: 200 })), (s) => {
        const out = escapeHtml(s);
        expect(out).not.toMatch(/[<>"']/);
        expect(out.replace(/&(amp|lt|gt|quot|#39);/g, '')).not.toContain('&');
        expect(unescape(out)).toBe(s);
      }),
      { ...PARAMS, numRuns: Math.max(PARAMS.numRuns ?? 0, 200) },
    );
  });

  it('finds the lines of a turn that call an operation in time linear in the code', async () => {
    const code = fc.oneof(
      hostileText(MiB),
      fc.constantFrom(...PATHOLOGICAL).map((p) => `${p}\n`.repeat(20_000)),
      fc.integer({ min: 1, max: 200_000 }).map((k) => `tickets${' '.repeat(k)}.${' '.repeat(k)}create`),
      fc.integer({ min: 1, max: 100_000 }).map((k) => `${'tickets.'.repeat(k)}create(`),
    );
    const operation = fc.constantFrom('tickets.create', 'a', 'llm.complete', 'x.y.z', '$weird_', 'a.b');
    await fc.assert(
      fc.asyncProperty(code, operation, async (text, op) => {
        const cost = await measure(() => callLines(text, op));
        expectBounded('callLines', cost, text.length);
        const last = op.split('.').at(-1) as string;
        for (const found of cost.value) expect(found.text).toContain(last);
      }),
      PARAMS,
    );
  });
});
