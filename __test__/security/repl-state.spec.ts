// Persistent realms under attack: writing the state never runs guest code (getters, Proxy
// traps, toJSON, valueOf); what a guest can grow is capped while writing and reading; a restored
// realm is as frozen as any other; and no state crosses to another REPL or to plain runs.
import { describe, expect, it } from 'vitest';
import { createRepl, ErrorCode, type RunResult, restoreRepl, run, runSync } from '../../lib/index.js';

const KEY = 'a security test key, 16+ bytes!!';

function valueOf(r: RunResult): unknown {
  if (!r.ok) throw new Error(`${r.error.code}: ${r.error.message}`);
  return r.value;
}

function errorOf(r: RunResult) {
  if (r.ok) throw new Error(`succeeded with ${JSON.stringify(r.value)}`);
  return r.error;
}

async function restored(setup: string) {
  const repl = createRepl();
  valueOf(await repl.eval(setup));
  return restoreRepl(repl.snapshot({ key: KEY }), { key: KEY });
}

describe('writing the state runs no guest code', () => {
  const hooks: [string, string][] = [
    ['an object getter', 'const o = { get x() { hits.n++; return 1 } }'],
    ['an array index getter', 'const a = [1]; Object.defineProperty(a, 0, { get() { hits.n++; return 1 } })'],
    [
      'a getter on the prototype chain',
      'const base = { get y() { hits.n++; return 1 } }; const child = Object.create(base)',
    ],
    [
      'toJSON, valueOf, toString and Symbol.toPrimitive',
      'const v = { toJSON() { hits.n++ }, valueOf() { hits.n++; return 1 }, toString() { hits.n++; return "" }, [Symbol.toPrimitive]() { hits.n++; return 1 } }',
    ],
    ['a class with a static getter', 'class K { static get s() { hits.n++; return 1 } }'],
    ['a Map whose values have getters', 'const m = new Map([[1, { get z() { hits.n++; return 1 } }]])'],
  ];
  for (const [name, code] of hooks) {
    it(name, async () => {
      const repl = createRepl();
      // The cell ends with 0: copying a result out reads it, as `run` does.
      valueOf(await repl.eval(`const hits = { n: 0 }; ${code}; 0`));
      valueOf(await repl.eval('1'));
      const again = restoreRepl(repl.snapshot({ key: KEY }), { key: KEY });
      expect(valueOf(await again.eval('hits.n'))).toBe(0);
      expect(valueOf(await repl.eval('hits.n'))).toBe(0);
    });
  }

  it('refuses a Proxy without calling any of its traps', async () => {
    const repl = createRepl();
    await repl.eval('const hits = { n: 0 }');
    const trap = () => 'hits.n++; return Reflect';
    const handler = ['get', 'getOwnPropertyDescriptor', 'ownKeys', 'getPrototypeOf', 'has', 'isExtensible']
      .map((t) => `${t}(...args) { ${trap()}.${t}(...args) }`)
      .join(', ');
    const e = errorOf(await repl.eval(`hits.n = 0; const p = new Proxy({}, { ${handler} })`));
    expect(e.code).toBe(ErrorCode.InvalidInput);
    expect(e.message).toContain('`p`');
    expect(valueOf(await repl.eval('hits.n'))).toBe(0);
  });
});

describe('what a guest can grow is capped', () => {
  it('refuses nesting deeper than the state allows, on the main thread and on workers', async () => {
    const deep = 'let d = []; for (let i = 0; i < 100000; i++) d = [d]; 0';
    const repl = createRepl();
    await repl.eval('let kept = 1');
    for (const r of [repl.evalSync(`kept = 2; ${deep}`), await repl.eval(`kept = 3; ${deep}`)]) {
      expect(errorOf(r).code).toBe(ErrorCode.StateTooLarge);
    }
    expect(valueOf(await repl.eval('[kept, typeof d]'))).toEqual([1, 'undefined']);
  });

  it('keeps a sparse array small and refuses a state larger than the memory limit', async () => {
    const sparse = createRepl();
    valueOf(await sparse.eval('const big = []; big[2 ** 30] = 1'));
    expect(sparse.snapshot({ key: KEY }).length).toBeLessThan(1024);
    const again = restoreRepl(sparse.snapshot({ key: KEY }), { key: KEY });
    expect(valueOf(await again.eval('[big.length, big[2 ** 30], 5 in big]'))).toEqual([2 ** 30 + 1, 1, false]);
    const huge = createRepl({ limits: { memoryBytes: 4 << 20 } });
    valueOf(await huge.eval('const s = []; for (let i = 0; i < 40; i++) s.push("x".repeat(60000) + i); 0'));
    const over = await huge.eval('for (let i = 0; i < 40; i++) s.push("y".repeat(60000) + i); 0');
    expect([ErrorCode.StateTooLarge, ErrorCode.MemoryLimit]).toContain(errorOf(over).code);
    expect(valueOf(await huge.eval('s.length'))).toBe(40);
  });

  it('stops a state that takes too long to write at the deadline', async () => {
    const repl = createRepl({ limits: { timeoutMs: 50, memoryBytes: 512 << 20 } });
    const r = await repl.eval('const m = new Map(); for (let i = 0; i < 3e5; i++) m.set(i, { i })', {
      limits: { timeoutMs: 5000 },
    });
    // Either the cell and its write fit in the time, or the write stops with TIMEOUT: never hangs.
    if (!r.ok) expect(r.error.code).toBe(ErrorCode.Timeout);
  });
});

describe('a restored realm is a frozen realm', () => {
  it('keeps the intrinsics frozen and shared objects the realm’s own', async () => {
    const repl = await restored('const AP = Array.prototype; const keep = [1, 2]');
    expect(errorOf(await repl.eval('AP.evil = 1')).name).toBe('TypeError');
    expect(
      valueOf(
        await repl.eval(
          '[Object.isFrozen(Array.prototype), AP === Array.prototype, Object.getPrototypeOf(keep) === Array.prototype]',
        ),
      ),
    ).toEqual([true, true, true]);
    expect(valueOf(runSync('return typeof [].evil'))).toBe('undefined');
  });

  it('restores a __proto__ key as an own property, never as a prototype', async () => {
    const repl = await restored('const o = JSON.parse(\'{"__proto__": {"polluted": 1}}\')');
    expect(
      valueOf(
        await repl.eval(
          '[Object.hasOwn(o, "__proto__"), o.polluted, ({}).polluted, Object.getPrototypeOf(o) === Object.prototype]',
        ),
      ),
    ).toEqual([true, undefined, undefined, true]);
  });

  it('never lets one REPL’s state reach another REPL or a plain run', async () => {
    const writer = createRepl();
    await writer.eval('var mark = "leak"; let lex = "leak"; function f() { return "leak" }');
    const reader = createRepl();
    const probe = '[typeof mark, typeof lex, typeof f]';
    const none = ['undefined', 'undefined', 'undefined'];
    for (let i = 0; i < 4; i++) {
      expect(valueOf(await reader.eval(probe))).toEqual(none);
      expect(valueOf(reader.evalSync(probe))).toEqual(none);
      expect(valueOf(await run(`return ${probe}`))).toEqual(none);
      expect(valueOf(runSync(`return ${probe}`))).toEqual(none);
    }
  });
});
