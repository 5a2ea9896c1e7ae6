'use strict';
// Spans and metrics around runs, workspace execs, session turns, host operation calls and tool
// calls (DESIGN §9). Each hook calls straight through while nothing listens (otel.js). Spans
// carry kinds, codes, limits and stats; source, arguments, results, messages and file contents
// only after `configureTelemetry({ recordContent: true })`, as they are model-written and may
// hold whatever the model read.

const { performance } = require('node:perf_hooks');
const otel = require('./otel.js');
const { ErrorCode } = require('../errors.js');

/** @typedef {import('@opentelemetry/api').Span} Span */
/** @typedef {import('@opentelemetry/api').Attributes} Attributes */
/** @typedef {import('@opentelemetry/api').Context} Context */

const SPAN_KIND_INTERNAL = 0;
const STATUS_ERROR = 2;

/**
 * The context key under which a turn's span travels, so that the spans of its operation calls
 * are the turn's children even while its run's span is the active one.
 * @type {symbol | undefined}
 */
let turnSpanKey;

/** @type {Map<string, string>} `quickrealm.limits.<snake_case>` by option name */
const limitNames = new Map();

/**
 * The numeric limits a caller set, as span attributes.
 * @param {Attributes} attributes
 * @param {unknown} limits
 */
function addLimits(attributes, limits) {
  if (limits === null || typeof limits !== 'object') return;
  for (const [key, value] of Object.entries(limits)) {
    if (typeof value !== 'number') continue;
    let name = limitNames.get(key);
    if (name === undefined) {
      name = `quickrealm.limits.${key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}`;
      if (limitNames.size < 64) limitNames.set(key, name);
    }
    attributes[name] = value;
  }
}

/**
 * A run's or exec's stats as span attributes.
 * @param {Span} span
 * @param {{ wallMs?: number, heapBytes?: number, hostCalls?: number, steps?: number } | undefined} stats
 */
function setStats(span, stats) {
  if (!stats) return;
  // An exec has no host calls: only the figures present become attributes.
  if (typeof stats.wallMs === 'number') span.setAttribute('quickrealm.stats.wall_ms', stats.wallMs);
  if (typeof stats.heapBytes === 'number') span.setAttribute('quickrealm.stats.heap_bytes', stats.heapBytes);
  if (typeof stats.hostCalls === 'number') span.setAttribute('quickrealm.stats.host_calls', stats.hostCalls);
  if (typeof stats.steps === 'number') span.setAttribute('quickrealm.stats.steps', stats.steps);
}

/**
 * Marks `span` failed with `code` (`error.type` and the status message; the error's own
 * message only with recordContent).
 * @param {Span} span
 * @param {string} code
 * @param {unknown} [message]
 */
function setFailed(span, code, message) {
  span.setAttribute('error.type', code);
  if (otel.settings.recordContent && typeof message === 'string')
    span.setAttribute('quickrealm.error.message', message);
  span.setStatus({ code: STATUS_ERROR, message: code });
}

/** @param {unknown} e */
function codeOfThrown(e) {
  const code = /** @type {{ code?: unknown }} */ (e)?.code;
  if (typeof code === 'string' && code !== '') return code;
  return e instanceof Error ? e.name : 'Error';
}

/** @param {unknown} e */
function messageOfThrown(e) {
  return e instanceof Error ? e.message : String(e);
}

/** @param {unknown} value */
function jsonOrUndefined(value) {
  try {
    return typeof value === 'string' ? value : JSON.stringify(value);
  } catch {
    return undefined;
  }
}

/**
 * Starts a span under `parent` (the active context when left out) and returns it with the
 * context in which its work runs.
 * @param {string} name
 * @param {Attributes} attributes
 * @param {Context} [parent]
 * @returns {[Span, Context]}
 */
function startSpan(name, attributes, parent) {
  const { api } = otel;
  const base = parent ?? api.context.active();
  const span = /** @type {import('@opentelemetry/api').Tracer} */ (otel.tracer).startSpan(
    name,
    { kind: SPAN_KIND_INTERNAL, attributes },
    base,
  );
  return [span, api.trace.setSpan(base, span)];
}

// ----- runs -----

/**
 * @typedef {{ ok: boolean, error?: { code: string, message?: string } | null,
 *   stats?: { wallMs?: number, heapBytes?: number, hostCalls?: number, steps?: number } }} Outcome
 */

