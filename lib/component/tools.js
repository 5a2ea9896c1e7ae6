'use strict';
// The two tools a model uses with a component, in the neutral tool form (name, description,
// input JSON Schema, annotations, handler) with a dispatcher that never throws.

const { ErrorCode, formatForModel } = require('../errors.js');
const { createToolSet } = require('../tools/toolset.js');
const { showValue } = require('./render.js');

/**
 * @typedef {import('./index.js').ScriptExecutionResult} ScriptExecutionResult
 * @typedef {import('./index.js').StateChange} StateChange
 * @typedef {import('../tools/index.js').ToolSet} ToolSet
 * @typedef {{ executeScript(script: string, options?: { signal?: AbortSignal }): Promise<ScriptExecutionResult>,
 *   attemptCompletion(result: unknown): Promise<void>, renderWithScriptSection(): Promise<string> }} ToolTarget
 */

/** Longest value shown in a change line. */
const MAX_SHOWN = 200;
/** Longest tool answer, in characters. */
const MAX_CONTENT = 16 * 1024;

/** @param {unknown} value */
function shortValue(value) {
  if (value === undefined) return 'undefined';
  const text = showValue(value);
  return text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN)}…` : text;
}

/** @param {{ state: string, path: (string | number)[] }} at */
function showPath(at) {
  return (
    at.state +
    at.path
      .map((k) =>
        typeof k === 'number' ? `[${k}]` : /^[A-Za-z_$][\w$]*$/.test(k) ? `.${k}` : `[${JSON.stringify(k)}]`,
      )
      .join('')
  );
}

/**
 * Write-only states must not reveal their values to the model, not even as the "before" of a change.
 * @param {ScriptExecutionResult} result
 * @param {Set<string>} writeOnly
 * @returns {ScriptExecutionResult}
 */
function redact(result, writeOnly) {
  if (writeOnly.size === 0) return result;
  return {
    ...result,
    changes: result.changes.map((c) => (writeOnly.has(c.state) ? { ...c, before: undefined } : c)),
  };
}

/** @param {string} text */
function cap(text) {
  return text.length > MAX_CONTENT ? `${text.slice(0, MAX_CONTENT)}\n… (cut)` : text;
}

/**
 * The compact text a model reads after running a script.
 * @param {ScriptExecutionResult} result
 * @param {Set<string>} writeOnly
 */
function describeResult(result, writeOnly) {
  /** @type {string[]} */
  const lines = [];
  let length = 0;
  /**
   * Adds one line of a list while it fits in MAX_CONTENT, less room for the lines that follow
   * the list; false once it does not, so a long list is described as far as it is shown.
   * @param {string} line
   */
  const listed = (line) => {
    if (length + line.length > MAX_CONTENT - 2048) return false;
    lines.push(line);
    length += line.length + 1;
    return true;
  };
  /**
   * @param {string} what
   * @param {number} left
   */
  const unlisted = (what, left) => lines.push(`… and ${left} more ${what}`);
  if (result.error) {
    lines.push(
      `ERROR ${result.error.code}: ${formatForModel(/** @type {import('../index.js').SandboxErrorInfo} */ (result.error))}`,
      'Nothing was changed.',
    );
  } else if (result.validationErrors) {
    lines.push('ERROR VALIDATION_FAILED: the changes break the state types; nothing was changed.');
    const issues = result.validationErrors;
    for (let i = 0; i < issues.length; i++) {
      if (!listed(`- ${showPath(issues[i])}: ${issues[i].message}`)) {
        unlisted('issues', issues.length - i);
        break;
      }
    }
  } else if (result.changes.length === 0) {
    lines.push('The script ran; no state changed.');
  } else {
    lines.push('The script ran. Changes:');
    for (let i = 0; i < result.changes.length; i++) {
      const c = result.changes[i];
      const after = c.op === 'remove' ? '(removed)' : shortValue(c.after);
      const line =
        writeOnly.has(c.state) || c.op === 'add'
          ? `- ${showPath(c)} = ${after}`
          : `- ${showPath(c)}: ${shortValue(c.before)} -> ${after}`;
      if (!listed(line)) {
        unlisted('changes', result.changes.length - i);
        break;
      }
    }
  }
  if (result.completion) lines.push(`Completion recorded: ${shortValue(result.completion.result)}`);
  for (const log of result.logs) lines.push(`[${log.level}] ${log.message}`);
  for (const warning of result.warnings) lines.push(`Warning: ${warning}`);
  return cap(lines.join('\n'));
}

/**
 * execute_script and attempt_completion over a component or a composed group, as a ToolSet of
 * the neutral form (arguments checked against the schemas; dispatch never throws).
 * @param {ToolTarget} target
 * @returns {ToolSet}
 */
function componentTools(target) {
  /** @returns {Set<string>} */
  const writeOnlyStates = () => {
    const owner = /** @type {any} */ (target);
    const states = owner.components
      ? /** @type {any[]} */ (owner.components).flatMap((c) => Object.entries(c.publicStates ?? {}))
      : Object.entries(owner.publicStates ?? {});
    return new Set(states.filter(([, def]) => def?.permission === 'w').map(([name]) => name));
  };

  return createToolSet([
    {
      name: 'execute_script',
      description:
        'Run JavaScript against the component states described in the context (an async function body; ' +
        'states are globals). Every changed state is checked against its type; if the script throws or a ' +
        'check fails, nothing changes and the errors come back.',
      inputSchema: {
        type: 'object',
        properties: { script: { type: 'string', description: 'The JavaScript to run.' } },
        required: ['script'],
        additionalProperties: false,
      },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
      handler: async (args, context) => {
        const result = await target.executeScript(/** @type {string} */ (args.script), { signal: context.signal });
        const writeOnly = writeOnlyStates();
        const code = result.error?.code ?? (result.validationErrors ? ErrorCode.ValidationFailed : undefined);
        return {
          ok: result.success,
          content: describeResult(result, writeOnly),
          data: redact(result, writeOnly),
          ...(code ? { code } : {}),
        };
      },
    },
    {
      name: 'attempt_completion',
      description: 'Declare the task complete, with a short summary of the outcome for the user.',
      inputSchema: {
        type: 'object',
        properties: { result: { type: 'string', description: 'What was done and the outcome.' } },
        required: ['result'],
        additionalProperties: false,
      },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
      handler: async (args) => {
        await target.attemptCompletion(args.result);
        return { ok: true, content: 'Completion recorded.', data: { result: args.result } };
      },
    },
  ]);
}

module.exports = { componentTools, describeResult };
