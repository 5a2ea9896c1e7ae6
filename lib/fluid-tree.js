'use strict';
// Loads @fluidframework/tree, an optional peer dependency, on first use. The package is ES
// modules only; Node.js 20.19+ and 22.12+ require() an ES module synchronously, and it is the
// same module instance that `import` gives the application, so node classes and schema match.

const { ErrorCode, QuickrealmError } = require('./errors.js');

/**
 * @typedef {typeof import('@fluidframework/tree/alpha')} FluidTree
 * @typedef {import('@fluidframework/tree/alpha').TreeNode} TreeNode
 */

const PACKAGE = '@fluidframework/tree';
const ENTRY = '@fluidframework/tree/alpha';

/** @type {FluidTree | undefined} */
let loaded;
/** Set once loading failed, so that optional checks do not retry on every call. */
let unavailable = false;

/**
 * The `@fluidframework/tree/alpha` namespace; throws a QuickrealmError (code INVALID_INPUT)
 * naming the package when it is not installed or this Node.js cannot require() it.
 * @returns {FluidTree}
 */
function loadFluidTree() {
  if (loaded) return loaded;
  try {
    loaded = /** @type {FluidTree} */ (require(ENTRY));
  } catch (e) {
    const error = /** @type {NodeJS.ErrnoException} */ (e);
    if (error?.code === ErrorCode.ModuleNotFound && String(error.message).includes(`'${ENTRY}'`)) {
      throw new QuickrealmError(
        ErrorCode.InvalidInput,
        `INVALID_INPUT: quickrealm/tree needs the optional peer dependency ${PACKAGE} (3.1.0 or later), which is not installed: npm install ${PACKAGE}`,
      );
    }
    if (error?.code === 'ERR_REQUIRE_ESM') {
      throw new QuickrealmError(
        ErrorCode.InvalidInput,
        `INVALID_INPUT: quickrealm/tree loads ${PACKAGE}, an ES-module-only package, with require(); this needs Node.js 20.19+ or 22.12+`,
      );
    }
    throw e;
  }
  return loaded;
}

/**
 * The namespace when the package can be loaded, otherwise null (for checks that only matter
 * when the package is in use).
 * @returns {FluidTree | null}
 */
function fluidTreeIfInstalled() {
  if (unavailable) return null;
  try {
    return loadFluidTree();
  } catch {
    unavailable = true;
    return null;
  }
}

/**
 * The child of `parent` at `key`, read the way the parent's kind stores it.
 * @param {FluidTree} fluid
 * @param {TreeNode} parent
 * @param {string | number} key
 * @returns {unknown}
 */
function childAt(fluid, parent, key) {
  const slot = /** @type {any} */ (parent);
  return fluid.Tree.schema(parent).kind === fluid.NodeKind.Map ? slot.get(key) : slot[key];
}

/**
 * The keys (property names, map keys, array indexes) from the root of its tree down to `node`.
 * @param {FluidTree} fluid
 * @param {TreeNode} node
 * @returns {(string | number)[]}
 */
function pathOf(fluid, node) {
  /** @type {(string | number)[]} */
  const path = [];
  for (
    let at = node, parent = fluid.Tree.parent(at);
    parent !== undefined;
    at = parent, parent = fluid.Tree.parent(at)
  ) {
    path.unshift(fluid.Tree.key(at));
  }
  return path;
}

/**
 * What is at `path` under `root` (undefined where the path leads nowhere): the same place in
 * another branch of the tree.
 * @param {FluidTree} fluid
 * @param {unknown} root
 * @param {(string | number)[]} path
 * @returns {unknown}
 */
function valueAt(fluid, root, path) {
  let value = root;
  for (const key of path) {
    if (!(value instanceof fluid.TreeNode)) return undefined;
    value = childAt(fluid, value, key);
  }
  return value;
}

module.exports = { loadFluidTree, fluidTreeIfInstalled, childAt, pathOf, valueAt };
