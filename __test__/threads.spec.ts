import { describe, expect, it } from 'vitest';
import { configure, run, runSync } from '../lib/index.js';
import { expectHealthy } from './helpers.js';

describe('run() on quickrealm worker threads', () => {
  it('keeps the event loop ticking during a long run', async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    const r = await run('const t = Date.now(); while (Date.now() - t < 300) {} return 1');
    clearInterval(timer);
    expect(r.value).toBe(1);
    expect(ticks).toBeGreaterThan(10);
  });

  it('runs concurrent calls in parallel up to the worker count', async () => {
    configure({ workers: 2 });
    const busy = 'const t = Date.now(); while (Date.now() - t < 300) {} return 1';
    const started = Date.now();
    const results = await Promise.all([run(busy), run(busy)]);
    const elapsed = Date.now() - started;
    expect(results.every((r) => r.value === 1)).toBe(true);
    // Two 300 ms runs on two workers overlap; run one after the other they would take 600 ms.
    expect(elapsed).toBeLessThan(560);
  });

  it('configure() reports the worker count in force', () => {
    expect(configure({ workers: 3 }).workers).toBe(3);
    expect(configure({ workers: 2 }).workers).toBe(2);
  });

  it('many concurrent runs all complete', async () => {
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => run(`return ${i} * 2`)));
    expect(results.map((r) => r.value)).toEqual(Array.from({ length: 50 }, (_, i) => i * 2));
  });
});

describe('AbortSignal', () => {
  it('stops a running loop with CANCELLED within a few milliseconds', async () => {
    const controller = new AbortController();
    const pending = run('for(;;){}', { signal: controller.signal, limits: { timeoutMs: 20_000 } });
    await new Promise((r) => setTimeout(r, 100));
    const abortedAt = performance.now();
    controller.abort();
    const r = await pending;
    const lag = performance.now() - abortedAt;
    expect(r.error?.code).toBe('CANCELLED');
    expect(lag).toBeLessThan(100);
    expectHealthy();
  });

  it('an already-aborted signal cancels before any guest code runs', async () => {
    const controller = new AbortController();
    controller.abort();
    const r = await run('emit("ran"); return 1', { signal: controller.signal });
    expect(r.error?.code).toBe('CANCELLED');
    expect(r.output).toBe('');
    const s = runSync('emit("ran"); return 1', { signal: controller.signal });
    expect(s.error?.code).toBe('CANCELLED');
  });

  it('a signal that never fires does not change the result', async () => {
    const r = await run('return 7', { signal: new AbortController().signal });
    expect(r.value).toBe(7);
  });
});

describe('unhandled rejections', () => {
  it('are reported in the result, never as a Node unhandledRejection', async () => {
    const seen: unknown[] = [];
    const onUnhandled = (reason: unknown) => seen.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const r = await run(
        'Promise.reject(new Error("lost")); (async () => { throw new TypeError("also lost") })(); return 1',
      );
      expect(r.ok).toBe(true);
      const messages = r.logs.filter((l) => l.level === 'error').map((l) => l.message);
      expect(messages).toContain('Unhandled promise rejection: Error: lost');
      expect(messages).toContain('Unhandled promise rejection: TypeError: also lost');
      const s = runSync('Promise.reject(1); return 2');
      expect(s.logs[0].message).toMatch(/Unhandled promise rejection/);
      await new Promise((r) => setTimeout(r, 20));
      expect(seen).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('a rejection handled later is not reported', () => {
    const r = runSync('const p = Promise.reject(new Error("x")); await 0; await p.catch(() => {}); return 1');
    expect(r.ok).toBe(true);
    expect(r.logs).toEqual([]);
  });
});
