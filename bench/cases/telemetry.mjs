// Case 7: the cost of OpenTelemetry. The same op under three settings, measured batch by batch
// in turn (so a busy machine disturbs every setting alike): no `@opentelemetry/api` (simulated
// through the loader quickrealm uses), the API with no provider registered (its default no-op),
// and the SDK as a service sets it up (BasicTracerProvider + BatchSpanProcessor, MeterProvider +
// periodic reader, async context) exporting to an exporter that drops everything.

import { createRequire } from 'node:module';
import path from 'node:path';
import { cfg, gcFull, NA, now, summarize } from '../lib/measure.mjs';
import { fmtUs, na, timingTable } from '../lib/format.mjs';
import { needQuickrealm } from '../lib/peers.mjs';

export const title = 'Telemetry overhead';
export const about =
  'Each op under three settings, one batch of each in turn: no `@opentelemetry/api` (the loader made to fail), ' +
  'the API installed with no provider registered (its default no-op), and the OpenTelemetry SDK with spans and ' +
  'metrics recorded and exported to nowhere (`BatchSpanProcessor` over an exporter that drops them, a periodic ' +
  'metric reader that is not due during the run, AsyncLocalStorage context). Ops: `runSync` and `run` of `return 1 + 1`, and a session ' +
  'turn making one host operation call (a turn span, its run span, an operation span).';

const SETTINGS = ['no @opentelemetry/api', 'API, no provider', 'SDK, no-op exporter'];

/** The package under test's own require, its telemetry loader and the OpenTelemetry packages. */
function telemetryParts() {
  const qr = needQuickrealm('runSync', 'run', 'Session');
  // The package's main module is lib/index.js: its folder's parent is the package root.
  const main = createRequire(new URL('../run.mjs', import.meta.url)).resolve(process.env.QUICKREALM_PATH || '..');
  const fromRoot = createRequire(path.join(path.dirname(main), '..', 'package.json'));
  let otel;
  try {
    otel = fromRoot('./lib/telemetry/otel.js');
  } catch {
    throw new NA('this quickrealm has no lib/telemetry');
  }
  const load = (name) => {
    try {
      return fromRoot(name);
    } catch {
      throw new NA(`${name} is not installed (npm install in the repository root)`);
    }
  };
  const api = load('@opentelemetry/api');
  const traceSdk = load('@opentelemetry/sdk-trace-base');
  const metricsSdk = load('@opentelemetry/sdk-metrics');
  const { AsyncLocalStorageContextManager } = load('@opentelemetry/context-async-hooks');
  const dropAll = { export: (_items, done) => done({ code: 0 }), shutdown: async () => {}, forceFlush: async () => {} };
  const tracerProvider = new traceSdk.BasicTracerProvider({
    spanProcessors: [new traceSdk.BatchSpanProcessor(dropAll)],
  });
  const reader = new metricsSdk.PeriodicExportingMetricReader({ exporter: dropAll, exportIntervalMillis: 3_600_000 });
  const meterProvider = new metricsSdk.MeterProvider({ readers: [reader] });
  const contextManager = new AsyncLocalStorageContextManager();
  const realLoader = () => api;
  const missing = () => {
    throw Object.assign(new Error("Cannot find module '@opentelemetry/api'"), { code: 'MODULE_NOT_FOUND' });
  };
  const clear = () => {
    api.trace.disable();
    api.metrics.disable();
    api.context.disable();
  };
  const settings = {
    'no @opentelemetry/api': () => {
      clear();
      otel.setApiLoader(missing);
    },
    'API, no provider': () => {
      clear();
      otel.setApiLoader(realLoader);
    },
    'SDK, no-op exporter': () => {
      clear();
      otel.setApiLoader(realLoader);
      api.context.setGlobalContextManager(contextManager.enable());
      api.trace.setGlobalTracerProvider(tracerProvider);
      api.metrics.setGlobalMeterProvider(meterProvider);
    },
  };
  const restore = () => {
    clear();
    otel.setApiLoader(() => fromRoot('@opentelemetry/api'));
  };
  return { qr, otel, settings, restore };
}

