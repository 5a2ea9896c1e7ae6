// Model-style edits, as tree-agent's system prompt leads a model to write them, applied through
// createSandboxExecutor to a real SharedTree (3.1.0): each edit on its own fork, merged on success.
import { Tree, type ImplicitFieldSchema, type TreeViewAlpha } from '@fluidframework/tree/alpha';
import { describe, expect, it } from 'vitest';
import {
  applyEdit,
  GroceryList,
  Item,
  Person,
  runQuery,
  snapshot,
  storeView,
  treeExecutor,
  unionView,
  type EditOutcome,
} from './harness.js';

const editor = treeExecutor();

async function edit<T extends ImplicitFieldSchema>(view: TreeViewAlpha<T>, code: string): Promise<EditOutcome> {
  const outcome = await applyEdit(view, editor, code);
  expect(outcome.message, code).not.toMatch(/^Running the generated code produced an error/);
  expect(outcome.type).toBe('success');
  return outcome;
}

const names = (items: readonly { name: string }[]) => items.map((i) => i.name);

describe('root replacement', () => {
  it('replaces a primitive root', async () => {
    const view = unionView('Hello');
    await edit(view, 'context.root = "Edited";');
    expect(view.root).toBe('Edited');
  });

  it('replaces the root with a created object node', async () => {
    const view = unionView('Hello');
    await edit(view, 'context.root = context.create.Person({ name: "Bob", age: 30 });');
    expect(Tree.is(view.root, Person)).toBe(true);
    expect(JSON.parse(snapshot(view))).toEqual({ name: 'Bob', age: 30 });
  });

  it('narrows with is.* before editing the object root', async () => {
    const view = unionView({ name: 'Bob', age: 30 });
    await edit(
      view,
      'if (context.is.Person(context.root)) context.root.age = 26; else throw new Error("The root is not a person");',
    );
    expect(JSON.parse(snapshot(view))).toEqual({ name: 'Bob', age: 26 });
  });

  it('replaces an object root with a primitive', async () => {
    const view = unionView({ name: 'Bob', age: 30 });
    await edit(
      view,
      'if (!context.is.Person(context.root)) throw new Error("expected a person");\ncontext.root = `${context.root.name} is ${context.root.age}`;',
    );
    expect(view.root).toBe('Bob is 30');
  });
});

describe('array nodes', () => {
  it('appends a created item with insertAtEnd', async () => {
    const view = storeView();
    await edit(view, 'context.root.lists[0].items.insertAtEnd(context.create.Item({ name: "Eggs", price: 4.1 }));');
    expect(names(view.root.lists[0]!.items)).toEqual(['Milk', 'Bread', 'Cheese', 'Apples', 'Eggs']);
    expect(Tree.is(view.root.lists[0]!.items[4], Item)).toBe(true);
  });

  it('inserts a number at the front with insertAt', async () => {
    const view = storeView();
    await edit(view, 'context.root.numbers.insertAt(0, 99);');
    expect([...view.root.numbers]).toEqual([99, 5, 3, 9, 1]);
  });

  it('removes one item with removeAt and a range with removeRange', async () => {
    const view = storeView();
    await edit(view, 'const items = context.root.lists[0].items;\nitems.removeAt(0);\nitems.removeRange(1, 3);');
    expect(names(view.root.lists[0]!.items)).toEqual(['Bread']);
  });

  it('moves an item within its array with moveToIndex', async () => {
    const view = storeView();
    await edit(view, '// Put the cheese first\nconst items = context.root.lists[0].items;\nitems.moveToIndex(0, 2);');
    expect(names(view.root.lists[0]!.items)).toEqual(['Cheese', 'Milk', 'Bread', 'Apples']);
  });

  it('uses the push/pop conveniences of 3.1.0 array nodes', async () => {
    const view = storeView();
    await edit(view, 'const n = context.root.numbers;\nconst last = n.pop();\nn.push(last * 10, 7);');
    expect([...view.root.numbers]).toEqual([5, 3, 9, 10, 7]);
  });

  it('sorts items by price in place with repeated moveToIndex', async () => {
    const view = storeView();
    await edit(
      view,
      `const items = context.root.lists[0].items;
for (let i = 0; i < items.length; i++) {
  let cheapest = i;
  for (let j = i + 1; j < items.length; j++) {
    if (items[j].price < items[cheapest].price) cheapest = j;
  }
  if (cheapest !== i) items.moveToIndex(i, cheapest);
}`,
    );
    expect(names(view.root.lists[0]!.items)).toEqual(['Bread', 'Milk', 'Apples', 'Cheese']);
  });

  it('sorts numbers descending using a sorted copy and moves', async () => {
    const view = storeView();
    await edit(
      view,
      `const nums = context.root.numbers;
const order = [...nums].sort((a, b) => b - a);
order.forEach((value, target) => {
  const from = nums.indexOf(value);
  if (from !== target) nums.moveToIndex(target, from);
});`,
    );
    expect([...view.root.numbers]).toEqual([9, 5, 3, 1]);
  });

  it('moves a node between arrays of different parents', async () => {
    const view = storeView();
    await edit(
      view,
      `const [weekly, party] = context.root.lists;
const milk = weekly.items.findIndex((i) => i.name === "Milk");
party.items.moveToIndex(party.items.length, milk, weekly.items);`,
    );
    expect(names(view.root.lists[0]!.items)).toEqual(['Bread', 'Cheese', 'Apples']);
    expect(names(view.root.lists[1]!.items)).toEqual(['Chips', 'Milk']);
  });

  it('inserts the same created content twice', async () => {
    const view = storeView();
    await edit(
      view,
      `const bananas = context.create.Item({ name: "Bananas", price: 1.1 });
for (const list of context.root.lists) list.items.insertAtEnd(bananas);`,
    );
    expect(view.root.lists.map((l) => l.items[l.items.length - 1]!.name)).toEqual(['Bananas', 'Bananas']);
  });

  it('rebuilds an array from a spread copy', async () => {
    const view = storeView();
    await edit(
      view,
      `const nums = context.root.numbers;
const sorted = [...nums].sort((a, b) => a - b);
nums.removeRange();
nums.insertAtEnd(...sorted);`,
    );
    expect([...view.root.numbers]).toEqual([1, 3, 5, 9]);
  });
});

