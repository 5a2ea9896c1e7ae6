// A host locked down with SES (`lockdown()` with its default 'moderate' override taming) turns
// some methods of built-in prototypes (Array.prototype.push, Object.prototype.toString, ...)
// into accessors whose getter answers the method and names it in its own `originalValue`. Such a
// method must still reach the guest as a method of a built-in prototype; the getter, and anything
// else it could lead to, stays out of reach. Each case runs in its own process: taming changes the
// host's intrinsics for good, and the membrane captures them at the first live run.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const lib = path.resolve(__dirname, '../../lib/index.js');

/** Tames `names` (`'Array.prototype.push'`, ...) as SES's override taming does, then runs. */
function inTamedHost(names: string[], source: string, globalsCode: string, extra = '') {
  const script = `
    const make = (key, value) => ({ get [key]() { return value; } });
    const tameWith = (owner, key, value) => {
      const getter = Object.getOwnPropertyDescriptor(make(key, value), key).get;
      Object.defineProperty(getter, 'originalValue', { value, writable: false, enumerable: false, configurable: false });
      const setter = function (v) { Object.defineProperty(this, key, { value: v, writable: true, enumerable: true, configurable: true }); };
      Object.defineProperty(owner, key, { get: getter, set: setter, enumerable: false, configurable: false });
    };
    for (const name of ${JSON.stringify(names)}) {
      const parts = name.split('.');
      const key = parts.pop();
      const owner = parts.reduce((o, p) => o[p], globalThis);
      tameWith(owner, key, owner[key]);
    }
    ${extra}
    for (const C of [Object, Array, Map, Set, Function, String]) { Object.freeze(C.prototype); Object.freeze(C); }
    const { runSync } = require(${JSON.stringify(lib)});
    const globals = (() => { ${globalsCode} })();
    const r = runSync(${JSON.stringify(source)}, { globals });
    process.stdout.write(JSON.stringify({ ok: r.ok, value: r.value, error: r.error && r.error.message, host: globals.probe ? globals.probe() : null }));`;
  return JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 30_000 })) as {
    ok: boolean;
    value: unknown;
    error?: string;
    host: unknown;
  };
}

describe('methods of built-in prototypes tamed by SES override taming', () => {
  it('the reproducer: a live host array gains an element through push', () => {
    const r = inTamedHost(
      ['Array.prototype.push'],
      "context.root.title = 'b'; context.root.items.push(3); return typeof context.root.items.push",
      "const context = { root: { title: 'a', items: [1, 2] } }; return { context, probe: () => context.root };",
    );
    expect(r).toEqual({ ok: true, value: 'function', host: { title: 'b', items: [1, 2, 3] } });
  });

  it('other tamed methods work too: map, toString, Map#get, Set#has, String#toUpperCase', () => {
    const r = inTamedHost(
      ['Array.prototype.map', 'Object.prototype.toString', 'Map.prototype.get', 'Set.prototype.has'],
      "return [h.list.map((x) => x * 2).join(), h.obj.toString(), h.map.get('a'), h.set.has(2), h.text.toUpperCase()].join('|')",
      "const h = { list: [1, 2, 3], obj: {}, map: new Map([['a', 7]]), set: new Set([2]), text: 'abc' }; return { h };",
    );
    expect(r).toEqual({ ok: true, value: '2,4,6|[object Object]|7|true|ABC', host: null });
  });

  it('a tamed method is called on the host value it was read from, nothing else', () => {
    const r = inTamedHost(
      ['Array.prototype.push'],
      'const push = a.push; push.call(b, 9); return [a.length, b.length].join()',
      'const a = [1]; const b = [1, 2]; return { a, b, probe: () => [a, b] };',
    );
    // A method token calls the built-in with the receiver the guest gives, which must be a host
    // value: `b` is one, so b grows and a does not.
    expect(r.ok).toBe(true);
    expect(r.host).toEqual([[1], [1, 2, 9]]);
  });

  it('the getters stay unreachable, and a getter naming a host primordial that is not a method stays refused', () => {
    const r = inTamedHost(
      ['Array.prototype.push'],
      "const out = []; for (const f of [() => h.run, () => h.list.flat]) { try { out.push(typeof f()); } catch (e) { out.push(e.message); } } return out.join('|')",
      'return { h: { list: [1], run: {} } };',
      // An accessor on a built-in prototype whose `originalValue` is the host's Function
      // constructor: reached elsewhere as a constructor, it never becomes a method.
      `{ const value = Function; const getter = Object.getOwnPropertyDescriptor({ get flat() { return value; } }, 'flat').get;
         Object.defineProperty(getter, 'originalValue', { value });
         Object.defineProperty(Array.prototype, 'flat', { get: getter, configurable: false }); }`,
    );
    expect(r.ok).toBe(true);
    expect(r.value).toBe('object|this host value is not reachable from the sandbox');
  });

  it('the guest cannot reach the host Function through a tamed method', () => {
    const r = inTamedHost(
      ['Array.prototype.push'],
      "const F = a.push.constructor; let made; try { made = F('return typeof process')(); } catch (e) { made = e.name; } return [F === Function, made].join()",
      'return { a: [] };',
    );
    expect(r).toEqual({ ok: true, value: 'true,EvalError', host: null });
  });
});
