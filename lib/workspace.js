'use strict';
// ZipWorkspace: the native class, extended with `exec` taking an AbortSignal and always answering
// with a promise (bad options reject instead of throwing), access rules given as Sets, and
// `dispose()` / `Symbol.dispose`, which free the workspace's memory; every later call throws an
// error coded DISPOSED. The native class itself is left as it is.

const binding = require('./native/load.js');
const { ErrorCode } = require('./errors.js');
const { cancelHandleFor, reasonOf } = require('./signal.js');
const { runStarted, runEnded } = require('./diagnostics.js');
const { observeExec } = require('./telemetry/hooks.js');

const Native = binding.ZipWorkspace;

/** Workspaces whose memory was released. */
const disposed = new WeakSet();

/** @param {string} method */
function disposedError(method) {
  return Object.assign(new Error(`ZipWorkspace.${method}: the workspace was disposed`), { code: ErrorCode.Disposed });
}

/**
 * @param {object} ws
 * @param {string} method
 */
function refuseIfDisposed(ws, method) {
  if (disposed.has(ws)) throw disposedError(method);
}

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
 * `exec` without the diagnostics: a forked workspace has this class's prototype but was not
 * built by its constructor, so this is a function rather than a private method.
 * @param {import('./native/binding.js').ZipWorkspace} ws
 * @param {string} entryPath
 * @param {import('./index.js').ExecOptions | null} [options]
 * @returns {Promise<import('./index.js').ExecResult>}
 */
function execUnobserved(ws, entryPath, options) {
  try {
    refuseIfDisposed(ws, 'exec');
    const { handle, signal, error } = cancelHandleFor(options);
    if (error !== undefined) {
      throw Object.assign(new TypeError(`options.signal: ${error}`), { code: ErrorCode.InvalidInput });
    }
    const settle = (/** @type {import('./index.js').ExecResult} */ result) =>
      afterRun(ws, signal ? reasonOf(result, signal) : result);
    if (!handle) return Native.prototype.exec.call(ws, entryPath, options).then(settle);
    const { signal: _omitted, ...rest } = /** @type {Record<string, unknown>} */ (options);
    const onAbort = () => handle.cancel();
    signal.addEventListener('abort', onAbort, { once: true });
    return Native.prototype.exec
      .call(ws, entryPath, rest, handle)
      .finally(() => signal.removeEventListener('abort', onAbort))
      .then(settle);
  } catch (e) {
    return Promise.reject(e);
  }
}

/**
 * An in-memory tree of files and folders with a recorded history (see index.d.ts). Factories
 * (`fromZip`, `open`) called on this class give instances of it; so does `fork()`.
 */
class ZipWorkspace extends Native {
  /**
   * Runs a workspace file (see ExecOptions): resolves to the result, rejects for bad arguments
   * or a disposed workspace.
   * @param {string} entryPath
   * @param {import('./index.js').ExecOptions | null} [options]
   * @returns {Promise<import('./index.js').ExecResult>}
   */
  exec(entryPath, options) {
    const id = runStarted(() => ({ kind: 'exec', entryPath: String(entryPath) }));
    return observeExec(this, entryPath, options, execUnobserved).then(
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
   * `setAccessRules` taking pattern lists as arrays or Sets (the native method reads arrays).
   * @param {import('./index.js').AccessRules | null} rules
   */
  setAccessRules(rules) {
    refuseIfDisposed(this, 'setAccessRules');
    if (rules === null || typeof rules !== 'object' || Array.isArray(rules)) {
      return super.setAccessRules(/** @type {never} */ (rules));
    }
    const lists = /** @type {Record<string, unknown>} */ ({ ...rules });
    for (const key of ['readPatterns', 'writePatterns']) {
      if (lists[key] instanceof Set) lists[key] = [...lists[key]];
    }
    return super.setAccessRules(/** @type {never} */ (lists));
  }

  /**
   * An independent copy, as the native `fork()`, that is also a ZipWorkspace of this class.
   * @returns {ZipWorkspace}
   */
  fork() {
    refuseIfDisposed(this, 'fork');
    return Object.setPrototypeOf(super.fork(), Object.getPrototypeOf(this));
  }

  /**
   * `batch`, whose edits receive a workspace of this class over the same files.
   * @param {string} label
   * @param {(ws: ZipWorkspace) => unknown} edits
   * @returns {number | null}
   */
  batch(label, edits) {
    refuseIfDisposed(this, 'batch');
    if (typeof edits !== 'function') return super.batch(label, /** @type {never} */ (edits));
    const kind = Object.getPrototypeOf(this);
    return super.batch(label, (/** @type {ZipWorkspace} */ w) => edits(Object.setPrototypeOf(w, kind)));
  }

  /**
   * Frees the workspace's files and history now, instead of when it is garbage collected. Runs
   * already in progress finish, but their changes are not kept.
   */
  dispose() {
    if (disposed.has(this)) return;
    disposed.add(this);
    this.releaseMemory();
  }

  [Symbol.dispose]() {
    this.dispose();
  }
}

// Every other native method refuses to work on a disposed workspace: defined here, on this
// class, for each method the native class has, so a method added in Rust is covered too.
for (const name of Object.getOwnPropertyNames(Native.prototype)) {
  if (name === 'constructor' || name === 'releaseMemory' || Object.hasOwn(ZipWorkspace.prototype, name)) continue;
  const desc = Object.getOwnPropertyDescriptor(Native.prototype, name);
  if (!desc || typeof desc.value !== 'function') continue;
  const inner = desc.value;
  const guarded = {
    /** @this {object} @param {unknown[]} args */
    [name](...args) {
      refuseIfDisposed(this, name);
      return inner.apply(this, args);
    },
  }[name];
  Object.defineProperty(ZipWorkspace.prototype, name, { ...desc, value: guarded });
}

module.exports = { ZipWorkspace };
