import { describe, expect, it } from 'vitest';
import { runSync } from '../../lib/index.js';
import { expectHealthy } from '../helpers.js';

// Patch 0009 lets an assignment shadow a property inherited from a frozen intrinsic. It must
// never become a way to change an intrinsic: every route below leaves the intrinsics as
// frozen, and whatever is defined lands on an ordinary object of the program.
describe('overriding inherited built-in properties never changes an intrinsic', () => {
  const routes: Record<string, string> = {
    'Reflect.set with the intrinsic as receiver': `Reflect.set(Object.prototype, 'toString', 1, Object.prototype)`,
    'Reflect.set with another intrinsic as receiver': `Reflect.set(Object.prototype, 'toString', 1, Array.prototype)`,
    'Reflect.set through a prototype chain to an intrinsic receiver': `Reflect.set(Object.create(Object.prototype), 'valueOf', 1, Function.prototype)`,
    'super assignment in a method of an object literal': `({ __proto__: Object.prototype, m() { super.hasOwnProperty = 1 } }).m.call(Object.prototype)`,
    'assignment with a frozen intrinsic function as the receiver': `Array.from.call = 1`,
    'assignment on a function object to a Function.prototype property': `(function f() {}).apply = 1`,
    'Object.assign onto an intrinsic': `Object.assign(Math, { max: 1 })`,
    'assignment through with-less global lookup': `globalThis.Object.prototype.constructor = 1`,
  };
  for (const [name, route] of Object.entries(routes)) {
    it(name, () => {
      const r = runSync(`
        const before = [Object.prototype.toString, Object.prototype.valueOf, Object.prototype.hasOwnProperty,
          Object.prototype.constructor, Function.prototype.call, Function.prototype.apply, Math.max, Array.from];
        let outcome;
        try { outcome = String(${route}) } catch (e) { outcome = e.name }
        const after = [Object.prototype.toString, Object.prototype.valueOf, Object.prototype.hasOwnProperty,
          Object.prototype.constructor, Function.prototype.call, Function.prototype.apply, Math.max, Array.from];
        const frozen = [Object.prototype, Function.prototype, Array.prototype, Math, Array.from].every(Object.isFrozen);
        return { unchanged: before.every((f, i) => f === after[i]), frozen, outcome };`);
      expect(r.ok, JSON.stringify(r.error)).toBe(true);
      const v = r.ok ? (r.value as { unchanged: boolean; frozen: boolean }) : { unchanged: false, frozen: false };
      expect(v.unchanged).toBe(true);
      expect(v.frozen).toBe(true);
      expectHealthy();
    });
  }

  it('the shadowing property is an ordinary own property of the receiver', () => {
    const r = runSync(`
      const o = {}; o.toString = () => 'mine';
      const d = Object.getOwnPropertyDescriptor(o, 'toString');
      const other = {};
      return [String(o), d.writable, d.enumerable, d.configurable, String(other) === '[object Object]'];`);
    expect(r.ok && r.value).toEqual(['mine', true, true, true, true]);
  });

  it('a frozen or non-extensible receiver is still refused', () => {
    const r = runSync(`
      const f = Object.freeze({}); const n = Object.preventExtensions({}); const s = Object.seal({});
      return [f, n, s].map((o) => { try { o.toString = 1; return 'assigned' } catch (e) { return e.name } });`);
    expect(r.ok && r.value).toEqual(['TypeError', 'TypeError', 'TypeError']);
  });

  it('in script mode too: the override applies, the intrinsic stays refused', () => {
    const ok = runSync("var e = new Error('x'); e.name = 'Custom'; e.name + ':' + Error.prototype.name", {
      mode: 'script',
    });
    expect(ok.ok && ok.value).toBe('Custom:Error');
    const refused = runSync('Object.prototype.toString = 1', { mode: 'script' });
    expect(refused.error?.name).toBe('TypeError');
  });
});
