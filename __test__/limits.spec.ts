import { describe, expect, it } from 'vitest';
import { run, runSync, ZipWorkspace } from '../lib/index.js';
import { expectHealthy } from './helpers.js';

const LOOPS: Record<string, string> = {
  'a bare loop': 'for(;;){}',
  'a loop that catches and retries': 'for(;;){ try { for(;;){} } catch (e) {} }',
  'a loop in finally': 'try { for(;;){} } finally { for(;;){} }',
  'catastrophic regex': "/(a+)+$/.test('a'.repeat(40) + '!')",
  'a loop in a getter': 'const o = { get x() { for(;;){} } }; return o.x',
  'a loop in toString': 'const o = { toString() { for(;;){} } }; return `${o}`',
  'a loop in a sort comparator': '[3, 2, 1].sort(() => { for(;;){} })',
  'an async job loop': '(async () => { for(;;) await 0 })(); return 1',
  'a promise-chain loop': 'const spin = () => Promise.resolve().then(spin); spin(); return 1',
  'a catch-everything retry loop': 'for(;;) { try { for(;;){} } catch {} finally { continue } }',
};

describe('TIMEOUT', () => {
  for (const [what, src] of Object.entries(LOOPS)) {
    it(`stops ${what}`, () => {
      const r = runSync(src, { limits: { timeoutMs: 100 } });
      expect(r.error?.code).toBe('TIMEOUT');
      expect(r.error?.message).toBe('execution exceeded 100 ms');
      expect(r.stats.wallMs).toBeGreaterThanOrEqual(100);
      expectHealthy();
    });
  }

  it('a never-settling await ends the run without waiting forever', () => {
    const r = runSync('await new Promise(() => {})', { limits: { timeoutMs: 60_000 } });
    expect(r.error?.code).toBe('TIMEOUT');
    expect(r.error?.message).toMatch(/never settle/);
    expect(r.stats.wallMs).toBeLessThan(30_000);
  });

  it('the default deadline applies when none is given', () => {
    const r = runSync('const t = Date.now(); while (Date.now() - t < 100) {} return 1');
    expect(r.value).toBe(1);
  });
});

describe('MEMORY_LIMIT', () => {
  it('is reported when the guest lets the error escape', () => {
    const r = runSync('const a = []; for(;;) a.push("x".repeat(1000) + a.length)', {
      limits: { memoryBytes: 8 << 20 },
    });
    expect(r.error?.code).toBe('MEMORY_LIMIT');
    expectHealthy();
  });

  it('is reported even when the guest catches the out-of-memory error', () => {
    const r = runSync(
      'try { const a = []; for(;;) a.push("x".repeat(1000) + a.length) } catch (e) {} return "survived"',
      { limits: { memoryBytes: 8 << 20 } },
    );
    expect(r.error?.code).toBe('MEMORY_LIMIT');
    expect(r.value).toBeUndefined();
  });

  it('the cap is per run: a run within its cap succeeds after one that exceeded it', () => {
    runSync('let s = "x"; for(;;) s += s', { limits: { memoryBytes: 4 << 20 } });
    const r = runSync('return "y".repeat(1 << 20).length', { limits: { memoryBytes: 16 << 20 } });
    expect(r.value).toBe(1 << 20);
  });

  it('stats report the heap used', () => {
    const small = runSync('return 1');
    const big = runSync('const a = new Array(1e6).fill(1); return a.length');
    expect(big.stats.heapBytes).toBeGreaterThan(small.stats.heapBytes + 4_000_000);
  });
});

describe('stack', () => {
  it('deep recursion is an error result and the next run works', () => {
    const r = runSync('function f(n) { return f(n + 1) + 1 } return f(0)');
    expect(r.error).toMatchObject({ code: 'EVAL_ERROR', name: 'RangeError' });
    expect(r.error?.message).toMatch(/stack/i);
    expectHealthy();
  });

  it('deep recursion on a worker thread too', async () => {
    const r = await run('const f = (n) => f(n + 1) + 1; return f(0)', { limits: { stackBytes: 8 << 20 } });
    expect(r.error?.name).toBe('RangeError');
  });

  it('a larger stack allows deeper recursion', async () => {
    const src = 'function d(n) { return n === 0 ? 0 : 1 + d(n - 1) } return d(20000)';
    const small = await run(src, { limits: { stackBytes: 128 << 10 } });
    const large = await run(src, { limits: { stackBytes: 16 << 20 } });
    expect(small.error?.name).toBe('RangeError');
    expect(large.value).toBe(20000);
  });
});

