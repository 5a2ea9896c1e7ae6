'use strict';
// Running code: a small layer over the native binding that connects AbortSignal to
// cancellation and drives runs with live host values. Everything else (validation, limits,
// marshalling) happens in Rust.

const binding = require('./native/load.js');
const { ErrorCode, failedResult } = require('./errors.js');
const { printLogs } = require('./log-lines.js');
const { cancelHandleFor, reasonOf } = require('./signal.js');
const { runStarted, runEnded } = require('./diagnostics.js');
const { dataText } = require('./data-text.js');
const { observeRun, observeRunSync } = require('./telemetry/hooks.js');

/**
 * @typedef {import('./index.js').RunOptions} RunOptions
 * @typedef {import('./index.js').RunResult} RunResult
 * @typedef {import('./index.js').ConfigureOptions} ConfigureOptions
 * @typedef {import('./index.js').PoolStats} PoolStats
 * @typedef {import('./index.js').RealmStats} RealmStats
 * @typedef {import('./native/binding.js').CancelHandle} CancelHandle
 */

/**
 * A result as the binding returns it: JSON text when every part of it is JSON (one string
 * crosses instead of an object built property by property), the object otherwise. The text
 * leaves out a top-level `undefined` value; the object gets the same keys either way. The
 * format is written by `src/engine/reply.rs`, documented there; change both together.
 * @param {unknown} reply
 * @returns {RunResult}
 */
function fromNative(reply) {
  // `[text, state]`: a run over a persistent realm's state that wrote a new state.
  if (Array.isArray(reply)) return Object.assign(fromNative(reply[0]), { state: reply[1] });
  if (typeof reply !== 'string') return /** @type {RunResult} */ (reply);
  // `|wallMs|heapBytes|hostCalls|steps|value`: a run that succeeded without output or logs.
  if (reply.charCodeAt(0) === 124) {
    const a = reply.indexOf('|', 1);
    const b = reply.indexOf('|', a + 1);
    const c = reply.indexOf('|', b + 1);
    const d = reply.indexOf('|', c + 1);
    const stats = {
      wallMs: +reply.slice(1, a),
      heapBytes: +reply.slice(a + 1, b),
      hostCalls: +reply.slice(b + 1, c),
      steps: +reply.slice(c + 1, d),
    };
    const value = d + 1 === reply.length ? undefined : JSON.parse(reply.slice(d + 1));
    return { ok: true, output: '', logs: [], stats, value };
  }
  const r = JSON.parse(reply);
  // The keys in the order the object form has them.
  return r.ok
    ? { ok: true, output: r.output, logs: r.logs, stats: r.stats, value: r.value }
    : { ok: false, output: r.output, logs: r.logs, stats: r.stats, error: r.error };
}

/**
 * Options and data as the binding takes them: plain JSON data as text (see data-text.js),
 * anything else in the options as given.
 * @param {RunOptions | undefined} options
 * @returns {[RunOptions | undefined, string | undefined]}
 */
function toNative(options) {
  if (options === null || typeof options !== 'object' || options.data == null) {
    return [options, undefined];
  }
  const text = dataText(options.data);
  if (text === undefined) return [options, undefined];
  const { data, ...rest } = options;
  return [rest, text];
}

/** @param {string} message */
function invalidResult(message) {
  return failedResult(ErrorCode.InvalidInput, 'TypeError', message);
}

/** @param {RunOptions | undefined} options */
function hasGlobals(options) {
  return options !== null && typeof options === 'object' && options.globals != null;
}

/**
 * The native `world` of a session turn, by the run options it goes with: not a run option
 * users can give, so it is attached to the options object by `withNativeWorld`.
 * @type {WeakMap<object, import('./native/binding.js').NativeWorld>}
 */
const nativeWorlds = new WeakMap();

/**
 * Options for a session turn's live run whose `world` is the given native world.
 * @template {RunOptions} T
 * @param {T} options
 * @param {import('./native/binding.js').NativeWorld} world
 * @returns {T}
 */
function withNativeWorld(options, world) {
  nativeWorlds.set(options, world);
  return options;
}

/**
 * Drives a run with live host values on the main thread, in time slices of a few milliseconds:
 * pump again after each slice (once the event loop had a turn), whenever a host promise the run
 * awaits settles, or when its deadline arrives.
 * `exposeWake` receives the function that asks for another pump before the first one runs: the
 * caller calls it after cancelling, so a run waiting for a host promise notices at once.
 * Every run is finished, however it ends: `finish()` releases the host values it holds.
 * @param {string} source
 * @param {RunOptions} options
 * @param {CancelHandle | null} handle
 * @param {(wake: () => void) => void} [exposeWake]
 * @returns {Promise<RunResult>}
 */
function runLive(source, options, handle, exposeWake) {
  return new Promise((resolve) => {
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let timer;
    let scheduled = false;
    let finished = false;
    /** @param {unknown} e */
    const internal = (e) =>
      failedResult(ErrorCode.Internal, 'Error', `quickrealm: ${e instanceof Error ? e.message : e}`);
    const end = () => {
      finished = true;
      clearTimeout(timer);
      try {
        resolve(fromNative(live.finish()));
      } catch (e) {
        resolve(internal(e));
      }
    };
    const step = () => {
      scheduled = false;
      if (finished) return;
      /** @type {string} */
      let state = 'finished';
      try {
        state = live.pump();
      } catch {
        // An internal failure: finishing reports the run's state and releases it.
      }
      if (state === 'finished') {
        end();
      } else if (state === 'paused') {
        wake();
      } else {
        clearTimeout(timer);
        timer = setTimeout(wake, Math.ceil(live.remainingMs()) + 1);
      }
    };
    const wake = () => {
      if (!scheduled && !finished) {
        scheduled = true;
        setImmediate(step);
      }
    };
    const live = binding.LiveRun.start(source, options, handle, wake, nativeWorlds.get(options) ?? null);
    if (exposeWake) exposeWake(wake);
    step();
  });
}

