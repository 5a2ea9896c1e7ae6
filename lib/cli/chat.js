'use strict';
// `quickrealm chat --zip <file> [--base-url <url>] [--model <name>] [--chat <file>]
// [--verbose-tools]`: a chat in the terminal with a model behind any OpenAI-compatible endpoint
// (Ollama by default), the model working on a zipped workspace through the workspace tools.
// The zip is saved after each change; the chat log (`<zip>.chat.json` unless --chat says
// otherwise) after each turn, and is resumed on the next start. The screen itself is lib/tui/.

const { ErrorCode } = require('../errors.js');
const { openWorkspace } = require('./mcp.js');
const { EXIT_FAILED, EXIT_INVALID, fail } = require('./io.js');
const { loadPeer } = require('../tools/peers.js');
const { environmentWithDotEnv, resolveEndpoint } = require('../tui/config.js');
const { colorWanted } = require('../tui/style.js');
const { loadChatLog } = require('../tui/chat-log.js');
const { runChat, MAX_ROUNDS } = require('../tui/app.js');

/** @param {unknown} e */
const messageOf = (e) => (e instanceof Error ? e.message : String(e));

/**
 * @param {{ zip?: string, baseURL?: string, model?: string, chat?: string, verboseTools?: boolean }} options
 * @returns {Promise<void>}
 */
async function commandChat({ zip, baseURL, model, chat, verboseTools }) {
  if (zip === undefined || zip === '') {
    return fail(ErrorCode.InvalidInput, 'quickrealm chat needs --zip <file>', EXIT_INVALID);
  }
  const chatPath = chat !== undefined && chat !== '' ? chat : `${zip}.chat.json`;
  let ws;
  try {
    ws = openWorkspace(zip);
  } catch (e) {
    const code = /** @type {{ code?: unknown }} */ (e).code;
    return fail(typeof code === 'string' ? code : ErrorCode.InvalidInput, messageOf(e), EXIT_INVALID);
  }
  try {
    // Refuse a chat log that is not one before the screen starts (it is never overwritten).
    loadChatLog(chatPath);
  } catch (e) {
    return fail(ErrorCode.ChatLogInvalid, messageOf(e), EXIT_INVALID);
  }
  try {
    loadPeer('openai', 'openai', 'quickrealm chat');
  } catch (e) {
    return fail(ErrorCode.ModuleNotFound, messageOf(e), EXIT_FAILED);
  }
  const { env } = environmentWithDotEnv(process.cwd(), process.env);
  const endpoint = resolveEndpoint({ baseURL, model }, env);
  await runChat({
    ws,
    zipPath: zip,
    chatPath,
    ...endpoint,
    verboseTools: verboseTools === true,
    color: colorWanted(process.stdout, env),
    maxRounds: MAX_ROUNDS,
    input: process.stdin,
    output: process.stdout,
  });
}

module.exports = { commandChat };
