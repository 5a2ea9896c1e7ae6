// Runs on one thread share a frozen template realm (the intrinsics) but nothing else: each
// test is a "writer" run trying to leave state behind for a later "reader" run on the same
// thread, and checks that the reader sees none of it. runSync runs on the main thread, so two
// consecutive runSync calls always share a template; run() runs on the worker threads.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configure, createRepl, restoreRepl, run, runSync, type RunResult } from '../../lib/index.js';
import { expectHealthy } from '../helpers.js';

/** The value of a run that must have succeeded. */
function valueOf(r: RunResult): unknown {
  if (!r.ok) throw new Error(`run failed: ${r.error.code} ${r.error.name}: ${r.error.message}`);
  return r.value;
}

/** Guest code that tries `attempt` and swallows whatever it throws. */
const tryAll = (attempts: string[]): string => attempts.map((a) => `try { ${a} } catch {}`).join('\n');

const MARK = 'xLeakMark7';

/**
 * Reader code: walks everything reachable from the global object and the hidden intrinsics
 * (prototypes, accessors' results) and returns every path whose key or string value holds MARK.
 */
const SCAN_FOR_MARK = `
  const MARK = ${JSON.stringify(MARK)};
  const seen = new Set();
  const hits = [];
  const walk = (o, path, depth) => {
    if (o === null || (typeof o !== 'object' && typeof o !== 'function') || seen.has(o) || depth > 14) return;
    seen.add(o);
    walk(Object.getPrototypeOf(o), path + '.__proto__', depth + 1);
    for (const k of Reflect.ownKeys(o)) {
      const name = path + '.' + String(k);
      if (String(k).includes(MARK)) hits.push(name);
      const d = Object.getOwnPropertyDescriptor(o, k);
      if ('value' in d) {
        if (typeof d.value === 'string' && d.value.includes(MARK)) hits.push(name);
        walk(d.value, name, depth + 1);
      } else {
        walk(d.get, name + '<get>', depth + 1);
        walk(d.set, name + '<set>', depth + 1);
      }
    }
  };
  walk(globalThis, 'globalThis', 0);
  walk(Object.getPrototypeOf(function* () {}), 'GeneratorFunction', 0);
  walk(Object.getPrototypeOf(async function* () {}), 'AsyncGeneratorFunction', 0);
  walk(Object.getPrototypeOf(async () => {}), 'AsyncFunction', 0);
  walk(Object.getPrototypeOf([][Symbol.iterator]()), 'ArrayIterator', 0);
  walk(Object.getPrototypeOf(new Map().entries()), 'MapIterator', 0);
  walk(Object.getPrototypeOf(new Set().values()), 'SetIterator', 0);
  walk(Object.getPrototypeOf('a'.matchAll(/a/g)), 'RegExpStringIterator', 0);
  walk(Object.getPrototypeOf([].values().map((x) => x)), 'IteratorHelper', 0);
  walk(Object.getPrototypeOf(Iterator.from({ next() {} })), 'WrapForValidIterator', 0);
  return { count: seen.size, hits };
`;

/** Own property names (and symbols) of the listed intrinsics, as a clean run sees them. */
const SHAPE_OF_INTRINSICS = `
  const targets = {
    globalThis, Object, 'Object.prototype': Object.prototype, 'Array.prototype': Array.prototype,
    'Function.prototype': Function.prototype, 'Error.prototype': Error.prototype, Error,
    'Promise.prototype': Promise.prototype, Promise, console, Intl, JSON, Math, Reflect, Iterator,
    'Iterator.prototype': Iterator.prototype, URL, 'URL.prototype': URL.prototype, TextEncoder,
    structuredClone, setTimeout, setInterval, Symbol, 'Symbol.prototype': Symbol.prototype, performance,
    crypto, 'Map.prototype': Map.prototype, 'WeakMap.prototype': WeakMap.prototype, RegExp,
  };
  const out = {};
  for (const [name, t] of Object.entries(targets)) {
    out[name] = Reflect.ownKeys(t).map(String).sort();
    out[name + ' proto'] = String(Object.getPrototypeOf(t) === null ? null : Object.prototype.toString.call(Object.getPrototypeOf(t)));
  }
  return out;
`;

