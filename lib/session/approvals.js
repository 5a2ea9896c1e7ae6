'use strict';
// Approvals: the requests of a turn paused for a person's decision (approve, with or without a
// value to answer with; reject, with a reason), and the proposals a person reviews before
// `commit()`.

const { ErrorCode } = require('../errors.js');
const { sessionError } = require('./errors.js');
const { plainCopy } = require('./options.js');

/**
 * @typedef {import('./turn.js').ApprovalRequest} ApprovalRequest
 */

/**
 * The request `id` of the paused turn, refused unless it waits for a decision.
 * @param {{ requests: ApprovalRequest[] } | null} pending
 * @param {string} id
 */
function waitingRequest(pending, id) {
  const request = pending?.requests.find((r) => r.id === id);
  if (!request) throw sessionError(ErrorCode.NotFound, `no approval request ${id} is waiting`);
  if (request.status !== 'pending')
    throw sessionError(ErrorCode.SessionState, `request ${id} was already ${request.status}`);
  return request;
}

/**
 * On `resume()` the operation runs, or, with `{ value }`, answers with `value` without running.
 * @param {ApprovalRequest} request
 * @param {{ value?: unknown }} [decision]
 */
function approveRequest(request, decision) {
  request.status = 'approved';
  if (decision && Object.hasOwn(decision, 'value')) {
    request.value = plainCopy(decision.value, 'approve(id, { value })');
    request.hasValue = true;
  }
}

/**
 * On `resume()` the guest's call throws `ApprovalRejected` with `reason`.
 * @param {ApprovalRequest} request
 * @param {string} [reason]
 */
function rejectRequest(request, reason) {
  request.status = 'rejected';
  if (reason !== undefined) request.reason = String(reason);
}

/**
 * The changes `staged` holds over `origin`, sorted by path, as `proposals()` lists them.
 * @param {import('../index.js').ZipWorkspace} staged
 * @param {import('../index.js').ZipWorkspace} origin
 */
function proposalsOf(staged, origin) {
  return staged.changesSince(origin).map((c) => ({
    path: c.path,
    kind: c.kind,
    dir: c.dir,
    before: c.before ? new Uint8Array(c.before) : null,
    after: c.after ? new Uint8Array(c.after) : null,
    ...(c.diff !== undefined && c.diff !== null ? { diff: c.diff } : {}),
  }));
}

module.exports = { waitingRequest, approveRequest, rejectRequest, proposalsOf };
