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

/** Changes reported for one state before its diff is given more coarsely (see diffState). */
const MAX_CHANGES = 1000;

/**
 * The changes that turn `before` into `after`, or undefined once there would be more than
 * `maxChanges`. Containers of the same kind are walked down to `maxDepth` levels below the
 * state; deeper, a difference is one replace of the whole value there. Array tails are removed
 * from the end backwards and added in order, so the list applies (and converts to JSON Patch)
 * step by step. The path is one array pushed and popped as the walk goes, copied only into a
 * change, so the walk costs one step per value it reaches.
 * @param {string} state
 * @param {unknown} before
 * @param {unknown} after
 * @param {{ maxDepth: number, maxChanges: number }} bounds
 * @returns {StateChange[] | undefined}
 */
function collectChanges(state, before, after, { maxDepth, maxChanges }) {
  /** @type {StateChange[]} */
  const out = [];
  /** @type {PathKey[]} */
  const path = [];
  /**
   * @param {PathKey | undefined} key the last path key, or undefined for the change at `path` itself
   * @param {unknown} was
   * @param {unknown} now
   * @param {StateChange['op']} op
   */
  const record = (key, was, now, op) => {
    out.push({ state, path: key === undefined ? [...path] : [...path, key], before: was, after: now, op });
    return out.length <= maxChanges;
  };
  /**
   * @param {unknown} a
   * @param {unknown} b
   * @returns {boolean} false once the list is over `maxChanges`
   */
  const walk = (a, b) => {
    const walkable =
      path.length < maxDepth && isContainer(a) && isContainer(b) && Array.isArray(a) === Array.isArray(b);
    if (!walkable) return sameValue(a, b) || record(undefined, a, b, 'replace');
    if (Array.isArray(a) && Array.isArray(b)) {
      const common = Math.min(a.length, b.length);
      for (let i = 0; i < common; i++) {
        path.push(i);
        const going = walk(a[i], b[i]);
        path.pop();
        if (!going) return false;
      }
      for (let i = a.length - 1; i >= b.length; i--) if (!record(i, a[i], undefined, 'remove')) return false;
      for (let i = a.length; i < b.length; i++) if (!record(i, undefined, b[i], 'add')) return false;
      return true;
    }
    const ra = /** @type {Record<string, unknown>} */ (a);
    const rb = /** @type {Record<string, unknown>} */ (b);
    for (const key of Object.keys(ra)) {
      if (Object.hasOwn(rb, key)) {
        path.push(pathKey(ra, key));
        const going = walk(ra[key], rb[key]);
        path.pop();
        if (!going) return false;
      } else if (!record(key, ra[key], undefined, 'remove')) return false;
    }
    for (const key of Object.keys(rb)) {
      if (!Object.hasOwn(ra, key) && !record(key, undefined, rb[key], 'add')) return false;
    }
    return true;
  };
  return walk(before, after) ? out : undefined;
}

/**
 * The changes that turn `before` into `after`, at most MAX_CHANGES of them: deepest first where
 * that fits; past it, one change per top-level key or index that differs; past that again, one
 * `replace` of the whole state (path `[]`). Each list is exact, only coarser, and the walks
 * together cost a few steps per value of the two states (whose sizes `measureState` bounds).
 * @param {string} state
 * @param {unknown} before
 * @param {unknown} after
 * @param {number} [maxChanges]
 * @returns {StateChange[]}
 */
function diffState(state, before, after, maxChanges = MAX_CHANGES) {
  return (
    collectChanges(state, before, after, { maxDepth: Number.POSITIVE_INFINITY, maxChanges }) ??
    collectChanges(state, before, after, { maxDepth: 1, maxChanges }) ?? [
      { state, path: [], before, after, op: 'replace' },
    ]
  );
}

/**
 * The changes to apply for a list of reported changes: a replace of a whole state becomes one
 * change per top-level key or index, since the live state object itself is kept.
 * @param {StateChange[]} changes
 * @returns {StateChange[]}
 */
