'use strict';
// `quickrealm exec`: runs a file of a zipped workspace.
//
// Reads {"zipBase64", "entryPath", "argv"?, "env"?, "timeoutMs"?} on stdin, runs the entry file
// of that workspace (see ZipWorkspace.exec) and answers on stdout with
// {"ok", "stdout", "stderr", "exitCode", "zipBase64"} (plus "error" when the run failed), where
// zipBase64 is the workspace after the run: changed only if the run succeeded. Exit 0 when the
// run succeeded, 1 when it failed; a malformed request (bad JSON, fields, base64 or archive, or
// an entry that cannot run) is a one-line {"code":"INVALID_INPUT","message"} on stderr, exit 2.

const { ErrorCode } = require('../errors.js');
const { ZipWorkspace } = require('../workspace.js');
const { EXIT_FAILED, EXIT_INVALID, answer, fail, isPlainObject, readRequest } = require('./io.js');

/**
 * @typedef {import('../index.js').ExecOptions} ExecOptions
 * @typedef {import('../index.js').ExecResult} ExecResult
 * @typedef {object} ExecRequest
 * @property {string} zipBase64
 * @property {string} entryPath
 * @property {string[]} [argv]
 * @property {Record<string, string>} [env]
 * @property {number} [timeoutMs]
 */

const EXEC_FIELDS = ['zipBase64', 'entryPath', 'argv', 'env', 'timeoutMs'];
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Validates an `exec` request; returns an error message or null.
 * @param {unknown} req
 * @returns {string | null}
 */
function checkExecRequest(req) {
  if (!isPlainObject(req)) return 'the request must be a JSON object';
  for (const key of Object.keys(req)) {
    if (!EXEC_FIELDS.includes(key)) return `unknown request field '${key}' (expected: ${EXEC_FIELDS.join(', ')})`;
  }
  if (typeof req.zipBase64 !== 'string' || req.zipBase64.length === 0) return 'zipBase64 must be a non-empty string';
  const compact = req.zipBase64.replace(/\s+/g, '');
  if (compact.length % 4 !== 0 || !BASE64.test(compact)) return 'zipBase64 is not valid base64';
  if (typeof req.entryPath !== 'string' || req.entryPath.length === 0) return 'entryPath must be a non-empty string';
  if (req.argv !== undefined && (!Array.isArray(req.argv) || !req.argv.every((a) => typeof a === 'string'))) {
    return 'argv must be an array of strings';
  }
  if (req.env !== undefined) {
    if (!isPlainObject(req.env)) return 'env must be an object of strings';
    for (const [k, v] of Object.entries(req.env)) {
      if (typeof v !== 'string') return `env.${k} must be a string`;
    }
  }
  const timeoutMs = req.timeoutMs;
  if (
    timeoutMs !== undefined &&
    (typeof timeoutMs !== 'number' || !Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 86_400_000)
  ) {
    return 'timeoutMs must be an integer between 1 and 86400000';
  }
  return null;
}

/** @param {unknown} e */
const messageOf = (e) => (e instanceof Error ? e.message : String(e));

async function commandExec() {
  const request = readRequest();
  if (!request.ok) return;
  const problem = checkExecRequest(request.value);
  if (problem) return fail(ErrorCode.InvalidInput, problem, EXIT_INVALID);
  const req = /** @type {ExecRequest} */ (request.value);
  let ws;
  try {
    ws = ZipWorkspace.fromZip(Buffer.from(req.zipBase64, 'base64'));
  } catch (e) {
    const code = /** @type {{ code?: string }} */ (e).code;
    return fail(
      ErrorCode.InvalidInput,
      `zipBase64 is not a usable workspace archive: ${code ?? ErrorCode.Internal}: ${messageOf(e)}`,
      EXIT_INVALID,
    );
  }
  /** @type {ExecOptions} */
  const options = {};
  if (req.argv !== undefined) options.argv = req.argv;
  if (req.env !== undefined) options.env = req.env;
  if (req.timeoutMs !== undefined) options.timeoutMs = req.timeoutMs;
  let result;
  try {
    result = /** @type {ExecResult} */ (await ws.exec(req.entryPath, options));
  } catch (e) {
    return fail(ErrorCode.InvalidInput, messageOf(e), EXIT_INVALID);
  }
  // An entry that does not exist is a bad request here too, as the protocol says.
  if (
    !result.ok &&
    result.error &&
    (result.error.code === ErrorCode.InvalidInput || result.error.code === ErrorCode.NotFound)
  ) {
    return fail(ErrorCode.InvalidInput, result.error.message, EXIT_INVALID);
  }
  /** @type {Record<string, unknown>} */
  const out = {
    ok: result.ok,
    stdout: result.stdout,
    stderr: result.stderr,
    exitCode: result.exitCode,
    zipBase64: ws.toZip().toString('base64'),
  };
  if (result.error) out.error = result.error;
  answer(out);
  if (!result.ok) process.exitCode = EXIT_FAILED;
}

module.exports = { commandExec, checkExecRequest };
