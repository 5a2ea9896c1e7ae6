import { describe, expect, it } from 'vitest';
import { configure, poolStats, run, runSync } from '../lib/index.js';

const until = async (cond: () => boolean) => {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  return cond();
};

describe('prepared-realm pool', () => {
  it('keeps at most its configured number of realms ready', async () => {
    configure({ poolSize: 3 });
    runSync('return 1');
    expect(await until(() => poolStats().ready === 3)).toBe(true);
    await new Promise((r) => setTimeout(r, 50));
    expect(poolStats().ready).toBe(3);
    configure({ poolSize: 1 });
    expect(poolStats().ready).toBeLessThanOrEqual(1);
    configure({ poolSize: 2 });
  });

  it('a realm is never reused: every run sees a pristine realm', async () => {
    const before = poolStats().taken;
    for (let i = 0; i < 30; i++) {
      const r =
        i % 2
          ? runSync('const s = typeof marker; globalThis.marker = 1; return s')
          : await run('const s = typeof marker; globalThis.marker = 1; return s');
      expect(r.value).toBe('undefined');
    }
    // Plain runs derive their realm from their thread's template; the pool serves only runs
    // that find the template busy.
    expect(poolStats().taken - before).toBe(0);
  });

  it('timed-out, crashed and out-of-memory realms are never handed out again', async () => {
    runSync('globalThis.leak = 1; for(;;){}', { limits: { timeoutMs: 50 } });
    runSync('globalThis.leak = 2; null.x');
    runSync('globalThis.leak = 3; let s = "x"; for(;;) s += s');
    for (let i = 0; i < 10; i++) {
      expect(runSync('return typeof leak').value).toBe('undefined');
    }
  });

  it('serves runs with the requested limits even from prepared realms', () => {
    expect(runSync('emit("abcdef")', { limits: { outputBytes: 3 } }).output).toBe('abc');
    expect(runSync('for(;;){}', { limits: { timeoutMs: 30 } }).error?.code).toBe('TIMEOUT');
    expect(runSync('return read_input()', { input: 'in' }).value).toBe('in');
    expect(runSync('console.log(1); return 2', { console: 'off' }).logs).toEqual([]);
  });

  it('poolSize 0 turns preparation off and runs still work', async () => {
    configure({ poolSize: 0 });
    expect(poolStats().ready).toBe(0);
    expect(runSync('return 6 * 7').value).toBe(42);
    await new Promise((r) => setTimeout(r, 50));
    expect(poolStats().ready).toBe(0);
    configure({ poolSize: 2 });
  });

  it('rejects a bad pool size', () => {
    expect(() => configure({ poolSize: -1 })).toThrow(/INVALID_INPUT/);
    expect(() => configure({ poolSize: 65 })).toThrow(/INVALID_INPUT/);
  });
});
