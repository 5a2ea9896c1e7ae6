'use strict';
// Running one turn: a working copy of the world, the guest's globals (`world`, the operations,
// `env`, `needs`, `session`) over the turn's gate, the run itself, and the outcome that the run
// and the gate's stop give. What lands where afterwards (the world, the proposals, `env`, the
// session's status) is the session's to decide.

const { ErrorCode } = require('../errors.js');
const binding = require('../native/load.js');
const { run, copyOf, withNativeWorld } = require('../run.js');
const { sessionError } = require('./errors.js');
const { BUDGET_KINDS, plainCopy, budgetFigures, errorOutcome } = require('./options.js');
const { accessRulesOf } = require('./policy.js');
const { Gate, stopOf } = require('./turn.js');
const { worldFor, operationGlobals } = require('./world.js');

const DEFAULT_TURN_TIMEOUT_MS = 30_000;
/** How much JSON `env` may hold across turns (it is saved with every snapshot). */
const MAX_ENV_CHARS = 16 << 20;

/**
 * @typedef {import('./turn.js').Operation} Operation
 * @typedef {import('./turn.js').ApprovalRequest} ApprovalRequest
 * @typedef {import('./index.js').TurnOutcome} TurnOutcome
 * @typedef {import('../index.js').ZipWorkspace} ZipWorkspace
 * @typedef {{ turnNumber: number, code: string, seed: number, now: number, envBefore: unknown,
 *   stateBefore?: Uint8Array | null, requests: ApprovalRequest[], budgetAtStart: Record<string, number | null> }}
 *   PendingTurn `stateBefore`: with persistState, the sealed state the turn starts from (null: none yet)
 * @typedef {{ id: string, ledger: import('../native/binding.js').SessionLedger,
 *   policy: import('./index.js').NormalizedPolicy, operations: Map<string, Operation>,
 *   limits: import('../index.js').Limits | undefined, base: ZipWorkspace,
 *   allowed: (operation: string) => boolean, beforeApproved: (request: ApprovalRequest) => Promise<void>,
 *   durable: import('./turn.js').TurnDurability | null, stateKey: Uint8Array | string | null }} TurnContext
 *   `stateKey`: with persistState, the key the session's state is sealed with (null: turns keep no state)
 */

/**
 * The outcome of a turn that ran out of budget `budget`.
 * @param {string} budget
 * @param {string} message
 * @returns {TurnOutcome}
 */
function outOfBudget(budget, message) {
  return {
    tag: 'nonconverged',
    reason: 'budget',
    code: ErrorCode.BudgetExceeded,
    budget: /** @type {import('./index.js').BudgetKind} */ (budget),
    message,
  };
}

/**
 * The run options that make a turn a REPL cell over the session's state: a script whose
 * top-level bindings are kept, starting from the state before the turn (the same state when a
 * paused turn is re-run). Transactional: a turn that fails writes no state.
 * @param {Uint8Array | string} key
 * @param {Uint8Array | null | undefined} before
 */
function stateOptions(key, before) {
  return {
    mode: /** @type {const} */ ('repl'),
    state: { ...(before ? { bytes: before } : {}), key, transactional: true },
  };
}

/**
 * A cell's `return` outside a function, explained for the model: in these turns the value is
 * the last expression's.
 * @param {TurnOutcome & { tag: 'error' }} outcome
 * @returns {TurnOutcome}
 */
function explainReturn(outcome) {
  if (
    outcome.code !== ErrorCode.EvalError ||
    outcome.name !== 'SyntaxError' ||
    !/return not in a function/.test(outcome.message)
  )
    return outcome;
  return {
    ...outcome,
    message: `${outcome.message} (turns of this session are scripts: their value is the value of the last expression statement, so write the value as the last line instead of return)`,
  };
}

/**
 * Runs a turn whose gate is open (`startTurn` or `resumeTurn`) and closes the gate. `keep` says
 * whether the turn's changes, `env` (then in `env`) and, with persistState, its realm state
 * (then in `state`; null when the run wrote none) may land; an outcome tagged `needs-approval`
 * still lacks its requests, which the session lists.
 * @param {TurnContext} session
 * @param {PendingTurn} turn
 * @param {number | null} wallLeft what is left of the wallMs budget (null: unlimited)
 * @param {AbortSignal | undefined} signal
 * @returns {Promise<{ result: import('../index.js').RunResult, outcome: TurnOutcome, keep: boolean, env: Record<string, unknown>,
 *   state: Uint8Array | null, work: ZipWorkspace, origin: ZipWorkspace, remaining: Record<import('./index.js').BudgetKind, number | null>,
 *   failure: Error | null }>}
 */
