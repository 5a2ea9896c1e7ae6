// Host primordials through the membrane. Every built-in of the host realm (constructors,
// prototypes, static and prototype methods, accessor functions, namespaces, the global object,
// process, require, module, eval, Function and the other code-making constructors) is captured
// once per environment and refused by identity wherever it would cross: as a property value, a
// return value, a `this`, a callback argument, a promise resolution. A method of a built-in
// prototype read from a host object crosses as a frozen guest stand-in that asks the host to call
// it on a host object the guest already holds; nothing of the function itself crosses.
// Each case asserts the outcome, that the host's built-ins are unchanged, and that the next run
// works.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { run, runSync, type RunOptions, type RunResult } from '../../lib/index.js';
import { expectHealthy } from '../helpers.js';

const UNREACHABLE = /not reachable from the sandbox/;
const CODEGEN = /Code generation from strings is disabled/;

const liveSync = (src: string, globals: RunOptions['globals'], options: RunOptions = {}) =>
  runSync(src, { ...options, globals });
const live = (src: string, globals: RunOptions['globals'], options: RunOptions = {}) =>
  run(src, { ...options, globals });

function value(r: RunResult): unknown {
  if (!r.ok) throw new Error(`the run failed: ${JSON.stringify(r.error)}`);
  return r.value;
}

// The built-ins an attack would change, and how they looked before any test ran.
const PRISTINE = {
  mapGet: Map.prototype.get,
  mapSet: Map.prototype.set,
  arrayMap: Array.prototype.map,
  arrayPush: Array.prototype.push,
  hasOwn: Object.prototype.hasOwnProperty,
  getPrototypeOf: Object.getPrototypeOf,
  defineProperty: Object.defineProperty,
  functionCall: Function.prototype.call,
  jsonParse: JSON.parse,
  reflectApply: Reflect.apply,
  prepareStackTrace: Error.prepareStackTrace,
  captureStackTrace: Error.captureStackTrace,
};

/** The host's built-ins are unchanged and work, and both kinds of run still work. */
function expectHostIntact(): void {
  expect(Map.prototype.get).toBe(PRISTINE.mapGet);
  expect(Map.prototype.set).toBe(PRISTINE.mapSet);
  expect(Array.prototype.map).toBe(PRISTINE.arrayMap);
  expect(Array.prototype.push).toBe(PRISTINE.arrayPush);
  expect(Object.prototype.hasOwnProperty).toBe(PRISTINE.hasOwn);
  expect(Object.getPrototypeOf).toBe(PRISTINE.getPrototypeOf);
  expect(Object.defineProperty).toBe(PRISTINE.defineProperty);
  expect(Function.prototype.call).toBe(PRISTINE.functionCall);
  expect(JSON.parse).toBe(PRISTINE.jsonParse);
  expect(Reflect.apply).toBe(PRISTINE.reflectApply);
  expect(Error.prepareStackTrace).toBe(PRISTINE.prepareStackTrace);
  expect(Error.captureStackTrace).toBe(PRISTINE.captureStackTrace);
  expect(new Map([[1, 'one']]).get(1)).toBe('one');
  expect([1, 2].map((x) => x * 2)).toEqual([2, 4]);
  expect(Object.isFrozen(Object.prototype)).toBe(false);
  expect(Object.getOwnPropertyNames(Map.prototype)).not.toContain('polluted');
  const stack = new Error('probe').stack ?? '';
  expect(stack.startsWith('Error: probe\n')).toBe(true);
  expectHealthy();
  const m = new Map([['k', 41]]);
  expect(value(liveSync('return m.get("k") + 1', { m }))).toBe(42);
}

