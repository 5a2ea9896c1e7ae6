// The deadline holds inside native operations (vendor/rquickjs-sys/patches 0002-0006): the
// hardening issue's reproducers end with TIMEOUT or CANCELLED close to the deadline or the
// abort, and the next run works. Before the patches these took from seconds to minutes.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { run, runSync, type RunOptions } from '../../lib/index.js';
import { expectHealthy } from '../helpers.js';

const TIMEOUT_MS = 300;
// Generous: the machines running the tests are shared and noisy.
const MARGIN_MS = 1500;

function expectTimeout(src: string, options: RunOptions = {}) {
  const started = performance.now();
  const r = runSync(src, { ...options, limits: { timeoutMs: TIMEOUT_MS, ...options.limits } });
  const ms = performance.now() - started;
  expect(r.error?.code, `${src} -> ${JSON.stringify(r.error)}`).toBe('TIMEOUT');
  expect(ms, src).toBeLessThan(TIMEOUT_MS + MARGIN_MS);
  expectHealthy();
}

const MANY_KEYS = 'const keys = Array.from({ length: 1e5 }, (_, i) => "k" + i);';
const COSTLY_PROXY = `${MANY_KEYS}
  const p = new Proxy({}, {
    ownKeys: () => keys,
    getOwnPropertyDescriptor: () => ({ value: 'x'.repeat(16 << 20), enumerable: true, configurable: true, writable: true }),
  });`;

describe('the deadline holds inside native operations', () => {
  it('BigInt toString of huge values, in every radix', () => {
    // The reproducer: ~30 s under a 300 ms deadline before.
    expectTimeout('const b = (1n << 1000000n) - 1n; for (let i = 0; i < 5; i++) String(b + BigInt(i))');
    expectTimeout('const b = 1n << 100000n; for (;;) b.toString(3)');
    expectTimeout('return ((1n << 1000000n) - 1n).toString(7)');
  });

  it('huge BigInt multiplication, division and parsing', () => {
    expectTimeout('const a = (1n << 500000n) - 1n; for (;;) a * a');
    expectTimeout('const a = (1n << 1000000n) - 1n, b = (1n << 500000n) + 1n; for (;;) a / b');
    expectTimeout("const s = '9'.repeat(300000); for (;;) BigInt(s)");
  });

  it('Reflect.ownKeys of a proxy listing 1e5 keys', () => {
    expectTimeout(`${MANY_KEYS} const p = new Proxy({}, { ownKeys: () => keys }); for (;;) Reflect.ownKeys(p)`);
  });

  it('a proxy with 1e5 keys and 16 MiB descriptors returned as the result', () => {
    expectTimeout(`${COSTLY_PROXY} return p`);
  });

  it('unshift on a sparse array of length 1e6, and other array-like walks', () => {
    expectTimeout('const a = []; a.length = 1e6; for (;;) a.unshift(1)');
    expectTimeout('const a = []; a.length = 4e6; for (;;) a.copyWithin(1, 0)');
    expectTimeout('const a = new Array(1e6).fill(0); for (;;) a.fill(1)');
  });

  it('string building, searching and JSON over huge values', () => {
    expectTimeout("for (;;) 'ab'.repeat(1 << 23)");
    expectTimeout("const s = 'a'.repeat(1 << 24); for (;;) s.indexOf('b')");
    expectTimeout('const a = new Array(1e6).fill(0); for (;;) JSON.stringify(a)');
  });

  it('console.log of a function with a 16 MiB name', () => {
    expectTimeout(
      "const name = 'x'.repeat(16 << 20); const f = ({ [name]: () => {} })[name]; for (;;) console.log(f)",
      { limits: { outputBytes: 256 << 20 } },
    );
  });

  it('run() stops on the deadline off the main thread too', async () => {
    const started = performance.now();
    const r = await run('const b = (1n << 1000000n) - 1n; for (;;) String(b)', { limits: { timeoutMs: TIMEOUT_MS } });
    expect(r.error?.code).toBe('TIMEOUT');
    expect(performance.now() - started).toBeLessThan(TIMEOUT_MS + MARGIN_MS);
    expect((await run('return 5')).value).toBe(5);
  });

  it('abort() at 100 ms takes effect promptly inside a costly proxy loop', async () => {
    const controller = new AbortController();
    const started = performance.now();
    const pending = run(`${COSTLY_PROXY} for (;;) Object.keys(p)`, {
      signal: controller.signal,
      limits: { timeoutMs: 60_000 },
    });
    setTimeout(() => controller.abort(), 100);
    const r = await pending;
    expect(r.error?.code).toBe('CANCELLED');
    expect(performance.now() - started).toBeLessThan(100 + MARGIN_MS);
    expect((await run('return 5')).value).toBe(5);
  });

  it('quickrealm run with wall_ms 200 on a BigInt toString', () => {
    const cli = join(__dirname, '..', '..', 'bin', 'quickrealm.js');
    const source = 'const b = (1n << 1000000n) - 1n; emit(String(b).length)';
    const started = performance.now();
    const r = spawnSync(process.execPath, [cli, 'run'], {
      input: JSON.stringify({ source, input: '', limits: { wall_ms: 200 } }),
      encoding: 'utf8',
      timeout: 30_000,
    });
    const ms = performance.now() - started;
    expect(r.stdout).toBe('');
    expect(JSON.parse(r.stderr)).toEqual({ code: 'TIMEOUT', message: 'execution exceeded 200 ms' });
    // Includes starting node and loading the addon.
    expect(ms).toBeLessThan(200 + MARGIN_MS + 1500);
  });
});
