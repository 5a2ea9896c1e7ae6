// Types of quickrealm/tools: tool sets for models in one neutral form, and the converters to
// OpenAI, Anthropic, the Vercel AI SDK and MCP.

import type { Limits, ZipWorkspace } from '../index.js';
// Optional peers: their types are used where installed and are `any` where not, so projects
// without them still type-check with skipLibCheck off.
// @ts-ignore
import type { Tool as AISDKTool } from 'ai';
// @ts-ignore
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';

export type JsonSchemaType = 'string' | 'number' | 'integer' | 'boolean' | 'object' | 'array' | 'null';

/**
 * A JSON Schema (draft-07 and later keywords). Plain data: it survives `JSON.stringify`, as it
 * must to be sent to a model API.
 */
export type JsonSchema = {
  type?: JsonSchemaType | JsonSchemaType[];
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  [keyword: string]: unknown;
};

/** The JSON Schema of a tool's arguments: always an object. */
export type ToolInputSchema = JsonSchema & { type: 'object' };

/** @deprecated The old name of {@link JsonSchema}. */
export type ToolParameterSchema = JsonSchema;

/**
 * What a tool does to the world, for hosts and clients deciding what to offer or confirm (the
 * MCP tool annotations). `destructiveHint` and `idempotentHint` matter only when `readOnlyHint`
 * is false.
 */
export interface ToolAnnotations {
  /** The tool changes nothing. */
  readOnlyHint: boolean;
  /** The tool may overwrite or delete what exists (rather than only add). */
  destructiveHint: boolean;
  /** Calling it again with the same arguments has no further effect. */
  idempotentHint: boolean;
}

/**
 * What a tool call gives back. `content` is compact text for the model; failures read
 * `ERROR CODE: message` plus a hint line (or as the set's `formatFailure` writes them: the
 * editor dialects use their vendors' wording), with `code` set. `data` is for the host only (never
 * sent to a model by the converters).
 */
export interface ToolResult {
  ok: boolean;
  content: string;
  data?: unknown;
  code?: string;
}

/** Per-call options. */
export interface ToolContext {
  /**
   * Aborting stops a running call (CANCELLED, or TIMEOUT for `AbortSignal.timeout()`); an
   * already aborted signal refuses the call.
   */
  signal?: AbortSignal;
}

/** One tool in the neutral form. */
export interface Tool {
  name: string;
  description: string;
  inputSchema: ToolInputSchema;
  annotations: ToolAnnotations;
  /**
   * Runs the tool. Takes the arguments as an object or a JSON string, checks them against
   * `inputSchema` (optional fields given as null count as absent) and never rejects.
   */
  handler(args: unknown, context?: ToolContext): Promise<ToolResult>;
}

/** Tools offered to a model together, and a dispatcher that runs a call by name. */
export interface ToolSet {
  tools: Tool[];
  /**
   * Runs the tool `name` with `args` (an object or a JSON string). Never rejects: a tool that is
   * not in `tools` is UNKNOWN_TOOL, bad arguments are INVALID_INPUT, other failures carry
   * their code; all come back as `ok: false` results.
   */
  dispatch(name: string, args: unknown, options?: ToolContext): Promise<ToolResult>;
}

/** @deprecated The old name of {@link Tool}. */
export type ToolDefinition = Tool;

/** @deprecated The old name of {@link ToolSet}. */
export type WorkspaceTools = ToolSet;

/** A tool as a host defines it for {@link createToolSet}: the handler may throw. */
export interface ToolDefinitionInput {
  /** 1 to 64 letters, digits, `_` or `-`. */
  name: string;
  description: string;
  inputSchema: ToolInputSchema;
  /** Defaults: not read-only, destructive, not idempotent. */
  annotations?: Partial<ToolAnnotations>;
  /**
   * Called with arguments already checked against `inputSchema`. Return text (a success) or a
   * ToolResult; a thrown error with a string `code` becomes `ERROR CODE: message`.
   */
  handler(args: Record<string, unknown>, context: ToolContext): string | ToolResult | Promise<string | ToolResult>;
}

