'use strict';
// Values a guest handed back, shown to a model as text at a cost bounded by the text's size.
// The marshaller keeps identity, so a value of a few hundred objects can hold one array a
// hundred times at every level: printed as a tree it is 10^10 elements. `JSON.stringify` and
// `util.inspect` would expand it whole (minutes of host time, gigabytes) before any cut; the
// walks here charge every visit and stop at a budget instead.

const { inspect } = require('node:util');

/** Text shown in place of a value left out because the answer's budget was spent. */
const LEFT_OUT = '…';

/**
 * JSON text of `value` built with a budget of about `maxChars` characters: once it is spent,
 * every further value is written as "…" without being visited, so the work is linear in the
 * distinct data however often it repeats. Bigints are written as `123n`. Throws what
 * `JSON.stringify` throws for a cycle.
 * @param {unknown} value
 * @param {number} maxChars
 * @param {number} [space]
 * @param {(value: unknown) => unknown} [convert] applied to each value before it is written (after
 *   the budget's check, so a value left out is not converted)
 * @returns {{ text: string | undefined, complete: boolean }}
 */
function boundedJson(value, maxChars, space, convert) {
  let spent = 0;
  let complete = true;
  const text = JSON.stringify(
    value,
    (key, original) => {
      spent += 2 + key.length;
      if (spent > maxChars) {
        complete = false;
        return LEFT_OUT;
      }
      const v = convert ? convert(original) : original;
      if (typeof v === 'string') spent += v.length;
      else if (typeof v === 'bigint') return `${v}n`;
      return v;
    },
    space,
  );
  return { text, complete };
}

/**
 * @typedef {{ depth: number, maxArrayLength: number, maxStringLength: number }} Shape
 */

/**
 * Whether `util.inspect` with `shape` visits at most `budget` values and string characters
 * (strings charged what it shows of them). Stops counting as soon as the budget is spent.
 * Reads data properties only, as inspect does (getters are not called).
 * @param {unknown} value
 * @param {Shape} shape
 * @param {number} budget
 */
function inspectFits(value, shape, budget) {
  let spent = 0;
  /** @type {Set<object>} */
  const ancestors = new Set();
  /**
   * @param {unknown} v
   * @param {number} level
   * @returns {boolean} false once the budget is spent
   */
  const visit = (v, level) => {
    spent += 1;
    if (typeof v === 'string') spent += Math.min(v.length, shape.maxStringLength);
    if (spent > budget) return false;
    if (v === null || (typeof v !== 'object' && typeof v !== 'function')) return true;
    // Deeper than `depth`, or a cycle: inspect prints a short marker.
    if (level > shape.depth || ancestors.has(v)) return true;
    if (ArrayBuffer.isView(v) || v instanceof ArrayBuffer) {
      spent += Math.min(/** @type {{ byteLength: number }} */ (v).byteLength, shape.maxArrayLength);
      return spent <= budget;
    }
    ancestors.add(v);
    try {
      if (v instanceof Map) {
        let n = 0;
        for (const [k, item] of v) {
          if (n++ >= shape.maxArrayLength) break;
          if (!visit(k, level + 1) || !visit(item, level + 1)) return false;
        }
      } else if (v instanceof Set) {
        let n = 0;
        for (const item of v) {
          if (n++ >= shape.maxArrayLength) break;
          if (!visit(item, level + 1)) return false;
        }
      }
      // An array shows its first maxArrayLength elements; an object every own enumerable key
      // (listed here once per visit, and each visit pays for the keys it reaches).
      const keys = Array.isArray(v)
        ? Array.from({ length: Math.min(v.length, shape.maxArrayLength) }, (_, i) => String(i))
        : Object.keys(v);
      for (const key of keys) {
        const d = Object.getOwnPropertyDescriptor(v, key);
        spent += key.length;
        if (!visit(d && 'value' in d ? d.value : undefined, level + 1)) return false;
      }
      return true;
    } finally {
      ancestors.delete(v);
    }
  };
  return visit(value, 0);
}

/**
 * `util.inspect(value, options)`, shown less deep where the full depth would cost more than
 * `budget` visits (values and characters): each depth is tried at a cost of at most `budget`,
 * deepest first, so the text is built from at most about `budget` of work plus the value's
 * own top level.
 * @param {unknown} value
 * @param {import('node:util').InspectOptions & Shape} options
 * @param {number} budget
 */
function boundedInspect(value, options, budget) {
  let depth = options.depth;
  while (depth > 0 && !inspectFits(value, { ...options, depth }, budget)) depth -= 1;
  return inspect(value, { ...options, depth });
}

module.exports = { boundedJson, boundedInspect };
