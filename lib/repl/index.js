'use strict';
// Persistent realms: a realm whose top-level bindings, and everything reachable from them, are
// kept from one evaluation to the next, and can be snapshotted and restored elsewhere.
//
// Between evaluations the realm is only its state: bytes the engine wrote and sealed with a
// key of this process (HMAC-SHA256). Each evaluation derives a fresh realm from the frozen
// template, reads the state into it, runs the cell and writes the state back, on any worker
// thread. A snapshot is the same bytes sealed again with the caller's key.

const { randomBytes } = require('node:crypto');
const binding = require('../native/load.js');
const { run, runSync } = require('../run.js');
const { ErrorCode, QuickrealmError, invalidInput } = require('../errors.js');

/**
 * @typedef {import('../index.js').RunResult} RunResult
 * @typedef {import('../index.js').ReplOptions} ReplOptions
 * @typedef {import('../index.js').RestoreReplOptions} RestoreReplOptions
 * @typedef {import('../index.js').ReplEvalOptions} ReplEvalOptions
 */

/** Seals the states of this process's REPLs between evaluations; never leaves the process. */
const processKey = randomBytes(32);

const OPTION_KEYS = new Set(['limits', 'data', 'globals', 'deterministic', 'transactional', 'console', 'filename']);
const RESTORE_KEYS = new Set([...OPTION_KEYS, 'key'].filter((k) => k !== 'data'));
const EVAL_KEYS = new Set(['signal', 'limits']);
const SNAPSHOT_KEYS = new Set(['key']);

/**
 * @param {unknown} options
 * @param {string} what
 * @param {Set<string>} allowed
 * @returns {Record<string, any>}
 */
function optionsOf(options, what, allowed) {
  if (options === undefined || options === null) return {};
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw invalidInput(`${what} must be an object`);
  }
  for (const key of Object.keys(options)) {
    if (!allowed.has(key)) {
      throw invalidInput(`unknown ${what} key '${key}'`);
    }
  }
  return /** @type {Record<string, any>} */ (options);
}

/** @param {unknown} key */
function checkKey(key) {
  const bytes = typeof key === 'string' ? Buffer.byteLength(key) : key instanceof Uint8Array ? key.length : -1;
  if (bytes < 16) {
    throw invalidInput('key must be a string or Uint8Array of at least 16 bytes');
  }
  return /** @type {string | Uint8Array} */ (key);
}

class Repl {
  /** @type {Uint8Array | null} */
  #state;
  /** @type {Record<string, any>} */
  #options;
  /** @type {Promise<unknown>} */
  #queue = Promise.resolve();
  #disposed = false;
  #evaluations = 0;

  /**
   * @param {Uint8Array | null} state sealed with the process key
   * @param {Record<string, any>} options
   */
  constructor(state, options) {
    this.#state = state;
    this.#options = options;
  }

