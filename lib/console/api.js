'use strict';
// The console's JSON: sessions, one session, its audit and approvals, and the approvals waiting
// across sessions as LangGraph Agent Inbox `HumanInterrupt` objects.

const { approvalsOf, proposalsOf, codeOf } = require('./review.js');

/** Audit entries per page (pages of the audit view and of the API). */
const AUDIT_PAGE = 500;

/**
 * @param {any[]} entries
 * @param {number} from the first sequence number wanted (1-based)
 */
function auditSlice(entries, from) {
  const start = Math.max(0, Math.trunc(from) - 1 || 0);
  const page = entries.slice(start, start + AUDIT_PAGE);
  return { entries: page, from: start + 1, next: start + AUDIT_PAGE < entries.length ? start + AUDIT_PAGE + 1 : null };
}

/** @param {any} view */
function sessionJson(view) {
  return {
    id: view.id,
    version: view.version,
    status: view.status,
    tenant: view.tenant,
    metadata: view.metadata,
    createdAt: view.createdAt,
    turnNumber: view.turnNumber,
    budget: view.budget,
    integrity: view.integrity,
    audit: view.audit.verification,
    snapshotBytes: view.bytes,
    turns: view.turns.map((/** @type {any} */ t) => {
      const code = codeOf(t.code);
      return {
        turnNumber: t.turnNumber,
        outcome: t.outcome,
        startedAt: t.startedAt,
        wallMs: t.wallMs,
        code: code.text,
        ...(code.cut ? { codeCut: code.cut } : {}),
        ...(t.error ? { error: t.error } : {}),
      };
    }),
    approvals: approvalsJson(view),
    proposals: proposalsOf(view.proposals),
  };
}

/** @param {any} view */
function approvalsJson(view) {
  return approvalsOf(view).map((a) => ({
    id: a.id,
    operation: a.operation,
    args: a.args,
    turnNumber: a.turnNumber,
    askedAt: a.askedAt,
  }));
}

/**
 * Code as a Markdown block whose fence is longer than any run of backticks in it, so the code
 * cannot end the block early.
 * @param {string} code
 */
function fenced(code) {
  const longest = Math.max(0, ...(code.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return `${fence}js\n${code}\n${fence}`;
}

/**
 * The approvals of a session as Agent Inbox items: the `HumanInterrupt` (`action_request`,
 * `config`, `description`) with the ids that decide it. Accepting approves, ignoring rejects;
 * responding and editing are not offered (a decision cannot change the call).
 * @param {any} view
 */
function inboxItems(view) {
  return approvalsOf(view).map((a) => ({
    sessionId: view.id,
    requestId: a.id,
    interrupt: {
      action_request: { action: a.operation, args: { arguments: a.args } },
      config: { allow_ignore: true, allow_respond: false, allow_edit: false, allow_accept: true },
      description: [
        `Session \`${view.id}\`${view.tenant ? ` (tenant ${view.tenant})` : ''}, turn ${a.turnNumber}, request ${a.id}: the turn calls \`${a.operation}\` and waits for approval.`,
        a.askedAt.length ? `\n\n${fenced(a.askedAt.map((l) => `${l.line}: ${l.text}`).join('\n'))}` : '',
      ].join(''),
    },
  }));
}

module.exports = { sessionJson, approvalsJson, inboxItems, auditSlice, AUDIT_PAGE };
