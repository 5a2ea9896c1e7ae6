'use strict';
// `quickrealm mcp --zip <file> [--dialect <name>] [--sessions <folder> ...] [--http <port> ...]`:
// an MCP server, over stdio or (with --http) over stateless Streamable HTTP (lib/tools/mcp-http.js).
// For a zipped workspace it offers the workspace tools, `run_js` (with the workspace's files) and,
// with --dialect, an editor dialect's tools over the same workspace and history; with --sessions,
// the sessions kept in a folder (lib/tools/mcp-sessions.js), with the host operations of
// --operations. After every
// successful call of a tool that is not read-only the zip is saved atomically (unless the result
// says nothing changed: `data.historyId` null), so a client that stops at any point leaves the
// last completed change on disk. A missing zip starts an empty workspace.
//
// Tool names: the dialect's names are the ones its vendor's models know, so where a dialect tool
// is named like a workspace tool or run_js, the dialect's tool is offered under that name and the
// other one is left out. (No dialect shipped today clashes; the rule keeps a future one working.)
//
// Over stdio, stdout carries the JSON-RPC stream and nothing else: guest console output is captured into
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
 * @typedef {{ zip?: string, dialect?: string, http?: string, host?: string, tokenEnv?: string,
 *   sessions?: string, createSessions?: boolean, operations?: string }} McpCommandOptions
 */

/**
 * Checks how the options go together; the first problem as text, or null.
 * @param {McpCommandOptions} o
 */
function optionProblem(o) {
  if (!o.zip && !o.sessions) return 'quickrealm mcp needs --zip <file> or --sessions <folder> (or both)';
  if (o.dialect !== undefined && !o.zip) return '--dialect needs --zip <file>';
  if (o.http === undefined) {
    if (o.host !== undefined) return '--host needs --http <port>';
    if (o.tokenEnv !== undefined) return '--token-env needs --http <port>';
  }
  if (!o.sessions) {
    if (o.createSessions) return '--create-sessions needs --sessions <folder>';
    if (o.operations !== undefined) return '--operations needs --sessions <folder>';
  }
  if (o.http !== undefined && !/^\d{1,5}$/.test(o.http)) return `--http takes a port number, not '${o.http}'`;
  if (o.http !== undefined && Number(o.http) > 65535) return `--http takes a port up to 65535, not ${o.http}`;
  return null;
}

/**
 * The session tools over the folder `dir`, with the host operations of `--operations`. Sessions
 * that execute_turn creates (with --create-sessions) get the module's `session` options, or the
 * SAFE_EDIT policy with the module's operations allowed.
 * @param {McpCommandOptions} o
 */
async function sessionToolSet(o) {
  const { SessionManager, policies } = require('../session/index.js');
  const { sessionManagerTools } = require('../tools/mcp-sessions.js');
  const { loadOperationsModule } = require('./operations-module.js');
  const dir = /** @type {string} */ (o.sessions);
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) throw new Error(`--sessions ${dir} is not a folder`);
  const loaded = o.operations === undefined ? null : await loadOperationsModule(o.operations);
  const operations = /** @type {any} */ (loaded?.operations);
  const manager = new SessionManager({ dir, operations, snapshotKey: loaded?.module.snapshotKey });
  const create = o.createSessions
    ? (loaded?.module.session ?? {
        policy: {
          ...policies.SAFE_EDIT,
          allowedOperations: [
            .../** @type {ReadonlySet<string>} */ (policies.SAFE_EDIT.allowedOperations),
            ...Object.keys(operations ?? {}),
          ],
        },
      })
    : null;
  return sessionManagerTools(manager, { create });
}

/**
 * @param {McpCommandOptions} options
 * @param {string} version
 */
async function commandMcp(options, version) {
  const problem = optionProblem(options);
  if (problem) return fail(ErrorCode.InvalidInput, problem, EXIT_INVALID);
  const { zip, dialect } = options;
  let token;
  if (options.tokenEnv !== undefined) {
    token = process.env[options.tokenEnv];
    if (!token)
      return fail(ErrorCode.InvalidInput, `--token-env: the variable ${options.tokenEnv} is not set`, EXIT_INVALID);
  }
  const { isWildcard, serveMcpHttp } = require('../tools/mcp-http.js');
  if (options.host !== undefined && isWildcard(options.host) && token === undefined) {
    return fail(
      ErrorCode.InvalidInput,
      `--host ${options.host} listens on every address: give --token-env as well`,
      EXIT_INVALID,
    );
  }
  /** @type {ToolSet[]} */
  const sets = [];
  try {
    if (zip) sets.push(serverTools(openWorkspace(zip), zip, dialect));
    if (options.sessions) sets.push(await sessionToolSet(options));
  } catch (e) {
    const code = /** @type {{ code?: unknown }} */ (e).code;
    return fail(typeof code === 'string' ? code : ErrorCode.InvalidInput, messageOf(e), EXIT_INVALID);
  }
  const set = sets.length === 1 ? /** @type {ToolSet} */ (sets[0]) : combineToolSets(...sets);
  const parts = [];
  if (zip) {
    parts.push(
      `fs_* read and change the files of the workspace ${path.basename(zip)}, js_exec runs one of its files, run_js ` +
        `runs a snippet with them as fs and path globals${dialect === undefined ? '' : `; the ${dialect} tools edit the same files`}; every change is saved`,
    );
  }
  if (options.sessions) {
    parts.push(
      'execute_turn runs a turn of the session named by sessionId; a turn waiting for approval is continued ' +
        'with approve or reject, then resume; list_proposals shows staged changes',
    );
  }
  const serverOptions = { name: 'quickrealm', version, instructions: `Tools: ${parts.join('. ')}.` };
  let sdkModule;
  try {
    sdkModule = loadPeer(
      options.http === undefined
        ? '@modelcontextprotocol/sdk/server/stdio.js'
        : '@modelcontextprotocol/sdk/server/streamableHttp.js',
      '@modelcontextprotocol/sdk',
      'quickrealm mcp',
    );
  } catch (e) {
    return fail(ErrorCode.ModuleNotFound, messageOf(e), EXIT_FAILED);
  }
  if (options.http === undefined) {
    consoleToStderr();
    const server = createMcpServer(set, serverOptions);
    await server.connect(new sdkModule.StdioServerTransport());
    return;
  }
  let served;
  try {
    served = await serveMcpHttp({
      createServer: () => createMcpServer(set, serverOptions),
      host: options.host,
      port: Number(options.http),
      token,
      onError: (e) => process.stderr.write(`${JSON.stringify({ mcp: 'error', message: e.message })}\n`),
    });
  } catch (e) {
    return fail(ErrorCode.InvalidInput, `cannot listen on port ${options.http}: ${messageOf(e)}`, EXIT_FAILED);
  }
  process.stderr.write(`${JSON.stringify({ mcp: 'listening', url: served.url, pid: process.pid })}\n`);
  // SIGTERM or SIGINT: stop taking requests, let the running ones finish, then exit.
  await new Promise((resolve) => {
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  await served.close();
}

module.exports = { commandMcp, combinePreferring, openWorkspace };
