// `quickrealm run`'s contract: inside the realm only `emit` and `read_input` exist besides the
// language's own built-ins. Nothing a host adds (timers, console, microtask scheduling, clocks,
// web APIs, aliases of the global object) may be reachable, by any way of looking.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runSync } from '../../lib/index.js';

const CLI = join(__dirname, '..', '..', 'bin', 'quickrealm.js');

function runCli(source: string): { status: number | null; output?: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, 'run'], {
    input: JSON.stringify({ source, input: '', limits: { wall_ms: 5000 } }),
    encoding: 'utf8',
    timeout: 20_000,
  });
  return { status: r.status, output: r.stdout ? JSON.parse(r.stdout).output : undefined, stderr: r.stderr };
}

/** ECMAScript's global names (ECMA-262 and Annex B, with the stage-4 ones QuickJS-ng has). */
const LANGUAGE_GLOBALS = new Set([
  'globalThis',
  'Infinity',
  'NaN',
  'undefined',
  'eval',
  'isFinite',
  'isNaN',
  'parseFloat',
  'parseInt',
  'decodeURI',
  'decodeURIComponent',
  'encodeURI',
  'encodeURIComponent',
  'escape',
  'unescape',
  'AggregateError',
  'Array',
  'ArrayBuffer',
  'AsyncDisposableStack',
  'BigInt',
  'BigInt64Array',
  'BigUint64Array',
  'Boolean',
  'DataView',
  'Date',
  'DisposableStack',
  'Error',
  'EvalError',
  'FinalizationRegistry',
  'Float16Array',
  'Float32Array',
  'Float64Array',
  'Function',
  'Int8Array',
  'Int16Array',
  'Int32Array',
  'Iterator',
  'Map',
  'Number',
  'Object',
  'Promise',
  'Proxy',
  'RangeError',
  'ReferenceError',
  'RegExp',
  'Set',
  'SharedArrayBuffer',
  'String',
  'SuppressedError',
  'Symbol',
  'SyntaxError',
  'TypeError',
  'Uint8Array',
  'Uint8ClampedArray',
  'Uint16Array',
  'Uint32Array',
  'URIError',
  'WeakMap',
  'WeakRef',
  'WeakSet',
  'Atomics',
  'JSON',
  'Math',
  'Reflect',
  // The engine's own error class for its internal failures (too much recursion, interrupts), and
  // the global object's tag (as in Node).
  'InternalError',
  'Symbol(Symbol.toStringTag)',
]);
const SEED_BINDINGS = ['emit', 'read_input'];
const HOST_NAMES = [
  'performance',
  'queueMicrotask',
  'setTimeout',
  'setInterval',
  'setImmediate',
  'clearTimeout',
  'clearInterval',
  'console',
  'require',
  'process',
  'module',
  'exports',
  'Buffer',
  'fetch',
  'global',
  'self',
  'window',
  'navigator',
  'atob',
  'btoa',
  'DOMException',
  'structuredClone',
  'crypto',
  'TextEncoder',
  'TextDecoder',
  'URL',
  'URLSearchParams',
  'Intl',
  'print',
  'gc',
  'os',
  'std',
  'scriptArgs',
  'WebAssembly',
  'Deno',
  'Bun',
];

describe("quickrealm run's realm has the seed's surface and nothing else", () => {
  it('every own global name is a language built-in, emit or read_input', () => {
    const r = runCli('emit(JSON.stringify(Reflect.ownKeys(globalThis).map(String)))');
    expect(r.status, r.stderr).toBe(0);
    const names = JSON.parse(r.output ?? '[]') as string[];
    expect(names.filter((n) => !LANGUAGE_GLOBALS.has(n) && !SEED_BINDINGS.includes(n))).toEqual([]);
    for (const n of SEED_BINDINGS) expect(names).toContain(n);
  });

  it('no host name is reachable: typeof, in, Reflect.has, descriptors, the prototype chain', () => {
    const source = `const names = ${JSON.stringify(HOST_NAMES)};
      const found = [];
      for (const n of names) {
        if (typeof globalThis[n] !== 'undefined') found.push('globalThis.' + n);
        if (n in globalThis) found.push('in ' + n);
        if (Reflect.has(globalThis, n)) found.push('Reflect.has ' + n);
        if (Reflect.get(globalThis, n) !== undefined) found.push('Reflect.get ' + n);
        if (Object.getOwnPropertyDescriptor(globalThis, n)) found.push('descriptor ' + n);
        if (Object.getPrototypeOf(globalThis) && n in Object.getPrototypeOf(globalThis)) found.push('proto ' + n);
      }
      emit(JSON.stringify(found))`;
    const r = runCli(source);
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.output ?? 'null')).toEqual([]);
  });

  it('typeof on the bare names, as a model would write it', () => {
    const probes = ['performance', 'queueMicrotask', 'setTimeout', 'console', 'self', 'global', 'atob', 'DOMException'];
    const r = runCli(`emit([${probes.map((n) => `typeof ${n}`).join(', ')}].join())`);
    expect(r.status, r.stderr).toBe(0);
    expect(r.output).toBe(probes.map(() => 'undefined').join());
  });

  it('using a missing host name is a ReferenceError (EVAL_ERROR), not a crash', () => {
    for (const call of ['queueMicrotask(() => emit("x"))', 'emit(String(performance.now()))', 'self.emit("x")']) {
      const r = runCli(call);
      expect(r.status, call).toBe(1);
      expect(JSON.parse(r.stderr), call).toMatchObject({ code: 'EVAL_ERROR' });
      expect(r.stderr, call).toContain('ReferenceError');
    }
  });

  it('the language is whole: promises still settle, and a script may declare the removed names', () => {
    const r = runCli(
      `const performance = { now: () => 1 }; var queueMicrotask = 2; let self = 3;
       Promise.resolve(4).then((v) => emit(String(v + performance.now() + queueMicrotask + self)))`,
    );
    expect(r.status, r.stderr).toBe(0);
    expect(r.output).toBe('10');
  });

  it("the standard profile keeps them (console: 'none' is the only profile without)", () => {
    const probe = `return [typeof performance, typeof queueMicrotask, typeof self, typeof atob]`;
    expect(runSync(probe).value).toEqual(['object', 'function', 'object', 'function']);
    expect(runSync(probe, { console: 'none' }).value).toEqual(['undefined', 'undefined', 'undefined', 'undefined']);
    expect(runSync(probe, { console: 'off' }).value).toEqual(['object', 'function', 'object', 'function']);
  });
});
