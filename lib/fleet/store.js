'use strict';
// PostgresStore: sessions kept in PostgreSQL, the store of record of a fleet. The interface is
// FolderStore's (get, put with compare-and-set versions, delete, list, version, head); the
// version is a column, so a put is one transaction whose UPDATE … WHERE version = expected both
// checks and advances it. Status, tenant, turn number and metadata are columns (listing and
// filtering is SQL); the audit entries a save adds are rows written in the same transaction as
// the version bump, and the requests of a paused turn are rows of `approvals`.

const { ErrorCode } = require('../errors.js');
const { sessionError } = require('../session/errors.js');
const { loadPeer } = require('../tools/peers.js');
const { migrate } = require('./migrations.js');

const DEFAULT_SCHEMA = 'quickrealm';
const CONNECT_TIMEOUT_MS = 5000;
/** Node's and PostgreSQL's ways of saying the server cannot be reached (or went away). */
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '08000',
  '08001',
  '08003',
  '08006',
]);

/**
 * The same rule as FolderStore's, so a session id moves between the two stores unchanged.
 * @param {unknown} id
 */
function checkId(id) {
  if (typeof id !== 'string' || !/^[\w.-]{1,128}$/.test(id) || id.startsWith('.')) {
    throw sessionError(ErrorCode.InvalidInput, `session id ${JSON.stringify(id)} is not a valid session id`, TypeError);
  }
  return id;
}

/** @param {unknown} tenant */
function checkTenant(tenant) {
  if (typeof tenant !== 'string' || !/^[\w.:@-]{1,128}$/.test(tenant))
    throw sessionError(
      ErrorCode.InvalidInput,
      `tenant ${JSON.stringify(tenant)} is not a valid tenant name`,
      TypeError,
    );
  return tenant;
}

/**
 * A cap as stored: null (none) or a number ≥ 0.
 * @param {unknown} n
 * @param {string} what
 * @param {boolean} whole
 */
function capOf(n, what, whole) {
  if (n === undefined || n === null) return null;
  if (typeof n !== 'number' || !Number.isFinite(n) || n < 0 || (whole && !Number.isSafeInteger(n)))
    throw sessionError(
      ErrorCode.InvalidInput,
      `setTenantCaps: ${what} must be ${whole ? 'a whole number' : 'a number'} ≥ 0 or null`,
      TypeError,
    );
  return n;
}

/** @param {unknown} schema */
function checkSchema(schema) {
  if (typeof schema !== 'string' || !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw sessionError(
      ErrorCode.InvalidInput,
      `PostgresStore: schema ${JSON.stringify(schema)} must be a lower-case SQL identifier`,
      TypeError,
    );
  }
  return schema;
}

