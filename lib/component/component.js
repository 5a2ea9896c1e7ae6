'use strict';
// StatefulComponent: a component whose public states a model edits by writing a script.
// Render → the model writes a script → executeScript → render again.
//
// Subclasses declare `publicStates`, `privateStates` and `securityConfig` as class fields and
// override `getScriptUtilities()`. Fields of a subclass are defined after the base constructor
// returns, so the base reads them lazily, at each call, and keeps its own bookkeeping in
// private (#) fields that no subclass member can collide with.

const { runSync } = require('../run.js');
const { invalidInput } = require('../errors.js');
const { limitationsOf, strictest, executeOnStates, COMPLETION_GLOBAL } = require('./execute.js');
const { SPEC_GLOBAL, SCRIPT_FUNCTION } = require('./prelude.js');
const { isContainer } = require('./diff.js');
const { renderStates, renderScriptSection } = require('./render.js');
const { componentTools } = require('./tools.js');

/**
 * @typedef {import('./index.js').PublicState} PublicState
 * @typedef {import('./index.js').ScriptExecutionResult} ScriptExecutionResult
 * @typedef {import('./index.js').ExecuteScriptOptions} ExecuteScriptOptions
 * @typedef {import('../tools/index.js').ToolSet} ToolSet
 * @typedef {import('./execute.js').StateEntry} StateEntry
 * @typedef {import('./execute.js').Limitations} Limitations
 * @typedef {import('./render.js').UtilityEntry} UtilityEntry
 * @typedef {{ title: string, entries: StateEntry[], utilities: Map<string, UtilityEntry>, limitations: Limitations,
 *   examples: string[] }} Description
 */

/** Whether a state is shown to the model (`public`) or kept for the component's own logic (`private`). */
const StateType = Object.freeze({ public: 'public', private: 'private' });

/** What a script may do with a public state. The long names are aliases kept for ported code. */
const Permission = Object.freeze({
  r: 'r',
  w: 'w',
  rw: 'rw',
  READ_ONLY: 'r',
  WRITE_ONLY: 'w',
  READ_AND_WRITE: 'rw',
});

const RESERVED_WORDS = new Set(
  (
    'break case catch class const continue debugger default delete do else enum export extends false finally for ' +
    'function if import in instanceof new null return super switch this throw true try typeof var void while with ' +
    'yield let static implements interface package private protected public await arguments eval undefined NaN Infinity'
  ).split(' '),
);

/** @type {Set<string> | undefined} */
let realmGlobals;

/** Names the realm already defines (console, JSON, emit, ...): a state or utility cannot take them. */
function takenNames() {
  if (!realmGlobals) {
    const r = runSync('return Object.getOwnPropertyNames(globalThis)');
    realmGlobals = new Set(r.ok && Array.isArray(r.value) ? /** @type {string[]} */ (r.value) : []);
    realmGlobals.add(COMPLETION_GLOBAL);
    realmGlobals.add(SPEC_GLOBAL);
    realmGlobals.add(SCRIPT_FUNCTION);
  }
  return realmGlobals;
}

/**
 * @param {string} owner
 * @param {string} kind
 * @param {string} name
 * @param {Set<string>} used names already given to another state or utility
 */
function checkName(owner, kind, name, used) {
  if (!/^[A-Za-z_$][\w$]*$/.test(name) || RESERVED_WORDS.has(name))
    throw invalidInput(`${owner}: ${kind} name '${name}' must be a JavaScript identifier (it becomes a global)`);
  if (takenNames().has(name))
    throw invalidInput(`${owner}: ${kind} name '${name}' collides with a global the sandbox already defines`);
  if (used.has(name)) throw invalidInput(`${owner}: the name '${name}' is used twice`);
  used.add(name);
}

/**
 * Reads and checks a component's public states.
 * @param {string} owner
 * @param {unknown} publicStates
 * @param {Set<string>} used
 * @returns {StateEntry[]}
 */
function stateEntries(owner, publicStates, used) {
  if (publicStates === undefined || publicStates === null) return [];
  if (typeof publicStates !== 'object') throw invalidInput(`${owner}.publicStates must be an object`);
  /** @type {StateEntry[]} */
  const entries = [];
  for (const [name, def] of Object.entries(publicStates)) {
    const where = `${owner}.publicStates.${name}`;
    if (def === null || typeof def !== 'object') throw invalidInput(`${where} must be an object`);
    if (def.type !== undefined && def.type !== StateType.public)
      throw invalidInput(`${where}.type must be StateType.public (private states belong in privateStates)`);
    if (!['r', 'w', 'rw'].includes(def.permission))
      throw invalidInput(`${where}.permission must be Permission.r, Permission.w or Permission.rw`);
    if (typeof def.schema?.['~standard']?.validate !== 'function')
      throw invalidInput(`${where}.schema must be a Standard Schema (zod, valibot, arktype, ...)`);
    if (!isContainer(def.state)) throw invalidInput(`${where}.state must be a plain object or an array`);
    if (def.sideEffectsDesc !== undefined && typeof def.sideEffectsDesc !== 'string')
      throw invalidInput(`${where}.sideEffectsDesc must be a string`);
    checkName(owner, 'state', name, used);
    entries.push({ name, def: /** @type {PublicState} */ (def) });
  }
  return entries;
}

