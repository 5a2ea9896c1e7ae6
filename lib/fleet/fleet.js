'use strict';
// Fleet: turns of sessions kept in PostgresStore, spread over worker processes by pg-boss.
// One job per turn, grouped by session; the worker that takes a job holds the session's claim
// (a PostgreSQL advisory lock on its own connection, released by the server if the worker
// dies), so no two turns of a session ever run at once and a queued turn waits for the claim
// rather than failing. Each operation call is journalled in PostgreSQL as it completes, so a
// turn re-run after a crash does not repeat a completed side effect. Decisions on approvals
// commit together with the job that resumes the turn; waiters wake by LISTEN/NOTIFY (ids only)
// and poll as a fallback.

const { randomUUID } = require('node:crypto');
const os = require('node:os');
const { ErrorCode } = require('../errors.js');
const { sessionError } = require('../session/errors.js');
const { SessionManager, metaOf, recordsOf } = require('../session/manager.js');
const { snapshotBound, restoreBound } = require('../session/session.js');
const { attachJournal } = require('../session/store-hooks.js');
const { postgresJournal } = require('./journal.js');
const { storeError, checkId } = require('./store.js');

const DEFAULT_QUEUE = 'quickrealm-turns';
/** What a job that must wait for an earlier turn of its session answers. */
const DEFERRED = Symbol('deferred');
/** How long a deferred turn waits before it is handed out again. */
const DEFER_MS = 100;
/** Turn rows in these states have their result. */
const SETTLED = new Set(['done', 'failed', 'paused']);
/** How long one wait for a claim blocks before the worker looks at its job again. */
const CLAIM_WAIT = '1s';

/**
 * @typedef {{ store: import('./store.js').PostgresStore,
 *   operations?: import('../session/index.js').SessionOptions['operations'],
 *   snapshotKey?: Uint8Array | string, queue?: string, heartbeatSeconds?: number,
 *   expireInSeconds?: number, retryLimit?: number, retryDelaySeconds?: number,
 *   superviseIntervalSeconds?: number, pollingIntervalSeconds?: number, resultPollMs?: number, workerId?: string,
 *   connection?: Record<string, unknown> }} FleetOptions
 * @typedef {{ id: string, seq: string, session_id: string, tenant: string | null, kind: 'turn' | 'resume',
 *   code: string | null, status: string, result: any, attempt: number, turn_number: number | null }} TurnRow
 */

/** @param {unknown} n @param {number} min @param {string} what */
function wholeAtLeast(n, min, what) {
  if (!Number.isInteger(n) || /** @type {number} */ (n) < min)
    throw sessionError(ErrorCode.InvalidInput, `Fleet: ${what} must be a whole number ≥ ${min}`, TypeError);
  return /** @type {number} */ (n);
}

/**
 * A turn or approval id or a key as the caller gave it: a string PostgreSQL can compare (no
 * NUL), of a sane length; anything else is INVALID_INPUT.
 * @param {unknown} id
 * @param {string} what
 */
function checkHandle(id, what) {
  if (typeof id !== 'string' || id.length === 0 || id.length > 200 || id.includes('\u0000'))
    throw sessionError(
      ErrorCode.InvalidInput,
      `${what} must be a string of 1 to 200 characters without NUL`,
      TypeError,
    );
  return id;
}

/** @param {number} ms */
function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * A pg-boss database adapter over one connection, so a job is sent in the caller's transaction.
 * @param {import('pg').PoolClient} client
 */
function inTransaction(client) {
  return { executeSql: (/** @type {string} */ text, /** @type {unknown[]} */ values) => client.query(text, values) };
}

/**
 * What a turn result keeps in the database: everything but the proposals' bytes (their diffs
 * stay), as JSON.
 * @param {import('../session/index.js').TurnResult} result
 */
function storedResult(result) {
  return {
    turnNumber: result.turnNumber,
    outcome: result.outcome,
    budgetRemaining: result.budgetRemaining,
    proposals: result.proposals.map(({ path, kind, diff }) => ({ path, kind, ...(diff ? { diff } : {}) })),
    result: result.result,
  };
}

