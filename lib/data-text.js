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

/** @type {unique symbol} */
const REFUSED = /** @type {any} */ (Symbol('refused'));

/**
 * @param {unknown} data the `data` option
 * @returns {string | undefined} JSON text of the record, or undefined when it is not plain JSON
 */
function dataText(data) {
  if (data === null || typeof data !== 'object') return undefined;
  const state = { values: 0, seen: new Set() };
  const text = write(data, 0, state);
  return text === REFUSED ? undefined : text;
}

/**
 * @param {unknown} v
 * @param {number} depth
 * @param {{ values: number, seen: Set<object> }} state
 * @returns {string | typeof REFUSED}
 */
function write(v, depth, state) {
  if (++state.values > MAX_VALUES) return REFUSED;
  switch (typeof v) {
    case 'string':
      return v.isWellFormed() ? JSON.stringify(v) : REFUSED;
    case 'number':
      return Number.isFinite(v) && !Object.is(v, -0) ? String(v) : REFUSED;
    case 'boolean':
      return v ? 'true' : 'false';
    case 'object':
      break;
    default:
      return REFUSED;
  }
  if (v === null) return 'null';
  if (depth >= MAX_DEPTH || isProxy(v) || state.seen.has(v)) return REFUSED;
  state.seen.add(v);
  const proto = getPrototypeOf(v);
  let out = '';
  if (isArray(v)) {
    if (proto !== arrayProto || keys(v).length !== v.length) return REFUSED;
    out = '[';
    for (let i = 0; i < v.length; i++) {
      const item = ownValue(v, String(i), depth, state);
      if (item === REFUSED) return REFUSED;
      out += i === 0 ? item : `,${item}`;
    }
    return `${out}]`;
  }
  if (proto !== objectProto && proto !== null) return REFUSED;
  out = '{';
  let first = true;
  for (const k of keys(v)) {
    if (!k.isWellFormed()) return REFUSED;
    const item = ownValue(v, k, depth, state);
    if (item === REFUSED) return REFUSED;
    out += `${first ? '' : ','}${JSON.stringify(k)}:${item}`;
    first = false;
  }
  return `${out}}`;
}

/**
 * An own data property's value as text; an accessor is refused unread.
 * @param {object} obj
 * @param {string} key
 * @param {number} depth
 * @param {{ values: number, seen: Set<object> }} state
 */
function ownValue(obj, key, depth, state) {
  const d = getOwnPropertyDescriptor(obj, key);
  if (d === undefined || !('value' in d)) return REFUSED;
  return write(d.value, depth + 1, state);
}

module.exports = { dataText };
