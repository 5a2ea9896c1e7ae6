// The realm's console printer against Node's own util.format / util.inspect: each case is a list
// of console.log arguments, written as JavaScript source; the realm prints them with
// console.log, and the expected line is what util.format gives for the same arguments built in
// this process. Stack frames (`    at ...`, and Node's `... N lines matching cause stack trace ...`)
// name different files and are left out on both sides.
import util from 'node:util';
import { describe, expect, it } from 'vitest';
import { runSync } from '../../lib/index.js';

function withoutFrames(text: string): string {
  return text
    .split('\n')
    .filter((l) => !/^\s+at /.test(l) && !/^\s+\.\.\. \d+ lines matching/.test(l))
    .join('\n');
}

/** What the realm prints for `console.<method>(<args>)`, one message. */
function inRealm(args: string, method = 'log'): string {
  const r = runSync(`console.${method}(${args})`);
  if (!r.ok) throw new Error(`${r.error?.name}: ${r.error?.message}`);
  expect(r.logs).toHaveLength(1);
  return withoutFrames(r.logs[0].message);
}

function build(args: string): unknown[] {
  return new Function(`return [${args}];`)() as unknown[];
}

function inNode(args: string): string {
  return withoutFrames(util.format(...build(args)));
}

const FORMATS: Record<string, string> = {
  '%s and %d': `'%s is %d', 'Ann', 30`,
  '%s of numbers, bigints, -0 and nullish': `'%s %s %s %s %s', 42, 10n, -0, null, undefined`,
  '%s of an object is inspected one level deep': `'%s', { a: { b: 1 }, c: [1, [2]] }`,
  '%s of an array': `'%s!', [1, 'two']`,
  '%d of strings, floats, bigints and objects': `'%d %d %d %d %d', '42', 1.5, 10n, {}, '-0'`,
  '%i truncates': `'%i %i %i %i', 99.7, '-12.9px', 'abc', 1e21`,
  '%f parses floats': `'%f %f %f', '3.25abc', 2, 'x'`,
  '%j is JSON': `'JSON: %j', { a: [1, 2], b: 'x', c: undefined, d: null }`,
  '%j of a cycle': `'%j', (() => { const o = {}; o.o = o; return o })()`,
  '%o shows hidden properties': `'Object: %o', { a: 1, nested: { b: [1, 2] } }`,
  '%O inspects': `'%O', { a: { b: { c: { d: 1 } } } }`,
  '%c is dropped': `'%cstyled', 'color: red'`,
  '%% with arguments': `'Progress: %i%%', 99.7`,
  '%% without arguments stays': `'100%%'`,
  'fewer arguments than specifiers': `'%s and %s', 'only one'`,
  'more arguments than specifiers': `'%s:', 'label', { a: 1 }, 'tail', 3`,
  'an unknown specifier stays': `'%x %s', 'a'`,
  'no specifiers': `'plain', 1, 'two', { three: 3 }, [4]`,
  'a first argument that is not a string': `{ a: 1 }, '%s', 2`,
};

