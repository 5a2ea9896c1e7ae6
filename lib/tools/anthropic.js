'use strict';
// Tool sets as Anthropic Messages API tools, and tool results as `tool_result` blocks.

const { invalidInput } = require('../errors.js');
const { checkToolSet, isPlainObject } = require('./toolset.js');

/**
 * @typedef {import('./index.js').ToolSet} ToolSet
 * @typedef {import('./index.js').ToolResult} ToolResult
 * @typedef {import('./index.js').AnthropicTool} AnthropicTool
 * @typedef {import('./index.js').AnthropicToolResult} AnthropicToolResult
 */

/**
 * The tools of `set` as Anthropic tools: `{ name, description, input_schema }`.
 * @param {ToolSet} set
 * @returns {AnthropicTool[]}
 */
function toAnthropicTools(set) {
  checkToolSet(set, 'toAnthropicTools()');
  return set.tools.map((t) => ({
    name: t.name,
    description: t.description,
    input_schema: /** @type {AnthropicTool['input_schema']} */ (t.inputSchema),
  }));
}

/**
 * A ToolResult as the `tool_result` content block that answers a `tool_use` block; failures
 * carry `is_error: true`.
 * @param {string} toolUseId
 * @param {ToolResult} result
 * @returns {AnthropicToolResult}
 */
function toAnthropicToolResult(toolUseId, result) {
  if (typeof toolUseId !== 'string') throw invalidInput('toAnthropicToolResult() takes the tool use id as a string');
  if (!isPlainObject(result) || typeof result.content !== 'string') {
    throw invalidInput('toAnthropicToolResult() takes a tool result ({ ok, content })');
  }
  return { type: 'tool_result', tool_use_id: toolUseId, content: result.content, is_error: !result.ok };
}

module.exports = { toAnthropicTools, toAnthropicToolResult };
