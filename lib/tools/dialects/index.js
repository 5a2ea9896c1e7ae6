'use strict';
// Editor dialects over one ZipWorkspace: the tools a model already knows from its vendor
// (Anthropic's text editor and memory tools, OpenAI's apply_patch, the MCP filesystem server),
// answering as those tools do, and all writing to the same workspace and its history. Every
// mutating call is one history entry, so `ws.undo()` takes back the last call whichever dialect
// made it.

const { invalidInput } = require('../../errors.js');
const { createToolSet } = require('../toolset.js');
const { textEditorTool } = require('./anthropic-text-editor.js');
const { memoryTool } = require('./anthropic-memory.js');
const { applyPatchTool } = require('./openai-apply-patch.js');
const { filesystemTools } = require('./mcp-filesystem.js');

/**
 * @typedef {import('../../index.js').ZipWorkspace} ZipWorkspace
 * @typedef {import('../index.js').ToolSet} ToolSet
 * @typedef {import('../index.js').EditorDialect} EditorDialect
 * @typedef {import('../index.js').EditorToolsOptions} EditorToolsOptions
 */

/**
 * Failures read as the vendors' tools write them: the message alone, without this project's
 * `ERROR CODE:` prefix and hint line (the code stays on the result).
 * @type {import('../index.js').FailureFormat}
 */
const bare = (_code, message) => message;

/** @type {Record<EditorDialect, (ws: ZipWorkspace) => ToolSet>} */
const DIALECTS = {
  // The text editor reports failures as bare sentences, as Anthropic's reference does.
  'anthropic-text-editor': (ws) => createToolSet([textEditorTool(ws)], { formatFailure: bare }),
  // Anthropic's SDK runs the memory tool and reports a thrown error as `Error: <message>`.
  'anthropic-memory': (ws) =>
    createToolSet([memoryTool(ws)], { formatFailure: (_code, message) => `Error: ${message}` }),
  'openai-apply-patch': (ws) => createToolSet([applyPatchTool(ws)], { formatFailure: bare }),
  // The MCP server answers a thrown error with its message, marked isError.
  'mcp-filesystem': (ws) => createToolSet(filesystemTools(ws), { formatFailure: bare }),
};

const OPTION_KEYS = ['dialect'];

/**
 * The tools of one editor dialect over `ws`, in the neutral tool set form.
 * @param {ZipWorkspace} ws
 * @param {{ dialect: EditorDialect }} options
 * @returns {ToolSet}
 * @throws {TypeError} coded INVALID_INPUT for a missing workspace, an unknown dialect or option.
 */
function editorTools(ws, options) {
  if (ws === null || typeof ws !== 'object' || typeof ws.readText !== 'function' || typeof ws.undo !== 'function') {
    throw invalidInput('editorTools() takes a ZipWorkspace');
  }
  if (options === null || typeof options !== 'object') {
    throw invalidInput(`editorTools() needs options with a dialect: ${Object.keys(DIALECTS).join(', ')}`);
  }
  for (const key of Object.keys(options)) {
    if (!OPTION_KEYS.includes(key)) {
      throw invalidInput(`editorTools(): unknown option '${key}'; expected: ${OPTION_KEYS.join(', ')}`);
    }
  }
  const { dialect } = options;
  if (typeof dialect !== 'string' || !Object.hasOwn(DIALECTS, dialect)) {
    throw invalidInput(
      `editorTools(): unknown dialect ${JSON.stringify(dialect)}; expected one of: ${Object.keys(DIALECTS).join(', ')}`,
    );
  }
  return DIALECTS[dialect](ws);
}

/** The dialect names, in a frozen array. */
const DIALECT_NAMES = /** @type {readonly EditorDialect[]} */ (Object.freeze(Object.keys(DIALECTS)));

module.exports = { editorTools, DIALECTS: DIALECT_NAMES };
