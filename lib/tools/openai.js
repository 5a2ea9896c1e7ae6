'use strict';
// Tool sets as OpenAI function tools (Chat Completions and Responses), with a strict-mode
// schema rewrite, and tool results as the messages those APIs take back.

const { invalidInput } = require('../errors.js');
const { checkToolSet, isPlainObject } = require('./toolset.js');

/**
 * @typedef {import('./index.js').ToolSet} ToolSet
 * @typedef {import('./index.js').ToolResult} ToolResult
 * @typedef {import('./index.js').JsonSchema} JsonSchema
 * @typedef {import('./index.js').OpenAIChatTool} OpenAIChatTool
 * @typedef {import('./index.js').OpenAIResponsesTool} OpenAIResponsesTool
 * @typedef {import('./index.js').OpenAIToolsOptions} OpenAIToolsOptions
 */

// Strict mode accepts a subset of JSON Schema: the structure keywords, and (per OpenAI's
// structured outputs documentation, and as the openai package's own strict-schema transform
// keeps them) pattern, format, minLength, maxLength, minimum, maximum, exclusiveMinimum,
// exclusiveMaximum, multipleOf, minItems and maxItems. Other constraints are refused there, so
// they are described in words instead; dispatch enforces every one against the original schema.
/** Value constraints strict mode accepts. */
const VALIDATION_KEYWORDS = new Set([
  'pattern',
  'format',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minItems',
  'maxItems',
]);

/** Every keyword strict mode accepts: the structure ones and the value constraints. */
const STRICT_KEYWORDS = new Set([
  'type',
  'description',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'anyOf',
  '$ref',
  '$defs',
  ...VALIDATION_KEYWORDS,
]);

/**
 * The constraints strict mode cannot carry, in words for the description.
 * @param {Record<string, unknown>} s
 * @returns {string[]}
 */
function constraintWords(s) {
  /** @type {string[]} */
  const words = [];
  if (s.uniqueItems === true) words.push('no duplicates');
  if (typeof s.minProperties === 'number') words.push(`at least ${s.minProperties} entries`);
  if (typeof s.maxProperties === 'number') words.push(`at most ${s.maxProperties} entries`);
  if (isPlainObject(s.not) && Array.isArray(s.not.enum)) {
    words.push(`not ${s.not.enum.map((v) => JSON.stringify(v)).join(' or ')}`);
  }
  return words;
}

/**
 * Whether a schema is an object with open keys (a map), which strict mode cannot express.
 * @param {unknown} s
 */
function isOpenMap(s) {
  if (!isPlainObject(s)) return false;
  const isObject = s.type === 'object' || (Array.isArray(s.type) && s.type.includes('object'));
  return isObject && !isPlainObject(s.properties) && s.additionalProperties !== false;
}

/**
 * The schema with `null` allowed as well.
 * @param {Record<string, unknown>} s
 * @returns {Record<string, unknown>}
 */
function nullable(s) {
  // A type list is the plain form; constraints keep to their own branch, so a schema carrying
  // any takes the anyOf form.
  const constrained = Object.keys(s).some((k) => VALIDATION_KEYWORDS.has(k));
  if (typeof s.type === 'string' && !constrained) {
    /** @type {Record<string, unknown>} */
    const out = { ...s, type: [s.type, 'null'] };
    if (Array.isArray(s.enum) && !s.enum.includes(null)) out.enum = [...s.enum, null];
    return out;
  }
  if (Array.isArray(s.type) && s.type.includes('null')) return s;
  if (Array.isArray(s.type) && !constrained) return { ...s, type: [...s.type, 'null'] };
  if (Array.isArray(s.anyOf)) {
    return s.anyOf.some((b) => isPlainObject(b) && b.type === 'null')
      ? s
      : { ...s, anyOf: [...s.anyOf, { type: 'null' }] };
  }
  const { description, ...rest } = s;
  return description === undefined
    ? { anyOf: [rest, { type: 'null' }] }
    : { anyOf: [rest, { type: 'null' }], description };
}

/**
 * Rewrites a JSON Schema for OpenAI's strict mode: every property required (optional ones
 * become nullable, and dispatch treats null as absent), `additionalProperties: false` on every
 * object, only the keywords strict mode accepts (others, such as uniqueItems, are described in
 * words), `const` as a one-value enum, and open maps, which strict mode cannot express, left out.
 * @param {JsonSchema} schema
 * @returns {JsonSchema}
 */
function toStrictJsonSchema(schema) {
  if (!isPlainObject(schema)) throw invalidInput('toStrictJsonSchema() takes a JSON Schema object');
  return strictNode(schema);
}

/**
 * @param {Record<string, unknown>} s
 * @returns {Record<string, unknown>}
 */
