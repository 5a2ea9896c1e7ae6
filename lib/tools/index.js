'use strict';
// quickrealm/tools: tool sets for models in one neutral form, and converters to each model
// API's format. Re-exports only.

const { createToolSet, restrictToolSet, combineToolSets } = require('./toolset.js');
const { workspaceTools } = require('./workspace.js');
const { codeTool } = require('./code.js');
const { editorTools } = require('./dialects/index.js');
const { toOpenAITools, toOpenAIToolMessage, toStrictJsonSchema } = require('./openai.js');
const { toAnthropicTools, toAnthropicToolResult } = require('./anthropic.js');
const { toAISDKTools } = require('./ai-sdk.js');
const { createMcpServer } = require('./mcp.js');

module.exports = {
  createToolSet,
  restrictToolSet,
  combineToolSets,
  workspaceTools,
  codeTool,
  editorTools,
  toOpenAITools,
  toOpenAIToolMessage,
  toStrictJsonSchema,
  toAnthropicTools,
  toAnthropicToolResult,
  toAISDKTools,
  createMcpServer,
};