function applicableChanges(changes) {
  /** @type {StateChange[]} */
  const out = [];
  for (const change of changes) {
    if (change.path.length > 0) out.push(change);
    else {
      const unbounded = { maxDepth: 1, maxChanges: Number.POSITIVE_INFINITY };
      for (const c of collectChanges(change.state, change.before, change.after, unbounded) ?? []) out.push(c);
    }
  }
  return out;
}

/**
 * How large a state may be after a script, counted as the tree every later walk (diff, schema,
 * copy, render, JSON) goes through: `values` (the state itself, each array index, property value,
 * Map key and value, Set item), `bytes` (two per UTF-16 unit of strings and keys, binary data at
 * its length) and `depth` (the marshaller's nesting cap).
 */
const STATE_LIMITS = Object.freeze({ values: 100_000, bytes: 16 * 2 ** 20, depth: 256 });

/**
 * @typedef {{ values: number, bytes: number, depth: number }} StateLimits
 * @typedef {{ values: number, bytes: number, shared: boolean, protoKey?: PathKey[] }} StateSize
 */

/**
 * Measures a value as a tree, stopping as soon as it is past `limits`: an object reached by
 * several paths (shared references, which copies keep) counts at each, so a value that would
 * expand exponentially, or without end (a cycle), is over the limits after at most
 * `limits.values` steps. Also finds the first `__proto__` key, which no state may have.
 * @param {unknown} value
 * @param {StateLimits} limits
 * @returns {StateSize | { over: string, at: PathKey[], shared: boolean }}
 */
function measureState(value, limits) {
  let values = 0;
  let bytes = 0;
  let shared = false;
  /** @type {PathKey[] | undefined} */
  let protoKey;
  /** @type {string | undefined} */
  let over;
  /** @type {PathKey[]} */
  const path = [];
  /** @type {Set<object>} */
  const seen = new Set();
  /**
   * @param {PathKey} key
   * @param {unknown} v
   */
  const child = (key, v) => {
    path.push(key);
    const going = visit(v);
    if (going) path.pop();
    return going;
  };
  /** @param {unknown} v */
  const visit = (v) => {
    values += 1;
    if (values > limits.values) over = `more than ${limits.values} values`;
    else if (path.length > limits.depth) over = `nesting deeper than ${limits.depth} levels`;
    if (over) return false;
    if (typeof v === 'string') bytes += v.length * 2;
    else if (typeof v === 'bigint') bytes += Math.ceil(v.toString(16).length / 2);
    else if (v !== null && typeof v === 'object') {
      if (seen.has(v)) shared = true;
      else seen.add(v);
      if (ArrayBuffer.isView(v)) bytes += v.byteLength;
      else if (v instanceof ArrayBuffer) bytes += v.byteLength;
      else if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) if (!child(i, v[i])) return false;
      } else if (v instanceof Map) {
        let i = 0;
        for (const [k, item] of v) {
          if (!child(`<entry ${i}>`, k) || !child(`<entry ${i}>`, item)) return false;
          i++;
        }
      } else if (v instanceof Set) {
        let i = 0;
        for (const item of v) if (!child(`<item ${i++}>`, item)) return false;
      } else if (isContainer(v)) {
        for (const key of Object.keys(v)) {
          bytes += key.length * 2;
          if (key === '__proto__' && protoKey === undefined) protoKey = [...path, key];
          if (!child(key, v[key])) return false;
        }
      }
    }
    if (bytes > limits.bytes) {
      over = `more than ${limits.bytes} bytes of text and binary data`;
      return false;
    }
    return true;
  };
  if (visit(value)) return { values, bytes, shared, ...(protoKey ? { protoKey } : {}) };
  return { over: /** @type {string} */ (over), at: path, shared };
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
  MAX_CHANGES,
  STATE_LIMITS,
  isContainer,
  cloneValue,
  sameValue,
  diffState,
  applicableChanges,
  measureState,
  toJsonPatch,
  applyChanges,
  liveRefusal,
  pointerSegment,
};