describe('the reproducer: a host class that extends Object', () => {
  class Model extends Object {}

  it('cannot replace Map.prototype.get through Model.getPrototypeOf', () => {
    const r = liveSync('Model.getPrototypeOf(m).get = () => "x"', { Model, m: new Map() });
    expect(r.ok).toBe(false);
    expect(r.error).toMatchObject({ code: 'EVAL_ERROR', name: 'TypeError' });
    expect(r.error?.message).toMatch(UNREACHABLE);
    expectHostIntact();
  });

  it('hands out none of the Object statics, whichever is asked for', () => {
    const statics = Object.getOwnPropertyNames(Object).filter(
      (k) => typeof (Object as unknown as Record<string, unknown>)[k] === 'function',
    );
    expect(statics.length).toBeGreaterThan(15);
    const m = new Map([['k', 1]]);
    const r = liveSync(
      `const out = {};
      for (const k of ${JSON.stringify(statics)}) {
        try { const f = Model[k]; out[k] = 'got ' + typeof f; } catch (e) { out[k] = e.name + ': ' + e.message; }
      }
      return out;`,
      { Model, m },
    );
    const out = value(r) as Record<string, string>;
    for (const k of statics) expect(out[k], k).toMatch(UNREACHABLE);
    expect(Object.getPrototypeOf(m)).toBe(Map.prototype);
    expect(Object.isFrozen(m)).toBe(false);
    expectHostIntact();
  });

  it('still works as a class: construction, instances, own methods, accessors, instanceof', () => {
    class Account extends Object {
      balance = 10;
      deposit(n: number): number {
        this.balance += n;
        return this.balance;
      }
      get doubled(): number {
        return this.balance * 2;
      }
    }
    const existing = new Account();
    const r = liveSync(
      `const a = new Account();
      return [a.deposit(5), a.doubled, a instanceof Account, existing instanceof Account, Account.name,
              existing.deposit(1), Object.keys(a), a.hasOwnProperty('balance')];`,
      { Account, existing },
    );
    expect(value(r)).toEqual([15, 30, true, true, 'Account', 11, ['balance'], true]);
    expect(existing.balance).toBe(11);
    expectHostIntact();
  });
});

describe('the static side of other host classes', () => {
  it('a class that extends Error hands out neither captureStackTrace nor a hook for host stack traces', () => {
    class AppError extends Error {}
    const r = liveSync(
      `const out = [];
      for (const k of ['captureStackTrace', 'stackTraceLimit', 'prepareStackTrace']) {
        try { out.push(k + ': ' + typeof AppError[k]); } catch (e) { out.push(k + ': ' + e.message); }
      }
      try { AppError.captureStackTrace(holder); } catch (e) { out.push(e.name); }
      try { Object.getPrototypeOf(AppError).prepareStackTrace = () => 'guest'; } catch (e) { out.push(e.name); }
      const e = new AppError('boom');
      out.push(e.message, e instanceof AppError, e instanceof Error);
      return out;`,
      { AppError, holder: {} },
    );
    const out = value(r) as unknown[];
    expect(out[0]).toMatch(/^captureStackTrace: .*not reachable/);
    expect(out[1]).toBe('stackTraceLimit: number');
    // V8 leaves Error.prepareStackTrace undefined until a host installs one (vitest does)
    if (Error.prepareStackTrace === undefined) expect(out[2]).toBe('prepareStackTrace: undefined');
    else expect(out[2]).toMatch(/^prepareStackTrace: .*not reachable/);
    // a host instance is an instance of the host class, not of the guest's own Error
    expect(out.slice(3)).toEqual(['TypeError', 'TypeError', 'boom', true, false]);
    expectHostIntact();
  });

  it('a class that extends Array hands out no Array statics; its instances work', () => {
    class List extends Array<number> {}
    const list = List.from([3, 1, 2]) as List;
    const r = liveSync(
      `const out = [];
      for (const k of ['from', 'of', 'isArray']) {
        try { out.push(typeof List[k]); } catch (e) { out.push(k + ': ' + e.name); }
      }
      list.push(4);
      out.push(list.length, [...list], list.map((x) => x * 10), list.slice().sort((a, b) => a - b), list instanceof List);
      return out;`,
      { List, list },
    );
    expect(value(r)).toEqual([
      'from: TypeError',
      'of: TypeError',
      'isArray: TypeError',
      4,
      [3, 1, 2, 4],
      [30, 10, 20, 40],
      [1, 2, 3, 4],
      true,
    ]);
    expectHostIntact();
  });

  it('a class that extends Promise or Map hands out no statics', () => {
    class Task<T> extends Promise<T> {}
    class Registry extends Map<string, number> {}
    const r = liveSync(
      `const out = [];
      for (const [C, k] of [[Task, 'resolve'], [Task, 'all'], [Task, 'withResolvers'], [Registry, 'groupBy']]) {
        try { const f = C[k]; out.push(f === undefined ? 'absent' : 'got ' + typeof f); } catch (e) { out.push(e.name); }
      }
      const reg = new Registry(); reg.set('a', 1);
      out.push(reg.get('a'), reg.size);
      return out;`,
      { Task, Registry },
    );
    const out = value(r) as unknown[];
    for (const o of out.slice(0, 4)) expect(['TypeError', 'absent']).toContain(o);
    expect(out.slice(0, 2)).toEqual(['TypeError', 'TypeError']);
    expect(out.slice(4)).toEqual([1, 1]);
    expectHostIntact();
  });

  it('a class that extends Function, or another code-making constructor, cannot be constructed', () => {
    class Compiled extends Function {}
    const AsyncFunction = (async () => {}).constructor as FunctionConstructor;
    class AsyncCompiled extends AsyncFunction {}
    const r = liveSync(
      `const out = [];
      for (const C of [Compiled, AsyncCompiled, bound]) {
        try { const f = new C('return typeof process'); out.push('made ' + typeof f); } catch (e) { out.push(e.name + ': ' + e.message); }
      }
      return out;`,
      { Compiled, AsyncCompiled, bound: Compiled.bind(null) },
    );
    const out = value(r) as string[];
    expect(out).toHaveLength(3);
    for (const o of out) expect(o).toMatch(/^TypeError: .*extends Function cannot be constructed/);
    expectHostIntact();
  });
});