  /** @param {string} name */
  #checkOpen(name) {
    if (this.#disposed) {
      throw new QuickrealmError(ErrorCode.Disposed, `${ErrorCode.Disposed}: ${name}() on a disposed REPL`);
    }
  }

  /**
   * The run options of one evaluation.
   * @param {ReplEvalOptions | undefined} evalOptions
   */
  #runOptions(evalOptions) {
    const { limits, globals, deterministic, transactional, console, filename } = this.#options;
    const given = optionsOf(evalOptions, 'eval option', EVAL_KEYS);
    this.#evaluations += 1;
    return {
      mode: 'repl',
      filename: filename ?? `cell-${this.#evaluations}.js`,
      ...((given.limits ?? limits) ? { limits: { ...limits, ...given.limits } } : {}),
      ...(globals !== undefined ? { globals } : {}),
      ...(deterministic !== undefined ? { deterministic } : {}),
      ...(console !== undefined ? { console } : {}),
      ...(given.signal !== undefined ? { signal: given.signal } : {}),
      state: { ...(this.#state ? { bytes: this.#state } : {}), key: processKey, transactional: !!transactional },
    };
  }

  /**
   * Keeps the state the evaluation left (if it wrote one) and returns its result.
   * @param {RunResult & { state?: Uint8Array }} result
   * @returns {RunResult}
   */
  #settle(result) {
    const { state, ...rest } = result;
    if (state && !this.#disposed) this.#state = state;
    return /** @type {RunResult} */ (rest);
  }

  /**
   * Evaluates a cell: a script whose top-level declarations stay for the next cells, with
   * top-level `await`. Cells run one after another, in the order they were given.
   * @param {string} code
   * @param {ReplEvalOptions} [options]
   * @returns {Promise<RunResult>}
   */
  eval(code, options) {
    this.#checkOpen('eval');
    const next = this.#queue.then(() => {
      this.#checkOpen('eval');
      return run(code, /** @type {any} */ (this.#runOptions(options))).then((r) => this.#settle(r));
    });
    this.#queue = next.catch(() => {});
    return next;
  }

  /**
   * Evaluates a cell on this thread. Refused while an `eval` is still running.
   * @param {string} code
   * @param {ReplEvalOptions} [options]
   * @returns {RunResult}
   */
  evalSync(code, options) {
    this.#checkOpen('evalSync');
    return this.#settle(runSync(code, /** @type {any} */ (this.#runOptions(options))));
  }

  /**
   * The realm's state as bytes authenticated with `key` (HMAC-SHA256), for `restoreRepl`
   * here or in another process of the same quickrealm build.
   * @param {{ key: string | Uint8Array }} options
   * @returns {Uint8Array}
   */
  snapshot(options) {
    this.#checkOpen('snapshot');
    const { key } = optionsOf(options, 'snapshot option', SNAPSHOT_KEYS);
    checkKey(key);
    if (this.#state === null) this.#state = emptyState(this.#options);
    return binding.resealState(this.#state, processKey, key);
  }

  /** Forgets the state; later calls throw DISPOSED. */
  dispose() {
    this.#disposed = true;
    this.#state = null;
  }

  [Symbol.dispose]() {
    this.dispose();
  }
}

/**
 * The state of a realm that has run nothing (holding `data`, if any).
 * @param {Record<string, any>} options
 */
function emptyState(options) {
  const result = runSync(
    '',
    /** @type {any} */ ({
      mode: 'repl',
      filename: 'setup.js',
      ...(options.data !== undefined ? { data: options.data } : {}),
      state: { key: processKey },
    }),
  );
  if (!result.ok || !(/** @type {any} */ (result).state)) {
    const error = result.ok ? { code: ErrorCode.Internal, message: 'no state was written' } : result.error;
    throw new QuickrealmError(error.code, `${error.code}: ${error.message}`);
  }
  return /** @type {Uint8Array} */ (/** @type {any} */ (result).state);
}

/**
 * A persistent realm: evaluations keep their top-level bindings.
 * @param {ReplOptions} [options]
 * @returns {Repl}
 */
function createRepl(options) {
  const given = { ...optionsOf(options, 'createRepl option', OPTION_KEYS) };
  // `data` becomes state once, in the first state; later cells find it as they left it.
  const state = given.data !== undefined ? emptyState(given) : null;
  delete given.data;
  return new Repl(state, given);
}

/**
 * A REPL from `repl.snapshot({ key })` bytes. The bytes must verify under `key`
 * (SNAPSHOT_TAMPERED otherwise) and come from this quickrealm build (SNAPSHOT_VERSION).
 * @param {Uint8Array} bytes
 * @param {RestoreReplOptions} options
 * @returns {Repl}
 */
function restoreRepl(bytes, options) {
  const given = { ...optionsOf(options, 'restoreRepl option', RESTORE_KEYS) };
  if (!(bytes instanceof Uint8Array)) {
    throw invalidInput(`bytes must be a Uint8Array`);
  }
  const state = binding.resealState(bytes, checkKey(given.key), processKey);
  delete given.key;
  return new Repl(state, given);
}

module.exports = { createRepl, restoreRepl, Repl };
