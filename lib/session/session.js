'use strict';
// `Session` (DESIGN §4.1): the host controls the loop. Each turn runs the model's code in a fresh
// realm over a working copy of the world; the gate (turn.js) checks, charges, audits and
// journals every call; the turn's changes land only when it succeeds (or ends in `needs`): on
// the world as one history entry, or, in proposal mode, on the staged copy that `commit()`
// applies and `rollback()` discards.

const binding = require('../native/load.js');
const { run, copyOf } = require('../run.js');
const { failedResult } = require('../errors.js');
const ZipWorkspace = /** @type {typeof import('../index.js').ZipWorkspace} */ (
  /** @type {unknown} */ (require('../workspace.js').ZipWorkspace)
);
const { sessionError } = require('./errors.js');
const { normalizePolicy, accessRulesOf, policyToJSON } = require('./policy.js');
const { Gate } = require('./turn.js');
const { worldFor, operationGlobals } = require('./world.js');
const { encodeSnapshot, decodeSnapshot } = require('./snapshot.js');

const { SessionLedger } = binding;

const BUDGET_KINDS = /** @type {const} */ (['turns', 'wallMs', 'hostCalls', 'bytesWritten', 'tokens', 'cost']);
const STATUSES = ['active', 'paused', 'completed', 'aborted', 'budget-exceeded'];
const GUEST_NAMES = new Set(['world', 'env', 'needs', 'session']);
const DEFAULT_TURN_TIMEOUT_MS = 30_000;
/** How much JSON `env` may hold across turns (it is saved with every snapshot). */
const MAX_ENV_CHARS = 16 << 20;
/** Operation calls one turn may make (each adds an audit entry and a journal entry). */
const DEFAULT_CALLS_PER_TURN = 10_000;

/**
 * Hooks a SessionManager attaches: a check before each turn and a save after it.
 * @type {WeakMap<Session, { check(): Promise<boolean>,
 *   save(encode: (binding: import('./snapshot.js').SnapshotBinding) => Buffer): Promise<void> }>}
 */
const storeHooks = new WeakMap();

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
 * @typedef {import('./turn.js').ApprovalRequest} ApprovalRequest
 * @typedef {import('./index.js').TurnOutcome} TurnOutcome
 * @typedef {import('./index.js').TurnResult} TurnResult
 * @typedef {{ turnNumber: number, code: string, seed: number, now: number, envBefore: unknown,
 *   requests: ApprovalRequest[], worldLog: string[], budgetAtStart: Record<string, number | null> }} PendingTurn
 */

/**
 * @param {unknown} operations
 * @returns {Map<string, Operation>}
 */
function normalizeOperations(operations) {
  /** @type {Map<string, Operation>} */
  const out = new Map();
  if (operations === undefined || operations === null) return out;
  if (typeof operations !== 'object' || Array.isArray(operations)) {
    throw sessionError(
      'INVALID_INPUT',
      'operations must be an object of functions or { handler } definitions',
      TypeError,
    );
  }
  for (const [name, def] of Object.entries(operations)) {
    if (!/^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*$/.test(name)) {
      throw sessionError(
        'INVALID_INPUT',
        `operations: ${JSON.stringify(name)} is not a name or dotted name`,
        TypeError,
      );
    }
    const root = name.split('.')[0];
    if (GUEST_NAMES.has(root))
      throw sessionError('INVALID_INPUT', `operations: ${name} clashes with the guest's ${root}`, TypeError);
    const d = typeof def === 'function' ? { handler: def } : def;
    if (d === null || typeof d !== 'object' || typeof d.handler !== 'function') {
      throw sessionError('INVALID_INPUT', `operations.${name} must be a function or { handler: function }`, TypeError);
    }
    const needsApproval = d.needsApproval ?? false;
    if (typeof needsApproval !== 'boolean' && typeof needsApproval !== 'function') {
      throw sessionError(
        'INVALID_INPUT',
        `operations.${name}.needsApproval must be a boolean or a function`,
        TypeError,
      );
    }
    out.set(name, {
      handler: d.handler,
      needsApproval,
      network: d.network === true,
      description: typeof d.description === 'string' ? d.description : undefined,
      inputSchema: d.inputSchema,
    });
  }
  for (const name of out.keys()) {
    for (const other of out.keys()) {
      if (other.startsWith(`${name}.`))
        throw sessionError('INVALID_INPUT', `operations: ${name} and ${other} cannot both exist`, TypeError);
    }
  }
  return out;
}

