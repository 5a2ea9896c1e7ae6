// copyOf(value) boxes a host value so the guest receives a copy: the box must not carry what
// copies refuse (functions, host built-ins, the host global, process), must not hand the guest
// anything of the host realm, and must keep to the copy budget.
import { describe, expect, it } from 'vitest';
import { copyOf, runSync } from '../../lib/index.js';

describe('copyOf cannot carry what copies refuse', () => {
  it('functions, host built-ins and throwing getters fail in the guest with a TypeError; the host survives', () => {
    const cases: Record<string, unknown> = {
      fn: { run() {} },
      builtin: Object,
      global: globalThis,
      proc: { p: process },
      getter: {
        get boom() {
          throw new Error('host getter');
        },
      },
      proxy: new Proxy(
        {},
        {
          ownKeys() {
            throw new Error('trap');
          },
        },
      ),
    };
    for (const [name, value] of Object.entries(cases)) {
      const r = runSync('try { const v = get(); return typeof v } catch (e) { return e.name }', {
        globals: { get: () => copyOf(value) },
      });
      expect(r.ok, name).toBe(true);
      expect(r.ok && r.value, name).toMatch(/TypeError|Error/);
    }
    expect(runSync('return 1').ok).toBe(true);
  });

  it('respects the copy budget: a huge value is refused, not copied', () => {
    const huge = Array.from({ length: 1_100_000 }, (_, i) => i);
    const r = runSync('try { return get().length } catch (e) { return e.name }', {
      globals: { get: () => copyOf(huge) },
    });
    expect(r.ok && r.value).toBe('TypeError');
  });

  it('the copy is a guest object: its prototype chain leads to the guest realm, never the host', () => {
    const r = runSync(
      `const v = get();
       let made;
       try { made = v.constructor.constructor('return process')() } catch (e) { made = e.name }
       return [Object.getPrototypeOf(v) === Object.prototype, v.constructor === Object,
               Object.getPrototypeOf(v.list) === Array.prototype, Object.isFrozen(v), made]`,
      { globals: { get: () => copyOf({ token: 't', list: [1] }) } },
    );
    expect(r.ok && r.value).toEqual([true, true, true, false, 'EvalError']);
  });
});