/** @param {unknown} text */
function checkConnectionString(text) {
  let url;
  try {
    url = new URL(String(text));
  } catch {
    url = null;
  }
  if (typeof text !== 'string' || !url || (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:')) {
    throw sessionError(
      ErrorCode.InvalidInput,
      'PostgresStore: connectionString must be a URL like postgres://user@host:5432/database',
      TypeError,
    );
  }
  return text;
}

/**
 * A failure to reach the server, as UNAVAILABLE (the original error as `cause`); anything else
 * unchanged.
 * @param {unknown} e
 * @param {string} doing
 * @param {string} [who] the class that was reaching it
 */
function storeError(e, doing, who = 'PostgresStore') {
  const err = /** @type {Error & { code?: string }} */ (e);
  const unreachable =
    (typeof err?.code === 'string' && UNREACHABLE.has(err.code)) ||
    /timeout exceeded when trying to connect|Connection terminated|connect ECONNREFUSED/.test(String(err?.message));
  if (!unreachable) return e;
  return Object.assign(
    new Error(`${ErrorCode.Unavailable}: ${who} could not reach PostgreSQL while ${doing}: ${err.message}`, {
      cause: e,
    }),
    { code: ErrorCode.Unavailable },
  );
}

/**
 * @typedef {{ id: string, turnNumber: number, operation: string, args?: unknown, status: string }} ApprovalRow
 * @typedef {{ seq: number, turnNumber: number, operation: string, hash: string, prevHash: string }} AuditRow
 * @typedef {{ expectedVersion: number | null, meta?: Record<string, unknown>,
 *   auditSince?: (seq: number) => AuditRow[], approvals?: ApprovalRow[],
 *   client?: import("pg").PoolClient }} PutOptions
 */

class PostgresStore {
  /** @type {import('pg').Pool} */ #pool;
  #ownsPool;
  #schema;
  /** The schema, quoted for SQL. */
  #s;

  /**
   * @param {{ connectionString: string, connectionTimeoutMillis?: number, max?: number } | { pool: import('pg').Pool }} connection
   * @param {{ schema?: string }} [options]
   */
  constructor(connection, options = {}) {
    if (connection === null || typeof connection !== 'object') {
      throw sessionError(
        ErrorCode.InvalidInput,
        'new PostgresStore({ connectionString } | { pool }, { schema? })',
        TypeError,
      );
    }
    this.#schema = checkSchema(options?.schema ?? DEFAULT_SCHEMA);
    this.#s = `"${this.#schema}"`;
    if ('pool' in connection && connection.pool) {
      if (typeof connection.pool.query !== 'function' || typeof connection.pool.connect !== 'function') {
        throw sessionError(ErrorCode.InvalidInput, 'PostgresStore: pool must be a pg.Pool', TypeError);
      }
      this.#pool = connection.pool;
      this.#ownsPool = false;
    } else if ('connectionString' in connection) {
      const connectionString = checkConnectionString(connection.connectionString);
      const { Pool } = loadPeer('pg', 'pg', 'PostgresStore');
      this.#pool = new Pool({
        connectionString,
        connectionTimeoutMillis: connection.connectionTimeoutMillis ?? CONNECT_TIMEOUT_MS,
        max: connection.max ?? 10,
      });
      // An idle client whose server went away must not crash the process; the next query reports it.
      this.#pool.on('error', () => {});
      this.#ownsPool = true;
    } else {
      throw sessionError(ErrorCode.InvalidInput, 'new PostgresStore: give connectionString or pool', TypeError);
    }
  }

  /** The schema holding the tables. */
  get schema() {
    return this.#schema;
  }

  /** The pool queries go through (shared with whoever gave it). */
  get pool() {
    return this.#pool;
  }

  /**
   * Creates or updates the tables; safe to run again and from several processes at once.
   * @returns {Promise<number[]>} the migration versions applied by this call
   */
  async migrate() {
    try {
      return await migrate(this.#pool, this.#schema);
    } catch (e) {
      throw storeError(e, 'migrating');
    }
  }

  /**
   * @param {string} text
   * @param {unknown[]} [values]
   * @param {string} [doing]
   */
  async #query(text, values, doing = 'querying') {
    try {
      return await this.#pool.query(text, values);
    } catch (e) {
      throw storeError(e, doing);
    }
  }

  /**
   * Runs `body` in one transaction on one connection.
   * @template T
   * @param {(client: import('pg').PoolClient) => Promise<T>} body
   * @param {string} doing
   * @returns {Promise<T>}
   */
  async #transaction(body, doing) {
    let client;
    try {
      client = await this.#pool.connect();
    } catch (e) {
      throw storeError(e, doing);
    }
    let broken = false;
    // Out of the pool nobody else listens: a server that goes away mid-transaction must fail
    // the transaction, not end the process with an unheard 'error' event.
    const lost = () => {
      broken = true;
    };
    client.on('error', lost);
    try {
      await client.query('begin');
      const out = await body(client);
      await client.query('commit');
      return out;
    } catch (e) {
      try {
        await client.query('rollback');
      } catch {
        broken = true;
      }
      throw storeError(e, doing);
    } finally {
      client.off('error', lost);
      client.release(broken);
    }
  }

  /**
   * Runs `body` in one transaction on one connection of the store's pool: committed when it
   * resolves, rolled back when it throws (for writes that must land with others, such as a
   * decision and the job that acts on it). Tables are in `store.schema`.
   * @template T
   * @param {(client: import('pg').PoolClient) => Promise<T>} body
   * @returns {Promise<T>}
   */
  async transaction(body) {
    if (typeof body !== 'function') {
      throw sessionError(ErrorCode.InvalidInput, 'transaction(body): body must be a function', TypeError);
    }
    return this.#transaction(body, 'running a transaction');
  }

  /**
   * @param {string} id
   * @returns {Promise<{ bytes: Buffer, version: number } | null>}
   */
  async get(id) {
    checkId(id);
    const { rows } = await this.#query(
      `SELECT version, snapshot FROM ${this.#s}.sessions WHERE id = $1`,
      [id],
      'reading',
    );
    return rows[0] ? { bytes: rows[0].snapshot, version: rows[0].version } : null;
  }

  /** @param {string} id */
  async version(id) {
    checkId(id);
    const { rows } = await this.#query(`SELECT version FROM ${this.#s}.sessions WHERE id = $1`, [id], 'reading');
    return rows[0]?.version ?? null;
  }

  /**
   * The stored version and the metadata of the last save.
   * @param {string} id
   * @returns {Promise<{ version: number, meta: Record<string, unknown> } | null>}
   */
  async head(id) {
    checkId(id);
    const { rows } = await this.#query(
      `SELECT version, status, tenant, turn_number, metadata, updated_at FROM ${this.#s}.sessions WHERE id = $1`,
      [id],
      'reading',
    );
    return rows[0] ? { version: rows[0].version, meta: metaOfRow(rows[0]) } : null;
  }

  /**
   * Stores `bytes` as the next version if the stored version is still `expectedVersion` (null:
   * the session must not exist yet); otherwise SESSION_CONFLICT and nothing is written. The
   * audit entries `auditSince(seq)` returns from the first seq not stored yet, and `approvals`,
   * are written in the same transaction.
   * @param {string} id
   * @param {Uint8Array} bytes
   * @param {PutOptions} options
   * @returns {Promise<number>}
   */
  async put(id, bytes, options) {
    checkId(id);
    const expected = checkPutOptions(id, bytes, options);
    /** @param {import('pg').PoolClient} client */
    const save = async (client) => {
      const version = await this.#advance(client, id, bytes, expected, options.meta ?? {});
      await this.#appendAudit(client, id, options.auditSince);
      if (options.approvals) await this.#writeApprovals(client, id, options.approvals);
      return version;
    };
    if (options.client) {
      try {
        return await save(options.client);
      } catch (e) {
        throw storeError(e, `saving session ${id}`);
      }
    }
    return this.#transaction(save, `saving session ${id}`);
  }

  /**
   * Inserts a session at a given version, only when the store does not have it (SESSION_CONFLICT
   * otherwise): how a session moves here from another store with its snapshot, which is bound to
   * its version, unchanged.
   * @param {string} id
   * @param {Uint8Array} bytes
   * @param {number} version
   * @param {Record<string, unknown>} [meta]
   * @param {{ auditSince?: (seq: number) => AuditRow[], approvals?: ApprovalRow[] }} [extra]
   */
  async importVersion(id, bytes, version, meta = {}, extra = {}) {
    checkId(id);
    checkPutOptions(id, bytes, { expectedVersion: null, meta });
    if (!Number.isSafeInteger(version) || version < 1 || version > 2 ** 31 - 1) {
      throw sessionError(
        ErrorCode.InvalidInput,
        `importVersion: version must be a whole number from 1, not ${version}`,
        RangeError,
      );
    }
    return this.#transaction(async (client) => {
      const { rows } = await client.query(
        `INSERT INTO ${this.#s}.sessions (id, version, snapshot, status, tenant, turn_number, metadata)
         VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO NOTHING RETURNING version`,
        [id, version, Buffer.from(bytes), ...columnsOf(meta)],
      );
      if (rows.length === 0) throw sessionError(ErrorCode.SessionConflict, `session ${id} is already in the store`);
      await this.#appendAudit(client, id, extra.auditSince);
      if (extra.approvals) await this.#writeApprovals(client, id, extra.approvals);
      return version;
    }, `importing session ${id}`);
  }

  /**
   * The compare-and-set itself: one INSERT (creation) or one UPDATE … WHERE version = expected.
   * @param {import('pg').PoolClient} client
   * @param {string} id
   * @param {Uint8Array} bytes
   * @param {number | null} expected
   * @param {Record<string, unknown>} meta
   */
  async #advance(client, id, bytes, expected, meta) {
    const columns = columnsOf(meta);
    const { rows } =
      expected === null
        ? await client.query(
            `INSERT INTO ${this.#s}.sessions (id, version, snapshot, status, tenant, turn_number, metadata)
             VALUES ($1, 1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING RETURNING version`,
            [id, Buffer.from(bytes), ...columns],
          )
        : await client.query(
            `UPDATE ${this.#s}.sessions
             SET version = version + 1, snapshot = $3, status = $4, tenant = COALESCE($5, tenant),
                 turn_number = $6, metadata = COALESCE($7, metadata), updated_at = now(),
                 tokens_used = COALESCE($8, tokens_used), cost_used = COALESCE($9, cost_used)
             WHERE id = $1 AND version = $2 RETURNING version`,
            [id, expected, Buffer.from(bytes), ...columns, ...usageOf(meta)],
          );
    if (rows.length === 1) return /** @type {number} */ (rows[0].version);
    const current = await client.query(`SELECT version FROM ${this.#s}.sessions WHERE id = $1`, [id]);
    const stored = current.rows[0]?.version ?? null;
    throw sessionError(
      ErrorCode.SessionConflict,
      stored === null && expected !== null
        ? `session ${id} was deleted from the store`
        : `session ${id} is at version ${stored} in the store, not ${expected}: another process advanced it`,
    );
  }

  /**
   * Appends the audit entries the store lacks. The first new entry must chain onto the last
   * stored one, so the rows stay one hash chain.
   * @param {import('pg').PoolClient} client
   * @param {string} id
   * @param {((seq: number) => AuditRow[]) | undefined} auditSince
   */
  async #appendAudit(client, id, auditSince) {
    if (typeof auditSince !== 'function') return;
    const { rows } = await client.query(
      `SELECT seq, hash FROM ${this.#s}.audit WHERE session_id = $1 ORDER BY seq DESC LIMIT 1`,
      [id],
    );
    const next = rows[0] ? rows[0].seq + 1 : 0;
    const entries = auditSince(next).filter((e) => e.seq >= next);
    if (entries.length === 0) return;
    if (rows[0] && entries[0].prevHash !== rows[0].hash) {
      throw sessionError(
        ErrorCode.AuditTampered,
        `the audit of session ${id} does not continue the stored chain (entry ${entries[0].seq} follows hash ${entries[0].prevHash}, the store ends with ${rows[0].hash})`,
      );
    }
    // Arrays of text, not one jsonb document: an entry may hold a NUL character, which jsonb refuses.
    await client.query(
      `INSERT INTO ${this.#s}.audit (session_id, seq, turn_number, operation, entry, hash, prev_hash)
       SELECT $1, * FROM unnest($2::integer[], $3::integer[], $4::text[], $5::text[], $6::text[], $7::text[])`,
      [
        id,
        entries.map((e) => e.seq),
        entries.map((e) => e.turnNumber),
        entries.map((e) => e.operation),
        entries.map((e) => JSON.stringify(e)),
        entries.map((e) => e.hash),
        entries.map((e) => e.prevHash),
      ],
    );
  }

  /**
   * Upserts the requests of the paused turn; requests stored as pending that are no longer
   * listed were decided in the session and are closed with the status `decided` (a decision
   * written by someone else, e.g. `approved`, is kept).
   * @param {import('pg').PoolClient} client
   * @param {string} id
   * @param {ApprovalRow[]} approvals
   */
  async #writeApprovals(client, id, approvals) {
    if (!Array.isArray(approvals)) {
      throw sessionError(ErrorCode.InvalidInput, 'put: approvals must be a list of requests', TypeError);
    }
    await client.query(
      `INSERT INTO ${this.#s}.approvals (session_id, id, turn_number, operation, args, status)
       SELECT $1, * FROM unnest($2::text[], $3::integer[], $4::text[], $5::text[], $6::text[])
       ON CONFLICT (session_id, id) DO UPDATE SET
         status = EXCLUDED.status,
         decided_at = CASE WHEN EXCLUDED.status <> 'pending' THEN COALESCE(${this.#s}.approvals.decided_at, now())
                           ELSE ${this.#s}.approvals.decided_at END
       WHERE ${this.#s}.approvals.status = 'pending'`,
      [
        id,
        approvals.map((a) => a.id),
        approvals.map((a) => a.turnNumber),
        approvals.map((a) => a.operation),
        approvals.map((a) => JSON.stringify(a.args ?? null)),
        approvals.map((a) => a.status),
      ],
    );
    await client.query(
      `UPDATE ${this.#s}.approvals SET status = 'decided', decided_at = now()
       WHERE session_id = $1 AND status = 'pending' AND NOT (id = ANY($2::text[]))`,
      [id, approvals.map((a) => a.id)],
    );
  }

  /** Removes a session with its audit, approval and journal rows. @param {string} id */
  async delete(id) {
    checkId(id);
    await this.#query(`DELETE FROM ${this.#s}.sessions WHERE id = $1`, [id], `deleting session ${id}`);
  }

  /** Every stored session id, sorted. @returns {Promise<string[]>} */
  async list() {
    const { rows } = await this.#query(`SELECT id FROM ${this.#s}.sessions ORDER BY id COLLATE "C"`, [], 'listing');
    return rows.map((r) => r.id);
  }

  /**
   * Sets a tenant's caps, enforced by the fleet when a turn is claimed: turns running at once
   * across all workers, and totals of tokens and cost its sessions may have used (a turn past
   * them does not run). `null` (or absent) lifts a cap; all null removes the row.
   * @param {string} tenant
   * @param {{ maxConcurrentTurns?: number | null, maxTokens?: number | null, maxCost?: number | null }} caps
   */
  async setTenantCaps(tenant, caps) {
    checkTenant(tenant);
    if (caps === null || typeof caps !== 'object')
      throw sessionError(
        ErrorCode.InvalidInput,
        'setTenantCaps(tenant, { maxConcurrentTurns?, maxTokens?, maxCost? })',
        TypeError,
      );
    const values = [
      capOf(caps.maxConcurrentTurns, 'maxConcurrentTurns', true),
      capOf(caps.maxTokens, 'maxTokens', true),
      capOf(caps.maxCost, 'maxCost', false),
    ];
    if (values.every((v) => v === null)) {
      await this.#query(`DELETE FROM ${this.#s}.tenant_caps WHERE tenant = $1`, [tenant], 'setting tenant caps');
      return;
    }
    await this.#query(
      `INSERT INTO ${this.#s}.tenant_caps (tenant, max_concurrent_turns, max_tokens, max_cost) VALUES ($1, $2, $3, $4)
       ON CONFLICT (tenant) DO UPDATE SET max_concurrent_turns = EXCLUDED.max_concurrent_turns,
         max_tokens = EXCLUDED.max_tokens, max_cost = EXCLUDED.max_cost`,
      [tenant, ...values],
      'setting tenant caps',
    );
  }

  /**
   * A tenant's caps (null: none) and what its sessions have used.
   * @param {string} tenant
   */
  async tenantUsage(tenant) {
    checkTenant(tenant);
    const { rows } = await this.#query(
      `SELECT c.max_concurrent_turns, c.max_tokens, c.max_cost, u.tokens, u.cost, u.sessions
       FROM (SELECT COALESCE(sum(tokens_used), 0) AS tokens, COALESCE(sum(cost_used), 0) AS cost,
                    count(*) AS sessions
             FROM ${this.#s}.sessions WHERE tenant = $1) AS u
       LEFT JOIN ${this.#s}.tenant_caps c ON c.tenant = $1`,
      [tenant],
      'reading tenant usage',
    );
    const r = rows[0];
    const figure = (/** @type {unknown} */ v) => (v === null || v === undefined ? null : Number(v));
    return {
      caps: {
        maxConcurrentTurns: figure(r.max_concurrent_turns),
        maxTokens: figure(r.max_tokens),
        maxCost: figure(r.max_cost),
      },
      used: { tokens: Number(r.tokens), cost: Number(r.cost), sessions: Number(r.sessions) },
    };
  }

  /**
   * Sessions filtered in SQL, ordered by id; `after` continues a page from the last id seen.
   * @param {{ tenant?: string, status?: string, limit?: number, after?: string }} [filter]
   * @returns {Promise<{ id: string, version: number, status: string | null, tenant: string | null,
   *   turnNumber: number | null, metadata: unknown, createdAt: Date, updatedAt: Date }[]>}
   */
  async listSessions(filter = {}) {
    const { tenant, status, limit = 100, after } = filter ?? {};
    for (const [name, value] of Object.entries({ tenant, status, after })) {
      // PostgreSQL cannot compare text holding NUL; such a filter matches nothing anyway.
      if (value !== undefined && (typeof value !== 'string' || value.includes('\u0000') || value.length > 1024)) {
        throw sessionError(
          ErrorCode.InvalidInput,
          `listSessions: ${name} must be a string of at most 1024 characters without NUL`,
          TypeError,
        );
      }
    }
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > 10_000) {
      throw sessionError(
        ErrorCode.InvalidInput,
        `listSessions: limit must be a whole number from 1 to 10000`,
        RangeError,
      );
    }
    const { rows } = await this.#query(
      `SELECT id, version, status, tenant, turn_number, metadata, created_at, updated_at FROM ${this.#s}.sessions
       WHERE ($1::text IS NULL OR tenant = $1) AND ($2::text IS NULL OR status = $2)
         AND ($3::text IS NULL OR id COLLATE "C" > $3)
       ORDER BY id COLLATE "C" LIMIT $4`,
      [tenant ?? null, status ?? null, after ?? null, limit],
      'listing',
    );
    return rows.map((r) => ({
      id: r.id,
      version: r.version,
      status: r.status,
      tenant: r.tenant,
      turnNumber: r.turn_number,
      metadata: r.metadata,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
    }));
  }

  /**
   * The audit rows of a session, oldest first, as `session.audit.entries()` gives them.
   * @param {string} id
   * @returns {Promise<Record<string, unknown>[]>}
   */
  async auditEntries(id) {
    checkId(id);
    const { rows } = await this.#query(
      `SELECT entry FROM ${this.#s}.audit WHERE session_id = $1 ORDER BY seq`,
      [id],
      'reading the audit',
    );
    return rows.map((r) => JSON.parse(r.entry));
  }

  /**
   * The approval rows of a session, oldest first.
   * @param {string} id
   */
  async approvals(id) {
    checkId(id);
    const { rows } = await this.#query(
      `SELECT id, turn_number, operation, args, status, decided_at FROM ${this.#s}.approvals
       WHERE session_id = $1 ORDER BY created_at, id`,
      [id],
      'reading approvals',
    );
    return rows.map((r) => ({
      id: r.id,
      turnNumber: r.turn_number,
      operation: r.operation,
      args: r.args === null ? null : JSON.parse(r.args),
      status: r.status,
      decidedAt: r.decided_at,
    }));
  }

  /** Ends the pool this store made (a pool it was given stays open). */
  async close() {
    if (this.#ownsPool) await this.#pool.end();
  }
}