describe('primordials handed out by host values', () => {
  it('the prototype of a host instance is a guest object; changing it changes nothing on the host', () => {
    const m = new Map([['k', 1]]);
    const r = liveSync(
      `const out = [];
      const protos = [Object.getPrototypeOf(m), Reflect.getPrototypeOf(m), m.__proto__, Object.getPrototypeOf(arr)];
      out.push(protos[0] === Object.prototype, protos[3] === Array.prototype);
      for (const p of protos) {
        try { p.get = () => 'x'; out.push('changed'); } catch (e) { out.push(e.name); }
      }
      out.push(m.get('k'));
      return out;`,
      { m, arr: [1] },
    );
    expect(value(r)).toEqual([true, true, 'TypeError', 'TypeError', 'TypeError', 'TypeError', 1]);
    expectHostIntact();
  });

  it('a host function returning a primordial, a getter returning one, a method returning one', () => {
    const source = {
      hasOwn: () => Object.prototype.hasOwnProperty,
      get functionProto() {
        return Function.prototype;
      },
      get objectCtor() {
        return Object;
      },
      list: [Object, JSON.parse, Reflect],
    };
    const r = liveSync(
      `const out = [];
      const attempts = [
        () => source.hasOwn(),
        () => source.functionProto,
        () => source.objectCtor,
        () => Object.getOwnPropertyDescriptor(source, 'functionProto'),
        () => source.list[0],
        () => source.list[1],
        () => source.list.find((x) => true),
        () => source.list.at(2),
        () => [...source.list],
        () => source.list.pop(),
      ];
      for (const a of attempts) {
        try { const v = a(); out.push('got ' + typeof v); } catch (e) { out.push(e.name + ': ' + e.message); }
      }
      return out;`,
      { source },
    );
    const out = value(r) as string[];
    expect(out).toHaveLength(10);
    for (const o of out) expect(o).toMatch(/^TypeError: .*not reachable from the sandbox/);
    // the refused pop() still ran on the host: the guest gets nothing of what it returned
    expect(source.list).toEqual([Object, JSON.parse]);
    expectHostIntact();
  });

  it('namespaces, constructors, accessors and host-only values returned by a host function', () => {
    const require_ = createRequire(__filename);
    const Module = require_('node:module') as { new (id: string): object };
    const accessor = Object.getOwnPropertyDescriptor(Object.prototype, '__proto__')?.get;
    const sizeGetter = Object.getOwnPropertyDescriptor(Map.prototype, 'size')?.get;
    const candidates: Record<string, unknown> = {
      Reflect,
      JSON,
      'JSON.parse': JSON.parse,
      'JSON.stringify': JSON.stringify,
      Math,
      'Math.max': Math.max,
      Intl,
      'Intl.DateTimeFormat': Intl.DateTimeFormat,
      Atomics,
      WebAssembly,
      'WebAssembly.compile': WebAssembly.compile,
      console,
      'console.log': console.log,
      globalThis,
      process,
      'process.env': process.env,
      'process.binding': (process as unknown as { binding: unknown }).binding,
      Buffer,
      'Buffer.from': Buffer.from,
      eval,
      Function,
      AsyncFunction: (async () => {}).constructor,
      GeneratorFunction: function* () {}.constructor,
      AsyncGeneratorFunction: async function* () {}.constructor,
      'Error.captureStackTrace': Error.captureStackTrace,
      'Object.prototype.__proto__ getter': accessor,
      'Map.prototype.size getter': sizeGetter,
      '%ArrayIteratorPrototype%': Object.getPrototypeOf([][Symbol.iterator]()),
      '%GeneratorPrototype%': Object.getPrototypeOf(function* () {}).prototype,
      'Array.prototype[Symbol.unscopables]': (Array.prototype as unknown as Record<symbol, unknown>)[
        Symbol.unscopables
      ],
      'Symbol.for': Symbol.for,
      setTimeout,
      structuredClone,
      Promise,
      'Promise.prototype': Promise.prototype,
      require: require_,
      'require.cache': require_.cache,
      module: new Module('probe'),
      'module.require': (Module.prototype as { require: unknown }).require,
    };
    const names = Object.keys(candidates);
    const r = liveSync(
      `const out = {};
      for (const k of ${JSON.stringify(names)}) {
        try { const v = pick(k); out[k] = 'got ' + typeof v; } catch (e) { out[k] = e.name + ': ' + e.message; }
      }
      return out;`,
      { pick: (k: string) => candidates[k] },
    );
    const out = value(r) as Record<string, string>;
    for (const k of names) expect(out[k], k).toMatch(UNREACHABLE);
    expectHostIntact();
  });

  it('as a callback argument: the host call fails and the callback never runs', () => {
    const r = liveSync(
      `let ran = 0;
      const out = [];
      for (const f of [each, eachAsThird]) {
        try { f(() => { ran++ }); out.push('called'); } catch (e) { out.push(e.name + ': ' + e.message); }
      }
      return [ran, out];`,
      {
        each: (cb: (...a: unknown[]) => void) => cb(Object, JSON),
        eachAsThird: (cb: (...a: unknown[]) => void) => cb(1, 2, Object.prototype.hasOwnProperty),
      },
    );
    const [ran, out] = value(r) as [number, string[]];
    expect(ran).toBe(0);
    for (const o of out) expect(o).toMatch(UNREACHABLE);
    expectHostIntact();
  });

  it('as the this of a callback: the guest sees undefined', () => {
    const selves = [Object.prototype, Map.prototype, JSON, globalThis, { n: 7 }];
    const r = liveSync(
      `'use strict';
      const out = [];
      for (let i = 0; i < count; i++) out.push(callWith(function () { return this === undefined ? 'undefined' : this.n }, i));
      return out;`,
      { callWith: (cb: (this: unknown) => unknown, i: number) => cb.call(selves[i]), count: selves.length },
    );
    expect(value(r)).toEqual(['undefined', 'undefined', 'undefined', 'undefined', 7]);
    expectHostIntact();
  });

  it('as a promise resolution: the guest await rejects with a TypeError', async () => {
    const r = await live(
      `const out = [];
      for (const f of [reflect, parse, proto, global_]) {
        try { const v = await f(); out.push('got ' + typeof v); } catch (e) { out.push(e.name + ': ' + e.message); }
      }
      out.push(await fine());
      return out;`,
      {
        reflect: async () => Reflect,
        parse: () => Promise.resolve(JSON.parse),
        proto: () => new Promise((resolve) => setTimeout(() => resolve(Map.prototype), 5)),
        global_: async () => globalThis,
        fine: async () => 'fine',
      },
    );
    const out = value(r) as string[];
    expect(out.slice(0, 4)).toHaveLength(4);
    for (const o of out.slice(0, 4)) expect(o).toMatch(/^TypeError: .*not reachable/);
    expect(out[4]).toBe('fine');
    expectHostIntact();
  });

  it('given directly as globals: refused before the run starts', () => {
    const given: Record<string, unknown> = {
      reflect: Reflect,
      parse: JSON.parse,
      setProto: Object.setPrototypeOf,
      mapGet: Map.prototype.get,
      arrayProto: Array.prototype,
      log: console.log,
      env: process.env,
      capture: Error.captureStackTrace,
    };
    for (const [name, v] of Object.entries(given)) {
      let touched = false;
      const r = runSync('touch(); return 1', { globals: { [name]: v, touch: () => (touched = true) } });
      expect(r.ok, name).toBe(false);
      expect(r.error?.code, name).toBe('INVALID_INPUT');
      expect(r.error?.message, name).toMatch(UNREACHABLE);
      expect(r.error?.message, name).toContain(`globals.${name}`);
      expect(touched).toBe(false);
    }
    expectHostIntact();
  });
});

