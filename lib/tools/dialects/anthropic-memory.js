'use strict';
// Anthropic's memory tool (`memory`, type memory_20250818) over a ZipWorkspace: every path lives
// under `/memories`, which is the workspace folder `memories/`. Results and errors use the
// wording of Anthropic's SDK implementation of the tool; failures read `Error: <message>` as the
// SDK's tool runner reports a thrown error.
//
// Where this differs from the SDK, on purpose:
// - a path must be `/memories` or start with `/memories/` (the SDK also lets `/memoriesX` through)
//   and may not contain `..` segments;
// - `view` of a missing `/memories` lists it as empty instead of failing (the SDK creates the
//   folder up front); a folder's size is the total of the files below it, not the size of a
//   directory inode;
// - line numbers follow `cat -n` (a final newline does not add an empty numbered line);
// - `str_replace` finds `old_str` across lines too (the SDK only looks inside single lines), and
//   the snippet covers every line of a multi-line replacement;
// - `rename` of a folder into itself is refused.

const { ErrorCode } = require('../../errors.js');
const { ZipWorkspace } = require('../../workspace.js');
const { BoundedLines, changed, fail, MAX_CONTENT } = require('../toolset.js');
const { linesOf, catN, uniqueOccurrence, insertAfterLine, readLineWindow } = require('./text.js');

/**
 * @typedef {import('../../index.js').ZipWorkspace} Workspace
 * @typedef {import('../index.js').ToolDefinitionInput} Tool
 * @typedef {import('../index.js').ToolResult} ToolResult
 */

const ROOT = '/memories';
const COMMANDS = ['view', 'create', 'str_replace', 'insert', 'delete', 'rename'];

/**
 * Sizes as the SDK prints them: `0B`, `512B`, `1.5K`, `4K`, `2.3M`.
 * @param {number} bytes
 */
function humanSize(bytes) {
  if (bytes === 0) return '0B';
  const units = ['B', 'K', 'M', 'G'];
  const i = Math.min(Math.floor(Math.log(bytes) / Math.log(1024)), units.length - 1);
  const size = bytes / 1024 ** i;
  return (size % 1 === 0 ? String(size) : size.toFixed(1)) + units[i];
}

/**
 * The workspace path for a memory path, or a refusal naming the rule.
 * @param {string} memoryPath
 * @returns {string}
 */
function toWorkspacePath(memoryPath) {
  if (memoryPath !== ROOT && !memoryPath.startsWith(`${ROOT}/`)) {
    throw fail(ErrorCode.PathInvalid, `Path must start with /memories, got: ${memoryPath}`);
  }
  const rest = memoryPath.slice(ROOT.length).split('/').filter(Boolean);
  if (rest.some((part) => part === '..' || part === '.' || part.includes('\\'))) {
    throw fail(ErrorCode.PathInvalid, `Path ${memoryPath} would escape /memories directory`);
  }
  const wsPath = ['memories', ...rest].join('/');
  try {
    ZipWorkspace.displayPath(wsPath);
  } catch (e) {
    throw fail(ErrorCode.PathInvalid, `Path ${memoryPath} is not valid: ${e instanceof Error ? e.message : e}`);
  }
  return wsPath;
}

/**
 * @param {Workspace} ws
 * @param {string} wsPath
 * @returns {'file' | 'dir' | null}
 */
const kindOf = (ws, wsPath) => (ws.exists(wsPath) ? ws.stat(wsPath).kind : null);

/**
 * @param {Workspace} ws
 * @param {string} memoryPath
 * @returns {{ wsPath: string, text: string }}
 */
function readExistingFile(ws, memoryPath) {
  const wsPath = toWorkspacePath(memoryPath);
  const kind = kindOf(ws, wsPath);
  if (kind === null)
    throw fail(ErrorCode.NotFound, `The path ${memoryPath} does not exist. Please provide a valid path.`);
  if (kind !== 'file') throw fail(ErrorCode.IsADirectory, `The path ${memoryPath} is not a file.`);
  return { wsPath, text: ws.readText(wsPath) };
}

/**
 * A folder two levels deep (hidden entries and node_modules left out), each entry with its size;
 * a folder's size is the total of the files below it.
 * @param {Workspace} ws
 * @param {string} wsPath
 * @param {string} memoryPath
 * @param {boolean} exists
 */
