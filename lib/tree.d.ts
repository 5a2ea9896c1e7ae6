// quickrealm/tree: tree-agent's `context` for model-written edit code, built from a SharedTree
// view or subtree node. Needs the optional peer dependency @fluidframework/tree (3.1.0 or later).

import type { TreeNode } from '@fluidframework/tree';

/** A tree view or branch as `createContext` uses it: its root and its view schema. */
export interface TreeViewLike {
  root: unknown;
  readonly schema: unknown;
}

/** What edit code reaches as `context`. */
export interface TreeContext {
  /**
   * The view's root, or the subtree node. Assigning replaces the view's root, or the node in its
   * parent (the document's root when the node is the root).
   */
  root: unknown;
  /**
   * One builder per named node type of the schema (by the name after its scope: `Item` for
   * `com.example.Item`): returns the content tagged with its type, insertable any number of times.
   */
  readonly create: Record<string, (content: unknown) => unknown>;
  /** Type guards with the same keys as `create`. */
  readonly is: Record<string, (value: unknown) => boolean>;
  /** True for an array node (`Array.isArray` is false for one). */
  isArray(value: unknown): boolean;
  /** True for a map node (which is not `instanceof Map`). */
  isMap(value: unknown): boolean;
  /** The node's parent node; undefined at the root and for anything that is not a node. */
  parent(node: unknown): TreeNode | undefined;
  /**
   * The node's property name, map key or array index (`Tree.key`; for the root, the key of the
   * root field); undefined for non-nodes.
   */
  key(node: unknown): string | number | undefined;
}

/**
 * Builds `context` for a tree view (or branch / fork) or a subtree node. Synchronous: it loads
 * `@fluidframework/tree` with `require()` (Node.js 20.19+ or 22.12+), the same module instance an
 * application's `import` gets. Throws (code INVALID_INPUT) when the package is missing or `tree`
 * is neither a view nor a node.
 */
export function createContext(tree: TreeViewLike | TreeNode): TreeContext;
