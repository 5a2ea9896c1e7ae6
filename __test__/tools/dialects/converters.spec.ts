// Editor dialect tool sets through every converter: their schemas as OpenAI (strict included),
// Anthropic, AI SDK and MCP tools, and one call per dialect made end to end through a converter.
import type Anthropic from '@anthropic-ai/sdk';
import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createMcpServer,
  type EditorDialect,
  editorTools,
  type ToolSet,
  toAISDKTools,
  toAnthropicToolResult,
  toAnthropicTools,
  toOpenAIToolMessage,
  toOpenAITools,
  ZipWorkspace,
} from '../../../lib/index.js';
import * as toolsEntry from '../../../lib/tools/index.js';
import { chatCompletion, type FakeApi, startFakeApi } from '../fake-api.js';
import { connect, textOf } from '../mcp-client.js';
import { nullable, strictProblems } from '../strict-rules.js';

const ALL: EditorDialect[] = ['anthropic-text-editor', 'anthropic-memory', 'openai-apply-patch', 'mcp-filesystem'];

let api: FakeApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

const serve = (set: ToolSet) => connect(createMcpServer(set, { name: 'editor', version: '1.0.0' }));

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

describe('editorTools from the entries', () => {
  it('is the same function from the main entry and quickrealm/tools', () => {
    expect(toolsEntry.editorTools).toBe(editorTools);
  });
});

describe.each(ALL)('%s through the converters', (dialect) => {
  const set = editorTools(new ZipWorkspace(), { dialect });

  it('OpenAI: every tool, plain and strict, for both APIs; strict schemas follow the strict rules', () => {
    const chat = toOpenAITools(set, { api: 'chat' });
    expect(chat.map((t) => t.function.name)).toEqual(set.tools.map((t) => t.name));
    expect(chat.map((t) => t.function.parameters)).toEqual(set.tools.map((t) => t.inputSchema));
    const strictChat = toOpenAITools(set, { api: 'chat', strict: true });
    const strictResponses = toOpenAITools(set, { api: 'responses', strict: true });
    for (const [i, t] of strictChat.entries()) {
      expect(t.function.strict).toBe(true);
      expect(strictProblems(t.function.parameters, t.function.name)).toEqual([]);
      expect(strictResponses[i]).toEqual({ type: 'function', ...t.function });
      const original = set.tools[i]!.inputSchema;
      for (const [k, v] of Object.entries(t.function.parameters.properties ?? {})) {
        expect(nullable(v), `${t.function.name}.${k}`).toBe(!(original.required ?? []).includes(k));
      }
    }
  });

  it('Anthropic and the AI SDK: every tool with its schema', () => {
    const anthropic: Anthropic.Tool[] = toAnthropicTools(set);
    expect(anthropic).toEqual(
      set.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema })),
    );
    const ai = toAISDKTools(set);
    expect(Object.keys(ai)).toEqual(set.tools.map((t) => t.name));
    for (const t of set.tools) expect(ai[t.name]!.description).toBe(t.description);
  });

  it('MCP: every tool with its schema and annotations', async () => {
    const client = await serve(set);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(set.tools.map((t) => t.name));
    for (const [i, t] of tools.entries()) {
      expect(t.inputSchema).toEqual(set.tools[i]!.inputSchema);
      expect(t.annotations).toEqual(set.tools[i]!.annotations);
    }
    await client.close();
  });
});

