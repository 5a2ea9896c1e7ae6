'use strict';
// The neutral tool form and the one place where a model's tool call is checked: arguments are
// parsed (object or JSON string), optional fields sent as null are dropped, the result is
// validated with Ajv against the tool's JSON Schema, and the handler's answer or failure becomes
// a ToolResult. Nothing here throws or rejects for anything a model sends. Every tool set uses it,
// the editor dialects included: a handler throws `fail(code, message)` for a failure it means,
// and a set's `formatFailure` decides how failures read (`ERROR CODE: message` plus a hint by
// default, a vendor's own wording for the dialects).

const Ajv = require('ajv').default;
const { ErrorCode, invalidInput } = require('../errors.js');
const { observeToolCall } = require('../telemetry/hooks.js');
const { isAbortSignalLike } = require('../signal.js');

/**
 * @typedef {import('./index.js').Tool} Tool
 * @typedef {import('./index.js').ToolSet} ToolSet
 * @typedef {import('./index.js').ToolResult} ToolResult
 * @typedef {import('./index.js').ToolDefinitionInput} ToolDefinitionInput
 * @typedef {import('./index.js').ToolAnnotations} ToolAnnotations
 * @typedef {import('./index.js').JsonSchema} JsonSchema
 * @typedef {import('./index.js').ToolContext} ToolContext
 * @typedef {import('./index.js').ToolSetOptions} ToolSetOptions
 * @typedef {import('./index.js').RestrictOptions} RestrictOptions
 */

/** Longest `content` a tool returns, in characters; longer text is cut with a note. */
const MAX_CONTENT = 64 * 1024;

/** Hints shared by every tool set; a set may add its own. */
const BASE_HINTS = {
  INVALID_INPUT: 'Check the arguments against the tool definition.',
};

// Ajv instances for the process. `strict: false` because tool schemas come from many authors
// and may carry annotations (examples, titles) Ajv's strict mode would refuse. Every call is
// checked by a validator that stops at the first error, whose cost and error list do not grow
// with the number of mistakes; the one that collects every error runs only on small arguments,
// so that a model's call with a million bad items cannot make a million error objects.
// `verbose` puts the value at fault on each error, so no message walks the arguments for it.
const firstErrorAjv = new Ajv({ allErrors: false, verbose: true, strict: false });
const allErrorsAjv = new Ajv({ allErrors: true, verbose: true, strict: false });

/**
 * Arguments with at most this many values (object members and array items) and characters of
 * member names get every problem reported; each problem's path is at most that long.
 */
const MAX_NODES_FOR_ALL_ERRORS = 2000;
const MAX_NAME_CHARS_FOR_ALL_ERRORS = 8192;
/** Distinct problems written out in a validation message; the rest are counted. */
const MAX_PROBLEMS_LISTED = 10;
/** Characters of a name or value quoted in a validation message. */
const MAX_QUOTED = 80;

/**
 * @typedef {{ first: import('ajv').ValidateFunction, all: import('ajv').ValidateFunction }} Validators
 */

/**
 * Compiled validators keyed by the schema's JSON text: a schema is compiled once however many
 * tool sets are built from it. Bounded, since hosts may build schemas at run time.
 * @type {Map<string, Validators>}
 */
const validators = new Map();
const MAX_VALIDATORS = 512;

/**
 * @param {JsonSchema} schema
 * @returns {Validators}
 */
function validatorFor(schema) {
  const key = JSON.stringify(schema);
  let pair = validators.get(key);
  if (!pair) {
    pair = { first: firstErrorAjv.compile(schema), all: allErrorsAjv.compile(schema) };
    if (validators.size >= MAX_VALIDATORS) {
      const oldest = validators.keys().next().value;
      if (oldest !== undefined) validators.delete(oldest);
    }
    validators.set(key, pair);
  }
  return pair;
}

/**
 * Whether `value` is small enough for every problem to be reported: at most
 * MAX_NODES_FOR_ALL_ERRORS values and MAX_NAME_CHARS_FOR_ALL_ERRORS characters of member names,
 * at any depth. Stops counting past either limit, so the cost is bounded whatever its size.
 * @param {unknown} value
 */
