// Resource abuse: every case must end with a specific code, leave the host intact, and let the
// next run work.
import { describe, expect, it } from 'vitest';
import { run, runSync, type RunOptions } from '../../lib/index.js';
import { expectHealthy } from '../helpers.js';

function expectCode(src: string, codes: string[], options: RunOptions = {}) {
  const r = runSync(src, options);
  expect(r.ok, src).toBe(false);
  expect(codes, `${src} -> ${JSON.stringify(r.error)}`).toContain(r.error?.code);
  expectHealthy();
  return r;
}

describe('CPU abuse', () => {
  it('generic indexOf over a 2**32-1 array-like times out', () => {
    expectCode('return Array.prototype.indexOf.call({ length: 2 ** 32 - 1 }, 1)', ['TIMEOUT'], {
      limits: { timeoutMs: 200 },
    });
  });

  it('work queued after return still runs under the deadline', () => {
    expectCode('Promise.resolve().then(() => { for(;;){} }); return 1', ['TIMEOUT'], { limits: { timeoutMs: 200 } });
  });

  it('work queued after return that finishes is part of the run', () => {
    const r = runSync('Promise.resolve().then(() => emit("late")); return 1');
    expect(r.value).toBe(1);
    expect(r.output).toBe('late');
  });

  it('a run that times out on a worker leaves the pool usable', async () => {
    const r = await run('for(;;){}', { limits: { timeoutMs: 100 } });
    expect(r.error?.code).toBe('TIMEOUT');
    expect((await run('return 5')).value).toBe(5);
  });
});

describe('memory abuse', () => {
  it("'x'.repeat(2**30) fails cleanly", () => {
    expectCode("return 'x'.repeat(2 ** 30)", ['EVAL_ERROR', 'MEMORY_LIMIT']);
  });

  it('s += s doubling fails cleanly', () => {
    expectCode("let s = 'x'; for (;;) s += s", ['EVAL_ERROR', 'MEMORY_LIMIT']);
  });

  it('array growth hits MEMORY_LIMIT', () => {
    expectCode('const a = []; for (;;) a.push({ i: a.length })', ['MEMORY_LIMIT'], {
      limits: { memoryBytes: 16 << 20 },
    });
  });

  it('a huge typed array is refused', () => {
    expectCode('return new Uint8Array(2 ** 31).length', ['EVAL_ERROR', 'MEMORY_LIMIT']);
  });
});

describe('depth abuse', () => {
  it('a 1e6-deep nested result is refused, not a host stack overflow', () => {
    const src = 'let v = 0; for (let i = 0; i < 1e6; i++) v = [v]; return v';
    const r = expectCode(src, ['EVAL_ERROR', 'MEMORY_LIMIT'], {
      limits: { memoryBytes: 512 << 20, timeoutMs: 20_000 },
    });
    if (r.error?.code === 'EVAL_ERROR') expect(r.error.message).toMatch(/nesting deeper than/);
  });

  it('a 1e6-deep nested object logged to the console is bounded', () => {
    const r = runSync('let v = {}; for (let i = 0; i < 1e5; i++) v = { v }; console.log(v); return 1');
    expect(r.value).toBe(1);
    expect(r.logs[0].message.length).toBeLessThan(200);
  });

  it("deeply nested source ('['.repeat(1e5)) is a SyntaxError-class error", () => {
    const r = expectCode('['.repeat(1e5), ['EVAL_ERROR']);
    expect(r.error?.name).toMatch(/SyntaxError|RangeError|InternalError/);
  });

  it('deeply nested JSON.parse input fails cleanly', () => {
    expectCode("return JSON.parse('['.repeat(1e6))", ['EVAL_ERROR', 'MEMORY_LIMIT']);
  });

  it('mutual recursion through getters overflows into an error', () => {
    const r = expectCode('const o = { get a() { return this.b }, get b() { return this.a } }; return o.a', [
      'EVAL_ERROR',
    ]);
    expect(r.error?.name).toBe('RangeError');
  });
});

describe('output abuse', () => {
  it('console flood stops at the output cap', () => {
    const r = expectCode("for (;;) console.log('flood')", ['OUTPUT_LIMIT'], { limits: { outputBytes: 4096 } });
    const total = r.logs.reduce((n, l) => n + Buffer.byteLength(l.message), 0);
    expect(total).toBe(4096);
  });

  it('emit flood stops exactly at the cap', () => {
    const r = expectCode("for (;;) emit('0123456789')", ['OUTPUT_LIMIT'], { limits: { outputBytes: 65536 } });
    expect(r.output.length).toBe(65536);
  });

  it('one huge console line is bounded', () => {
    const r = runSync("console.log('x'.repeat(1 << 20)); return 1", { limits: { outputBytes: 8 << 20 } });
    expect(r.value).toBe(1);
    expect(r.logs[0].message.length).toBeLessThanOrEqual(65536);
  });
});

describe('engine loops over huge sparse arrays and array-likes', () => {
  // These built-ins walk every index in C, holes included; over a huge sparse array or
  // array-like they spun for minutes. The engine polls the interrupt handler inside them
  // (patch 0005), so they stop at the deadline (or a memory limit), or finish.
  const methods = [
    'concat',
    'copyWithin',
    'fill',
    'flat',
    'flatMap',
    'join',
    'lastIndexOf',
    'reverse',
    'shift',
    'slice',
    'sort',
    'splice',
    'toLocaleString',
    'unshift',
    'toString',
  ];
  for (const m of methods) {
    it(`Array.prototype.${m} over a 2**32-1 sparse array ends quickly`, () => {
      const started = Date.now();
      const r = runSync(`const a = []; a.length = 2 ** 32 - 1; a.${m}(0, 1); return 1`, { limits: { timeoutMs: 200 } });
      expect(Date.now() - started).toBeLessThan(3000);
      // Some calls finish (slice(0, 1) copies one hole), the others stop at a limit.
      if (!r.ok) expect(['EVAL_ERROR', 'TIMEOUT', 'MEMORY_LIMIT']).toContain(r.error?.code);
      expectHealthy();
    });
    it(`Array.prototype.${m} over a 2**32-1 array-like ends quickly`, () => {
      const started = Date.now();
      const r = runSync(`Array.prototype.${m}.call({ length: 2 ** 32 - 1 }, 0, 1); return 1`, {
        limits: { timeoutMs: 200 },
      });
      expect(Date.now() - started).toBeLessThan(3000);
      if (!r.ok) expect(['EVAL_ERROR', 'TIMEOUT', 'MEMORY_LIMIT']).toContain(r.error?.code);
    });
  }

  it('array built-ins keep working and are the originals', () => {
    const r = runSync(
      'return [[3, 1, 2].sort().join("-"), [1, [2]].flat().concat([3]).length, Array.prototype.join.length, Array.prototype.sort.name]',
    );
    expect(r.value).toEqual(['1-2-3', 3, 1, 'sort']);
  });

  it('no internal frames show in guest stacks', () => {
    const r = runSync('[1, 2].sort(() => { throw new Error("cmp") })');
    expect(r.error?.message).toBe('cmp');
    expect(r.error?.stack).not.toMatch(/quickrealm:internal/);
  });
});