describe('methods of built-in prototypes cross as guest stand-ins', () => {
  it('host arrays, maps, sets, dates, iterators and plain objects keep working', () => {
    function* numbers() {
      yield 1;
      yield 2;
    }
    const map = new Map([['a', 1]]);
    const r = liveSync(
      `const out = [];
      map.set('b', 2);
      out.push(map.get('a'), map.has('b'), [...map.keys()], [...map].length);
      const found = []; for (const [k, v] of map) found.push(k + v); out.push(found);
      out.push(set.has(2), [...set]);
      out.push(arr.map((x) => x * 2), arr.includes(3), arr.indexOf(2), arr.join('-'), [...arr.entries()].length);
      out.push(d.getTime(), \`\${d}\`.length > 10, JSON.stringify({ d }));
      out.push(obj.hasOwnProperty('a'), obj.toString(), obj.valueOf() === obj, \`\${obj}\`);
      out.push([...gen], fn.call(null, 2), fn.apply(null, [3]), fn.bind(null, 4)());
      return out;`,
      {
        map,
        set: new Set([1, 2]),
        arr: [1, 2, 3],
        d: new Date(0),
        obj: { a: 1 },
        gen: numbers(),
        fn: (x: number) => x * 10,
      },
    );
    expect(value(r)).toEqual([
      1,
      true,
      ['a', 'b'],
      2,
      ['a1', 'b2'],
      true,
      [1, 2],
      [2, 4, 6],
      true,
      1,
      '1-2-3',
      3,
      0,
      true,
      '{"d":"1970-01-01T00:00:00.000Z"}',
      true,
      '[object Object]',
      true,
      '[object Object]',
      [1, 2],
      20,
      30,
      40,
    ]);
    expect([...map.keys()]).toEqual(['a', 'b']);
    expectHostIntact();
  });

  it('a stand-in is a frozen guest function: shared per method, not constructible, no way back to the host', () => {
    const r = liveSync(
      `const get = m.get;
      const out = [typeof get, Object.isFrozen(get), get === m2.get, get === m.set, Object.getPrototypeOf(get) === Function.prototype,
                   get.prototype, Object.getOwnPropertyNames(get).includes('prototype')];
      try { new m.get('k'); out.push('constructed'); } catch (e) { out.push(e.name); }
      try { get.extra = 1; out.push('mutable'); } catch (e) { out.push(e.name); }
      try { get.constructor('return process')(); } catch (e) { out.push(e.message); }
      try { get.call.constructor('return process')(); } catch (e) { out.push(e.message); }
      try { out.push(Object.getPrototypeOf(get).constructor === Function); } catch (e) { out.push(e.name); }
      return out;`,
      { m: new Map(), m2: new Map() },
    );
    const out = value(r) as unknown[];
    expect(out.slice(0, 7)).toEqual(['function', true, true, false, true, undefined, false]);
    expect(out[7]).toBe('TypeError');
    expect(out[8]).toBe('TypeError');
    expect(out[9]).toMatch(CODEGEN);
    expect(out[10]).toMatch(CODEGEN);
    expect(out[11]).toBe(true);
    expectHostIntact();
  });

  it('a stand-in only acts on host objects the guest holds, never on guest values', () => {
    const m = new Map([['k', 1]]);
    const other = new Map([['k', 2]]);
    const r = liveSync(
      `const get = m.get;
      const out = [get.call(other, 'k')];
      for (const attempt of [() => get('k'), () => get.call(new Map([['k', 3]]), 'k'), () => get.call({}, 'k'), () => Reflect.apply(get, undefined, ['k'])]) {
        try { out.push('got ' + attempt()); } catch (e) { out.push(e.name + ': ' + e.message); }
      }
      try { get.call(plain, 'k'); out.push('called'); } catch (e) { out.push(e.name + ': ' + e.message); }
      return out;`,
      { m, other, plain: { k: 4 } },
    );
    const out = value(r) as unknown[];
    expect(out[0]).toBe(2);
    for (const o of out.slice(1, 5)) expect(o).toBe('TypeError: a host method can only be called on a host object');
    // a host object of the wrong kind: the host's own TypeError, by name and message only
    expect(out[5]).toMatch(/^TypeError: Method Map.prototype.get called on incompatible receiver/);
    expectHostIntact();
  });

  it('reading a prototype method out of a host array gives a stand-in, never the function', () => {
    const table = [Array.prototype.map, Map.prototype.get, Object.getPrototypeOf];
    const r = liveSync(
      `const out = [];
      const map = table[0];
      out.push(typeof map, Object.isFrozen(map), map.call(['ignored'], (x) => x) === undefined);
      return out;`,
      { table },
    );
    expect(r.ok).toBe(false);
    // a guest array is not a host object: the stand-in refuses it
    expect(r.error?.message).toBe('a host method can only be called on a host object');
    const r2 = liveSync(
      `const out = [];
      const map = table[0];
      out.push(typeof map, Object.isFrozen(map), map.call(nums, (x) => x + 1));
      try { table[2]; out.push('got getPrototypeOf'); } catch (e) { out.push(e.name); }
      return out;`,
      { table, nums: [1, 2] },
    );
    expect(value(r2)).toEqual(['function', true, [2, 3], 'TypeError']);
    expect(table).toEqual([Array.prototype.map, Map.prototype.get, Object.getPrototypeOf]);
    expectHostIntact();
  });
});

