// Case 6: the tiny edit on live host objects (through quickrealm's membrane, or directly in a SES
// compartment), and a tree-agent style edit on a real SharedTree: fork, build `context`, run the
// edit with the executor, dispose the fork.

import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { timeSync, timeAsync, NA, now, median, summarize } from '../lib/measure.mjs';
import { timingTable, fmtUs } from '../lib/format.mjs';
import { EDIT_DATA, EDIT_CODE } from '../lib/workloads.mjs';
import { needQuickrealm, needSes, needFluid } from '../lib/peers.mjs';

const TREE_CODE = "context.root.title = 'b'; context.root.items.insertAtEnd(3);";

export const title = 'Live objects and SharedTree edits';
export const about =
  'Live object: `' + EDIT_CODE + '` on a fresh host object `' + JSON.stringify(EDIT_DATA.root) + '` given as `context.root` ' +
  '(quickrealm: `runSync(code, { mode: "script", globals: { context } })`, a fresh realm per op; SES: a new Compartment per op ' +
  'with the object as a global). SharedTree: per op fork a view of `{ title, items: number[] }`, build `context` ' +
  '(`root` accessor over the fork), run `' + TREE_CODE + '` with the editor, check the fork, dispose it ' +
  '(quickrealm: `createSandboxExecutor({ createContext })`; SES: the SES executor pattern, `lockdown()` once and a new ' +
  'Compartment with `context` per edit). Reference: the same SharedTree op with the edit as a plain host function (no sandbox), ' +
  'timed before `lockdown()` like the quickrealm rows. The live-object rows time ops back to back (the collections of the ' +
  'garbage each op leaves included); "ops timed one by one" times each op alone with its fresh object built outside the ' +
  'clock (median of 1,000 per batch), the latency a caller waits for one edit; below the table, their tails, the process CPU ' +
  'time per op, and a new process\'s first op and the median of its next 1,000 (`bench/live-edit.mjs`, where the ' +
  'difference is explained).';

const freshObject = () => ({ root: { title: 'a', items: [1, 2] } });

/** Per-op figures of the live-object rows timed one by one, filled in for `render`. */
const single = {};

/**
 * `op(context)` timed alone, each with a fresh host object made outside the clock: 300 ms of
 * warm-up, then 9 batches of 1,000; the row's figure is the median per batch. Also the tail over
 * all ops and the process CPU time per op (V8's helper threads included, which collect garbage
 * an op leaves while later ops run).
 */
function singleOps(op) {
  const until = now() + 300;
  while (now() < until) op(freshObject());
  const all = [];
  const perBatch = [];
  const cpu = process.cpuUsage();
  for (let b = 0; b < 9; b++) {
    const times = [];
    for (let i = 0; i < 1000; i++) {
      const context = freshObject();
      const t0 = now();
      op(context);
      times.push((now() - t0) * 1000);
    }
    perBatch.push(median(times));
    all.push(...times);
  }
  const used = process.cpuUsage(cpu);
  all.sort((a, b) => a - b);
  const tail = {
    p50: all[Math.floor(all.length * 0.5)],
    p99: all[Math.floor(all.length * 0.99)],
    max: all[all.length - 1],
    mean: all.reduce((a, b) => a + b, 0) / all.length,
    cpu: (used.user + used.system) / all.length,
  };
  return { stats: summarize(perBatch), tail };
}

/**
 * A new process's first live-object op and the median of its next 1,000, timed one by one
 * (`bench/live-edit.mjs --child`): what a program that starts, runs edits and exits sees.
 */
function newProcess(engine) {
  const script = fileURLToPath(new URL('../live-edit.mjs', import.meta.url));
  const r = spawnSync(process.execPath, [script, '--child', `--engine=${engine}`, '--ops=1000'], {
    encoding: 'utf8',
    env: process.env,
  });
  try {
    const figures = JSON.parse(r.stdout.trim().split('\n').pop());
    return figures.error ? null : figures;
  } catch {
    return null;
  }
}