describe('map nodes', () => {
  it('reads with get and writes with set', async () => {
    const view = storeView();
    await edit(view, 'const prices = context.root.prices;\nprices.set("cheese", prices.get("milk") * 2);');
    expect(view.root.prices.get('cheese')).toBe(5);
  });

  it('deletes with delete after checking has', async () => {
    const view = storeView();
    await edit(
      view,
      'const prices = context.root.prices;\nif (prices.has("bread")) prices.delete("bread");\nif (prices.has("bread")) throw new Error("still there");',
    );
    expect([...view.root.prices.keys()]).toEqual(['milk']);
  });

  it('walks keys, values, entries and forEach', async () => {
    const view = storeView();
    await edit(
      view,
      `const prices = context.root.prices;
const keys = [...prices.keys()].sort();
let total = 0;
for (const v of prices.values()) total += v;
let viaEntries = 0;
for (const [k, v] of prices.entries()) viaEntries += k.length * v;
let viaForEach = 0;
prices.forEach((v, k) => { viaForEach += v; });
prices.set("total", total);
prices.set("check", viaForEach === total ? keys.length : -1);
prices.set("weighted", viaEntries);`,
    );
    expect(view.root.prices.get('total')).toBe(4.25);
    expect(view.root.prices.get('check')).toBe(2);
    expect(view.root.prices.get('weighted')).toBe(4 * 2.5 + 5 * 1.75);
  });
});

