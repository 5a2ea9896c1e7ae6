'use strict';
// ZipWorkspace: the native class, with `exec` taking an AbortSignal and always answering with a
// promise (bad options reject instead of throwing), and `dispose()` / `Symbol.dispose`, which
// free the workspace's memory; every later call throws an error coded DISPOSED.

const { ErrorCode } = require('./errors.js');
const binding = require('./native/load.js');
const { cancelHandleFor, reasonOf } = require('./signal.js');
const { runStarted, runEnded } = require('./diagnostics.js');

const { ZipWorkspace } = binding;
const nativeExec = ZipWorkspace.prototype.exec;

/**
 * A run that ends after its workspace was disposed has written into the emptied workspace:
 * release that memory too.
 * @template R
 * @param {import('./native/binding.js').ZipWorkspace} ws
 * @param {R} result
 * @returns {R}
 */
function afterRun(ws, result) {
  if (disposed.has(ws)) ws.releaseMemory();
  return result;
}

/**
 * @this {import('./native/binding.js').ZipWorkspace}
 * @param {string} entryPath
 * @param {object | null} [options] ExecOptions (see index.d.ts), `signal` included
 * @returns {Promise<import('./native/binding.js').ExecResult>}
 */
function exec(entryPath, options) {
  const id = runStarted(() => ({ kind: 'exec', entryPath: String(entryPath) }));
  return execUnobserved.call(this, entryPath, options).then(
    (result) => {
      runEnded(id, 'exec', result);
      return result;
    },
    (e) => {
      runEnded(id, 'exec', { ok: false, error: { code: e?.code ?? ErrorCode.Internal } });
      throw e;
    },
  );
}

/**
 * @this {import('./native/binding.js').ZipWorkspace}
 * @param {string} entryPath
 * @param {object | null} [options]
 * @returns {Promise<import('./native/binding.js').ExecResult>}
 */
function execUnobserved(entryPath, options) {
  try {
    const { handle, signal, error } = cancelHandleFor(options);
    if (error !== undefined) {
      throw Object.assign(new TypeError(`options.signal: ${error}`), { code: ErrorCode.InvalidInput });
    }
    if (!handle) return nativeExec.call(this, entryPath, options).then((result) => afterRun(this, result));
    const { signal: _omitted, ...rest } = /** @type {Record<string, unknown>} */ (options);
    const onAbort = () => handle.cancel();
    signal.addEventListener('abort', onAbort, { once: true });
    return nativeExec
      .call(this, entryPath, rest, handle)
      .finally(() => signal.removeEventListener('abort', onAbort))
      .then((result) => afterRun(this, reasonOf(result, signal)));
  } catch (e) {
    return Promise.reject(e);
  }
}

Object.defineProperty(ZipWorkspace.prototype, 'exec', { value: exec, writable: true, configurable: true });

const nativeSetAccessRules = ZipWorkspace.prototype.setAccessRules;

/**
 * `setAccessRules` taking pattern lists as arrays or Sets (the native method reads arrays).
 * @this {import('./native/binding.js').ZipWorkspace}
 * @param {unknown} rules
 */
function setAccessRules(rules) {
  if (rules === null || typeof rules !== 'object' || Array.isArray(rules)) {
    return nativeSetAccessRules.call(this, /** @type {never} */ (rules));
  }
  const lists = /** @type {Record<string, unknown>} */ ({ ...rules });
  for (const key of ['readPatterns', 'writePatterns']) {
    if (lists[key] instanceof Set) lists[key] = [...lists[key]];
  }
  return nativeSetAccessRules.call(this, /** @type {never} */ (lists));
}

Object.defineProperty(ZipWorkspace.prototype, 'setAccessRules', {
  value: setAccessRules,
  writable: true,
  configurable: true,
});

/** Workspaces whose memory was released. */
const disposed = new WeakSet();

/** @param {string} method */
function disposedError(method) {
  return Object.assign(new Error(`ZipWorkspace.${method}: the workspace was disposed`), { code: ErrorCode.Disposed });
}

// Every method refuses to work on a disposed workspace (exec by rejecting, as it answers with a
// promise); `dispose` itself may be called again.
for (const name of Object.getOwnPropertyNames(ZipWorkspace.prototype)) {
  const desc = Object.getOwnPropertyDescriptor(ZipWorkspace.prototype, name);
  if (name === 'constructor' || name === 'releaseMemory' || !desc || typeof desc.value !== 'function') continue;
  const inner = desc.value;
  const guarded = {
    /** @this {object} @param {unknown[]} args */
    [name](...args) {
      if (disposed.has(this)) {
        if (name === 'exec') return Promise.reject(disposedError(name));
        throw disposedError(name);
      }
      return inner.apply(this, args);
    },
  }[name];
  Object.defineProperty(ZipWorkspace.prototype, name, { ...desc, value: guarded });
}

/**
 * Frees the workspace's files and history now, instead of when it is garbage collected. Runs
 * already in progress finish, but their changes are not kept.
 * @this {import('./native/binding.js').ZipWorkspace}
 */
function dispose() {
  if (disposed.has(this)) return;
  disposed.add(this);
  this.releaseMemory();
}

Object.defineProperty(ZipWorkspace.prototype, 'dispose', { value: dispose, writable: true, configurable: true });
if (typeof Symbol.dispose === 'symbol') {
  Object.defineProperty(ZipWorkspace.prototype, Symbol.dispose, { value: dispose, writable: true, configurable: true });
}

module.exports = { ZipWorkspace };
