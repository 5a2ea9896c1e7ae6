'use strict';
// What a model reads about a component: its public states (names, permissions, side effects,
// current values of readable states), TypeScript declarations derived from each schema's JSON
// Schema export, the utilities it may call, examples, and how to finish. Kept compact: every
// character here is paid for in tokens on every turn.

const { boundedInspect, boundedJson } = require('../tools/show.js');

/**
 * @typedef {import('./index.js').PublicState} PublicState
 * @typedef {import('./index.js').StandardSchemaV1} StandardSchemaV1
 * @typedef {{ name: string, def: PublicState }} StateEntry
 * @typedef {{ call: (...args: any[]) => unknown, description?: string, signature?: string }} UtilityEntry
 * @typedef {Record<string, any>} JsonSchema
 * @typedef {{ defs: Record<string, JsonSchema>, named: Map<string, string>, rootName: string, rootUsed: boolean }} TypeContext
 */

/** Longest current value shown, in characters. */
const MAX_VALUE_CHARS = 2000;
/** Number bounds JSON Schema exporters add for "safe integer"; not worth the model's attention. */
const SAFE_BOUND = Number.MAX_SAFE_INTEGER;

/**
 * A value as compact JSON (bigints as numbers, Maps and Sets as arrays), cut at MAX_VALUE_CHARS.
 * @param {unknown} value
 */
function showValue(value) {
  // A state may hold one array many times at every level: printed with a budget, so the text
  // costs about its own length however often values repeat.
  const convert = (/** @type {unknown} */ v) => {
    if (typeof v === 'bigint') return Number(v);
    if (v instanceof Map) return [...v.entries()];
    if (v instanceof Set) return [...v];
    return v;
  };
  let text;
  try {
    text = boundedJson(value, MAX_VALUE_CHARS, undefined, convert).text;
  } catch {
    // A cycle: shown the way util.inspect marks it, within the same budget.
    text = boundedInspect(
      value,
      { depth: 4, maxArrayLength: 100, maxStringLength: MAX_VALUE_CHARS, breakLength: Number.POSITIVE_INFINITY },
      MAX_VALUE_CHARS,
    );
  }
  text ??= String(value);
  return text.length > MAX_VALUE_CHARS
    ? `${text.slice(0, MAX_VALUE_CHARS)}… (${text.length - MAX_VALUE_CHARS} more characters)`
    : text;
}

/** @type {(() => ((schema: unknown) => JsonSchema) | null) & { cached?: ((schema: unknown) => JsonSchema) | null }} */
const valibotConverter = () => {
  if (valibotConverter.cached !== undefined) return valibotConverter.cached;
  try {
    // An optional peer: looked up by a computed name so that nothing requires it to be installed.
    const id = ['@valibot', 'to-json-schema'].join('/');
    valibotConverter.cached = require(id).toJsonSchema;
  } catch {
    valibotConverter.cached = null;
  }
  return valibotConverter.cached ?? null;
};

/**
 * The schema's JSON Schema, through the validator's own export: the Standard JSON Schema
 * interface (`~standard.jsonSchema`, zod 4 and others), arktype's `toJsonSchema()`, or
 * `@valibot/to-json-schema` when it is installed. Undefined when none applies.
 * @param {StandardSchemaV1} schema
 * @returns {JsonSchema | undefined}
 */
function jsonSchemaOf(schema) {
  const standard = /** @type {any} */ (schema)['~standard'];
  const attempts = [
    () => standard?.jsonSchema?.input?.({ target: 'draft-2020-12' }),
    () => /** @type {any} */ (schema).toJsonSchema?.(),
    () => (standard?.vendor === 'valibot' ? valibotConverter()?.(schema) : undefined),
  ];
  for (const attempt of attempts) {
    try {
      const found = attempt();
      if (found && typeof found === 'object') return found;
    } catch {
      // this exporter cannot describe the schema (a transform, a custom check): try the next
    }
  }
  return undefined;
}

