'use strict';
// Moving sessions from one store (a FolderStore, or any other) into a PostgresStore in one call.
// A stored snapshot is bound to its session id and store version, so each session is inserted
// at the version it has in the source, with its bytes unchanged; the session is restored once
// (with the snapshot key, when snapshots are signed) to fill the columns and the audit and
// approval rows.

const { ErrorCode } = require('../errors.js');
const { sessionError } = require('../session/errors.js');
const { restoreBound } = require('../session/session.js');
const { metaOf, recordsOf } = require('../session/manager.js');

/**
 * @typedef {import('../session/manager.js').SessionStore} SessionStore
 * @typedef {{ importVersion(id: string, bytes: Uint8Array, version: number, meta?: Record<string, unknown>,
 *   extra?: { auditSince?: (seq: number) => any[], approvals?: any[] }): Promise<number>,
 *   version(id: string): Promise<number | null> }} ImportTarget
 */

/**
 * Copies sessions from `from` into `to` at their current versions. A session the target
 * already has is not touched (listed in `skipped` with SESSION_CONFLICT), nor is one that left
 * the source meanwhile (NOT_FOUND).
 * @param {{ from: SessionStore, to: ImportTarget, ids?: string[], snapshotKey?: Uint8Array | string,
 *   operations?: import('../session/index.js').SessionOptions['operations'] }} options
 * @returns {Promise<{ imported: { id: string, version: number }[], skipped: { id: string, code: string, message: string }[] }>}
 */
async function importSessions(options) {
  if (options === null || typeof options !== 'object') {
    throw sessionError(ErrorCode.InvalidInput, 'importSessions({ from, to, ids?, snapshotKey? })', TypeError);
  }
  const { from, to, snapshotKey, operations } = options;
  if (!from || typeof from.get !== 'function' || typeof from.list !== 'function') {
    throw sessionError(ErrorCode.InvalidInput, 'importSessions: from must be a session store', TypeError);
  }
  if (!to || typeof to.importVersion !== 'function' || typeof to.version !== 'function') {
    throw sessionError(
      ErrorCode.InvalidInput,
      'importSessions: to must be a store with importVersion (a PostgresStore)',
      TypeError,
    );
  }
  if (options.ids !== undefined && (!Array.isArray(options.ids) || options.ids.some((id) => typeof id !== 'string'))) {
    throw sessionError(ErrorCode.InvalidInput, 'importSessions: ids must be a list of session ids', TypeError);
  }
  const ids = options.ids ?? (await from.list());
  /** @type {{ id: string, version: number }[]} */
  const imported = [];
  /** @type {{ id: string, code: string, message: string }[]} */
  const skipped = [];
  for (const id of ids) {
    if ((await to.version(id)) !== null) {
      skipped.push({ id, code: ErrorCode.SessionConflict, message: `session ${id} is already in the target store` });
      continue;
    }
    const stored = await from.get(id);
    if (!stored) {
      skipped.push({ id, code: ErrorCode.NotFound, message: `session ${id} is not in the source store` });
      continue;
    }
    const session = restoreBound(
      stored.bytes,
      { operations, snapshotKey },
      { id, version: stored.version, purpose: 'store' },
    );
    try {
      const head = from.head ? await from.head(id) : null;
      const meta = { ...metaOf(session), ...(head?.meta.updatedAt ? { updatedAt: head.meta.updatedAt } : {}) };
      try {
        await to.importVersion(id, stored.bytes, stored.version, meta, recordsOf(session));
      } catch (e) {
        // Another process imported or created it since the check above.
        if (/** @type {{ code?: string }} */ (e)?.code !== ErrorCode.SessionConflict) throw e;
        skipped.push({ id, code: ErrorCode.SessionConflict, message: /** @type {Error} */ (e).message });
        continue;
      }
      imported.push({ id, version: stored.version });
    } finally {
      session.workspace.dispose();
    }
  }
  return { imported, skipped };
}

module.exports = { importSessions };
