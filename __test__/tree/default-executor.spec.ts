// createSandboxExecutor() with no options is a complete tree-agent editor: the edit code's
// `context` comes from quickrealm/tree. Host mistakes throw to the host; they never reach a model
// as an editing error.
import { Tree } from '@fluidframework/tree/alpha';
import { describe, expect, it } from 'vitest';
import { createSandboxExecutor } from '../../lib/index.js';
import { Item, Person, applyEdit, runQuery, snapshot, storeView, unionView } from './harness.js';

const names = (items: readonly { name: string }[]) => items.map((i) => i.name);

describe('createSandboxExecutor() with no options', () => {
  it('runs a query of typical model edits through tree-agent’s loop', async () => {
    const editor = createSandboxExecutor();
    const view = storeView();
    const edits = [
      // a type guard on the root, then a field
      'if (context.is.Store(context.root)) context.root.owner.age = 26;\nelse throw new Error("The root is not a store.");',
      // parent and key of an array element and of the array
      `const list = context.root.lists[0];
const cheese = list.items.find((item) => item.name === "Cheese");
if (context.key(cheese) !== 2) throw new Error("Cheese is at " + context.key(cheese));
const items = context.parent(cheese);
if (!context.isArray(items) || context.key(items) !== "items" || context.parent(items) !== list)
  throw new Error("Cheese is not where it should be.");
items.removeAt(context.key(cheese));`,
      // a map node: guards, entries, set, delete
      `const prices = context.root.prices;
if (!context.isMap(prices) || context.isArray(prices)) throw new Error("prices is not a map");
if (context.key(prices) !== "prices" || context.parent(prices) !== context.root) throw new Error("prices is misplaced");
for (const [name, price] of [...prices.entries()]) prices.set(name, Math.round(price * 110) / 100);
prices.set("eggs", 4.1);
prices.delete("bread");`,
      // one created item inserted twice
      `const tea = context.create.Item({ name: "Tea", price: 3 });
context.root.lists[1].items.insertAtEnd(tea);
context.root.lists[0].items.insertAt(0, tea);`,
      // sorting in place by repeated moveToIndex
      `const numbers = context.root.numbers;
for (let i = 0; i < numbers.length; i++) {
  let min = i;
  for (let j = i + 1; j < numbers.length; j++) if (numbers[j] < numbers[min]) min = j;
  if (min !== i) numbers.moveToIndex(i, min);
}`,
      // moving a node between arrays of different parents
      `const [weekly, party] = context.root.lists;
const milk = weekly.items.findIndex((item) => item.name === "Milk");
party.items.moveToIndex(0, milk, weekly.items);`,
      // read-only callbacks and a new list built from created content
      `const weekly = context.root.lists[0];
const total = weekly.items.reduce((sum, item) => sum + item.price, 0);
const cheap = weekly.items.filter((item) => item.price < 3).map((item) => item.name);
weekly.title = "Weekly (" + total.toFixed(2) + ")";
context.root.lists.insertAtEnd(context.create.GroceryList({ title: cheap.join(", "), items: context.create.Items([]) }));`,
    ];
    const { results, merged } = await runQuery(view, editor, edits);
    for (const [i, r] of results.entries()) expect(r.type, `${edits[i]}\n${r.message}`).toBe('success');
    expect(merged).toBe(true);
    expect(view.root.owner.age).toBe(26);
    expect(names(view.root.lists[0]!.items)).toEqual(['Tea', 'Bread', 'Apples']);
    expect(names(view.root.lists[1]!.items)).toEqual(['Milk', 'Chips', 'Tea']);
    expect(Tree.is(view.root.lists[1]!.items[2], Item)).toBe(true);
    expect(Object.fromEntries(view.root.prices.entries())).toEqual({ milk: 2.75, eggs: 4.1 });
    expect([...view.root.numbers]).toEqual([1, 3, 5, 9]);
    expect(view.root.lists[0]!.title).toBe('Weekly (7.95)');
    expect(view.root.lists[2]!.title).toBe('Bread');
  });

  it('replaces the root and narrows with is.*, as tree-agent’s prompt shows', async () => {
    const editor = createSandboxExecutor();
    const view = unionView('Hello');
    expect((await applyEdit(view, editor, 'context.root = "Edited";')).type).toBe('success');
    expect(view.root).toBe('Edited');
    const person = await applyEdit(view, editor, 'context.root = context.create.Person({ name: "Bob", age: 25 });');
    expect(person.type).toBe('success');
    expect(Tree.is(view.root, Person)).toBe(true);
    const older = await applyEdit(
      view,
      editor,
      'if (context.is.Person(context.root)) context.root.age = 26;\nelse throw new Error("The root is not a person.");',
    );
    expect(older.type).toBe('success');
    expect(JSON.parse(snapshot(view))).toEqual({ name: 'Bob', age: 26 });
  });

  it('edits a subtree node given on a fresh fork, as tree-agent may pass one', async () => {
    const editor = createSandboxExecutor();
    const view = storeView();
    const fork = view.fork();
    await editor(
      fork.root.lists[1]!,
      'context.root.title = "Fiesta";\nif (context.parent(context.root) === undefined) throw new Error("no parent");\ncontext.root = context.create.GroceryList({ title: context.root.title + "!", items: [] });',
    );
    view.merge(fork);
    expect(view.root.lists.map((l) => l.title)).toEqual(['Weekly', 'Fiesta!']);
  });

  it('.run() reports success and the new state', async () => {
    const editor = createSandboxExecutor();
    const view = storeView();
    const r = await editor.run(view, 'context.root.numbers.insertAt(0, 99);');
    expect(r.type).toBe('success');
    expect([...view.root.numbers]).toEqual([99, 5, 3, 9, 1]);
    expect(r.message).toContain('"numbers":[99,5,3,9,1]');
  });
});

