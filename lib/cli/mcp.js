'use strict';
// `quickrealm mcp --zip <file> [--dialect <name>]`: an MCP server over stdio for one zipped
// workspace. It offers the workspace tools, `run_js` (with the workspace's files) and, with
// --dialect, an editor dialect's tools over the same workspace and history. After every
// successful call of a tool that is not read-only the zip is saved atomically (unless the result
// says nothing changed: `data.historyId` null), so a client that stops at any point leaves the
// last completed change on disk. A missing zip starts an empty workspace.
//
// Tool names: the dialect's names are the ones its vendor's models know, so where a dialect tool
// is named like a workspace tool or run_js, the dialect's tool is offered under that name and the
// other one is left out. (No dialect shipped today clashes; the rule keeps a future one working.)
//
// stdout carries the JSON-RPC stream and nothing else: guest console output is captured into
// tool results, and host console.log/info/debug are sent to stderr while the server runs.

const { ErrorCode } = require('../errors.js');
const fs = require('node:fs');
const path = require('node:path');
// The public class type: lib/workspace.js adds dispose() to the native class at run time.
const { ZipWorkspace } = /** @type {{ ZipWorkspace: typeof import('../index.js').ZipWorkspace }} */ (
  /** @type {unknown} */ (require('../workspace.js'))
);
const { combineToolSets, isPlainObject, restrictToolSet } = require('../tools/toolset.js');
const { workspaceTools } = require('../tools/workspace.js');
const { codeTool } = require('../tools/code.js');
const { editorTools } = require('../tools/dialects/index.js');
const { createMcpServer } = require('../tools/mcp.js');
const { loadPeer } = require('../tools/peers.js');
const { EXIT_FAILED, EXIT_INVALID, fail } = require('./io.js');

/**
 * @typedef {import('../tools/index.js').ToolSet} ToolSet
 * @typedef {import('../tools/index.js').ToolResult} ToolResult
 * @typedef {import('../index.js').ZipWorkspace} Workspace
 */

/** @param {unknown} e */
const messageOf = (e) => (e instanceof Error ? e.message : String(e));

/**
 * Opens the workspace stored at `zipPath`, or an empty one when the file does not exist.
 * @param {string} zipPath
 * @returns {Workspace}
 */
function openWorkspace(zipPath) {
  if (!fs.existsSync(zipPath)) {
    const dir = path.dirname(path.resolve(zipPath));
    if (!fs.existsSync(dir)) throw new Error(`the folder of ${zipPath} does not exist`);
    return new ZipWorkspace();
  }
  return ZipWorkspace.open(zipPath);
}

/**
 * One tool set with the tools of `sets` and then those of `preferred`; a tool of `sets` named
 * like one of `preferred` is left out (see the top of this file).
 * @param {ToolSet[]} sets
 * @param {ToolSet} preferred
 * @returns {ToolSet}
 */
function combinePreferring(sets, preferred) {
  const names = new Set(preferred.tools.map((t) => t.name));
  const kept = sets.map((set) => {
    const exclude = set.tools.filter((t) => names.has(t.name)).map((t) => t.name);
    return exclude.length ? restrictToolSet(set, { exclude }) : set;
  });
  return combineToolSets(...kept, preferred);
}

/**
 * The server's tool set: every call of a tool that is not read-only and succeeded saves the zip.
 * @param {Workspace} ws
 * @param {string} zipPath
 * @param {string | undefined} dialect
 * @returns {ToolSet}
 */
function serverTools(ws, zipPath, dialect) {
  const sets = [workspaceTools(ws), codeTool({ workspace: ws })];
  const combined =
    dialect === undefined
      ? combineToolSets(...sets)
      : combinePreferring(
          sets,
          editorTools(ws, { dialect: /** @type {import('../tools/index.js').EditorDialect} */ (dialect) }),
        );
  const readOnly = new Map(combined.tools.map((t) => [t.name, t.annotations.readOnlyHint]));
  return {
    tools: combined.tools,
    async dispatch(name, args, options) {
      const result = await combined.dispatch(name, args, options);
      if (!result.ok || readOnly.get(name) !== false) return result;
      if (isPlainObject(result.data) && result.data.historyId === null) return result;
      try {
        ws.save(zipPath);
        return result;
      } catch (e) {
        return {
          ok: false,
          code: ErrorCode.SaveFailed,
          content: `${result.content}\nERROR SAVE_FAILED: the change was made but ${zipPath} could not be saved: ${messageOf(e)}`,
        };
      }
    },
  };
}

/** Keeps host console output off stdout, which belongs to the JSON-RPC stream. */
function consoleToStderr() {
  /** @param {...unknown} args */
  const toStderr = (...args) => console.error(...args);
  console.log = toStderr;
  console.info = toStderr;
  console.debug = toStderr;
}

/**
 * @param {{ zip?: string, dialect?: string }} options
 * @param {string} version
 */
async function commandMcp({ zip, dialect }, version) {
  if (zip === undefined || zip === '') {
    return fail(ErrorCode.InvalidInput, 'quickrealm mcp needs --zip <file>', EXIT_INVALID);
  }
  let set;
  try {
    const ws = openWorkspace(zip);
    set = serverTools(ws, zip, dialect);
  } catch (e) {
    const code = /** @type {{ code?: unknown }} */ (e).code;
    return fail(typeof code === 'string' ? code : ErrorCode.InvalidInput, messageOf(e), EXIT_INVALID);
  }
  let StdioServerTransport;
  try {
    ({ StdioServerTransport } = loadPeer(
      '@modelcontextprotocol/sdk/server/stdio.js',
      '@modelcontextprotocol/sdk',
      'quickrealm mcp',
    ));
  } catch (e) {
    return fail(ErrorCode.ModuleNotFound, messageOf(e), EXIT_FAILED);
  }
  consoleToStderr();
  const server = createMcpServer(set, {
    name: 'quickrealm',
    version,
    instructions:
      `Tools over the workspace ${path.basename(zip)}: fs_* read and change files, js_exec runs a file of ` +
      'the workspace, run_js runs a snippet with the files as fs and path globals' +
      `${dialect === undefined ? '' : `; the ${dialect} tools edit the same files`}. Every change is saved.`,
  });
  await server.connect(new StdioServerTransport());
}

module.exports = { commandMcp, combinePreferring, openWorkspace };
