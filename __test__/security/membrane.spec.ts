// Attacks through the membrane: every host value a guest can touch, every value it hands back.
// Each case asserts the specific outcome, that the host is intact, and that the next run works.
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { run, runSync, type RunOptions, type RunResult } from '../../lib/index.js';
import { expectHealthy } from '../helpers.js';

const CODEGEN = /Code generation from strings is disabled/;
const sloppyGlobal = new Function('return this') as () => unknown;
const UNREACHABLE = /not reachable from the sandbox/;

/** The host is intact and both kinds of run still work. */
function expectAllHealthy(): void {
  expectHealthy();
  const r = runSync('return probe.n + 1', { globals: { probe: { n: 1 } } });
  expect(r.ok && r.value).toBe(2);
  expect(Object.isFrozen(Object.prototype)).toBe(false);
  expect(typeof process.exit).toBe('function');
}

function value(r: RunResult): unknown {
  if (!r.ok) throw new Error(`the run failed: ${JSON.stringify(r.error)}`);
  return r.value;
}

/** A tree-agent-like context over plain host objects. */
function makeContext() {
  const root = { items: [{ name: 'a' }, { name: 'b' }], title: 'list' };
  return {
    get root() {
      return root;
    },
    create: { Item: (c: unknown) => c },
    parent: () => undefined,
    key: () => undefined,
  };
}

const liveSync = (src: string, globals: RunOptions['globals'], options: RunOptions = {}) =>
  runSync(src, { ...options, globals });
const live = (src: string, globals: RunOptions['globals'], options: RunOptions = {}) =>
  run(src, { ...options, globals });