/**
 * Reads and checks the utilities a component offers scripts.
 * @param {string} owner
 * @param {unknown} utilities
 * @param {Set<string>} used
 * @returns {Map<string, UtilityEntry>}
 */
function utilityEntries(owner, utilities, used) {
  /** @type {Map<string, UtilityEntry>} */
  const out = new Map();
  if (utilities === undefined || utilities === null) return out;
  if (typeof utilities !== 'object') throw invalidInput(`${owner}.getScriptUtilities() must return an object`);
  for (const [name, value] of Object.entries(utilities)) {
    checkName(owner, 'utility', name, used);
    if (typeof value === 'function') out.set(name, { call: value });
    else if (value && typeof value === 'object' && typeof value.fn === 'function') {
      out.set(name, {
        call: value.fn,
        description: typeof value.description === 'string' ? value.description : undefined,
        signature: typeof value.signature === 'string' ? value.signature : undefined,
      });
    } else throw invalidInput(`${owner}: utility '${name}' must be a function or { fn, description?, signature? }`);
  }
  return out;
}

/**
 * A field a subclass declares (the base class declares none, so nothing it defines can shadow them).
 * @param {object} component
 * @param {string} name
 * @returns {unknown}
 */
function subclassField(component, name) {
  return /** @type {Record<string, unknown>} */ (component)[name];
}

/** @type {WeakMap<object, Promise<void>>} */
const tails = new WeakMap();

/**
 * Runs `task` once every earlier script on any of `owners` has finished, so two scripts never
 * edit the same states at once.
 * @template T
 * @param {object[]} owners
 * @param {() => Promise<T>} task
 * @returns {Promise<T>}
 */
function exclusive(owners, task) {
  const previous = owners.map((o) => tails.get(o));
  const done = Promise.all(previous).then(task);
  const settled = done.then(
    () => {},
    () => {},
  );
  for (const o of owners) tails.set(o, settled);
  return done;
}

/** @type {(component: StatefulComponent, used: Set<string>) => Description} */
let describe;
/** @type {(component: StatefulComponent, result: unknown) => void} */
let recordCompletion;

/**
 * @param {StatefulComponent | ComponentGroup} target
 * @param {StatefulComponent[]} owners
 * @param {() => Description} read
 * @param {unknown} script
 * @param {ExecuteScriptOptions | undefined} options
 * @param {(result: unknown) => void} onCompletion
 * @returns {Promise<ScriptExecutionResult>}
 */
async function executeFor(target, owners, read, script, options, onCompletion) {
  // Configuration mistakes throw now, before anything runs.
  const description = read();
  return exclusive([target, ...owners], () =>
    executeOnStates(description.entries, description.utilities, description.limitations, script, {
      signal: options?.signal,
      onCompletion,
    }),
  );
}

/** The base class of components whose public states a model edits with scripts. */
class StatefulComponent {
  /** @type {{ result: unknown } | undefined} */
  #completion;

  static {
    describe = (component, used) => component.#describe(used);
    recordCompletion = (component, result) => {
      component.#completion = { result };
    };
  }

