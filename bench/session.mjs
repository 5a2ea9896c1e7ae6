#!/usr/bin/env node
// Session costs (lib/session).
//
//   node bench/session.mjs [--quick]
//
// 1. A session turn over a bare run() with the same code: a turn that reads a 4 KiB file through
//    `world.read` against run() with the same text passed as `data` (and against run() with a
//    plain host `world.read` global, no gate), and `return 1` against run('return 1'). The pairs
//    are interleaved, so both rows see the same machine load; ratios are of medians in this run.
// 2. Gate cost per call: a turn that calls `world.stat` N = 1000 times minus one that calls it
//    0 times, divided by N; the same for a no-op host operation (`await noop()`); both against
//    bare run() with plain host functions, and against bare run() with the plain `world.stat`
//    wrapped in a turn's gate (no session around it). Then the gate's parts timed from Node:
//    the whole `gate.world()` with a constant body, the policy decision alone
//    (`session.allowed()`, which is the native check), the budget charge and the hash-chained
//    audit append (and, of that, what building the returned entry object costs).
// 3. snapshot() and Session.restore() of a session over a 10 MB workspace (100 files of 100 KB,
//    mixed text; and random bytes), with the parts: the world's toZip(), the snapshot wrapper
//    (the world zip written into an outer zip), opening the outer zip, the world's fromZip(),
//    and Node's own zlib deflating the same files (levels 6 and 1) as a reference for what
//    deflate itself costs on this machine.
// 4. Resume after approval: a turn that makes 10 operation calls and then asks for approval;
//    its first run (to `needs-approval`) against `resume()` (the 10 calls answered from the
//    journal, then the approved call). Operations that return at once, and operations that
//    wait 1 ms (a stand-in for a remote call).
//
// Every row reports the median and the 90th percentile of per-iteration (or per-batch) times
// after a warm-up. Some attributions use internal modules (lib/session/turn.js, snapshot.js,
// lib/native/load.js); they are only called, not changed.

import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import zlib from 'node:zlib';
import { now, gcFull, median } from './lib/measure.mjs';
import { fmtUs, fmtBytes, fmtRatio, table } from './lib/format.mjs';

const require = createRequire(import.meta.url);
const root = process.env.QUICKREALM_PATH ?? '..';
const qr = require(root);
const { Gate } = require(`${root}/lib/session/turn.js`);
const { encodeSnapshot } = require(`${root}/lib/session/snapshot.js`);
const { normalizePolicy } = require(`${root}/lib/session/policy.js`);
const { SessionLedger } = require(`${root}/lib/native/load.js`);
const { Session, ZipWorkspace, run, policies } = qr;

const quick = process.argv.includes('--quick');
const scale = quick ? 0.2 : 1;
const iters = (n) => Math.max(5, Math.round(n * scale));

// --- statistics -------------------------------------------------------------------------------

function p90(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(s.length * 0.9) - 1)];
}

const stats = (xs) => ({ median: median(xs), p90: p90(xs), n: xs.length });

/** Runs `ops` (async functions) in turn, `warm` rounds unrecorded, then `n` recorded rounds. ms per op. */
async function interleaved(ops, warm, n) {
  const samples = ops.map(() => []);
  for (let r = 0; r < warm + n; r++) {
    for (let i = 0; i < ops.length; i++) {
      const t0 = now();
      await ops[i]();
      const dt = now() - t0;
      if (r >= warm) samples[i].push(dt);
    }
  }
  return samples;
}

/** µs per call of a synchronous `op`, over `batches` batches of `perBatch` calls after a warm-up. */
function perCall(op, perBatch, batches = iters(15)) {
  for (let i = 0; i < perBatch; i++) op();
  const us = [];
  for (let b = 0; b < batches; b++) {
    const t0 = now();
    for (let i = 0; i < perBatch; i++) op();
    us.push(((now() - t0) * 1000) / perBatch);
  }
  return stats(us);
}

