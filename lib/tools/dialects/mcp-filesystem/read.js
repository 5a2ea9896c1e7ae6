'use strict';
// The reading commands of the MCP filesystem dialect: read_file (deprecated), read_text_file and
// read_multiple_files.

const { ErrorCode } = require('../../../errors.js');
const { fail, MAX_CONTENT } = require('../../toolset.js');
const { READ_ONLY, MAX_SHOWN_PATH, shownPath, pathArg } = require('./paths.js');

/**
 * @typedef {import('./paths.js').ServerPaths} ServerPaths
 * @typedef {import('../../index.js').ToolDefinitionInput} Tool
 * @typedef {import('../../index.js').ToolInputSchema} ToolInputSchema
 */

/** @type {ToolInputSchema} */
const readTextFileSchema = {
  type: 'object',
  properties: {
    path: pathArg('File to read.'),
    tail: { type: 'number', description: 'If provided, returns only the last N lines of the file' },
    head: { type: 'number', description: 'If provided, returns only the first N lines of the file' },
  },
  required: ['path'],
};

/**
 * A whole file, or its first (`head`) or last (`tail`) lines; only the lines shown are read out
 * of the file, at most the answer's size of them.
 * @param {ServerPaths} fs
 * @param {{ path: string, head?: number, tail?: number }} args
 * @returns {string}
 */
function readTextFile(fs, args) {
  const { ws } = fs;
  const abs = fs.validate(args.path);
  if (args.head && args.tail)
    throw fail(ErrorCode.InvalidInput, 'Cannot specify both head and tail parameters simultaneously');
  if (!args.head && !args.tail) return fs.readFileText(abs);
  if (fs.kindOf(abs) !== 'file') fs.readFileBytes(abs); // the file's own failures (missing, a folder)
  if (args.tail) {
    // The server counts the empty piece after a final newline as a line when tailing.
    const { totalLines, finalNewline: endsWithNewline } = ws.readLines(abs, 1, null, { maxBytes: 0 });
    if (totalLines === 0) return '';
    const count = Math.ceil(args.tail) - (endsWithNewline ? 1 : 0);
    if (count <= 0) return '';
    const from = Math.max(1, totalLines - count + 1);
    const r = ws.readLines(abs, from, totalLines, { maxBytes: MAX_CONTENT, keep: 'last' });
    const note = !r.truncated
      ? ''
      : r.lineCut
        ? `[only the first ${MAX_CONTENT} bytes of line ${r.start} fit in the answer]\n`
        : `[${r.start - from} earlier lines not shown: the answer is full; ask for a shorter tail]\n`;
    return `${note}${r.lines.join('\n')}${endsWithNewline ? '\n' : ''}`;
  }
  const count = Math.ceil(/** @type {number} */ (args.head));
  if (count <= 0) return '';
  const r = ws.readLines(abs, 1, count, { maxBytes: MAX_CONTENT });
  const note = r.truncated ? `\n[cut off after line ${r.end}: the answer is full; ask for fewer lines]` : '';
  return `${r.lines.join('\n')}${note}`;
}

/**
 * read_multiple_files' answer, built within MAX_CONTENT characters: a file is decoded only as
 * far as the room left, and once the answer is full the remaining paths are not read (the same
 * large file asked for a hundred times was decoded and held a hundred times).
 * @param {ServerPaths} fs
 * @param {{ paths: string[] }} args
 * @returns {string}
 */
function readMultipleFiles(fs, { paths }) {
  /** @type {string[]} */
  const parts = [];
  let room = MAX_CONTENT;
  for (const [i, requested] of paths.entries()) {
    if (room <= 0) {
      parts.push(`[${paths.length - i} more files not read: the answer is full; read them in another call]`);
      break;
    }
    const shown = shownPath(requested);
    let part;
    try {
      const bytes = fs.readFileBytes(fs.validate(requested));
      const text = bytes.toString('utf8', 0, Math.min(bytes.length, room));
      const cut =
        bytes.length > room
          ? `\n[... cut off after ${room} of ${bytes.length} bytes; read it with read_text_file]`
          : '';
      part = `${shown}:\n${text}${cut}\n`;
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      part = `${shown}: Error - ${message.length > MAX_SHOWN_PATH * 2 ? `${message.slice(0, MAX_SHOWN_PATH * 2)}…` : message}`;
    }
    parts.push(part);
    room -= part.length;
  }
  return parts.join('\n---\n');
}

/**
 * The reading tools, by name.
 * @param {ServerPaths} fs
 * @returns {Record<string, Tool>}
 */
function readTools(fs) {
  return {
    read_file: {
      name: 'read_file',
      description: 'Read a whole file as text. Deprecated: use read_text_file.',
      inputSchema: readTextFileSchema,
      annotations: READ_ONLY,
      /** @param {{ path: string, head?: number, tail?: number }} args */
      handler: (args) => readTextFile(fs, args),
    },
    read_text_file: {
      name: 'read_text_file',
      description:
        'Read a file as text, whatever its extension. Pass head to get only its first N lines, or tail for ' +
        'its last N lines (not both). Only works within allowed directories.',
      inputSchema: readTextFileSchema,
      annotations: READ_ONLY,
      /** @param {{ path: string, head?: number, tail?: number }} args */
      handler: (args) => readTextFile(fs, args),
    },
    read_multiple_files: {
      name: 'read_multiple_files',
      description:
        'Read several files in one call; each file comes back after its path, and a file that cannot be ' +
        'read gives an error line without stopping the others. Only works within allowed directories.',
      inputSchema: {
        type: 'object',
        properties: {
          paths: {
            type: 'array',
            items: { type: 'string' },
            minItems: 1,
            description: 'Paths of the files to read, each within the allowed directories.',
          },
        },
        required: ['paths'],
      },
      annotations: READ_ONLY,
      /** @param {{ paths: string[] }} args */
      handler: (args) => readMultipleFiles(fs, args),
    },
  };
}

module.exports = { readTools };
