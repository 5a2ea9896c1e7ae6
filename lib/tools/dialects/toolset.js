'use strict';
// A tool set in the neutral form (name, description, JSON Schema, annotations, handler) and its
// dispatcher: arguments arrive as an object or a JSON string, `null` in an optional field means
// the field is absent, every call is checked against the tool's schema (compiled once), and the
// dispatcher never throws or rejects. Kept in one file so that a shared tool set module can replace it.

// Ajv's CommonJS entry is the class itself, with `.default` for ES module interop (what its types describe).
const Ajv = require('ajv').default;
const { isAbortSignalLike } = require('../../signal.js');

/**
 * @typedef {{ readOnlyHint: boolean, destructiveHint: boolean, idempotentHint: boolean }} ToolAnnotations
 * @typedef {{ ok: boolean, content: string, data?: unknown, code?: string }} ToolResult
 * @typedef {{ signal?: AbortSignal }} CallContext
 * @typedef {(args: any, context: CallContext) => ToolResult | string | Promise<ToolResult | string>} ToolHandler
 * @typedef {{ name: string, description: string, inputSchema: Record<string, unknown>, annotations: ToolAnnotations, handler: ToolHandler }} Tool
 * @typedef {{ tools: Tool[], dispatch(name: string, args: unknown, options?: { signal?: AbortSignal }): Promise<ToolResult> }} ToolSet
 */

/**
 * A failure a handler reports on purpose: a stable code and the message the model reads.
 * Handlers throw it; the dispatcher turns it into `{ ok: false, code, content }`.
 */
class ToolFailure extends Error {
  /**
   * @param {string} code
   * @param {string} message
   */
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

/**
 * @param {string} code
 * @param {string} message
 * @returns {ToolFailure}
 */
function fail(code, message) {
  return new ToolFailure(code, message);
}

/**
 * @param {unknown} v
 * @returns {v is Record<string, unknown>}
 */
function isPlainObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * A copy of `value` without object fields whose value is null: models often send `null` for an
 * optional field they do not use.
 * @param {unknown} value
 * @returns {unknown}
 */
function withoutNulls(value) {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (!isPlainObject(value)) return value;
  /** @type {Record<string, unknown>} */
  const out = {};
  for (const [key, v] of Object.entries(value)) {
    if (v !== null) out[key] = withoutNulls(v);
  }
  return out;
}

/**
 * One sentence naming the first problem Ajv found.
 * @param {import('ajv').ErrorObject} error
 */
function describeSchemaError(error) {
  const where = error.instancePath
    ? error.instancePath
        .slice(1)
        .split('/')
        .map((part) => (/^\d+$/.test(part) ? `[${part}]` : `.${part}`))
        .join('')
        .replace(/^\./, '')
    : '';
  const subject = where || 'the arguments';
  const params = /** @type {Record<string, unknown>} */ (error.params);
  switch (error.keyword) {
    case 'required':
      return `missing required argument '${where ? `${where}.` : ''}${params.missingProperty}'`;
    case 'additionalProperties':
      return `unknown argument '${where ? `${where}.` : ''}${params.additionalProperty}'`;
    case 'enum':
      return `${subject} must be one of: ${/** @type {unknown[]} */ (params.allowedValues).join(', ')}`;
    case 'type':
      return `${subject} must be ${/^[aeiou]/.test(String(params.type)) ? 'an' : 'a'} ${params.type}`;
    default:
      return `${subject} ${error.message ?? 'is invalid'}`;
  }
}

/**
 * Builds a tool set over `tools`.
 * @param {Tool[]} tools
 * @param {{ formatError?: (message: string, code: string) => string }} [options] how a failure
 *   reads (a dialect may prefix its vendor's `Error: `); default: the message as is.
 * @returns {ToolSet}
 */
function createToolSet(tools, options = {}) {
  const formatError = options.formatError ?? ((message) => message);
  const ajv = new Ajv({ allErrors: false, strict: false });
  /** @type {Map<string, { tool: Tool, validate: import('ajv').ValidateFunction }>} */
  const byName = new Map();
  for (const tool of tools) byName.set(tool.name, { tool, validate: ajv.compile(tool.inputSchema) });

  /**
   * @param {string} code
   * @param {string} message
   * @returns {ToolResult}
   */
  const failure = (code, message) => ({ ok: false, code, content: formatError(message, code) });

  /**
   * @param {unknown} err
   * @returns {ToolResult}
   */
  function fromError(err) {
    if (err instanceof ToolFailure) return failure(err.code, err.message);
    const code =
      err && typeof err === 'object' && 'code' in err && typeof err.code === 'string' ? err.code : 'INTERNAL';
    return failure(code, err instanceof Error ? err.message : String(err));
  }

  /**
   * @param {string} name
   * @param {unknown} args
   * @param {{ signal?: AbortSignal }} [callOptions]
   * @returns {Promise<ToolResult>}
   */
  async function dispatch(name, args, callOptions) {
    try {
      const signal = callOptions?.signal ?? undefined;
      if (signal !== undefined && !isAbortSignalLike(signal)) {
        return failure('INVALID_INPUT', 'dispatch options.signal must be an AbortSignal');
      }
      const entry = typeof name === 'string' ? byName.get(name) : undefined;
      if (!entry) {
        return failure(
          'UNKNOWN_TOOL',
          `There is no tool named ${JSON.stringify(String(name))}. Available tools: ${[...byName.keys()].join(', ')}`,
        );
      }
      if (signal?.aborted) return failure('CANCELLED', `${name} was not run: the call was cancelled`);
      let parsed = args;
      if (typeof parsed === 'string') {
        try {
          parsed = parsed.trim() === '' ? {} : JSON.parse(parsed);
        } catch (e) {
          const reason = e instanceof Error ? e.message : String(e);
          return failure('INVALID_INPUT', `The arguments of ${name} are not valid JSON: ${reason}`);
        }
      }
      if (parsed === undefined || parsed === null) parsed = {};
      if (!isPlainObject(parsed)) {
        return failure('INVALID_INPUT', `The arguments of ${name} must be a JSON object`);
      }
      parsed = withoutNulls(parsed);
      if (!entry.validate(parsed)) {
        const first = entry.validate.errors?.[0];
        return failure(
          'INVALID_INPUT',
          `Invalid arguments for ${name}: ${first ? describeSchemaError(first) : 'rejected'}`,
        );
      }
      const answer = await entry.tool.handler(parsed, signal ? { signal } : {});
      return typeof answer === 'string' ? { ok: true, content: answer } : answer;
    } catch (err) {
      return fromError(err);
    }
  }

  return { tools, dispatch };
}

module.exports = { createToolSet, ToolFailure, fail, isPlainObject };