const fmtMs = (ms) => (ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms.toFixed(2));
const usRow = (what, s, ...extra) => [what, fmtUs(s.median), fmtUs(s.p90), ...extra];
const msRow = (what, s, ...extra) => [what, fmtMs(s.median), fmtMs(s.p90), ...extra];

function check(result, tag = 'ok') {
  const outcome = result.outcome ?? (result.ok ? { tag: 'ok' } : { tag: 'error', ...result.error });
  if (outcome.tag !== tag) throw new Error(`expected ${tag}, got ${JSON.stringify(outcome).slice(0, 300)}`);
  return result;
}

// --- workloads ------------------------------------------------------------------------------

const WORDS = (
  'the quick brown fox jumps over a lazy dog function return const let value index error ' +
  'session policy budget audit world read write file path import export class async await'
).split(' ');

/** Deterministic mixed text (words, numbers, punctuation, line breaks) of `bytes` ASCII bytes. */
function mixedText(bytes, seed) {
  let s = seed >>> 0 || 1;
  const rnd = () => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return s / 2 ** 32;
  };
  const parts = [];
  let len = 0;
  while (len < bytes) {
    const r = rnd();
    let w = WORDS[(rnd() * WORDS.length) | 0];
    if (r < 0.05) w = String((rnd() * 1e6) | 0);
    else if (r < 0.08) w += '();';
    w += rnd() < 0.1 ? '\n' : ' ';
    parts.push(w);
    len += w.length;
  }
  return parts.join('').slice(0, bytes);
}

/** A workspace of 100 files of 100 KB (text or random bytes), loaded without history. */
function bigWorkspace(kind) {
  const ws = new ZipWorkspace();
  const files = [];
  for (let i = 0; i < 100; i++) {
    const data = kind === 'text' ? Buffer.from(mixedText(100 * 1000, i + 1)) : randomBytes(100 * 1000);
    files.push(data);
    ws.writeFile(`src/dir${i % 10}/file${i}.${kind === 'text' ? 'txt' : 'bin'}`, data);
  }
  // As a host would open a project: from an archive, with no history yet.
  const loaded = ZipWorkspace.fromZip(ws.toZip({ history: false }));
  ws.dispose();
  return { ws: loaded, files };
}

// --- 1. turn overhead -----------------------------------------------------------------------

async function turnOverhead(big) {
  const text = mixedText(4096, 7);
  const ws = new ZipWorkspace();
  ws.writeFile('notes.txt', text);
  const session = new Session({ workspace: ws });
  const bigSession = new Session({ workspace: big.ws.fork() });
  const limits = { timeoutMs: 30_000 };
  const READ = 'const t = world.read("notes.txt"); return t.length;';
  const plainWorld = { world: { read: (p) => ws.readText(p) } };
  const ops = [
    async () => check(await session.executeTurn(READ)),
    async () => check(await run('const t = text; return t.length;', { data: { text }, limits })),
    async () => check(await run(READ, { globals: plainWorld, limits })),
    async () => check(await session.executeTurn('return 1')),
    async () => check(await run('return 1', { limits })),
    async () => check(await bigSession.executeTurn('return 1')),
  ];
  const [turnRead, bareData, bareGlobal, turnOne, bareOne, bigOne] = (
    await interleaved(ops, iters(40), iters(300))
  ).map((xs) => stats(xs.map((ms) => ms * 1000)));
  const ratio = (a, b) => fmtRatio(a.median / b.median);
  return table(
    ['what', 'median µs/turn', 'p90', 'vs bare run()'],
    [
      usRow('run(): the text passed as data', bareData, '1×'),
      usRow('run(): world.read as a plain host global', bareGlobal, ratio(bareGlobal, bareData)),
      usRow('session turn: world.read through the gate', turnRead, ratio(turnRead, bareData)),
      usRow("run('return 1')", bareOne, '1×'),
      usRow("session turn 'return 1'", turnOne, ratio(turnOne, bareOne)),
      usRow("session turn 'return 1', 10 MB world", bigOne, ratio(bigOne, bareOne)),
      [
        'turn overhead (median difference): read / return 1',
        `${fmtUs(turnRead.median - bareData.median)} / ${fmtUs(turnOne.median - bareOne.median)}`,
        '',
        '',
      ],
    ],
  );
}