  /**
   * @param {Set<string>} used
   * @returns {Description}
   */
  #describe(used) {
    const title = this.constructor.name || 'Component';
    const entries = stateEntries(title, subclassField(this, 'publicStates'), used);
    const utilities = utilityEntries(title, this.getScriptUtilities(), used);
    const examples = this.getScriptExamples();
    if (!Array.isArray(examples) || examples.some((e) => typeof e !== 'string'))
      throw invalidInput(`${title}.getScriptExamples() must return an array of strings`);
    return {
      title,
      entries,
      utilities,
      limitations: limitationsOf(/** @type {any} */ (subclassField(this, 'securityConfig'))),
      examples,
    };
  }

  /**
   * Host functions scripts may call, by global name. Override to offer some.
   * @returns {Record<string, Function | { fn: Function, description?: string, signature?: string }>}
   */
  getScriptUtilities() {
    return {};
  }

  /**
   * Extra example lines for the script section. Override to teach the model this component's idioms.
   * @returns {string[]}
   */
  getScriptExamples() {
    return [];
  }

  /**
   * The public states for a model: names, permissions, side effects, current values of readable states.
   * @returns {Promise<string>}
   */
  async render() {
    const d = describe(this, new Set());
    return renderStates(d.title, d.entries);
  }

  /**
   * render() plus what a model needs to write a correct script: declarations derived from the
   * schemas, current values as initialisation code, utilities, examples and how to complete.
   * @returns {Promise<string>}
   */
  async renderWithScriptSection() {
    const d = describe(this, new Set());
    return `${renderStates(d.title, d.entries, false)}\n\n${renderScriptSection(d.entries, d.utilities, d.examples)}`;
  }

  /**
   * Runs a model's script against the public states. Never throws for the script's failures:
   * they come back in the result, and then no state has changed.
   * @param {string} script
   * @param {ExecuteScriptOptions} [options]
   * @returns {Promise<ScriptExecutionResult>}
   */
  executeScript(script, options) {
    return executeFor(
      this,
      [],
      () => describe(this, new Set()),
      script,
      options,
      (result) => recordCompletion(this, result),
    );
  }

  /**
   * Records that the task is complete (what the attempt_completion tool does).
   * @param {unknown} result
   */
  async attemptCompletion(result) {
    recordCompletion(this, result);
  }

  /**
   * The last recorded completion, if any.
   * @returns {{ result: unknown } | undefined}
   */
  getCompletion() {
    return this.#completion;
  }

  /**
   * The tools a model uses with this component: execute_script and attempt_completion.
   * @returns {ToolSet}
   */
  getCommonTools() {
    return componentTools(this);
  }
}

/** Several components edited by one script: each state under its own name, committed together. */
class ComponentGroup {
  /** @type {StatefulComponent[]} */
  #members;
  /** @type {{ result: unknown } | undefined} */
  #completion;

  /** @param {StatefulComponent[]} components */
  constructor(components) {
    if (components.length === 0 || components.some((c) => !(c instanceof StatefulComponent)))
      throw invalidInput('compose() takes one or more StatefulComponent instances');
    if (new Set(components).size !== components.length) throw invalidInput('compose() got the same component twice');
    this.#members = [...components];
  }

  /** The composed components, in order. */
  get components() {
    return [...this.#members];
  }

  /** @returns {Description} */
  #describe() {
    const used = new Set();
    const parts = this.#members.map((m) => describe(m, used));
    return {
      title: parts.map((p) => p.title).join(' + '),
      entries: parts.flatMap((p) => p.entries),
      utilities: new Map(parts.flatMap((p) => [...p.utilities])),
      limitations: strictest(parts.map((p) => p.limitations)),
      examples: parts.flatMap((p) => p.examples),
    };
  }

  /** Each component's render(), one after another. */
  async render() {
    const used = new Set();
    return this.#members
      .map((m) => {
        const d = describe(m, used);
        return renderStates(d.title, d.entries);
      })
      .join('\n\n');
  }

  /** Every component's states, then one script section over all states and utilities. */
  async renderWithScriptSection() {
    const used = new Set();
    const parts = this.#members.map((m) => describe(m, used));
    const states = parts.map((p) => renderStates(p.title, p.entries, false)).join('\n\n');
    const d = this.#describe();
    return `${states}\n\n${renderScriptSection(d.entries, d.utilities, d.examples)}`;
  }

  /**
   * Runs one script against every component's states; the changes are validated and applied
   * together or not at all. Limits are the strictest of the components'.
   * @param {string} script
   * @param {ExecuteScriptOptions} [options]
   * @returns {Promise<ScriptExecutionResult>}
   */
  executeScript(script, options) {
    return executeFor(
      this,
      this.#members,
      () => this.#describe(),
      script,
      options,
      (result) => {
        this.#completion = { result };
        for (const m of this.#members) recordCompletion(m, result);
      },
    );
  }

  /** @param {unknown} result */
  async attemptCompletion(result) {
    this.#completion = { result };
    for (const m of this.#members) recordCompletion(m, result);
  }

  /** @returns {{ result: unknown } | undefined} */
  getCompletion() {
    return this.#completion;
  }

  /** @returns {ToolSet} */
  getCommonTools() {
    return componentTools(this);
  }
}

/**
 * Composes components so that one script edits all their states at once.
 * @param {...StatefulComponent} components
 * @returns {ComponentGroup}
 */
function compose(...components) {
  return new ComponentGroup(components);
}

module.exports = { StatefulComponent, ComponentGroup, StateType, Permission, compose };