describe('constructor chains through exposed host values', () => {
  const chains: Record<string, string> = {
    'context.constructor': "return context.constructor.constructor('return process')()",
    'context.root.items.map.constructor': "return context.root.items.map.constructor('return process')()",
    'a host function .constructor.constructor':
      "return context.create.Item.constructor.constructor('return process')()",
    'Object.getPrototypeOf(context.root)':
      "return Object.getPrototypeOf(context.root).constructor.constructor('return process')()",
    'context.root.__proto__': "return context.root.__proto__.constructor.constructor('return process')()",
    'a host array .constructor': "return context.root.items.constructor.constructor('return process')()",
    'a host method .call.constructor': "return context.root.items.map.call.constructor('return process')()",
    'a host iterator': "return context.root.items[Symbol.iterator]().constructor.constructor('return process')()",
    'a bound host function': "return context.parent.bind(null).constructor('return process')()",
    'Reflect.getPrototypeOf of a host function':
      "return Reflect.getPrototypeOf(context.key).constructor('return process')()",
    'an async host result': "return (await Promise.resolve(context.root)).constructor.constructor('return process')()",
  };
  for (const [name, src] of Object.entries(chains)) {
    it(`reaches only the guest's own (disabled) Function through ${name}`, () => {
      const r = liveSync(src, { context: makeContext() });
      expect(r.ok, JSON.stringify(r)).toBe(false);
      expect(r.error?.code).toBe('EVAL_ERROR');
      expect(r.error?.message).toMatch(CODEGEN);
      expectAllHealthy();
    });
  }

  it('prototypes and constructors of proxies are guest intrinsics', () => {
    const r = liveSync(
      `return [
        context.constructor === Object,
        Object.getPrototypeOf(context.root) === Object.prototype,
        Object.getPrototypeOf(context.root.items) === Array.prototype,
        context.root.__proto__ === Object.prototype,
        Object.getPrototypeOf(context.create.Item) === Function.prototype,
        context.create.Item.prototype === undefined,
        context.root.items.map.constructor === Function,
      ]`,
      { context: makeContext() },
    );
    expect(value(r)).toEqual([true, true, true, true, true, true, true]);
    expectAllHealthy();
  });

  it('blocked keys are answered from the guest side, also through descriptors', () => {
    class Widget {
      size = 1;
      grow() {
        this.size++;
      }
    }
    function Legacy(this: { v: number }) {
      this.v = 1;
    }
    const r = liveSync(
      `const out = [];
      for (const target of [Widget, Legacy, new Widget(), context.root]) {
        for (const key of ['prototype', 'constructor', '__proto__', 'caller', 'callee', 'arguments', '__defineGetter__', '__lookupGetter__']) {
          const d = Object.getOwnPropertyDescriptor(target, key);
          if (d && d.value !== undefined && typeof d.value === 'object') out.push(key + ' leaked');
        }
        const names = Object.getOwnPropertyNames(target);
        if (names.includes('prototype')) out.push('prototype listed');
        const all = Object.getOwnPropertyDescriptors(target);
        if (all.prototype) out.push('prototype in descriptors');
      }
      try { Object.getOwnPropertyDescriptor(Widget, 'prototype').value.grow = () => 'pwned'; } catch (e) { out.push('refused: ' + e.name); }
      try { Widget.prototype.grow = 1; } catch (e) { out.push('refused: ' + e.name); }
      return out;`,
      { context: makeContext(), Widget, Legacy },
    );
    expect(value(r)).toEqual(['refused: TypeError', 'refused: TypeError']);
    expect(typeof Widget.prototype.grow).toBe('function');
    expect(Object.keys(Widget.prototype)).toEqual([]);
    expectAllHealthy();
  });

  it('Symbol.hasInstance of a host class is a frozen guest function asking the host', () => {
    class Secret {}
    const r = liveSync(
      `const h = Secret[Symbol.hasInstance];
      const out = [typeof h, Object.isFrozen(h), h.call({}, {}), h.call(Secret, {}), h.call(Secret, inst), inst instanceof Secret, ({}) instanceof Secret];
      try { h.constructor('return process')(); } catch (e) { out.push(e.message); }
      try { h.extra = 1; out.push('mutable'); } catch (e) { out.push(e.name); }
      return out;`,
      { Secret, inst: new Secret() },
    );
    const out = value(r) as unknown[];
    expect(out.slice(0, 7)).toEqual(['function', true, false, false, true, true, false]);
    expect(out[7]).toMatch(CODEGEN);
    expect(out[8]).toBe('TypeError');
    expectAllHealthy();
  });

  it('host intrinsics handed out by host code are refused, not wrapped', () => {
    const leaky = {
      fn: () => Function,
      evalFn: () => eval,
      proc: () => process,
      global: () => globalThis,
      sloppyGlobal,
      objectProto: () => Object.prototype,
      arrayProto: () => Array.prototype,
      functionProto: () => Function.prototype,
      asyncCtor: () => (async () => {}).constructor,
      genCtor: () => function* () {}.constructor,
      get viaGetter() {
        return globalThis;
      },
    };
    const names = Object.keys(leaky);
    expect(sloppyGlobal()).toBe(globalThis);
    const r = liveSync(
      `const out = {};
      for (const k of ${JSON.stringify(names)}) {
        try { const v = k === 'viaGetter' ? leaky.viaGetter : (0, leaky[k])(); out[k] = 'got ' + typeof v; }
        catch (e) { out[k] = e.name + ': ' + e.message; }
      }
      return out;`,
      { leaky },
    );
    const out = value(r) as Record<string, string>;
    for (const k of names) expect(out[k], k).toMatch(UNREACHABLE);
    expectAllHealthy();
  });

  it('a host intrinsic given directly as a global is refused before the run', () => {
    for (const g of [Function, globalThis, process, Object.prototype]) {
      const r = runSync('return 1', { globals: { g } });
      expect(r.ok).toBe(false);
      expect(r.error?.code).toBe('INVALID_INPUT');
      expect(r.error?.message).toMatch(UNREACHABLE);
    }
    expectAllHealthy();
  });
});

