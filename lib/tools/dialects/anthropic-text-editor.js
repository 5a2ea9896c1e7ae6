'use strict';
// Anthropic's text editor tool (`str_replace_based_edit_tool`) over a ZipWorkspace, with the
// wording and formats of Anthropic's reference implementation: views as `cat -n` prints them,
// the same success and error sentences, and `undo_edit`, which Anthropic's current tool version
// dropped but the older ones (and this project's design) have.
//
// Where this differs from the reference, on purpose:
// - paths take every workspace form (`/repo/a.py`, `repo/a.py`, `~/repo/a.py`); results echo the
//   path as given, without a trailing slash;
// - a final newline ends the last line instead of adding an empty numbered line, so line counts
//   (view_range, insert_line) are those of `cat -n`; tabs are kept, not expanded to spaces;
// - `insert` takes `insert_text` (the current name) or `new_str`, and one final newline of the
//   inserted text is dropped rather than adding an empty line;
// - `undo_edit` works through the workspace history, not a private copy: it finds the newest
//   history entry that changed the file (by any tool or by the host) and writes the file's content
//   from before that entry as a new entry, so `ws.undo()` can take the undo back. Entries made by
//   `undo_edit` itself are skipped together with the edit they undid, so repeated calls step
//   further back. If the file did not exist before that edit, undo_edit deletes it.

const { ErrorCode } = require('../../errors.js');
const { ZipWorkspace } = require('../../workspace.js');
const { BoundedLines, changed, fail, MAX_CONTENT } = require('../toolset.js');
const { linesOf, catN, uniqueOccurrence, insertAfterLine, readLineWindow } = require('./text.js');
const { contentBeforeLastChange } = require('./history.js');

/**
 * @typedef {import('../../index.js').ZipWorkspace} Workspace
 * @typedef {import('../index.js').ToolDefinitionInput} Tool
 * @typedef {import('../index.js').ToolResult} ToolResult
 */

const TOOL_NAME = 'str_replace_based_edit_tool';
const COMMANDS = ['view', 'create', 'str_replace', 'insert', 'undo_edit'];
/** Lines shown around an edit. */
const SNIPPET_LINES = 4;
/** Longest view, in characters; longer output is clipped with a note. */
const MAX_VIEW_CHARS = 16000;
const CLIPPED_NOTE =
  '<response clipped><NOTE>Only part of this file was shown to save context. ' +
  'Ask for the lines you need with view_range.</NOTE>';

/** @param {string} path */
const shownPath = (path) => (path.length > 1 ? path.replace(/\/+$/, '') : path);

/** @param {number[]} numbers */
const pyList = (numbers) => `[${numbers.join(', ')}]`;

/** @param {string} text */
function clipView(text) {
  if (text.length <= MAX_VIEW_CHARS) return text;
  const cut = text.lastIndexOf('\n', MAX_VIEW_CHARS);
  return `${text.slice(0, cut > 0 ? cut : MAX_VIEW_CHARS)}\n${CLIPPED_NOTE}`;
}

/**
 * @param {string[]} lines
 * @param {string} descriptor
 * @param {number} first
 */
const catOutput = (lines, descriptor, first) =>
  `Here's the result of running \`cat -n\` on ${descriptor}:\n${clipView(catN(lines, first))}\n`;

/**
 * What the commands share: the workspace, and what undo_edit remembers of its own entries.
 * @typedef {{ ws: Workspace, undoneBy: Map<number, number>, undoneInPlace: Set<number> }} Editor
 */

/**
 * Checks the path the way the reference does before any command.
 * @param {Editor} editor
 * @param {string} command
 * @param {string} path
 * @returns {{ shown: string, kind: 'file' | 'dir' | null }}
 */
