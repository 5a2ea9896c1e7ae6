'use strict';
// A read-only look into a session snapshot, for review: what `Session.restore` would load, but
// also for a snapshot it refuses. A session whose audit chain no longer verifies cannot be
// restored (AUDIT_TAMPERED); a reviewer still needs to see it and where the chain breaks. With a
// key, a snapshot whose signature or binding does not match is read unverified and said so.
// Nothing here can run a turn or change the snapshot.

const { SessionLedger } = require('../native/load.js');
const { ErrorCode } = require('../errors.js');
const { decodeSnapshot } = require('./snapshot.js');
const { proposalsOf } = require('./approvals.js');
const { BUDGET_KINDS } = require('./session.js');

/**
 * @typedef {{ ok: true, entries: number } | { ok: false, entries: number, error: string, brokenAt: number | null }} AuditVerification
 */

/**
 * Checks the chain of stored audit entries (natively, as a restore does) and that it ends at
 * the recorded head; on failure names the first entry that breaks it.
 * @param {unknown[]} entries
 * @param {string | undefined} head
 * @returns {AuditVerification}
 */
function verifyEntries(entries, head) {
  const v = SessionLedger.verifyAuditExport(entries.map((e) => JSON.stringify(e)).join('\n'));
  if (!v.ok) {
    const error = v.error ?? 'the audit log does not verify';
    const at = /audit entry (\d+)/.exec(error);
    return { ok: false, entries: entries.length, error, brokenAt: at ? Number(at[1]) : null };
  }
  const last = /** @type {{ hash?: string } | undefined} */ (entries.at(-1))?.hash ?? '';
  if (head !== undefined && last !== head) {
    return {
      ok: false,
      entries: entries.length,
      error: `the audit log ends at entry ${entries.length} but the session recorded a different last entry`,
      brokenAt: entries.length + (entries.length > 0 ? 0 : 1),
    };
  }
  return { ok: true, entries: v.entries ?? entries.length };
}

/**
 * Decodes with the checks asked for; a snapshot refused as tampered is decoded again without
 * them so it can still be shown, with the refusal kept.
 * @param {Uint8Array} bytes
 * @param {Uint8Array | string | undefined} key
 * @param {{ id?: string, version?: number, purpose: 'store' | 'export' }} expected
 */
function decodeForReview(bytes, key, expected) {
  try {
    return { snap: decodeSnapshot(bytes, key, expected), integrity: null };
  } catch (e) {
    if (/** @type {{ code?: string }} */ (e)?.code !== ErrorCode.SnapshotTampered) throw e;
    const integrity = /** @type {Error} */ (e).message;
    for (const purpose of /** @type {const} */ (['store', 'export'])) {
      try {
        return { snap: decodeSnapshot(bytes, undefined, { purpose }), integrity };
      } catch {}
    }
    // Not even readable unverified (no binding at all is accepted without a key, so this is a
    // snapshot whose binding names another session): report the first refusal.
    throw e;
  }
}

/**
 * Everything a review shows of a snapshot, as plain data: the session's state, turns, pending
 * approvals, proposals with their diffs, budget, the audit log with its verification, and
 * whether the snapshot's signature and binding held (`integrity`: null when they did, else why
 * not). Throws INVALID_INPUT for bytes that are not a snapshot.
 * @param {Uint8Array} bytes
 * @param {{ snapshotKey?: Uint8Array | string, expected?: { id?: string, version?: number, purpose: 'store' | 'export' } }} [options]
 */
function inspectSnapshot(bytes, options = {}) {
  const key =
    typeof options.snapshotKey === 'string' || options.snapshotKey instanceof Uint8Array
      ? options.snapshotKey
      : undefined;
  const { snap, integrity } = decodeForReview(bytes, key, options.expected ?? { purpose: 'export' });
  try {
    const meta = snap.meta;
    /** @type {{ budget?: { limits?: (number | null)[], used?: number[] }, audit?: unknown[], auditHead?: string }} */
    let ledger = {};
    try {
      ledger = JSON.parse(snap.ledger);
    } catch {}
    const audit = Array.isArray(ledger.audit) ? ledger.audit : [];
    /** @type {Record<string, { used: number, limit: number | null }>} */
    const budget = {};
    BUDGET_KINDS.forEach((kind, i) => {
      budget[kind] = { used: Number(ledger.budget?.used?.[i] ?? 0), limit: ledger.budget?.limits?.[i] ?? null };
    });
    const pending = meta.pending && Array.isArray(meta.pending.requests) ? meta.pending : null;
    return {
      id: String(meta.id),
      status: String(meta.status),
      tenant: typeof meta.tenant === 'string' ? meta.tenant : null,
      metadata: meta.metadata && typeof meta.metadata === 'object' ? meta.metadata : {},
      createdAt: typeof meta.createdAt === 'number' ? meta.createdAt : null,
      turnNumber: Number(meta.turnNumber) || 0,
      turns: Array.isArray(meta.turns) ? meta.turns : [],
      pendingApprovals: pending
        ? pending.requests
            .filter((/** @type {{ status?: string }} */ r) => r.status === 'pending')
            .map((/** @type {{ id: string, operation: string, args: unknown[] }} */ r) => ({
              id: r.id,
              operation: r.operation,
              args: r.args,
              turnNumber: pending.turnNumber,
            }))
        : [],
      proposals: snap.staged ? proposalsOf(snap.staged, snap.stagedOrigin ?? snap.world) : [],
      budget,
      policy: meta.policy ?? null,
      audit: { entries: audit, verification: verifyEntries(audit, ledger.auditHead) },
      // Sealed engine bytes: only their size is shown.
      state: meta.persistState === true ? { bytes: snap.state?.length ?? 0 } : null,
      integrity,
    };
  } finally {
    snap.world.dispose();
    snap.staged?.dispose();
    snap.stagedOrigin?.dispose();
  }
}

module.exports = { inspectSnapshot, verifyEntries };
