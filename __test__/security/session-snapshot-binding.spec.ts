// Signed snapshots say what they are: the session id, the store version they were saved as and
// their purpose (a stored state or an export) are inside the signed bytes. A store that is not
// trusted cannot serve an older snapshot (and so run an approved operation a second time), a
// snapshot under another id, or an export as a stored state: each is SNAPSHOT_TAMPERED, and
// nothing runs.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type OperationHandler, Session, SessionManager, type TurnResult, ZipWorkspace } from '../../lib/index.js';

const KEY = 'a key the store never sees';
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'qr-binding-'));
  dirs.push(dir);
  return dir;
}

function counter() {
  const calls: unknown[][] = [];
  const handler = (...args: never[]) => {
    calls.push(args);
    return calls.length;
  };
  return { calls, handler: handler as OperationHandler };
}

async function rejection(p: Promise<unknown>): Promise<{ code?: string; message: string }> {
  try {
    await p;
  } catch (e) {
    return e as { code?: string; message: string };
  }
  throw new Error('expected the promise to reject');
}

/** Rewrites one part of a snapshot, keeping every other part. */
function edited(bytes: Uint8Array, name: string, edit: (part: Buffer | null) => string | Buffer | null): Buffer {
  const box = ZipWorkspace.fromZip(bytes);
  try {
    const next = edit(box.exists(name) ? box.readFile(name) : null);
    if (next === null) box.delete(name);
    else box.writeFile(name, next);
    return box.toZip({ history: false });
  } finally {
    box.dispose();
  }
}

/** A snapshot's part as text. */
function part(bytes: Uint8Array, name: string): string {
  const box = ZipWorkspace.fromZip(bytes);
  try {
    return box.readText(name);
  } finally {
    box.dispose();
  }
}

/**
 * A managed session paused on an approval that has been approved (and saved), with the raw
 * store file as it was then; then resumed, so the approved transfer ran once.
 */
async function approvedAndRun(dir: string) {
  const pay = counter();
  const operations = { 'bank.transfer': { handler: pay.handler, needsApproval: true } };
  const manager = new SessionManager({ dir, operations, snapshotKey: KEY });
  const session = await manager.create({ id: 'pay', policy: {} });
  const t = await session.executeTurn("return await bank.transfer({ to: 'bob', amount: 500 })");
  if (t.outcome.tag !== 'needs-approval') throw new Error(`expected a pause, got ${JSON.stringify(t.outcome)}`);
  await manager.approve('pay', t.outcome.requests[0].id);
  const file = join(dir, 'pay.session');
  const approvedFile = readFileSync(file);
  const approved = await manager.store.get('pay');
  if (!approved) throw new Error('not stored');
  const done = (await manager.resume('pay')) as TurnResult;
  expect(done.outcome).toEqual({ tag: 'ok', value: 1 });
  expect(pay.calls).toHaveLength(1);
  const current = readFileSync(file);
  return { pay, operations, manager, file, approvedFile, approvedBytes: Buffer.from(approved.bytes), current };
}