function resolve({ ws }, command, path) {
  const shown = shownPath(path);
  try {
    ZipWorkspace.displayPath(path);
  } catch (e) {
    throw fail(
      ErrorCode.PathInvalid,
      `The path ${shown} is not a valid workspace path: ${e instanceof Error ? e.message : e}`,
    );
  }
  const kind = ws.exists(path) ? ws.stat(path).kind : null;
  if (kind === null && command !== 'create' && command !== 'undo_edit') {
    throw fail(ErrorCode.NotFound, `The path ${shown} does not exist. Please provide a valid path.`);
  }
  if (kind !== null && command === 'create') {
    throw fail(ErrorCode.Exists, `File already exists at: ${shown}. Cannot overwrite files using command \`create\`.`);
  }
  if (kind === 'dir' && command !== 'view') {
    throw fail(
      ErrorCode.IsADirectory,
      `The path ${shown} is a directory and only the \`view\` command can be used on directories`,
    );
  }
  return { shown, kind };
}

/**
 * @param {Editor} editor
 * @param {string} path
 * @param {string} shown
 */
function readText({ ws }, path, shown) {
  try {
    return ws.readText(path);
  } catch (e) {
    if (e && typeof e === 'object' && 'code' in e && e.code === ErrorCode.NotText) {
      throw fail(ErrorCode.NotText, `The file ${shown} is not UTF-8 text and cannot be edited with this tool.`);
    }
    throw e;
  }
}

/**
 * A folder two levels deep, hidden entries left out.
 * @param {Editor} editor
 * @param {string} path
 * @param {string} shown
 */
function viewDirectory({ ws }, path, shown) {
  const prefix = shown === '/' ? '' : shown;
  const entries = ws
    .walk(path, { maxDepth: 2 })
    .filter((e) => !e.relative.split('/').some((part) => part.startsWith('.')));
  const listing = new BoundedLines(MAX_CONTENT - 512);
  listing.add(shown, { cut: true });
  for (const e of entries) if (!listing.add(`${prefix}/${e.relative}`)) break;
  if (listing.full) {
    listing.lines.push(
      `[${entries.length + 1 - listing.lines.length} more entries not shown: the answer is full; view a sub-folder]`,
    );
  }
  return `Here's the files and directories up to 2 levels deep in ${shown}, excluding hidden items:\n${listing.text()}\n\n`;
}

/**
 * Lines the file has, counted natively without reading its text.
 * @param {Editor} editor
 * @param {string} path
 * @param {string} shown
 */
function lineCount(editor, path, shown) {
  try {
    return editor.ws.readLines(path, 1, null, { maxBytes: 0 }).totalLines;
  } catch (e) {
    readText(editor, path, shown);
    throw e;
  }
}

/**
 * The view of lines `first..last`: only as many lines as the clipped view can show are read.
 * @param {Editor} editor
 * @param {string} path
 * @param {string} shown
 * @param {number} first
 * @param {number} last
 */
function viewLines(editor, path, shown, first, last) {
  // Three bytes a character at most: the view's characters always come from this window.
  let window;
  try {
    window = readLineWindow(editor.ws, path, first, last, MAX_VIEW_CHARS * 3);
  } catch (e) {
    readText(editor, path, shown);
    throw e;
  }
  const text = catN(window.lines, first);
  const view = clipView(text);
  const clipped = view === text && window.truncated ? `${text}\n${CLIPPED_NOTE}` : view;
  return `Here's the result of running \`cat -n\` on ${shown}:\n${clipped}\n`;
}

/**
 * `view`: a folder's listing, or a file's lines (all, or `view_range`) as `cat -n` prints them.
 * @param {Editor} editor
 * @param {string} path
 * @param {string} shown
 * @param {'file' | 'dir' | null} kind
 * @param {unknown} viewRange
 */
function view(editor, path, shown, kind, viewRange) {
  if (kind === 'dir') {
    if (viewRange !== undefined) {
      throw fail(
        ErrorCode.InvalidInput,
        'The `view_range` parameter is not allowed when `path` points to a directory.',
      );
    }
    return viewDirectory(editor, path, shown);
  }
  const count = lineCount(editor, path, shown);
  if (viewRange === undefined) return viewLines(editor, path, shown, 1, count);
  if (!Array.isArray(viewRange) || viewRange.length !== 2) {
    throw fail(ErrorCode.InvalidInput, 'Invalid `view_range`. It should be a list of two integers.');
  }
  const [first, last] = /** @type {[number, number]} */ (viewRange);
  const range = pyList(viewRange);
  if (first < 1 || first > count) {
    throw fail(
      ErrorCode.Range,
      `Invalid \`view_range\`: ${range}. Its first element \`${first}\` should be within the range of lines of the file: ${pyList([1, count])}`,
    );
  }
  if (last > count) {
    throw fail(
      ErrorCode.Range,
      `Invalid \`view_range\`: ${range}. Its second element \`${last}\` should be smaller than the number of lines in the file: \`${count}\``,
    );
  }
  if (last !== -1 && last < first) {
    throw fail(
      ErrorCode.Range,
      `Invalid \`view_range\`: ${range}. Its second element \`${last}\` should be larger or equal than its first \`${first}\``,
    );
  }
  return viewLines(editor, path, shown, first, last === -1 ? count : last);
}

