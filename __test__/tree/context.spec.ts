// quickrealm/tree's createContext on a real SharedTree (3.1.0): each member of tree-agent's
// `context`, for a view and for a subtree node, called from the host.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SchemaFactory, Tree, TreeViewConfiguration, createIndependentTreeViewAlpha } from '@fluidframework/tree/alpha';
import { describe, expect, it } from 'vitest';
import { createContext } from '../../lib/tree.js';
import { Item, Items, Person, storeView, unionView } from './harness.js';

const ROOT = join(__dirname, '..', '..');

const pf = new SchemaFactory('com.example.pantry');
class Jar extends pf.object('Jar', { label: pf.string, grams: pf.number }) {}
class Shelf extends pf.map('Shelf', Jar) {}
class Dog extends pf.object('Dog', { name: pf.string }) {}
class Cat extends pf.object('Cat', { name: pf.string }) {}
class Pantry extends pf.object('Pantry', {
  shelf: Shelf,
  // A lazy reference and an unnamed (structural) array type.
  row: pf.array('Row', [() => Jar]),
  counts: pf.array(pf.number),
  pet: pf.optional([Dog, Cat]),
}) {}

function pantryView() {
  const view = createIndependentTreeViewAlpha(new TreeViewConfiguration({ schema: Pantry }));
  view.initialize({
    shelf: { top: { label: 'Honey', grams: 500 }, bottom: { label: 'Jam', grams: 250 } },
    row: [
      { label: 'Salt', grams: 1000 },
      { label: 'Rice', grams: 2000 },
    ],
    counts: [1, 2],
  });
  return view;
}

describe('createContext(view)', () => {
  it('root reads the view root; assigning replaces it with a primitive or created content', () => {
    const view = unionView('Hello');
    const context = createContext(view);
    expect(context.root).toBe('Hello');
    context.root = 'Edited';
    expect(view.root).toBe('Edited');
    context.root = context.create.Person!({ name: 'Bob', age: 30 });
    expect(Tree.is(view.root, Person)).toBe(true);
    expect(context.root).toBe(view.root);
    expect(JSON.parse(JSON.stringify(view.root))).toEqual({ name: 'Bob', age: 30 });
  });

  it('create and is have one entry per named node type, leaves and structural types left out', () => {
    const store = createContext(storeView());
    const named = ['GroceryList', 'Item', 'Items', 'Lists', 'Numbers', 'Person', 'Prices', 'Store'];
    expect(Object.keys(store.create).sort()).toEqual(named);
    expect(Object.keys(store.is).sort()).toEqual(named);
    const pantry = createContext(pantryView());
    expect(Object.keys(pantry.create).sort()).toEqual(['Cat', 'Dog', 'Jar', 'Pantry', 'Row', 'Shelf']);
  });

  it('create returns content that can be inserted more than once', () => {
    const view = storeView();
    const context = createContext(view);
    const items = view.root.lists[1]!.items;
    const salsa = context.create.Item!({ name: 'Salsa', price: 3 });
    items.insertAtEnd(salsa as Item);
    items.insertAtEnd(salsa as Item);
    expect(items.map((i) => i.name)).toEqual(['Chips', 'Salsa', 'Salsa']);
    expect(items[1]).not.toBe(items[2]);
    expect(Tree.is(items[2], Item)).toBe(true);
    // Nested builders: a whole list with its items.
    const list = context.create.GroceryList!({
      title: 'Picnic',
      items: context.create.Items!([salsa, context.create.Item!({ name: 'Bread', price: 2 })]),
    });
    view.root.lists.insertAtEnd(list as never);
    view.root.lists.insertAtEnd(list as never);
    expect(view.root.lists.map((l) => l.title)).toEqual(['Weekly', 'Party', 'Picnic', 'Picnic']);
    expect(view.root.lists[3]!.items.map((i) => i.name)).toEqual(['Salsa', 'Bread']);
  });

  it('create tags content with its type, where the shape alone would be ambiguous', () => {
    const view = pantryView();
    const context = createContext(view);
    expect(() => {
      view.root.pet = { name: 'Tom' } as never;
    }).toThrow(/ambiguous|compatible with more than one/i);
    view.root.pet = context.create.Cat!({ name: 'Tom' }) as Cat;
    expect(Tree.is(view.root.pet, Cat)).toBe(true);
    view.root.pet = context.create.Dog!({ name: 'Rex' }) as Dog;
    expect(Tree.is(view.root.pet, Dog)).toBe(true);
  });

  it('is.<Type> tells node types apart and is false for plain data', () => {
    const view = storeView();
    const { is } = createContext(view);
    expect(is.Store!(view.root)).toBe(true);
    expect(is.Person!(view.root.owner)).toBe(true);
    expect(is.Item!(view.root.owner)).toBe(false);
    expect(is.Items!(view.root.lists[0]!.items)).toBe(true);
    expect(is.Numbers!(view.root.numbers)).toBe(true);
    expect(is.Items!(view.root.numbers)).toBe(false);
    expect(is.Prices!(view.root.prices)).toBe(true);
    expect(is.Person!({ name: 'Alice', age: 25 })).toBe(false);
    expect(is.Person!(undefined)).toBe(false);
  });

  it('isArray and isMap recognise array and map nodes, and only those', () => {
    const view = storeView();
    const { isArray, isMap } = createContext(view);
    expect(Array.isArray(view.root.numbers)).toBe(false);
    expect(isArray(view.root.numbers)).toBe(true);
    expect(isArray(view.root.lists)).toBe(true);
    expect(isArray(view.root.prices)).toBe(false);
    expect(isArray([1, 2])).toBe(false);
    expect(view.root.prices instanceof Map).toBe(false);
    expect(isMap(view.root.prices)).toBe(true);
    expect(isMap(view.root.owner)).toBe(false);
    expect(isMap(new Map())).toBe(false);
    expect(isArray(undefined)).toBe(false);
    expect(isMap(null)).toBe(false);
  });

  it('parent and key: array index, map key, property name; nothing above the root', () => {
    const view = pantryView();
    const { parent, key } = createContext(view);
    const rice = view.root.row[1]!;
    expect(key(rice)).toBe(1);
    expect(parent(rice)).toBe(view.root.row);
    const jam = view.root.shelf.get('bottom')!;
    expect(key(jam)).toBe('bottom');
    expect(parent(jam)).toBe(view.root.shelf);
    expect(key(view.root.shelf)).toBe('shelf');
    expect(parent(view.root.shelf)).toBe(view.root);
    expect(parent(view.root)).toBeUndefined();
    expect(key(view.root)).toBe(Tree.key(view.root));
    expect(parent('Honey')).toBeUndefined();
    expect(key(42)).toBeUndefined();
  });

  it('a short name two scopes share gets no builder (either one would be a guess)', () => {
    const a = new SchemaFactory('com.example.a');
    const b = new SchemaFactory('com.example.b');
    class NoteA extends a.object('Note', { text: a.string }) {}
    class NoteB extends b.object('Note', { body: b.string }) {}
    class Board extends a.object('Board', { first: NoteA, second: NoteB }) {}
    const view = createIndependentTreeViewAlpha(new TreeViewConfiguration({ schema: Board }));
    view.initialize({ first: { text: 'x' }, second: { body: 'y' } });
    const context = createContext(view);
    expect(Object.keys(context.create)).toEqual(['Board']);
    expect(Object.keys(context.is)).toEqual(['Board']);
  });
});

