'use strict';
// One turn's gate: the single place where a guest's call of `world.*` or a host operation is
// checked against the policy, charged to the budget, audited and journalled before it runs.
// A refusal, an exhausted budget, `needs()` or an operation awaiting approval stops the turn at
// once: the gate records why and cancels the run, so the guest cannot catch it and go on.

const { createHash } = require('node:crypto');
const { copyOf } = require('../run.js');
const { ruleRefusal } = require('./policy.js');

/**
 * What the guest receives: objects as copies (results are data; a proxy would cross into the
 * host on every property read), primitives as they are.
 * @param {unknown} value
 */
function toGuest(value) {
  return value !== null && typeof value === 'object' ? copyOf(value) : value;
}

/** How much JSON the results of one turn's operations may hold (the journal keeps them). */
const MAX_JOURNAL_CHARS = 64 << 20;

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

/**
 * Where JSON data holds a `__proto__` key, as a path (`args[1].options`), or null. Host code
 * reads such a key as a prototype when it merges the data (`Object.assign`, spreads into a
 * target, `for…in` copies), so an operation never receives one. Linear in the data's size.
 * @param {unknown[]} args
 * @returns {string | null}
 */
function protoKeyPath(args) {
  // Each container remembers its parent and its key, so the path is spelled out only once found
  // (building it for every container would cost the depth times over).
  /** @type {{ parent: number, label: string }[]} */
  const nodes = [];
  /** @type {[unknown, number][]} */
  const pending = [];
  for (let i = args.length - 1; i >= 0; i--)
    pending.push([args[i], nodes.push({ parent: -1, label: `args[${i}]` }) - 1]);
  while (pending.length > 0) {
    const [value, node] = /** @type {[unknown, number]} */ (pending.pop());
    if (value === null || typeof value !== 'object') continue;
    if (!Array.isArray(value) && Object.hasOwn(value, '__proto__')) {
      const labels = [];
      for (let n = node; n >= 0; n = nodes[n].parent) labels.push(nodes[n].label);
      return labels.reverse().join('').slice(0, 200);
    }
    for (const [key, v] of Object.entries(value)) {
      if (v === null || typeof v !== 'object') continue;
      const label = Array.isArray(value) ? `[${key}]` : `.${key.slice(0, 40)}`;
      pending.push([v, nodes.push({ parent: node, label }) - 1]);
    }
  }
  return null;
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
 * @typedef {{ kind: 'policy', code: 'POLICY_VIOLATION', rule: string, message: string }
 *   | { kind: 'budget', code: 'BUDGET_EXCEEDED', budget: string, message: string }
 *   | { kind: 'needs', question: unknown }
 *   | { kind: 'approval' }
 *   | { kind: 'diverged', code: 'REPLAY_DIVERGED', message: string }
 *   | { kind: 'invalid', code: 'INVALID_INPUT', message: string }
 *   | { kind: 'limit', code: 'HOST_CALL_LIMIT', message: string }} Stop
 * @typedef {{ handler: (...args: any[]) => unknown, needsApproval: boolean | ((...args: any[]) => boolean),
 *   network: boolean, description?: string, inputSchema?: object }} Operation
 * @typedef {{ id: string, operation: string, args: unknown[], status: 'pending' | 'approved' | 'rejected' | 'started',
 *   value?: unknown, hasValue?: boolean, reason?: string }} ApprovalRequest
 */

class Gate {
  /**
   * @param {{
   *   ledger: import('../native/binding.js').SessionLedger,
   *   policy: import('./index.js').NormalizedPolicy,
   *   operations: Map<string, Operation>,
   *   turnNumber: number,
   *   requests: ApprovalRequest[],
   *   worldLog: string[],
   *   controller: AbortController,
   *   execLimits: object | undefined,
   *   callsPerTurn: number,
   *   beforeApproved: (request: ApprovalRequest) => Promise<void>,
   * }} setup
   */
  constructor(setup) {
    this.ledger = setup.ledger;
    this.policy = setup.policy;
    this.operations = setup.operations;
    this.turnNumber = setup.turnNumber;
    this.requests = setup.requests;
    this.worldLog = setup.worldLog;
    this.controller = setup.controller;
    this.limits = setup.execLimits;
    this.callsPerTurn = setup.callsPerTurn;
    this.calls = 0;
    this.beforeApproved = setup.beforeApproved;
    /** Bytes of results this turn's journal holds (it travels with a paused turn's snapshot). */
    this.journalBytes = 0;
    /**
     * What this turn has used so far, counted the same way on a re-run (replayed calls
     * included), so `session.budgetRemaining` answers the same at the same point.
     */
    this.used = { hostCalls: 0, bytesWritten: 0, tokens: 0, cost: 0 };
    /** Operations running now: audited at the end of the turn if they have not settled. */
    /** @type {Map<number, { name: string, argsJson: string, started: number }>} */
    this.running = new Map();
    this.nextRunning = 0;
    /** @type {Stop | null} */
    this.stop = null;
    this.worldCalls = 0;
    /** Host operations run one at a time, in call order, so a re-run meets them in the journal's order. */
    /** @type {Promise<unknown>} */
    this.queue = Promise.resolve();
    /** Set when the run has ended: calls still in flight no longer reach the journal. */
    this.closed = false;
    /** Ends programs that `world.exec` started and the guest did not wait for. */
    this.turnEnd = new AbortController();
    /** @type {Set<Promise<unknown>>} */
    this.inFlight = new Set();
  }

  /**
   * After the run: stops what the guest left running (programs are cancelled; operations that
   * have not started never start) and waits for programs to settle, so nothing the turn began
   * touches its working copy afterwards.
   */
  async close() {
    this.closed = true;
    for (const { name, argsJson, started } of this.running.values()) {
      this.audit(name, argsJson, { error: 'still running when the turn ended; its result was not used', started });
    }
    this.running.clear();
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
    this.controller.abort();
    return guestError('TurnStopped', 'the turn was stopped by the session');
  }

  /**
   * @param {string} operation
   * @param {string} args
   * @param {{ result?: string, error?: string, durationMs?: number, tokensUsed?: number, started?: number }} what
   */
  audit(operation, args, what) {
    this.ledger.audit({
      timestamp: what.started ?? Date.now(),
      turnNumber: this.turnNumber,
      operation,
      args,
      result: what.result,
      error: what.error,
      durationMs: what.durationMs ?? 0,
      tokensUsed: what.tokensUsed,
    });
  }

  /**
   * The policy's verdict on `operation`, or null when it may run.
   * @param {string} operation
   * @param {unknown[]} args
   */
  refusal(operation, args) {
    const declared = this.operations.get(operation) ?? { network: false };
    return this.ledger.check(operation) ?? ruleRefusal(this.policy, operation, args, declared);
  }

  /**
   * Charges one call to the budget; on refusal audits and stops the turn.
   * @param {string} operation
   * @param {string} argsJson
   */
  chargeCall(operation, argsJson) {
    // The audit log and the journal grow with every call: however generous the budget, one
    // turn makes at most `callsPerTurn` of them.
    if (++this.calls > this.callsPerTurn) {
      const message = `the turn made more than ${this.callsPerTurn} operation calls (callsPerTurn)`;
      this.audit(operation, argsJson, { error: message });
      throw this.halt({ kind: 'limit', code: 'HOST_CALL_LIMIT', message });
    }
    const over = this.ledger.take('hostCalls', 1);
    if (over) {
      this.audit(operation, argsJson, { error: over.message });
      throw this.halt({ kind: 'budget', code: 'BUDGET_EXCEEDED', budget: over.rule, message: over.message });
    }
  }

  /**
   * Bytes a write is about to add, charged before it happens.
   * @param {number} bytes
   * @param {boolean} fresh
   */
  spendBytes(bytes, fresh) {
    this.used.bytesWritten += bytes;
    if (!fresh) return;
    const over = this.ledger.take('bytesWritten', bytes);
    if (over) throw this.halt({ kind: 'budget', code: 'BUDGET_EXCEEDED', budget: over.rule, message: over.message });
  }

  /**
   * Bytes a program wrote, known afterwards.
   * @param {number} bytes
   * @param {boolean} fresh
   */
  recordBytes(bytes, fresh) {
    this.used.bytesWritten += bytes;
    if (!fresh) return;
    const over = this.ledger.record('bytesWritten', bytes);
    if (over) throw this.halt({ kind: 'budget', code: 'BUDGET_EXCEEDED', budget: over.rule, message: over.message });
  }

  /**
   * A `world.*` call. World calls run again when a paused turn is re-run (they only touch the
   * turn's own working copy); those that ran before the pause, with the same arguments, are not
   * charged or audited twice. A re-run whose world calls differ from the first run's has
   * diverged and stops.
   * @template T
   * @param {string} operation
   * @param {unknown[]} args
   * @param {(fresh: boolean) => T} body
   * @returns {T}
   */
  world(operation, args, body) {
    if (this.stop) throw guestError('TurnStopped', 'the turn was stopped by the session');
    if (holdsFunction(args)) throw guestError('TypeError', `${operation}: the arguments must be data (no functions)`);
    const argsJson = auditJson(args.filter((a) => a !== undefined)) ?? '[]';
    const index = this.worldCalls++;
    const key = worldKey(operation, args);
    const recorded = this.worldLog[index];
    if (recorded !== undefined && recorded !== key) {
      throw this.halt({
        kind: 'diverged',
        code: 'REPLAY_DIVERGED',
        message:
          recorded.split('\n')[0] === operation
            ? `the resumed turn called ${operation} with other arguments than the first time; the turn is not deterministic (it read something that changed), so nothing more was run`
            : `the resumed turn called ${operation} where it had called ${recorded.split('\n')[0]}; the turn is not deterministic (it read something that changed), so nothing more was run`,
      });
    }
    if (recorded === undefined) this.worldLog.push(key);
    const fresh = recorded === undefined;
    const refused = this.refusal(operation, args);
    if (refused) {
      if (fresh) this.audit(operation, argsJson, { error: refused.message });
      throw this.halt({ kind: 'policy', code: 'POLICY_VIOLATION', rule: refused.rule, message: refused.message });
    }
    this.used.hostCalls += 1;
    if (fresh) this.chargeCall(operation, argsJson);
    const started = Date.now();
    const t0 = performance.now();
    /** @param {unknown} e */
    const failed = (e) => {
      if (this.stop) throw e;
      const code = /** @type {{ code?: string }} */ (e)?.code;
      const message = messageOf(e);
      if (fresh)
        this.audit(operation, argsJson, {
          error: code ? `${code}: ${message}` : message,
          started,
          durationMs: performance.now() - t0,
        });
      if (code === 'POLICY_VIOLATION') {
        throw this.halt({
          kind: 'policy',
          code: 'POLICY_VIOLATION',
          rule: 'worldRules',
          message: `${operation}: ${message}`,
        });
      }
      throw guestError(
        code ? 'WorldError' : e instanceof Error ? e.name : 'Error',
        code ? `${code}: ${message}` : message,
      );
    };
    /** @param {unknown} value */
    const done = (value) => {
      if (fresh)
        this.audit(operation, argsJson, { result: auditJson(value), started, durationMs: performance.now() - t0 });
      return toGuest(value);
    };
    let out;
    try {
      out = body(fresh);
    } catch (e) {
      return failed(e);
    }
    if (out instanceof Promise) {
      const settled = out.then(done, failed);
      const tracked = settled.catch(() => undefined);
      this.inFlight.add(tracked);
      tracked.then(() => this.inFlight.delete(tracked));
      return /** @type {T} */ (/** @type {unknown} */ (settled));
    }
    return /** @type {T} */ (done(out));
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
    const replay = this.ledger.journalNext(name, argsJson);
    if (replay.kind === 'recorded') {
      this.used.hostCalls += 1;
      if (replay.error !== undefined && replay.error !== null) {
        const e = replayedError(replay.error);
        throw guestError(e.name, e.message);
      }
      const recorded = JSON.parse(replay.value ?? '{}');
      this.used.tokens += recorded.usage?.tokens ?? 0;
      this.used.cost += recorded.usage?.cost ?? 0;
      return 'value' in recorded ? toGuest(recorded.value) : undefined;
    }
    if (replay.kind === 'diverged') {
      throw this.halt({
        kind: 'diverged',
        code: 'REPLAY_DIVERGED',
        message:
          replay.expected === name
            ? `the resumed turn called ${name} with other arguments than the first time; the turn is not deterministic (it read something that changed), so nothing more was run`
            : `the resumed turn called ${name} where it had called ${replay.expected}; the turn is not deterministic (it read something that changed), so nothing more was run`,
      });
    }
    const protoAt = protoKeyPath(parsed);
    if (protoAt !== null) {
      // Refused like a failed call (journalled, so a re-run meets it at the same place): the
      // guest may catch it; nothing ran.
      const message = `${name}: ${protoAt} holds a __proto__ key, which host code would read as a prototype; operations take plain data without one`;
      this.ledger.journalRecord(name, argsJson, undefined, journalError('TypeError', message));
      this.audit(name, argsJson, { error: message });
      throw guestError('TypeError', message);
    }
    const refused = this.refusal(name, parsed);
    if (refused) {
      this.audit(name, argsJson, { error: refused.message });
      throw this.halt({ kind: 'policy', code: 'POLICY_VIOLATION', rule: refused.rule, message: refused.message });
    }
    const id = `${this.turnNumber}.${this.ledger.journalLength()}`;
    const request = this.requests.find((r) => r.id === id);
    if (request && (request.operation !== name || JSON.stringify(request.args) !== argsJson)) {
      // The decision was about another call: nothing runs on its strength.
      throw this.halt({
        kind: 'diverged',
        code: 'REPLAY_DIVERGED',
        message: `the resumed turn called ${name}(${argsJson.slice(0, 200)}) where approval request ${id} was for ${request.operation}(${JSON.stringify(request.args).slice(0, 200)}); nothing was run`,
      });
    }
    const needsApproval =
      typeof op.needsApproval === 'function' ? Boolean(op.needsApproval(...structuredClone(parsed))) : op.needsApproval;
    if (needsApproval && !request) {
      this.requests.push({ id, operation: name, args: structuredClone(parsed), status: 'pending' });
      this.audit(name, argsJson, { error: `awaiting approval (request ${id})` });
      throw this.halt({ kind: 'approval' });
    }
    this.chargeCall(name, argsJson);
    this.used.hostCalls += 1;
    if (request?.status === 'started') {
      // The host stopped while this approved call ran: it may have taken effect. At most once.
      const message = `${name} was approved and started before the session was interrupted; it may have run, so it is not run again`;
      this.ledger.journalRecord(name, argsJson, undefined, journalError('ApprovalInterrupted', message));
      this.audit(name, argsJson, { error: message });
      throw guestError('ApprovalInterrupted', message);
    }
    if (request?.status === 'rejected') {
      const message = `${name} was rejected${request.reason ? `: ${request.reason}` : ''}`;
      this.ledger.journalRecord(name, argsJson, undefined, journalError('ApprovalRejected', message));
      this.audit(name, argsJson, { error: message });
      throw guestError('ApprovalRejected', message);
    }
    if (request?.status === 'approved' && !request.hasValue) await this.beforeApproved(request);
    const started = Date.now();
    const t0 = performance.now();
    const slot = this.nextRunning++;
    this.running.set(slot, { name, argsJson, started });
    let out;
    try {
      out = request?.hasValue ? request.value : await op.handler(...structuredClone(parsed));
    } catch (e) {
      const late = !this.running.delete(slot);
      if (this.stop || late) throw e;
      const message = messageOf(e);
      const errorName = e instanceof Error ? e.name : 'Error';
      this.ledger.journalRecord(name, argsJson, undefined, journalError(errorName, message));
      this.audit(name, argsJson, { error: message, started, durationMs: performance.now() - t0 });
      throw guestError(errorName, message);
    }
    // Settled after its turn ended: already audited as still running; only its usage counts.
    const late = !this.running.delete(slot);
    /** @type {{ tokens?: number, cost?: number } | undefined} */
    let usage;
    if (out !== null && typeof out === 'object' && 'value' in out && 'usage' in out) {
      usage = /** @type {any} */ (out).usage ?? undefined;
      out = /** @type {any} */ (out).value;
    }
    const usageProblem = badUsage(usage);
    /** @type {string | undefined} */
    let json;
    try {
      if (usageProblem) throw new TypeError(`${name} reported ${usageProblem}`);
      json = out === undefined ? undefined : exactJson(out, `the result of ${name}`);
      this.journalBytes += json?.length ?? 0;
      if (this.journalBytes > MAX_JOURNAL_CHARS) {
        throw new RangeError(
          `the results of this turn's operations exceed ${MAX_JOURNAL_CHARS / (1 << 20)} MiB of JSON`,
        );
      }
    } catch (e) {
      if (late) throw e;
      this.audit(name, argsJson, { error: messageOf(e), started, durationMs: performance.now() - t0 });
      throw this.halt({ kind: 'invalid', code: 'INVALID_INPUT', message: messageOf(e) });
    }
    const tokens = usage?.tokens;
    if (late) {
      this.ledger.record('tokens', tokens ?? 0);
      this.ledger.record('cost', usage?.cost ?? 0);
      throw guestError('TurnStopped', 'the turn has ended');
    }
    // The journal keeps the value and the usage it reported: a re-run answers with both.
    const entry = `{${json === undefined ? '' : `"value":${json},`}"usage":${JSON.stringify({ tokens: usage?.tokens, cost: usage?.cost })}}`;
    this.ledger.journalRecord(name, argsJson, entry, undefined);
    this.audit(name, argsJson, {
      result: request?.hasValue ? auditJson({ approvedValue: out }) : auditJson(out),
      started,
      durationMs: performance.now() - t0,
      tokensUsed: tokens,
    });
    this.spend({ tokens, cost: usage?.cost });
    return json === undefined ? undefined : toGuest(JSON.parse(json));
  }

  /**
   * What is left of a budget at this point of the turn: what was left when it started, less
   * what the turn has used so far (the same on a re-run); wall time as at the start.
   * @param {Record<string, number | null>} atStart
   * @param {string} kind
   */
  remaining(atStart, kind) {
    if (!Object.hasOwn(atStart, kind)) throw new TypeError(`unknown budget ${kind}`);
    const start = atStart[kind];
    if (start === null) return null;
    const used = /** @type {Record<string, number>} */ (this.used)[kind] ?? 0;
    return Math.max(0, start - used);
  }

  /**
   * Tokens and cost reported during the turn; an overrun stops it.
   * @param {{ tokens?: number, cost?: number }} usage
   */
  spend(usage) {
    for (const kind of /** @type {const} */ (['tokens', 'cost'])) {
      const amount = usage[kind];
      if (amount === undefined) continue;
      this.used[kind] += amount;
      const over = this.ledger.record(kind, amount);
      if (over) throw this.halt({ kind: 'budget', code: 'BUDGET_EXCEEDED', budget: over.rule, message: over.message });
    }
  }
}

module.exports = { Gate, auditJson };
