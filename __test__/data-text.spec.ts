// Plain JSON data crosses into the addon as JSON text, and JSON-safe results come back as JSON
// text. Both are shortcuts: the guest and the caller must see exactly what the copy made
// value by value gives.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { runSync, type RunResult } from '../lib/index.js';

const require = createRequire(__filename);
const { dataText } = require('../lib/data-text.js') as { dataText: (d: unknown) => string | undefined };
// How the wrapper reads the binding's answers (text or object).
const { fromNative } = require('../lib/run.js') as { fromNative: (reply: unknown) => RunResult };
// The binding itself copies `data` value by value (no text), and answers with text or objects.
const binding = require('../lib/native/load.js') as {
  runSync: (source: string, options?: object, cancel?: undefined, workspace?: undefined, dataText?: string) => unknown;
};

/** What a guest sees of its `d` global: types, keys in order, prototypes, -0, holes, sharing. */
const DESCRIBE = `
  const seen = new Map();
  const show = (v) => {
    if (typeof v === 'number') return Object.is(v, -0) ? '-0' : Number.isNaN(v) ? 'NaN' : v;
    if (typeof v === 'bigint') return 'bigint:' + v;
    if (typeof v !== 'object' || v === null) return v === undefined ? 'undefined' : v;
    if (seen.has(v)) return 'ref:' + seen.get(v);
    seen.set(v, seen.size);
    const proto = Object.getPrototypeOf(v);
    const kind = Array.isArray(v) ? 'array' : proto === Object.prototype ? 'object' : proto === null ? 'null-proto' : Object.prototype.toString.call(v);
    const keys = Reflect.ownKeys(v).map(String);
    const own = {};
    for (const k of keys) {
      const d = Object.getOwnPropertyDescriptor(v, k);
      own[k] = 'value' in d ? [show(d.value), d.writable, d.enumerable, d.configurable] : 'accessor';
    }
    return { kind, keys, own, holes: Array.isArray(v) ? v.length - Object.keys(v).length : 0 };
  };
  return JSON.stringify(show(d));
`;

const viaWrapper = (d: unknown) => runSync(DESCRIBE, { data: { d } });
const viaBinding = (d: unknown) => {
  const r = binding.runSync(DESCRIBE, { data: { d } });
  return fromNative(r);
};

const plain: Record<string, unknown> = {
  nested: { root: { title: 'a', items: [1, 2, { deep: [true, false, null] }] } },
  numbers: [0, 1, -1, 1.5, 2 ** 53 - 1, -(2 ** 53), 1e21, 1e-7, 5e-324, Number.MAX_VALUE],
  strings: ['', 'ascii', 'é', '日本', '😀', '"quoted" \\ back\nslash\t', '\u0000\u001f', '</script>'],
  keyOrder: { b: 1, a: 2, 10: 3, 2: 4, '01': 5, '-1': 6 },
  protoKey: JSON.parse('{"__proto__": {"polluted": true}, "constructor": {"prototype": 1}}'),
  empty: [{}, [], [[]], { '': '' }],
  nullProto: Object.assign(Object.create(null), { x: 1 }),
  // An array's other properties are left out by both copies.
  arrayWithExtra: Object.assign([1, 2], { extra: 3 }),
};

const odd: Record<string, unknown> = {
  negativeZero: { z: -0 },
  nan: [Number.NaN, Infinity, -Infinity],
  undef: { u: undefined, list: [undefined] },
  // biome-ignore lint/suspicious/noSparseArray: a hole is the point
  holes: [1, , 3],
  bigint: { b: 12345678901234567890n },
  date: { when: new Date(86_400_000) },
  map: new Map<unknown, unknown>([
    ['k', 1],
    [2, { v: 3 }],
  ]),
  set: new Set([1, 'two']),
  bytes: new Uint8Array([1, 2, 3]),
  shared: (() => {
    const s = { n: 1 };
    return { a: s, b: s };
  })(),
  cycle: (() => {
    const c: Record<string, unknown> = { n: 1 };
    c.self = c;
    return c;
  })(),
  instance: new (class Point {
    x = 1;
    y = 2;
  })(),
  loneSurrogate: { s: 'a\ud800b' },
  loneSurrogateKey: { 'k\udc00': 1 },
};