/**
 * `create`: a new file.
 * @param {Editor} editor
 * @param {string} path
 * @param {string} shown
 * @param {string} fileText
 * @returns {ToolResult}
 */
function create({ ws }, path, shown, fileText) {
  return changed(`File created successfully at: ${shown}`, ws.writeFile(path, fileText));
}

/**
 * `str_replace`: the one occurrence of `oldStr` replaced, with a snippet around it.
 * @param {Editor} editor
 * @param {string} path
 * @param {string} shown
 * @param {string} oldStr
 * @param {string} newStr
 * @returns {ToolResult}
 */
function strReplace(editor, path, shown, oldStr, newStr) {
  if (oldStr === '')
    throw fail(ErrorCode.InvalidInput, 'Parameter `old_str` must not be empty for command: str_replace');
  const text = readText(editor, path, shown);
  const line = uniqueOccurrence(text, oldStr, shown, (lines) => ` ${pyList(lines)}`);
  const updated = text.replace(oldStr, () => newStr);
  const historyId = editor.ws.writeFile(path, updated);
  const changedLine = line - 1;
  const first = Math.max(0, changedLine - SNIPPET_LINES);
  const last = changedLine + SNIPPET_LINES + (newStr.split('\n').length - 1);
  const snippet = linesOf(updated).slice(first, last + 1);
  return changed(
    `The file ${shown} has been edited. ${catOutput(snippet, `a snippet of ${shown}`, first + 1)}` +
      'Review the changes and make sure they are as expected. Edit the file again if necessary.',
    historyId,
  );
}

/**
 * `insert`: lines added after `insertLine`, with a snippet around them.
 * @param {Editor} editor
 * @param {string} path
 * @param {string} shown
 * @param {number} insertLine
 * @param {string} insertText
 * @returns {ToolResult}
 */
function insert(editor, path, shown, insertLine, insertText) {
  const { updated, lines, added } = insertAfterLine(readText(editor, path, shown), insertLine, insertText);
  const historyId = editor.ws.writeFile(path, updated);
  const snippet = [
    ...lines.slice(Math.max(0, insertLine - SNIPPET_LINES), insertLine),
    ...added,
    ...lines.slice(insertLine, insertLine + SNIPPET_LINES),
  ];
  return changed(
    `The file ${shown} has been edited. ` +
      catOutput(snippet, 'a snippet of the edited file', Math.max(1, insertLine - SNIPPET_LINES + 1)) +
      'Review the changes and make sure they are as expected (correct indentation, no duplicate lines, etc). ' +
      'Edit the file again if necessary.',
    historyId,
  );
}

/**
 * `undo_edit`: the file as it was before its newest edit that is not yet undone.
 * @param {Editor} editor
 * @param {string} path
 * @param {string} shown
 * @returns {ToolResult}
 */
