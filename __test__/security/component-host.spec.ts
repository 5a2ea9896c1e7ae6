// What a component script hands the host, and what the host hands it, crosses as copied data
// with bounds: write-only logs are replayed with caps, utility results and arguments are copies,
// completions are JSON data, and a script that closes the function it is wrapped in is refused
// before any of it runs.
import { proxy, subscribe } from 'valtio/vanilla';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Permission, StatefulComponent, StateType } from '../../lib/index.js';
import { settle, Store } from '../component/fixtures.js';
import { expectHealthy } from '../helpers.js';

/** Runs `work`, and how long it took and how much the host's resident memory grew. */
async function measured<T>(work: () => Promise<T>) {
  const rss = process.memoryUsage().rss;
  const started = performance.now();
  const value = await work();
  return { value, ms: performance.now() - started, grewMiB: (process.memoryUsage().rss - rss) / 2 ** 20 };
}

/** A write-only list and a write-only record, each watched by a valtio subscriber. */
class Outbox extends StatefulComponent {
  readonly list = proxy([1, 2, 3]);
  readonly record = proxy<Record<string, unknown>>({ sent: 0 });
  notified = 0;
  constructor() {
    super();
    subscribe(this.list, () => this.notified++);
    subscribe(this.record, () => this.notified++);
  }
  publicStates = {
    list_state: {
      type: StateType.public,
      permission: Permission.w,
      schema: z.array(z.number().optional()),
      state: this.list,
    },
    record_state: {
      type: StateType.public,
      permission: Permission.w,
      schema: z.record(z.string(), z.unknown()),
      state: this.record,
    },
  };
}

/** Expects a refused write log: the right code, nothing changed, nobody notified, the next script works. */
async function expectWriteRefused(script: string, message: RegExp) {
  const c = new Outbox();
  const { value: r, ms, grewMiB } = await measured(() => c.executeScript(script));
  expect(r.success).toBe(false);
  expect(r.error).toMatchObject({ code: 'WRITE_REFUSED', name: 'WriteRefused' });
  expect(r.error?.message).toMatch(message);
  expect(ms).toBeLessThan(5000);
  expect(grewMiB).toBeLessThan(200);
  await settle();
  expect([...c.list]).toEqual([1, 2, 3]);
  expect({ ...c.record }).toEqual({ sent: 0 });
  expect(c.notified).toBe(0);
  const next = await c.executeScript('record_state.sent = 1;');
  expect(next.success).toBe(true);
  expect(c.record.sent).toBe(1);
  expectHealthy();
}

describe('write-only logs are replayed with bounds and never make executeScript reject', () => {
  it('list_state.length = 0 empties the list', async () => {
    const c = new Outbox();
    const r = await c.executeScript('list_state.length = 0;');
    expect(r.success).toBe(true);
    expect([...c.list]).toEqual([]);
  });

  it('shrinking and growing through length, then writing indexes', async () => {
    const c = new Outbox();
    const r = await c.executeScript(
      'list_state.length = 1; list_state[1] = 5; list_state.length = 3; list_state[2] = 7;',
    );
    expect(r.success).toBe(true);
    expect([...c.list]).toEqual([1, 5, 7]);
  });

  it('an index near 2^32 is refused at once instead of growing the list by four billion', async () => {
    await expectWriteRefused('list_state[4294967294] = 1;', /more than 100000 elements to list_state/);
  });

  it('an index past the growth cap is refused', async () => {
    await expectWriteRefused('list_state[20000000] = 1;', /more than 100000 elements/);
  });

  it('growth charged across writes: length raised and lowered again and again', async () => {
    await expectWriteRefused(
      'for (let i = 0; i < 1000; i++) { list_state.length = 1000; list_state.length = 0; }',
      /more than 100000 elements/,
    );
  });

  it('more whole-state assignments than a log keeps', async () => {
    await expectWriteRefused('for (let i = 0; i < 100001; i++) record_state = { sent: i };', /at most 100000 writes/);
  });

  for (const [what, script] of [
    ['key writes', 'for (let i = 0; i < 262144; i++) list_state[i] = i;'],
    ['deletes', 'for (let i = 0; i < 100001; i++) delete record_state.sent;'],
    ['defineProperty', 'for (let i = 0; i < 100001; i++) Object.defineProperty(record_state, "sent", { value: i });'],
  ]) {
    it(`more ${what} than a log keeps stop the script at the write past the cap, naming the state`, async () => {
      const c = new Outbox();
      const { value: r, ms } = await measured(() => c.executeScript(script));
      expect(r.success).toBe(false);
      expect(r.error).toMatchObject({ code: 'EVAL_ERROR', name: 'RangeError', line: 1 });
      expect(r.error?.message).toMatch(/^(list|record)_state: more than 100000 writes in one script/);
      expect(ms).toBeLessThan(5000);
      await settle();
      expect([...c.list]).toEqual([1, 2, 3]);
      expect({ ...c.record }).toEqual({ sent: 0 });
      expect(c.notified).toBe(0);
      expect((await c.executeScript('record_state.sent = 1;')).success).toBe(true);
    });
  }

  for (const [name, script, message] of [
    ['a negative length', 'list_state.length = -1;', /length must be a whole number/],
    ['a fractional length', 'list_state.length = 1.5;', /length must be a whole number/],
    ['a string length', 'list_state.length = "2";', /length must be a whole number/],
    ['deleting length', 'delete list_state.length;', /cannot delete list_state.length/],
    ['a named key on a list', 'list_state.extra = 1;', /takes only indexes and length/],
    [
      'a key written after the state was replaced by a number',
      'record_state = 5; record_state.sent = 1;',
      /is a number/,
    ],
  ] as const) {
    it(`is refused with WRITE_REFUSED: ${name}`, async () => {
      await expectWriteRefused(script, message);
    });
  }
});

