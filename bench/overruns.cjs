// The hardening reproducers that once overran their deadline, timed against the built addon:
// each line prints the wall time, the outcome and the case. `node bench/overruns.cjs`
// (after `npm run build:debug` or `npm run build`).
const path = require('node:path');
const { run, runSync } = require(path.join(__dirname, '..', 'lib', 'index.js'));

const T = { timeoutMs: 300 };
const timed = async (label, f) => {
  const started = performance.now();
  const r = await f();
  const ms = performance.now() - started;
  console.log(`${ms.toFixed(0).padStart(6)} ms  ${(r.ok ? 'ok' : r.error.code).padEnd(14)} ${label}`);
};

const cases = [
  ['BigInt String() of a 1,000,000-bit value, 5 times (300 ms)', () => runSync('const b = (1n << 1000000n) - 1n; for (let i = 0; i < 5; i++) String(b + BigInt(i))', { limits: T })],
  ['Reflect.ownKeys of a proxy listing 1e5 keys, in a loop (300 ms)', () => runSync('const keys = Array.from({ length: 1e5 }, (_, i) => "k" + i); const p = new Proxy({}, { ownKeys: () => keys }); for (;;) Reflect.ownKeys(p)', { limits: T })],
  ['(1n << 100000n).toString(3) in a loop (300 ms)', () => runSync('for (;;) (1n << 100000n).toString(3)', { limits: T })],
  ['unshift on a sparse array of length 1e6, in a loop (300 ms)', () => runSync('const a = []; a.length = 1e6; for (;;) a.unshift(1)', { limits: T })],
  ['console.log of a function with a 16 MiB name, in a loop (300 ms)', () => runSync('const n = "f".repeat(16 << 20); const f = { [n]: () => 1 }[n]; for (;;) console.log(f)', { limits: { ...T, memoryBytes: 256 << 20 } })],
  ['a proxy result listing 1e5 keys with 16 MiB descriptors (300 ms)', () => runSync('const big = "x".repeat(16 << 20); const keys = Array.from({ length: 1e5 }, (_, i) => "k" + i); return new Proxy({}, { ownKeys: () => keys, getOwnPropertyDescriptor: () => ({ value: big, enumerable: true, configurable: true }) })', { limits: { ...T, memoryBytes: 256 << 20 } })],
  ['a 1 GiB typed array fill (20 ms, 4 GiB memory)', () => runSync('new Uint8Array(2 ** 30).fill(1)', { limits: { timeoutMs: 20, memoryBytes: 2 ** 32 } })],
  ['Array(6).fill(one sparse array of 1e6 holes) as the result (300 ms)', () => runSync('const s = []; s.length = 1e6; return Array(6).fill(s)', { limits: T })],
  ['return (1n << 1000000n) - 1n (300 ms)', () => runSync('return (1n << 1000000n) - 1n', { limits: T })],
  ['data: { d: new Array(2 ** 32 - 1) }', () => runSync('return 1', { data: { d: new Array(2 ** 32 - 1) } })],
  ['data: a 3,000,000-bit bigint', () => runSync('return 1', { data: { d: (1n << 3000000n) - 1n } })],
  ['result: x = [x, x] twenty times (300 ms)', () => runSync('let x = {}; for (let i = 0; i < 20; i++) x = [x, x]; return x', { limits: T })],
  ['run() with live globals spinning, aborted at 50 ms', () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 50);
    return run('for (;;) {}', { globals: { x: 1 }, signal: ac.signal, limits: { timeoutMs: 1000 } });
  }],
  ['runSync: a host function aborts, then the guest spins (3000 ms)', () => {
    const ac = new AbortController();
    return runSync('stop(); for (;;) {}', { signal: ac.signal, globals: { stop: () => ac.abort() }, limits: { timeoutMs: 3000 } });
  }],
];

(async () => {
  for (const [label, f] of cases) await timed(label, f);
})();