describe('changes to host objects', () => {
  it('defineProperty, setPrototypeOf, preventExtensions, seal and freeze are refused on every kind of host object', () => {
    class Widget {
      size = 1;
    }
    const targets = { obj: { a: 1 }, arr: [1], map: new Map(), fn: () => 1, inst: new Widget(), Widget };
    const before = new Map(Object.entries(targets).map(([k, v]) => [k, Object.getPrototypeOf(v)]));
    const r = liveSync(
      `const out = [];
      for (const t of [obj, arr, map, fn, inst, Widget]) {
        for (const attempt of [
          () => Object.defineProperty(t, 'x', { value: 1 }),
          () => Reflect.defineProperty(t, 'x', { get() { return 1 } }),
          () => Object.defineProperties(t, { y: { value: 1 } }),
          () => Object.setPrototypeOf(t, null),
          () => Reflect.setPrototypeOf(t, {}),
          () => Object.preventExtensions(t),
          () => Object.seal(t),
          () => Object.freeze(t),
        ]) {
          try { attempt(); out.push('allowed'); } catch (e) { out.push(e.name); }
        }
      }
      return out;`,
      targets,
    );
    const out = value(r) as string[];
    expect(out).toHaveLength(48);
    expect(new Set(out)).toEqual(new Set(['TypeError']));
    for (const [k, v] of Object.entries(targets)) {
      expect(Object.getPrototypeOf(v), k).toBe(before.get(k));
      expect(Object.isExtensible(v), k).toBe(true);
      expect(Object.getOwnPropertyNames(v), k).not.toContain('x');
    }
    expectHostIntact();
  });

  it('plain writes and deletes on ordinary host objects still reach the host', () => {
    const state = { count: 1, stale: true, list: [1] };
    const r = liveSync('state.count++; delete state.stale; state.list.push(2); state.added = "yes"; return 1', {
      state,
    });
    expect(value(r)).toBe(1);
    expect(state).toEqual({ count: 2, list: [1, 2], added: 'yes' });
    expectHostIntact();
  });
});

