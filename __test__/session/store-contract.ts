// The contract every session store keeps (SessionStore in lib/session/index.d.ts), run against
// each store: FolderStore in store-contract-folder.spec.ts, PostgresStore in
// __test__/fleet/store-contract-postgres.spec.ts. A store that passes it can sit under a
// SessionManager: versions count saves from 1, a stale writer gets SESSION_CONFLICT and stores
// nothing, and exactly one of several writers racing on one version wins.
import { afterEach, describe, expect, it } from 'vitest';
import { type OperationDefinition, type SessionStore, SessionManager } from '../../lib/index.js';

/** A store under test, and a second handle on the same data (as another process would open it). */
export interface StoreUnderTest {
  store: SessionStore;
  another(): SessionStore | Promise<SessionStore>;
  dispose(): Promise<void>;
}

export async function rejection(p: Promise<unknown>): Promise<{ code?: string; message: string }> {
  try {
    await p;
  } catch (e) {
    return e as { code?: string; message: string };
  }
  throw new Error('expected the promise to reject');
}

export const bytes = (text: string) => new TextEncoder().encode(text);
const text = (b: Uint8Array | undefined) => Buffer.from(b ?? []).toString();

/** Everything allowed, writes anywhere, applied at once (no proposals). */
export const OPEN = { worldRules: { readOnly: false } };

/** An operation that counts its calls, and one that needs approval above 10. */
export function countingOperations() {
  const calls = { note: 0, pay: [] as number[] };
  const operations: Record<string, OperationDefinition> = {
    'log.note': {
      handler: (x: string) => {
        calls.note += 1;
        return `noted ${x}`;
      },
    },
    'pay.send': {
      handler: (amount: number) => {
        calls.pay.push(amount);
        return { paid: amount };
      },
      needsApproval: (amount: number) => amount > 10,
    },
  };
  return { calls, operations };
}

