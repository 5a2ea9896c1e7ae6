// Case 1: a fresh realm per op, tiny edit on copied-in data, result read back.

import vm from 'node:vm';
import { timeSync, summarize, median, now, NA } from '../lib/measure.mjs';
import { timingTable } from '../lib/format.mjs';
import { EDIT_DATA, EDIT_CODE_RET, checkEdit } from '../lib/workloads.mjs';
import { needQuickrealm, qrValue, needIvm, needQuickJS, needSes, needFluid } from '../lib/peers.mjs';

export const title = 'Fresh realm + tiny edit';
export const about =
  'One op = new realm/context, copy `' + JSON.stringify(EDIT_DATA) + '` in as `context`, run `' +
  EDIT_CODE_RET + '` as a script, read the edited object back. Rows time ops back to back (construction of every realm ' +
  'counted); "ops timed one by one" times each op alone (median of 1,000 per batch) for the tail latency below the table.';

let sharedIsolate = null;
export function ivmIsolate(ivm) {
  if (!sharedIsolate || sharedIsolate.isDisposed) sharedIsolate = new ivm.Isolate({ memoryLimit: 1024 });
  return sharedIsolate;
}

/**
 * Op factories, one per implementation; each returns a zero-argument op
 * returning the edited data (validated once here). Shared with the memory case.
 */
export const editOps = {
  async quickrealm() {
    const qr = needQuickrealm('runSync');
    const opts = { mode: 'script', data: { context: EDIT_DATA } };
    checkEdit(qrValue(qr.runSync(EDIT_CODE_RET, opts), 'runSync script'));
    return () => qr.runSync(EDIT_CODE_RET, opts).value;
  },
  async 'quickjs-emscripten'() {
    const { QuickJS } = await needQuickJS();
    const inject = 'var context = ' + JSON.stringify(EDIT_DATA) + ';';
    return () => {
      const rt = QuickJS.newRuntime();
      const ctx = rt.newContext();
      try {
        ctx.unwrapResult(ctx.evalCode(inject)).dispose();
        const h = ctx.unwrapResult(ctx.evalCode(EDIT_CODE_RET));
        const v = ctx.dump(h);
        h.dispose();
        return v;
      } finally {
        ctx.dispose();
        rt.dispose();
      }
    };
  },
  async 'node:vm'() {
    return () => vm.runInNewContext(EDIT_CODE_RET, { context: structuredClone(EDIT_DATA) });
  },
  async 'isolated-vm'() {
    const ivm = needIvm();
    const iso = ivmIsolate(ivm);
    return () => {
      const ctx = iso.createContextSync();
      try {
        ctx.global.setSync('context', new ivm.ExternalCopy(EDIT_DATA).copyInto({ release: true }));
        return ctx.evalSync(EDIT_CODE_RET, { copy: true });
      } finally {
        ctx.release();
      }
    };
  },
  async SES() {
    const { Compartment } = await needSes();
    return () =>
      new Compartment({ globals: { context: structuredClone(EDIT_DATA) }, __options__: true }).evaluate(EDIT_CODE_RET);
  },
};

async function timed(factory) {
  const op = await factory();
  checkEdit(op());
  return { stats: timeSync(op) };
}

/** Tail latency of single ops, filled in by `singleOps` for `render`. */
let tail = null;

/**
 * The op timed one at a time, back to back: the median per batch is the row's figure; the p99
 * and the maximum over all ops (garbage collections between runs included) are reported below
 * the table.
 */
async function singleOps() {
  const qr = needQuickrealm('runSync');
  const opts = { mode: 'script', data: { context: EDIT_DATA } };
  checkEdit(qrValue(qr.runSync(EDIT_CODE_RET, opts), 'runSync script'));
  const all = [];
  const perBatch = [];
  for (let b = 0; b < 9; b++) {
    const times = [];
    for (let i = 0; i < 1000; i++) {
      const t0 = now();
      qr.runSync(EDIT_CODE_RET, opts);
      times.push((now() - t0) * 1000);
    }
    perBatch.push(median(times));
    all.push(...times);
  }
  all.sort((a, b) => a - b);
  tail = { p50: all[Math.floor(all.length * 0.5)], p99: all[Math.floor(all.length * 0.99)], max: all[all.length - 1], n: all.length };
  return { stats: summarize(perBatch) };
}

export function rows() {
  const list = Object.entries(editOps).map(([impl, f]) => ({ impl, ses: impl === 'SES', run: () => timed(f) }));
  list.splice(1, 0, { impl: 'quickrealm, ops timed one by one', run: singleOps });
  list.push({
    impl: 'Fluid tree in-process (reference, no sandbox)',
    run: async () => {
      const { tree, beta } = await needFluid();
      const sf = new tree.SchemaFactory('quickrealm-bench');
      class Root extends sf.object('Root', { title: sf.string, items: sf.array(sf.number) }) {}
      class Doc extends sf.object('Doc', { root: Root }) {}
      const config = new tree.TreeViewConfiguration({ schema: Doc });
      const op = () => {
        const view = beta.createIndependentTreeView(config);
        view.initialize(structuredClone(EDIT_DATA));
        view.root.root.title = 'b';
        view.root.root.items.insertAtEnd(3);
        const out = beta.TreeBeta.exportConcise(view.root);
        view.dispose();
        return out;
      };
      checkEdit(op());
      return { stats: timeSync(op) };
    },
  });
  return list;
}

export function render(results) {
  const out = timingTable(results);
  if (!tail) return out;
  const us = (v) => v.toFixed(1);
  return `${out}\n\nquickrealm, ${tail.n.toLocaleString('en-US')} ops timed one by one: p50 ${us(tail.p50)} µs, p99 ${us(tail.p99)} µs, max ${us(tail.max)} µs (a run's realm is freed as it ends, so no engine collection waits between runs; the rest of the tail is V8's collections of the copied values and the machine).`;
}