function checkObject(o) {
  if (o.root.title !== 'b' || o.root.items.length !== 3) throw new NA('the live edit did not land');
}

let fixture = null;
async function treeFixture() {
  if (fixture) return fixture;
  const { tree, beta } = await needFluid();
  const sf = new tree.SchemaFactory('quickrealm-bench-tree');
  class Root extends sf.object('Root', { title: sf.string, items: sf.array(sf.number) }) {}
  const view = beta.createIndependentTreeView(new tree.TreeViewConfiguration({ schema: Root }));
  view.initialize({ title: 'a', items: [1, 2] });
  const createContext = (branch) => ({
    get root() {
      return branch.root;
    },
    set root(v) {
      branch.root = v;
    },
  });
  const check = (branch) => {
    if (branch.root.title !== 'b' || branch.root.items.length !== 3) throw new NA('the tree edit did not land');
  };
  // Fluid's code keeps getting faster over the first thousands of forks and edits (its JIT
  // warm-up outlasts the per-row warm-up), which would favour whichever row runs last: the
  // same plain edit runs for a while before any row is timed.
  const until = performance.now() + 3000;
  while (performance.now() < until) {
    const fork = view.fork();
    createContext(fork).root.items.insertAtEnd(3);
    fork.dispose();
  }
  fixture = { view, createContext, check };
  return fixture;
}

export function rows() {
  return [
    {
      impl: 'quickrealm, live object (membrane)',
      run: async () => {
        const qr = needQuickrealm('runSync');
        const op = () => {
          const context = freshObject();
          const r = qr.runSync(EDIT_CODE, { mode: 'script', globals: { context } });
          if (!r.ok) throw new NA(`runSync with globals failed: ${r.error?.message}`);
          return context;
        };
        checkObject(op());
        return { stats: timeSync(op) };
      },
    },
    {
      impl: 'quickrealm, live object, ops timed one by one',
      run: async () => {
        const qr = needQuickrealm('runSync');
        const op = (context) => {
          const r = qr.runSync(EDIT_CODE, { mode: 'script', globals: { context } });
          if (!r.ok) throw new NA(`runSync with globals failed: ${r.error?.message}`);
        };
        const { stats, tail } = singleOps(op);
        single.quickrealm = { tail, fresh: newProcess('quickrealm') };
        return { stats };
      },
    },
    {
      impl: 'quickrealm executor, SharedTree edit',
      run: async () => {
        const qr = needQuickrealm('createSandboxExecutor');
        const { view, createContext, check } = await treeFixture();
        const editor = qr.createSandboxExecutor({ createContext, mode: 'script' });
        const op = async () => {
          const fork = view.fork();
          try {
            await editor(fork, TREE_CODE);
            return fork.root.items.length;
          } finally {
            fork.dispose();
          }
        };
        const fork = view.fork();
        await editor(fork, TREE_CODE);
        check(fork);
        fork.dispose();
        return { stats: await timeAsync(op, 1) };
      },
    },
    {
      // The floor any sandbox adds to: the same fork, context, edit and dispose with the edit
      // written as a host function, so no realm, compile or membrane is involved.
      impl: 'SharedTree edit without a sandbox (reference)',
      run: async () => {
        const { view, createContext, check } = await treeFixture();
        const edit = (context) => {
          context.root.title = 'b';
          context.root.items.insertAtEnd(3);
        };
        const op = () => {
          const fork = view.fork();
          try {
            edit(createContext(fork));
            return fork.root.items.length;
          } finally {
            fork.dispose();
          }
        };
        const fork = view.fork();
        edit(createContext(fork));
        check(fork);
        fork.dispose();
        return { stats: timeSync(op) };
      },
    },
    {
      impl: 'SES, live object',
      ses: true,
      run: async () => {
        const { Compartment } = await needSes();
        const op = () => {
          const context = freshObject();
          new Compartment({ globals: { context }, __options__: true }).evaluate(EDIT_CODE);
          return context;
        };
        checkObject(op());
        return { stats: timeSync(op) };
      },
    },
    {
      impl: 'SES, live object, ops timed one by one',
      ses: true,
      run: async () => {
        const { Compartment } = await needSes();
        const op = (context) => {
          new Compartment({ globals: { context }, __options__: true }).evaluate(EDIT_CODE);
        };
        const { stats, tail } = singleOps(op);
        single.SES = { tail, fresh: newProcess('ses') };
        return { stats };
      },
    },
    {
      impl: 'SES executor, SharedTree edit',
      ses: true,
      run: async () => {
        const { Compartment } = await needSes();
        const { view, createContext, check } = await treeFixture();
        const op = () => {
          const fork = view.fork();
          try {
            new Compartment({ globals: { context: createContext(fork) }, __options__: true }).evaluate(TREE_CODE);
            return fork.root.items.length;
          } finally {
            fork.dispose();
          }
        };
        const fork = view.fork();
        new Compartment({ globals: { context: createContext(fork) }, __options__: true }).evaluate(TREE_CODE);
        check(fork);
        fork.dispose();
        return { stats: timeSync(op) };
      },
    },
  ];
}

