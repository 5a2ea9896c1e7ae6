// The fleet's behaviour: turns submitted, run by workers and answered; sessions never running
// two turns at once; approvals decided from another process; bad input refused with clear codes
// and nothing changed; tenant caps; the `quickrealm worker` command.
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Fleet, PostgresStore } from '../../lib/fleet/index.js';
import { type FleetWorld, fleetWorld, OPERATIONS_MODULE, overlaps, startWorker } from './fixtures/harness';
import { freshDatabase } from './helpers';

let database: Awaited<ReturnType<typeof freshDatabase>>;
let world: FleetWorld;
/** The in-process workers every test of this file shares. */
let workers: { stop(): Promise<void> }[] = [];

beforeAll(async () => {
  database = await freshDatabase('fleet');
  world = await fleetWorld(database.url);
  const runners = [world.fleet(), world.fleet()];
  workers = await Promise.all(runners.map((f) => f.work({ concurrency: 3 })));
});

afterAll(async () => {
  for (const w of workers) await w.stop();
  await world?.dispose();
  await database?.drop();
});

/** Values of a guest's `return`, as the fleet keeps them. */
function valueOf(result: { outcome: { tag: string; [key: string]: unknown } }) {
  expect(result.outcome.tag, JSON.stringify(result.outcome)).toBe('ok');
  return result.outcome.value;
}

describe('Fleet: turns', () => {
  it('runs a submitted turn and answers its value; env is carried to the next turn', async () => {
    const host = world.fleet();
    const id = await world.session('basic', { env: { count: 1 } });
    const first = await host.submit(id, "env.count += 1; await fx.step({ label: 'one' }); return env.count;");
    const one = await host.result(first.turnId, { timeoutMs: 30_000 });
    expect(one.status).toBe('done');
    expect(one.turnNumber).toBe(1);
    expect(valueOf(one)).toBe(2);
    const second = await host.submit(id, 'env.count *= 10; return env.count;');
    const two = await host.result(second.turnId, { timeoutMs: 30_000 });
    expect(two.turnNumber).toBe(2);
    expect(valueOf(two)).toBe(20);
    const effects = await world.effects('session_id = $1', [id]);
    expect(effects.map((e) => [e.op, e.label, e.turn_number])).toEqual([['fx.step', 'one', 1]]);
  });

  it('gives back a value holding a NUL character exactly', async () => {
    const host = world.fleet();
    const id = await world.session('nul-value');
    const { turnId } = await host.submit(id, 'return ["a\\u0000b", { k: "\\u0000" }];');
    expect(valueOf(await host.result(turnId, { timeoutMs: 30_000 }))).toEqual(['a\u0000b', { k: '\u0000' }]);
  });

  it('holds a turn back while an earlier turn of its session has not run, then runs it', async () => {
    const host = world.fleet();
    const id = await world.session('held-back', { env: { seen: [] } });
    // An earlier turn, queued but not yet handed out (as when two jobs of a session are
    // fetched at once and the later one is taken first).
    await world.store.pool.query(
      `INSERT INTO quickrealm.turns (id, session_id, kind, code, status) VALUES ('earlier-turn', $1, 'turn', 'return 0', 'queued')`,
      [id],
    );
    const { turnId } = await host.submit(id, "env.seen.push('later'); return env.seen;");
    await sleep(1500);
    const waiting = await world.store.pool.query('SELECT status FROM quickrealm.turns WHERE id = $1', [turnId]);
    expect(waiting.rows[0].status).toBe('queued');
    await world.store.pool.query(
      `UPDATE quickrealm.turns SET status = 'done', result = '{}' WHERE id = 'earlier-turn'`,
    );
    const later = await host.result(turnId, { timeoutMs: 30_000 });
    expect(valueOf(later)).toEqual(['later']);
  });

  it('runs the turns of a session one at a time and in order, over several workers', async () => {
    const host = world.fleet();
    const sessions = await Promise.all([0, 1, 2, 3, 4].map((n) => world.session(`order-${n}`, { env: { seen: [] } })));
    const submitted: { session: string; turn: number; turnId: string }[] = [];
    for (let turn = 1; turn <= 5; turn++) {
      for (const session of sessions) {
        const { turnId } = await host.submit(
          session,
          `env.seen.push(${turn}); await fx.step({ label: '${turn}', sleepMs: 40 }); return env.seen;`,
        );
        submitted.push({ session, turn, turnId });
      }
    }
    const results = await Promise.all(submitted.map((s) => host.result(s.turnId, { timeoutMs: 60_000 })));
    for (const [i, result] of results.entries()) {
      expect(result.status).toBe('done');
      // Each turn saw exactly the turns submitted before it, in order.
      expect(valueOf(result)).toEqual(Array.from({ length: submitted[i].turn }, (_, k) => k + 1));
      expect(result.turnNumber).toBe(submitted[i].turn);
    }
    for (const session of sessions) {
      const effects = await world.effects('session_id = $1', [session]);
      expect(effects.map((e) => e.label)).toEqual(['1', '2', '3', '4', '5']);
      expect(effects.every((e) => e.ended_at !== null)).toBe(true);
      expect(overlaps(effects)).toBe(false);
    }
    // The work was spread: more than one worker object ran turns (each has its own workerId).
    const { rows } = await world.store.pool.query(
      `SELECT count(DISTINCT claimed_by)::int AS n FROM quickrealm.turns WHERE session_id LIKE 'order-%'`,
    );
    expect(rows[0].n).toBeGreaterThan(1);
  });

  it('answers the same turn for the same idempotency key, and runs it once', async () => {
    const host = world.fleet();
    const id = await world.session('keyed');
    const code = "await fx.step({ label: 'keyed' }); return 'once';";
    const [a, b] = await Promise.all([
      host.submit(id, code, { idempotencyKey: 'k-1' }),
      host.submit(id, code, { idempotencyKey: 'k-1' }),
    ]);
    expect(b.turnId).toBe(a.turnId);
    expect(valueOf(await host.result(a.turnId, { timeoutMs: 30_000 }))).toBe('once');
    const again = await host.submit(id, code, { idempotencyKey: 'k-1' });
    expect(again.turnId).toBe(a.turnId);
    const other = await host.submit(id, code, { idempotencyKey: 'k-2' });
    expect(other.turnId).not.toBe(a.turnId);
    await host.result(other.turnId, { timeoutMs: 30_000 });
    expect((await world.effects('session_id = $1', [id])).map((e) => e.turn_number)).toEqual([1, 2]);
  });
});

