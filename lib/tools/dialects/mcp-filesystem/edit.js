'use strict';
// The changing commands of the MCP filesystem dialect: write_file, edit_file, create_directory
// and move_file. Each change is one history entry.

const { ErrorCode } = require('../../../errors.js');
const path = require('node:path').posix;
const { changed, fail } = require('../../toolset.js');
const { LineIndex, twoFilesPatch } = require('../../../native/load.js');
const { quoted } = require('../text.js');
const { fsError, shownPath, pathArg } = require('./paths.js');

/**
 * @typedef {import('./paths.js').ServerPaths} ServerPaths
 * @typedef {import('../../index.js').ToolDefinitionInput} Tool
 * @typedef {import('../../index.js').ToolResult} ToolResult
 */

/** Most bytes of the diff edit_file answers with; a longer one is cut after whole lines. */
const MAX_DIFF_BYTES = 64 * 1024;

/**
 * @param {ServerPaths} fs
 * @param {{ path: string, content: string }} args
 * @returns {ToolResult}
 */
function writeFile(fs, args) {
  const abs = fs.validate(args.path);
  const kind = fs.kindOf(abs);
  if (kind === 'dir') throw fsError('EISDIR', 'open', `'${abs}'`);
  if (kind === null && fs.kindOf(path.dirname(abs)) !== 'dir') throw fsError('ENOTDIR', 'open', `'${abs}'`);
  return changed(`Successfully wrote to ${shownPath(args.path)}`, fs.ws.writeFile(abs, args.content));
}

/**
 * `text` with `edit` applied: the exact text first; otherwise whole lines matched ignoring their
 * surrounding whitespace, the new lines re-indented from the first matched line's indentation.
 * @param {string} text
 * @param {{ oldText: string, newText: string }} edit
 * @returns {string}
 */
function applyEdit(text, edit) {
  const oldText = edit.oldText.replace(/\r\n/g, '\n');
  const newText = edit.newText.replace(/\r\n/g, '\n');
  if (text.includes(oldText)) return text.replace(oldText, () => newText);
  const oldLines = oldText.split('\n');
  const lines = text.split('\n');
  const i = new LineIndex(text).findBlock(oldLines, 0, null, 'surrounding');
  if (i === -1) throw fail(ErrorCode.NoMatch, `Could not find exact match for edit:\n${quoted(edit.oldText)}`);
  const indent = lines[i].match(/^\s*/)?.[0] ?? '';
  const replacement = newText.split('\n').map((line, j) => {
    if (j === 0) return indent + line.trimStart();
    const oldIndent = oldLines[j]?.match(/^\s*/)?.[0] ?? '';
    const newIndent = line.match(/^\s*/)?.[0] ?? '';
    if (!oldIndent || !newIndent) return line;
    return indent + ' '.repeat(Math.max(0, newIndent.length - oldIndent.length)) + line.trimStart();
  });
  lines.splice(i, oldLines.length, ...replacement);
  return lines.join('\n');
}

/**
 * @param {ServerPaths} fs
 * @param {{ path: string, edits: { oldText: string, newText: string }[], dryRun?: boolean }} args
 * @returns {ToolResult}
 */
function editFile(fs, args) {
  const abs = fs.validate(args.path);
  const original = fs.readFileText(abs).replace(/\r\n/g, '\n');
  const text = args.edits.reduce(applyEdit, original);
  const diff = twoFilesPatch(abs, original, text, MAX_DIFF_BYTES);
  let fence = '```';
  while (diff.text.includes(fence)) fence += '`';
  const cut = diff.truncated ? `[diff cut off after ${MAX_DIFF_BYTES} bytes]\n` : '';
  const content = `${fence}diff\n${diff.text}${fence}\n${cut}\n`;
  if (args.dryRun) return { ok: true, content };
  return changed(content, fs.ws.writeFile(abs, text));
}