export function storeContract(name: string, makeStore: () => Promise<StoreUnderTest>) {
  describe(`${name}: the session store contract`, () => {
    const made: StoreUnderTest[] = [];
    async function fresh(): Promise<StoreUnderTest> {
      const s = await makeStore();
      made.push(s);
      return s;
    }
    afterEach(async () => {
      for (const s of made.splice(0)) await s.dispose();
    });

    it('creates, reads and advances a session with versions counting saves from 1', async () => {
      const { store } = await fresh();
      expect(await store.get('a')).toBeNull();
      expect(await store.version?.('a')).toBeNull();
      expect(await store.head?.('a')).toBeNull();
      expect(await store.put('a', bytes('first'), { expectedVersion: null, meta: { turnNumber: 0 } })).toBe(1);
      expect(await store.put('a', bytes('second'), { expectedVersion: 1, meta: { turnNumber: 1 } })).toBe(2);
      expect(await store.put('a', bytes('third'), { expectedVersion: 2, meta: { turnNumber: 2 } })).toBe(3);
      const a = await store.get('a');
      expect(a?.version).toBe(3);
      expect(text(a?.bytes)).toBe('third');
      expect(await store.version?.('a')).toBe(3);
      expect((await store.head?.('a'))?.version).toBe(3);
      expect((await store.head?.('a'))?.meta.turnNumber).toBe(2);
    });

    it('refuses a stale or early expected version with SESSION_CONFLICT and keeps the stored bytes', async () => {
      const { store } = await fresh();
      await store.put('s', bytes('v1'), { expectedVersion: null });
      await store.put('s', bytes('v2'), { expectedVersion: 1, meta: { status: 'active' } });
      for (const expectedVersion of [1, 7, null]) {
        const refused = await rejection(store.put('s', bytes('stale'), { expectedVersion, meta: { status: 'x' } }));
        expect(refused.code).toBe('SESSION_CONFLICT');
      }
      const kept = await store.get('s');
      expect(kept?.version).toBe(2);
      expect(text(kept?.bytes)).toBe('v2');
      expect((await store.head?.('s'))?.meta.status).toBe('active');
    });

    it('needs a stored version to update: a missing session is a conflict, and nothing is created', async () => {
      const { store } = await fresh();
      const missing = await rejection(store.put('missing', bytes('x'), { expectedVersion: 1 }));
      expect(missing.code).toBe('SESSION_CONFLICT');
      expect(await store.get('missing')).toBeNull();
      expect(await store.list()).toEqual([]);
    });

    it('lets exactly one of ten racing writers advance a version', async () => {
      const { store, another } = await fresh();
      await store.put('race', bytes('base'), { expectedVersion: null });
      const stores = [store, await another()];
      const results = await Promise.allSettled(
        Array.from({ length: 10 }, (_, i) =>
          (stores[i % 2] as SessionStore).put('race', bytes(`writer ${i}`), { expectedVersion: 1 }),
        ),
      );
      const won = results.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []));
      expect(won).toHaveLength(1);
      for (const r of results) {
        if (r.status === 'rejected') expect((r.reason as { code?: string }).code).toBe('SESSION_CONFLICT');
        else expect(r.value).toBe(2);
      }
      const stored = await store.get('race');
      expect(stored?.version).toBe(2);
      expect(text(stored?.bytes)).toBe(`writer ${won[0]}`);
    });

    it('deletes a session; the id can then be created again from version 1', async () => {
      const { store } = await fresh();
      await store.put('d', bytes('one'), { expectedVersion: null });
      await store.put('d', bytes('two'), { expectedVersion: 1 });
      await store.delete('d');
      expect(await store.get('d')).toBeNull();
      expect(await store.version?.('d')).toBeNull();
      expect(await store.list()).toEqual([]);
      const gone = await rejection(store.put('d', bytes('three'), { expectedVersion: 2 }));
      expect(gone.code).toBe('SESSION_CONFLICT');
      expect(await store.put('d', bytes('again'), { expectedVersion: null })).toBe(1);
      expect(text((await store.get('d'))?.bytes)).toBe('again');
      await store.delete('never-stored');
    });

    it('lists the ids sorted', async () => {
      const { store } = await fresh();
      for (const id of ['b', 'a-2', 'C', 'a.1', 'a_3', 'z']) await store.put(id, bytes(id), { expectedVersion: null });
      expect(await store.list()).toEqual(['C', 'a-2', 'a.1', 'a_3', 'b', 'z']);
    });

    it('refuses ids that are not 1 to 128 word characters, dots or dashes (INVALID_INPUT)', async () => {
      const { store } = await fresh();
      for (const id of ['', '../x', 'a/b', 'a b', '.hidden', 'x'.repeat(129), 'é', 7 as unknown as string]) {
        const calls: (() => Promise<unknown>)[] = [
          () => store.get(id),
          () => store.put(id, bytes('x'), { expectedVersion: null }),
          () => store.delete(id),
        ];
        for (const call of calls) {
          const refused = await rejection(Promise.resolve().then(call));
          expect(refused.code, JSON.stringify(id)).toBe('INVALID_INPUT');
        }
      }
      expect(await store.list()).toEqual([]);
      expect(await store.put('x'.repeat(128), bytes('long id'), { expectedVersion: null })).toBe(1);
    });

    it('keeps a 5 MiB snapshot byte for byte', async () => {
      const { store } = await fresh();
      const big = new Uint8Array(5 * 1024 * 1024);
      for (let i = 0; i < big.length; i++) big[i] = (i * 2654435761) >>> 24;
      await store.put('big', big, { expectedVersion: null });
      const back = await store.get('big');
      expect(back?.bytes.length).toBe(big.length);
      expect(Buffer.compare(Buffer.from(back?.bytes ?? []), Buffer.from(big))).toBe(0);
    });

    it('gives back the metadata of the last save through head', async () => {
      const { store } = await fresh();
      const meta = { status: 'paused', turnNumber: 4, updatedAt: Date.now(), tenant: 'acme', metadata: { user: 'u1' } };
      await store.put('m', bytes('x'), { expectedVersion: null, meta });
      const head = await store.head?.('m');
      expect(head?.version).toBe(1);
      expect(head?.meta).toMatchObject({ status: 'paused', turnNumber: 4, tenant: 'acme', metadata: { user: 'u1' } });
      expect(head?.meta.updatedAt).toEqual(expect.any(Number));
      await store.put('m', bytes('y'), { expectedVersion: 1, meta: { ...meta, status: 'active', turnNumber: 5 } });
      expect((await store.head?.('m'))?.meta).toMatchObject({ status: 'active', turnNumber: 5, tenant: 'acme' });
    });

    it('keeps sessions under a SessionManager: turns, loading elsewhere, and a stale manager refused', async () => {
      const { store, another } = await fresh();
      const { calls, operations } = countingOperations();
      const first = new SessionManager({ store, operations });
      const session = await first.create({ id: 'managed', policy: OPEN, env: { count: 0 } });
      const one = await session.executeTurn(
        "world.write('notes/a.txt', 'alpha'); env.count += 1; return await log.note('a');",
      );
      expect(one.outcome).toEqual({ tag: 'ok', value: 'noted a' });
      // Created (1), claimed for the turn (2), saved after it (3).
      expect(await store.version?.('managed')).toBe(3);

      const second = new SessionManager({ store: await another(), operations });
      const loaded = await second.get('managed');
      expect(loaded?.env).toEqual({ count: 1 });
      expect(loaded?.workspace.readText('notes/a.txt')).toBe('alpha');
      const two = await loaded?.executeTurn('env.count += 1; return env.count;');
      expect(two?.outcome).toEqual({ tag: 'ok', value: 2 });

      // The first manager's copy is stale now: its turn is refused before anything runs.
      const stale = await session.executeTurn("return await log.note('stale');");
      expect(stale.outcome).toMatchObject({ tag: 'error', code: 'SESSION_CONFLICT' });
      expect(calls.note).toBe(1);
      const reloaded = await first.get('managed');
      expect(reloaded?.env).toEqual({ count: 2 });
      expect(reloaded?.turnNumber).toBe(2);
      expect(reloaded?.audit.verify()).toMatchObject({ ok: true });
      expect(await store.list()).toEqual(['managed']);
    });

    it('keeps the realm state of a persistState session: another manager goes on from its bindings', async () => {
      const { store, another } = await fresh();
      const { calls, operations } = countingOperations();
      const snapshotKey = 'a store contract key of enough bytes';
      const first = new SessionManager({ store, operations, snapshotKey });
      const session = await first.create({ id: 'stateful', policy: OPEN, persistState: true });
      const one = await session.executeTurn(
        "const notes = new Map(); async function note(k) { notes.set(k, await log.note(k)); return notes.size } await note('a')",
      );
      expect(one.outcome).toEqual({ tag: 'ok', value: 1 });
      const second = new SessionManager({ store: await another(), operations, snapshotKey });
      const loaded = await second.get('stateful');
      expect(loaded?.persistState).toBe(true);
      const two = await loaded?.executeTurn("await note('b'); [...notes.values()]");
      expect(two?.outcome).toEqual({ tag: 'ok', value: ['noted a', 'noted b'] });
      // A failed turn is saved too, and keeps nothing of its own.
      const failed = await loaded?.executeTurn("notes.clear(); let lost = 1; throw new Error('no')");
      expect(failed?.outcome).toMatchObject({ tag: 'error', code: 'EVAL_ERROR' });
      const reloaded = await first.get('stateful');
      const three = await reloaded?.executeTurn('[notes.size, typeof lost]');
      expect(three?.outcome).toEqual({ tag: 'ok', value: [2, 'undefined'] });
      expect(calls.note).toBe(2);
    });
  });
}