describe('Fleet: approvals', () => {
  it('pauses for approval, is approved from another process, resumes, and never repeats what ran before', async () => {
    const host = world.fleet();
    const id = await world.session('approval');
    const { turnId } = await host.submit(
      id,
      "const a = await fx.step({ label: 'before' }); const b = await fx.guarded({ label: 'guarded' }); return [a.label, b.label];",
    );
    const paused = await host.result(turnId, { timeoutMs: 30_000 });
    expect(paused.status).toBe('paused');
    expect(paused.outcome.tag).toBe('needs-approval');
    const requests = (paused.outcome as { requests: { id: string; operation: string }[] }).requests;
    expect(requests.map((r) => r.operation)).toEqual(['fx.guarded']);
    expect((await world.effects('session_id = $1', [id])).map((e) => e.label)).toEqual(['before']);

    // Another process: its own pool and Fleet object, no workers.
    const elsewhere = new PostgresStore({ connectionString: world.url });
    const approver = new Fleet({ store: elsewhere, operations: world.operations });
    try {
      const approvedAt = Date.now();
      const resumed = await approver.approve(id, requests[0].id);
      expect(resumed.turnId).toEqual(expect.any(String));
      const done = await approver.result(resumed.turnId as string, { timeoutMs: 30_000 });
      console.info(`approval to resumed turn finished: ${Date.now() - approvedAt} ms`);
      expect(done.status).toBe('done');
      expect(valueOf(done)).toEqual(['before', 'guarded']);
    } finally {
      await approver.stop();
      await elsewhere.close();
    }
    const effects = await world.effects('session_id = $1', [id]);
    expect(effects.map((e) => e.label)).toEqual(['before', 'guarded']);
    expect((await world.store.approvals(id)).map((a) => a.status)).toEqual(['approved']);
  });

  it('rejects: the guest sees ApprovalRejected and the operation never runs', async () => {
    const host = world.fleet();
    const id = await world.session('rejected');
    const { turnId } = await host.submit(
      id,
      "try { await fx.guarded({ label: 'no' }); return 'ran'; } catch (e) { return `${e.name}: ${e.message}`; }",
    );
    const paused = await host.result(turnId, { timeoutMs: 30_000 });
    const [request] = (paused.outcome as { requests: { id: string }[] }).requests;
    const { turnId: resumed } = await world.fleet().reject(id, request.id, 'not today');
    const done = await host.result(resumed as string, { timeoutMs: 30_000 });
    expect(valueOf(done)).toMatch(/^ApprovalRejected: .*not today/);
    expect(await world.effects('session_id = $1', [id])).toEqual([]);
    expect((await world.store.approvals(id)).map((a) => a.status)).toEqual(['rejected']);
  });
});