/**
 * @param {string} code
 * @param {string} message
 * @param {number | null} turnNumber
 */
function failedTurn(code, message, turnNumber) {
  return { turnNumber, outcome: { tag: 'error', code, message }, proposals: [], budgetRemaining: null };
}

class Fleet {
  #store;
  #operations;
  #snapshotKey;
  #queue;
  #options;
  /** @type {Promise<any> | null} */ #boss = null;
  /** @type {Promise<import('pg').Client> | null} */ #listener = null;
  /** @type {Map<string, Set<() => void>>} */ #waiters = new Map();
  /** Wakes of this process's idle worker slots, oldest first. @type {(() => void)[]} */ #idle = [];
  /** @type {Set<{ stop(): Promise<void> }>} */ #workers = new Set();
  #workerId;
  #s;
  /** Where settled turns are announced (payload: the turn id). */
  #channel;
  /** Where queued turns are announced (no payload), to wake idle workers. */
  #jobsChannel;

  /** @param {FleetOptions} options */
  constructor(options) {
    if (
      options === null ||
      typeof options !== 'object' ||
      !options.store ||
      typeof options.store.transaction !== 'function'
    )
      throw sessionError(ErrorCode.InvalidInput, 'new Fleet({ store: PostgresStore, operations, … })', TypeError);
    this.#store = options.store;
    this.#operations = options.operations;
    this.#snapshotKey = options.snapshotKey;
    this.#queue = options.queue ?? DEFAULT_QUEUE;
    if (typeof this.#queue !== 'string' || !/^[\w.-]{1,100}$/.test(this.#queue))
      throw sessionError(ErrorCode.InvalidInput, 'Fleet: queue must be 1 to 100 letters, digits, _ . or -', TypeError);
    this.#options = {
      heartbeatSeconds: wholeAtLeast(options.heartbeatSeconds ?? 10, 10, 'heartbeatSeconds'),
      expireInSeconds: wholeAtLeast(options.expireInSeconds ?? 900, 1, 'expireInSeconds'),
      retryLimit: wholeAtLeast(options.retryLimit ?? 5, 0, 'retryLimit'),
      retryDelaySeconds: wholeAtLeast(options.retryDelaySeconds ?? 1, 0, 'retryDelaySeconds'),
      superviseIntervalSeconds: wholeAtLeast(options.superviseIntervalSeconds ?? 2, 1, 'superviseIntervalSeconds'),
      pollingIntervalSeconds: Math.max(0.1, Number(options.pollingIntervalSeconds ?? 1)),
      resultPollMs: wholeAtLeast(options.resultPollMs ?? 1000, 10, 'resultPollMs'),
    };
    this.#workerId = options.workerId ?? `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    this.#s = `"${this.#store.schema}"`;
    this.#channel = `${this.#store.schema}_turns`;
    this.#jobsChannel = `${this.#store.schema}_jobs`;
    this.connection = options.connection;
  }

  /** The queue turns go through. */
  get queue() {
    return this.#queue;
  }

  /** The pg-boss instance (started on first use, with the queues created). */
  async boss() {
    this.#boss ??= this.#startBoss();
    return this.#boss;
  }

