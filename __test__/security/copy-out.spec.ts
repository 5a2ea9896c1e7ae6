import { describe, expect, it } from 'vitest';
import { runSync } from '../../lib/index.js';

// What leaves the realm is bounded in time and size: a huge bigint is refused before the host
// spends its own (quadratic) time converting it, and copying stops at the deadline.
describe('copy-out budgets', () => {
  const timed = <T>(f: () => T): [T, number] => {
    const started = Date.now();
    const value = f();
    return [value, Date.now() - started];
  };

  it('a returned 1,000,000-bit bigint is refused, not converted on the host', () => {
    const [r, ms] = timed(() => runSync('return (1n << 1000000n) - 1n', { limits: { timeoutMs: 60_000 } }));
    expect(r.ok).toBe(false);
    expect(r.error?.message).toMatch(/bigint of more than 65536 bits/);
    expect(ms).toBeLessThan(4000);
  });

  it('a huge bigint nested in a result is refused with its path', () => {
    const r = runSync('return { a: [1, (1n << 200000n)] }');
    expect(r.ok).toBe(false);
    expect(r.error?.message).toMatch(/bigint of more than 65536 bits/);
  });

  it('a huge bigint passed to a host function is a catchable RangeError in the guest', () => {
    let called = false;
    const r = runSync('try { f(1n << 100000n); return "passed"; } catch (e) { return e.name + ": " + e.message; }', {
      globals: { f: () => (called = true) },
    });
    expect(r.ok && r.value).toMatch(/^RangeError: .*bigint of more than 65536 bits/);
    expect(called).toBe(false);
  });

  it('bigints within the cap still cross exactly, both ways', () => {
    const big = (1n << 65_000n) - 12345n;
    const r = runSync('return [b, -b, f(b) === b + 1n]', { data: { b: big }, globals: { f: (x: bigint) => x + 1n } });
    expect(r.ok && r.value).toEqual([big, -big, true]);
  });

  it('signs, zero and word boundaries cross exactly, both ways', () => {
    const edge = [0n, -1n, 1n, 2n ** 64n, -(2n ** 64n), 2n ** 64n - 1n, -(2n ** 63n), -(2n ** 65_535n)];
    const r = runSync('return [e, e.map((x) => -x), f(e[4])]', {
      data: { e: edge },
      globals: { f: (x: bigint) => x * 2n },
    });
    expect(r.ok && r.value).toEqual([edge, edge.map((x) => -x), -(2n ** 65n)]);
  });

  it('bigints near the cap cross in linear time', () => {
    // Binary words, not decimal text: no quadratic conversion on either side.
    const big = (1n << 65_000n) - 12345n;
    const b = Array.from({ length: 20 }, (_, i) => big - BigInt(i));
    const [r, ms] = timed(() => runSync('return b.map((x) => -x)', { data: { b }, limits: { timeoutMs: 60_000 } }));
    expect(r.ok && r.value).toEqual(b.map((x) => -x));
    expect(ms).toBeLessThan(400);
  });

  it('holes in six sparse arrays stop at the deadline', () => {
    // Six distinct arrays: one array shared six times is copied once (a repeated reference
    // costs one value), so it would not reach the deadline.
    const [r, ms] = timed(() =>
      runSync('return Array.from({ length: 6 }, () => { const s = []; s.length = 1e6; return s; })', {
        limits: { timeoutMs: 300 },
      }),
    );
    expect(r.ok).toBe(false);
    expect(['TIMEOUT', 'EVAL_ERROR']).toContain(r.error?.code);
    expect(ms).toBeLessThan(2000);
    expect(runSync('return 1').ok).toBe(true);
  });
});
