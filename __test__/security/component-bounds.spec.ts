// What a script leaves in a state is bounded before the host walks it: a state past its caps
// (values, bytes of text, nesting; an object reached through several references counts at each
// place) fails with STATE_TOO_LARGE and changes nothing, the diff is given more coarsely instead
// of growing past its cap, and validation issues and their messages are capped while collected.
import { proxy, subscribe } from 'valtio/vanilla';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  Permission,
  type PublicState,
  type SecurityConfig,
  type StandardSchemaV1,
  StatefulComponent,
  StateType,
} from '../../lib/index.js';
import { settle } from '../component/fixtures.js';
import { expectHealthy } from '../helpers.js';

/** Runs `work`, and how long it took and how much the host's resident memory grew. */
async function measured<T>(work: () => Promise<T>) {
  const rss = process.memoryUsage().rss;
  const started = performance.now();
  const value = await work();
  return { value, ms: performance.now() - started, grewMiB: (process.memoryUsage().rss - rss) / 2 ** 20 };
}

type Board = { tags: string[]; data: unknown };

const zodSchemas = {
  board: z.object({ tags: z.array(z.string()), data: z.unknown() }),
  index: z.record(z.string(), z.number()),
};
const valibotSchemas = {
  board: v.object({ tags: v.array(v.string()), data: v.unknown() }),
  index: v.record(v.string(), v.number()),
};

/** An rw board, an rw index and a write-only outbox, each watched by a valtio subscriber. */
class Boards extends StatefulComponent {
  readonly board: Board;
  readonly index = proxy<Record<string, number>>({ first: 1 });
  readonly outbox = proxy<Record<string, unknown>>({ sent: 0 });
  notified = 0;
  publicStates: Record<string, PublicState>;
  securityConfig: SecurityConfig;
  constructor(
    options: {
      schemas?: { board: StandardSchemaV1; index: StandardSchemaV1 };
      security?: SecurityConfig;
      tags?: string[];
    } = {},
  ) {
    super();
    const schemas = options.schemas ?? zodSchemas;
    this.board = proxy<Board>({ tags: options.tags ?? ['a'], data: null });
    this.securityConfig = options.security ?? {};
    for (const state of [this.board, this.index, this.outbox]) subscribe(state, () => this.notified++);
    this.publicStates = {
      board_state: { type: StateType.public, permission: Permission.rw, schema: schemas.board, state: this.board },
      index_state: { type: StateType.public, permission: Permission.rw, schema: schemas.index, state: this.index },
      outbox_state: {
        type: StateType.public,
        permission: Permission.w,
        schema: z.record(z.string(), z.unknown()),
        state: this.outbox,
      },
    };
  }
}

/** A snapshot of every state, to check that a refused script changed nothing. */
function statesOf(c: Boards) {
  return JSON.stringify({ board: c.board, index: c.index, outbox: c.outbox });
}

/** A script's answer as the host would send it on, in characters. */
function answerSize(r: unknown) {
  return JSON.stringify(r).length;
}

/** Expects a state refused for its size: the code, nothing changed, nobody notified, bounded cost, the next script works. */
async function expectTooLarge(c: Boards, script: string, message: RegExp, bounds = { ms: 8000, mib: 300 }) {
  const before = statesOf(c);
  const { value: r, ms, grewMiB } = await measured(() => c.executeScript(script));
  expect(r.success).toBe(false);
  expect(r.error).toMatchObject({ code: 'STATE_TOO_LARGE', name: 'StateTooLarge' });
  expect(r.error?.message).toMatch(message);
  expect(r.validationErrors).toBeUndefined();
  expect(r.changes).toEqual([]);
  expect(answerSize(r)).toBeLessThan(4096);
  expect(ms).toBeLessThan(bounds.ms);
  expect(grewMiB).toBeLessThan(bounds.mib);
  await settle();
  expect(statesOf(c)).toBe(before);
  expect(c.notified).toBe(0);
  const next = await c.executeScript('board_state.tags.push("next"); outbox_state.sent = 1;');
  expect(next.success).toBe(true);
  expect(c.board.tags.at(-1)).toBe('next');
  expect(c.outbox.sent).toBe(1);
  expectHealthy();
}

/** Builds a value that reuses one array at every level: 2^levels leaves, levels+1 arrays. */
const sharedTree = (levels: number) =>
  `(() => { let x = [1]; for (let i = 0; i < ${levels}; i++) x = [x, x]; return x; })()`;