describe('an older signed snapshot written back cannot run an approved operation again', () => {
  it('the store file rolled back to the approved state: SNAPSHOT_TAMPERED, the transfer ran once', async () => {
    const dir = tempDir();
    const { pay, operations, manager, file, approvedFile, current } = await approvedAndRun(dir);
    writeFileSync(file, approvedFile);
    // Another process, with nothing in memory, and the process that ran it.
    const other = new SessionManager({ dir, operations, snapshotKey: KEY });
    expect((await rejection(other.resume('pay'))).code).toBe('SNAPSHOT_TAMPERED');
    expect((await rejection(manager.resume('pay'))).code).toBe('SNAPSHOT_TAMPERED');
    expect((await rejection(other.get('pay'))).message).toMatch(/rolled back|older/);
    expect(pay.calls).toHaveLength(1);
    // Put back what the store last wrote: the session loads and goes on.
    writeFileSync(file, current);
    const back = await new SessionManager({ dir, operations, snapshotKey: KEY }).get('pay');
    expect(back?.status).toBe('active');
    expect((await back?.executeTurn('return 2'))?.outcome).toEqual({ tag: 'ok', value: 2 });
    expect(pay.calls).toHaveLength(1);
  });

  it('the older snapshot put through the store as a new version: SNAPSHOT_TAMPERED, nothing runs', async () => {
    const dir = tempDir();
    const { pay, operations, manager, approvedBytes } = await approvedAndRun(dir);
    const version = await manager.store.version?.('pay');
    await manager.store.put('pay', approvedBytes, { expectedVersion: version ?? null });
    const other = new SessionManager({ dir, operations, snapshotKey: KEY });
    const refused = await rejection(other.resume('pay'));
    expect(refused.code).toBe('SNAPSHOT_TAMPERED');
    expect(refused.message).toMatch(/version/);
    expect((await rejection(manager.resume('pay'))).code).toBe('SNAPSHOT_TAMPERED');
    expect(pay.calls).toHaveLength(1);
  });

  it("the store header's version edited to the current one does not make an older snapshot current", async () => {
    const dir = tempDir();
    const { pay, operations, file, approvedFile, current } = await approvedAndRun(dir);
    const headerOf = (b: Buffer) => b.subarray(0, b.indexOf(10)).toString('utf8');
    const currentVersion = headerOf(current).split(' ')[1];
    const [magic, , ...meta] = headerOf(approvedFile).split(' ');
    const forged = Buffer.concat([
      Buffer.from(`${[magic, currentVersion, ...meta].join(' ')}\n`),
      approvedFile.subarray(approvedFile.indexOf(10) + 1),
    ]);
    writeFileSync(file, forged);
    const other = new SessionManager({ dir, operations, snapshotKey: KEY });
    expect((await rejection(other.resume('pay'))).code).toBe('SNAPSHOT_TAMPERED');
    expect(pay.calls).toHaveLength(1);
  });

  it("the version inside the snapshot edited, or a newer snapshot's signature moved onto it: SNAPSHOT_TAMPERED", async () => {
    const dir = tempDir();
    const { pay, operations, manager, approvedBytes } = await approvedAndRun(dir);
    const newest = await manager.store.get('pay');
    if (!newest) throw new Error('not stored');
    const binding = JSON.parse(part(newest.bytes, 'binding.json'));
    expect(binding).toEqual({ id: 'pay', version: newest.version, purpose: 'store' });
    const forgeries: [string, Buffer][] = [
      [
        'version edited',
        edited(approvedBytes, 'binding.json', (b) => {
          const o = JSON.parse(String(b));
          return JSON.stringify({ ...o, version: newest.version + 1 });
        }),
      ],
      ['signature moved', edited(approvedBytes, 'signature', () => Buffer.from(part(newest.bytes, 'signature')))],
      [
        'binding and signature both taken from the newest',
        edited(
          edited(approvedBytes, 'signature', () => Buffer.from(part(newest.bytes, 'signature'))),
          'binding.json',
          () => part(newest.bytes, 'binding.json'),
        ),
      ],
      ['binding removed', edited(approvedBytes, 'binding.json', () => null)],
    ];
    for (const [what, bytes] of forgeries) {
      const version = await manager.store.version?.('pay');
      await manager.store.put('pay', bytes, { expectedVersion: version ?? null });
      const other = new SessionManager({ dir, operations, snapshotKey: KEY });
      expect((await rejection(other.resume('pay'))).code, what).toBe('SNAPSHOT_TAMPERED');
    }
    expect(pay.calls).toHaveLength(1);
  });
});

