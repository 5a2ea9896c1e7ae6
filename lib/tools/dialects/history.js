'use strict';
// How the dialects read the workspace history. Several changes made by one dialect call are one
// history entry through `ws.batch` (and `ws.rename` for moves); what a file held before its last
// change is read from the history itself (`ws.fileBefore`), without undoing anything.

/** @typedef {import('../../index.js').ZipWorkspace} ZipWorkspace */

/** Entries read when looking for a file's last edit; more than the workspace keeps. */
const HISTORY_SCAN = 100_000;

/**
 * Finds the newest history entry that changed `path`, skipping `ignored` entries (asked newest
 * first), and what the file held just before it (null: no file). Tree and history are left
 * untouched.
 * @param {ZipWorkspace} ws
 * @param {string} path any form the workspace takes
 * @param {(id: number) => boolean} ignored
 * @returns {{ entryId: number, before: Buffer | null } | { entryId: null, reason: 'none' | 'compacted' }}
 */
function contentBeforeLastChange(ws, path, ignored) {
  const entry = ws.history(HISTORY_SCAN, { path }).find((e) => !ignored(e.id));
  if (entry === undefined) return { entryId: null, reason: 'none' };
  if (entry.compacted) return { entryId: null, reason: 'compacted' };
  return { entryId: entry.id, before: ws.fileBefore(entry.id, path) };
}

module.exports = { contentBeforeLastChange };
