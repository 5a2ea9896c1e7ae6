'use strict';
// What the commands share: reading the request from stdin and answering on stdout/stderr.

const { ErrorCode } = require('../errors.js');
const fs = require('node:fs');

/** A run that failed (a guest error or a limit). */
const EXIT_FAILED = 1;
/** A malformed request or an unknown command. */
const EXIT_INVALID = 2;

/** Reads all of stdin synchronously, as UTF-8. */
function readStdin() {
  /** @type {Buffer[]} */
  const chunks = [];
  const buf = Buffer.alloc(65536);
  for (;;) {
    let n;
    try {
      n = fs.readSync(0, buf, 0, buf.length, null);
    } catch (e) {
      const code = /** @type {NodeJS.ErrnoException} */ (e).code;
      if (code === 'EAGAIN') continue;
      if (code === 'EOF') break;
      throw e;
    }
    if (n === 0) break;
    chunks.push(Buffer.from(buf.subarray(0, n)));
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Writes a one-line `{"code","message"}` to stderr and sets the exit code.
 * @param {string} code
 * @param {string} message
 * @param {number} exitCode
 */
function fail(code, message, exitCode) {
  process.stderr.write(`${JSON.stringify({ code, message })}\n`);
  process.exitCode = exitCode;
}

/**
 * Writes one line of JSON to stdout.
 * @param {unknown} value
 */
function answer(value) {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

/**
 * @param {unknown} v
 * @returns {v is Record<string, unknown>}
 */
function isPlainObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * Parses stdin as JSON; when it is not JSON, reports INVALID_INPUT and returns `{ ok: false }`.
 * @returns {{ ok: true, value: unknown } | { ok: false }}
 */
function readRequest() {
  try {
    return { ok: true, value: JSON.parse(readStdin()) };
  } catch (e) {
    fail(
      ErrorCode.InvalidInput,
      `stdin is not valid JSON: ${e instanceof Error ? e.message : String(e)}`,
      EXIT_INVALID,
    );
    return { ok: false };
  }
}

module.exports = { EXIT_FAILED, EXIT_INVALID, readStdin, readRequest, fail, answer, isPlainObject };
