'use strict';
// `run_js`: one tool that runs a model's JavaScript with `run()` and describes the outcome the
// way a model can act on it: the value, what it emitted and logged, or the error with its code,
// line and source frame. With `persistent`, the code runs as cells of one REPL (lib/repl), so
// what a call declares is there for the next calls.

const { formatForModel, invalidInput } = require('../errors.js');
const { run, copyOf } = require('../run.js');
const { createRepl } = require('../repl/index.js');
const { checkToolSet, clip, createToolSet, isPlainObject, MAX_CONTENT } = require('./toolset.js');
const { boundedInspect } = require('./show.js');

/**
 * @typedef {import('./index.js').ToolSet} ToolSet
 * @typedef {import('./index.js').ToolResult} ToolResult
 * @typedef {import('./index.js').CodeToolOptions} CodeToolOptions
 * @typedef {import('../index.js').RunOptions} RunOptions
 * @typedef {import('../index.js').RunResult} RunResult
 */

const DESCRIPTION =
  'Run JavaScript in a fresh sandbox and get back its result. The code is the body of an async ' +
  'function: finish with `return <value>` to see a value, and top-level `await` works. ' +
  'console.log output is captured and shown. There is no network, no require of packages and no ' +
  'process; each call starts from a clean state, so keep everything one call needs in that call.';

const PERSISTENT_DESCRIPTION =
  'Run JavaScript in a persistent sandbox and get back its result. The code is a script with top-level ' +
  'await: its value is the value of its last expression statement (write the value as the last line; ' +
  'return works only inside functions). What you declare at top level (let, const, var, function, class) ' +
  'and everything it reaches (objects, arrays, Maps, Sets, functions and closures with their variables) ' +
  'is still there in later calls, so build on earlier calls instead of repeating them. A call that fails ' +
  'changes nothing: its declarations and changes are dropped. Live values given to the code (the tools ' +
  'global and its functions), promises and timers cannot be kept in a top-level binding: the call fails ' +
  '(what a tool returns is data and can be kept). console.log output ' +
  'is captured and shown. There is no network, no require of packages and no process.';

const WORKSPACE_NOTE =
  ' The workspace files are reachable through the `fs` and `path` globals (synchronous, ' +
  "Node-style: fs.readFileSync('src/a.js', 'utf8'), fs.writeFileSync(...)); the run's file " +
  'changes are kept only if it succeeds.';

/**
 * The note that lists the tools a script may call through the `tools` global.
 * @param {ToolSet} set
 */
function toolsNote(set) {
  const lines = set.tools.map((t) => {
    const schema = /** @type {{ properties?: Record<string, unknown>, required?: string[] }} */ (t.inputSchema);
    const required = new Set(schema.required ?? []);
    const params = Object.keys(schema.properties ?? {})
      .map((k) => (required.has(k) ? k : `${k}?`))
      .join(', ');
    const summary = t.description.split(/(?<=\.)\s/)[0];
    return `- tools.${t.name}({ ${params} }): ${summary}`;
  });
  return (
    ' The code can call these tools, as many times as it needs, through the `tools` global; each ' +
    'returns a promise of { ok, content, data?, code? } (it never throws for a failed call, check ok):\n' +
    lines.join('\n')
  );
}

/**
 * The `tools` global of a script: one async function per tool of `set`, dispatched with the
 * signal of the call that runs the script.
 * @param {ToolSet} set
 * @param {() => AbortSignal | undefined} signalOf
 * @param {boolean} copied results reach the script as copies (data it can keep in a persistent
 *   realm) rather than live views
 */
function bindTools(set, signalOf, copied) {
  /** @type {Record<string, (args?: unknown) => Promise<unknown>>} */
  const bound = {};
  for (const { name } of set.tools) {
    bound[name] = async (args) => {
      const signal = signalOf();
      const result = await set.dispatch(name, args ?? {}, signal === undefined ? {} : { signal });
      return copied ? copyOf(result) : result;
    };
  }
  return Object.freeze(bound);
}