describe('Fleet: result()', () => {
  it('is woken by NOTIFY within moments of the turn settling, and falls back to polling', async () => {
    // Polling only every 20 s: an answer within a second came by NOTIFY.
    const host = world.fleet({ resultPollMs: 20_000 });
    const id = await world.session('notified');
    const lags: number[] = [];
    for (let n = 0; n < 5; n++) {
      const gate = `notify-${n}`;
      const { turnId } = await host.submit(id, `await fx.step({ label: '${gate}', gate: '${gate}' }); return ${n};`);
      await world.until('session_id = $1 AND label = $2', [id, gate]);
      const answer = host.result(turnId, { timeoutMs: 30_000 });
      await sleep(50);
      await world.openGate(gate);
      expect(valueOf(await answer)).toBe(n);
      const returned = Date.now();
      const { rows } = await world.store.pool.query('SELECT finished_at FROM quickrealm.turns WHERE id = $1', [turnId]);
      lags.push(returned - rows[0].finished_at.getTime());
    }
    console.info(`result() after the turn settled (NOTIFY): ${lags.join(', ')} ms`);
    for (const lag of lags) expect(lag).toBeLessThan(1000);

    // The listening connection dies while a result is awaited: polling still answers.
    const polling = world.fleet({ resultPollMs: 200 });
    const { turnId } = await polling.submit(id, "await fx.step({ label: 'polled', gate: 'polled' }); return 'polled';");
    await world.until('session_id = $1 AND label = $2', [id, 'polled']);
    const answer = polling.result(turnId, { timeoutMs: 30_000 });
    await sleep(100);
    const killed = await world.store.pool.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
       WHERE datname = current_database() AND query LIKE 'LISTEN%' AND pid <> pg_backend_pid()`,
    );
    expect(killed.rows.length).toBeGreaterThan(0);
    await world.openGate('polled');
    expect(valueOf(await answer)).toBe('polled');
  });
});

describe('Fleet: bad input changes nothing', () => {
  async function turnCount() {
    const { rows } = await world.store.pool.query('SELECT count(*)::int AS n FROM quickrealm.turns');
    return rows[0].n;
  }

  it('refuses unknown sessions, approvals and turns with NOT_FOUND, and a wait past its time with TIMEOUT', async () => {
    const host = world.fleet();
    const before = await turnCount();
    await expect(host.submit('no-such-session', 'return 1;')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(host.approve('no-such-session', 'no-such-approval')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    const id = await world.session('bad-input');
    const version = await world.store.version(id);
    await expect(host.approve(id, 'no-such-approval')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(host.reject(id, 'no-such-approval')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await world.store.version(id)).toBe(version);
    await expect(host.result('00000000-0000-0000-0000-000000000000')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await turnCount()).toBe(before);

    const { turnId } = await host.submit(id, "await fx.step({ label: 'slow', gate: 'slow' }); return 1;");
    const started = Date.now();
    await expect(host.result(turnId, { timeoutMs: 300 })).rejects.toMatchObject({ code: 'TIMEOUT' });
    expect(Date.now() - started).toBeLessThan(2000);
    await world.openGate('slow');
    expect(valueOf(await host.result(turnId, { timeoutMs: 30_000 }))).toBe(1);
  });

  it('answers hostile ids and keys with a clear code and changes nothing', async () => {
    const host = world.fleet();
    const id = await world.session('hostile-ids');
    const queue = await world.session('hostile-keys');
    const version = await world.store.version(id);
    const hostile = fc.oneof(
      fc.string({ unit: 'grapheme', maxLength: 300 }),
      fc.constantFrom('', ' ', '../x', "x'; DROP TABLE quickrealm.turns; --", '\u0000', '%', '*', 'a'.repeat(10_000)),
    );
    await fc.assert(
      fc.asyncProperty(hostile, hostile, async (a, b) => {
        const before = await turnCount();
        const codes = await Promise.all(
          [
            () => host.submit(a, 'return 1;'),
            () => host.approve(a, b),
            () => host.reject(id, b, a),
            () => host.result(a, { timeoutMs: 50 }),
            () => host.submit(queue, 'return 1;', { idempotencyKey: a.length > 200 || a === '' ? a : undefined }),
          ].map(async (call) => {
            try {
              await call();
              return 'ok';
            } catch (e) {
              return (e as { code?: string }).code ?? `uncoded: ${(e as Error).message}`;
            }
          }),
        );
        for (const code of codes) expect(['ok', 'INVALID_INPUT', 'NOT_FOUND', 'TIMEOUT']).toContain(code);
        // Only the last call may queue a turn (on another session), and only without a bad key.
        const queued = codes[4] === 'ok' ? 1 : 0;
        expect(await turnCount()).toBe(before + queued);
        expect(await world.store.version(id)).toBe(version);
      }),
      { numRuns: 15 },
    );
  });

  it('refuses a stale version with SESSION_CONFLICT and keeps the stored bytes', async () => {
    const id = await world.session('stale');
    const stored = await world.store.get(id);
    if (!stored) throw new Error('the session was not stored');
    const host = world.fleet();
    await host.result((await host.submit(id, 'return 1;')).turnId, { timeoutMs: 30_000 });
    const now = await world.store.get(id);
    if (!now) throw new Error('the session was not stored');
    expect(now.version).toBeGreaterThan(stored.version);
    await expect(world.store.put(id, stored.bytes, { expectedVersion: stored.version })).rejects.toMatchObject({
      code: 'SESSION_CONFLICT',
    });
    const after = await world.store.get(id);
    expect(after?.version).toBe(now.version);
    expect(Buffer.compare(after?.bytes ?? Buffer.alloc(0), now.bytes)).toBe(0);
  });

  it('refuses a malformed connection string at once, and a server nobody answers on without hanging', async () => {
    const started = Date.now();
    let malformed: unknown;
    try {
      const store = new PostgresStore({ connectionString: 'postgres://[::1' });
      await store.migrate().finally(() => store.close());
    } catch (e) {
      malformed = e;
    }
    expect(malformed).toMatchObject({ code: 'INVALID_INPUT' });
    expect(Date.now() - started).toBeLessThan(1000);

    const port = await closedPort();
    const store = new PostgresStore({ connectionString: `postgres://postgres@127.0.0.1:${port}/postgres` });
    const fleet = new Fleet({ store, operations: world.operations });
    const t0 = Date.now();
    try {
      await expect(fleet.submit('any', 'return 1;')).rejects.toMatchObject({ code: 'UNAVAILABLE' });
      await expect(fleet.result('any', { timeoutMs: 60_000 })).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    } finally {
      await fleet.stop();
      await store.close();
    }
    expect(Date.now() - t0).toBeLessThan(10_000);
  });
});