describe('global object', () => {
  it('properties assigned to globalThis, self and global are gone', () => {
    valueOf(runSync(`globalThis.leakA = 1; self.leakB = 2; global.leakC = 3; globalThis['${MARK}'] = 4; return 1`));
    const r = runSync(`return [typeof leakA, typeof leakB, typeof leakC, '${MARK}' in globalThis]`);
    expect(valueOf(r)).toEqual(['undefined', 'undefined', 'undefined', false]);
  });

  it('var and function declarations of a script do not outlive it', () => {
    valueOf(runSync('var sv = "w"; function sf() { return "w" } sv + sf()', { mode: 'script' }));
    const r = runSync('[typeof sv, typeof sf, Object.getOwnPropertyDescriptor(globalThis, "sv") === undefined]', {
      mode: 'script',
    });
    expect(valueOf(r)).toEqual(['undefined', 'undefined', true]);
  });

  it('top-level let, const and class of a script leave no binding and no redeclaration error', () => {
    valueOf(runSync('let sl = "w"; const sc = "w"; class SC {}; sl + sc', { mode: 'script' }));
    // If the global lexical scope were shared, redeclaring these would be a SyntaxError.
    const r = runSync('let sl = "r"; const sc = "r"; class SC { static x = 1 }; [sl, sc, SC.x]', { mode: 'script' });
    expect(valueOf(r)).toEqual(['r', 'r', 1]);
    const r2 = runSync('[typeof sl, typeof sc, typeof SC]', { mode: 'script' });
    expect(valueOf(r2)).toEqual(['undefined', 'undefined', 'undefined']);
  });

  it('properties set through a script’s top-level this are gone', () => {
    valueOf(runSync('this.thisLeak = "w"; this === globalThis', { mode: 'script' }));
    expect(valueOf(runSync('[typeof thisLeak, this === globalThis]', { mode: 'script' }))).toEqual(['undefined', true]);
  });

  it('a non-configurable property defined on globalThis does not block the reader', () => {
    valueOf(
      runSync(`Object.defineProperty(globalThis, 'pinned', { value: 'w', writable: false, configurable: false });
        return pinned`),
    );
    const r = runSync(`const before = typeof pinned;
      Object.defineProperty(globalThis, 'pinned', { value: 'r', writable: true, configurable: true });
      return [before, pinned]`);
    expect(valueOf(r)).toEqual(['undefined', 'r']);
  });

  it('accessors installed on globalThis do not trap the reader', () => {
    valueOf(
      runSync(`let seen = [];
        Object.defineProperty(globalThis, 'trap', { get() { emit('GET'); return 'w' }, set(v) { emit('SET:' + v) }, configurable: false });
        Object.defineProperty(globalThis, 'console2', { get() { emit('C2'); return console }, configurable: true });
        return trap`),
    );
    const r = runSync(`const before = Object.getOwnPropertyDescriptor(globalThis, 'trap');
      globalThis.trap = 'r';
      return [before, trap, Object.getOwnPropertyDescriptor(globalThis, 'trap').value, typeof console2]`);
    expect(valueOf(r)).toEqual([undefined, 'r', 'r', 'undefined']);
    expect(r.output).toBe('');
  });

  it('deleting or replacing self and global does not affect the reader', () => {
    valueOf(
      runSync(`delete globalThis.self; global = 5; globalThis.self = { fake: true };
        Object.defineProperty(globalThis, 'global', { get: () => ({ fake: true }), configurable: false });
        return [self.fake, global.fake]`),
    );
    const r = runSync('return [self === globalThis, global === globalThis, self.fake]');
    expect(valueOf(r)).toEqual([true, true, undefined]);
  });

  it('changing the prototype of globalThis does not reach the reader', () => {
    valueOf(
      runSync(`globalThis.__proto__ = { protoLeak: 'w', toString() { return 'w' } };
        return typeof protoLeak`),
    );
    const r = runSync(
      'return [typeof protoLeak, Object.getPrototypeOf(globalThis) === Object.prototype, "protoLeak" in globalThis]',
    );
    expect(valueOf(r)).toEqual(['undefined', true, false]);

    valueOf(
      runSync(`Object.setPrototypeOf(globalThis, new Proxy({}, { has: () => true, get: (t, k) => 'proxied:' + String(k) }));
        return 1`),
    );
    const r2 = runSync('return [typeof anything, Object.getPrototypeOf(globalThis) === Object.prototype]');
    expect(valueOf(r2)).toEqual(['undefined', true]);
  });

  it('freezing or sealing globalThis does not freeze the reader’s global', () => {
    valueOf(runSync('Object.freeze(globalThis); return Object.isFrozen(globalThis)'));
    const r = runSync(
      'globalThis.fresh = 1; return [Object.isExtensible(globalThis), fresh, Object.isFrozen(globalThis)]',
    );
    expect(valueOf(r)).toEqual([true, 1, false]);
    valueOf(runSync('Object.preventExtensions(globalThis); return 1'));
    expect(valueOf(runSync('var z = 2; z', { mode: 'script' }))).toBe(2);
  });

  it('deleting and overwriting every global leaves the reader the full set', () => {
    const names = (src: string): string[] => valueOf(runSync(src)) as string[];
    const listGlobals = 'return Reflect.ownKeys(globalThis).map(String).sort()';
    const baseline = names(listGlobals);
    expect(baseline).toContain('console');
    valueOf(
      runSync(
        `for (const k of Reflect.ownKeys(globalThis)) { try { delete globalThis[k] } catch {} try { globalThis[k] = null } catch {} }
        1`,
        { mode: 'script' },
      ),
    );
    expect(names(listGlobals)).toEqual(baseline);
    const r = runSync('return [typeof console.log, typeof setTimeout, typeof Math.max, typeof self, typeof global]');
    expect(valueOf(r)).toEqual(['function', 'function', 'function', 'object', 'object']);
  });

  it('globals copied in through data belong to their run only', () => {
    valueOf(runSync('secret.push("w"); return secret.length', { data: { secret: ['a'] } }));
    const r = runSync('return [typeof secret, typeof other]', { data: { other: 1 } });
    expect(valueOf(r)).toEqual(['undefined', 'number']);
  });
});

