'use strict';
// Running one script against a set of public states: the guest edits drafts, the host checks
// the drafts against each changed state's schema, and only when the script succeeded and every
// schema passed are the changes applied to the real state objects, all together.

const { isPromise } = require('node:util/types');
const { run, runSync, copyOf } = require('../run.js');
const { ErrorCode, invalidInput } = require('../errors.js');
const { SPEC_GLOBAL, wrapScript } = require('./prelude.js');
const { locateInScript } = require('./locate.js');
const {
  STATE_LIMITS,
  isContainer,
  cloneValue,
  diffState,
  applicableChanges,
  measureState,
  toJsonPatch,
  applyChanges,
  liveRefusal,
} = require('./diff.js');

/**
 * @typedef {import('./index.js').PublicState} PublicState
 * @typedef {import('./index.js').SecurityConfig} SecurityConfig
 * @typedef {import('./index.js').ScriptExecutionResult} ScriptExecutionResult
 * @typedef {import('./index.js').StateChange} StateChange
 * @typedef {import('./index.js').ValidationIssue} ValidationIssue
 * @typedef {import('./index.js').ComponentErrorInfo} ComponentErrorInfo
 * @typedef {import('../index.js').Limits} Limits
 * @typedef {import('../index.js').RunResult} RunResult
 * @typedef {{ name: string, def: PublicState }} StateEntry
 * @typedef {{ call: (...args: any[]) => unknown }} UtilityEntry
 * @typedef {{ timeoutMs: number, memoryBytes: number, steps: number, stateValues: number, stateBytes: number,
 *   blockedPatterns: (RegExp | string)[], customValidators: ((script: string) => unknown)[] }} Limitations
 */

/** What the model's script is called in stacks and frames. */
const FILENAME = 'script.js';
/** The host function that records completion, as the guest sees it. */
const COMPLETION_GLOBAL = 'attempt_completion';

const DEFAULT_SECURITY = Object.freeze({
  maxExecutionTime: 5000,
  maxMemoryUsage: 100,
  maxIterations: 1_000_000,
});

/** Keys a securityConfig may have; the `allow*` flags are accepted for compatibility with existing component code. */
const SECURITY_KEYS = [
  'maxExecutionTime',
  'maxMemoryUsage',
  'maxIterations',
  'maxStateValues',
  'maxStateBytes',
  'blockedPatterns',
  'customValidator',
  'allowNetwork',
  'allowFileSystem',
  'allowProcess',
];

/**
 * @param {unknown} value
 * @param {string} what
 */
function positiveNumber(value, what) {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)
    throw invalidInput(`securityConfig.${what} must be a positive number, got ${String(value)}`);
  return value;
}

/**
 * Checks a securityConfig and turns it into run limits. Bad values are the host's mistake: they
 * throw a TypeError with code INVALID_INPUT.
 * @param {SecurityConfig | undefined} config
 * @returns {Limitations}
 */
function limitationsOf(config) {
  const c = config ?? {};
  if (typeof c !== 'object' || c === null) throw invalidInput('securityConfig must be an object');
  for (const key of Object.keys(c)) {
    if (!SECURITY_KEYS.includes(key)) throw invalidInput(`unknown securityConfig key '${key}'`);
  }
  for (const flag of ['allowNetwork', 'allowFileSystem', 'allowProcess']) {
    const value = /** @type {Record<string, unknown>} */ (c)[flag];
    if (value !== undefined && value !== false)
      throw invalidInput(
        `securityConfig.${flag} cannot be enabled: scripts run in a realm without network, file system or process`,
      );
  }
  const patterns = c.blockedPatterns ?? [];
  if (!Array.isArray(patterns) || patterns.some((p) => typeof p !== 'string' && !(p instanceof RegExp)))
    throw invalidInput('securityConfig.blockedPatterns must be an array of RegExp or strings');
  if (c.customValidator !== undefined && typeof c.customValidator !== 'function')
    throw invalidInput('securityConfig.customValidator must be a function');
  const steps = positiveNumber(c.maxIterations ?? DEFAULT_SECURITY.maxIterations, 'maxIterations');
  return {
    timeoutMs: positiveNumber(c.maxExecutionTime ?? DEFAULT_SECURITY.maxExecutionTime, 'maxExecutionTime'),
    memoryBytes: Math.round(
      positiveNumber(c.maxMemoryUsage ?? DEFAULT_SECURITY.maxMemoryUsage, 'maxMemoryUsage') * 1024 * 1024,
    ),
    steps: Math.floor(steps),
    stateValues: Math.floor(positiveNumber(c.maxStateValues ?? STATE_LIMITS.values, 'maxStateValues')),
    stateBytes: Math.floor(positiveNumber(c.maxStateBytes ?? STATE_LIMITS.bytes, 'maxStateBytes')),
    blockedPatterns: patterns,
    customValidators: c.customValidator ? [c.customValidator] : [],
  };
}

