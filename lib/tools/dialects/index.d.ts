import type { ZipWorkspace } from '../../index.js';

/** The editor dialects `editorTools` offers. */
export type EditorDialect = 'anthropic-text-editor' | 'anthropic-memory' | 'openai-apply-patch' | 'mcp-filesystem';

/** Hints about what a tool does, as MCP and the vendors' tool formats carry them. */
export interface EditorToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
}

/**
 * What a tool call gives back. `content` is the text the model reads (the vendor's wording);
 * failures carry a stable `code` (INVALID_INPUT, UNKNOWN_TOOL, NOT_FOUND, EXISTS, NO_MATCH,
 * AMBIGUOUS_MATCH, RANGE, PATCH_MISMATCH, ...). Mutating calls put the workspace history entry
 * they recorded in `data.historyId` (null when nothing changed).
 */
export interface EditorToolResult {
  ok: boolean;
  content: string;
  data?: unknown;
  code?: string;
}

/** One tool in the neutral form: convert it for any vendor's API or an MCP server. */
export interface EditorTool {
  name: string;
  description: string;
  /** JSON Schema of the arguments. */
  inputSchema: Record<string, unknown>;
  annotations: EditorToolAnnotations;
  /** Runs the tool on arguments already checked against `inputSchema`; may throw. Prefer `dispatch`. */
  handler(
    args: Record<string, unknown>,
    context: { signal?: AbortSignal },
  ): EditorToolResult | string | Promise<EditorToolResult | string>;
}

export interface EditorToolSet {
  tools: EditorTool[];
  /**
   * Runs tool `name` with `args` (an object or a JSON string; `null` fields count as absent),
   * checked against its schema. Never throws or rejects: unknown tools (UNKNOWN_TOOL), bad
   * arguments (INVALID_INPUT) and failures come back with `ok: false`.
   */
  dispatch(name: string, args: unknown, options?: { signal?: AbortSignal }): Promise<EditorToolResult>;
}

/**
 * The tools of one editor dialect over `ws`, answering as the vendor's tool does:
 * - `anthropic-text-editor`: `str_replace_based_edit_tool` (view, create, str_replace, insert, undo_edit);
 * - `anthropic-memory`: `memory` (view, create, str_replace, insert, delete, rename) confined to `/memories`;
 * - `openai-apply-patch`: `apply_patch` with `{ operation }` or `{ operations }` of V4A diffs, all or nothing;
 * - `mcp-filesystem`: the reference MCP filesystem server's tools (all but `read_media_file`).
 *
 * Every mutating call records exactly one history entry of `ws`, so `ws.undo()` takes it back
 * whichever dialect made it.
 * @throws {TypeError} with `code: 'INVALID_INPUT'` for a missing workspace, an unknown dialect or option.
 * @example
 * const { tools, dispatch } = editorTools(ws, { dialect: 'anthropic-text-editor' });
 * const r = await dispatch('str_replace_based_edit_tool', { command: 'view', path: '/src/app.js' });
 */
export function editorTools(ws: ZipWorkspace, options: { dialect: EditorDialect }): EditorToolSet;

/** The dialect names, in a frozen array. */
export const DIALECTS: readonly EditorDialect[];