describe('built-in prototypes and intrinsics', () => {
  let baseline: unknown;
  beforeAll(() => {
    baseline = valueOf(runSync(SHAPE_OF_INTRINSICS));
  });

  it('Object.prototype pollution in every form leaves the reader pristine', () => {
    runSync(
      tryAll([
        `Object.prototype.polluted = '${MARK}'`,
        `Object.defineProperty(Object.prototype, 'polluted', { value: '${MARK}' })`,
        `Reflect.set(Object.prototype, 'polluted', '${MARK}')`,
        `Reflect.defineProperty(Object.prototype, 'polluted', { get: () => '${MARK}' })`,
        `({}).__proto__.polluted = '${MARK}'`,
        `Object.prototype.__defineGetter__('polluted', () => '${MARK}')`,
        `({}).__defineSetter__.call(Object.prototype, 'toString', () => {})`,
        `Object.setPrototypeOf(Object.prototype, { polluted: '${MARK}' })`,
        `Object.assign(Object.prototype, { polluted: '${MARK}' })`,
        `delete Object.prototype.hasOwnProperty`,
        `Object.prototype.toString = () => '${MARK}'`,
        `JSON.parse('{"__proto__": {"polluted": "${MARK}"}}').__proto__.polluted`,
      ]),
    );
    const r = runSync(
      'return [({}).polluted, "polluted" in {}, Object.prototype.toString.call([]), typeof ({}).hasOwnProperty, String({})]',
    );
    expect(valueOf(r)).toEqual([undefined, false, '[object Array]', 'function', '[object Object]']);
    expect(valueOf(runSync(SHAPE_OF_INTRINSICS))).toEqual(baseline);
  });

  it('Array.prototype, Function.prototype and Error.prototype pollution leaves the reader pristine', () => {
    runSync(
      tryAll([
        `Array.prototype.polluted = '${MARK}'`,
        'Array.prototype.push = function () { emit("hijacked push") }',
        `Array.prototype[Symbol.iterator] = function* () { yield '${MARK}' }`,
        `Reflect.set(Array.prototype, 'map', () => '${MARK}')`,
        `Object.defineProperty(Array.prototype, 'length', { value: 5 })`,
        `Array.prototype.__defineGetter__('0', () => '${MARK}')`,
        `Object.setPrototypeOf(Array.prototype, { polluted: '${MARK}' })`,
        `Function.prototype.call = () => '${MARK}'`,
        `Function.prototype.polluted = '${MARK}'`,
        `Object.defineProperty(Function.prototype, 'toString', { value: () => '${MARK}' })`,
        `Error.prototype.toString = () => '${MARK}'`,
        `Error.prototype.message = '${MARK}'`,
        `Object.defineProperty(Error.prototype, 'stack', { get: () => '${MARK}' })`,
        `Object.setPrototypeOf(TypeError.prototype, { polluted: '${MARK}' })`,
        `Promise.prototype.then = function () { emit('hijacked then') }`,
        `Object.getPrototypeOf([][Symbol.iterator]()).next = () => ({ done: true })`,
      ]),
    );
    const r = runSync(`const a = [1, 2]; a.push(3);
      const e = new TypeError('m');
      const f = function g() {};
      return [a.join(), [...a].length, a.map((x) => x * 2).join(), [].polluted, a[Symbol.iterator] === Array.prototype.values,
        f.call(null) === undefined, f.polluted, String(e), e.message, e.polluted, (await Promise.resolve(7))]`);
    expect(valueOf(r)).toEqual([
      '1,2,3',
      3,
      '2,4,6',
      undefined,
      true,
      true,
      undefined,
      'TypeError: m',
      'm',
      undefined,
      7,
    ]);
    expect(r.output).toBe('');
    expect(valueOf(runSync(SHAPE_OF_INTRINSICS))).toEqual(baseline);
  });

  it('adding properties to console, Intl, JSON, Math, Reflect, Promise, Iterator and the web APIs fails for the reader too', () => {
    const targets = [
      'console',
      'console.log',
      'Intl',
      'Intl.NumberFormat',
      'JSON',
      'Math',
      'Reflect',
      'Promise',
      'Iterator',
      'Iterator.prototype',
      'URL',
      'URLSearchParams.prototype',
      'TextEncoder',
      'TextDecoder.prototype',
      'structuredClone',
      'setTimeout',
      'clearInterval',
      'queueMicrotask',
      'Symbol',
      'performance',
      'crypto',
      'emit',
    ];
    runSync(
      tryAll(
        targets.flatMap((t) => [
          `${t}.leak = '${MARK}'`,
          `Object.defineProperty(${t}, 'leak', { value: '${MARK}' })`,
          `Reflect.set(${t}, 'leak2', '${MARK}')`,
          `Object.setPrototypeOf(${t}, { leak3: '${MARK}' })`,
          `${t}.__defineGetter__('leak4', () => '${MARK}')`,
        ]),
      ),
    );
    const r = runSync(`return [${targets.map((t) => `[${t}.leak, ${t}.leak2, ${t}.leak3, ${t}.leak4]`).join(', ')}]`);
    expect(valueOf(r)).toEqual(targets.map(() => [undefined, undefined, undefined, undefined]));
    expect(valueOf(runSync(SHAPE_OF_INTRINSICS))).toEqual(baseline);
  });

  it('a deep scan of every reachable intrinsic finds nothing a writer tried to hide', () => {
    // The writer tries every place it can think of to stash a marked value: setters, Maps and
    // WeakMaps keyed by shared objects, symbols from the registry, internal-slot state.
    runSync(
      tryAll([
        `const m = new Map([['k', '${MARK}']]); Object.defineProperty(Map.prototype, 'stash', { value: m })`,
        `const wm = new WeakMap(); wm.set(Object.prototype, '${MARK}'); Object.prototype.wm = wm`,
        `Map.prototype.set.call(Map.prototype, 'k', '${MARK}')`,
        `WeakMap.prototype.set.call(WeakMap.prototype, Object, '${MARK}')`,
        `Set.prototype.add.call(Set.prototype, '${MARK}')`,
        `Date.prototype.setTime.call(Date.prototype, 1)`,
        `RegExp.prototype.compile.call(RegExp.prototype, '${MARK}')`,
        `Symbol.for('stash').description = '${MARK}'`,
        `Object(Symbol.for('stash')).v = '${MARK}'`,
        `Symbol.prototype.v = '${MARK}'`,
        `new TextDecoder().decode.call(TextDecoder.prototype, new Uint8Array([1]))`,
        `Reflect.construct(URL, ['https://${MARK}.example/'], function () {}.bind())`,
        `Object.defineProperty(Intl.NumberFormat.prototype, 'stash', { value: '${MARK}' })`,
        `new Intl.NumberFormat('${MARK}')`,
        `console.count('${MARK}'); console.time('${MARK}'); console.group('${MARK}')`,
        `/(xLeak\\w+)/.exec('${MARK}')`,
        `globalThis['${MARK}'] = '${MARK}'`,
        `Error.captureStackTrace(Error, '${MARK}')`,
      ]),
      { filename: `${MARK}.js` },
    );
    const scan = valueOf(runSync(SCAN_FOR_MARK)) as { count: number; hits: string[] };
    expect(scan.count).toBeGreaterThan(300);
    expect(scan.hits).toEqual([]);
  });

  it('Symbol.for entries carry no data between runs and keyFor still works', () => {
    runSync(
      tryAll([
        `Symbol.for('k').x = '${MARK}'`,
        `Object.defineProperty(Object(Symbol.for('k')).__proto__, 'x', { value: '${MARK}' })`,
        `Symbol.prototype.description = '${MARK}'`,
        `Symbol.keyFor = () => '${MARK}'`,
      ]),
    );
    const r = runSync(`const s = Symbol.for('k');
      return [Symbol.keyFor(s), s.description, s === Symbol.for('k'), s.x, Object(s).x, Symbol.keyFor(Symbol('k')), String(s)]`);
    expect(valueOf(r)).toEqual(['k', 'k', true, undefined, undefined, undefined, 'Symbol(k)']);
  });

  it('RegExp legacy statics show nothing of the previous run’s matches', () => {
    valueOf(runSync(`/(${MARK})-(\\d+)/.exec('prefix ${MARK}-42 suffix'); return 1`));
    const r = runSync(
      'return [RegExp.$1, RegExp.$2, RegExp.lastMatch, RegExp.input, RegExp["$_"], RegExp.leftContext, RegExp.rightContext]',
    );
    const seen = valueOf(r) as unknown[];
    for (const v of seen) expect(String(v ?? '')).not.toContain(MARK);
    expect(seen.map((v) => String(v ?? '')).join('')).not.toContain('42');
  });

  it('Intl formats with the defaults whatever the writer formatted', () => {
    valueOf(
      runSync(`new Intl.NumberFormat('de-DE').format(1234.5);
        new Intl.DateTimeFormat('ja-JP', { dateStyle: 'full' }).format(0);
        ${tryAll(['Intl.NumberFormat.prototype.resolvedOptions = () => ({ locale: "de-DE" })'])}
        return 1`),
    );
    const r = runSync(
      'return [new Intl.NumberFormat().resolvedOptions().locale, (1234.5).toLocaleString(), new Intl.DateTimeFormat().resolvedOptions().timeZone]',
    );
    const fresh = valueOf(r);
    // A reader run first on a brand-new thread would give the same answers.
    const ref = valueOf(
      runSync(
        'return [new Intl.NumberFormat().resolvedOptions().locale, (1234.5).toLocaleString(), new Intl.DateTimeFormat().resolvedOptions().timeZone]',
      ),
    );
    expect(fresh).toEqual(ref);
    expect((fresh as string[])[1]).not.toBe('1.234,5');
    expect((fresh as string[])[0]).not.toBe('de-DE');
  });
});

