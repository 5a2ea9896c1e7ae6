'use strict';
// A session's audit log as the host reads it: entries (all, of a turn, of an operation), the
// seed's stats, JSON-lines export and verification of the hash chain, over the native ledger.

const { SessionLedger } = require('../native/load.js');

/**
 * An entry as the binding returns it, with absent fields left out.
 * @param {import('../native/binding.js').LedgerAuditEntry} e
 */
function entryOf(e) {
  return {
    seq: e.seq,
    timestamp: e.timestamp,
    turnNumber: e.turnNumber,
    operation: e.operation,
    args: e.args,
    ...(e.result !== undefined && e.result !== null ? { result: e.result } : {}),
    ...(e.error !== undefined && e.error !== null ? { error: e.error } : {}),
    durationMs: e.durationMs,
    ...(e.tokensUsed !== undefined && e.tokensUsed !== null ? { tokensUsed: e.tokensUsed } : {}),
    prevHash: e.prevHash,
    hash: e.hash,
  };
}

/**
 * The audit log of `ledger`.
 * @param {import('../native/binding.js').SessionLedger} ledger
 */
function auditView(ledger) {
  return {
    /** Every entry, oldest first. */
    entries: () => ledger.auditEntries().map(entryOf),
    /** @param {number} turnNumber */
    forTurn: (/** @type {number} */ turnNumber) => ledger.auditEntries(turnNumber).map(entryOf),
    /** @param {string} operation */
    forOperation: (/** @type {string} */ operation) => ledger.auditEntries(undefined, operation).map(entryOf),
    stats: () => {
      const s = ledger.auditStats();
      return {
        totalOperations: s.totalOperations,
        operationCounts: { ...s.operationCounts },
        totalTokens: s.totalTokens,
      };
    },
    export: () => ledger.auditExport(),
    /** @param {string} [exported] */
    /** @returns {{ ok: true, entries: number } | { ok: false, error: string }} */
    verify: (/** @type {string | undefined} */ exported) => {
      const v = exported === undefined ? ledger.auditVerify() : SessionLedger.verifyAuditExport(String(exported));
      return v.ok ? { ok: true, entries: v.entries ?? 0 } : { ok: false, error: v.error ?? 'invalid' };
    },
  };
}

module.exports = { auditView };