function viewFolder(ws, wsPath, memoryPath, exists) {
  const below = exists ? ws.walk(wsPath) : [];
  const visible = below.filter(
    (e) => e.depth <= 2 && !e.relative.split('/').some((p) => p.startsWith('.') || p === 'node_modules'),
  );
  // Sizes of the shown folders in one pass over everything below: each file adds its size to
  // its folders of the first two levels.
  /** @type {Map<string, number>} */
  const sizeBelow = new Map();
  let all = 0;
  for (const e of below) {
    if (e.kind !== 'file') continue;
    all += e.size;
    const parts = e.relative.split('/', 3);
    for (let depth = 1; depth < parts.length && depth <= 2; depth++) {
      const folder = parts.slice(0, depth).join('/');
      sizeBelow.set(folder, (sizeBelow.get(folder) ?? 0) + e.size);
    }
  }
  const lines = new BoundedLines(MAX_CONTENT - 512);
  lines.add(`${humanSize(all)}\t${memoryPath}`, { cut: true });
  for (const e of visible) {
    const line =
      e.kind === 'dir'
        ? `${humanSize(sizeBelow.get(e.relative) ?? 0)}\t${memoryPath}/${e.relative}/`
        : `${humanSize(e.size)}\t${memoryPath}/${e.relative}`;
    if (!lines.add(line)) break;
  }
  if (lines.full) {
    lines.lines.push(
      `[${visible.length + 1 - lines.lines.length} more entries not shown: the answer is full; view a sub-folder]`,
    );
  }
  return `Here're the files and directories up to 2 levels deep in ${memoryPath}, excluding hidden items and node_modules:\n${lines.text()}`;
}

/**
 * A file's lines with their numbers; only the answer's size of lines is read and numbered.
 * @param {Workspace} ws
 * @param {string} wsPath
 * @param {string} memoryPath
 * @param {number[] | undefined} viewRange
 */
function viewFile(ws, wsPath, memoryPath, viewRange) {
  const total = ws.readLines(wsPath, 1, null, { maxBytes: 0 }).totalLines;
  let first = 1;
  let last = total;
  if (viewRange && viewRange.length === 2) {
    first = Math.max(1, viewRange[0]);
    // As a slice's end: -1 is the end, other negative ends count back from it.
    const end = viewRange[1] === -1 ? total : viewRange[1] < 0 ? total + viewRange[1] : viewRange[1];
    last = Math.min(end, total);
  }
  const window = readLineWindow(ws, wsPath, first, last, MAX_CONTENT);
  const shown = new BoundedLines(MAX_CONTENT - 512);
  for (const [i, line] of window.lines.entries()) {
    if (!shown.add(catN([line], first + i), { cut: true })) break;
  }
  const cut =
    window.truncated || shown.full
      ? `\n[the view is cut off after line ${first + shown.lines.length - 1}: the answer is full; view the next lines with view_range]`
      : '';
  return `Here's the content of ${memoryPath} with line numbers:\n${shown.text()}${cut}`;
}

/**
 * `view`: a folder's listing or a file's lines; a missing /memories is an empty folder.
 * @param {Workspace} ws
 * @param {string} memoryPath
 * @param {number[] | undefined} viewRange
 */
function view(ws, memoryPath, viewRange) {
  const wsPath = toWorkspacePath(memoryPath);
  const kind = kindOf(ws, wsPath);
  if (kind === null && wsPath !== 'memories') {
    throw fail(ErrorCode.NotFound, `The path ${memoryPath} does not exist. Please provide a valid path.`);
  }
  if (kind === 'file') return viewFile(ws, wsPath, memoryPath, viewRange);
  return viewFolder(ws, wsPath, memoryPath, kind !== null);
}

/**
 * @param {Workspace} ws
 * @param {string} memoryPath
 * @param {string} fileText
 * @returns {ToolResult}
 */
function create(ws, memoryPath, fileText) {
  const wsPath = toWorkspacePath(memoryPath);
  if (kindOf(ws, wsPath) !== null) throw fail(ErrorCode.Exists, `File ${memoryPath} already exists`);
  const historyId = ws.writeFile(wsPath, fileText);
  return changed(`File created successfully at: ${memoryPath}`, historyId);
}

/**
 * @param {Workspace} ws
 * @param {string} memoryPath
 * @param {string} oldStr
 * @param {string} newStr
 * @returns {ToolResult}
 */
function strReplace(ws, memoryPath, oldStr, newStr) {
  const { wsPath, text } = readExistingFile(ws, memoryPath);
  const line = uniqueOccurrence(text, oldStr, memoryPath, (lines) => `: ${lines.join(', ')}`);
  const updated = text.replace(oldStr, () => newStr);
  const historyId = ws.writeFile(wsPath, updated);
  const lines = linesOf(updated);
  const changedLine = line - 1;
  const from = Math.max(0, changedLine - 2);
  const to = Math.min(lines.length, changedLine + 3 + (newStr.split('\n').length - 1));
  return changed(
    `The memory file has been edited. Here is the snippet showing the change (with line numbers):\n${catN(lines.slice(from, to), from + 1)}`,
    historyId,
  );
}

/**
 * @param {Workspace} ws
 * @param {string} memoryPath
 * @param {number} insertLine
 * @param {string} insertText
 * @returns {ToolResult}
 */
