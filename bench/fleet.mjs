// The fleet on one machine: turns/s with 1, 2 and 4 worker processes (short and compute-bound
// turns over many sessions), failover after `kill -9` of a worker inside an operation, approval
// to resumed result, the wake of `result()` after a turn settles (NOTIFY), PostgresStore
// compare-and-set writes, rows and bytes per turn, the cost of NOTIFY on commits, and pg-boss
// alone. Everything runs against a throwaway PostgreSQL cluster (scripts/pg-cluster.js).
//
//   <node 22+> bench/fleet.mjs [--quick] [--out=FILE] [--no-write]
//
// Needs Node 22+ (pg-boss 12): `node scripts/node-runtime.js 24` prints a Node 24 binary.
// Prints a table and writes bench/fleet-results.json.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, '..');
const args = process.argv.slice(2);
const quick = args.includes('--quick');
const outFile = args.find((a) => a.startsWith('--out='))?.slice(6) ?? path.join(here, 'fleet-results.json');
const write = !args.includes('--no-write');

if (Number(process.versions.node.split('.')[0]) < 22) {
  console.log(`bench/fleet.mjs needs Node 22 or later (pg-boss 12); this is Node ${process.versions.node}.`);
  console.log('Install one with `node scripts/node-runtime.js 24` and run the bench with the binary it prints.');
  process.exit(0);
}

const { startCluster } = require('../scripts/pg-cluster.js');
const { PostgresStore, Fleet } = require('../lib/fleet/index.js');
const { SessionManager, runSync, policies } = require('..');
const operationsModule = path.join(here, 'lib', 'fleet-operations.cjs');
const { operations, snapshotKey } = require(operationsModule);

const SCHEMA = 'quickrealm';
const policy = { ...policies.SAFE_ANALYSIS, allowedOperations: ['bench.*'] };
const SETTLED = ['done', 'failed', 'paused'];
const now = () => performance.timeOrigin + performance.now();
const sleep = (/** @type {number} */ ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** @param {number[]} xs @param {number} q */
function quantile(xs, q) {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}
const round = (/** @type {number} */ x, digits = 1) => Number(x.toFixed(digits));

/** The addon in lib/native: a release build is stripped, a debug build carries its symbols. */
function addonBuild() {
  const dir = path.join(root, 'lib', 'native');
  const file = fs.readdirSync(dir).find((f) => f.endsWith('.node'));
  if (!file) return 'none';
  const bytes = fs.readFileSync(path.join(dir, file));
  const debug = bytes.includes('.debug_info');
  return `${debug ? 'debug' : 'release'} (${file}, ${(bytes.length / 2 ** 20).toFixed(0)} MiB)`;
}

// ---------------------------------------------------------------------------------------------

const cluster = await startCluster().catch((/** @type {Error} */ e) => {
  console.log(`bench/fleet.mjs needs the PostgreSQL server programs: ${e.message}`);
  process.exit(0);
});
const store = new PostgresStore({ connectionString: cluster.url, max: 12 }, { schema: SCHEMA });
/** @type {Set<import('node:child_process').ChildProcess>} */
const workers = new Set();
const results = /** @type {Record<string, any>} */ ({});
const [load1] = os.loadavg();

/**
 * Starts the fleet's pg-boss (creating its queue) before any timing: `boss()` is on the Fleet
 * object though not in its types.
 */
const startQueue = (/** @type {Fleet} */ fleet) => /** @type {any} */ (fleet).boss();

/** Starts `quickrealm worker` on `queue`; resolves once it takes turns. */
function startWorker(/** @type {string} */ queue) {
  const child = spawn(
    process.execPath,
    [
      path.join(root, 'bin', 'quickrealm.js'),
      'worker',
      '--db',
      cluster.url,
      '--operations',
      operationsModule,
      '--queue',
      queue,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  workers.add(child);
  child.once('exit', () => workers.delete(child));
  return new Promise((resolve, reject) => {
    let seen = '';
    child.stderr.on('data', (chunk) => {
      seen += chunk;
      if (seen.includes('"worker":"started"')) resolve(child);
    });
    child.once('exit', (code, signal) => reject(new Error(`worker exited (${code ?? signal}): ${seen.trim()}`)));
  });
}

async function stopWorkers() {
  await Promise.all([...workers].map((w) => new Promise((resolve) => w.once('exit', resolve).kill('SIGTERM'))));
}

/** Creates `n` sessions named `<prefix>-<i>`. */
async function createSessions(/** @type {string} */ prefix, /** @type {number} */ n) {
  const manager = new SessionManager({ store, operations, snapshotKey });
  const ids = [];
  for (let i = 0; i < n; i++) {
    const session = await manager.create({ id: `${prefix}-${i}`, tenant: `tenant-${i % 10}`, policy });
    session.workspace.dispose();
    ids.push(session.id);
  }
  return ids;
}

/**
 * Waits until every turn in `turnIds` has settled: NOTIFY on the turns channel counts them, and
 * a query every second catches any notification missed. Returns when each settled (ms).
 */
async function waitSettled(/** @type {import('pg').Client} */ listener, /** @type {string[]} */ turnIds) {
  const pending = new Set(turnIds);
  const settledAt = new Map();
  const onNotify = (/** @type {{ payload?: string }} */ message) => {
    if (message.payload && pending.delete(message.payload)) settledAt.set(message.payload, now());
  };
  listener.on('notification', onNotify);
  try {
    let last = now();
    while (pending.size > 0) {
      await sleep(20);
      if (now() - last > 1000) {
        last = now();
        const { rows } = await store.pool.query(
          `SELECT id FROM ${SCHEMA}.turns WHERE id = ANY($1) AND status = ANY($2)`,
          [[...pending], SETTLED],
        );
        for (const { id } of rows) if (pending.delete(id)) settledAt.set(id, now());
      }
    }
  } finally {
    listener.off('notification', onNotify);
  }
  return settledAt;
}

/** Submits turns with a few submissions in flight at once, as request handlers would. */
async function submitAll(/** @type {Fleet} */ fleet, /** @type {[string, string][]} */ turns, inFlight = 8) {
  const ids = new Array(turns.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < turns.length) {
        const i = next++;
        ids[i] = (await fleet.submit(turns[i][0], turns[i][1])).turnId;
      }
    }),
  );
  return ids;
}

