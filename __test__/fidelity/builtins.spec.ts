// Built-ins behave as the specification (and Node) says: nothing quickrealm adds around them
// is observable. Expected values come from a fresh `node:vm` context running the same code.
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { runSync } from '../../lib/index.js';

function inNode(body: string): string {
  return vm.runInNewContext(`JSON.stringify((function () { 'use strict'; ${body} })())`) as string;
}

function inRealm(body: string): string {
  const r = runSync(`return JSON.stringify((function () { ${body} })())`);
  return r.ok ? (r.value as string) : `error: ${r.error?.name}: ${r.error?.message}`;
}

const SNIPPETS: Record<string, string> = {
  'splice on an array-like reads length once (test262 set_length_no_args)': `
    let reads = 0; const o = { get length() { reads++; return 0 }, set length(v) {} };
    Array.prototype.splice.call(o); return reads;`,
  'every array method reads length once on an array-like': `
    const names = ['concat', 'copyWithin', 'fill', 'join', 'lastIndexOf', 'reverse', 'shift', 'slice', 'sort', 'splice', 'unshift', 'toLocaleString'];
    return names.map((n) => { let reads = 0; const o = { 0: 'a', get length() { reads++; return 1 }, set length(v) {} };
      try { Array.prototype[n].call(o) } catch {} return n + ':' + reads; });`,
  'array methods are native functions with their own names and lengths': `
    return ['splice', 'fill', 'sort', 'concat', 'unshift'].map((n) => [Array.prototype[n].name, Array.prototype[n].length,
      /\\[native code\\]/.test(Function.prototype.toString.call(Array.prototype[n]))]);`,
  'the function constructors keep their names and lengths (they refuse code, by design)': `
    const ctors = [Function, (function* () {}).constructor, (async function () {}).constructor, (async function* () {}).constructor];
    return ctors.map((c) => [c.name, c.length]);`,
  'a proxy sees exactly the traps of the spec for splice': `
    const log = []; const p = new Proxy([1, 2, 3], { get(t, k, r) { log.push(String(k)); return Reflect.get(t, k, r) } });
    Array.prototype.splice.call(p, 1, 1); return log;`,
};

describe('built-ins are not observably wrapped', () => {
  for (const [name, body] of Object.entries(SNIPPETS)) {
    it(name, () => {
      expect(inRealm(body)).toBe(inNode(body));
    });
  }
});
