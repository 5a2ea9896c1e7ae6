'use strict';
// What every command of the MCP filesystem dialect shares: the server's path rules (one allowed
// directory, `/`; paths absolute, relative to it or `~/`), Node-style error messages, and the
// small formats its answers repeat.

const { ErrorCode } = require('../../../errors.js');
const path = require('node:path').posix;
const { ZipWorkspace } = require('../../../workspace.js');
const { fail } = require('../../toolset.js');

/**
 * @typedef {import('../../../index.js').ZipWorkspace} Workspace
 * @typedef {import('../../index.js').ToolAnnotations} ToolAnnotations
 * @typedef {import('../../index.js').JsonSchema} JsonSchema
 */

const ALLOWED = '/';

/** @type {ToolAnnotations} */
const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true };

/**
 * A Node-style file system error message: `ENOENT: no such file or directory, open '/a'`.
 * @param {'ENOENT' | 'EISDIR' | 'ENOTDIR' | 'EEXIST' | 'EINVAL'} code
 * @param {string} operation
 * @param {string} [target] left out where Node leaves it out (reading a directory)
 */
function fsError(code, operation, target) {
  const text = {
    ENOENT: 'no such file or directory',
    EISDIR: 'illegal operation on a directory',
    ENOTDIR: 'not a directory',
    EEXIST: 'file already exists',
    EINVAL: 'invalid argument',
  }[code];
  return fail(
    code === 'ENOENT' ? ErrorCode.NotFound : code,
    `${code}: ${text}, ${operation}${target ? ` ${target}` : ''}`,
  );
}

/** Longest path read_multiple_files repeats before a file's text or error, or a success message echoes. */
const MAX_SHOWN_PATH = 1024;

/**
 * A path as an answer repeats it: at most MAX_SHOWN_PATH characters.
 * @param {string} requested
 */
const shownPath = (requested) =>
  requested.length > MAX_SHOWN_PATH ? `${requested.slice(0, MAX_SHOWN_PATH)}…` : requested;

/**
 * The note ending a listing cut at the answer size.
 * @param {number} left entries not shown
 * @param {string} how what to ask for instead
 */
const leftOutNote = (left, how) => `[${left} more entries not shown: the answer is full; ${how}]`;

/**
 * @param {string} description
 * @returns {JsonSchema}
 */
const pathArg = (description) => ({ type: 'string', description });

/**
 * The server's view of a workspace: its path checks and reads, as the commands use them.
 * @typedef {ReturnType<typeof serverPaths>} ServerPaths
 */

/** @param {Workspace} ws */
function serverPaths(ws) {
  /**
   * The absolute form of a requested path.
   * @param {string} requested
   */
  function absolute(requested) {
    const home = requested === '~' ? '/' : requested.startsWith('~/') ? `/${requested.slice(2)}` : requested;
    return path.resolve(ALLOWED, home);
  }

  /**
   * Refuses paths the workspace does not accept (its hidden history folder).
   * @param {string} abs
   */
  function inside(abs) {
    try {
      ZipWorkspace.displayPath(abs);
    } catch {
      throw fail(ErrorCode.PathInvalid, `Access denied - path outside allowed directories: ${abs} not in ${ALLOWED}`);
    }
    return abs;
  }

  /**
   * @param {string} abs
   * @returns {'file' | 'dir' | null}
   */
  const kindOf = (abs) => (ws.exists(abs) ? ws.stat(abs).kind : null);

  /**
   * Checks a requested path as the server does: inside the allowed directory, and if it does not
   * exist, its parent must. Returns the absolute path.
   * @param {string} requested
   */
  function validate(requested) {
    const abs = inside(absolute(requested));
    if (kindOf(abs) !== null) return abs;
    const parent = path.dirname(abs);
    if (kindOf(parent) === null) throw fail(ErrorCode.NotFound, `Parent directory does not exist: ${parent}`);
    return abs;
  }

  /**
   * @param {string} abs
   * @param {string} operation
   */
  function requireDir(abs, operation) {
    const kind = kindOf(abs);
    if (kind === null) throw fsError('ENOENT', operation, `'${abs}'`);
    if (kind !== 'dir') throw fsError('ENOTDIR', operation, `'${abs}'`);
  }

  /** @param {string} abs */
  function readFileBytes(abs) {
    const kind = kindOf(abs);
    if (kind === null) {
      if (kindOf(path.dirname(abs)) === 'file') throw fsError('ENOTDIR', 'open', `'${abs}'`);
      throw fsError('ENOENT', 'open', `'${abs}'`);
    }
    if (kind === 'dir') throw fsError('EISDIR', 'read');
    return ws.readFile(abs);
  }

  /** @param {string} abs */
  const readFileText = (abs) => readFileBytes(abs).toString('utf8');

  return { ws, absolute, inside, kindOf, validate, requireDir, readFileBytes, readFileText };
}

module.exports = { ALLOWED, READ_ONLY, fsError, shownPath, MAX_SHOWN_PATH, leftOutNote, pathArg, serverPaths };