function isSmallArgument(value) {
  /** @type {unknown[]} */
  const pending = [value];
  let nodes = 0;
  let nameChars = 0;
  while (pending.length) {
    const v = pending.pop();
    if (v === null || typeof v !== 'object') continue;
    if (Array.isArray(v)) {
      nodes += v.length;
      if (nodes > MAX_NODES_FOR_ALL_ERRORS) return false;
      for (const child of v) pending.push(child);
      continue;
    }
    for (const key in v) {
      if (!Object.hasOwn(v, key)) continue;
      nodes += 1;
      nameChars += key.length;
      if (nodes > MAX_NODES_FOR_ALL_ERRORS || nameChars > MAX_NAME_CHARS_FOR_ALL_ERRORS) return false;
      pending.push(/** @type {Record<string, unknown>} */ (v)[key]);
    }
  }
  return true;
}

/**
 * At most MAX_QUOTED characters of `text`, with a note of how long it was.
 * @param {string} text
 */
function shorten(text) {
  return text.length <= MAX_QUOTED ? text : `${text.slice(0, MAX_QUOTED)}… (${text.length} characters)`;
}

/**
 * @param {unknown} v
 * @returns {v is Record<string, unknown>}
 */
function isPlainObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** @param {unknown} v */
function typeName(v) {
  if (v === null) return 'null';
  if (v === undefined) return 'undefined';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'number') return `the number ${v}`;
  if (typeof v === 'object') return 'an object';
  return `a ${typeof v}`;
}

/**
 * A value as a validation message quotes it: short JSON for strings and scalars, the kind of
 * value for anything else (an argument may be megabytes long).
 * @param {unknown} v
 */
function quoted(v) {
  if (typeof v === 'string') return JSON.stringify(shorten(v));
  if (typeof v === 'number' || typeof v === 'boolean' || v === null) return String(v);
  return typeName(v);
}

const utf8 = new TextEncoder();

/**
 * The longest start of `text` that is at most `maxBytes` bytes of UTF-8, cut between characters.
 * Costs O(maxBytes) whatever the text's length.
 * @param {string} text
 * @param {number} maxBytes
 */
function fitBytes(text, maxBytes) {
  // Up to three bytes a UTF-16 unit: short enough texts need no measuring.
  if (text.length * 3 <= maxBytes) return text;
  const { read } = utf8.encodeInto(
    text.length > maxBytes ? text.slice(0, maxBytes + 1) : text,
    new Uint8Array(maxBytes),
  );
  return read === text.length ? text : text.slice(0, read);
}

/**
 * Text cut to MAX_CONTENT bytes of UTF-8 with a note saying what to do instead.
 * @param {string} text
 * @param {string} hint
 * @param {number} [max]
 */
function clip(text, hint, max = MAX_CONTENT) {
  const cut = fitBytes(text, max);
  if (cut === text) return text;
  const bytes = Buffer.byteLength(text);
  const of = bytes === text.length ? `${bytes} characters` : `${bytes} bytes`;
  return `${cut}\n[... cut off after ${Buffer.byteLength(cut)} of ${of}; ${hint}]`;
}

/**
 * An answer built line by line within a byte budget (the tool result size by default): a line
 * is added only while it fits, so a listing of any length costs at most the budget to build,
 * and `left` counts what was not added.
 */
class BoundedLines {
  /** @param {number} [maxBytes] */
  constructor(maxBytes = MAX_CONTENT) {
    /** @type {string[]} */
    this.lines = [];
    this.room = maxBytes;
    /** Lines offered after the budget was spent. */
    this.left = 0;
  }

  /**
   * Adds `line` if it fits; with `cut`, a first line too long for the budget is added cut short.
   * @param {string} line
   * @param {{ cut?: boolean }} [options]
   * @returns {boolean} false once the budget is spent (this line and later ones are counted only)
   */
  add(line, options) {
    if (this.left > 0) {
      this.left += 1;
      return false;
    }
    const separator = this.lines.length > 0 ? 1 : 0;
    const fitted = fitBytes(line, Math.max(0, this.room - separator));
    if (fitted !== line && !(options?.cut && this.lines.length === 0)) {
      this.left = 1;
      return false;
    }
    this.lines.push(fitted);
    this.room -= separator + Buffer.byteLength(fitted);
    if (fitted !== line) this.left = 1;
    return fitted === line;
  }

  /** Whether something was left out. */
  get full() {
    return this.left > 0;
  }

  /** The lines added, joined by `\n`. */
  text() {
    return this.lines.join('\n');
  }
}

