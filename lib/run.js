'use strict';
// Running code: a small layer over the native binding that connects AbortSignal to
// cancellation and drives runs with live host values. Everything else (validation, limits,
// marshalling) happens in Rust.

const binding = require('./native/binding.js');
const { failedResult, invalidInput, outOfRange } = require('./errors.js');

/** @param {string} message */
function invalidResult(message) {
  return failedResult('INVALID_INPUT', 'TypeError', message);
}

function isAbortSignalLike(signal) {
  return (
    signal !== null &&
    typeof signal === 'object' &&
    typeof signal.aborted === 'boolean' &&
    typeof signal.addEventListener === 'function' &&
    typeof signal.removeEventListener === 'function'
  );
}

/** Reads `options.signal`; returns a native cancel handle, null, or an error message. */
function cancelHandleFor(options) {
  if (options === null || typeof options !== 'object' || options.signal == null) return { handle: null };
  const signal = options.signal;
  if (!isAbortSignalLike(signal)) return { error: 'signal must be an AbortSignal' };
  const handle = new binding.CancelHandle();
  if (signal.aborted) handle.cancel();
  return { handle, signal };
}

function hasGlobals(options) {
  return options !== null && typeof options === 'object' && options.globals != null;
}

/**
 * Drives a run with live host values on the main thread: pump until the run finishes, pumping
 * again whenever a host promise it awaits settles, or when its deadline arrives.
 */
function runLive(source, options, handle) {
  return new Promise((resolve) => {
    let timer = null;
    let scheduled = false;
    let finished = false;
    const step = () => {
      scheduled = false;
      if (finished) return;
      if (live.pump()) {
        finished = true;
        clearTimeout(timer);
        resolve(live.finish());
        return;
      }
      clearTimeout(timer);
      timer = setTimeout(wake, Math.ceil(live.remainingMs()) + 1);
    };
    const wake = () => {
      if (!scheduled && !finished) {
        scheduled = true;
        setImmediate(step);
      }
    };
    const live = binding.LiveRun.start(source, options, handle ?? null, wake);
    if (handle) handle.onCancel = wake;
    step();
  });
}

/** The workspace option travels to the native side as the class instance itself. */
function workspaceOf(options) {
  if (options === null || typeof options !== 'object' || options.workspace == null) return undefined;
  return options.workspace instanceof binding.ZipWorkspace ? options.workspace : undefined;
}

function runSync(source, options) {
  const { handle, error } = cancelHandleFor(options);
  if (error) return invalidResult(error);
  return binding.runSync(source, options, handle ?? undefined, workspaceOf(options));
}

function run(source, options) {
  const { handle, signal, error } = cancelHandleFor(options);
  if (error) return Promise.resolve(invalidResult(error));
  const live = hasGlobals(options);
  if (!handle) return live ? runLive(source, options, null) : binding.run(source, options, undefined, workspaceOf(options));
  const onAbort = () => {
    handle.cancel();
    // A live run waiting for a host promise must wake up to notice.
    if (typeof handle.onCancel === 'function') handle.onCancel();
  };
  signal.addEventListener('abort', onAbort, { once: true });
  const pending = live ? runLive(source, options, handle) : binding.run(source, options, handle, workspaceOf(options));
  return pending.finally(() => signal.removeEventListener('abort', onAbort));
}

/** Sets how many worker threads `run()` uses (default: one per core). */
function configure(options) {
  if (options === null || typeof options !== 'object') {
    throw invalidInput('configure() takes an options object');
  }
  for (const key of Object.keys(options)) {
    if (key !== 'workers' && key !== 'poolSize') {
      throw invalidInput(`unknown configure() option '${key}'`);
    }
  }
  if (options.workers !== undefined) {
    const n = options.workers;
    if (!Number.isInteger(n) || n < 1 || n > 256) {
      throw outOfRange('workers must be an integer between 1 and 256');
    }
    binding.configureWorkers(n);
  }
  if (options.poolSize !== undefined) {
    const n = options.poolSize;
    if (!Number.isInteger(n) || n < 0 || n > 64) {
      throw outOfRange('poolSize must be an integer between 0 and 64');
    }
    binding.configurePool(n);
  }
  return { workers: binding.workerCount(), poolSize: binding.poolStats().size };
}

/** Counters of the prepared-realm pool: { ready, size, taken, built }. */
function poolStats() {
  return binding.poolStats();
}

/** Memory of one fresh, frozen realm: { bytesPerRealm }. */
function realmStats() {
  return binding.realmStats();
}

module.exports = { run, runSync, configure, poolStats, realmStats };
