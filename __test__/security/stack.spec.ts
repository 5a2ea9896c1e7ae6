import { describe, expect, it } from 'vitest';
import { run, runSync } from '../../lib/index.js';

// A stack limit larger than the executing thread's real stack must never let QuickJS overflow
// it: the main thread has about 8 MiB, and runSync and live runs execute there.
const RECURSE = 'const f = (n) => f(n + 1) + 1; return f(0)';

describe('stackBytes never exceeds the thread', () => {
  for (const mib of [8, 16, 64]) {
    it(`runSync with stackBytes ${mib} MiB ends in a RangeError, not a crash`, () => {
      const r = runSync(RECURSE, { limits: { stackBytes: mib << 20 } });
      expect(r.ok).toBe(false);
      expect(r.error?.code).toBe('EVAL_ERROR');
      expect(r.error?.name).toBe('RangeError');
      expect(runSync('return 1').ok).toBe(true);
    });
  }

  it('a live run (main thread) with 16 MiB', async () => {
    const r = await run(RECURSE, { limits: { stackBytes: 16 << 20 }, globals: { x: 1 } });
    expect(r.error?.name).toBe('RangeError');
  });

  it('recursion through a host callback with a huge limit', () => {
    const r = runSync('const f = (n) => again(() => f(n + 1)); return f(0)', {
      limits: { stackBytes: 64 << 20 },
      globals: { again: (g: () => unknown) => g() },
    });
    expect(r.ok).toBe(false);
    expect(runSync('return 2').ok).toBe(true);
  });
});

describe('the default stack fits ordinary recursive code', () => {
  const DFS = `
    const children = (n) => (n < 3000 ? [n + 1] : []);
    const depth = (n) => 1 + Math.max(0, ...children(n).map(depth));
    return depth(0);`;

  it('a 3,000-deep DFS in runSync (main thread)', () => {
    const r = runSync(DFS);
    expect(r.ok && r.value).toBe(3001);
  });

  it('a 3,000-deep DFS in run() (worker thread)', async () => {
    const r = await run(DFS);
    expect(r.ok && r.value).toBe(3001);
  });
});
