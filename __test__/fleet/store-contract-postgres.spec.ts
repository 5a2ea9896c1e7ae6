// PostgresStore passes the shared session store contract (store-contract.ts), and keeps what only
// a database store keeps: audit entries and approval requests as rows written with the version,
// listing in SQL, safe migrations, clear errors for bad connections, and sessions imported from
// a FolderStore.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { importSessions, MIGRATIONS, PostgresStore } from '../../lib/fleet/index.js';
import { FolderStore, SessionManager } from '../../lib/index.js';
import { RUNS } from '../property/bounds';
import { bytes, countingOperations, OPEN, rejection, storeContract } from '../session/store-contract';
import { freshDatabase } from './helpers';

let database: ReturnType<typeof freshDatabase> | undefined;
/** This file's database, made on first use. */
function db() {
  database ??= freshDatabase('store');
  return database;
}
afterAll(async () => {
  if (database) await (await database).drop();
});

/** A migrated store in a schema of its own, and a function undoing it. */
async function schemaStore() {
  const { url } = await db();
  const schema = `s_${randomBytes(5).toString('hex')}`;
  const store = new PostgresStore({ connectionString: url }, { schema });
  await store.migrate();
  const others: PostgresStore[] = [];
  return {
    url,
    schema,
    store,
    another() {
      const other = new PostgresStore({ connectionString: url }, { schema });
      others.push(other);
      return other;
    },
    async dispose() {
      for (const other of others) await other.close();
      await store.pool.query(`DROP SCHEMA ${schema} CASCADE`);
      await store.close();
    },
  };
}

storeContract('PostgresStore', schemaStore);