/** A component whose utilities hand out parts of a read-only state, every way a value can travel. */
class Leaky extends StatefulComponent {
  readonly config = proxy({ limit: 10, items: [{ id: 1, label: 'one' }] });
  notified = 0;
  kept: unknown[] = [];
  constructor() {
    super();
    subscribe(this.config, () => this.notified++);
  }
  publicStates = {
    config: {
      type: StateType.public,
      permission: Permission.r,
      schema: z.object({ limit: z.number(), items: z.array(z.object({ id: z.number(), label: z.string() })) }),
      state: this.config,
    },
  };
  protected override getScriptUtilities() {
    return {
      items: () => this.config.items,
      whole: () => this.config,
      nested: () => ({ list: [this.config.items], map: new Map([['config', this.config]]) }),
      later: async () => this.config,
      getter: () => () => this.config,
      keep: (value: unknown) => {
        this.kept.push(value);
        return 'kept';
      },
      thrower: () => {
        throw this.config;
      },
    };
  }
}

describe('utilities hand the script copies, never live state', () => {
  const attempts: Record<string, string> = {
    'a returned array': 'items()[0].label = "hacked"; items().push({ id: 9, label: "x" });',
    'the returned state itself': 'whole().limit = 99; whole().items.length = 0;',
    'a state inside an array and a Map':
      'const n = nested(); n.list[0][0].label = "hacked"; n.map.get("config").limit = 99;',
    'what a promise resolves to': 'const c = await later(); c.limit = 99; c.items[0].id = 7;',
    'what a thrown value carries': 'try { thrower() } catch (e) { e.limit = 99; if (e.items) e.items.length = 0 }',
  };
  for (const [name, script] of Object.entries(attempts)) {
    it(`edits stay in the realm: ${name}`, async () => {
      const c = new Leaky();
      const r = await c.executeScript(`${script}\nthrow new Error("then fail");`);
      expect(r.success).toBe(false);
      expect(r.error?.message).toMatch(/then fail/);
      await settle();
      expect(c.config).toEqual({ limit: 10, items: [{ id: 1, label: 'one' }] });
      expect(c.notified).toBe(0);
      expect(
        (await c.executeScript('const n = items().length; if (n !== 1) throw new Error(String(n));')).success,
      ).toBe(true);
      expectHealthy();
    });
  }

  it('a utility that returns a host function is refused instead of handing it out', async () => {
    const c = new Leaky();
    const r = await c.executeScript('getter()().limit = 99;');
    expect(r.success).toBe(false);
    expect(r.error).toMatchObject({ code: 'EVAL_ERROR', name: 'TypeError' });
    expect(r.error?.message).toMatch(/cannot be copied/);
    expect(c.config.limit).toBe(10);
  });

  it('arguments are copies, and a guest function cannot be handed to a utility', async () => {
    const c = new Leaky();
    const r = await c.executeScript('keep({ a: [1] });\nkeep(() => 1);');
    expect(r.success).toBe(false);
    expect(r.error).toMatchObject({ name: 'TypeError', line: 2 });
    expect(r.error?.message).toMatch(/keep: arguments must be data/);
    expect(c.kept).toEqual([{ a: [1] }]);
  });

  it('a result over the marshaller budget fails the call, not the host', async () => {
    class Huge extends StatefulComponent {
      protected override getScriptUtilities() {
        const big = Array.from({ length: 2_000_000 }, (_, i) => i);
        return { big: () => big };
      }
    }
    const { value: r, ms } = await measured(() => new Huge().executeScript('big();'));
    expect(r.success).toBe(false);
    expect(r.error?.name).toBe('TypeError');
    expect(ms).toBeLessThan(5000);
    expectHealthy();
  });
});

