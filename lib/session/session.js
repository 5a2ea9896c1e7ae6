'use strict';
// `Session` (DESIGN §4.1): the host controls the loop. Each turn runs the model's code in a fresh
// realm over a working copy of the world; the gate (turn.js) checks, charges, audits and
// journals every call; the turn's changes land only when it succeeds (or ends in `needs`): on
// the world as one history entry, or, in proposal mode, on the staged copy that `commit()`
// applies and `rollback()` discards.

const { ErrorCode } = require('../errors.js');
const binding = require('../native/load.js');
const { failedResult } = require('../errors.js');
const ZipWorkspace = /** @type {typeof import('../index.js').ZipWorkspace} */ (
  /** @type {unknown} */ (require('../workspace.js').ZipWorkspace)
);
const { sessionError } = require('./errors.js');
const {
  BUDGET_KINDS,
  DEFAULT_CALLS_PER_TURN,
  sessionOptions,
  snapshotKeyOf,
  budgetFigures,
  turnSeed,
  errorOutcome,
} = require('./options.js');
const { policyToJSON, gatePolicy } = require('./policy.js');
const { runTurn, outOfBudget } = require('./run-turn.js');
const { auditView } = require('./audit.js');
const { waitingRequest, approveRequest, rejectRequest, proposalsOf } = require('./approvals.js');
const { storeHooks, attachStore, claimTurn, saveTurn, durableJournals } = require('./store-hooks.js');
const { encodeSnapshot, decodeSnapshot } = require('./snapshot.js');
const { stateKeyOf, stateSealOf, restoredState } = require('./state.js');
const { observeTurn, approvalsSettled } = require('../telemetry/hooks.js');

const { SessionLedger } = binding;

const STATUSES = ['active', 'paused', 'completed', 'aborted', 'budget-exceeded'];

/**
 * A snapshot of `session` bound to `binding`, and a session from a snapshot that must be bound to
 * `expected`: how a SessionManager stores and loads (set in Session's static block).
 * @type {(session: Session, binding: import('./snapshot.js').SnapshotBinding) => Buffer}
 */
let snapshotBound;
/**
 * @type {(bytes: Uint8Array, options: { operations?: import('./index.js').SessionOptions['operations'],
 *   snapshotKey?: Uint8Array | string }, expected: { id: string, version: number, purpose: 'store' }) => Session}
 */
let restoreBound;

/**
 * @typedef {import('./turn.js').Operation} Operation
 * @typedef {import('./store-hooks.js').DurableJournal} DurableJournal
 * @typedef {{ code: string, message: string, name?: string, line?: number, column?: number, frame?: string,
 *   budget?: string }} TurnFailure
 * @typedef {{ turnNumber: number, code: string, outcome: import('./index.js').TurnOutcome['tag'], startedAt: number,
 *   wallMs: number, error?: TurnFailure }} TurnRecord
 * @typedef {import('./turn.js').ApprovalRequest} ApprovalRequest
 * @typedef {import('./index.js').TurnOutcome} TurnOutcome
 * @typedef {import('./index.js').TurnResult} TurnResult
 * @typedef {import('./run-turn.js').PendingTurn} PendingTurn
 */

class Session {
  /** @type {string} */ #id;
  /** @type {import('../index.js').ZipWorkspace} */ #world;
  /** @type {import('./index.js').NormalizedPolicy} */ #policy;
  /** @type {Record<string, number>} */ #budgetLimits;
  /** @type {import('../native/binding.js').SessionLedger} */ #ledger;
  /** @type {Map<string, Operation>} */ #operations;
  /** @type {import('../index.js').Limits | undefined} */ #limits;
  /** @type {import('./index.js').SessionStatus} */ #status = 'active';
  /** @type {Record<string, unknown>} */ #env = {};
  #turnNumber = 0;
  /** @type {TurnRecord[]} */
  #turns = [];
  /** @type {import('../index.js').ZipWorkspace | null} the proposals, in proposal mode */
  #staged = null;
  /** @type {import('../index.js').ZipWorkspace | null} the world as the proposals found it */
  #stagedOrigin = null;
  /** @type {PendingTurn | null} */ #pending = null;
  #busy = false;
  #createdAt = Date.now();
  /** @type {Uint8Array | string | undefined} signs snapshots */
  #snapshotKey;
  #callsPerTurn = DEFAULT_CALLS_PER_TURN;
  /** @type {string | null} who the session belongs to */
  #tenant = null;
  /** @type {Record<string, string | number | boolean>} */
  #metadata = {};
  /** Whether turns run as REPL cells whose top-level bindings are kept for the next turn. */
  #persistState = false;
  /** @type {Uint8Array | null} the realm state the last kept turn left, sealed (state.js); null: none yet */
  #state = null;

