'use strict';
// `run_js`: one tool that runs a model's JavaScript with `run()` and describes the outcome the
// way a model can act on it: the value, what it emitted and logged, or the error with its code,
// line and source frame.

const { formatForModel, invalidInput } = require('../errors.js');
const { run } = require('../run.js');
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
 * The `tools` global of a script: one async function per tool of `set`.
 * @param {ToolSet} set
 * @param {AbortSignal | undefined} signal
 */
function bindTools(set, signal) {
  /** @type {Record<string, (args?: unknown) => Promise<ToolResult>>} */
  const bound = {};
  for (const { name } of set.tools) {
    bound[name] = (args) => set.dispatch(name, args ?? {}, signal === undefined ? {} : { signal });
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

/**
 * The run's outcome as text for the model.
 * @param {RunResult} r
 * @returns {ToolResult}
 */
function describeRun(r) {
  /** @type {string[]} */
  const parts = [];
  if (r.ok) {
    parts.push(
      r.value === undefined
        ? 'value: undefined (nothing was returned; end the code with `return <value>` to see one)'
        : `value: ${showValue(r.value)}`,
    );
  } else {
    const hint = /** @type {Record<string, string | undefined>} */ (HINTS)[r.error.code];
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

/**
 * A tool set with one tool, `run_js`, that runs `{ code }` with `run()` under `limits`, with
 * the files of `workspace` when one is given, and with `tools` (another tool set) callable from
 * the code as `await tools.<name>(args)`: one call of run_js can make many tool calls (the
 * code-mode pattern).
 * @param {CodeToolOptions} [options]
 * @returns {ToolSet}
 */
function codeTool(options = {}) {
  if (!isPlainObject(options)) throw invalidInput('codeTool() options must be an object');
  for (const key of Object.keys(options)) {
    if (key !== 'limits' && key !== 'workspace' && key !== 'tools') {
      throw invalidInput(`unknown codeTool() option '${key}' (expected: limits, workspace, tools)`);
    }
  }
  const { limits, workspace, tools } = options;
  if (tools !== undefined) checkToolSet(tools, 'codeTool() tools');
  if (limits !== undefined && !isPlainObject(limits)) throw invalidInput('codeTool() limits must be an object');
  if (workspace !== undefined && !isWorkspace(workspace))
    throw invalidInput('codeTool() workspace must be a ZipWorkspace');
  return createToolSet(
    [
      {
        name: 'run_js',
        description:
          (workspace ? DESCRIPTION + WORKSPACE_NOTE : DESCRIPTION) + (tools === undefined ? '' : toolsNote(tools)),
        inputSchema: {
          type: 'object',
          properties: {
            code: {
              type: 'string',
              minLength: 1,
              description: 'The JavaScript to run (the body of an async function).',
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
          /** @type {RunOptions} */
          const runOptions = { console: 'capture', filename: 'run_js.js' };
          if (limits !== undefined) runOptions.limits = limits;
          if (workspace !== undefined) runOptions.workspace = workspace;
          if (signal !== undefined) runOptions.signal = signal;
          if (tools !== undefined) runOptions.globals = { tools: bindTools(tools, signal) };
          return describeRun(await run(/** @type {string} */ (args.code), runOptions));
        },
      },
    ],
    { hints: HINTS },
  );
}

module.exports = { codeTool };