describe('reaching the host global through this', () => {
  // Spec files are compiled as strict modules; a sloppy function has to come from source text.
  const sloppyThis = new Function('return this') as () => unknown;
  const holder = { sloppyThis };

  it('a sloppy host function returning this is refused however it is called', () => {
    const r = liveSync(
      `const out = [];
      const attempts = [
        () => sloppyThis(),
        () => (0, holder.sloppyThis)(),
        () => sloppyThis.call(undefined),
        () => sloppyThis.apply(null, []),
        () => sloppyThis.bind(undefined)(),
        () => Reflect.apply(sloppyThis, undefined, []),
        () => holder.sloppyThis.call.call(sloppyThis),
      ];
      for (const a of attempts) {
        try { const g = a(); out.push(typeof g === 'object' && g !== null && 'process' in g ? 'LEAKED' : 'got ' + typeof g); }
        catch (e) { out.push(e.name + ': ' + e.message); }
      }
      out.push(holder.sloppyThis() === holder);
      return out;`,
      { sloppyThis, holder },
    );
    const out = value(r) as unknown[];
    expect(out.slice(0, -1)).toHaveLength(7);
    for (const entry of out.slice(0, -1)) expect(entry).toMatch(/^TypeError: .*not reachable from the sandbox/);
    expect(out[out.length - 1]).toBe(true);
    expectAllHealthy();
  });

  it('a host constructor whose instance is the global is refused', () => {
    function Sneaky() {
      return globalThis;
    }
    const r = liveSync('try { new Sneaky(); return "constructed" } catch (e) { return e.message }', { Sneaky });
    expect(value(r)).toMatch(UNREACHABLE);
    expectAllHealthy();
  });
});

describe('host errors', () => {
  it('extra properties, cause and host stacks do not cross', () => {
    const secret = { token: 'hunter2', run: () => process };
    const fail = () => {
      const e = new Error('denied', { cause: secret }) as Error & { secret?: unknown; response?: unknown };
      e.secret = secret;
      e.response = { headers: { authorization: 'Bearer x' } };
      throw e;
    };
    const r = liveSync(
      `try { fail(); } catch (e) {
        return [e.message, e.cause, e.secret, e.response, Object.getOwnPropertyNames(e).filter((k) => k !== 'stack').sort(),
                String(e.stack).includes('.spec.ts'), e.constructor === Error, Object.getPrototypeOf(e) === Error.prototype];
      }`,
      { fail },
    );
    expect(value(r)).toEqual(['denied', undefined, undefined, undefined, ['message'], false, true, true]);
    expectAllHealthy();
  });

  it('an AggregateError does not carry its errors across', () => {
    const fail = () => {
      throw new AggregateError([new Error('inner secret')], 'several failed');
    };
    const r = liveSync('try { fail() } catch (e) { return [e.name, e.message, e.errors] }', { fail });
    expect(value(r)).toEqual(['AggregateError', 'several failed', undefined]);
    expectAllHealthy();
  });

  it('a host Proxy thrown as an error, whose traps throw, still becomes a plain guest error', () => {
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error('trap');
        },
        getPrototypeOf() {
          throw new Error('trap');
        },
      },
    );
    const fail = () => {
      throw hostile;
    };
    const r = liveSync('try { fail() } catch (e) { return [e instanceof Error, typeof e.message] }', { fail });
    expect(value(r)).toEqual([true, 'string']);
    expectAllHealthy();
  });

  it('a rejected host promise carries only name and message', async () => {
    const fail = () => Promise.reject(Object.assign(new TypeError('async denied'), { secret: 1, cause: process }));
    const r = await live('try { await fail() } catch (e) { return [e.name, e.message, e.secret, e.cause] }', { fail });
    expect(value(r)).toEqual(['TypeError', 'async denied', undefined, undefined]);
    expectAllHealthy();
  });
});

