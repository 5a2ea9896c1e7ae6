'use strict';
// The quickrealm command-line tool; bin/quickrealm.js calls `main`.
//
//   quickrealm run   < request.json   deny-by-default snippet runner (JSON on stdin), see ./run.js
//   quickrealm exec  < request.json   run a file of a zipped workspace (JSON on stdin), see ./exec.js
//   quickrealm mcp --zip <file> | --sessions <folder> [--http <port>]   an MCP server (stdio or HTTP), see ./mcp.js
//   quickrealm chat --zip <file>      chat with a model working on a zipped workspace, see ./chat.js
//   quickrealm worker --db <url> --operations <module>   a fleet worker process, see ./worker.js
//   quickrealm console --dir <folder> | --db <url> [--port <n>]   the review console, see ./console.js

const { ErrorCode } = require('../errors.js');
const { parseArgs } = require('node:util');
const { EXIT_FAILED, EXIT_INVALID, fail } = require('./io.js');
const { commandRun } = require('./run.js');
const { commandExec } = require('./exec.js');
const { commandMcp } = require('./mcp.js');
const { commandChat } = require('./chat.js');
const { commandWorker } = require('./worker.js');
const { commandConsole } = require('./console.js');

const USAGE =
  'usage: quickrealm run < request.json | quickrealm exec < request.json | quickrealm mcp --zip <file> [--dialect <name>] [--sessions <folder> [--create-sessions] [--operations <module>]]' +
  ' [--http <port> [--host <address>] [--token-env <name>]]' +
  ' | quickrealm chat --zip <file> [--base-url <url>] [--model <name>] [--chat <file>] [--verbose-tools]' +
  ' | quickrealm worker --db <url> --operations <module> [--concurrency <n>] [--schema <name>] [--queue <name>]' +
  ' | quickrealm console --dir <folder> | --db <url> [--port <n>] [--host <addr>] [--base-path <path>] [--token-env <name>]';

const HELP = `${USAGE}

Commands (run and exec read one JSON request on stdin and answer JSON on stdout):
  run    run a snippet in a deny-by-default realm (only emit and read_input exist)
         request: {"source": string, "input"?: string, "limits"?: {"wall_ms"?: 1000, "output_kb"?: 64}}
         answer:  {"output": string}
  exec   run a file of a zipped workspace (ES modules, CommonJS, TypeScript)
         request: {"zipBase64": string, "entryPath": string, "argv"?: [], "env"?: {}, "timeoutMs"?: number}
         answer:  {"ok", "stdout", "stderr", "exitCode", "zipBase64", "error"?}
  mcp    serve a zipped workspace and/or stored sessions to an MCP client, over stdio or HTTP:
         the workspace tools (fs_*, js_exec), run_js, and with --dialect an editor dialect's tools;
         the zip is saved after each change (a missing file starts an empty workspace)
         --zip <file>          the workspace archive
         --dialect <name>      anthropic-text-editor, anthropic-memory, openai-apply-patch or mcp-filesystem
                               (a dialect tool named like a workspace tool or run_js replaces it)
         --sessions <folder>   sessions kept in this folder as tools: execute_turn, list_proposals,
                               approve, reject, resume (each takes a sessionId)
         --create-sessions     execute_turn with a new sessionId creates the session (else NOT_FOUND)
         --operations <file>   a module exporting \`operations\` the sessions can call (and optionally
                               \`snapshotKey\`, and \`session\`: options of created sessions)
         --http <port>         serve stateless Streamable HTTP at http://<host>:<port>/mcp (0: any free port)
         --host <address>      the address to listen on (default 127.0.0.1; 0.0.0.0 needs --token-env)
         --token-env <name>    require "Authorization: Bearer <token>", the token read from this variable
         SIGTERM or SIGINT lets running requests finish, then exits.
  chat   chat in the terminal with a model behind an OpenAI-compatible endpoint (Ollama by default)
         that works on a zipped workspace with the workspace tools; the zip is saved after each
         change, the chat log after each turn (and resumed on the next start)
         --zip <file>       the workspace archive (required; a missing file starts an empty one)
         --base-url <url>   the endpoint (default: OPENAI_BASE_URL, else OLLAMA_HOST + /v1,
                            else http://127.0.0.1:11434/v1); the key is OPENAI_API_KEY
         --model <name>     the model (default gpt-oss:20b)
         --chat <file>      the chat log (default <zip>.chat.json)
         --verbose-tools    show tool arguments and results in full
         A .env file in the current folder fills in unset variables; NO_COLOR=1 turns colour off.
         In the chat: :history [n], :diff <id>, :undo [n], :redo [n], :restore <id>, :help, :quit
  worker run turns of sessions kept in PostgreSQL, taken from the fleet's queue (Node 22 or later)
         --db <url>           the PostgreSQL connection string (required)
         --operations <file>  a module exporting \`operations\` (and optionally \`snapshotKey\`, \`fleet\`)
         --concurrency <n>    turns at a time (default 1)
         --schema <name>      the tables' schema (default quickrealm)
         --queue <name>       the queue (default quickrealm-turns)
         SIGTERM or SIGINT lets running turns finish, then exits.
  console serve the review console (sessions, diffs, approvals, audit) over HTTP
         --dir <folder> | --db <url>  the sessions: a session folder, or PostgreSQL (--schema <name>)
         --port <n>                   default 8787; --host <addr>: default 127.0.0.1
         --base-path <path>           where it is mounted (default /)
         --token-env <name>           a variable holding a token (16+ characters): pages and actions
                                      then need it (Authorization: Bearer, or sign in at <base>/login)
                                      and reviewers may act; without it the console is read-only
         --snapshot-key-env <name>    a variable holding the sessions' snapshot key

Failures are one line of JSON on stderr, {"code", "message"}: exit 1 for a failed run, 2 for a
malformed request.

Options:
  -h, --help     show this help
  -v, --version  print the version`;