/** Everything the test can enumerate of the host's built-ins, from the global object down. */
function enumeratePrimordials(): { all: unknown[]; methods: Set<unknown> } {
  const names = (
    'Object Function Array Number parseFloat parseInt Boolean String Symbol Date Promise RegExp Error ' +
    'AggregateError EvalError RangeError ReferenceError SyntaxError TypeError URIError JSON Math Intl ' +
    'ArrayBuffer SharedArrayBuffer Atomics DataView Uint8Array Int8Array Uint16Array Int16Array ' +
    'Uint32Array Int32Array Float32Array Float64Array Uint8ClampedArray BigUint64Array BigInt64Array Map ' +
    'BigInt Set WeakMap WeakSet Proxy Reflect FinalizationRegistry WeakRef decodeURI decodeURIComponent ' +
    'encodeURI encodeURIComponent escape unescape eval isFinite isNaN WebAssembly console process Buffer ' +
    'URL URLSearchParams TextEncoder TextDecoder AbortController AbortSignal EventTarget Event Blob ' +
    'structuredClone setTimeout setInterval queueMicrotask'
  ).split(' ');
  const host = globalThis as unknown as Record<string, unknown>;
  const all = new Set<unknown>([globalThis]);
  const methods = new Set<unknown>();
  const isObject = (v: unknown): v is object => (typeof v === 'object' && v !== null) || typeof v === 'function';
  const ownValues = (o: object, onValue: (k: PropertyKey, v: unknown) => void) => {
    for (const k of Reflect.ownKeys(o)) {
      const d = Reflect.getOwnPropertyDescriptor(o, k);
      if (!d) continue;
      if ('value' in d) onValue(k, d.value);
      else {
        if (d.get) all.add(d.get);
        if (d.set) all.add(d.set);
      }
    }
  };
  const protos = [
    Object.getPrototypeOf([][Symbol.iterator]()),
    Object.getPrototypeOf(new Map()[Symbol.iterator]()),
    Object.getPrototypeOf(new Set()[Symbol.iterator]()),
    Object.getPrototypeOf(function* () {}).prototype,
    Object.getPrototypeOf(async function* () {}).prototype,
    Object.getPrototypeOf(Object.getPrototypeOf([][Symbol.iterator]())),
  ];
  for (const name of names) {
    const v = host[name];
    if (!isObject(v)) continue;
    all.add(v);
    const proto = (v as { prototype?: unknown }).prototype;
    if (name !== 'process' && name !== 'console') {
      ownValues(v, (k, x) => {
        if (isObject(x) && k !== 'prototype') all.add(x);
      });
    }
    if (isObject(proto)) protos.push(proto);
    const parent = Object.getPrototypeOf(v);
    if (isObject(parent)) all.add(parent);
  }
  for (const proto of protos) {
    all.add(proto);
    ownValues(proto, (k, x) => {
      if (!isObject(x)) return;
      all.add(x);
      if (typeof x === 'function' && k !== 'constructor' && !String(k).startsWith('__')) methods.add(x);
    });
  }
  for (const f of [
    (async () => {}).constructor,
    function* () {}.constructor,
    async function* () {}.constructor,
    Object.getPrototypeOf(Int8Array),
  ]) {
    all.add(f);
  }
  // A function that is both a static somewhere and a prototype method is refused outright.
  return { all: [...all], methods };
}

