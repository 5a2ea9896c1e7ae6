// TC39's parser tests (the test262-parser-tests package: 1,981 valid programs, 731 that do not
// match the grammar and 668 that trigger early errors) against the patched engine, compiled as
// quickrealm compiles guest code. Each program runs with a budget of one step, so nothing past
// its first call or loop iteration executes: a valid program ends ok or at the step limit, an
// invalid one with a SyntaxError. The programs whose outcome differs from the suite's (strict
// mode refusals, QuickJS-ng leniencies) are listed with their reason in a fixture; any other
// difference, or a listed one that changes, fails the test.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runSync } from '../lib/index.js';

const SUITE = join(__dirname, '..', 'node_modules', 'test262-parser-tests');
const KNOWN = JSON.parse(readFileSync(join(__dirname, 'fixtures', 'parser-tests-differences.json'), 'utf8')) as {
  differences: Record<string, string>;
};

/** What quickrealm made of one program: its SyntaxError, or how it ended otherwise. */
function outcome(file: string, source: string): { syntaxError: boolean; text: string } {
  const r = runSync(source, {
    mode: file.endsWith('.module.js') ? 'module' : 'script',
    filename: file,
    limits: { steps: 1, timeoutMs: 5000 },
  });
  if (r.ok) return { syntaxError: false, text: 'accepted' };
  const e = r.error;
  if (e.code === 'STEP_LIMIT') return { syntaxError: false, text: 'accepted (ran until the step limit)' };
  return { syntaxError: e.code === 'EVAL_ERROR' && e.name === 'SyntaxError', text: `${e.name}: ${e.message}` };
}

describe("TC39's parser tests (test262-parser-tests)", () => {
  const seen: Record<string, string> = {};
  const counts: Record<string, number> = {};

  for (const dir of ['pass', 'fail', 'early'] as const) {
    it(`${dir}/: every program ends as the suite expects, or as its listed difference says`, () => {
      const files = readdirSync(join(SUITE, dir)).filter((f) => f.endsWith('.js'));
      counts[dir] = files.length;
      for (const f of files) {
        const { syntaxError, text } = outcome(f, readFileSync(join(SUITE, dir, f), 'utf8'));
        // No program may reach an engine failure: a parser that accepts what it cannot compile.
        expect(text, `${dir}/${f}`).not.toMatch(/^InternalError/);
        if (syntaxError !== (dir !== 'pass')) seen[`${dir}/${f}`] = text;
      }
      const listed = Object.fromEntries(Object.entries(KNOWN.differences).filter(([k]) => k.startsWith(`${dir}/`)));
      const found = Object.fromEntries(Object.entries(seen).filter(([k]) => k.startsWith(`${dir}/`)));
      expect(found).toEqual(listed);
    });
  }

  it('covers the whole suite, and most of it as the suite expects', () => {
    expect(counts).toEqual({ pass: 1981, fail: 731, early: 668 });
    const differences = Object.keys(KNOWN.differences).length;
    expect(differences / (1981 + 731 + 668)).toBeLessThan(0.07);
    // Valid programs are refused only for strict mode or a parser limit, never accepted-then-broken.
    for (const [file, why] of Object.entries(KNOWN.differences)) {
      if (file.startsWith('pass/')) expect(why, file).toMatch(/^SyntaxError: /);
      else expect(why, file).toMatch(/^accepted|^ReferenceError: could not load module/);
    }
  });
});
