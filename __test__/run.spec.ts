import { describe, expect, it } from 'vitest';
import { run, runSync } from '../lib/index.js';

describe('modes', () => {
  it('function mode: return and top-level await', () => {
    const r = runSync('const x = await Promise.resolve(40); return x + 2;');
    expect(r.ok).toBe(true);
    expect(r.value).toBe(42);
  });

  it('script mode: the completion value', () => {
    expect(runSync('const a = 6; a * 7', { mode: 'script' }).value).toBe(42);
    expect(runSync('return 1', { mode: 'script' }).error?.name).toBe('SyntaxError');
  });

  it('module mode: the exports namespace', () => {
    const r = runSync('export const a = 1; export default await Promise.resolve("d");', { mode: 'module' });
    expect(r.ok).toBe(true);
    expect(r.value).toEqual({ a: 1, default: 'd' });
  });

  it('a promise completion value is awaited in script mode', () => {
    expect(runSync('Promise.resolve(5)', { mode: 'script' }).value).toBe(5);
  });

  it('strict mode everywhere: undeclared assignment throws', () => {
    for (const mode of ['function', 'script', 'module'] as const) {
      const r = runSync('undeclaredName = 1', { mode });
      expect(r.error?.name, mode).toBe('ReferenceError');
    }
  });
});

describe('error reports', () => {
  const src = ['const user = { name: "Ada" };', 'const city = user.address.city;', 'return city;'].join('\n');

  it('line, column and frame match the caller source in function mode', () => {
    const e = runSync(src).error!;
    expect(e.code).toBe('EVAL_ERROR');
    expect(e.name).toBe('TypeError');
    expect(e.message).toContain("'city'");
    expect(e.line).toBe(2);
    expect(e.column).toBe(14);
    expect(e.frame).toContain('> 2 | const city = user.address.city;');
    expect(e.frame).toMatch(/\n {4}\| {14}\^/);
  });

  it('first-line errors are not shifted by the function wrapper', () => {
    const e = runSync('throw new Error("boom")').error!;
    expect(e).toMatchObject({ code: 'EVAL_ERROR', name: 'Error', message: 'boom', line: 1, column: 11 });
  });

  it('locations in script and module mode', () => {
    for (const mode of ['script', 'module'] as const) {
      const e = runSync('1;\n\n  null.x', { mode }).error!;
      expect([e.line, e.column], mode).toEqual([3, 3]);
    }
  });

  it('syntax errors carry a location', () => {
    const e = runSync('let a = 1;\nlet b = ;').error!;
    expect(e.name).toBe('SyntaxError');
    expect(e.line).toBe(2);
    expect(e.frame).toContain('> 2 | let b = ;');
  });

  it('stack holds guest frames only', () => {
    const e = runSync('function inner() { throw new Error("x") }\nfunction outer() { inner() }\nouter()', {
      filename: 'agent.js',
    }).error!;
    expect(e.stack).toContain('inner (agent.js:1:');
    expect(e.stack).toContain('outer (agent.js:2:');
    expect(e.stack).not.toMatch(/\/work|node_modules|\.node/);
  });

  it('throwing a non-error value is reported readably', () => {
    const e = runSync('throw { reason: "nope" }').error!;
    expect(e.code).toBe('EVAL_ERROR');
    expect(e.message).toContain("reason: 'nope'");
  });

  it('a rejected await is the run error', () => {
    const e = runSync('await Promise.reject(new RangeError("late"))').error!;
    expect(e).toMatchObject({ code: 'EVAL_ERROR', name: 'RangeError', message: 'late' });
  });
});

