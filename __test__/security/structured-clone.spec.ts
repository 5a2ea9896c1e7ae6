import { describe, expect, it } from 'vitest';
import { run, runSync } from '../../lib/index.js';
import { expectHealthy } from '../helpers.js';

// Copies keep the shape of the object graph in both directions: a value reached twice is one
// value on the other side, cycles are rebuilt, and every reference still counts against the caps.
type Runner = (code: string, options?: Parameters<typeof runSync>[1]) => Promise<ReturnType<typeof runSync>>;
const runners: [string, Runner][] = [
  ['runSync', async (code, options) => runSync(code, options)],
  ['run', (code, options) => run(code, options)],
];

const timed = async <T>(f: () => Promise<T>): Promise<[T, number]> => {
  const started = performance.now();
  const value = await f();
  return [value, performance.now() - started];
};

const dag = () => {
  let x: unknown = {};
  for (let i = 0; i < 20; i++) x = [x, x];
  return x;
};

describe.each(runners)('results keep shared references and cycles (%s)', (_, exec) => {
  it('a shared sub-object is one host object', async () => {
    const r = await exec('const o = {a: 1}; return [o, o, {o}]');
    expect(r.ok).toBe(true);
    const v = r.value as [object, object, { o: object }];
    expect(v[0]).toEqual({ a: 1 });
    expect(v[0]).toBe(v[1]);
    expect(v[2].o).toBe(v[0]);
  });

  it('a self-cycle through an array', async () => {
    const r = await exec('const a = []; a.push(a); return a');
    expect(r.ok).toBe(true);
    const v = r.value as unknown[];
    expect(v).toHaveLength(1);
    expect(v[0]).toBe(v);
  });

  it('an object cycle', async () => {
    const r = await exec('const a = { b: {} }; a.b.a = a; return a');
    expect(r.ok).toBe(true);
    const v = r.value as { b: { a: unknown } };
    expect(v.b.a).toBe(v);
  });

  it('cycles through a Map value, a Map key and a Set', async () => {
    const r = await exec(
      'const m = new Map(); m.set("self", m); m.set(m, 1); const s = new Set(); s.add(s); s.add(m); return { m, s }',
    );
    expect(r.ok).toBe(true);
    const { m, s } = r.value as { m: Map<unknown, unknown>; s: Set<unknown> };
    expect(m).toBeInstanceOf(Map);
    expect(m.get('self')).toBe(m);
    expect(m.get(m)).toBe(1);
    expect(s).toBeInstanceOf(Set);
    expect(s.has(s)).toBe(true);
    expect(s.has(m)).toBe(true);
  });

  it('shared dates and typed arrays stay shared', async () => {
    const r = await exec('const d = new Date(5); const b = new Uint8Array([1, 2]); return [d, d, b, b]');
    expect(r.ok).toBe(true);
    const v = r.value as [Date, Date, Uint8Array, Uint8Array];
    expect(v[0]).toBeInstanceOf(Date);
    expect(v[0]).toBe(v[1]);
    expect(v[2]).toEqual(new Uint8Array([1, 2]));
    expect(v[2]).toBe(v[3]);
  });

  it('a 2^20-path DAG copies quickly and keeps its sharing', async () => {
    const [r, ms] = await timed(() => exec('let x = {}; for (let i = 0; i < 20; i++) x = [x, x]; return x'));
    expect(r.ok).toBe(true);
    let v = r.value as unknown[];
    for (let i = 0; i < 19; i++) {
      expect(v[0]).toBe(v[1]);
      v = v[0] as unknown[];
    }
    expect(v[0]).toEqual({});
    expect(ms).toBeLessThan(500);
  });

  it('repeated references still count against the value cap', async () => {
    const r = await exec('const o = {}; return [Array(600000).fill(o), Array(600000).fill(o)]');
    expect(r.ok).toBe(false);
    expect(r.error?.code).toBe('EVAL_ERROR');
    expect(r.error?.message).toMatch(/more than 1000000 values/);
  });

  it('a result of 2 million distinct objects is still refused', async () => {
    const r = await exec('return Array.from({length: 1000}, () => Array.from({length: 2000}, () => ({})))', {
      limits: { memoryBytes: 1 << 30 },
    });
    expect(r.ok).toBe(false);
    expect(r.error?.code).toBe('EVAL_ERROR');
    expect(r.error?.message).toMatch(/cannot be copied out: more than 1000000 values/);
  });

  it('a shared reference does not deepen the copy; the depth cap still holds', async () => {
    const shallow = await exec(
      'const o = {}; const a = [o]; let v = a; for (let i = 0; i < 200; i++) v = [v, o]; return v',
    );
    expect(shallow.ok).toBe(true);
    const deep = await exec('let v = 0; for (let i = 0; i < 1e5; i++) v = [v]; return v');
    expect(deep.ok).toBe(false);
    expect(deep.error?.message).toMatch(/nesting deeper/);
  });
});

describe.each(runners)('data keeps shared references and cycles (%s)', (_, exec) => {
  it('a deep host DAG is shared inside the realm', async () => {
    const [r, ms] = await timed(() =>
      exec(
        'let v = d, n = 0; while (Array.isArray(v)) { if (v[0] !== v[1]) return "unshared at " + n; v = v[0]; n++; } return n',
        { data: { d: dag() } },
      ),
    );
    expect(r.ok && r.value).toBe(20);
    expect(ms).toBeLessThan(500);
  });

  it('a host cycle is a cycle inside the realm', async () => {
    const c: Record<string, unknown> = { n: 1 };
    c.self = c;
    const m = new Map<unknown, unknown>();
    m.set('me', m);
    const s = new Set<unknown>();
    s.add(s);
    const r = await exec('return [c.self === c, c.self.self.n, m.get("me") === m, s.has(s)]', { data: { c, m, s } });
    expect(r.ok && r.value).toEqual([true, 1, true, true]);
  });

  it('a value shared between two data keys is one value', async () => {
    const shared = { n: 1 };
    const r = await exec('a.x.n = 2; return [a.x === b, b.n]', { data: { a: { x: shared }, b: shared } });
    expect(r.ok && r.value).toEqual([true, 2]);
    expect(shared.n).toBe(1);
  });

  it('a cyclic value round-trips', async () => {
    const c: unknown[] = [];
    c.push(c, { back: c });
    const r = await exec('return c', { data: { c } });
    expect(r.ok).toBe(true);
    const v = r.value as [unknown, { back: unknown }];
    expect(v).not.toBe(c);
    expect(v[0]).toBe(v);
    expect(v[1].back).toBe(v);
  });

  it('repeated references still count against the value cap', async () => {
    const o = {};
    const r = await exec('return 1', { data: { a: Array(600_000).fill(o), b: Array(600_000).fill(o) } });
    expect(r.error?.code).toBe('INVALID_INPUT');
    expect(r.error?.message).toMatch(/more than 1000000 values/);
  });

  it('data of 2 million distinct objects is still refused', async () => {
    const d = Array.from({ length: 1000 }, () => Array.from({ length: 2000 }, () => ({})));
    const r = await exec('return 1', { data: { d } });
    expect(r.error?.code).toBe('INVALID_INPUT');
    expect(r.error?.message).toMatch(/more than 1000000 values/);
    expectHealthy();
  });
});
