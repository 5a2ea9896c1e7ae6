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
};

describe('structuredClone behaves as in Node', () => {
  for (const [name, body] of Object.entries(CASES)) {
    it(name, () => {
      const expected = new Function(body)();
      expect(inRealm(body)).toEqual(expected);
    });
  }
});

describe('structuredClone differences (by design: it follows the rules results are copied by)', () => {
  it('functions and symbols nested in the value are dropped instead of throwing', () => {
    expect(inRealm('return structuredClone({ a: 1, f() {}, s: Symbol() })')).toEqual({ a: 1 });
  });

  it('the copy caps apply: too large a value is a DataCloneError', () => {
    expect(inRealm('try { structuredClone(new Array(2e6).fill(0)) } catch (e) { return e.name }')).toBe(
      'DataCloneError',
    );
  });
});