describe('console, emit and read_input', () => {
  it('captures every level, formats objects readably', () => {
    const r = runSync(
      "console.log('a', 1, {b: [1, 'x']}); console.info(null); console.warn(undefined); console.error(new TypeError('t')); console.debug(-0, 5n, [1,[2,[3,[4]]]])",
    );
    expect(r.logs.map((l) => l.level)).toEqual(['log', 'info', 'warn', 'error', 'debug']);
    expect(r.logs[0].message).toBe("a 1 { b: [ 1, 'x' ] }");
    expect(r.logs[1].message).toBe('null');
    expect(r.logs[2].message).toBe('undefined');
    expect(r.logs[3].message).toMatch(/^TypeError: t/);
    expect(r.logs[4].message).toBe('-0 5n [ 1, [ 2, [ 3, [Array] ] ] ]');
  });

  it('bounds huge objects and marks cycles', () => {
    const r = runSync('const a = Array.from({length: 1000}, (_, i) => i); const o = {a}; o.self = o; console.log(o)');
    expect(r.logs[0].message).toContain('... 900 more items');
    expect(r.logs[0].message).toMatch(/^<ref \*1> \{/);
    expect(r.logs[0].message).toContain('self: [Circular *1]');
  });

  it("console: 'off' keeps console but records nothing; 'none' removes it", () => {
    const off = runSync("console.log('x'); return typeof console", { console: 'off' });
    expect(off.value).toBe('object');
    expect(off.logs).toEqual([]);
    expect(runSync('return typeof console', { console: 'none' }).value).toBe('undefined');
  });

  it('emit and read_input', () => {
    const r = runSync('emit(read_input().toUpperCase()); emit(42)', { input: 'hello' });
    expect(r.output).toBe('HELLO42');
    expect(runSync('return read_input()').value).toBe('');
  });
});

describe('data in, results out', () => {
  it('data is a deep copy: guest edits do not reach the host object', () => {
    const order = { items: [1, 2], meta: { tag: 'a' } };
    const r = runSync('order.items.push(3); order.meta.tag = "b"; return order', { data: { order } });
    expect(r.value).toEqual({ items: [1, 2, 3], meta: { tag: 'b' } });
    expect(order).toEqual({ items: [1, 2], meta: { tag: 'a' } });
  });

  it('round-trips rich values', () => {
    const when = new Date('2024-05-06T07:08:09.010Z');
    const data = {
      u: undefined,
      n: null,
      big: 2n ** 80n,
      negBig: -(2n ** 70n),
      date: when,
      map: new Map<unknown, unknown>([
        ['k', 1],
        [2, { x: [1] }],
      ]),
      set: new Set([1, 'two']),
      bytes: new Uint8Array([1, 2, 255]),
      floats: new Float64Array([1.5, -0]),
      ab: new Uint8Array([9, 8]).buffer,
      nested: { deep: [{ a: [1, { b: 'c' }] }] },
    };
    const r = runSync('return data', { data: { data } });
    expect(r.ok).toBe(true);
    const v = r.value as typeof data;
    expect(v.u).toBeUndefined();
    expect('u' in v).toBe(true);
    expect(v.big).toBe(2n ** 80n);
    expect(v.negBig).toBe(-(2n ** 70n));
    expect(v.date).toBeInstanceOf(Date);
    expect(v.date.getTime()).toBe(when.getTime());
    expect(v.map).toEqual(data.map);
    expect(v.set).toEqual(data.set);
    expect(v.bytes).toBeInstanceOf(Uint8Array);
    expect([...v.bytes]).toEqual([1, 2, 255]);
    expect(v.floats).toBeInstanceOf(Float64Array);
    expect(Object.is(v.floats[1], -0)).toBe(true);
    expect(v.ab).toBeInstanceOf(ArrayBuffer);
    expect([...new Uint8Array(v.ab)]).toEqual([9, 8]);
    expect(v.nested).toEqual(data.nested);
  });

  it('guest types survive in the guest', () => {
    const r = runSync(
      'return [typeof big, date instanceof Date, map instanceof Map, set.has(2), bytes instanceof Uint8Array, bytes[1]]',
      { data: { big: 5n, date: new Date(0), map: new Map(), set: new Set([2]), bytes: new Uint8Array([0, 7]) } },
    );
    expect(r.value).toEqual(['bigint', true, true, true, true, 7]);
  });

  it('special numbers and strings come back exactly', () => {
    const r = runSync("return [-0, NaN, Infinity, -Infinity, '\\ud800', 'é😀', 2n ** 200n, 1e21]");
    const v = r.value as unknown[];
    expect(Object.is(v[0], -0)).toBe(true);
    expect(v[1]).toBeNaN();
    expect(v[2]).toBe(Infinity);
    expect(v[3]).toBe(-Infinity);
    expect(v[4]).toBe('\ud800');
    expect(v[5]).toBe('é😀');
    expect(v[6]).toBe(2n ** 200n);
    expect(v[7]).toBe(1e21);
  });

  it('functions and symbols in results are dropped like JSON does', () => {
    const r = runSync('return { f() {}, s: Symbol("x"), keep: 1, arr: [() => 1, Symbol.iterator] }');
    expect(r.ok).toBe(true);
    expect(r.value).toEqual({ keep: 1, arr: [null, null] });
    expect(runSync('return () => 1').value).toBeUndefined();
  });

  it('errors in results become { name, message }', () => {
    expect(runSync('return new TypeError("t")').value).toEqual({ name: 'TypeError', message: 't' });
  });

  it('result getters run under the deadline', () => {
    const r = runSync('return { get x() { for(;;){} } }', { limits: { timeoutMs: 100 } });
    expect(r.error?.code).toBe('TIMEOUT');
  });
});

describe('run() vs runSync()', () => {
  it('produce the same result shape', async () => {
    const a = runSync('emit("x"); console.log(1); return {a: 1}');
    const b = await run('emit("x"); console.log(1); return {a: 1}');
    expect(b.ok).toBe(true);
    expect({ ...b, stats: undefined }).toEqual({ ...a, stats: undefined });
    expect(b.stats.heapBytes).toBeGreaterThan(0);
    expect(b.stats.wallMs).toBeGreaterThan(0);
  });

  it('nothing survives between runs', () => {
    runSync('globalThis.leak = 1');
    expect(runSync('return typeof leak').value).toBe('undefined');
  });
});
