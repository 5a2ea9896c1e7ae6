// The Anthropic converters against the official client: its types take the converters' output
// with no casts, and a tool-use loop runs against a stand-in API on 127.0.0.1.
import Anthropic from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { toAnthropicToolResult, toAnthropicTools, workspaceTools, ZipWorkspace } from '../../lib/index.js';
import { type FakeApi, startFakeApi } from './fake-api.js';

let api: FakeApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

const message = (content: object[], stop: string) => ({
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'test-model',
  content,
  stop_reason: stop,
  stop_sequence: null,
  usage: { input_tokens: 1, output_tokens: 1 },
});

describe('Anthropic Messages', () => {
  it('converts tools and results to the shapes the SDK types accept', () => {
    const set = workspaceTools(new ZipWorkspace(), { include: ['fs_read'] });
    const tools: Anthropic.Tool[] = toAnthropicTools(set);
    expect(tools).toEqual([
      { name: 'fs_read', description: set.tools[0]!.description, input_schema: set.tools[0]!.inputSchema },
    ]);
    const block: Anthropic.ToolResultBlockParam = toAnthropicToolResult('toolu_1', {
      ok: false,
      content: 'ERROR X: y',
    });
    expect(block).toEqual({ type: 'tool_result', tool_use_id: 'toolu_1', content: 'ERROR X: y', is_error: true });
    expect(toAnthropicToolResult('toolu_2', { ok: true, content: 'fine' }).is_error).toBe(false);
  });

  it('a tool use round trip through the @anthropic-ai/sdk client', async () => {
    const ws = new ZipWorkspace();
    const set = workspaceTools(ws, { exclude: ['js_exec'] });
    api = await startFakeApi([
      (body) => {
        expect(body.tools).toHaveLength(9);
        const mkdir = body.tools.find((t: any) => t.name === 'fs_mkdir');
        expect(mkdir.input_schema).toEqual(set.tools.find((t) => t.name === 'fs_mkdir')!.inputSchema);
        return message(
          [
            { type: 'text', text: 'Making it.' },
            { type: 'tool_use', id: 'toolu_1', name: 'fs_mkdir', input: { path: 'docs/api' } },
            { type: 'tool_use', id: 'toolu_2', name: 'js_exec', input: { path: 'a.js' } },
          ],
          'tool_use',
        );
      },
      (body) => {
        const last = body.messages.at(-1);
        expect(last.role).toBe('user');
        expect(last.content).toEqual([
          {
            type: 'tool_result',
            tool_use_id: 'toolu_1',
            content: 'created folder ~/docs/api (history #1)',
            is_error: false,
          },
          {
            type: 'tool_result',
            tool_use_id: 'toolu_2',
            content: expect.stringMatching(/^ERROR UNKNOWN_TOOL: there is no tool named "js_exec"/),
            is_error: true,
          },
        ]);
        return message([{ type: 'text', text: 'Done.' }], 'end_turn');
      },
    ]);
    const client = new Anthropic({ apiKey: 'test', baseURL: api.baseURL, maxRetries: 0 });
    const tools = toAnthropicTools(set);
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'Make a docs folder.' }];
    for (let turn = 0; turn < 3; turn++) {
      const reply = await client.messages.create({ model: 'test-model', max_tokens: 256, messages, tools });
      messages.push({ role: 'assistant', content: reply.content });
      if (reply.stop_reason !== 'tool_use') break;
      const results: Anthropic.ToolResultBlockParam[] = [];
      for (const block of reply.content) {
        if (block.type === 'tool_use') {
          results.push(toAnthropicToolResult(block.id, await set.dispatch(block.name, block.input)));
        }
      }
      messages.push({ role: 'user', content: results });
    }
    expect(api.requests.map((r) => r.url)).toEqual(['/v1/messages', '/v1/messages']);
    expect(ws.stat('docs/api').kind).toBe('dir');
  });
});
