// Values crossing out of the realm: no prototype pollution, no host crash, no Node events.
import { describe, expect, it } from 'vitest';
import { run, runSync } from '../../lib/index.js';
import { expectHealthy } from '../helpers.js';

describe('results never pollute host prototypes', () => {
  it('a returned JSON.parse(\'{"__proto__": ...}\') stays an own data key', () => {
    const r = runSync('return JSON.parse(\'{"__proto__": {"x": 1}, "a": 2}\')');
    expect(r.ok).toBe(true);
    const v = r.value as Record<string, unknown>;
    expect(({} as Record<string, unknown>).x).toBeUndefined();
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
    expect(Object.prototype.hasOwnProperty.call(v, '__proto__')).toBe(true);
    expect(Object.getOwnPropertyDescriptor(v, '__proto__')?.value).toEqual({ x: 1 });
    expect(v.a).toBe(2);
  });

  it('constructor and prototype keys are plain data', () => {
    const r = runSync('return { constructor: { prototype: { polluted: 1 } }, prototype: { polluted: 2 } }');
    const v = r.value as { constructor: unknown };
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(v.constructor).toEqual({ prototype: { polluted: 1 } });
  });

  it('nested __proto__ keys inside arrays and maps', () => {
    const r = runSync(
      'return [JSON.parse(\'{"__proto__": {"y": 1}}\'), new Map([["k", JSON.parse(\'{"__proto__": {"z": 1}}\')]])]',
    );
    expect(r.ok).toBe(true);
    expect(({} as Record<string, unknown>).y).toBeUndefined();
    expect(({} as Record<string, unknown>).z).toBeUndefined();
  });

  it('__proto__ keys in data going in stay data inside the realm', () => {
    const data = JSON.parse('{"__proto__": {"isAdmin": true}}');
    const r = runSync('return [input.isAdmin, Object.keys(input), ({}).isAdmin]', { data: { input: data } });
    expect(r.value).toEqual([undefined, ['__proto__'], undefined]);
  });
});

describe('awkward result values do not panic', () => {
  it('lone surrogates, -0, NaN, big bigints, symbols and functions', () => {
    const r = runSync(
      "return { s: '\\udc00a\\ud800', z: -0, n: NaN, b: -(2n ** 300n), sym: Symbol('x'), f() {}, k: [Symbol.iterator, () => 1] }",
    );
    expect(r.ok).toBe(true);
    const v = r.value as Record<string, unknown>;
    expect(v.s).toBe('\udc00a\ud800');
    expect(Object.is(v.z, -0)).toBe(true);
    expect(v.n).toBeNaN();
    expect(v.b).toBe(-(2n ** 300n));
    expect('sym' in v).toBe(false);
    expect(v.k).toEqual([null, null]);
    expectHealthy();
  });

  it('a cycle in a result is preserved, not a hang', () => {
    const r = runSync('const a = { b: {} }; a.b.a = a; return a');
    expect(r.ok).toBe(true);
    const v = r.value as { b: { a: unknown } };
    expect(v.b.a).toBe(v);
  });

  it('a proxy whose traps throw fails the run cleanly', () => {
    const r = runSync("return new Proxy({}, { ownKeys() { throw new Error('trap') } })");
    expect(r.error?.code).toBe('EVAL_ERROR');
    expect(r.error?.message).toBe('trap');
  });

  it('a proxy whose traps loop is stopped by the deadline', () => {
    const r = runSync('return new Proxy({}, { ownKeys() { for(;;){} } })', { limits: { timeoutMs: 100 } });
    expect(r.error?.code).toBe('TIMEOUT');
  });

  it('very wide results hit the node cap', () => {
    const r = runSync('return new Array(2e6).fill(0)', { limits: { memoryBytes: 256 << 20 } });
    expect(r.error?.message).toMatch(/an array of 2000000 elements/);
  });
});

describe('unhandled rejections stay inside', () => {
  it('never reach Node', async () => {
    const seen: unknown[] = [];
    const onUnhandled = (reason: unknown) => seen.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      await run('for (let i = 0; i < 100; i++) Promise.reject(new Error("r" + i)); return 1');
      runSync('Promise.reject(new Error("s"))');
      await new Promise((r) => setTimeout(r, 20));
      expect(seen).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('many rejections are reported with a count, not unbounded', () => {
    const r = runSync('for (let i = 0; i < 100; i++) Promise.reject(new Error("r" + i)); return 1');
    const errors = r.logs.filter((l) => l.level === 'error');
    expect(errors.length).toBe(11);
    expect(errors[10].message).toBe('... and 90 more unhandled rejections');
  });
});