/** The package's version, from its package.json. */
function version() {
  return /** @type {{ version: string }} */ (require('../../package.json')).version;
}

/**
 * @param {string[]} argv the arguments after the script name
 * @returns {void | Promise<void>}
 */
function dispatch(argv) {
  /**
   * @type {{
   *   values: {
   *     help?: boolean, version?: boolean, zip?: string, dialect?: string,
   *     'base-url'?: string, model?: string, chat?: string, 'verbose-tools'?: boolean,
   *     db?: string, operations?: string, concurrency?: string, schema?: string, queue?: string,
   *     http?: string, host?: string, 'token-env'?: string, sessions?: string, 'create-sessions'?: boolean,
   *     dir?: string, port?: string, 'base-path'?: string, 'snapshot-key-env'?: string,
   *   },
   *   positionals: string[],
   * }}
   */
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'v' },
        zip: { type: 'string' },
        dialect: { type: 'string' },
        'base-url': { type: 'string' },
        model: { type: 'string' },
        chat: { type: 'string' },
        'verbose-tools': { type: 'boolean' },
        db: { type: 'string' },
        operations: { type: 'string' },
        concurrency: { type: 'string' },
        schema: { type: 'string' },
        queue: { type: 'string' },
        http: { type: 'string' },
        host: { type: 'string' },
        'token-env': { type: 'string' },
        sessions: { type: 'string' },
        'create-sessions': { type: 'boolean' },
        dir: { type: 'string' },
        port: { type: 'string' },
        'base-path': { type: 'string' },
        'snapshot-key-env': { type: 'string' },
      },
    });
  } catch (e) {
    return fail(ErrorCode.InvalidInput, `${e instanceof Error ? e.message : String(e)}. ${USAGE}`, EXIT_INVALID);
  }
  if (parsed.values.help) {
    process.stdout.write(`${HELP}\n`);
    return;
  }
  if (parsed.values.version) {
    process.stdout.write(`${version()}\n`);
    return;
  }
  const [command, ...rest] = parsed.positionals;
  const { zip, dialect } = parsed.values;
  // Each option and the commands it belongs to.
  /** @type {[string, unknown, string[]][]} */
  const owned = [
    ['zip', zip, ['mcp', 'chat']],
    ['dialect', dialect, ['mcp']],
    ['base-url', parsed.values['base-url'], ['chat']],
    ['model', parsed.values.model, ['chat']],
    ['chat', parsed.values.chat, ['chat']],
    ['verbose-tools', parsed.values['verbose-tools'], ['chat']],
    ['db', parsed.values.db, ['worker', 'console']],
    ['operations', parsed.values.operations, ['worker', 'mcp']],
    ['concurrency', parsed.values.concurrency, ['worker']],
    ['schema', parsed.values.schema, ['worker', 'console']],
    ['queue', parsed.values.queue, ['worker']],
    ['http', parsed.values.http, ['mcp']],
    ['host', parsed.values.host, ['mcp', 'console']],
    ['token-env', parsed.values['token-env'], ['mcp', 'console']],
    ['sessions', parsed.values.sessions, ['mcp']],
    ['create-sessions', parsed.values['create-sessions'], ['mcp']],
    ['dir', parsed.values.dir, ['console']],
    ['port', parsed.values.port, ['console']],
    ['base-path', parsed.values['base-path'], ['console']],
    ['snapshot-key-env', parsed.values['snapshot-key-env'], ['console']],
  ];
  for (const [name, value, commands] of owned) {
    if (value !== undefined && !commands.includes(command)) {
      return fail(
        ErrorCode.InvalidInput,
        `--${name} belongs to ${commands.map((c) => `quickrealm ${c}`).join(' and ')}. ${USAGE}`,
        EXIT_INVALID,
      );
    }
  }
  if (command === 'mcp' && rest.length === 0) {
    const v = parsed.values;
    return commandMcp(
      {
        zip,
        dialect,
        http: v.http,
        host: v.host,
        tokenEnv: v['token-env'],
        sessions: v.sessions,
        createSessions: v['create-sessions'],
        operations: v.operations,
      },
      version(),
    );
  }
  if (command === 'chat' && rest.length === 0) {
    return commandChat({
      zip,
      baseURL: parsed.values['base-url'],
      model: parsed.values.model,
      chat: parsed.values.chat,
      verboseTools: parsed.values['verbose-tools'],
    });
  }
  if (command === 'worker' && rest.length === 0) {
    const { db, operations, concurrency, schema, queue } = parsed.values;
    return commandWorker({ db, operations, concurrency, schema, queue });
  }
  if (command === 'console' && rest.length === 0) {
    const v = parsed.values;
    return commandConsole({
      dir: v.dir,
      db: v.db,
      schema: v.schema,
      port: v.port,
      host: v.host,
      basePath: v['base-path'],
      tokenEnv: v['token-env'],
      snapshotKeyEnv: v['snapshot-key-env'],
    });
  }
  if (rest.length > 0) {
    return fail(
      ErrorCode.InvalidInput,
      `unexpected argument '${rest[0]}': the request is read from stdin. ${USAGE}`,
      EXIT_INVALID,
    );
  }
  if (command === 'run') return commandRun();
  if (command === 'exec') return commandExec();
  fail(ErrorCode.InvalidInput, command ? `unknown command '${command}'. ${USAGE}` : USAGE, EXIT_INVALID);
}

/**
 * Runs one command; the outcome is written to stdout/stderr and `process.exitCode`. A bug in a
 * command is reported as INTERNAL, never as an unhandled rejection.
 * @param {string[]} argv the arguments after the script name
 * @returns {Promise<void>}
 */
function main(argv) {
  return Promise.resolve()
    .then(() => dispatch(argv))
    .catch((e) => {
      fail(ErrorCode.Internal, `quickrealm bug: ${e?.message ? e.message : String(e)}`, EXIT_FAILED);
    });
}

module.exports = { main, USAGE };
