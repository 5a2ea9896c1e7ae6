// copyOf(value): a host value that reaches the guest as a deep copy instead of a live proxy.
import { describe, expect, it } from 'vitest';
import { copyOf, run, runSync } from '../lib/index.js';

describe('copyOf', () => {
  it('a host function result arrives as a guest copy: plain prototypes, free to change, host untouched', () => {
    const state = { items: [1, 2], when: new Date(0), tags: new Set(['a']), nested: { a: 1 } };
    const r = runSync(
      `const v = get();
       v.items.push(3); v.nested.a = 9; v.tags.add('b');
       return [Array.isArray(v.items), v.items, v.nested.a, Object.getPrototypeOf(v) === Object.prototype,
               v.when instanceof Date, v.tags instanceof Set, [...v.tags], get() === get()]`,
      { globals: { get: () => copyOf(state) } },
    );
    expect(r.ok && r.value).toEqual([true, [1, 2, 3], 9, true, true, true, ['a', 'b'], false]);
    expect(state).toEqual({ items: [1, 2], when: new Date(0), tags: new Set(['a']), nested: { a: 1 } });
  });

  it('works for globals, properties of live objects and awaited host promises', async () => {
    const live = { config: copyOf({ depth: 2 }), count: 0 };
    const r = await run(
      `live.config.depth = 5; live.count = 1;
       const later = await fetchIt();
       return [settings.mode, live.config.depth, later.rows.length, Array.isArray(later.rows)]`,
      {
        globals: { settings: copyOf({ mode: 'fast' }), live, fetchIt: async () => copyOf({ rows: [1, 2, 3] }) },
      },
    );
    expect(r.ok && r.value).toEqual(['fast', 2, 3, true]);
    expect(live.count).toBe(1);
  });

  it('is cheaper than a proxy for data read property by property', () => {
    const rec = { size: 1, kind: 'file', mtime: 0 };
    const code =
      'let s = 0; for (let i = 0; i < 2000; i++) { const r = f(); s += r.size + r.mtime + r.kind.length; } return s';
    const proxied = runSync(code, { globals: { f: () => rec } });
    const copied = runSync(code, { globals: { f: () => copyOf(rec) } });
    expect(proxied.ok && copied.ok && proxied.value === copied.value).toBe(true);
    // Each proxy read of a property is a crossing; a copy crosses once per call.
    expect(copied.stats.hostCalls).toBeLessThan(proxied.stats.hostCalls / 2);
  });
});