const VALUES: Record<string, string> = {
  'nested objects at and beyond depth 2': `{ a: { b: { c: { d: 1 } } }, e: { f: {} } }`,
  'an empty object beyond the depth': `{ a: { b: { c: {} } } }`,
  'nested arrays beyond the depth': `[[[[1, 2]]], [[[]]]]`,
  'Map and Set': `new Map([['a', 1], ['b', { c: 2 }]]), new Set([1, 'x'])`,
  'empty and nested collections': `new Map(), new Set(), { m: new Map([[{ k: 1 }, [1, 2]]]) }`,
  'a Map beyond the depth': `{ a: { b: { c: new Map([[1, 2]]) } } }`,
  'class instances': `(() => { class Point { constructor() { this.x = 1; this.y = 2; } } class P3 extends Point { constructor() { super(); this.z = 3; } } return [new Point(), new P3(), new (class {})()]; })()`,
  'an instance without own properties': `new (class Empty {})()`,
  'null-prototype objects': `Object.assign(Object.create(null), { k: 'v' }), Object.create(null)`,
  classes: `(() => { class A {} class B extends A {} return [A, B, class {}]; })()`,
  'async functions and generators': `async function f() {}, function* g() {}, async function* h() {}, async () => {}`,
  'named and anonymous functions': `function named() {}, () => {}, { method() {}, arrow: (x) => x }`,
  'a function with properties': `Object.assign(function f() {}, { x: 1 })`,
  'sparse arrays': `[, , 3], [1, , 3], (() => { const a = [1]; a[10] = 'end'; return a; })()`,
  'an array with extra keys': `Object.assign([1, 2], { extra: true })`,
  'typed arrays': `new Uint8Array([1, 2, 255]), new Float64Array([1.5, -0, NaN]), new BigInt64Array([1n, -2n]), new Int16Array(0)`,
  'a long typed array': `new Uint8Array(130)`,
  ArrayBuffer: `new Uint8Array([1, 2, 171]).buffer, new ArrayBuffer(0)`,
  RegExp: `/^[a-z]+$/gi, { re: /x\\/y/m }`,
  'valid and invalid dates': `new Date(Date.UTC(2024, 4, 17, 8, 30)), new Date(NaN), { created: new Date(0) }`,
  'boxed primitives': `new Number(5), new String('str'), new Boolean(false), Object(Symbol('s')), Object(3n), new Number(-0)`,
  'symbol keys': `{ [Symbol('meta')]: 'hidden?', visible: true, [Symbol()]: 1 }`,
  'getters and setters': `{ get computed() { return 42; }, set writeOnly(v) {}, get both() { return 1; }, set both(v) {}, plain: 1 }`,
  'a circular reference': `(() => { const node = { name: 'root' }; node.self = node; return node; })()`,
  'two circular references': `(() => { const a = { name: 'a' }; const b = { name: 'b', a }; a.b = b; a.list = [a, b]; return a; })()`,
  'a circular array': `(() => { const a = [1]; a.push(a); return a; })()`,
  'keys that need quotes': `{ 'content-type': 'json', valid_key: 2, 'with space': 4, '1a': 5, 0: 6, $dollar: 7, __proto__x: 8 }`,
  'string quoting': `["it's", 'say "hi"', \`both ' and "\`, \`all ' " \\\` three\`, 'tab\\there', 'nl\\nx', '\\x01\\x7f', 'back\\\\slash']`,
  'a long string with newlines in an object': `{ text: 'line one of the text\\n'.repeat(6) }`,
  'a long string': `['x'.repeat(200)]`,
  'a very long string is cut': `['y'.repeat(10050)]`,
  'an array of more than 100 items': `Array.from({ length: 120 }, () => 0)`,
  'an array of 101 items': `Array.from({ length: 101 }, (_, i) => i)`,
  'an array of more than 6 numbers': `[3, 1, 4, 1, 5, 9, 2, 6, 5, 3]`,
  'numbers of different widths in columns': `Array.from({ length: 30 }, (_, i) => i * i * 37)`,
  'short strings in columns': `['apple', 'banana', 'cherry', 'date', 'elderberry', 'fig', 'grape', 'kiwi']`,
  'a mixed array in columns': `[1, 'two', 3, 'four', 5, 'six', 7, 'eight']`,
  'an array of short objects': `Array.from({ length: 8 }, (_, i) => ({ i }))`,
  'an object wider than a line': `Object.fromEntries(Array.from({ length: 30 }, (_, i) => ['key' + i, i]))`,
  'an array of objects wider than a line': `[{ id: 1, name: 'a fairly long name here', tags: ['one', 'two'] }, { id: 2, name: 'another long name here', tags: [] }]`,
  'a wide nested object': `{ user: { name: 'Ada Lovelace', email: 'ada@example.com', roles: ['admin', 'editor', 'viewer'] }, settings: { theme: 'dark', notifications: { email: true, sms: false } } }`,
  'nesting of four levels breaks even when short': `{ a: { b: { c: {} } }, x: [[[1]]] }`,
  '-0 and bigints': `-0, [-0], 0, 123n, [10n ** 20n]`,
  'numbers and other primitives': `42, 3.14, 1e21, NaN, -Infinity, true, null, undefined, Symbol('tag')`,
  'a resolved and a pending promise': `Promise.resolve(1), new Promise(() => {}), Promise.resolve({ a: [1] })`,
  'weak collections': `new WeakMap(), new WeakSet(), [new WeakMap()]`,
  'a proxy prints its target': `new Proxy({ a: 1, b: [2] }, {}), new Proxy([1, 2], {})`,
  'arguments objects': `(function () { return arguments; })(1, 'a')`,
  'objects with Symbol.toStringTag': `(() => { class Tagged {} Object.defineProperty(Tagged.prototype, Symbol.toStringTag, { value: 'T' }); return [new Tagged(), { [Symbol.toStringTag]: 'Own' }]; })()`,
  'generator objects, Math and JSON': `(function* () { yield 1; })(), Math, JSON`,
  'static class members, bound functions and methods': `(() => { class S { static x = 1; static m() {} } return [S, S.m.bind(null), { f() {}, async g() {}, *h() {} }]; })()`,
  'inherited and non-enumerable properties are left out': `Object.assign(Object.create({ inherited: 1 }), { own: 2 }), Object.defineProperty({}, 'hidden', { value: 1 })`,
  'an AggregateError and an error with a code': `new AggregateError([new Error('a')], 'all'), { e: Object.assign(new TypeError('t'), { code: 'E_CODE' }) }`,
  'a subclass of Map and of Array': `(() => { class Registry extends Map {} class List extends Array {} return [new Registry([[1, 2]]), List.from([1, 2])]; })()`,
};

