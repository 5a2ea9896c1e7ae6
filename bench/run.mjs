#!/usr/bin/env node
// quickrealm benchmark harness.
//
//   node --no-node-snapshot --expose-gc bench/run.mjs [case ...] [options]
//
// Cases: realm compute memory membrane throughput tree telemetry (default: all).
// Options:
//   --only=a,b     only rows whose implementation name contains one of these
//   --skip=a,b     drop rows whose implementation name contains one of these
//   --quick        shorter batches (for a smoke run; numbers are noisier)
//   --out=FILE     where to write the markdown report (default bench/RESULTS.md)
//   --no-write     print only
//
// SES rows call lockdown(), which freezes this process's intrinsics, so they
// all run after every other row; tables are assembled afterwards.

import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cfg, NA, now, gcFull } from './lib/measure.mjs';
import { fmtUs, fmtPct, cell } from './lib/format.mjs';
import { quickrealm, versions } from './lib/peers.mjs';
import * as realm from './cases/realm.mjs';
import * as compute from './cases/compute.mjs';
import * as memory from './cases/memory.mjs';
import * as membrane from './cases/membrane.mjs';
import * as throughput from './cases/throughput.mjs';
import * as tree from './cases/tree.mjs';
import * as telemetry from './cases/telemetry.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));

const CASES = [
  ['realm', realm],
  ['compute', compute],
  ['memory', memory],
  ['membrane', membrane],
  ['throughput', throughput],
  ['tree', tree],
  ['telemetry', telemetry],
];

function parseArgs(argv) {
  const o = { cases: [], only: null, skip: null, quick: false, out: path.join(here, 'RESULTS.md'), write: true };
  for (const a of argv) {
    if (a === '--help' || a === '-h') o.help = true;
    else if (a === '--quick') o.quick = true;
    else if (a === '--no-write') o.write = false;
    else if (a.startsWith('--only=')) o.only = a.slice(7).split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);
    else if (a.startsWith('--skip=')) o.skip = a.slice(7).split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);
    else if (a.startsWith('--out=')) o.out = path.resolve(a.slice(6));
    else if (a.startsWith('-')) throw new Error(`unknown option ${a}`);
    else {
      const n = Number(a);
      const name = Number.isInteger(n) && n >= 1 && n <= CASES.length ? CASES[n - 1][0] : a;
      if (!CASES.some(([k]) => k === name)) throw new Error(`unknown case "${a}" (cases: ${CASES.map(([k]) => k).join(', ')})`);
      o.cases.push(name);
    }
  }
  if (!o.cases.length) o.cases = CASES.map(([k]) => k);
  return o;
}

const log = (...a) => process.stderr.write(a.join(' ') + '\n');

function summaryOf(res) {
  if (res.error) return `n/a (${res.error})`;
  if (res.stats) return `${fmtUs(res.stats.median)} ${fmtPct(res.stats.spread)}`;
  if (res.mem) return 'done';
  return 'done';
}

async function runRow(caseName, row) {
  const t0 = now();
  let res;
  try {
    res = { ...row, ...(await row.run()) };
  } catch (e) {
    const reason = e instanceof NA ? e.message : `error: ${e && e.message ? e.message : e}`;
    res = { ...row, error: cell(reason) };
  }
  gcFull();
  log(`[${caseName}] ${row.group ? row.group + ' / ' : ''}${row.impl}: ${summaryOf(res)} (${((now() - t0) / 1000).toFixed(1)} s)`);
  return res;
}

// CPU time used by the whole machine (Linux /proc/stat, in seconds), to tell
// how much other processes competed with this run. null elsewhere.
function machineBusySeconds() {
  try {
    const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const [user, nice, system, , , irq, softirq, steal] = f;
    return (user + nice + system + irq + softirq + (steal || 0)) / 100; // USER_HZ
  } catch {
    return null;
  }
}

