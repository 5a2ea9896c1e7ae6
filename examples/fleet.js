'use strict';
// A fleet on PostgreSQL: two worker processes take the turns of support sessions from a queue,
// a refund pauses its turn for a person's approval, another process approves it, a worker
// resumes the turn, and the audit trail is read back with SQL. Everything runs on a throwaway
// PostgreSQL cluster that is removed at the end. Needs Node 22+ (pg-boss 12) and the PostgreSQL
// server programs; run with `node examples/fleet.js`.
const { spawn } = require('node:child_process');
const path = require('node:path');

const root = path.join(__dirname, '..');
const operationsModule = path.join(__dirname, 'fleet-operations.js');
const SCHEMA = 'quickrealm';

// What the model writes for each session, turn by turn (a real loop would ask a model).
const modelTurns = {
  'support-ada': [
    `const found = await tickets.search('ada');
     env.ticket = found[0].id;
     return found;`,
    `// The refund needs a person's approval: the turn pauses here and resumes on a worker.
     const receipt = await payments.refund({ ticket: env.ticket });
     return 'refunded ' + receipt.refunded + ' for ' + receipt.ticket;`,
  ],
  'support-grace': [`return (await tickets.search('refund')).map((t) => t.id);`],
};

/** @param {unknown} value */
const short = (value) => {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > 90 ? `${text.slice(0, 87)}...` : text;
};

/** The worker pid from a `turns.claimed_by` value (`host:pid:random`). */
const pidOf = (/** @type {string | null} */ claimedBy) => claimedBy?.split(':').at(-2) ?? '?';

/** Starts `quickrealm worker` and resolves once it reports that it takes turns. */
function startWorker(/** @type {string} */ url) {
  const child = spawn(
    process.execPath,
    [path.join(root, 'bin', 'quickrealm.js'), 'worker', '--db', url, '--operations', operationsModule],
    { stdio: ['ignore', 'inherit', 'pipe'] },
  );
  return new Promise((resolve, reject) => {
    let seen = '';
    child.stderr.on('data', (chunk) => {
      seen += chunk;
      if (seen.includes('"worker":"started"')) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`worker exited with ${code}: ${seen.trim()}`)));
  });
}

/** Runs this file as another process that approves a request, as a reviewer's web request would. */
function approveElsewhere(
  /** @type {string} */ url,
  /** @type {string} */ sessionId,
  /** @type {string} */ approvalId,
) {
  const child = spawn(process.execPath, [__filename, '--approve', url, sessionId, approvalId], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (chunk) => {
    out += chunk;
  });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`the approving process exited with ${code}`)),
    );
  });
}

/** The approving process: its own store and fleet object, one call, then it exits. */
async function approveMain(/** @type {string[]} */ [url, sessionId, approvalId]) {
  const { PostgresStore, Fleet } = require('../lib/fleet/index.js');
  const { operations, snapshotKey } = require(operationsModule);
  const store = new PostgresStore({ connectionString: url }, { schema: SCHEMA });
  const fleet = new Fleet({ store, operations, snapshotKey });
  try {
    const { turnId } = await fleet.approve(sessionId, approvalId);
    process.stdout.write(JSON.stringify({ pid: process.pid, turnId }));
  } finally {
    await fleet.stop();
    await store.close();
  }
}