async function turnStatuses(/** @type {string[]} */ turnIds) {
  const { rows } = await store.pool.query(
    `SELECT status, result::jsonb->'outcome'->>'tag' AS tag, count(*)::int AS n FROM ${SCHEMA}.turns
     WHERE id = ANY($1) GROUP BY 1, 2`,
    [turnIds],
  );
  return Object.fromEntries(rows.map((r) => [`${r.status}/${r.tag}`, r.n]));
}

/** Rows and total bytes (tables, indexes, TOAST) of the fleet's tables and pg-boss's schema. */
async function tableSizes() {
  const { rows } = await store.pool.query(
    `SELECT c.relname AS name, n.nspname AS schema, pg_total_relation_size(c.oid)::bigint AS bytes
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE c.relkind IN ('r', 'p') AND n.nspname IN ($1, $2)`,
    [SCHEMA, `${SCHEMA}_boss`],
  );
  /** @type {Record<string, { rows: number, bytes: number }>} */
  const sizes = {};
  for (const table of ['sessions', 'audit', 'journal', 'turns', 'approvals']) {
    const row = rows.find((r) => r.schema === SCHEMA && r.name === table);
    const count = await store.pool.query(`SELECT count(*)::int AS n FROM ${SCHEMA}.${table}`);
    sizes[table] = { rows: count.rows[0].n, bytes: Number(row?.bytes ?? 0) };
  }
  const bossBytes = rows.filter((r) => r.schema === `${SCHEMA}_boss`).reduce((a, r) => a + Number(r.bytes), 0);
  const bossRows = await store.pool.query(`SELECT count(*)::int AS n FROM ${SCHEMA}_boss.job`).catch(() => null);
  sizes['pg-boss jobs'] = { rows: bossRows?.rows[0].n ?? 0, bytes: bossBytes };
  return sizes;
}

/**
 * Keeps `inFlight` turns outstanding, each on a session with no other turn in flight, for
 * `seconds`; a settled turn (seen by NOTIFY) frees its session for the next submission.
 */
