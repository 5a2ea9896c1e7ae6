// `.run(tree, code)` is all or nothing on a real SharedTree: a view (or a node in one) is edited
// on a fork merged only on success, so a failed edit leaves the tree exactly as it was, even
// when the view given is not a fork.
import { Tree } from '@fluidframework/tree/alpha';
import { describe, expect, it } from 'vitest';
import { createSandboxExecutor } from '../../lib/index.js';
import { EDITING_ERROR_PREFIX, GroceryList, Item, snapshot, storeView, treeExecutor, unionView } from './harness.js';

const NOT_RESET_PREFIX =
  'Running the generated code produced an error. The tree was not reset: changes the code made before the error are still in place. Please try again. Here is the error: ';

const editor = treeExecutor();

/** Typical edits of every kind, then a failure. */
const PARTIAL_EDIT = `const items = context.root.lists[0].items;
items.insertAtEnd(context.create.Item({ name: "Eggs", price: 4.1 }));
items.removeRange(0, 2);
items.moveToIndex(0, 1);
context.root.owner.age = 26;
context.root.prices.set("eggs", 4.1);
context.root.prices.delete("milk");
context.root.numbers.insertAt(0, 99);
context.root.lists.insertAtEnd(context.create.GroceryList({ title: "New", items: [] }));
throw new Error("The budget is exceeded; giving up.");`;

describe('.run() on a view that is not a fork', () => {
  it('a partially failing edit leaves the tree exactly as before', async () => {
    const view = storeView();
    const before = snapshot(view);
    const r = await editor.run(view, PARTIAL_EDIT);
    expect(r.type).toBe('editingError');
    expect(r.message.startsWith(`${EDITING_ERROR_PREFIX}The budget is exceeded; giving up. (line 10, column `)).toBe(
      true,
    );
    expect(snapshot(view)).toBe(before);
    expect([...view.root.prices.keys()].sort()).toEqual(['bread', 'milk']);
    expect(view.root.owner.age).toBe(25);
  });

  it('a succeeding edit is visible after, and the message describes the new state', async () => {
    const view = storeView();
    const r = await editor.run(view, PARTIAL_EDIT.replace(/\nthrow .*$/, ''));
    expect(r.type, r.message).toBe('success');
    expect(view.root.lists[0]!.items.map((i) => i.name)).toEqual(['Apples', 'Cheese', 'Eggs']);
    expect(view.root.owner.age).toBe(26);
    expect([...view.root.numbers]).toEqual([99, 5, 3, 9, 1]);
    expect(view.root.lists.map((l) => l.title)).toEqual(['Weekly', 'Party', 'New']);
    expect(view.root.prices.get('milk')).toBeUndefined();
    expect(r.message).toBe(`The code ran successfully. The new state of the tree is: ${snapshot(view)}`);
  });

  it('the view is usable after failures of every kind, and the next edit lands', async () => {
    const view = storeView();
    const before = snapshot(view);
    const failures = [
      'context.root.numbers.insertAtEnd(1);\ncontext.root.lists[0].items[0] = "oops";',
      'context.root.owner.name = "Bomb";\nconst hoard = [];\nfor (;;) hoard.push("x".repeat(100000) + hoard.length);',
      'context.root.numbers.removeAt(0);\nwhile (true) {}',
      'context.root.owner.name = "Later";\nawait Promise.reject(new Error("later"));',
      'context.root.numbers.insertAtEnd(1);\nObject.prototype.polluted = "hacked!";',
      'context.root = context.create.Store({ owner: { name: "X", age: 1 }, lists: [], prices: {}, numbers: [] });\nthrow 1;',
      'context.root.prices.set("x", "not a number");',
    ];
    for (const code of failures) {
      const r = await editor.run(view, code);
      expect(r.type, code).toBe('editingError');
      expect(r.message.startsWith(EDITING_ERROR_PREFIX), code).toBe(true);
      expect(snapshot(view), code).toBe(before);
    }
    expect((await editor.run(view, 'context.root.numbers.insertAtEnd(42);')).type).toBe('success');
    expect([...view.root.numbers]).toEqual([5, 3, 9, 1, 42]);
  });

  it("the tree's own error reaches the message verbatim, and the edit before it is undone", async () => {
    const view = storeView();
    const before = snapshot(view);
    const r = await editor.run(
      view,
      'context.root.lists[1].title = "Half done";\ncontext.root.lists[1].items[0] = "oops";',
    );
    expect(
      r.message.startsWith(
        `${EDITING_ERROR_PREFIX}Cannot set indexed properties on array nodes. Use array node mutation APIs to alter the array. (line 2, column `,
      ),
    ).toBe(true);
    expect(snapshot(view)).toBe(before);
  });

  it('a primitive root replaced before a failure comes back', async () => {
    const view = unionView('Hello');
    const r = await editor.run(view, 'context.root = "Edited";\nthrow new Error("no");');
    expect(r.type).toBe('editingError');
    expect(view.root).toBe('Hello');
    await editor.run(view, 'context.root = "Edited";');
    expect(view.root).toBe('Edited');
  });

  it('an aborted edit is undone', async () => {
    const view = storeView();
    const before = snapshot(view);
    const controller = new AbortController();
    const stop = createSandboxExecutor({ globals: { stop: () => controller.abort() } });
    const r = await stop.run(view, 'context.root.numbers.insertAtEnd(7);\nstop();\nfor (;;) {}', {
      signal: controller.signal,
    });
    expect(r.result.error?.code).toBe('CANCELLED');
    expect(snapshot(view)).toBe(before);
  });
});