/**
 * @param {string} id
 * @param {Uint8Array} bytes
 * @param {PutOptions} options
 */
function checkPutOptions(id, bytes, options) {
  if (!(bytes instanceof Uint8Array)) {
    throw sessionError(ErrorCode.InvalidInput, `put(${id}): bytes must be a Uint8Array`, TypeError);
  }
  if (options === null || typeof options !== 'object') {
    throw sessionError(ErrorCode.InvalidInput, `put(${id}): options { expectedVersion } are required`, TypeError);
  }
  const expected = options.expectedVersion;
  if (expected !== null && (!Number.isSafeInteger(expected) || expected < 1)) {
    throw sessionError(
      ErrorCode.InvalidInput,
      `put(${id}): expectedVersion must be null or a whole number from 1, not ${expected}`,
      TypeError,
    );
  }
  if (options.meta !== undefined && (options.meta === null || typeof options.meta !== 'object')) {
    throw sessionError(ErrorCode.InvalidInput, `put(${id}): meta must be an object`, TypeError);
  }
  if (options.auditSince !== undefined && typeof options.auditSince !== 'function') {
    throw sessionError(ErrorCode.InvalidInput, `put(${id}): auditSince must be a function`, TypeError);
  }
  return expected;
}

/**
 * The tokens and cost a session has used, from its metadata (null: keep what is stored).
 * @param {Record<string, unknown>} meta
 */