async function steadyLoad(
  /** @type {import('pg').Client} */ listener,
  /** @type {Fleet} */ fleet,
  /** @type {string} */ code,
  /** @type {string[]} */ sessions,
  /** @type {number} */ inFlight,
  /** @type {number} */ seconds,
) {
  const free = [...sessions];
  /** @type {Map<string, { session: string, at: number }>} */
  const outstanding = new Map();
  const latencies = [];
  const ids = [];
  let settled = 0;
  const t0 = now();
  const end = t0 + seconds * 1000;
  let wake = () => {};
  /** Turns that settled before their submit call returned. */
  const early = new Set();
  const settle = (/** @type {string} */ turnId, /** @type {{ session: string, at: number }} */ turn) => {
    outstanding.delete(turnId);
    free.push(turn.session);
    if (now() <= end) {
      settled++;
      latencies.push(now() - turn.at);
    }
    wake();
  };
  const onNotify = (/** @type {{ payload?: string }} */ message) => {
    if (!message.payload) return;
    const turn = outstanding.get(message.payload);
    if (turn) settle(message.payload, turn);
    else early.add(message.payload);
  };
  listener.on('notification', onNotify);
  try {
    while (now() < end) {
      while (outstanding.size < inFlight && free.length > 0 && now() < end) {
        const session = /** @type {string} */ (free.shift());
        const at = now();
        const { turnId } = await fleet.submit(session, code);
        ids.push(turnId);
        outstanding.set(turnId, { session, at });
        if (early.delete(turnId)) settle(turnId, { session, at });
      }
      await new Promise((resolve) => {
        wake = () => resolve(undefined);
        setTimeout(resolve, Math.max(1, Math.min(200, end - now())));
      });
    }
    // Let the last turns settle so the next measurement starts from an idle queue.
    const left = [...outstanding.keys()];
    listener.off('notification', onNotify);
    await waitSettled(listener, left);
  } finally {
    listener.off('notification', onNotify);
  }
  return { settled, seconds: (end - t0) / 1000, latencies, ids };
}

/** A loop the guest runs for about `ms` on this machine and this addon build. */
function computeLoop(/** @type {number} */ ms) {
  const body = (/** @type {number} */ n) =>
    `let s = 0; for (let i = 0; i < ${n}; i++) s = (s + i * 7) % 1000003; return s;`;
  let n = 100_000;
  for (let i = 0; i < 4; i++) {
    const times = [];
    for (let k = 0; k < 5; k++) {
      const t = now();
      runSync(body(n));
      times.push(now() - t);
    }
    n = Math.max(1000, Math.round((n * ms) / quantile(times, 0.5)));
  }
  return { n, code: body(n).replace(/return s;$/, 'await bench.op(); return s;') };
}

// ---------------------------------------------------------------------------------------------