// --- 2. gate cost per call ------------------------------------------------------------------

/** A turn's gate over a fresh ledger (SAFE_ANALYSIS operation lists, a hostCalls budget). */
function newGate() {
  const policy = normalizePolicy(undefined);
  const ledger = new SessionLedger(
    { allowedOperations: policy.allowedOperations, deniedOperations: policy.deniedOperations },
    { hostCalls: 1e12 },
  );
  ledger.startTurn(1, 0xffffffff);
  return new Gate({
    ledger,
    operations: new Map(),
    requests: [],
    controller: new AbortController(),
    execLimits: undefined,
    beforeApproved: async () => {},
  });
}

async function gateCost() {
  const N = 1000;
  const ws = new ZipWorkspace();
  ws.writeFile('a.txt', 'x'.repeat(100));
  const statLoop = (n) => `let s = 0; for (let i = 0; i < ${n}; i++) s += world.stat("a.txt").size; return s;`;
  const opLoop = (n) => `let s = 0; for (let i = 0; i < ${n}; i++) s += await noop(i); return s;`;
  const session = new Session({ workspace: ws });
  const opSession = new Session({
    workspace: ws,
    policy: {
      ...policies.SAFE_ANALYSIS,
      allowedOperations: [...policies.SAFE_ANALYSIS.allowedOperations, 'noop'],
    },
    operations: { noop: (i) => i & 1 },
  });
  const limits = { timeoutMs: 30_000 };
  const plain = {
    world: {
      stat: (p) => {
        const s = ws.stat(p);
        return { size: s.size, kind: s.kind, mtime: s.mtime };
      },
    },
  };
  const constant = { world: { stat: () => ({ size: 100, kind: 'file', mtime: 0 }) } };
  // The gate alone around the same plain world.stat, in a bare run() (no session turn around it).
  const gate = newGate();
  const gated = { world: { stat: (p) => gate.world('world.stat', [p], () => plain.world.stat(p)) } };
  const noopGlobal = { noop: async (i) => i & 1 };
  const ops = [
    async () => check(await session.executeTurn(statLoop(N))),
    async () => check(await session.executeTurn(statLoop(0))),
    async () => check(await run(statLoop(N), { globals: plain, limits })),
    async () => check(await run(statLoop(N), { globals: constant, limits })),
    async () => check(await run(statLoop(0), { globals: plain, limits })),
    async () => check(await run(statLoop(N), { globals: gated, limits })),
    async () => check(await opSession.executeTurn(opLoop(N))),
    async () => check(await opSession.executeTurn(opLoop(0))),
    async () => check(await run(opLoop(N), { globals: noopGlobal, limits })),
    async () => check(await run(opLoop(0), { globals: noopGlobal, limits })),
  ];
  const s = await interleaved(ops, iters(3), iters(15));
  // Per call: each N-call sample minus the median 0-call sample of the same kind, over N.
  const per = (many, none) => stats(many.map((ms) => ((ms - median(none)) * 1000) / N));
  const turnStat = per(s[0], s[1]);
  const bareStat = per(s[2], s[4]);
  const bareConst = per(s[3], s[4]);
  const gatedStat = per(s[5], s[4]);
  const turnOp = per(s[6], s[7]);
  const bareOp = per(s[8], s[9]);

  // The gate's parts, from Node (no guest, no membrane).
  const hot = newGate();
  const ledger = hot.ledger;
  const value = { size: 100, kind: 'file', mtime: 0 };
  const gateWorld = perCall(() => hot.world('world.stat', ['a.txt'], () => value), 2000);
  const allowedYes = perCall(() => session.allowed('world.stat'), 20_000);
  const allowedNo = perCall(() => session.allowed('x'), 20_000);
  const take = perCall(() => ledger.take('hostCalls', 1), 20_000);
  const record = {
    timestamp: Date.now(),
    turnNumber: 1,
    operation: 'world.stat',
    args: '["a.txt"]',
    result: '{"size":100,"kind":"file","mtime":0}',
    durationMs: 0.01,
  };
  const audit = perCall(() => ledger.audit(record), 2000);

  const rows = [
    usRow(`session turn: world.stat (${N} calls − 0) / ${N}`, turnStat),
    usRow('run(): plain host world.stat on the same workspace', bareStat),
    usRow('run(): host function returning a constant (membrane only)', bareConst),
    usRow('run(): the same plain world.stat wrapped in gate.world()', gatedStat),
    ['gate share of a world.stat call (turn − plain, medians)', fmtUs(turnStat.median - bareStat.median), ''],
    usRow(`session turn: await noop() host operation (${N} − 0) / ${N}`, turnOp),
    usRow('run(): await of a plain async host function', bareOp),
    ['gate share of an operation call (turn − plain, medians)', fmtUs(turnOp.median - bareOp.median), ''],
    usRow('gate.world() from Node, constant body (check + charge + audit)', gateWorld),
    usRow("session.allowed('world.stat'): policy decision, allowed", allowedYes),
    usRow("session.allowed('x'): policy decision, refused", allowedNo),
    usRow("ledger.take('hostCalls', 1): budget charge", take),
    usRow('ledger.audit(record): hash-chained append', audit),
  ];
  return table(['what', 'median µs/call', 'p90'], rows);
}