describe('createContext(node)', () => {
  it('root is the node; create and is cover the types reachable from it', () => {
    const view = storeView();
    const list = view.root.lists[0]!;
    const context = createContext(list);
    expect(context.root).toBe(list);
    expect(Object.keys(context.create).sort()).toEqual(['GroceryList', 'Item', 'Items']);
  });

  it('assigning root replaces an object field and follows the new node', () => {
    const view = storeView();
    const context = createContext(view.root.owner);
    context.root = context.create.Person!({ name: 'Bob', age: 40 });
    expect(JSON.parse(JSON.stringify(view.root.owner))).toEqual({ name: 'Bob', age: 40 });
    expect(context.root).toBe(view.root.owner);
    (context.root as Person).age = 41;
    expect(view.root.owner.age).toBe(41);
  });

  it('assigning root replaces an array element in place; refused content leaves the array as it was', () => {
    const view = storeView();
    const items = view.root.lists[0]!.items;
    const context = createContext(items[1]!);
    context.root = context.create.Item!({ name: 'Rye', price: 2.2 });
    expect(items.map((i) => i.name)).toEqual(['Milk', 'Rye', 'Cheese', 'Apples']);
    expect(context.root).toBe(items[1]);
    expect(() => {
      context.root = { name: 5 };
    }).toThrow(/incompatible/);
    expect(items.map((i) => i.name)).toEqual(['Milk', 'Rye', 'Cheese', 'Apples']);
    expect(context.root).toBe(items[1]);
  });

  it('assigning root replaces a map entry', () => {
    const view = pantryView();
    const context = createContext(view.root.shelf.get('top')!);
    context.root = context.create.Jar!({ label: 'Syrup', grams: 330 });
    expect(view.root.shelf.get('top')!.label).toBe('Syrup');
    expect(view.root.shelf.get('bottom')!.label).toBe('Jam');
    expect(context.root).toBe(view.root.shelf.get('top'));
  });

  it("assigning root of the document's root node replaces the document's root", () => {
    const view = unionView({ name: 'Bob', age: 30 });
    const context = createContext(view.root as Person);
    context.root = 'just a string now';
    expect(view.root).toBe('just a string now');
    expect(context.root).toBe('just a string now');
  });

  it('a node that is not in a tree yet cannot be replaced', () => {
    const loose = new Person({ name: 'Eve', age: 20 });
    const context = createContext(loose);
    expect(context.root).toBe(loose);
    expect(() => {
      context.root = new Person({ name: 'Mallory', age: 21 });
    }).toThrow(/not in a tree yet/);
  });
});

