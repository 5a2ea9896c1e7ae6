// `deterministic: { seed, now }`: the same code with the same values gives the same result;
// Date reads a virtual clock that timers move; Math.random and crypto draw from the seed.
import { describe, expect, it } from 'vitest';
import { run, runSync, ZipWorkspace } from '../lib/index.js';

const SAMPLE = `return {
  now: Date.now(), iso: new Date().toISOString(), perf: performance.now(),
  random: [Math.random(), Math.random(), Math.random()],
  bytes: Array.from(crypto.getRandomValues(new Uint8Array(8))),
  uuid: crypto.randomUUID(),
}`;

function sample(options: Parameters<typeof runSync>[1]): Record<string, unknown> {
  const r = runSync(SAMPLE, options);
  if (!r.ok) throw new Error(r.error.message);
  return r.value as Record<string, unknown>;
}

describe('deterministic runs', () => {
  it('the same seed and clock give the same values, run after run', () => {
    const options = { deterministic: { seed: 42, now: Date.UTC(2026, 0, 15, 9, 30) } };
    const first = sample(options);
    expect(sample(options)).toEqual(first);
    expect(first.now).toBe(Date.UTC(2026, 0, 15, 9, 30));
    expect(first.iso).toBe('2026-01-15T09:30:00.000Z');
    expect(first.perf).toBe(0);
    expect(first.uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('another seed gives other random values but the same clock', () => {
    const a = sample({ deterministic: { seed: 1, now: 0 } });
    const b = sample({ deterministic: { seed: 2, now: 0 } });
    expect(a.random).not.toEqual(b.random);
    expect(a.bytes).not.toEqual(b.bytes);
    expect(a.uuid).not.toEqual(b.uuid);
    expect(a.now).toBe(b.now);
  });

  it('random values are spread as Math.random promises', () => {
    const r = runSync(
      `const xs = Array.from({ length: 2000 }, Math.random);
      return [Math.min(...xs) >= 0, Math.max(...xs) < 1, new Set(xs).size, xs.reduce((a, b) => a + b) / xs.length]`,
      {
        deterministic: { seed: 9 },
      },
    );
    expect(r.ok).toBe(true);
    const [lo, hi, distinct, mean] = r.value as [boolean, boolean, number, number];
    expect([lo, hi, distinct]).toEqual([true, true, 2000]);
    expect(Math.abs(mean - 0.5)).toBeLessThan(0.05);
  });

  it('without the option, runs use real time and fresh randomness', () => {
    const before = Date.now();
    const a = sample(undefined);
    const b = sample(undefined);
    expect(a.random).not.toEqual(b.random);
    expect(a.now as number).toBeGreaterThanOrEqual(before - 1);
  });

  it('`true` means seed 0 at the epoch, and a Date is accepted as now', () => {
    expect(sample({ deterministic: true })).toEqual(sample({ deterministic: { seed: 0, now: 0 } }));
    expect(sample({ deterministic: { now: new Date('2030-05-05T05:05:05Z') } }).iso).toBe('2030-05-05T05:05:05.000Z');
  });

  it('timers fire in virtual time: an hour of sleeps takes no real time and moves the clock', async () => {
    const started = Date.now();
    const r = await run(
      `const t0 = Date.now(); const order = [];
       setTimeout(() => order.push('late'), 3_000_000);
       setTimeout(() => order.push('early'), 10);
       const id = setInterval(() => { order.push('tick'); if (order.filter((x) => x === 'tick').length === 3) clearInterval(id) }, 1000);
       await new Promise((r) => setTimeout(r, 3_600_000));
       return [Date.now() - t0, performance.now(), order]`,
      { deterministic: { seed: 3, now: 1_000_000 } },
    );
    expect(Date.now() - started).toBeLessThan(2000);
    expect(r.ok && r.value).toEqual([3_600_000, 3_600_000, ['early', 'tick', 'tick', 'tick', 'late']]);
  });

  it('a deterministic run still stops at its deadline', async () => {
    const r = await run(`for (;;) { await new Promise((r) => setTimeout(r, 1)) }`, {
      deterministic: true,
      limits: { timeoutMs: 200 },
    });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.code).toBe('TIMEOUT');
  });

  it('live runs (with host globals) are deterministic too', async () => {
    const options = { deterministic: { seed: 5, now: 86_400_000 }, globals: { host: { label: 'x' } } };
    const body = `await null; return [host.label, Date.now(), Math.random()]`;
    const a = await run(body, options);
    const b = await run(body, options);
    expect(a.ok && a.value).toEqual(b.ok && b.value);
    expect(a.ok && (a.value as unknown[])[1]).toBe(86_400_000);
  });

  it('bad values are INVALID_INPUT with a clear message', () => {
    const bad: unknown[] = [
      { seed: -1 },
      { seed: 1.5 },
      { seed: '7' },
      { now: 'tomorrow' },
      { now: Number.NaN },
      { speed: 1 },
      'yes',
    ];
    for (const deterministic of bad) {
      const r = runSync('return 1', { deterministic } as never);
      expect(r.ok).toBe(false);
      if (!r.ok) {
        expect(r.error.code).toBe('INVALID_INPUT');
        expect(r.error.message).toMatch(/deterministic/);
      }
    }
  });

  it('workspace runs take the same option', async () => {
    const ws = new ZipWorkspace();
    ws.writeFile(
      'main.ts',
      'await new Promise((r) => setTimeout(r, 1500));\nconsole.log(new Date().toISOString(), Math.random(), crypto.randomUUID());\n',
    );
    const options = { deterministic: { seed: 8, now: new Date('2026-03-01T00:00:00Z') } };
    const first = await ws.exec('main.ts', options);
    const second = await ws.exec('main.ts', options);
    expect(first.error).toBeUndefined();
    expect(first.stdout.startsWith('2026-03-01T00:00:01.500Z ')).toBe(true);
    expect(second.stdout).toBe(first.stdout);
    const other = await ws.exec('main.ts', { deterministic: { seed: 9, now: new Date('2026-03-01T00:00:00Z') } });
    expect(other.stdout).not.toBe(first.stdout);
  });
});
