// structuredClone inside the realm, checked against Node's on the same values.
import { describe, expect, it } from 'vitest';
import { runSync } from '../../lib/index.js';

function inRealm(body: string): unknown {
  const r = runSync(body);
  return r.ok ? r.value : `error: ${r.error?.name}: ${r.error?.message}`;
}

/** Each case builds a value, clones it and describes the clone, in Node and in the realm. */
const CASES: Record<string, string> = {
  'nested plain data': `const v = { a: [1, 'two', null, true, { b: 3.5 }], s: 'x' }; const c = structuredClone(v); return [c !== v, c.a !== v.a, JSON.stringify(c)]`,
  'dates, maps and sets': `const v = { d: new Date(86400000), m: new Map([['k', { n: 1 }]]), s: new Set([1, 2]) }; const c = structuredClone(v);
    return [c.d instanceof Date, c.d.getTime(), c.m instanceof Map, c.m.get('k').n, c.m.get('k') !== v.m.get('k'), [...c.s]]`,
  'shared references stay shared': `const shared = { n: 1 }; const c = structuredClone({ x: shared, y: [shared] }); return [c.x === c.y[0], c.x !== shared]`,
  'cycles are kept': `const v = { name: 'root' }; v.self = v; v.list = [v]; const c = structuredClone(v); return [c.self === c, c.list[0] === c, c !== v]`,
  'typed arrays and buffers': `const c = structuredClone({ u: new Uint16Array([1, 65535]), b: new Uint8Array([7, 8]).buffer });
    return [c.u instanceof Uint16Array, Array.from(c.u), c.b instanceof ArrayBuffer, Array.from(new Uint8Array(c.b))]`,
  'primitives and bigints': `return [structuredClone(1.5), structuredClone('s'), structuredClone(null), structuredClone(undefined) === undefined, structuredClone(12345678901234567890n) === 12345678901234567890n]`,
  'getters are read, not copied as accessors': `let reads = 0; const v = { get g() { reads++; return 'got' } }; const c = structuredClone(v); return [c.g, reads, typeof Object.getOwnPropertyDescriptor(c, 'g').get]`,
  'a function or symbol given directly is a DataCloneError': `const attempt = (f) => { try { f(); return 'cloned' } catch (e) { return e.name } }; return [attempt(() => structuredClone(() => 1)), attempt(() => structuredClone(Symbol('s')))]`,
  'regular expressions stay regular expressions (lastIndex reset)': `const re = /a(b)?/giu; re.lastIndex = 3; const c = structuredClone({ re }).re;
    return [c instanceof RegExp, c.source, c.flags, c.lastIndex, c !== re, c.test('xAb')]`,
  'errors keep their type, message, stack and cause': `const e = new RangeError('out of range', { cause: { code: 7 } }); const c = structuredClone(e);
    return [c instanceof RangeError, c.name, c.message, c.cause, c.cause !== e.cause, c.stack === e.stack, Object.keys(c)]`,
  'an error of a custom class becomes an Error': `class AppError extends Error { constructor(m) { super(m); this.name = 'AppError'; this.status = 500 } }
    const c = structuredClone(new AppError('boom')); return [c.constructor.name, c instanceof Error, c.message, c.status]`,
  'sparse arrays keep their holes and extra properties': `const a = [1, , 3]; a.label = 'x'; const c = structuredClone(a); return [c.length, 1 in c, c.label, Object.keys(c)]`,
  'boxed primitives stay boxed': `const c = structuredClone([new Number(5), new String('s'), new Boolean(false), Object(10n)]);
    return c.map((x) => [typeof x, Object.prototype.toString.call(x), x.valueOf() === x.valueOf()])`,
  'views sharing one buffer still share the cloned buffer': `const buf = new ArrayBuffer(8); const v = { a: new Uint8Array(buf, 0, 4), b: new Int16Array(buf, 4, 2), d: new DataView(buf, 2, 4) };
    const c = structuredClone(v); c.a[0] = 9; return [c.a.buffer === c.b.buffer, c.d.buffer === c.a.buffer, c.b.byteOffset, c.d.byteOffset, c.d.byteLength, v.a[0], c.b instanceof Int16Array]`,
  'class instances become plain objects with their own enumerable data': `class P { #secret = 1; constructor() { this.x = 1 } get y() { return 2 } } const c = structuredClone(new P());
    return [Object.getPrototypeOf(c) === Object.prototype, c, 'y' in c]`,
  'a __proto__ key is copied as data, not as a prototype': `const v = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}'); const c = structuredClone(v);
    return [Object.getPrototypeOf(c) === Object.prototype, c.polluted, Object.keys(c)]`,
};

describe('structuredClone behaves as in Node', () => {
  for (const [name, body] of Object.entries(CASES)) {
    it(name, () => {
      const expected = new Function(body)();
      expect(inRealm(body)).toEqual(expected);
    });
  }

  it("what cannot be cloned is a DataCloneError with V8's message", () => {
    const body = `const out = [];
      for (const f of [() => structuredClone({ a() {} }), () => structuredClone(new WeakMap()), () => structuredClone(new WeakSet()),
        () => structuredClone(Promise.resolve(1)), () => structuredClone({ s: Symbol('q') }), () => structuredClone(new WeakRef({})),
        () => structuredClone([1, () => 2]), () => structuredClone(Object(Symbol('z')))]) {
        try { f(); out.push('cloned') } catch (e) { out.push([e instanceof DOMException, e.name, e.message]) }
      }
      return out`;
    expect(inRealm(body)).toEqual(new Function(body)());
  });

  it('a proxy is a DataCloneError and its traps never run', () => {
    expect(
      inRealm(`let trapped = 0; const p = new Proxy({ a: 1 }, { get() { trapped++; return 1 }, ownKeys() { trapped++; return [] } });
        try { structuredClone(p) } catch (e) { return [e.name, trapped] } return 'cloned'`),
    ).toEqual(['DataCloneError', 0]);
  });
});

describe("structuredClone within the run's limits", () => {
  it('a clone larger than the memory limit stops the run with MEMORY_LIMIT', () => {
    const r = runSync('const big = new Array(1e6).fill(0).map((_, i) => ({ i })); return structuredClone(big).length', {
      limits: { memoryBytes: 48 << 20 },
    });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.code).toBe('MEMORY_LIMIT');
  });

  it('a clone that outlasts the deadline stops the run with TIMEOUT', () => {
    const r = runSync(
      'const v = { list: new Array(2e5).fill(0).map((_, i) => ({ i, s: String(i) })) }; for (;;) structuredClone(v)',
      {
        limits: { timeoutMs: 300 },
      },
    );
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.code).toBe('TIMEOUT');
  });

  it('deep nesting is a RangeError the guest can catch, not a crash', () => {
    const r = runSync(
      'let v = {}; for (let i = 0; i < 100000; i++) v = { v }; try { structuredClone(v) } catch (e) { return e.name }',
    );
    expect(r.ok && r.value).toBe('RangeError');
  });
});