describe('.run() edits a fork', () => {
  it('the view does not change while the edit runs; it changes at the merge', async () => {
    const view = storeView();
    const before = snapshot(view);
    const seen: string[] = [];
    const peeking = createSandboxExecutor({ globals: { peek: () => seen.push(snapshot(view)) } });
    const r = await peeking.run(
      view,
      'context.root.owner.name = "Bob";\npeek();\ncontext.root.numbers.insertAtEnd(1);',
    );
    expect(r.type).toBe('success');
    expect(seen).toEqual([before]);
    expect(view.root.owner.name).toBe('Bob');
  });

  it('host edits made while the edit awaits are kept, whether the edit fails or succeeds', async () => {
    const view = storeView();
    const waiting = createSandboxExecutor({
      globals: {
        hostEdits: async () => {
          view.root.owner.name = 'Changed by the host';
        },
      },
    });
    const failed = await waiting.run(view, 'context.root.numbers.insertAtEnd(1);\nawait hostEdits();\nthrow 1;');
    expect(failed.type).toBe('editingError');
    expect(view.root.owner.name).toBe('Changed by the host');
    expect([...view.root.numbers]).toEqual([5, 3, 9, 1]);

    view.root.owner.name = 'Alice';
    const ok = await waiting.run(view, 'context.root.numbers.insertAtEnd(1);\nawait hostEdits();');
    expect(ok.type).toBe('success');
    expect(view.root.owner.name).toBe('Changed by the host');
    expect([...view.root.numbers]).toEqual([5, 3, 9, 1, 1]);
  });

  it('two edits of one view may run at once; both land', async () => {
    const view = storeView();
    const [a, b] = await Promise.all([
      editor.run(view, 'await null;\ncontext.root.numbers.insertAtEnd(10);'),
      editor.run(view, 'await null;\ncontext.root.owner.age = 30;'),
    ]);
    expect([a.type, b.type]).toEqual(['success', 'success']);
    expect([...view.root.numbers]).toEqual([5, 3, 9, 1, 10]);
    expect(view.root.owner.age).toBe(30);
  });

  it('a view that is already a fork works the same', async () => {
    const view = storeView();
    const branch = view.fork();
    const before = snapshot(branch);
    expect((await editor.run(branch, PARTIAL_EDIT)).type).toBe('editingError');
    expect(snapshot(branch)).toBe(before);
    expect((await editor.run(branch, 'context.root.owner.age = 27;')).type).toBe('success');
    expect(branch.root.owner.age).toBe(27);
    expect(view.root.owner.age).toBe(25);
    view.merge(branch);
    expect(view.root.owner.age).toBe(27);
  });
});

describe('.run() on a node', () => {
  it('a failing edit of a node in a view leaves the whole tree as before', async () => {
    const view = storeView();
    const before = snapshot(view);
    const r = await editor.run(
      view.root.lists[0]!,
      'context.root.title = "Renamed";\ncontext.root.items.removeAt(0);\ncontext.root.items.insertAtEnd(context.create.Item({ name: "X", price: 1 }));\ncontext.root.items.removeAt(99);',
    );
    expect(r.type).toBe('editingError');
    expect(r.message.startsWith(EDITING_ERROR_PREFIX)).toBe(true);
    expect(r.message).toMatch(/out of bounds/);
    expect(snapshot(view)).toBe(before);
  });

  it('a succeeding edit of a node is visible after; the message describes the node', async () => {
    const view = storeView();
    const list = view.root.lists[1]!;
    const r = await editor.run(
      list,
      'if (!context.is.GroceryList(context.root)) throw new Error("not a list");\ncontext.root.title = "Fiesta";\ncontext.root.items.insertAtEnd(context.create.Item({ name: "Salsa", price: 3 }));',
    );
    expect(r.type, r.message).toBe('success');
    expect(list.title).toBe('Fiesta');
    expect(list.items.map((i) => i.name)).toEqual(['Chips', 'Salsa']);
    expect(Tree.is(list.items[1], Item)).toBe(true);
    expect(r.message).toBe(`The code ran successfully. The new state of the tree is: ${JSON.stringify(list)}`);
    expect(view.root.lists[0]!.title).toBe('Weekly');
  });

  it('replacing the node itself: undone on failure, in place (and described) on success', async () => {
    const view = storeView();
    const before = snapshot(view);
    const replace = 'context.root = context.create.Item({ name: "Oat milk", price: 3.1 });';
    expect((await editor.run(view.root.lists[0]!.items[0]!, `${replace}\nthrow new Error("no");`)).type).toBe(
      'editingError',
    );
    expect(snapshot(view)).toBe(before);
    const r = await editor.run(view.root.lists[0]!.items[0]!, replace);
    expect(r.type).toBe('success');
    expect(view.root.lists[0]!.items.map((i) => i.name)).toEqual(['Oat milk', 'Bread', 'Cheese', 'Apples']);
    expect(r.message).toBe('The code ran successfully. The new state of the tree is: {"name":"Oat milk","price":3.1}');
  });

  it('a node in no tree yet is edited in place, and the message says it was not reset', async () => {
    const loose = new GroceryList({ title: 'Draft', items: [] });
    const r = await editor.run(loose, 'context.root.title = "Half";\nthrow new Error("stop");');
    expect(r.type).toBe('editingError');
    expect(r.message.startsWith(`${NOT_RESET_PREFIX}stop (line 2, column `)).toBe(true);
    expect(loose.title).toBe('Half');
  });
});
