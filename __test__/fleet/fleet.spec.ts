// The fleet's behaviour: turns submitted, run by workers and answered; sessions never running
// two turns at once; approvals decided from another process; bad input refused with clear codes
// and nothing changed; tenant caps; the `quickrealm worker` command.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Fleet, PostgresStore } from '../../lib/fleet/index.js';
import { type FleetWorld, fleetWorld, overlaps, startWorker } from './fixtures/harness';
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
  return (result.outcome as { value: unknown }).value;
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