function insert(ws, memoryPath, insertLine, insertText) {
  const { wsPath, text } = readExistingFile(ws, memoryPath);
  const historyId = ws.writeFile(wsPath, insertAfterLine(text, insertLine, insertText).updated);
  return changed(`The file ${memoryPath} has been edited.`, historyId);
}

/**
 * @param {Workspace} ws
 * @param {string} memoryPath
 * @returns {ToolResult}
 */
function remove(ws, memoryPath) {
  const wsPath = toWorkspacePath(memoryPath);
  if (wsPath === 'memories') throw fail(ErrorCode.PathInvalid, 'Cannot delete the /memories directory itself');
  if (kindOf(ws, wsPath) === null) throw fail(ErrorCode.NotFound, `The path ${memoryPath} does not exist`);
  const historyId = ws.delete(wsPath, { recursive: true });
  return changed(`Successfully deleted ${memoryPath}`, historyId);
}

/**
 * @param {Workspace} ws
 * @param {string} oldPath
 * @param {string} newPath
 * @returns {ToolResult}
 */
function rename(ws, oldPath, newPath) {
  const from = toWorkspacePath(oldPath);
  const to = toWorkspacePath(newPath);
  if (from === 'memories') throw fail(ErrorCode.PathInvalid, 'Cannot rename the /memories directory itself');
  if (kindOf(ws, to) !== null) throw fail(ErrorCode.Exists, `The destination ${newPath} already exists`);
  const kind = kindOf(ws, from);
  if (kind === null) throw fail(ErrorCode.NotFound, `The path ${oldPath} does not exist`);
  if (to.startsWith(`${from}/`)) {
    throw fail(ErrorCode.InvalidInput, `Cannot move ${oldPath} into itself (${newPath})`);
  }
  return changed(`Successfully renamed ${oldPath} to ${newPath}`, ws.rename(from, to));
}

/**
 * @param {Workspace} ws
 * @returns {Tool}
 */
function memoryTool(ws) {
  return {
    name: 'memory',
    description:
      'Store and retrieve information across conversations in a memory directory. Every path starts with ' +
      '/memories. Commands: `view` lists a directory (two levels deep) or shows a file with line numbers ' +
      '(`view_range` [start, end] limits it); `create` writes a new file from `file_text`; `str_replace` ' +
      'replaces `old_str`, which must occur exactly once, with `new_str`; `insert` adds `insert_text` after ' +
      'line `insert_line` (0 inserts at the top); `delete` removes a file or directory; `rename` moves ' +
      '`old_path` to `new_path`.',
    inputSchema: {
      type: 'object',
      properties: {
        command: { type: 'string', enum: COMMANDS, description: 'The command to run.' },
        path: { type: 'string', description: 'A path under /memories, e.g. /memories/notes.md.' },
        view_range: {
          type: 'array',
          items: { type: 'integer' },
          description: 'For `view` of a file: [first, last] line, 1-based; last -1 means the end.',
        },
        file_text: { type: 'string', description: 'For `create`: the content of the new file.' },
        old_str: { type: 'string', description: 'For `str_replace`: the exact text to replace; it must occur once.' },
        new_str: { type: 'string', description: 'For `str_replace`: the replacement text.' },
        insert_line: { type: 'integer', description: 'For `insert`: the line after which the text goes (0 = top).' },
        insert_text: { type: 'string', description: 'For `insert`: the text to insert.' },
        old_path: { type: 'string', description: 'For `rename`: the current path.' },
        new_path: { type: 'string', description: 'For `rename`: the new path.' },
      },
      required: ['command'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
    /**
     * @param {{ command: string, path?: string, view_range?: number[], file_text?: string, old_str?: string,
     *   new_str?: string, insert_line?: number, insert_text?: string, old_path?: string, new_path?: string }} args
     * @returns {ToolResult | string}
     */
    handler(args) {
      /**
       * @param {string} name
       * @returns {any}
       */
      const need = (name) => {
        const value = /** @type {Record<string, unknown>} */ (args)[name];
        if (value === undefined) {
          throw fail(ErrorCode.InvalidInput, `Parameter \`${name}\` is required for command: ${args.command}`);
        }
        return value;
      };
      switch (args.command) {
        case 'view':
          return view(ws, need('path'), args.view_range);
        case 'create':
          return create(ws, need('path'), need('file_text'));
        case 'str_replace':
          return strReplace(ws, need('path'), need('old_str'), args.new_str ?? '');
        case 'insert': {
          const path = need('path');
          const line = need('insert_line');
          return insert(ws, path, line, args.insert_text ?? args.new_str ?? need('insert_text'));
        }
        case 'delete':
          return remove(ws, need('path'));
        default:
          return rename(ws, need('old_path'), need('new_path'));
      }
    },
  };
}

module.exports = { memoryTool };