describe('data as JSON text', () => {
  it('is used for plain JSON and refused for everything JSON would change', () => {
    for (const [name, d] of Object.entries(plain)) expect(dataText({ d }), name).toBeTypeOf('string');
    for (const [name, d] of Object.entries(odd)) expect(dataText({ d }), name).toBeUndefined();
  });

  it('gives the guest exactly what the copy made value by value gives', () => {
    for (const [name, d] of Object.entries({ ...plain, ...odd })) {
      const a = viaWrapper(d);
      const b = viaBinding(d);
      expect(a.ok, `${name}: ${JSON.stringify(a.ok ? '' : a.error)}`).toBe(true);
      expect(b.ok, name).toBe(true);
      expect(a.ok && a.value, name).toEqual(b.ok && b.value);
    }
  });

  it('keeps `__proto__` a plain own key and leaves every prototype alone', () => {
    const d = JSON.parse('{"__proto__": {"polluted": true}}');
    const r = runSync(
      'return [Object.keys(d), Object.getPrototypeOf(d) === Object.prototype, ({}).polluted, d.__proto__.polluted]',
      {
        data: { d },
      },
    );
    expect(r.ok && r.value).toEqual([['__proto__'], true, undefined, true]);
  });

  it('never runs a getter twice or a proxy trap of its own', () => {
    let reads = 0;
    const withGetter = {
      plain: 1,
      get counted() {
        reads++;
        return 2;
      },
    };
    expect(dataText({ withGetter })).toBeUndefined();
    expect(reads).toBe(0);
    const r = runSync('return withGetter.counted + withGetter.plain', { data: { withGetter } });
    expect(r.ok && r.value).toBe(3);
    expect(reads).toBe(1);

    const traps: string[] = [];
    const proxy = new Proxy(
      { a: 1 },
      {
        ownKeys(t) {
          traps.push('ownKeys');
          return Reflect.ownKeys(t);
        },
        get(t, k, r) {
          traps.push(`get ${String(k)}`);
          return Reflect.get(t, k, r);
        },
        getOwnPropertyDescriptor(t, k) {
          traps.push(`gopd ${String(k)}`);
          return Reflect.getOwnPropertyDescriptor(t, k);
        },
      },
    );
    expect(dataText({ proxy })).toBeUndefined();
    expect(traps).toEqual([]);
    runSync('return proxy.a', { data: { proxy } });
    const viaWrapperTraps = [...traps];
    traps.length = 0;
    binding.runSync('return proxy.a', { data: { proxy } });
    expect(viaWrapperTraps).toEqual(traps);
  });

  it('reports the same errors and limits either way', () => {
    const bad = { f: () => 1 };
    expect(runSync('return 1', { data: bad }).error).toEqual(errorViaBinding('return 1', bad));
    // A revoked proxy throws on any inspection, Array.isArray included: still a failed result.
    for (const make of [() => Proxy.revocable({}, {}), () => Proxy.revocable([], {})]) {
      const { proxy, revoke } = make();
      revoke();
      expect(dataText(proxy)).toBeUndefined();
      const r = runSync('return 1', { data: proxy });
      expect(r.error?.code).toBe('INVALID_INPUT');
      expect(r.error).toEqual(errorViaBinding('return 1', proxy));
    }
    // An array is not a record: refused the same way by both paths (a caller without types).
    const list = [1, 2] as unknown as Record<string, unknown>;
    expect(dataText(list)).toBeUndefined();
    expect(runSync('return 1', { data: list }).error).toEqual(errorViaBinding('return 1', list));
    const long = 'x'.repeat(40 << 20);
    const big = { a: long, b: long };
    expect(dataText(big)).toBeTypeOf('string');
    const r = runSync('return 1', { data: big });
    expect(r.error?.code).toBe('INVALID_INPUT');
    expect(r.error?.message).toMatch(/more than \d+ bytes/);
    expect(r.error).toEqual(errorViaBinding('return 1', big));
    const deep: Record<string, unknown> = {};
    let at = deep;
    for (let i = 0; i < 300; i++) at = at.n = {};
    expect(dataText({ deep })).toBeUndefined();
    const tooDeep = runSync('return 1', { data: { deep } });
    expect(tooDeep.error?.message).toMatch(/nesting deeper than 256 levels at data\.deep(\.n)+/);
  });

  it('refuses data given both as text and as an option', () => {
    const r = binding.runSync('return 1', { data: { a: 1 } }, undefined, undefined, '{"a":2}');
    const parsed = fromNative(r);
    expect(parsed.error?.code).toBe('INVALID_INPUT');
    expect(parsed.error?.message).toMatch(/data is given twice/);
  });
});