describe('Fleet: tenant caps', () => {
  it('runs one turn at a time for a tenant capped at one, while another tenant runs alongside', async () => {
    await world.store.pool.query(
      "INSERT INTO quickrealm.tenant_caps (tenant, max_concurrent_turns) VALUES ('solo', 1), ('wide', NULL)",
    );
    const host = world.fleet();
    const solo = await Promise.all([0, 1, 2].map((n) => world.session(`solo-${n}`, { tenant: 'solo' })));
    const wide = await Promise.all([0, 1, 2].map((n) => world.session(`wide-${n}`, { tenant: 'wide' })));
    const turns: string[] = [];
    for (let round = 0; round < 2; round++)
      for (const id of [...solo, ...wide])
        turns.push((await host.submit(id, `await fx.step({ label: '${round}', sleepMs: 200 }); return 1;`)).turnId);
    for (const turnId of turns) valueOf(await host.result(turnId, { timeoutMs: 60_000 }));
    const soloEffects = await world.effects("session_id LIKE 'solo-%'");
    const wideEffects = await world.effects("session_id LIKE 'wide-%'");
    expect(soloEffects).toHaveLength(6);
    expect(wideEffects).toHaveLength(6);
    expect(overlaps(soloEffects)).toBe(false);
    // The other tenant's turns did run at once (its cap is not the first tenant's).
    expect(overlaps(wideEffects)).toBe(true);
  });

  it('refuses the next turn of a tenant past its token budget with BUDGET_EXCEEDED, without running it', async () => {
    await world.store.pool.query("INSERT INTO quickrealm.tenant_caps (tenant, max_tokens) VALUES ('thrifty', 100)");
    const host = world.fleet();
    const a = await world.session('thrifty-a', { tenant: 'thrifty' });
    const b = await world.session('thrifty-b', { tenant: 'thrifty' });
    const first = await host.result((await host.submit(a, 'return (await fx.charge(150)).op;')).turnId, {
      timeoutMs: 30_000,
    });
    expect(valueOf(first)).toBe('fx.charge');
    for (const id of [a, b]) {
      const refused = await host.result((await host.submit(id, "await fx.step({ label: 'over' }); return 1;")).turnId, {
        timeoutMs: 30_000,
      });
      expect(refused.outcome).toMatchObject({ tag: 'nonconverged', code: 'BUDGET_EXCEEDED', budget: 'tokens' });
    }
    expect((await world.effects("session_id LIKE 'thrifty-%'")).map((e) => e.op)).toEqual(['fx.charge']);
  });
});

