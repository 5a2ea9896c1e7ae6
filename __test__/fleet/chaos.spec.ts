// The fleet under failure, with `quickrealm worker` processes as the fleet: a worker killed with
// SIGKILL inside an operation, every worker killed while turns wait for approval, PostgreSQL
// restarted at once after an approval, and PostgreSQL gone in the middle of a turn. Nothing
// acknowledged is lost, no completed operation runs twice, every turn finishes.
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { startCluster } from '../../scripts/pg-cluster.js';
import { type FleetWorld, fleetWorld } from './fixtures/harness';
import { freshDatabase } from './helpers';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

/** A world on a fresh database of the suite's cluster. */
async function sharedWorld(prefix: string) {
  const database = await freshDatabase(prefix);
  const world = await fleetWorld(database.url);
  cleanups.push(
    () => database.drop(),
    () => world.dispose(),
  );
  return world;
}

/** A world on a cluster of its own, which the test may stop and restart. */
async function ownWorld() {
  const cluster = await startCluster();
  const world = await fleetWorld(cluster.url);
  cleanups.push(
    () => cluster.stop(),
    () => world.dispose(),
  );
  return { cluster, world };
}

function valueOf(result: { outcome: { tag: string; [key: string]: unknown } }) {
  expect(result.outcome.tag, JSON.stringify(result.outcome)).toBe('ok');
  return result.outcome.value;
}

async function requestsOf(world: FleetWorld, turnId: string) {
  const host = world.fleet();
  const paused = await host.result(turnId, { timeoutMs: 30_000 });
  expect(paused.status).toBe('paused');
  return (paused.outcome as { requests: { id: string }[] }).requests;
}

/** Milliseconds from `since` to when the turn's result was written. */
async function settledAfter(world: FleetWorld, turnId: string, since: number) {
  const { rows } = await world.store.pool.query('SELECT finished_at FROM quickrealm.turns WHERE id = $1', [turnId]);
  return rows[0].finished_at.getTime() - since;
}

describe('chaos: workers killed', () => {
  it('finishes a turn whose worker was killed inside an operation, on another worker, without repeating what completed', async () => {
    const world = await sharedWorld('kill_inside');
    const host = world.fleet();
    const doomed = await world.worker({ concurrency: 2 });
    const plain = await world.session('plain');
    const idem = await world.session('idem');
    const plainTurn = await host.submit(
      plain,
      `const a = await fx.step({ label: 'before' });
       let b;
       try { b = (await fx.step({ label: 'cut', gate: 'cut' })).label; } catch (e) { b = e.name; }
       const c = await fx.step({ label: 'after' });
       return [a.label, b, c.label];`,
    );
    const idemTurn = await host.submit(
      idem,
      `const a = await fx.step({ label: 'before' });
       const b = await fx.idem({ label: 'again', gate: 'again' });
       return [a.label, b.key, b.rerun];`,
    );
    const cut = await world.until("session_id = 'plain' AND label = 'cut'");
    const again = await world.until("session_id = 'idem' AND label = 'again'");
    expect([cut.pid, again.pid]).toEqual([doomed.pid, doomed.pid]);
    const survivor = await world.worker({ concurrency: 2 });

    const killedAt = Date.now();
    doomed.kill('SIGKILL');
    await doomed.exited;
    await world.openGate('cut');
    await world.openGate('again');

    const plainResult = await host.result(plainTurn.turnId, { timeoutMs: 60_000 });
    const idemResult = await host.result(idemTurn.turnId, { timeoutMs: 60_000 });
    const failover = await settledAfter(world, plainTurn.turnId, killedAt);
    console.info(
      `failover after kill -9 (kill → turn finished on another worker): ${failover} ms, ${await settledAfter(world, idemTurn.turnId, killedAt)} ms`,
    );
    // The interrupted call is not run again: the guest is told it was interrupted.
    expect(valueOf(plainResult)).toEqual(['before', 'OperationInterrupted', 'after']);
    const plainEffects = await world.effects("session_id = 'plain'");
    expect(plainEffects.map((e) => [e.label, e.pid, e.ended_at === null])).toEqual([
      ['before', doomed.pid, false],
      ['cut', doomed.pid, true],
      ['after', survivor.pid, false],
    ]);
    // The idempotent call runs again, with the same key.
    const idemEffects = await world.effects("session_id = 'idem'");
    expect(idemEffects.map((e) => [e.label, e.pid, e.rerun])).toEqual([
      ['before', doomed.pid, false],
      ['again', doomed.pid, false],
      ['again', survivor.pid, true],
    ]);
    expect(idemEffects[2].key).toBe(idemEffects[1].key);
    expect(valueOf(idemResult)).toEqual(['before', idemEffects[1].key, true]);
    // The heartbeat lapses after 10 s; the turn is taken again within a few seconds of that.
    expect(failover).toBeLessThan(30_000);
  });

  it('loses no decision when every worker is killed while turns wait for approval', async () => {
    const world = await sharedWorld('kill_all');
    const host = world.fleet();
    const fleetOf = [await world.worker(), await world.worker()];
    const sessions = await Promise.all([0, 1, 2, 3].map((n) => world.session(`waiting-${n}`)));
    const turns = [];
    for (const id of sessions)
      turns.push(
        await host.submit(
          id,
          `const a = await fx.step({ label: 'before' }); const b = await fx.guarded({ label: 'approved' });
           return [a.label, b.label];`,
        ),
      );
    const requests = await Promise.all(turns.map((t) => requestsOf(world, t.turnId)));
    for (const w of fleetOf) w.kill('SIGKILL');
    await Promise.all(fleetOf.map((w) => w.exited));

    // Decided with no worker alive: the decisions and the resume jobs wait in PostgreSQL.
    const decidedAt = Date.now();
    const resumed = [];
    for (const [i, id] of sessions.entries())
      resumed.push((await host.approve(id, requests[i][0].id)).turnId as string);
    expect((await world.store.pool.query('SELECT status FROM quickrealm.approvals')).rows).toEqual(
      sessions.map(() => ({ status: 'approved' })),
    );
    const restarted = Date.now();
    await world.worker();
    await world.worker();
    for (const turnId of resumed) {
      expect(valueOf(await host.result(turnId, { timeoutMs: 60_000 }))).toEqual(['before', 'approved']);
    }
    const lags = await Promise.all(resumed.map((t) => settledAfter(world, t, restarted)));
    console.info(
      `new workers started → resumed turns finished: ${lags.join(', ')} ms (decided ${restarted - decidedAt} ms before)`,
    );
    for (const id of sessions) {
      const effects = await world.effects('session_id = $1', [id]);
      expect(effects.map((e) => e.label)).toEqual(['before', 'approved']);
    }
  });
});

