'use strict';
// State values on the host side: copies, structural comparison, the list of changes between two
// values, and applying those changes to a live object with plain property sets (so valtio and
// other proxies observe each one).

/**
 * @typedef {import('./index.js').StateChange} StateChange
 * @typedef {import('./index.js').JsonPatchOp} JsonPatchOp
 * @typedef {string | number} PathKey
 */

/**
 * Whether a value is walked key by key (a plain object or an array); anything else (Date, Map,
 * Set, typed arrays, primitives) is compared and replaced as a whole.
 * @param {unknown} value
 * @returns {value is Record<string, unknown>}
 */
function isContainer(value) {
  if (value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) return true;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * A deep copy made of plain property reads (Map and Set entries included), so it works on
 * valtio proxies and other proxies that structuredClone refuses. Shared references and cycles are kept.
 * @template T
 * @param {T} value
 * @param {Map<object, unknown>} [seen]
 * @returns {T}
 */
function cloneValue(value, seen = new Map()) {
  if (value === null || typeof value !== 'object') return value;
  const known = seen.get(value);
  if (known !== undefined) return /** @type {T} */ (known);
  // Maps and Sets are walked too, so a proxy inside one is read like any other.
  if (value instanceof Map) {
    const copy = new Map();
    seen.set(value, copy);
    for (const [k, v] of value) copy.set(cloneValue(k, seen), cloneValue(v, seen));
    return /** @type {T} */ (copy);
  }
  if (value instanceof Set) {
    const copy = new Set();
    seen.set(value, copy);
    for (const v of value) copy.add(cloneValue(v, seen));
    return /** @type {T} */ (copy);
  }
  if (!isContainer(value)) {
    const copy = structuredClone(value);
    seen.set(value, copy);
    return copy;
  }
  if (Array.isArray(value)) {
    /** @type {unknown[]} */
    const copy = new Array(value.length);
    seen.set(value, copy);
    for (let i = 0; i < value.length; i++) copy[i] = cloneValue(value[i], seen);
    return /** @type {T} */ (copy);
  }
  /** @type {Record<string, unknown>} */
  const copy = Object.getPrototypeOf(value) === null ? Object.create(null) : {};
  seen.set(value, copy);
  for (const key of Object.keys(value)) {
    // defineProperty, so a `__proto__` key stays data.
    Object.defineProperty(copy, key, {
      value: cloneValue(/** @type {Record<string, unknown>} */ (value)[key], seen),
      writable: true,
      enumerable: true,
      configurable: true,
    });
  }
  return /** @type {T} */ (copy);
}

/**
 * Structural equality for state values.
 * @param {unknown} a
 * @param {unknown} b
 * @returns {boolean}
 */
function sameValue(a, b) {
  if (a === b) return true;
  if (typeof a === 'number' && typeof b === 'number') return Number.isNaN(a) && Number.isNaN(b);
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  if (a instanceof Date) return a.getTime() === /** @type {Date} */ (b).getTime();
  if (a instanceof Map) {
    const m = /** @type {Map<unknown, unknown>} */ (b);
    if (a.size !== m.size) return false;
    for (const [k, v] of a) if (!m.has(k) || !sameValue(v, m.get(k))) return false;
    return true;
  }
  if (a instanceof Set) {
    const s = /** @type {Set<unknown>} */ (b);
    return a.size === s.size && [...a].every((v) => s.has(v));
  }
  if (ArrayBuffer.isView(a)) {
    const x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
    const v = /** @type {ArrayBufferView} */ (b);
    const y = new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
    return x.length === y.length && x.every((byte, i) => byte === y[i]);
  }
  if (!isContainer(a)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(/** @type {object} */ (b));
  if (ka.length !== kb.length) return false;
  const rb = /** @type {Record<string, unknown>} */ (b);
  return ka.every((k) => Object.hasOwn(rb, k) && sameValue(a[k], rb[k]));
}

/**
 * A key as it appears in a change path: array indexes as numbers.
 * @param {unknown[] | Record<string, unknown>} container
 * @param {string} key
 * @returns {PathKey}
 */
function pathKey(container, key) {
  return Array.isArray(container) && /^(0|[1-9]\d*)$/.test(key) ? Number(key) : key;
}

/**
 * The changes that turn `before` into `after`, deepest first where both sides are containers of
 * the same kind. Array tails are removed from the end backwards and added in order, so the list
 * applies (and converts to JSON Patch) step by step.
 * @param {string} state
 * @param {unknown} before
 * @param {unknown} after
 * @returns {StateChange[]}
 */
function diffState(state, before, after) {
  /** @type {StateChange[]} */
  const out = [];
  /**
   * @param {PathKey[]} path
   * @param {unknown} a
   * @param {unknown} b
   */
  const walk = (path, a, b) => {
    if (isContainer(a) && isContainer(b) && Array.isArray(a) === Array.isArray(b)) {
      if (Array.isArray(a) && Array.isArray(b)) {
        const common = Math.min(a.length, b.length);
        for (let i = 0; i < common; i++) walk([...path, i], a[i], b[i]);
        for (let i = a.length - 1; i >= b.length; i--)
          out.push({ state, path: [...path, i], before: a[i], after: undefined, op: 'remove' });
        for (let i = a.length; i < b.length; i++)
          out.push({ state, path: [...path, i], before: undefined, after: b[i], op: 'add' });
        return;
      }
      for (const key of Object.keys(a)) {
        if (Object.hasOwn(b, key)) walk([...path, pathKey(a, key)], a[key], b[key]);
        else out.push({ state, path: [...path, key], before: a[key], after: undefined, op: 'remove' });
      }
      for (const key of Object.keys(b)) {
        if (!Object.hasOwn(a, key))
          out.push({ state, path: [...path, key], before: undefined, after: b[key], op: 'add' });
      }
      return;
    }
    if (!sameValue(a, b)) out.push({ state, path, before: a, after: b, op: 'replace' });
  };
  walk([], before, after);
  return out;
}

/**
 * One JSON Pointer segment (RFC 6901): `~` becomes `~0`, `/` becomes `~1`.
 * @param {PathKey} key
 */
function pointerSegment(key) {
  return String(key).replaceAll('~', '~0').replaceAll('/', '~1');
}

/**
 * RFC 6902 operations for a list of changes, with paths `/<state>/<key>/...`.
 * @param {StateChange[]} changes
 * @returns {JsonPatchOp[]}
 */
function toJsonPatch(changes) {
  return changes.map((c) => {
    const path = `/${[c.state, ...c.path].map(pointerSegment).join('/')}`;
    if (c.op === 'remove') return { op: 'remove', path };
    return { op: c.op, path, value: cloneValue(c.after) };
  });
}

/**
 * Sets or removes one change's target on the live object.
 * @param {Record<string, unknown>} live
 * @param {PathKey[]} path
 * @param {'set' | 'remove'} action
 * @param {unknown} value
 */
function writeAt(live, path, action, value) {
  /** @type {any} */
  let target = live;
  for (const key of path.slice(0, -1)) target = target[key];
  const last = path[path.length - 1];
  if (action === 'remove') {
    if (Array.isArray(target)) target.length = Math.min(target.length, Number(last));
    else delete target[last];
  } else {
    target[last] = cloneValue(value);
  }
}

/**
 * Why the live object would refuse a change, found without changing anything: a getter
 * without a setter, a read-only or non-configurable property, an object that cannot grow.
 * @param {Record<string, unknown>} live
 * @param {StateChange} change
 * @returns {string | undefined}
 */
function liveRefusal(live, change) {
  if (change.path.length === 0) return undefined;
  /** @type {any} */
  let parent = live;
  for (const key of change.path.slice(0, -1)) {
    parent = parent?.[key];
    if (parent === null || typeof parent !== 'object') return 'the path no longer exists';
  }
  const key = change.path[change.path.length - 1];
  const own = Object.getOwnPropertyDescriptor(parent, key);
  if (change.op === 'remove') {
    if (Array.isArray(parent)) return Object.isFrozen(parent) ? 'the array is frozen' : undefined;
    return own && !own.configurable ? 'the property cannot be deleted' : undefined;
  }
  if (!own) return Object.isExtensible(parent) ? undefined : 'the object cannot take new properties';
  if ('get' in own || 'set' in own) return own.set ? undefined : 'the property has a getter and no setter';
  return own.writable ? undefined : 'the property is read-only';
}

/**
 * Applies changes to the live state object with plain property sets and deletes; an array
 * shrinks by setting its `length`. Values are copied, so the live state never shares objects
 * with the result. A change the live object would refuse (a getter without a setter, a frozen
 * part) is found before anything is written; one that throws anyway (a proxy's own rule) undoes
 * the changes made so far, in reverse order. Either way the refused change is returned.
 * @param {Record<string, unknown>} live
 * @param {StateChange[]} changes
 * @returns {{ change: StateChange, reason: string } | undefined}
 */
function applyChanges(live, changes) {
  for (const change of changes) {
    const reason = liveRefusal(live, change);
    if (reason) return { change, reason };
  }
  /** @type {StateChange[]} */
  const applied = [];
  for (const change of changes) {
    if (change.path.length === 0) continue;
    try {
      writeAt(live, change.path, change.op === 'remove' ? 'remove' : 'set', change.after);
      applied.push(change);
    } catch (e) {
      for (const done of applied.reverse()) {
        try {
          writeAt(live, done.path, done.op === 'add' ? 'remove' : 'set', done.before);
        } catch {
          // Undoing writes the values that were there a moment ago; nothing better is left to try.
        }
      }
      return { change, reason: e instanceof Error ? e.message : String(e) };
    }
  }
  return undefined;
}

module.exports = {
  isContainer,
  cloneValue,
  sameValue,
  diffState,
  toJsonPatch,
  applyChanges,
  liveRefusal,
  pointerSegment,
};