function machine() {
  const cpus = os.cpus();
  return {
    cpu: cpus.length ? cpus[0].model.trim() : 'unknown',
    cores: cpus.length,
    memory: `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB`,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    v8: process.versions.v8,
    date: new Date().toISOString(),
  };
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  if (opts.help) {
    process.stdout.write(fs.readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n').slice(1, 16).map((l) => l.replace(/^\/\/ ?/, '')).join('\n') + '\n');
    return;
  }
  if (opts.quick) Object.assign(cfg, { warmMs: 100, batches: 5, batchMs: 60, memSeconds: 3, liveRealms: 100 });
  if (typeof globalThis.gc !== 'function') log('warning: run with --expose-gc; memory figures are unreliable without it');

  const started = now();
  const loadAtStart = os.loadavg();
  const busyAtStart = machineBusySeconds();
  const cpuAtStart = process.cpuUsage();
  if (loadAtStart[0] > os.cpus().length / 2) {
    log(`warning: load average ${loadAtStart[0].toFixed(2)} on ${os.cpus().length} cores; timings will be noisy`);
  }
  const selected = CASES.filter(([k]) => opts.cases.includes(k));
  const plan = selected.map(([name, mod]) => ({
    name,
    mod,
    rows: mod.rows().filter((r) => {
      const name = r.impl.toLowerCase();
      if (opts.only && !opts.only.some((s) => name.includes(s))) return false;
      return !(opts.skip && opts.skip.some((s) => name.includes(s)));
    }),
  }));

  const q = quickrealm();
  log(q.mod ? 'quickrealm: loaded' : `quickrealm: ${q.error}`);

  const results = new Map(plan.map((p) => [p.name, new Array(p.rows.length)]));
  // Pass 1: everything but SES. Pass 2: SES (after lockdown()).
  for (const ses of [false, true]) {
    for (const p of plan) {
      for (let i = 0; i < p.rows.length; i++) {
        if (!!p.rows[i].ses !== ses) continue;
        results.get(p.name)[i] = await runRow(p.name, p.rows[i]);
      }
    }
  }

  const m = machine();
  const v = versions();
  const elapsed = (now() - started) / 1000;
  const busyAtEnd = machineBusySeconds();
  const own = process.cpuUsage(cpuAtStart);
  const otherCores =
    busyAtStart == null ? null : Math.max(0, busyAtEnd - busyAtStart - (own.user + own.system) / 1e6) / elapsed;
  if (otherCores != null && otherCores > 0.25) {
    log(`warning: other processes used ${otherCores.toFixed(2)} cores on average during the run; timings are disturbed`);
  }
  const lines = [
    '# quickrealm benchmark results',
    '',
    `- Date: ${m.date}`,
    `- Machine: ${m.cpu}, ${m.cores} cores, ${m.memory} RAM, ${m.os}`,
    `- Node ${m.node} (V8 ${m.v8}); flags: ${process.execArgv.join(' ') || '(none)'}`,
    `- Peers: ${Object.entries(v).map(([k, x]) => `${k} ${x}`).join(', ')}`,
    `- quickrealm: ${q.mod ? 'loaded' : cell(q.error, 160)}`,
    `- Cases: ${opts.cases.join(', ')}${opts.only ? `; only rows matching: ${opts.only.join(', ')}` : ''}` +
      `${opts.skip ? `; skipped rows matching: ${opts.skip.join(', ')}` : ''}${opts.quick ? ' (--quick)' : ''}`,
    `- Timing: ${cfg.warmMs} ms warm-up, then ${cfg.batches} batches of ≥${cfg.batchMs} ms per row; ` +
      'the median of the per-batch µs/op is reported, spread = ±half the min–max range relative to the median ' +
      '(min–max in brackets). Ratio = row time ÷ quickrealm time (or ÷ the fastest row when quickrealm has no figure).',
    `- Run time: ${elapsed.toFixed(0)} s; load average at start: ${loadAtStart.map((x) => x.toFixed(2)).join(', ')}` +
      (otherCores == null ? '' : `; CPU used by other processes during the run: ${otherCores.toFixed(2)} cores on average`),
    '',
  ];
  for (const p of plan) {
    lines.push(`## ${CASES.findIndex(([n]) => n === p.name) + 1}. ${p.mod.title}`, '', p.mod.about, '');
    lines.push(p.mod.render(results.get(p.name)), '');
  }
  const md = lines.join('\n');
  process.stdout.write(md + '\n');
  if (opts.write) {
    fs.writeFileSync(opts.out, md + '\n');
    log(`wrote ${path.relative(process.cwd(), opts.out) || opts.out}`);
  }
  log(`total ${elapsed.toFixed(1)} s`);
}

main().then(
  () => process.exit(0),
  (e) => {
    log(e && e.stack ? e.stack : String(e));
    process.exit(1);
  },
);