function errorViaBinding(source: string, data: object): RunResult['error'] {
  const r = binding.runSync(source, { data });
  return fromNative(r).error;
}

describe('results as JSON text', () => {
  it('keeps -0, NaN, undefined inside, bigints, Dates, Maps and shared parts (which take the object form)', () => {
    const r = runSync(`const s = { n: 1 };
      return [-0, NaN, [undefined, 1], { u: undefined }, 10n, new Date(0), new Map([[1, 2]]), new Set([1]), [s, s]]`);
    expect(r.ok).toBe(true);
    const v = (r.ok ? r.value : []) as unknown[];
    expect(Object.is(v[0], -0)).toBe(true);
    expect(Number.isNaN(v[1])).toBe(true);
    expect(v[2]).toEqual([undefined, 1]);
    expect(Object.hasOwn(v[3] as object, 'u')).toBe(true);
    expect(v[4]).toBe(10n);
    expect(v[5]).toBeInstanceOf(Date);
    expect(v[6]).toBeInstanceOf(Map);
    expect(v[7]).toBeInstanceOf(Set);
    const pair = v[8] as unknown[];
    expect(pair[0]).toBe(pair[1]);
  });

  it('gives plain results with their keys in order, `__proto__` as an own key, and no host prototype touched', () => {
    const r = runSync(
      'return JSON.parse(\'{"b": 1, "a": [1, "é", null, true], "__proto__": {"polluted": 1}, "2": 0}\')',
    );
    expect(r.ok).toBe(true);
    const v = (r.ok ? r.value : {}) as Record<string, unknown>;
    expect(Object.keys(v)).toEqual(['2', 'b', 'a', '__proto__']);
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(v.a).toEqual([1, 'é', null, true]);
  });

  it('has the same keys whether the result came as text or as an object', () => {
    const text = runSync('return 1');
    const object = runSync('return -0');
    expect(Object.keys(text)).toEqual(Object.keys(object));
    const undef = runSync('return undefined');
    expect(Object.keys(undef)).toEqual(Object.keys(text));
    expect(undef.ok && undef.value).toBeUndefined();
    const failed = runSync('throw new TypeError("no")');
    expect(Object.keys(failed)).toEqual(['ok', 'output', 'logs', 'stats', 'error']);
    expect(Object.keys(failed)).toEqual(Object.keys(runSync('throw -0')));
    expect(failed.error).toMatchObject({ code: 'EVAL_ERROR', name: 'TypeError', message: 'no', line: 1 });
    const logged = runSync('console.log("é", 1); emit("out"); return { x: 1 }');
    expect(logged).toMatchObject({
      ok: true,
      value: { x: 1 },
      output: 'out',
      logs: [{ level: 'log', message: 'é 1' }],
    });
  });
});

describe('the brief answer of a run that succeeded quietly', () => {
  it('carries the stats and the value exactly', () => {
    for (const [source, value] of [
      ['return 1.5e-7', 1.5e-7],
      ['return 2 ** 60', 2 ** 60],
      ['return "a|b|c"', 'a|b|c'],
      ['return ["|", { "|": "|" }]', ['|', { '|': '|' }]],
      ['return undefined', undefined],
      ['return null', null],
      ['return ""', ''],
    ] as const) {
      const raw = binding.runSync(source);
      expect(typeof raw === 'string' && raw.startsWith('|'), source).toBe(true);
      const r = fromNative(raw);
      expect(r, source).toMatchObject({ ok: true, output: '', logs: [] });
      expect(r.ok && r.value, source).toEqual(value);
      expect(r.stats.steps, source).toBeGreaterThan(0);
      expect(r.stats.wallMs, source).toBeGreaterThan(0);
      expect(Number.isInteger(r.stats.heapBytes), source).toBe(true);
      expect(r.stats.hostCalls, source).toBe(0);
    }
  });

  it('is not used when the run wrote output or console lines', () => {
    expect(String(binding.runSync('emit("x"); return 1')).startsWith('{')).toBe(true);
    expect(String(binding.runSync('console.log(1); return 1')).startsWith('{')).toBe(true);
    expect(runSync('console.log("|"); emit("|"); return "|"')).toMatchObject({
      ok: true,
      value: '|',
      output: '|',
      logs: [{ level: 'log', message: '|' }],
    });
  });
});
