'use strict';
// Text functions the dialects share: lines as `cat -n` counts them, numbered views, a line diff in
// the unified format the `diff` npm package prints (what the MCP filesystem server returns), and
// glob patterns with minimatch's rules for `*`, `**`, `?`, `[...]` and `{a,b}`.

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
 * 1-based numbers of the lines where each occurrence of `needle` in `text` starts.
 * @param {string} text
 * @param {string} needle not empty
 * @returns {number[]}
 */
function occurrenceLines(text, needle) {
  /** @type {number[]} */
  const lines = [];
  let line = 1;
  let counted = 0;
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) {
    for (let i = counted; i < at; i++) if (text.charCodeAt(i) === 10) line++;
    counted = at;
    lines.push(line);
  }
  return lines;
}

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
  const starts = oldStr === '' ? [] : occurrenceLines(text, oldStr);
  if (starts.length === 0) {
    throw fail('NO_MATCH', `No replacement was performed, old_str \`${oldStr}\` did not appear verbatim in ${path}.`);
  }
  if (starts.length > 1) {
    throw fail(
      'AMBIGUOUS_MATCH',
      `No replacement was performed. Multiple occurrences of old_str \`${oldStr}\` in lines${listLines([...new Set(starts)])}. Please ensure it is unique`,
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
      'RANGE',
      `Invalid \`insert_line\` parameter: ${insertLine}. It should be within the range of lines of the file: [0, ${lines.length}]`,
    );
  }
  const added = insertText.replace(/\r?\n$/, '').split(/\r?\n/);
  const result = [...lines.slice(0, insertLine), ...added, ...lines.slice(insertLine)];
  const keepsNoFinalNewline = text !== '' && !text.endsWith('\n');
  return { updated: result.join(eol) + (keepsNoFinalNewline ? '' : eol), lines, added };
}

// ----- line diff -----

/**
 * An edit script from `a` to `b` (Myers' O(ND) algorithm, exploring
 * diagonals in the order the `diff` package does, so both pick the same script), as
 * operations in order: ['=', line], ['-', line], ['+', line]. Within a run of changes the
 * removals come first, as unified diffs show them.
 * @param {string[]} a
 * @param {string[]} b
 * @returns {Array<['=' | '-' | '+', string]>}
 */
function editScript(a, b) {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  // Only the common start is trimmed: trimming the end too changes which of several equally
  // short scripts is found, and the `diff` package's choice is the one to match.
  const A = a.slice(head);
  const B = b.slice(head);
  /** @type {Array<['=' | '-' | '+', string]>} */
  const middle = [];
  const n = A.length;
  const m = B.length;
  if (n === 0) for (const line of B) middle.push(['+', line]);
  else if (m === 0) for (const line of A) middle.push(['-', line]);
  else {
    const max = n + m;
    const offset = max + 1;
    /** @type {Int32Array} */
    let v = new Int32Array(2 * max + 3);
    /** @type {Int32Array[]} */
    const trace = [];
    let found = false;
    for (let d = 0; d <= max && !found; d++) {
      trace.push(v.slice());
      for (let k = -d; k <= d; k += 2) {
        let x =
          k === -d || (k !== d && v[offset + k - 1] < v[offset + k + 1]) ? v[offset + k + 1] : v[offset + k - 1] + 1;
        let y = x - k;
        while (x < n && y < m && A[x] === B[y]) {
          x++;
          y++;
        }
        v[offset + k] = x;
        if (x >= n && y >= m) {
          found = true;
          break;
        }
      }
    }
    // Walk back from (n, m) through the saved frontiers.
    /** @type {Array<['=' | '-' | '+', string]>} */
    const reversed = [];
    let x = n;
    let y = m;
    for (let d = trace.length - 1; d >= 0; d--) {
      v = trace[d];
      const k = x - y;
      const prevK = k === -d || (k !== d && v[offset + k - 1] < v[offset + k + 1]) ? k + 1 : k - 1;
      const prevX = d === 0 ? 0 : v[offset + prevK];
      const prevY = d === 0 ? 0 : prevX - prevK;
      while (x > prevX && y > prevY) {
        reversed.push(['=', A[x - 1]]);
        x--;
        y--;
      }
      if (d === 0) break;
      if (x === prevX) reversed.push(['+', B[y - 1]]);
      else reversed.push(['-', A[x - 1]]);
      x = prevX;
      y = prevY;
    }
    middle.push(...reversed.reverse());
  }
  /** @type {Array<['=' | '-' | '+', string]>} */
  const script = a.slice(0, head).map((line) => /** @type {['=', string]} */ (['=', line]));
  // Removals before additions inside each run of changes.
  for (let i = 0; i < middle.length; ) {
    if (middle[i][0] === '=') {
      script.push(middle[i++]);
      continue;
    }
    let j = i;
    while (j < middle.length && middle[j][0] !== '=') j++;
    const run = middle.slice(i, j);
    script.push(...run.filter((op) => op[0] === '-'), ...run.filter((op) => op[0] === '+'));
    i = j;
  }
  return script;
}

