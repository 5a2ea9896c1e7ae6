'use strict';
// What a Session is made of, checked: its options (operations, budget, env, snapshot key), the
// plain JSON data that `env`, questions and approved values hold, and the small values a turn
// derives (its seed, an error outcome, budget figures).

const { ErrorCode } = require('../errors.js');
const { sessionError } = require('./errors.js');
const { normalizePolicy } = require('./policy.js');

const BUDGET_KINDS = /** @type {const} */ (['turns', 'wallMs', 'hostCalls', 'bytesWritten', 'tokens', 'cost']);
const GUEST_NAMES = new Set(['world', 'env', 'needs', 'session']);

/**
 * @typedef {import('./turn.js').Operation} Operation
 * @typedef {import('./index.js').TurnOutcome} TurnOutcome
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
      ErrorCode.InvalidInput,
      'operations must be an object of functions or { handler } definitions',
      TypeError,
    );
  }
  for (const [name, def] of Object.entries(operations)) {
    if (!/^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*$/.test(name)) {
      throw sessionError(
        ErrorCode.InvalidInput,
        `operations: ${JSON.stringify(name)} is not a name or dotted name`,
        TypeError,
      );
    }
    const root = name.split('.')[0];
    if (GUEST_NAMES.has(root))
      throw sessionError(ErrorCode.InvalidInput, `operations: ${name} clashes with the guest's ${root}`, TypeError);
    const d = typeof def === 'function' ? { handler: def } : def;
    if (d === null || typeof d !== 'object' || typeof d.handler !== 'function') {
      throw sessionError(
        ErrorCode.InvalidInput,
        `operations.${name} must be a function or { handler: function }`,
        TypeError,
      );
    }
    const needsApproval = d.needsApproval ?? false;
    if (typeof needsApproval !== 'boolean' && typeof needsApproval !== 'function') {
      throw sessionError(
        ErrorCode.InvalidInput,
        `operations.${name}.needsApproval must be a boolean or a function`,
        TypeError,
      );
    }
    out.set(name, {
      handler: d.handler,
      needsApproval,
      network: d.network === true,
      idempotent: d.idempotent === true,
      description: typeof d.description === 'string' ? d.description : undefined,
      inputSchema: d.inputSchema,
    });
  }
  for (const name of out.keys()) {
    for (const other of out.keys()) {
      if (other.startsWith(`${name}.`))
        throw sessionError(ErrorCode.InvalidInput, `operations: ${name} and ${other} cannot both exist`, TypeError);
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
    throw sessionError(ErrorCode.InvalidInput, 'budget must be an object', TypeError);
  /** @type {Record<string, number>} */
  const out = {};
  for (const [kind, limit] of Object.entries(budget)) {
    if (!(/** @type {readonly string[]} */ (BUDGET_KINDS).includes(kind))) {
      throw sessionError(
        ErrorCode.InvalidInput,
        `budget.${kind} is not a budget (${BUDGET_KINDS.join(', ')})`,
        TypeError,
      );
    }
    if (limit === undefined) continue;
    if (typeof limit !== 'number' || !Number.isFinite(limit) || limit < 0) {
      throw sessionError(ErrorCode.InvalidInput, `budget.${kind} must be a finite number ≥ 0`, TypeError);
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
  if (bad) throw sessionError(ErrorCode.InvalidInput, `${what} must hold plain JSON data: ${bad}`, TypeError);
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
    ErrorCode.InvalidInput,
    'snapshotKey must be a string or Uint8Array of at least 16 characters or bytes',
    TypeError,
  );
}

/**
 * Budget figures as the binding answers them (`undefined`: unlimited) with `null` for unlimited.
 * @param {import('../native/binding.js').BudgetFigures} figures
 * @returns {Record<import('./index.js').BudgetKind, number | null>}
 */
