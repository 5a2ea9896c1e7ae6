// The hand-written declarations checked against the JavaScript that implements them: every
// public export's implementation (its JSDoc types, read from a module that has no declaration
// file beside it) must be assignable to what lib/**/index.d.ts declares, so `tsc` fails when
// the two drift. Generated declarations (lib/native/binding.d.ts) need no such check.
// __test__/types.spec.ts proves that a wrong declaration fails here.

import type * as declared from '../../lib/index.js';
import type * as declaredTree from '../../lib/tree.js';
import type * as component from '../../lib/component/component.js';
import type * as errors from '../../lib/errors.js';
import type * as executor from '../../lib/executor.js';
import type * as run from '../../lib/run.js';
import type * as manager from '../../lib/session/manager.js';
import type * as policy from '../../lib/session/policy.js';
import type * as session from '../../lib/session/session.js';
import type * as sessionTools from '../../lib/session/tools.js';
import type * as telemetry from '../../lib/telemetry/otel.js';
import type * as treeContext from '../../lib/tree-context.js';
import type * as aiSdk from '../../lib/tools/ai-sdk.js';
import type * as anthropic from '../../lib/tools/anthropic.js';
import type * as code from '../../lib/tools/code.js';
import type * as dialects from '../../lib/tools/dialects/index.js';
import type * as mcp from '../../lib/tools/mcp.js';
import type * as openai from '../../lib/tools/openai.js';
import type * as toolset from '../../lib/tools/toolset.js';
import type * as tools from '../../lib/tools/workspace.js';
import type * as workspace from '../../lib/workspace.js';

/** Compiles only when the implementation `Impl` can stand where `Declared` is declared. */
type Implements<Impl extends Declared, Declared> = [Impl, Declared];

// Not checked here, each for a reason the check cannot express yet: the overloads of
// toOpenAITools and toOpenAIToolMessage (one implementation cannot be assigned to each
// overload's narrower return); StatefulComponent, ComponentGroup and compose (the declared
// classes have a private constructor and protected members, the implementations #private
// fields, so neither is assignable to the other).
export type Checked = [
  Implements<typeof run.run, typeof declared.run>,
  Implements<typeof run.runSync, typeof declared.runSync>,
  Implements<typeof run.configure, typeof declared.configure>,
  Implements<typeof run.poolStats, typeof declared.poolStats>,
  Implements<typeof run.realmStats, typeof declared.realmStats>,
  Implements<typeof run.copyOf, typeof declared.copyOf>,
  Implements<typeof errors.ErrorCode, typeof declared.ErrorCode>,
  Implements<typeof executor.createSandboxExecutor, typeof declared.createSandboxExecutor>,
  Implements<typeof workspace.ZipWorkspace, typeof declared.ZipWorkspace>,
  Implements<typeof toolset.createToolSet, typeof declared.createToolSet>,
  Implements<typeof toolset.restrictToolSet, typeof declared.restrictToolSet>,
  Implements<typeof toolset.combineToolSets, typeof declared.combineToolSets>,
  Implements<typeof tools.workspaceTools, typeof declared.workspaceTools>,
  Implements<typeof code.codeTool, typeof declared.codeTool>,
  Implements<typeof dialects.editorTools, typeof declared.editorTools>,
  Implements<typeof openai.toStrictJsonSchema, typeof declared.toStrictJsonSchema>,
  Implements<typeof anthropic.toAnthropicTools, typeof declared.toAnthropicTools>,
  Implements<typeof anthropic.toAnthropicToolResult, typeof declared.toAnthropicToolResult>,
  Implements<typeof aiSdk.toAISDKTools, typeof declared.toAISDKTools>,
  Implements<typeof mcp.createMcpServer, typeof declared.createMcpServer>,
  Implements<typeof component.StateType, typeof declared.StateType>,
  Implements<typeof component.Permission, typeof declared.Permission>,
  Implements<typeof manager.FolderStore, typeof declared.FolderStore>,
  Implements<typeof policy.policies, typeof declared.policies>,
  Implements<typeof session.Session, typeof declared.Session>,
  Implements<typeof manager.SessionManager, typeof declared.SessionManager>,
  Implements<typeof sessionTools.sessionTools, typeof declared.sessionTools>,
  Implements<typeof sessionTools.describeTurn, typeof declared.describeTurn>,
  Implements<typeof telemetry.configureTelemetry, typeof declared.configureTelemetry>,
  Implements<typeof treeContext.createContext, typeof declaredTree.createContext>,
];
