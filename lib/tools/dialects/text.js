'use strict';
// Text functions the dialects share: lines as `cat -n` counts them, numbered views, finding the one
// occurrence of a string and inserting lines. Searching, glob matching, diffs and patch context
// matching are the native addon's (one bounded implementation each, shared with the workspace).

const { ErrorCode } = require('../../errors.js');
const { occurrenceLines } = require('../../native/load.js');
const { fail } = require('../toolset.js');

/**
 * The lines of `text` as `cat -n` counts them: a final newline ends the last line rather than
 * starting an empty one, and an empty file has no lines.
 * @param {string} text
 * @returns {string[]}
 */
function linesOf(text) {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/**
 * Lines prefixed the way `cat -n` prints them: the number right-aligned in six columns, a tab.
 * @param {string[]} lines
 * @param {number} first the number of the first line
 */
function catN(lines, first) {
  return lines.map((line, i) => `${String(first + i).padStart(6)}\t${line}`).join('\n');
}

/**
 * Lines `first..last` of a file (1-based, inclusive, clamped) read natively with at most
 * `maxBytes` of line text, so only what an answer can show crosses from the file. Invalid UTF-8
 * is a NOT_TEXT failure, as reading the whole text would be.
 * @param {import('../../index.js').ZipWorkspace} ws
 * @param {string} path
 * @param {number} first
 * @param {number} last
 * @param {number} maxBytes
 * @returns {{ lines: string[], truncated: boolean }}
 */
function readLineWindow(ws, path, first, last, maxBytes) {
  if (last < first) return { lines: [], truncated: false };
  const r = ws.readLines(path, first, last, { maxBytes });
  if (r.lines.some((l) => l.includes('\uFFFD'))) ws.readText(path);
  return { lines: r.lines, truncated: r.truncated };
}

/** Most occurrences whose lines an AMBIGUOUS_MATCH failure lists. */
const LISTED_OCCURRENCES = 100;

/** Longest old_str a NO_MATCH or AMBIGUOUS_MATCH failure quotes. */
const QUOTED_CHARS = 1000;

/**
 * `text` as a failure quotes it: at most QUOTED_CHARS characters, with how long it was.
 * @param {string} text
 */
const quoted = (text) =>
  text.length <= QUOTED_CHARS ? text : `${text.slice(0, QUOTED_CHARS)}… (${text.length} characters)`;

/**
 * The 1-based line where the one occurrence of `oldStr` in `text` starts, as both Anthropic tools
 * look for it; no occurrence (or an empty `oldStr`) or several are failures in their wording.
 * @param {string} text
 * @param {string} oldStr
 * @param {string} path the path as the tool shows it
 * @param {(lines: number[]) => string} listLines how the tool lists the lines of several occurrences
 * @returns {number}
 * @throws {import('../toolset.js').ToolFailure} NO_MATCH or AMBIGUOUS_MATCH
 */
function uniqueOccurrence(text, oldStr, path, listLines) {
  // Found natively: linear in the text, and only the first occurrences' lines are kept.
  const { lines: starts, count } =
    oldStr === '' ? { lines: [], count: 0 } : occurrenceLines(text, oldStr, LISTED_OCCURRENCES);
  if (count === 0) {
    throw fail(
      ErrorCode.NoMatch,
      `No replacement was performed, old_str \`${quoted(oldStr)}\` did not appear verbatim in ${path}.`,
    );
  }
  if (count > 1) {
    throw fail(
      ErrorCode.AmbiguousMatch,
      `No replacement was performed. Multiple occurrences of old_str \`${quoted(oldStr)}\` in lines${listLines([...new Set(starts)])}. Please ensure it is unique`,
    );
  }
  return starts[0];
}

/**
 * The line separator a file uses: CRLF only when every newline has a CR before it.
 * @param {string} text
 * @returns {'\n' | '\r\n'}
 */
function lineEnding(text) {
  const newlines = text.split('\n').length - 1;
  if (newlines === 0) return '\n';
  return text.split('\r\n').length - 1 === newlines ? '\r\n' : '\n';
}

/**
 * `text` with `insertText` put after line `insertLine` (0: before the first), as both Anthropic
 * tools insert: the file keeps its line separator and its final newline (or lack of one), and one
 * final newline of the inserted text is dropped rather than adding an empty line.
 * @param {string} text
 * @param {number} insertLine
 * @param {string} insertText
 * @returns {{ updated: string, lines: string[], added: string[] }} the new text, the file's lines
 *   before the insertion and the inserted lines
 * @throws {import('../toolset.js').ToolFailure} RANGE when the file has no line `insertLine`
 */
function insertAfterLine(text, insertLine, insertText) {
  const eol = lineEnding(text);
  const lines = linesOf(eol === '\r\n' ? text.replace(/\r\n/g, '\n') : text);
  if (insertLine < 0 || insertLine > lines.length) {
    throw fail(
      ErrorCode.Range,
      `Invalid \`insert_line\` parameter: ${insertLine}. It should be within the range of lines of the file: [0, ${lines.length}]`,
    );
  }
  const added = insertText.replace(/\r?\n$/, '').split(/\r?\n/);
  const result = [...lines.slice(0, insertLine), ...added, ...lines.slice(insertLine)];
  const keepsNoFinalNewline = text !== '' && !text.endsWith('\n');
  return { updated: result.join(eol) + (keepsNoFinalNewline ? '' : eol), lines, added };
}

module.exports = {
  quoted,
  readLineWindow,
  linesOf,
  catN,
  lineEnding,
  uniqueOccurrence,
  insertAfterLine,
};
