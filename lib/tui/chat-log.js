'use strict';
// The chat log kept next to the zip (`<zip>.chat.json`): the conversation in Chat Completions
// form (without the system prompt, which is rebuilt on each start) and the tokens used so far.
// Written atomically after each turn, so a crash leaves the previous complete log.

const fs = require('node:fs');
const path = require('node:path');

const LOG_VERSION = 1;

/**
 * @typedef {import('openai/resources/chat/completions').ChatCompletionMessageParam} Message
 * @typedef {{ promptTokens: number, completionTokens: number }} TokenCount
 * @typedef {{ messages: Message[], tokens: TokenCount }} ChatLog
 */

/** @returns {TokenCount} */
const noTokens = () => ({ promptTokens: 0, completionTokens: 0 });

/** @param {unknown} v */
const count = (v) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.floor(v) : 0);

/**
 * Reads the chat log at `file`; `null` when there is none. A file that is not a chat log
 * throws (it is never overwritten by accident).
 * @param {string} file
 * @returns {ChatLog | null}
 */
function loadChatLog(file) {
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    if (/** @type {NodeJS.ErrnoException} */ (e).code === 'ENOENT') return null;
    throw e;
  }
  /** @type {unknown} */
  let data;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new Error(`${file} is not a chat log (not JSON: ${e instanceof Error ? e.message : String(e)})`);
  }
  // An array of messages is accepted too.
  const record =
    /** @type {{ messages?: unknown, tokens?: { promptTokens?: unknown, completionTokens?: unknown } }} */ (
      Array.isArray(data) ? { messages: data } : data
    );
  const messages = record && typeof record === 'object' ? record.messages : undefined;
  if (!Array.isArray(messages) || !messages.every((m) => m && typeof m === 'object' && typeof m.role === 'string')) {
    throw new Error(`${file} is not a chat log (it needs "messages": an array of {role, content} objects)`);
  }
  return {
    messages: /** @type {Message[]} */ (messages.filter((m) => m.role !== 'system')),
    tokens: {
      promptTokens: count(record.tokens?.promptTokens),
      completionTokens: count(record.tokens?.completionTokens),
    },
  };
}

/**
 * Writes the chat log atomically: a temporary file in the same folder, then a rename.
 * @param {string} file
 * @param {ChatLog & { model: string }} log
 */
function saveChatLog(file, { messages, tokens, model }) {
  const body = `${JSON.stringify({ version: LOG_VERSION, model, savedAt: new Date().toISOString(), tokens, messages }, null, 2)}\n`;
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`);
  try {
    fs.writeFileSync(tmp, body);
    fs.renameSync(tmp, file);
  } catch (e) {
    fs.rmSync(tmp, { force: true });
    throw e;
  }
}

module.exports = { loadChatLog, saveChatLog, noTokens };
