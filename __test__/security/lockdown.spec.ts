// The realm is frozen before guest code runs, and nothing a run does survives into the next one.
import { describe, expect, it } from 'vitest';
import { runSync } from '../../lib/index.js';
import { expectHealthy } from '../helpers.js';

describe('pollution of intrinsics', () => {
  const attempts: Record<string, string> = {
    'Object.prototype': "Object.prototype.polluted = 'hacked!'",
    'Array.prototype method': 'Array.prototype.push = function () {}',
    'Function.prototype': 'Function.prototype.call = null',
    'Promise.prototype.then': 'Promise.prototype.then = () => {}',
    'JSON.parse': 'JSON.parse = () => 1',
    Math: 'Math.random = () => 4',
    'global binding': 'Object = null',
    'defineProperty on a prototype': "Object.defineProperty(Array.prototype, 'x', { value: 1 })",
    'setPrototypeOf on a prototype': 'Object.setPrototypeOf(Array.prototype, null)',
    '__proto__ assignment': 'Object.prototype.__proto__ = {}',
    'delete a builtin': 'delete Array.prototype.map',
    'iterator prototype': 'Object.getPrototypeOf([][Symbol.iterator]()).next = () => ({ done: true })',
    'generator prototype': 'Object.getPrototypeOf(function* () {}).prototype.next = null',
    'async function prototype': 'Object.getPrototypeOf(async () => {}).x = 1',
    'TypedArray prototype': 'Object.getPrototypeOf(Uint8Array.prototype).fill = null',
    console: 'console.log = () => {}',
    emit: 'emit = () => {}',
  };
  for (const [what, src] of Object.entries(attempts)) {
    it(`is refused: ${what}`, () => {
      const r = runSync(src);
      expect(r.error?.code, src).toBe('EVAL_ERROR');
      expect(r.error?.name, src).toBe('TypeError');
      expect(r.error?.message, src).toMatch(
        /not extensible|read-only|not configurable|could not delete|Immutable prototype/i,
      );
      expectHealthy();
    });
  }

  it("the SES executor's probe fails with 'not extensible'", () => {
    const r = runSync("Object.prototype.polluted = 'hacked!'");
    expect(r.error?.message).toMatch(/is not extensible/);
  });

  it('an attempt in one run is not visible in the next', () => {
    runSync('try { Array.prototype.x = 1 } catch {} globalThis.y = 2');
    expect(runSync("return [[].x, typeof y, 'y' in globalThis]").value).toEqual([undefined, 'undefined', false]);
  });

  it('every object reachable from the global object is frozen', () => {
    // An independent walk from inside the realm: own properties (strings and symbols), accessors,
    // prototypes, plus intrinsics reachable only through syntax.
    const r = runSync(`
      const P = Object.getPrototypeOf;
      const roots = [globalThis, P(async function () {}), P(function* () {}), P(async function* () {}),
        P(P((function* () {})())), P([][Symbol.iterator]()), P(new Map().entries()), P(new Set().values()),
        P(''[Symbol.iterator]()), P(/a/[Symbol.matchAll]('')), P(Iterator.from({ next() { return { done: true } } })),
        P(Iterator.prototype.map.call([][Symbol.iterator](), (x) => x)), P(P((async function* () {})())) ];
      const seen = new Set(), unfrozen = [];
      const stack = roots.map((o) => [o, 'root']);
      while (stack.length) {
        const [o, path] = stack.pop();
        if ((typeof o !== 'object' && typeof o !== 'function') || o === null || seen.has(o)) continue;
        seen.add(o);
        if (o !== globalThis && !Object.isFrozen(o)) unfrozen.push(path);
        for (const k of Reflect.ownKeys(o)) {
          const d = Object.getOwnPropertyDescriptor(o, k);
          for (const v of [d.value, d.get, d.set]) stack.push([v, path + '.' + String(k)]);
        }
        stack.push([P(o), path + '.__proto__']);
      }
      return { count: seen.size, unfrozen };
    `);
    expect(r.ok).toBe(true);
    const v = r.value as { count: number; unfrozen: string[] };
    expect(v.unfrozen).toEqual([]);
    expect(v.count).toBeGreaterThan(500);
  });

  it('the global object stays extensible for declarations', () => {
    expect(runSync('var a = 1; let b = 2; globalThis.c = 3; a + b + c', { mode: 'script' }).value).toBe(6);
  });
});
