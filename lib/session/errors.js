'use strict';
// Errors the session layer throws to the host (bad options, unknown ids), each with a stable
// `code`. Guest, policy and budget failures are never thrown: they are turn outcomes.

/**
 * @param {string} code
 * @param {string} message
 * @param {ErrorConstructor} [Kind]
 */
function sessionError(code, message, Kind = Error) {
  return Object.assign(new Kind(`${code}: ${message}`), { code });
}

module.exports = { sessionError };