describe('host mistakes throw to the host', () => {
  it('bad limits or mode throw at creation, without a context builder too', () => {
    for (const options of [
      { limits: { timeoutMS: 100 } },
      { limits: { memoryBytes: -1 } },
      { mode: 'strict' },
      { createContext: 'default' },
      { editor: 'sandbox' },
    ]) {
      let thrown: unknown;
      try {
        createSandboxExecutor(options as never);
      } catch (e) {
        thrown = e;
      }
      expect(thrown, JSON.stringify(options)).toBeInstanceOf(Error);
      expect(thrown, JSON.stringify(options)).toMatchObject({ code: 'INVALID_INPUT' });
    }
  });

  it('an edit of something that is not a tree rejects; it is no editing error', async () => {
    const editor = createSandboxExecutor();
    for (const tree of [undefined, { root: 1 }, storeView().root.owner.name]) {
      await expect(editor.run(tree, 'context.root = 1;')).rejects.toMatchObject({
        name: 'TypeError',
        code: 'INVALID_INPUT',
      });
      await expect(editor(tree, 'context.root = 1;')).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    }
  });

  it('code that is not a string rejects and leaves the tree as it was', async () => {
    const editor = createSandboxExecutor();
    const view = storeView();
    const before = snapshot(view);
    await expect(editor.run(view, { code: 'context.root.numbers.insertAtEnd(1)' } as never)).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      message: 'INVALID_INPUT: the edit code must be a string, got an object',
    });
    expect(snapshot(view)).toBe(before);
  });

  it("a builder's own error reaches the host, and the view is left as it was", async () => {
    const view = storeView();
    const before = snapshot(view);
    const editor = createSandboxExecutor({
      createContext: () => {
        throw new Error('the schema changed under us');
      },
    });
    await expect(editor.run(view, 'context.root.numbers.insertAtEnd(1);')).rejects.toThrow(
      'the schema changed under us',
    );
    expect(snapshot(view)).toBe(before);
    // The fork made for the edit was disposed: the view still forks, edits and merges.
    const ok = createSandboxExecutor();
    expect((await ok.run(view, 'context.root.numbers.insertAtEnd(1);')).type).toBe('success');
    expect([...view.root.numbers]).toEqual([5, 3, 9, 1, 1]);
  });
});
