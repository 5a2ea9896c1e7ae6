'use strict';
// SessionManager: sessions kept in a store (a folder by default), saved after every turn and
// every change of state with compare-and-set versions, so a crash loses at most the turn in
// flight and two processes cannot both advance one session. Every stored snapshot is bound to
// its session id, the store version it is saved as and the purpose `store`; a load refuses a
// snapshot bound to anything else (SNAPSHOT_TAMPERED), so with `snapshotKey` a store cannot serve
// an older snapshot, another session's, or an export.

const { Session, attachStore, snapshotBound, restoreBound } = require('./session.js');
const { FolderStore } = require('./store.js');
const { ErrorCode } = require('../errors.js');
const { sessionError } = require('./errors.js');

/**
 * @typedef {{ get(id: string): Promise<{ bytes: Uint8Array, version: number } | null>,
 *   put(id: string, bytes: Uint8Array, options: { expectedVersion: number | null, meta?: Record<string, unknown>,
 *     auditSince?: (seq: number) => import('./index.js').AuditEntry[],
 *     approvals?: { id: string, turnNumber: number, operation: string, args: unknown[], status: string }[] }): Promise<number>,
 *   delete(id: string): Promise<void>, list(): Promise<string[]>, version?(id: string): Promise<number | null>,
 *   head?(id: string): Promise<{ version: number, meta: Record<string, unknown> } | null> }} SessionStore
 */

class SessionManager {
  /** @type {SessionStore} */ #store;
  /** @type {import('./index.js').SessionOptions['operations']} */ #operations;
  /**
   * Sessions this manager holds, with the store version of each and its saves in order (one at
   * a time: a save compares against the version the one before it stored).
   * @type {Map<string, { session: Session, version: number, saving: number, saved: Promise<unknown> }>}
   */
  #open = new Map();
  /**
   * The newest version of each session this manager has loaded or stored: a store that later
   * answers an older one went back (restored from a backup, or rolled back by someone who can
   * write all of it), and is refused.
   * @type {Map<string, number>}
   */
  #newest = new Map();
  /** @type {Uint8Array | string | undefined} */ #snapshotKey;

  /**
   * @param {{ dir?: string, store?: SessionStore, operations?: import('./index.js').SessionOptions['operations'],
   *   snapshotKey?: Uint8Array | string }} options
   */
  constructor(options) {
    if (options === null || typeof options !== 'object')
      throw sessionError(ErrorCode.InvalidInput, 'new SessionManager({ dir | store, operations })', TypeError);
    if (options.store) this.#store = options.store;
    else if (typeof options.dir === 'string') this.#store = new FolderStore(options.dir);
    else throw sessionError(ErrorCode.InvalidInput, 'new SessionManager: give dir (a folder) or store', TypeError);
    this.#operations = options.operations;
    this.#snapshotKey = options.snapshotKey;
  }

  /** The store sessions are kept in. */
  get store() {
    return this.#store;
  }

  /**
   * Creates a session and stores it; fails with SESSION_CONFLICT if the id is taken.
   * @param {import('./index.js').SessionOptions} [options]
   */
  async create(options = {}) {
    const session = new Session({
      ...options,
      operations: options.operations ?? this.#operations,
      snapshotKey: options.snapshotKey ?? this.#snapshotKey,
    });
    const version = await this.#put(session, (binding) => snapshotBound(session, binding), null);
    return this.#track(session, version);
  }

