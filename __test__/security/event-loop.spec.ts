import { describe, expect, it } from 'vitest';
import { createSandboxExecutor, run, runSync } from '../../lib/index.js';
import { expectHealthy } from '../helpers.js';

/**
 * Samples the event loop while `work` runs: how many 1 ms interval ticks fired, and the longest
 * gap between two of them (the longest time the loop was blocked).
 */
async function sampleLoop<T>(work: () => Promise<T>): Promise<{ result: T; ticks: number; longestGap: number }> {
  let ticks = 0;
  let last = performance.now();
  let longestGap = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longestGap = Math.max(longestGap, now - last);
    last = now;
    ticks += 1;
  }, 1);
  try {
    const result = await work();
    return { result, ticks, longestGap };
  } finally {
    clearInterval(timer);
  }
}

// A run with live `globals` shares the host's main thread in time slices of a few
// milliseconds: the event loop keeps turning while guest code spins, and an abort takes effect
// at the next slice.
describe('run() with live globals never freezes the event loop', () => {
  it('a runaway loop lets timers fire throughout, then times out', async () => {
    const { result, ticks, longestGap } = await sampleLoop(() =>
      run('for (;;) {}', { globals: { x: 1 }, limits: { timeoutMs: 400 } }),
    );
    expect(result.error?.code).toBe('TIMEOUT');
    expect(ticks).toBeGreaterThan(20);
    // Slices are 4 ms; a loaded machine may delay a tick, never by a whole timeout.
    expect(longestGap).toBeLessThan(150);
    expectHealthy();
  });

  it('variants: spinning on host reads, on host calls, and on guest allocation', async () => {
    const sources = [
      'let n = 0; for (;;) n += box.value',
      'for (;;) touch()',
      'const keep = []; for (;;) { keep.push({ a: [1, 2, 3] }); if (keep.length > 1e4) keep.length = 0 }',
    ];
    for (const source of sources) {
      const { result, ticks, longestGap } = await sampleLoop(() =>
        run(source, { globals: { box: { value: 1 }, touch: () => 0 }, limits: { timeoutMs: 300 } }),
      );
      expect(result.error?.code, source).toBe('TIMEOUT');
      expect(ticks, source).toBeGreaterThan(10);
      expect(longestGap, source).toBeLessThan(150);
    }
  });

  it('an AbortSignal fired from a timer stops a spinning run within milliseconds', async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 50);
    const started = performance.now();
    const r = await run('for (;;) {}', { globals: { x: 1 }, signal: ac.signal, limits: { timeoutMs: 5000 } });
    expect(r.error?.code).toBe('CANCELLED');
    expect(performance.now() - started).toBeLessThan(500);
    expectHealthy();
  });

  it('an abort also stops a run busy copying out a large result', async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 30);
    const started = performance.now();
    const r = await run(
      'const rows = []; for (let i = 0; i < 2e5; i++) rows.push({ i, name: "row" + i }); for (;;) {}',
      { globals: { x: 1 }, signal: ac.signal, limits: { timeoutMs: 5000, memoryBytes: 256 << 20 } },
    );
    expect(r.error?.code).toBe('CANCELLED');
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('a runaway executor edit does not freeze the process', async () => {
    const tree = { root: { items: [1, 2, 3] } };
    const createContext = (t: unknown) => ({ root: (t as typeof tree).root });
    const editor = createSandboxExecutor({ createContext, limits: { timeoutMs: 300 } });
    const { result, ticks, longestGap } = await sampleLoop(() =>
      editor(tree, 'while (true) {}').then(
        () => 'completed',
        (e: { code?: string }) => e.code,
      ),
    );
    expect(result).toBe('TIMEOUT');
    expect(ticks).toBeGreaterThan(10);
    expect(longestGap).toBeLessThan(150);
  });

  it('two spinning live runs interleave and both end with the right result', async () => {
    const count = (n: number) =>
      run(`let s = 0; for (let i = 0; i < ${n}; i++) s += step(i); return s`, {
        globals: { step: (i: number) => i % 3 },
        limits: { timeoutMs: 5000 },
      });
    const [a, b] = await Promise.all([count(200_000), count(100_000)]);
    expect(a.ok && a.value).toBe(199_999);
    expect(b.ok && b.value).toBe(99_999);
  });

  it('a guest callback called by a host timer while the run is between slices fails cleanly', async () => {
    let seen = '';
    const r = await run('later(() => 1); const end = Date.now() + 150; while (Date.now() < end) {} return "done"', {
      globals: {
        later: (cb: () => unknown) =>
          setTimeout(() => {
            try {
              cb();
              seen = 'called';
            } catch (e) {
              seen = (e as Error).message;
            }
          }, 10),
      },
      limits: { timeoutMs: 3000 },
    });
    expect(r.ok && r.value).toBe('done');
    expect(seen).toMatch(/paused between time slices/);
  });

  it('a guest callback a host function calls synchronously still works (no slicing there)', async () => {
    const r = await run('return each([1, 2, 3], (x) => x * 10)', {
      globals: { each: (xs: number[], f: (x: number) => number) => xs.map(f) },
    });
    expect(r.ok && r.value).toEqual([10, 20, 30]);
  });

  it('a host function can start a nested runSync while a sliced run is paused in it', async () => {
    const r = await run('return nested() + 1', {
      globals: {
        nested: () => {
          const inner = runSync('return box.n * 2', { globals: { box: { n: 20 } } });
          return inner.ok ? inner.value : -1;
        },
      },
    });
    expect(r.ok && r.value).toBe(41);
  });
});

// The run's guest code has a stack of its own; host calls and nested guest callbacks run on the
// host's stack, each with a limit that fits the stack it is on.
describe('stack limits of time-sliced runs', () => {
  const recurse =
    'let d = 0; const f = (n) => { d = n; return f(n + 1) + 1 }; try { f(0) } catch (e) { return [e.name, d] }';

  for (const stackBytes of [128 << 10, 8 << 20, 64 << 20]) {
    it(`deep recursion with stackBytes ${stackBytes} is a RangeError, not a crash`, async () => {
      const r = await run(recurse, { globals: { x: 1 }, limits: { stackBytes, timeoutMs: 10_000 } });
      expect(r.ok).toBe(true);
      const [name, depth] = r.ok ? (r.value as [string, number]) : ['', 0];
      expect(name).toBe('RangeError');
      expect(depth).toBeGreaterThan(stackBytes / 4096);
    });
  }

  it('deep recursion inside a callback the host calls synchronously is a RangeError', async () => {
    const r = await run(`return call(() => { ${recurse} })`, {
      globals: { call: (f: () => unknown) => f() },
      limits: { stackBytes: 64 << 20, timeoutMs: 10_000 },
    });
    expect(r.ok).toBe(true);
    expect(r.ok && (r.value as [string, number])[0]).toBe('RangeError');
    expectHealthy();
  });

  it('deep recursion that crosses into the host at every level fails cleanly', async () => {
    const r = await run('const f = (n) => call(() => f(n + 1)); try { f(0) } catch (e) { return e.name }', {
      globals: { call: (g: () => unknown) => g() },
      limits: { timeoutMs: 10_000 },
    });
    // The host's own stack check or the guest's ends it; either way the host survives.
    expect(r.ok || r.error?.code === 'EVAL_ERROR').toBe(true);
    expectHealthy();
  });
});
