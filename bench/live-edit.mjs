#!/usr/bin/env node
// The tiny edit on a live host object, measured op by op as an application sees it, one factor
// at a time. Each scenario runs in a fresh Node process, so every one starts cold and `lockdown()`
// of one never reaches another.
//
//   node bench/live-edit.mjs [--rounds=3] [--ops=1000] [--only=name,...]
//
// One op: a fresh host object `{ root: { title: 'a', items: [1, 2] } }`, a fresh `globals` record,
// `runSync("context.root.title = 'b'; context.root.items.push(3);", { mode: 'script', globals })`
// (quickrealm) or a new SES Compartment with `context` as a global, `evaluate()` of the same code.
// Every op is timed alone with performance.now(). Columns: the first op (once per process: the
// thread's template realm and the capture of the host's primordials for quickrealm); the median,
// 90th percentile and mean of the ops after it; the mean with the first op included; the process
// CPU time per op (all threads, so V8's helpers too, and none of the time the machine gave to other
// processes); the V8 collection pauses per op seen by a PerformanceObserver. Each scenario differs
// from the first of its engine by one factor. The control row is a plain 25 µs busy loop: what the
// machine's load adds to an op of that length.
//
// QUICKREALM_PATH picks the build (default: the package root), QUICKREALM_DEBUG_PATH adds the
// scenarios that use a second build, e.g. a development (`npm run build:debug`) copy of the package.
//
// `--child` (internal) runs one scenario and prints its figures as JSON.

import { spawnSync } from 'node:child_process';
import { PerformanceObserver } from 'node:perf_hooks';
import { createRequire } from 'node:module';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { timeSync } from './lib/measure.mjs';

const here = fileURLToPath(new URL('.', import.meta.url));
const benchRequire = createRequire(new URL('./run.mjs', import.meta.url));
const CODE = "context.root.title = 'b'; context.root.items.push(3);";

// ------------------------------------------------------------------ one scenario (child process)

function options(argv) {
  const o = {};
  for (const a of argv) {
    const m = /^--([a-z]+)=(.*)$/.exec(a);
    if (m) o[m[1]] = m[2];
  }
  return o;
}

const freshObject = () => ({ root: { title: 'a', items: [1, 2] } });

function check(context) {
  if (context.root.title !== 'b' || context.root.items.length !== 3) throw new Error('the live edit did not land');
}

async function sesOp(lockdownOptions) {
  await import('ses');
  globalThis.lockdown(lockdownOptions);
  const { Compartment } = globalThis;
  return (context) => {
    new Compartment({ globals: { context }, __options__: true }).evaluate(CODE);
  };
}

function quickrealmOp(qr) {
  return (context) => {
    const r = qr.runSync(CODE, { mode: 'script', globals: { context } });
    if (!r.ok) throw new Error(`runSync failed: ${r.error?.message}`);
  };
}

/**
 * Times `op` as configured: `warm` untimed ops first, then `ops` ops each timed alone (`timing=op`)
 * or back to back with one clock read at each end (`timing=batch`, the mean only).
 */
function measure(op, c, timedFromHere) {
  const shared = freshObject();
  const object = c.object === 'reused' ? () => shared : freshObject;
  const t0 = performance.now();
  const first = freshObject();
  op(first);
  const firstUs = (performance.now() - t0) * 1000;
  check(first);
  for (let i = 0; i < c.warm; i++) op(object());
  timedFromHere();
  const cpu = process.cpuUsage();
  const cpuUs = () => {
    const d = process.cpuUsage(cpu);
    return (d.user + d.system) / c.ops;
  };
  if (c.timing === 'bench') {
    // `npm run bench`'s method: 300 ms of warm-up, then the median of 9 batches of ≥ 200 ms.
    const stats = timeSync(() => op(object()));
    return { firstUs, meanUs: stats.median, batchMedian: true };
  }
  if (c.timing === 'batch') {
    const start = performance.now();
    for (let i = 0; i < c.ops; i++) op(object());
    return { firstUs, meanUs: ((performance.now() - start) * 1000) / c.ops, cpuUs: cpuUs() };
  }
  const times = new Float64Array(c.ops);
  for (let i = 0; i < c.ops; i++) {
    const context = object();
    const start = performance.now();
    op(context);
    times[i] = (performance.now() - start) * 1000;
  }
  const sorted = [...times].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  const meanUs = times.reduce((a, b) => a + b, 0) / c.ops;
  return { firstUs, medianUs: at(0.5), p90Us: at(0.9), meanUs, cpuUs: cpuUs() };
}