describe('quickrealm worker', () => {
  it('refuses bad flags with exit 2 and INVALID_INPUT on stderr, and an unreachable server with exit 1', async () => {
    const cases = [
      ['worker', '--operations', 'x.mjs'],
      ['worker', '--db', world.url],
      ['worker', '--db', world.url, '--operations', 'x.mjs', '--concurrency', '0'],
      ['worker', '--db', world.url, '--operations', '/no/such/module.mjs'],
      ['worker', '--db', world.url, '--operations', OPERATIONS_MODULE, '--bogus'],
      ['worker', '--db', 'not a url', '--operations', OPERATIONS_MODULE],
    ];
    for (const args of cases) {
      const w = await startWorker(world.url, { args });
      const { code } = await w.exited;
      expect(code, args.join(' ')).toBe(2);
      expect(JSON.parse(w.stderr().trim().split('\n').at(-1) ?? '')).toMatchObject({ code: 'INVALID_INPUT' });
    }
    // A server nobody answers on: exit 1 with UNAVAILABLE, at once.
    const unreachable = `postgres://postgres@127.0.0.1:${await closedPort()}/postgres`;
    const started = Date.now();
    const w = await startWorker(unreachable, {
      args: ['worker', '--db', unreachable, '--operations', OPERATIONS_MODULE],
    });
    expect((await w.exited).code).toBe(1);
    expect(JSON.parse(w.stderr().trim().split('\n').at(-1) ?? '')).toMatchObject({ code: 'UNAVAILABLE' });
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('runs a submitted turn, and on SIGTERM finishes the running turn before it exits', async () => {
    const host = world.fleet({ queue: 'command' });
    const id = await world.session('command');
    const w = await startWorker(world.url, {
      args: ['worker', '--db', world.url, '--operations', OPERATIONS_MODULE, '--queue', 'command'],
    });
    const { turnId } = await host.submit(id, "return (await fx.step({ label: 'drain', gate: 'drain' })).label;");
    const inside = await world.until('session_id = $1', [id]);
    expect(inside.pid).toBe(w.pid);
    w.kill('SIGTERM');
    await sleep(500);
    expect(w.child.exitCode).toBe(null);
    await world.openGate('drain');
    const opened = Date.now();
    expect(await w.exited).toEqual({ code: 0, signal: null });
    console.info(`worker exited ${Date.now() - opened} ms after its last turn could finish`);
    expect(valueOf(await host.result(turnId, { timeoutMs: 10_000 }))).toBe('drain');
  });
});

/** A port of 127.0.0.1 that nothing listens on. */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}
