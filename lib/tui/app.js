'use strict';
// The chat screen: a readline prompt, answers streamed as they come, one line per tool call
// (or the whole call with --verbose-tools), a status line with the tokens used after each turn.
// Everything a model or a guest program produced is printed through safeText, so terminal
// control sequences in it show as text and never move the cursor or recolour the screen.

const fs = require('node:fs');
const path = require('node:path');
const readline = require('node:readline');
const { toOpenAITools, workspaceTools } = require('../tools/index.js');
const { loadPeer } = require('../tools/peers.js');
const { createStyle, oneLine, safeText } = require('./style.js');
const { loadChatLog, saveChatLog, noTokens } = require('./chat-log.js');
const { runCommand } = require('./commands.js');
const { runTurn } = require('./turn.js');

/**
 * @typedef {import('../index.js').ZipWorkspace} Workspace
 * @typedef {import('../tools/index.js').ToolResult} ToolResult
 * @typedef {import('./chat-log.js').Message} Message
 * @typedef {import('./chat-log.js').TokenCount} TokenCount
 * @typedef {import('./turn.js').ToolCall} ToolCall
 * @typedef {{
 *   ws: Workspace,
 *   zipPath: string,
 *   chatPath: string,
 *   baseURL: string,
 *   apiKey: string,
 *   model: string,
 *   verboseTools: boolean,
 *   color: boolean,
 *   maxRounds: number,
 *   input: NodeJS.ReadStream,
 *   output: NodeJS.WriteStream,
 * }} ChatOptions
 */

/** How many model requests one message may lead to before the turn stops. */
const MAX_ROUNDS = 24;

const SYSTEM_PROMPT = [
  "You are a helpful assistant working in the user's workspace: a small folder of files, with paths",
  'written like ~/notes.md. Use the fs_* tools to look at and change files, and js_exec to run a .js,',
  '.mjs or .ts file of the workspace (its console output comes back in the result). Every change is',
  'saved and recorded in the workspace history, which the user can undo. Look before you change',
  'files, keep changes small, and answer briefly in plain text.',
].join(' ');

/** @param {number} n */
const thousands = (n) => n.toLocaleString('en-US');

/**
 * A failed request in words, with a hint where one helps.
 * @param {unknown} error
 * @param {string} baseURL
 * @param {string} model
 */
function describeError(error, baseURL, model) {
  const e = /** @type {{ status?: number, message?: string, cause?: unknown } | null | undefined} */ (error);
  const message = e?.message ?? String(error);
  // The openai client's error classes, by name (their `name` property reads 'Error').
  const kind = e && typeof e === 'object' ? e.constructor?.name : undefined;
  if (kind === 'APIConnectionTimeoutError') return `the request to ${baseURL} timed out`;
  if (kind === 'APIConnectionError') {
    const cause = rootCause(e?.cause);
    return `cannot reach ${baseURL}${cause ? ` (${cause})` : ''}: is the server running? (for Ollama: ollama serve)`;
  }
  if (typeof e?.status === 'number') {
    const hint =
      e.status === 401 || e.status === 403
        ? ' (check OPENAI_API_KEY)'
        : e.status === 404
          ? ` (check --model ${model} and --base-url; for Ollama: ollama pull ${model})`
          : '';
    return `the endpoint answered ${message}${hint}`;
  }
  return message;
}

/**
 * The innermost reason in a chain of causes: a system error code such as ECONNREFUSED, or the
 * last message.
 * @param {unknown} cause
 * @returns {string}
 */
function rootCause(cause) {
  let reason = '';
  for (let c = cause, depth = 0; c && typeof c === 'object' && depth < 8; depth++) {
    const { code, message } = /** @type {{ code?: unknown, message?: unknown }} */ (c);
    if (typeof code === 'string') return code;
    if (typeof message === 'string' && message !== '') reason = message;
    c = /** @type {{ cause?: unknown }} */ (c).cause;
  }
  return reason;
}

/**
 * Runs the chat until :quit or end of input.
 * @param {ChatOptions} options
 * @returns {Promise<void>}
 */