async function child(argv) {
  const o = options(argv);
  const c = {
    engine: o.engine ?? 'quickrealm',
    warm: Number(o.warm ?? 0),
    ops: Number(o.ops ?? 1000),
    timing: o.timing ?? 'op',
    object: o.object ?? 'fresh',
    lockdown: o.lockdown ?? 'no',
    prime: o.prime ?? 'no',
    pool: o.pool,
  };
  // SES as its documentation shows it: lockdown() with its defaults.
  const lockdownOptions = o.taming === 'bench'
    ? { consoleTaming: 'unsafe', errorTaming: 'unsafe', overrideTaming: 'moderate' }
    : undefined;
  let op;
  if (c.engine === 'control') {
    // No sandbox: 25 µs of busy JavaScript, to show what the machine adds to an op of that length.
    op = (context) => {
      const end = performance.now() + 0.025;
      while (performance.now() < end);
      context.root.title = 'b';
      context.root.items.push(3);
    };
  } else if (c.engine === 'ses') {
    op = await sesOp(lockdownOptions);
  } else {
    const qr = benchRequire(process.env.QUICKREALM_PATH || '..');
    // An application that also uses SES has locked its intrinsics before any run.
    if (c.lockdown === 'before') await sesOp(lockdownOptions);
    // The thread's template realm built by a plain run, so that the first op is the first live run alone.
    if (c.prime === 'plain') qr.runSync('return 0');
    // No realms prepared ahead by a background thread.
    if (c.pool !== undefined) await qr.configure({ poolSize: Number(c.pool) });
    op = quickrealmOp(qr);
  }
  // V8's collections (their pauses on this thread) while the ops run.
  const pauses = [];
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) pauses.push(e);
  });
  observer.observe({ entryTypes: ['gc'] });
  let figures;
  try {
    let from = 0;
    let ran = 0;
    figures = measure(
      (context) => {
        ran++;
        op(context);
      },
      c,
      () => {
        from = performance.now();
        ran = 0;
      },
    );
    const to = performance.now();
    // Node delivers the gc entries after a timer turn, not at the next immediate.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const inside = pauses.filter((e) => e.startTime >= from && e.startTime <= to);
    figures.gcUs = (inside.reduce((a, e) => a + e.duration, 0) * 1000) / ran;
  } catch (e) {
    figures = { error: e instanceof Error ? e.message : String(e) };
  }
  observer.disconnect();
  process.stdout.write(`${JSON.stringify(figures)}\n`);
}

// ------------------------------------------------------------------------- driver

const BENCH_FLAGS = ['--no-node-snapshot', '--expose-gc'];

