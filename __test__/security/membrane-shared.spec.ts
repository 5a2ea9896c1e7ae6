// Attacks on the membrane as shared by runs: one frozen handler per proxy kind, a native `get`
// trap, and each proxy's run state and host id kept on its own handler under two private
// symbols (the target stays empty).
// Nothing of that bookkeeping may show, and no run may reach another run's host objects.
import { describe, expect, it } from 'vitest';
import { run, runSync, type RunOptions, type RunResult } from '../../lib/index.js';
import { expectHealthy } from '../helpers.js';

const liveSync = (src: string, globals: RunOptions['globals'], options: RunOptions = {}) =>
  runSync(src, { ...options, globals });
const live = (src: string, globals: RunOptions['globals'], options: RunOptions = {}) =>
  run(src, { ...options, globals });
const tick = () => new Promise((resolve) => setTimeout(resolve, 10));

function value(r: RunResult): unknown {
  if (!r.ok) throw new Error(`the run failed: ${JSON.stringify(r.error)}`);
  return r.value;
}

/** Text that would only appear if a proxy's target (the membrane's bookkeeping) showed. */
const BOOKKEEPING = /Symbol\(run\)|Symbol\(id\)|proxies|nextCallback|NOOP/;

const hostValues = () => ({ obj: { a: 1, nested: { b: 2 } }, arr: [1, 2, 3], fn: function named() {} });

describe('the bookkeeping of a proxy stays invisible', () => {
  // console.log/dir/table inspect a proxy's target without traps: the run state must not print.
  it('console output of host objects, arrays and functions shows no membrane state', () => {
    const r = liveSync(
      'console.log(obj); console.log(arr); console.log(fn); console.dir(obj, { depth: 5 }); console.table([obj]);' +
        ' console.dir(fn, { showHidden: true }); console.dir(arr, { showHidden: true }); return 1',
      hostValues(),
    );
    expect(value(r)).toBe(1);
    expect(r.logs).toHaveLength(7);
    for (const line of r.logs) expect(line.message).not.toMatch(BOOKKEEPING);
    expectHealthy();
  });

  // An uncaught host proxy (thrown, or an unhandled rejection) is described by the same inspector.
  it('a host proxy thrown or rejected unhandled is described without the membrane state', () => {
    const thrown = liveSync('throw obj', hostValues());
    expect(thrown.ok).toBe(false);
    expect(thrown.error?.message).toMatch(/^Uncaught/);
    expect(thrown.error?.message).not.toMatch(BOOKKEEPING);
    const rejected = liveSync('Promise.reject(arr); return 1', hostValues());
    expect(value(rejected)).toBe(1);
    expect(rejected.logs.map((l) => l.message).join('\n')).toMatch(/Unhandled promise rejection/);
    expect(rejected.logs.map((l) => l.message).join('\n')).not.toMatch(BOOKKEEPING);
    expectHealthy();
  });

  // Every reflective view of a proxy (descriptors, spread, for-in, entries) shows host keys only.
  it('reflection, spread and enumeration see host keys only, for every kind', () => {
    const r = liveSync(
      `const out = {};
       for (const [name, p] of [['obj', obj], ['arr', arr], ['fn', fn]]) {
         const keys = [];
         for (const k in p) keys.push(k);
         const child = Object.create(p);
         for (const k in child) keys.push('child:' + k);
         out[name] = [
           Reflect.ownKeys(p).filter((k) => typeof k !== 'string').length,
           Object.getOwnPropertySymbols(Object.getOwnPropertyDescriptors(p)).length,
           Reflect.ownKeys({ ...p }).filter((k) => typeof k !== 'string').length,
           keys.join(),
           Object.entries(p).map(([k]) => k).join(),
         ];
       }
       return out;`,
      hostValues(),
    );
    expect(value(r)).toEqual({
      obj: [0, 0, 0, 'a,nested,child:a,child:nested', 'a,nested'],
      arr: [0, 0, 0, '0,1,2,child:0,child:1,child:2', '0,1,2'],
      fn: [0, 0, 0, '', ''],
    });
    expectHealthy();
  });

  // A guest Proxy wrapping a host proxy gets the host proxy as its target, never the inner target.
  it('a guest Proxy over a host proxy sees the host proxy in its traps', () => {
    const r = liveSync(
      `const seen = [];
       const p = new Proxy(obj, {
         get(t, k, rcv) { seen.push(t === obj, Object.getOwnPropertySymbols(t).length); return Reflect.get(t, k, rcv) },
         ownKeys(t) { seen.push(t === obj); return Reflect.ownKeys(t) },
       });
       return [p.a, Reflect.ownKeys(p).join(), seen];`,
      hostValues(),
    );
    expect(value(r)).toEqual([1, 'a,nested', [true, 0, true]]);
    expectHealthy();
  });

  // Blocked names read through receivers (super, prototype chains, Reflect.get) reach only
  // guest intrinsics, never a host prototype or constructor.
  it('blocked names through super, prototype chains and receivers give guest intrinsics', () => {
    const r = liveSync(
      `const o = { __proto__: obj, m() { return [super.constructor === Object, super.__proto__ === Object.prototype, super.a] } };
       const child = Object.create(fn);
       return [
         ...o.m(),
         Reflect.get(obj, 'constructor', {}) === Object,
         Reflect.get(fn, 'prototype', fn) === undefined,
         child.prototype === undefined,
         child.constructor === Function,
         obj.__lookupGetter__('__proto__') === Object.prototype.__lookupGetter__('__proto__'),
         Object.getOwnPropertyDescriptor(fn, 'prototype') === undefined,
         'prototype' in fn,
       ];`,
      { ...hostValues(), fn: class Host {} },
    );
    expect(value(r)).toEqual([true, true, 1, true, true, true, true, true, true, false]);
    expectHealthy();
  });

  // Private fields stamped on a host proxy (constructor return override) stay on the guest's proxy.
  it('a private field stamped on a host proxy never reaches the host object', () => {
    const host = { a: 1 };
    const r = liveSync(
      `class Base { constructor(o) { return o } }
       class Stamp extends Base { #mark = 'stamped'; static read(o) { return o.#mark } static has(o) { return #mark in o } }
       new Stamp(obj);
       return [Stamp.read(obj), Stamp.has(obj), Object.keys(obj).join()];`,
      { obj: host },
    );
    expect(value(r)).toEqual(['stamped', true, 'a']);
    expect(Reflect.ownKeys(host)).toEqual(['a']);
    expectHealthy();
  });

  // Errors the shared traps throw are plain guest TypeErrors carrying nothing else.
  it('errors thrown by the shared traps are plain guest errors', () => {
    const r = liveSync(
      `const out = [];
       for (const attempt of [() => { obj.__proto__ = {} }, () => Object.defineProperty(arr, 'x', { value: 1 }),
                              () => Object.setPrototypeOf(fn, null), () => { delete obj[Symbol.iterator] }, () => Object.freeze(obj)]) {
         try { attempt(); out.push('allowed') } catch (e) {
           out.push([Object.getPrototypeOf(e) === TypeError.prototype, Reflect.ownKeys(e).sort().join()]);
         }
       }
       return out;`,
      hostValues(),
    );
    expect(value(r)).toEqual(Array(5).fill([true, 'message']));
    expectHealthy();
  });
});