function undoEdit({ ws, undoneBy, undoneInPlace }, path, shown) {
  /** @type {Set<number>} */
  const skipped = new Set(undoneInPlace);
  const found = contentBeforeLastChange(ws, path, (id) => {
    if (skipped.has(id)) return true;
    const target = undoneBy.get(id);
    if (target === undefined) return false;
    skipped.add(target);
    return true;
  });
  if (found.entryId === null) {
    if (found.reason === 'compacted') {
      throw fail(
        ErrorCode.History,
        `The last edit to ${shown} is too old to undo: the workspace history no longer holds it.`,
      );
    }
    throw fail(ErrorCode.NoHistory, `No edit history found for ${shown}.`);
  }
  const { entryId, before } = found;
  /** @param {number | null} historyId */
  const remember = (historyId) => {
    if (historyId === null) undoneInPlace.add(entryId);
    else undoneBy.set(historyId, entryId);
  };
  if (before === null) {
    const historyId = ws.exists(path) ? ws.delete(path) : null;
    remember(historyId);
    return changed(
      `Last edit to ${shown} undone successfully. The file did not exist before that edit, so it was removed.`,
      historyId,
    );
  }
  const historyId = ws.writeFile(path, before);
  remember(historyId);
  const text = before.toString('utf8');
  return changed(`Last edit to ${shown} undone successfully. ${catOutput(linesOf(text), shown, 1)}`, historyId);
}

/**
 * @param {Workspace} ws
 * @returns {Tool}
 */
function textEditorTool(ws) {
  /** @type {Editor} */
  const editor = { ws, undoneBy: new Map(), undoneInPlace: new Set() };

  return {
    name: TOOL_NAME,
    description:
      'View, create and edit text files in the workspace. Commands: `view` shows a file with line numbers ' +
      '(as `cat -n` prints them; `view_range` [start, end] limits it, -1 meaning the last line) or lists a ' +
      'directory two levels deep; `create` writes a new file from `file_text`; `str_replace` replaces ' +
      '`old_str`, which must occur exactly once, with `new_str`; `insert` adds `insert_text` after line ' +
      '`insert_line` (0 inserts at the top); `undo_edit` reverts the last change to the file. Paths are ' +
      'absolute within the workspace, e.g. `/repo/file.py`; `/` is the workspace root.',
    inputSchema: {
      type: 'object',
      properties: {
        command: { type: 'string', enum: COMMANDS, description: 'The command to run.' },
        path: {
          type: 'string',
          minLength: 1,
          description: 'Absolute path of the file or directory, e.g. `/repo/file.py` or `/repo`.',
        },
        file_text: { type: 'string', description: 'For `create`: the content of the new file.' },
        old_str: { type: 'string', description: 'For `str_replace`: the exact text to replace; it must occur once.' },
        new_str: {
          type: 'string',
          description: 'For `str_replace`: the replacement text (empty when left out). Also accepted for `insert`.',
        },
        insert_line: {
          type: 'integer',
          description: 'For `insert`: the line after which the text goes; 0 inserts before the first line.',
        },
        insert_text: { type: 'string', description: 'For `insert`: the text to insert.' },
        view_range: {
          type: 'array',
          items: { type: 'integer' },
          description: 'For `view` of a file: [first, last] line, 1-based and inclusive; last -1 means the end.',
        },
      },
      required: ['command', 'path'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
    /**
     * @param {{ command: string, path: string, file_text?: string, old_str?: string, new_str?: string,
     *   insert_line?: number, insert_text?: string, view_range?: number[] }} args
     * @returns {ToolResult | string}
     */
    handler(args) {
      const { command, path } = args;
      const { shown, kind } = resolve(editor, command, path);
      switch (command) {
        case 'view':
          return view(editor, path, shown, kind, args.view_range);
        case 'create':
          if (args.file_text === undefined) {
            throw fail(ErrorCode.InvalidInput, 'Parameter `file_text` is required for command: create');
          }
          return create(editor, path, shown, args.file_text);
        case 'str_replace':
          if (args.old_str === undefined) {
            throw fail(ErrorCode.InvalidInput, 'Parameter `old_str` is required for command: str_replace');
          }
          return strReplace(editor, path, shown, args.old_str, args.new_str ?? '');
        case 'insert': {
          if (args.insert_line === undefined) {
            throw fail(ErrorCode.InvalidInput, 'Parameter `insert_line` is required for command: insert');
          }
          const text = args.insert_text ?? args.new_str;
          if (text === undefined) {
            throw fail(ErrorCode.InvalidInput, 'Parameter `insert_text` is required for command: insert');
          }
          return insert(editor, path, shown, args.insert_line, text);
        }
        default:
          return undoEdit(editor, path, shown);
      }
    },
  };
}

module.exports = { textEditorTool, TOOL_NAME };