/**
 * A type name part: `__schema0` → `Schema0`, `search_box_state` → `SearchBoxState`.
 * @param {string} text
 */
function pascal(text) {
  return text
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join('');
}

/** @param {string} key */
function propertyName(key) {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? key : JSON.stringify(key);
}

/**
 * Short notes on a schema's constraints, for a comment next to its type.
 * @param {JsonSchema} s
 */
function notesOf(s) {
  /** @type {string[]} */
  const notes = [];
  if (typeof s.description === 'string') notes.push(s.description);
  if (s.type === 'integer') notes.push('integer');
  if (typeof s.minLength === 'number' && s.minLength > 0) notes.push(`min ${s.minLength} chars`);
  if (typeof s.maxLength === 'number') notes.push(`max ${s.maxLength} chars`);
  if (typeof s.minimum === 'number' && s.minimum > -SAFE_BOUND) notes.push(`>= ${s.minimum}`);
  if (typeof s.exclusiveMinimum === 'number') notes.push(`> ${s.exclusiveMinimum}`);
  if (typeof s.maximum === 'number' && s.maximum < SAFE_BOUND) notes.push(`<= ${s.maximum}`);
  if (typeof s.exclusiveMaximum === 'number') notes.push(`< ${s.exclusiveMaximum}`);
  if (typeof s.minItems === 'number' && s.minItems > 0) notes.push(`min ${s.minItems} items`);
  if (typeof s.maxItems === 'number') notes.push(`max ${s.maxItems} items`);
  if (typeof s.pattern === 'string') notes.push(`matches /${s.pattern}/`);
  if (typeof s.format === 'string') notes.push(s.format);
  return notes;
}

/**
 * A TypeScript type for a JSON Schema. `$ref`s to `$defs` become named types listed in `named`.
 * @param {JsonSchema | boolean | undefined} s
 * @param {string} indent
 * @param {TypeContext} ctx
 * @returns {string}
 */
