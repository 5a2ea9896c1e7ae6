'use strict';
// Error locations for component scripts. `run` reports the first frame of its whole source; a
// component script runs after a one-line prelude, so frames inside the prelude (the permission
// checks that threw) and the closing line are dropped, columns on line 1 are shifted back, and
// line, column and frame are taken from the first frame inside the model's own script.

/** @typedef {import('../index.js').SandboxErrorInfo} SandboxErrorInfo */

/**
 * A compiler-style excerpt: up to two lines before the failing line, the line, a caret under
 * the column, one line after (the same layout `run` uses).
 * @param {string} source
 * @param {number} line
 * @param {number} column
 * @returns {string | undefined}
 */
function codeFrame(source, line, column) {
  const lines = source.split('\n');
  const idx = line - 1;
  if (idx < 0 || idx >= lines.length) return undefined;
  const first = Math.max(0, idx - 2);
  const last = Math.min(idx + 1, lines.length - 1);
  const width = String(last + 1).length;
  const out = [];
  for (let i = first; i <= last; i++) {
    const shown = [...lines[i].replace(/\r$/, '')].slice(0, 160);
    out.push(`${i === idx ? '>' : ' '} ${String(i + 1).padStart(width)} | ${shown.join('')}`);
    if (i === idx) {
      const col = Math.min(Math.max(column, 1) - 1, shown.length);
      const pad = shown
        .slice(0, col)
        .map((c) => (c === '\t' ? '\t' : ' '))
        .join('');
      out.push(`  ${''.padStart(width)} | ${pad}^`);
    }
  }
  return out.join('\n').trimEnd();
}

/** @param {string} text */
function escapeRegExp(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Moves an error reported for the wrapped source into the model's script.
 * @param {SandboxErrorInfo} error
 * @param {string} script the model's script
 * @param {string} filename
 * @param {number} preludeLength characters the prelude adds before the script on line 1
 * @returns {SandboxErrorInfo}
 */
function locateInScript(error, script, filename, preludeLength) {
  const lines = script.split('\n');
  const lineCount = lines.length;
  const at = new RegExp(`${escapeRegExp(filename)}:(\\d+):(\\d+)`);
  /** @type {{ line: number, column: number } | undefined} */
  let location;
  /** @type {string[]} */
  const kept = [];
  let afterDropped = false;
  let pastEnd = false;
  for (const frame of (error.stack ?? '').split('\n')) {
    if (frame.trim() === '') continue;
    const m = at.exec(frame);
    if (!m) {
      // A built-in called by the prelude (Reflect.set reaching a permission check) is not the
      // model's; a built-in the model called is.
      if (!afterDropped) kept.push(frame);
      continue;
    }
    const line = Number(m[1]);
    let column = Number(m[2]);
    if ((line === 1 && column <= preludeLength) || line > lineCount) {
      if (line > lineCount) pastEnd = true;
      afterDropped = true;
      continue;
    }
    afterDropped = false;
    if (line === 1) column -= preludeLength;
    location ??= { line, column };
    kept.push(frame.replace(at, `${filename}:${line}:${column}`));
  }
  if (!location && error.stack === undefined && error.line !== undefined && error.line !== null) {
    const line = error.line;
    const column = error.column ?? 1;
    if (line === 1 && column > preludeLength) location = { line, column: column - preludeLength };
    else if (line > 1 && line <= lineCount) location = { line, column };
    else if (line > lineCount) pastEnd = true;
  }
  let message = error.message;
  if (!location && pastEnd && error.name === 'SyntaxError') {
    // The parser ran into the closing line: a bracket was left open or closed once too often.
    // Point after the script's last character, as `run` does, and say so without quoting the
    // token of the wrapper the model never wrote.
    location = { line: lineCount, column: [...lines[lineCount - 1]].length + 1 };
    message = 'unexpected end of the script: brackets or braces do not balance';
  }
  /** @type {SandboxErrorInfo} */
  const out = { code: error.code, name: error.name, message };
  if (location) {
    out.line = location.line;
    out.column = location.column;
    const frame = codeFrame(script, location.line, location.column);
    if (frame !== undefined) out.frame = frame;
  }
  if (kept.length > 0) out.stack = kept.join('\n');
  return out;
}

module.exports = { codeFrame, locateInScript };