/**
 * Nested folders are created in one call, as the server's description promises (its path check
 * would refuse a missing grandparent), so only the path itself is checked.
 * @param {ServerPaths} fs
 * @param {{ path: string }} args
 * @returns {ToolResult}
 */
function createDirectory(fs, args) {
  const abs = fs.inside(fs.absolute(args.path));
  for (let at = abs; at !== '/'; at = path.dirname(at)) {
    if (fs.kindOf(at) === 'file') throw fsError(at === abs ? 'EEXIST' : 'ENOTDIR', 'mkdir', `'${abs}'`);
  }
  return changed(`Successfully created directory ${shownPath(args.path)}`, fs.ws.mkdir(abs, { recursive: true }));
}

/**
 * @param {ServerPaths} fs
 * @param {{ source: string, destination: string }} args
 * @returns {ToolResult}
 */
function moveFile(fs, args) {
  const from = fs.validate(args.source);
  const to = fs.validate(args.destination);
  const rename = `'${from}' -> '${to}'`;
  if (fs.kindOf(from) === null) throw fsError('ENOENT', 'rename', rename);
  const moved = `Successfully moved ${shownPath(args.source)} to ${shownPath(args.destination)}`;
  if (from === to) return changed(moved, null);
  if (fs.kindOf(to) !== null) throw fsError('EEXIST', 'rename', rename);
  if (fs.kindOf(path.dirname(to)) !== 'dir') throw fsError('ENOTDIR', 'rename', rename);
  if (to.startsWith(`${from}/`) || from === '/') throw fsError('EINVAL', 'rename', rename);
  return changed(moved, fs.ws.rename(from, to));
}

/**
 * The changing tools, by name.
 * @param {ServerPaths} fs
 * @returns {Record<string, Tool>}
 */
function editTools(fs) {
  return {
    write_file: {
      name: 'write_file',
      description:
        'Create a file, or replace the whole content of an existing one without asking. Only works within ' +
        'allowed directories.',
      inputSchema: {
        type: 'object',
        properties: { path: pathArg('File to write.'), content: { type: 'string' } },
        required: ['path', 'content'],
      },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
      /** @param {{ path: string, content: string }} args */
      handler: (args) => writeFile(fs, args),
    },
    edit_file: {
      name: 'edit_file',
      description:
        'Edit a text file: each edit replaces the exact text oldText with newText (lines that differ only in ' +
        'indentation also match). Returns a git-style diff of the changes; with dryRun the file is left ' +
        'unchanged. Only works within allowed directories.',
      inputSchema: {
        type: 'object',
        properties: {
          path: pathArg('File to edit.'),
          edits: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                oldText: { type: 'string', description: 'Text to search for - must match exactly' },
                newText: { type: 'string', description: 'Text to replace with' },
              },
              required: ['oldText', 'newText'],
            },
          },
          dryRun: { type: 'boolean', default: false, description: 'Preview changes using git-style diff format' },
        },
        required: ['path', 'edits'],
      },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
      /** @param {{ path: string, edits: { oldText: string, newText: string }[], dryRun?: boolean }} args */
      handler: (args) => editFile(fs, args),
    },
    create_directory: {
      name: 'create_directory',
      description:
        'Create a directory, with any missing parents; an existing directory is fine. Only works within ' +
        'allowed directories.',
      inputSchema: { type: 'object', properties: { path: pathArg('Directory to create.') }, required: ['path'] },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
      /** @param {{ path: string }} args */
      handler: (args) => createDirectory(fs, args),
    },
    move_file: {
      name: 'move_file',
      description:
        'Move or rename a file or directory, also into another directory. Fails if the destination exists. ' +
        'Source and destination must be within allowed directories.',
      inputSchema: {
        type: 'object',
        properties: { source: { type: 'string' }, destination: { type: 'string' } },
        required: ['source', 'destination'],
      },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
      /** @param {{ source: string, destination: string }} args */
      handler: (args) => moveFile(fs, args),
    },
  };
}

module.exports = { editTools };