describe('attempt_completion keeps JSON data', () => {
  it('a completion with data is kept as plain data the host can serialise', async () => {
    const c = new Store();
    const r = await c.executeScript(
      'const result = { summary: "ok", get computed() { return 2 }, when: new Date(0), list: [1, undefined] };\nawait attempt_completion(result);\nresult.summary = "changed after";',
    );
    expect(r.success).toBe(true);
    const expected = { summary: 'ok', computed: 2, when: '1970-01-01T00:00:00.000Z', list: [1, null] };
    expect(r.completion).toEqual({ result: expected });
    expect(c.getCompletion()).toEqual({ result: expected });
    expect(JSON.parse(JSON.stringify(c.getCompletion()))).toEqual({ result: expected });
  });

  for (const [name, value, message] of [
    ['a function', '{ summary: "ok", done() {} }', /"done" is a function/],
    ['a top-level function', '() => 1', /the result is a function/],
    ['a function in an array', '["ok", () => 1]', /"1" is a function/],
    ['a symbol', '{ s: Symbol("x") }', /"s" is a symbol/],
    ['a bigint', '{ n: 1n }', /attempt_completion takes JSON data/],
    ['a cycle', '(() => { const o = {}; o.o = o; return o })()', /attempt_completion takes JSON data/],
  ] as const) {
    it(`refuses ${name} at the call, with a located TypeError, and records nothing`, async () => {
      const c = new Store();
      const r = await c.executeScript(`profile.name = "Bo";\nawait attempt_completion(${value});`);
      expect(r.success).toBe(false);
      expect(r.error).toMatchObject({ code: 'EVAL_ERROR', name: 'TypeError', line: 2 });
      expect(r.error?.message).toMatch(message);
      expect(c.getCompletion()).toBeUndefined();
      expect(c.profile.name).toBe('Ada');
      expect(() => JSON.stringify(r)).not.toThrow();
    });
  }

  it('a huge completion fails the script within its limits', async () => {
    const c = new Store();
    const { value: r, grewMiB } = await measured(() =>
      c.executeScript('await attempt_completion("x".repeat(80 * 1024 * 1024));'),
    );
    expect(r.success).toBe(false);
    expect(c.getCompletion()).toBeUndefined();
    expect(grewMiB).toBeLessThan(300);
    expectHealthy();
  });

  it('the last of several calls counts, and the warning says so', async () => {
    const c = new Store();
    const r = await c.executeScript('await attempt_completion("a");\nawait attempt_completion({ b: [2] });');
    expect(r.success).toBe(true);
    expect(c.getCompletion()).toEqual({ result: { b: [2] } });
    expect(r.warnings).toContain('attempt_completion was called 2 times; the last call counts');
  });
});

/** Counts calls of its utility; a refused script must leave it at zero. */
class Counted extends StatefulComponent {
  readonly profile = proxy({ name: 'Ada' });
  calls = 0;
  publicStates = {
    profile: {
      type: StateType.public,
      permission: Permission.rw,
      schema: z.object({ name: z.string() }),
      state: this.profile,
    },
  };
  protected override getScriptUtilities() {
    return {
      count: () => {
        this.calls++;
        return this.calls;
      },
    };
  }
}

describe('a script that closes the function it is wrapped in is refused before any of it runs', () => {
  const breakOuts: Record<string, string> = {
    'an extra argument of the wrapper call': '}, count(), async () => {',
    'a completion in the argument list': '}, attempt_completion("done"), count(), async () => {',
    'a tagged template in the argument list': '}, count`x`, async () => {',
    'a default parameter of another arrow': '}, ((x = count()) => x)(), async () => {',
    'a line comment hiding the wrapper': '}, count()); (async () => { //',
    'out of the engine function to the top level': '}); }); count(); (async function () { (async () => {',
    'out of a block to the top level': '}} count(); {',
    'a second declaration of the script function': '} async function __quickrealm_component_script() { count();',
    'a hoisted function named like the utility': '}} function count() { return 0 } count(); {',
    'an unterminated block comment': '}, count(), async () => { /*',
    'a template literal left open': '}, count(), `',
  };
  for (const [name, script] of Object.entries(breakOuts)) {
    it(name, async () => {
      const c = new Counted();
      const r = await c.executeScript(script);
      expect(r.success).toBe(false);
      expect(r.error?.name).toBe('SyntaxError');
      expect(c.calls).toBe(0);
      expect(r.logs).toEqual([]);
      expect(r.completion).toBeUndefined();
      expect(c.getCompletion()).toBeUndefined();
      expect(c.profile.name).toBe('Ada');
      const next = await c.executeScript('profile.name = String(count());');
      expect(next.success).toBe(true);
      expect(c.profile.name).toBe('1');
      expectHealthy();
    });
  }

  it('a script with braces in strings, templates, comments and regular expressions still runs', async () => {
    const c = new Counted();
    const r = await c.executeScript(
      'const s = "}" + `}${"{"}` + /\\}/.source; // }\n/* } */ profile.name = s + count();',
    );
    expect(r.error).toBeUndefined();
    expect(c.profile.name).toBe('}}{\\}1');
  });
});