function budgetFigures(figures) {
  return {
    turns: figures.turns ?? null,
    wallMs: figures.wallMs ?? null,
    hostCalls: figures.hostCalls ?? null,
    bytesWritten: figures.bytesWritten ?? null,
    tokens: figures.tokens ?? null,
    cost: figures.cost ?? null,
  };
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

/** Operation calls one turn may make (each adds an audit entry and a journal entry). */
const DEFAULT_CALLS_PER_TURN = 10_000;

/**
 * The options of `new Session(options)`, checked, with defaults filled in.
 * @param {import('./index.js').SessionOptions} options
 * @param {typeof import('../index.js').ZipWorkspace} ZipWorkspace
 */
function sessionOptions(options, ZipWorkspace) {
  if (options === null || typeof options !== 'object')
    throw sessionError(ErrorCode.InvalidInput, 'new Session(options): options must be an object', TypeError);
  const known = [
    'workspace',
    'policy',
    'budget',
    'operations',
    'limits',
    'id',
    'env',
    'snapshotKey',
    'callsPerTurn',
    'tenant',
    'metadata',
    'persistState',
  ];
  for (const key of Object.keys(options)) {
    if (!known.includes(key))
      throw sessionError(
        ErrorCode.InvalidInput,
        `unknown Session option '${key}' (expected: ${known.join(', ')})`,
        TypeError,
      );
  }
  if (options.workspace !== undefined && !(options.workspace instanceof ZipWorkspace)) {
    throw sessionError(ErrorCode.InvalidInput, 'workspace must be a ZipWorkspace', TypeError);
  }
  if (options.id !== undefined && (typeof options.id !== 'string' || !/^[\w.-]{1,128}$/.test(options.id))) {
    throw sessionError(ErrorCode.InvalidInput, 'id must be 1 to 128 letters, digits, _, . or -', TypeError);
  }
  const id = options.id ?? `s-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
  const world = options.workspace ?? new ZipWorkspace();
  const policy = normalizePolicy(options.policy);
  const budget = normalizeBudget(options.budget);
  const operations = normalizeOperations(options.operations);
  const env = plainCopy(options.env ?? {}, 'env');
  const snapshotKey = snapshotKeyOf(options.snapshotKey);
  const callsPerTurn = options.callsPerTurn ?? DEFAULT_CALLS_PER_TURN;
  if (!Number.isInteger(callsPerTurn) || callsPerTurn < 1) {
    throw sessionError(ErrorCode.InvalidInput, 'callsPerTurn must be a whole number ≥ 1', TypeError);
  }
  const tenant = tenantOf(options.tenant);
  const metadata = metadataOf(options.metadata);
  const persistState = options.persistState ?? false;
  if (typeof persistState !== 'boolean')
    throw sessionError(ErrorCode.InvalidInput, 'persistState must be a boolean', TypeError);
  return {
    id,
    world,
    policy,
    budget,
    operations,
    limits: options.limits,
    env,
    snapshotKey,
    callsPerTurn,
    tenant,
    metadata,
    persistState,
  };
}

/**
 * A session's tenant: who it belongs to, for listing and per-tenant caps (null: none).
 * @param {unknown} tenant
 * @returns {string | null}
 */
function tenantOf(tenant) {
  if (tenant === undefined || tenant === null) return null;
  if (typeof tenant !== 'string' || !/^[\w.:@-]{1,128}$/.test(tenant))
    throw sessionError(ErrorCode.InvalidInput, 'tenant must be 1 to 128 letters, digits, _ . : @ or -', TypeError);
  return tenant;
}

/** How much JSON a session's metadata may hold (it is stored beside every snapshot). */
const MAX_METADATA_CHARS = 4096;

/**
 * A session's metadata: a flat object of strings, numbers and booleans the host files it under.
 * @param {unknown} metadata
 * @returns {Record<string, string | number | boolean>}
 */
function metadataOf(metadata) {
  if (metadata === undefined || metadata === null) return {};
  const ok =
    typeof metadata === 'object' &&
    !Array.isArray(metadata) &&
    Object.values(metadata).every(
      (v) => typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v)),
    );
  const copy = ok ? plainCopy(metadata, 'metadata') : null;
  if (!ok || JSON.stringify(copy).length > MAX_METADATA_CHARS)
    throw sessionError(
      ErrorCode.InvalidInput,
      `metadata must be a flat object of strings, numbers and booleans, at most ${MAX_METADATA_CHARS} characters of JSON`,
      TypeError,
    );
  return copy;
}

module.exports = {
  sessionOptions,
  DEFAULT_CALLS_PER_TURN,
  BUDGET_KINDS,
  normalizeOperations,
  normalizeBudget,
  plainCopy,
  snapshotKeyOf,
  budgetFigures,
  turnSeed,
  errorOutcome,
  tenantOf,
  metadataOf,
};
