// One chat turn without the screen: the model's tool calls run, results go back in order, the
// zip is saved only after successful changes, and failures leave a log the API accepts.
import OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { afterEach, describe, expect, it } from 'vitest';
import { ZipWorkspace } from '../../lib/index.js';
import { createToolSet, type ToolSet, toOpenAITools, workspaceTools } from '../../lib/tools/index.js';
import { runTurn } from '../../lib/tui/turn.js';
import { type Answer, answersTool, type FakeOpenAI, startFakeOpenAI } from './fake-openai.js';

let api: FakeOpenAI | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

async function turn(
  script: (body: any) => Answer,
  options: { save?: () => void; ws?: ZipWorkspace; set?: ToolSet } = {},
) {
  api = await startFakeOpenAI(script);
  const ws = options.ws ?? new ZipWorkspace();
  const set = options.set ?? workspaceTools(ws);
  const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: 'go' }];
  const saves: number[] = [];
  const shown: string[] = [];
  const end = await runTurn({
    client: new OpenAI({ baseURL: api.baseURL, apiKey: 'test', maxRetries: 0 }),
    model: 'test-model',
    system: 'be brief',
    messages,
    set,
    tools: toOpenAITools(set, { api: 'chat' }),
    maxRounds: 4,
    signal: new AbortController().signal,
    save: options.save ?? (() => saves.push(ws.history(1)[0]?.id ?? 0)),
    events: {
      text: (t) => shown.push(t),
      toolResult: (call, result, saved) =>
        shown.push(`[${call.name} ${result.ok ? 'ok' : result.code}${saved ? ' saved' : ''}]`),
    },
  });
  return { end, messages, saves, shown, ws };
}

describe('runTurn', () => {
  it('runs several tool calls of one streamed answer in order and saves after each change only', async () => {
    const { end, messages, saves, shown, ws } = await turn((body) =>
      answersTool(body)
        ? { kind: 'stream', parts: ['done'] }
        : {
            kind: 'stream',
            toolCalls: [
              { id: 'a', name: 'fs_write', arguments: '{"path":"one.txt","content":"1"}' },
              { id: 'b', name: 'fs_read', arguments: '{"path":"one.txt"}' },
              { id: 'c', name: 'fs_write', arguments: '{"path":"two.txt"}' },
              { id: 'd', name: 'fs_mkdir', arguments: '{"path":"dir"}' },
            ],
          },
    );
    expect(end).toEqual({ outcome: 'answered' });
    expect(shown).toEqual([
      '[fs_write ok saved]',
      '[fs_read ok]',
      '[fs_write INVALID_INPUT]',
      '[fs_mkdir ok saved]',
      'done',
    ]);
    expect(saves).toEqual([1, 2]);
    expect(ws.readText('one.txt')).toBe('1');
    expect(messages.map((m) => [m.role, 'tool_call_id' in m ? m.tool_call_id : null])).toEqual([
      ['user', null],
      ['assistant', null],
      ['tool', 'a'],
      ['tool', 'b'],
      ['tool', 'c'],
      ['tool', 'd'],
      ['assistant', null],
    ]);
    expect(messages[4]).toMatchObject({
      content: expect.stringMatching(/^ERROR INVALID_INPUT: fs_write: content is required/),
    });
    // The system prompt goes first in every request, and is not kept in the log.
    expect(api!.requests[1].messages[0]).toEqual({ role: 'system', content: 'be brief' });
  });

  it('does not save after a change that says nothing changed (data.historyId null)', async () => {
    const set = createToolSet([
      {
        name: 'touch',
        description: 'Change something, or not.',
        inputSchema: { type: 'object', properties: { really: { type: 'boolean' } }, required: ['really'] },
        annotations: { readOnlyHint: false },
        handler: ({ really }) => ({
          ok: true,
          content: really ? 'changed' : 'no change',
          data: { historyId: really ? 7 : null },
        }),
      },
    ]);
    const { shown, saves } = await turn(
      (body) =>
        answersTool(body)
          ? { kind: 'stream', parts: ['ok'] }
          : {
              kind: 'stream',
              toolCalls: [
                { id: 'a', name: 'touch', arguments: '{"really":false}' },
                { id: 'b', name: 'touch', arguments: '{"really":true}' },
              ],
            },
      { set },
    );
    expect(shown).toEqual(['[touch ok]', '[touch ok saved]', 'ok']);
    expect(saves).toHaveLength(1);
  });

  it('reports a zip that cannot be saved to the model as SAVE_FAILED', async () => {
    const { messages, shown } = await turn(
      (body) =>
        answersTool(body)
          ? { kind: 'json', text: 'noted' }
          : { kind: 'json', toolCalls: [{ id: 'a', name: 'fs_write', arguments: '{"path":"x.txt","content":"x"}' }] },
      {
        save: () => {
          throw new Error('disk full');
        },
      },
    );
    expect(shown).toEqual(['[fs_write SAVE_FAILED]', 'noted']);
    expect(messages[2]).toEqual({
      role: 'tool',
      tool_call_id: 'a',
      content:
        'wrote 1 bytes to ~/x.txt (history #1)\nERROR SAVE_FAILED: the change was made but the zip could not be saved: disk full',
    });
  });

  it('keeps completed rounds when a later request fails, and stops at the round cap', async () => {
    const failed = await turn((body) =>
      answersTool(body)
        ? { kind: 'error', status: 503, message: 'overloaded' }
        : { kind: 'stream', toolCalls: [{ id: 'a', name: 'fs_list', arguments: '' }] },
    );
    expect(failed.end).toMatchObject({ outcome: 'failed', error: { status: 503 } });
    expect(failed.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
    await api!.close();

    const capped = await turn(() => ({ kind: 'stream', toolCalls: [{ id: 'a', name: 'fs_list', arguments: '{}' }] }));
    expect(capped.end).toEqual({ outcome: 'round-limit' });
    expect(api!.requests).toHaveLength(4);
    expect(capped.messages).toHaveLength(1 + 4 * 2);
  });
});