/**
 * The strictest combination of several components' limits (for composed components).
 * @param {Limitations[]} list
 * @returns {Limitations}
 */
function strictest(list) {
  return {
    timeoutMs: Math.min(...list.map((l) => l.timeoutMs)),
    memoryBytes: Math.min(...list.map((l) => l.memoryBytes)),
    steps: Math.min(...list.map((l) => l.steps)),
    stateValues: Math.min(...list.map((l) => l.stateValues)),
    stateBytes: Math.min(...list.map((l) => l.stateBytes)),
    blockedPatterns: list.flatMap((l) => l.blockedPatterns),
    customValidators: list.flatMap((l) => l.customValidators),
  };
}

/** @type {boolean | undefined} */
let stepsSupported;

/**
 * Whether this build of the engine counts steps (`limits.steps`): an engine without it refuses
 * the key as INVALID_INPUT.
 */
function engineCountsSteps() {
  if (stepsSupported === undefined) {
    stepsSupported = runSync('return 0', { console: 'none', limits: { steps: 1_000_000 } }).ok;
  }
  return stepsSupported;
}

/**
 * @param {Limitations} limitations
 * @returns {Limits}
 */
function runLimits(limitations) {
  /** @type {Limits} */
  const limits = { timeoutMs: limitations.timeoutMs, memoryBytes: limitations.memoryBytes };
  if (engineCountsSteps()) limits.steps = limitations.steps;
  return limits;
}

/**
 * Warnings for blocked patterns found in the script's text. Text matching is a hint for the
 * host, not a boundary: the script still runs.
 * @param {string} script
 * @param {(RegExp | string)[]} patterns
 */
function patternWarnings(script, patterns) {
  /** @type {string[]} */
  const warnings = [];
  for (const pattern of patterns) {
    const hit =
      typeof pattern === 'string' ? script.includes(pattern) : new RegExp(pattern.source, pattern.flags).test(script);
    if (hit)
      warnings.push(
        `blocked pattern ${typeof pattern === 'string' ? JSON.stringify(pattern) : String(pattern)} found in the script`,
      );
  }
  return warnings;
}

/**
 * Warnings for declarations that hide a state (`let cart = ...` makes a local `cart`, so the
 * script's edits never reach the state): a hint for the model, read off the text.
 * @param {string} script
 * @param {string[]} names
 */
function shadowWarnings(script, names) {
  return names
    .filter((name) =>
      new RegExp(`\\b(?:let|const|var|function|class)\\s+${name.replaceAll('$', '\\$')}\\b`).test(script),
    )
    .map((name) => `the script declares its own '${name}', which hides the state: edits to it are not kept`);
}

/**
 * Runs each custom validator; the first refusal wins. A validator may answer `false`, a string
 * (the reason) or `{ ok: false, reason }`, synchronously or as a promise; one that throws refuses.
 * @param {string} script
 * @param {((script: string) => unknown)[]} validators
 * @returns {Promise<string | undefined>} the refusal reason, if any
 */
async function refusalOf(script, validators) {
  for (const validate of validators) {
    /** @type {unknown} */
    let verdict;
    try {
      verdict = await validate(script);
    } catch (e) {
      return `the script validator failed: ${e instanceof Error ? e.message : String(e)}`;
    }
    if (verdict === true || verdict === undefined) continue;
    if (verdict === false) return 'the script was refused by the component';
    if (typeof verdict === 'string') return verdict;
    if (typeof verdict === 'object' && verdict !== null && 'ok' in verdict) {
      if (verdict.ok) continue;
      const reason = 'reason' in verdict && typeof verdict.reason === 'string' ? verdict.reason : undefined;
      return reason ?? 'the script was refused by the component';
    }
    return 'the script was refused by the component';
  }
  return undefined;
}

/**
 * A Standard Schema issue path as keys.
 * @param {unknown} path
 * @returns {(string | number)[]}
 */
