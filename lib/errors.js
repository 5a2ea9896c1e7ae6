'use strict';
// One error vocabulary for the JavaScript layers.
//
// - Thrown errors (bad arguments to a quickrealm function) carry a stable `.code` from ErrorCode
//   and, like the errors the native side throws, a message that starts with `CODE: ` (except
//   where a drop-in keeps the wording of what it replaces). The class says what kind of mistake
//   it was: TypeError for a wrong shape, RangeError for a value out of range, Error otherwise.
// - Guest failures are not thrown: they come back as a failed RunResult (`failedResult`).
// - `formatForModel` renders a SandboxErrorInfo the one way a model reads it.

const { ErrorCode } = require('./native/load.js');

/**
 * @typedef {import('./index.js').SandboxErrorInfo} SandboxErrorInfo
 * @typedef {import('./index.js').ExecErrorInfo} ExecErrorInfo
 * @typedef {import('./index.js').RunResult} RunResult
 */

/** An Error with a stable `.code`. */
class QuickrealmError extends Error {
  /**
   * @param {ErrorCode} code
   * @param {string} message the whole message, as thrown
   */
  constructor(code, message) {
    super(message);
    /** @type {ErrorCode} */
    this.code = code;
  }
}

/** A TypeError with a stable `.code`: an argument of the wrong shape. */
class QuickrealmTypeError extends TypeError {
  /**
   * @param {ErrorCode} code
   * @param {string} message the whole message, as thrown
   */
  constructor(code, message) {
    super(message);
    /** @type {ErrorCode} */
    this.code = code;
  }
}

/** A RangeError with a stable `.code`: a number outside the range an option allows. */
class QuickrealmRangeError extends RangeError {
  /**
   * @param {ErrorCode} code
   * @param {string} message the whole message, as thrown
   */
  constructor(code, message) {
    super(message);
    /** @type {ErrorCode} */
    this.code = code;
  }
}

/**
 * An argument of the wrong shape: a TypeError with code INVALID_INPUT whose message reads
 * `INVALID_INPUT: <detail>`.
 * @param {string} detail
 */
function invalidInput(detail) {
  return new QuickrealmTypeError(ErrorCode.InvalidInput, `INVALID_INPUT: ${detail}`);
}

/**
 * A number outside its range: a RangeError with code INVALID_INPUT whose message reads
 * `INVALID_INPUT: <detail>`.
 * @param {string} detail
 */
function outOfRange(detail) {
  return new QuickrealmRangeError(ErrorCode.InvalidInput, `INVALID_INPUT: ${detail}`);
}

/**
 * A RunResult for a run that failed before any guest code ran (bad options, a failing
 * `createContext`): no output, no logs, zero stats.
 * @param {ErrorCode} code
 * @param {string} name
 * @param {string} message
 * @returns {RunResult}
 */
function failedResult(code, name, message) {
  return {
    ok: false,
    output: '',
    logs: [],
    error: { code, name, message },
    stats: { wallMs: 0, heapBytes: 0, hostCalls: 0, steps: 0 },
  };
}

/**
 * @typedef {object} FormatOptions
 * @property {boolean} [code] start with `CODE: ` (default false: where the code is shown apart).
 * @property {boolean} [name] show the error's name (default true). tree-agent's editing error
 *   leaves it out: the name travels on the thrown error.
 * @property {boolean} [frame] end with the code frame (default true); false keeps it to one line.
 */

/**
 * Renders an error for a model to read and fix its code, like a compiler diagnostic:
 *
 *     [CODE: ][Name: ]message (line L, column C)
 *     <frame: a few source lines, a caret under the column>
 *
 * The name is shown for guest errors (EVAL_ERROR) only: for a limit the code says what happened.
 * An error located in a workspace file (an ExecErrorInfo with `file`) reads `at ~/file:L:C` on a
 * line of its own instead, so the model knows which file to open.
 * @param {SandboxErrorInfo | ExecErrorInfo} error
 * @param {FormatOptions} [options]
 * @returns {string}
 */
function formatForModel(error, options = {}) {
  const { code = false, name = true, frame = true } = options;
  let text = code && error.code ? `${error.code}: ` : '';
  if (name && error.code === ErrorCode.EvalError && error.name) text += `${error.name}: `;
  text += error.message ?? '';
  if (error.line !== undefined && error.line !== null) {
    const file = 'file' in error ? error.file : undefined;
    text += file
      ? `\nat ${file}:${error.line}:${error.column ?? 1}`
      : ` (line ${error.line}, column ${error.column ?? 1})`;
  }
  if (frame && error.frame) text += `\n${error.frame}`;
  return text;
}

module.exports = {
  ErrorCode,
  QuickrealmError,
  QuickrealmTypeError,
  QuickrealmRangeError,
  invalidInput,
  outOfRange,
  failedResult,
  formatForModel,
};