/**
 * Writes a failure's `content` from its code, message and hint (null when there is none).
 * The default reads `ERROR CODE: message` plus `Hint: ...` on its own line.
 */
export type FailureFormat = (code: string, message: string, hint: string | null) => string;

export interface ToolSetOptions {
  /** A hint line added to failures with that code, e.g. `{ NOT_FOUND: 'List the folder first.' }`. */
  hints?: Record<string, string | null>;
  /**
   * How every failure of the set reads, its own (bad arguments, unknown tool) and the handlers'
   * (for tools that answer as another vendor's tool does, e.g. `(code, message) => 'Error: ' + message`).
   * `code` stays on the result either way.
   */
  formatFailure?: FailureFormat;
}

/** Which tools of a set to offer. Unknown keys and unknown tool names throw INVALID_INPUT. */
export interface RestrictOptions<Name extends string = string> {
  /** Only these tools. */
  include?: Name[];
  /** Not these tools. */
  exclude?: Name[];
  /** Only tools whose `readOnlyHint` is true. */
  readOnly?: boolean;
}

/**
 * Builds a ToolSet: each tool's arguments are validated with Ajv (compiled once per schema)
 * and every failure becomes a result a model can act on.
 * @throws {TypeError} with `code: 'INVALID_INPUT'` for a malformed definition or repeated name.
 * @example
 * const set = createToolSet([{
 *   name: 'add',
 *   description: 'Add two integers.',
 *   inputSchema: { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer' } }, required: ['a', 'b'] },
 *   annotations: { readOnlyHint: true },
 *   handler: ({ a, b }) => String(Number(a) + Number(b)),
 * }]);
 * await set.dispatch('add', '{"a": 1, "b": 2}'); // { ok: true, content: '3' }
 */
export function createToolSet(definitions: ToolDefinitionInput[], options?: ToolSetOptions): ToolSet;

/**
 * The tools of `set` that `options` keep; `dispatch` refuses the others as UNKNOWN_TOOL.
 * @throws {TypeError} with `code: 'INVALID_INPUT'` for unknown option keys or tool names.
 * @example
 * const readers = restrictToolSet(workspaceTools(ws), { readOnly: true });
 */
export function restrictToolSet(set: ToolSet, options?: RestrictOptions): ToolSet;

/**
 * One ToolSet with the tools of several, dispatching each call to its own set.
 * @throws {TypeError} with `code: 'INVALID_INPUT'` when two tools share a name.
 * @example
 * const set = combineToolSets(workspaceTools(ws), codeTool({ workspace: ws }));
 */
export function combineToolSets(...sets: ToolSet[]): ToolSet;

// ---- workspace tools -----------------------------------------------------------------

export type WorkspaceToolName =
  | 'fs_read'
  | 'fs_read_lines'
  | 'fs_write'
  | 'fs_patch_lines'
  | 'fs_list'
  | 'fs_stat'
  | 'fs_mkdir'
  | 'fs_delete'
  | 'fs_search'
  | 'js_exec';

export type WorkspaceToolsOptions = RestrictOptions<WorkspaceToolName>;

/**
 * The workspace tools over `ws`: `fs_read`, `fs_read_lines`, `fs_write`, `fs_patch_lines`,
 * `fs_list`, `fs_stat`, `fs_mkdir`, `fs_delete`, `fs_search` (read-only ones marked so) and
 * `js_exec`, which calls `ws.exec(path, { argv, env, timeoutMs })` and reports UNAVAILABLE
 * when the workspace has no `exec`.
 * @throws {TypeError} with `code: 'INVALID_INPUT'` when `ws` is not a workspace, or for unknown
 *   options or tool names.
 * @example
 * const { tools, dispatch } = workspaceTools(ws, { exclude: ['fs_delete'] });
 * const answer = await dispatch('fs_read', '{"path": "notes.md"}'); // { ok, content }
 */