describe('a state past its size caps is refused before the host walks it', () => {
  for (const [kind, schemas] of [
    ['zod', zodSchemas],
    ['valibot', valibotSchemas],
  ] as const) {
    it(`900,000 wrong items against an array-of-strings schema (${kind})`, async () => {
      await expectTooLarge(
        new Boards({ schemas }),
        'board_state.tags = new Array(900000).fill(1);',
        /board_state is larger than a state may be: more than 100000 values at board_state\.tags\[/,
      );
    });

    it(`900,000 valid items (${kind})`, async () => {
      await expectTooLarge(
        new Boards({ schemas }),
        'board_state.tags = new Array(900000).fill("x");',
        /more than 100000 values/,
      );
    });

    it(`a value that reuses one array 2^40 times (${kind})`, async () => {
      await expectTooLarge(
        new Boards({ schemas }),
        `board_state.data = ${sharedTree(40)};`,
        /more than 100000 values at board_state\.data\[0\].*several references/,
      );
    });
  }

  it('an object with 300,000 keys', async () => {
    await expectTooLarge(
      new Boards(),
      'const o = {}; for (let i = 0; i < 300000; i++) o["k" + i] = i; board_state.data = o;',
      /more than 100000 values at board_state\.data\.k/,
      { ms: 15000, mib: 400 },
    );
  });

  it('a 10,000,000-character string', async () => {
    await expectTooLarge(
      new Boards(),
      'board_state.data = "x".repeat(10000000);',
      /more than 16777216 bytes of text and binary data at board_state\.data/,
    );
  });

  it('many keys of long names', async () => {
    await expectTooLarge(
      new Boards(),
      'const o = {}; const k = "k".repeat(100000); for (let i = 0; i < 100; i++) o[k + i] = i; board_state.data = o;',
      /more than 16777216 bytes of text and binary data at board_state\.data\.kkkk.*…/,
    );
  });

  it('a shared value checked by a schema that walks it (valibot walks every path: 2^20 leaves take 5 s)', async () => {
    type Json = number | Json[];
    const json: v.GenericSchema<Json> = v.lazy(() => v.union([v.number(), v.array(json)]));
    const schemas = { board: v.object({ tags: v.array(v.string()), data: v.nullable(json) }), index: zodSchemas.index };
    await expectTooLarge(new Boards({ schemas }), `board_state.data = ${sharedTree(20)};`, /several references/, {
      ms: 3000,
      mib: 300,
    });
  });

  it('a shared value checked by a recursive zod schema', async () => {
    type Json = number | Json[];
    const json: z.ZodType<Json> = z.lazy(() => z.union([z.number(), z.array(json)]));
    const schemas = { board: z.object({ tags: z.array(z.string()), data: json.nullable() }), index: zodSchemas.index };
    await expectTooLarge(new Boards({ schemas }), `board_state.data = ${sharedTree(40)};`, /several references/);
  });

  it('a cycle', async () => {
    await expectTooLarge(
      new Boards(),
      'const o = { name: "loop" }; o.self = o; board_state.data = o;',
      /nesting deeper than 256 levels at board_state\.data\.self\.self.*or a cycle/,
    );
  });

  it('a cycle through the state itself', async () => {
    await expectTooLarge(new Boards(), 'board_state.data = board_state;', /or a cycle/);
  });

  it('a Map of 200,000 entries', async () => {
    await expectTooLarge(
      new Boards(),
      'board_state.data = new Map(Array.from({ length: 200000 }, (_, i) => [i, i]));',
      /more than 100000 values at board_state\.data<entry/,
    );
  });

  it('a Set holding a shared value', async () => {
    await expectTooLarge(new Boards(), `board_state.data = new Set([${sharedTree(40)}]);`, /several references/);
  });

  it('a shared value nested near the depth cap', async () => {
    await expectTooLarge(new Boards(), `board_state.data = ${sharedTree(240)};`, /more than 100000 values/);
  });

  it('a write-only state given a shared value', async () => {
    await expectTooLarge(new Boards(), `outbox_state.payload = ${sharedTree(40)};`, /outbox_state is larger/);
  });

  it('a write-only state written key by key past the value cap', async () => {
    await expectTooLarge(
      new Boards(),
      'for (let i = 0; i < 60000; i++) outbox_state["k" + i] = [i];',
      /outbox_state is larger than a state may be: more than 100000 values/,
    );
  });

  it('a composed check: one state refused refuses the script, the other state stays too', async () => {
    await expectTooLarge(
      new Boards(),
      `index_state.second = 2; board_state.data = ${sharedTree(40)};`,
      /board_state is larger/,
    );
  });
});

describe('states within the caps', () => {
  it('nesting near the copy depth cap is accepted and applied', async () => {
    const c = new Boards();
    const r = await c.executeScript('let x = 1; for (let i = 0; i < 250; i++) x = [x]; board_state.data = x;');
    expect(r.error).toBeUndefined();
    expect(r.success).toBe(true);
    expect(r.changes).toHaveLength(1);
    let depth = 0;
    for (let x: unknown = c.board.data; Array.isArray(x); x = x[0]) depth++;
    expect(depth).toBe(250);
  });

  it('a shared value small enough when expanded is accepted', async () => {
    const c = new Boards();
    const r = await c.executeScript(`board_state.data = ${sharedTree(10)};`);
    expect(r.success).toBe(true);
    expect(JSON.stringify(c.board.data).length).toBeGreaterThan(2 ** 10);
  });

  it('securityConfig.maxStateValues and maxStateBytes lower the caps', async () => {
    await expectTooLarge(
      new Boards({ security: { maxStateValues: 10 } }),
      'board_state.tags = Array.from({ length: 12 }, (_, i) => "t" + i);',
      /more than 10 values/,
    );
    await expectTooLarge(
      new Boards({ security: { maxStateBytes: 1000 } }),
      'board_state.data = "x".repeat(600);',
      /more than 1000 bytes/,
    );
  });

  it('securityConfig.maxStateValues raises the cap', async () => {
    const c = new Boards({ security: { maxStateValues: 300_000 } });
    const r = await c.executeScript('board_state.tags = new Array(150000).fill("x");');
    expect(r.success).toBe(true);
    expect(c.board.tags).toHaveLength(150_000);
  });

  it.each([0, -1, Number.NaN, '10'])('a bad maxStateValues (%s) is the host’s mistake: INVALID_INPUT', async (bad) => {
    const c = new Boards({ security: { maxStateValues: bad as number } });
    await expect(c.executeScript('board_state.data = 1;')).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });

  it('a state the host made larger than the caps can be edited, not grown', async () => {
    const c = new Boards({ tags: Array.from({ length: 120_000 }, (_, i) => `t${i}`) });
    const edited = await c.executeScript('board_state.tags[0] = "first";');
    expect(edited.success).toBe(true);
    expect(c.board.tags[0]).toBe('first');
    const grown = await c.executeScript('for (let i = 0; i < 10; i++) board_state.tags.push("more");');
    expect(grown.error?.code).toBe('STATE_TOO_LARGE');
    expect(c.board.tags).toHaveLength(120_000);
  });
});

describe('changes are reported more coarsely instead of growing past their cap', () => {
  it('50,000 new items are one replace of the array, applied and undone again', async () => {
    const c = new Boards();
    const { value: r, ms } = await measured(() =>
      c.executeScript('board_state.tags = Array.from({ length: 50000 }, (_, i) => "t" + i);'),
    );
    expect(r.success).toBe(true);
    expect(ms).toBeLessThan(8000);
    expect(r.changes).toHaveLength(1);
    expect(r.changes[0]).toMatchObject({ state: 'board_state', path: ['tags'], op: 'replace' });
    expect(r.patch).toHaveLength(1);
    expect(r.patch[0]).toMatchObject({ op: 'replace', path: '/board_state/tags' });
    expect(c.board.tags).toHaveLength(50_000);
    expect(c.board.tags[49_999]).toBe('t49999');
    await settle();
    expect(c.notified).toBeGreaterThan(0);
    const shrunk = await c.executeScript('board_state.tags = ["b"];');
    expect(shrunk.success).toBe(true);
    expect(shrunk.changes).toHaveLength(1);
    expect(c.board.tags).toEqual(['b']);
  });

  it('a change to a few items stays exact', async () => {
    const c = new Boards({ tags: Array.from({ length: 5000 }, (_, i) => `t${i}`) });
    const r = await c.executeScript('board_state.tags[10] = "ten"; board_state.tags.push("last");');
    expect(r.success).toBe(true);
    expect(r.changes.map((change) => change.path)).toEqual([
      ['tags', 10],
      ['tags', 5000],
    ]);
  });

  it('5,000 new top-level keys are one replace of the whole state, and the live object is kept', async () => {
    const c = new Boards();
    const live = c.index;
    const r = await c.executeScript('for (let i = 0; i < 5000; i++) index_state["k" + i] = i;');
    expect(r.success).toBe(true);
    expect(r.changes).toEqual([
      expect.objectContaining({ state: 'index_state', path: [], op: 'replace', before: { first: 1 } }),
    ]);
    expect(r.patch).toEqual([expect.objectContaining({ op: 'replace', path: '/index_state' })]);
    expect(c.publicStates.index_state.state).toBe(live);
    expect(Object.keys(c.index)).toHaveLength(5001);
    expect(c.index.k4999).toBe(4999);
    const removed = await c.executeScript('for (let i = 0; i < 4000; i++) delete index_state["k" + i];');
    expect(removed.success).toBe(true);
    expect(removed.changes).toHaveLength(1);
    expect(Object.keys(c.index)).toHaveLength(1001);
    expect(c.index.k3999).toBeUndefined();
    expect(c.index.k4000).toBe(4000);
  });

  it('a whole-state replace the live object refuses changes nothing', async () => {
    const c = new Boards();
    Object.defineProperty(c.index, 'locked', { value: 1, enumerable: true, writable: false, configurable: false });
    const before = JSON.stringify(c.index);
    const r = await c.executeScript('for (let i = 0; i < 2000; i++) index_state["k" + i] = i; index_state.locked = 2;');
    expect(r.success).toBe(false);
    expect(r.validationErrors?.[0]?.message).toMatch(/read-only/);
    expect(JSON.stringify(c.index)).toBe(before);
  });

  it('the tool answer stays short', async () => {
    const c = new Boards();
    const answer = await c
      .getCommonTools()
      .dispatch('execute_script', { script: 'for (let i = 0; i < 5000; i++) index_state["k" + i] = i;' });
    expect(answer.ok).toBe(true);
    expect(answer.content.length).toBeLessThan(17 * 1024);
  });

  it('the tool answer lists changes only as far as it shows them', async () => {
    const c = new Boards({ tags: Array.from({ length: 900 }, () => 'x') });
    const answer = await c.getCommonTools().dispatch('execute_script', {
      script: 'for (let i = 0; i < 900; i++) board_state.tags[i] = "y".repeat(300) + i;',
    });
    expect(answer.ok).toBe(true);
    expect(answer.content.length).toBeLessThan(17 * 1024);
    expect(answer.content).toMatch(/\n… and \d+ more changes$/);
    expect(c.board.tags[899]).toMatch(/899$/);
  });
});

describe('validation issues are capped while collected', () => {
  for (const [kind, schemas] of [
    ['zod', zodSchemas],
    ['valibot', valibotSchemas],
  ] as const) {
    it(`50,000 wrong items give 100 issues and a count of the rest (${kind})`, async () => {
      const c = new Boards({ schemas });
      const { value: r, ms } = await measured(() => c.executeScript('board_state.tags = new Array(50000).fill(1);'));
      expect(r.success).toBe(false);
      expect(ms).toBeLessThan(8000);
      expect(r.validationErrors).toHaveLength(101);
      expect(r.validationErrors?.[0]?.path).toEqual(['tags', 0]);
      expect(r.validationErrors?.at(-1)).toEqual({
        state: 'board_state',
        path: [],
        message: '49900 more issues in board_state are not listed',
      });
      expect(answerSize(r)).toBeLessThan(64 * 1024);
      expect(c.board.tags).toEqual(['a']);
      await settle();
      expect(c.notified).toBe(0);
    });
  }

  it('a message that echoes the value is shortened', async () => {
    const echo: StandardSchemaV1 = {
      '~standard': {
        version: 1,
        vendor: 'test',
        validate: (value) => ({ issues: [{ message: `not accepted: ${JSON.stringify(value)}` }] }),
      },
    };
    const c = new Boards({ schemas: { board: echo, index: zodSchemas.index } });
    const r = await c.executeScript('board_state.data = "y".repeat(1000000);');
    expect(r.success).toBe(false);
    const message = r.validationErrors?.[0]?.message ?? '';
    expect(message.length).toBeLessThan(1100);
    expect(message).toMatch(/… \(\d+ more characters\)$/);
    expect(answerSize(r)).toBeLessThan(4096);
  });
});