/** Hints for the failures a model can do something about. */
const HINTS = {
  EVAL_ERROR: 'Fix the code at the line shown and run it again.',
  TIMEOUT: 'The code ran too long: make it do less work, or check for an endless loop.',
  MEMORY_LIMIT: 'The code used too much memory: work on less data at a time.',
  OUTPUT_LIMIT: 'The code printed too much: print a summary instead.',
  STEP_LIMIT: 'The code ran too many steps: make it do less work, or check for an endless loop.',
};

/**
 * A value as compact, unambiguous text (strings quoted, nested values shown to a fixed depth).
 * @param {unknown} value
 */
function showValue(value) {
  // Shown less deep when the value repeats shared parts so often that its full view would cost
  // more than a few answers' worth of work.
  return boundedInspect(
    value,
    { depth: 6, maxArrayLength: 200, maxStringLength: 20_000, breakLength: 100, compact: 3, sorted: false },
    4 * MAX_CONTENT,
  );
}

/** The hint for a `return` outside a function in a cell of the persistent tool. */
const CELL_RETURN_HINT =
  'The code is a script, not a function: end it with the value as an expression statement instead of return.';

/**
 * The run's outcome as text for the model.
 * @param {RunResult} r
 * @param {boolean} [cell] the code ran as a REPL cell (its value is its completion value)
 * @returns {ToolResult}
 */
function describeRun(r, cell = false) {
  /** @type {string[]} */
  const parts = [];
  if (r.ok) {
    parts.push(
      r.value !== undefined
        ? `value: ${showValue(r.value)}`
        : cell
          ? 'value: undefined (the last statement has no value; end the code with an expression to see one)'
          : 'value: undefined (nothing was returned; end the code with `return <value>` to see one)',
    );
  } else {
    const returned =
      cell && r.error.name === 'SyntaxError' && /return not in a function/.test(r.error.message)
        ? CELL_RETURN_HINT
        : null;
    const hint = returned ?? /** @type {Record<string, string | undefined>} */ (HINTS)[r.error.code];
    parts.push(`ERROR ${formatForModel(r.error, { code: true })}${hint ? `\nHint: ${hint}` : ''}`);
  }
  if (r.output) parts.push(`--- output ---\n${r.output}`);
  if (r.logs.length) parts.push(`--- console ---\n${r.logs.map((l) => `[${l.level}] ${l.message}`).join('\n')}`);
  const content = clip(parts.join('\n'), 'print or return less');
  return r.ok ? { ok: true, content, data: r } : { ok: false, code: r.error.code, content, data: r };
}

/**
 * @param {unknown} v
 * @returns {v is import('../index.js').ZipWorkspace}
 */
const isWorkspace = (v) =>
  v !== null && typeof v === 'object' && typeof (/** @type {{ readText?: unknown }} */ (v).readText) === 'function';

const OPTION_KEYS = ['limits', 'workspace', 'tools', 'persistent'];

/**
 * The cells of a persistent run_js: one REPL, replaced by `reset()`, and the signal of the call
 * whose cell runs now (its tool calls are dispatched with it). Calls run one after another.
 */
class Cells {
  /** @type {import('../repl/index.js').Repl} */
  #repl;
  /** @type {Record<string, unknown>} */
  #replOptions;
  /** @type {Promise<unknown>} */
  #queue = Promise.resolve();
  /** @type {AbortSignal | undefined} */
  signal;

  /**
   * @param {import('../index.js').Limits | undefined} limits
   * @param {ToolSet | undefined} tools
   */
  constructor(limits, tools) {
    // Transactional: a call that fails leaves the working set as the calls before it left it.
    this.#replOptions = {
      console: 'capture',
      filename: 'run_js.js',
      transactional: true,
      ...(limits !== undefined ? { limits } : {}),
      ...(tools !== undefined ? { globals: { tools: bindTools(tools, () => this.signal, true) } } : {}),
    };
    this.#repl = createRepl(this.#replOptions);
  }

  /**
   * Runs `code` as the next cell, after the cells already given.
   * @param {string} code
   * @param {AbortSignal | undefined} signal
   * @returns {Promise<RunResult>}
   */
  eval(code, signal) {
    const repl = this.#repl;
    const next = this.#queue.then(() => {
      this.signal = signal;
      return repl.eval(code, signal === undefined ? undefined : { signal });
    });
    this.#queue = next.catch(() => {});
    return next;
  }

  /** Forgets the working set; the next call starts from an empty one. */
  reset() {
    this.#repl.dispose();
    this.#repl = createRepl(this.#replOptions);
  }

  /** Forgets the working set; later calls answer DISPOSED. */
  dispose() {
    this.#repl.dispose();
  }
}