  /**
   * The session, loaded from the store when this manager has no current copy (null when the
   * store does not have it).
   * @param {string} id
   */
  async get(id) {
    const open = this.#open.get(id);
    const version = await this.#versionOf(id);
    if (version === null) {
      this.#open.delete(id);
      return null;
    }
    this.#notOlder(id, version);
    // While this process saves the session, the store is ahead of what it has acknowledged:
    // the copy here is the newest, not a stale one.
    if (open && (open.version === version || open.saving > 0)) return open.session;
    const stored = await this.#store.get(id);
    if (!stored) return null;
    this.#notOlder(id, stored.version);
    const session = restoreBound(
      stored.bytes,
      { operations: this.#operations, snapshotKey: this.#snapshotKey },
      { id, version: stored.version, purpose: 'store' },
    );
    return this.#track(session, stored.version);
  }

  /** Every stored session id. */
  async list() {
    return this.#store.list();
  }

  /**
   * Every stored session with its status, turn number and last save time, read from the
   * store's metadata (a store without `head` is asked for each snapshot instead).
   * @returns {Promise<{ id: string, version: number, status: string, turnNumber: number, updatedAt: number }[]>}
   */
  async summaries() {
    const out = [];
    for (const id of await this.#store.list()) {
      const head = this.#store.head ? await this.#store.head(id) : null;
      if (head) {
        const meta = /** @type {{ status?: string, turnNumber?: number, updatedAt?: number }} */ (head.meta);
        out.push({
          id,
          version: head.version,
          status: meta.status ?? 'unknown',
          turnNumber: meta.turnNumber ?? 0,
          updatedAt: meta.updatedAt ?? 0,
        });
        continue;
      }
      const stored = await this.#store.get(id);
      if (!stored) continue;
      const session = restoreBound(
        stored.bytes,
        { snapshotKey: this.#snapshotKey },
        { id, version: stored.version, purpose: 'store' },
      );
      out.push({ id, version: stored.version, status: session.status, turnNumber: session.turnNumber, updatedAt: 0 });
      session.workspace.dispose();
    }
    return out;
  }

  /** @param {string} id */
  async pause(id) {
    return this.#change(id, (s) => s.pause());
  }

  /**
   * Resumes a paused session; a turn waiting for approval continues (the turn result).
   * @param {string} id
   */
  async resume(id) {
    const session = await this.#must(id);
    const turn = await session.resume();
    // A turn resumed from approval saves itself; a session paused by pause() is saved here.
    if (turn === null) await this.#save(session);
    return turn;
  }

  /** @param {string} id */
  async abort(id) {
    return this.#change(id, (s) => s.abort());
  }

  /** @param {string} id */
  async commit(id) {
    return this.#change(id, (s) => s.commit());
  }

  /** @param {string} id */
  async rollback(id) {
    return this.#change(id, (s) => s.rollback());
  }

  /** @param {string} id */
  async complete(id) {
    return this.#change(id, (s) => s.complete());
  }

  /**
   * Approves a request of a paused turn (saved at once).
   * @param {string} id @param {string} requestId @param {{ value?: unknown }} [decision]
   */
  async approve(id, requestId, decision) {
    return this.#change(id, (s) => s.approve(requestId, decision));
  }

  /** @param {string} id @param {string} requestId @param {string} [reason] */
  async reject(id, requestId, reason) {
    return this.#change(id, (s) => s.reject(requestId, reason));
  }

  /** Removes a session from the store. @param {string} id */
  async delete(id) {
    this.#open.delete(id);
    this.#newest.delete(id);
    await this.#store.delete(id);
  }

  /**
   * Refuses a store version older than one this manager has seen for the session.
   * @param {string} id
   * @param {number} version
   */
  #notOlder(id, version) {
    const newest = this.#newest.get(id) ?? 0;
    if (version < newest) {
      throw sessionError(
        ErrorCode.SnapshotTampered,
        `the store holds version ${version} of session ${id}, older than version ${newest} this process saw: it was rolled back`,
      );
    }
    this.#newest.set(id, version);
  }

  /**
   * Stores the session's snapshot as the version after `expectedVersion`, bound to it.
   * @param {Session} session
   * @param {(binding: import('./snapshot.js').SnapshotBinding) => Uint8Array} encode
   * @param {number | null} expectedVersion
   */
  async #put(session, encode, expectedVersion) {
    const bound = (expectedVersion ?? 0) + 1;
    const bytes = encode({ id: session.id, version: bound, purpose: 'store' });
    const version = await this.#store.put(session.id, bytes, {
      expectedVersion,
      meta: metaOf(session),
      ...recordsOf(session),
    });
    if (version !== bound) {
      throw sessionError(
        ErrorCode.InvalidInput,
        `the store saved session ${session.id} as version ${version}, not ${bound}: a store's versions must count its saves (1, 2, 3, …)`,
      );
    }
    this.#notOlder(session.id, version);
    return version;
  }

  /** @param {string} id */
  async #versionOf(id) {
    if (this.#store.version) return this.#store.version(id);
    return (await this.#store.get(id))?.version ?? null;
  }

  /** @param {string} id */
  async #must(id) {
    const session = await this.get(id);
    if (!session) throw sessionError(ErrorCode.NotFound, `no session ${id} in the store`);
    return session;
  }

  /**
   * @template T
   * @param {string} id
   * @param {(s: Session) => T} change
   */
  async #change(id, change) {
    const session = await this.#must(id);
    const out = change(session);
    await this.#save(session);
    return out;
  }

  /**
   * @param {Session} session
   * @param {number} version
   */
  #track(session, version) {
    this.#open.set(session.id, { session, version, saving: 0, saved: Promise.resolve() });
    attachStore(session, {
      check: async () =>
        (await this.#versionOf(session.id)) === this.#open.get(session.id)?.version &&
        this.#open.get(session.id)?.session === session,
      save: (encode) => this.#save(session, encode),
    });
    return session;
  }

  /**
   * @param {Session} session
   * @param {(binding: import('./snapshot.js').SnapshotBinding) => Uint8Array} [encode] the session's
   *   own encoder, when it saves itself (mid-turn)
   */
  async #save(session, encode) {
    const open = this.#open.get(session.id);
    if (!open || open.session !== session)
      throw sessionError(
        ErrorCode.SessionConflict,
        `this copy of session ${session.id} is no longer current; load it again`,
      );
    open.saving += 1;
    // A turn can end while an approved call it did not wait for is being marked started: the
    // two saves of the session queue up instead of racing for the same version.
    const save = open.saved.then(async () => {
      if (this.#open.get(session.id) !== open)
        throw sessionError(
          ErrorCode.SessionConflict,
          `this copy of session ${session.id} is no longer current; load it again`,
        );
      open.version = await this.#put(session, encode ?? ((binding) => snapshotBound(session, binding)), open.version);
    });
    open.saved = save.catch(() => undefined);
    try {
      await save;
    } catch (e) {
      if (
        /** @type {{ code?: string }} */ (e)?.code === ErrorCode.SessionConflict &&
        this.#open.get(session.id) === open
      )
        this.#open.delete(session.id);
      throw e;
    } finally {
      open.saving -= 1;
    }
  }
}

/** @param {Session} session */
function metaOf(session) {
  const { tenant, metadata } = /** @type {{ tenant?: string, metadata?: unknown }} */ (session);
  return {
    status: session.status,
    turnNumber: session.turnNumber,
    updatedAt: Date.now(),
    usage: { tokens: session.budgetUsed().tokens, cost: session.budgetUsed().cost },
    ...(tenant !== undefined ? { tenant } : {}),
    ...(metadata !== undefined ? { metadata } : {}),
  };
}

/**
 * What a database store keeps as rows beside the snapshot (a folder store ignores both): the
 * audit entries from the first sequence number it lacks, and the requests waiting for approval.
 * @param {Session} session
 */
function recordsOf(session) {
  return {
    auditSince: (/** @type {number} */ seq) => session.audit.entries().filter((e) => e.seq >= seq),
    approvals: session.pendingApprovals.map(({ id, operation, args }) => ({
      id,
      turnNumber: session.turnNumber,
      operation,
      args,
      status: 'pending',
    })),
  };
}

module.exports = { SessionManager, FolderStore, metaOf, recordsOf };
