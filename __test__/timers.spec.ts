import { describe, expect, it } from 'vitest';
import { run, runSync, type RunOptions, type RunResult } from '../lib/index.js';

type Runner = (source: string, options?: RunOptions) => Promise<RunResult>;

// Each behaviour holds on every path a run can take: runSync on the calling thread, run() on a
// worker thread, and run() with live globals, time-sliced on the main thread.
const runners: Record<string, Runner> = {
  runSync: async (source, options) => runSync(source, options),
  run: (source, options) => run(source, options),
  'run with globals': (source, options) => run(source, { ...options, globals: { unused: 1 } }),
};

for (const [kind, runner] of Object.entries(runners)) {
  describe(`timers (${kind})`, () => {
    it('an awaited setTimeout resolves after its delay', async () => {
      const started = performance.now();
      const r = await runner(
        'const t0 = Date.now(); await new Promise((r) => setTimeout(r, 60)); return Date.now() - t0',
      );
      expect(r.ok).toBe(true);
      expect(r.ok && (r.value as number)).toBeGreaterThanOrEqual(55);
      expect(performance.now() - started).toBeGreaterThanOrEqual(55);
    });

    it('timers run in order of due time, then of creation, with their arguments', async () => {
      const r = await runner(`
        const order = [];
        setTimeout((x) => order.push(x), 20, 'late');
        setTimeout((x) => order.push(x), 5, 'early');
        setTimeout((x) => order.push(x), 5, 'early-second');
        setTimeout(() => order.push('zero'), 0);
        await new Promise((r) => setTimeout(r, 40));
        return order`);
      expect(r.ok && r.value).toEqual(['zero', 'early', 'early-second', 'late']);
    });

    it('setInterval repeats until cleared; clearTimeout cancels', async () => {
      const r = await runner(`
        let ticks = 0; let cancelled = false;
        const never = setTimeout(() => { cancelled = true }, 5); clearTimeout(never);
        await new Promise((resolve) => { const id = setInterval(() => { if (++ticks === 4) { clearInterval(id); resolve(); } }, 2); });
        await new Promise((r) => setTimeout(r, 15));
        return [ticks, cancelled]`);
      expect(r.ok && r.value).toEqual([4, false]);
    });

    it('a callback that throws fails the run with its error and location', async () => {
      const r = await runner(
        'setTimeout(() => {\n  throw new RangeError("in a timer");\n}, 1);\nawait new Promise((r) => setTimeout(r, 30));\nreturn 1',
      );
      expect(r.ok).toBe(false);
      expect(r.error?.code).toBe('EVAL_ERROR');
      expect(r.error?.name).toBe('RangeError');
      expect(r.error?.message).toBe('in a timer');
      expect(r.error?.line).toBe(2);
    });

    it('waiting on a timer past the deadline is a TIMEOUT at the deadline', async () => {
      const started = performance.now();
      const r = await runner('await new Promise((r) => setTimeout(r, 60_000)); return 1', {
        limits: { timeoutMs: 150 },
      });
      expect(r.error?.code).toBe('TIMEOUT');
      expect(performance.now() - started).toBeLessThan(1500);
    });

    it('timers still pending when the result is ready are dropped', async () => {
      const r = await runner('setTimeout(() => console.log("late"), 5); return "now"');
      expect(r.ok && r.value).toBe('now');
      expect(r.logs).toEqual([]);
    });

    it('a callback must be a function and pending timers are capped', async () => {
      const r = await runner(`
        const refused = (() => { try { setTimeout('code as text', 1); return false } catch (e) { return e instanceof TypeError } })();
        let made = 0;
        try { for (;;) { setTimeout(() => {}, 60_000); made++ } } catch (e) { return [refused, made, e.name] }`);
      expect(r.ok && r.value).toEqual([true, 10_000, 'RangeError']);
    });
  });
}

describe('timers and aborts', () => {
  it('an abort stops a worker run that waits for a timer', async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 30);
    const started = performance.now();
    const r = await run('await new Promise((r) => setTimeout(r, 5000)); return 1', { signal: ac.signal });
    expect(r.error?.code).toBe('CANCELLED');
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('a live run waiting for a timer leaves the event loop free and stops on abort', async () => {
    const ac = new AbortController();
    let ticks = 0;
    const interval = setInterval(() => ticks++, 1);
    setTimeout(() => ac.abort(), 80);
    const r = await run('await new Promise((r) => setTimeout(r, 5000)); return 1', {
      signal: ac.signal,
      globals: { x: 1 },
    });
    clearInterval(interval);
    expect(r.error?.code).toBe('CANCELLED');
    expect(ticks).toBeGreaterThan(10);
  });
});

describe('the deny-by-default profile', () => {
  it('has no timers (console: none)', () => {
    const r = runSync('return [typeof setTimeout, typeof setInterval, typeof clearTimeout]', { console: 'none' });
    expect(r.ok && r.value).toEqual(['undefined', 'undefined', 'undefined']);
  });
});

describe('global aliases', () => {
  it('global and self are the global object', () => {
    const r = runSync('return [global === globalThis, self === globalThis, typeof global.Object]');
    expect(r.ok && r.value).toEqual([true, true, 'function']);
  });

  it('a script may still declare its own self and global, as in Node', () => {
    const declared = runSync("const self = { me: 1 }; let global = 'g'; [self.me, global]", { mode: 'script' });
    expect(declared.ok && declared.value).toEqual([1, 'g']);
    const assigned = runSync('var self = 2; global = 3; [self, globalThis.self, globalThis.global]', {
      mode: 'script',
    });
    expect(assigned.ok && assigned.value).toEqual([2, 2, 3]);
    const d = runSync(
      "const d = Object.getOwnPropertyDescriptor(globalThis, 'global'); [d.writable, d.enumerable, d.configurable]",
      {
        mode: 'script',
      },
    );
    expect(d.ok && d.value).toEqual([true, false, true]);
  });
});