/**
 * How a failure reads by default: `ERROR CODE: message` plus a hint on its own line.
 * @type {import('./index.js').FailureFormat}
 */
function errorLine(code, message, hint) {
  return `ERROR ${code}: ${message}${hint ? `\nHint: ${hint}` : ''}`;
}

/**
 * A failed ToolResult: `ERROR CODE: message` plus a hint on its own line, or as `format` writes it.
 * @param {string} code
 * @param {string} message
 * @param {string | null} [hint]
 * @param {import('./index.js').FailureFormat} [format]
 * @returns {ToolResult}
 */
function toolFailure(code, message, hint, format = errorLine) {
  // Messages may quote what the model sent (a path, a pattern, an old_str of megabytes).
  return { ok: false, code, content: format(code, clip(message, 'the message was cut'), hint ?? null) };
}

/**
 * A failure a handler reports on purpose: a stable code and the message the model reads. A
 * handler throws it (see {@link fail}); the set's handler turns it into a failed ToolResult.
 */
class ToolFailure extends Error {
  /**
   * @param {string} code
   * @param {string} message
   */
  constructor(code, message) {
    super(message);
    this.name = 'ToolFailure';
    /** @type {string} */
    this.code = code;
  }
}

/**
 * A ToolFailure to throw from a handler: `throw fail(ErrorCode.NotFound, 'no such file: a.txt')`.
 * @param {string} code
 * @param {string} message
 * @returns {ToolFailure}
 */
function fail(code, message) {
  return new ToolFailure(code, message);
}

/**
 * The successful ToolResult of a call that changed a workspace: `data.historyId` is the history
 * entry it recorded, null when nothing changed.
 * @param {string} content
 * @param {number | null} historyId
 * @returns {ToolResult & { data: { historyId: number | null } }}
 */
function changed(content, historyId) {
  return { ok: true, content, data: { historyId } };
}

/**
 * Whether a schema accepts null as a value.
 * @param {JsonSchema} schema
 */
function acceptsNull(schema) {
  if (!isPlainObject(schema)) return true;
  const t = schema.type;
  if (t === 'null' || (Array.isArray(t) && t.includes('null'))) return true;
  if (Array.isArray(schema.enum) && schema.enum.includes(null)) return true;
  for (const key of /** @type {const} */ (['anyOf', 'oneOf'])) {
    const list = schema[key];
    if (Array.isArray(list) && list.some((s) => acceptsNull(s))) return true;
  }
  return t === undefined && schema.enum === undefined && schema.anyOf === undefined && schema.oneOf === undefined;
}

/**
 * Drops optional properties whose value is null, at every level the schema describes, so
 * arguments written for OpenAI's strict mode (where optional means "nullable") mean "absent".
 * Returns a new value; `value` is not changed.
 * @param {JsonSchema} schema
 * @param {unknown} value
 * @returns {unknown}
 */
function dropNullOptionals(schema, value) {
  if (!isPlainObject(schema)) return value;
  if (Array.isArray(value) && isPlainObject(schema.items)) {
    const items = /** @type {JsonSchema} */ (schema.items);
    return value.map((v) => dropNullOptionals(items, v));
  }
  if (!isPlainObject(value) || !isPlainObject(schema.properties)) return value;
  const properties = /** @type {Record<string, JsonSchema>} */ (schema.properties);
  const required = Array.isArray(schema.required) ? schema.required : [];
  /** @type {Record<string, unknown>} */
  const out = {};
  for (const [key, v] of Object.entries(value)) {
    const sub = Object.hasOwn(properties, key) ? properties[key] : undefined;
    if (sub === undefined) {
      out[key] = v;
    } else if (v === null && !required.includes(key) && !acceptsNull(sub)) {
      // absent
    } else {
      out[key] = dropNullOptionals(sub, v);
    }
  }
  return out;
}

/**
 * `/env/A` → `env.A`, `/argv/1` → `argv[1]`.
 * @param {string} pointer
 */
function fieldName(pointer) {
  // Only the start of a long path is read: a member name may be megabytes long.
  const head = pointer.length > 4 * MAX_QUOTED ? `${pointer.slice(0, 4 * MAX_QUOTED)}…` : pointer;
  const cut = (/** @type {string} */ text) => (text.length <= MAX_QUOTED ? text : `${text.slice(0, MAX_QUOTED)}…`);
  let name = '';
  for (const raw of head.split('/').slice(1)) {
    const part = cut(raw.replace(/~1/g, '/').replace(/~0/g, '~'));
    name += /^\d+$/.test(part) ? `[${part}]` : name ? `.${part}` : part;
  }
  return cut(name);
}

