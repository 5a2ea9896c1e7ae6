'use strict';
// The OpenTelemetry API, when the host has `@opentelemetry/api` installed (an optional peer):
// loaded once, on first use, and asked on every run whether a tracer or meter provider is
// registered now. While neither is (or the package is missing, or telemetry is switched off),
// `listening()` is false after a few property reads and every hook calls straight through.

const { invalidInput } = require('../errors.js');
const { version } = require('../../package.json');

const SCOPE = 'quickrealm';
/**
 * Where every copy of the 1.x API registers its global providers (its cross-copy contract): while
 * it holds neither a tracer nor a meter provider, nothing is registered and nothing more is asked.
 */
const REGISTRY = Symbol.for('opentelemetry.js.api.1');

/** Histogram buckets in seconds: runs take from tens of microseconds to a minute. */
const DURATION_BUCKETS = [
  0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
];

/** @typedef {typeof import('@opentelemetry/api')} Api */

/**
 * @typedef {{
 *   runs: import('@opentelemetry/api').Counter,
 *   turns: import('@opentelemetry/api').Counter,
 *   errors: import('@opentelemetry/api').Counter,
 *   runDuration: import('@opentelemetry/api').Histogram,
 *   turnDuration: import('@opentelemetry/api').Histogram,
 *   approvalsWaiting: import('@opentelemetry/api').UpDownCounter,
 * }} Instruments
 */

/** @type {() => Api} */
let loadApi = () => require('@opentelemetry/api');
/** @type {Api | null | undefined} undefined until first asked; null when it cannot be loaded */
let api;
/** The API's own no-op tracer provider: what a proxy delegates to while none is registered. */
/** @type {unknown} */
let noopTracerProvider;
/** @type {Function | undefined} the class of the API's no-op meter */
let NoopMeter;

/** @type {unknown} the tracer provider `tracer` came from */
let tracerSource;
/** @type {import('@opentelemetry/api').Tracer | null} */
let tracer = null;
/** @type {unknown} the meter provider `instruments` came from */
let meterSource;
/** @type {Instruments | null} */
let instruments = null;

const settings = { enabled: true, recordContent: false };

/** @returns {Api | null} */
function load() {
  try {
    const loaded = loadApi();
    noopTracerProvider = new loaded.ProxyTracerProvider().getDelegate();
    NoopMeter = loaded.createNoopMeter().constructor;
    api = loaded;
  } catch {
    api = null;
  }
  return api;
}

/**
 * Whether spans or metrics are wanted now; when they are, `tracer` (or null) and `instruments`
 * (or null) are those of the providers registered at this moment.
 * @returns {boolean}
 */
function listening() {
  const loaded = api === undefined ? load() : api;
  if (loaded === null || !settings.enabled) return false;
  const registry = /** @type {Record<string, unknown> | undefined} */ (
    /** @type {Record<symbol, unknown>} */ (globalThis)[REGISTRY]
  );
  if (registry === undefined || (registry.trace === undefined && registry.metrics === undefined)) return false;
  const tracerProvider = loaded.trace.getTracerProvider();
  // Another copy of the API may have registered the global proxy: asked by shape, not class.
  const delegate =
    'getDelegate' in tracerProvider && typeof tracerProvider.getDelegate === 'function'
      ? /** @type {import('@opentelemetry/api').ProxyTracerProvider} */ (tracerProvider).getDelegate()
      : tracerProvider;
  if (delegate !== tracerSource) {
    tracerSource = delegate;
    tracer = delegate === noopTracerProvider ? null : delegate.getTracer(SCOPE, version);
  }
  // The metrics API has no proxy: a meter taken before a provider is registered stays a no-op,
  // so the instruments are made again whenever the global provider changes.
  const meterProvider = loaded.metrics.getMeterProvider();
  if (meterProvider !== meterSource) {
    meterSource = meterProvider;
    const meter = meterProvider.getMeter(SCOPE, version);
    instruments = NoopMeter && meter instanceof NoopMeter ? null : instrumentsOf(meter);
  }
  return tracer !== null || instruments !== null;
}

/**
 * @param {import('@opentelemetry/api').Meter} meter
 * @returns {Instruments}
 */
function instrumentsOf(meter) {
  const seconds = { unit: 's', advice: { explicitBucketBoundaries: DURATION_BUCKETS } };
  return {
    runs: meter.createCounter('quickrealm.runs', { description: 'Runs finished (run, runSync, exec)', unit: '{run}' }),
    turns: meter.createCounter('quickrealm.turns', { description: 'Session turns finished', unit: '{turn}' }),
    errors: meter.createCounter('quickrealm.errors', {
      description: 'Failed runs, turns, host operations and tool calls, by error code',
      unit: '{error}',
    }),
    runDuration: meter.createHistogram('quickrealm.run.duration', {
      description: 'Time from the call of run, runSync or exec to its result',
      ...seconds,
    }),
    turnDuration: meter.createHistogram('quickrealm.turn.duration', {
      description: 'Time from executeTurn or resume to its result',
      ...seconds,
    }),
    approvalsWaiting: meter.createUpDownCounter('quickrealm.approvals.waiting', {
      description: 'Approval requests waiting for a decision',
      unit: '{request}',
    }),
  };
}

/**
 * Sets how quickrealm reports to OpenTelemetry; returns the settings in force. Options left out
 * keep their value. Bad options throw a TypeError with code INVALID_INPUT and change nothing.
 * @param {{ enabled?: boolean, recordContent?: boolean }} [options]
 * @returns {{ enabled: boolean, recordContent: boolean }}
 */
function configureTelemetry(options = {}) {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw invalidInput('configureTelemetry() takes an options object');
  }
  for (const [key, value] of Object.entries(options)) {
    if (key !== 'enabled' && key !== 'recordContent') {
      throw invalidInput(`unknown configureTelemetry() option '${key}' (expected: enabled, recordContent)`);
    }
    if (value !== undefined && typeof value !== 'boolean') {
      throw invalidInput(`configureTelemetry() option ${key} must be a boolean`);
    }
  }
  if (options.enabled !== undefined) settings.enabled = options.enabled;
  if (options.recordContent !== undefined) settings.recordContent = options.recordContent;
  return { ...settings };
}

/**
 * Replaces how the API is loaded and forgets what was loaded, so the next run loads it again:
 * a loader that throws is a host without `@opentelemetry/api`.
 * @param {() => Api} loader
 */
function setApiLoader(loader) {
  loadApi = loader;
  api = undefined;
  tracerSource = undefined;
  tracer = null;
  meterSource = undefined;
  instruments = null;
}

module.exports = {
  listening,
  configureTelemetry,
  setApiLoader,
  settings,
  /** The loaded API; only meaningful after `listening()` returned true. */
  get api() {
    return /** @type {Api} */ (api);
  },
  get tracer() {
    return tracer;
  },
  get instruments() {
    return instruments;
  },
};