/**
 * @param {unknown} budget
 * @returns {Record<string, number>}
 */
function normalizeBudget(budget) {
  if (budget === undefined || budget === null) return {};
  if (typeof budget !== 'object' || Array.isArray(budget))
    throw sessionError('INVALID_INPUT', 'budget must be an object', TypeError);
  /** @type {Record<string, number>} */
  const out = {};
  for (const [kind, limit] of Object.entries(budget)) {
    if (!(/** @type {readonly string[]} */ (BUDGET_KINDS).includes(kind))) {
      throw sessionError('INVALID_INPUT', `budget.${kind} is not a budget (${BUDGET_KINDS.join(', ')})`, TypeError);
    }
    if (limit === undefined) continue;
    if (typeof limit !== 'number' || !Number.isFinite(limit) || limit < 0) {
      throw sessionError('INVALID_INPUT', `budget.${kind} must be a finite number ≥ 0`, TypeError);
    }
    out[kind] = limit;
  }
  return out;
}

/**
 * Where `value` holds something other than JSON data (a function, a class instance, a
 * non-finite number), or null. `undefined` is allowed: as in JSON, a property holding it is
 * dropped (and an array element becomes null).
 * @param {unknown} value
 * @param {string} at
 * @param {number} depth
 * @returns {string | null}
 */
function notPlain(value, at, depth = 0) {
  if (depth > 200) return `${at} is nested too deeply`;
  if (value === null || value === undefined || typeof value === 'string' || typeof value === 'boolean') return null;
  if (typeof value === 'number') return Number.isFinite(value) ? null : `${at} is ${value}`;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const bad = notPlain(value[i], `${at}[${i}]`, depth + 1);
      if (bad) return bad;
    }
    return null;
  }
  if (typeof value === 'object') {
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) return `${at} is not a plain object`;
    for (const [k, v] of Object.entries(/** @type {object} */ (value))) {
      const bad = notPlain(v, `${at}.${k}`, depth + 1);
      if (bad) return bad;
    }
    return null;
  }
  return `${at} is a ${typeof value}`;
}

/**
 * A copy of plain JSON data (what `env`, questions and approved values may hold).
 * @param {unknown} value
 * @param {string} what
 */
function plainCopy(value, what) {
  const bad = notPlain(value, what);
  if (bad) throw sessionError('INVALID_INPUT', `${what} must hold plain JSON data: ${bad}`, TypeError);
  const text = JSON.stringify(value);
  return text === undefined ? null : JSON.parse(text);
}

/**
 * @param {unknown} key
 * @returns {Uint8Array | string | undefined}
 */
function snapshotKeyOf(key) {
  if (key === undefined) return undefined;
  if ((typeof key === 'string' && key.length >= 16) || (key instanceof Uint8Array && key.length >= 16)) return key;
  throw sessionError(
    'INVALID_INPUT',
    'snapshotKey must be a string or Uint8Array of at least 16 characters or bytes',
    TypeError,
  );
}

/**
 * A 32-bit seed for a turn's `Math.random`, from the session id and the turn number.
 * @param {string} id
 * @param {number} turnNumber
 */
