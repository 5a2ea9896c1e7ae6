// Sessions with persistState over a fleet: a turn's top-level bindings reach the next turn
// whichever worker runs it, and a fleet without a snapshotKey refuses such sessions clearly.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionManager } from '../../lib/index.js';
import { type FleetWorld, fleetWorld, OPEN } from './fixtures/harness';
import { freshDatabase } from './helpers';

const KEY = 'the fleet key, at least 16 bytes';
let database: Awaited<ReturnType<typeof freshDatabase>>;
let world: FleetWorld;

beforeAll(async () => {
  database = await freshDatabase('persist');
  world = await fleetWorld(database.url);
});

afterAll(async () => {
  await world?.dispose();
  await database?.drop();
});

async function persistentSession(id: string, snapshotKey?: string) {
  const manager = new SessionManager({ store: world.store, operations: world.operations, snapshotKey });
  const session = await manager.create({ id, policy: OPEN, persistState: true });
  session.workspace.dispose();
  return id;
}

describe('persistState over a fleet', () => {
  it('keeps a turn’s bindings for the next turn, on another worker', async () => {
    const [a, b] = [world.fleet({ snapshotKey: KEY }), world.fleet({ snapshotKey: KEY })];
    const id = await persistentSession('persist-two-workers', KEY);
    const first = await a.submit(
      id,
      'const seen = new Map(); function note(k) { seen.set(k, seen.size + 1); return seen.size }; note("a")',
    );
    const workerA = await a.work({ concurrency: 1 });
    try {
      const one = await a.result(first.turnId, { timeoutMs: 30_000 });
      expect(one.outcome).toMatchObject({ tag: 'ok', value: 1 });
    } finally {
      await workerA.stop();
    }
    const workerB = await b.work({ concurrency: 1 });
    try {
      const second = await b.submit(id, 'note("b"); [...seen.keys()]');
      const two = await b.result(second.turnId, { timeoutMs: 30_000 });
      expect(two.outcome).toMatchObject({ tag: 'ok', value: ['a', 'b'] });
      const failed = await b.submit(id, 'note("c"); throw new Error("no")');
      expect((await b.result(failed.turnId, { timeoutMs: 30_000 })).outcome.tag).toBe('error');
      const third = await b.submit(id, '[...seen.keys()]');
      expect((await b.result(third.turnId, { timeoutMs: 30_000 })).outcome).toMatchObject({ value: ['a', 'b'] });
    } finally {
      await workerB.stop();
    }
  });

  it('refuses a persistState session in a fleet without a snapshotKey, before anything runs', async () => {
    const keyless = world.fleet();
    const id = await persistentSession('persist-keyless');
    const worker = await keyless.work({ concurrency: 1 });
    try {
      const { turnId } = await keyless.submit(id, 'let x = 1; x');
      const result = await keyless.result(turnId, { timeoutMs: 30_000 });
      expect(result.status).toBe('failed');
      expect(result.outcome).toMatchObject({ tag: 'error', code: 'INVALID_INPUT' });
      expect(JSON.stringify(result.outcome)).toContain('snapshotKey');
    } finally {
      await worker.stop();
    }
  });
});
