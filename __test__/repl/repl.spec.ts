// Persistent realms: top-level bindings kept between evaluations, snapshots that restore here
// and in another process, and the limits and refusals of DESIGN §10.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRepl, ErrorCode, type RunResult, restoreRepl, run, runSync } from '../../lib/index.js';

const KEY = 'a snapshot key of 32 characters!';
const ENTRY = resolve(__dirname, '../../lib/index.js');

function valueOf(r: RunResult): unknown {
  if (!r.ok) throw new Error(`eval failed: ${r.error.code} ${r.error.name}: ${r.error.message}`);
  return r.value;
}

function errorOf(r: RunResult) {
  if (r.ok) throw new Error(`eval succeeded with ${JSON.stringify(r.value)}`);
  return r.error;
}

/** Evaluates `setup` in a REPL, snapshots it, restores it and evaluates `check` there. */
async function roundTrip(setup: string, check: string): Promise<unknown> {
  const repl = createRepl();
  valueOf(await repl.eval(setup));
  const again = restoreRepl(repl.snapshot({ key: KEY }), { key: KEY });
  return valueOf(await again.eval(check));
}

describe('a REPL keeps its top-level bindings', () => {
  it('keeps let, const, var, functions and classes, with top-level await', async () => {
    const repl = createRepl();
    valueOf(await repl.eval('let n = 1; const seen = new Map(); function inc(k) { seen.set(k, ++n); return n }'));
    expect(valueOf(await repl.eval('inc("a")'))).toBe(2);
    expect(
      valueOf(await repl.eval('var v = await Promise.resolve(5); class P { constructor(x) { this.x = x } }')),
    ).toBe(undefined);
    expect(valueOf(await repl.eval('[inc("b"), [...seen.keys()], v, new P(3).x]'))).toEqual([3, ['a', 'b'], 5, 3]);
    expect(valueOf(repl.evalSync('n'))).toBe(3);
  });

  it('restores in this process, with every binding and what it reaches', async () => {
    const repl = createRepl();
    await repl.eval('let n = 1; const seen = new Map(); function inc(k) { seen.set(k, ++n); return n }');
    await repl.eval('inc("a")');
    const bytes = repl.snapshot({ key: KEY });
    expect(bytes).toBeInstanceOf(Uint8Array);
    const again = restoreRepl(bytes, { key: KEY });
    expect(valueOf(await again.eval('inc("b")'))).toBe(3);
    expect(valueOf(await again.eval('[...seen]'))).toEqual([
      ['a', 2],
      ['b', 3],
    ]);
    // The original goes on by itself.
    expect(valueOf(await repl.eval('[n, seen.size]'))).toEqual([2, 1]);
  });

  it('runs cells in the order they were given', async () => {
    const repl = createRepl();
    const cells = Array.from({ length: 8 }, (_, i) =>
      repl.eval(i === 0 ? 'var log = []; log.length' : `await null; log.push(${i}); log.length`),
    );
    const values = (await Promise.all(cells)).map(valueOf);
    expect(values).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it('turns data into state once', async () => {
    const repl = createRepl({ data: { table: [{ a: 1 }, { a: 2 }] } });
    expect(valueOf(await repl.eval('table.push({ a: 3 }); table.length'))).toBe(3);
    const again = restoreRepl(repl.snapshot({ key: KEY }), { key: KEY });
    expect(valueOf(await again.eval('table.map((r) => r.a)'))).toEqual([1, 2, 3]);
  });

  it('snapshots a REPL that has run nothing', async () => {
    const again = restoreRepl(createRepl().snapshot({ key: KEY }), { key: KEY });
    expect(valueOf(await again.eval('typeof undefinedName'))).toBe('undefined');
  });
});

/** Each value kind: [name, setup cell, check cell, the check's value]. */
const KINDS: [string, string, string, unknown][] = [
  [
    'primitives',
    'const p = [1.5, -0, NaN, "s", true, null, undefined, 2n ** 70n]',
    'p.map(String)',
    ['1.5', '0', 'NaN', 's', 'true', 'null', 'undefined', '1180591620717411303424'],
  ],
  ['-0 stays -0', 'const z = -0', 'Object.is(z, -0)', true],
  [
    'shared references and cycles',
    'const a = { n: 1 }; a.self = a; const b = [a, a]',
    'b[0] === b[1] && b[0] === a && a.self === a',
    true,
  ],
  ['holes in arrays', 'const h = [1, , 3]', '[h.length, 1 in h]', [3, false]],
  [
    'Map and Set with object keys',
    'const k = {}; const m = new Map([[k, 1]]); const s = new Set([k])',
    'm.get(k) === 1 && s.has(k)',
    true,
  ],
  ['Date', 'const d = new Date(86400000)', 'd.toISOString()', '1970-01-02T00:00:00.000Z'],
  [
    'RegExp with lastIndex, twice',
    'const re = /a/g; re.lastIndex = 2; const pair = [re, re]',
    'pair[0] === pair[1] && re.lastIndex === 2 && re.flags',
    'g',
  ],
  [
    'typed arrays sharing a buffer',
    'const buf = new ArrayBuffer(8); const u8 = new Uint8Array(buf); const f = new Float64Array(buf); f[0] = 1.5',
    'u8.buffer === f.buffer && f[0]',
    1.5,
  ],
  [
    'boxed primitives',
    'const bx = [Object(1), Object("s"), Object(true)]',
    'bx.map((x) => typeof x)',
    ['object', 'object', 'object'],
  ],
  [
    'local symbols keep their identity',
    'const sym = Symbol("k"); const o = { [sym]: 1, t: sym }',
    'o[o.t] === 1 && o.t === sym && sym.description',
    'k',
  ],
  [
    'registered and well-known symbols',
    'const r = Symbol.for("app"); const it = Symbol.iterator',
    'r === Symbol.for("app") && it === Symbol.iterator',
    true,
  ],
  [
    'closures share their captured cells',
    'const counter = (() => { let c = 0; return { next: () => ++c, peek: () => c } })(); counter.next()',
    '[counter.next(), counter.peek()]',
    [2, 2],
  ],
  ['a function that returns itself', 'function f() { return f }', 'f() === f', true],
  [
    'classes, instances and super',
    'class A { hi() { return "A" } } class B extends A { hi() { return super.hi() + "B" } } const x = new B()',
    '[x instanceof B, x instanceof A, x.hi(), Object.getPrototypeOf(x) === B.prototype]',
    [true, true, 'AB', true],
  ],
  [
    'static members and private fields',
    'class C { #secret = 7; static count = 2; reveal() { return this.#secret } } const c = new C()',
    '[c.reveal(), C.count]',
    [7, 2],
  ],
  [
    'accessors, attributes and frozen objects',
    'const cfg = Object.freeze({ get two() { return 2 }, one: 1 }); const hidden = {}; Object.defineProperty(hidden, "x", { value: 1, enumerable: false })',
    '[Object.isFrozen(cfg), cfg.two, Object.keys(hidden).length, hidden.x]',
    [true, 2, 0, 1],
  ],
  [
    'errors',
    'const e = new TypeError("bad")',
    '[e instanceof TypeError, e.message, typeof e.stack]',
    [true, 'bad', 'string'],
  ],
  [
    "intrinsics are the realm's own",
    'const M = Math; const g = globalThis; const J = JSON.stringify',
    'M === Math && g === globalThis && J === JSON.stringify',
    true,
  ],
  [
    'generator and async functions (not running)',
    'function* gen() { yield 1; yield 2 } async function af() { return 3 }',
    '[[...gen()], await af()]',
    [[1, 2], 3],
  ],
  [
    'null-prototype objects',
    'const np = Object.create(null); np.k = 1',
    '[Object.getPrototypeOf(np), np.k]',
    [null, 1],
  ],
];

describe('value kinds survive a snapshot', () => {
  for (const [name, setup, check, expected] of KINDS) {
    it(name, async () => {
      expect(await roundTrip(setup, check)).toEqual(expected);
    });
  }

  it('a const stays read-only and a let writable', async () => {
    const repl = restoreRepl(
      (() => {
        const r = createRepl();
        r.evalSync('const c = 1; let l = 1');
        return r.snapshot({ key: KEY });
      })(),
      { key: KEY },
    );
    expect(errorOf(await repl.eval('c = 2')).name).toBe('TypeError');
    expect(valueOf(await repl.eval('l = 2; [c, l]'))).toEqual([1, 2]);
    expect(valueOf(await repl.eval('[Object.hasOwn(globalThis, "l"), typeof c]'))).toEqual([false, 'number']);
  });

  it('keeps a binding a failed cell left uninitialised in its temporal dead zone', async () => {
    const repl = createRepl();
    errorOf(await repl.eval('const t = (() => { throw new Error("no") })()'));
    const again = restoreRepl(repl.snapshot({ key: KEY }), { key: KEY });
    expect(errorOf(await again.eval('t')).name).toBe('ReferenceError');
  });
});

describe('what is not state', () => {
  it('refuses a binding that holds a live host value, naming it, and keeps the state', async () => {
    const db = { query: () => 42 };
    const repl = createRepl({ globals: { db } });
    valueOf(await repl.eval('let kept = 1'));
    expect(valueOf(await repl.eval('db.query()'))).toBe(42);
    const e = errorOf(await repl.eval('kept = 2; const conn = db'));
    expect(e.code).toBe(ErrorCode.InvalidInput);
    expect(e.message).toContain('conn');
    const nested = errorOf(await repl.eval('kept = 3; const cfg = { deep: { db } }'));
    expect(nested.message).toContain('cfg');
    expect(valueOf(await repl.eval('kept'))).toBe(1);
    expect(valueOf(await repl.eval('typeof conn + typeof cfg'))).toBe('undefinedundefined');
  });

  it('re-binds globals on restore', async () => {
    const repl = createRepl({ globals: { rate: () => 2 } });
    await repl.eval('function price(x) { return x * rate() }');
    const again = restoreRepl(repl.snapshot({ key: KEY }), { key: KEY, globals: { rate: () => 10 } });
    expect(valueOf(await again.eval('price(3)'))).toBe(30);
  });

  for (const [name, code] of [
    ['a promise', 'const p = Promise.resolve(1)'],
    ['a weak map', 'const w = new WeakMap()'],
    ['a proxy', 'const px = new Proxy({}, {})'],
    ['a suspended generator', 'function* g() { yield 1; yield 2 } const it = g(); it.next()'],
    ['a bound function', 'const bf = Math.max.bind(null, 1)'],
  ]) {
    it(`refuses ${name} with INVALID_INPUT and keeps the state`, async () => {
      const repl = createRepl();
      await repl.eval('let before = "kept"');
      const e = errorOf(await repl.eval(code));
      expect(e.code).toBe(ErrorCode.InvalidInput);
      expect(valueOf(await repl.eval('before'))).toBe('kept');
    });
  }
});

describe('a failed evaluation', () => {
  it('keeps what its completed statements did, as a REPL does', async () => {
    const repl = createRepl();
    await repl.eval('let a = 1');
    errorOf(await repl.eval('a = 2; let b = 3; throw new Error("stop")'));
    expect(valueOf(await repl.eval('[a, b]'))).toEqual([2, 3]);
  });

  it('changes nothing with transactional: true', async () => {
    const repl = createRepl({ transactional: true });
    await repl.eval('let a = 1; const list = [1]');
    errorOf(await repl.eval('a = 2; list.push(2); let b = 3; throw new Error("stop")'));
    expect(valueOf(await repl.eval('[a, list, typeof b]'))).toEqual([1, [1], 'undefined']);
  });

  it('has the run limits on every evaluation', async () => {
    const repl = createRepl({ limits: { timeoutMs: 200, steps: 1_000_000 } });
    await repl.eval('let progress = 0');
    const slow = errorOf(await repl.eval('progress = 1; while (true) {}'));
    expect([ErrorCode.Timeout, ErrorCode.StepLimit]).toContain(slow.code);
    expect(valueOf(await repl.eval('progress'))).toBe(1);
    const big = errorOf(
      await repl.eval('const hog = []; for (;;) hog.push(new Array(1e5).fill(1))', {
        limits: { memoryBytes: 8 << 20, steps: 1e9 },
      }),
    );
    expect(big.code).toBe(ErrorCode.MemoryLimit);
    expect(valueOf(await repl.eval('typeof hog'))).toBe('undefined');
  });
});

describe('isolation', () => {
  it('no REPL state is visible to another REPL or to plain runs', async () => {
    const a = createRepl();
    const b = createRepl();
    await a.eval('var leakA = 1; let leakB = 2; globalThis.leakC = 3');
    const probe = '[typeof leakA, typeof leakB, typeof leakC]';
    const none = ['undefined', 'undefined', 'undefined'];
    expect(valueOf(await b.eval(probe))).toEqual(none);
    expect(valueOf(runSync(`return ${probe}`))).toEqual(none);
    expect(valueOf(await run(`return ${probe}`))).toEqual(none);
    expect(valueOf(await run(probe, { mode: 'script' }))).toEqual(none);
  });

  it('cannot change the frozen built-ins it shares', async () => {
    const repl = createRepl();
    const e = await repl.eval('Array.prototype.poisoned = 1');
    expect(e.ok).toBe(false);
    await repl.eval('const M = Math');
    expect(valueOf(runSync('return typeof [].poisoned'))).toBe('undefined');
  });
});

describe('snapshots are authenticated and versioned', () => {
  it('refuses another key, flipped bytes and cut bytes before reading them', async () => {
    const repl = createRepl();
    await repl.eval('const big = "x".repeat(100); function f() { return big }');
    const bytes = repl.snapshot({ key: KEY });
    const refused = (b: Uint8Array, key = KEY) => {
      try {
        restoreRepl(b, { key });
        return 'accepted';
      } catch (e) {
        return (e as { code?: string }).code;
      }
    };
    expect(refused(bytes, 'another key, also long enough')).toBe(ErrorCode.SnapshotTampered);
    for (let i = 0; i < bytes.length; i += 7) {
      const flipped = Uint8Array.from(bytes);
      flipped[i] ^= 1;
      expect(refused(flipped)).toBe(ErrorCode.SnapshotTampered);
      expect(refused(bytes.subarray(0, i))).toBe(ErrorCode.SnapshotTampered);
    }
    expect(refused(bytes, 'short')).toBe(ErrorCode.InvalidInput);
  });

  it('refuses bad options with INVALID_INPUT', () => {
    const code = (f: () => unknown) => {
      try {
        f();
        return 'accepted';
      } catch (e) {
        return (e as { code?: string }).code;
      }
    };
    expect(code(() => createRepl({ limit: {} } as never))).toBe(ErrorCode.InvalidInput);
    expect(code(() => createRepl('x' as never))).toBe(ErrorCode.InvalidInput);
    expect(code(() => restoreRepl('bytes' as never, { key: KEY }))).toBe(ErrorCode.InvalidInput);
    expect(code(() => restoreRepl(new Uint8Array(80), { key: 'short' }))).toBe(ErrorCode.InvalidInput);
    expect(code(() => createRepl().snapshot({ key: new Uint8Array(8) }))).toBe(ErrorCode.InvalidInput);
    expect(code(() => createRepl().snapshot({} as never))).toBe(ErrorCode.InvalidInput);
  });

  it('answers a cell that declares a binding again with a SyntaxError, keeping the state', async () => {
    const repl = createRepl();
    await repl.eval('let x = 1; function f() { return 1 }');
    expect(errorOf(await repl.eval('let x = 2')).name).toBe('SyntaxError');
    expect(valueOf(await repl.eval('function f() { return 2 } x = 3; [f(), x]'))).toEqual([2, 3]);
  });

  it('disposes', async () => {
    const repl = createRepl();
    repl[Symbol.dispose]();
    expect(() => repl.snapshot({ key: KEY })).toThrow(expect.objectContaining({ code: ErrorCode.Disposed }));
    expect(() => repl.eval('1')).toThrow(expect.objectContaining({ code: ErrorCode.Disposed }));
  });
});

describe('another process', () => {
  it('restores every value kind and behaves the same', async () => {
    const cases = KINDS.map(([name, setup, check]) => {
      const repl = createRepl();
      valueOf(repl.evalSync(setup));
      return { name, check, bytes: Buffer.from(repl.snapshot({ key: KEY })).toString('base64') };
    });
    const here = await Promise.all(
      cases.map(async (c) => valueOf(await restoreRepl(Buffer.from(c.bytes, 'base64'), { key: KEY }).eval(c.check))),
    );
    expect(here).toEqual(KINDS.map((k) => k[3]));
    const dir = mkdtempSync(join(tmpdir(), 'repl-kinds-'));
    const file = join(dir, 'cases.json');
    writeFileSync(file, JSON.stringify(cases));
    const child = spawnSync(
      process.execPath,
      [
        '-e',
        `const q = require(${JSON.stringify(ENTRY)});
         const cases = JSON.parse(require('fs').readFileSync(${JSON.stringify(file)}, 'utf8'));
         Promise.all(cases.map((c) => q.restoreRepl(Buffer.from(c.bytes, 'base64'), { key: ${JSON.stringify(KEY)} }).eval(c.check)))
           .then((rs) => process.stdout.write(JSON.stringify(rs.map((r) => (r.ok ? r.value : r.error)))));`,
      ],
      { encoding: 'utf8', timeout: 30_000 },
    );
    expect(child.status, child.stderr).toBe(0);
    const there = JSON.parse(child.stdout) as unknown[];
    for (const [i, c] of cases.entries()) expect(JSON.stringify(there[i]), c.name).toBe(JSON.stringify(here[i]));
  });

  it('restores a snapshot and behaves the same', async () => {
    const setup = [
      'let n = 1; const seen = new Map(); function inc(k) { seen.set(k, ++n); return n }',
      'const counter = (() => { let c = 0; return { next: () => ++c } })(); counter.next()',
      'class Point { constructor(x, y) { this.x = x; this.y = y } len() { return Math.hypot(this.x, this.y) } }',
      'const p = new Point(3, 4); const sym = Symbol("s"); const tagged = { [sym]: "yes", sym }',
      'for (let i = 0; i < 100; i++) seen.set("k" + i, { i })',
    ];
    const check =
      '[inc("z"), counter.next(), p.len(), p instanceof Point, tagged[tagged.sym], seen.get("k42").i, seen.size]';
    const repl = createRepl();
    for (const cell of setup) valueOf(await repl.eval(cell));
    const here = valueOf(await restoreRepl(repl.snapshot({ key: KEY }), { key: KEY }).eval(check));
    const dir = mkdtempSync(join(tmpdir(), 'repl-'));
    const file = join(dir, 'state.bin');
    writeFileSync(file, repl.snapshot({ key: KEY }));
    const child = spawnSync(
      process.execPath,
      [
        '-e',
        `const q = require(${JSON.stringify(ENTRY)}); const bytes = require('fs').readFileSync(${JSON.stringify(file)});
         q.restoreRepl(new Uint8Array(bytes), { key: ${JSON.stringify(KEY)} }).eval(${JSON.stringify(check)})
           .then((r) => process.stdout.write(JSON.stringify(r)));`,
      ],
      { encoding: 'utf8', timeout: 30_000 },
    );
    expect(child.status, child.stderr).toBe(0);
    const there = JSON.parse(child.stdout);
    expect(there.ok).toBe(true);
    expect(there.value).toEqual(here);
    expect(here).toEqual([2, 2, 5, true, 'yes', 42, 101]);
  });
});
