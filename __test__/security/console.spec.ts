import { afterEach, describe, expect, it, vi } from 'vitest';
import { createSandboxExecutor, run, runSync } from '../../lib/index.js';

// `console: 'inherit'` prints guest text on the host's terminal: no control sequence of the
// guest may reach it raw (title changes, screen clears, clipboard writes, forged log lines).
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

function capture() {
  const printed: string[] = [];
  for (const level of ['log', 'info', 'warn', 'error', 'debug'] as const) {
    vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
      printed.push(args.map(String).join(' '));
    });
  }
  return printed;
}

afterEach(() => vi.restoreAllMocks());

const ATTACKS: [string, string][] = [
  ['OSC title change', '\\u001b]0;pwned\\u0007'],
  ['clear screen', '\\u001b[2J\\u001b[H'],
  ['OSC 52 clipboard write', '\\u001b]52;c;cm0gLXJmIH4=\\u0007'],
  ['carriage return overwrite', 'ok\\rFAKE: all tests passed'],
  ['8-bit CSI', '\\u009b31m'],
  ['bell and backspace', '\\u0007\\u0008\\u0008'],
];

describe("console: 'inherit' escapes terminal control sequences", () => {
  for (const [what, text] of ATTACKS) {
    it(what, () => {
      const printed = capture();
      const r = runSync(`console.log("${text}"); console.error("${text}")`, { console: 'inherit' });
      expect(r.ok).toBe(true);
      expect(r.logs).toEqual([]);
      expect(printed).toHaveLength(2);
      for (const line of printed) {
        expect(line).not.toMatch(CONTROL);
        expect(line).toMatch(/\\u00[0-9a-f]{2}/);
      }
    });
  }

  it('keeps newlines and tabs, and plain text as it was', () => {
    const printed = capture();
    runSync('console.warn("a\\tb\\nc")', { console: 'inherit' });
    expect(printed).toEqual(['a\tb\nc']);
  });

  it('escapes in run() too, live globals included', async () => {
    const printed = capture();
    await run('console.info("\\u001b[31mred")', { console: 'inherit' });
    await run('console.info("\\u001b[32m" + name)', { console: 'inherit', globals: { name: 'green' } });
    expect(printed).toEqual(['\\u001b[31mred', '\\u001b[32mgreen']);
  });

  it("escapes the executor's consoleTaming: 'unsafe' output", async () => {
    const printed = capture();
    const execute = createSandboxExecutor({
      createContext: () => ({}),
      lockdownOptions: { consoleTaming: 'unsafe' },
    });
    await execute({}, 'console.log("\\u001b]0;title\\u0007")');
    expect(printed).toEqual(['\\u001b]0;title\\u0007']);
  });
});