async function main() {
  const { startCluster } = require('../scripts/pg-cluster.js');
  const { PostgresStore, Fleet } = require('../lib/fleet/index.js');
  const { SessionManager, policies } = require('..');
  const { operations, snapshotKey } = require(operationsModule);

  let cluster;
  try {
    cluster = await startCluster();
  } catch (e) {
    console.log(`examples/fleet.js needs the PostgreSQL server programs: ${/** @type {Error} */ (e).message}`);
    return;
  }
  /** @type {import('node:child_process').ChildProcess[]} */
  const workers = [];
  const store = new PostgresStore({ connectionString: cluster.url }, { schema: SCHEMA });
  const fleet = new Fleet({ store, operations, snapshotKey });
  try {
    await store.migrate();
    console.log(`PostgreSQL at 127.0.0.1:${cluster.port}, schema ${SCHEMA} migrated`);

    // Tenant caps are rows: tenant acme runs at most 2 turns at once across the whole fleet.
    await store.pool.query(`INSERT INTO ${SCHEMA}.tenant_caps (tenant, max_concurrent_turns) VALUES ('acme', 2)`);
    const manager = new SessionManager({ store, operations, snapshotKey });
    const policy = { ...policies.SAFE_ANALYSIS, allowedOperations: ['tickets.*', 'payments.*'] };
    for (const id of Object.keys(modelTurns)) await manager.create({ id, tenant: 'acme', policy });
    console.log(`sessions ${Object.keys(modelTurns).join(', ')} (tenant acme, at most 2 turns at once)`);

    workers.push(...(await Promise.all([startWorker(cluster.url), startWorker(cluster.url)])));
    console.log(`workers started: pids ${workers.map((w) => w.pid).join(', ')}`);

    /** Waits for a turn and prints one line about it. */
    const report = async (/** @type {string} */ sessionId, /** @type {string} */ turnId, label = 'turn') => {
      const turn = await fleet.result(turnId, { timeoutMs: 60_000 });
      const { rows } = await store.pool.query(`SELECT claimed_by FROM ${SCHEMA}.turns WHERE id = $1`, [turnId]);
      const where = `${sessionId} ${label} ${turn.turnNumber} on worker ${pidOf(rows[0]?.claimed_by)}`;
      if (turn.status === 'paused' && turn.outcome.tag === 'needs-approval') {
        const request = /** @type {{ requests: { id: string, operation: string, args: unknown }[] }} */ (turn.outcome)
          .requests[0];
        console.log(`${where}: paused, ${request.operation} ${short(request.args)} waits for approval ${request.id}`);
        return request;
      }
      const value = turn.result?.ok ? turn.result.value : turn.outcome;
      console.log(`${where}: ${turn.status} → ${short(value)}`);
      return null;
    };

    // The host loop: each session's turns in order, the sessions side by side on the workers.
    /** @type {{ sessionId: string, id: string } | null} */
    let waiting = null;
    await Promise.all(
      Object.entries(modelTurns).map(async ([sessionId, turns]) => {
        for (const code of turns) {
          const { turnId } = await fleet.submit(sessionId, code);
          const request = await report(sessionId, turnId);
          if (request) {
            waiting = { sessionId, id: request.id };
            break;
          }
        }
      }),
    );
    if (!waiting) throw new Error('expected the refund to wait for approval');
    const { sessionId, id } = /** @type {{ sessionId: string, id: string }} */ (waiting);

    const approval = /** @type {{ pid: number, turnId: string }} */ (
      await approveElsewhere(cluster.url, sessionId, id)
    );
    console.log(`approved ${id} from process ${approval.pid}; the turn resumes on a worker`);
    await report(sessionId, approval.turnId, 'resumed turn');

    const { rows } = await store.pool.query(
      `SELECT seq, turn_number, operation, entry::jsonb->>'args' AS args, entry::jsonb->>'result' AS result, entry::jsonb->>'error' AS error
       FROM ${SCHEMA}.audit WHERE session_id = $1 ORDER BY seq`,
      [sessionId],
    );
    console.log(`audit trail of ${sessionId} (SELECT ... FROM ${SCHEMA}.audit ORDER BY seq):`);
    for (const row of rows)
      console.log(
        `  #${row.seq} turn ${row.turn_number} ${row.operation} ${short(row.args)} → ${row.error ? `(${short(row.error)})` : short(row.result)}`,
      );
    const session = await manager.get(sessionId);
    const verified = session?.audit.verify();
    console.log(`hash chain: ${verified?.ok ? `intact (${verified.entries} entries)` : `BROKEN ${short(verified)}`}`);
    session?.workspace.dispose();
  } finally {
    await Promise.all(workers.map((worker) => new Promise((resolve) => worker.once('exit', resolve).kill('SIGTERM'))));
    await fleet.stop();
    await store.close();
    await cluster.stop();
    console.log('workers stopped, cluster removed');
  }
}

const major = Number(process.versions.node.split('.')[0]);
if (major < 22) {
  console.log(`examples/fleet.js needs Node 22 or later (pg-boss 12); this is Node ${process.versions.node}`);
} else if (process.argv[2] === '--approve') {
  approveMain(process.argv.slice(3)).catch((e) => {
    console.error(e);
    process.exit(1);
  });
} else {
  main().catch((e) => {
    console.error(e);
    process.exitCode = 1;
  });
}
