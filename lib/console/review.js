'use strict';
// What a review shows, computed from an inspected session, shared by the pages and the JSON
// API: the lines of a turn that call the operation awaiting approval, and diffs cut to a size a
// page can hold.

/** Characters of one file's diff shown at most. */
const MAX_DIFF_CHARS = 64 * 1024;
/** Files of the proposals shown at most. */
const MAX_PROPOSALS = 200;
/** Characters of a turn's code shown at most. */
const MAX_CODE_CHARS = 64 * 1024;
/** Characters of the JSON of an approval's arguments shown at most. */
const MAX_ARGS_CHARS = 16 * 1024;

/**
 * The lines of `code` that call `operation` by name (`tickets.create(` with any spacing around
 * the dots and before the parenthesis), numbered from 1. The call site itself is not recorded,
 * so a turn calling the operation from several lines lists all of them, and one calling it
 * through another name lists none.
 * @param {string} code
 * @param {string} operation
 * @returns {{ line: number, text: string }[]}
 */
function callLines(code, operation) {
  if (typeof code !== 'string' || typeof operation !== 'string' || operation === '') return [];
  const name = operation
    .split('.')
    .map((part) => part.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&'))
    .join('\\s*\\.\\s*');
  const call = new RegExp(`(^|[^\\w$.])${name}\\s*\\(`);
  const out = [];
  const lines = code.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (call.test(lines[i])) out.push({ line: i + 1, text: lines[i] });
  }
  return out;
}

/**
 * @param {string} text
 * @param {number} max
 */
function cut(text, max) {
  return text.length > max ? { text: text.slice(0, max), cut: text.length - max } : { text, cut: 0 };
}

/**
 * The approvals waiting, each with the lines of its turn that ask.
 * @param {{ turns: any[], pendingApprovals: { id: string, operation: string, args: unknown[], turnNumber?: number }[] }} view
 */
function approvalsOf(view) {
  return view.pendingApprovals.map((request) => {
    const turnNumber = request.turnNumber ?? Number(String(request.id).split('.')[0]);
    const turn = view.turns.find((t) => t.turnNumber === turnNumber);
    const args = cut(JSON.stringify(request.args ?? [], null, 2) ?? '[]', MAX_ARGS_CHARS);
    return {
      id: request.id,
      operation: request.operation,
      args: request.args,
      argsText: args.text,
      argsCut: args.cut,
      turnNumber,
      askedAt: turn ? callLines(String(turn.code), request.operation) : [],
    };
  });
}

/**
 * The proposals as the review shows them: per file, its unified diff (cut), or the sizes of a
 * binary change.
 * @param {{ path: string, kind: string, dir?: boolean, before: Uint8Array | null, after: Uint8Array | null, diff?: string }[]} proposals
 */
function proposalsOf(proposals) {
  return {
    files: proposals.slice(0, MAX_PROPOSALS).map((p) => {
      const diff = typeof p.diff === 'string' ? cut(p.diff, MAX_DIFF_CHARS) : null;
      return {
        path: p.path,
        kind: p.kind,
        dir: Boolean(p.dir),
        beforeBytes: p.before ? p.before.byteLength : null,
        afterBytes: p.after ? p.after.byteLength : null,
        diff: diff ? diff.text : null,
        diffCut: diff ? diff.cut : 0,
      };
    }),
    more: Math.max(0, proposals.length - MAX_PROPOSALS),
  };
}

/** @param {string} code */
function codeOf(code) {
  return cut(String(code ?? ''), MAX_CODE_CHARS);
}

module.exports = { callLines, approvalsOf, proposalsOf, codeOf, MAX_DIFF_CHARS, MAX_PROPOSALS };