function issuePath(path) {
  if (!Array.isArray(path)) return [];
  return path.map((segment) => {
    const key = typeof segment === 'object' && segment !== null && 'key' in segment ? segment.key : segment;
    return typeof key === 'number' ? key : String(key);
  });
}

/** Issues kept per state, and characters per issue message; the rest are counted in one last issue. */
const ISSUE_LIMITS = Object.freeze({ perState: 100, messageChars: 1000 });

/** @param {unknown} message */
function issueMessage(message) {
  const text = typeof message === 'string' ? message : String(message);
  return text.length > ISSUE_LIMITS.messageChars
    ? `${text.slice(0, ISSUE_LIMITS.messageChars)}… (${text.length - ISSUE_LIMITS.messageChars} more characters)`
    : text;
}

/**
 * Validates one state value with its Standard Schema v1 validator. The first
 * ISSUE_LIMITS.perState issues are kept, with shortened messages; one more issue counts the rest.
 * @param {string} state
 * @param {PublicState['schema']} schema
 * @param {unknown} value
 * @returns {Promise<ValidationIssue[]>}
 */
async function validateState(state, schema, value) {
  try {
    const outcome = await schema['~standard'].validate(value);
    if (!outcome.issues) return [];
    const all = outcome.issues;
    const kept = Math.min(all.length, ISSUE_LIMITS.perState);
    /** @type {ValidationIssue[]} */
    const issues = [];
    for (let i = 0; i < kept; i++)
      issues.push({ state, path: issuePath(all[i].path), message: issueMessage(all[i].message) });
    if (all.length > kept)
      issues.push({ state, path: [], message: `${all.length - kept} more issues in ${state} are not listed` });
    return issues;
  } catch (e) {
    return [
      { state, path: [], message: issueMessage(`the schema failed: ${e instanceof Error ? e.message : String(e)}`) },
    ];
  }
}

/**
 * Why a state's value after the script is refused for its size, if it is: past the
 * component's caps, unless the state was already that large before the script (a host may
 * keep a state larger than the caps; a script may still edit it without growing it).
 * @param {string} name
 * @param {unknown} prev
 * @param {unknown} next
 * @param {Limitations} limitations
 * @returns {{ problem: string } | { protoKey?: (string | number)[] }}
 */
function sizeCheck(name, prev, next, limitations) {
  const limits = { values: limitations.stateValues, bytes: limitations.stateBytes, depth: STATE_LIMITS.depth };
  let size = measureState(next, limits);
  if ('over' in size) {
    // The marshaller's own caps bound how far a state that was larger already may go.
    const previous = measureState(prev, { values: 1_000_000, bytes: 64 * 2 ** 20, depth: STATE_LIMITS.depth });
    if (!('over' in previous) && (previous.values > limits.values || previous.bytes > limits.bytes)) {
      size = measureState(next, {
        values: Math.max(limits.values, previous.values),
        bytes: Math.max(limits.bytes, previous.bytes),
        depth: limits.depth,
      });
    }
  }
  if (!('over' in size)) return size.protoKey ? { protoKey: size.protoKey } : {};
  const at = showPath(name, size.at);
  const sharing = size.shared
    ? ' (an object or array reached through several references, or a cycle, counts at each place it is reached)'
    : '';
  return { problem: `${name} is larger than a state may be: ${size.over} at ${at}${sharing}` };
}

/**
 * A path for a message: at most about 200 characters, however long or deep the keys.
 * @param {string} name
 * @param {(string | number)[]} path
 */
