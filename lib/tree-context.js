'use strict';
// createContext for quickrealm/tree: the `context` that tree-agent gives model-written edit code, built from a
// SharedTree view or subtree node with @fluidframework/tree's public API (3.1.0 or later).

const { childAt, loadFluidTree } = require('./fluid-tree.js');
const { invalidInput } = require('./errors.js');

/**
 * @typedef {import('./fluid-tree.js').FluidTree} FluidTree
 * @typedef {import('@fluidframework/tree/alpha').TreeNode} TreeNode
 * @typedef {import('@fluidframework/tree/alpha').TreeNodeSchema} TreeNodeSchema
 * @typedef {import('@fluidframework/tree/alpha').ImplicitFieldSchema} ImplicitFieldSchema
 * @typedef {import('./tree.js').TreeContext} TreeContext
 */

/** A tree view or branch: what `createContext` needs of one. */
/** @typedef {{ root: unknown, readonly schema: ImplicitFieldSchema }} ViewLike */

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/**
 * Every named, non-leaf node type of a schema, by short name (the identifier after its scope).
 * Cached per schema object: forks of one view share it, and each edit builds a context.
 * @type {WeakMap<object, Map<string, TreeNodeSchema>>}
 */
const typesBySchema = new WeakMap();

/**
 * @param {FluidTree} fluid
 * @param {ImplicitFieldSchema} schema
 * @returns {Map<string, TreeNodeSchema>}
 */
function namedTypes(fluid, schema) {
  const cached = typesBySchema.get(schema);
  if (cached) return cached;
  // The library's own walk: lazy types, annotated types and every nested field included.
  const { definitions } = new fluid.TreeViewConfigurationAlpha({ schema });
  /** @type {Map<string, TreeNodeSchema>} */
  const named = new Map();
  /** @type {Set<string>} */
  const ambiguous = new Set();
  for (const [identifier, nodeSchema] of definitions) {
    if (nodeSchema.kind === fluid.NodeKind.Leaf) continue;
    const name = identifier.slice(identifier.lastIndexOf('.') + 1);
    if (!IDENTIFIER.test(name)) continue; // structural types such as Array<[...]> have no name
    // Two scopes with one short name: a builder for either would be a guess.
    if (named.has(name)) ambiguous.add(name);
    named.set(name, nodeSchema);
  }
  for (const name of ambiguous) named.delete(name);
  typesBySchema.set(schema, named);
  return named;
}

/**
 * @param {FluidTree} fluid
 * @param {unknown} value
 * @returns {value is ViewLike}
 */
function isView(fluid, value) {
  return (
    value !== null &&
    typeof value === 'object' &&
    !(value instanceof fluid.TreeNode) &&
    'root' in value &&
    'schema' in value
  );
}

/**
 * Puts `value` where the child of `parent` at `key` is.
 * @param {FluidTree} fluid
 * @param {TreeNode} parent
 * @param {string | number} key
 * @param {unknown} value
 */
function replaceChild(fluid, parent, key, value) {
  const slot = /** @type {any} */ (parent);
  const kind = fluid.Tree.schema(parent).kind;
  if (kind === fluid.NodeKind.Map) {
    slot.set(key, value);
  } else if (kind === fluid.NodeKind.Array) {
    // Insert first: content the schema refuses throws before anything changed.
    slot.insertAt(Number(key) + 1, value);
    slot.removeAt(Number(key));
  } else {
    slot[key] = value;
  }
}

/**
 * Root access for a subtree node: reads the node; assigning replaces it in its parent (or, for
 * the root node of a document, replaces the document's root).
 * @param {FluidTree} fluid
 * @param {TreeNode} node
 * @returns {{ read(): unknown, write(value: unknown): void }}
 */
function subtreeRoot(fluid, node) {
  /** @type {unknown} */
  let current = node;
  /** @type {{ parent: TreeNode, key: string | number } | undefined} */
  let place;
  /** @type {{ root: unknown } | undefined} */
  let document;
  const locate = () => {
    if (!(current instanceof fluid.TreeNode)) return;
    const parent = fluid.Tree.parent(current);
    if (parent !== undefined) {
      place = { parent, key: fluid.Tree.key(current) };
      document = undefined;
      return;
    }
    const context = fluid.TreeAlpha.context(current);
    if (context.isView()) {
      place = undefined;
      // The view holding the node: its typed `root` is only declared once its schema is known,
      // but every view has one.
      document = /** @type {{ root: unknown }} */ (/** @type {unknown} */ (context));
    }
  };
  locate();
  return {
    read: () => current,
    write: (value) => {
      if (place) {
        replaceChild(fluid, place.parent, place.key, value);
        current = childAt(fluid, place.parent, place.key);
      } else if (document) {
        document.root = value;
        current = document.root;
      } else {
        throw new Error('This node is not in a tree yet, so it cannot be replaced; edit its fields instead.');
      }
      locate();
    },
  };
}

/**
 * The `context` tree-agent gives edit code, for a tree view (root: the view's root) or a subtree
 * node (root: that node; assigning it replaces the node in its parent).
 * @param {unknown} tree a TreeView / branch, or a TreeNode
 * @returns {TreeContext}
 */
function createContext(tree) {
  const fluid = loadFluidTree();
  const { Tree, TreeAlpha, TreeNode, NodeKind } = fluid;
  /** @type {ImplicitFieldSchema} */
  let schema;
  /** @type {{ read(): unknown, write(value: unknown): void }} */
  let root;
  if (tree instanceof TreeNode) {
    schema = Tree.schema(tree);
    root = subtreeRoot(fluid, tree);
  } else if (isView(fluid, tree)) {
    schema = tree.schema;
    root = {
      read: () => tree.root,
      write: (value) => {
        tree.root = value;
      },
    };
  } else {
    throw invalidInput(
      'createContext() takes a tree view or a tree node of @fluidframework/tree (a node from a second copy of the package is not one)',
    );
  }

  /** @type {Record<string, (content: unknown) => unknown>} */
  const create = {};
  /** @type {Record<string, (value: unknown) => boolean>} */
  const is = {};
  for (const [name, nodeSchema] of namedTypes(fluid, schema)) {
    create[name] = (content) => TreeAlpha.tagContentSchema(nodeSchema, /** @type {never} */ (content));
    is[name] = (value) => Tree.is(value, nodeSchema);
  }
  /** @param {unknown} value */
  const kindOf = (value) => (value instanceof TreeNode ? Tree.schema(value).kind : undefined);
  return {
    get root() {
      return root.read();
    },
    set root(value) {
      root.write(value);
    },
    create,
    is,
    isArray: (value) => kindOf(value) === NodeKind.Array,
    isMap: (value) => kindOf(value) === NodeKind.Map,
    parent: (node) => (node instanceof TreeNode ? Tree.parent(node) : undefined),
    key: (node) => (node instanceof TreeNode ? Tree.key(node) : undefined),
  };
}

module.exports = { createContext };
