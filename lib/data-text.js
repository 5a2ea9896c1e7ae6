'use strict';
// `data` as JSON text, when it is plain JSON: one string crosses into the addon instead of
// one native call per property and value. Only values whose copy JSON keeps exactly qualify;
// anything else (undefined, -0, NaN, bigints, Dates, Maps, bytes, class instances, proxies,
// accessors, holes, shared parts, lone surrogates) is copied natively, as before. Reading is
// free of side effects: no getter or proxy trap runs here, so the native copy that follows a
// refusal sees the data as it was.

const { isProxy } = require('node:util').types;

const { getPrototypeOf, keys, getOwnPropertyDescriptor } = Object;
const objectProto = Object.prototype;
const arrayProto = Array.prototype;
const isArray = Array.isArray;

/** Larger data is copied natively, which reports the exact limit a copy exceeds. */
const MAX_VALUES = 20_000;
// Below the JSON reader's own nesting limit (128).
const MAX_DEPTH = 100;

/** @typedef {{ values: number, seen: object[], seenSet: Set<object> | null }} State */

/** @type {unique symbol} */
const REFUSED = /** @type {any} */ (Symbol('refused'));
/** Strings JSON writes between quotes as they are (no quote, backslash or control character). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what JSON escapes
const PLAIN_STRING = /^[^"\\\u0000-\u001f]*$/;

/**
 * @param {unknown} data the `data` option
 * @returns {string | undefined} JSON text of the record, or undefined when it is not a plain
 * JSON object (an array is refused too: the native copy reports that `data` must be a record)
 */
function dataText(data) {
  // A proxy is refused before anything reads it: even Array.isArray throws on a revoked one.
  if (data === null || typeof data !== 'object' || isProxy(data) || isArray(data)) return undefined;
  const state = { values: 0, seen: /** @type {object[]} */ ([]), seenSet: /** @type {Set<object> | null} */ (null) };
  const text = write(data, 0, state);
  return text === REFUSED ? undefined : text;
}

/** @param {string} s */
function quoted(s) {
  return PLAIN_STRING.test(s) ? `"${s}"` : JSON.stringify(s);
}

/**
 * @param {unknown} v
 * @param {number} depth
 * @param {State} state
 * @returns {string | typeof REFUSED}
 */
function write(v, depth, state) {
  if (++state.values > MAX_VALUES) return REFUSED;
  const type = typeof v;
  if (type === 'string') return /** @type {string} */ (v).isWellFormed() ? quoted(/** @type {string} */ (v)) : REFUSED;
  if (type === 'number') return Number.isFinite(v) && !Object.is(v, -0) ? `${v}` : REFUSED;
  if (type === 'boolean') return v ? 'true' : 'false';
  if (type !== 'object') return REFUSED;
  if (v === null) return 'null';
  const obj = /** @type {object} */ (v);
  // Shared parts and cycles keep their shape only in the value-by-value copy.
  if (depth >= MAX_DEPTH || isProxy(obj) || !firstVisit(obj, state)) return REFUSED;
  const proto = getPrototypeOf(obj);
  if (isArray(obj)) {
    if (proto !== arrayProto) return REFUSED;
    let out = '[';
    for (let i = 0; i < obj.length; i++) {
      const item = ownValue(obj, i, depth, state);
      if (item === REFUSED) return REFUSED;
      out += i === 0 ? item : `,${item}`;
    }
    return `${out}]`;
  }
  if (proto !== objectProto && proto !== null) return REFUSED;
  let out = '{';
  const names = keys(obj);
  for (let i = 0; i < names.length; i++) {
    const k = names[i];
    if (!k.isWellFormed()) return REFUSED;
    const item = ownValue(obj, k, depth, state);
    if (item === REFUSED) return REFUSED;
    out += `${i === 0 ? '' : ','}${quoted(k)}:${item}`;
  }
  return `${out}}`;
}

/**
 * Records a visit; false when `obj` was seen before. A list while it is short (cheaper than a
 * Set for the common small record), a Set after.
 * @param {object} obj
 * @param {State} state
 */
function firstVisit(obj, state) {
  if (state.seenSet !== null) {
    if (state.seenSet.has(obj)) return false;
    state.seenSet.add(obj);
    return true;
  }
  if (state.seen.includes(obj)) return false;
  state.seen.push(obj);
  if (state.seen.length > 32) state.seenSet = new Set(state.seen);
  return true;
}

/**
 * An own data property's value as text; a hole or an accessor is refused unread.
 * @param {object} obj
 * @param {string | number} key
 * @param {number} depth
 * @param {State} state
 */
function ownValue(obj, key, depth, state) {
  const d = getOwnPropertyDescriptor(obj, key);
  if (d === undefined || !('value' in d)) return REFUSED;
  return write(d.value, depth + 1, state);
}

module.exports = { dataText };
