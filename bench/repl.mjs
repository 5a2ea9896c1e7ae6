#!/usr/bin/env node
// Persistent realms (createRepl / restoreRepl) on the small REPL of DESIGN §10: ten bindings,
// a closure pair over one cell, and a Map of 100 entries.
//
//   node --expose-gc bench/repl.mjs [--quick] [--no-write] [--out=FILE]
//
// 1. Snapshot size in bytes (the sealed state, envelope and MAC included).
// 2. snapshot(): the state sealed again under the caller's key.
// 3. A cell over the state: derive the realm, read the state, run the cell, write the state.
//    The same cell without state (a plain script run) is measured beside it; the difference
//    is what reading and writing the state cost.
// 4. restore + first eval: restoreRepl(bytes, { key }) and evalSync('inc("b")').
// 5. Peers measured in the same run, each bringing the same state back from nothing: replaying
//    the setup's source in a fresh quickrealm realm, and node:vm (createContext + the setup).
// 6. Idle cost: bytes held per idle REPL (heap and external memory over 2,000 restored REPLs,
//    after a full GC), against the state's own size.
//
// Needs no peers beyond Node itself. The release build is what the README quotes
// (`npm run build`); the bench prints which build it loaded.

import { writeFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, loadavg } from 'node:os';
import vm from 'node:vm';
import { cfg, gcFull, timeSync } from './lib/measure.mjs';
import { fmtBytes, fmtUs, table } from './lib/format.mjs';

const require = createRequire(import.meta.url);
const qr = require(process.env.QUICKREALM_PATH ?? '..');
const { createRepl, restoreRepl, runSync } = qr;

const quick = process.argv.includes('--quick');
if (quick) Object.assign(cfg, { warmMs: 50, batches: 3, batchMs: 60 });
const outArg = process.argv.find((a) => a.startsWith('--out='));
const outFile = outArg ? outArg.slice(6) : new URL('./repl-results.json', import.meta.url);

const KEY = 'a benchmark key of 32 characters';
const SETUP = `let n = 1; const seen = new Map(); function inc(k) { seen.set(k, ++n); return n }
const name = 'repl'; const list = [1, 2, 3]; const cfg = { a: 1, nested: { b: [1, 2] } }; cfg.self = cfg;
const when = new Date(0); const big = 2n ** 70n; const re = /a+/gi;
const counter = (() => { let c = 0; return { next: () => ++c, peek: () => c } })();
for (let i = 0; i < 100; i++) seen.set('k' + i, { i, even: i % 2 === 0 });
counter.next();`;

function ok(r) {
  if (!r.ok) throw new Error(`${r.error.code}: ${r.error.message}`);
  return r.value;
}

const repl = createRepl();
ok(repl.evalSync(SETUP));
const bytes = repl.snapshot({ key: KEY });

const rows = [];
const figures = {};
function row(name, stats, note = '') {
  figures[name] = stats.median;
  rows.push([name, fmtUs(stats.median), `${fmtUs(stats.min)}–${fmtUs(stats.max)}`, note]);
}

row('snapshot({ key })', timeSync(() => repl.snapshot({ key: KEY })), 'verify + seal again');
const emptyCell = timeSync(() => repl.evalSync(''));
row('a cell over the state: evalSync("")', emptyCell, 'derive + read + run + write');
const plain = timeSync(() => runSync('', { mode: 'script' }));
row('the same cell without state: runSync("", script)', plain, 'derive + run');
row('restore + first eval', timeSync(() => ok(restoreRepl(bytes, { key: KEY }).evalSync('inc("b")'))), 'restoreRepl + evalSync');
row('peer: replay the setup in a fresh realm', timeSync(() => ok(runSync(`${SETUP}\ninc("b")`, { mode: 'script' }))), 'quickrealm runSync');
row(
  'peer: node:vm createContext + replay the setup',
  timeSync(() => vm.runInContext(`${SETUP}\ninc("b")`, vm.createContext({}))),
  'no sandbox limits',
);
figures.stateRoundTripUs = emptyCell.median - plain.median;

// Idle cost: restored REPLs kept alive.
const COUNT = quick ? 200 : 2_000;
/** Heap and external bytes after full collections, once V8's concurrent sweepers are done. */
async function held() {
  for (let i = 0; i < 3; i++) {
    gcFull();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}
const before = await held();
const kept = [];
for (let i = 0; i < COUNT; i++) kept.push(restoreRepl(bytes, { key: KEY }));
const idleBytes = ((await held()) - before) / COUNT;
const emptyBefore = await held();
const empties = [];
for (let i = 0; i < COUNT; i++) empties.push(createRepl());
const emptyIdle = ((await held()) - emptyBefore) / COUNT;
if (kept.length + empties.length !== 2 * COUNT) throw new Error('unreachable');

let build = 'unknown';
try {
  const addon = require.resolve(`${process.env.QUICKREALM_PATH ?? '..'}/lib/native/quickrealm.linux-x64-gnu.node`);
  build = statSync(addon).size > 100 << 20 ? 'debug' : 'release';
} catch {}

const report = [
  `# Persistent realms (bench/repl.mjs)`,
  ``,
  `Node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), load ${loadavg()[0].toFixed(2)}, ${build} build of the addon${quick ? ', --quick' : ''}.`,
  ``,
  `Snapshot of the small REPL (ten bindings, a closure pair, a Map of 100 entries): **${bytes.length} bytes** (target ≤ 4,096).`,
  ``,
  table(['measure', 'median', 'range over batches', 'what'], rows),
  ``,
  `Reading and writing the state add ${fmtUs(figures.stateRoundTripUs)} to a cell (the two rows above, subtracted).`,
  `An idle REPL holds ${fmtBytes(idleBytes)} (its state is ${fmtBytes(bytes.length)}); an empty one ${fmtBytes(emptyIdle)}.`,
].join('\n');
console.log(report);
if (!process.argv.includes('--no-write')) {
  writeFileSync(
    outFile,
    `${JSON.stringify({ date: new Date().toISOString(), node: process.version, build, quick, snapshotBytes: bytes.length, idleBytes, emptyIdleBytes: emptyIdle, medianUs: figures }, null, 2)}\n`,
  );
}
