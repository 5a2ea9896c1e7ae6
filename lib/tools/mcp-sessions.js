'use strict';
// Sessions kept by a SessionManager as tools for an MCP client. Every call names its session
// (`sessionId`), so the tools hold no state between calls and work the same over a stateless
// HTTP server, where each request is served by a new server. A turn that pauses for approval is
// a result the client can act on: its structured content lists the requests and the calls that
// approve or reject them and resume the turn.

const { ErrorCode } = require('../errors.js');
const { createToolSet } = require('./toolset.js');
const { describeTurn, CELL_NOTE, PERSISTENCE_NOTE } = require('../session/tools.js');

/**
 * @typedef {import('../session/index.js').SessionManager} SessionManager
 * @typedef {import('../session/index.js').SessionOptions} SessionOptions
 * @typedef {import('../session/index.js').TurnResult} TurnResult
 */

/** Session ids as Session accepts them. @type {import('./index.js').JsonSchema} */
const SESSION_ID = {
  type: 'string',
  pattern: '^[A-Za-z0-9_.-]{1,128}$',
  description: 'The session: 1 to 128 letters, digits, _, . or -.',
};

/**
 * What a client reads about a turn, as JSON data: the outcome, and for a pause the calls that
 * continue it.
 * @param {string} sessionId
 * @param {TurnResult} turn
 */
function turnData(sessionId, turn) {
  /** @type {Record<string, unknown>} */
  const data = {
    sessionId,
    turnNumber: turn.turnNumber,
    outcome: jsonOf(turn.outcome),
    proposals: turn.proposals.map((p) => ({ path: p.path, kind: p.kind })),
  };
  if (turn.outcome.tag === 'needs-approval') {
    data.approval = {
      requests: turn.outcome.requests.map((r) => ({ id: r.id, operation: r.operation, args: jsonOf(r.args) })),
      // Approve or reject each request, then resume the turn.
      approve: { tool: 'approve', arguments: { sessionId, requestId: '<request id>' } },
      reject: { tool: 'reject', arguments: { sessionId, requestId: '<request id>' } },
      next: { tool: 'resume', arguments: { sessionId } },
    };
  }
  return data;
}

/**
 * A value as JSON data (what a result's structured content can carry); what JSON cannot say
 * (a BigInt, a cycle) becomes its text.
 * @param {unknown} value
 */
function jsonOf(value) {
  try {
    const text = JSON.stringify(value);
    return text === undefined ? null : JSON.parse(text);
  } catch {
    return String(value);
  }
}

/**
 * A turn as a tool result: a failed turn is a failed call with the turn's code.
 * @param {string} sessionId
 * @param {TurnResult} turn
 * @returns {import('./index.js').ToolResult}
 */
function turnResult(sessionId, turn) {
  const o = turn.outcome;
  const failed = o.tag === 'error' || o.tag === 'nonconverged';
  let content = describeTurn(turn);
  if (o.tag === 'needs-approval') {
    content +=
      `\nCall approve or reject with sessionId ${JSON.stringify(sessionId)} and each request id, ` +
      'then resume to continue the turn.';
  }
  return {
    ok: !failed,
    content,
    data: turnData(sessionId, turn),
    ...(failed && 'code' in o ? { code: o.code } : {}),
  };
}

/**
 * A tool failure with `code`: the tool set writes it as `ERROR CODE: message`.
 * @param {string} code
 * @param {string} message
 */
const failure = (code, message) => Object.assign(new Error(message), { code });

/**
 * Runs a call of the session layer; its errors read `CODE: message`, which the tool set would
 * prefix with the code again, so the prefix is taken off.
 * @template T
 * @param {() => Promise<T>} call
 * @returns {Promise<T>}
 */
async function sessionCall(call) {
  try {
    return await call();
  } catch (e) {
    const code = /** @type {{ code?: unknown }} */ (e)?.code;
    if (typeof code !== 'string' || !(e instanceof Error)) throw e;
    throw failure(code, e.message.startsWith(`${code}: `) ? e.message.slice(code.length + 2) : e.message);
  }
}

/**
 * @param {SessionManager} manager
 * @param {{ create?: SessionOptions | null }} [options] `create`: the options of a session that
 *   execute_turn creates when its id is not stored yet; without it such a call is NOT_FOUND
 * @returns {import('./index.js').ToolSet}
 */
