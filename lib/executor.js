'use strict';
// createSandboxExecutor: a drop-in edit executor for tree-agent style APIs. Generated code gets a
// live `context` (built from the tree by `createContext`) through the membrane and edits real
// host objects. Failed edits are rolled back by the caller's own mechanism: tree-agent runs
// every edit on a fresh fork and merges it only when the editor did not throw.

const { run, runSync } = require('./run.js');
const { QuickrealmError, failedResult, formatForModel, invalidInput } = require('./errors.js');

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

const EDITING_ERROR_PREFIX =
  'Running the generated code produced an error. The state of the tree will be reset to its previous state as it was before the code ran. Please try again. Here is the error: ';

const OPTION_KEYS = ['createContext', 'globals', 'compartmentOptions', 'lockdownOptions', 'limits', 'mode'];

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
 * tree-agent's own createContext, when it is installed.
 * @returns {((tree: unknown) => object) | null}
 */
function defaultCreateContext() {
  const candidates = ['@fluidframework/tree-agent/alpha', '@fluidframework/tree-agent'];
  for (const id of candidates) {
    try {
      const mod = require(id);
      if (typeof mod.createContext === 'function') return mod.createContext;
    } catch {
      // not installed (or ESM-only): try the next one
    }
  }
  return null;
}

/**
 * A guest error in tree-agent's wording: the message without the name, then the location and
 * the frame.
 * @param {SandboxErrorInfo} error
 */
function locate(error) {
  return formatForModel(error, { name: false });
}

/** @param {unknown} tree */
function successMessage(tree) {
  try {
    const root = tree !== null && typeof tree === 'object' && 'root' in tree ? tree.root : tree;
    const json = JSON.stringify(root);
    return json === undefined
      ? 'The code ran successfully.'
      : `The code ran successfully. The new state of the tree is: ${json}`;
  } catch {
    return 'The code ran successfully.';
  }
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
        'INVALID_INPUT',
        "The global 'context' is reserved by the executor and cannot be provided in globals",
      );
    }
  }
  const createContext = options.createContext ?? defaultCreateContext();
  if (typeof createContext !== 'function') {
    throw new QuickrealmError(
      'INVALID_INPUT',
      'createSandboxExecutor needs a createContext option: @fluidframework/tree-agent is not installed, so no default is available',
    );
  }
  // Host mistakes in limits or mode are the caller's to fix: refuse them now, so that a model is
  // never told to retry an edit that could not run whatever it wrote.
  const probe = runSync('return 0', { mode: options.mode ?? 'function', limits: options.limits, console: 'none' });
  if (!probe.ok && probe.error.code === 'INVALID_INPUT') throw invalidInput(probe.error.message);
  const lockdown = options.lockdownOptions ?? {};
  if (lockdown === null || typeof lockdown !== 'object') throw invalidInput('lockdownOptions must be an object');
  const consoleMode = lockdown.consoleTaming === 'unsafe' ? 'inherit' : 'capture';
  const fullStacks = lockdown.errorTaming === 'unsafe';

  /**
   * @param {unknown} tree
   * @param {string} code
   * @param {{ signal?: AbortSignal } | undefined} callOptions
   * @returns {Promise<RunResult>}
   */
  const runEdit = async (tree, code, callOptions) => {
    /** @type {Record<string, unknown>} */
    const globals = Object.fromEntries(extra);
    globals.context = createContext(tree);
    const signal = callOptions?.signal ?? undefined;
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
    const result = await runEdit(tree, code, callOptions);
    if (result.ok) return;
    const info = /** @type {SandboxErrorInfo} */ (result.error);
    const error = new QuickrealmError(info.code, locate(info));
    error.name = info.name;
    error.stack =
      fullStacks && info.stack ? `${error.name}: ${error.message}\n${info.stack}` : `${error.name}: ${error.message}`;
    throw error;
  };

  /**
   * @param {unknown} tree
   * @param {string} code
   * @param {{ signal?: AbortSignal }} [callOptions]
   * @returns {Promise<EditResult & { result: RunResult }>}
   */
  editor.run = async (tree, code, callOptions) => {
    /** @type {RunResult} */
    let result;
    try {
      result = await runEdit(tree, code, callOptions);
    } catch (e) {
      // createContext itself failed: still an editing error, never a throw.
      const message = e instanceof Error ? e.message : String(e);
      result = failedResult('INVALID_INPUT', 'Error', message);
    }
    if (result.ok) return { type: 'success', message: successMessage(tree), result };
    const info = /** @type {SandboxErrorInfo} */ (result.error);
    return { type: 'editingError', message: EDITING_ERROR_PREFIX + locate(info), result };
  };
  return editor;
}

module.exports = { createSandboxExecutor, EDITING_ERROR_PREFIX };