try {
  await store.migrate();
  const { rows: version } = await store.pool.query('SHOW server_version');
  const listener = new (require('pg').Client)({ connectionString: cluster.url });
  await listener.connect();
  await listener.query(`LISTEN "${SCHEMA}_turns"`);
  const fleetFor = (/** @type {string} */ queue) => new Fleet({ store, operations, snapshotKey, queue });

  results.machine = {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model,
    load1AtStart: round(load1, 2),
    node: process.versions.node,
    postgres: version[0].server_version,
    addon: addonBuild(),
    date: new Date().toISOString(),
  };
  console.log(
    `machine: ${results.machine.cpus} cores (${results.machine.cpuModel}), load ${results.machine.load1AtStart}; ` +
      `Node ${results.machine.node}; PostgreSQL ${results.machine.postgres}; addon ${results.machine.addon}`,
  );
  console.log(
    `note: ${results.machine.cpus} cores are shared by the workers, PostgreSQL and this process; ` +
      `beyond ${results.machine.cpus} worker processes the figures are CPU-bound here`,
  );

  // 1. Throughput ------------------------------------------------------------------------------
  // Steady load: each worker process keeps IN_FLIGHT turns of distinct sessions outstanding (a new
  // turn is submitted as one settles), for a fixed time. Backlog: turns queued up front, then
  // drained, which is what a burst of submissions meets.
  const SESSIONS = quick ? 40 : 200;
  const IN_FLIGHT = 4;
  const STEADY_SECONDS = quick ? 3 : 10;
  const sessionIds = await createSessions('tp', SESSIONS);
  const compute = computeLoop(20);
  const kinds = { short: 'await bench.op(); return 1;', compute: compute.code };
  results.throughput = [];
  const sizeBefore = await tableSizes();
  let sizedTurns = 0;
  /** @type {Record<string, { rows: number, bytes: number }> | null} */
  let sizeAfter = null;
  for (const [kind, code] of Object.entries(kinds)) {
    for (const processes of [1, 2, 4]) {
      const queue = `tp-${kind}-${processes}`;
      const fleet = fleetFor(queue);
      await startQueue(fleet);
      await Promise.all(Array.from({ length: processes }, () => startWorker(queue)));
      const steady = await steadyLoad(listener, fleet, code, sessionIds, IN_FLIGHT * processes, STEADY_SECONDS);
      const row = {
        mode: 'steady',
        kind,
        processes,
        inFlight: IN_FLIGHT * processes,
        turns: steady.settled,
        seconds: STEADY_SECONDS,
        turnsPerSecond: round(steady.settled / steady.seconds),
        p50Ms: round(quantile(steady.latencies, 0.5)),
        p99Ms: round(quantile(steady.latencies, 0.99)),
        statuses: await turnStatuses(steady.ids),
      };
      results.throughput.push(row);
      console.log(
        `steady ${kind} × ${processes} process(es), ${row.inFlight} in flight: ${row.turnsPerSecond} turns/s, submit→result p50 ${row.p50Ms} ms p99 ${row.p99Ms} ms (${JSON.stringify(row.statuses)})`,
      );
      if (kind === 'short') {
        sizedTurns += steady.ids.length;
        // A backlog of 8 turns per process, queued at once (distinct sessions).
        const backlog = /** @type {[string, string][]} */ (
          Array.from({ length: 8 * processes }, (_, i) => [sessionIds[i % sessionIds.length], code])
        );
        const t0 = now();
        const ids = await submitAll(fleet, backlog);
        await waitSettled(listener, ids);
        const seconds = (now() - t0) / 1000;
        sizedTurns += ids.length;
        const drained = {
          mode: 'backlog',
          kind,
          processes,
          turns: ids.length,
          seconds: round(seconds, 2),
          turnsPerSecond: round(ids.length / seconds, 2),
          statuses: await turnStatuses(ids),
        };
        results.throughput.push(drained);
        console.log(
          `backlog ${kind} × ${processes} process(es): ${drained.turns} turns queued at once drained in ${drained.seconds} s (${drained.turnsPerSecond} turns/s)`,
        );
      }
      await stopWorkers();
      await fleet.stop();
      if (kind === 'short' && processes === 4) sizeAfter = await tableSizes();
    }
  }
  results.computeLoop = { iterations: compute.n, targetMs: 20 };

  // 2. Rows and bytes per turn (the short turns above: one operation each) -----------------------
  const { rows: live } = await store.pool.query(
    `SELECT (SELECT avg(octet_length(snapshot))::int FROM ${SCHEMA}.sessions WHERE id LIKE 'tp-%') AS snapshot,
            (SELECT avg(pg_column_size(a.*))::int FROM ${SCHEMA}.audit a) AS audit_row,
            (SELECT avg(pg_column_size(t.*))::int FROM ${SCHEMA}.turns t) AS turn_row,
            (SELECT round(regr_slope(octet_length(snapshot), turn_number))::int FROM ${SCHEMA}.sessions
             WHERE id LIKE 'tp-%') AS snapshot_growth_per_turn,
            (SELECT round(regr_intercept(octet_length(snapshot), turn_number))::int FROM ${SCHEMA}.sessions
             WHERE id LIKE 'tp-%') AS snapshot_at_turn_0,
            (SELECT avg(turn_number)::int FROM ${SCHEMA}.sessions WHERE id LIKE 'tp-%') AS turns_per_session`,
  );
  results.perTurn = { turns: sizedTurns, tables: {}, liveRowBytes: live[0] };
  for (const [table, before] of Object.entries(sizeBefore)) {
    const after = /** @type {Record<string, { rows: number, bytes: number }>} */ (sizeAfter)[table];
    results.perTurn.tables[table] = {
      rowsPerTurn: round((after.rows - before.rows) / sizedTurns, 2),
      bytesPerTurn: Math.round((after.bytes - before.bytes) / sizedTurns),
    };
  }
  console.log(
    `per short turn (${sizedTurns} turns): ${JSON.stringify(results.perTurn.tables)}; live row bytes ${JSON.stringify(live[0])}`,
  );

  // 3. Failover after kill -9 of the worker inside an operation ---------------------------------
  {
    const trials = quick ? 1 : 5;
    const queue = 'failover';
    const fleet = fleetFor(queue);
    await startQueue(fleet);
    const ids = await createSessions('fo', trials);
    await Promise.all([startWorker(queue), startWorker(queue)]);
    const times = [];
    for (const sessionId of ids) {
      const [turnId] = await submitAll(fleet, [[sessionId, 'await bench.hang(); return 1;']]);
      let pid = null;
      while (pid === null) {
        await sleep(10);
        const { rows } = await store.pool.query(
          `SELECT t.claimed_by FROM ${SCHEMA}.turns t JOIN ${SCHEMA}.journal j ON j.session_id = t.session_id
           WHERE t.id = $1 AND j.state = 'started'`,
          [turnId],
        );
        pid = rows[0] ? Number(rows[0].claimed_by.split(':').at(-2)) : null;
      }
      const killed = now();
      process.kill(pid, 'SIGKILL');
      const settledAt = await waitSettled(listener, [turnId]);
      const turn = await fleet.result(turnId);
      times.push(((settledAt.get(turnId) ?? now()) - killed) / 1000);
      if (turn.status !== 'done' || !turn.result?.ok) throw new Error(`failover turn ended ${JSON.stringify(turn)}`);
      await startWorker(queue);
    }
    results.failover = {
      heartbeatSeconds: 10,
      superviseIntervalSeconds: 2,
      retryDelaySeconds: 1,
      trials: times.map((t) => round(t, 2)),
      medianSeconds: round(quantile(times, 0.5), 2),
    };
    console.log(
      `failover after kill -9 (heartbeat 10 s, supervise 2 s, retry delay 1 s): median ${results.failover.medianSeconds} s of ${JSON.stringify(results.failover.trials)}`,
    );
    await stopWorkers();
    await fleet.stop();
  }

  // 4. Approval to resumed result, and result() wake after a turn settles ------------------------
  {
    const n = quick ? 10 : 200;
    const queue = 'approvals';
    const fleet = fleetFor(queue);
    await startQueue(fleet);
    const ids = await createSessions('ap', n);
    await Promise.all([startWorker(queue), startWorker(queue)]);
    const approveMs = [];
    const wakeMs = [];
    for (const sessionId of ids) {
      const { turnId } = await fleet.submit(sessionId, 'await bench.approve(); return 1;');
      const paused = await fleet.result(turnId);
      const request = /** @type {any} */ (paused.outcome).requests?.[0];
      if (paused.status !== 'paused' || !request) throw new Error(`expected a paused turn: ${JSON.stringify(paused)}`);
      const t0 = now();
      const resumed = await fleet.approve(sessionId, request.id);
      const turn = await fleet.result(/** @type {string} */ (resumed.turnId));
      const t1 = now();
      if (turn.status !== 'done') throw new Error(`resumed turn ended ${JSON.stringify(turn)}`);
      approveMs.push(t1 - t0);
      const { rows } = await store.pool.query(
        `SELECT extract(epoch FROM finished_at) * 1000 AS ms FROM ${SCHEMA}.turns WHERE id = $1`,
        [resumed.turnId],
      );
      wakeMs.push(t1 - Number(rows[0].ms));
    }
    results.approval = {
      samples: n,
      approveToResultMs: { p50: round(quantile(approveMs, 0.5)), p99: round(quantile(approveMs, 0.99)) },
      resultWakeMs: { p50: round(quantile(wakeMs, 0.5), 2), p99: round(quantile(wakeMs, 0.99), 2) },
    };
    console.log(
      `approval → resumed result (${n}, 2 workers): p50 ${results.approval.approveToResultMs.p50} ms, p99 ${results.approval.approveToResultMs.p99} ms; ` +
        `result() wake after settle: p50 ${results.approval.resultWakeMs.p50} ms, p99 ${results.approval.resultWakeMs.p99} ms`,
    );
    await stopWorkers();
    await fleet.stop();
  }

  // 5. PostgresStore compare-and-set writes --------------------------------------------------------
  {
    const seconds = quick ? 1 : 3;
    const snapshot = Buffer.alloc(4096, 7);
    /** Writers each loop put(expectedVersion) on their session for `seconds`. */
    const casRun = async (/** @type {string[]} */ sessions) => {
      let ok = 0;
      let conflicts = 0;
      const end = now() + seconds * 1000;
      await Promise.all(
        sessions.map(async (id) => {
          while (now() < end) {
            const version = await store.version(id);
            try {
              await store.put(id, snapshot, { expectedVersion: version, meta: { status: 'active' } });
              ok++;
            } catch (e) {
              if (/** @type {{ code?: string }} */ (e).code !== 'SESSION_CONFLICT') throw e;
              conflicts++;
            }
          }
        }),
      );
      return { writesPerSecond: round(ok / seconds), conflictRate: round(conflicts / (ok + conflicts), 3) };
    };
    results.cas = {
      snapshotBytes: snapshot.length,
      oneWriter: await casRun(['cas-a']),
      fourWritersDistinct: await casRun(['cas-b', 'cas-c', 'cas-d', 'cas-e']),
      fourWritersOneSession: await casRun(['cas-f', 'cas-f', 'cas-f', 'cas-f']),
    };
    console.log(`store compare-and-set (version read + put of 4 KiB): ${JSON.stringify(results.cas)}`);
  }

  // 6. NOTIFY on commit: every committing transaction that notified takes one global lock -----------
  {
    const seconds = quick ? 1 : 3;
    const clients = 4;
    await store.pool.query('CREATE TABLE IF NOT EXISTS bench_counter (id int PRIMARY KEY, n bigint NOT NULL)');
    await store.pool.query(
      'INSERT INTO bench_counter SELECT g, 0 FROM generate_series(0, 15) g ON CONFLICT DO NOTHING',
    );
    const commitRun = async (/** @type {boolean} */ notify) => {
      let commits = 0;
      const end = now() + seconds * 1000;
      await Promise.all(
        Array.from({ length: clients }, async (_, id) => {
          const client = await store.pool.connect();
          try {
            while (now() < end) {
              await client.query('BEGIN');
              await client.query('UPDATE bench_counter SET n = n + 1 WHERE id = $1', [id]);
              if (notify) await client.query("SELECT pg_notify('bench_commits', $1)", [String(id)]);
              await client.query('COMMIT');
              commits++;
            }
          } finally {
            client.release();
          }
        }),
      );
      return round(commits / seconds);
    };
    results.notify = { clients, commitsPerSecond: await commitRun(false), withNotify: await commitRun(true) };
    console.log(
      `commits/s with ${clients} clients: ${results.notify.commitsPerSecond} without NOTIFY, ${results.notify.withNotify} with NOTIFY`,
    );
  }

  // 7. pg-boss alone: jobs through send → fetch → complete, no turn run. As the fleet's workers
  // fetch (one job per fetch, groups of concurrency 1) and with batches that fetch again at once.
  {
    const { PgBoss } = await import('pg-boss');
    const boss = new PgBoss({ connectionString: cluster.url, schema: 'bench_boss', max: 8 });
    boss.on('error', () => {});
    await boss.start();
    const n = quick ? 200 : 2000;
    const groups = 100;
    results.pgBoss = [];
    for (const [label, workOptions] of /** @type {[string, Record<string, unknown>][]} */ ([
      ['work(), batchSize 1', { localConcurrency: 4, groupConcurrency: 1 }],
      [
        'batchSize 20, burstWhenBatchFull',
        { localConcurrency: 4, groupConcurrency: 1, batchSize: 20, burstWhenBatchFull: true },
      ],
    ])) {
      const queue = `raw-${results.pgBoss.length}`;
      await boss.createQueue(queue);
      const jobs = label.endsWith('batchSize 1') ? Math.min(n, quick ? 100 : 200) : n;
      const t0 = now();
      for (let i = 0; i < jobs; i += 500)
        await boss.insert(
          queue,
          Array.from({ length: Math.min(500, jobs - i) }, (_, k) => ({
            data: { i: i + k },
            group: { id: `g${(i + k) % groups}` },
          })),
        );
      const inserted = now();
      let done = 0;
      let finished = () => {};
      const all = new Promise((resolve) => {
        finished = () => resolve(undefined);
      });
      const id = await boss.work(queue, { pollingIntervalSeconds: 0.5, ...workOptions }, async (batch) => {
        done += batch.length;
        if (done >= jobs) finished();
      });
      await all;
      const seconds = (now() - inserted) / 1000;
      await boss.offWork(queue, { id, wait: true });
      const row = {
        fetch: label,
        jobs,
        groups,
        insertPerSecond: round(jobs / ((inserted - t0) / 1000)),
        jobsPerSecond: round(jobs / seconds),
      };
      results.pgBoss.push(row);
      console.log(`pg-boss alone, ${label}, localConcurrency 4, ${groups} groups: ${JSON.stringify(row)}`);
    }
    await boss.stop({ graceful: false });
  }

  await listener.end();
  results.machine.load1AtEnd = round(os.loadavg()[0], 2);
  printTable();
  if (write) {
    fs.writeFileSync(outFile, `${JSON.stringify(results, null, 2)}\n`);
    console.log(`wrote ${path.relative(process.cwd(), outFile)}`);
  }
} finally {
  await stopWorkers().catch(() => {});
  await store.close().catch(() => {});
  await cluster.stop();
}

