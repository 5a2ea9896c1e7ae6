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

// Strict mode accepts a subset of JSON Schema. Validation keywords (minLength, minimum,
// pattern, ...) are accepted by some models and refused by others (fine-tuned ones, older
// compatible servers), so they are moved into the description instead: dispatch enforces
// them anyway, against the original schema.
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
]);

/**
 * The constraints strict mode cannot carry, in words for the description.
 * @param {Record<string, unknown>} s
 * @returns {string[]}
 */
function constraintWords(s) {
  /** @type {string[]} */
  const words = [];
  const num = (/** @type {string} */ k) => (typeof s[k] === 'number' ? /** @type {number} */ (s[k]) : undefined);
  const minLength = num('minLength');
  const maxLength = num('maxLength');
  if (minLength === 1 && maxLength === undefined) words.push('must not be empty');
  else if (minLength !== undefined) words.push(`at least ${minLength} characters`);
  if (maxLength !== undefined) words.push(`at most ${maxLength} characters`);
  const minimum = num('minimum');
  const maximum = num('maximum');
  if (minimum !== undefined && maximum !== undefined) words.push(`from ${minimum} to ${maximum}`);
  else if (minimum !== undefined) words.push(`at least ${minimum}`);
  else if (maximum !== undefined) words.push(`at most ${maximum}`);
  if (num('exclusiveMinimum') !== undefined) words.push(`more than ${s.exclusiveMinimum}`);
  if (num('exclusiveMaximum') !== undefined) words.push(`less than ${s.exclusiveMaximum}`);
  if (num('multipleOf') !== undefined) words.push(`a multiple of ${s.multipleOf}`);
  if (typeof s.pattern === 'string') words.push(`matching /${s.pattern}/`);
  if (typeof s.format === 'string') words.push(`format ${s.format}`);
  if (num('minItems') !== undefined) words.push(`at least ${s.minItems} items`);
  if (num('maxItems') !== undefined) words.push(`at most ${s.maxItems} items`);
  if (s.uniqueItems === true) words.push('no duplicates');
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
  if (typeof s.type === 'string') {
    /** @type {Record<string, unknown>} */
    const out = { ...s, type: [s.type, 'null'] };
    if (Array.isArray(s.enum) && !s.enum.includes(null)) out.enum = [...s.enum, null];
    return out;
  }
  if (Array.isArray(s.type)) return s.type.includes('null') ? s : { ...s, type: [...s.type, 'null'] };
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
 * object, only the keywords strict mode accepts (the other constraints are described in words),
 * and open maps, which strict mode cannot express, left out.
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