describe('reading through callbacks and iteration', () => {
  it('map: copies names into another field', async () => {
    const view = storeView();
    await edit(
      view,
      'const items = context.root.lists[0].items;\ncontext.root.lists[1].title = items.map((i) => i.name.toUpperCase()).join(", ");',
    );
    expect(view.root.lists[1]!.title).toBe('MILK, BREAD, CHEESE, APPLES');
  });

  it('filter: removes every item above a price', async () => {
    const view = storeView();
    await edit(
      view,
      `const items = context.root.lists[0].items;
const expensive = items.filter((i) => i.price > 3);
for (const item of expensive) items.removeAt(items.indexOf(item));`,
    );
    expect(names(view.root.lists[0]!.items)).toEqual(['Milk', 'Bread']);
  });

  it('find: updates the found node in place', async () => {
    const view = storeView();
    await edit(
      view,
      'const bread = context.root.lists[0].items.find((i) => i.name === "Bread");\nif (!bread) throw new Error("no bread");\nbread.price = 2;',
    );
    expect(view.root.lists[0]!.items[1]!.price).toBe(2);
  });

  it('some/every: adds an item only when missing', async () => {
    const view = storeView();
    const code = `const items = context.root.lists[0].items;
if (!items.some((i) => i.name === "Eggs") && items.every((i) => i.price > 0)) {
  items.insertAtEnd(context.create.Item({ name: "Eggs", price: 4 }));
}`;
    await edit(view, code);
    await edit(view, code);
    expect(names(view.root.lists[0]!.items).filter((n) => n === 'Eggs')).toHaveLength(1);
  });

  it('reduce: stores a total in the map', async () => {
    const view = storeView();
    await edit(
      view,
      'const total = context.root.lists[0].items.reduce((sum, i) => sum + i.price, 0);\ncontext.root.prices.set("weekly", Math.round(total * 100) / 100);',
    );
    expect(view.root.prices.get('weekly')).toBe(13.45);
  });

  it('for...of: sets an optional field on each item', async () => {
    const view = storeView();
    await edit(
      view,
      'for (const item of context.root.lists[0].items) {\n  item.note = item.price > 3 ? "pricey" : "cheap";\n}',
    );
    expect(view.root.lists[0]!.items.map((i) => i.note)).toEqual(['cheap', 'cheap', 'pricey', 'pricey']);
  });

  it('length and index reads: swaps the first and last items', async () => {
    const view = storeView();
    await edit(
      view,
      `const items = context.root.lists[0].items;
const last = items.length - 1;
const firstName = items[0].name;
items.moveToIndex(0, last);
items.moveToIndex(items.length, 1);
if (items[last].name !== firstName) throw new Error("swap failed");`,
    );
    expect(names(view.root.lists[0]!.items)).toEqual(['Apples', 'Bread', 'Cheese', 'Milk']);
  });

  it('Object.keys and JSON.stringify read node content', async () => {
    const view = storeView();
    await edit(
      view,
      'const owner = context.root.owner;\ncontext.root.lists[1].title = Object.keys(owner).join("+") + " " + JSON.stringify(owner);',
    );
    expect(view.root.lists[1]!.title).toBe('name+age {"name":"Alice","age":25}');
  });
});

describe('context helpers', () => {
  it('parent and key locate a node', async () => {
    const view = storeView();
    await edit(
      view,
      `const cheese = context.root.lists[0].items.find((i) => i.name === "Cheese");
const items = context.parent(cheese);
const list = context.parent(items);
if (context.key(items) !== "items") throw new Error("unexpected key " + context.key(items));
if (context.parent(context.root) !== undefined) throw new Error("the root has a parent");
list.title = list.title + " #" + context.key(cheese) + " of " + context.key(list);`,
    );
    expect(view.root.lists[0]!.title).toBe('Weekly #2 of 0');
  });

  it('isArray and isMap recognise nodes that Array.isArray and instanceof Map do not', async () => {
    const view = storeView();
    await edit(
      view,
      `const r = context.root;
const facts = [context.isArray(r.lists), Array.isArray(r.lists), context.isMap(r.prices), r.prices instanceof Map, context.isArray(r.prices), context.isMap(r.owner)];
r.owner.name = facts.join(",");`,
    );
    expect(view.root.owner.name).toBe('true,false,true,false,false,false');
  });

  it('is.* tells node types apart', async () => {
    const view = storeView();
    await edit(
      view,
      'const r = context.root;\nr.owner.name = [context.is.Person(r.owner), context.is.Item(r.owner), context.is.Item(r.lists[0].items[0]), context.is.GroceryList(r.lists[1]), context.is.Store(r)].join();',
    );
    expect(view.root.owner.name).toBe('true,false,true,true,true');
  });
});

describe('code shapes', () => {
  it('accepts return, top-level await and an async IIFE', async () => {
    const view = storeView();
    await edit(
      view,
      'context.root.numbers.insertAtEnd(1);\nif (context.root.numbers.length > 0) return;\ncontext.root.numbers.insertAtEnd(2);',
    );
    await edit(view, 'await Promise.resolve();\ncontext.root.numbers.insertAtEnd(3);');
    await edit(view, '(async () => {\n  context.root.numbers.insertAtEnd(4);\n})();');
    expect([...view.root.numbers]).toEqual([5, 3, 9, 1, 1, 3, 4]);
  });

  it('uses guest-side helpers, classes and closures', async () => {
    const view = storeView();
    await edit(
      view,
      `class Discount {
  constructor(rate) { this.rate = rate; }
  apply(item) { item.price = Math.round(item.price * (1 - this.rate) * 100) / 100; }
}
const half = new Discount(0.5);
context.root.lists[0].items.forEach((item) => half.apply(item));`,
    );
    expect(view.root.lists[0]!.items.map((i) => i.price)).toEqual([1.25, 0.88, 3, 1.6]);
  });
});