describe('guest Proxy objects passed to host functions', () => {
  const received: unknown[] = [];
  const take = (v: unknown) => {
    received.push(v);
    return 'took';
  };

  const cases: Record<string, [string, RegExp]> = {
    'ownKeys throws': ["new Proxy({}, { ownKeys() { throw new Error('ownKeys trap') } })", /ownKeys trap/],
    'get throws': [
      "new Proxy({}, { ownKeys: () => ['a'], getOwnPropertyDescriptor: () => ({ value: 1, enumerable: true, configurable: true }), get() { throw new Error('get trap') } })",
      /get trap/,
    ],
    'get recurses into itself': [
      "new Proxy({}, { ownKeys: () => ['a'], getOwnPropertyDescriptor: () => ({ value: 1, enumerable: true, configurable: true }), get(t, k, r) { return r[k] } })",
      /stack|recursion/i,
    ],
    'get returns a fresh proxy every time': [
      "(() => { const h = { ownKeys: () => ['deeper'], getOwnPropertyDescriptor: () => ({ value: 1, enumerable: true, configurable: true }), get: () => new Proxy({}, h) }; return new Proxy({}, h) })()",
      /nested deeper than/,
    ],
    'getPrototypeOf throws': ["new Proxy({}, { getPrototypeOf() { throw new Error('proto trap') } })", /proto trap/],
    'a revoked proxy': ['(() => { const p = Proxy.revocable({}, {}); p.revoke(); return p.proxy })()', /revoked/],
    'an array proxy with a huge length': [
      'new Proxy([], { get: (t, k) => (k === "length" ? 2 ** 32 - 1 : undefined) })',
      /.*/,
    ],
  };
  for (const [name, [make, pattern]] of Object.entries(cases)) {
    it(`fails cleanly when ${name}`, () => {
      const before = received.length;
      const r = liveSync(
        `const p = ${make};\ntake(p);\nreturn 'no error';`,
        { take },
        { limits: { timeoutMs: 300, memoryBytes: 32 << 20 } },
      );
      expect(r.ok, JSON.stringify(r)).toBe(false);
      expect(['EVAL_ERROR', 'TIMEOUT', 'MEMORY_LIMIT']).toContain(r.error?.code);
      if (r.error?.code === 'EVAL_ERROR') expect(r.error.message).toMatch(pattern);
      expect(received.length).toBe(before);
      expectAllHealthy();
    });
  }

  it('the guest can catch the failure and carry on', () => {
    const r = liveSync(
      "try { take(new Proxy({}, { ownKeys() { throw new Error('nope') } })) } catch (e) { return 'caught ' + e.message + ', then ' + take({ ok: 1 }) }",
      { take },
    );
    expect(value(r)).toBe('caught nope, then took');
    expect(received[received.length - 1]).toEqual({ ok: 1 });
    expectAllHealthy();
  });
});

describe('species and thenables on values handed to the host', () => {
  it('Symbol.species on a guest array is not honoured by host array methods', () => {
    let result: unknown;
    const useHostMethods = (a: number[]) => {
      result = [a.map((x) => x * 2), a.filter(() => true), a.slice(0), a.concat([9])];
      return Array.isArray(a) && Object.getPrototypeOf(a) === Array.prototype;
    };
    const r = liveSync(
      `let ran = 0;
      class Evil extends Array { static get [Symbol.species]() { ran++; return function () { ran++; return {}; }; } }
      const a = Evil.from([1, 2, 3]);
      const b = [1, 2, 3];
      Object.defineProperty(b, 'constructor', { value: { [Symbol.species]: function () { ran++; return {}; } } });
      return [useHostMethods(a), useHostMethods(b), ran];`,
      { useHostMethods },
    );
    expect(value(r)).toEqual([true, true, 0]);
    expect(result).toEqual([
      [2, 4, 6],
      [1, 2, 3],
      [1, 2, 3],
      [1, 2, 3, 9],
    ]);
    expectAllHealthy();
  });

  it('a thenable handed to an async host function runs only inside the sandbox, under its deadline', async () => {
    const awaitIt = async (v: unknown) => await v;
    const r = await live(
      'const seen = []; const v = await awaitIt({ then(resolve) { seen.push(typeof process, typeof require); resolve(42); } }); return [v, seen];',
      { awaitIt },
    );
    expect(value(r)).toEqual([42, ['undefined', 'undefined']]);
    const loop = await live('await awaitIt({ then() { for (;;) {} } })', { awaitIt }, { limits: { timeoutMs: 150 } });
    expect(loop.error?.code).toBe('TIMEOUT');
    expectAllHealthy();
  });

  it('a thenable the host keeps and awaits after the run does not run guest code', async () => {
    let kept: unknown;
    const r = await live('let calls = 0; keep({ then(resolve) { calls++; resolve("late") } }); return calls', {
      keep: (v: unknown) => {
        kept = v;
      },
    });
    expect(value(r)).toBe(0);
    await expect(Promise.resolve().then(() => kept)).rejects.toThrow(/after its run ended/);
    expectAllHealthy();
  });
});

