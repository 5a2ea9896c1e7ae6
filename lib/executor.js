'use strict';
// createSandboxExecutor: a drop-in edit executor for tree-agent style APIs. Generated code gets a
// live `context` (built from the tree by `createContext`, quickrealm/tree's by default) through
// the membrane and edits real host objects. The editor form leaves rolling back to its caller, as
// tree-agent does (every edit on a fresh fork, merged only when the editor did not throw);
// `.run()` rolls back by itself wherever the tree allows it.
//
// Mistakes of the host (options, arguments, a context builder that fails) throw or reject with
// a coded error; only what the generated code did becomes a failed edit.

const { run, runSync } = require('./run.js');
const { ErrorCode, QuickrealmError, formatForModel, invalidInput } = require('./errors.js');
const { fluidTreeIfInstalled, loadFluidTree, pathOf, valueAt } = require('./fluid-tree.js');

/**
 * @typedef {import('./index.js').SandboxExecutorOptions} SandboxExecutorOptions
 * @typedef {import('./index.js').SandboxErrorInfo} SandboxErrorInfo
 * @typedef {import('./index.js').RunResult} RunResult
 * @typedef {import('./index.js').EditResult} EditResult
 */
/**
 * @template [TSchema=unknown]
 * @typedef {import('./index.js').SandboxEditExecutor<TSchema>} SandboxEditExecutor
 */
/** @typedef {{ fork(): Branch, merge(branch: Branch): void, dispose(): void }} Branch */

/** tree-agent's wording for a failed edit; true here when `.run()` undid the edit's changes. */
const EDITING_ERROR_PREFIX =
  'Running the generated code produced an error. The state of the tree will be reset to its previous state as it was before the code ran. Please try again. Here is the error: ';

/** The same sentence for a tree `.run()` could not reset (neither a branch nor a node of one). */
const EDITING_ERROR_NOT_RESET_PREFIX =
  'Running the generated code produced an error. The tree was not reset: changes the code made before the error are still in place. Please try again. Here is the error: ';

const OPTION_KEYS = ['createContext', 'globals', 'compartmentOptions', 'lockdownOptions', 'limits', 'mode'];
const CALL_OPTION_KEYS = ['signal'];

/**
 * @param {unknown} globals
 * @param {string} where the option's name, for the error
 * @returns {[string, unknown][]}
 */
function entriesOf(globals, where) {
  if (globals == null) return [];
  if (globals instanceof Map) return [...globals.entries()];
  if (typeof globals === 'object') return Object.entries(globals);
  throw invalidInput(`${where} must be a Map or an object`);
}

/**
 * A value's kind, for error messages: `null`, `an array`, `an object`, `a string`...
 * @param {unknown} value
 */
