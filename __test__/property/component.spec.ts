// Component scripts with generated hostile write patterns (huge and negative array lengths and
// indexes, wide and deep writes, large strings, read-only and write-only violations, utility
// results written back, syntax errors): executeScript never rejects for a script's doing, the
// tool answer is capped, and each script stays within the host bounds of DESIGN §4.4.
import fc from 'fast-check';
import { proxy } from 'valtio/vanilla';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Permission, StatefulComponent, StateType } from '../../lib/index.js';
import { Store } from '../component/fixtures.js';
import { expectBounded, expectToolResult, hostileText, MiB, measure, PARAMS } from './bounds.js';

class Lists extends StatefulComponent {
  readonly list = proxy<unknown[]>([1, 2, 3]);
  readonly table = proxy<Record<string, unknown>>({ a: 1 });
  publicStates = {
    list_state: { type: StateType.public, permission: Permission.w, schema: z.array(z.unknown()), state: this.list },
    table_state: {
      type: StateType.public,
      permission: Permission.rw,
      schema: z.record(z.string(), z.unknown()),
      state: this.table,
    },
    frozen_state: { type: StateType.public, permission: Permission.r, schema: z.array(z.number()), state: [1, 2, 3] },
  };
  protected override getScriptUtilities(): Record<string, (...args: never[]) => unknown> {
    return { peek: () => this.table, echo: (v: unknown) => v };
  }
}

const index = fc.constantFrom(
  0,
  1,
  2 ** 16,
  2 ** 31 - 1,
  2 ** 32 - 2,
  2 ** 32 - 1,
  2 ** 32,
  -1,
  1e9,
  Number.MAX_SAFE_INTEGER,
);
const count = fc.integer({ min: 0, max: 200_000 });
const text = hostileText(4 * MiB).map((t) => JSON.stringify(t));

/** Scripts written the way a careless or hostile model writes them. */
const script: fc.Arbitrary<string> = fc.oneof(
  index.map((n) => `list_state.length = ${n};`),
  index.map((n) => `list_state[${n}] = 1;`),
  fc.tuple(index, index).map(([a, b]) => `list_state[${a}] = 1; list_state.length = ${b};`),
  count.map((n) => `for (let i = 0; i < ${n}; i++) table_state['k' + i] = i;`),
  count.map((n) => `for (let i = 0; i < ${n}; i++) list_state[i] = { i, s: 'x'.repeat(i % 100) };`),
  count.map((n) => `let v = 1; for (let i = 0; i < ${n}; i++) v = [v]; table_state.deep = v;`),
  text.map((t) => `table_state.big = ${t};`),
  text.map((t) => `profile.name = ${t}; profile.tags.push(${t});`),
  fc.constant('config.limit = 5;'),
  fc.constant('frozen_state.push(4);'),
  fc.constant('const t = peek(); t.injected = 1; frozen_state.length = 0;'),
  fc.constant("table_state.f = () => 1; table_state.g = { get x() { throw new Error('no'); } };"),
  fc.constant('table_state.p = new Proxy({}, { ownKeys() { throw new Error("trap"); } });'),
  fc.constant("Object.defineProperty(table_state, 'x', { get() { return 1; } });"),
  fc.constant('audit.secret = "s"; audit.note = audit.note;'),
  fc.constant('while (true) {}'),
  fc.string({ maxLength: 200 }),
  text,
);

/** Bytes of input a script can make the host handle: its text, or what its loops can write. */
function budget(s: string): number {
  const counts = [...s.matchAll(/\d+/g)].map((m) => Number(m[0])).filter((n) => n <= 200_000);
  return s.length + 64 * Math.max(0, ...counts);
}

describe('component scripts stay within the host bounds', () => {
  for (const [name, make] of [
    ['Store', () => new Store()],
    ['Lists', () => new Lists()],
  ] as const) {
    it(
      `${name}.executeScript never rejects and is bounded`,
      () =>
        fc.assert(
          fc.asyncProperty(script, async (s) => {
            const component = make();
            const cost = await measure(() => component.executeScript(s));
            const what = `executeScript(${s.slice(0, 200)})`;
            expect(typeof cost.value.success, what).toBe('boolean');
            expectBounded(what, cost, budget(s));
            const tool = await measure(() => component.getCommonTools().dispatch('execute_script', { script: s }));
            expectToolResult(`execute_script(${s.slice(0, 200)})`, tool.value);
            expectBounded(what, tool, budget(s));
          }),
          PARAMS,
        ),
      180_000,
    );
  }
});
