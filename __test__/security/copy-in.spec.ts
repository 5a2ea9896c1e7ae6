import { describe, expect, it } from 'vitest';
import { runSync } from '../../lib/index.js';

// Copying `data` into a realm charges every value (holes included) against the caps and
// refuses oversized bigints before any costly conversion: the host never hangs on its input.
describe('copy-in budgets', () => {
  const timed = (f: () => void) => {
    const started = Date.now();
    f();
    return Date.now() - started;
  };

  it('a sparse array of length 2**32 - 1 is refused quickly', () => {
    const ms = timed(() => {
      const r = runSync('return 1', { data: { d: new Array(2 ** 32 - 1) } });
      expect(r.error?.code).toBe('INVALID_INPUT');
      expect(r.error?.message).toMatch(/more than \d+ values/);
    });
    expect(ms).toBeLessThan(5000);
  });

  it('holes nested in objects count too', () => {
    const r = runSync('return 1', { data: { a: { b: [new Array(600_000), new Array(600_000)] } } });
    expect(r.error?.code).toBe('INVALID_INPUT');
  });

  it('undefined, null and booleans count as values', () => {
    const many = Array.from({ length: 1_100_000 }, (_, i) => (i % 3 === 0 ? null : i % 3 === 1));
    const r = runSync('return 1', { data: { many } });
    expect(r.error?.code).toBe('INVALID_INPUT');
  });

  it('a 3,000,000-bit bigint is refused before conversion', () => {
    const ms = timed(() => {
      const r = runSync('return 1', { data: { b: (1n << 3_000_000n) - 1n } });
      expect(r.error?.code).toBe('INVALID_INPUT');
      expect(r.error?.message).toMatch(/bigint of more than/);
    });
    expect(ms).toBeLessThan(2000);
  });

  it('ordinary data still copies, large bigints within the cap included', () => {
    const big = (1n << 60_000n) + 7n;
    const r = runSync('return [d.length, String(b % 10n), typeof n]', {
      data: { d: [1, undefined, null, true], b: big, n: null },
    });
    expect(r.ok && r.value).toEqual([4, String(big % 10n), 'object']);
    expect(runSync('return 1').ok).toBe(true);
  });
});
