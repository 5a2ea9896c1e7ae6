'use strict';
// One turn's calls into the host: `world.*` calls and host operations. Each passes the native
// gate (`SessionLedger#admit`) before it runs, the one place where the policy is checked, the
// budget charged, a re-run answered from the journal and refusals audited, and is settled there
// after (`SessionLedger#settle`: audit, journal, usage). A refusal, an exhausted budget,
// `needs()` or an operation awaiting approval stops the turn at once: the gate records why and
// cancels the run, so the guest cannot catch it and go on. What stays here is what is user
// JavaScript: calling the host's operations and its `needsApproval` predicates.

const { ErrorCode } = require('../errors.js');
const { createHash } = require('node:crypto');
const { AsyncLocalStorage } = require('node:async_hooks');
const { sessionError } = require('./errors.js');
const { copyOf } = require('../run.js');
const { observeOperation } = require('../telemetry/hooks.js');

/**
 * What the guest receives: objects as copies (results are data; a proxy would cross into the
 * host on every property read), primitives as they are.
 * @param {unknown} value
 */
function toGuest(value) {
  return value !== null && typeof value === 'object' ? copyOf(value) : value;
}

/**
 * What is wrong with an operation's reported usage, or null: tokens and cost must be finite
 * numbers ≥ 0 when given.
 * @param {unknown} usage
 * @returns {string | null}
 */
function badUsage(usage) {
  if (usage === undefined || usage === null) return null;
  if (typeof usage !== 'object') return `usage that is not an object`;
  for (const kind of ['tokens', 'cost']) {
    const v = /** @type {Record<string, unknown>} */ (usage)[kind];
    if (v !== undefined && !(typeof v === 'number' && Number.isFinite(v) && v >= 0)) {
      return `usage.${kind} = ${String(v)}; it must be a finite number ≥ 0`;
    }
  }
  return null;
}

/**
 * Whether a value holds a function anywhere (a guest callback, a `toJSON`): world calls take
 * data only, so what is audited is what runs.
 * @param {unknown} value
 * @param {number} depth
 * @returns {boolean}
 */
function holdsFunction(value, depth = 0) {
  if (typeof value === 'function') return true;
  if (value === null || typeof value !== 'object' || depth > 64 || ArrayBuffer.isView(value)) return false;
  for (const v of Object.values(value)) if (holdsFunction(v, depth + 1)) return true;
  return false;
}

/** Longest string argument kept in an audit entry before the ledger cuts the whole text. */
const ARG_TEXT_LIMIT = 4096;

/**
 * JSON text of a value for the audit log and journal; long strings are cut first so a large
 * write is not copied whole. `undefined` gives `undefined`.
 * @param {unknown} value
 */
function auditJson(value) {
  try {
    return JSON.stringify(value, (_key, v) => {
      if (typeof v === 'string' && v.length > ARG_TEXT_LIMIT)
        return `${v.slice(0, ARG_TEXT_LIMIT)}…[${v.length} chars]`;
      if (typeof v === 'bigint') return `${v}n`;
      if (v instanceof Uint8Array) return `<${v.length} bytes>`;
      return v;
    });
  } catch (e) {
    return JSON.stringify(`<not JSON: ${e instanceof Error ? e.message : String(e)}>`);
  }
}

/**
 * Exact JSON text of an operation's arguments or result (the journal replays it).
 * @param {unknown} value
 * @param {string} what
 */
function exactJson(value, what) {
  try {
    return JSON.stringify(value);
  } catch (e) {
    throw Object.assign(new TypeError(`${what} is not JSON data: ${e instanceof Error ? e.message : String(e)}`), {
      name: 'TypeError',
    });
  }
}

/**
 * What identifies a world call for a re-run: the operation and its exact arguments (bytes
 * included), long ones by their SHA-256, so two long writes that only differ late are told apart.
 * @param {string} operation
 * @param {unknown[]} args
 */