function tsType(s, indent, ctx) {
  if (s === true || s === undefined) return 'unknown';
  if (s === false) return 'never';
  if (typeof s.$ref === 'string') {
    if (s.$ref === '#') {
      ctx.rootUsed = true;
      return ctx.rootName;
    }
    const def = s.$ref.replace(/^#\/(\$defs|definitions)\//, '');
    if (!(def in ctx.defs)) return 'unknown';
    const name = `${ctx.rootName}${pascal(def)}`;
    if (!ctx.named.has(name)) {
      ctx.named.set(name, 'unknown');
      ctx.named.set(name, tsType(ctx.defs[def], '', ctx));
    }
    return name;
  }
  if ('const' in s) return JSON.stringify(s.const);
  if (Array.isArray(s.enum)) return s.enum.map((v) => JSON.stringify(v)).join(' | ');
  const union = s.anyOf ?? s.oneOf;
  if (Array.isArray(union)) return union.map((m) => wrapUnion(tsType(m, indent, ctx))).join(' | ');
  if (Array.isArray(s.allOf)) return s.allOf.map((m) => wrapUnion(tsType(m, indent, ctx))).join(' & ');
  if (Array.isArray(s.type))
    return s.type.map((/** @type {string} */ t) => tsType({ ...s, type: t }, indent, ctx)).join(' | ');
  switch (s.type) {
    case 'string':
      return 'string';
    case 'number':
    case 'integer':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array':
      if (Array.isArray(s.prefixItems))
        return `[${s.prefixItems.map((/** @type {JsonSchema} */ m) => tsType(m, indent, ctx)).join(', ')}]`;
      return `${wrapUnion(tsType(s.items, indent, ctx))}[]`;
    case 'object':
      return objectType(s, indent, ctx);
    default:
      return s.properties ? objectType(s, indent, ctx) : 'unknown';
  }
}

/** @param {string} type */
function wrapUnion(type) {
  return /[|&]/.test(type) && !/^[{[]/.test(type) ? `(${type})` : type;
}

/**
 * @param {JsonSchema} s
 * @param {string} indent
 * @param {TypeContext} ctx
 */
function objectType(s, indent, ctx) {
  const props = s.properties && typeof s.properties === 'object' ? Object.entries(s.properties) : [];
  const extra = s.additionalProperties;
  const extraType = extra && typeof extra === 'object' ? tsType(extra, indent, ctx) : undefined;
  if (props.length === 0) return `Record<string, ${extraType ?? 'unknown'}>`;
  const required = new Set(Array.isArray(s.required) ? s.required : []);
  const inner = `${indent}  `;
  const lines = props.map(([key, prop]) => {
    const notes = typeof prop === 'object' ? notesOf(prop) : [];
    const comment = notes.length > 0 ? ` // ${notes.join('; ')}` : '';
    return `${inner}${propertyName(key)}${required.has(key) ? '' : '?'}: ${tsType(prop, inner, ctx)};${comment}`;
  });
  if (extraType) lines.push(`${inner}[key: string]: ${extraType};`);
  return `{\n${lines.join('\n')}\n${indent}}`;
}

/**
 * A TypeScript type read off a value, for schemas without a JSON Schema export.
 * @param {unknown} value
 * @param {string} indent
 * @returns {string}
 */
function typeFromValue(value, indent) {
  if (value === null) return 'null';
  if (Array.isArray(value)) {
    const kinds = [...new Set(value.map((v) => typeFromValue(v, indent)))];
    if (kinds.length === 0) return 'unknown[]';
    return kinds.length === 1 ? `${wrapUnion(kinds[0])}[]` : `(${kinds.join(' | ')})[]`;
  }
  if (value instanceof Date) return 'Date';
  if (value instanceof Map) return 'Map<unknown, unknown>';
  if (value instanceof Set) return 'Set<unknown>';
  if (typeof value === 'object') {
    const inner = `${indent}  `;
    const entries = Object.entries(/** @type {object} */ (value));
    if (entries.length === 0) return 'Record<string, unknown>';
    return `{\n${entries.map(([k, v]) => `${inner}${propertyName(k)}: ${typeFromValue(v, inner)};`).join('\n')}\n${indent}}`;
  }
  if (typeof value === 'bigint') return 'bigint';
  return typeof value === 'undefined' ? 'undefined' : typeof value;
}

/** @type {WeakMap<object, Map<string, { type: string, named: Map<string, string> } | null>>} */
const declarationCache = new WeakMap();

/**
 * The TypeScript type of a state and whether it came from the schema. Named types (recursive
 * and shared parts of the schema) are prefixed with the state's name, so two states never
 * declare the same type name.
 * @param {string} name
 * @param {PublicState} def
 * @returns {{ type: string, named: Map<string, string>, fromSchema: boolean }}
 */
function stateType(name, def) {
  let byName = declarationCache.get(def.schema);
  if (!byName) {
    byName = new Map();
    declarationCache.set(def.schema, byName);
  }
  let cached = byName.get(name);
  if (cached === undefined) {
    const json = jsonSchemaOf(def.schema);
    if (json) {
      /** @type {TypeContext} */
      const ctx = {
        defs: { ...(json.definitions ?? {}), ...(json.$defs ?? {}) },
        named: new Map(),
        rootName: pascal(name),
        rootUsed: false,
      };
      const type = tsType(json, '', ctx);
      if (ctx.rootUsed) {
        ctx.named.set(ctx.rootName, type);
        cached = { type: ctx.rootName, named: ctx.named };
      } else cached = { type, named: ctx.named };
    } else cached = null;
    byName.set(name, cached);
  }
  if (cached) return { ...cached, fromSchema: true };
  const type = def.permission === 'w' ? 'Record<string, unknown>' : typeFromValue(def.state, '');
  return { type, named: new Map(), fromSchema: false };
}

/**
 * The parameter names of a host function, read from its source text.
 * @param {(...args: any[]) => unknown} fn
 * @returns {string[]}
 */
function parameterNames(fn) {
  const source = Function.prototype.toString.call(fn);
  const fallback = () => Array.from({ length: fn.length }, (_, i) => `arg${i}`);
  if (source.includes('[native code]')) return fallback();
  const arrow = /^(?:async\s+)?([A-Za-z_$][\w$]*)\s*=>/.exec(source);
  if (arrow) return [arrow[1]];
  const open = source.indexOf('(');
  if (open < 0) return fallback();
  let depth = 0;
  let close = -1;
  for (let i = open; i < source.length; i++) {
    const c = source[i];
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') {
      depth--;
      if (depth === 0) {
        close = i;
        break;
      }
    }
  }
  if (close < 0) return fallback();
  /** @type {string[]} */
  const params = [];
  let current = '';
  depth = 0;
  for (const c of source.slice(open + 1, close)) {
    if (c === '(' || c === '[' || c === '{') depth++;
    if (c === ')' || c === ']' || c === '}') depth--;
    if (c === ',' && depth === 0) {
      params.push(current);
      current = '';
    } else current += c;
  }
  if (current.trim() !== '') params.push(current);
  return params.map((p, i) => {
    const text = p.replace(/\/\*.*?\*\//g, '').trim();
    const name = /^(\.\.\.)?([A-Za-z_$][\w$]*)\s*(=)?/.exec(text);
    if (!name) return `arg${i}`;
    return `${name[1] ?? ''}${name[2]}${name[3] ? '?' : ''}`;
  });
}

/**
 * One utility's declaration line.
 * @param {string} name
 * @param {UtilityEntry} utility
 */
function utilityDeclaration(name, utility) {
  const comment = utility.description ? ` // ${utility.description}` : '';
  if (utility.signature) return `declare function ${name}${utility.signature};${comment}`;
  const params = parameterNames(utility.call).map((p) => (p.startsWith('...') ? `${p}: any[]` : `${p}: any`));
  return `declare function ${name}(${params.join(', ')}): any;${comment}`;
}

/** @type {Record<PublicState['permission'], string>} */
const PERMISSION_WORDS = { rw: 'read-write', r: 'read-only', w: 'write-only' };

/**
 * The states part: one entry per public state, with the current value of readable states
 * unless the script section shows them as initialisation code.
 * @param {string} title
 * @param {StateEntry[]} entries
 * @param {boolean} [withValues]
 */
function renderStates(title, entries, withValues = true) {
  const lines = [`# ${title}`];
  if (entries.length === 0) lines.push('(no public states)');
  for (const { name, def } of entries) {
    const effect = def.sideEffectsDesc ? `: ${def.sideEffectsDesc}` : '';
    lines.push(`- ${name} (${def.permission}, ${PERMISSION_WORDS[def.permission]})${effect}`);
    if (withValues && def.permission !== 'w') lines.push(`  = ${showValue(def.state)}`);
  }
  return lines.join('\n');
}

/**
 * A sample value of a JSON Schema type, for the examples.
 * @param {JsonSchema | undefined} s
 * @returns {string}
 */
function sampleOf(s) {
  if (!s || typeof s !== 'object') return '…';
  if ('const' in s) return JSON.stringify(s.const);
  if (Array.isArray(s.enum) && s.enum.length > 0) return JSON.stringify(s.enum[0]);
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  if (type === 'string') return "'…'";
  if (type === 'number' || type === 'integer')
    return String(typeof s.minimum === 'number' && s.minimum > -SAFE_BOUND ? s.minimum : 1);
  if (type === 'boolean') return 'true';
  if (type === 'array') return '[]';
  return '{}';
}

/**
 * A sample value like a current one, for the examples when there is no JSON Schema.
 * @param {unknown} value
 * @returns {string}
 */
function sampleOfValue(value) {
  if (typeof value === 'string') return "'…'";
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value instanceof Date) return 'new Date()';
  if (value instanceof Map) return 'new Map()';
  if (value instanceof Set) return 'new Set()';
  if (Array.isArray(value)) return '[]';
  return value === null ? 'null' : '{}';
}

/**
 * Example statements for the states and utilities.
 * @param {StateEntry[]} entries
 * @param {Map<string, UtilityEntry>} utilities
 */
function examples(entries, utilities) {
  /** @type {string[]} */
  const out = [];
  for (const { name, def } of entries) {
    if (def.permission === 'r') {
      out.push(`const copy = JSON.parse(JSON.stringify(${name})); // read freely; writes throw`);
      continue;
    }
    const json = jsonSchemaOf(def.schema);
    const props = json?.properties && typeof json.properties === 'object' ? Object.entries(json.properties) : [];
    const valueKeys = def.permission === 'w' ? [] : Object.keys(/** @type {object} */ (def.state));
    const [key, prop] = props[0] ?? [valueKeys[0], undefined];
    if (key === undefined) continue;
    const sample = prop ? sampleOf(prop) : sampleOfValue(/** @type {Record<string, unknown>} */ (def.state)[key]);
    const target = `${name}${/^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`}`;
    out.push(
      def.permission === 'w'
        ? `${target} = ${sample}; // assign whole properties; reading throws`
        : `${target} = ${sample};`,
    );
  }
  const [utility] = utilities.keys();
  if (utility) out.push(`const answer = await ${utility}(/* … */); // utilities run on the host`);
  out.push("await attempt_completion('what was done and the outcome');");
  return out;
}

