// Live host values through the membrane: `globals` with run() and runSync().
import { describe, expect, it } from 'vitest';
import { run, runSync, type RunOptions, type RunResult } from '../lib/index.js';
import { expectHealthy } from './helpers.js';

function ok(r: RunResult): unknown {
  if (!r.ok) throw new Error(`the run failed: ${JSON.stringify(r.error)}`);
  return r.value;
}

const live = (source: string, globals: RunOptions['globals'], options: RunOptions = {}) =>
  run(source, { ...options, globals });
const liveSync = (source: string, globals: RunOptions['globals'], options: RunOptions = {}) =>
  runSync(source, { ...options, globals });

class Point {
  #x: number;
  y: number;
  constructor(x: number, y: number) {
    this.#x = x;
    this.y = y;
  }
  get x(): number {
    return this.#x;
  }
  set x(v: number) {
    if (typeof v !== 'number') throw new TypeError('x must be a number');
    this.#x = v;
  }
  length(): number {
    return Math.hypot(this.#x, this.y);
  }
  toString(): string {
    return `Point(${this.#x}, ${this.y})`;
  }
}

describe('globals as a Record or a Map', () => {
  it('host functions are callable from a Record, with run and runSync', async () => {
    const globals = { add: (a: number, b: number) => a + b, greet: (name: string) => `hello ${name}` };
    expect(ok(await live('return [add(2, 3), greet("guest")]', globals))).toEqual([5, 'hello guest']);
    expect(ok(liveSync('return [add(2, 3), greet("guest")]', globals))).toEqual([5, 'hello guest']);
  });

  it('host functions are callable from a Map', async () => {
    const globals = new Map<string, unknown>([
      ['add', (a: number, b: number) => a + b],
      ['config', { factor: 10 }],
    ]);
    expect(ok(await live('return add(1, 2) * config.factor', globals))).toBe(30);
    expect(ok(liveSync('return add(1, 2) * config.factor', globals))).toBe(30);
  });

  it('primitives are copied in and out', async () => {
    const seen: unknown[] = [];
    const globals = {
      n: 42,
      s: 'text',
      b: true,
      big: 12345678901234567890n,
      nothing: null,
      record: (...a: unknown[]) => seen.push(...a),
    };
    const r = await live(
      'record(n + 1, s.toUpperCase(), !b, big * 2n, nothing, undefined); return typeof big',
      globals,
    );
    expect(ok(r)).toBe('bigint');
    expect(seen).toEqual([43, 'TEXT', false, 24691357802469135780n, null, undefined]);
  });

  it('results coming back from the host are wrapped (objects) or copied (primitives)', async () => {
    const shared = { hits: 0 };
    const globals = { getShared: () => shared, getNumber: () => 7 };
    const r = await live(
      'const a = getShared(); a.hits++; const n = getNumber(); return [typeof a, a === getShared(), n]',
      globals,
    );
    expect(ok(r)).toEqual(['object', true, 7]);
    expect(shared.hits).toBe(1);
  });

  it('a global that collides with a built-in is refused', async () => {
    const r = await live('return 1', { Object: {} });
    expect(r.ok).toBe(false);
    // the caller's mistake, like a colliding `data` key: INVALID_INPUT, never INTERNAL
    expect(r.error?.code).toBe('INVALID_INPUT');
    expect(r.error?.message).toMatch(/Object/);
    expectHealthy();
  });
});

describe('host exceptions', () => {
  it('become guest errors carrying only name and message', async () => {
    const thrower = () => {
      const e = new RangeError('value out of range') as RangeError & { secret?: string; hostPath?: string };
      e.secret = 'token-123';
      e.hostPath = __filename;
      (e as Error & { cause?: unknown }).cause = { password: 'hunter2' };
      throw e;
    };
    const r = await live(
      `try { thrower(); return 'no error'; } catch (e) {
        return { name: e.name, message: e.message, isRange: e instanceof RangeError, keys: Object.getOwnPropertyNames(e),
                 secret: e.secret, cause: e.cause, hasCause: 'cause' in e, stack: String(e.stack) };
      }`,
      { thrower },
    );
    const v = ok(r) as Record<string, unknown>;
    expect(v.name).toBe('RangeError');
    expect(v.message).toBe('value out of range');
    expect(v.isRange).toBe(true);
    expect(v.secret).toBeUndefined();
    expect(v.cause).toBeUndefined();
    expect(v.hasCause).toBe(false);
    expect(v.keys).not.toContain('secret');
    expect(v.keys).not.toContain('cause');
    expect(String(v.stack)).not.toContain(__filename);
    expect(String(v.stack)).not.toMatch(/node:|node_modules/);
  });

  it('an uncaught host exception ends the run as a guest error with its name and message', async () => {
    const r = await live('boom()', {
      boom: () => {
        throw new TypeError('host said no');
      },
    });
    expect(r.ok).toBe(false);
    expect(r.error).toMatchObject({ code: 'EVAL_ERROR', name: 'TypeError', message: 'host said no', line: 1 });
    expect(r.error?.stack ?? '').not.toContain(__filename);
  });

  it('non-error throws and custom error names arrive as errors', async () => {
    class ValidationError extends Error {
      override name = 'ValidationError';
    }
    const r = await live(
      `const out = [];
      try { throwString(); } catch (e) { out.push(e instanceof Error, e.message); }
      try { throwCustom(); } catch (e) { out.push(e instanceof Error, e.name, e.message); }
      return out;`,
      {
        throwString: () => {
          throw 'plain string';
        },
        throwCustom: () => {
          throw new ValidationError('bad input');
        },
      },
    );
    expect(ok(r)).toEqual([true, 'plain string', true, 'ValidationError', 'bad input']);
  });

  it('a throwing host getter becomes a guest error', async () => {
    const obj = {
      get broken(): never {
        throw new Error('getter failed');
      },
    };
    expect(ok(await live('try { return obj.broken } catch (e) { return e.message }', { obj }))).toBe('getter failed');
  });
});

describe('host property reads', () => {
  // Plain names read as primitives take the native trap's direct path; everything else goes
  // through the guest half. Both must give the same answers.
  it('copy every kind of primitive exactly, -0 and NaN included', () => {
    const obj = {
      i: 7,
      f: 1.5,
      big: 2 ** 40,
      neg0: -0,
      nan: Number.NaN,
      inf: -Infinity,
      t: true,
      f0: false,
      n: null,
      u: undefined,
      s: 'héllo',
      e: '',
      lone: '\ud800x',
    };
    const r = liveSync(
      `return [obj.i, obj.f, obj.big, Object.is(obj.neg0, -0), Number.isNaN(obj.nan), obj.inf, obj.t, obj.f0, obj.n, obj.u,
        obj.s, obj.e, obj.lone.length, obj.lone.charCodeAt(0), obj.missing, typeof obj.i, typeof obj.big]`,
      { obj },
    );
    expect(ok(r)).toEqual([
      7,
      1.5,
      2 ** 40,
      true,
      true,
      -Infinity,
      true,
      false,
      null,
      undefined,
      'héllo',
      '',
      2,
      0xd800,
      undefined,
      'number',
      'number',
    ]);
  });

  it('run a host getter once, whatever it returns', () => {
    let reads = 0;
    const obj = {
      get counted(): { n: number } {
        reads++;
        return { n: reads };
      },
      get prim(): number {
        reads++;
        return reads;
      },
    };
    const r = liveSync('const a = obj.counted; const b = obj.prim; return [a.n, b]', { obj });
    expect(ok(r)).toEqual([1, 2]);
    expect(reads).toBe(2);
  });

  it('count each read as a host call and stop at the budget', () => {
    const obj = { x: 1 };
    const counted = liveSync('let s = 0; for (let i = 0; i < 10; i++) s += obj.x; return s', { obj });
    expect(ok(counted)).toBe(10);
    expect(counted.stats.hostCalls).toBe(10);
    const stopped = liveSync(
      'let s = 0; for (;;) { try { s += obj.x } catch {} }',
      { obj },
      { limits: { hostCalls: 100 } },
    );
    expect(stopped.error?.code).toBe('HOST_CALL_LIMIT');
    expect(stopped.stats.hostCalls).toBe(101);
  });

  it('keep blocked names and symbols on the guest side', () => {
    const obj = { x: 1, [Symbol.toStringTag]: 'Host' };
    const r = liveSync(
      'return [obj.constructor === Object, obj.__proto__ === Object.getPrototypeOf(obj), String(obj[Symbol.toStringTag]), obj["x"]]',
      { obj },
    );
    // `constructor` is the guest's own Object (answered from the guest side), never the host's.
    expect(ok(r)).toEqual([true, true, 'Host', 1]);
  });

  it('report a throwing getter with its name and message, and keep the run usable', () => {
    const obj = {
      get bad(): never {
        throw new RangeError('out of range');
      },
      good: 2,
    };
    const r = liveSync(
      'let m; try { obj.bad } catch (e) { m = [e.name, e.message, e instanceof RangeError] } return [m, obj.good]',
      { obj },
    );
    expect(ok(r)).toEqual([['RangeError', 'out of range', true], 2]);
  });

  it('read long and non-ASCII names', () => {
    const long = 'k'.repeat(5000);
    const obj = { [long]: 'long', ключ: 'cyrillic', '🔑': 'emoji' };
    const r = liveSync(`return [obj['${long}'], obj['ключ'], obj['🔑']]`, { obj });
    expect(ok(r)).toEqual(['long', 'cyrillic', 'emoji']);
  });
});

describe('async host functions', () => {
  it('are awaited while the event loop keeps running', async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    try {
      const slow = (x: number) => new Promise<number>((resolve) => setTimeout(() => resolve(x * 2), 80));
      const r = await live('const a = await slow(3); const b = await slow(a); return b', { slow });
      expect(ok(r)).toBe(12);
      expect(ticks).toBeGreaterThanOrEqual(5);
    } finally {
      clearInterval(timer);
    }
  });

  it('rejections become guest errors with only name and message', async () => {
    const fail = async () => {
      const e = new TypeError('async no') as TypeError & { extra?: number };
      e.extra = 1;
      throw e;
    };
    const r = await live(
      'try { await fail(); } catch (e) { return [e.name, e.message, e.extra, e instanceof TypeError] }',
      { fail },
    );
    expect(ok(r)).toEqual(['TypeError', 'async no', undefined, true]);
  });

  it('resolved host objects are live proxies', async () => {
    const store = { items: [1, 2] };
    const load = async () => store;
    const r = await live('const s = await load(); s.items.push(3); return s === await load()', { load });
    expect(ok(r)).toBe(true);
    expect(store.items).toEqual([1, 2, 3]);
  });

  it('a host promise that never settles ends the run with TIMEOUT at the deadline', async () => {
    const started = Date.now();
    const r = await live(
      'await never(); return 1',
      { never: () => new Promise(() => {}) },
      { limits: { timeoutMs: 150 } },
    );
    const elapsed = Date.now() - started;
    expect(r.ok).toBe(false);
    expect(r.error?.code).toBe('TIMEOUT');
    expect(elapsed).toBeGreaterThanOrEqual(140);
    expect(elapsed).toBeLessThan(1500);
  });

  it('the deadline covers the time spent waiting on host promises', async () => {
    const slow = () => new Promise((resolve) => setTimeout(resolve, 60));
    const r = await live(
      'for (let i = 0; i < 10; i++) await slow(); return "done"',
      { slow },
      { limits: { timeoutMs: 200 } },
    );
    expect(r.error?.code).toBe('TIMEOUT');
  });

  it('runSync awaiting a host promise fails with a clear INVALID_INPUT error', () => {
    for (const wait of [() => Promise.resolve(5), () => new Promise((resolve) => setTimeout(resolve, 5))]) {
      const r = liveSync('const v = await wait(); return v', { wait });
      expect(r.ok).toBe(false);
      expect(r.error?.code).toBe('INVALID_INPUT');
      expect(r.error?.message).toMatch(/runSync/);
      expect(r.error?.message).toMatch(/run\(\)/);
    }
    expectHealthy();
  });

  it('runSync may still call an async host function it does not await', () => {
    expect(ok(liveSync('const p = later(); return p instanceof Promise', { later: async () => 1 }))).toBe(true);
  });

  it('an AbortSignal cancels a live run waiting on a host promise, promptly', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const started = Date.now();
    const r = await live(
      'await never(); return 1',
      { never: () => new Promise(() => {}) },
      { signal: controller.signal, limits: { timeoutMs: 10_000 } },
    );
    expect(r.ok).toBe(false);
    expect(r.error?.code).toBe('CANCELLED');
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('an already aborted signal stops a live run before it starts', async () => {
    let called = false;
    const r = await live('touch(); return 1', { touch: () => (called = true) }, { signal: AbortSignal.abort() });
    expect(r.error?.code).toBe('CANCELLED');
    expect(called).toBe(false);
  });
});

describe('host objects as proxies', () => {
  it('keeps identity for objects, arrays, maps and functions', async () => {
    const data = { inner: { v: 1 }, list: [1], map: new Map(), fn: () => 1 };
    const same = (a: unknown, b: unknown) => a === b;
    const isInner = (x: unknown) => x === data.inner;
    const r = await live(
      'return [data.inner === data.inner, data.list === data.list, data.map === data.map, data.fn === data.fn, same(data.inner, data.inner), isInner(data.inner), isInner({ v: 1 })]',
      { data, same, isInner },
    );
    expect(ok(r)).toEqual([true, true, true, true, true, true, false]);
  });

  it('reads and writes plain properties, `in` and `delete`', async () => {
    const obj: Record<string, unknown> = { a: 1, b: 2 };
    const r = await live(
      'obj.c = obj.a + obj.b; const had = "b" in obj; delete obj.a; return [had, "a" in obj, "c" in obj]',
      { obj },
    );
    expect(ok(r)).toEqual([true, false, true]);
    expect(obj).toEqual({ b: 2, c: 3 });
  });

  it('gets and sets through prototype accessors of class instances', async () => {
    const p = new Point(3, 4);
    const r = await live(
      'const before = p.x; p.x = 6; p.y = 8; return [before, p.x, p.length(), "x" in p, "length" in p, Object.keys(p)]',
      { p },
    );
    expect(ok(r)).toEqual([3, 6, 10, true, true, ['y']]);
    expect(p.x).toBe(6);
  });

  it('host setters validate guest writes', async () => {
    const p = new Point(1, 1);
    const r = await live('try { p.x = "nope"; return "set" } catch (e) { return e.name + ": " + e.message }', { p });
    expect(ok(r)).toBe('TypeError: x must be a number');
    expect(p.x).toBe(1);
  });

  it('constructs host classes and answers instanceof', async () => {
    const r = await live(
      'const q = new Point(5, 12); return [q.length(), q instanceof Point, ({}) instanceof Point, `${q}`]',
      { Point },
    );
    expect(ok(r)).toEqual([13, true, false, 'Point(5, 12)']);
  });

  it('Object.keys, Object.entries and JSON.stringify read own properties', async () => {
    const obj = { a: 1, nested: { b: [1, 2] }, p: new Point(1, 2) };
    const r = await live('return [Object.keys(obj), Object.entries(obj.nested), JSON.stringify(obj)]', { obj });
    expect(ok(r)).toEqual([['a', 'nested', 'p'], [['b', [1, 2]]], '{"a":1,"nested":{"b":[1,2]},"p":{"y":2}}']);
  });

  it('for...of, spread, Array.from and destructuring iterate host arrays, maps and sets', async () => {
    const arr = [3, 1, 2];
    const map = new Map<string, number>([
      ['a', 1],
      ['b', 2],
    ]);
    const set = new Set(['x', 'y']);
    const r = await live(
      `let sum = 0; for (const v of arr) sum += v;
      const pairs = []; for (const [k, v] of map) pairs.push(k + v);
      const [first, ...rest] = arr;
      return [sum, [...arr], Array.from(arr, (x) => x * 10), pairs, [...map.keys()], [...set], first, rest, Array.isArray(arr), arr.length]`,
      { arr, map, set },
    );
    expect(ok(r)).toEqual([6, [3, 1, 2], [30, 10, 20], ['a1', 'b2'], ['a', 'b'], ['x', 'y'], 3, [1, 2], true, 3]);
  });

  it('template literals and string conversion use the host toString / toPrimitive', async () => {
    const r = await live('return [`${arr}`, `${p}`, String(p), p + "!", `${d}`.length > 10, `${obj}`]', {
      arr: [1, 2, 3],
      p: new Point(1, 2),
      d: new Date(0),
      obj: {},
    });
    expect(ok(r)).toEqual(['1,2,3', 'Point(1, 2)', 'Point(1, 2)', 'Point(1, 2)!', true, '[object Object]']);
  });

  it('host Map and Set methods work on the real collections', async () => {
    const map = new Map<string, number>([['k', 1]]);
    const set = new Set<number>();
    const r = await live(
      'map.set("z", 26); set.add(1).add(2); return [map.get("k"), map.has("z"), map.size, set.size, map.delete("k")]',
      { map, set },
    );
    expect(ok(r)).toEqual([1, true, 2, 2, true]);
    expect([...map.entries()]).toEqual([['z', 26]]);
    expect([...set]).toEqual([1, 2]);
  });

  it('setPrototypeOf, defineProperty and freezing host objects are refused', async () => {
    const obj = { a: 1 };
    const r = await live(
      `const out = [];
      for (const attempt of [
        () => Object.setPrototypeOf(obj, null),
        () => Object.defineProperty(obj, "b", { value: 2 }),
        () => Object.freeze(obj),
        () => Object.preventExtensions(obj),
        () => { obj.__proto__ = { evil: true }; },
      ]) {
        try { attempt(); out.push("allowed"); } catch (e) { out.push(e.name); }
      }
      return out;`,
      { obj },
    );
    expect(ok(r)).toEqual(['TypeError', 'TypeError', 'TypeError', 'TypeError', 'TypeError']);
    expect(Object.getPrototypeOf(obj)).toBe(Object.prototype);
    expect(Object.isFrozen(obj)).toBe(false);
    expect(Object.keys(obj)).toEqual(['a']);
  });
});

describe('host methods taking guest callbacks', () => {
  const items = () => [
    { name: 'milk', price: 2 },
    { name: 'bread', price: 1 },
    { name: 'cheese', price: 6 },
  ];

  it('map, filter, find, some, every, reduce and forEach call back into the guest', async () => {
    const r = await live(
      `const seen = [];
      items.forEach((i, idx) => seen.push(idx + ":" + i.name));
      return [
        items.map((i) => i.price * 2),
        items.filter((i) => i.price > 1).map((i) => i.name),
        items.find((i) => i.name === "bread").price,
        items.findIndex((i) => i.name === "cheese"),
        items.some((i) => i.price > 5), items.every((i) => i.price > 5),
        items.reduce((sum, i) => sum + i.price, 0),
        seen,
      ];`,
      { items: items() },
    );
    expect(ok(r)).toEqual([[4, 2, 12], ['milk', 'cheese'], 1, 2, true, false, 9, ['0:milk', '1:bread', '2:cheese']]);
  });

  it('sort with a guest comparator sorts the host array in place', async () => {
    const list = items();
    const r = await live('list.sort((a, b) => a.price - b.price); return list.map((i) => i.name)', { list });
    expect(ok(r)).toEqual(['bread', 'milk', 'cheese']);
    expect(list.map((i) => i.name)).toEqual(['bread', 'milk', 'cheese']);
  });

  it('a host function receives a guest callback and calls it with host values', async () => {
    const source = { id: 7 };
    const withSource = (cb: (s: unknown, n: number) => unknown) => cb(source, 2);
    const r = await live('return withSource((s, n) => { s.id *= n; return s.id })', { withSource });
    expect(ok(r)).toBe(14);
    expect(source.id).toBe(14);
  });

  it('a guest callback passed twice is the same host function', async () => {
    const kept: unknown[] = [];
    const keep = (f: unknown) => kept.push(f);
    ok(await live('const f = () => 1; keep(f); keep(f); keep(() => 1)', { keep }));
    expect(kept[0]).toBe(kept[1]);
    expect(kept[0]).not.toBe(kept[2]);
  });

  it('a guest error thrown inside a callback reaches the host and then the guest', async () => {
    let hostSaw = '';
    const each = (cb: () => void) => {
      try {
        cb();
      } catch (e) {
        hostSaw = `${(e as Error).name}: ${(e as Error).message}`;
        throw e;
      }
    };
    const r = await live(
      'try { each(() => { throw new RangeError("inside") }) } catch (e) { return e.name + "/" + e.message }',
      { each },
    );
    expect(ok(r)).toBe('RangeError/inside');
    expect(hostSaw).toBe('RangeError: inside');
  });

  it('a guest callback kept by the host throws a clear error after the run', async () => {
    let kept: ((x: number) => number) | undefined;
    const r = await live('keep((x) => x + 1); return kept(1)', {
      keep: (f: (x: number) => number) => {
        kept = f;
      },
      kept: (x: number) => kept!(x),
    });
    expect(ok(r)).toBe(2);
    expect(typeof kept).toBe('function');
    expect(() => kept!(1)).toThrow(/sandbox callback was called after its run ended/);
    let err: unknown;
    try {
      kept!(1);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(Error);
    expectHealthy();
  });

  it('a guest callback kept by an async host function and called later, after the run, throws', async () => {
    let later: Promise<string> | undefined;
    const r = await live('schedule(() => "late"); return 1', {
      schedule: (f: () => string) => {
        later = new Promise((resolve, reject) =>
          setTimeout(() => {
            try {
              resolve(f());
            } catch (e) {
              reject(e);
            }
          }, 20),
        );
      },
    });
    expect(ok(r)).toBe(1);
    await expect(later).rejects.toThrow(/after its run ended/);
  });
});

describe('guest values passed to host functions', () => {
  it('plain objects and arrays are deep-copied into fresh host objects', async () => {
    let got: any;
    const take = (v: unknown) => {
      got = v;
      got.list.push('host');
    };
    const r = await live(
      'const o = { a: 1, list: ["guest"], nested: { d: new Date(0), m: new Map([[1, 2]]), s: new Set([3]) } }; take(o); o.a = 2; return o.list.length',
      { take },
    );
    expect(ok(r)).toBe(1);
    expect(got.a).toBe(1);
    expect(Object.getPrototypeOf(got)).toBe(Object.prototype);
    expect(Array.isArray(got.list)).toBe(true);
    expect(got.list).toEqual(['guest', 'host']);
    expect(got.nested.d).toBeInstanceOf(Date);
    expect(got.nested.d.getTime()).toBe(0);
    expect(got.nested.m).toBeInstanceOf(Map);
    expect([...got.nested.m]).toEqual([[1, 2]]);
    expect(got.nested.s).toBeInstanceOf(Set);
  });

  it('a __proto__ key stays data and the host Object.prototype is unchanged', async () => {
    const got: any[] = [];
    const take = (v: unknown) => got.push(v);
    const r = await live(
      `take(JSON.parse('{"__proto__": {"polluted": "yes"}, "a": 1}'));
      take({ ["__proto__"]: { polluted: "yes" } });
      take([JSON.parse('{"__proto__": {"isAdmin": true}}')]);
      return got_count();`,
      { take, got_count: () => got.length },
    );
    expect(ok(r)).toBe(3);
    for (const v of [got[0], got[1], got[2][0]]) {
      expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
      expect(Object.prototype.hasOwnProperty.call(v, '__proto__')).toBe(true);
      expect(v.polluted).toBeUndefined();
      expect(v.isAdmin).toBeUndefined();
    }
    expect(Object.keys(got[0])).toEqual(['__proto__', 'a']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
  });

  it('cycles and symbols cannot be passed to the host', async () => {
    const r = await live(
      `const out = [];
      const a = {}; a.self = a;
      try { take(a); } catch (e) { out.push(e.message); }
      try { take(Symbol("s")); } catch (e) { out.push(e.message); }
      return out;`,
      { take: () => {} },
    );
    const [cycle, symbol] = ok(r) as string[];
    expect(cycle).toMatch(/cycle/);
    expect(symbol).toMatch(/symbol/);
  });

  it('a guest object holding a host proxy passes the real host object', async () => {
    const inner = { n: 1 };
    let got: any;
    const r = await live('take({ wrapped: inner, list: [inner] }); return 1', {
      inner,
      take: (v: unknown) => (got = v),
    });
    expect(ok(r)).toBe(1);
    expect(got.wrapped).toBe(inner);
    expect(got.list[0]).toBe(inner);
  });
});

describe('crossings, budget and deadline', () => {
  it('stats.hostCalls counts crossings', async () => {
    const f = () => 1;
    expect((await live('f(); f(); f(); return 1', { f })).stats.hostCalls).toBe(3);
    expect((await live('return 1', { f })).stats.hostCalls).toBe(0);
    const r = await live('return arr.map((x) => x * 2)', { arr: [1, 2, 3] });
    // get `map`, the call, and one callback per element at least
    expect(r.stats.hostCalls).toBeGreaterThanOrEqual(5);
    expect(liveSync('f(); f(); return 1', { f }).stats.hostCalls).toBe(2);
  });

  it('runs without globals report no host calls', async () => {
    expect((await run('return 1')).stats.hostCalls).toBe(0);
  });

  it('the per-run host-call budget stops a run with HOST_CALL_LIMIT', async () => {
    let calls = 0;
    const f = () => ++calls;
    const r = await live('for (;;) f()', { f }, { limits: { timeoutMs: 25_000, hostCalls: 5000 } });
    expect(r.ok).toBe(false);
    expect(r.error?.code).toBe('HOST_CALL_LIMIT');
    expect(r.stats.hostCalls).toBe(5001);
    expect(calls).toBe(5000);
    expectHealthy();
  });

  it('the default budget is one million crossings', async () => {
    const f = () => 1;
    const r = await live('for (let i = 0; i < 1000; i++) f(); return 1', { f }, { limits: { hostCalls: 999 } });
    expect(r.error?.code).toBe('HOST_CALL_LIMIT');
    const ok = await live('for (let i = 0; i < 1000; i++) f(); return 1', { f });
    expect(ok.value).toBe(1);
  });

  it('a guest catch cannot swallow the budget stop', async () => {
    // the budget stop is uncatchable, like the deadline: the guest keeps no control
    const f = () => 1;
    const r = await live(
      'let caught = 0; for (;;) { try { f() } catch { caught++ } }',
      { f },
      { limits: { timeoutMs: 25_000, hostCalls: 5000 } },
    );
    expect(r.error?.code).toBe('HOST_CALL_LIMIT');
  });

  it('the deadline is checked at every crossing', async () => {
    let calls = 0;
    const slowCall = () => {
      calls++;
      const until = Date.now() + 40;
      while (Date.now() < until) {
        // busy host work: the guest does almost nothing between crossings
      }
    };
    const started = Date.now();
    const r = await live(
      'for (let i = 0; i < 50; i++) slowCall(); return "finished"',
      { slowCall },
      { limits: { timeoutMs: 100 } },
    );
    expect(r.ok).toBe(false);
    expect(r.error?.code).toBe('TIMEOUT');
    expect(calls).toBeLessThanOrEqual(4);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('a tight loop of host calls times out', async () => {
    const r = await live('let i = 0; for (;;) { f(i++) }', { f: (x: number) => x }, { limits: { timeoutMs: 100 } });
    expect(r.error?.code).toBe('TIMEOUT');
    expect(r.stats.hostCalls).toBeGreaterThan(0);
    expect(r.stats.wallMs).toBeLessThan(1000);
  });

  it('a guest loop inside a callback invoked by the host times out', async () => {
    const r = await live('arr.forEach(() => { for (;;) {} })', { arr: [1, 2] }, { limits: { timeoutMs: 100 } });
    expect(r.error?.code).toBe('TIMEOUT');
    expectHealthy();
  });
});
