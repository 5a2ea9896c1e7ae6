'use strict';
// AbortSignal support shared by run, runSync and ZipWorkspace#exec: a native cancel handle tied
// to the signal, and the outcome code the signal's reason stands for.

const { ErrorCode } = require('./errors.js');
const binding = require('./native/load.js');

/**
 * @param {unknown} signal
 * @returns {signal is AbortSignal}
 */
function isAbortSignalLike(signal) {
  if (signal === null || typeof signal !== 'object') return false;
  const s = /** @type {Record<string, unknown>} */ (signal);
  return (
    typeof s.aborted === 'boolean' &&
    typeof s.addEventListener === 'function' &&
    typeof s.removeEventListener === 'function'
  );
}

/**
 * Reads `options.signal`: no signal, a native cancel handle tied to it, or an error message.
 * @param {unknown} options
 * @returns {{ handle: null, signal?: undefined, error?: undefined }
 *   | { handle: import('./native/binding.js').CancelHandle, signal: AbortSignal, error?: undefined }
 *   | { handle?: undefined, signal?: undefined, error: string }}
 */
function cancelHandleFor(options) {
  if (options === null || typeof options !== 'object') return { handle: null };
  const signal = /** @type {{ signal?: unknown }} */ (options).signal;
  if (signal == null) return { handle: null };
  if (!isAbortSignalLike(signal)) return { error: 'signal must be an AbortSignal' };
  const handle = new binding.CancelHandle();
  if (signal.aborted) handle.cancel();
  return { handle, signal };
}

/**
 * A run stopped by its signal reports CANCELLED, or TIMEOUT when the signal's reason is a
 * TimeoutError (what `AbortSignal.timeout()` gives), as the caller asked for a time limit.
 * @template {{ ok: boolean, error?: { code: string, name: string, message: string } | null }} R
 * @param {R} result
 * @param {AbortSignal | undefined} signal
 * @returns {R}
 */
function reasonOf(result, signal) {
  const error = result.error;
  if (result.ok || !error || error.code !== ErrorCode.Cancelled || !signal?.aborted) return result;
  const reason = /** @type {unknown} */ (signal.reason);
  const name =
    reason !== null && typeof reason === 'object' ? /** @type {{ name?: unknown }} */ (reason).name : undefined;
  if (name === 'TimeoutError') {
    error.code = ErrorCode.Timeout;
    error.name = 'TimeoutError';
    error.message = "the run was stopped by its signal's timeout (AbortSignal.timeout)";
  }
  return result;
}

module.exports = { isAbortSignalLike, cancelHandleFor, reasonOf };