  /**
   * @param {import('./index.js').SessionOptions} [options]
   */
  constructor(options = {}) {
    const o = sessionOptions(options, ZipWorkspace);
    this.#id = o.id;
    this.#world = o.world;
    this.#policy = o.policy;
    this.#budgetLimits = o.budget;
    this.#operations = o.operations;
    this.#limits = o.limits;
    this.#env = o.env;
    this.#snapshotKey = o.snapshotKey;
    this.#callsPerTurn = o.callsPerTurn;
    this.#tenant = o.tenant;
    this.#metadata = o.metadata;
    this.#persistState = o.persistState;
    // Refusals are thrown with their code (INVALID_INPUT as a TypeError).
    this.#ledger = new SessionLedger(this.#ledgerPolicy(), this.#budgetLimits);
  }

  /** The rules the native gate enforces: the operation lists, llmRules and executionRules. */
  #ledgerPolicy() {
    return gatePolicy(this.#policy, this.#operations);
  }

  /** The session's id. */
  get id() {
    return this.#id;
  }

  /** Who the session belongs to (null: no tenant). */
  get tenant() {
    return this.#tenant;
  }

  /** A copy of the metadata the host filed the session under. */
  get metadata() {
    return { ...this.#metadata };
  }

  /** `active`, `paused`, `completed`, `aborted` or `budget-exceeded`. */
  get status() {
    return this.#status;
  }

  /** The world: the workspace turns read and (when committed) change. */
  get workspace() {
    return this.#world;
  }

  /** The number of the last turn started. */
  get turnNumber() {
    return this.#turnNumber;
  }

  /** The policy in plain form. */
  get policy() {
    return policyToJSON(this.#policy);
  }

  /** Whether each turn's top-level bindings are kept for the next turn. */
  get persistState() {
    return this.#persistState;
  }

  /** A copy of `env` as the last successful turn left it. */
  get env() {
    return structuredClone(this.#env);
  }

  /** Requests of the paused turn that wait for `approve` or `reject`. */
  get pendingApprovals() {
    return (this.#pending?.requests ?? [])
      .filter((r) => r.status === 'pending')
      .map(({ id, operation, args }) => ({ id, operation, args: structuredClone(args) }));
  }

  /** The turns so far: number, code, outcome tag, start time and wall time. */
  get turns() {
    return this.#turns.map((t) => ({ ...t }));
  }

  /** The audit log. */
  get audit() {
    return auditView(this.#ledger);
  }

  // What is left of each budget (`null`: unlimited), or of one.
  /**
   * @overload
   * @returns {Record<import('./index.js').BudgetKind, number | null>}
   */
  /**
   * @overload
   * @param {string} kind
   * @returns {number | null}
   */
  /**
   * @param {string} [kind]
   * @returns {any}
   */
  budgetRemaining(kind) {
    if (kind !== undefined) {
      if (!(/** @type {readonly string[]} */ (BUDGET_KINDS).includes(kind)))
        throw sessionError(ErrorCode.InvalidInput, `unknown budget ${kind}`, TypeError);
      return budgetFigures(this.#ledger.remainingAll())[/** @type {import('./index.js').BudgetKind} */ (kind)];
    }
    return budgetFigures(this.#ledger.remainingAll());
  }

  /** What has been used of each budget. */
  budgetUsed() {
    const used = this.#ledger.usedAll();
    return {
      turns: used.turns ?? 0,
      wallMs: used.wallMs ?? 0,
      hostCalls: used.hostCalls ?? 0,
      bytesWritten: used.bytesWritten ?? 0,
      tokens: used.tokens ?? 0,
      cost: used.cost ?? 0,
    };
  }

  /**
   * Records tokens and cost spent outside operations (the host's own model calls). Passing a
   * limit ends the session's budget: status `budget-exceeded`.
   * @param {{ tokens?: number, cost?: number }} usage
   */
  consume(usage) {
    if (usage === null || typeof usage !== 'object')
      throw sessionError(ErrorCode.InvalidInput, 'consume({ tokens?, cost? })', TypeError);
    let over = null;
    for (const kind of /** @type {const} */ (['tokens', 'cost'])) {
      const amount = usage[kind];
      if (amount === undefined) continue;
      if (typeof amount !== 'number' || !Number.isFinite(amount) || amount < 0) {
        throw sessionError(ErrorCode.InvalidInput, `consume: ${kind} must be a finite number ≥ 0`, TypeError);
      }
      over = this.#ledger.record(kind, amount) ?? over;
    }
    if (over && (this.#status === 'active' || this.#status === 'paused')) this.#status = 'budget-exceeded';
    return this.budgetRemaining();
  }

  /**
   * Whether another turn can run now: the session is active, no turn waits for approval and no
   * budget is used up.
   */
  canContinue() {
    return (
      this.#status === 'active' && !this.#pending && !this.#ledger.exceeded() && this.#ledger.remainingAll().turns !== 0
    );
  }

  /**
   * Whether the policy allows `operation` (the operation lists only; call-specific rules such
   * as `maxTokensPerCall` are checked when it is called).
   * @param {string} operation
   */
  allowed(operation) {
    return this.#ledger.check(String(operation)) === null;
  }

  /**
   * Runs one turn of model-written code. Never throws for guest, policy or budget errors: the
   * outcome says what happened.
   * @param {string} code
   * @param {{ signal?: AbortSignal }} [options]
   * @returns {Promise<TurnResult>}
   */
  executeTurn(code, options = {}) {
    return observeTurn(this, false, code, () => this.#executeTurn(code, options));
  }

  /**
   * @param {string} code
   * @param {{ signal?: AbortSignal }} options
   * @returns {Promise<TurnResult>}
   */
  async #executeTurn(code, options) {
    if (typeof code !== 'string')
      return this.#refused(errorOutcome(ErrorCode.InvalidInput, 'executeTurn(code): code must be a string'));
    if (this.#busy)
      return this.#refused(errorOutcome(ErrorCode.SessionState, 'a turn of this session is already running'));
    if (this.#pending) {
      return this.#refused(
        errorOutcome(
          ErrorCode.SessionState,
          `turn ${this.#pending.turnNumber} is waiting for approval: approve or reject its requests, then resume()`,
        ),
      );
    }
    if (this.#status !== 'active')
      return this.#refused(
        errorOutcome(ErrorCode.SessionState, `the session is ${this.#status}; turns run only while it is active`),
      );
    this.#busy = true;
    try {
      const conflict = await this.#claim();
      if (conflict) return this.#refused(conflict);
      const durable = await this.#durableBegin(this.#turnNumber + 1, Date.now());
      // One crossing: the budget checked, a turn taken, the journal emptied, the gate opened.
      const start = this.#ledger.startTurn(this.#turnNumber + 1, this.#callsPerTurn);
      const over = start.refusal;
      if (over) {
        return await this.#finish(this.#refused(this.#outOfBudget(over.rule, over.message)));
      }
      this.#turnNumber += 1;
      const budgetAtStart = budgetFigures(start.remaining);
      const turn = {
        turnNumber: this.#turnNumber,
        code,
        seed: turnSeed(this.#id, this.#turnNumber),
        now: durable?.now ?? Date.now(),
        envBefore: this.#env,
        ...(this.#persistState ? { stateBefore: this.#state } : {}),
        requests: [],
        budgetAtStart,
      };
      if (durable?.entries.length) this.#ledger.journalSeed(durable.entries);
      return await this.#finish(await this.#runTurn(turn, budgetAtStart.wallMs, options.signal, durable));
    } finally {
      this.#busy = false;
    }
  }

  /**
   * Approves a request of the paused turn: on `resume()` the operation runs, or, with
   * `{ value }`, answers with `value` without running.
   * @param {string} id
   * @param {{ value?: unknown }} [decision]
   */
  approve(id, decision) {
    approveRequest(this.#request(id), decision);
    approvalsSettled(1);
  }

  /**
   * Rejects a request: on `resume()` the guest's call throws `ApprovalRejected` with `reason`.
   * @param {string} id
   * @param {string} [reason]
   */
  reject(id, reason) {
    rejectRequest(this.#request(id), reason);
    approvalsSettled(1);
  }

  /** @param {string} id */
  #request(id) {
    return waitingRequest(this.#pending, id);
  }

  /**
   * Continues: a turn paused for approval is re-run from its journal once every request has
   * a decision (operations that already ran answer from the journal; only the approved call and
   * what follows execute). A session paused by `pause()` becomes active again (resolves to null).
   * @param {{ signal?: AbortSignal }} [options]
   * @returns {Promise<TurnResult | null>}
   */
  async resume(options = {}) {
    const pending = this.#pending;
    if (!pending) {
      if (this.#status === 'paused') this.#status = 'active';
      else if (this.#status !== 'active')
        throw sessionError(ErrorCode.SessionState, `a ${this.#status} session cannot be resumed`);
      return null;
    }
    return observeTurn(this, true, pending.code, () => this.#resumeTurn(pending, options));
  }

  /**
   * `resume()` of the turn paused for approval.
   * @param {PendingTurn} pending
   * @param {{ signal?: AbortSignal }} options
   * @returns {Promise<TurnResult>}
   */
  async #resumeTurn(pending, options) {
    if (this.#busy)
      return this.#refused(errorOutcome(ErrorCode.SessionState, 'a turn of this session is already running'));
    const waiting = pending.requests.filter((r) => r.status === 'pending');
    if (waiting.length > 0) {
      return this.#refused(
        errorOutcome(
          ErrorCode.SessionState,
          `approve or reject ${waiting.map((r) => r.id).join(', ')} before resuming`,
        ),
      );
    }
    this.#busy = true;
    try {
      const conflict = await this.#claim();
      if (conflict) return this.#refused(conflict);
      const durable = await this.#durableBegin(pending.turnNumber, pending.now);
      const over = this.#ledger.exceeded();
      if (over) return await this.#finish(this.#refused(this.#outOfBudget(over.rule, over.message)));
      this.#status = 'active';
      const requests = pending.requests.map((r) => ({
        id: r.id,
        operation: r.operation,
        args: JSON.stringify(r.args),
      }));
      const atStart = pending.budgetAtStart;
      this.#ledger.resumeTurn(pending.turnNumber, this.#callsPerTurn, requests, {
        turns: atStart.turns ?? undefined,
        wallMs: atStart.wallMs ?? undefined,
        hostCalls: atStart.hostCalls ?? undefined,
        bytesWritten: atStart.bytesWritten ?? undefined,
        tokens: atStart.tokens ?? undefined,
        cost: atStart.cost ?? undefined,
      });
      if (durable?.entries.length) this.#ledger.journalSeed(durable.entries);
      const wallLeft = this.#ledger.remainingAll().wallMs ?? null;
      return await this.#finish(await this.#runTurn(pending, wallLeft, options.signal, durable));
    } finally {
      this.#busy = false;
    }
  }

  /**
   * Runs a turn whose gate is open (`startTurn` or `resumeTurn`).
   * @param {PendingTurn} turn
   * @param {number | null} wallLeft what is left of the wallMs budget (null: unlimited)
   * @param {AbortSignal | undefined} signal
   * @param {{ now: number, entries: unknown[], interrupted: Set<number> } | null} [durable] the
   *   turn's durable journal, when one is attached
   * @returns {Promise<TurnResult>}
   */
  async #runTurn(turn, wallLeft, signal, durable) {
    const startedAt = Date.now();
    const ran = await runTurn(
      {
        id: this.#id,
        durable: durable ? { journal: /** @type {DurableJournal} */ (durableJournals.get(this)), ...durable } : null,
        ledger: this.#ledger,
        policy: this.#policy,
        operations: this.#operations,
        limits: this.#limits,
        base: this.#staged ?? this.#world,
        allowed: (op) => this.allowed(op),
        beforeApproved: (request) => this.#markStarted(request),
        stateKey: this.#persistState ? stateKeyOf(this.#snapshotKey) : null,
      },
      turn,
      wallLeft,
      signal,
    );
    const { result, work, origin } = ran;
    if (ran.failure) {
      // The durable journal could not be written: nothing of the turn is kept or saved, and
      // this copy of the session is left behind (load it again from the store).
      work.dispose();
      throw ran.failure;
    }
    let outcome = ran.outcome;
    if (outcome.tag === 'needs-approval') {
      this.#pending = { ...turn };
      this.#status = 'paused';
      outcome = { tag: 'needs-approval', requests: this.pendingApprovals };
    } else if (outcome.tag === 'nonconverged') {
      this.#status = 'budget-exceeded';
    }
    if (ran.keep) {
      const committed = this.#land(work, origin, turn.turnNumber);
      if (committed.error) {
        outcome = errorOutcome(committed.error.code, committed.error.message);
      } else {
        this.#env = ran.env;
        if (ran.state) this.#state = ran.state;
        if (outcome.tag === 'ok' && committed.proposed) outcome = { tag: 'proposed', value: outcome.value };
      }
    }
    if (outcome.tag !== 'needs-approval') this.#pending = null;
    const existing = this.#turns.findIndex((t) => t.turnNumber === turn.turnNumber);
    /** @type {TurnRecord} */
    const record = {
      turnNumber: turn.turnNumber,
      code: turn.code,
      outcome: outcome.tag,
      startedAt,
      wallMs: result.stats.wallMs,
    };
    const failure = failureOf(outcome);
    if (failure) record.error = failure;
    if (existing >= 0) this.#turns[existing] = record;
    else this.#turns.push(record);
    work.dispose();
    return this.#result(turn.turnNumber, outcome, result, ran.remaining);
  }

  /**
   * Before an approved call runs, its request is marked started and (for a managed session)
   * saved: if the host dies while the call runs, a later resume does not run it again.
   * @param {ApprovalRequest} request
   */
  async #markStarted(request) {
    request.status = 'started';
    const hooks = storeHooks.get(this);
    if (hooks) await hooks.save((binding) => this.#encode(binding));
  }

  /**
   * A budget ran out: the session's status says so and the turn's outcome is `nonconverged`.
   * @param {string} budget
   * @param {string} message
   * @returns {TurnOutcome}
   */
  #outOfBudget(budget, message) {
    this.#status = 'budget-exceeded';
    return outOfBudget(budget, message);
  }

  /**
   * Lands a successful turn's changes: on the staged copy in proposal mode, else on the world
   * as one history entry.
   * @param {import('../index.js').ZipWorkspace} work
   * @param {import('../index.js').ZipWorkspace} origin
   * @param {number} turnNumber
   * @returns {{ proposed: boolean, error?: { code: string, message: string } }}
   */
  #land(work, origin, turnNumber) {
    const changed = binding.hasChangesSince(/** @type {any} */ (work), /** @type {any} */ (origin));
    if (this.#policy.worldRules.proposalMode) {
      if (changed) {
        this.#stagedOrigin ??= origin;
        work.setAccessRules(this.#world.accessRules());
        this.#staged = work.fork();
      }
      return { proposed: changed };
    }
    if (!changed) return { proposed: false };
    try {
      this.#world.applyChangesOf(work, origin, `session ${this.#id} turn ${turnNumber}`);
      return { proposed: false };
    } catch (e) {
      const err = /** @type {{ code?: string, message?: string }} */ (e);
      return { proposed: false, error: { code: err.code ?? ErrorCode.Internal, message: err.message ?? String(e) } };
    }
  }

  /**
   * @param {number} turnNumber
   * @param {TurnOutcome} outcome
   * @param {import('../index.js').RunResult} result
   * @param {Record<import('./index.js').BudgetKind, number | null>} [remaining] what is left of each budget
   * @returns {TurnResult}
   */
  #result(turnNumber, outcome, result, remaining = this.budgetRemaining()) {
    return { turnNumber, outcome, budgetRemaining: remaining, proposals: this.proposals(), result };
  }

  /**
   * A turn refused before it ran.
   * @param {TurnOutcome} outcome
   * @returns {TurnResult}
   */
  #refused(outcome) {
    const message = 'message' in outcome ? String(outcome.message) : outcome.tag;
    const code = 'code' in outcome ? String(outcome.code) : ErrorCode.SessionState;
    return this.#result(this.#turnNumber, outcome, failedResult(/** @type {any} */ (code), 'SessionError', message));
  }

  /**
   * Before a turn runs, a managed session claims it: the unchanged state is saved with
   * compare-and-set, so of two processes starting a turn on the same version only one goes on,
   * and the other runs nothing (its operations, with their side effects, never start). Returns
   * the refusal for the loser.
   * @returns {Promise<TurnOutcome | null>}
   */
  #claim() {
    return claimTurn(storeHooks.get(this), (binding) => this.#encode(binding));
  }

  /**
   * Saves through the manager's store after a turn; a store that moved on turns the result
   * into SESSION_CONFLICT.
   * @param {TurnResult} result
   */
  #finish(result) {
    return saveTurn(storeHooks.get(this), (binding) => this.#encode(binding), result);
  }

  /** The staged changes (proposal mode), sorted by path. */
  proposals() {
    return this.#staged ? proposalsOf(this.#staged, this.#stagedOrigin ?? this.#world) : [];
  }

  /**
   * Applies the proposals to the world as one history entry; returns its id (null when there
   * was nothing to apply). `CONFLICT` if the world changed under them (nothing applied).
   */
  commit() {
    this.#idle('commit');
    if (this.#pending)
      throw sessionError(ErrorCode.SessionState, 'a turn is waiting for approval: resume or abort it before commit()');
    if (!this.#staged || !this.#stagedOrigin) return null;
    const id = this.#world.applyChangesOf(this.#staged, this.#stagedOrigin, `session ${this.#id} commit`);
    this.#staged = null;
    this.#stagedOrigin = null;
    return id;
  }

  /** Discards the proposals. */
  rollback() {
    this.#idle('rollback');
    if (this.#pending)
      throw sessionError(
        ErrorCode.SessionState,
        'a turn is waiting for approval: resume or abort it before rollback()',
      );
    this.#staged = null;
    this.#stagedOrigin = null;
  }

  /** Ends the session: proposals and any paused turn are discarded; status `aborted`. */
  abort() {
    this.#idle('abort');
    approvalsSettled(this.#pending?.requests.filter((r) => r.status === 'pending').length ?? 0);
    this.#staged = null;
    this.#stagedOrigin = null;
    this.#pending = null;
    this.#ledger.journalClear();
    this.#status = 'aborted';
  }

  /** Marks the session `completed`; later turns are refused. */
  complete() {
    this.#idle('complete');
    if (this.#pending)
      throw sessionError(ErrorCode.SessionState, 'a turn is waiting for approval; resume or abort first');
    this.#status = 'completed';
  }

  /** Pauses an active session; `resume()` makes it active again. */
  pause() {
    this.#idle('pause');
    if (this.#status !== 'active')
      throw sessionError(ErrorCode.SessionState, `a ${this.#status} session cannot be paused`);
    this.#status = 'paused';
  }

  /**
   * With a durable journal attached: the turn's journal as it was kept outside the process (a
   * re-run after the host died answers from it) and the turn's clock.
   * @param {number} turnNumber
   * @param {number} now
   */
  async #durableBegin(turnNumber, now) {
    const journal = durableJournals.get(this);
    if (!journal) return null;
    try {
      const begun = await journal.begin({ turnNumber, now });
      return { now: begun.now, entries: begun.entries, interrupted: new Set(begun.interrupted) };
    } catch (e) {
      throw sessionError(
        ErrorCode.Unavailable,
        `the turn's journal could not be read: ${/** @type {Error} */ (e).message}`,
      );
    }
  }

  /** @param {string} what */
  #idle(what) {
    if (this.#busy) throw sessionError(ErrorCode.SessionState, `${what}() while a turn is running`);
  }

  /**
   * The whole session as zip bytes: world and its history, proposals, env, turns, audit,
   * budget, policy, status, pending approvals and journal.
   * @returns {Buffer}
   */
  snapshot() {
    this.#idle('snapshot');
    return this.#encode({ id: this.#id, version: null, purpose: 'export' });
  }

  /** @param {import('./snapshot.js').SnapshotBinding} binding what the snapshot is, signed with it */
  #encode(binding) {
    return encodeSnapshot(
      {
        binding,
        meta: {
          id: this.#id,
          status: this.#status,
          createdAt: this.#createdAt,
          turnNumber: this.#turnNumber,
          turns: this.#turns,
          env: this.#env,
          policy: policyToJSON(this.#policy),
          budget: this.#budgetLimits,
          limits: this.#limits ?? null,
          callsPerTurn: this.#callsPerTurn,
          // A paused turn re-runs from the state before it, which is the session's state: no
          // other turn can keep a state while one waits for approval.
          pending: this.#pending && { ...this.#pending, stateBefore: undefined },
          tenant: this.#tenant,
          metadata: this.#metadata,
          ...(this.#persistState ? { persistState: true, stateSeal: stateSealOf(this.#snapshotKey) } : {}),
        },
        ledger: this.#ledger.save(),
        world: this.#world,
        staged: this.#staged,
        stagedOrigin: this.#stagedOrigin,
        state: this.#state,
      },
      this.#snapshotKey,
    );
  }

  /**
   * A session from `snapshot()` bytes, with the host's operations (functions are not saved).
   * A tampered audit log is refused (`AUDIT_TAMPERED`); with `snapshotKey`, any change to the
   * snapshot is (`SNAPSHOT_TAMPERED`), and the restored session signs its snapshots with it.
   * @param {Uint8Array} bytes
   * @param {{ operations?: import('./index.js').SessionOptions['operations'], limits?: import('../index.js').Limits,
   *   snapshotKey?: Uint8Array | string }} [options]
   */
  static restore(bytes, options = {}) {
    return Session.#restore(bytes, options, { purpose: 'export' });
  }

  static {
    snapshotBound = (session, binding) => session.#encode(binding);
    restoreBound = (bytes, options, expected) => Session.#restore(bytes, options, expected);
  }

  /**
   * @param {Uint8Array} bytes
   * @param {{ operations?: import('./index.js').SessionOptions['operations'], limits?: import('../index.js').Limits,
   *   snapshotKey?: Uint8Array | string }} options
   * @param {{ id?: string, version?: number, purpose: 'store' | 'export' }} expected
   */
  static #restore(bytes, options, expected) {
    const snap = decodeSnapshot(bytes, snapshotKeyOf(options.snapshotKey), expected);
    const meta = snap.meta;
    const session = new Session({
      id: meta.id,
      workspace: snap.world,
      policy: meta.policy,
      budget: meta.budget,
      operations: options.operations,
      limits: options.limits ?? meta.limits ?? undefined,
      env: meta.env,
      snapshotKey: options.snapshotKey,
      callsPerTurn: meta.callsPerTurn ?? undefined,
      tenant: meta.tenant ?? undefined,
      metadata: meta.metadata ?? undefined,
      persistState: meta.persistState === true,
    });
    session.#restoreState(snap);
    return session;
  }

  /** @param {ReturnType<typeof decodeSnapshot>} snap */
  #restoreState(snap) {
    const meta = snap.meta;
    if (!STATUSES.includes(meta.status))
      throw sessionError(ErrorCode.InvalidInput, `the snapshot's status ${meta.status} is unknown`);
    this.#ledger = SessionLedger.restore(this.#ledgerPolicy(), snap.ledger);
    this.#status = meta.status;
    this.#createdAt = meta.createdAt;
    this.#turnNumber = meta.turnNumber;
    this.#turns = meta.turns;
    this.#pending = meta.pending;
    if (snap.state) {
      if (!this.#persistState)
        throw sessionError(ErrorCode.InvalidInput, 'not a session snapshot: a state without persistState');
      this.#state = restoredState(snap.state, snap.meta.stateSeal, this.#snapshotKey);
    }
    if (this.#pending && this.#persistState) this.#pending.stateBefore = this.#state;
    this.#staged = /** @type {import('../index.js').ZipWorkspace | null} */ (/** @type {unknown} */ (snap.staged));
    this.#stagedOrigin = /** @type {import('../index.js').ZipWorkspace | null} */ (
      /** @type {unknown} */ (snap.stagedOrigin)
    );
  }
}

/** How much of a failed turn's message and frame its record keeps (they are in every snapshot). */
const MAX_FAILURE_CHARS = 2048;

/**
 * Why a turn failed, as its record keeps it (null for a turn that did not fail): code, message,
 * where (line, column, the frame's source line) and which budget ran out.
 * @param {TurnOutcome} outcome
 * @returns {TurnFailure | null}
 */
function failureOf(outcome) {
  const o = /** @type {Record<string, unknown>} */ (outcome);
  if (typeof o.code !== 'string') return null;
  const cut = (/** @type {unknown} */ text) =>
    typeof text === 'string' && text.length > MAX_FAILURE_CHARS ? `${text.slice(0, MAX_FAILURE_CHARS)}…` : text;
  return {
    code: o.code,
    message: /** @type {string} */ (cut(o.message ?? '')),
    ...(typeof o.name === 'string' ? { name: /** @type {string} */ (cut(o.name)) } : {}),
    ...(typeof o.line === 'number' ? { line: o.line } : {}),
    ...(typeof o.column === 'number' ? { column: o.column } : {}),
    ...(typeof o.frame === 'string' ? { frame: /** @type {string} */ (cut(o.frame)) } : {}),
    ...(typeof o.budget === 'string' ? { budget: o.budget } : {}),
  };
}

module.exports = { Session, attachStore, snapshotBound, restoreBound, BUDGET_KINDS };