describe('prototype keys in data passed to host functions', () => {
  it('__proto__, constructor and prototype keys stay plain data', () => {
    const got: any[] = [];
    const take = (v: unknown) => got.push(v);
    const r = liveSync(
      `take(JSON.parse('{"__proto__": {"polluted": 1}}'));
      take(JSON.parse('{"constructor": {"prototype": {"polluted": 1}}}'));
      take({ ['__proto__']: { polluted: 1 }, nested: [{ ['__proto__']: { polluted: 1 } }] });
      take(new Map([['__proto__', { polluted: 1 }]]));
      take([JSON.parse('{"__proto__": null}')]);
      return 5;`,
      { take },
    );
    expect(value(r)).toBe(5);
    expect(Object.getPrototypeOf(got[0])).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(got[0], '__proto__')?.value).toEqual({ polluted: 1 });
    expect(got[1].constructor).toEqual({ prototype: { polluted: 1 } });
    expect(Object.getPrototypeOf(got[1])).toBe(Object.prototype);
    expect(Object.getPrototypeOf(got[2].nested[0])).toBe(Object.prototype);
    expect(got[3].get('__proto__')).toEqual({ polluted: 1 });
    expect(Object.getPrototypeOf(got[4][0])).toBe(Object.prototype);
    expect(Object.prototype.hasOwnProperty.call(got[4][0], '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((Object.prototype as Record<string, unknown>).polluted).toBeUndefined();
    expectAllHealthy();
  });

  it('setting __proto__ or constructor on a host object is refused', () => {
    const target = { a: 1 };
    const r = liveSync(
      `const out = [];
      for (const k of ['__proto__', 'constructor', 'prototype', '__defineGetter__']) {
        try { target[k] = { polluted: 1 }; out.push(k + ' set'); } catch (e) { out.push(e.name); }
      }
      try { delete target.__proto__; out.push('deleted'); } catch (e) { out.push(e.name); }
      return out;`,
      { target },
    );
    expect(value(r)).toEqual(['TypeError', 'TypeError', 'TypeError', 'TypeError', 'TypeError']);
    expect(Object.getPrototypeOf(target)).toBe(Object.prototype);
    expect(Object.keys(target)).toEqual(['a']);
    expectAllHealthy();
  });
});

describe('serialisation hooks on guest objects', () => {
  it('Symbol.for("nodejs.util.inspect.custom") is not carried to the host', () => {
    let got: unknown;
    const r = liveSync(
      `let ran = false;
      take({ a: 1, [Symbol.for('nodejs.util.inspect.custom')]() { ran = true; return 'HIJACKED'; } });
      return ran;`,
      { take: (v: unknown) => (got = v) },
    );
    expect(value(r)).toBe(false);
    expect(Object.getOwnPropertySymbols(got as object)).toEqual([]);
    expect(inspect(got)).toBe('{ a: 1 }');
    expectAllHealthy();
  });

  it('toJSON arrives as a sandbox function: it never runs as host code', () => {
    let got: any;
    let during = '';
    const take = (v: any) => {
      got = v;
      during = JSON.stringify(v);
    };
    const r = liveSync(
      'take({ a: 1, toJSON() { return { replaced: true, hostVisible: typeof process } } }); return 1',
      { take },
    );
    expect(value(r)).toBe(1);
    // called while the run was active: it ran inside the sandbox, where no host global exists
    expect(JSON.parse(during)).toEqual({ replaced: true, hostVisible: 'undefined' });
    expect(got.a).toBe(1);
    expect(typeof got.toJSON).toBe('function');
    // after the run the function is dead: no guest code runs any more
    expect(() => JSON.stringify(got)).toThrow(/after its run ended/);
    expectAllHealthy();
  });

  it('a toJSON that loops forever is stopped by the deadline', () => {
    const r = liveSync(
      'take({ toJSON() { for (;;) {} } })',
      { take: (v: unknown) => JSON.stringify(v) },
      { limits: { timeoutMs: 150 } },
    );
    expect(r.error?.code).toBe('TIMEOUT');
    expectAllHealthy();
  });
});

describe('re-entrancy', () => {
  it('a host function may call runSync from inside a live run', () => {
    const nested = (src: string) => {
      const r = runSync(src);
      return r.ok ? r.value : `failed: ${r.error?.code}`;
    };
    const nestedLive = () => {
      const r = runSync('return inner() * 2', { globals: { inner: () => 21 } });
      return r.ok ? r.value : `failed: ${r.error?.message}`;
    };
    const r = liveSync(
      'return [nested("return 1 + 1"), nested("for (;;) {}"), nestedLive(), nested("globalThis.x = 1; return typeof x")]',
      {
        nested: (s: string) =>
          s.includes('for') ? (runSync(s, { limits: { timeoutMs: 50 } }).error?.code ?? 'ok') : nested(s),
        nestedLive,
      },
    );
    expect(value(r)).toEqual([2, 'TIMEOUT', 42, 'number']);
    expectAllHealthy();
  });

  it('a nested run may call a callback of the outer run', () => {
    const bridge = (cb: (x: number) => number) => {
      const r = runSync('return cb(20) + 1', { globals: { cb } });
      return r.ok ? r.value : `failed: ${r.error?.message}`;
    };
    const r = liveSync('let calls = 0; const out = bridge((x) => { calls++; return x * 2 }); return [out, calls]', {
      bridge,
    });
    expect(value(r)).toEqual([41, 1]);
    expectAllHealthy();
  });

  it('a nested run that fails does not disturb the outer run', async () => {
    const r = await live('const inner = await nested(); return ["outer ok", inner]', {
      nested: async () => (await run('throw new TypeError("inner")')).error?.message,
    });
    expect(value(r)).toEqual(['outer ok', 'inner']);
    expectAllHealthy();
  });
});

describe('proxies and callbacks after the run', () => {
  it('a callback from one run is dead inside the next run', () => {
    let kept: unknown;
    value(liveSync('keep(() => "alive"); return 1', { keep: (f: unknown) => (kept = f) }));
    const r = liveSync('try { return old() } catch (e) { return e.message }', { old: kept });
    expect(value(r)).toMatch(/after its run ended/);
    expectAllHealthy();
  });

  it('a host promise that settles after the run ended is ignored', async () => {
    let settle: (v: unknown) => void = () => {};
    const r = await live('later().then((v) => { globalThis.seen = v }); return "done"', {
      later: () => new Promise((resolve) => (settle = resolve)),
    });
    expect(value(r)).toBe('done');
    settle({ late: true });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expectAllHealthy();
  });

  it('a callback kept by the host is dead after the run ended by a timeout', async () => {
    let kept: (() => unknown) | undefined;
    const r = await live(
      'keep(() => 1); for (;;) {}',
      { keep: (f: () => unknown) => (kept = f) },
      { limits: { timeoutMs: 100 } },
    );
    expect(r.error?.code).toBe('TIMEOUT');
    expect(() => kept!()).toThrow(/after its run ended/);
    expectAllHealthy();
  });

  it('host objects a run touched are released and usable by the host afterwards', async () => {
    const shared = { list: [1, 2] };
    for (let i = 0; i < 20; i++) {
      value(await live('shared.list.push(shared.list.length + 1); return 1', { shared }));
    }
    expect(shared.list).toHaveLength(22);
    expectAllHealthy();
  });
});

// The guest half of the membrane is made once per thread and shared by every live run: its
// traps find a proxy's run and host id on the proxy's own handler. None of that may show.
describe('the membrane shared by runs', () => {
  const PROBE = `
    const seen = {};
    for (const [name, p] of [['object', obj], ['array', arr], ['function', fn]]) {
      const c = Object.create(p);
      const guesses = [Symbol('run'), Symbol('id'), Symbol.for('run'), Symbol.for('id')];
      seen[name] = [
        Object.getOwnPropertySymbols(p).length,
        Reflect.ownKeys(p).filter((k) => typeof k === 'symbol').length,
        Object.getOwnPropertySymbols(Object.getOwnPropertyDescriptors(p)).length,
        Object.getOwnPropertySymbols({ ...p }).length,
        Object.getOwnPropertySymbols(Object.assign({}, p)).length,
        guesses.filter((s) => p[s] !== undefined || s in p || c[s] !== undefined || s in c).length,
      ];
    }
    return seen;`;

  it('a proxy shows no bookkeeping of its own, whatever its kind', () => {
    const host = { obj: { a: 1 }, arr: [1, 2], fn: function named() {} };
    const r = liveSync(PROBE, host);
    expect(value(r)).toEqual({
      object: [0, 0, 0, 0, 0, 0],
      array: [0, 0, 0, 0, 0, 0],
      function: [0, 0, 0, 0, 0, 0],
    });
    expect(Object.getOwnPropertySymbols(host.obj)).toEqual([]);
    expect(Object.keys(host.obj)).toEqual(['a']);
    expectAllHealthy();
  });

  it('two live runs in flight at once each reach only their own host objects', async () => {
    let release: (v: unknown) => void = () => {};
    const a = { name: 'a', wait: () => new Promise((resolve) => (release = resolve)) };
    const b = { name: 'b', wait: () => Promise.resolve(2) };
    const first = live('const n = h.name; return h.wait().then((v) => [n, h.name, v, typeof b])', { h: a });
    const second = await live('return h.wait().then((v) => [h.name, v, typeof a])', { h: b });
    expect(value(second)).toEqual(['b', 2, 'undefined']);
    release(1);
    expect(value(await first)).toEqual(['a', 'a', 1, 'undefined']);
    expectAllHealthy();
  });

  it("a callback kept from a finished run runs neither its code nor the later run's", () => {
    let kept: (() => unknown) | undefined;
    const earlier = { touched: false };
    value(
      liveSync('keep(() => { mark.touched = true; return 1 }); return 1', {
        keep: (f: () => unknown) => (kept = f),
        mark: earlier,
      }),
    );
    const later = { touched: false };
    const r = liveSync('try { return poke() } catch (e) { return e.message }', {
      poke: () => kept!(),
      mark: later,
    });
    expect(value(r)).toMatch(/after its run ended/);
    expect(earlier.touched).toBe(false);
    expect(later.touched).toBe(false);
    expectAllHealthy();
  });

  it('proxies, method stand-ins and instance checks are made afresh for every run', () => {
    class Item {}
    const shared = { list: [1], Item, item: new Item() };
    const marks = [];
    for (let i = 0; i < 3; i++) {
      const r = liveSync(
        `const m = shared.list.push, h = shared.Item[Symbol.hasInstance];
         const fresh = [Object.isFrozen(m), Object.isFrozen(h), shared.item instanceof shared.Item];
         try { m.mark = 1 } catch {}
         try { h.mark = 1 } catch {}
         return [...fresh, m.mark === undefined, h.mark === undefined, Object.isExtensible(shared)]`,
        { shared },
      );
      marks.push(value(r));
    }
    expect(marks).toEqual(Array(3).fill([true, true, true, true, true, true]));
    expectAllHealthy();
  });
});