export function workspaceTools(ws: ZipWorkspace, options?: WorkspaceToolsOptions): ToolSet;

// ---- run_js ---------------------------------------------------------------------------

export interface CodeToolOptions {
  /** Limits for each run (see `run`). */
  limits?: Limits;
  /** Gives the code this workspace's files (`fs` and `path` globals); writes kept on success. */
  workspace?: ZipWorkspace;
  /**
   * Tools the code may call as `await tools.<name>(args)`, each resolving to the tool's
   * {@link ToolResult} (never throwing for a failed call): one run_js call can make many tool
   * calls. The run_js description lists them with their parameters.
   * @example
   * const code = codeTool({ tools: workspaceTools(ws) });
   * await code.dispatch('run_js', {
   *   code: "for (const f of ['a', 'b']) await tools.fs_write({ path: f + '.txt', content: f }); return 'done'",
   * });
   */
  tools?: ToolSet;
  /**
   * Calls are cells of one persistent realm (see `createRepl`): a script with top-level `await`
   * whose value is its last expression statement's (no `return` outside a function); top-level
   * `let`/`const`/`var`/function/class declarations and everything they reach (closures
   * included) are there in later calls. A call that fails changes nothing. Live values (the
   * `tools` global), promises and timers cannot be kept in a binding: such a call fails with
   * INVALID_INPUT naming it. Cannot be combined with `workspace`. The description tells the
   * model all this. @defaultValue false
   */
  persistent?: boolean;
}

/** The tool set of a persistent `codeTool`: `run_js` plus control of its working set. */
export interface PersistentCodeToolSet extends ToolSet {
  /** Forgets the working set: the next call starts from an empty realm. */
  reset(): void;
  /** Forgets the working set; later calls answer DISPOSED. */
  dispose(): void;
  [Symbol.dispose](): void;
}

/**
 * A tool set with one tool, `run_js`, taking `{ code }`: the code runs with `run()` (the body of
 * an async function) and the result reads `value: ...`, then what it emitted and logged; a
 * failure reads `ERROR CODE: Name: message (line L, column C)` with a source frame and a hint.
 * `data` holds the whole RunResult. With `persistent: true` the calls share one working set.
 * @example
 * const code = codeTool({ limits: { timeoutMs: 2000 } });
 * (await code.dispatch('run_js', { code: 'return 6 * 7' })).content; // 'value: 42'
 * @example
 * using repl = codeTool({ persistent: true });
 * await repl.dispatch('run_js', { code: 'const seen = new Map(); function see(k) { seen.set(k, seen.size) }' });
 * (await repl.dispatch('run_js', { code: 'see("a"); seen.size' })).content; // 'value: 1'
 */
export function codeTool(options: CodeToolOptions & { persistent: true }): PersistentCodeToolSet;
export function codeTool(options?: CodeToolOptions): ToolSet;

// ---- editor dialects ------------------------------------------------------------------

/** The editor dialects {@link editorTools} offers. */
export type EditorDialect = 'anthropic-text-editor' | 'anthropic-memory' | 'openai-apply-patch' | 'mcp-filesystem';

export interface EditorToolsOptions {
  dialect: EditorDialect;
}