describe('arguments', () => {
  it('anything but a view or a node throws a coded TypeError', () => {
    for (const tree of [42, null, undefined, {}, { root: 1 }, [new Items([])]]) {
      let thrown: unknown;
      try {
        createContext(tree as never);
      } catch (e) {
        thrown = e;
      }
      expect(thrown, String(tree)).toBeInstanceOf(TypeError);
      expect(thrown).toMatchObject({
        code: 'INVALID_INPUT',
        message: expect.stringMatching(/^INVALID_INPUT: createContext\(\) takes a tree view or a tree node/),
      });
    }
  });
});

describe('the quickrealm/tree entry', () => {
  it('import and require give the same synchronous createContext, working on a real view', () => {
    const out = execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { createContext } from 'quickrealm/tree';
         import tree from 'quickrealm/tree';
         import { createRequire } from 'node:module';
         import { SchemaFactory, TreeViewConfiguration, createIndependentTreeViewAlpha } from '@fluidframework/tree/alpha';
         const require = createRequire(import.meta.url);
         const sf = new SchemaFactory('com.example.entry');
         class Note extends sf.object('Note', { text: sf.string }) {}
         const view = createIndependentTreeViewAlpha(new TreeViewConfiguration({ schema: Note }));
         view.initialize({ text: 'hi' });
         const context = createContext(view);
         context.root = context.create.Note({ text: 'bye' });
         process.stdout.write(JSON.stringify([createContext === require('quickrealm/tree').createContext,
           tree.createContext === createContext, view.root.text, context.is.Note(view.root),
           import.meta.resolve('quickrealm/tree').endsWith('/lib/tree.mjs')]));`,
      ],
      { cwd: ROOT, encoding: 'utf8' },
    );
    expect(JSON.parse(out)).toEqual([true, true, 'bye', true, true]);
  });

  it('without @fluidframework/tree installed, it says which package is missing', () => {
    const dir = mkdtempSync(join(tmpdir(), 'quickrealm-no-tree-'));
    // Hides the package from resolution, as if it had never been installed.
    const hide = join(dir, 'hide-tree.cjs');
    writeFileSync(
      hide,
      `const Module = require('node:module');
       const resolve = Module._resolveFilename;
       Module._resolveFilename = function (request, ...rest) {
         if (request === '@fluidframework/tree' || request.startsWith('@fluidframework/tree/')) {
           const error = new Error("Cannot find module '" + request + "'");
           error.code = 'MODULE_NOT_FOUND';
           throw error;
         }
         return resolve.call(this, request, ...rest);
       };`,
    );
    const out = execFileSync(
      process.execPath,
      [
        '--require',
        hide,
        '-e',
        `const { createSandboxExecutor } = require('quickrealm');
         const { createContext } = require('quickrealm/tree');
         const attempt = (f) => { try { f(); return 'no error'; } catch (e) { return [e.name, e.code, e.message]; } };
         const custom = createSandboxExecutor({ createContext: (t) => t });
         process.stdout.write(JSON.stringify([attempt(() => createContext({ root: 1, schema: 1 })),
           attempt(() => createSandboxExecutor()), typeof custom]));`,
      ],
      { cwd: ROOT, encoding: 'utf8' },
    );
    const [fromContext, fromExecutor, custom] = JSON.parse(out);
    const expected = [
      'Error',
      'INVALID_INPUT',
      'INVALID_INPUT: quickrealm/tree needs the optional peer dependency @fluidframework/tree (3.1.0 or later), which is not installed: npm install @fluidframework/tree',
    ];
    expect(fromContext).toEqual(expected);
    expect(fromExecutor).toEqual(expected);
    expect(custom).toBe('function');
  });
});
