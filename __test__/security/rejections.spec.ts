import { describe, expect, it } from 'vitest';
import { run, runSync } from '../../lib/index.js';

// Reporting an unhandled rejection reads the reason's name and message, which may run guest
// getters; those getters may reject more promises. The host must report all of it and never
// fail inside its own bookkeeping.
const unhandled = (r: { logs: { level: string; message: string }[] }) =>
  r.logs.filter((l) => l.message.startsWith('Unhandled promise rejection')).map((l) => l.message);

describe('unhandled rejection reporting runs guest getters safely', () => {
  it('a message getter that rejects another promise', () => {
    const r = runSync(`
      const reason = new Error('outer');
      Object.defineProperty(reason, 'message', { get() { Promise.reject(new Error('inner')); return 'outer'; } });
      Promise.reject(reason);
      await null; await null;
      return 'done';`);
    expect(r.ok).toBe(true);
    expect(r.value).toBe('done');
    const lines = unhandled(r);
    expect(lines.some((l) => l.includes('outer'))).toBe(true);
    expect(lines.some((l) => l.includes('inner'))).toBe(true);
  });

  it('a name getter that rejects many promises in a chain', () => {
    const r = runSync(`
      let depth = 0;
      const make = () => {
        const e = new Error('level ' + depth);
        Object.defineProperty(e, 'name', { get() { if (depth < 30) { depth++; Promise.reject(make()); } return 'Chain'; } });
        return e;
      };
      Promise.reject(make());
      for (let i = 0; i < 40; i++) await null;
      return depth;`);
    expect(r.ok).toBe(true);
    expect(unhandled(r).length).toBeGreaterThan(0);
    expect(r.logs.some((l) => l.message.includes('more unhandled rejections'))).toBe(true);
  });

  it('a getter that throws while being described', async () => {
    const r = await run(`
      const e = new Error('x');
      Object.defineProperty(e, 'message', { get() { throw new Error('getter'); } });
      Promise.reject(e);
      await null;
      return 1;`);
    expect(r.ok).toBe(true);
    expect(unhandled(r)).toHaveLength(1);
    const next = runSync('return 2');
    expect(next.ok && next.value).toBe(2);
  });
});