describe('Math.random and performance', () => {
  it('Math.random sequences differ from run to run and do not continue the writer’s', () => {
    const draw = 'return Array.from({ length: 16 }, () => Math.random())';
    const a = valueOf(runSync(draw)) as number[];
    const b = valueOf(runSync(draw)) as number[];
    const c = valueOf(runSync(draw)) as number[];
    expect(new Set(a).size).toBe(16);
    expect(b).not.toEqual(a);
    expect(c).not.toEqual(b);
    // No value of one run turns up in another (a shared or reused state would repeat them).
    const all = new Set([...a, ...b, ...c]);
    expect(all.size).toBe(48);
    // The writer cannot install its own generator for the reader.
    runSync(tryAll(['Math.random = () => 0.5', 'Object.defineProperty(Math, "random", { value: () => 0.5 })']));
    const d = valueOf(runSync(draw)) as number[];
    expect(d.filter((x) => x === 0.5)).toEqual([]);
  });

  it('performance.now starts near 0 for the reader after a writer busy-waited 150 ms', () => {
    const w = valueOf(
      runSync(`const t0 = performance.now(); while (performance.now() - t0 < 150) {}
        return [performance.now(), performance.timeOrigin]`),
    ) as number[];
    expect(w[0]).toBeGreaterThanOrEqual(150);
    const r = valueOf(runSync('return [performance.now(), performance.timeOrigin]')) as number[];
    expect(r[0]).toBeGreaterThanOrEqual(0);
    expect(r[0]).toBeLessThan(100);
    expect(r[1]).toBeGreaterThan(w[1]);
    expect(r[1] - w[1]).toBeGreaterThanOrEqual(140);
  });
});

describe('timers and jobs', () => {
  it('pending setTimeout and setInterval callbacks never fire in the reader', () => {
    const w = runSync(`setTimeout(() => { emit('T'); console.log('T') }, 1);
      setTimeout(() => { emit('T0') }, 0);
      setInterval(() => { emit('I'); console.log('I') }, 1);
      return 1`);
    expect(valueOf(w)).toBe(1);
    const r = runSync('await new Promise((resolve) => setTimeout(resolve, 40)); return "done"');
    expect(valueOf(r)).toBe('done');
    expect(r.output).toBe('');
    expect(r.logs).toEqual([]);
  });

  it('the writer’s running time does not shorten the reader’s timer delays', () => {
    // Timer due times are on a clock; if it is not the reader's own, a writer that ran (or
    // busy-waited) for a while makes the reader's timers fire early, by as much as it ran.
    valueOf(runSync('const t0 = performance.now(); while (performance.now() - t0 < 150) {} return 1'));
    const r = runSync(`const t0 = Date.now(); const p0 = performance.now();
      await new Promise((resolve) => setTimeout(resolve, 100));
      return [Date.now() - t0, performance.now() - p0]`);
    const [wallMs, perfMs] = valueOf(r) as number[];
    expect(wallMs).toBeGreaterThanOrEqual(95);
    expect(perfMs).toBeGreaterThanOrEqual(95);
  });

  it('a one-shot timer of the reader fires once, early or late timers of the writer notwithstanding', () => {
    for (let round = 0; round < 3; round++) {
      valueOf(runSync('for (let i = 0; i < 5; i++) setTimeout(() => emit("W" + i), 20); return 1'));
      const r = runSync(
        `let n = 0; const t0 = performance.now(); let at = -1;
        setTimeout(() => { n++; if (at < 0) at = performance.now() - t0 }, 5);
        await new Promise((resolve) => setTimeout(resolve, 40));
        return [n, at >= 4]`,
        { limits: { timeoutMs: 1000 } },
      );
      expect(valueOf(r)).toEqual([1, true]);
      expect(r.output).toBe('');
    }
  });

  it('timer ids restart at 1 for the reader', () => {
    const w = runSync(
      'const ids = []; for (let i = 0; i < 50; i++) ids.push(setTimeout(() => {}, 10_000)); return ids.at(-1)',
    );
    expect(valueOf(w)).toBe(50);
    const r = runSync(
      'const a = setTimeout(() => {}, 5); const b = setInterval(() => {}, 5); clearInterval(b); return [a, b]',
    );
    expect(valueOf(r)).toEqual([1, 2]);
  });

  it('the reader cannot clear or fire the writer’s timers by id', () => {
    valueOf(runSync('for (let i = 0; i < 5; i++) setTimeout(() => emit("W" + i), 20); return 1'));
    const r = runSync(`for (let id = 1; id <= 5; id++) clearTimeout(id);
      const mine = setTimeout(() => emit('R'), 5);
      await new Promise((resolve) => setTimeout(resolve, 40));
      return mine`);
    expect(valueOf(r)).toBe(1);
    expect(r.output).toBe('R');
  });

  it('async functions and promise chains waiting on the writer’s timers never resume', () => {
    valueOf(
      runSync(`(async () => {
          await new Promise((resolve) => setTimeout(resolve, 10));
          emit('resumed'); console.log('resumed');
          globalThis.lateLeak = 1;
        })();
        new Promise((resolve) => setTimeout(resolve, 5)).then(() => emit('then')).finally(() => emit('finally'));
        return 1`),
    );
    const r = runSync(`await new Promise((resolve) => setTimeout(resolve, 40));
      await null; await null;
      return typeof lateLeak`);
    expect(valueOf(r)).toBe('undefined');
    expect(r.output).toBe('');
    expect(r.logs).toEqual([]);
  });

  it('async generators, for await and Array.fromAsync left pending stay dead', () => {
    valueOf(
      runSync(`async function* gen() {
          for (let i = 0; ; i++) { await new Promise((resolve) => setTimeout(resolve, 3)); emit('G' + i); yield i; }
        }
        (async () => { for await (const v of gen()) console.log('loop', v); })();
        Array.fromAsync((async function* () { await new Promise((r) => setTimeout(r, 5)); yield 1; })())
          .then(() => { emit('fromAsync'); });
        return 1`),
    );
    const r = runSync('await new Promise((resolve) => setTimeout(resolve, 40)); return 1');
    expect(valueOf(r)).toBe(1);
    expect(r.output).toBe('');
    expect(r.logs).toEqual([]);
  });

  it('queueMicrotask and then-callbacks queued from a pending timer never run in the reader', () => {
    valueOf(
      runSync(`setTimeout(() => {
          queueMicrotask(() => emit('micro'));
          Promise.resolve().then(() => emit('then'));
        }, 1);
        return 1`),
    );
    const r = runSync('await new Promise((resolve) => setTimeout(resolve, 30)); return 1');
    expect(r.output).toBe('');
  });

  it('an unhandled rejection of the writer is reported to the writer only', () => {
    const w = runSync(`Promise.reject(new Error('${MARK} rejected')); return 1`);
    expect(w.logs.map((l) => l.message).join('\n')).toContain(`${MARK} rejected`);
    const r = runSync('await new Promise((resolve) => setTimeout(resolve, 5)); return 1');
    expect(valueOf(r)).toBe(1);
    expect(r.logs).toEqual([]);
  });

  it('FinalizationRegistry callbacks of the writer never run in the reader', () => {
    valueOf(
      runSync(`const registry = new FinalizationRegistry((held) => { emit('FR:' + held); console.log('FR', held); });
        globalThis.keep = [];
        for (let i = 0; i < 100; i++) { const o = { i }; keep.push(o); registry.register(o, 'kept' + i); }
        for (let i = 0; i < 100; i++) registry.register({ i }, 'dropped' + i);
        globalThis.registry = registry;
        globalThis.ref = new WeakRef(keep[0]);
        return 1`),
    );
    const r = runSync(`let junk = [];
      for (let i = 0; i < 50_000; i++) junk.push({ i, s: 'x' + i });
      junk = null;
      await new Promise((resolve) => setTimeout(resolve, 20));
      return [typeof registry, typeof ref, typeof keep]`);
    expect(valueOf(r)).toEqual(['undefined', 'undefined', 'undefined']);
    expect(r.output).toBe('');
    expect(r.logs).toEqual([]);
  });

  it('a FinalizationRegistry target freed after the writer ended does not run its callback in the reader', () => {
    // Registered while the result is copied out, held only by a promise job: dropping the
    // writer's jobs frees it; a callback that re-arms itself would otherwise read every later
    // reader's input.
    valueOf(
      runSync(`globalThis.stolen = [];
        globalThis.reg = new FinalizationRegistry(() => {
          stolen.push(read_input());
          console.log('${MARK} saw ' + JSON.stringify(stolen));
          const t = {}; reg.register(t, 0); setTimeout(() => {}, 1e9, t);
        });
        let armed = false;
        return { get x() {
          if (!armed) { armed = true; const t = {}; reg.register(t, 0); Promise.resolve().then(() => t); }
          return 1;
        } };`),
    );
    for (const secret of ['reader-secret-1', 'reader-secret-2', 'reader-secret-3']) {
      const r = runSync('await null; return read_input()', { input: secret });
      expect(valueOf(r)).toBe(secret);
      expect(r.logs).toEqual([]);
    }
  });

  it('a writer whose registry is garbage together with its realm does not crash the host', () => {
    const w = runSync(`const t = {}; t.self = t;
      const r = new FinalizationRegistry(console.log); r.self = r; r.register(t, '${MARK}');
      const junk = {}; junk.self = junk; junk.s = 'x'.repeat(3 << 20);
      return 1`);
    expect(valueOf(w)).toBe(1);
    for (let i = 0; i < 3; i++) {
      const r = runSync('await null; return 2');
      expect(valueOf(r)).toBe(2);
      expect(r.logs).toEqual([]);
    }
  });

  it("a writer's garbage up to its own small memory limit does not fail a reader with live values", async () => {
    const host = { f: (n: number) => n + 1 };
    for (let size = 1_000_000; size < 1_046_000; size += 3_000) {
      runSync(`const o = {}; o.self = o; o.s = 'x'.repeat(${size}); return 1`, { limits: { memoryBytes: 1 << 20 } });
      const r = await run('return obj.f(1)', { globals: { obj: host } });
      expect(valueOf(r)).toBe(2);
    }
  });
});

