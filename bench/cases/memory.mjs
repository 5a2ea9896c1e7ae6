// Case 3: memory. (a) RSS growth over many sequential fresh-realm runs of the
// case-1 edit; (b) memory per live realm: keep N realms alive, divide ΔRSS.

import vm from 'node:vm';
import { cfg, rssGrowth, liveRealms, NA } from '../lib/measure.mjs';
import { table, fmtBytes, fmtInt, fmtUs, fmtRatio, na, cell } from '../lib/format.mjs';
import { editOps } from './realm.mjs';
import { needQuickrealm, qrValue, needIvm, needQuickJS, needSes } from '../lib/peers.mjs';
import { EDIT_DATA, EDIT_CODE_RET } from '../lib/workloads.mjs';

export const title = 'Memory';
export const about =
  'Sequential: the case-1 op run many times (target 100k for quickrealm, 20k for peers, each capped in time), ' +
  'RSS compared after a forced GC before and after. Live: N realms created and kept, ΔRSS / N after a forced GC; ' +
  '"engine-reported" is the engine\'s own figure where it has one (isolated-vm heap statistics, quickjs-emscripten ' +
  '`computeMemoryUsage().memory_used_size` of one runtime + context, V8 heapUsed for node:vm and SES, `realmStats()` for quickrealm).';

const SEQ_TARGET = { quickrealm: 100_000 };
const heapUsed = () => process.memoryUsage().heapUsed;

const live = {
  async quickrealm() {
    const qr = needQuickrealm('realmStats');
    const s = await qr.realmStats();
    if (!s || typeof s !== 'object') throw new NA('realmStats() returned no object');
    if (typeof s.bytesPerRealm !== 'number') throw new NA(`realmStats() has no numeric bytesPerRealm: ${JSON.stringify(s)}`);
    return { delta: undefined, perRealm: undefined, enginePerRealm: s.bytesPerRealm, raw: s };
  },
  async 'quickjs-emscripten'() {
    const { QuickJS } = await needQuickJS();
    const res = liveRealms(
      () => {
        const rt = QuickJS.newRuntime();
        return { rt, ctx: rt.newContext() };
      },
      ({ rt, ctx }) => {
        ctx.dispose();
        rt.dispose();
      },
      cfg.liveRealms,
    );
    // QuickJS's own count for one runtime + context.
    const rt = QuickJS.newRuntime();
    const ctx = rt.newContext();
    const h = rt.computeMemoryUsage();
    res.enginePerRealm = ctx.dump(h).memory_used_size;
    h.dispose();
    ctx.dispose();
    rt.dispose();
    return res;
  },
  async 'isolated-vm'() {
    const ivm = needIvm();
    const iso = new ivm.Isolate({ memoryLimit: 2048 });
    const heap = () => {
      const h = iso.getHeapStatisticsSync();
      return h.used_heap_size + (h.externally_allocated_size || 0);
    };
    try {
      return liveRealms(() => iso.createContextSync(), (c) => c.release(), cfg.liveRealms, heap);
    } finally {
      iso.dispose();
    }
  },
  async 'node:vm'() {
    return liveRealms(() => vm.createContext({}), () => {}, cfg.liveRealms, heapUsed);
  },
  async SES() {
    const { Compartment } = await needSes();
    return liveRealms(() => new Compartment({ __options__: true }), () => {}, cfg.liveRealms, heapUsed);
  },
};

export function rows() {
  const list = [];
  for (const [impl, f] of Object.entries(editOps)) {
    list.push({
      impl,
      group: 'seq',
      ses: impl === 'SES',
      run: async () => {
        const op = await f();
        const target = SEQ_TARGET[impl] ?? 20_000;
        const cap = impl === 'quickrealm' ? cfg.memSeconds * 2 : cfg.memSeconds;
        return { mem: rssGrowth(op, target, { memSeconds: cap }) };
      },
    });
  }
  for (const [impl, f] of Object.entries(live)) {
    list.push({ impl, group: 'live', ses: impl === 'SES', run: async () => ({ mem: await f() }) });
  }
  list.push({
    impl: 'quickrealm',
    group: 'stats',
    run: async () => {
      const qr = needQuickrealm('runSync');
      const r = qr.runSync(EDIT_CODE_RET, { mode: 'script', data: { context: EDIT_DATA } });
      qrValue(r, 'runSync script');
      if (!r.stats || typeof r.stats !== 'object') throw new NA('result has no stats object');
      return { raw: r.stats };
    },
  });
  return list;
}

export function render(results) {
  const seq = results.filter((r) => r.group === 'seq');
  const lv = results.filter((r) => r.group === 'live');
  const out = ['**RSS growth over sequential runs**', ''];
  out.push(
    table(
      ['implementation', 'runs (target)', 'µs/run', 'RSS growth after GC', 'per 1k runs', 'peak growth (before GC)'],
      seq.map((r) =>
        r.mem
          ? [
              r.impl,
              `${fmtInt(r.mem.runs)} (${fmtInt(r.mem.target)})`,
              fmtUs(r.mem.usPerRun),
              fmtBytes(r.mem.growth),
              fmtBytes((r.mem.growth / r.mem.runs) * 1000),
              fmtBytes(r.mem.peakGrowth),
            ]
          : [r.impl, na(r.error), '', '', '', ''],
      ),
    ),
  );
  out.push('', `**Memory per live realm** (N = ${cfg.liveRealms})`, '');
  const base = lv.find((r) => r.impl === 'quickrealm' && r.mem);
  const baseVal = base ? base.mem.enginePerRealm : undefined;
  const header = ['implementation', 'ΔRSS', 'RSS per realm', 'engine-reported per realm'];
  if (baseVal) header.push('vs quickrealm (engine-reported)');
  out.push(
    table(
      header,
      lv.map((r) => {
        if (!r.mem) return [r.impl, na(r.error), '', '', ...(baseVal ? [''] : [])];
        const line = [r.impl, fmtBytes(r.mem.delta), fmtBytes(r.mem.perRealm), fmtBytes(r.mem.enginePerRealm)];
        if (baseVal) line.push(fmtRatio(r.mem.enginePerRealm / baseVal));
        return line;
      }),
    ),
  );
  if (base) out.push('', `quickrealm \`realmStats()\`: \`${cell(JSON.stringify(base.mem.raw), 400)}\``);
  const st = results.find((r) => r.group === 'stats');
  if (st) {
    out.push(
      '',
      st.raw
        ? `quickrealm \`result.stats\` for one case-1 run: \`${cell(JSON.stringify(st.raw), 400)}\``
        : `quickrealm \`result.stats\`: ${na(st.error)}`,
    );
  }
  return out.join('\n');
}