describe('the native get trap keeps the run under its limits', () => {
  // Reads of copied primitives never enter JavaScript, but each still counts as a host call.
  it('primitive reads count against hostCalls and the limit cannot be caught', () => {
    const r = liveSync(
      'let n = 0; try { for (let i = 0; i < 1000; i++) n += obj.a } catch (e) { return "caught " + e.message } return n',
      hostValues(),
      { limits: { hostCalls: 50 } },
    );
    expect(r.ok).toBe(false);
    expect(r.error?.code).toBe('HOST_CALL_LIMIT');
    expectHealthy();
  });

  // A host getter reached through the native trap that outlives the deadline ends the run.
  it('a run whose deadline passes inside a host getter ends with TIMEOUT and the next run works', () => {
    const r = liveSync(
      'try { return h.slow } catch { return "caught" }',
      {
        h: {
          get slow() {
            const t = Date.now();
            while (Date.now() - t < 200);
            return 1;
          },
        },
      },
      { limits: { timeoutMs: 50 } },
    );
    expect(r.error?.code).toBe('TIMEOUT');
    expect(value(liveSync('return h.a + 1', { h: { a: 1 } }))).toBe(2);
    expectHealthy();
  });

  // A large host string copied in by the native trap is charged to the run's memory limit.
  it('a host string too large for the memory limit ends the run with MEMORY_LIMIT', () => {
    const r = liveSync(
      'let s = 0; for (let i = 0; i < 20; i++) s += h.big.length; return s',
      {
        h: {
          get big() {
            return 'x'.repeat(8 << 20);
          },
        },
      },
      { limits: { memoryBytes: 4 << 20 } },
    );
    expect(r.error?.code).toBe('MEMORY_LIMIT');
    expect(value(liveSync('return h.a + 1', { h: { a: 1 } }))).toBe(2);
    expectHealthy();
  });
});

