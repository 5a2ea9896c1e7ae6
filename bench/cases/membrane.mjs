// Case 4: reading a host object's property from guest code, per read.
// Each op builds a fresh realm exposing host `obj` and runs a loop of N reads;
// per-read cost = (time(N reads) − time(0 reads)) / N, so realm setup cancels.

import vm from 'node:vm';
import { timeSync, summarize, NA } from '../lib/measure.mjs';
import { timingTable, fmtInt, fmtUs } from '../lib/format.mjs';
import { MEMBRANE_BODY, asScript } from '../lib/workloads.mjs';
import { needQuickrealm, qrValue, needIvm, needQuickJS, needSes } from '../lib/peers.mjs';
import { ivmIsolate } from './realm.mjs';

export const title = 'Membrane: host property read';
export const about =
  'Guest loop `for (i…) s += obj.x` over a host object `{ x: 1 }`; per-read time = (op with N reads − op with 0 reads) / N. ' +
  'quickrealm: `runSync(loop, { globals: { obj } })`; SES: direct read in a compartment (global lookup through the ' +
  'compartment scope); isolated-vm: `obj` is an `ivm.Reference` and each read is `obj.getSync("x")`; ' +
  'quickjs-emscripten: `obj.x` is a getter backed by a host function; node:vm: the host object itself (same heap; the global lookup goes through the interceptors of the contextified global).';

const HOST = { x: 1 };

const impls = {
  quickrealm: {
    n: 50_000,
    async make() {
      const qr = needQuickrealm('runSync');
      const probe = qr.runSync('return obj.x', { globals: { obj: HOST } });
      if (qrValue(probe, 'globals membrane') !== 1) throw new NA('globals membrane: obj.x did not read 1');
      return (n) => () => qr.runSync(MEMBRANE_BODY(n), { globals: { obj: HOST } }).value;
    },
  },
  SES: {
    n: 200_000,
    ses: true,
    async make() {
      const { Compartment } = await needSes();
      return (n) => {
        const src = asScript(MEMBRANE_BODY(n));
        return () => new Compartment({ globals: { obj: HOST }, __options__: true }).evaluate(src);
      };
    },
  },
  'isolated-vm': {
    n: 5_000,
    async make() {
      const ivm = needIvm();
      const iso = ivmIsolate(ivm);
      const ref = new ivm.Reference(HOST);
      return (n) => {
        const src = asScript(MEMBRANE_BODY(n).replace('obj.x', "obj.getSync('x')"));
        return () => {
          const ctx = iso.createContextSync();
          try {
            ctx.global.setSync('obj', ref);
            return ctx.evalSync(src);
          } finally {
            ctx.release();
          }
        };
      };
    },
  },
  'quickjs-emscripten': {
    n: 5_000,
    async make() {
      const { QuickJS } = await needQuickJS();
      return (n) => {
        const src = asScript(MEMBRANE_BODY(n));
        return () => {
          const rt = QuickJS.newRuntime();
          const ctx = rt.newContext();
          try {
            const obj = ctx.newObject();
            // defineProp wraps this host callback in a QuickJS getter function.
            ctx.defineProp(obj, 'x', { get: () => ctx.newNumber(HOST.x), enumerable: true, configurable: false });
            ctx.setProp(ctx.global, 'obj', obj);
            obj.dispose();
            const h = ctx.unwrapResult(ctx.evalCode(src));
            const v = ctx.getNumber(h);
            h.dispose();
            return v;
          } finally {
            ctx.dispose();
            rt.dispose();
          }
        };
      };
    },
  },
  'node:vm': {
    n: 200_000,
    async make() {
      return (n) => {
        const script = new vm.Script(asScript(MEMBRANE_BODY(n)));
        return () => script.runInNewContext({ obj: HOST });
      };
    },
  },
};

export function rows() {
  return Object.entries(impls).map(([impl, d]) => ({
    impl,
    ses: !!d.ses,
    n: d.n,
    run: async () => {
      const build = await d.make();
      const empty = build(0);
      const full = build(d.n);
      if (empty() !== 0) throw new NA(`${impl}: empty loop did not return 0`);
      if (full() !== d.n * HOST.x) throw new NA(`${impl}: loop did not return ${d.n}`);
      const t0 = timeSync(empty);
      const tn = timeSync(full, { minOps: 3 });
      // ns per read, batch by batch against the median empty op.
      const perRead = tn.batches.map((b) => ((b - t0.median) * 1000) / d.n);
      return { stats: summarize(perRead), empty: t0, full: tn };
    },
  }));
}

export function render(results) {
  return timingTable(results, {
    unit: 'ns/read',
    extra: {
      title: 'N reads/op: op µs (empty op µs)',
      value: (r) => `${fmtInt(r.n)}: ${fmtUs(r.full.median)} (${fmtUs(r.empty.median)})`,
    },
  });
}