function kindOfValue(value) {
  if (value == null) return String(value);
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/**
 * The arguments of one edit; wrong ones are the host's to fix, so they throw.
 * @param {unknown} code
 * @param {unknown} callOptions
 * @returns {AbortSignal | undefined}
 */
function checkCall(code, callOptions) {
  if (typeof code !== 'string') throw invalidInput(`the edit code must be a string, got ${kindOfValue(code)}`);
  if (callOptions == null) return undefined;
  if (typeof callOptions !== 'object')
    throw invalidInput(`the edit options must be an object, got ${kindOfValue(callOptions)}`);
  for (const key of Object.keys(callOptions)) {
    if (!CALL_OPTION_KEYS.includes(key)) throw invalidInput(`unknown edit option '${key}' (known: signal)`);
  }
  const { signal } = /** @type {{ signal?: unknown }} */ (callOptions);
  if (signal == null) return undefined;
  if (!(signal instanceof AbortSignal)) throw invalidInput('signal must be an AbortSignal');
  return signal;
}

/**
 * A guest error in tree-agent's wording: the message without the name, then the location and
 * the frame.
 * @param {SandboxErrorInfo} error
 */
function locate(error) {
  return formatForModel(error, { name: false });
}

/** @param {unknown} state the tree's root (or subtree) after the edit */
function successMessage(state) {
  try {
    const json = JSON.stringify(state);
    return json === undefined
      ? 'The code ran successfully.'
      : `The code ran successfully. The new state of the tree is: ${json}`;
  } catch {
    return 'The code ran successfully.';
  }
}

/** @param {unknown} tree */
function rootOf(tree) {
  return tree !== null && typeof tree === 'object' && 'root' in tree ? tree.root : tree;
}

/**
 * @param {unknown} tree
 * @returns {tree is Branch}
 */
function isBranch(tree) {
  const t = /** @type {Partial<Branch> | null} */ (tree);
  return (
    t !== null &&
    typeof t === 'object' &&
    typeof t.fork === 'function' &&
    typeof t.merge === 'function' &&
    typeof t.dispose === 'function'
  );
}

/**
 * @fluidframework/tree when `tree` may be one of its nodes (an instance of some class) and the
 * package is installed; plain objects and arrays never load it.
 * @param {unknown} tree
 */
function fluidForNode(tree) {
  if (tree === null || typeof tree !== 'object') return null;
  const proto = Object.getPrototypeOf(tree);
  if (proto === null || proto === Object.prototype || proto === Array.prototype) return null;
  return fluidTreeIfInstalled();
}

/** @param {unknown} tree */
function isTreeNode(tree) {
  const fluid = fluidForNode(tree);
  return fluid !== null && tree instanceof fluid.TreeNode;
}

/**
 * How to edit `tree` on a fork: the branch to fork, where the tree is in a fork of it, and what
 * to describe after the merge. Null for a tree that no branch holds (plain objects, nodes not
 * in a tree yet).
 * @param {unknown} tree
 * @returns {{ branch: Branch, find(fork: Branch): unknown, state(): unknown } | null}
 */
function forkPlan(tree) {
  const fluid = fluidForNode(tree);
  if (!fluid || !(tree instanceof fluid.TreeNode)) {
    return isBranch(tree) ? { branch: tree, find: (fork) => fork, state: () => rootOf(tree) } : null;
  }
  const view = fluid.TreeAlpha.context(tree);
  if (!view.isView() || !isBranch(view)) return null;
  // The node's place, found again in the fork and, after the merge, in the view (where the edit
  // may have replaced the node).
  const path = pathOf(fluid, tree);
  return {
    branch: view,
    find: (fork) => valueAt(fluid, rootOf(fork), path),
    state: () => valueAt(fluid, rootOf(view), path),
  };
}

/**
 * A drop-in replacement for the SES edit executor, with a separate heap and hard limits.
 * @template [TSchema=unknown]
 * @param {SandboxExecutorOptions} [options]
 * @returns {SandboxEditExecutor<TSchema>}
 */
function createSandboxExecutor(options = {}) {
  if (options === null || typeof options !== 'object')
    throw invalidInput('createSandboxExecutor() takes an options object');
  for (const key of Object.keys(options)) {
    if (!OPTION_KEYS.includes(key)) throw invalidInput(`unknown createSandboxExecutor() option '${key}'`);
  }
  const compartmentOptions = options.compartmentOptions ?? {};
  if (compartmentOptions === null || typeof compartmentOptions !== 'object')
    throw invalidInput('compartmentOptions must be an object');
  const extra = [
    ...entriesOf(options.globals, 'globals'),
    ...entriesOf(compartmentOptions.globals, 'compartmentOptions.globals'),
  ];
  for (const [name] of extra) {
    if (name === 'context') {
      // The SES executor's wording, kept for drop-in parity.
      throw new QuickrealmError(
        ErrorCode.InvalidInput,
        "The global 'context' is reserved by the executor and cannot be provided in globals",
      );
    }
  }
  if (options.createContext != null && typeof options.createContext !== 'function') {
    throw invalidInput(
      `createContext must be a function that builds \`context\` from the tree, got ${kindOfValue(options.createContext)}`,
    );
  }
  // Without a builder of its own, the executor uses quickrealm/tree's: @fluidframework/tree must
  // be there now, not at the first edit.
  if (options.createContext == null) loadFluidTree();
  // Called with whatever tree the host passes; a builder that refuses it throws to the host.
  const createContext = /** @type {(tree: unknown) => unknown} */ (
    options.createContext ?? require('./tree-context.js').createContext
  );
  const lockdown = options.lockdownOptions ?? {};
  if (lockdown === null || typeof lockdown !== 'object') throw invalidInput('lockdownOptions must be an object');
  // Host mistakes in limits or mode are the caller's to fix: refuse them now, so that a model is
  // never told to retry an edit that could not run whatever it wrote.
  const probe = runSync('return 0', { mode: options.mode ?? 'function', limits: options.limits, console: 'none' });
  if (!probe.ok && probe.error.code === ErrorCode.InvalidInput) throw invalidInput(probe.error.message);
  const consoleMode = lockdown.consoleTaming === 'unsafe' ? 'inherit' : 'capture';
  const fullStacks = lockdown.errorTaming === 'unsafe';

  /**
   * Builds the edit's `context`: a builder that throws or returns no object is the host's
   * problem, so its error goes to the host as it is.
   * @param {unknown} tree
   * @returns {object}
   */
  const contextFor = (tree) => {
    const context = createContext(tree);
    if (context === null || (typeof context !== 'object' && typeof context !== 'function')) {
      throw invalidInput(`createContext must return an object, got ${kindOfValue(context)}`);
    }
    return context;
  };

  /**
   * Runs the code with `context`; resolves with the guest's outcome, never rejects.
   * @param {object} context
   * @param {string} code
   * @param {AbortSignal | undefined} signal
   * @returns {Promise<RunResult>}
   */
  const runWith = (context, code, signal) => {
    /** @type {Record<string, unknown>} */
    const globals = Object.fromEntries(extra);
    globals.context = context;
    return run(code, {
      mode: options.mode ?? 'function',
      globals,
      limits: options.limits,
      console: consoleMode,
      signal,
    });
  };

  /**
   * @param {unknown} tree
   * @param {string} code
   * @param {{ signal?: AbortSignal }} [callOptions]
   * @returns {Promise<void>}
   */
  const editor = async (tree, code, callOptions) => {
    const signal = checkCall(code, callOptions);
    const result = await runWith(contextFor(tree), code, signal);
    if (result.ok) return;
    const info = /** @type {SandboxErrorInfo} */ (result.error);
    const error = new QuickrealmError(info.code, locate(info));
    error.name = info.name;
    error.stack =
      fullStacks && info.stack ? `${error.name}: ${error.message}\n${info.stack}` : `${error.name}: ${error.message}`;
    throw error;
  };

  /**
   * One edit that leaves the tree as it was when it fails, where the tree allows it: a view or
   * branch, or a node in one, is edited on a fork of that branch, merged only on success (the
   * branch itself stays untouched until then, and edits the host makes to it meanwhile are
   * kept). Anything else is edited in place.
   * @param {unknown} tree
   * @param {string} code
   * @param {AbortSignal | undefined} signal
   * @returns {Promise<{ result: RunResult, reset: boolean, state: () => unknown }>}
   */
  const editAtomically = async (tree, code, signal) => {
    const plan = forkPlan(tree);
    if (!plan) {
      const result = await runWith(contextFor(tree), code, signal);
      return { result, reset: false, state: () => (isTreeNode(tree) ? tree : rootOf(tree)) };
    }
    const fork = plan.branch.fork();
    /** @type {RunResult} */
    let result;
    try {
      result = await runWith(contextFor(plan.find(fork)), code, signal);
    } catch (e) {
      fork.dispose();
      throw e;
    }
    if (result.ok) plan.branch.merge(fork);
    else fork.dispose();
    return { result, reset: true, state: plan.state };
  };

  /**
   * @param {unknown} tree
   * @param {string} code
   * @param {{ signal?: AbortSignal }} [callOptions]
   * @returns {Promise<EditResult & { result: RunResult }>}
   */
  editor.run = async (tree, code, callOptions) => {
    const signal = checkCall(code, callOptions);
    const { result, reset, state } = await editAtomically(tree, code, signal);
    if (result.ok) return { type: 'success', message: successMessage(state()), result };
    const info = /** @type {SandboxErrorInfo} */ (result.error);
    const prefix = reset ? EDITING_ERROR_PREFIX : EDITING_ERROR_NOT_RESET_PREFIX;
    return { type: 'editingError', message: prefix + locate(info), result };
  };
  return editor;
}

module.exports = { createSandboxExecutor, EDITING_ERROR_PREFIX, EDITING_ERROR_NOT_RESET_PREFIX };