describe('every host primordial the test can enumerate', () => {
  const { all, methods } = enumeratePrimordials();

  it(`is refused as a return value (${all.length} values)`, () => {
    expect(all.length).toBeGreaterThan(700);
    const r = liveSync(
      `let refused = 0; const leaked = [];
      for (let i = 0; i < count; i++) {
        try { pick(i); leaked.push(i); } catch (e) { if (/not reachable/.test(e.message)) refused++; else leaked.push(i + ': ' + e.message); }
      }
      return [refused, leaked];`,
      { pick: (i: number) => all[i], count: all.length },
    );
    const [refused, leaked] = value(r) as [number, unknown[]];
    expect(leaked.map((i) => (typeof i === 'number' ? describeValue(all[i]) : i))).toEqual([]);
    expect(refused).toBe(all.length);
    expectHostIntact();
  });

  it('is refused or, for a prototype method, read as a stand-in when read as a property', () => {
    const r = liveSync(
      `const kinds = [];
      for (let i = 0; i < table.length; i++) {
        try {
          const v = table[i];
          kinds.push(typeof v === 'function' && Object.isFrozen(v) && Object.getPrototypeOf(v) === Function.prototype && !('prototype' in v) ? 'method' : 'leaked ' + typeof v);
        } catch (e) { kinds.push(/not reachable/.test(e.message) ? 'refused' : e.message); }
      }
      return kinds;`,
      { table: all },
    );
    const kinds = value(r) as string[];
    expect(kinds).toHaveLength(all.length);
    const unexpected = kinds
      .map((k, i) => [k, i] as const)
      .filter(([k, i]) => !(k === 'refused' || (k === 'method' && methods.has(all[i]))))
      .map(([k, i]) => `${k}: ${describeValue(all[i])}`);
    expect(unexpected).toEqual([]);
    // the bulk of the prototype methods are usable this way
    expect(kinds.filter((k) => k === 'method').length).toBeGreaterThan(methods.size * 0.9);
    expectHostIntact();
  });
});

