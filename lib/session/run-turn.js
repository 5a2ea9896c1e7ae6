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
 *   requests: ApprovalRequest[], budgetAtStart: Record<string, number | null> }} PendingTurn
 * @typedef {{ id: string, ledger: import('../native/binding.js').SessionLedger,
 *   policy: import('./index.js').NormalizedPolicy, operations: Map<string, Operation>,
 *   limits: import('../index.js').Limits | undefined, base: ZipWorkspace,
 *   allowed: (operation: string) => boolean, beforeApproved: (request: ApprovalRequest) => Promise<void>,
 *   durable: import('./turn.js').TurnDurability | null }} TurnContext
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
 * Runs a turn whose gate is open (`startTurn` or `resumeTurn`) and closes the gate. `keep` says
 * whether the turn's changes and `env` (then in `env`) may land; an outcome tagged
 * `needs-approval` still lacks its requests, which the session lists.
 * @param {TurnContext} session
 * @param {PendingTurn} turn
 * @param {number | null} wallLeft what is left of the wallMs budget (null: unlimited)
 * @param {AbortSignal | undefined} signal
 * @returns {Promise<{ result: import('../index.js').RunResult, outcome: TurnOutcome, keep: boolean, env: Record<string, unknown>,
 *   work: ZipWorkspace, origin: ZipWorkspace, remaining: Record<import('./index.js').BudgetKind, number | null>,
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
    };
    result = await run(turn.code, withNativeWorld(options, nativeWorld));
  } finally {
    signal?.removeEventListener('abort', onAbort);
    await gate.close();
  }
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
    work,
    origin,
    remaining: budgetFigures(end.remaining),
    failure: gate.failure,
  };
}

module.exports = { runTurn, outOfBudget };
