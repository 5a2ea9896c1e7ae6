// Case 6: the tiny edit on live host objects (through quickrealm's membrane, or directly in a SES
// compartment), and a tree-agent style edit on a real SharedTree: fork, build `context`, run the
// edit with the executor, dispose the fork.

import { timeSync, timeAsync, NA } from '../lib/measure.mjs';
import { timingTable } from '../lib/format.mjs';
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
  'timed before `lockdown()` like the quickrealm rows.';

const freshObject = () => ({ root: { title: 'a', items: [1, 2] } });

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

export function render(results) {
  const median = (impl) => results.find((r) => r.impl === impl && r.stats)?.stats.median;
  const ses = median('SES executor, SharedTree edit');
  const ratio = (impl) => {
    const t = median(impl);
    return t && ses ? `${(t / ses).toFixed(2)}×` : 'n/a';
  };
  return (
    `${timingTable(results)}\n\nSharedTree edit as a share of the SES executor's time: quickrealm executor ` +
    `${ratio('quickrealm executor, SharedTree edit')}, the edit without any sandbox ` +
    `${ratio('SharedTree edit without a sandbox (reference)')} (what the tree's fork, edit and dispose cost by themselves).`
  );
}