function describeValue(v: unknown): string {
  if (typeof v === 'function') return `function ${v.name}`;
  try {
    return Object.prototype.toString.call(v);
  } catch {
    return typeof v;
  }
}

describe('worker threads', () => {
  it('each environment captures its own primordials and releases its runs when it stops', async () => {
    const lib = join(__dirname, '..', '..', 'lib', 'index.js');
    const code = `
      const { parentPort } = require('node:worker_threads');
      const { run, runSync } = require(${JSON.stringify(lib)});
      class Model extends Object {}
      const m = new Map([[1, 'one']]);
      const attack = runSync('Model.getPrototypeOf(m).get = () => "x"', { globals: { Model, m } });
      const after = runSync('return m.get(1)', { globals: { m } });
      // left running: the worker stops with these runs still waiting on host promises
      for (let i = 0; i < 3; i++) run('await never(); return 1', { globals: { m, never: () => new Promise(() => {}) } });
      parentPort.postMessage([attack.error && attack.error.message, after.value, m.get(1)]);
    `;
    for (let i = 0; i < 2; i++) {
      const worker = new Worker(code, { eval: true });
      const message = await new Promise((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      });
      expect(message).toEqual([expect.stringMatching(UNREACHABLE), 'one', 'one']);
      await worker.terminate();
    }
    expectHostIntact();
  });
});