describe('chaos: PostgreSQL fails', () => {
  it('keeps an approval across an immediate restart right after it; the resume runs once; workers reconnect', async () => {
    const { cluster, world } = await ownWorld();
    const host = world.fleet();
    const workers = [await world.worker(), await world.worker()];
    const id = await world.session('restarted');
    const { turnId } = await host.submit(
      id,
      "const a = await fx.step({ label: 'before' }); const b = await fx.guarded({ label: 'approved' }); return [a.label, b.label];",
    );
    const [request] = await requestsOf(world, turnId);
    const approvedAt = Date.now();
    const { turnId: resumed } = await host.approve(id, request.id);
    await cluster.restart({ mode: 'immediate' });
    const restartedAt = Date.now();

    const done = await host.result(resumed as string, { timeoutMs: 60_000 });
    console.info(
      `approval → resumed turn finished across an immediate restart: ${await settledAfter(world, resumed as string, approvedAt)} ms (restart took ${restartedAt - approvedAt} ms)`,
    );
    expect(done.status).toBe('done');
    expect((await world.store.approvals(id)).map((a) => a.status)).toEqual(['approved']);
    const effects = await world.effects('session_id = $1', [id]);
    expect(effects.map((e) => e.label)).toEqual(['before', 'approved']);
    const value = valueOf(done) as unknown[];
    const { rows } = await world.store.pool.query('SELECT attempt FROM quickrealm.turns WHERE id = $1', [resumed]);
    console.info(`resumed turn after the restart: attempt ${rows[0].attempt}, value ${JSON.stringify(value)}`);
    // The approved call ran once; if the restart cut it short the guest is told so, it is not run again.
    expect(value[0]).toBe('before');

    // The workers reconnected: a new turn runs.
    const next = await host.submit(id, "return (await fx.step({ label: 'next' })).label;");
    expect(valueOf(await host.result(next.turnId, { timeoutMs: 60_000 }))).toBe('next');
    expect(workers.map((w) => w.child.exitCode)).toEqual([null, null]);
  });

  it('retries a turn that was inside an operation when PostgreSQL went away, and finishes it', async () => {
    const { cluster, world } = await ownWorld();
    const host = world.fleet();
    const worker = await world.worker();
    const id = await world.session('outage');
    const { turnId } = await host.submit(
      id,
      `const a = await fx.step({ label: 'before' });
       const b = await fx.idem({ label: 'during', sleepMs: 1000, unrecorded: true });
       return [a.label, b.label, b.rerun];`,
    );
    await world.until("session_id = 'outage' AND label = 'during'");
    // The call returns while the server is away: its journal entry cannot be written, the attempt fails.
    await cluster.pgCtl(['-w', '-m', 'immediate', 'stop']);
    const stoppedAt = Date.now();
    await sleep(3000);
    await cluster.pgCtl(['-w', '-t', '60', '-l', join(cluster.dir, 'server.log'), 'restart']);
    const done = await host.result(turnId, { timeoutMs: 60_000 });
    console.info(
      `PostgreSQL away for 3 s mid-turn → turn finished: ${await settledAfter(world, turnId, stoppedAt)} ms`,
    );
    expect(valueOf(done)).toEqual(['before', 'during', true]);
    const { rows } = await world.store.pool.query('SELECT attempt FROM quickrealm.turns WHERE id = $1', [turnId]);
    expect(rows[0].attempt).toBeGreaterThan(1);
    const effects = await world.effects('session_id = $1', [id]);
    expect(effects.map((e) => [e.label, e.rerun, e.key])).toEqual([
      ['before', false, `${id}:1:0`],
      ['during', false, `${id}:1:1`],
      ['during', true, `${id}:1:1`],
    ]);
    // The worker lived through the outage and ran the retry itself.
    expect(worker.child.exitCode).toBe(null);
    expect(new Set(effects.map((e) => e.pid))).toEqual(new Set([worker.pid]));
  });
});