/**
 * The tools of one editor dialect over `ws`, answering as the vendor's tool does:
 * - `anthropic-text-editor`: `str_replace_based_edit_tool` (view, create, str_replace, insert, undo_edit);
 * - `anthropic-memory`: `memory` (view, create, str_replace, insert, delete, rename) confined to `/memories`;
 * - `openai-apply-patch`: `apply_patch` with `{ operation }` or `{ operations }` of V4A diffs, all or nothing;
 * - `mcp-filesystem`: the reference MCP filesystem server's tools (all but `read_media_file`).
 *
 * A failure's `content` is the vendor's wording (`Error: <message>` for the memory tool, the
 * message alone for the others) rather than `ERROR CODE: ...`; its stable `code` (INVALID_INPUT,
 * UNKNOWN_TOOL, NOT_FOUND, EXISTS, NO_MATCH, AMBIGUOUS_MATCH, RANGE, PATCH_MISMATCH, ...) is on
 * the result as for every ToolSet. Every mutating call records exactly one history entry of `ws`
 * and puts its id in `data.historyId` (null when nothing changed), so `ws.undo()` takes it back
 * whichever dialect made it. Convert the set like any other (`toOpenAITools`, `toAnthropicTools`,
 * `toAISDKTools`, `createMcpServer`), or combine it with {@link workspaceTools}.
 * @throws {TypeError} with `code: 'INVALID_INPUT'` for a missing workspace, an unknown dialect or option.
 * @example
 * const { tools, dispatch } = editorTools(ws, { dialect: 'anthropic-text-editor' });
 * const r = await dispatch('str_replace_based_edit_tool', { command: 'view', path: '/src/app.js' });
 */
export function editorTools(ws: ZipWorkspace, options: EditorToolsOptions): ToolSet;

// ---- OpenAI ---------------------------------------------------------------------------

/** A Chat Completions function tool (assignable to the openai package's `ChatCompletionTool`). */
export interface OpenAIChatTool {
  type: 'function';
  function: { name: string; description: string; parameters: JsonSchema; strict?: boolean };
}

/** A Responses API function tool (assignable to the openai package's `FunctionTool`). */
export interface OpenAIResponsesTool {
  type: 'function';
  name: string;
  description: string;
  parameters: JsonSchema;
  strict: boolean;
}

export interface OpenAIToolsOptions {
  /** 'chat' (default): Chat Completions; 'responses': the Responses API. */
  api?: 'chat' | 'responses';
  /**
   * Strict mode (default false): each schema is rewritten with {@link toStrictJsonSchema}, and
   * the null that strict mode sends for an omitted optional field is treated as absent by
   * every ToolSet's dispatch.
   */
  strict?: boolean;
}

/**
 * The tools of `set` as OpenAI function tools.
 * @example
 * const tools = toOpenAITools(set, { api: 'chat', strict: true });
 * const completion = await openai.chat.completions.create({ model, messages, tools });
 */
export function toOpenAITools(set: ToolSet, options: OpenAIToolsOptions & { api: 'responses' }): OpenAIResponsesTool[];
export function toOpenAITools(set: ToolSet, options?: OpenAIToolsOptions & { api?: 'chat' }): OpenAIChatTool[];
export function toOpenAITools(set: ToolSet, options?: OpenAIToolsOptions): OpenAIChatTool[] | OpenAIResponsesTool[];

/**
 * A JSON Schema rewritten for OpenAI's strict mode: every property listed in `required`, the
 * optional ones made nullable (`type: ['boolean', 'null']`, or `anyOf: [<schema>, { type: 'null' }]`
 * when the schema carries constraints), `additionalProperties: false` on
 * every object, and only keywords strict mode accepts: the structure keywords plus `pattern`,
 * `format`, `minLength`, `maxLength`, `minimum`, `maximum`, `exclusiveMinimum`,
 * `exclusiveMaximum`, `multipleOf`, `minItems` and `maxItems`. Other constraints (`uniqueItems`,
 * ...) move into the description (dispatch still enforces them); `const` becomes a one-value
 * `enum`; open maps (`additionalProperties` given as a schema), which strict mode cannot
 * express, are left out.
 * @example
 * toStrictJsonSchema({ type: 'object', properties: { n: { type: 'integer', minimum: 1 } } });
 * // { type: 'object', properties: { n: { anyOf: [{ type: 'integer', minimum: 1 }, { type: 'null' }] } },
 * //   required: ['n'], additionalProperties: false }
 */
export function toStrictJsonSchema(schema: JsonSchema): JsonSchema;

/** The `tool` message answering a Chat Completions tool call. */
export interface OpenAIToolMessage {
  role: 'tool';
  tool_call_id: string;
  content: string;
}

/** The `function_call_output` input item answering a Responses API function call. */
export interface OpenAIFunctionCallOutput {
  type: 'function_call_output';
  call_id: string;
  output: string;
}