/**
 * Splits text into lines that keep their `\n` (the last one may lack it), so that a change of
 * the final newline is a change of the last line.
 * @param {string} text
 */
function linesWithEnds(text) {
  if (text === '') return [];
  const parts = text.split('\n').map((line) => `${line}\n`);
  const last = parts.length - 1;
  if (text.endsWith('\n')) parts.pop();
  else parts[last] = parts[last].slice(0, -1);
  return parts;
}

/**
 * A unified diff of two texts as the `diff` package's `createTwoFilesPatch(name, name, before,
 * after, 'original', 'modified')` prints it: an `Index:` line, the `===` rule, headers with a tab
 * and a label, hunks with four lines of context whose headers always give both counts, and
 * `\ No newline at end of file` after a last line without one.
 * @param {string} name
 * @param {string} before
 * @param {string} after
 */
function unifiedDiff(name, before, after) {
  const CONTEXT = 4;
  const script = editScript(linesWithEnds(before), linesWithEnds(after));
  /** @type {{ oldStart: number, oldLines: number, newStart: number, newLines: number, lines: string[] }[]} */
  const hunks = [];
  let i = 0;
  let oldLine = 1;
  let newLine = 1;
  let unchangedBefore = 0;
  while (i < script.length) {
    if (script[i][0] === '=') {
      i++;
      oldLine++;
      newLine++;
      unchangedBefore++;
      continue;
    }
    // A hunk starts with up to CONTEXT lines before the first change.
    const lead = Math.min(CONTEXT, unchangedBefore);
    unchangedBefore = 0;
    /** @type {{ oldStart: number, oldLines: number, newStart: number, newLines: number, lines: string[] }} */
    const hunk = { oldStart: oldLine - lead, oldLines: lead, newStart: newLine - lead, newLines: lead, lines: [] };
    hunk.lines.push(...script.slice(i - lead, i).map((op) => ` ${op[1]}`));
    while (i < script.length) {
      const [kind, line] = script[i];
      if (kind !== '=') {
        hunk.lines.push(`${kind}${line}`);
        if (kind === '-') {
          hunk.oldLines++;
          oldLine++;
        } else {
          hunk.newLines++;
          newLine++;
        }
        i++;
        continue;
      }
      // A run of unchanged lines: short ones between changes stay inside the hunk.
      let j = i;
      while (j < script.length && script[j][0] === '=') j++;
      const run = j - i;
      if (j < script.length && run <= CONTEXT * 2) {
        for (let t = i; t < j; t++) hunk.lines.push(` ${script[t][1]}`);
        hunk.oldLines += run;
        hunk.newLines += run;
        oldLine += run;
        newLine += run;
        i = j;
        continue;
      }
      const trail = Math.min(run, CONTEXT);
      for (let t = i; t < i + trail; t++) hunk.lines.push(` ${script[t][1]}`);
      hunk.oldLines += trail;
      hunk.newLines += trail;
      break;
    }
    hunks.push(hunk);
  }
  const out = [`Index: ${name}`, '='.repeat(67), `--- ${name}\toriginal`, `+++ ${name}\tmodified`];
  for (const hunk of hunks) {
    // The unified format's quirk: an empty range starts one line earlier.
    const oldStart = hunk.oldLines === 0 ? hunk.oldStart - 1 : hunk.oldStart;
    const newStart = hunk.newLines === 0 ? hunk.newStart - 1 : hunk.newStart;
    out.push(`@@ -${oldStart},${hunk.oldLines} +${newStart},${hunk.newLines} @@`);
    for (const line of hunk.lines) {
      if (line.endsWith('\n')) out.push(line.slice(0, -1));
      else out.push(line, '\\ No newline at end of file');
    }
  }
  return `${out.join('\n')}\n`;
}