/** The live-object figures below the table: per-op tails, CPU per op, a new process, and the ratios. */
function liveObjectLines(medianOf) {
  const lines = [];
  for (const [engine, s] of Object.entries(single)) {
    const t = s.tail;
    const fresh = s.fresh
      ? `; in a new process, the first op ${fmtUs(s.fresh.firstUs / 1000)} ms and the median of the next 1,000 ` +
        `${fmtUs(s.fresh.medianUs)} µs`
      : '';
    lines.push(
      `${engine}, live object, 9,000 ops timed one by one: p50 ${fmtUs(t.p50)} µs, p99 ${fmtUs(t.p99)} µs, ` +
        `max ${fmtUs(t.max)} µs, mean ${fmtUs(t.mean)} µs; process CPU time ${fmtUs(t.cpu)} µs per op${fresh}.`,
    );
  }
  const ratio = (a, b) => {
    const x = medianOf(a);
    const y = medianOf(b);
    return x && y ? `${(x / y).toFixed(2)}×` : 'n/a';
  };
  const cpu = single.quickrealm && single.SES ? `${(single.quickrealm.tail.cpu / single.SES.tail.cpu).toFixed(2)}×` : 'n/a';
  lines.push(
    `quickrealm ÷ SES, live object: back to back ${ratio('quickrealm, live object (membrane)', 'SES, live object')}, ` +
      `ops timed one by one ${ratio('quickrealm, live object, ops timed one by one', 'SES, live object, ops timed one by one')}, ` +
      `CPU time per op ${cpu}. A SES compartment leaves more garbage than a quickrealm run; V8 collects it during a few ` +
      'later ops and on its helper threads, so it shows in the back-to-back figure and the CPU time, not in the median op.',
  );
  return lines.join('\n\n');
}

export function render(results) {
  const medianOf = (impl) => results.find((r) => r.impl === impl && r.stats)?.stats.median;
  const ses = medianOf('SES executor, SharedTree edit');
  const ratio = (impl) => {
    const t = medianOf(impl);
    return t && ses ? `${(t / ses).toFixed(2)}×` : 'n/a';
  };
  return (
    `${timingTable(results)}\n\n${liveObjectLines(medianOf)}\n\nSharedTree edit as a share of the SES executor's time: quickrealm executor ` +
    `${ratio('quickrealm executor, SharedTree edit')}, the edit without any sandbox ` +
    `${ratio('SharedTree edit without a sandbox (reference)')} (what the tree's fork, edit and dispose cost by themselves).`
  );
}
