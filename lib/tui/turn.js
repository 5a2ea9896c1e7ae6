'use strict';
// One turn of the chat: ask the model, run the tool calls it makes, send the results back, and
// repeat until it answers without tool calls (or the round cap is reached). Streams when the
// endpoint streams, and takes a plain JSON answer when it does not. The turn adds to `messages`
// only whole rounds (the assistant message and the answer to each of its tool calls), so a
// failure part way leaves a log the API accepts.

const { ErrorCode } = require('../errors.js');
const { toOpenAIToolMessage } = require('../tools/index.js');
const { loadPeer } = require('../tools/peers.js');

/**
 * @typedef {import('openai').OpenAI} OpenAI
 * @typedef {import('openai/resources/chat/completions').ChatCompletionMessageParam} Message
 * @typedef {import('openai/resources/chat/completions').ChatCompletionAssistantMessageParam} AssistantMessage
 * @typedef {import('openai/resources/chat/completions').ChatCompletionChunk} Chunk
 * @typedef {import('openai/resources/chat/completions').ChatCompletion} Completion
 * @typedef {import('openai/resources/chat/completions').ChatCompletionTool} ChatTool
 * @typedef {import('../tools/index.js').ToolSet} ToolSet
 * @typedef {import('../tools/index.js').ToolResult} ToolResult
 * @typedef {{ id: string, name: string, arguments: string }} ToolCall
 * @typedef {{ promptTokens: number, completionTokens: number }} Usage
 * @typedef {{
 *   text?(delta: string): void,
 *   reasoning?(delta: string): void,
 *   toolCall?(call: ToolCall): void,
 *   toolResult?(call: ToolCall, result: ToolResult, saved: boolean): void,
 *   usage?(usage: Usage): void,
 *   cutOff?(reason: string): void,
 *   roundDone?(): void,
 * }} TurnEvents
 * @typedef {{
 *   client: OpenAI,
 *   model: string,
 *   system: string,
 *   messages: Message[],
 *   set: ToolSet,
 *   tools: ChatTool[],
 *   maxRounds: number,
 *   signal: AbortSignal,
 *   save(): void,
 *   events: TurnEvents,
 * }} TurnOptions
 * @typedef {{ outcome: 'answered' | 'round-limit' | 'aborted' } | { outcome: 'failed', error: unknown }} TurnEnd
 */

/**
 * @param {TurnOptions} options
 * @returns {Promise<TurnEnd>}
 */
async function runTurn(options) {
  const { messages, maxRounds, signal } = options;
  const mutating = new Set(options.set.tools.filter((t) => t.annotations.readOnlyHint === false).map((t) => t.name));
  for (let round = 1; round <= maxRounds; round++) {
    /** @type {{ content: string, calls: ToolCall[] }} */
    let reply;
    try {
      reply = await ask(options);
    } catch (error) {
      if (signal.aborted) return { outcome: 'aborted' };
      return { outcome: 'failed', error };
    }
    // An aborted stream ends quietly: what came before the interruption is dropped.
    if (signal.aborted) return { outcome: 'aborted' };
    /** @type {AssistantMessage} */
    const assistant = { role: 'assistant', content: reply.content };
    if (reply.calls.length === 0) {
      messages.push(assistant);
      return { outcome: 'answered' };
    }
    assistant.tool_calls = reply.calls.map((c) => ({
      id: c.id,
      type: /** @type {const} */ ('function'),
      function: { name: c.name, arguments: c.arguments },
    }));
    if (reply.content === '') assistant.content = null;
    /** @type {Message[]} */
    const answers = [];
    for (const call of reply.calls) {
      if (signal.aborted) {
        const cancelled = {
          ok: false,
          code: ErrorCode.Cancelled,
          content: 'ERROR CANCELLED: the user interrupted the turn',
        };
        answers.push(toOpenAIToolMessage(call.id, cancelled));
        continue;
      }
      options.events.toolCall?.(call);
      let result = await options.set.dispatch(call.name, call.arguments.trim() === '' ? '{}' : call.arguments, {
        signal,
      });
      let saved = false;
      // A change is saved at once; a result that says nothing changed (historyId null) is not.
      if (result.ok && mutating.has(call.name) && !nothingChanged(result)) {
        try {
          options.save();
          saved = true;
        } catch (e) {
          result = {
            ok: false,
            code: ErrorCode.SaveFailed,
            content: `${result.content}\nERROR SAVE_FAILED: the change was made but the zip could not be saved: ${e instanceof Error ? e.message : String(e)}`,
          };
        }
      }
      options.events.toolResult?.(call, result, saved);
      answers.push(toOpenAIToolMessage(call.id, result));
    }
    messages.push(assistant, ...answers);
    options.events.roundDone?.();
    if (signal.aborted) return { outcome: 'aborted' };
  }
  return { outcome: 'round-limit' };
}

/**
 * Whether a tool's result says it changed nothing (`data.historyId` null, as the workspace
 * tools report it).
 * @param {ToolResult} result
 */