// --- 3. snapshot and restore ----------------------------------------------------------------

async function snapshots(big) {
  const rows = [];
  for (const kind of ['text', 'random']) {
    const { ws, files } = big[kind];
    const session = new Session({ workspace: ws });
    // One turn first, so the snapshot carries an audit log and a turn record.
    const file = `src/dir1/file1.${kind === 'text' ? 'txt' : 'bin'}`;
    check(await session.executeTurn(`return world.list().length + world.stat(${JSON.stringify(file)}).size;`));
    const n = iters(7);
    const snap = [];
    const restore = [];
    const toZip = [];
    const wrap = [];
    const fromZip = [];
    let bytes = session.snapshot();
    const worldZip = ws.toZip({ compress: false });
    for (let i = 0; i < n + 1; i++) {
      gcFull();
      let t0 = now();
      bytes = session.snapshot();
      const a = now() - t0;
      t0 = now();
      const restored = Session.restore(bytes);
      const b = now() - t0;
      restored.workspace.dispose();
      t0 = now();
      ws.toZip({ compress: false });
      const c = now() - t0;
      t0 = now();
      encodeSnapshot({ meta: {}, ledger: '{}', world: ws, staged: null, stagedOrigin: null });
      const d = now() - t0;
      t0 = now();
      ZipWorkspace.fromZip(worldZip).dispose();
      const e = now() - t0;
      if (i === 0) continue;
      snap.push(a);
      restore.push(b);
      toZip.push(c);
      wrap.push(d);
      fromZip.push(e);
    }
    const outer = [];
    const deflate = [];
    const deflate1 = [];
    for (let i = 0; i < Math.min(n, 5); i++) {
      let t0 = now();
      ZipWorkspace.fromZip(bytes, { maxEntries: 8 }).dispose();
      outer.push(now() - t0);
      t0 = now();
      for (const f of files) zlib.deflateRawSync(f, { level: 6 });
      deflate.push(now() - t0);
      t0 = now();
      for (const f of files) zlib.deflateRawSync(f, { level: 1 });
      deflate1.push(now() - t0);
    }
    const label = kind === 'text' ? '10 MB mixed text' : '10 MB random bytes';
    rows.push(
      msRow(`${label}: snapshot()`, stats(snap), fmtBytes(bytes.length)),
      msRow('  world.toZip({ compress: false }) (part of snapshot)', stats(toZip), fmtBytes(worldZip.length)),
      msRow('  packing the snapshot zip, the world exported into it natively', stats(wrap), ''),
      msRow(`${label}: Session.restore()`, stats(restore), ''),
      msRow('  opening the snapshot zip (part of restore)', stats(outer), ''),
      msRow('  ZipWorkspace.fromZip(world zip) (part of restore)', stats(fromZip), ''),
      msRow("  reference: Node's zlib deflate, level 6, of the 100 files", stats(deflate), ''),
      msRow("  reference: Node's zlib deflate, level 1, of the 100 files", stats(deflate1), ''),
    );
    session.workspace.dispose();
  }
  return table(['what', 'median ms', 'p90', 'size'], rows);
}