/**
 * Times `op` under every setting: a warm-up of each, then `cfg.batches` rounds of one batch per
 * setting (the order rotating every round).
 * @returns {Promise<Record<string, ReturnType<typeof summarize>>>}
 */
async function interleaved(parts, op) {
  const perOp = Object.fromEntries(SETTINGS.map((s) => [s, []]));
  const batch = async (ms, minOps) => {
    let count = 0;
    const start = now();
    let end;
    do {
      await op();
      count++;
      end = now();
    } while (end - start < ms || count < minOps);
    return ((end - start) * 1000) / count;
  };
  try {
    for (const s of SETTINGS) {
      parts.settings[s]();
      await batch(cfg.warmMs / SETTINGS.length, 3);
    }
    for (let b = 0; b < cfg.batches; b++) {
      for (let i = 0; i < SETTINGS.length; i++) {
        const s = SETTINGS[(b + i) % SETTINGS.length];
        parts.settings[s]();
        gcFull();
        perOp[s].push(await batch(cfg.batchMs, cfg.minOps));
      }
    }
  } finally {
    parts.restore();
  }
  return Object.fromEntries(SETTINGS.map((s) => [s, summarize(perOp[s])]));
}

/** ns per `listening()` call, the check every hook makes, under the first two settings. */
function checkCost(parts) {
  const out = {};
  try {
    for (const s of SETTINGS.slice(0, 2)) {
      parts.settings[s]();
      const n = 2_000_000;
      for (let i = 0; i < 100_000; i++) parts.otel.listening();
      const start = now();
      for (let i = 0; i < n; i++) parts.otel.listening();
      out[s] = ((now() - start) * 1e6) / n;
    }
  } finally {
    parts.restore();
  }
  return out;
}

const OPS = [
  {
    key: 'runSync',
    label: "`runSync('return 1 + 1')`",
    make: (qr) => () => qr.runSync('return 1 + 1'),
  },
  {
    key: 'run',
    label: "`await run('return 1 + 1')`",
    make: (qr) => () => qr.run('return 1 + 1'),
  },
  {
    key: 'turn',
    label: "a session turn, `return await add(1, 2)` (one host operation call)",
    make: (qr) => {
      const session = new qr.Session({ operations: { add: (a, b) => a + b }, policy: { allowedOperations: ['add'] } });
      return () => session.executeTurn('return await add(1, 2)');
    },
  },
];

export function rows() {
  const list = OPS.map((o) => ({
    impl: `quickrealm ${o.key}`,
    group: o.key,
    run: async () => {
      const parts = telemetryParts();
      const op = o.make(parts.qr);
      const first = await op();
      const value = first.outcome ? first.outcome.value : first.value;
      if (value !== (o.key === 'turn' ? 3 : 2)) throw new NA(`${o.key} answered ${JSON.stringify(value)}`);
      return { settings: await interleaved(parts, op) };
    },
  }));
  list.push({
    impl: 'quickrealm listening() check',
    group: 'check',
    run: async () => ({ check: checkCost(telemetryParts()) }),
  });
  return list;
}

export function render(results) {
  const out = [];
  for (const o of OPS) {
    const r = results.find((x) => x.group === o.key);
    out.push(`**${o.label}**\n`);
    if (!r || !r.settings) {
      out.push(na(r ? r.error : 'not run'), '');
      continue;
    }
    out.push(
      timingTable(
        SETTINGS.map((s) => ({ impl: s, stats: r.settings[s] })),
        { baseline: SETTINGS[0] },
      ),
      '',
    );
  }
  const check = results.find((x) => x.group === 'check');
  if (check && check.check) {
    out.push(
      'The check each hook makes first (`listening()`): ' +
        SETTINGS.slice(0, 2)
          .map((s) => `${fmtUs(check.check[s])} ns with ${s}`)
          .join(', ') +
        ' (the mean of 2,000,000 calls).',
    );
  } else if (check) {
    out.push(`The check each hook makes first: ${na(check.error)}.`);
  }
  return out.join('\n');
}
