'use strict';
// A session's turn as a tool for models (DESIGN §4.3): one tool, `execute_turn`, whose result
// tells the model what its code did, in the neutral form every converter takes.

const { createToolSet } = require('../tools/toolset.js');
const { formatForModel } = require('../errors.js');
const { boundedInspect, boundedJson } = require('../tools/show.js');

const VALUE_TEXT_LIMIT = 8000;

/**
 * @param {unknown} value
 */
function show(value) {
  if (value === undefined) return 'undefined';
  // Built with a budget: a value that repeats shared parts is not expanded past it.
  let shown;
  try {
    const json = boundedJson(value, VALUE_TEXT_LIMIT, 1);
    shown = { text: json.text ?? 'undefined', complete: json.complete };
  } catch {
    // A cycle: shown as inspect shows it.
    const text = boundedInspect(
      value,
      { depth: 6, maxArrayLength: 100, maxStringLength: VALUE_TEXT_LIMIT },
      4 * VALUE_TEXT_LIMIT,
    );
    shown = { text, complete: true };
  }
  const { text, complete } = shown;
  if (text.length > VALUE_TEXT_LIMIT)
    return `${text.slice(0, VALUE_TEXT_LIMIT)}… (${complete ? `${text.length} chars` : 'cut'})`;
  return complete ? text : `${text}… (cut)`;
}

/**
 * What a model reads about a turn.
 * @param {import('./index.js').TurnResult} turn
 */
function describeTurn(turn) {
  const o = turn.outcome;
  const lines = [];
  switch (o.tag) {
    case 'ok':
      lines.push(`Turn ${turn.turnNumber} finished. Value: ${show(o.value)}`);
      break;
    case 'proposed':
      lines.push(`Turn ${turn.turnNumber} finished with changes proposed for review. Value: ${show(o.value)}`);
      break;
    case 'needs':
      lines.push(`Turn ${turn.turnNumber} asked: ${show(o.question)}`);
      break;
    case 'needs-approval':
      lines.push(
        `Turn ${turn.turnNumber} is waiting for a person to approve: ${o.requests.map((r) => `${r.operation} (${r.id})`).join(', ')}`,
      );
      break;
    case 'nonconverged':
      lines.push(`Turn ${turn.turnNumber} stopped: the ${o.budget} budget is used up.`);
      break;
    default:
      lines.push(
        `Turn ${turn.turnNumber} failed: ${formatForModel({ code: /** @type {any} */ (o.code), name: o.name ?? o.code, message: o.message, line: o.line, column: o.column, frame: o.frame }, { code: true, name: false })}`,
      );
  }
  if (turn.result.output) lines.push(`Output:\n${turn.result.output}`);
  const logs = turn.result.logs.map((l) => `[${l.level}] ${l.message}`);
  if (logs.length) lines.push(`Console:\n${logs.join('\n')}`);
  if (turn.proposals.length)
    lines.push(`Proposed changes: ${turn.proposals.map((p) => `${p.kind} ${p.path}`).join(', ')}`);
  return lines.join('\n');
}

/** What a turn of a session with persistState is, as the model is told. */
const CELL_NOTE =
  'a script with top-level await whose value is the value of its last expression statement (write the value ' +
  'as the last line; return works only inside functions).';

/** What persists between turns of a session with persistState, as the model is told. */
const PERSISTENCE_NOTE =
  ' What you declare at top level (let, const, var, function, class) and everything it reaches (objects, ' +
  'arrays, Maps, Sets, functions and closures with their variables) is still there in later turns. Live host ' +
  'values are not kept: world, env, session, needs and the operations are given again in each turn, so ' +
  'call them, do not store them (a turn whose bindings hold one, or a promise or timer, fails). Objects read ' +
  'from env are live views as well: keep a copy, JSON.parse(JSON.stringify(env.x)). A turn that ' +
  'fails changes nothing: its bindings, env and world changes are dropped. A turn that ends with needs() ' +
  'keeps its env and world changes but not its new bindings.';

/**
 * The turn tool's description.
 * @param {boolean} persistState
 * @param {string[] | null} ops the allowed operations (null: all)
 */
function turnDescription(persistState, ops) {
  const globals =
    'Globals: world (read, write, list(glob), search, stat, delete, mkdir, fingerprint, exec), env (data kept across ' +
    'turns), needs(question) to ask the user, session (id, turnNumber, budgetRemaining(kind), allowed(op)) ' +
    `and the host operations${ops ? ` (allowed: ${ops.join(', ')})` : ''}.`;
  if (!persistState)
    return `Run JavaScript (the body of an async function) as the next turn of the session. ${globals} Return a value to report it.`;
  return `Run JavaScript as the next turn of the session: ${CELL_NOTE} ${globals}${PERSISTENCE_NOTE}`;
}

/**
 * @param {import('./index.js').Session} session
 * @param {{ name?: string, description?: string }} [options]
 */
function sessionTools(session, options = {}) {
  const ops = session.policy.allowedOperations;
  return createToolSet([
    {
      name: options.name ?? 'execute_turn',
      description: options.description ?? turnDescription(session.persistState, ops),
      inputSchema: {
        type: 'object',
        properties: {
          code: {
            type: 'string',
            description: session.persistState
              ? 'The JavaScript to run (a script: its last expression is the value).'
              : 'The JavaScript to run.',
          },
        },
        required: ['code'],
        additionalProperties: false,
      },
      annotations: {
        readOnlyHint: false,
        destructiveHint: !session.policy.worldRules.proposalMode,
        idempotentHint: false,
      },
      handler: async (args, context) => {
        const turn = await session.executeTurn(/** @type {string} */ (args.code), { signal: context.signal });
        const failed = turn.outcome.tag === 'error' || turn.outcome.tag === 'nonconverged';
        return {
          ok: !failed,
          content: describeTurn(turn),
          data: { turnNumber: turn.turnNumber, outcome: turn.outcome },
          ...(failed && 'code' in turn.outcome ? { code: turn.outcome.code } : {}),
        };
      },
    },
  ]);
}

module.exports = { sessionTools, describeTurn, CELL_NOTE, PERSISTENCE_NOTE };