/**
 * @param {'run' | 'runSync'} kind
 * @param {string} source
 * @param {unknown} options
 */
function runAttributes(kind, source, options) {
  const o = options !== null && typeof options === 'object' ? /** @type {Record<string, unknown>} */ (options) : {};
  /** @type {Attributes} */
  const attributes = {
    'quickrealm.run.kind': kind,
    'quickrealm.run.mode': typeof o.mode === 'string' ? o.mode : 'function',
    'quickrealm.run.live': o.globals != null,
  };
  addLimits(attributes, o.limits);
  if (otel.settings.recordContent && typeof source === 'string') attributes['quickrealm.run.source'] = source;
  return attributes;
}

/**
 * Ends a run's or exec's span with its outcome.
 * @param {Span} span
 * @param {Outcome} result
 */
function endRunSpan(span, result) {
  span.setAttribute('quickrealm.ok', result?.ok === true);
  setStats(span, result?.stats);
  if (result && !result.ok) setFailed(span, result.error?.code ?? ErrorCode.Internal, result.error?.message);
  span.end();
}

/**
 * Counts a finished run or exec.
 * @param {string} kind
 * @param {Outcome | null} result null: the call threw
 * @param {number} started
 * @param {string} [thrownCode]
 */
function countRun(kind, result, started, thrownCode) {
  const m = otel.instruments;
  if (m === null) return;
  const ok = result?.ok === true;
  const attributes = { kind, ok };
  m.runs.add(1, attributes);
  m.runDuration.record((performance.now() - started) / 1000, attributes);
  if (!ok) m.errors.add(1, { kind, code: thrownCode ?? result?.error?.code ?? ErrorCode.Internal });
}

/**
 * `runSync` observed: a `quickrealm.run` span, active while the run runs (spans that live host
 * functions create are its children), and the run metrics.
 * @template {Outcome} R
 * @param {'runSync'} kind
 * @param {string} source
 * @param {any} options
 * @param {(source: string, options: any) => R} body
 * @returns {R}
 */
function observeRunSync(kind, source, options, body) {
  if (!otel.listening()) return body(source, options);
  const started = performance.now();
  if (otel.tracer === null) {
    const result = body(source, options);
    countRun(kind, result, started);
    return result;
  }
  const [span, context] = startSpan('quickrealm.run', runAttributes(kind, source, options));
  /** @type {R} */
  let result;
  try {
    result = otel.api.context.with(context, body, undefined, source, options);
  } catch (e) {
    setFailed(span, codeOfThrown(e), messageOfThrown(e));
    span.end();
    countRun(kind, null, started, codeOfThrown(e));
    throw e;
  }
  endRunSpan(span, result);
  countRun(kind, result, started);
  return result;
}

/**
 * `run` observed, as `observeRunSync`.
 * @template {Outcome} R
 * @param {'run'} kind
 * @param {string} source
 * @param {any} options
 * @param {(source: string, options: any) => Promise<R>} body
 * @returns {Promise<R>}
 */
function observeRun(kind, source, options, body) {
  if (!otel.listening()) return body(source, options);
  const started = performance.now();
  const [span, context] =
    otel.tracer === null ? [null, null] : startSpan('quickrealm.run', runAttributes(kind, source, options));
  const pending = context ? otel.api.context.with(context, body, undefined, source, options) : body(source, options);
  return pending.then(
    (result) => {
      if (span) endRunSpan(span, result);
      countRun(kind, result, started);
      return result;
    },
    (e) => {
      if (span) {
        setFailed(span, codeOfThrown(e), messageOfThrown(e));
        span.end();
      }
      countRun(kind, null, started, codeOfThrown(e));
      throw e;
    },
  );
}

/**
 * A workspace `exec` observed: a `quickrealm.exec` span (entry path, exit code, stats) and the
 * run metrics with kind `exec`.
 * @template {Outcome & { exitCode?: number, bytesWritten?: number }} R
 * @template W
 * @param {W} ws
 * @param {string} entryPath
 * @param {any} options
 * @param {(ws: W, entryPath: string, options: any) => Promise<R>} body
 * @returns {Promise<R>}
 */
