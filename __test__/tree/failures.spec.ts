// Edits that fail: the model reads the tree's own error verbatim after tree-agent's fixed
// sentence, and the tree is exactly as it was before the edit.
import type { ImplicitFieldSchema, TreeViewAlpha } from '@fluidframework/tree/alpha';
import { describe, expect, it } from 'vitest';
import { applyEdit, expectEditingError, snapshot, storeView, treeExecutor, unionView } from './harness.js';

const editor = treeExecutor();

/** The message the tree itself throws for `op` on a fresh view (no sandbox involved). */
function hostMessage(op: (view: ReturnType<typeof storeView>) => void): string {
  const view = storeView();
  try {
    op(view);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('the operation did not throw on the host');
}

async function failingEdit<T extends ImplicitFieldSchema>(code: string, view: TreeViewAlpha<T>) {
  const before = snapshot(view);
  const outcome = await applyEdit(view, editor, code);
  expect(outcome.type, outcome.message).toBe('editingError');
  expect(snapshot(view)).toBe(before);
  return outcome;
}

describe('errors from the tree reach the model verbatim', () => {
  it('index assignment on an array node', async () => {
    const expected = hostMessage((v) => {
      (v.root.lists[0]!.items as unknown as unknown[])[0] = { name: 'X', price: 1 };
    });
    expect(expected).toBe(
      'Cannot set indexed properties on array nodes. Use array node mutation APIs to alter the array.',
    );
    const outcome = await failingEdit(
      'const items = context.root.lists[0].items;\nitems[0] = context.create.Item({ name: "X", price: 1 });',
      storeView(),
    );
    expectEditingError(outcome, `${expected} (line 2, column `);
    expect(outcome.message).toMatch(
      /\(line 2, column \d+\)\n {2}1 \| const items = context\.root\.lists\[0\]\.items;\n> 2 \| items\[0\] = context\.create\.Item\(\{ name: "X", price: 1 \}\);\n {4}\| +\^$/,
    );
  });

  it('data that fits none of the allowed types', async () => {
    const expected = hostMessage((v) => v.root.lists[0]!.items.insertAtEnd({ name: 5 } as never));
    expect(expected).toMatch(/^The provided data is incompatible with all of the types allowed by the schema/);
    const outcome = await failingEdit('context.root.lists[0].items.insertAtEnd({ name: 5 });', storeView());
    expectEditingError(outcome, `${expected} (line 1, column 28)`);
  });

  it('a field assigned a value of the wrong type', async () => {
    const expected = hostMessage((v) => {
      (v.root.owner as unknown as { age: unknown }).age = 'old';
    });
    const outcome = await failingEdit('context.root.owner.age = "old";', storeView());
    expectEditingError(outcome, `${expected} (line 1, column 1)`);
  });

  it('a map value of the wrong type', async () => {
    const expected = hostMessage((v) => v.root.prices.set('x', 'not a number' as never));
    const outcome = await failingEdit('context.root.prices.set("x", "not a number");', storeView());
    expectEditingError(outcome, expected);
  });

  it('an index out of bounds', async () => {
    const expected = hostMessage((v) => v.root.lists[0]!.items.removeAt(99));
    expect(expected).toMatch(/out of bounds/);
    const outcome = await failingEdit('context.root.lists[0].items.removeAt(99);', storeView());
    expectEditingError(outcome, expected);
  });

  it('an error the edit code throws itself, with location and frame', async () => {
    const view = unionView('Hello');
    const outcome = await failingEdit(
      'if (context.is.Person(context.root)) context.root.age = 26;\nelse throw new Error("The root is not a Person; nothing to update.");',
      view,
    );
    expectEditingError(outcome, 'The root is not a Person; nothing to update. (line 2, column ');
    expect(outcome.message).toMatch(
      /\(line 2, column \d+\)\n {2}1 \| if \(context\.is\.Person\(context\.root\)\) context\.root\.age = 26;\n> 2 \| else throw new Error\("The root is not a Person; nothing to update\."\);\n {4}\| +\^$/,
    );
    expect(view.root).toBe('Hello');
  });

  it('a syntax error', async () => {
    const outcome = await failingEdit(
      'const prices = [1, 2;\ncontext.root.numbers.insertAtEnd(...prices);',
      storeView(),
    );
    expectEditingError(
      outcome,
      /^(Unexpected token|expecting) .*\(line 1, column 21\)\n> 1 \| const prices = \[1, 2;\n/,
    );
  });

  it('reading a missing property and using it', async () => {
    const outcome = await failingEdit('context.root.shoppingList.items.insertAtEnd(1);', storeView());
    expectEditingError(outcome, /^cannot read property 'items' of undefined/);
  });
});

describe('a failed edit leaves the tree unchanged', () => {
  it('drops the changes made before the error', async () => {
    await failingEdit(
      `const items = context.root.lists[0].items;
items.removeRange(0, 2);
context.root.owner.name = "Mallory";
context.root.prices.delete("milk");
context.root.numbers.insertAtEnd(100);
throw new Error("changed my mind");`,
      storeView(),
    );
  });

  it('drops changes made before a tree error', async () => {
    const outcome = await failingEdit(
      `context.root.lists[1].title = "Half done";
context.root.lists[1].items.insertAtEnd(context.create.Item({ name: "Salsa", price: 3 }));
context.root.lists[1].items[0] = "oops";`,
      storeView(),
    );
    expectEditingError(outcome, 'Cannot set indexed properties on array nodes.');
  });

  it('drops changes made before an awaited rejection', async () => {
    await failingEdit('context.root.numbers.insertAtEnd(7);\nawait Promise.reject(new Error("later"));', storeView());
  });

  it('refuses prototype pollution and keeps the tree', async () => {
    const outcome = await failingEdit(
      'context.root.numbers.insertAtEnd(1);\nObject.prototype.polluted = "hacked!";',
      storeView(),
    );
    expectEditingError(outcome, /is not extensible/);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('runaway edit code', () => {
  it('an infinite loop becomes an editing error', async () => {
    const started = Date.now();
    const outcome = await failingEdit('context.root.numbers.insertAtEnd(1);\nwhile (true) {}', storeView());
    expectEditingError(outcome, 'execution exceeded 300 ms');
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('a memory bomb becomes an editing error', async () => {
    const outcome = await failingEdit(
      'context.root.owner.name = "Bomb";\nconst hoard = [];\nfor (;;) hoard.push("x".repeat(100000) + hoard.length);',
      storeView(),
    );
    expectEditingError(outcome, /^memory limit of \d+ bytes exceeded/);
  });

  it('a loop inside a callback the tree invokes still times out', async () => {
    const started = Date.now();
    const outcome = await failingEdit(
      'context.root.numbers.insertAtEnd(1);\ncontext.root.lists[0].items.map(() => { for (;;) {} });',
      storeView(),
    );
    expectEditingError(outcome, 'execution exceeded 300 ms');
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('a loop inside a forEach callback over a map node still times out', async () => {
    const outcome = await failingEdit('context.root.prices.forEach((v, k) => { while (k) {} });', storeView());
    expectEditingError(outcome, 'execution exceeded 300 ms');
  });

  it('deep recursion becomes an editing error', async () => {
    const outcome = await failingEdit(
      'const dive = (n) => dive(n + 1) + 1;\ncontext.root.numbers.insertAtEnd(dive(0));',
      storeView(),
    );
    expectEditingError(outcome, /stack/i);
  });

  it('the next edit works after each kind of failure', async () => {
    const view = storeView();
    for (const code of ['for (;;) {}', 'const a = []; for (;;) a.push(new Array(1e4).fill(1));', 'throw 1']) {
      expect((await applyEdit(view, editor, code)).type).toBe('editingError');
    }
    const ok = await applyEdit(view, editor, 'context.root.numbers.insertAtEnd(42);');
    expect(ok.type).toBe('success');
    expect([...view.root.numbers]).toEqual([5, 3, 9, 1, 42]);
  });
});