describe('a signed snapshot is only ever served as the session it was made for', () => {
  async function twoSessions(dir: string) {
    const manager = new SessionManager({ dir, snapshotKey: KEY });
    await manager.create({ id: 'alice', policy: {}, env: { owner: 'alice', balance: 1000 } });
    await manager.create({ id: 'mallory', policy: {}, env: { owner: 'mallory', balance: 0 } });
    return manager;
  }

  it("alice's file copied over mallory's: SNAPSHOT_TAMPERED; mallory's own file still loads", async () => {
    const dir = tempDir();
    const manager = await twoSessions(dir);
    const own = readFileSync(join(dir, 'mallory.session'));
    writeFileSync(join(dir, 'mallory.session'), readFileSync(join(dir, 'alice.session')));
    const other = new SessionManager({ dir, snapshotKey: KEY });
    const refused = await rejection(other.get('mallory'));
    expect(refused.code).toBe('SNAPSHOT_TAMPERED');
    expect(refused.message).toMatch(/alice/);
    writeFileSync(join(dir, 'mallory.session'), own);
    expect((await new SessionManager({ dir, snapshotKey: KEY }).get('mallory'))?.env).toEqual({
      owner: 'mallory',
      balance: 0,
    });
    expect((await manager.get('alice'))?.env).toEqual({ owner: 'alice', balance: 1000 });
  });

  it("alice's snapshot put under a new id or over mallory's through the store: SNAPSHOT_TAMPERED", async () => {
    const dir = tempDir();
    const manager = await twoSessions(dir);
    const alice = await manager.store.get('alice');
    if (!alice) throw new Error('not stored');
    await manager.store.put('eve', alice.bytes, { expectedVersion: null });
    const mallory = await manager.store.version?.('mallory');
    await manager.store.put('mallory', alice.bytes, { expectedVersion: mallory ?? null });
    const other = new SessionManager({ dir, snapshotKey: KEY });
    for (const id of ['eve', 'mallory']) {
      expect((await rejection(other.get(id))).code, id).toBe('SNAPSHOT_TAMPERED');
      expect((await rejection(other.resume(id))).code, id).toBe('SNAPSHOT_TAMPERED');
    }
    expect((await other.get('alice'))?.id).toBe('alice');
  });
});

describe('a signed snapshot is used only for what it was made for', () => {
  it('an export (Session#snapshot) written into the store is refused; a stored state is refused by Session.restore', async () => {
    const dir = tempDir();
    const pay = counter();
    const operations = { 'bank.transfer': { handler: pay.handler, needsApproval: true } };
    const manager = new SessionManager({ dir, operations, snapshotKey: KEY });
    const session = await manager.create({ id: 'pay', policy: {} });
    const t = await session.executeTurn('return await bank.transfer(5)');
    if (t.outcome.tag !== 'needs-approval') throw new Error('expected a pause');
    const exported = session.snapshot();
    expect(JSON.parse(part(exported, 'binding.json'))).toEqual({ id: 'pay', version: null, purpose: 'export' });
    // The export restores where exports are meant to go.
    expect(Session.restore(exported, { snapshotKey: KEY }).pendingApprovals).toHaveLength(1);
    // Approved in the export, then written into the store.
    const stored = await manager.store.get('pay');
    if (!stored) throw new Error('not stored');
    await manager.store.put('pay', exported, { expectedVersion: stored.version });
    const other = new SessionManager({ dir, operations, snapshotKey: KEY });
    const refused = await rejection(other.get('pay'));
    expect(refused.code).toBe('SNAPSHOT_TAMPERED');
    expect(refused.message).toMatch(/export/);
    // A stored state handed to Session.restore.
    let code: string | undefined;
    try {
      Session.restore(stored.bytes, { snapshotKey: KEY, operations });
    } catch (e) {
      code = (e as { code?: string }).code;
    }
    expect(code).toBe('SNAPSHOT_TAMPERED');
    // The purpose flipped in the bytes breaks the signature.
    const flipped = edited(stored.bytes, 'binding.json', (b) =>
      JSON.stringify({ ...JSON.parse(String(b)), purpose: 'export' }),
    );
    expect(() => Session.restore(flipped, { snapshotKey: KEY })).toThrow(/SNAPSHOT_TAMPERED/);
    expect(pay.calls).toHaveLength(0);
  });

  it('an unsigned snapshot where a key is configured is refused, from the store and by Session.restore', async () => {
    const dir = tempDir();
    const unsigned = new SessionManager({ dir });
    await unsigned.create({ id: 'plain', policy: {} });
    expect((await rejection(new SessionManager({ dir, snapshotKey: KEY }).get('plain'))).code).toBe(
      'SNAPSHOT_TAMPERED',
    );
    expect(() => Session.restore(new Session().snapshot(), { snapshotKey: KEY })).toThrow(/SNAPSHOT_TAMPERED/);
  });

  it('without a key, a snapshot for another id is still refused (an honest mistake, not a defence)', async () => {
    const dir = tempDir();
    const manager = new SessionManager({ dir });
    await manager.create({ id: 'a', policy: {} });
    await manager.create({ id: 'b', policy: {} });
    writeFileSync(join(dir, 'b.session'), readFileSync(join(dir, 'a.session')));
    expect((await rejection(new SessionManager({ dir }).get('b'))).code).toBe('SNAPSHOT_TAMPERED');
  });
});

