import { describe, expect, it } from 'vitest';
import { configure, run, runSync } from '../lib/index.js';

// Bad input is a result with INVALID_INPUT and a message naming the problem, never a throw.
const anyRunSync = runSync as (...args: unknown[]) => ReturnType<typeof runSync>;
const anyRun = run as (...args: unknown[]) => ReturnType<typeof run>;

function invalid(args: unknown[], pattern: RegExp) {
  const r = anyRunSync(...args);
  expect(r.ok).toBe(false);
  expect(r.error?.code).toBe('INVALID_INPUT');
  expect(r.error?.message).toMatch(pattern);
}

describe('INVALID_INPUT', () => {
  it('non-string source', () => {
    invalid([42], /source must be a string, got a number/);
    invalid([undefined], /source must be a string, got undefined/);
    invalid([{ toString: () => 'return 1' }], /source must be a string/);
  });

  it('oversized source', () => {
    invalid(['//' + 'x'.repeat(1 << 20)], /source is \d+ bytes; the limit is 1048576/);
  });

  it('unknown options and limits', () => {
    invalid(['1', { timeout: 5 }], /unknown option key 'timeout'/);
    invalid(['1', { limits: { timeout: 5 } }], /unknown limits key 'timeout'/);
    invalid(['1', 'script'], /option must be an object, got a string/);
  });

  it('negative, fractional and absurd limits', () => {
    invalid(['1', { limits: { timeoutMs: -1 } }], /limits.timeoutMs must be between/);
    invalid(['1', { limits: { memoryBytes: 1e15 } }], /limits.memoryBytes must be between/);
    invalid(['1', { limits: { stackBytes: 1.5 } }], /limits.stackBytes must be a whole number/);
    invalid(['1', { limits: { outputBytes: '10' } }], /limits.outputBytes must be a number, got a string/);
    invalid(['1', { limits: { timeoutMs: NaN } }], /limits.timeoutMs must be a whole number/);
  });

  it('bad mode, console, input and filename', () => {
    invalid(['1', { mode: 'shell' }], /mode must be 'function', 'script', 'module' or 'repl'/);
    invalid(['1', { mode: 'repl', state: { bytes: new Uint8Array(8) } }], /state\.key is required/);
    invalid(['1', { mode: 'repl', state: { key: 'short' } }], /at least 16 bytes/);
    invalid(['1', { console: 'loud' }], /console must be/);
    invalid(['1', { input: 5 }], /input must be a string/);
    invalid(['1', { filename: '' }], /filename/);
  });

  it('data that cannot be copied', () => {
    invalid(['1', { data: { f: () => 1 } }], /data\.f is a function/);
    invalid(['1', { data: { s: Symbol('x') } }], /data\.s is a symbol/);
    invalid(['1', { data: [1, 2] }], /data must be an object/);
    let deep: unknown = 1;
    for (let i = 0; i < 1000; i++) deep = [deep];
    invalid(['1', { data: { deep } }], /nesting deeper than 256 levels/);
  });

  it('data keys that shadow built-ins', () => {
    invalid(['1', { data: { Object: 1 } }], /data key 'Object' collides with a built-in global/);
  });

  it('a bad signal', () => {
    invalid(['1', { signal: {} }], /signal must be an AbortSignal/);
  });

  it('run() resolves with the same errors instead of rejecting', async () => {
    const r = await anyRun(5);
    expect(r.error?.code).toBe('INVALID_INPUT');
  });

  it('configure() validates its options', () => {
    expect(() => configure({ workers: 0 })).toThrow(/INVALID_INPUT/);
    expect(() => configure({ workers: 1.5 })).toThrow(/INVALID_INPUT/);
    expect(() => configure({ nope: 1 } as never)).toThrow(/unknown configure\(\) option 'nope'/);
  });
});

describe('configure() errors', () => {
  it('carry a code and say what kind of mistake they are', () => {
    const thrown = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return e as Error & { code?: string };
      }
      throw new Error('expected a throw');
    };
    const range = thrown(() => configure({ workers: -1 }));
    expect(range).toBeInstanceOf(RangeError);
    expect(range.code).toBe('INVALID_INPUT');
    expect(range.message).toBe('INVALID_INPUT: workers must be an integer between 1 and 256');
    const shape = thrown(() => configure({ nope: 1 } as never));
    expect(shape).toBeInstanceOf(TypeError);
    expect(shape.code).toBe('INVALID_INPUT');
    expect(thrown(() => configure(null as never)).code).toBe('INVALID_INPUT');
    expect(thrown(() => configure({ poolSize: '2' } as never))).toBeInstanceOf(RangeError);
  });

  it('applies nothing when one setting is bad', () => {
    const before = configure({});
    expect(() => configure({ workers: before.workers + 1, poolSize: 1000 })).toThrow(/poolSize/);
    expect(configure({})).toEqual(before);
  });
});