describe('subtree contexts', () => {
  it('edits a subtree node given as the tree', async () => {
    const view = storeView();
    const fork = view.fork();
    await editor(
      fork.root.lists[1],
      'context.root.title = "Party!";\ncontext.root.items.insertAtEnd(context.create.Item({ name: "Dip", price: 3 }));',
    );
    view.merge(fork);
    expect(view.root.lists[1]!.title).toBe('Party!');
    expect(names(view.root.lists[1]!.items)).toEqual(['Chips', 'Dip']);
  });

  it('replaces a subtree node in its parent array', async () => {
    const view = storeView();
    const fork = view.fork();
    await editor(
      fork.root.lists[1],
      'context.root = context.create.GroceryList({ title: "Brunch", items: [{ name: "Eggs", price: 4 }] });\ncontext.root.items.insertAtEnd(context.create.Item({ name: "Juice", price: 3 }));',
    );
    view.merge(fork);
    expect(view.root.lists.map((l) => l.title)).toEqual(['Weekly', 'Brunch']);
    expect(Tree.is(view.root.lists[1], GroceryList)).toBe(true);
    expect(names(view.root.lists[1]!.items)).toEqual(['Eggs', 'Juice']);
  });

  it('replaces a subtree node held in an object field', async () => {
    const view = storeView();
    const fork = view.fork();
    await editor(fork.root.owner, 'context.root = context.create.Person({ name: "Carol", age: 41 });');
    view.merge(fork);
    expect(JSON.parse(JSON.stringify(view.root.owner))).toEqual({ name: 'Carol', age: 41 });
  });
});

describe('an agent query', () => {
  it('applies successful edits and reports the new state', async () => {
    const view = storeView();
    const { results, merged } = await runQuery(view, editor, [
      'context.root.lists[0].items.insertAtEnd(context.create.Item({ name: "Eggs", price: 4 }));',
      'context.root.lists[0].items.removeAt(0);',
      'context.root.owner.age += 1;',
    ]);
    expect(results.map((r) => r.type)).toEqual(['success', 'success', 'success']);
    expect(results[2]!.message).toContain('"age": 26');
    expect(merged).toBe(true);
    expect(names(view.root.lists[0]!.items)).toEqual(['Bread', 'Cheese', 'Apples', 'Eggs']);
    expect(view.root.owner.age).toBe(26);
  });

  it('keeps earlier edits when a later one fails and the model retries', async () => {
    const view = storeView();
    const { results, merged } = await runQuery(view, editor, [
      'context.root.owner.name = "Alicia";',
      'context.root.numbers[0] = 1;',
      'context.root.numbers.insertAt(0, 1);',
    ]);
    expect(results.map((r) => r.type)).toEqual(['success', 'editingError', 'success']);
    expect(merged).toBe(true);
    expect(view.root.owner.name).toBe('Alicia');
    expect([...view.root.numbers]).toEqual([1, 5, 3, 9, 1]);
  });

  it('drops the whole query when its last edit failed', async () => {
    const view = storeView();
    const before = snapshot(view);
    const { results, merged } = await runQuery(view, editor, [
      'context.root.owner.name = "Alicia";',
      'throw new Error("I could not finish");',
    ]);
    expect(results.map((r) => r.type)).toEqual(['success', 'editingError']);
    expect(merged).toBe(false);
    expect(snapshot(view)).toBe(before);
  });

  it('stops at the edit limit', async () => {
    const view = storeView();
    const { results } = await runQuery(view, editor, Array(4).fill('context.root.numbers.insertAtEnd(0);'), 3);
    expect(results.map((r) => r.type)).toEqual(['success', 'success', 'success', 'tooManyEditsError']);
    expect([...view.root.numbers]).toEqual([5, 3, 9, 1, 0, 0, 0]);
  });
});