describe('PostgresStore', () => {
  const made: Awaited<ReturnType<typeof schemaStore>>[] = [];
  async function fresh() {
    const s = await schemaStore();
    made.push(s);
    return s;
  }
  const dirs: string[] = [];
  afterEach(async () => {
    for (const s of made.splice(0)) await s.dispose();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('writes the audit entries of each save as rows that are the session audit and still one hash chain', async () => {
    const { store } = await fresh();
    const { operations } = countingOperations();
    const manager = new SessionManager({ store, operations });
    const session = await manager.create({ id: 'audited', policy: OPEN });
    await session.executeTurn("await log.note('a'); await log.note('b'); return 1;");
    await session.executeTurn("return await log.note('c');");
    const entries = session.audit.entries();
    expect(entries.length).toBeGreaterThanOrEqual(3);
    const rows = await store.auditEntries('audited');
    expect(rows).toEqual(entries);
    const { rows: columns } = await store.pool.query(
      `SELECT seq, turn_number, operation, hash, prev_hash FROM ${store.schema}.audit WHERE session_id = $1 ORDER BY seq`,
      ['audited'],
    );
    expect(columns).toEqual(
      entries.map((e) => ({
        seq: e.seq,
        turn_number: e.turnNumber,
        operation: e.operation,
        hash: e.hash,
        prev_hash: e.prevHash,
      })),
    );
    // The rows, exported as JSON lines, verify as the session's chain; an edited row does not.
    const lines = rows.map((e) => JSON.stringify(e)).join('\n');
    expect(session.audit.verify(lines)).toEqual({ ok: true, entries: entries.length });
    const edited = rows.map((e, i) => (i === 1 ? { ...e, args: '["changed"]' } : e));
    expect(session.audit.verify(edited.map((e) => JSON.stringify(e)).join('\n')).ok).toBe(false);
  });

  it('writes no audit rows for a put that loses its compare-and-set', async () => {
    const { store, another } = await fresh();
    const { operations } = countingOperations();
    const session = await new SessionManager({ store, operations }).create({ id: 'lost', policy: OPEN });
    const before = await store.auditEntries('lost');
    // Another writer advances the session: the turn's claim then fails.
    const stored = await store.get('lost');
    await another().put('lost', stored?.bytes ?? bytes(''), { expectedVersion: stored?.version ?? 0 });
    const turn = await session.executeTurn("return await log.note('never');");
    expect(turn.outcome).toMatchObject({ tag: 'error', code: 'SESSION_CONFLICT' });
    const refused = await rejection(
      store.put('lost', bytes('x'), {
        expectedVersion: 1,
        auditSince: () => [
          { seq: 0, timestamp: 1, turnNumber: 1, operation: 'x', args: '[]', durationMs: 0, prevHash: '0', hash: 'h' },
        ],
      }),
    );
    expect(refused.code).toBe('SESSION_CONFLICT');
    expect(await store.auditEntries('lost')).toEqual(before);
  });

  it('refuses audit entries that do not continue the stored chain (AUDIT_TAMPERED), storing nothing', async () => {
    const { store } = await fresh();
    const { operations } = countingOperations();
    const session = await new SessionManager({ store, operations }).create({ id: 'chain', policy: OPEN });
    await session.executeTurn("return await log.note('a');");
    const rows = await store.auditEntries('chain');
    expect(rows.length).toBeGreaterThan(0);
    const version = (await store.version('chain')) ?? 0;
    const last = rows[rows.length - 1] as (typeof rows)[number];
    const forged = { ...last, seq: last.seq + 1, prevHash: 'f'.repeat(64), hash: 'e'.repeat(64) };
    const refused = await rejection(
      store.put('chain', bytes('forged'), { expectedVersion: version, auditSince: () => [forged as never] }),
    );
    expect(refused.code).toBe('AUDIT_TAMPERED');
    expect(await store.version('chain')).toBe(version);
    expect(await store.auditEntries('chain')).toEqual(rows);
  });

  it('keeps the requests of a paused turn as approval rows, closed once decided', async () => {
    const { store } = await fresh();
    const { calls, operations } = countingOperations();
    const manager = new SessionManager({ store, operations });
    const session = await manager.create({ id: 'pay', policy: OPEN });
    const turn = await session.executeTurn('return await pay.send(50);');
    expect(turn.outcome.tag).toBe('needs-approval');
    const [request] = session.pendingApprovals;
    expect(await store.approvals('pay')).toEqual([
      { id: request?.id, turnNumber: 1, operation: 'pay.send', args: [50], status: 'pending', decidedAt: null },
    ]);
    expect(await store.listSessions({ status: 'paused' })).toMatchObject([{ id: 'pay', status: 'paused' }]);

    await new SessionManager({ store, operations }).approve('pay', request?.id ?? '');
    const [decided] = await store.approvals('pay');
    expect(decided?.status).toBe('decided');
    expect(decided?.decidedAt).toBeInstanceOf(Date);
    const resumed = await new SessionManager({ store, operations }).resume('pay');
    expect(resumed?.outcome).toEqual({ tag: 'ok', value: { paid: 50 } });
    expect(calls.pay).toEqual([50]);
    expect((await store.approvals('pay')).map((a) => a.status)).toEqual(['decided']);
  });

  it('lists sessions by tenant and status in SQL, paged by id', async () => {
    const { store } = await fresh();
    const put = (id: string, tenant: string, status: string) =>
      store.put(id, bytes(id), { expectedVersion: null, meta: { tenant, status, turnNumber: 0, metadata: { id } } });
    await put('a1', 'acme', 'active');
    await put('a2', 'acme', 'paused');
    await put('a3', 'acme', 'active');
    await put('b1', 'beta', 'active');
    const ids = (rows: { id: string }[]) => rows.map((r) => r.id);
    expect(ids(await store.listSessions({ tenant: 'acme' }))).toEqual(['a1', 'a2', 'a3']);
    expect(ids(await store.listSessions({ status: 'active' }))).toEqual(['a1', 'a3', 'b1']);
    expect(ids(await store.listSessions({ tenant: 'acme', status: 'active' }))).toEqual(['a1', 'a3']);
    expect(ids(await store.listSessions({ tenant: 'acme', limit: 2 }))).toEqual(['a1', 'a2']);
    expect(ids(await store.listSessions({ tenant: 'acme', after: 'a2' }))).toEqual(['a3']);
    expect(await store.listSessions({ tenant: 'nobody' })).toEqual([]);
    expect(await store.listSessions({ tenant: 'beta' })).toMatchObject([
      { id: 'b1', version: 1, tenant: 'beta', status: 'active', turnNumber: 0, metadata: { id: 'b1' } },
    ]);
    expect((await rejection(store.listSessions({ limit: 0 }))).code).toBe('INVALID_INPUT');
    expect((await rejection(store.listSessions({ tenant: 7 as unknown as string }))).code).toBe('INVALID_INPUT');
  });

  it('migrates once: again, and from several stores at once, with nothing applied twice', async () => {
    const { url } = await db();
    const schema = `m_${randomBytes(5).toString('hex')}`;
    const stores = Array.from({ length: 5 }, () => new PostgresStore({ connectionString: url }, { schema }));
    try {
      const applied = await Promise.all(stores.map((s) => s.migrate()));
      const versions = MIGRATIONS.map((m) => m.version);
      expect(applied.flat().sort((a, b) => a - b)).toEqual(versions);
      expect(await stores[0]?.migrate()).toEqual([]);
      const { rows } = (await stores[0]?.pool.query(`SELECT version FROM ${schema}.schema_migrations`)) ?? { rows: [] };
      expect(rows.map((r) => r.version).sort((a, b) => a - b)).toEqual(versions);
      await stores[1]?.put('works', bytes('x'), { expectedVersion: null });
      expect(await stores[2]?.list()).toEqual(['works']);
    } finally {
      await stores[0]?.pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      for (const s of stores) await s.close();
    }
  });

  it('refuses a malformed connection string or schema at once (INVALID_INPUT)', async () => {
    const started = Date.now();
    for (const connectionString of ['', 'not a url', 'http://localhost/db', 'postgres://[bad', 42]) {
      const refused = await rejection(
        Promise.resolve().then(() => new PostgresStore({ connectionString: connectionString as string })),
      );
      expect(refused.code, String(connectionString)).toBe('INVALID_INPUT');
    }
    for (const schema of ['', 'Bad', 'a;drop', 'x'.repeat(64)]) {
      const refused = await rejection(
        Promise.resolve().then(() => new PostgresStore({ connectionString: 'postgres://localhost/x' }, { schema })),
      );
      expect(refused.code, schema).toBe('INVALID_INPUT');
    }
    expect((await rejection(Promise.resolve().then(() => new PostgresStore({} as never)))).code).toBe('INVALID_INPUT');
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('reports a server that cannot be reached as UNAVAILABLE, without hanging', async () => {
    // A port nobody listens on: bound, then closed.
    const net = await import('node:net');
    const port = await new Promise<number>((resolve) => {
      const server = net.createServer().listen(0, '127.0.0.1', () => {
        const address = server.address() as { port: number };
        server.close(() => resolve(address.port));
      });
    });
    const store = new PostgresStore({ connectionString: `postgres://postgres@127.0.0.1:${port}/x` });
    try {
      const started = Date.now();
      for (const call of [
        () => store.get('a'),
        () => store.migrate(),
        () => store.put('a', bytes('x'), { expectedVersion: null }),
      ]) {
        const refused = await rejection(call());
        expect(refused.code).toBe('UNAVAILABLE');
        expect(refused.message).toMatch(/could not reach PostgreSQL/);
      }
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      await store.close();
    }
  });

  it('runs a transaction for other writes: committed when it resolves, rolled back when it throws', async () => {
    const { store } = await fresh();
    const caps = `${store.schema}.tenant_caps`;
    await store.transaction(async (client) => {
      await client.query(`INSERT INTO ${caps} (tenant, max_concurrent_turns) VALUES ('kept', 2)`);
    });
    const failed = await rejection(
      store.transaction(async (client) => {
        await client.query(`INSERT INTO ${caps} (tenant, max_concurrent_turns) VALUES ('undone', 1)`);
        throw new Error('changed my mind');
      }),
    );
    expect(failed.message).toBe('changed my mind');
    expect((await store.pool.query(`SELECT tenant FROM ${caps} ORDER BY tenant`)).rows).toEqual([{ tenant: 'kept' }]);
    expect((await rejection(store.transaction(null as never))).code).toBe('INVALID_INPUT');
  });

  it('uses a pool it is given and leaves it open on close', async () => {
    const { url } = await db();
    const pool = new pg.Pool({ connectionString: url });
    const schema = `p_${randomBytes(5).toString('hex')}`;
    const store = new PostgresStore({ pool }, { schema });
    try {
      await store.migrate();
      await store.put('x', bytes('x'), { expectedVersion: null });
      await store.close();
      expect((await pool.query(`SELECT count(*)::int AS n FROM ${schema}.sessions`)).rows).toEqual([{ n: 1 }]);
    } finally {
      await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await pool.end();
    }
  });

  it('imports FolderStore sessions in one call at their versions, and they go on there', async () => {
    const { store } = await fresh();
    const dir = mkdtempSync(join(tmpdir(), 'quickrealm-import-'));
    dirs.push(dir);
    const { calls, operations } = countingOperations();
    const snapshotKey = 'import-key-of-32-characters-long';
    const folder = new FolderStore(dir);
    const onFolder = new SessionManager({ store: folder, operations, snapshotKey });
    const moved = await onFolder.create({ id: 'moved', policy: OPEN, env: { count: 0 } });
    await moved.executeTurn("env.count += 1; world.write('a.txt', 'A'); return await log.note('one');");
    const paused = await onFolder.create({ id: 'waiting', policy: OPEN });
    await paused.executeTurn('return await pay.send(99);');
    const versions = { moved: await folder.version('moved'), waiting: await folder.version('waiting') };

    await store.put('taken', bytes('already here'), { expectedVersion: null });
    await new SessionManager({ store: folder, operations, snapshotKey }).create({ id: 'taken' });

    const report = await importSessions({ from: folder, to: store, snapshotKey, operations });
    expect(report.imported).toEqual([
      { id: 'moved', version: versions.moved },
      { id: 'waiting', version: versions.waiting },
    ]);
    expect(report.skipped).toMatchObject([{ id: 'taken', code: 'SESSION_CONFLICT' }]);
    expect(Buffer.from((await store.get('taken'))?.bytes ?? []).toString()).toBe('already here');
    expect(await store.version('moved')).toBe(versions.moved);
    expect(await store.auditEntries('moved')).toEqual(moved.audit.entries());
    expect((await store.approvals('waiting')).map((a) => [a.operation, a.status])).toEqual([['pay.send', 'pending']]);
    expect(await store.listSessions({ status: 'paused' })).toMatchObject([{ id: 'waiting', turnNumber: 1 }]);

    // Continued over PostgreSQL: the version goes on from where the folder left it.
    const onPostgres = new SessionManager({ store, operations, snapshotKey });
    const continued = await onPostgres.get('moved');
    expect(continued?.workspace.readText('a.txt')).toBe('A');
    const turn = await continued?.executeTurn("env.count += 1; return await log.note('two');");
    expect(turn?.outcome).toEqual({ tag: 'ok', value: 'noted two' });
    expect(await store.version('moved')).toBe((versions.moved ?? 0) + 2);
    expect(calls.note).toBe(2);
    const rows = await store.auditEntries('moved');
    expect(rows).toEqual(continued?.audit.entries());
    expect(continued?.audit.verify(rows.map((e) => JSON.stringify(e)).join('\n'))).toMatchObject({ ok: true });
    // Importing again changes nothing.
    const again = await importSessions({ from: folder, to: store, snapshotKey, ids: ['moved'] });
    expect(again).toEqual({
      imported: [],
      skipped: [expect.objectContaining({ id: 'moved', code: 'SESSION_CONFLICT' })],
    });
  });

  it('keeps model-written NUL characters in audit and approval rows exactly (jsonb would refuse them)', async () => {
    const { store } = await fresh();
    const operations = {
      echo: (x: string) => x,
      fail: (x: string) => {
        throw new Error(x);
      },
      ask: { needsApproval: true, handler: (x: string) => x },
    };
    const manager = new SessionManager({ store, operations });
    const session = await manager.create({ id: 'nul', policy: OPEN });
    const nul = 'a\u0000b';
    const ok = await session.executeTurn(
      `try { await fail(${JSON.stringify(nul)}) } catch {} return await echo(${JSON.stringify(nul)})`,
    );
    expect(ok.outcome).toEqual({ tag: 'ok', value: nul });
    const paused = await session.executeTurn(`return await ask(${JSON.stringify(nul)})`);
    expect(paused.outcome.tag).toBe('needs-approval');
    expect((await store.approvals('nul')).map((a) => a.args)).toEqual([[nul]]);
    const rows = await store.auditEntries('nul');
    expect(rows).toEqual(JSON.parse(JSON.stringify(session.audit.entries())));
    expect(rows.some((r) => String(r.error ?? '').includes('\u0000'))).toBe(true);
    const again = await new SessionManager({ store, operations }).get('nul');
    expect(again?.audit.verify()).toMatchObject({ ok: true });
  });

  it('refuses listing filters PostgreSQL cannot compare with INVALID_INPUT', async () => {
    const { store } = await fresh();
    for (const filter of [{ tenant: 'a\u0000' }, { status: '\u0000' }, { after: 'x'.repeat(2000) }, { tenant: 7 }]) {
      await expect(store.listSessions(filter as never)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    }
    expect(await store.listSessions({ tenant: 'nobody' })).toEqual([]);
  });

  it('keeps tenant caps and sums the tokens and cost each save records for the tenant', async () => {
    const { store } = await fresh();
    const operations = {
      'llm.complete': { handler: (n: number) => ({ value: 'ok', usage: { tokens: n, cost: n / 1000 } }) },
    };
    const manager = new SessionManager({ store, operations });
    for (const id of ['t1', 't2']) {
      const session = await manager.create({ id, policy: OPEN, tenant: 'acme' });
      await session.executeTurn(`await llm['complete'](${id === 't1' ? 120 : 30}); return 1`);
    }
    await manager.create({ id: 'other', policy: OPEN, tenant: 'globex' });
    expect(await store.tenantUsage('acme')).toEqual({
      caps: { maxConcurrentTurns: null, maxTokens: null, maxCost: null },
      used: { tokens: 150, cost: 0.15, sessions: 2 },
    });
    await store.setTenantCaps('acme', { maxConcurrentTurns: 2, maxTokens: 1000 });
    expect((await store.tenantUsage('acme')).caps).toEqual({ maxConcurrentTurns: 2, maxTokens: 1000, maxCost: null });
    await store.setTenantCaps('acme', { maxCost: 1.5 });
    expect((await store.tenantUsage('acme')).caps).toEqual({ maxConcurrentTurns: null, maxTokens: null, maxCost: 1.5 });
    await store.setTenantCaps('acme', {});
    const { rows } = await store.pool.query(`SELECT count(*)::int AS n FROM ${store.schema}.tenant_caps`);
    expect(rows[0].n).toBe(0);
    for (const [tenant, caps] of [
      ['a b', {}],
      ['acme', { maxConcurrentTurns: 1.5 }],
      ['acme', { maxTokens: -1 }],
      ['acme', { maxCost: Number.NaN }],
      ['acme', null],
    ] as const) {
      await expect(store.setTenantCaps(tenant, caps as never)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    }
  });

  it('agrees with a simple model over random sequences of put, delete and get', async () => {
    const { store } = await fresh();
    const ids = ['p', 'q', 'r'];
    const command = fc.oneof(
      fc.record({
        kind: fc.constant('put' as const),
        id: fc.constantFrom(...ids),
        expected: fc.option(fc.integer({ min: 1, max: 4 }), { nil: null }),
        useCurrent: fc.boolean(),
        data: fc.uint8Array({ maxLength: 64 }),
      }),
      fc.record({ kind: fc.constant('delete' as const), id: fc.constantFrom(...ids) }),
      fc.record({ kind: fc.constant('get' as const), id: fc.constantFrom(...ids) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(command, { maxLength: 25 }), async (commands) => {
        for (const id of ids) await store.delete(id);
        const model = new Map<string, { version: number; data: Uint8Array }>();
        for (const c of commands) {
          const current = model.get(c.id);
          if (c.kind === 'put') {
            const expectedVersion = c.useCurrent ? (current?.version ?? null) : c.expected;
            const outcome = await store.put(c.id, c.data, { expectedVersion }).then(
              (v) => ({ v }),
              (e: { code?: string }) => ({ code: e.code }),
            );
            if ((current?.version ?? null) === expectedVersion) {
              const version = (current?.version ?? 0) + 1;
              expect(outcome).toEqual({ v: version });
              model.set(c.id, { version, data: c.data });
            } else {
              expect(outcome).toEqual({ code: 'SESSION_CONFLICT' });
            }
          } else if (c.kind === 'delete') {
            await store.delete(c.id);
            model.delete(c.id);
          } else {
            const got = await store.get(c.id);
            expect(got && { version: got.version, data: new Uint8Array(got.bytes) }).toEqual(current ?? null);
          }
        }
        expect(await store.list()).toEqual([...model.keys()].sort());
      }),
      { numRuns: Math.max(RUNS * 5, 30) },
    );
  });
});