const ERRORS: Record<string, string> = {
  'an error': `new Error('boom')`,
  'an error with extra own properties': `Object.assign(new Error('not found'), { status: 404, url: '/x' })`,
  'a custom error class': `(() => { class HttpError extends Error { constructor(s) { super('failed ' + s); this.name = 'HttpError'; this.status = s; } } return new HttpError(500); })()`,
  'a subclass that keeps the name Error': `(() => { class ValidationError extends Error {} return new ValidationError('bad'); })()`,
  'an error nested in an object': `{ ok: false, error: new RangeError('out of range') }`,
  'errors nested in an array': `[new TypeError('a'), new Error('b')]`,
  'an error with a cause': `new Error('outer', { cause: new Error('inner') })`,
  'an error without frames': `(() => { const e = new Error('no frames'); e.stack = 'Error: no frames'; return e; })()`,
  'a rejected promise': `(() => { const p = Promise.reject(new Error('nope')); p.catch(() => {}); return p; })()`,
};

describe('console.log formats as util.format does', () => {
  for (const [name, args] of Object.entries(FORMATS)) {
    it(name, () => {
      expect(inRealm(args)).toBe(inNode(args));
    });
  }
});

describe('console.log inspects values as util.inspect does', () => {
  for (const [name, args] of Object.entries(VALUES)) {
    it(name, () => {
      expect(inRealm(args)).toBe(inNode(args));
    });
  }
});

describe('errors print their stack and their own properties', () => {
  for (const [name, args] of Object.entries(ERRORS)) {
    it(name, () => {
      expect(inRealm(args)).toBe(inNode(args));
    });
  }
});

describe('console.dir', () => {
  const deep = `{ a: { b: { c: { d: { e: 'deep' } } } } }`;
  it('honours depth: null', () => {
    expect(inRealm(`${deep}, { depth: null }`, 'dir')).toBe(util.inspect(build(deep)[0], { depth: null }));
  });
  it('honours a numeric depth', () => {
    expect(inRealm(`${deep}, { depth: 0 }`, 'dir')).toBe(util.inspect(build(deep)[0], { depth: 0 }));
  });
  it('quotes strings and prints only its first argument', () => {
    expect(inRealm(`'text', { depth: 1 }`, 'dir')).toBe(util.inspect('text'));
  });
});

describe('the printer stays safe and bounded', () => {
  it('never runs getters, proxy traps or toString methods', () => {
    const r = runSync(`
      let ran = 0;
      const trap = () => { ran++; throw new Error('trap'); };
      const proxy = new Proxy({ a: 1 }, { get: trap, ownKeys: trap, getOwnPropertyDescriptor: trap, getPrototypeOf: trap, has: trap });
      const obj = { get g() { ran++; return 1; }, toString() { ran++; return 'x'; }, proxy };
      class E extends Error { get message() { ran++; return 'm'; } }
      console.log(obj, proxy, '%s %d', obj, obj);
      console.log([proxy], new Map([[proxy, obj]]));
      const e = new E('x');
      Object.defineProperty(e, 'stack', { get: Object.prototype.toString });
      console.log(new E('y'), { e }, Object.assign(new Error('z'), { toString: trap }));
      return ran;`);
    expect(r.ok).toBe(true);
    expect(r.value).toBe(0);
    expect(r.logs[0].message).toContain('g: [Getter]');
  });

  it('a huge object is clipped to the line cap and does not outlive the deadline', () => {
    const r = runSync(
      `const o = {}; for (let i = 0; i < 50000; i++) o['key' + i] = 'v'.repeat(30); console.log(o); console.log('%j', o); return 1;`,
      { limits: { timeoutMs: 5000, outputBytes: 1 << 20 } },
    );
    expect(r.ok).toBe(true);
    for (const l of r.logs) expect(Buffer.byteLength(l.message)).toBeLessThanOrEqual(64 * 1024);
    expect(r.logs[0].message).toMatch(/^\{\n {2}key0: 'v+',\n/);
  });

  it('large arrays, typed arrays and sparse arrays print without listing every item', () => {
    const r = runSync(
      `const a = Array.from({ length: 2e6 }, (_, i) => i); const t = new Uint8Array(2e7); const s = []; s[1e9] = 1; s[5] = 2;
      for (let i = 0; i < 20; i++) console.log(a, t, s); return 1;`,
      { limits: { timeoutMs: 10000, outputBytes: 1 << 20 } },
    );
    expect(r.ok).toBe(true);
    expect(r.logs).toHaveLength(20);
    expect(r.logs[0].message).toContain('... 1999900 more items');
    expect(r.logs[0].message).toContain('... 19999900 more items');
    expect(r.logs[0].message).toContain('[ <5 empty items>, 2, <999999994 empty items>, 1 ]');
  });

  it('deep nesting with depth: null stays bounded', () => {
    const r = runSync(
      `let o = {}; for (let i = 0; i < 10000; i++) o = { o }; console.dir(o, { depth: null }); return 1;`,
    );
    expect(r.ok).toBe(true);
    expect(r.logs[0].message).toContain('[Object]');
  });
});