function observeExec(ws, entryPath, options, body) {
  if (!otel.listening()) return body(ws, entryPath, options);
  const started = performance.now();
  /** @type {Span | null} */
  let span = null;
  /** @type {Context | null} */
  let context = null;
  if (otel.tracer !== null) {
    /** @type {Attributes} */
    const attributes = { 'quickrealm.exec.entry_path': String(entryPath) };
    addLimits(attributes, options?.limits);
    [span, context] = startSpan('quickrealm.exec', attributes);
  }
  const pending = context
    ? otel.api.context.with(context, body, undefined, ws, entryPath, options)
    : body(ws, entryPath, options);
  return pending.then(
    (result) => {
      if (span) {
        if (typeof result?.exitCode === 'number') span.setAttribute('quickrealm.exec.exit_code', result.exitCode);
        if (typeof result?.bytesWritten === 'number')
          span.setAttribute('quickrealm.exec.bytes_written', result.bytesWritten);
        endRunSpan(span, result);
      }
      countRun('exec', result, started);
      return result;
    },
    (e) => {
      if (span) {
        setFailed(span, codeOfThrown(e), messageOfThrown(e));
        span.end();
      }
      countRun('exec', null, started, codeOfThrown(e));
      throw e;
    },
  );
}

// ----- sessions -----

/**
 * @typedef {{ turnNumber: number, outcome: { tag: string, code?: string, message?: string,
 *   requests?: unknown[] } }} TurnLike
 */

/**
 * A turn (`executeTurn`, or `resume` of a turn paused for approval) observed: a
 * `quickrealm.turn` span whose children are the turn's run and one span per operation call,
 * the turn metrics, and the requests it leaves waiting for approval.
 * @template {TurnLike} T
 * @param {{ id: string }} session
 * @param {boolean} resume
 * @param {unknown} code the turn's code (an attribute only with recordContent)
 * @param {() => Promise<T>} body
 * @returns {Promise<T>}
 */
function observeTurn(session, resume, code, body) {
  if (!otel.listening()) return body();
  const started = performance.now();
  /** @type {Span | null} */
  let span = null;
  /** @type {Context | null} */
  let context = null;
  if (otel.tracer !== null) {
    /** @type {Attributes} */
    const attributes = { 'quickrealm.session.id': session.id, 'quickrealm.turn.resume': resume };
    if (otel.settings.recordContent && typeof code === 'string') attributes['quickrealm.turn.code'] = code;
    [span, context] = startSpan('quickrealm.turn', attributes);
    turnSpanKey ??= otel.api.createContextKey('quickrealm turn span');
    context = context.setValue(turnSpanKey, span);
  }
  const pending = context ? otel.api.context.with(context, body) : body();
  return pending.then(
    (turn) => {
      const outcome = turn?.outcome;
      const tag = typeof outcome?.tag === 'string' ? outcome.tag : 'error';
      const failed = typeof outcome?.code === 'string' ? outcome.code : undefined;
      const waiting = tag === 'needs-approval' && Array.isArray(outcome?.requests) ? outcome.requests.length : 0;
      if (span) {
        span.setAttributes({ 'quickrealm.turn.number': turn?.turnNumber, 'quickrealm.turn.outcome': tag });
        if (tag === 'needs-approval') span.setAttribute('quickrealm.turn.approvals_requested', waiting);
        if (failed) setFailed(span, failed, outcome?.message);
        span.end();
      }
      countTurn(tag, started, failed, waiting);
      return turn;
    },
    (e) => {
      if (span) {
        setFailed(span, codeOfThrown(e), messageOfThrown(e));
        span.end();
      }
      countTurn('error', started, codeOfThrown(e), 0);
      throw e;
    },
  );
}

/**
 * @param {string} outcome
 * @param {number} started
 * @param {string | undefined} code
 * @param {number} waiting approval requests the turn left waiting
 */
function countTurn(outcome, started, code, waiting) {
  const m = otel.instruments;
  if (m === null) return;
  m.turns.add(1, { outcome });
  m.turnDuration.record((performance.now() - started) / 1000, { outcome });
  if (code) m.errors.add(1, { kind: 'turn', code });
  if (waiting > 0) m.approvalsWaiting.add(waiting);
}

/**
 * Approval requests that no longer wait: decided (approve, reject) or discarded (abort).
 * @param {number} count
 */
function approvalsSettled(count) {
  if (count > 0 && otel.listening()) otel.instruments?.approvalsWaiting.add(-count);
}

/**
 * A host operation's handler observed: an `execute_tool <operation>` span (GenAI semantic
 * conventions), a child of the turn's span, active while the handler runs so that the spans
 * its code creates are its children.
 * @template T
 * @param {{ sessionId: string, turnNumber: number, operation: string, seq: number, idempotencyKey: string,
 *   rerun: boolean }} call
 * @param {string} argsJson the arguments (an attribute only with recordContent)
 * @param {() => T} body
 * @returns {T | Promise<Awaited<T>>}
 */