describe('console state', () => {
  it('console.count starts again at 1', () => {
    valueOf(runSync('for (let i = 0; i < 5; i++) { console.count(); console.count("k") } return 1'));
    const r = runSync('console.count(); console.count("k"); return 1');
    expect(r.logs).toEqual([
      { level: 'info', message: 'default: 1' },
      { level: 'info', message: 'k: 1' },
    ]);
  });

  it('a console.time label of the writer is unknown to the reader', () => {
    valueOf(runSync('console.time("t"); console.time(); return 1'));
    const r = runSync(
      'console.timeLog("t", "x"); console.timeEnd("t"); console.timeEnd(); console.log("end"); return 1',
    );
    expect(r.logs).toEqual([{ level: 'log', message: 'end' }]);
  });

  it('console.group left open by the writer does not indent the reader', () => {
    const w = runSync(
      'console.group("a"); console.group("b"); console.groupCollapsed("c"); console.log("deep"); return 1',
    );
    expect(w.logs.at(-1)?.message).toBe('      deep');
    const r = runSync(
      'console.log("flat"); console.group("g"); console.log("in"); console.groupEnd(); console.log("out"); return 1',
    );
    expect(r.logs.map((l) => l.message)).toEqual(['flat', 'g', '  in', 'out']);
  });

  it('the writer’s console lines and emitted output are not in the reader’s result', () => {
    const w = runSync(`console.log('${MARK}'); console.error('${MARK}'); emit('${MARK}'); return 1`);
    expect(w.output).toBe(MARK);
    const r = runSync('return 1');
    expect(r.output).toBe('');
    expect(r.logs).toEqual([]);
  });
});

describe('error stacks', () => {
  it('Error.prepareStackTrace, stackTraceLimit and captureStackTrace changes do not affect the reader', () => {
    runSync(
      tryAll([
        `Error.prepareStackTrace = () => '${MARK}'`,
        'Error.stackTraceLimit = 0',
        `Object.defineProperty(Error, 'prepareStackTrace', { value: () => '${MARK}' })`,
        `Object.defineProperty(Error, 'stackTraceLimit', { value: 1 })`,
        `Error.captureStackTrace = () => '${MARK}'`,
        `Error.captureStackTrace(Error.prototype)`,
        `Error.captureStackTrace(TypeError.prototype)`,
      ]),
      { filename: `${MARK}.js` },
    );
    const r = runSync(`function inner() { return new Error('e') }
      function outer() { return inner() }
      const e = outer();
      const o = {}; Error.captureStackTrace(o);
      return [Error.stackTraceLimit, typeof Error.prepareStackTrace, e.stack, typeof o.stack, Object.hasOwn(Error.prototype, 'stack') ? 'own' : 'none']`);
    const [limit, prep, stack, captured] = valueOf(r) as [number, string, string, string, string];
    expect(limit).toBe(10);
    expect(prep).toBe('undefined');
    expect(stack).toContain('at inner');
    expect(stack).toContain('at outer');
    expect(stack).toContain('sandbox.js');
    expect(stack).not.toContain(MARK);
    expect(captured).toBe('string');
  });

  it('a writer’s filename never shows in the reader’s errors', () => {
    runSync('function f() { throw new Error("w") } f()', { filename: `${MARK}.js` });
    const r = runSync('function g() { null.x } g()');
    expect(r.ok).toBe(false);
    expect(JSON.stringify(r.error)).not.toContain(MARK);
    expect(r.error?.stack).toContain('sandbox.js');
  });
});

