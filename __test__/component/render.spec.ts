// What the model reads: render() and renderWithScriptSection().
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Permission, StatefulComponent, StateType } from '../../lib/index.js';
import { Cart, SearchComponent, Store } from './fixtures.js';

describe('render()', () => {
  it('names each public state with its permission, side effect and current value', async () => {
    const text = await new SearchComponent().render();
    expect(text).toBe(
      '# SearchComponent\n- search_box_state (rw, read-write): Changes trigger a search and refresh the results\n  = {"search_pattern":""}',
    );
  });

  it('never shows a write-only value or a private state', async () => {
    const s = new Store();
    const text = await s.render();
    expect(text).toContain('- audit (w, write-only): Each write is sent to the audit log');
    expect(text).toContain('"limit":10');
    expect(text).not.toContain('hunter2');
    const search = await new SearchComponent().renderWithScriptSection();
    expect(search).not.toContain('search_index');
    expect(search).not.toContain('tok-123');
    expect(await s.renderWithScriptSection()).not.toContain('hunter2');
  });

  it('shows values as they are now, after a script changed them', async () => {
    const c = new SearchComponent();
    await c.executeScript('search_box_state.search_pattern = "boots";');
    expect(await c.render()).toContain('{"search_pattern":"boots"}');
  });
});

describe('renderWithScriptSection()', () => {
  it('declares each state with a TypeScript type derived from its zod schema, constraints as comments', async () => {
    const text = await new Store().renderWithScriptSection();
    expect(text).toContain(
      'declare const profile: {\n  name: string; // min 1 chars\n  tags: string[]; // max 5 items\n  address: {\n    city: string;\n    zip: string; // matches /^\\d{5}$/\n  };\n}; // rw',
    );
    expect(text).toContain('level?: "info" | "warn";');
    expect(text).toContain('limit: number; // integer; >= 1');
  });

  it('gives initialisation code with current values for r and rw states only', async () => {
    const text = await new Store().renderWithScriptSection();
    expect(text).toContain('profile = {"name":"Ada","tags":["math"],"address":{"city":"London","zip":"12345"}};');
    expect(text).toContain('config = {"limit":10,');
    expect(text).not.toMatch(/^audit = /m);
  });

  it('lists utilities with their parameters, usage examples and how to complete', async () => {
    const text = await new SearchComponent().renderWithScriptSection();
    expect(text).toContain('declare function normalizeSearch(text: any): any;');
    expect(text).toContain("search_box_state.search_pattern = '…';");
    expect(text).toContain('await attempt_completion(');
    expect(text).toContain('declare function attempt_completion(result: string): Promise<void>;');
    expect(text).toMatch(/When done, call `await attempt_completion\(summary\)`/);
  });

  it('uses a utility signature and description when given', async () => {
    const text = await new Cart().renderWithScriptSection();
    expect(text).toContain('declare function priceOf(sku: string): Promise<number>; // unit price in euros');
  });

  it('falls back to a type read off the value for valibot (no JSON Schema export installed) and says so', async () => {
    const c = new Cart();
    c.cart.items.push({ sku: 'tea', qty: 1 });
    const text = await c.renderWithScriptSection();
    expect(text).toContain('declare const cart_state: {\n  items: {\n    sku: string;\n    qty: number;\n  }[];\n};');
    expect(text).toContain('type read off the current value (the schema has no JSON Schema export)');
  });

  it('is compact', async () => {
    expect((await new SearchComponent().renderWithScriptSection()).length).toBeLessThan(1200);
  });

  it('shows extra examples a component provides', async () => {
    class WithExamples extends SearchComponent {
      protected override getScriptExamples() {
        return ['search_box_state.search_pattern = normalizeSearch("Red Shoes");'];
      }
    }
    expect(await new WithExamples().renderWithScriptSection()).toContain('normalizeSearch("Red Shoes")');
  });

  it('handles unions, records, optional and nullable fields, and recursive schemas', async () => {
    type Node = { name: string; children: Node[] };
    const node: z.ZodType<Node> = z.lazy(() => z.object({ name: z.string(), children: z.array(node) }));
    class Shapes extends StatefulComponent {
      publicStates = {
        shapes: {
          type: StateType.public,
          permission: Permission.rw,
          schema: z.object({
            kind: z.union([z.literal('a'), z.literal('b')]),
            counts: z.record(z.string(), z.number()),
            maybe: z.string().nullable().optional(),
            tree: node,
          }),
          state: { kind: 'a', counts: {}, tree: { name: 'root', children: [] } },
        },
      };
    }
    const text = await new Shapes().renderWithScriptSection();
    expect(text).toContain('kind: "a" | "b";');
    expect(text).toContain('counts: Record<string, number>;');
    expect(text).toContain('maybe?: string | null;');
    expect(text).toContain('tree: ShapesSchema0;');
    expect(text).toContain('type ShapesSchema0 = {\n  name: string;\n  children: ShapesSchema0[];\n};');
  });
});