function nothingChanged(result) {
  const data = /** @type {{ historyId?: unknown } | null | undefined} */ (result.data);
  return data !== null && typeof data === 'object' && data.historyId === null;
}

/**
 * One request: the assistant's text and tool calls, streamed to `events` as they come.
 * @param {TurnOptions} options
 * @returns {Promise<{ content: string, calls: ToolCall[] }>}
 */
async function ask({ client, model, system, messages, tools, signal, events }) {
  const controller = new AbortController();
  const onAbort = () => controller.abort();
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    const response = await client.chat.completions
      .create(
        {
          model,
          messages: [{ role: 'system', content: system }, ...messages],
          tools,
          stream: true,
          stream_options: { include_usage: true },
        },
        { signal: controller.signal },
      )
      .asResponse();
    const type = response.headers.get('content-type') ?? '';
    if (type.includes('text/event-stream')) {
      /** @type {typeof import('openai/streaming').Stream} */
      const Stream = loadPeer('openai/streaming', 'openai', 'quickrealm chat').Stream;
      return await readStream(Stream.fromSSEResponse(response, controller), events);
    }
    // An endpoint that does not stream answers with one completion.
    return readCompletion(/** @type {Completion} */ (await response.json()), events);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/**
 * @param {import('openai/streaming').Stream<Chunk>} stream
 * @param {TurnEvents} events
 */
async function readStream(stream, events) {
  let content = '';
  /** @type {ToolCall[]} */
  const calls = [];
  /** @type {Usage | null} */
  let usage = null;
  /** @type {string | null} */
  let finish = null;
  for await (const chunk of stream) {
    if (chunk.usage) usage = usageOf(chunk.usage);
    for (const choice of chunk.choices ?? []) {
      if (choice.finish_reason) finish = choice.finish_reason;
      const delta = choice.delta ?? {};
      const thinking = reasoningOf(delta);
      if (thinking) events.reasoning?.(thinking);
      if (typeof delta.content === 'string' && delta.content !== '') {
        content += delta.content;
        events.text?.(delta.content);
      }
      for (const part of delta.tool_calls ?? []) {
        // Parts of one call share its index; servers that send whole calls may leave it out.
        const index = typeof part.index === 'number' ? part.index : calls.length;
        if (!calls[index]) calls[index] = { id: '', name: '', arguments: '' };
        const call = calls[index];
        if (part.id) call.id = part.id;
        // The name comes in the first part; a server that repeats it in later parts is not doubled.
        const name = part.function?.name;
        if (name && name !== call.name) call.name += name;
        if (part.function?.arguments) call.arguments += part.function.arguments;
      }
    }
  }
  if (usage) events.usage?.(usage);
  if (finish === 'length') events.cutOff?.('the answer reached the maximum number of tokens');
  return { content, calls: completeCalls(calls) };
}

/**
 * @param {Completion} completion
 * @param {TurnEvents} events
 */
function readCompletion(completion, events) {
  const error = /** @type {{ error?: { message?: string } }} */ (/** @type {unknown} */ (completion)).error;
  if (error) throw new Error(`the endpoint answered with an error: ${error.message ?? JSON.stringify(error)}`);
  const choice = completion.choices?.[0];
  if (!choice?.message) throw new Error('the endpoint answered without a message (choices[0].message is missing)');
  const { message } = choice;
  const thinking = reasoningOf(message);
  if (thinking) events.reasoning?.(thinking);
  const content = typeof message.content === 'string' ? message.content : '';
  if (content !== '') events.text?.(content);
  if (completion.usage) events.usage?.(usageOf(completion.usage));
  if (choice.finish_reason === 'length') events.cutOff?.('the answer reached the maximum number of tokens');
  /** @type {ToolCall[]} */
  const calls = [];
  for (const c of message.tool_calls ?? []) {
    if (c.type === 'function') calls.push({ id: c.id, name: c.function.name, arguments: c.function.arguments ?? '' });
  }
  return { content, calls: completeCalls(calls) };
}

/**
 * Drops holes left by sparse indexes and gives an id to calls that came without one.
 * @param {ToolCall[]} calls
 */
function completeCalls(calls) {
  return calls
    .filter((c) => c !== undefined)
    .map((c, i) => (c.id ? c : { ...c, id: `call_${Date.now().toString(36)}_${i}` }));
}

/**
 * The reasoning text some servers send beside the answer (Ollama: `reasoning`; vLLM and
 * others: `reasoning_content`).
 * @param {object} part
 * @returns {string}
 */
function reasoningOf(part) {
  const p = /** @type {{ reasoning?: unknown, reasoning_content?: unknown }} */ (part);
  if (typeof p.reasoning === 'string') return p.reasoning;
  if (typeof p.reasoning_content === 'string') return p.reasoning_content;
  return '';
}

/**
 * @param {{ prompt_tokens?: number, completion_tokens?: number }} u
 * @returns {Usage}
 */
const usageOf = (u) => ({ promptTokens: u.prompt_tokens ?? 0, completionTokens: u.completion_tokens ?? 0 });

module.exports = { runTurn };