/**
 * @overload
 * @param {CodeToolOptions & { persistent: true }} options
 * @returns {import('./index.js').PersistentCodeToolSet}
 */
/**
 * @overload
 * @param {CodeToolOptions} [options]
 * @returns {ToolSet}
 */
/**
 * A tool set with one tool, `run_js`, that runs `{ code }` with `run()` under `limits`, with
 * the files of `workspace` when one is given, and with `tools` (another tool set) callable from
 * the code as `await tools.<name>(args)`: one call of run_js can make many tool calls (the
 * code-mode pattern). With `persistent`, calls are cells of one REPL whose top-level bindings
 * stay for the next calls; the set then also has `reset()` and `dispose()`.
 * @param {CodeToolOptions} [options]
 * @returns {ToolSet | import('./index.js').PersistentCodeToolSet}
 */
function codeTool(options = {}) {
  if (!isPlainObject(options)) throw invalidInput('codeTool() options must be an object');
  for (const key of Object.keys(options)) {
    if (!OPTION_KEYS.includes(key)) {
      throw invalidInput(`unknown codeTool() option '${key}' (expected: ${OPTION_KEYS.join(', ')})`);
    }
  }
  const { limits, workspace, tools, persistent = false } = options;
  if (tools !== undefined) checkToolSet(tools, 'codeTool() tools');
  if (limits !== undefined && !isPlainObject(limits)) throw invalidInput('codeTool() limits must be an object');
  if (workspace !== undefined && !isWorkspace(workspace))
    throw invalidInput('codeTool() workspace must be a ZipWorkspace');
  if (typeof persistent !== 'boolean') throw invalidInput('codeTool() persistent must be a boolean');
  if (persistent && workspace !== undefined) {
    throw invalidInput(
      'codeTool() persistent cannot be combined with workspace: a persistent realm runs without files',
    );
  }
  const cells = persistent ? new Cells(limits, tools) : null;
  const set = createToolSet(
    [
      {
        name: 'run_js',
        description:
          (cells ? PERSISTENT_DESCRIPTION : workspace ? DESCRIPTION + WORKSPACE_NOTE : DESCRIPTION) +
          (tools === undefined ? '' : toolsNote(tools)),
        inputSchema: {
          type: 'object',
          properties: {
            code: {
              type: 'string',
              minLength: 1,
              description: cells
                ? 'The JavaScript to run (a script: its last expression is the value).'
                : 'The JavaScript to run (the body of an async function).',
            },
          },
          required: ['code'],
          additionalProperties: false,
        },
        annotations: {
          readOnlyHint: false,
          destructiveHint:
            workspace !== undefined || (tools?.tools.some((t) => t.annotations.destructiveHint) ?? false),
          idempotentHint: false,
        },
        /**
         * @param {Record<string, unknown>} args
         * @param {{ signal?: AbortSignal }} context
         */
        async handler(args, { signal }) {
          if (cells) return describeRun(await cells.eval(/** @type {string} */ (args.code), signal), true);
          /** @type {RunOptions} */
          const runOptions = { console: 'capture', filename: 'run_js.js' };
          if (limits !== undefined) runOptions.limits = limits;
          if (workspace !== undefined) runOptions.workspace = workspace;
          if (signal !== undefined) runOptions.signal = signal;
          if (tools !== undefined) runOptions.globals = { tools: bindTools(tools, () => signal, false) };
          return describeRun(await run(/** @type {string} */ (args.code), runOptions));
        },
      },
    ],
    { hints: HINTS },
  );
  if (!cells) return set;
  return Object.assign(set, {
    reset: () => cells.reset(),
    dispose: () => cells.dispose(),
    [Symbol.dispose]: () => cells.dispose(),
  });
}

module.exports = { codeTool };