async function runChat(options) {
  const { ws, zipPath, chatPath, model, input, output } = options;
  const style = createStyle(options.color);
  const { OpenAI } = loadPeer('openai', 'openai', 'quickrealm chat');
  /** @type {import('openai').OpenAI} */
  const client = new OpenAI({ baseURL: options.baseURL, apiKey: options.apiKey, maxRetries: 1 });
  const set = workspaceTools(ws);
  const tools = toOpenAITools(set, { api: 'chat' });

  const resumed = loadChatLog(chatPath);
  /** @type {Message[]} */
  const messages = resumed ? resumed.messages : [];
  /** @type {TokenCount} */
  const total = resumed ? resumed.tokens : noTokens();
  /** @type {string[]} */
  const notes = [];

  // ---- writing to the screen ----
  let atLineStart = true;
  /** @param {string} text */
  const write = (text) => {
    if (text === '') return;
    output.write(text);
    atLineStart = text.endsWith('\n');
  };
  /** @param {string} text a whole line (or lines) */
  const say = (text) => {
    if (!atLineStart) write('\n');
    write(`${text}\n`);
  };

  const zipName = path.basename(zipPath);
  const fileCount = ws.list('/', { recursive: true }).filter((e) => e.kind === 'file').length;
  say(`${style.bold('quickrealm chat')} ${style.dim('·')} ${model} ${style.dim(`at ${options.baseURL}`)}`);
  say(
    `${style.dim('workspace')} ${zipPath} ${style.dim(
      fs.existsSync(zipPath) ? `(${fileCount} file${fileCount === 1 ? '' : 's'})` : '(new, saved on the first change)',
    )}`,
  );
  say(
    resumed
      ? `${style.dim('chat log')} ${chatPath} ${style.green(`(resumed ${resumed.messages.length} message${resumed.messages.length === 1 ? '' : 's'})`)}`
      : `${style.dim('chat log')} ${chatPath} ${style.dim('(new)')}`,
  );
  say(style.dim(':help lists the commands · Ctrl-D or :quit leaves'));

  const saveZip = () => {
    ws.save(zipPath);
    return zipName;
  };
  const saveLog = () => {
    try {
      saveChatLog(chatPath, { messages, tokens: total, model });
    } catch (e) {
      say(style.red(`could not save the chat log ${chatPath}: ${e instanceof Error ? e.message : String(e)}`));
    }
  };

  // ---- input ----
  const terminal = input.isTTY === true && output.isTTY === true;
  // Up and Down recall the messages of the resumed chat too (newest first, as readline keeps them).
  const recalled = messages
    .filter((m) => m.role === 'user' && typeof m.content === 'string')
    .map((m) => String(m.content).replace(/^\[[^\n]*\]\n\n/, ''))
    .filter((t) => !t.includes('\n'))
    .reverse()
    .slice(0, 200);
  const rl = readline.createInterface({ input, output, terminal, history: recalled, historySize: 200 });
  rl.setPrompt(style.bold(style.cyan('› ')));
  /** @type {string[]} */
  const queue = [];
  let closed = false;
  /** @type {(() => void) | null} */
  let wake = null;
  rl.on('line', (line) => {
    queue.push(line);
    wake?.();
  });
  rl.on('close', () => {
    closed = true;
    wake?.();
  });
  let interrupts = 0;
  rl.on('SIGINT', () => {
    if (rl.line !== '') {
      // Ctrl-C clears what was typed: to the end of the line, then all before the cursor.
      rl.write(null, { ctrl: true, name: 'e' });
      rl.write(null, { ctrl: true, name: 'u' });
      interrupts = 0;
      return;
    }
    interrupts++;
    if (interrupts >= 2) {
      rl.close();
      return;
    }
    write('\n');
    say(style.dim('(Ctrl-C again, Ctrl-D or :quit leaves)'));
    rl.prompt();
  });

  /** @returns {Promise<string | null>} */
  const nextLine = async () => {
    for (;;) {
      const line = queue.shift();
      if (line !== undefined) return line;
      if (closed) return null;
      await new Promise((resolve) => {
        wake = () => resolve(undefined);
      });
      wake = null;
    }
  };

  // ---- one turn ----
  /** @param {string} text */
  const turn = async (text) => {
    const content = notes.length > 0 ? `[${notes.splice(0).join(' ')}]\n\n${text}` : text;
    messages.push({ role: 'user', content });
    const controller = new AbortController();
    const onInterrupt = () => controller.abort();
    // While the model answers, Ctrl-C stops the turn: the terminal leaves raw mode so that it
    // reaches the process as SIGINT.
    rl.pause();
    if (input.isTTY) input.setRawMode(false);
    process.on('SIGINT', onInterrupt);
    /** @type {TokenCount} */
    const used = noTokens();
    let thinking = false;
    let reported = false;
    /** @type {ToolCall | null} */
    let openCall = null;
    try {
      const end = await runTurn({
        client,
        model,
        system: SYSTEM_PROMPT,
        messages,
        set,
        tools,
        maxRounds: options.maxRounds,
        signal: controller.signal,
        save: saveZip,
        events: {
          reasoning(delta) {
            if (!thinking) {
              if (!atLineStart) write('\n');
              write(style.dim('thinking: '));
              thinking = true;
            }
            write(style.dim(safeText(delta)));
          },
          text(delta) {
            if (thinking) {
              write('\n');
              thinking = false;
            }
            write(safeText(delta));
          },
          toolCall(call) {
            thinking = false;
            openCall = call;
            if (options.verboseTools) {
              say(`${style.magenta('⚙')} ${style.bold(safeText(call.name))}`);
              say(indent(style.dim(safeText(prettyArgs(call.arguments)))));
            } else {
              if (!atLineStart) write('\n');
              write(`${style.magenta('⚙')} ${safeText(call.name)} ${style.dim(oneLine(call.arguments, 60))}`);
            }
          },
          toolResult(_call, result, saved) {
            openCall = null;
            const mark = result.ok ? style.green('ok') : style.red(result.code ?? 'error');
            const savedNote = saved ? style.dim(` · saved ${zipName}`) : '';
            if (options.verboseTools) {
              say(`${style.dim('→')} ${mark}${savedNote}`);
              say(indent(safeText(result.content.replace(/\n$/, ''))));
            } else {
              write(` ${style.dim('→')} ${mark} ${style.dim(oneLine(result.content, 80))}${savedNote}\n`);
            }
          },
          usage(u) {
            reported = true;
            used.promptTokens += u.promptTokens;
            used.completionTokens += u.completionTokens;
          },
          cutOff(reason) {
            say(style.yellow(`(${reason})`));
          },
          // The tools changed the zip: the log keeps up with it even if the turn goes no further.
          roundDone: saveLog,
        },
      });
      if (openCall) write('\n');
      if (end.outcome === 'failed') {
        say(style.red(`error: ${safeText(describeError(end.error, options.baseURL, model))}`));
        say(style.dim('nothing is lost: your message stays in the chat; send another to go on'));
      } else if (end.outcome === 'aborted') {
        say(style.yellow('(stopped)'));
      } else if (end.outcome === 'round-limit') {
        say(
          style.yellow(
            `(stopped after ${options.maxRounds} rounds of tool calls in one turn; send a message to let the model go on)`,
          ),
        );
      } else if (!atLineStart) {
        write('\n');
      }
    } finally {
      process.removeListener('SIGINT', onInterrupt);
      if (input.isTTY) input.setRawMode(true);
    }
    total.promptTokens += used.promptTokens;
    total.completionTokens += used.completionTokens;
    saveLog();
    const thisTurn = reported
      ? `${thousands(used.promptTokens)} in, ${thousands(used.completionTokens)} out this turn`
      : 'none reported this turn';
    const count = `${messages.length} message${messages.length === 1 ? '' : 's'}`;
    say(style.dim(`tokens: ${thisTurn} · ${thousands(total.promptTokens + total.completionTokens)} in all · ${count}`));
  };

  for (;;) {
    if (!closed) rl.prompt();
    const line = await nextLine();
    if (line === null) break;
    // Typed lines echo on a terminal; piped ones are shown after their prompt.
    if (!terminal) write(`${line}\n`);
    interrupts = 0;
    const text = line.trim();
    if (text === '') continue;
    if (text.startsWith(':')) {
      const outcome = runCommand(text, { ws, style, saveZip });
      for (const l of outcome.lines) say(l);
      if (outcome.note) notes.push(outcome.note);
      if (outcome.quit) break;
      continue;
    }
    await turn(text);
  }
  if (!closed) rl.close();
  say(style.dim(`bye · chat log ${chatPath}`));
}

/** @param {string} text */
const indent = (text) =>
  text
    .split('\n')
    .map((l) => `    ${l}`)
    .join('\n');

/**
 * Tool arguments as indented JSON when they parse, as they came otherwise.
 * @param {string} args
 */
function prettyArgs(args) {
  try {
    return JSON.stringify(JSON.parse(args), null, 2);
  } catch {
    return args;
  }
}

module.exports = { runChat, describeError, MAX_ROUNDS, SYSTEM_PROMPT };
