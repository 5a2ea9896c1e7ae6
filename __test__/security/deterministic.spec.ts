// A deterministic run has no clock of its own to read: Date, performance and the random sources
// are virtual, so code cannot time itself (or the host) and cannot tell two runs apart.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { run, runSync } from '../../lib/index.js';

const OPTIONS = { deterministic: { seed: 1234, now: Date.UTC(2025, 5, 1) } };

describe('deterministic runs reveal no time and no host randomness', () => {
  it('a busy loop takes no time on any clock the guest can read', () => {
    const r = runSync(
      `const t0 = performance.now(), d0 = Date.now(), s0 = new Date().getTime();
       let x = 0; for (let i = 0; i < 3e6; i++) x += i;
       return [performance.now() - t0, Date.now() - d0, new Date().getTime() - s0, performance.timeOrigin]`,
      OPTIONS,
    );
    expect(r.ok && r.value).toEqual([0, 0, 0, Date.UTC(2025, 5, 1)]);
  });

  it('every clock reading is the same in runs made at different real times', async () => {
    const body = `return [Date.now(), String(new Date()), Date(), new Date().toISOString(), performance.now(), performance.timeOrigin,
      Math.random(), Array.from(crypto.getRandomValues(new Uint32Array(4))), crypto.randomUUID()]`;
    const first = runSync(body, OPTIONS);
    await new Promise((r) => setTimeout(r, 30));
    const second = runSync(body, OPTIONS);
    const third = await run(body, OPTIONS);
    expect(first.ok).toBe(true);
    expect(second.value).toEqual(first.value);
    expect(third.value).toEqual(first.value);
  });

  it('timers cannot measure work: only their own delays move the clock', async () => {
    const r = await run(
      `const marks = [];
       setTimeout(() => { let x = 0; for (let i = 0; i < 2e6; i++) x += i; marks.push(performance.now()) }, 5);
       setTimeout(() => marks.push(performance.now()), 6);
       await new Promise((r) => setTimeout(r, 10));
       return marks`,
      OPTIONS,
    );
    expect(r.ok && r.value).toEqual([5, 6]);
  });

  it('promise jobs and microtasks do not move the clock', async () => {
    const r = await run(
      `const t = Date.now(); for (let i = 0; i < 1000; i++) await null; await Promise.all([1, 2].map(async (x) => x));
       return Date.now() - t`,
      OPTIONS,
    );
    expect(r.ok && r.value).toBe(0);
  });

  it('the seed alone decides the random values; non-deterministic runs still differ', () => {
    const draw = (options?: object) => runSync('return [Math.random(), crypto.randomUUID()]', options).value;
    expect(draw({ deterministic: { seed: 99 } })).toEqual(draw({ deterministic: { seed: 99, now: 5 } }));
    expect(draw()).not.toEqual(draw());
  });

  it('a deterministic run is never served a prepared realm that already read the real clock', () => {
    // Prepared realms are built ahead of time with the real clock; a deterministic run builds
    // its own. Take several in a row so any pooled realm would be used.
    const values = Array.from({ length: 5 }, () => runSync('return performance.timeOrigin', OPTIONS).value);
    expect(new Set(values)).toEqual(new Set([Date.UTC(2025, 5, 1)]));
  });

  it("local time is UTC whatever the host's time zone, and only in deterministic runs", () => {
    // A separate process with another time zone: the engine reads the zone from the process.
    const lib = join(__dirname, '..', '..', 'lib', 'index.js');
    const script = `const { runSync } = require(${JSON.stringify(lib)});
      const body = 'const d = new Date(Date.UTC(2025, 0, 15, 12)); return [d.getTimezoneOffset(), d.getHours(), String(d), new Date(2025, 0, 15, 12).getTime()]';
      process.stdout.write(JSON.stringify([runSync(body, { deterministic: true }).value, runSync(body).value]));`;
    const out = execFileSync(process.execPath, ['-e', script], {
      env: { ...process.env, TZ: 'America/New_York' },
      encoding: 'utf8',
    });
    const [fixed, host] = JSON.parse(out);
    expect(fixed).toEqual([0, 12, 'Wed Jan 15 2025 12:00:00 GMT+0000', Date.UTC(2025, 0, 15, 12)]);
    expect(host[0]).toBe(300);
    expect(host[1]).toBe(7);
  });
});
