// Attempts to reach the host or compile code from strings. Each asserts the specific failure,
// that the host is untouched, and that the next run works.
import { describe, expect, it } from 'vitest';
import { runSync } from '../../lib/index.js';
import { expectHealthy } from '../helpers.js';

const CODEGEN = /Code generation from strings is disabled|not defined/;

function expectBlocked(src: string, pattern: RegExp = CODEGEN, mode: 'function' | 'script' | 'module' = 'function') {
  const r = runSync(src, { mode });
  expect(r.ok, src).toBe(false);
  expect(r.error?.code, src).toBe('EVAL_ERROR');
  expect(r.error?.message, src).toMatch(pattern);
  expectHealthy();
}

describe('constructor chains', () => {
  const chains: Record<string, string> = {
    'object literal': "({}).constructor.constructor('return process')()",
    'this in sloppy-looking code': "(function () { return this })?.constructor?.constructor('return process')()",
    'arrow function': "(() => 1).constructor('return process')()",
    'async function': "(async () => 1).constructor('return process')()",
    'async function declaration': "(async function f() {}).constructor('return process')",
    'generator function': "(function* () {}).constructor('yield process')().next()",
    'async generator function': "(async function* () {}).constructor('yield process')",
    class: "(class {}).constructor('return process')()",
    'bound function': "(function () {}).bind(null).constructor('return process')()",
    'Reflect.construct': "Reflect.construct(Function, ['return process'])()",
    'getPrototypeOf chain': "Object.getPrototypeOf(async function () {}).constructor('return 1')",
    'error constructor chain': "new Error().constructor.constructor('return process')()",
    'promise constructor chain': "Promise.resolve().constructor.constructor('return process')()",
    'symbol constructor chain': "Symbol().constructor.constructor('return process')()",
    'Function global': "Function('return process')()",
    'new Function': "new Function('return process')()",
  };
  for (const [name, src] of Object.entries(chains)) {
    it(`is blocked through ${name}`, () => expectBlocked(src));
  }

  it('the thrower keeps instanceof and prototypes working', () => {
    const r = runSync(
      'return [(() => 1) instanceof Function, Function.prototype === Object.getPrototypeOf(() => 1), typeof Function.prototype.call]',
    );
    expect(r.value).toEqual([true, true, 'function']);
  });
});

describe('eval and dynamic import', () => {
  it('eval is absent', () => {
    expectBlocked("eval('1 + 1')", /eval is not defined/);
    expectBlocked("globalThis['ev' + 'al']('1')", /not a function/);
  });

  it('import() of a builtin module fails', () => {
    expectBlocked("await import('fs')", /could not load module 'fs'/);
    expectBlocked("await import('node:child_process')", /could not load module/);
    expectBlocked("await import('data:text/javascript,export default 1')", /could not load module/);
  });

  it('static imports fail in module mode', () => {
    expectBlocked("import fs from 'fs'; export default fs", /could not load module 'fs'/, 'module');
  });
});

describe('host globals are absent', () => {
  it('no require, process, module, Buffer, setImmediate or fetch', () => {
    const names = [
      'require',
      'process',
      'module',
      'exports',
      'Buffer',
      'setImmediate',
      'fetch',
      'WebAssembly',
      'SharedArrayBuffer',
      'Atomics',
      '__dirname',
    ];
    const r = runSync(`return ${JSON.stringify(names)}.filter((n) => typeof globalThis[n] !== 'undefined')`);
    expect(r.value).toEqual([]);
  });

  it('globalThis is the guest global, not the host one', () => {
    const r = runSync(
      'return [Object.getOwnPropertyNames(globalThis).filter((n) => /^(process|require|Buffer|module)$/.test(n)), global === globalThis, self === globalThis, typeof global.process]',
    );
    expect(r.value).toEqual([[], true, true, 'undefined']);
  });
});

describe('blocking primitives', () => {
  it('Atomics.wait is unreachable, so nothing can block the thread outside the deadline', () => {
    const r = runSync('return [typeof Atomics, typeof SharedArrayBuffer]');
    expect(r.value).toEqual(['undefined', 'undefined']);
  });

  it('queueMicrotask loops are still bounded by the deadline', () => {
    const r = runSync('const spin = () => queueMicrotask(spin); spin(); return 1', { limits: { timeoutMs: 100 } });
    expect(r.error?.code).toBe('TIMEOUT');
    expectHealthy();
  });
});

describe('Error.prepareStackTrace and stack hooks', () => {
  it('cannot be installed', () => {
    const r = runSync("Error.prepareStackTrace = (e, frames) => frames; return typeof new Error('x').stack");
    expect(r.error?.name).toBe('TypeError');
    expect(r.error?.message).toMatch(/read-only|not extensible/);
    expectHealthy();
  });

  it('stackTraceLimit cannot be changed', () => {
    const r = runSync('Error.stackTraceLimit = 0');
    expect(r.error?.name).toBe('TypeError');
  });

  it('captureStackTrace gives only guest frames', () => {
    const r = runSync('const o = {}; Error.captureStackTrace(o); return String(o.stack)', { filename: 'g.js' });
    expect(r.ok).toBe(true);
    expect(String(r.value)).not.toMatch(/\/work|node:|\.node/);
  });
});
