'use strict';
// Session policies: seed 002's shape, checked once when a session is created. Operation rules,
// llmRules and executionRules go to the native gate (deny wins; `*` is the only wildcard; token
// fields are read at any depth of an `llm.complete` call's arguments); world rules become the workspace's
// access rules, enforced in Rust where every read and write passes, so `world.*` calls, tools and
// the `fs` of programs that `world.exec` runs meet the same check.

const { ErrorCode } = require('../errors.js');
const { sessionError } = require('./errors.js');

/** Operations on the world a turn can call, as policies name them. */
const WORLD_OPERATIONS = Object.freeze([
  'world.read',
  'world.write',
  'world.list',
  'world.search',
  'world.stat',
  'world.delete',
  'world.mkdir',
  'world.fingerprint',
  'world.exec',
]);

/** FrozenSets whose contents are final. */
const sealed = new WeakSet();
const refuseChange = () => {
  throw new TypeError('the shipped policies cannot be changed; build a new policy instead');
};

/**
 * A Set that cannot change after it is built: the shipped policies are shared by every session
 * that uses them (and by policies spread from them).
 * @extends {Set<string>}
 */
class FrozenSet extends Set {
  /** @param {Iterable<string>} items */
  constructor(items) {
    super(items);
    sealed.add(this);
  }
  /** @param {string} value */
  add(value) {
    if (sealed.has(this)) refuseChange();
    return super.add(value);
  }
  /**
   * @param {string} _value
   * @returns {boolean}
   */
  delete(_value) {
    return refuseChange();
  }
  clear() {
    refuseChange();
  }
}

const READ_OPERATIONS = ['world.read', 'world.list', 'world.search', 'world.stat', 'world.fingerprint'];

/** Read-only analysis: read the world, ask a model; no writes, no programs. */
const SAFE_ANALYSIS = Object.freeze({
  allowedOperations: new FrozenSet([...READ_OPERATIONS, 'llm.complete']),
  deniedOperations: new FrozenSet(['world.exec', 'shell']),
  worldRules: Object.freeze({ readPatterns: ['**/*'], writePatterns: [], readOnly: true, proposalMode: false }),
  llmRules: Object.freeze({ allowComplete: true, maxTokensPerCall: 4000 }),
  executionRules: Object.freeze({ allowExec: false, allowNetworkCalls: false }),
});

/** Analysis plus edits under `src/` and `test/`, staged as proposals for review. */
const SAFE_EDIT = Object.freeze({
  ...SAFE_ANALYSIS,
  allowedOperations: new FrozenSet([...SAFE_ANALYSIS.allowedOperations, 'world.write', 'world.mkdir', 'world.delete']),
  worldRules: Object.freeze({
    readPatterns: ['**/*'],
    writePatterns: ['src/**/*', 'test/**/*'],
    readOnly: false,
    proposalMode: true,
  }),
});

const policies = Object.freeze({ SAFE_ANALYSIS, SAFE_EDIT });

/**
 * @param {unknown} value
 * @param {string} field
 * @returns {string[] | undefined}
 */
function nameList(value, field) {
  if (value === undefined || value === null) return undefined;
  const list = value instanceof Set ? [...value] : value;
  if (!Array.isArray(list) || list.some((x) => typeof x !== 'string')) {
    throw sessionError(ErrorCode.InvalidInput, `policy.${field} must be an array or Set of strings`, TypeError);
  }
  return list;
}

/**
 * @param {unknown} value
 * @param {string} field
 */
function flag(value, field) {
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean')
    throw sessionError(ErrorCode.InvalidInput, `policy.${field} must be a boolean`, TypeError);
  return value;
}

/**
 * @param {unknown} value
 * @param {string} field
 */
function section(value, field) {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw sessionError(ErrorCode.InvalidInput, `policy.${field} must be an object`, TypeError);
  }
  return /** @type {Record<string, unknown>} */ (value);
}

const KNOWN = ['allowedOperations', 'deniedOperations', 'worldRules', 'llmRules', 'executionRules'];

/**
 * A policy in plain form (arrays, every field present), refusing what is malformed.
 * @param {unknown} policy
 * @returns {import('./index.js').NormalizedPolicy}
 */
function normalizePolicy(policy) {
  const p = section(policy ?? SAFE_ANALYSIS, 'policy');
  for (const key of Object.keys(p)) {
    if (!KNOWN.includes(key))
      throw sessionError(
        ErrorCode.InvalidInput,
        `policy.${key} is not a policy field (${KNOWN.join(', ')})`,
        TypeError,
      );
  }
  const world = section(p.worldRules, 'worldRules');
  const llm = section(p.llmRules, 'llmRules');
  const execution = section(p.executionRules, 'executionRules');
  const maxTokens = llm.maxTokensPerCall;
  if (maxTokens !== undefined && maxTokens !== null && !(Number.isFinite(maxTokens) && Number(maxTokens) >= 0)) {
    throw sessionError(ErrorCode.InvalidInput, 'policy.llmRules.maxTokensPerCall must be a number ≥ 0', TypeError);
  }
  return {
    allowedOperations: nameList(p.allowedOperations, 'allowedOperations') ?? null,
    deniedOperations: nameList(p.deniedOperations, 'deniedOperations') ?? [],
    worldRules: {
      readPatterns: nameList(world.readPatterns, 'worldRules.readPatterns') ?? ['**/*'],
      writePatterns: nameList(world.writePatterns, 'worldRules.writePatterns') ?? ['**/*'],
      readOnly: flag(world.readOnly, 'worldRules.readOnly') ?? false,
      proposalMode: flag(world.proposalMode, 'worldRules.proposalMode') ?? false,
    },
    llmRules: {
      allowComplete: flag(llm.allowComplete, 'llmRules.allowComplete') ?? true,
      maxTokensPerCall: /** @type {number | null} */ (maxTokens ?? null),
    },
    executionRules: {
      allowExec: flag(execution.allowExec, 'executionRules.allowExec') ?? true,
      allowNetworkCalls: flag(execution.allowNetworkCalls, 'executionRules.allowNetworkCalls') ?? true,
    },
  };
}

/**
 * The workspace access rules that carry a policy's world rules.
 * @param {import('./index.js').NormalizedPolicy} policy
 */
function accessRulesOf(policy) {
  const { readPatterns, writePatterns, readOnly } = policy.worldRules;
  return { readPatterns, writePatterns, readOnly };
}

/**
 * The rules the native gate enforces: the operation lists, llmRules and executionRules (with
 * the operations declared as making network calls).
 * @param {import('./index.js').NormalizedPolicy} policy
 * @param {Map<string, { network: boolean }>} operations
 */
function gatePolicy(policy, operations) {
  const { llmRules, executionRules } = policy;
  return {
    allowedOperations: policy.allowedOperations ?? undefined,
    deniedOperations: policy.deniedOperations,
    allowComplete: llmRules.allowComplete,
    maxTokensPerCall: llmRules.maxTokensPerCall ?? undefined,
    allowExec: executionRules.allowExec,
    allowNetworkCalls: executionRules.allowNetworkCalls,
    networkOperations: [...operations].filter(([, op]) => op.network).map(([name]) => name),
  };
}

/**
 * The policy as a snapshot stores it, and back.
 * @param {import('./index.js').NormalizedPolicy} policy
 */
function policyToJSON(policy) {
  return JSON.parse(JSON.stringify(policy));
}

module.exports = { policies, normalizePolicy, accessRulesOf, gatePolicy, policyToJSON, WORLD_OPERATIONS };
