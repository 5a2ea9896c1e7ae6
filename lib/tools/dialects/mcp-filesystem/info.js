'use strict';
// The metadata commands of the MCP filesystem dialect: get_file_info and
// list_allowed_directories.

const { ALLOWED, READ_ONLY, fsError, pathArg } = require('./paths.js');

/**
 * @typedef {import('./paths.js').ServerPaths} ServerPaths
 * @typedef {import('../../index.js').ToolDefinitionInput} Tool
 */

/**
 * Where the workspace has no such fact, the last change stands for created, modified and
 * accessed, and permissions are 644 for files and 755 for folders.
 * @param {ServerPaths} fs
 * @param {{ path: string }} args
 * @returns {string}
 */
function fileInfo(fs, args) {
  const abs = fs.validate(args.path);
  if (fs.kindOf(abs) === null) throw fsError('ENOENT', 'stat', `'${abs}'`);
  const stat = fs.ws.stat(abs);
  const when = new Date(stat.mtime);
  const info = {
    size: stat.size,
    created: when,
    modified: when,
    accessed: when,
    isDirectory: stat.kind === 'dir',
    isFile: stat.kind === 'file',
    permissions: stat.kind === 'dir' ? '755' : '644',
  };
  return Object.entries(info)
    .map(([key, value]) => `${key}: ${value}`)
    .join('\n');
}

/**
 * The metadata tools, by name.
 * @param {ServerPaths} fs
 * @returns {Record<string, Tool>}
 */
function infoTools(fs) {
  return {
    get_file_info: {
      name: 'get_file_info',
      description:
        'Metadata of a file or directory: size, times, type and permissions, without reading it. Only works ' +
        'within allowed directories.',
      inputSchema: { type: 'object', properties: { path: pathArg('File or directory.') }, required: ['path'] },
      annotations: READ_ONLY,
      /** @param {{ path: string }} args */
      handler: (args) => fileInfo(fs, args),
    },
    list_allowed_directories: {
      name: 'list_allowed_directories',
      description: 'The directories this server may access; everything below them is accessible too.',
      inputSchema: { type: 'object', properties: {} },
      annotations: READ_ONLY,
      handler: () => `Allowed directories:\n${ALLOWED}`,
    },
  };
}

module.exports = { infoTools };