  async #startBoss() {
    const { PgBoss } = await import('pg-boss');
    const poolOptions = /** @type {Record<string, unknown>} */ (/** @type {any} */ (this.#store.pool).options ?? {});
    const connection = this.connection ?? {
      connectionString: poolOptions.connectionString,
      host: poolOptions.host,
      port: poolOptions.port,
      user: poolOptions.user,
      password: poolOptions.password,
      database: poolOptions.database,
    };
    const boss = new PgBoss({
      ...Object.fromEntries(Object.entries(connection).filter(([, v]) => v !== undefined)),
      schema: `${this.#store.schema}_boss`,
      max: 4,
      connectionTimeoutMillis: 5000,
      superviseIntervalSeconds: this.#options.superviseIntervalSeconds,
      monitorIntervalSeconds: this.#options.superviseIntervalSeconds,
      registerInstance: false,
    });
    // A lost connection is reported and retried by pg-boss; it must not end the process.
    boss.on('error', () => {});
    await boss.start();
    const dead = `${this.#queue}-dead`;
    const queueOptions = {
      retryLimit: this.#options.retryLimit,
      retryDelay: this.#options.retryDelaySeconds,
      heartbeatSeconds: this.#options.heartbeatSeconds,
      expireInSeconds: this.#options.expireInSeconds,
      // Workers are woken by the fleet's own notification, sent in the same transaction.
      notify: false,
    };
    if (!(await boss.getQueue(dead))) await boss.createQueue(dead, {}).catch(ignoreExists);
    if (!(await boss.getQueue(this.#queue)))
      await boss.createQueue(this.#queue, { ...queueOptions, deadLetter: dead }).catch(ignoreExists);
    return boss;
  }

  /**
   * Queues a turn of `sessionId`; a worker runs it. With `idempotencyKey`, submitting the same
   * key again for the session answers the turn already queued instead of queueing another.
   * @param {string} sessionId
   * @param {string} code
   * @param {{ idempotencyKey?: string }} [options]
   * @returns {Promise<{ turnId: string }>}
   */
  async submit(sessionId, code, options = {}) {
    if (typeof code !== 'string')
      throw sessionError(ErrorCode.InvalidInput, 'submit(sessionId, code): code must be a string', TypeError);
    checkId(sessionId);
    const key =
      options.idempotencyKey === undefined ? null : checkHandle(options.idempotencyKey, 'submit: idempotencyKey');
    const head = await this.#store.head(sessionId);
    if (!head) throw sessionError(ErrorCode.NotFound, `no session ${sessionId} in the store`);
    const boss = await this.boss();
    return this.#store.transaction(async (client) => {
      const turnId = randomUUID();
      const inserted = await client.query(
        `INSERT INTO ${this.#s}.turns (id, session_id, tenant, kind, code, status, idempotency_key)
         VALUES ($1, $2, $3, 'turn', $4, 'queued', $5)
         ON CONFLICT (session_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING RETURNING id`,
        [turnId, sessionId, head.meta.tenant ?? null, code, key],
      );
      if (inserted.rows.length === 0) {
        const { rows } = await client.query(
          `SELECT id FROM ${this.#s}.turns WHERE session_id = $1 AND idempotency_key = $2`,
          [sessionId, key],
        );
        return { turnId: rows[0].id };
      }
      await boss.send(this.#queue, { turnId }, { group: { id: sessionId }, db: inTransaction(client) });
      await client.query("SELECT pg_notify($1, '')", [this.#jobsChannel]);
      return { turnId };
    });
  }

  /**
   * The result of a turn once it has one (finished, failed, or paused for approval), woken by
   * NOTIFY, polling every `resultPollMs` as a fallback. TIMEOUT after `timeoutMs`.
   * @param {string} turnId
   * @param {{ timeoutMs?: number }} [options]
   */
  async result(turnId, options = {}) {
    checkHandle(turnId, 'result(turnId)');
    const timeoutMs = options.timeoutMs ?? 60_000;
    const deadline = Date.now() + timeoutMs;
    await this.#listen().catch(() => null);
    for (;;) {
      let wake = () => {};
      const woken = new Promise((resolve) => {
        wake = () => resolve(undefined);
      });
      const waiters = this.#waiters.get(turnId) ?? new Set();
      waiters.add(wake);
      this.#waiters.set(turnId, waiters);
      try {
        const { rows } = await this.#store.pool
          .query(`SELECT status, result FROM ${this.#s}.turns WHERE id = $1`, [turnId])
          .catch((e) => {
            throw storeError(e, `reading turn ${turnId}`, 'Fleet');
          });
        if (rows.length === 0) throw sessionError(ErrorCode.NotFound, `no turn ${turnId}`);
        if (SETTLED.has(rows[0].status)) return { status: rows[0].status, ...JSON.parse(rows[0].result ?? '{}') };
        const left = deadline - Date.now();
        if (left <= 0) throw sessionError(ErrorCode.Timeout, `turn ${turnId} has no result after ${timeoutMs} ms`);
        await Promise.race([woken, sleep(Math.min(this.#options.resultPollMs, left))]);
      } finally {
        waiters.delete(wake);
        if (waiters.size === 0) this.#waiters.delete(turnId);
      }
    }
  }

  /** One connection listening for settled turns, for every `result()` of this fleet object. */
  #listen() {
    this.#listener ??= (async () => {
      const pg = require('pg');
      const client = new pg.Client(/** @type {any} */ (this.#store.pool).options);
      client.on('error', () => {
        this.#listener = null;
      });
      client.on('notification', (message) => {
        if (message.channel === this.#jobsChannel) {
          for (const wake of this.#idle.splice(0)) wake();
          return;
        }
        for (const wake of this.#waiters.get(message.payload ?? '') ?? []) wake();
      });
      await client.connect();
      await client.query(`LISTEN "${this.#channel}"; LISTEN "${this.#jobsChannel}"`);
      return client;
    })();
    this.#listener.catch(() => {
      this.#listener = null;
    });
    return this.#listener;
  }

  /**
   * Approves a request of a paused turn: the decision, and the job that resumes the turn once no
   * request waits, commit in one transaction. Resolves to the resuming turn's id (null while
   * other requests still wait).
   * @param {string} sessionId
   * @param {string} approvalId
   * @param {{ value?: unknown }} [decision]
   */
  async approve(sessionId, approvalId, decision) {
    return this.#decide(sessionId, approvalId, 'approved', (s) => s.approve(approvalId, decision), decision ?? null);
  }

  /**
   * Rejects a request: the guest's call throws ApprovalRejected when the turn resumes.
   * @param {string} sessionId
   * @param {string} approvalId
   * @param {string} [reason]
   */
  async reject(sessionId, approvalId, reason) {
    return this.#decide(sessionId, approvalId, 'rejected', (s) => s.reject(approvalId, reason), {
      reason: reason ?? null,
    });
  }

  /**
   * @param {string} sessionId
   * @param {string} approvalId
   * @param {'approved' | 'rejected'} status
   * @param {(session: import('../session/session.js').Session) => void} apply
   * @param {unknown} decision
   * @returns {Promise<{ turnId: string | null }>}
   */
  async #decide(sessionId, approvalId, status, apply, decision) {
    checkId(sessionId);
    checkHandle(approvalId, 'the approval id');
    const boss = await this.boss();
    return this.#store.transaction(async (client) => {
      const { rows } = await client.query(
        `SELECT version, snapshot, tenant FROM ${this.#s}.sessions WHERE id = $1 FOR UPDATE`,
        [sessionId],
      );
      if (rows.length === 0) throw sessionError(ErrorCode.NotFound, `no session ${sessionId} in the store`);
      const { version, snapshot, tenant } = rows[0];
      const session = restoreBound(
        snapshot,
        { operations: this.#operations, snapshotKey: this.#snapshotKey },
        { id: sessionId, version, purpose: 'store' },
      );
      try {
        apply(session);
        const bytes = snapshotBound(session, { id: sessionId, version: version + 1, purpose: 'store' });
        await this.#store.put(sessionId, bytes, {
          expectedVersion: version,
          meta: metaOf(session),
          ...recordsOf(session),
          client,
        });
        await client.query(
          `UPDATE ${this.#s}.approvals SET status = $3, decision = $4, decided_at = now()
           WHERE session_id = $1 AND id = $2`,
          [sessionId, approvalId, status, JSON.stringify(decision ?? null)],
        );
        if (session.pendingApprovals.length > 0) return { turnId: null };
        const turnId = randomUUID();
        await client.query(
          `INSERT INTO ${this.#s}.turns (id, session_id, tenant, kind, status, turn_number)
           VALUES ($1, $2, $3, 'resume', 'queued', $4)`,
          [turnId, sessionId, tenant, session.turnNumber],
        );
        await boss.send(this.#queue, { turnId }, { group: { id: sessionId }, db: inTransaction(client) });
        await client.query("SELECT pg_notify($1, '')", [this.#jobsChannel]);
        return { turnId };
      } finally {
        session.workspace.dispose();
      }
    });
  }

  /**
   * Makes this process a worker: it takes turns from the queue, `concurrency` at a time.
   * @param {{ concurrency?: number }} [options]
   * @returns {Promise<{ stop(): Promise<void> }>}
   */
  async work(options = {}) {
    const concurrency = wholeAtLeast(options.concurrency ?? 1, 1, 'concurrency');
    const boss = await this.boss();
    await this.#listen().catch(() => null);
    let stopping = false;
    // Each slot takes one turn at a time and goes straight on to the next, so a backlog drains
    // at the speed of its turns. An idle slot waits to be woken: by a notification of a queued
    // turn (all idle slots), by a slot that found work (one more, in case there is more), or
    // by the poll timer (one slot looks, so idle slots do not each poll the database).
    const nextPoll = () => {
      const wake = this.#idle.shift();
      if (wake) wake();
    };
    const timer = setInterval(() => {
      // A listening connection that was lost is opened again; until then polling carries on.
      this.#listen().catch(() => null);
      nextPoll();
    }, this.#options.pollingIntervalSeconds * 1000);
    timer.unref();
    const slot = async () => {
      while (!stopping) {
        /** @type {any[]} */
        let jobs = [];
        try {
          jobs = (await boss.fetch(this.#queue, { batchSize: 1, groupConcurrency: 1 })) ?? [];
        } catch {
          // The database is away: wait for the next poll, then look again.
        }
        const job = jobs[0];
        if (!job) {
          // Asked to stop while looking: nothing more to wake this slot.
          if (stopping) break;
          await new Promise((resolve) => this.#idle.push(() => resolve(undefined)));
          continue;
        }
        nextPoll();
        await this.#attempt(boss, job);
      }
    };
    const slots = Array.from({ length: concurrency }, slot);
    const worker = {
      stop: async () => {
        stopping = true;
        clearInterval(timer);
        for (const wake of this.#idle.splice(0)) wake();
        await Promise.all(slots);
        this.#workers.delete(worker);
      },
    };
    this.#workers.add(worker);
    return worker;
  }

  /**
   * One attempt of a turn's job: heartbeats while it runs, then completes or fails it (a
   * failure is retried, then dead-lettered, by pg-boss), both for this attempt only.
   * @param {any} boss
   * @param {{ id: string, data: { turnId: string }, retryCount: number, expireInSeconds: number,
   *   heartbeatSeconds: number | null, groupId?: string | null }} job
   */
  async #attempt(boss, job) {
    const held = { id: job.id, retryCount: job.retryCount };
    const expiry = new AbortController();
    const expires = setTimeout(() => expiry.abort(), job.expireInSeconds * 1000);
    const beatSeconds = job.heartbeatSeconds ?? this.#options.heartbeatSeconds;
    const beat = setInterval(() => boss.touch(this.#queue, held).catch(() => {}), (beatSeconds * 1000) / 2);
    try {
      const ran = await this.#runJob({ ...job, signal: expiry.signal });
      if (ran === DEFERRED) {
        // An earlier turn of the session has not run yet (two jobs of one session can be
        // fetched at once): this job ends and the turn is queued again behind it, so the
        // earlier turn's job can be handed out.
        await this.#store
          .transaction(async (client) => {
            await boss.send(this.#queue, job.data, {
              group: { id: job.groupId ?? undefined },
              startAfter: new Date(Date.now() + DEFER_MS),
              db: inTransaction(client),
            });
            await boss.complete(this.#queue, held, null, { db: inTransaction(client) });
          })
          .catch(() => {});
        return;
      }
      // If this cannot be recorded (the server went away), the job is retried after its
      // heartbeat lapses and finds the turn settled.
      await boss.complete(this.#queue, held).catch(() => {});
    } catch (e) {
      const error = /** @type {{ code?: string, message?: string }} */ (e);
      await boss.fail(this.#queue, held, { code: error?.code, message: String(error?.message ?? e) }).catch(() => {});
    } finally {
      clearTimeout(expires);
      clearInterval(beat);
    }
  }

  /**
   * Runs one turn job: claims the session (and a tenant slot), runs the turn with its journal
   * in PostgreSQL, and records the result for this attempt only.
   * @param {{ id: string, data: { turnId: string }, retryCount: number, signal: AbortSignal }} job
   * @returns {Promise<typeof DEFERRED | undefined>} DEFERRED when an earlier turn of the session must run first
   */
  async #runJob(job) {
    const turnId = job.data?.turnId;
    const attempt = job.retryCount + 1;
    const claim = await this.#store.pool.connect();
    let broken = false;
    // A checked-out client reports a lost connection as an 'error' event, which would end the
    // process unheard; the claim is then gone with the connection, and the client is dropped.
    const lost = () => {
      broken = true;
    };
    claim.on('error', lost);
    /** @type {(() => Promise<void>)[]} */
    const releases = [];
    try {
      let turn = await this.#turn(turnId);
      if (!turn || SETTLED.has(turn.status)) return;
      const sessionId = turn.session_id;
      await this.#claim(claim, 'session', sessionId, job.signal);
      releases.push(() => this.#unclaim(claim, 'session', sessionId));
      // Turns of a session run in the order they were submitted; a resume goes first (it
      // continues the paused turn, which came before).
      if (turn.kind === 'turn') {
        const { rows: earlier } = await claim.query(
          `SELECT 1 FROM ${this.#s}.turns WHERE session_id = $1 AND id <> $2 AND status IN ('queued', 'running')
             AND (kind = 'resume' OR seq < $3) LIMIT 1`,
          [sessionId, turnId, turn.seq],
        );
        if (earlier.length > 0) return DEFERRED;
      }
      const capped = await this.#tenantGate(claim, turn, job.signal, releases);
      turn = await this.#turn(turnId);
      if (!turn || SETTLED.has(turn.status)) return;
      if (capped) {
        await this.#settle(turn, attempt, 'done', capped);
        return;
      }
      await this.#store.pool.query(
        `UPDATE ${this.#s}.turns SET status = 'running', attempt = $2, claimed_by = $3,
           started_at = COALESCE(started_at, now()) WHERE id = $1`,
        [turnId, attempt, this.#workerId],
      );
      const result = await this.#runTurn(turn, attempt);
      if (result === null) return;
      const paused = result.outcome.tag === 'needs-approval';
      await this.#settle(turn, attempt, paused ? 'paused' : 'done', storedResult(result));
    } catch (e) {
      broken = /** @type {{ code?: string }} */ (e)?.code === ErrorCode.Unavailable;
      const last = job.retryCount >= this.#options.retryLimit;
      const failed = last ? await this.#turn(turnId).catch(() => null) : null;
      if (failed) {
        const error = /** @type {{ code?: string, message?: string }} */ (e);
        await this.#settle(
          failed,
          attempt,
          'failed',
          failedTurn(error?.code ?? ErrorCode.Internal, String(error?.message ?? e), failed.turn_number),
        ).catch(() => undefined);
      }
      throw e;
    } finally {
      for (const release of releases.reverse())
        await release().catch(() => {
          broken = true;
        });
      // The claim's wait bound must not follow the connection back into the pool.
      if (!broken)
        await claim.query('RESET lock_timeout').catch(() => {
          broken = true;
        });
      claim.off('error', lost);
      claim.release(broken);
    }
  }

  /** @param {string} turnId @returns {Promise<TurnRow | null>} */
  async #turn(turnId) {
    const { rows } = await this.#store.pool.query(`SELECT * FROM ${this.#s}.turns WHERE id = $1`, [turnId]);
    return rows[0] ?? null;
  }

  /**
   * Waits for an advisory lock on `claim`'s connection (held until released or the connection
   * ends, e.g. when this process dies). Gives up when the job is aborted (it expired).
   * @param {import('pg').PoolClient} claim
   * @param {'session' | 'tenant'} space
   * @param {string} key
   * @param {AbortSignal} signal
   * @param {number} [slot]
   */
  async #claim(claim, space, key, signal, slot = 0) {
    await claim.query(`SET lock_timeout = '${CLAIM_WAIT}'`);
    for (;;) {
      if (signal?.aborted) throw sessionError(ErrorCode.Cancelled, `the job waiting for ${space} ${key} expired`);
      try {
        await claim.query('SELECT pg_advisory_lock(hashtext($1), $2)', [`quickrealm.${space}.${key}`, slot]);
        return;
      } catch (e) {
        if (/** @type {{ code?: string }} */ (e)?.code !== '55P03') throw e;
      }
    }
  }

  /**
   * @param {import('pg').PoolClient} claim
   * @param {'session' | 'tenant'} space
   * @param {string} key
   * @param {number} [slot]
   */
  async #unclaim(claim, space, key, slot = 0) {
    await claim.query('SELECT pg_advisory_unlock(hashtext($1), $2)', [`quickrealm.${space}.${key}`, slot]);
  }

  /**
   * The tenant's caps, enforced when the turn is claimed: a free slot of its concurrent turns
   * (waited for), and its budget totals (a turn past them does not run). Fails closed: a caps
   * row that cannot be read stops the attempt. Returns the result of a turn refused by a cap.
   * @param {import('pg').PoolClient} claim
   * @param {TurnRow} turn
   * @param {AbortSignal} signal
   * @param {(() => Promise<void>)[]} releases
   */
  async #tenantGate(claim, turn, signal, releases) {
    if (!turn.tenant) return null;
    const { rows } = await claim.query(`SELECT * FROM ${this.#s}.tenant_caps WHERE tenant = $1`, [turn.tenant]);
    const caps = rows[0];
    if (!caps) return null;
    const tenant = turn.tenant;
    if (caps.max_tokens !== null || caps.max_cost !== null) {
      const used = await claim.query(
        `SELECT COALESCE(sum(tokens_used), 0) AS tokens, COALESCE(sum(cost_used), 0) AS cost
         FROM ${this.#s}.sessions WHERE tenant = $1`,
        [tenant],
      );
      const { tokens, cost } = used.rows[0];
      const over =
        caps.max_tokens !== null && Number(tokens) >= Number(caps.max_tokens)
          ? ['tokens', tokens, caps.max_tokens]
          : caps.max_cost !== null && Number(cost) >= Number(caps.max_cost)
            ? ['cost', cost, caps.max_cost]
            : null;
      if (over) {
        return {
          turnNumber: turn.turn_number,
          outcome: {
            tag: 'nonconverged',
            reason: 'budget',
            code: ErrorCode.BudgetExceeded,
            budget: over[0],
            message: `tenant ${tenant} has used ${over[1]} ${over[0]} of its ${over[2]}; the turn did not run`,
          },
          proposals: [],
          budgetRemaining: null,
        };
      }
    }
    const slots = caps.max_concurrent_turns;
    if (slots === null) return null;
    if (slots < 1) throw sessionError(ErrorCode.BudgetExceeded, `tenant ${tenant} may run no turns`);
    for (;;) {
      for (let slot = 0; slot < slots; slot++) {
        const { rows: got } = await claim.query('SELECT pg_try_advisory_lock(hashtext($1), $2) AS ok', [
          `quickrealm.tenant.${tenant}`,
          slot,
        ]);
        if (got[0].ok) {
          releases.push(() => this.#unclaim(claim, 'tenant', tenant, slot));
          return null;
        }
      }
      if (signal?.aborted)
        throw sessionError(ErrorCode.Cancelled, `the job waiting for a turn slot of tenant ${tenant} expired`);
      await sleep(50);
    }
  }

  /**
   * Runs the turn on a fresh copy of its session, the journal in PostgreSQL. Null when there is
   * nothing to run.
   * @param {TurnRow} turn
   * @param {number} attempt
   */
  async #runTurn(turn, attempt) {
    const manager = new SessionManager({
      store: this.#store,
      operations: this.#operations,
      snapshotKey: this.#snapshotKey,
    });
    const session = await manager.get(turn.session_id);
    if (!session) {
      await this.#settle(
        turn,
        attempt,
        'failed',
        failedTurn(ErrorCode.NotFound, `no session ${turn.session_id} in the store`, null),
      );
      return null;
    }
    if (session.persistState && this.#snapshotKey === undefined) {
      // Without a key of the fleet's own, its state would be sealed for this process only.
      const why =
        'a session with persistState needs a Fleet with a snapshotKey, so that every worker can verify its state';
      await this.#settle(turn, attempt, 'failed', failedTurn(ErrorCode.InvalidInput, why, null));
      return null;
    }
    try {
      if (turn.kind === 'turn') {
        if (turn.turn_number === null) {
          // The first attempt: journal rows left by a turn that failed for good under this number go.
          turn.turn_number = session.turnNumber + 1;
          await this.#store.pool.query(`DELETE FROM ${this.#s}.journal WHERE session_id = $1 AND turn_number = $2`, [
            turn.session_id,
            turn.turn_number,
          ]);
          await this.#store.pool.query(`UPDATE ${this.#s}.turns SET turn_number = $2 WHERE id = $1`, [
            turn.id,
            turn.turn_number,
          ]);
        } else if (session.turnNumber >= turn.turn_number) {
          // A worker saved this turn and died before recording its result: it is not run twice.
          const record = session.turns.find((t) => t.turnNumber === turn.turn_number);
          const paused = session.pendingApprovals.length > 0 && session.turnNumber === turn.turn_number;
          await this.#settle(turn, attempt, paused ? 'paused' : 'done', {
            turnNumber: turn.turn_number,
            outcome: paused
              ? { tag: 'needs-approval', requests: session.pendingApprovals }
              : { tag: record?.outcome ?? 'ok', recovered: true },
            proposals: [],
            budgetRemaining: session.budgetRemaining(),
          });
          return null;
        }
      }
      attachJournal(session, postgresJournal(this.#store.pool, this.#s, turn.session_id, attempt));
      const result =
        turn.kind === 'turn' ? await session.executeTurn(/** @type {string} */ (turn.code)) : await session.resume();
      if (result === null) {
        await this.#settle(
          turn,
          attempt,
          'done',
          failedTurn(ErrorCode.SessionState, 'no turn was waiting to resume', null),
        );
        return null;
      }
      if (result.outcome.tag === 'error' && result.outcome.code === ErrorCode.SessionConflict) {
        // Someone else saved the session meanwhile (a decision on an approval): run again.
        throw sessionError(ErrorCode.SessionConflict, result.outcome.message ?? 'the session moved on');
      }
      return result;
    } finally {
      session.workspace.dispose();
    }
  }

  /**
   * Records a turn's result for this attempt only (a stale attempt's result is ignored), drops
   * the journal of a turn that ended for good, and wakes waiters.
   * @param {TurnRow} turn
   * @param {number} attempt
   * @param {'done' | 'failed' | 'paused'} status
   * @param {object} result
   */
  async #settle(turn, attempt, status, result) {
    await this.#store.transaction(async (client) => {
      const updated = await client.query(
        `UPDATE ${this.#s}.turns SET status = $2, result = $3, finished_at = now()
         WHERE id = $1 AND status NOT IN ('done', 'failed', 'paused') AND attempt <= $4 RETURNING id`,
        [turn.id, status, JSON.stringify(result), attempt],
      );
      if (updated.rows.length === 0) return;
      if (status !== 'paused' && turn.turn_number !== null) {
        await client.query(`DELETE FROM ${this.#s}.journal WHERE session_id = $1 AND turn_number = $2`, [
          turn.session_id,
          turn.turn_number,
        ]);
      }
      await client.query('SELECT pg_notify($1, $2)', [this.#channel, turn.id]);
    });
  }

  /** Stops this fleet object: its workers drain, its connections close. */
  async stop() {
    for (const worker of [...this.#workers]) await worker.stop();
    const boss = this.#boss;
    this.#boss = null;
    if (boss) await (await boss.catch(() => null))?.stop({ graceful: true, wait: true, timeout: 30_000 });
    const listener = this.#listener;
    this.#listener = null;
    if (listener) await (await listener.catch(() => null))?.end().catch(() => {});
  }
}

/** @param {unknown} e */
function ignoreExists(e) {
  if (!/already exists/i.test(String(/** @type {Error} */ (e)?.message))) throw e;
}

module.exports = { Fleet };
