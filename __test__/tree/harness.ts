// A small stand-in for tree-agent, written from its public contract: `createContext(tree)` for
// the edit code, and an agent loop that runs every edit on its own fork and merges only edits
// that did not throw. Used to drive `createSandboxExecutor` against a real SharedTree.
import {
  NodeKind,
  SchemaFactory,
  Tree,
  TreeAlpha,
  TreeNode,
  TreeViewConfiguration,
  createIndependentTreeViewAlpha,
  type ImplicitFieldSchema,
  type TreeNodeSchema,
  type TreeViewAlpha,
} from '@fluidframework/tree/alpha';
import { expect } from 'vitest';
import { createSandboxExecutor, type SandboxExecutorOptions } from '../../lib/index.js';

/** tree-agent's fixed wording for a failed edit; the error's message follows it. */
export const EDITING_ERROR_PREFIX =
  'Running the generated code produced an error. The state of the tree will be reset to its previous state as it was before the code ran. Please try again. Here is the error: ';

/** What a test's agent loop reports for one edit, shaped like tree-agent's tool results. */
export interface EditOutcome {
  type: 'success' | 'editingError' | 'tooManyEditsError';
  message: string;
}

/** What `context` offers the edit code. */
export interface TreeContext {
  root: unknown;
  create: Record<string, (content: unknown) => unknown>;
  is: Record<string, (value: unknown) => boolean>;
  isArray(value: unknown): boolean;
  isMap(value: unknown): boolean;
  parent(node: unknown): TreeNode | undefined;
  key(node: unknown): string | number | undefined;
}

/** The part of a tree view the harness relies on. */
interface ViewLike {
  root: unknown;
  readonly schema: ImplicitFieldSchema;
}

function isSchema(x: unknown): x is TreeNodeSchema {
  return typeof x === 'function' && typeof (x as { identifier?: unknown }).identifier === 'string';
}

/** Schema entries of a field: a FieldSchema, a list of (possibly lazy) types, or one type. */
function typesOfField(field: unknown): TreeNodeSchema[] {
  if (field !== null && typeof field === 'object' && 'allowedTypeSet' in field) {
    return [...(field as { allowedTypeSet: ReadonlySet<TreeNodeSchema> }).allowedTypeSet];
  }
  const items = Array.isArray(field) ? field : [field];
  const out: TreeNodeSchema[] = [];
  for (const item of items) {
    const t = isSchema(item) ? item : typeof item === 'function' ? (item as () => unknown)() : undefined;
    if (isSchema(t)) out.push(t);
  }
  return out;
}

/** Every named, non-leaf node schema reachable from the given types, keyed by its short name. */
function namedTypes(start: TreeNodeSchema[]): Map<string, TreeNodeSchema> {
  const named = new Map<string, TreeNodeSchema>();
  const seen = new Set<TreeNodeSchema>();
  const visit = (s: TreeNodeSchema) => {
    if (seen.has(s)) return;
    seen.add(s);
    if (s.kind !== NodeKind.Leaf) {
      const short = s.identifier.slice(s.identifier.lastIndexOf('.') + 1);
      if (/^[A-Za-z_$][\w$]*$/.test(short)) named.set(short, s);
    }
    for (const child of s.childTypes) visit(child);
  };
  for (const s of start) visit(s);
  return named;
}

function kindOf(value: unknown): NodeKind | undefined {
  return value instanceof TreeNode ? Tree.schema(value).kind : undefined;
}

function isView(tree: unknown): tree is ViewLike {
  return tree !== null && typeof tree === 'object' && !(tree instanceof TreeNode) && 'root' in tree && 'schema' in tree;
}

/**
 * Builds `context` for a tree view (root = the view's root) or a subtree node (root = that node;
 * assigning it replaces the node in its parent).
 */
export function createContext(tree: unknown): TreeContext {
  let start: TreeNodeSchema[];
  let readRoot: () => unknown;
  let writeRoot: (value: unknown) => void;
  if (isView(tree)) {
    start = typesOfField(tree.schema);
    readRoot = () => tree.root;
    writeRoot = (value) => {
      tree.root = value;
    };
  } else if (tree instanceof TreeNode) {
    start = [Tree.schema(tree)];
    let node: TreeNode = tree;
    readRoot = () => node;
    writeRoot = (value) => {
      const parent = Tree.parent(node);
      const key = Tree.key(node);
      if (parent === undefined)
        throw new Error('The root node of the document cannot be replaced from a subtree edit.');
      const kind = Tree.schema(parent).kind;
      const slot = parent as unknown as Record<string | number, unknown> & {
        set(k: string, v: unknown): void;
        get(k: string): unknown;
        removeAt(i: number): void;
        insertAt(i: number, v: unknown): void;
      };
      let replaced: unknown;
      if (kind === NodeKind.Map) {
        slot.set(key as string, value);
        replaced = slot.get(key as string);
      } else if (kind === NodeKind.Array) {
        Tree.runTransaction(parent, () => {
          slot.removeAt(key as number);
          slot.insertAt(key as number, value);
        });
        replaced = slot[key];
      } else {
        slot[key] = value;
        replaced = slot[key];
      }
      if (!(replaced instanceof TreeNode)) throw new Error('The replacement for a subtree root must be a node.');
      node = replaced;
    };
  } else {
    throw new TypeError('createContext needs a tree view or a tree node');
  }

  const create: Record<string, (content: unknown) => unknown> = {};
  const is: Record<string, (value: unknown) => boolean> = {};
  for (const [name, schema] of namedTypes(start)) {
    create[name] = (content: unknown) =>
      TreeAlpha.tagContentSchema(schema, content as Parameters<typeof TreeAlpha.tagContentSchema>[1]);
    is[name] = (value: unknown) => Tree.is(value, schema);
  }
  return {
    get root() {
      return readRoot();
    },
    set root(value: unknown) {
      writeRoot(value);
    },
    create,
    is,
    isArray: (value) => kindOf(value) === NodeKind.Array,
    isMap: (value) => kindOf(value) === NodeKind.Map,
    parent: (node) => (node instanceof TreeNode ? Tree.parent(node) : undefined),
    key: (node) => (node instanceof TreeNode ? Tree.key(node) : undefined),
  };
}