describe('modules and nested runs', () => {
  it('a module of the writer cannot be imported by the reader', () => {
    valueOf(
      runSync(`export const secret = '${MARK}'; globalThis.fromModule = 1;`, {
        mode: 'module',
        filename: 'shared-mod.js',
      }),
    );
    const r = runSync(`let got = 'none';
      try { got = (await import('shared-mod.js')).secret } catch (e) { got = e.name }
      return [got, typeof fromModule]`);
    expect(valueOf(r)).toEqual(['ReferenceError', 'undefined']);
    const r2 = runSync(`import * as m from 'shared-mod.js'; export const s = m.secret;`, { mode: 'module' });
    expect(r2.ok).toBe(false);
    expect(JSON.stringify(r2)).not.toContain(MARK);
  });

  it('a run nested inside another (started from a data getter) shares nothing with it', () => {
    let inner: RunResult | undefined;
    const outer = runSync(
      `globalThis.outerMark = 1; console.count('n');
      await new Promise((resolve) => setTimeout(resolve, 20));
      return [typeof innerMark, typeof innerVar, fromHost]`,
      {
        data: {
          get fromHost() {
            inner = runSync(`globalThis.innerMark = 1; var innerVar = 1; console.count('n'); console.group('open');
              setTimeout(() => emit('inner timer'), 1); return typeof outerMark`);
            return 'host';
          },
        },
      },
    );
    expect(inner && valueOf(inner)).toBe('undefined');
    expect(valueOf(outer)).toEqual(['undefined', 'undefined', 'host']);
    expect(outer.output).toBe('');
    expect(outer.logs).toEqual([{ level: 'info', message: 'n: 1' }]);
    const reader = runSync('console.count("n"); return [typeof innerMark, typeof outerMark]');
    expect(valueOf(reader)).toEqual(['undefined', 'undefined']);
    expect(reader.logs).toEqual([{ level: 'info', message: 'n: 1' }]);
  });

  it('a run with live globals leaves nothing for a standard run after it', () => {
    const host = { n: 1 };
    valueOf(
      runSync(
        `globalThis.liveLeak = 1; console.count(); ${tryAll([`Object.prototype.polluted = '${MARK}'`])}
        setTimeout(() => emit('late'), 1); return h.n`,
        { globals: { h: host } },
      ),
    );
    const r = runSync(
      'console.count(); await new Promise((r) => setTimeout(r, 20)); return [typeof liveLeak, typeof h, ({}).polluted]',
    );
    expect(valueOf(r)).toEqual(['undefined', 'undefined', undefined]);
    expect(r.logs).toEqual([{ level: 'info', message: 'default: 1' }]);
    expect(r.output).toBe('');
  });
});

/** A writer that mutates everything it can, then is stopped by `stopper`. */
const MUTATE_THEN = (stopper: string): string => `
  globalThis.stoppedLeak = '${MARK}';
  var stoppedVar = 1;
  console.count('s'); console.count('s');
  console.time('st');
  console.group('open');
  setInterval(() => emit('interval'), 1);
  setTimeout(() => console.log('timer'), 1);
  Promise.resolve().then(() => { globalThis.afterStop = 1 });
  ${tryAll([`Object.prototype.polluted = '${MARK}'`])}
  ${stopper}`;

/** Reader after a stopped writer: clean, and fully working. */
function expectCleanReader(): void {
  const r = runSync(`console.count('s'); console.timeEnd('st'); console.log('flat');
    await new Promise((resolve) => setTimeout(resolve, 20));
    return [typeof stoppedLeak, typeof stoppedVar, typeof afterStop, ({}).polluted, [3, 1, 2].toSorted().join(),
      new Intl.NumberFormat('en-US').format(1234.5), JSON.stringify({ a: [1] }), setTimeout(() => {}, 1)]`);
  expect(valueOf(r)).toEqual(['undefined', 'undefined', 'undefined', undefined, '1,2,3', '1,234.5', '{"a":[1]}', 2]);
  expect(r.output).toBe('');
  expect(r.logs).toEqual([
    { level: 'info', message: 's: 1' },
    { level: 'log', message: 'flat' },
  ]);
  const scan = valueOf(runSync(SCAN_FOR_MARK)) as { hits: string[] };
  expect(scan.hits).toEqual([]);
  expectHealthy();
}

describe('stopped runs', () => {
  it('a writer that times out mid-way leaves a clean reader', () => {
    const w = runSync(MUTATE_THEN('for (;;) {}'), { limits: { timeoutMs: 50 } });
    expect(w.error?.code).toBe('TIMEOUT');
    expectCleanReader();
  });

  it('a writer that times out while awaiting leaves a clean reader', () => {
    const w = runSync(MUTATE_THEN('await new Promise(() => {}); for (;;) {}'), { limits: { timeoutMs: 50 } });
    expect(w.error?.code).toBe('TIMEOUT');
    expectCleanReader();
  });

  it('a writer that hits the memory limit mid-way leaves a clean reader', () => {
    const w = runSync(MUTATE_THEN('const grow = []; for (;;) grow.push(new Array(1000).fill({ k: "v" }));'), {
      limits: { memoryBytes: 2_000_000 },
    });
    expect(w.error?.code).toBe('MEMORY_LIMIT');
    expectCleanReader();
  });

  it('a writer that runs out of steps mid-way leaves a clean reader', () => {
    const w = runSync(MUTATE_THEN('for (;;) {}'), { limits: { steps: 20_000 } });
    expect(w.error?.code).toBe('STEP_LIMIT');
    expectCleanReader();
  });

  it('a writer stopped inside a timer callback leaves a clean reader', () => {
    const w = runSync(
      MUTATE_THEN(`setTimeout(() => { globalThis.inTimer = 1; console.group('timer group'); for (;;) {} }, 1);
        await new Promise(() => {});`),
      { limits: { timeoutMs: 60 } },
    );
    expect(w.error?.code).toBe('TIMEOUT');
    expectCleanReader();
    expect(valueOf(runSync('return typeof inTimer'))).toBe('undefined');
  });

  it('a writer that overflows the stack mid-way leaves a clean reader', () => {
    const w = runSync(MUTATE_THEN('const f = (n) => f(n + 1) + 1; f(0);'));
    expect(w.ok).toBe(false);
    expectCleanReader();
  });

  it('an aborted worker run leaves clean readers on its thread', async () => {
    const controller = new AbortController();
    const pending = run(MUTATE_THEN('for (;;) {}'), { signal: controller.signal });
    setTimeout(() => controller.abort(), 30);
    const w = await pending;
    expect(w.error?.code).toBe('CANCELLED');
    const readers = await Promise.all(
      Array.from({ length: 6 }, () =>
        run(`console.count('s'); return [typeof stoppedLeak, typeof afterStop, ({}).polluted]`),
      ),
    );
    for (const r of readers) {
      expect(valueOf(r)).toEqual(['undefined', 'undefined', undefined]);
      expect(r.logs).toEqual([{ level: 'info', message: 's: 1' }]);
      expect(r.output).toBe('');
    }
  });
});

