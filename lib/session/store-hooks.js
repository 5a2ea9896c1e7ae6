'use strict';
// A session kept by a SessionManager: before each turn the store is checked and the session
// claims the turn (compare-and-set), after it the session is saved. A store that moved on turns
// the turn into SESSION_CONFLICT.

const { ErrorCode } = require('../errors.js');
const { errorOutcome } = require('./options.js');

/**
 * @typedef {{ check(): Promise<boolean>,
 *   save(encode: (binding: import('./snapshot.js').SnapshotBinding) => Buffer): Promise<void> }} StoreHooks
 * @typedef {(binding: import('./snapshot.js').SnapshotBinding) => Buffer} Encode
 */

/**
 * Hooks a SessionManager attaches to its sessions.
 * @type {WeakMap<object, StoreHooks>}
 */
const storeHooks = new WeakMap();

/**
 * Lets a SessionManager check the store before each turn and save after it. `save` is given the
 * encoder, so the manager binds the snapshot to the version it is about to store it as.
 * @param {object} session
 * @param {StoreHooks} hooks
 */
function attachStore(session, hooks) {
  storeHooks.set(session, hooks);
}

/**
 * Before a turn runs, a managed session claims it: the unchanged state is saved with
 * compare-and-set, so of two processes starting a turn on the same version only one goes on,
 * and the other runs nothing (its operations, with their side effects, never start). Returns
 * the refusal for the loser.
 * @param {StoreHooks | undefined} hooks
 * @param {Encode} encode
 * @returns {Promise<import('./index.js').TurnOutcome | null>}
 */
async function claimTurn(hooks, encode) {
  if (!hooks) return null;
  const stale = errorOutcome(
    ErrorCode.SessionConflict,
    'another process has advanced this session since it was loaded; load it again',
  );
  if (!(await hooks.check())) return stale;
  try {
    await hooks.save(encode);
    return null;
  } catch (e) {
    if (/** @type {{ code?: string }} */ (e)?.code !== ErrorCode.SessionConflict) throw e;
    return stale;
  }
}

/**
 * Saves through the manager's store after a turn; a store that moved on turns the result into
 * SESSION_CONFLICT.
 * @template {{ outcome: import('./index.js').TurnOutcome }} R
 * @param {StoreHooks | undefined} hooks
 * @param {Encode} encode
 * @param {R} result
 * @returns {Promise<R>}
 */
async function saveTurn(hooks, encode, result) {
  if (!hooks) return result;
  try {
    await hooks.save(encode);
    return result;
  } catch (e) {
    if (/** @type {{ code?: string }} */ (e)?.code !== ErrorCode.SessionConflict) throw e;
    return { ...result, outcome: errorOutcome(ErrorCode.SessionConflict, /** @type {Error} */ (e).message) };
  }
}

/**
 * A copy of each turn's journal kept outside the process (a database), written as each
 * operation starts and completes, so a turn re-run after its host died answers the operations
 * that completed from it, and meets the one that was running as interrupted.
 * @typedef {{ operation: string, args: string, value?: string, error?: string }} JournalRecord
 * @typedef {{
 *   begin(turn: { turnNumber: number, now: number }): Promise<{ now: number, entries: JournalRecord[], interrupted: number[] }>,
 *   started(call: { turnNumber: number, seq: number, operation: string, args: string, idempotencyKey: string }): Promise<void>,
 *   completed(call: { turnNumber: number, seq: number } & JournalRecord): Promise<void>,
 * }} DurableJournal
 * @type {WeakMap<object, DurableJournal>}
 */
const durableJournals = new WeakMap();

/**
 * Keeps `session`'s turn journals in `journal` as well (a fleet worker does).
 * @param {object} session
 * @param {DurableJournal} journal
 */
function attachJournal(session, journal) {
  durableJournals.set(session, journal);
}

module.exports = { storeHooks, attachStore, claimTurn, saveTurn, durableJournals, attachJournal };