/** tree-agent's editor shape. */
export type AsyncEditor = (tree: unknown, code: string) => Promise<void>;

function describeState(view: ViewLike): string {
  return `The edit was applied. The tree now looks like this:\n${JSON.stringify(view.root, null, 2)}`;
}

/**
 * One edit the way tree-agent applies it: on a fresh fork of `branch`, merged when the editor
 * returned, discarded when it threw.
 */
export async function applyEdit<T extends ImplicitFieldSchema>(
  branch: TreeViewAlpha<T>,
  editor: AsyncEditor,
  code: string,
): Promise<EditOutcome> {
  const fork = branch.fork();
  try {
    await editor(fork, code);
  } catch (error) {
    fork.dispose();
    const message = error instanceof Error ? error.message : String(error);
    return { type: 'editingError', message: EDITING_ERROR_PREFIX + message };
  }
  branch.merge(fork);
  return { type: 'success', message: describeState(branch) };
}

/**
 * One query: edits run on forks of a query branch (itself a fork of `view`); at the end the query
 * branch is merged unless the last edit failed. At most `maxEdits` edits are applied.
 */
export async function runQuery<T extends ImplicitFieldSchema>(
  view: TreeViewAlpha<T>,
  editor: AsyncEditor,
  edits: string[],
  maxEdits = 20,
): Promise<{ results: EditOutcome[]; merged: boolean }> {
  const query = view.fork();
  const results: EditOutcome[] = [];
  let lastFailed = false;
  for (const code of edits) {
    if (results.length >= maxEdits) {
      results.push({ type: 'tooManyEditsError', message: `The maximum of ${maxEdits} edits per query was reached.` });
      break;
    }
    const outcome = await applyEdit(query, editor, code);
    lastFailed = outcome.type === 'editingError';
    results.push(outcome);
  }
  const merged = !lastFailed;
  if (merged) view.merge(query);
  else query.dispose();
  return { results, merged };
}

// ---- a schema and views the specs share --------------------------------------------------------

export const sf = new SchemaFactory('com.example.grocery');

export class Item extends sf.object('Item', {
  name: sf.string,
  price: sf.number,
  note: sf.optional(sf.string),
}) {}
export class Items extends sf.array('Items', Item) {}
export class Prices extends sf.map('Prices', sf.number) {}
export class GroceryList extends sf.object('GroceryList', { title: sf.string, items: Items }) {}
export class Lists extends sf.array('Lists', GroceryList) {}
export class Person extends sf.object('Person', { name: sf.string, age: sf.number }) {}
export class Numbers extends sf.array('Numbers', sf.number) {}
export class Store extends sf.object('Store', {
  owner: Person,
  lists: Lists,
  prices: Prices,
  numbers: Numbers,
}) {}

export const storeConfig = new TreeViewConfiguration({ schema: Store });

/** A store with two lists, a few prices and numbers. */
export function storeView(): TreeViewAlpha<typeof Store> {
  const view = createIndependentTreeViewAlpha(storeConfig);
  view.initialize({
    owner: { name: 'Alice', age: 25 },
    lists: [
      {
        title: 'Weekly',
        items: [
          { name: 'Milk', price: 2.5 },
          { name: 'Bread', price: 1.75 },
          { name: 'Cheese', price: 6 },
          { name: 'Apples', price: 3.2 },
        ],
      },
      { title: 'Party', items: [{ name: 'Chips', price: 2 }] },
    ],
    prices: { milk: 2.5, bread: 1.75 },
    numbers: [5, 3, 9, 1],
  });
  return view;
}

/** A view whose root is a primitive or a Person. */
export function unionView(
  initial: string | { name: string; age: number } = 'Hello',
): TreeViewAlpha<readonly [typeof sf.string, typeof Person]> {
  const view = createIndependentTreeViewAlpha(new TreeViewConfiguration({ schema: [sf.string, Person] as const }));
  view.initialize(typeof initial === 'string' ? initial : new Person(initial));
  return view;
}

/** The tree's content as JSON, for before/after comparisons. */
export function snapshot(view: { root: unknown }): string {
  return JSON.stringify(view.root);
}

/** The executor the tree specs use: small limits keep failures fast. */
export function treeExecutor(options: SandboxExecutorOptions = {}) {
  return createSandboxExecutor({
    createContext,
    limits: { timeoutMs: 300, memoryBytes: 16 * 1024 * 1024 },
    ...options,
  });
}

/** Asserts an edit failed with tree-agent's wording and the given error text right after it. */
export function expectEditingError(outcome: EditOutcome, errorText: string | RegExp): void {
  expect(outcome.type).toBe('editingError');
  expect(outcome.message.startsWith(EDITING_ERROR_PREFIX)).toBe(true);
  const rest = outcome.message.slice(EDITING_ERROR_PREFIX.length);
  if (typeof errorText === 'string') expect(rest.startsWith(errorText), rest).toBe(true);
  else expect(rest).toMatch(errorText);
}