const WORKER_WRITER = `
  globalThis.workerLeak = '${MARK}';
  console.count('w'); console.group('g'); console.time('wt');
  setInterval(() => emit('interval'), 1);
  (async () => { await new Promise((r) => setTimeout(r, 5)); globalThis.lateWorkerLeak = 1; emit('late'); })();
  ${tryAll([`Object.prototype.polluted = '${MARK}'`, `Array.prototype.polluted = '${MARK}'`, `console.leak = '${MARK}'`])}
  return [Math.random(), performance.timeOrigin];`;

const WORKER_READER = `
  const before = [typeof workerLeak, typeof lateWorkerLeak];
  console.count('w'); console.timeEnd('wt'); console.log('flat');
  await new Promise((r) => setTimeout(r, 15));
  return [...before, typeof lateWorkerLeak, ({}).polluted, [].polluted, console.leak, setTimeout(() => {}, 1), Math.random()];`;

function expectCleanWorkerReader(r: RunResult, writerRandoms: Set<number>): void {
  const v = valueOf(r) as unknown[];
  // The reader's wait took timer id 1, so its second timer is 2.
  expect(v.slice(0, 7)).toEqual(['undefined', 'undefined', 'undefined', undefined, undefined, undefined, 2]);
  expect(writerRandoms.has(v[7] as number)).toBe(false);
  expect(r.output).toBe('');
  expect(r.logs).toEqual([
    { level: 'info', message: 'w: 1' },
    { level: 'log', message: 'flat' },
  ]);
}

describe('worker runs (run)', () => {
  it('parallel writers then parallel readers: nothing leaks on any worker thread', async () => {
    const writers = await Promise.all(Array.from({ length: 8 }, () => run(WORKER_WRITER)));
    const randoms = new Set(writers.map((w) => (valueOf(w) as number[])[0]));
    expect(randoms.size).toBe(8);
    const readers = await Promise.all(Array.from({ length: 8 }, () => run(WORKER_READER)));
    for (const r of readers) expectCleanWorkerReader(r, randoms);
  });

  it('interleaved writers and readers in one Promise.all stay apart', async () => {
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? run(WORKER_WRITER) : run(WORKER_READER))),
    );
    const randoms = new Set(results.filter((_, i) => i % 2 === 0).map((w) => (valueOf(w) as number[])[0]));
    for (const [i, r] of results.entries()) if (i % 2 === 1) expectCleanWorkerReader(r, randoms);
  });

  it('script-mode declarations of a worker run do not reach later worker runs', async () => {
    await Promise.all(
      Array.from({ length: 6 }, () =>
        run('var wv = 1; let wl = 2; class WC {}; function wf() {} 1', { mode: 'script' }),
      ),
    );
    const readers = await Promise.all(
      Array.from({ length: 6 }, () =>
        run('let wl = "r"; class WC {}; [typeof wv, typeof wf, wl, typeof WC]', { mode: 'script' }),
      ),
    );
    for (const r of readers) expect(valueOf(r)).toEqual(['undefined', 'undefined', 'r', 'function']);
  });

  describe('on a single worker thread', () => {
    let workers = 0;
    beforeAll(() => {
      workers = configure({}).workers;
      configure({ workers: 1 });
    });
    afterAll(() => {
      configure({ workers });
    });

    it('sequential writer and reader on the one worker: nothing leaks', async () => {
      for (let i = 0; i < 3; i++) {
        const w = await run(WORKER_WRITER);
        const r = await run(WORKER_READER);
        expectCleanWorkerReader(r, new Set([(valueOf(w) as number[])[0]]));
      }
    });

    it('a timed-out writer on the one worker leaves a clean reader', async () => {
      const w = await run(MUTATE_THEN('for (;;) {}'), { limits: { timeoutMs: 50 } });
      expect(w.error?.code).toBe('TIMEOUT');
      const r = await run(`console.count('s'); await new Promise((r) => setTimeout(r, 15));
        return [typeof stoppedLeak, typeof afterStop, ({}).polluted, setTimeout(() => {}, 1)]`);
      expect(valueOf(r)).toEqual(['undefined', 'undefined', undefined, 2]);
      expect(r.logs).toEqual([{ level: 'info', message: 's: 1' }]);
      expect(r.output).toBe('');
    });

    it('performance.now of the reader starts near 0 after a busy writer on the one worker', async () => {
      const w = valueOf(
        await run(
          'const t0 = performance.now(); while (performance.now() - t0 < 150) {} return [performance.now(), performance.timeOrigin]',
        ),
      ) as number[];
      const r = valueOf(await run('return [performance.now(), performance.timeOrigin]')) as number[];
      expect(w[0]).toBeGreaterThanOrEqual(150);
      expect(r[0]).toBeLessThan(100);
      expect(r[1] - w[1]).toBeGreaterThanOrEqual(140);
    });
  });
});