function observeOperation(call, argsJson, body) {
  if (!otel.listening()) return body();
  const { api } = otel;
  if (otel.tracer === null) {
    /** @param {unknown} e */
    const counted = (e) => {
      otel.instruments?.errors.add(1, { kind: 'operation', code: codeOfThrown(e) });
      throw e;
    };
    let out;
    try {
      out = body();
    } catch (e) {
      return counted(e);
    }
    return Promise.resolve(out).catch(counted);
  }
  const active = api.context.active();
  const turnSpan = turnSpanKey && /** @type {Span | undefined} */ (active.getValue(turnSpanKey));
  /** @type {Attributes} */
  const attributes = {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': call.operation,
    'gen_ai.tool.type': 'function',
    'gen_ai.tool.call.id': call.idempotencyKey,
    'quickrealm.session.id': call.sessionId,
    'quickrealm.turn.number': call.turnNumber,
    'quickrealm.operation.seq': call.seq,
    'quickrealm.operation.rerun': call.rerun,
  };
  if (otel.settings.recordContent) attributes['gen_ai.tool.call.arguments'] = argsJson;
  const [span, context] = startSpan(
    `execute_tool ${call.operation}`,
    attributes,
    turnSpan ? api.trace.setSpan(active, turnSpan) : active,
  );
  /** @param {unknown} e */
  const failed = (e) => {
    setFailed(span, codeOfThrown(e), messageOfThrown(e));
    span.end();
    otel.instruments?.errors.add(1, { kind: 'operation', code: codeOfThrown(e) });
    throw e;
  };
  let out;
  try {
    out = api.context.with(context, body);
  } catch (e) {
    return failed(e);
  }
  return Promise.resolve(out).then((value) => {
    if (otel.settings.recordContent) {
      const json = jsonOrUndefined(value);
      if (json !== undefined) span.setAttribute('gen_ai.tool.call.result', json);
    }
    span.end();
    return value;
  }, failed);
}

// ----- tools for models -----

/**
 * A tool's handler observed: an `execute_tool <tool>` span per call (GenAI semantic
 * conventions) and failures counted by code.
 * @template {{ ok: boolean, code?: string, content: string }} R
 * @template C
 * @param {string} name
 * @param {(args: unknown, context?: C) => Promise<R>} handler
 * @returns {(args: unknown, context?: C) => Promise<R>}
 */
function observeToolCall(name, handler) {
  return function toolCall(args, context) {
    if (!otel.listening()) return handler(args, context);
    /** @type {Span | null} */
    let span = null;
    /** @type {Context | null} */
    let spanContext = null;
    if (otel.tracer !== null) {
      /** @type {Attributes} */
      const attributes = {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': name,
        'gen_ai.tool.type': 'function',
      };
      if (otel.settings.recordContent) {
        const json = jsonOrUndefined(args);
        if (json !== undefined) attributes['gen_ai.tool.call.arguments'] = json;
      }
      [span, spanContext] = startSpan(`execute_tool ${name}`, attributes);
    }
    const pending = spanContext
      ? otel.api.context.with(spanContext, handler, undefined, args, context)
      : handler(args, context);
    return pending.then(
      (result) => {
        if (span) {
          span.setAttribute('quickrealm.ok', result?.ok === true);
          if (otel.settings.recordContent && typeof result?.content === 'string')
            span.setAttribute('gen_ai.tool.call.result', result.content);
          if (result && !result.ok) setFailed(span, result.code ?? ErrorCode.Internal);
          span.end();
        }
        if (result && !result.ok)
          otel.instruments?.errors.add(1, { kind: 'tool', code: result.code ?? ErrorCode.Internal });
        return result;
      },
      (e) => {
        // Handlers made by createToolSet never reject; this keeps a span from staying open if one does.
        if (span) {
          setFailed(span, codeOfThrown(e), messageOfThrown(e));
          span.end();
        }
        otel.instruments?.errors.add(1, { kind: 'tool', code: codeOfThrown(e) });
        throw e;
      },
    );
  };
}

module.exports = {
  observeRunSync,
  observeRun,
  observeExec,
  observeTurn,
  observeOperation,
  observeToolCall,
  approvalsSettled,
};