function strictNode(s) {
  /** @type {Record<string, unknown>} */
  const out = {};
  for (const [k, v] of Object.entries(s)) if (STRICT_KEYWORDS.has(k)) out[k] = v;
  if ('const' in s && out.enum === undefined) out.enum = [s.const];
  const words = constraintWords(s);
  if (words.length) {
    const base = typeof out.description === 'string' ? out.description.replace(/\s*$/, '') : '';
    out.description = base ? `${base} (${words.join(', ')})` : `(${words.join(', ')})`;
  }
  if (isPlainObject(s.properties)) {
    const required = Array.isArray(s.required) ? s.required : [];
    /** @type {Record<string, unknown>} */
    const properties = {};
    for (const [key, sub] of Object.entries(s.properties)) {
      if (!isPlainObject(sub) || isOpenMap(sub)) continue;
      const strict = strictNode(sub);
      properties[key] = required.includes(key) ? strict : nullable(strict);
    }
    out.properties = properties;
    out.required = Object.keys(properties);
    out.additionalProperties = false;
  } else if (s.type === 'object' || (Array.isArray(s.type) && s.type.includes('object'))) {
    out.properties = {};
    out.required = [];
    out.additionalProperties = false;
  }
  if (isPlainObject(s.items)) out.items = strictNode(s.items);
  if (Array.isArray(s.anyOf)) out.anyOf = s.anyOf.map((b) => (isPlainObject(b) ? strictNode(b) : b));
  if (isPlainObject(s.$defs)) {
    out.$defs = Object.fromEntries(Object.entries(s.$defs).map(([k, d]) => [k, isPlainObject(d) ? strictNode(d) : d]));
  }
  return out;
}

/**
 * @param {unknown} options
 * @returns {{ api: 'chat' | 'responses', strict: boolean }}
 */
function checkOptions(options) {
  if (options === undefined) return { api: 'chat', strict: false };
  if (!isPlainObject(options)) throw invalidInput('toOpenAITools() options must be an object');
  for (const key of Object.keys(options)) {
    if (key !== 'api' && key !== 'strict')
      throw invalidInput(`unknown toOpenAITools() option '${key}' (expected: api, strict)`);
  }
  const api = options.api ?? 'chat';
  if (api !== 'chat' && api !== 'responses') throw invalidInput("api must be 'chat' or 'responses'");
  const strict = options.strict ?? false;
  if (typeof strict !== 'boolean') throw invalidInput('strict must be a boolean');
  return { api, strict };
}

/**
 * The tools of `set` as OpenAI function tools: `{ type: 'function', function: {...} }` for
 * Chat Completions, `{ type: 'function', name, ... }` for Responses.
 * @param {ToolSet} set
 * @param {OpenAIToolsOptions} [options]
 * @returns {OpenAIChatTool[] | OpenAIResponsesTool[]}
 */
function toOpenAITools(set, options) {
  checkToolSet(set, 'toOpenAITools()');
  const { api, strict } = checkOptions(options);
  const converted = set.tools.map((t) => ({
    name: t.name,
    description: t.description,
    parameters: strict ? toStrictJsonSchema(t.inputSchema) : t.inputSchema,
  }));
  if (api === 'responses') {
    return converted.map((f) => ({ type: /** @type {const} */ ('function'), ...f, strict }));
  }
  return converted.map((f) => ({
    type: /** @type {const} */ ('function'),
    function: strict ? { ...f, strict: true } : f,
  }));
}

/**
 * A ToolResult as the message that answers a tool call: a `tool` message for Chat Completions
 * (default) or a `function_call_output` item for Responses. OpenAI has no error flag; a
 * failure reads `ERROR CODE: message`.
 * @param {string} toolCallId
 * @param {ToolResult} result
 * @param {{ api?: 'chat' | 'responses' }} [options]
 */
function toOpenAIToolMessage(toolCallId, result, options) {
  if (typeof toolCallId !== 'string') throw invalidInput('toOpenAIToolMessage() takes the tool call id as a string');
  if (!isPlainObject(result) || typeof result.content !== 'string') {
    throw invalidInput('toOpenAIToolMessage() takes a tool result ({ ok, content })');
  }
  const api = options?.api ?? 'chat';
  if (api === 'responses') {
    return { type: /** @type {const} */ ('function_call_output'), call_id: toolCallId, output: result.content };
  }
  if (api !== 'chat') throw invalidInput("api must be 'chat' or 'responses'");
  return { role: /** @type {const} */ ('tool'), tool_call_id: toolCallId, content: result.content };
}

module.exports = { toOpenAITools, toOpenAIToolMessage, toStrictJsonSchema };