/**
 * Reads a value at a JSON pointer.
 * @param {unknown} root
 * @param {string} pointer
 */
function valueAt(root, pointer) {
  let v = root;
  for (const raw of pointer.split('/').slice(1)) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (v === null || typeof v !== 'object') return undefined;
    v = /** @type {Record<string, unknown>} */ (v)[part];
  }
  return v;
}

/** @param {string} word */
const article = (word) => (/^[aeiou]/.test(word) ? `an ${word}` : `a ${word}`);

/**
 * One Ajv error in words a model can act on, naming the field.
 * @param {import('ajv').ErrorObject} e
 * @param {JsonSchema} schema the tool's input schema
 * @returns {string | null} null for errors another message already covers
 */
function describeError(e, schema) {
  const field = fieldName(e.instancePath);
  const value = e.data;
  const p = /** @type {Record<string, any>} */ (e.params);
  const prefix = field ? `${field}.` : '';
  switch (e.keyword) {
    case 'required':
      return `${prefix}${shorten(String(p.missingProperty))} is required`;
    case 'additionalProperties': {
      const name = `${prefix}${shorten(String(p.additionalProperty))}`;
      const at = /** @type {JsonSchema | undefined} */ (valueAtSchema(schema, e.schemaPath));
      const known = at && isPlainObject(at.properties) ? Object.keys(at.properties) : [];
      return `unknown argument '${name}'${known.length ? `; expected: ${known.join(', ')}` : ''}`;
    }
    case 'type': {
      const types = String(p.type).split(',');
      return `${field || 'the arguments'} must be ${types.map(article).join(' or ')}, got ${typeName(value)}`;
    }
    case 'minimum':
      return `${field} must be at least ${p.limit}, got ${quoted(value)}`;
    case 'maximum':
      return `${field} must be at most ${p.limit}, got ${quoted(value)}`;
    case 'exclusiveMinimum':
      return `${field} must be more than ${p.limit}, got ${quoted(value)}`;
    case 'exclusiveMaximum':
      return `${field} must be less than ${p.limit}, got ${quoted(value)}`;
    case 'minLength':
      return p.limit === 1 ? `${field} must not be empty` : `${field} must be at least ${p.limit} characters long`;
    case 'maxLength':
      return `${field} must be at most ${p.limit} characters long`;
    case 'enum':
      return `${field} must be one of ${p.allowedValues.map((/** @type {unknown} */ v) => JSON.stringify(v)).join(', ')}, got ${quoted(value)}`;
    case 'const':
      return `${field} must be ${JSON.stringify(p.allowedValue)}`;
    case 'minItems':
      return `${field} must have at least ${p.limit} item${p.limit === 1 ? '' : 's'}`;
    case 'maxItems':
      return `${field} must have at most ${p.limit} items`;
    case 'pattern':
      return `${field} must match the pattern ${p.pattern}`;
    case 'anyOf':
    case 'oneOf':
      // The branches' own errors say more; this one only repeats them.
      return null;
    default:
      return `${field || 'the arguments'} ${e.message ?? 'is not valid'}`;
  }
}

/**
 * The schema node an Ajv schemaPath (`#/properties/env/additionalProperties`) points at,
 * for the keyword's parent.
 * @param {JsonSchema} schema
 * @param {string} schemaPath
 */
