// Validation of a model's tool arguments is bounded whatever the arguments hold: the work is
// linear in their size, the message lists a few distinct problems and counts the rest, names and
// values are quoted short, and the validators keep no error list the size of the input. Before,
// 20,000 bad array items took 8 s and answered 1 MB (each message was checked against every
// earlier one), and 40,000 blocked the host past 25 s.
import { describe, expect, it } from 'vitest';
import { createToolSet, type ToolResult } from '../../lib/tools/index.js';

const MAX_ANSWER_BYTES = 4096;
/** Generous for a 2-core machine shared with builds; the quadratic version took seconds at 20,000 items. */
const MAX_MS = 3000;

let handled = 0;
const set = createToolSet([
  {
    name: 'take',
    description: 'Takes numbers, a mode and free-form data.',
    inputSchema: {
      type: 'object',
      properties: {
        items: { type: 'array', items: { type: 'number' } },
        mode: { enum: ['fast', 'slow'] },
        data: { type: 'object' },
        tags: { type: 'object', additionalProperties: { type: 'array', items: { type: 'integer' } } },
        count: { type: 'integer', minimum: 0 },
      },
      required: ['items'],
      additionalProperties: false,
    },
    handler: ({ items }) => {
      handled += 1;
      return `took ${(items as number[]).length}`;
    },
  },
]);

const gc = (globalThis as { gc?: () => void }).gc;

/** Dispatches `args`, asserting the time and answer bounds and INVALID_INPUT, then that the next call works. */
async function refused(args: unknown): Promise<ToolResult> {
  const before = handled;
  const started = performance.now();
  const r = await set.dispatch('take', args);
  const ms = performance.now() - started;
  expect(r.ok).toBe(false);
  expect(r.code).toBe('INVALID_INPUT');
  expect(Buffer.byteLength(r.content)).toBeLessThanOrEqual(MAX_ANSWER_BYTES);
  expect(ms).toBeLessThan(MAX_MS);
  expect(handled).toBe(before);
  expect(await set.dispatch('take', { items: [1, 2] })).toEqual({ ok: true, content: 'took 2' });
  expect(handled).toBe(before + 1);
  return r;
}

const badItems = (n: number) => ({ items: Array.from({ length: n }, (_, i) => `x${i}`) });

describe('many bad array items', () => {
  for (const n of [20_000, 40_000, 200_000]) {
    it(`${n} bad items as JSON text: the first problem, quickly, in a short answer`, async () => {
      const r = await refused(JSON.stringify(badItems(n)));
      expect(r.content).toContain('take: items[0] must be a number, got a string');
      expect(r.content).toContain('only the first problem is reported');
      expect(r.content).not.toContain('items[1]');
    });
  }

  it('200,000 bad items as an object', async () => {
    const r = await refused(badItems(200_000));
    expect(r.content).toContain('items[0] must be a number');
  });

  it('small arguments still get every problem, the first ten written out and the rest counted', async () => {
    const r = await refused(badItems(1500));
    for (let i = 0; i < 10; i++) expect(r.content).toContain(`items[${i}] must be a number, got a string`);
    expect(r.content).not.toContain('items[10]');
    expect(r.content).toContain('and 1490 more problems');
  });

  it('a few problems read as before, each once', async () => {
    const r = await refused({ items: [], count: -1, mode: 'x', extra: 1, tags: { a: ['x', 'y'] } });
    expect(r.content).toBe(
      "ERROR INVALID_INPUT: take: unknown argument 'extra'; expected: items, mode, data, tags, count; " +
        'mode must be one of "fast", "slow", got "x"; tags.a[0] must be an integer, got a string; ' +
        'tags.a[1] must be an integer, got a string; count must be at least 0, got -1\n' +
        'Hint: Check the arguments against the tool definition.',
    );
  });

  it('the validators keep no error list the size of the input', async () => {
    if (!gc) return;
    const args = JSON.stringify(badItems(200_000));
    await set.dispatch('take', { items: [] });
    gc();
    const before = process.memoryUsage().heapUsed;
    await set.dispatch('take', args);
    gc();
    // 200,000 Ajv error objects held until the next call would be tens of megabytes.
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(8 << 20);
  });
});

describe('deep and wide arguments', () => {
  it('100,000 levels of nested arrays in an item', async () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const r = await refused(`{"items": [${deep}]}`);
    expect(r.content).toContain('items[0] must be a number, got an array');
  });

  it('deeply nested free-form data next to a bad field', async () => {
    const deep = `${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}`;
    const r = await refused(`{"items": [], "data": ${deep}, "count": "many"}`);
    expect(r.content).toContain('count must be an integer, got a string');
  });

  it('200,000 distinct unknown keys', async () => {
    const args: Record<string, unknown> = { items: [] };
    for (let i = 0; i < 200_000; i++) args[`unknown_${i}`] = i;
    const r = await refused(args);
    expect(r.content).toContain("unknown argument 'unknown_0'");
    expect(r.content).not.toContain('unknown_1');
  });

  it('1,500 distinct unknown keys (every problem collected, ten written out)', async () => {
    const args: Record<string, unknown> = { items: [] };
    for (let i = 0; i < 1500; i++) args[`u${i}`] = i;
    const r = await refused(args);
    expect(r.content).toContain("unknown argument 'u9'");
    expect(r.content).toContain('and 1490 more problems');
  });

  it('many bad items under a 1 MB member name', async () => {
    const key = 'k'.repeat(1 << 20);
    const r = await refused({ items: [], tags: { [key]: Array.from({ length: 1000 }, () => 'x') } });
    expect(r.content).toContain(`tags.${'k'.repeat(75)}… must be an integer, got a string`);
    expect(r.content).toContain('must be an integer, got a string');
  });
});

describe('long names and values are quoted short', () => {
  it('a 4 MB unknown key', async () => {
    const r = await refused(JSON.stringify({ items: [], ['k'.repeat(4 << 20)]: 1 }));
    expect(r.content).toContain(`unknown argument '${'k'.repeat(80)}… (4194304 characters)'`);
  });

  it('a 4 MB string where an array belongs', async () => {
    const r = await refused({ items: 'x'.repeat(4 << 20) });
    expect(r.content).toContain('items must be an array, got a string');
  });

  it('a 4 MB string that is not one of an enum', async () => {
    const r = await refused({ items: [], mode: 'z'.repeat(4 << 20) });
    expect(r.content).toContain(`mode must be one of "fast", "slow", got "${'z'.repeat(80)}… (4194304 characters)"`);
  });

  it('a large array where a number belongs', async () => {
    const r = await refused({ items: [], count: Array.from({ length: 100_000 }, (_, i) => i) });
    expect(r.content).toContain('count must be an integer, got an array');
  });

  it('thousands of long member names with bad values', async () => {
    const tags: Record<string, unknown> = {};
    for (let i = 0; i < 1000; i++) tags[`${i}_${'n'.repeat(1000)}`] = ['x'];
    const r = await refused({ items: [], tags });
    expect(r.content).toContain('must be an integer, got a string');
  });
});
