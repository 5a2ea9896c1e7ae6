// The OpenAI converters against the official client: its types take the converters' output
// with no casts, and a tool-calling loop runs against a stand-in API on 127.0.0.1.
import OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import type { FunctionTool, ResponseInputItem } from 'openai/resources/responses/responses';
import { afterEach, describe, expect, it } from 'vitest';
import { toOpenAIToolMessage, toOpenAITools, workspaceTools, ZipWorkspace } from '../../lib/index.js';
import { chatCompletion, type FakeApi, startFakeApi } from './fake-api.js';

let api: FakeApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

function setup() {
  const ws = new ZipWorkspace();
  ws.writeFile('notes.md', '# todo\n- ship\n');
  return { ws, set: workspaceTools(ws) };
}

describe('OpenAI Chat Completions', () => {
  it('a strict tool call round trip through the openai client', async () => {
    const { ws, set } = setup();
    const tools: ChatCompletionTool[] = toOpenAITools(set, { api: 'chat', strict: true });
    api = await startFakeApi([
      (body) => {
        // What OpenAI would receive: every tool, strict, with a strict schema.
        expect(body.tools).toHaveLength(10);
        const write = body.tools.find((t: any) => t.function.name === 'fs_write');
        expect(write).toMatchObject({ type: 'function', function: { strict: true } });
        expect(write.function.parameters.additionalProperties).toBe(false);
        expect(write.function.parameters.required).toEqual(['path', 'content']);
        return chatCompletion(
          {
            content: null,
            tool_calls: [
              {
                id: 'call_1',
                type: 'function',
                function: { name: 'fs_read_lines', arguments: '{"path":"notes.md","start":2,"end":null}' },
              },
              {
                id: 'call_2',
                type: 'function',
                function: { name: 'fs_write', arguments: '{"path":"x.md","content":7}' },
              },
            ],
          },
          'tool_calls',
        );
      },
      (body) => {
        const toolMessages = body.messages.filter((m: any) => m.role === 'tool');
        expect(toolMessages).toEqual([
          { role: 'tool', tool_call_id: 'call_1', content: '~/notes.md lines 2-2 of 2\n2| - ship' },
          {
            role: 'tool',
            tool_call_id: 'call_2',
            content: expect.stringMatching(/^ERROR INVALID_INPUT: fs_write: content must be a string/),
          },
        ]);
        return chatCompletion({ content: 'done' }, 'stop');
      },
    ]);
    const client = new OpenAI({ apiKey: 'test', baseURL: `${api.baseURL}/v1`, maxRetries: 0 });
    const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: 'Read my notes.' }];
    for (let turn = 0; turn < 3; turn++) {
      const reply = await client.chat.completions.create({ model: 'test-model', messages, tools });
      const message = reply.choices[0]!.message;
      messages.push(message);
      if (!message.tool_calls?.length) break;
      for (const call of message.tool_calls) {
        if (call.type !== 'function') continue;
        const result = await set.dispatch(call.function.name, call.function.arguments);
        messages.push(toOpenAIToolMessage(call.id, result));
      }
    }
    expect(api.requests).toHaveLength(2);
    expect(api.requests[0]!.url).toBe('/v1/chat/completions');
    expect(messages.at(-1)).toMatchObject({ role: 'assistant', content: 'done' });
    expect(ws.exists('x.md')).toBe(false);
  });
});

describe('OpenAI Responses', () => {
  it('a function call round trip through the openai client', async () => {
    const { ws, set } = setup();
    const tools: FunctionTool[] = toOpenAITools(set, { api: 'responses', strict: true });
    const response = (output: object[]) => ({
      id: 'resp_1',
      object: 'response',
      created_at: 0,
      model: 'test-model',
      status: 'completed',
      output,
      parallel_tool_calls: true,
      tool_choice: 'auto',
      tools: [],
      error: null,
      incomplete_details: null,
      instructions: null,
      metadata: {},
      temperature: 1,
      top_p: 1,
    });
    api = await startFakeApi([
      (body) => {
        expect(body.tools[0]).toMatchObject({ type: 'function', name: 'fs_read', strict: true });
        expect(body.tools[0].parameters.additionalProperties).toBe(false);
        return response([
          {
            type: 'function_call',
            id: 'fc_1',
            call_id: 'call_9',
            name: 'fs_write',
            arguments: '{"path":"out.txt","content":"hello"}',
            status: 'completed',
          },
        ]);
      },
      (body) => {
        expect(body.input.at(-1)).toEqual({
          type: 'function_call_output',
          call_id: 'call_9',
          output: 'wrote 5 bytes to ~/out.txt (history #2)',
        });
        return response([
          {
            type: 'message',
            id: 'msg_1',
            role: 'assistant',
            status: 'completed',
            content: [{ type: 'output_text', text: 'ok', annotations: [] }],
          },
        ]);
      },
    ]);
    const client = new OpenAI({ apiKey: 'test', baseURL: `${api.baseURL}/v1`, maxRetries: 0 });
    const input: ResponseInputItem[] = [{ role: 'user', content: 'Write a file.' }];
    const first = await client.responses.create({ model: 'test-model', input, tools });
    for (const item of first.output) {
      if (item.type !== 'function_call') continue;
      input.push(item);
      input.push(
        toOpenAIToolMessage(item.call_id, await set.dispatch(item.name, item.arguments), { api: 'responses' }),
      );
    }
    const second = await client.responses.create({ model: 'test-model', input, tools });
    expect(second.output_text).toBe('ok');
    expect(api.requests.map((r) => r.url)).toEqual(['/v1/responses', '/v1/responses']);
    expect(ws.readText('out.txt')).toBe('hello');
  });
});
