// The ES module entry point: the same objects as the CommonJS entry (one copy of the addon and
// of its process-wide state), under named exports.
import quickrealm from './index.js';

export const {
  run,
  runSync,
  configure,
  poolStats,
  realmStats,
  createSandboxExecutor,
  ZipWorkspace,
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
  StatefulComponent,
  ComponentGroup,
  StateType,
  Permission,
  compose,
} = quickrealm;
export default quickrealm;
