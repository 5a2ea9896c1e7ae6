// Attempts to get around a component's permissions. The prelude's checks give the model clear
// errors; the boundary is on the host: read-only states are never read back, write-only values
// never enter the realm, and what comes back is copied data that runs no guest code.
import { describe, expect, it } from 'vitest';
import { Store } from '../component/fixtures.js';
import { expectHealthy } from '../helpers.js';

/** Runs a hostile script and checks that no protected state changed and no secret leaked. */
async function expectContained(script: string) {
  const s = new Store();
  const r = await s.executeScript(script);
  expect(s.config).toEqual({ limit: 10, items: [{ id: 1, label: 'one' }], nested: { deep: { value: 1 } } });
  expect(r.changes.filter((c) => c.state === 'config')).toEqual([]);
  expect(JSON.stringify(r)).not.toContain('hunter2');
  expect(s.audit.secret).toBe('hunter2');
  expectHealthy();
  return { s, r };
}

describe('reaching the raw read-only draft', () => {
  const attempts: Record<string, string> = {
    'prototype chain': 'const p = Object.getPrototypeOf(config); try { p.limit = 1 } catch {} config.__proto__.x = 1;',
    'descriptors of descriptors': 'const d = Object.getOwnPropertyDescriptors(config); d.nested.value.deep.value = 2;',
    'copies made by built-ins': 'const a = Array.prototype.slice.call(config.items); a[0].label = "x";',
    'a Proxy of the view with its own traps':
      'const p = new Proxy(config, { set(t, k, v) { return Reflect.set(t, k, v); } }); p.limit = 1;',
    'Reflect.apply of a setter':
      'Reflect.apply(Object.prototype.__lookupSetter__("__proto__") ?? (() => {}), config, [null]);',
    'arguments.callee and caller': 'const f = function () { return arguments.callee.caller; }; f();',
    'the data global the prelude reads':
      'if (typeof __quickrealm_component_states !== "undefined") __quickrealm_component_states.values.config.limit = 1;',
    'redefining the state global': 'Object.defineProperty(globalThis, "config", { value: { limit: 1 } });',
    'the function that wraps the script': 'profile.name = String(arguments.length);',
  };
  for (const [name, script] of Object.entries(attempts)) {
    it(name, async () => {
      await expectContained(script);
    });
  }

  it("the prelude's data global is gone before the script runs", async () => {
    const { s, r } = await expectContained(
      'profile.name = [typeof __quickrealm_component_states, arguments.length, typeof this].join(",");',
    );
    expect(r.success).toBe(true);
    expect(s.profile.name).toBe('undefined,0,undefined');
  });
});

describe('breaking out of the wrapper', () => {
  const breakOuts: Record<string, string> = {
    'a hoisted Proxy beside the prelude':
      '});\nfunction Proxy(target) { console.log("shadowed"); target.limit = 99; return target; }\n(async () => {',
    'a hoisted WeakMap and Object':
      '});\nfunction WeakMap() { console.log("shadowed"); return { get() {}, set() {} }; }\n(async () => {',
    'a second arrow argument': '}, async () => { console.log("shadowed"); config.limit = 1;',
    'an extra closing brace at the end': 'profile.name = "Bo";\n}',
    'a comment hiding the rest': '}); function Object() { console.log("shadowed"); } //',
  };
  for (const [name, script] of Object.entries(breakOuts)) {
    it(`is refused before anything runs: ${name}`, async () => {
      const { s, r } = await expectContained(script);
      expect(r.success).toBe(false);
      expect(r.error?.name).toBe('SyntaxError');
      expect(r.logs).toEqual([]);
      expect(s.profile.name).toBe('Ada');
    });
  }

  it("a returned object shaped like the prelude's result is ignored", async () => {
    const { r } = await expectContained(
      'return { rw: { config: { limit: 1 } }, w: { config: [["set", "limit", 1]] } };',
    );
    expect(r.success).toBe(true);
  });
});

describe('guest code never runs on the host', () => {
  it('a getter left on a draft runs in the realm, and the state receives plain data', async () => {
    const s = new Store();
    const r = await s.executeScript(
      'let reads = 0;\nObject.defineProperty(profile, "name", { get() { reads++; return "Getter" + reads; }, enumerable: true, configurable: true });',
    );
    expect(r.success).toBe(true);
    const descriptor = Object.getOwnPropertyDescriptor(s.profile, 'name');
    expect(descriptor && 'value' in descriptor).toBe(true);
    expect(s.profile.name).toBe('Getter1');
    expect(s.profile.name).toBe('Getter1');
  });

  it('toJSON, valueOf and toString on drafts are not called at validation time', async () => {
    const s = new Store();
    const r = await s.executeScript(
      'profile.name = { toString() { return "Ada"; }, valueOf() { return "Ada"; }, toJSON() { return "Ada"; } };\nprofile.tags = [{ toJSON() { return "x"; } }];',
    );
    expect(r.success).toBe(false);
    expect(r.validationErrors?.map((i) => i.path)).toEqual([['name'], ['tags', 0]]);
    expect(s.profile.name).toBe('Ada');
  });

  it("a __proto__ key in a draft is refused instead of changing the live object's prototype", async () => {
    const s = new Store();
    const r = await s.executeScript(
      'Object.defineProperty(profile.address, "__proto__", { value: { polluted: true }, enumerable: true, configurable: true, writable: true });',
    );
    expect(r.success).toBe(false);
    expect(r.validationErrors?.[0]).toMatchObject({ path: ['address', '__proto__'] });
    expect(Object.getPrototypeOf(s.profile.address)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