describe('one call per dialect, end to end', () => {
  it('anthropic-text-editor through the AI SDK: the edit lands and the model reads the result', async () => {
    const ws = new ZipWorkspace();
    ws.writeFile('app.py', 'print("hi")\n');
    const model = new MockLanguageModelV3({
      doGenerate: [
        {
          content: [
            {
              type: 'tool-call',
              toolCallId: 'c1',
              toolName: 'str_replace_based_edit_tool',
              input: JSON.stringify({ command: 'str_replace', path: '/app.py', old_str: 'hi', new_str: 'bye' }),
            },
            {
              type: 'tool-call',
              toolCallId: 'c2',
              toolName: 'str_replace_based_edit_tool',
              input: JSON.stringify({ command: 'view', path: '/missing.py' }),
            },
          ],
          finishReason: { unified: 'tool-calls', raw: 'tool_use' },
          usage,
          warnings: [],
        },
        {
          content: [{ type: 'text', text: 'done' }],
          finishReason: { unified: 'stop', raw: 'stop' },
          usage,
          warnings: [],
        },
      ],
    });
    const tools = toAISDKTools(editorTools(ws, { dialect: 'anthropic-text-editor' }));
    const result = await generateText({ model, tools, stopWhen: stepCountIs(3), prompt: 'Say bye.' });
    expect(result.text).toBe('done');
    expect(ws.readText('app.py')).toBe('print("bye")\n');
    const toolMessage = model.doGenerateCalls[1]!.prompt.find((m) => m.role === 'tool')!;
    expect(toolMessage.content).toEqual([
      expect.objectContaining({
        toolCallId: 'c1',
        output: { type: 'text', value: expect.stringMatching(/^The file \/app\.py has been edited\./) },
      }),
      expect.objectContaining({
        toolCallId: 'c2',
        output: { type: 'error-text', value: 'The path /missing.py does not exist. Please provide a valid path.' },
      }),
    ]);
  });

  it('anthropic-memory through the Anthropic tool_result block', async () => {
    const ws = new ZipWorkspace();
    const set = editorTools(ws, { dialect: 'anthropic-memory' });
    const [tool] = toAnthropicTools(set);
    // A tool_use block as the Messages API returns it, answered with the converter's block.
    const use: Pick<Anthropic.ToolUseBlock, 'type' | 'id' | 'name' | 'input'> = {
      type: 'tool_use',
      id: 'toolu_1',
      name: tool!.name,
      input: { command: 'create', path: '/memories/notes.md', file_text: 'likes tea\n' },
    };
    const block: Anthropic.ToolResultBlockParam = toAnthropicToolResult(
      use.id,
      await set.dispatch(use.name, use.input),
    );
    expect(block).toEqual({
      type: 'tool_result',
      tool_use_id: 'toolu_1',
      content: 'File created successfully at: /memories/notes.md',
      is_error: false,
    });
    expect(ws.readText('memories/notes.md')).toBe('likes tea\n');
    const again = toAnthropicToolResult('toolu_2', await set.dispatch(use.name, use.input));
    expect(again).toEqual({
      type: 'tool_result',
      tool_use_id: 'toolu_2',
      content: 'Error: File /memories/notes.md already exists',
      is_error: true,
    });
  });

  it('openai-apply-patch through a strict Chat Completions round trip, nulls for the unused fields', async () => {
    const ws = new ZipWorkspace();
    ws.writeFile('a.txt', 'one\ntwo\n');
    const set = editorTools(ws, { dialect: 'openai-apply-patch' });
    const tools: ChatCompletionTool[] = toOpenAITools(set, { api: 'chat', strict: true });
    const args = {
      operation: { type: 'update_file', path: 'a.txt', diff: ' one\n-two\n+three\n' },
      operations: null,
    };
    api = await startFakeApi([
      (body) => {
        expect(body.tools[0].function).toMatchObject({ name: 'apply_patch', strict: true });
        return chatCompletion(
          {
            content: null,
            tool_calls: [
              { id: 'call_1', type: 'function', function: { name: 'apply_patch', arguments: JSON.stringify(args) } },
            ],
          },
          'tool_calls',
        );
      },
      (body) => {
        expect(body.messages.at(-1)).toEqual({ role: 'tool', tool_call_id: 'call_1', content: 'Updated a.txt' });
        return chatCompletion({ content: 'patched' }, 'stop');
      },
    ]);
    const client = new OpenAI({ apiKey: 'test', baseURL: `${api.baseURL}/v1`, maxRetries: 0 });
    const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: 'Change two to three.' }];
    for (let turn = 0; turn < 3; turn++) {
      const message = (await client.chat.completions.create({ model: 'test-model', messages, tools })).choices[0]!
        .message;
      messages.push(message);
      if (!message.tool_calls?.length) break;
      for (const call of message.tool_calls) {
        if (call.type !== 'function') continue;
        messages.push(toOpenAIToolMessage(call.id, await set.dispatch(call.function.name, call.function.arguments)));
      }
    }
    expect(api.requests).toHaveLength(2);
    expect(ws.readText('a.txt')).toBe('one\nthree\n');
  });

  it('mcp-filesystem through createMcpServer and the MCP client', async () => {
    const ws = new ZipWorkspace();
    ws.writeFile('src/a.js', 'let x = 1;\n');
    const client = await serve(editorTools(ws, { dialect: 'mcp-filesystem' }));
    const edited = await client.callTool({
      name: 'edit_file',
      arguments: { path: '/src/a.js', edits: [{ oldText: 'let x = 1;', newText: 'const x = 1;' }] },
    });
    expect(edited.isError).toBe(false);
    expect(textOf(edited)).toContain('-let x = 1;\n+const x = 1;');
    expect(ws.readText('src/a.js')).toBe('const x = 1;\n');
    const missing = await client.callTool({ name: 'read_text_file', arguments: { path: '/nope.txt' } });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toMatch(/^ENOENT: no such file or directory/);
    await client.close();
  });
});
