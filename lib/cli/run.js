'use strict';
// `quickrealm run`: the deny-by-default snippet runner.
//
// Reads {"source", "input"?, "limits"?: {"wall_ms"?, "output_kb"?}} on stdin (input defaults to
// "", wall_ms to 1000, output_kb to 64) and answers with
// {"output"} on stdout (exit 0), or a one-line {"code","message"} on stderr (exit 1; exit 2 for
// malformed requests). On OUTPUT_LIMIT stdout still carries the truncated output; on TIMEOUT
// stdout stays empty.

const { runSync } = require('../run.js');
const { ErrorCode, formatForModel } = require('../errors.js');
const { EXIT_FAILED, EXIT_INVALID, answer, fail, isPlainObject, readRequest } = require('./io.js');

/**
 * @typedef {object} RunRequest
 * @property {string} source
 * @property {string} [input]
 * @property {{ wall_ms?: number, output_kb?: number }} [limits]
 */

/**
 * Validates a `run` request; returns an error message or null.
 * @param {unknown} req
 * @returns {string | null}
 */
function checkRunRequest(req) {
  if (!isPlainObject(req)) return 'the request must be a JSON object';
  for (const key of Object.keys(req)) {
    if (!['source', 'input', 'limits'].includes(key)) return `unknown request field '${key}'`;
  }
  if (typeof req.source !== 'string') return 'source must be a string';
  if (req.input !== undefined && typeof req.input !== 'string') return 'input must be a string';
  const limits = req.limits ?? {};
  if (!isPlainObject(limits)) return 'limits must be an object';
  for (const key of Object.keys(limits)) {
    if (!['wall_ms', 'output_kb'].includes(key)) return `unknown limits field '${key}'`;
    const v = limits[key];
    if (!Number.isInteger(v) || /** @type {number} */ (v) < 0) return `limits.${key} must be a non-negative integer`;
  }
  if (limits.wall_ms === 0) return 'limits.wall_ms must be at least 1';
  if (/** @type {number} */ (limits.wall_ms) > 86_400_000) return 'limits.wall_ms must be at most 86400000';
  if (/** @type {number} */ (limits.output_kb) > 262_144) return 'limits.output_kb must be at most 262144';
  return null;
}

function commandRun() {
  const request = readRequest();
  if (!request.ok) return;
  const problem = checkRunRequest(request.value);
  if (problem) return fail(ErrorCode.InvalidInput, problem, EXIT_INVALID);
  const req = /** @type {RunRequest} */ (request.value);

  const wallMs = req.limits?.wall_ms ?? 1000;
  const outputKb = req.limits?.output_kb ?? 64;
  const result = runSync(req.source, {
    mode: 'script',
    input: req.input ?? '',
    console: 'none',
    limits: { timeoutMs: wallMs, outputBytes: outputKb * 1024 },
  });
  const error = result.error;
  if (result.ok || !error) return answer({ output: result.output });
  if (error.code === ErrorCode.OutputLimit) {
    answer({ output: result.output });
    return fail(error.code, `output exceeded ${outputKb} KB`, EXIT_FAILED);
  }
  if (error.code === ErrorCode.Timeout) return fail(error.code, `execution exceeded ${wallMs} ms`, EXIT_FAILED);
  return fail(
    error.code,
    formatForModel(error, { frame: false }),
    error.code === ErrorCode.InvalidInput ? EXIT_INVALID : EXIT_FAILED,
  );
}

module.exports = { commandRun, checkRunRequest };