function turnSeed(id, turnNumber) {
  let h = 0x811c9dc5;
  for (const ch of `${id}#${turnNumber}`) {
    h ^= ch.codePointAt(0) ?? 0;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/**
 * @param {'OK' | string} code
 * @param {string} message
 */
function errorOutcome(code, message) {
  return /** @type {TurnOutcome & { tag: 'error' }} */ ({ tag: 'error', code, message });
}

class Session {
  /** @type {string} */ #id;
  /** @type {import('../index.js').ZipWorkspace} */ #world;
  /** @type {import('./index.js').NormalizedPolicy} */ #policy;
  /** @type {Record<string, number>} */ #budgetLimits;
  /** @type {import('../native/binding.js').SessionLedger} */ #ledger;
  /** @type {Map<string, Operation>} */ #operations;
  /** @type {import('../index.js').Limits | undefined} */ #limits;
  /** @type {string} */ #status = 'active';
  /** @type {unknown} */ #env = {};
  #turnNumber = 0;
  /** @type {{ turnNumber: number, code: string, outcome: string, startedAt: number, wallMs: number }[]} */
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

  /**
   * @param {import('./index.js').SessionOptions} [options]
   */
  constructor(options = {}) {
    if (options === null || typeof options !== 'object')
      throw sessionError('INVALID_INPUT', 'new Session(options): options must be an object', TypeError);
    const known = ['workspace', 'policy', 'budget', 'operations', 'limits', 'id', 'env', 'snapshotKey', 'callsPerTurn'];
    for (const key of Object.keys(options)) {
      if (!known.includes(key))
        throw sessionError(
          'INVALID_INPUT',
          `unknown Session option '${key}' (expected: ${known.join(', ')})`,
          TypeError,
        );
    }
    if (options.workspace !== undefined && !(options.workspace instanceof ZipWorkspace)) {
      throw sessionError('INVALID_INPUT', 'workspace must be a ZipWorkspace', TypeError);
    }
    if (options.id !== undefined && (typeof options.id !== 'string' || !/^[\w.-]{1,128}$/.test(options.id))) {
      throw sessionError('INVALID_INPUT', 'id must be 1 to 128 letters, digits, _, . or -', TypeError);
    }
    this.#id = options.id ?? `s-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
    this.#world = options.workspace ?? new ZipWorkspace();
    this.#policy = normalizePolicy(options.policy);
    this.#budgetLimits = normalizeBudget(options.budget);
    this.#operations = normalizeOperations(options.operations);
    this.#limits = options.limits;
    this.#env = plainCopy(options.env ?? {}, 'env');
    this.#snapshotKey = snapshotKeyOf(options.snapshotKey);
    const calls = options.callsPerTurn ?? DEFAULT_CALLS_PER_TURN;
    if (!Number.isInteger(calls) || calls < 1) {
      throw sessionError('INVALID_INPUT', 'callsPerTurn must be a whole number ≥ 1', TypeError);
    }
    this.#callsPerTurn = calls;
    this.#ledger = new SessionLedger(this.#ledgerPolicy(), this.#budgetLimits);
  }

  #ledgerPolicy() {
    return {
      allowedOperations: this.#policy.allowedOperations ?? undefined,
      deniedOperations: this.#policy.deniedOperations,
    };
  }

  /** The session's id. */
  get id() {
    return this.#id;
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
    const ledger = this.#ledger;
    const parse = (/** @type {any} */ e) => ({
      seq: e.seq,
      timestamp: e.timestamp,
      turnNumber: e.turnNumber,
      operation: e.operation,
      args: e.args,
      ...(e.result !== undefined && e.result !== null ? { result: e.result } : {}),
      ...(e.error !== undefined && e.error !== null ? { error: e.error } : {}),
      durationMs: e.durationMs,
      ...(e.tokensUsed !== undefined && e.tokensUsed !== null ? { tokensUsed: e.tokensUsed } : {}),
      prevHash: e.prevHash,
      hash: e.hash,
    });
    return {
      /** Every entry, oldest first. */
      entries: () => ledger.auditEntries().map(parse),
      /** @param {number} turnNumber */
      forTurn: (turnNumber) => ledger.auditEntries(turnNumber).map(parse),
      /** @param {string} operation */
      forOperation: (operation) => ledger.auditEntries(undefined, operation).map(parse),
      stats: () => {
        const s = ledger.auditStats();
        return {
          totalOperations: s.totalOperations,
          operationCounts: { ...s.operationCounts },
          totalTokens: s.totalTokens,
        };
      },
      export: () => ledger.auditExport(),
      /** @param {string} [exported] */
      verify: (exported) => {
        const v = exported === undefined ? ledger.auditVerify() : SessionLedger.verifyAuditExport(String(exported));
        return v.ok ? { ok: true, entries: v.entries ?? 0 } : { ok: false, error: v.error ?? 'invalid' };
      },
    };
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
        throw sessionError('INVALID_INPUT', `unknown budget ${kind}`, TypeError);
      return this.#ledger.remaining(kind) ?? null;
    }
    /** @type {Record<string, number | null>} */
    const out = {};
    for (const k of BUDGET_KINDS) out[k] = this.#ledger.remaining(k) ?? null;
    return out;
  }

  /** What has been used of each budget. */
  budgetUsed() {
    /** @type {Record<string, number>} */
    const out = {};
    for (const k of BUDGET_KINDS) out[k] = this.#ledger.used(k);
    return out;
  }

  /**
   * Records tokens and cost spent outside operations (the host's own model calls). Passing a
   * limit ends the session's budget: status `budget-exceeded`.
   * @param {{ tokens?: number, cost?: number }} usage
   */
  consume(usage) {
    if (usage === null || typeof usage !== 'object')
      throw sessionError('INVALID_INPUT', 'consume({ tokens?, cost? })', TypeError);
    let over = null;
    for (const kind of /** @type {const} */ (['tokens', 'cost'])) {
      const amount = usage[kind];
      if (amount === undefined) continue;
      if (typeof amount !== 'number' || !Number.isFinite(amount) || amount < 0) {
        throw sessionError('INVALID_INPUT', `consume: ${kind} must be a finite number ≥ 0`, TypeError);
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
      this.#status === 'active' && !this.#pending && !this.#ledger.exceeded() && this.#ledger.remaining('turns') !== 0
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
  async executeTurn(code, options = {}) {
    if (typeof code !== 'string')
      return this.#refused(errorOutcome('INVALID_INPUT', 'executeTurn(code): code must be a string'));
    if (this.#busy) return this.#refused(errorOutcome('SESSION_STATE', 'a turn of this session is already running'));
    if (this.#pending) {
      return this.#refused(
        errorOutcome(
          'SESSION_STATE',
          `turn ${this.#pending.turnNumber} is waiting for approval: approve or reject its requests, then resume()`,
        ),
      );
    }
    if (this.#status !== 'active')
      return this.#refused(
        errorOutcome('SESSION_STATE', `the session is ${this.#status}; turns run only while it is active`),
      );
    this.#busy = true;
    try {
      const conflict = await this.#claim();
      if (conflict) return this.#refused(conflict);
      const over = this.#ledger.exceeded() ?? this.#ledger.take('turns', 1);
      if (over) {
        return await this.#finish(this.#refused(this.#outOfBudget(over.rule, over.message)));
      }
      this.#turnNumber += 1;
      const turn = {
        turnNumber: this.#turnNumber,
        code,
        seed: turnSeed(this.#id, this.#turnNumber),
        now: Date.now(),
        envBefore: this.#env,
        requests: [],
        worldLog: [],
        budgetAtStart: this.budgetRemaining(),
      };
      this.#ledger.journalClear();
      return await this.#finish(await this.#runTurn(turn, options.signal));
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
    const request = this.#request(id);
    request.status = 'approved';
    if (decision && Object.hasOwn(decision, 'value')) {
      request.value = plainCopy(decision.value, 'approve(id, { value })');
      request.hasValue = true;
    }
  }

  /**
   * Rejects a request: on `resume()` the guest's call throws `ApprovalRejected` with `reason`.
   * @param {string} id
   * @param {string} [reason]
   */
  reject(id, reason) {
    const request = this.#request(id);
    request.status = 'rejected';
    if (reason !== undefined) request.reason = String(reason);
  }

  /** @param {string} id */
  #request(id) {
    const request = this.#pending?.requests.find((r) => r.id === id);
    if (!request) throw sessionError('NOT_FOUND', `no approval request ${id} is waiting`);
    if (request.status !== 'pending')
      throw sessionError('SESSION_STATE', `request ${id} was already ${request.status}`);
    return request;
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
        throw sessionError('SESSION_STATE', `a ${this.#status} session cannot be resumed`);
      return null;
    }
    if (this.#busy) return this.#refused(errorOutcome('SESSION_STATE', 'a turn of this session is already running'));
    const waiting = pending.requests.filter((r) => r.status === 'pending');
    if (waiting.length > 0) {
      return this.#refused(
        errorOutcome('SESSION_STATE', `approve or reject ${waiting.map((r) => r.id).join(', ')} before resuming`),
      );
    }
    this.#busy = true;
    try {
      const conflict = await this.#claim();
      if (conflict) return this.#refused(conflict);
      const over = this.#ledger.exceeded();
      if (over) return await this.#finish(this.#refused(this.#outOfBudget(over.rule, over.message)));
      this.#status = 'active';
      this.#ledger.journalRewind();
      return await this.#finish(await this.#runTurn(pending, options.signal));
    } finally {
      this.#busy = false;
    }
  }

  /**
   * @param {PendingTurn} turn
   * @param {AbortSignal | undefined} signal
   * @returns {Promise<TurnResult>}
   */
  async #runTurn(turn, signal) {
    const startedAt = Date.now();
    const base = this.#staged ?? this.#world;
    const origin = base.fork();
    const work = base.fork();
    // The policy narrows whatever rules the host set on the world; it never widens them.
    work.narrowAccessRules(accessRulesOf(this.#policy));
    const controller = new AbortController();
    const onAbort = () => controller.abort();
    if (signal?.aborted) controller.abort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    const env = structuredClone(turn.envBefore);
    const wallLeft = this.#ledger.remaining('wallMs');
    const timeoutMs = Math.min(
      this.#limits?.timeoutMs ?? DEFAULT_TURN_TIMEOUT_MS,
      wallLeft ?? Number.POSITIVE_INFINITY,
    );
    const gate = new Gate({
      ledger: this.#ledger,
      policy: this.#policy,
      operations: this.#operations,
      turnNumber: turn.turnNumber,
      requests: turn.requests,
      worldLog: turn.worldLog,
      controller,
      execLimits: this.#limits,
      callsPerTurn: this.#callsPerTurn,
      beforeApproved: (request) => this.#markStarted(request),
    });
    const globals = {
      ...operationGlobals(this.#operations, (name) => gate.operation(name)),
      world: worldFor(gate, () => work, { origin, now: turn.now, seed: turn.seed }),
      env,
      needs: (/** @type {unknown} */ question) => {
        throw gate.halt({ kind: 'needs', question: plainCopy(question ?? null, 'the question') });
      },
      session: {
        id: this.#id,
        turnNumber: turn.turnNumber,
        readOnly: this.#policy.worldRules.readOnly,
        proposalMode: this.#policy.worldRules.proposalMode,
        // Counted from the turn's start, so a re-run after an approval sees the same figures.
        budgetRemaining: (/** @type {string | undefined} */ kind) =>
          kind === undefined
            ? copyOf(Object.fromEntries(BUDGET_KINDS.map((k) => [k, gate.remaining(turn.budgetAtStart, k)])))
            : gate.remaining(turn.budgetAtStart, kind),
        allowed: (/** @type {string} */ op) => this.allowed(op),
      },
    };
    let result;
    try {
      result = await run(turn.code, {
        globals,
        filename: `turn-${turn.turnNumber}.js`,
        limits: { ...this.#limits, timeoutMs: Math.max(1, Math.floor(timeoutMs)) },
        signal: controller.signal,
        deterministic: { seed: turn.seed, now: turn.now },
      });
    } finally {
      signal?.removeEventListener('abort', onAbort);
      await gate.close();
    }
    const wallOver = this.#ledger.record('wallMs', result.stats.wallMs);
    const stop = gate.stop;
    /** @type {TurnOutcome} */
    let outcome;
    let keep = false;
    if (stop?.kind === 'approval') {
      this.#pending = { ...turn, worldLog: gate.worldLog };
      this.#status = 'paused';
      outcome = { tag: 'needs-approval', requests: this.pendingApprovals };
    } else if (stop?.kind === 'needs') {
      keep = true;
      outcome = { tag: 'needs', question: stop.question };
    } else if (stop?.kind === 'budget') {
      outcome = this.#outOfBudget(stop.budget, stop.message);
    } else if (stop) {
      outcome = errorOutcome(stop.code, stop.message);
      if (stop.kind === 'policy') outcome = /** @type {TurnOutcome} */ ({ ...outcome, rule: stop.rule });
    } else if (
      !result.ok &&
      result.error.code === 'TIMEOUT' &&
      wallLeft !== null &&
      wallLeft <= (this.#limits?.timeoutMs ?? DEFAULT_TURN_TIMEOUT_MS)
    ) {
      outcome = this.#outOfBudget('wallMs', "the session's wallMs budget is used up");
    } else if (!result.ok) {
      const { code, message, line, column, frame, name } = result.error;
      outcome = { tag: 'error', code, message, name, ...(line !== undefined ? { line, column, frame } : {}) };
    } else if (wallOver) {
      outcome = this.#outOfBudget('wallMs', wallOver.message);
    } else {
      keep = true;
      outcome = { tag: 'ok', value: result.value };
    }
    if (keep) {
      let nextEnv;
      try {
        nextEnv = plainCopy(env, 'env');
        if (JSON.stringify(nextEnv).length > MAX_ENV_CHARS) {
          throw sessionError(
            'INVALID_INPUT',
            `env holds more than ${MAX_ENV_CHARS / (1 << 20)} MiB of JSON`,
            RangeError,
          );
        }
      } catch (e) {
        keep = false;
        outcome = errorOutcome(
          'INVALID_INPUT',
          (e instanceof Error ? e.message : String(e)).replace(/^INVALID_INPUT: /, ''),
        );
      }
      if (keep) {
        const committed = this.#land(work, origin, turn.turnNumber);
        if (committed.error) {
          outcome = errorOutcome(committed.error.code, committed.error.message);
        } else {
          this.#env = nextEnv;
          if (outcome.tag === 'ok' && committed.proposed) outcome = { tag: 'proposed', value: outcome.value };
        }
      }
    }
    if (outcome.tag !== 'needs-approval') {
      this.#ledger.journalClear();
      this.#pending = null;
    }
    const existing = this.#turns.findIndex((t) => t.turnNumber === turn.turnNumber);
    const record = {
      turnNumber: turn.turnNumber,
      code: turn.code,
      outcome: outcome.tag,
      startedAt,
      wallMs: result.stats.wallMs,
    };
    if (existing >= 0) this.#turns[existing] = record;
    else this.#turns.push(record);
    work.dispose();
    return this.#result(turn.turnNumber, outcome, result);
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
    return {
      tag: 'nonconverged',
      reason: 'budget',
      code: 'BUDGET_EXCEEDED',
      budget: /** @type {import('./index.js').BudgetKind} */ (budget),
      message,
    };
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
    const changed = work.changesSince(origin, 0).length > 0;
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
      return { proposed: false, error: { code: err.code ?? 'INTERNAL', message: err.message ?? String(e) } };
    }
  }

  /**
   * @param {number} turnNumber
   * @param {TurnOutcome} outcome
   * @param {import('../index.js').RunResult} result
   * @returns {TurnResult}
   */
  #result(turnNumber, outcome, result) {
    return { turnNumber, outcome, budgetRemaining: this.budgetRemaining(), proposals: this.proposals(), result };
  }

  /**
   * A turn refused before it ran.
   * @param {TurnOutcome} outcome
   * @returns {TurnResult}
   */
  #refused(outcome) {
    const message = 'message' in outcome ? String(outcome.message) : outcome.tag;
    const code = 'code' in outcome ? String(outcome.code) : 'SESSION_STATE';
    return this.#result(this.#turnNumber, outcome, failedResult(/** @type {any} */ (code), 'SessionError', message));
  }

  /**
   * Before a turn runs, a managed session claims it: the unchanged state is saved with
   * compare-and-set, so of two processes starting a turn on the same version only one goes on,
   * and the other runs nothing (its operations, with their side effects, never start). Returns
   * the refusal for the loser.
   * @returns {Promise<TurnOutcome | null>}
   */
  async #claim() {
    const hooks = storeHooks.get(this);
    if (!hooks) return null;
    const stale = errorOutcome(
      'SESSION_CONFLICT',
      'another process has advanced this session since it was loaded; load it again',
    );
    if (!(await hooks.check())) return stale;
    try {
      await hooks.save((binding) => this.#encode(binding));
      return null;
    } catch (e) {
      if (/** @type {{ code?: string }} */ (e)?.code !== 'SESSION_CONFLICT') throw e;
      return stale;
    }
  }

  /**
   * Saves through the manager's store after a turn; a store that moved on turns the result
   * into SESSION_CONFLICT.
   * @param {TurnResult} result
   */
  async #finish(result) {
    const hooks = storeHooks.get(this);
    if (!hooks) return result;
    try {
      await hooks.save((binding) => this.#encode(binding));
      return result;
    } catch (e) {
      if (/** @type {{ code?: string }} */ (e)?.code !== 'SESSION_CONFLICT') throw e;
      return { ...result, outcome: errorOutcome('SESSION_CONFLICT', /** @type {Error} */ (e).message) };
    }
  }

  /** The staged changes (proposal mode), sorted by path. */
  proposals() {
    if (!this.#staged) return [];
    return this.#staged.changesSince(this.#stagedOrigin ?? this.#world).map((c) => ({
      path: c.path,
      kind: c.kind,
      dir: c.dir,
      before: c.before ? new Uint8Array(c.before) : null,
      after: c.after ? new Uint8Array(c.after) : null,
      ...(c.diff !== undefined && c.diff !== null ? { diff: c.diff } : {}),
    }));
  }

  /**
   * Applies the proposals to the world as one history entry; returns its id (null when there
   * was nothing to apply). `CONFLICT` if the world changed under them (nothing applied).
   */
  commit() {
    this.#idle('commit');
    if (this.#pending)
      throw sessionError('SESSION_STATE', 'a turn is waiting for approval: resume or abort it before commit()');
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
      throw sessionError('SESSION_STATE', 'a turn is waiting for approval: resume or abort it before rollback()');
    this.#staged = null;
    this.#stagedOrigin = null;
  }

  /** Ends the session: proposals and any paused turn are discarded; status `aborted`. */
  abort() {
    this.#idle('abort');
    this.#staged = null;
    this.#stagedOrigin = null;
    this.#pending = null;
    this.#ledger.journalClear();
    this.#status = 'aborted';
  }

  /** Marks the session `completed`; later turns are refused. */
  complete() {
    this.#idle('complete');
    if (this.#pending) throw sessionError('SESSION_STATE', 'a turn is waiting for approval; resume or abort first');
    this.#status = 'completed';
  }

  /** Pauses an active session; `resume()` makes it active again. */
  pause() {
    this.#idle('pause');
    if (this.#status !== 'active') throw sessionError('SESSION_STATE', `a ${this.#status} session cannot be paused`);
    this.#status = 'paused';
  }

  /** @param {string} what */
  #idle(what) {
    if (this.#busy) throw sessionError('SESSION_STATE', `${what}() while a turn is running`);
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
          pending: this.#pending,
        },
        ledger: this.#ledger.save(),
        world: this.#world.toZip({ compress: false }),
        staged: this.#staged?.toZip({ compress: false }) ?? null,
        stagedOrigin: this.#stagedOrigin?.toZip({ compress: false }) ?? null,
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
    });
    session.#restoreState(snap);
    return session;
  }

  /** @param {ReturnType<typeof decodeSnapshot>} snap */
  #restoreState(snap) {
    const meta = snap.meta;
    if (!STATUSES.includes(meta.status))
      throw sessionError('INVALID_INPUT', `the snapshot's status ${meta.status} is unknown`);
    this.#ledger = SessionLedger.restore(this.#ledgerPolicy(), snap.ledger);
    this.#status = meta.status;
    this.#createdAt = meta.createdAt;
    this.#turnNumber = meta.turnNumber;
    this.#turns = meta.turns;
    this.#pending = meta.pending;
    this.#staged = snap.staged;
    this.#stagedOrigin = snap.stagedOrigin;
  }
}

/**
 * Lets a SessionManager check the store before each turn and save after it. `save` is given the
 * encoder, so the manager binds the snapshot to the version it is about to store it as.
 * @param {Session} session
 * @param {{ check(): Promise<boolean>,
 *   save(encode: (binding: import('./snapshot.js').SnapshotBinding) => Buffer): Promise<void> }} hooks
 */
function attachStore(session, hooks) {
  storeHooks.set(session, hooks);
}

module.exports = { Session, attachStore, snapshotBound, restoreBound, BUDGET_KINDS };