function showPath(name, path) {
  let text = name;
  for (const key of path) {
    if (text.length > 200) return `${text.slice(0, 200)}…`;
    if (typeof key === 'number') text += `[${key}]`;
    else if (key.startsWith('<')) text += key;
    else if (/^[A-Za-z_$][\w$]*$/.test(key)) text += `.${key}`;
    else text += `[${JSON.stringify(key.slice(0, 200))}]`;
  }
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/**
 * How much a script's writes may do to one write-only state: entries in its log, and elements
 * an array may grow by in all. Replaying a log, and diffing what it made, costs at most these
 * many steps on top of copying the state, whatever the script wrote.
 */
const WRITE_LIMITS = Object.freeze({ entries: 100_000, growth: 100_000 });

/** @param {string} key */
function arrayIndex(key) {
  if (!/^(?:0|[1-9]\d{0,9})$/.test(key)) return undefined;
  const index = Number(key);
  return index < 2 ** 32 - 1 ? index : undefined;
}

/**
 * Replays a write-only state's log (top-level sets, deletes, whole replacements) on a copy of
 * its value. The log is guest data: each entry is checked, an array takes only its indexes and
 * `length`, and the work is capped by WRITE_LIMITS, so a refused log costs little and changes
 * nothing.
 * @param {string} name
 * @param {unknown} before
 * @param {unknown} log
 * @returns {{ value: unknown } | { problem: string }}
 */
function replayWrites(name, before, log) {
  if (!Array.isArray(log)) return { problem: `${name}: the write log is not a list` };
  if (log.length > WRITE_LIMITS.entries)
    return {
      problem: `the script wrote ${name} ${log.length} times; at most ${WRITE_LIMITS.entries} writes are kept per state`,
    };
  let growth = 0;
  /**
   * Grows `array` to `length`, charging the new elements.
   * @param {unknown[]} array
   * @param {number} length
   */
  const grow = (array, length) => {
    if (length <= array.length) return undefined;
    growth += length - array.length;
    if (growth > WRITE_LIMITS.growth)
      return `the writes would add more than ${WRITE_LIMITS.growth} elements to ${name} (it has ${array.length})`;
    return undefined;
  };
  /** @type {any} */
  let value = cloneValue(before);
  for (const entry of log) {
    if (!Array.isArray(entry)) return { problem: `${name}: a write log entry is not a list` };
    const [op, key, written] = entry;
    if (op === 'replace') {
      value = key;
      continue;
    }
    if ((op !== 'set' && op !== 'delete') || typeof key !== 'string')
      return { problem: `${name}: a write log entry is malformed (${String(op)})` };
    const at = `${name}${arrayIndex(key) === undefined ? `.${key}` : `[${key}]`}`;
    if (!isContainer(value)) return { problem: `cannot ${op} ${at}: ${name} is ${kindOf(value)}` };
    if (!Array.isArray(value)) {
      // defineProperty, so a `__proto__` key stays data (and is refused as a key later).
      if (op === 'set')
        Object.defineProperty(value, key, { value: written, writable: true, enumerable: true, configurable: true });
      else delete value[key];
      continue;
    }
    if (key === 'length') {
      if (op === 'delete') return { problem: `cannot delete ${name}.length` };
      if (typeof written !== 'number' || !Number.isInteger(written) || written < 0 || written >= 2 ** 32)
        return { problem: `${name}.length must be a whole number from 0 to 2^32-1, not ${String(written)}` };
      const refused = grow(value, written);
      if (refused) return { problem: refused };
      value.length = written;
      continue;
    }
    const index = arrayIndex(key);
    if (index === undefined)
      return { problem: `cannot ${op} ${at}: ${name} is an array, which takes only indexes and length` };
    if (op === 'delete') {
      if (index === value.length - 1) value.length -= 1;
      else if (index < value.length) delete value[index];
      continue;
    }
    const refused = grow(value, index + 1);
    if (refused) return { problem: refused };
    value[index] = written;
  }
  return { value };
}

/**
 * The changes that reverse `changes`, in reverse order.
 * @param {StateChange[]} changes
 * @returns {StateChange[]}
 */
function undoOf(changes) {
  return [...changes].reverse().map((c) => {
    /** @type {StateChange['op']} */
    const op = c.op === 'add' ? 'remove' : c.op === 'remove' ? 'add' : 'replace';
    return { state: c.state, path: c.path, before: c.after, after: c.before, op };
  });
}

/** @param {unknown} value */
function kindOf(value) {
  if (Array.isArray(value)) return 'an array';
  if (value === null) return 'null';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/**
 * @param {Partial<ScriptExecutionResult>} fields
 * @returns {ScriptExecutionResult}
 */
function resultOf(fields) {
  return {
    success: false,
    changes: [],
    patch: [],
    warnings: [],
    logs: [],
    stats: { wallMs: 0, heapBytes: 0, hostCalls: 0, steps: 0, validationMs: 0 },
    ...fields,
  };
}

/**
 * @param {import('./index.js').ComponentErrorCode} code
 * @param {string} name
 * @param {string} message
 * @returns {ComponentErrorInfo}
 */
function errorInfo(code, name, message) {
  return { code, name, message };
}

/**
 * A utility as the realm gets it: its arguments are copied before it sees them and its result
 * (or what its promise resolves to) crosses as copied data with the marshaller's budgets, so a
 * utility that returns part of a state hands the script a copy, never the live object, and a
 * script cannot hand it a function to call later. Errors reach the script as name and message.
 * @param {string} name
 * @param {(...args: any[]) => unknown} call
 */
function copyingUtility(name, call) {
  return (/** @type {unknown[]} */ ...args) => {
    /** @type {unknown[]} */
    let copied;
    try {
      copied = structuredClone(args);
    } catch {
      throw new TypeError(`${name}: arguments must be data; a function cannot be passed to a utility`);
    }
    const result = call(...copied);
    return isPromise(result) ? result.then((value) => copiedResult(name, value)) : copiedResult(name, result);
  };
}

/**
 * A utility's result as the realm receives it. States are often proxies (valtio), which the
 * marshaller would read as plain objects, so containers are first copied by property reads.
 * @param {string} name
 * @param {unknown} value
 */
function copiedResult(name, value) {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return value;
  /** @type {unknown} */
  let plain;
  try {
    plain = cloneValue(value);
  } catch (e) {
    throw new TypeError(`${name}: its result cannot be copied (${e instanceof Error ? e.message : String(e)})`);
  }
  return copyOf(plain);
}

/**
 * Runs a model's script against the given public states.
 * @param {StateEntry[]} entries
 * @param {Map<string, UtilityEntry>} utilities
 * @param {Limitations} limitations
 * @param {unknown} script
 * @param {{ signal?: AbortSignal, onCompletion?: (result: unknown) => void }} [options]
 * @returns {Promise<ScriptExecutionResult>}
 */
async function executeOnStates(entries, utilities, limitations, script, options = {}) {
  if (typeof script !== 'string')
    return resultOf({ error: errorInfo(ErrorCode.InvalidInput, 'TypeError', 'the script must be a string') });
  const warnings = [
    ...patternWarnings(script, limitations.blockedPatterns),
    ...shadowWarnings(
      script,
      entries.map((e) => e.name),
    ),
  ];
  const refusal = await refusalOf(script, limitations.customValidators);
  if (refusal !== undefined)
    return resultOf({ error: errorInfo(ErrorCode.ScriptRefused, 'ScriptRefused', refusal), warnings });

  /** @type {Map<string, unknown>} */
  const before = new Map();
  /** @type {Record<string, unknown>} */
  const values = {};
  /** @type {{ rw: string[], r: string[], w: string[] }} */
  const byPermission = { rw: [], r: [], w: [] };
  for (const { name, def } of entries) {
    const snapshot = cloneValue(def.state);
    before.set(name, snapshot);
    byPermission[def.permission].push(name);
    // Write-only values never enter the realm.
    if (def.permission !== 'w') values[name] = snapshot;
  }

  /** @type {Record<string, unknown>} */
  const globals = {};
  for (const [name, utility] of utilities) globals[name] = copyingUtility(name, utility.call);

  const wrapped = wrapScript(script);
  /** @type {RunResult} */
  const ran = await run(wrapped.source, {
    mode: 'script',
    data: { [SPEC_GLOBAL]: { ...byPermission, values, maxWrites: WRITE_LIMITS.entries } },
    globals,
    limits: runLimits(limitations),
    filename: FILENAME,
    signal: options.signal,
  });
  const base = { warnings, logs: ran.logs };
  const stats = { ...ran.stats, validationMs: 0 };
  const outcome = /** @type {{ rw?: Record<string, unknown>, w?: Record<string, unknown>,
   *   completion?: { calls?: unknown, result?: unknown } } | undefined} */ (ran.ok ? ran.value : undefined);
  const completionCalls = typeof outcome?.completion?.calls === 'number' ? outcome.completion.calls : 0;
  const completions = completionCalls > 0 ? [{ result: outcome?.completion?.result }] : [];
  if (completionCalls > 1)
    warnings.push(`${COMPLETION_GLOBAL} was called ${completionCalls} times; the last call counts`);
  if (!ran.ok) {
    return resultOf({ ...base, stats, error: locateInScript(ran.error, script, FILENAME, wrapped.offset) });
  }

  const drafts = outcome ?? {};
  /** @type {Map<string, unknown>} */
  const after = new Map();
  for (const { name, def } of entries) {
    if (def.permission === 'rw') after.set(name, drafts.rw?.[name]);
    else if (def.permission === 'w') {
      /** @type {ReturnType<typeof replayWrites>} */
      let replayed;
      try {
        replayed = replayWrites(name, before.get(name), drafts.w?.[name]);
      } catch (e) {
        replayed = { problem: `${name}: ${e instanceof Error ? e.message : String(e)}` };
      }
      if ('problem' in replayed)
        return resultOf({
          ...base,
          stats,
          error: errorInfo(ErrorCode.WriteRefused, 'WriteRefused', replayed.problem),
        });
      after.set(name, replayed.value);
    }
  }

  // Each value is measured before anything else walks it, so the diff, the schemas, the copies
  // and later renders only ever see states within the caps.
  /** @type {Map<string, (string | number)[]>} */
  const protoKeys = new Map();
  for (const [name, next] of after) {
    const checked = sizeCheck(name, before.get(name), next, limitations);
    if ('problem' in checked)
      return resultOf({ ...base, stats, error: errorInfo(ErrorCode.StateTooLarge, 'StateTooLarge', checked.problem) });
    if (checked.protoKey) protoKeys.set(name, checked.protoKey);
  }

  /** @type {StateChange[]} */
  const changes = [];
  /** @type {ValidationIssue[]} */
  const issues = [];
  /** @type {Promise<ValidationIssue[]>[]} */
  const pending = [];
  const validationStart = performance.now();
  for (const { name, def } of entries) {
    if (!after.has(name)) continue;
    const next = after.get(name);
    const prev = before.get(name);
    const stateChanges = diffState(name, prev, next);
    if (stateChanges.length === 0) continue;
    if (!isContainer(next) || Array.isArray(next) !== Array.isArray(prev)) {
      issues.push({ state: name, path: [], message: `the state must stay ${kindOf(prev)}, not ${kindOf(next)}` });
      continue;
    }
    // A `__proto__` key could only be applied with a plain set, which would change the live
    // object's prototype instead of adding a key.
    const protoKey = protoKeys.get(name);
    if (protoKey) {
      issues.push({ state: name, path: protoKey, message: "'__proto__' cannot be a key of a state" });
      continue;
    }
    // One at a time: spreading a long list into push overflows the stack.
    for (const change of stateChanges) changes.push(change);
    pending.push(validateState(name, def.schema, next));
  }
  for (const found of await Promise.all(pending)) for (const issue of found) issues.push(issue);
  stats.validationMs = performance.now() - validationStart;
  if (issues.length > 0) {
    if (completions.length > 0)
      warnings.push(`${COMPLETION_GLOBAL} was called, but validation failed: nothing was recorded`);
    return resultOf({ ...base, stats, validationErrors: issues });
  }

  // What is written to each live state: the reported changes, with a replace of a whole state
  // spelled out per top-level key (the live object itself is kept).
  /** @type {Map<string, StateChange[]>} */
  const toApply = new Map();
  for (const { name } of entries) toApply.set(name, applicableChanges(changes.filter((c) => c.state === name)));
  // Refusals the live objects make known without a write come first, so a refused commit
  // usually changes nothing at all, not even for a moment.
  for (const { name, def } of entries) {
    for (const change of toApply.get(name) ?? []) {
      const reason = liveRefusal(/** @type {Record<string, unknown>} */ (def.state), change);
      if (reason) {
        const issue = { state: name, path: change.path, message: `the state refused the change: ${reason}` };
        return resultOf({ ...base, stats, validationErrors: [issue] });
      }
    }
  }
  /** @type {{ state: Record<string, unknown>, changes: StateChange[] }[]} */
  const committed = [];
  for (const { name, def } of entries) {
    const own = toApply.get(name) ?? [];
    if (own.length === 0) continue;
    const live = /** @type {Record<string, unknown>} */ (def.state);
    const refused = applyChanges(live, own);
    if (refused) {
      // Keep all or nothing: undo the states already committed, newest first.
      for (const done of committed.reverse()) applyChanges(done.state, undoOf(done.changes));
      const issue = {
        state: name,
        path: refused.change.path,
        message: `the state refused the change: ${refused.reason}`,
      };
      return resultOf({ ...base, stats, validationErrors: [issue] });
    }
    committed.push({ state: live, changes: own });
  }
  const completion = completions.at(-1);
  if (completion) options.onCompletion?.(completion.result);
  return resultOf({
    ...base,
    stats,
    success: true,
    changes,
    patch: toJsonPatch(changes),
    ...(completion ? { completion } : {}),
  });
}

module.exports = {
  FILENAME,
  COMPLETION_GLOBAL,
  DEFAULT_SECURITY,
  limitationsOf,
  strictest,
  engineCountsSteps,
  executeOnStates,
};