// --- 4. resume after approval ---------------------------------------------------------------

async function resumeCost() {
  const CODE = 'let x = 0; for (let i = 0; i < 10; i++) x = await tick(x); const r = await send(x); return [x, r];';
  const rows = [];
  for (const delayMs of [0, 1]) {
    const tick = delayMs ? (x) => new Promise((resolve) => setTimeout(() => resolve(x + 1), delayMs)) : (x) => x + 1;
    const policy = { ...policies.SAFE_ANALYSIS, allowedOperations: ['world.*', 'tick', 'send'] };
    const session = new Session({
      policy,
      operations: { tick, send: { handler: (x) => ({ sent: x }), needsApproval: true } },
    });
    const plain = new Session({ policy, operations: { tick, send: (x) => ({ sent: x }) } });
    const first = [];
    const resumed = [];
    const straight = [];
    const n = iters(delayMs ? 30 : 150);
    for (let i = 0; i < n + iters(10); i++) {
      let t0 = now();
      const paused = check(await session.executeTurn(CODE), 'needs-approval');
      const a = now() - t0;
      session.approve(paused.outcome.requests[0].id);
      t0 = now();
      const done = check(await session.resume());
      const b = now() - t0;
      if (done.outcome.value[0] !== 10) throw new Error('resume: wrong value');
      t0 = now();
      check(await plain.executeTurn(CODE));
      const c = now() - t0;
      if (i < iters(10)) continue;
      first.push(a * 1000);
      resumed.push(b * 1000);
      straight.push(c * 1000);
    }
    const f = stats(first);
    const r = stats(resumed);
    const what = delayMs ? `operations wait ${delayMs} ms` : 'operations return at once';
    rows.push(
      usRow(`${what}: first run, 10 calls, to needs-approval`, f, '1×'),
      usRow(`${what}: resume(), 10 calls from the journal + the approved call`, r, fmtRatio(r.median / f.median)),
      usRow(
        `${what}: the same turn with no approval (11 calls, one run)`,
        stats(straight),
        fmtRatio(median(straight) / f.median),
      ),
    );
  }
  return table(['what', 'median µs', 'p90', 'vs first run'], rows);
}

async function main() {
  const t0 = now();
  console.log(`quickrealm sessions — Node ${process.version}, ${new Date().toISOString()}${quick ? ' (quick)' : ''}\n`);
  const big = { text: bigWorkspace('text'), random: bigWorkspace('random') };
  console.log('## 1. Session turn over a bare run() (µs per turn, interleaved)\n');
  console.log(await turnOverhead(big.text));
  gcFull();
  console.log('\n## 2. Gate cost per call (µs)\n');
  console.log(await gateCost());
  gcFull();
  console.log('\n## 3. snapshot() and Session.restore(), 10 MB workspace (ms)\n');
  console.log(await snapshots(big));
  gcFull();
  console.log('\n## 4. Resume after approval (µs from the call to the outcome)\n');
  console.log(await resumeCost());
  console.log(`\n(${((now() - t0) / 1000).toFixed(0)} s)`);
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