/**
 * The script section: how scripts run, declarations, current values, utilities, examples and
 * how to complete.
 * @param {StateEntry[]} entries
 * @param {Map<string, UtilityEntry>} utilities
 * @param {string[]} [extraExamples]
 */
function renderScriptSection(entries, utilities, extraExamples = []) {
  /** @type {string[]} */
  const decls = [];
  /** @type {Map<string, string>} */
  const named = new Map();
  /** @type {string[]} */
  const notes = [];
  for (const { name, def } of entries) {
    const { type, named: more, fromSchema } = stateType(name, def);
    for (const [k, v] of more) named.set(k, v);
    const comment = `// ${def.permission}${fromSchema ? '' : '; type read off the current value (the schema has no JSON Schema export)'}`;
    decls.push(`declare const ${name}: ${type}; ${comment}`);
    if (!fromSchema) notes.push(name);
  }
  const values = entries
    .filter(({ def }) => def.permission !== 'w')
    .map(({ name, def }) => `${name} = ${showValue(def.state)};`);
  const present = new Set(entries.map(({ def }) => def.permission));
  const rules = [
    present.has('r') ? 'r: read only.' : '',
    present.has('w') ? 'w: write only; assign top-level properties (s.key = value), never read.' : '',
    present.has('rw') && present.size > 1 ? 'rw: both.' : '',
  ].filter(Boolean);
  const lines = [
    '# Script',
    'Write JavaScript: an async function body (await and return work); no network, files or modules.',
    `The states are existing globals: edit them in place, never redeclare them.${rules.length > 0 ? ` ${rules.join(' ')}` : ''}`,
    'When the script ends, changed states are checked against their types; if it throws or a check fails, nothing changes.',
    '```ts',
    ...[...named].map(([k, v]) => `type ${k} = ${v};`),
    ...decls,
    ...[...utilities].map(([name, u]) => utilityDeclaration(name, u)),
    'declare function attempt_completion(result: string): Promise<void>;',
    '```',
  ];
  if (values.length > 0) lines.push('Current values (already set):', '```js', ...values, '```');
  lines.push('Examples:', '```js', ...extraExamples, ...examples(entries, utilities), '```');
  lines.push(
    'When done, call `await attempt_completion(summary)` in a script (or the attempt_completion tool); it counts if the script succeeds.',
  );
  return lines.join('\n');
}

module.exports = {
  showValue,
  jsonSchemaOf,
  tsType,
  parameterNames,
  renderStates,
  renderScriptSection,
  stateType,
};