/**
 * What a run is, for diagnostics subscribers.
 * @param {'run' | 'runSync'} kind
 * @param {string} source
 * @param {RunOptions | undefined} options
 */
function describeRun(kind, source, options) {
  const o = options !== null && typeof options === 'object' ? options : {};
  return () => ({
    kind,
    mode: o.mode ?? 'function',
    sourceBytes: typeof source === 'string' ? Buffer.byteLength(source) : 0,
    live: hasGlobals(o),
    workspace: o.workspace != null,
    deterministic: o.deterministic != null && o.deterministic !== false,
  });
}

/**
 * The workspace option travels to the native side as the class instance itself.
 * @param {RunOptions | undefined} options
 */
function workspaceOf(options) {
  if (options === null || typeof options !== 'object' || options.workspace == null) return undefined;
  return options.workspace instanceof binding.ZipWorkspace ? options.workspace : undefined;
}

/**
 * Runs guest code on the calling thread. Never throws for guest errors.
 * @param {string} source
 * @param {RunOptions} [options]
 * @returns {RunResult}
 */
function runSync(source, options) {
  const id = runStarted(describeRun('runSync', source, options));
  const result = observeRunSync('runSync', source, options, runSyncUnobserved);
  runEnded(id, 'runSync', result);
  return result;
}

/**
 * @param {string} source
 * @param {RunOptions} [options]
 * @returns {RunResult}
 */
function runSyncUnobserved(source, options) {
  const { handle, signal, error } = cancelHandleFor(options);
  if (error !== undefined) return invalidResult(error);
  // Host code the run calls (live globals) may abort the signal while the run is in progress.
  const onAbort = () => handle?.cancel();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const [native, text] = toNative(options);
    const result = fromNative(binding.runSync(source, native, handle ?? undefined, workspaceOf(options), text));
    return inheritConsole(reasonOf(result, signal), options);
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * With `console: 'inherit'`, prints the run's console lines on the host console (escaped, so
 * guest text cannot drive the terminal) instead of returning them.
 * @param {RunResult} result
 * @param {RunOptions | undefined} options
 * @returns {RunResult}
 */
function inheritConsole(result, options) {
  if (options === null || typeof options !== 'object' || options.console !== 'inherit') return result;
  printLogs(result.logs);
  result.logs = [];
  return result;
}

/**
 * Runs guest code on a quickrealm worker thread (with live `globals`, on the main thread in time
 * slices, so the event loop keeps turning). Never rejects for guest errors.
 * @param {string} source
 * @param {RunOptions} [options]
 * @returns {Promise<RunResult>}
 */
function run(source, options) {
  const id = runStarted(describeRun('run', source, options));
  return observeRun('run', source, options, runUnobserved).then((result) => {
    runEnded(id, 'run', result);
    return result;
  });
}

/**
 * @param {string} source
 * @param {RunOptions} [options]
 * @returns {Promise<RunResult>}
 */
function runUnobserved(source, options) {
  const { handle, signal, error } = cancelHandleFor(options);
  if (error !== undefined) return Promise.resolve(invalidResult(error));
  const liveOptions = options !== undefined && hasGlobals(options) ? options : null;
  const [native, text] = toNative(options);
  if (!handle) {
    const pending = liveOptions
      ? runLive(source, liveOptions, null)
      : binding.run(source, native, undefined, workspaceOf(options), text).then(fromNative);
    return pending.then((result) => inheritConsole(result, options));
  }
  let wakeLive = () => {};
  const onAbort = () => {
    handle.cancel();
    // A live run waiting for a host promise must wake up to notice.
    wakeLive();
  };
  signal.addEventListener('abort', onAbort, { once: true });
  const pending = liveOptions
    ? runLive(source, liveOptions, handle, (wake) => {
        wakeLive = wake;
      })
    : binding.run(source, native, handle, workspaceOf(options), text).then(fromNative);
  return pending
    .finally(() => signal.removeEventListener('abort', onAbort))
    .then((result) => inheritConsole(reasonOf(result, signal), options));
}

/**
 * Adjusts process-wide settings (worker threads, prepared realms); returns the settings in force.
 * Checked once, natively: a bad value throws a TypeError or RangeError with code INVALID_INPUT.
 * @param {ConfigureOptions} options
 * @returns {{ workers: number, poolSize: number }}
 */
function configure(options) {
  return binding.configure(options);
}

/**
 * Counters of the prepared-realm pool: { ready, size, taken, built }.
 * @returns {PoolStats}
 */
function poolStats() {
  return binding.poolStats();
}

/**
 * Memory of realms: { bytesPerRealm (a plain run's realm, derived from the thread's template),
 * bytesPerTemplate (the template, once per thread), bytesPerOwnRealm (a realm with its own runtime) }.
 * @returns {RealmStats}
 */
function realmStats() {
  return binding.realmStats();
}

/**
 * Marks a value to reach a sandbox as a deep copy (as `data` is copied) instead of a live proxy.
 * @template T
 * @param {T} value
 * @returns {import('./index.js').Copied<T>}
 */
function copyOf(value) {
  return /** @type {import('./index.js').Copied<T>} */ (binding.copyOf(value));
}

module.exports = { run, runSync, configure, poolStats, realmStats, copyOf, fromNative, withNativeWorld };
