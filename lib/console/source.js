'use strict';
// What the console reads and changes, over a SessionManager and its store: any SessionStore
// (the folder store lists through `list` and `head`; a PostgresStore filters and pages in SQL
// through `listSessions`). Sessions are shown from their stored bytes through
// `inspectSnapshot`, so one whose audit no longer verifies still opens; changes go through the
// manager (or a Fleet for decisions, which queues the resuming turn with them).

const { SessionManager } = require('../session/manager.js');
const { inspectSnapshot } = require('../session/inspect.js');

/** Sessions per page of the list and of the inbox. */
const PAGE_SIZE = 50;
/** Session headers one list request reads at most while filtering a store that cannot filter. */
const MAX_SCAN = 2000;
const ID = /^[\w.-]{1,128}$/;

/**
 * @typedef {{ id: string, version: number, status: string, tenant: string | null, turnNumber: number,
 *   updatedAt: number | null, usage: { tokens: number | null, cost: number | null } }} SessionSummary
 * @typedef {{ status?: string, tenant?: string, after?: string, limit?: number }} ListFilter
 */

/** @param {unknown} id */
function validId(id) {
  return typeof id === 'string' && ID.test(id) && !id.startsWith('.');
}

/** @param {unknown} value @returns {number | null} */
function numberOrNull(value) {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/** @param {unknown} value */
function timeOf(value) {
  if (value instanceof Date) return value.getTime();
  return numberOrNull(value);
}

class ConsoleSource {
  /** @type {SessionManager} */ manager;
  /** @type {any} */ store;
  /** @type {Uint8Array | string | undefined} */ #snapshotKey;
  /** @type {{ approve: Function, reject: Function } | undefined} */ #fleet;

  /**
   * @param {{ manager?: SessionManager, store?: any, snapshotKey?: Uint8Array | string,
   *   operations?: any, fleet?: { approve: Function, reject: Function } }} options
   */
  constructor(options) {
    this.manager =
      options.manager ??
      new SessionManager({ store: options.store, snapshotKey: options.snapshotKey, operations: options.operations });
    this.store = this.manager.store;
    this.#snapshotKey = options.snapshotKey;
    this.#fleet = options.fleet;
  }

  /** Whether snapshots are checked against a key. */
  get signed() {
    return this.#snapshotKey !== undefined;
  }

  /**
   * One page of sessions, ordered by id; `next` is the `after` of the following page.
   * @param {ListFilter} filter
   * @returns {Promise<{ sessions: SessionSummary[], next: string | null }>}
   */
  async list(filter) {
    const limit = Math.min(Math.max(Math.trunc(filter.limit ?? PAGE_SIZE) || PAGE_SIZE, 1), PAGE_SIZE);
    const after = filter.after && validId(filter.after) ? filter.after : undefined;
    if (typeof this.store.listSessions === 'function') {
      const rows = await this.store.listSessions({
        ...(filter.status ? { status: filter.status } : {}),
        ...(filter.tenant ? { tenant: filter.tenant } : {}),
        ...(after ? { after } : {}),
        limit: limit + 1,
      });
      const page = rows.slice(0, limit).map((/** @type {any} */ r) => ({
        id: r.id,
        version: r.version,
        status: r.status ?? 'unknown',
        tenant: r.tenant ?? null,
        turnNumber: r.turnNumber ?? 0,
        updatedAt: timeOf(r.updatedAt),
        usage: { tokens: null, cost: null },
      }));
      return { sessions: page, next: rows.length > limit ? (page.at(-1)?.id ?? null) : null };
    }
    /** @type {string[]} */
    const ids = (await this.store.list()).filter(validId).sort();
    const start = after ? ids.findIndex((id) => id > after) : 0;
    /** @type {SessionSummary[]} */
    const sessions = [];
    let scanned = 0;
    let i = start < 0 ? ids.length : start;
    for (; i < ids.length && sessions.length < limit && scanned < MAX_SCAN; i++, scanned++) {
      const summary = await this.#summary(ids[i]);
      if (!summary) continue;
      if (filter.status && summary.status !== filter.status) continue;
      if (filter.tenant && summary.tenant !== filter.tenant) continue;
      sessions.push(summary);
    }
    // Stopped by the page or by the scan bound: the next page starts after the last id read.
    return { sessions, next: i < ids.length ? ids[i - 1] : null };
  }

  /**
   * @param {string} id
   * @returns {Promise<SessionSummary | null>}
   */
  async #summary(id) {
    if (typeof this.store.head === 'function') {
      let head;
      try {
        head = await this.store.head(id);
      } catch {
        // A session file the store refuses (rolled back, unreadable) is still listed, to be opened.
        return {
          id,
          version: 0,
          status: 'unreadable',
          tenant: null,
          turnNumber: 0,
          updatedAt: null,
          usage: { tokens: null, cost: null },
        };
      }
      if (!head) return null;
      const meta = head.meta ?? {};
      return {
        id,
        version: head.version,
        status: typeof meta.status === 'string' ? meta.status : 'unknown',
        tenant: typeof meta.tenant === 'string' ? meta.tenant : null,
        turnNumber: numberOrNull(meta.turnNumber) ?? 0,
        updatedAt: timeOf(meta.updatedAt),
        usage: { tokens: numberOrNull(meta.usage?.tokens), cost: numberOrNull(meta.usage?.cost) },
      };
    }
    const view = await this.inspect(id).catch(() => null);
    if (!view) return null;
    return {
      id,
      version: view.version,
      status: view.status,
      tenant: view.tenant,
      turnNumber: view.turnNumber,
      updatedAt: null,
      usage: { tokens: view.budget.tokens?.used ?? null, cost: view.budget.cost?.used ?? null },
    };
  }

  /**
   * The stored snapshot of a session, or null.
   * @param {string} id
   * @returns {Promise<{ bytes: Uint8Array, version: number } | null>}
   */
  async snapshot(id) {
    if (!validId(id)) return null;
    return this.store.get(id);
  }

  /**
   * What the session view shows, read from the stored bytes (null: no such session).
   * @param {string} id
   */
  async inspect(id) {
    const stored = await this.snapshot(id);
    if (!stored) return null;
    const view = inspectSnapshot(stored.bytes, {
      snapshotKey: this.#snapshotKey,
      expected: { id, version: stored.version, purpose: 'store' },
    });
    return { ...view, version: stored.version, bytes: stored.bytes.byteLength };
  }

  /**
   * Carries out a reviewer's action; resolves to what it returned (the commit's history id, the
   * fleet's resuming turn id).
   * @param {'approve' | 'reject' | 'commit' | 'rollback'} action
   * @param {string} id
   * @param {{ request?: string, reason?: string }} form
   */
  async act(action, id, form) {
    switch (action) {
      case 'approve':
        return this.#fleet
          ? this.#fleet.approve(id, String(form.request))
          : this.manager.approve(id, String(form.request));
      case 'reject':
        return this.#fleet
          ? this.#fleet.reject(id, String(form.request), form.reason || undefined)
          : this.manager.reject(id, String(form.request), form.reason || undefined);
      case 'commit':
        return this.manager.commit(id);
      case 'rollback':
        return this.manager.rollback(id);
    }
  }
}

module.exports = { ConsoleSource, validId, PAGE_SIZE };
