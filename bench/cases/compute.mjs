// Case 2: compute-bound guest code. Peers evaluate the source in one
// long-lived context per engine; quickrealm's runSync always builds a fresh
// realm, so its row includes realm setup (shown separately as the floor).

import vm from 'node:vm';
import { timeSync, NA } from '../lib/measure.mjs';
import { timingTable, fmtUs, fmtPct, na } from '../lib/format.mjs';
import { FIB_BODY, FIB_EXPECTED, RAY_BODY, asScript } from '../lib/workloads.mjs';
import { needQuickrealm, qrValue, needIvm, needQuickJS } from '../lib/peers.mjs';
import { ivmIsolate } from './realm.mjs';

export const title = 'Compute';
export const about =
  '`fib(24)` (recursive) and a small ray tracer (16×12 px, 5 spheres, 2 lights, shadows, 2 reflection bounces, ' +
  'vector objects). Peers run the source in one long-lived context; quickrealm runs ' +
  '`runSync(body)` (default function mode), which includes building a fresh realm.';

const WORKLOADS = [
  { key: 'fib', label: 'fib(24)', body: FIB_BODY, expected: FIB_EXPECTED },
  { key: 'ray', label: 'ray tracer kernel', body: RAY_BODY, expected: null },
];

// The ray tracer's checksum is taken from plain V8 and every engine must match.
const expected = (w) => (w.expected ?? (w.expected = new Function(w.body)()));

function check(w, v, impl) {
  if (v !== expected(w)) throw new NA(`${impl} returned ${v}, expected ${expected(w)}`);
}

const factories = {
  async quickrealm(w) {
    const qr = needQuickrealm('runSync');
    check(w, qrValue(qr.runSync(w.body), 'runSync'), 'quickrealm');
    return () => qr.runSync(w.body).value;
  },
  async 'V8 (plain function)'(w) {
    const f = new Function(w.body);
    return () => f();
  },
  async 'node:vm'(w) {
    const ctx = vm.createContext({});
    const script = new vm.Script(asScript(w.body));
    return () => script.runInContext(ctx);
  },
  async 'isolated-vm'(w) {
    const ivm = needIvm();
    const ctx = ivmIsolate(ivm).createContextSync();
    const script = ivmIsolate(ivm).compileScriptSync(asScript(w.body));
    return () => script.runSync(ctx);
  },
  async 'quickjs-emscripten'(w) {
    const { QuickJS } = await needQuickJS();
    const ctx = QuickJS.newContext();
    const src = asScript(w.body);
    return () => {
      const h = ctx.unwrapResult(ctx.evalCode(src));
      const v = ctx.getNumber(h);
      h.dispose();
      return v;
    };
  },
};

export function rows() {
  const list = [];
  for (const w of WORKLOADS) {
    for (const [impl, f] of Object.entries(factories)) {
      list.push({
        impl,
        group: w.key,
        run: async () => {
          const op = await f(w);
          check(w, op(), impl);
          return { stats: timeSync(op, { minOps: 3 }) };
        },
      });
    }
  }
  list.push({
    impl: 'quickrealm realm floor: runSync("return 0")',
    group: 'floor',
    run: async () => {
      const qr = needQuickrealm('runSync');
      if (qrValue(qr.runSync('return 0'), 'runSync') !== 0) throw new NA('runSync("return 0") did not return 0');
      return { stats: timeSync(() => qr.runSync('return 0').value) };
    },
  });
  return list;
}

export function render(results) {
  const out = [];
  const floor = results.find((r) => r.group === 'floor');
  for (const w of WORKLOADS) {
    out.push(`**${w.label}**\n`);
    out.push(timingTable(results.filter((r) => r.group === w.key)));
    out.push('');
  }
  if (floor) {
    out.push(
      floor.stats
        ? `quickrealm realm floor, \`runSync('return 0')\`: ${fmtUs(floor.stats.median)} µs/op (${fmtPct(floor.stats.spread)}).`
        : `quickrealm realm floor, \`runSync('return 0')\`: ${na(floor.error)}.`,
    );
  }
  return out.join('\n');
}