describe('what a store records', () => {
  it('a full run of turns, approvals and restarts keeps loading (the binding follows every save)', async () => {
    const dir = tempDir();
    const pay = counter();
    const operations = { 'bank.transfer': { handler: pay.handler, needsApproval: true } };
    const manager = new SessionManager({ dir, operations, snapshotKey: KEY });
    await manager.create({ id: 'long', policy: {} });
    for (let i = 0; i < 3; i++) {
      // The copy another manager advanced is stale: load the current one.
      const session = await manager.get('long');
      if (!session) throw new Error('not stored');
      const t = await session.executeTurn(`env.n = ${i}; return await bank.transfer(${i})`);
      if (t.outcome.tag !== 'needs-approval') throw new Error('expected a pause');
      const reopened = new SessionManager({ dir, operations, snapshotKey: KEY });
      await reopened.approve('long', t.outcome.requests[0].id);
      const done = (await reopened.resume('long')) as TurnResult;
      expect(done.outcome).toEqual({ tag: 'ok', value: i + 1 });
    }
    expect(pay.calls).toHaveLength(3);
    const last = await new SessionManager({ dir, operations, snapshotKey: KEY }).get('long');
    expect(last?.env).toEqual({ n: 2 });
    expect((await manager.summaries()).map((s) => s.id)).toEqual(['long']);
  });

  it('a store that goes back to an older version under a running manager is refused (in-memory high-water mark)', async () => {
    const pay = counter();
    const operations = { 'bank.transfer': { handler: pay.handler, needsApproval: true } };
    // A store without a version record of its own: whoever can write it can roll it back whole.
    const snapshots = new Map<string, { bytes: Uint8Array; version: number }>();
    const history: { bytes: Uint8Array; version: number }[] = [];
    const store = {
      get: async (id: string) => snapshots.get(id) ?? null,
      list: async () => [...snapshots.keys()],
      delete: async (id: string) => void snapshots.delete(id),
      put: async (id: string, bytes: Uint8Array, o: { expectedVersion: number | null }) => {
        const now = snapshots.get(id)?.version ?? null;
        if (now !== o.expectedVersion)
          throw Object.assign(new Error('SESSION_CONFLICT: moved'), { code: 'SESSION_CONFLICT' });
        const entry = { bytes: Uint8Array.from(bytes), version: (now ?? 0) + 1 };
        snapshots.set(id, entry);
        history.push(entry);
        return entry.version;
      },
    };
    const manager = new SessionManager({ store, operations, snapshotKey: KEY });
    const session = await manager.create({ id: 'mem', policy: {} });
    const t = await session.executeTurn('return await bank.transfer(1)');
    if (t.outcome.tag !== 'needs-approval') throw new Error('expected a pause');
    await manager.approve('mem', t.outcome.requests[0].id);
    const approved = history.at(-1);
    if (!approved) throw new Error('nothing saved');
    await manager.resume('mem');
    expect(pay.calls).toHaveLength(1);
    snapshots.set('mem', approved);
    expect((await rejection(manager.resume('mem'))).code).toBe('SNAPSHOT_TAMPERED');
    expect(pay.calls).toHaveLength(1);
  });
});