function usageOf(meta) {
  const usage = /** @type {{ tokens?: unknown, cost?: unknown } | undefined} */ (meta.usage);
  const figure = (/** @type {unknown} */ n) => (typeof n === 'number' && Number.isFinite(n) && n >= 0 ? n : null);
  return [figure(usage?.tokens), figure(usage?.cost)];
}

/**
 * The column values of a save's metadata: status, tenant, turn number, metadata (JSON).
 * @param {Record<string, unknown>} meta
 */
function columnsOf(meta) {
  const { status, tenant, turnNumber, metadata } = /** @type {Record<string, any>} */ (meta);
  return [
    typeof status === 'string' ? status : null,
    typeof tenant === 'string' ? tenant : null,
    Number.isSafeInteger(turnNumber) ? turnNumber : null,
    metadata === undefined || metadata === null ? null : JSON.stringify(metadata),
  ];
}

/**
 * The metadata FolderStore's head gives, read from the columns.
 * @param {Record<string, any>} row
 */
function metaOfRow(row) {
  return {
    ...(row.status !== null ? { status: row.status } : {}),
    ...(row.turn_number !== null ? { turnNumber: row.turn_number } : {}),
    updatedAt: row.updated_at.getTime(),
    ...(row.tenant !== null ? { tenant: row.tenant } : {}),
    ...(row.metadata !== null ? { metadata: row.metadata } : {}),
  };
}

module.exports = { PostgresStore, storeError, checkId };
