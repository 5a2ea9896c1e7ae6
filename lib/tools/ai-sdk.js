'use strict';
// Tool sets as Vercel AI SDK tools (`ai`, an optional peer dependency loaded on first use).

const { checkToolSet } = require('./toolset.js');
const { loadPeer } = require('./peers.js');

/**
 * @typedef {import('./index.js').ToolSet} ToolSet
 * @typedef {import('./index.js').ToolResult} ToolResult
 */

/**
 * The tools of `set` as an AI SDK tool record for `generateText`/`streamText`. Each tool's
 * `execute` dispatches through the set (so arguments are checked there, never thrown at) and
 * gives the ToolResult back; `toModelOutput` shows the model its text, as an error when the call
 * failed.
 * @param {ToolSet} set
 * @returns {Record<string, any>}
 */
function toAISDKTools(set) {
  checkToolSet(set, 'toAISDKTools()');
  const { tool, jsonSchema } = loadPeer('ai', 'ai', 'toAISDKTools()');
  return Object.fromEntries(
    set.tools.map((t) => [
      t.name,
      tool({
        description: t.description,
        inputSchema: jsonSchema(t.inputSchema),
        /**
         * @param {unknown} input
         * @param {{ abortSignal?: AbortSignal }} options
         */
        async execute(input, { abortSignal }) {
          const r = await set.dispatch(t.name, input, abortSignal ? { signal: abortSignal } : {});
          // Only what the model reads: `data` may hold values that are not JSON.
          /** @type {ToolResult} */
          const out = { ok: r.ok, content: r.content };
          if (r.code !== undefined) out.code = r.code;
          return out;
        },
        /** @param {{ output: ToolResult }} options */
        toModelOutput({ output }) {
          return output.ok ? { type: 'text', value: output.content } : { type: 'error-text', value: output.content };
        },
      }),
    ]),
  );
}

module.exports = { toAISDKTools };