// A thread keeps the scripts it compiled and runs the same source again from them: the code is
// shared, nothing it makes is. Every test runs one source twice (or more) and checks that the
// second run starts as the first did.
describe('the same source run again (compiled once per thread)', () => {
  const twice = (source: string, options: Parameters<typeof runSync>[1] = {}) => [
    valueOf(runSync(source, options)),
    valueOf(runSync(source, options)),
  ];

  it('declarations, closures and globalThis are the run’s own', () => {
    const src = `var seen = typeof marker; globalThis.marker = 1; function f() { return globalThis }
      const g = () => typeof marker; [seen, f() === globalThis, g(), Object.keys(globalThis).includes('seen')]`;
    expect(twice(src, { mode: 'script' })).toEqual([
      ['undefined', true, 'number', true],
      ['undefined', true, 'number', true],
    ]);
  });

  it('functions made by the shared code are new objects of the run, built on its intrinsics', () => {
    const src = `function f() {} class C {} const arrow = () => 1;
      globalThis.stamp = (globalThis.stamp ?? 0) + 1;
      return [f.constructor === Function, Object.getPrototypeOf(C) === Function.prototype, typeof f.prototype,
        Object.isExtensible(f), 'tagged' in f, (f.tagged = 1), stamp]`;
    expect(twice(src)).toEqual([
      [true, true, 'object', true, false, 1, 1],
      [true, true, 'object', true, false, 1, 1],
    ]);
  });

  it('a tagged template’s strings object is frozen: nothing can be left on it for the next run', () => {
    const src = `const strings = ((s) => s)\`a\${1}b\`;
      const had = strings.leak;
      try { strings.leak = '${MARK}' } catch {}
      try { Object.defineProperty(strings.raw, 'leak', { value: 1 }) } catch {}
      return [had, strings.leak, strings.raw.leak, Object.isFrozen(strings), Object.isFrozen(strings.raw)]`;
    expect(twice(src)).toEqual([
      [undefined, undefined, undefined, true, true],
      [undefined, undefined, undefined, true, true],
    ]);
  });

  it('a private field stamped on the shared strings object is invisible to the next run', () => {
    const src = `const strings = ((s) => s)\`x\`;
      class Base { constructor(o) { return o } }
      class Stamp extends Base { #n = 0; static read(o) { try { return o.#n } catch { return 'none' } } }
      const before = Stamp.read(strings);
      try { new Stamp(strings) } catch {}
      return [before, Stamp.read(strings)]`;
    // Each run's class has a private name of its own: the first run's stamp is unreadable by
    // the second, which sees no field until it stamps its own.
    const [first, second] = twice(src) as unknown[][];
    expect(first[0]).toBe('none');
    expect(second[0]).toBe('none');
  });

  it('Math.random, Date and performance in shared code are the run’s', () => {
    const src = 'const r = [Math.random(), Math.random()]; return [r, performance.now() < 1000]';
    const [a, b] = twice(src) as [[number[], boolean], [number[], boolean]];
    expect(a[0]).not.toEqual(b[0]);
    expect(a[1] && b[1]).toBe(true);
  });

  it('a syntax error is reported each time, with its position', () => {
    const first = runSync('let a = 1;\nlet a = 2;', { mode: 'script' });
    const second = runSync('let a = 1;\nlet a = 2;', { mode: 'script' });
    expect(first.error).toMatchObject({ code: 'EVAL_ERROR', name: 'SyntaxError', line: 2 });
    expect(second.error).toEqual(first.error);
  });

  it('runtime errors point at the same place on every run', () => {
    const src = 'const a = 1;\nfunction boom() { null.x }\nboom()';
    const errors = [runSync(src), runSync(src), runSync(src, { filename: 'other.js' })].map((r) => r.error);
    expect(errors[0]).toMatchObject({ name: 'TypeError', line: 2 });
    expect(errors[1]).toEqual(errors[0]);
    expect(errors[2]?.line).toBe(2);
    expect(errors[2]?.stack).toContain('other.js');
    expect(errors[0]?.stack).not.toContain('other.js');
  });

  it('the same source under another filename or mode is compiled apart', () => {
    expect(valueOf(runSync('typeof this', { mode: 'script' }))).toBe('object');
    expect(valueOf(runSync('typeof this'))).toBe(undefined);
    expect(valueOf(runSync('return typeof this'))).toBe('undefined');
  });

  it('function source text is kept for toString', () => {
    const src = 'function shown(a, b) { return a + b }\nreturn shown.toString()';
    expect(twice(src)).toEqual(['function shown(a, b) { return a + b }', 'function shown(a, b) { return a + b }']);
  });
});

describe('persistent realms', () => {
  // A REPL's cells run in realms derived from the same templates as plain runs, on the main
  // thread (evalSync) and on the workers (eval): what they keep is their own state, never the
  // template's, another REPL's or a plain run's.
  const WRITER = tryAll([
    `var ${MARK}v = '${MARK}'; let ${MARK}l = '${MARK}'; function ${MARK}f() { return '${MARK}' }`,
    `globalThis['${MARK}g'] = '${MARK}'`,
    `Object.prototype.stash = '${MARK}'`,
    `Map.prototype.set.call(Map.prototype, 'k', '${MARK}')`,
    `Symbol.for('stash').description = '${MARK}'`,
    `console.count('${MARK}'); console.group('${MARK}')`,
    `setTimeout(() => { globalThis.late = '${MARK}' }, 1)`,
  ]);

  it('a REPL’s cells leave nothing in plain runs or other REPLs on either thread kind', async () => {
    const writer = createRepl();
    valueOf(writer.evalSync(WRITER));
    valueOf(
      await writer.eval(
        WRITER.replaceAll(`${MARK}v`, `${MARK}w`).replaceAll(`${MARK}l`, `${MARK}m`).replaceAll(`${MARK}f`, `${MARK}h`),
      ),
    );
    const key = 'the cross-run test key, 16+ bytes';
    const restored = restoreRepl(writer.snapshot({ key }), { key });
    valueOf(await restored.eval('0'));
    const sync = valueOf(runSync(SCAN_FOR_MARK)) as { count: number; hits: string[] };
    expect(sync.count).toBeGreaterThan(300);
    expect(sync.hits).toEqual([]);
    expect((valueOf(await run(SCAN_FOR_MARK)) as { hits: string[] }).hits).toEqual([]);
    const other = createRepl();
    const cell = `(() => { ${SCAN_FOR_MARK} })()`;
    expect((valueOf(other.evalSync(cell)) as { hits: string[] }).hits).toEqual([]);
    expect((valueOf(await other.eval(cell)) as { hits: string[] }).hits).toEqual([]);
  });

  it('the writer’s own state is where it left it, and only there', async () => {
    const writer = createRepl();
    valueOf(await writer.eval(`let ${MARK}l = 1; var ${MARK}v = 2`));
    expect(valueOf(await writer.eval(`[${MARK}l, ${MARK}v]`))).toEqual([1, 2]);
    expect(valueOf(await run(`return [typeof ${MARK}l, typeof ${MARK}v]`))).toEqual(['undefined', 'undefined']);
  });
});