async function runTurn(session, turn, wallLeft, signal) {
  const { ledger, policy, limits } = session;
  // The policy narrows whatever rules the host set on the world; it never widens them.
  const rules = accessRulesOf(policy);
  // Native copies, given the class of the world they copy (lib/workspace.js: `dispose`,
  // diagnostics), as `fork()` does.
  const copies = binding.turnCopies(
    /** @type {any} */ (session.base),
    rules.readPatterns,
    rules.writePatterns,
    rules.readOnly,
  );
  const kind = Object.getPrototypeOf(session.base);
  const origin = /** @type {ZipWorkspace} */ (Object.setPrototypeOf(copies.origin, kind));
  const work = /** @type {ZipWorkspace} */ (Object.setPrototypeOf(copies.work, kind));
  const controller = new AbortController();
  const onAbort = () => controller.abort();
  if (signal?.aborted) controller.abort();
  else signal?.addEventListener('abort', onAbort, { once: true });
  const env = structuredClone(turn.envBefore);
  const timeoutMs = Math.min(limits?.timeoutMs ?? DEFAULT_TURN_TIMEOUT_MS, wallLeft ?? Number.POSITIVE_INFINITY);
  const gate = new Gate({
    ledger,
    operations: session.operations,
    requests: turn.requests,
    controller,
    execLimits: limits,
    beforeApproved: session.beforeApproved,
    sessionId: session.id,
    turnNumber: turn.turnNumber,
    durable: session.durable,
  });
  const world = worldFor(gate, () => work, { now: turn.now, seed: turn.seed });
  // The native world answers every call but `exec`, which orchestrates a program run here.
  const nativeWorld = binding.turnWorld(ledger, /** @type {any} */ (work), /** @type {any} */ (origin), turn.now);
  gate.nativeWorld = nativeWorld;
  const globals = {
    ...operationGlobals(session.operations, (name) => gate.operation(name)),
    world: { exec: world.exec },
    env,
    needs: (/** @type {unknown} */ question) => {
      throw gate.halt({ kind: 'needs', question: plainCopy(question ?? null, 'the question') });
    },
    session: {
      id: session.id,
      turnNumber: turn.turnNumber,
      readOnly: policy.worldRules.readOnly,
      proposalMode: policy.worldRules.proposalMode,
      // Counted from the turn's start, so a re-run after an approval sees the same figures.
      budgetRemaining: (/** @type {string | undefined} */ kind) => {
        if (kind !== undefined && !(/** @type {readonly string[]} */ (BUDGET_KINDS).includes(kind)))
          throw new TypeError(`unknown budget ${kind}`);
        const remaining = gate.remaining();
        return kind === undefined
          ? copyOf(remaining)
          : remaining[/** @type {import('./index.js').BudgetKind} */ (kind)];
      },
      allowed: (/** @type {string} */ op) => session.allowed(op),
    },
  };
  let result;
  try {
    const options = {
      globals,
      filename: `turn-${turn.turnNumber}.js`,
      limits: { ...limits, timeoutMs: Math.max(1, Math.floor(timeoutMs)) },
      signal: controller.signal,
      deterministic: { seed: turn.seed, now: turn.now },
      ...(session.stateKey ? stateOptions(session.stateKey, turn.stateBefore) : {}),
    };
    result = await run(turn.code, withNativeWorld(options, nativeWorld));
  } finally {
    signal?.removeEventListener('abort', onAbort);
    await gate.close();
  }
  // The sealed state is the session's to keep, not part of what the turn reports.
  const { state = null, ...reported } = /** @type {import('../index.js').RunResult & { state?: Uint8Array }} */ (
    result
  );
  result = /** @type {import('../index.js').RunResult} */ (reported);
  // The gate closes: operations still running are audited as such; the journal is kept only
  // for a turn that waits for approval (only an operation, called here, waits for one). A stop
  // the native world met on the guest's thread comes back with the gate's end.
  const end = ledger.endTurn(result.stats.wallMs, gate.stop?.kind === 'approval');
  const stop = gate.stop ?? (end.stop ? stopOf(end.stop) : null);
  const wallOver = end.wallOver;
  /** @type {TurnOutcome} */
  let outcome;
  let keep = false;
  if (stop?.kind === 'approval') {
    outcome = { tag: 'needs-approval', requests: [] };
  } else if (stop?.kind === 'needs') {
    keep = true;
    outcome = { tag: 'needs', question: stop.question };
  } else if (stop?.kind === 'budget') {
    outcome = outOfBudget(stop.budget, stop.message);
  } else if (stop) {
    outcome = errorOutcome(stop.code, stop.message);
    if (stop.kind === 'policy') outcome = /** @type {TurnOutcome} */ ({ ...outcome, rule: stop.rule });
  } else if (
    !result.ok &&
    result.error.code === ErrorCode.Timeout &&
    wallLeft !== null &&
    wallLeft <= (limits?.timeoutMs ?? DEFAULT_TURN_TIMEOUT_MS)
  ) {
    outcome = outOfBudget('wallMs', "the session's wallMs budget is used up");
  } else if (!result.ok) {
    const { code, message, line, column, frame, name } = result.error;
    outcome = { tag: 'error', code, message, name, ...(line !== undefined ? { line, column, frame } : {}) };
    if (session.stateKey) outcome = explainReturn(outcome);
  } else if (wallOver) {
    outcome = outOfBudget('wallMs', wallOver.message);
  } else {
    keep = true;
    outcome = { tag: 'ok', value: result.value };
  }
  let nextEnv;
  if (keep) {
    try {
      nextEnv = plainCopy(env, 'env');
      if (JSON.stringify(nextEnv).length > MAX_ENV_CHARS) {
        throw sessionError(
          ErrorCode.InvalidInput,
          `env holds more than ${MAX_ENV_CHARS / (1 << 20)} MiB of JSON`,
          RangeError,
        );
      }
    } catch (e) {
      keep = false;
      outcome = errorOutcome(
        ErrorCode.InvalidInput,
        (e instanceof Error ? e.message : String(e)).replace(/^INVALID_INPUT: /, ''),
      );
    }
  }
  return {
    result,
    outcome,
    keep,
    env: nextEnv,
    state: keep ? state : null,
    work,
    origin,
    remaining: budgetFigures(end.remaining),
    failure: gate.failure,
  };
}

module.exports = { runTurn, outOfBudget };