/**
 * A ToolResult as the message answering an OpenAI tool call (OpenAI has no error flag: a
 * failure's text starts with `ERROR CODE:`).
 * @example
 * const call = completion.choices[0].message.tool_calls[0];
 * messages.push(toOpenAIToolMessage(call.id, await set.dispatch(call.function.name, call.function.arguments)));
 */
export function toOpenAIToolMessage(
  toolCallId: string,
  result: ToolResult,
  options: { api: 'responses' },
): OpenAIFunctionCallOutput;
export function toOpenAIToolMessage(
  toolCallId: string,
  result: ToolResult,
  options?: { api?: 'chat' },
): OpenAIToolMessage;
export function toOpenAIToolMessage(
  toolCallId: string,
  result: ToolResult,
  options?: { api?: 'chat' | 'responses' },
): OpenAIToolMessage | OpenAIFunctionCallOutput;

// ---- Anthropic ------------------------------------------------------------------------

/** An Anthropic Messages API tool (assignable to `@anthropic-ai/sdk`'s `Tool`). */
export interface AnthropicTool {
  name: string;
  description: string;
  input_schema: ToolInputSchema;
}

/** A `tool_result` block (assignable to `@anthropic-ai/sdk`'s `ToolResultBlockParam`). */
export interface AnthropicToolResult {
  type: 'tool_result';
  tool_use_id: string;
  content: string;
  is_error: boolean;
}

/**
 * The tools of `set` as Anthropic tools.
 * @example
 * const msg = await anthropic.messages.create({ model, max_tokens: 1024, messages, tools: toAnthropicTools(set) });
 */
export function toAnthropicTools(set: ToolSet): AnthropicTool[];

/**
 * A ToolResult as the `tool_result` block answering a `tool_use` block; failures carry
 * `is_error: true`.
 * @example
 * const block = toAnthropicToolResult(use.id, await set.dispatch(use.name, use.input));
 * messages.push({ role: 'user', content: [block] });
 */
export function toAnthropicToolResult(toolUseId: string, result: ToolResult): AnthropicToolResult;

// ---- Vercel AI SDK --------------------------------------------------------------------

/**
 * The tools of `set` for the AI SDK's `generateText`/`streamText` (built with `ai`'s `tool()`
 * and `jsonSchema()`; `ai` is an optional peer dependency, loaded on the first call). `execute`
 * dispatches through the set and answers with `{ ok, content, code? }`; the model reads
 * `content`, as an error when `ok` is false.
 * @throws {Error} with `code: 'MODULE_NOT_FOUND'` when `ai` is not installed.
 * @example
 * const result = await generateText({ model, tools: toAISDKTools(set), stopWhen: stepCountIs(5), prompt });
 */
export function toAISDKTools(set: ToolSet): Record<string, AISDKTool<Record<string, unknown>, ToolResult>>;

// ---- MCP ------------------------------------------------------------------------------

export interface McpServerOptions {
  /** The server's name, as clients show it. */
  name: string;
  version: string;
  /** Told to clients on initialisation: how to use the tools together. */
  instructions?: string;
}

/**
 * An MCP server (`McpServer` of `@modelcontextprotocol/sdk`, an optional peer dependency)
 * offering the tools of `set` with their JSON Schemas and annotations; results are one text
 * block with `isError: true` for failures, and a result's `data` (when a plain JSON object) and
 * a failure's `code` also come as `structuredContent`. It serves exactly this set: combine sets with
 * {@link combineToolSets} rather than calling its `registerTool`.
 * @throws {Error} with `code: 'MODULE_NOT_FOUND'` when `@modelcontextprotocol/sdk` is not installed.
 * @example
 * const server = createMcpServer(workspaceTools(ws), { name: 'files', version: '1.0.0' });
 * await server.connect(new StdioServerTransport());
 */
export function createMcpServer(set: ToolSet, options: McpServerOptions): McpServer;
