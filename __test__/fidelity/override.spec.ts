// The override mistake: model-style code that assigns properties its objects inherit from the
// frozen intrinsics runs as it does in Node. Each snippet's expected value is computed here by
// running the same snippet in a fresh `node:vm` context (unfrozen), so nothing is hard-coded.
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { runSync } from '../../lib/index.js';

/** Runs a snippet (a function body) in a fresh Node context; returns its value as JSON text. */
function inNode(body: string): string {
  return vm.runInNewContext(`JSON.stringify((function () { 'use strict'; ${body} })())`) as string;
}

function inRealm(body: string): string {
  const r = runSync(`'use strict'; return JSON.stringify((function () { ${body} })())`);
  if (!r.ok) return `error: ${r.error?.name}: ${r.error?.message}`;
  return r.value as string;
}

const SNIPPETS: Record<string, string> = {
  'Error subclass sets this.name': `
    class ValidationError extends Error { constructor(m) { super(m); this.name = 'ValidationError'; } }
    const e = new ValidationError('bad input');
    return [e.name, String(e), e instanceof Error, Object.keys(e), e.message];`,
  'Error subclass sets name and code fields': `
    class HttpError extends Error { constructor(status) { super('HTTP ' + status); this.name = 'HttpError'; this.status = status; } }
    try { throw new HttpError(404); } catch (e) { return [e.name, e.status, e.message]; }`,
  'prototype toString assigned': `
    function Point(x, y) { this.x = x; this.y = y; }
    Point.prototype.toString = function () { return '(' + this.x + ', ' + this.y + ')'; };
    return String(new Point(1, 2)) + ' ' + [new Point(3, 4)].join();`,
  'object literal toString assigned after creation': `
    const o = { v: 3 }; o.toString = function () { return 'v=' + this.v; }; return '' + o;`,
  'valueOf on a prototype': `
    function Money(c) { this.cents = c; } Money.prototype.valueOf = function () { return this.cents; };
    return new Money(150) + new Money(50);`,
  'prototype constructor restored': `
    function Animal() {} function Dog() { Animal.call(this); }
    Dog.prototype = Object.create(Animal.prototype); Dog.prototype.constructor = Dog;
    const d = new Dog(); return [d.constructor === Dog, d instanceof Animal];`,
  'prototype replaced by a literal then constructor set': `
    function P() {} P.prototype = { hello() { return 'hi'; } }; P.prototype.constructor = P;
    return [new P().constructor === P, new P().hello()];`,
  'TypeScript ES5 __extends': `
    var __extends = function (d, b) { for (var p in b) if (Object.prototype.hasOwnProperty.call(b, p)) d[p] = b[p];
      function __() { this.constructor = d; } d.prototype = b === null ? Object.create(b) : (__.prototype = b.prototype, new __()); };
    var Base = (function () { function Base() { this.kind = 'base'; } Base.prototype.describe = function () { return this.kind; }; return Base; })();
    var Derived = (function (_super) { __extends(Derived, _super); function Derived() { var _this = _super.call(this) || this; _this.kind = 'derived'; return _this; } return Derived; })(Base);
    var x = new Derived(); return [x.describe(), x.constructor === Derived, x instanceof Base];`,
  'date toJSON overridden': `
    const d = new Date(0); d.toJSON = function () { return 'epoch'; }; return JSON.stringify({ d });`,
  'wrapping map.set on an instance': `
    const m = new Map(); const orig = m.set;
    m.set = function (k, v) { return orig.call(this, k, v * 10); }; m.set('a', 1); return [m.get('a'), m.size];`,
  'arr.push replaced on an instance': `
    const log = []; const arr = [1]; arr.push = function (...xs) { log.push(xs.length); return Array.prototype.push.apply(this, xs); };
    arr.push(2, 3); return [arr, log];`,
  'promise.then replaced on an instance': `
    const p = Promise.resolve(1); let called = 0; const orig = p.then;
    p.then = function (...a) { called++; return orig.apply(this, a); }; p.then(() => {}); return called;`,
  'headers map with a hasOwnProperty key': `
    const headers = {}; for (const [k, v] of [['accept', 'json'], ['hasOwnProperty', 'x'], ['constructor', 'y']]) headers[k] = v;
    return [headers.hasOwnProperty, headers.constructor, Object.keys(headers)];`,
  'counting words including toString and valueOf': `
    const counts = {}; for (const w of 'the toString of valueOf the'.split(' ')) counts[w] = (Object.hasOwn(counts, w) ? counts[w] : 0) + 1;
    return counts;`,
  'class field named like a built-in method': `
    class Model { toJSON = () => ({ kind: 'model' }); } return JSON.stringify(new Model());`,
  'static method shadowing an inherited static': `
    class List extends Array {} List.from = function () { return 'mine'; }; return [List.from(), Array.from('ab')];`,
  'subclass of Map overrides set through assignment in the constructor': `
    class Counted extends Map { constructor() { super(); this.writes = 0; const s = this.set; this.set = (k, v) => { this.writes++; return s.call(this, k, v); }; } }
    const c = new Counted(); c.set(1, 1); c.set(2, 2); return [c.writes, c.size];`,
  'Symbol.toStringTag set on an instance': `
    class Thing {} const t = new Thing(); t[Symbol.toStringTag] = 'Custom'; return Object.prototype.toString.call(t);`,
  'a frozen object of the program keeps the ordinary rule': `
    const base = Object.freeze({ mode: 'strict' }); const child = Object.create(base);
    try { child.mode = 'loose'; return 'assigned'; } catch (e) { return e instanceof TypeError; }`,
};

describe('assignments that override inherited built-in properties behave as in Node', () => {
  for (const [name, body] of Object.entries(SNIPPETS)) {
    it(name, () => {
      expect(inRealm(body)).toBe(inNode(body));
    });
  }
});

describe('the intrinsics stay frozen', () => {
  it('assigning to an intrinsic itself still throws (by design; Node allows it)', () => {
    const r = runSync(`
      const attempts = [() => { Object.prototype.toString = () => 'x' }, () => { Error.prototype.name = 'X' },
        () => { Array.prototype.push = null }, () => { Reflect.set(Map.prototype, 'set', 1, Map.prototype) || (() => { throw new TypeError('refused') })() }];
      return attempts.map((f) => { try { f(); return 'assigned' } catch (e) { return e instanceof TypeError } });`);
    expect(r.ok && r.value).toEqual([true, true, true, true]);
  });

  it('descriptors of overridden properties do not change', () => {
    const r = runSync(`
      class E extends Error { constructor() { super('m'); this.name = 'E'; } }
      new E(); const o = {}; o.toString = 1; o.constructor = 2; o.hasOwnProperty = 3;
      const d = (obj, k) => { const x = Object.getOwnPropertyDescriptor(obj, k); return [x.writable, x.configurable]; };
      return [Object.isFrozen(Error.prototype), d(Error.prototype, 'name'), d(Object.prototype, 'toString'),
              d(Object.prototype, 'constructor'), Error.prototype.name, typeof Object.prototype.toString];`);
    expect(r.ok && r.value).toEqual([true, [false, false], [false, false], [false, false], 'Error', 'function']);
  });
});
