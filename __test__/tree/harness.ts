// A small stand-in for tree-agent's agent loop, written from its public contract: every edit
// runs on its own fork and is merged only when the editor did not throw. The edit code's
// `context` comes from quickrealm/tree (the executor's default builder). Used to drive
// `createSandboxExecutor` against a real SharedTree.
import {
  SchemaFactory,
  TreeViewConfiguration,
  createIndependentTreeViewAlpha,
  type ImplicitFieldSchema,
  type TreeViewAlpha,
} from '@fluidframework/tree/alpha';
import { expect } from 'vitest';
import { createSandboxExecutor, type SandboxExecutorOptions } from '../../lib/index.js';

export { createContext } from '../../lib/tree.js';

/** tree-agent's fixed wording for a failed edit; the error's message follows it. */
export const EDITING_ERROR_PREFIX =
  'Running the generated code produced an error. The state of the tree will be reset to its previous state as it was before the code ran. Please try again. Here is the error: ';

/** What a test's agent loop reports for one edit, shaped like tree-agent's tool results. */
export interface EditOutcome {
  type: 'success' | 'editingError' | 'tooManyEditsError';
  message: string;
}

/** The part of a tree view the harness relies on. */
interface ViewLike {
  root: unknown;
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

/** The executor the tree specs use (quickrealm/tree's context): small limits keep failures fast. */
export function treeExecutor(options: SandboxExecutorOptions = {}) {
  return createSandboxExecutor({
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
