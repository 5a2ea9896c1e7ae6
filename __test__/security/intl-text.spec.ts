// Intl.Segmenter and the locale-aware case mappings run native code (ICU4X) over the guest's
// string on the guest's thread. Large strings must stay within the run's limits: the breaks are
// kept in the run's heap (MEMORY_LIMIT when they do not fit), the work is counted toward the
// deadline (TIMEOUT, on time), and the host neither crashes nor keeps memory of its own.
import { describe, expect, it } from 'vitest';
import { runSync } from '../../lib/index.js';
import { expectHealthy } from '../helpers.js';

function rssGrowthMiB(action: () => void): number {
  (globalThis as { gc?: () => void }).gc?.();
  const before = process.memoryUsage().rss;
  action();
  return (process.memoryUsage().rss - before) / (1 << 20);
}

describe('Intl.Segmenter on large strings', () => {
  it('the breaks count toward the memory limit: MEMORY_LIMIT, not host memory', () => {
    let r: ReturnType<typeof runSync> | undefined;
    const growth = rssGrowthMiB(() => {
      // 6 million graphemes need 24 MB of breaks, past a 16 MiB limit.
      r = runSync(
        `const s = 'a'.repeat(6e6); let n = 0; for (const _ of new Intl.Segmenter().segment(s)) n++; return n`,
        {
          limits: { memoryBytes: 16 << 20, timeoutMs: 20_000 },
        },
      );
    });
    expect(r?.error?.code).toBe('MEMORY_LIMIT');
    expect(growth).toBeLessThan(200);
    expectHealthy();
  });

  for (const granularity of ['grapheme', 'word', 'sentence']) {
    it(`a deadline stops ${granularity} segmentation of a huge string on time`, () => {
      const started = Date.now();
      const r = runSync(
        `const s = 'ab 中文字 cd. '.repeat(4e5); const seg = new Intl.Segmenter('zh', { granularity: '${granularity}' });
         for (;;) seg.segment(s).containing(0)`,
        { limits: { timeoutMs: 150, memoryBytes: 256 << 20 } },
      );
      expect(r.error?.code).toBe('TIMEOUT');
      expect(Date.now() - started).toBeLessThan(2000);
      expectHealthy();
    });
  }

  it('an abandoned iteration and many Segments objects leave nothing behind', () => {
    const r = runSync(
      `const seg = new Intl.Segmenter('en', { granularity: 'word' }); let n = 0;
       for (let i = 0; i < 2000; i++) { const it = seg.segment('word '.repeat(100))[Symbol.iterator](); it.next(); n++ }
       return n`,
      { limits: { memoryBytes: 16 << 20 } },
    );
    expect(r.value).toBe(2000);
    expectHealthy();
  });

  it('containing() on a long string is a binary search, not a walk', () => {
    const r = runSync(
      `const s = new Intl.Segmenter('en', { granularity: 'word' }).segment('lorem ipsum '.repeat(1e5));
       let n = 0; for (let i = 0; i < 2e5; i++) n += s.containing((i * 7919) % 1.2e6).index > -1;
       return n`,
      { limits: { timeoutMs: 5000 } },
    );
    expect(r.value).toBe(2e5);
  });

  it('one giant segment (a million combining marks) is linear', () => {
    const r = runSync(`const s = 'a' + '\\u0301'.repeat(1e6); return [...new Intl.Segmenter().segment(s)].length`, {
      limits: { timeoutMs: 5000 },
    });
    expect(r.value).toBe(1);
  });
});

describe('toLocaleUpperCase/toLocaleLowerCase on large strings', () => {
  it('an expanding mapping past the memory limit is MEMORY_LIMIT', () => {
    let r: ReturnType<typeof runSync> | undefined;
    const growth = rssGrowthMiB(() => {
      // ß uppercases to SS and ŉ to ʼN: the result is twice as long.
      r = runSync(`let s = 'ßŉ'.repeat(3e6); for (;;) s = s.toLocaleUpperCase('tr') + s`, {
        limits: { memoryBytes: 32 << 20, timeoutMs: 20_000 },
      });
    });
    expect(r?.error?.code).toBe('MEMORY_LIMIT');
    expect(growth).toBeLessThan(300);
    expectHealthy();
  });

  it('a deadline stops repeated mapping of a large string on time', () => {
    const started = Date.now();
    const r = runSync(`const s = 'İstanbul ıi '.repeat(5e5); for (;;) s.toLocaleLowerCase('tr')`, {
      limits: { timeoutMs: 150, memoryBytes: 256 << 20 },
    });
    expect(r.error?.code).toBe('TIMEOUT');
    expect(Date.now() - started).toBeLessThan(2000);
    expectHealthy();
  });

  it('a long text without white space is still mapped in one linear pass', () => {
    const r = runSync(`const u = 'ı'.repeat(2e6).toLocaleUpperCase('tr'); return [u.length, u[0], u[u.length - 1]]`, {
      limits: { timeoutMs: 5000 },
    });
    expect(r.value).toEqual([2e6, 'I', 'I']);
  });
});