describe('OUTPUT_LIMIT', () => {
  it('truncates exactly at the cap and stops the run', () => {
    const r = runSync('emit("a".repeat(1500)); emit("more"); return 1', { limits: { outputBytes: 1024 } });
    expect(r.error?.code).toBe('OUTPUT_LIMIT');
    expect(r.output).toBe('a'.repeat(1024));
  });

  it('cannot be caught by the guest', () => {
    const r = runSync('for(;;) { try { emit("x") } catch (e) {} }', { limits: { outputBytes: 10 } });
    expect(r.error?.code).toBe('OUTPUT_LIMIT');
    expect(r.output).toBe('x'.repeat(10));
  });

  it('console text shares the cap with emit', () => {
    const r = runSync('emit("12345"); console.log("abcdefghij")', { limits: { outputBytes: 10 } });
    expect(r.error?.code).toBe('OUTPUT_LIMIT');
    expect(r.output).toBe('12345');
    expect(r.logs[0].message).toBe('abcde');
  });

  it('never splits a multi-byte character', () => {
    const r = runSync('emit("ab€")', { limits: { outputBytes: 3 } });
    expect(r.error?.code).toBe('OUTPUT_LIMIT');
    expect(r.output).toBe('ab');
  });

  it('output exactly at the cap is fine', () => {
    const r = runSync('emit("abc")', { limits: { outputBytes: 3 } });
    expect(r.ok).toBe(true);
    expect(r.output).toBe('abc');
  });
});

describe('STEP_LIMIT', () => {
  const spin = 'for (let i = 0; ; i++) { if (i % 10 === 0) emit(i + " ") }';

  it('stops a loop at the same point every time, on either entry point', async () => {
    const a = await run(spin, { limits: { steps: 2_000 } });
    const b = runSync(spin, { limits: { steps: 2_000 } });
    expect(a.ok).toBe(false);
    if (a.ok || b.ok) return;
    expect(a.error.code).toBe('STEP_LIMIT');
    expect(a.error.message).toContain('2000 steps');
    expect(b.error.code).toBe('STEP_LIMIT');
    expect(a.output).not.toBe('');
    expect(b.output).toBe(a.output);
    expect(a.stats.steps).toBe(2_000);
    await expectHealthy();
  });

  it('counts steps without a budget, and a budget of exactly that many lets the run finish', async () => {
    const src = 'let s = 0; for (let i = 0; i < 500; i++) s += i; return s';
    const free = await run(src);
    expect(free.ok && free.value).toBe(124_750);
    expect(free.stats.steps).toBeGreaterThanOrEqual(500);
    const exact = await run(src, { limits: { steps: free.stats.steps } });
    expect(exact.ok).toBe(true);
    const short = await run(src, { limits: { steps: free.stats.steps - 1 } });
    expect(short.ok ? 'ok' : short.error.code).toBe('STEP_LIMIT');
  });

  it('cannot be caught, and recursion counts one step per call', async () => {
    const caught = await run("try { for (;;) {} } catch { return 'caught' } finally { return 'finally' }", {
      limits: { steps: 1_000 },
    });
    expect(caught.ok ? caught.value : caught.error.code).toBe('STEP_LIMIT');
    const deep = runSync('const f = (n) => (n === 0 ? 0 : 1 + f(n - 1)); return f(300)', { limits: { steps: 250 } });
    expect(deep.ok ? deep.value : deep.error.code).toBe('STEP_LIMIT');
  });

  it('is refused when not a positive whole number', () => {
    for (const steps of [0, -1, 1.5, Number.NaN, 2 ** 54]) {
      const r = runSync('1', { limits: { steps } });
      expect(r.ok ? 'ok' : [r.error.code, r.error.message.startsWith('limits.steps must be')]).toEqual([
        'INVALID_INPUT',
        true,
      ]);
    }
  });

  it('applies to workspace programs too', async () => {
    const ws = new ZipWorkspace();
    ws.writeFile('main.js', 'let n = 0; while (true) n++;');
    const r = await ws.exec('main.js', { limits: { steps: 5_000 } });
    expect(r.ok).toBe(false);
    expect(r.error?.code).toBe('STEP_LIMIT');
    expect(r.stats?.steps).toBe(5_000);
  });
});