// ----- globs -----

/**
 * A regular expression for a glob with minimatch's rules and its `dot: true` option: `*` and `?`
 * stay inside one path segment, `**` as a whole segment spans any number of them (none
 * included), `[...]` is a character class (`[!...]` negated), `{a,b}` an alternation.
 * @param {string} pattern
 * @returns {RegExp}
 */
function globToRegExp(pattern) {
  /**
   * @param {string} src
   * @returns {string}
   */
  function translate(src) {
    let out = '';
    for (let i = 0; i < src.length; i++) {
      const c = src[i];
      if (c === '*') {
        const isDouble = src[i + 1] === '*';
        const atSegmentStart = i === 0 || src[i - 1] === '/';
        const afterDouble = src[i + 2];
        if (isDouble && atSegmentStart && (afterDouble === undefined || afterDouble === '/')) {
          if (afterDouble === '/') {
            out += '(?:[^/]*(?:/|$))*';
            i += 2;
          } else {
            out += '.*';
            i += 1;
          }
        } else {
          while (src[i + 1] === '*') i++;
          out += '[^/]*';
        }
      } else if (c === '?') {
        out += '[^/]';
      } else if (c === '[') {
        const close = src.indexOf(']', i + 2);
        if (close === -1) {
          out += '\\[';
          continue;
        }
        let body = src.slice(i + 1, close);
        const negated = body.startsWith('!') || body.startsWith('^');
        if (negated) body = body.slice(1);
        out += `[${negated ? '^/' : ''}${body.replace(/\\/g, '\\\\').replace(/]/g, '\\]')}]`;
        i = close;
      } else if (c === '{') {
        let depth = 0;
        let close = -1;
        for (let j = i; j < src.length; j++) {
          if (src[j] === '{') depth++;
          else if (src[j] === '}' && --depth === 0) {
            close = j;
            break;
          }
        }
        const inner = close === -1 ? '' : src.slice(i + 1, close);
        if (close === -1 || !inner.includes(',')) {
          out += '\\{';
          continue;
        }
        /** @type {string[]} */
        const options = [];
        let level = 0;
        let startAt = 0;
        for (let j = 0; j < inner.length; j++) {
          if (inner[j] === '{') level++;
          else if (inner[j] === '}') level--;
          else if (inner[j] === ',' && level === 0) {
            options.push(inner.slice(startAt, j));
            startAt = j + 1;
          }
        }
        options.push(inner.slice(startAt));
        out += `(?:${options.map(translate).join('|')})`;
        i = close;
      } else if (c === '\\' && i + 1 < src.length) {
        out += src[++i].replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
      } else {
        out += c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
      }
    }
    return out;
  }
  return new RegExp(`^${translate(pattern)}$`);
}

module.exports = {
  linesOf,
  catN,
  occurrenceLines,
  lineEnding,
  uniqueOccurrence,
  insertAfterLine,
  editScript,
  unifiedDiff,
  globToRegExp,
};