function sessionManagerTools(manager, options = {}) {
  const create = options.create ?? null;
  /** @param {string} id */
  const mustGet = async (id) => {
    const session = await sessionCall(() => manager.get(id));
    if (!session) throw failure(ErrorCode.NotFound, `no session ${id}`);
    return session;
  };
  /**
   * A tool deciding a request of a paused turn (`approve`, `reject`).
   * @param {'approve' | 'reject'} name
   * @param {{ description: string, extra: Record<string, import('./index.js').JsonSchema>,
   *   decide: (id: string, requestId: string, args: Record<string, unknown>) => Promise<unknown> }} spec
   * @returns {import('./index.js').ToolDefinitionInput}
   */
  const decisionTool = (name, spec) => ({
    name,
    description: spec.description,
    inputSchema: {
      type: /** @type {const} */ ('object'),
      properties: { sessionId: SESSION_ID, requestId: { type: 'string', minLength: 1 }, ...spec.extra },
      required: ['sessionId', 'requestId'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
    handler: async (/** @type {Record<string, unknown>} */ args) => {
      const id = /** @type {string} */ (args.sessionId);
      const requestId = /** @type {string} */ (args.requestId);
      await mustGet(id);
      await sessionCall(() => spec.decide(id, requestId, args));
      const decision = name === 'approve' ? 'approved' : 'rejected';
      return {
        ok: true,
        content: `${decision[0].toUpperCase()}${decision.slice(1)} ${requestId}. Call resume with sessionId ${JSON.stringify(id)} to continue the turn.`,
        data: { sessionId: id, requestId, decision, next: { tool: 'resume', arguments: { sessionId: id } } },
      };
    },
  });
  return createToolSet([
    {
      name: 'execute_turn',
      description:
        (create?.persistState
          ? `Run JavaScript as the next turn of a session: ${CELL_NOTE} Globals: world `
          : 'Run JavaScript (the body of an async function) as the next turn of a session. Globals: world ') +
        '(read, write, list(glob), search, stat, delete, mkdir, fingerprint, exec), env (data kept across turns), ' +
        'needs(question), session and the host operations. A turn that calls an operation needing approval ' +
        'pauses: the result lists the requests; approve or reject them, then call resume.' +
        (create ? ' A new sessionId starts a new session.' : '') +
        (create?.persistState ? PERSISTENCE_NOTE : ''),
      inputSchema: {
        type: 'object',
        properties: { sessionId: SESSION_ID, code: { type: 'string', description: 'The JavaScript to run.' } },
        required: ['sessionId', 'code'],
        additionalProperties: false,
      },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
      handler: async (args, context) => {
        const id = /** @type {string} */ (args.sessionId);
        const session = await sessionCall(
          async () => (await manager.get(id)) ?? (create ? await manager.create({ ...create, id }) : await mustGet(id)),
        );
        const turn = await session.executeTurn(/** @type {string} */ (args.code), { signal: context.signal });
        return turnResult(id, turn);
      },
    },
    {
      name: 'list_proposals',
      description:
        'The changes a session has staged for review (path, kind and a unified diff for text files), and the ' +
        'approvals its paused turn waits for.',
      inputSchema: {
        type: 'object',
        properties: { sessionId: SESSION_ID },
        required: ['sessionId'],
        additionalProperties: false,
      },
      annotations: { readOnlyHint: true },
      handler: async (args) => {
        const id = /** @type {string} */ (args.sessionId);
        const session = await mustGet(id);
        const proposals = session.proposals().map((p) => ({
          path: p.path,
          kind: p.kind,
          dir: p.dir,
          ...(p.diff === undefined ? {} : { diff: p.diff }),
        }));
        const pending = session.pendingApprovals.map((r) => ({
          id: r.id,
          operation: r.operation,
          args: jsonOf(r.args),
        }));
        const lines = [`Session ${id} is ${session.status} after turn ${session.turnNumber}.`];
        lines.push(
          proposals.length
            ? `Proposed changes:\n${proposals.map((p) => `${p.kind} ${p.path}${p.diff ? `\n${p.diff}` : ''}`).join('\n')}`
            : 'No proposed changes.',
        );
        if (pending.length)
          lines.push(`Waiting for approval: ${pending.map((r) => `${r.operation} (${r.id})`).join(', ')}`);
        return {
          ok: true,
          content: lines.join('\n'),
          data: { sessionId: id, status: session.status, turnNumber: session.turnNumber, proposals, pending },
        };
      },
    },
    decisionTool('approve', {
      description:
        'Approve an operation call a paused turn is waiting for; with value, the call is not run and the ' +
        'turn gets value as its result. Call resume once every request is decided.',
      extra: { value: { description: 'A result to give the turn instead of running the operation.' } },
      decide: (id, requestId, args) =>
        manager.approve(id, requestId, 'value' in args ? { value: args.value } : undefined),
    }),
    decisionTool('reject', {
      description:
        'Reject an operation call a paused turn is waiting for: the call fails in the turn with the reason. ' +
        'Call resume once every request is decided.',
      extra: { reason: { type: 'string' } },
      decide: (id, requestId, args) => manager.reject(id, requestId, /** @type {string | undefined} */ (args.reason)),
    }),
    {
      name: 'resume',
      description:
        'Continue a turn that waited for approval (after every request is approved or rejected), or reactivate ' +
        'a paused session.',
      inputSchema: {
        type: 'object',
        properties: { sessionId: SESSION_ID },
        required: ['sessionId'],
        additionalProperties: false,
      },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
      handler: async (args) => {
        const id = /** @type {string} */ (args.sessionId);
        await mustGet(id);
        const turn = await sessionCall(() => manager.resume(id));
        if (turn === null) {
          return { ok: true, content: `Session ${id} is active again.`, data: { sessionId: id, status: 'active' } };
        }
        return turnResult(id, turn);
      },
    },
  ]);
}

module.exports = { sessionManagerTools };