function worldKey(operation, args) {
  const text = JSON.stringify(args, (_key, v) => {
    if (v instanceof Uint8Array) return { bytes: Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64') };
    if (typeof v === 'bigint') return `${v}n`;
    return v;
  });
  // Short arguments are kept as they are; long ones (a large write) by their digest.
  if (text === undefined || text.length <= 256) return `${operation}\n${text}`;
  return `${operation}\n#${createHash('sha256').update(text).digest('hex')}`;
}

/**
 * The error a journal entry records, as JSON text of its name and message.
 * @param {string} name
 * @param {string} message
 */
function journalError(name, message) {
  return JSON.stringify({ name, message });
}

/**
 * @param {string} recorded
 * @returns {{ name: string, message: string }}
 */
function replayedError(recorded) {
  try {
    const e = JSON.parse(recorded);
    if (e && typeof e.name === 'string' && typeof e.message === 'string') return e;
  } catch {}
  return { name: 'Error', message: recorded };
}

/**
 * An error as the guest sees it: name and message only.
 * @param {string} name
 * @param {string} message
 */
function guestError(name, message) {
  const e = new Error(message);
  e.name = name;
  return e;
}

/**
 * @param {unknown} e
 */
function messageOf(e) {
  if (e instanceof Error) return e.message;
  return String(e);
}

/**
 * @typedef {{ kind: 'policy', code: import('../native/binding.js').ErrorCode, rule: string, message: string }
 *   | { kind: 'budget', code: import('../native/binding.js').ErrorCode, budget: string, message: string }
 *   | { kind: 'needs', question: unknown }
 *   | { kind: 'approval' }
 *   | { kind: 'diverged', code: import('../native/binding.js').ErrorCode, message: string }
 *   | { kind: 'invalid', code: import('../native/binding.js').ErrorCode, message: string }
 *   | { kind: 'limit', code: import('../native/binding.js').ErrorCode, message: string }} Stop
 * @typedef {{ handler: (...args: any[]) => unknown, needsApproval: boolean | ((...args: any[]) => boolean),
 *   network: boolean, idempotent?: boolean, description?: string, inputSchema?: object }} Operation
 * @typedef {{ journal: import('./store-hooks.js').DurableJournal, now: number, interrupted: Set<number> }} TurnDurability
 * @typedef {{ id: string, operation: string, args: unknown[], status: 'pending' | 'approved' | 'rejected' | 'started',
 *   value?: unknown, hasValue?: boolean, reason?: string }} ApprovalRequest
 * @typedef {import('../native/binding.js').GateStop} GateStop
 */

/**
 * The turn's stop for a stop of the native gate.
 * @param {GateStop} stop
 * @returns {Stop}
 */
function stopOf(stop) {
  switch (stop.kind) {
    case 'policy':
      return { kind: 'policy', code: ErrorCode.PolicyViolation, rule: stop.rule ?? '', message: stop.message };
    case 'budget':
      return { kind: 'budget', code: ErrorCode.BudgetExceeded, budget: stop.budget ?? '', message: stop.message };
    case 'limit':
      return { kind: 'limit', code: ErrorCode.HostCallLimit, message: stop.message };
    case 'diverged':
      return { kind: 'diverged', code: ErrorCode.ReplayDiverged, message: stop.message };
    case 'approval':
      return { kind: 'approval' };
    default:
      return { kind: 'invalid', code: ErrorCode.InvalidInput, message: stop.message };
  }
}

class Gate {
  /**
   * Opens the native gate for the turn (`SessionLedger#startTurn` or `#resumeTurn` did) and
   * holds what the JavaScript side of the turn needs.
   * @param {{
   *   ledger: import('../native/binding.js').SessionLedger,
   *   operations: Map<string, Operation>,
   *   requests: ApprovalRequest[],
   *   controller: AbortController,
   *   execLimits: object | undefined,
   *   beforeApproved: (request: ApprovalRequest) => Promise<void>,
   *   sessionId: string,
   *   turnNumber: number,
   *   durable: TurnDurability | null,
   * }} setup
   */
  constructor(setup) {
    this.sessionId = setup.sessionId;
    this.turnNumber = setup.turnNumber;
    this.durable = setup.durable;
    /**
     * Why the durable journal could not be written, when it could not: the turn is stopped
     * and the session throws this instead of keeping anything.
     * @type {Error | null}
     */
    this.failure = null;
    this.ledger = setup.ledger;
    this.operations = setup.operations;
    this.requests = setup.requests;
    this.controller = setup.controller;
    this.limits = setup.execLimits;
    this.beforeApproved = setup.beforeApproved;
    /** @type {Stop | null} */
    this.stop = null;
    /** Host operations run one at a time, in call order, so a re-run meets them in the journal's order. */
    /** @type {Promise<unknown>} */
    this.queue = Promise.resolve();
    /** Set when the run has ended: calls still in flight no longer reach the journal. */
    this.closed = false;
    /** Ends programs that `world.exec` started and the guest did not wait for. */
    this.turnEnd = new AbortController();
    /** @type {Set<Promise<unknown>>} */
    this.inFlight = new Set();
    /**
     * The turn's native `world`, when the run has one: halted with the turn, so no world call
     * runs after `needs()`, a refusal seen here, or the run's end.
     * @type {{ halt(): void } | null}
     */
    this.nativeWorld = null;
  }

  /**
   * After the run: stops what the guest left running (programs are cancelled; operations that
   * have not started never start) and waits for programs to settle, so nothing the turn began
   * touches its working copy afterwards. The native gate audits operations still running when
   * the session ends the turn.
   */
  async close() {
    this.closed = true;
    // The native world needs no halt here: it lives in the run's realm, which has ended.
    this.turnEnd.abort();
    await Promise.allSettled([...this.inFlight]);
  }

  execLimits() {
    return this.limits;
  }

  /**
   * Ends the turn for `stop` and cancels the run; the returned error is thrown to the guest
   * (which cannot catch its way past the cancellation).
   * @param {Stop} stop
   */
  halt(stop) {
    this.stop ??= stop;
    this.nativeWorld?.halt();
    this.controller.abort();
    return guestError('TurnStopped', 'the turn was stopped by the session');
  }

  /**
   * A `world.*` call. World calls run again when a paused turn is re-run (they only touch the
   * turn's own working copy); those that ran before the pause, with the same arguments, are not
   * charged or audited twice (`fresh` is false). A re-run whose calls differ from the first
   * run's has diverged and stops.
   * @template T
   * @param {string} operation
   * @param {unknown[]} args
   * @param {(fresh: boolean) => T} body runs the call; an asynchronous one (a program run)
   *   resolves to `{ value, bytesWritten }`
   * @param {number} [bytes] what the call is about to write, charged before it runs
   * @returns {T}
   */
  world(operation, args, body, bytes) {
    if (this.stop) throw guestError('TurnStopped', 'the turn was stopped by the session');
    if (holdsFunction(args)) throw guestError('TypeError', `${operation}: the arguments must be data (no functions)`);
    const argsJson = auditJson(args.filter((a) => a !== undefined)) ?? '[]';
    const admitted = this.ledger.admit({
      kind: 'world',
      operation,
      args: argsJson,
      key: worldKey(operation, args),
      bytes,
    });
    if (admitted.kind !== 'run') throw this.halt(stopOf(/** @type {GateStop} */ (admitted.stop)));
    const callId = /** @type {number} */ (admitted.callId);
    const fresh = admitted.fresh !== false;
    /** @param {unknown} e */
    const failed = (e) => {
      if (this.stop) throw e;
      const code = /** @type {{ code?: string }} */ (e)?.code;
      const message = messageOf(e);
      this.ledger.settle(callId, { error: code ? `${code}: ${message}` : message });
      if (code === ErrorCode.PolicyViolation) {
        throw this.halt({
          kind: 'policy',
          code: ErrorCode.PolicyViolation,
          rule: 'worldRules',
          message: `${operation}: ${message}`,
        });
      }
      throw guestError(
        code ? 'WorldError' : e instanceof Error ? e.name : 'Error',
        code ? `${code}: ${message}` : message,
      );
    };
    /**
     * @param {unknown} value
     * @param {number} [bytesWritten] what a program wrote, known afterwards
     */
    const settled = (value, bytesWritten) => {
      const stop = this.ledger.settle(callId, { result: auditJson(value), bytesWritten });
      if (stop) throw this.halt(stopOf(stop));
      return toGuest(value);
    };
    let out;
    try {
      out = body(fresh);
    } catch (e) {
      return failed(e);
    }
    if (out instanceof Promise) {
      const result = out.then(
        (/** @type {{ value: unknown, bytesWritten: number }} */ r) => settled(r.value, r.bytesWritten),
        failed,
      );
      const tracked = result.catch(() => undefined);
      this.inFlight.add(tracked);
      tracked.then(() => this.inFlight.delete(tracked));
      return /** @type {T} */ (/** @type {unknown} */ (result));
    }
    return /** @type {T} */ (settled(out));
  }

  /**
   * The guest-callable function of host operation `name`.
   * @param {string} name
   */
  operation(name) {
    return (/** @type {unknown[]} */ ...args) => {
      const job = this.queue.then(() => this.callOperation(name, args));
      this.queue = job.catch(() => undefined);
      return job;
    };
  }

  /**
   * @param {string} name
   * @param {unknown[]} args
   */
  async callOperation(name, args) {
    if (this.stop || this.closed) throw guestError('TurnStopped', 'the turn was stopped by the session');
    const op = /** @type {Operation} */ (this.operations.get(name));
    let argsJson;
    try {
      argsJson = exactJson(args, `the arguments of ${name}`);
    } catch (e) {
      throw guestError('TypeError', messageOf(e));
    }
    // Everything below sees the arguments as the handler will: parsed back from the JSON text
    // (a guest `toJSON` cannot show the checks one thing and the handler another).
    const parsed = /** @type {unknown[]} */ (JSON.parse(argsJson));
    const approval = typeof op.needsApproval === 'function' ? 'ask' : op.needsApproval ? 'always' : 'never';
    let admitted = this.ledger.admit({ kind: 'operation', operation: name, args: argsJson, approval });
    if (admitted.kind === 'ask') {
      const needed = Boolean(/** @type {Function} */ (op.needsApproval)(...structuredClone(parsed)));
      admitted = this.ledger.admit({
        kind: 'operation',
        operation: name,
        args: argsJson,
        approval: needed ? 'always' : 'never',
      });
    }
    if (admitted.kind === 'replay') {
      if (admitted.error !== undefined && admitted.error !== null) {
        const e = replayedError(admitted.error);
        throw guestError(e.name, e.message);
      }
      const recorded = JSON.parse(admitted.value ?? '{}');
      return 'value' in recorded ? toGuest(recorded.value) : undefined;
    }
    if (admitted.kind !== 'run') {
      const stop = /** @type {GateStop} */ (admitted.stop);
      if (stop.kind === 'approval') {
        this.requests.push({
          id: /** @type {string} */ (stop.requestId),
          operation: name,
          args: structuredClone(parsed),
          status: 'pending',
        });
      }
      throw this.halt(stopOf(stop));
    }
    const callId = /** @type {number} */ (admitted.callId);
    const seq = admitted.seq ?? 0;
    const request = admitted.request ? this.requests.find((r) => r.id === admitted.request) : undefined;
    const interrupted = !request && this.durable?.interrupted.has(seq);
    if (interrupted && !op.idempotent) {
      // A worker died while this call ran: it may have taken effect. At most once.
      const message = `${name} was running when its worker stopped; it may have taken effect, so it is not run again (an operation declared idempotent runs again with the same idempotencyKey)`;
      const error = journalError('OperationInterrupted', message);
      this.ledger.settle(callId, { error });
      await this.#completed(seq, name, argsJson, { error });
      throw guestError('OperationInterrupted', message);
    }
    if (request?.status === 'started' && !op.idempotent) {
      // The host stopped while this approved call ran: it may have taken effect. At most once.
      const message = `${name} was approved and started before the session was interrupted; it may have run, so it is not run again`;
      this.ledger.settle(callId, { error: journalError('ApprovalInterrupted', message) });
      throw guestError('ApprovalInterrupted', message);
    }
    if (request?.status === 'rejected') {
      const message = `${name} was rejected${request.reason ? `: ${request.reason}` : ''}`;
      this.ledger.settle(callId, { error: journalError('ApprovalRejected', message) });
      throw guestError('ApprovalRejected', message);
    }
    if (request?.status === 'approved' && !request.hasValue) await this.beforeApproved(request);
    const context = Object.freeze({
      sessionId: this.sessionId,
      turnNumber: this.turnNumber,
      operation: name,
      seq,
      idempotencyKey: `${this.sessionId}:${this.turnNumber}:${seq}`,
      rerun: Boolean(interrupted),
    });
    await this.#durably(() => this.durable?.journal.started({ ...context, args: argsJson }));
    let out;
    try {
      out = request?.hasValue
        ? request.value
        : await observeOperation(context, argsJson, () =>
            operationContexts.run(context, () => op.handler.call(context, ...structuredClone(parsed))),
          );
    } catch (e) {
      if (this.stop || this.closed) throw e;
      const message = messageOf(e);
      const errorName = e instanceof Error ? e.name : 'Error';
      const error = journalError(errorName, message);
      this.ledger.settle(callId, { error });
      await this.#completed(seq, name, argsJson, { error });
      throw guestError(errorName, message);
    }
    /** @type {{ tokens?: number, cost?: number } | undefined} */
    let usage;
    if (out !== null && typeof out === 'object' && 'value' in out && 'usage' in out) {
      usage = /** @type {any} */ (out).usage ?? undefined;
      out = /** @type {any} */ (out).value;
    }
    // Settled after its turn ended: already audited as still running; only its usage counts.
    const late = this.closed;
    const usageProblem = badUsage(usage);
    /** @type {string | undefined} */
    let json;
    try {
      if (usageProblem) throw new TypeError(`${name} reported ${usageProblem}`);
      json = out === undefined ? undefined : exactJson(out, `the result of ${name}`);
    } catch (e) {
      if (late) throw e;
      const stop = this.ledger.settle(callId, { error: messageOf(e), invalid: true });
      throw this.halt(stop ? stopOf(stop) : { kind: 'invalid', code: ErrorCode.InvalidInput, message: messageOf(e) });
    }
    if (late) {
      this.ledger.lateUsage(usage?.tokens ?? 0, usage?.cost ?? 0);
      throw guestError('TurnStopped', 'the turn has ended');
    }
    // The journal keeps the value and the usage it reported: a re-run answers with both.
    const entry = `{${json === undefined ? '' : `"value":${json},`}"usage":${JSON.stringify({ tokens: usage?.tokens, cost: usage?.cost })}}`;
    const stop = this.ledger.settle(callId, {
      result: request?.hasValue ? auditJson({ approvedValue: out }) : auditJson(out),
      journal: entry,
      tokens: usage?.tokens,
      cost: usage?.cost,
    });
    await this.#completed(seq, name, argsJson, { value: entry });
    if (stop) throw this.halt(stopOf(stop));
    return json === undefined ? undefined : toGuest(JSON.parse(json));
  }

  /**
   * Keeps how an operation call ended in the durable journal, before the guest sees it.
   * @param {number} seq
   * @param {string} operation
   * @param {string} args
   * @param {{ value?: string, error?: string }} ended
   */
  async #completed(seq, operation, args, ended) {
    await this.#durably(() =>
      this.durable?.journal.completed({ turnNumber: this.turnNumber, seq, operation, args, ...ended }),
    );
  }

  /**
   * Writes to the durable journal; when that fails the turn stops (nothing of it is kept) and
   * the session throws UNAVAILABLE, so whoever runs the turn retries it.
   * @param {() => Promise<void> | undefined} write
   */
  async #durably(write) {
    if (!this.durable) return;
    try {
      await write();
    } catch (e) {
      this.failure ??= sessionError(ErrorCode.Unavailable, `the turn's journal could not be written: ${messageOf(e)}`);
      throw this.halt({ kind: 'invalid', code: ErrorCode.Unavailable, message: this.failure.message });
    }
  }

  /**
   * What is left of every budget at this point of the turn, counted from its start (the same
   * on a re-run); wall time as at the start.
   * @returns {Record<import('./index.js').BudgetKind, number | null>}
   */
  remaining() {
    const r = this.ledger.turnRemaining();
    return {
      turns: r.turns ?? null,
      wallMs: r.wallMs ?? null,
      hostCalls: r.hostCalls ?? null,
      bytesWritten: r.bytesWritten ?? null,
      tokens: r.tokens ?? null,
      cost: r.cost ?? null,
    };
  }
}

/**
 * The context of the operation call running now: the handler's `this`, and what
 * `operationContext()` answers anywhere in the code the handler runs.
 * @type {AsyncLocalStorage<OperationContext>}
 * @typedef {Readonly<{ sessionId: string, turnNumber: number, operation: string, seq: number,
 *   idempotencyKey: string, rerun: boolean }>} OperationContext
 */
const operationContexts = new AsyncLocalStorage();

/**
 * The context of the host operation whose handler is running (undefined outside one):
 * `idempotencyKey` is the same every time the call is run again, so an idempotent operation
 * can pass it to a service that deduplicates.
 * @returns {OperationContext | undefined}
 */
function operationContext() {
  return operationContexts.getStore();
}

module.exports = { Gate, auditJson, stopOf, operationContext };
