// The ES module entry of quickrealm/tools: the same objects as the CommonJS entry, under named
// exports.
import tools from './index.js';

export const {
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
} = tools;
export default tools;
