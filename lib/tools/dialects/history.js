'use strict';
// How the dialects keep the workspace history at one entry per mutating call.
//
// ZipWorkspace records one history entry per call of writeFile/delete/mkdir. A dialect call that
// needs several of them (a rename, a patch touching three files) runs them in an `Edit`, which
// then folds the entries into one: it undoes them and restores the tree to the state right after
// the last one, which the workspace records as a single new entry (`restore #N`) while the undone
// entries drop out of the history. If a step throws, the entries made so far are undone instead,
// so a failed call leaves the tree and the history as they were (the undone steps wait on the
// redo stack until the next change; the dialects check what they can before the first step, so
// this is the rare case of a write the workspace itself refuses).
//
// Everything here is synchronous on purpose: nothing else can change the workspace between the
// steps of an edit, so the newest entries are always the edit's own.

/** @typedef {import('../../index.js').ZipWorkspace} ZipWorkspace */

/** Entries read when looking for a file's last edit; more than the workspace keeps uncompacted. */
const HISTORY_SCAN = 100_000;

class Edit {
  /** @param {ZipWorkspace} ws */
  constructor(ws) {
    this.ws = ws;
    /** @type {number[]} entries recorded so far, oldest first */
    this.entries = [];
  }

  /** @param {number | null} id */
  track(id) {
    if (id !== null && id !== undefined) this.entries.push(id);
  }

  /**
   * @param {string} path
   * @param {string | Uint8Array} data
   */
  write(path, data) {
    this.track(this.ws.writeFile(path, data));
  }

  /**
   * @param {string} path
   * @param {{ recursive?: boolean }} [options]
   */
  delete(path, options) {
    this.track(this.ws.delete(path, options));
  }

  /**
   * @param {string} path
   * @param {{ recursive?: boolean }} [options]
   */
  mkdir(path, options) {
    this.track(this.ws.mkdir(path, options));
  }

  /**
   * Moves a file, or a folder with everything in it, to `to` (which must not exist).
   * @param {string} from
   * @param {string} to
   */
  move(from, to) {
    const source = this.ws.stat(from);
    if (source.kind === 'file') {
      this.write(to, this.ws.readFile(from));
    } else {
      this.mkdir(to, { recursive: true });
      for (const entry of this.ws.list(from, { recursive: true })) {
        const below = `${to}/${entry.path.slice(source.path.length + 1)}`;
        if (entry.kind === 'dir') this.mkdir(below, { recursive: true });
        else this.write(below, this.ws.readFile(entry.path));
      }
    }
    this.delete(from, { recursive: true });
  }

  /**
   * Folds the entries into one; returns its id, or null when nothing changed.
   * @returns {number | null}
   */
  commit() {
    const { entries } = this;
    if (entries.length === 0) return null;
    const last = entries[entries.length - 1];
    if (entries.length === 1) return last;
    this.ws.undo(entries.length);
    return this.ws.restore(last);
  }

  /** Undoes what the edit did so far. */
  rollback() {
    if (this.entries.length > 0) this.ws.undo(this.entries.length);
    this.entries = [];
  }
}

/**
 * Runs `steps` as one history entry of `ws` (see the top of this file). Whatever `steps` throws
 * is rethrown after the workspace has been put back as it was.
 * @template T
 * @param {ZipWorkspace} ws
 * @param {(edit: Edit) => T} steps
 * @returns {{ value: T, historyId: number | null }}
 */
function asOneEntry(ws, steps) {
  const edit = new Edit(ws);
  let value;
  try {
    value = steps(edit);
  } catch (err) {
    edit.rollback();
    throw err;
  }
  return { value, historyId: edit.commit() };
}

/**
 * Workspace-relative form of a path as history entries list it (`src/a.js`).
 * @param {{ displayPath(path: string): string }} Workspace the class, for its path display
 * @param {string} path
 */
function entryPath(Workspace, path) {
  return Workspace.displayPath(path).replace(/^~\/?/, '');
}

/**
 * Finds the newest history entry that changed `path`, skipping `ignored` entries, and reads what
 * the file held just before it: the newer entries and that one are undone, the file is read,
 * and they are redone, which leaves tree and history as they were.
 * @param {ZipWorkspace} ws
 * @param {string} relPath the path as history entries list it
 * @param {(id: number) => boolean} ignored
 * @returns {{ entryId: number, before: Buffer | null } | { entryId: null, reason: 'none' | 'compacted' }}
 */
function contentBeforeLastChange(ws, relPath, ignored) {
  const history = ws.history(HISTORY_SCAN);
  const index = history.findIndex((e) => !ignored(e.id) && e.paths.includes(relPath));
  if (index === -1) return { entryId: null, reason: 'none' };
  if (history.slice(0, index + 1).some((e) => e.compacted)) return { entryId: null, reason: 'compacted' };
  const steps = index + 1;
  ws.undo(steps);
  let before = null;
  try {
    before = ws.exists(relPath) && ws.stat(relPath).kind === 'file' ? ws.readFile(relPath) : null;
  } finally {
    ws.redo(steps);
  }
  return { entryId: history[index].id, before };
}

module.exports = { asOneEntry, Edit, contentBeforeLastChange, entryPath };
