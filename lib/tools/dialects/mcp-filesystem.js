'use strict';
// The tools of the reference MCP filesystem server (@modelcontextprotocol/server-filesystem)
// over a ZipWorkspace: the same names, arguments and result texts, and Node's `fs` error messages
// where the server passes those on. The workspace root is the one allowed directory, `/`; paths
// may be absolute (`/src/a.js`), relative to the root, or start with `~/` (the workspace's own
// form). Results name paths in their absolute form, as the server names real paths.
//
// One handler per command, in mcp-filesystem/: paths.js (the path rules the commands share),
// read.js, edit.js, list.js and info.js.
//
// Not offered: `read_media_file` (its answer is a base64 image or audio block, which a text tool
// result cannot carry). Where the workspace has no such fact, `get_file_info` reports the last
// change for created, modified and accessed, and permissions 644 for files and 755 for folders.
// `move_file` refuses an existing destination, as the server's description promises (its code
// would replace a file).

const { serverPaths } = require('./mcp-filesystem/paths.js');
const { readTools } = require('./mcp-filesystem/read.js');
const { editTools } = require('./mcp-filesystem/edit.js');
const { listTools, formatSize } = require('./mcp-filesystem/list.js');
const { infoTools } = require('./mcp-filesystem/info.js');

/**
 * @typedef {import('../../index.js').ZipWorkspace} Workspace
 * @typedef {import('../index.js').ToolDefinitionInput} Tool
 */

/** The server's tools, in the order it lists them. */
const ORDER = [
  'read_file',
  'read_text_file',
  'read_multiple_files',
  'write_file',
  'edit_file',
  'create_directory',
  'list_directory',
  'list_directory_with_sizes',
  'directory_tree',
  'move_file',
  'search_files',
  'get_file_info',
  'list_allowed_directories',
];

/**
 * @param {Workspace} ws
 * @returns {Tool[]}
 */
function filesystemTools(ws) {
  const fs = serverPaths(ws);
  /** @type {Record<string, Tool>} */
  const byName = { ...readTools(fs), ...editTools(fs), ...listTools(fs), ...infoTools(fs) };
  return ORDER.map((name) => byName[name]);
}

module.exports = { filesystemTools, formatSize };