function valueAtSchema(schema, schemaPath) {
  const parts = schemaPath.replace(/^#/, '').split('/').slice(1, -1).join('/');
  return valueAt(schema, parts ? `/${parts}` : '');
}

/**
 * Validation messages for `args`, or null when they are valid: at most MAX_PROBLEMS_LISTED
 * distinct problems, then how many more there are. Every call is checked by the validator that
 * stops at its first error; only small arguments are checked again for every problem, so both
 * the work and the message stay bounded however many mistakes the arguments hold.
 * @param {Validators} validate
 * @param {unknown} args
 * @param {JsonSchema} schema
 * @returns {string[] | null}
 */
function problems(validate, args, schema) {
  if (validate.first(args)) return null;
  const complete = isSmallArgument(args);
  if (complete) validate.all(args);
  const found = (complete ? validate.all.errors : validate.first.errors) ?? [];
  // Branches of an anyOf each report their own type: one message per field names them all.
  /** @type {Map<string, import('ajv').ErrorObject>} */
  const typeErrors = new Map();
  /** @type {import('ajv').ErrorObject[]} */
  const errors = [];
  for (const e of found) {
    const seen = e.keyword === 'type' ? typeErrors.get(e.instancePath) : undefined;
    if (seen) {
      const types = new Set([...String(seen.params.type).split(','), ...String(e.params.type).split(',')]);
      seen.params = { ...seen.params, type: [...types].join(',') };
      continue;
    }
    const copy = { ...e };
    if (e.keyword === 'type') typeErrors.set(e.instancePath, copy);
    errors.push(copy);
  }
  /** @type {Set<string>} */
  const distinct = new Set();
  for (const e of errors) {
    const m = describeError(e, schema);
    if (m) distinct.add(m);
  }
  const messages = [...distinct].slice(0, MAX_PROBLEMS_LISTED);
  if (distinct.size > messages.length) {
    const more = distinct.size - messages.length;
    messages.push(`and ${more} more problem${more === 1 ? '' : 's'}`);
  }
  if (!complete) messages.push('(only the first problem is reported for arguments this large)');
  return messages.length ? messages : ['the arguments do not match the schema'];
}

/**
 * @param {unknown} v
 * @returns {v is { code: string, message: string }}
 */
function isCodedError(v) {
  return (
    v !== null &&
    typeof v === 'object' &&
    'code' in v &&
    typeof v.code === 'string' &&
    'message' in v &&
    typeof v.message === 'string'
  );
}

const ANNOTATION_KEYS = ['readOnlyHint', 'destructiveHint', 'idempotentHint'];

/**
 * Checks one tool definition a host passed; throws INVALID_INPUT naming the problem.
 * @param {unknown} def
 * @param {number} index
 * @returns {asserts def is ToolDefinitionInput}
 */
function checkDefinition(def, index) {
  const where = `tools[${index}]`;
  if (!isPlainObject(def)) throw invalidInput(`${where} must be an object`);
  if (typeof def.name !== 'string' || !/^[a-zA-Z0-9_-]{1,64}$/.test(def.name)) {
    throw invalidInput(`${where}.name must be 1 to 64 letters, digits, _ or -`);
  }
  if (typeof def.description !== 'string') throw invalidInput(`${where}.description must be a string`);
  const schema = def.inputSchema;
  if (!isPlainObject(schema) || schema.type !== 'object') {
    throw invalidInput(`${where}.inputSchema must be a JSON Schema with type 'object'`);
  }
  if (typeof def.handler !== 'function') throw invalidInput(`${where}.handler must be a function`);
  if (def.annotations !== undefined) {
    if (!isPlainObject(def.annotations)) throw invalidInput(`${where}.annotations must be an object`);
    for (const key of ANNOTATION_KEYS) {
      const v = def.annotations[key];
      if (v !== undefined && typeof v !== 'boolean')
        throw invalidInput(`${where}.annotations.${key} must be a boolean`);
    }
  }
}

/**
 * Builds a ToolSet from tool definitions whose handlers may throw: each tool's `handler` in the
 * result checks its arguments and never throws, and `dispatch` routes a call by name.
 * @param {ToolDefinitionInput[]} definitions
 * @param {ToolSetOptions} [options]
 * @returns {ToolSet}
 */
function createToolSet(definitions, options = {}) {
  if (!Array.isArray(definitions)) throw invalidInput('createToolSet() takes an array of tool definitions');
  if (!isPlainObject(options)) throw invalidInput('createToolSet() options must be an object');
  for (const key of Object.keys(options)) {
    if (key !== 'hints' && key !== 'formatFailure') {
      throw invalidInput(`unknown createToolSet() option '${key}' (expected: hints, formatFailure)`);
    }
  }
  /** @type {Record<string, string | null | undefined>} */
  const hints = { ...BASE_HINTS, ...(options.hints ?? {}) };
  if (options.formatFailure !== undefined && typeof options.formatFailure !== 'function') {
    throw invalidInput('createToolSet() option formatFailure must be a function');
  }
  const format = /** @type {import('./index.js').FailureFormat} */ (options.formatFailure ?? errorLine);
  /**
   * @param {string} code
   * @param {string} message
   * @param {string | null | undefined} hint
   */
  const failure = (code, message, hint) => toolFailure(code, message, hint, format);
  const seen = new Set();
  /** @type {Tool[]} */
  const tools = definitions.map((def, index) => {
    checkDefinition(def, index);
    if (seen.has(def.name)) throw invalidInput(`two tools are named '${def.name}'`);
    seen.add(def.name);
    const readOnlyHint = def.annotations?.readOnlyHint ?? false;
    /** @type {ToolAnnotations} */
    const annotations = {
      readOnlyHint,
      destructiveHint: def.annotations?.destructiveHint ?? !readOnlyHint,
      idempotentHint: def.annotations?.idempotentHint ?? readOnlyHint,
    };
    const name = def.name;
    const inputSchema = def.inputSchema;
    /** @type {Validators} */
    let validate;
    try {
      validate = validatorFor(inputSchema);
    } catch (e) {
      throw invalidInput(
        `tools[${index}].inputSchema is not a valid JSON Schema: ${e instanceof Error ? e.message : String(e)}`,
      );
    }
    const run = def.handler;

    /**
     * @param {unknown} args
     * @param {ToolContext} [context]
     * @returns {Promise<ToolResult>}
     */
    async function handler(args, context) {
      try {
        const signal = context?.signal ?? undefined;
        if (signal !== undefined && !isAbortSignalLike(signal)) {
          return failure(ErrorCode.InvalidInput, 'dispatch options.signal must be an AbortSignal', null);
        }
        if (signal?.aborted) return failure(ErrorCode.Cancelled, `${name} was not run: the call was cancelled`, null);
        let parsed = args;
        if (typeof parsed === 'string') {
          try {
            parsed = parsed.trim() === '' ? {} : JSON.parse(parsed);
          } catch (e) {
            const reason = e instanceof Error ? e.message : String(e);
            return failure(
              ErrorCode.InvalidInput,
              `the arguments of ${name} are not valid JSON: ${reason}`,
              hints.INVALID_INPUT,
            );
          }
        }
        if (parsed === undefined || parsed === null) parsed = {};
        if (!isPlainObject(parsed)) {
          return failure(
            ErrorCode.InvalidInput,
            `the arguments of ${name} must be an object, got ${typeName(parsed)}`,
            hints.INVALID_INPUT,
          );
        }
        const cleaned = dropNullOptionals(inputSchema, parsed);
        const found = problems(validate, cleaned, inputSchema);
        if (found) return failure(ErrorCode.InvalidInput, `${name}: ${found.join('; ')}`, hints.INVALID_INPUT);
        const answer = await run(/** @type {Record<string, unknown>} */ (cleaned), signal ? { signal } : {});
        // A backstop: handlers cut their own text with a better note, which this leaves alone.
        if (typeof answer === 'string') return { ok: true, content: clip(answer, 'ask for less', MAX_CONTENT + 4096) };
        if (isPlainObject(answer) && typeof answer.ok === 'boolean' && typeof answer.content === 'string') {
          const content = clip(answer.content, 'ask for less', MAX_CONTENT + 4096);
          return /** @type {ToolResult} */ (content === answer.content ? answer : { ...answer, content });
        }
        return failure(ErrorCode.Internal, `${name} answered with neither text nor a tool result`, null);
      } catch (err) {
        if (isCodedError(err)) return failure(err.code, err.message, hints[err.code]);
        return failure(ErrorCode.Internal, err instanceof Error ? err.message : String(err), null);
      }
    }

    return { name, description: def.description, inputSchema, annotations, handler: observeToolCall(name, handler) };
  });
  return fromTools(tools, undefined, format);
}

/**
 * A ToolSet offering `tools`, where a call of one goes to `route(tool)`: its own handler, or
 * the dispatch of the set it came from (so a set's own dispatch, with whatever it does around
 * its tools, still runs when the set is restricted or combined).
 * @param {Tool[]} tools
 * @param {(tool: Tool) => ToolSet['dispatch']} [route]
 * @param {import('./index.js').FailureFormat} [format] how its own failures read
 * @returns {ToolSet}
 */
function fromTools(tools, route, format = errorLine) {
  /** @type {Map<string, Tool>} */
  const byName = new Map(tools.map((t) => [t.name, t]));
  /**
   * @param {string} name
   * @param {unknown} args
   * @param {ToolContext} [options]
   * @returns {Promise<ToolResult>}
   */
  async function dispatch(name, args, options) {
    const tool = typeof name === 'string' ? byName.get(name) : undefined;
    if (!tool) {
      const available = [...byName.keys()];
      return toolFailure(
        ErrorCode.UnknownTool,
        `there is no tool named ${JSON.stringify(String(name))}; available: ${available.length ? available.join(', ') : '(none)'}`,
        null,
        format,
      );
    }
    try {
      return route ? await route(tool)(tool.name, args, options) : await tool.handler(args, options);
    } catch (err) {
      // Tools and sets made here never throw; hand-made ones might.
      return toolFailure(ErrorCode.Internal, err instanceof Error ? err.message : String(err), null, format);
    }
  }
  return { tools, dispatch };
}

/**
 * A ToolSet holding only some tools of `set`; `dispatch` refuses the others as UNKNOWN_TOOL.
 * Unknown option keys and tool names throw INVALID_INPUT.
 * @param {ToolSet} set
 * @param {RestrictOptions} [options]
 * @returns {ToolSet}
 */
function restrictToolSet(set, options = {}) {
  checkToolSet(set, 'restrictToolSet()');
  if (!isPlainObject(options)) throw invalidInput('tool set options must be an object');
  for (const key of Object.keys(options)) {
    if (!['include', 'exclude', 'readOnly'].includes(key)) {
      throw invalidInput(`unknown tool set option '${key}' (expected: include, exclude, readOnly)`);
    }
  }
  const names = set.tools.map((t) => t.name);
  /**
   * @param {'include' | 'exclude'} key
   * @returns {Set<string> | undefined}
   */
  const nameList = (key) => {
    const list = options[key];
    if (list === undefined) return undefined;
    if (!Array.isArray(list) || !list.every((n) => typeof n === 'string')) {
      throw invalidInput(`${key} must be an array of tool names`);
    }
    const unknown = list.filter((n) => !names.includes(n));
    if (unknown.length) {
      throw invalidInput(
        `${key} names unknown tool${unknown.length === 1 ? '' : 's'} ${unknown.join(', ')} (tools: ${names.join(', ')})`,
      );
    }
    return new Set(list);
  };
  const include = nameList('include');
  const exclude = nameList('exclude');
  if (options.readOnly !== undefined && typeof options.readOnly !== 'boolean') {
    throw invalidInput('readOnly must be a boolean');
  }
  const kept = set.tools.filter(
    (t) =>
      (!include || include.has(t.name)) &&
      !exclude?.has(t.name) &&
      (!options.readOnly || t.annotations.readOnlyHint === true),
  );
  return fromTools(kept, () => set.dispatch);
}

/**
 * One ToolSet offering the tools of several; tool names must not repeat.
 * @param {...ToolSet} sets
 * @returns {ToolSet}
 */
function combineToolSets(...sets) {
  /** @type {Tool[]} */
  const tools = [];
  /** @type {Map<Tool, ToolSet['dispatch']>} */
  const owner = new Map();
  const seen = new Set();
  for (const [i, set] of sets.entries()) {
    checkToolSet(set, `combineToolSets() argument ${i + 1}`);
    for (const t of set.tools) {
      if (seen.has(t.name)) throw invalidInput(`two tools are named '${t.name}'`);
      seen.add(t.name);
      tools.push(t);
      owner.set(t, set.dispatch);
    }
  }
  return fromTools(tools, (t) => /** @type {ToolSet['dispatch']} */ (owner.get(t)));
}

/**
 * @param {unknown} set
 * @param {string} where
 * @returns {asserts set is ToolSet}
 */
function checkToolSet(set, where) {
  if (!isPlainObject(set) || !Array.isArray(set.tools) || typeof set.dispatch !== 'function') {
    throw invalidInput(`${where} takes a tool set ({ tools, dispatch })`);
  }
}

module.exports = {
  createToolSet,
  restrictToolSet,
  combineToolSets,
  checkToolSet,
  toolFailure,
  ToolFailure,
  fail,
  changed,
  clip,
  fitBytes,
  BoundedLines,
  isPlainObject,
  MAX_CONTENT,
};