/** The user's way first; every other scenario changes one factor of it. */
function scenarios(debugPath) {
  const user = { engine: 'quickrealm', warm: 0, timing: 'op', object: 'fresh' };
  const list = [
    ['quickrealm, as a user times it (cold, op by op, fresh object)', user],
    ['… warmed up by 3,000 ops first', { ...user, warm: 3000 }],
    ["… after one plain runSync (the thread's template realm built)", { ...user, prime: 'plain' }],
    ['… timed as one batch (mean)', { ...user, timing: 'batch' }],
    ["… timed as `npm run bench` does (warm-up, median of batch means)", { ...user, timing: 'bench' }],
    ['… one host object reused by every op', { ...user, object: 'reused' }],
    ['… no realm pool (`configure({ poolSize: 0 })`)', { ...user, pool: 0 }],
    ['… after SES lockdown() in the same process', { ...user, lockdown: 'before' }],
    ["… with the bench's flags (--no-node-snapshot --expose-gc)", { ...user, flags: BENCH_FLAGS }],
    ['SES, as a user times it (cold, op by op, fresh object)', { ...user, engine: 'ses' }],
    ['… warmed up by 3,000 ops first', { ...user, engine: 'ses', warm: 3000 }],
    ['… timed as one batch (mean)', { ...user, engine: 'ses', timing: 'batch' }],
    ["… timed as `npm run bench` does (warm-up, median of batch means)", { ...user, engine: 'ses', timing: 'bench' }],
    ["… the bench's lockdown() options (unsafe error and console taming)", { ...user, engine: 'ses', taming: 'bench' }],
  ];
  list.push(['control: 25 µs of busy JavaScript per op, no sandbox (what the machine adds)', { ...user, engine: 'control' }]);
  if (debugPath) {
    list.splice(7, 0, ['… the development build (QUICKREALM_DEBUG_PATH)', { ...user, build: debugPath }]);
  }
  return list;
}

function runScenario(s, ops) {
  const flags = s.flags ?? [];
  const args = [...flags, fileURLToPath(import.meta.url), '--child', `--ops=${ops}`];
  for (const k of ['engine', 'warm', 'timing', 'object', 'lockdown', 'taming', 'prime', 'pool']) {
    if (s[k] !== undefined) args.push(`--${k}=${s[k]}`);
  }
  const env = { ...process.env };
  if (s.build) env.QUICKREALM_PATH = s.build;
  const r = spawnSync(process.execPath, args, { cwd: here, env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`scenario failed: ${r.stderr || r.stdout}`);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

const fmt = (x) => (x == null ? '–' : x >= 100 ? x.toFixed(0) : x.toFixed(1));
const mid = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

async function main(argv) {
  const o = options(argv);
  const rounds = Number(o.rounds ?? 3);
  const ops = Number(o.ops ?? 1000);
  const only = o.only ? o.only.split(',') : null;
  const list = scenarios(process.env.QUICKREALM_DEBUG_PATH).filter(
    ([name]) => !only || only.some((w) => name.includes(w)),
  );
  const load = os.loadavg();
  const results = list.map(() => []);
  // Rounds interleave the scenarios, so a slow minute of the machine touches all of them.
  for (let r = 0; r < rounds; r++) {
    list.forEach(([name, s], i) => {
      results[i].push(runScenario(s, ops));
      process.stderr.write(`round ${r + 1}/${rounds}: ${name}\n`);
    });
  }
  const out = [
    `Node ${process.version}, ${os.cpus().length} cores, load average at start ${load.map((x) => x.toFixed(2)).join(', ')}; ` +
      `${rounds} rounds of ${ops} ops per scenario, each in a fresh process; µs, the median over rounds (min–max of the medians).`,
    '',
    '| scenario | first op | median | p90 | mean | mean with the first op | CPU per op | V8 GC pauses per op |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  list.forEach(([name], i) => {
    const rs = results[i];
    const failed = rs.find((x) => x.error);
    if (failed) {
      out.push(`| ${name} | fails: ${failed.error} | | | | | | |`);
      return;
    }
    const col = (k) => {
      const xs = rs.map((x) => k === 'all' ? (x.batchMedian ? null : (x.firstUs + x.meanUs * ops) / (ops + 1)) : x[k]).filter((x) => x != null);
      if (!xs.length) return '–';
      return `${fmt(mid(xs))} (${fmt(Math.min(...xs))}–${fmt(Math.max(...xs))})`;
    };
    out.push(`| ${name} | ${col('firstUs')} | ${col('medianUs')} | ${col('p90Us')} | ${col('meanUs')} | ${col('all')} | ${col('cpuUs')} | ${col('gcUs')} |`);
  });
  process.stdout.write(`${out.join('\n')}\n`);
}

const argv = process.argv.slice(2);
(argv.includes('--child') ? child(argv) : main(argv)).catch((e) => {
  process.stderr.write(`${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});
