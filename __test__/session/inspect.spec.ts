// inspectSnapshot: a read-only look into snapshot bytes, also ones Session.restore refuses.
import { describe, expect, it } from 'vitest';
import { inspectSnapshot, Session } from '../../lib/session/index.js';
import { decodeSnapshot, encodeSnapshot } from '../../lib/session/snapshot.js';

const KEY = 'a key of at least sixteen characters';

async function sessionWithAudit(snapshotKey?: string) {
  const session = new Session({ id: 'inspected', policy: { allowedOperations: ['world.*'] }, snapshotKey });
  session.workspace.writeFile('a.txt', 'one\n');
  await session.executeTurn("world.read('a.txt'); world.write('a.txt', 'two\\n'); world.list('*');");
  return session;
}

/** The export with its ledger rewritten by `change` (a valid archive, unsigned). */
function withLedger(bytes: Uint8Array, change: (ledger: { audit: Record<string, unknown>[] }) => void) {
  const parts = decodeSnapshot(bytes);
  const ledger = JSON.parse(parts.ledger);
  change(ledger);
  return encodeSnapshot({
    ...parts,
    ledger: JSON.stringify(ledger),
    binding: { id: 'inspected', version: null, purpose: 'export' },
  });
}

describe('inspectSnapshot', () => {
  it('shows an intact session as Session.restore would load it', async () => {
    const session = await sessionWithAudit();
    const view = inspectSnapshot(session.snapshot());
    expect(view).toMatchObject({ id: 'inspected', status: 'active', turnNumber: 1, integrity: null });
    expect(view.audit.verification).toEqual({ ok: true, entries: 3 });
    expect(view.audit.entries.map((e) => e.operation)).toEqual(['world.read', 'world.write', 'world.list']);
    expect(view.turns[0]?.outcome).toBe('ok');
    expect(view.budget.turns).toEqual({ used: 1, limit: null });
  });

  it('opens a snapshot whose audit entry was changed, naming the entry, where restore refuses it', async () => {
    const bytes = withLedger((await sessionWithAudit()).snapshot(), (ledger) => {
      ledger.audit[1].args = '["b.txt","two\\n"]';
    });
    expect(() => Session.restore(bytes)).toThrow(expect.objectContaining({ code: 'AUDIT_TAMPERED' }));
    const view = inspectSnapshot(bytes);
    expect(view.audit.verification).toEqual({
      ok: false,
      entries: 3,
      error: 'audit entry 2 was changed after it was written',
      brokenAt: 2,
    });
  });

  it('notices a log cut short at its end', async () => {
    const bytes = withLedger((await sessionWithAudit()).snapshot(), (ledger) => {
      ledger.audit.pop();
    });
    expect(inspectSnapshot(bytes).audit.verification).toMatchObject({ ok: false, entries: 2, brokenAt: 2 });
  });

  it('with a key, reads a snapshot whose signature fails unverified and says so', async () => {
    const signed = (await sessionWithAudit(KEY)).snapshot();
    expect(inspectSnapshot(signed, { snapshotKey: KEY }).integrity).toBeNull();
    const view = inspectSnapshot(signed, { snapshotKey: 'another key of sixteen characters' });
    expect(view.integrity).toMatch(/signed/);
    expect(view.audit.verification.ok).toBe(true);
  });

  it('refuses bytes that are not a snapshot', () => {
    expect(() => inspectSnapshot(new Uint8Array([1, 2, 3]))).toThrow(
      expect.objectContaining({ code: 'INVALID_INPUT' }),
    );
  });
});