function printTable() {
  const r = results;
  const lines = [
    '',
    `| measure | figure |`,
    `| --- | --- |`,
    ...r.throughput.map((/** @type {any} */ t) =>
      t.mode === 'steady'
        ? `| turns/s, ${t.kind} turns, ${t.processes} worker process(es), ${t.inFlight} in flight | ${t.turnsPerSecond} (submit→result p50 ${t.p50Ms} ms, p99 ${t.p99Ms} ms) |`
        : `| backlog of ${t.turns} ${t.kind} turns, ${t.processes} worker process(es) | drained in ${t.seconds} s (${t.turnsPerSecond} turns/s) |`,
    ),
    `| failover after kill -9 (heartbeat 10 s, supervise 2 s) | median ${r.failover.medianSeconds} s (${r.failover.trials.join(', ')}) |`,
    `| approval → resumed result | p50 ${r.approval.approveToResultMs.p50} ms, p99 ${r.approval.approveToResultMs.p99} ms |`,
    `| result() wake after settle (NOTIFY) | p50 ${r.approval.resultWakeMs.p50} ms, p99 ${r.approval.resultWakeMs.p99} ms |`,
    `| store CAS, 1 writer | ${r.cas.oneWriter.writesPerSecond} writes/s |`,
    `| store CAS, 4 writers, distinct sessions | ${r.cas.fourWritersDistinct.writesPerSecond} writes/s |`,
    `| store CAS, 4 writers, one session | ${r.cas.fourWritersOneSession.writesPerSecond} writes/s, ${(r.cas.fourWritersOneSession.conflictRate * 100).toFixed(1)}% conflicts |`,
    ...Object.entries(r.perTurn.tables).map(
      ([table, t]) =>
        `| per short turn: ${table} | ${/** @type {any} */ (t).rowsPerTurn} rows, ${/** @type {any} */ (t).bytesPerTurn} bytes |`,
    ),
    `| live row bytes | snapshot ${r.perTurn.liveRowBytes.snapshot} B/session (≈ ${r.perTurn.liveRowBytes.snapshot_at_turn_0} B + ${r.perTurn.liveRowBytes.snapshot_growth_per_turn} B per turn kept), audit row ${r.perTurn.liveRowBytes.audit_row} B, turn row ${r.perTurn.liveRowBytes.turn_row} B |`,
    `| commits/s, ${r.notify.clients} clients | ${r.notify.commitsPerSecond} without NOTIFY, ${r.notify.withNotify} with |`,
    ...r.pgBoss.map(
      (/** @type {any} */ b) =>
        `| pg-boss alone, ${b.fetch} | ${b.jobsPerSecond} jobs/s fetched and completed, ${b.insertPerSecond} inserted/s |`,
    ),
    '',
    `${r.machine.cpus} cores, load ${r.machine.load1AtStart} at start and ${r.machine.load1AtEnd} at end; addon ${r.machine.addon}; Node ${r.machine.node}; PostgreSQL ${r.machine.postgres}`,
  ];
  console.log(lines.join('\n'));
}
