'use strict';
// A session's persistent realm state (`persistState`): the top-level bindings of its turns, as
// the engine writes them, sealed (HMAC-SHA256) with the session's `snapshotKey`, or, for a
// session without one, with a random key of this process; such a state cannot be restored in
// another process. The session keeps the sealed bytes and hands them to each turn's run.

const { randomBytes } = require('node:crypto');
const { ErrorCode } = require('../errors.js');
const binding = require('../native/load.js');
const { sessionError } = require('./errors.js');

/** Seals the states of sessions that have no snapshotKey; never leaves the process. */
const processKey = randomBytes(32);

/**
 * What a session's state is sealed with, as its snapshot records it: its snapshotKey, or a key
 * of the process that ran it.
 * @typedef {'snapshotKey' | 'process'} StateSeal
 */

/**
 * The key that seals the state of a session with `snapshotKey` (or without).
 * @param {Uint8Array | string | undefined} snapshotKey
 */
function stateKeyOf(snapshotKey) {
  return snapshotKey ?? processKey;
}

/**
 * @param {Uint8Array | string | undefined} snapshotKey
 * @returns {StateSeal}
 */
function stateSealOf(snapshotKey) {
  return snapshotKey === undefined ? 'process' : 'snapshotKey';
}

/**
 * A restored session's state, verified and sealed under the key the restored session uses:
 * SNAPSHOT_TAMPERED when it does not verify (changed, or sealed in another process),
 * SNAPSHOT_VERSION when another quickrealm build wrote it, INVALID_INPUT when it is sealed with a
 * snapshotKey the restore was not given.
 * @param {Uint8Array} state
 * @param {unknown} seal how the snapshot says the state is sealed
 * @param {Uint8Array | string | undefined} snapshotKey the restored session's key
 */
function restoredState(state, seal, snapshotKey) {
  if (seal !== 'snapshotKey' && seal !== 'process')
    throw sessionError(ErrorCode.InvalidInput, `the snapshot's state seal ${String(seal)} is unknown`);
  if (seal === 'snapshotKey' && snapshotKey === undefined) {
    throw sessionError(
      ErrorCode.InvalidInput,
      "the session's state is sealed with its snapshotKey: restore it with that snapshotKey",
      TypeError,
    );
  }
  const from = seal === 'snapshotKey' ? /** @type {Uint8Array | string} */ (snapshotKey) : processKey;
  try {
    return binding.resealState(state, from, stateKeyOf(snapshotKey));
  } catch (e) {
    const err = /** @type {{ code?: string, message?: string }} */ (e);
    if (err?.code === ErrorCode.SnapshotTampered && seal === 'process') {
      throw sessionError(
        ErrorCode.SnapshotTampered,
        "the session's state does not verify (changed, or sealed in another process): a session without snapshotKey seals its state with a key " +
          'of the process that ran it, so only that process can restore it (give sessions a snapshotKey ' +
          'to carry their state to another process)',
      );
    }
    const message = (err?.message ?? String(e)).replace(/^[A-Z_]+: /, '');
    throw sessionError(err?.code ?? ErrorCode.Internal, `the session's state: ${message}`);
  }
}

module.exports = { stateKeyOf, stateSealOf, restoredState };
