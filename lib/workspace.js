'use strict';
// ZipWorkspace: the native class, with `exec` taking an AbortSignal and always answering with a
// promise (bad options reject instead of throwing).

const binding = require('./native/binding.js');
const { cancelHandleFor, reasonOf } = require('./signal.js');

const { ZipWorkspace } = binding;
const nativeExec = ZipWorkspace.prototype.exec;

/**
 * @this {import('./native/binding.js').ZipWorkspace}
 * @param {string} entryPath
 * @param {object | null} [options] ExecOptions (see index.d.ts), `signal` included
 * @returns {Promise<import('./native/binding.js').ExecResult>}
 */
function exec(entryPath, options) {
  try {
    const { handle, signal, error } = cancelHandleFor(options);
    if (error !== undefined) {
      throw Object.assign(new TypeError(`options.signal: ${error}`), { code: 'INVALID_INPUT' });
    }
    if (!handle) return nativeExec.call(this, entryPath, options);
    const { signal: _omitted, ...rest } = /** @type {Record<string, unknown>} */ (options);
    const onAbort = () => handle.cancel();
    signal.addEventListener('abort', onAbort, { once: true });
    return nativeExec
      .call(this, entryPath, rest, handle)
      .finally(() => signal.removeEventListener('abort', onAbort))
      .then((result) => reasonOf(result, signal));
  } catch (e) {
    return Promise.reject(e);
  }
}

Object.defineProperty(ZipWorkspace.prototype, 'exec', { value: exec, writable: true, configurable: true });

module.exports = { ZipWorkspace };