describe('runs sharing one membrane reach only their own host objects', () => {
  // Host ids restart with every run: a proxy must resolve against its own run's host table.
  it('sequential runs with the same global names each read their own objects', () => {
    const seen = [];
    for (const name of ['first', 'second', 'third']) {
      const host = { name, items: [name] };
      seen.push(
        value(liveSync('h.items.push(h.name.length); return [h.name, h.items.length, typeof kept]', { h: host })),
      );
      expect(host.items).toEqual([name, name.length]);
    }
    expect(seen).toEqual([
      ['first', 2, 'undefined'],
      ['second', 2, 'undefined'],
      ['third', 2, 'undefined'],
    ]);
    expectHealthy();
  });

  // A host promise of an ended run settles while a later run waits on its own promise (both
  // runs' settle ids are 1): the late value must not reach the later run.
  it("a late host promise of an earlier run does not settle a later run's promise", async () => {
    let resolveEarlier: (v: unknown) => void = () => {};
    let resolveLater: (v: unknown) => void = () => {};
    const earlierMark: Record<string, unknown> = {};
    value(
      await live('later().then((v) => { mark.seen = v }); return 1', {
        later: () => new Promise((resolve) => (resolveEarlier = resolve)),
        mark: earlierMark,
      }),
    );
    const laterMark: Record<string, unknown> = { name: 'later' };
    const pending = live('const v = await mine(); return [v, mark.seen === undefined, mark.name]', {
      mine: () => new Promise((resolve) => (resolveLater = resolve)),
      mark: laterMark,
    });
    await tick();
    resolveEarlier('from the earlier run');
    await tick();
    resolveLater('its own');
    expect(value(await pending)).toEqual(['its own', true, 'later']);
    expect(earlierMark).toEqual({});
    expect(laterMark).toEqual({ name: 'later' });
    expectHealthy();
  });

  // A guest callback kept from an ended run, called while a later async run is in flight, is
  // dead: it must not run the later run's callback with the same id either.
  it("an earlier run's callback called during a later async run runs nothing", async () => {
    let kept: (() => unknown) | undefined;
    const earlier: Record<string, unknown> = {};
    value(
      liveSync('keep(() => { mark.a = true; return 1 }); return 1', {
        keep: (f: () => unknown) => (kept = f),
        mark: earlier,
      }),
    );
    const later: Record<string, unknown> = {};
    let message = '';
    const r = await live('reg(() => { mark.b = true }); await poke(); return Object.keys(mark).join()', {
      reg: () => undefined,
      poke: async () => {
        try {
          kept!();
        } catch (e) {
          message = (e as Error).message;
        }
      },
      mark: later,
    });
    expect(value(r)).toBe('');
    expect(message).toMatch(/after its run ended/);
    expect(earlier).toEqual({});
    expect(later).toEqual({});
    expectHealthy();
  });

  // A nested live run (own realm) calls back into the outer run, whose callback reads the
  // outer run's host objects: both runs' first handle is id 1.
  it('a callback of the outer run called from a nested live run reads the outer objects', async () => {
    const r = await live(
      `const cb = () => h.name + ':' + h.items.length;
       await pause();
       return [nest(cb), h.name, h.items.length];`,
      {
        h: { name: 'outer', items: [1, 2, 3] },
        pause: async () => undefined,
        nest: (cb: () => string) => {
          const inner = runSync('return [h.name, cb(), h.items.length, h.name]', {
            globals: { h: { name: 'inner', items: [1] }, cb },
          });
          return inner.ok ? inner.value : inner.error.message;
        },
      },
    );
    expect(value(r)).toEqual([['inner', 'outer:3', 1, 'inner'], 'outer', 3]);
    expectHealthy();
  });

  // While an async live run waits, a sync live run calls the waiting run's callback.
  it('a waiting run called back from another live run still reads only its own objects', async () => {
    let kept: (() => unknown) | undefined;
    let go: (v?: unknown) => void = () => {};
    const first = live('keep(() => h.name + h.items.length); await wait(); return [h.name, h.items.length]', {
      h: { name: 'waiting', items: [1, 2, 3] },
      keep: (f: () => unknown) => (kept = f),
      wait: () => new Promise((resolve) => (go = resolve)),
    });
    await tick();
    const second = liveSync('return [h.name, poke(), h.items.length]', {
      h: { name: 'second', items: [1] },
      poke: () => kept!(),
    });
    go();
    expect(value(second)).toEqual(['second', 'waiting3', 1]);
    expect(value(await first)).toEqual(['waiting', 3]);
    expectHealthy();
  });
});

describe('host errors crossing a settled promise', () => {
  // hostError looks the name up in a table that inherits Object.prototype: a host rejection
  // named 'toString' or 'constructor' must still arrive as a guest Error (pre-existing).
  it('a rejection whose name is an Object.prototype key still becomes a guest error', async () => {
    const out = [];
    for (const name of ['constructor', 'toString', 'hasOwnProperty']) {
      const r = await live(
        'try { await f(); return "resolved" } catch (e) { return [e instanceof Error, e.name, e.message] }',
        {
          f: async () => {
            const e = new Error('boom');
            e.name = name;
            throw e;
          },
        },
      );
      out.push(r.ok ? r.value : r.error.message);
    }
    expect(out).toEqual([
      [true, 'constructor', 'boom'],
      [true, 'toString', 'boom'],
      [true, 'hasOwnProperty', 'boom'],
    ]);
    expectHealthy();
  });
});
