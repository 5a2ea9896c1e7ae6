// toAISDKTools against the AI SDK itself: generateText with a mock language model calls a tool,
// and the model's next prompt carries the result (as an error when the call failed).
import { generateText, stepCountIs, type ToolSet as AIToolSet } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { codeTool, combineToolSets, toAISDKTools, workspaceTools, ZipWorkspace } from '../../lib/index.js';

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

describe('toAISDKTools', () => {
  it('a generateText loop calls the tools and feeds their results back', async () => {
    const ws = new ZipWorkspace();
    ws.writeFile('data.json', '[1, 2, 3]');
    const set = combineToolSets(workspaceTools(ws, { readOnly: true }), codeTool({ workspace: ws }));
    const tools: AIToolSet = toAISDKTools(set);
    const model = new MockLanguageModelV3({
      doGenerate: [
        {
          content: [
            {
              type: 'tool-call',
              toolCallId: 'c1',
              toolName: 'run_js',
              input: JSON.stringify({ code: "return JSON.parse(fs.readFileSync('data.json', 'utf8')).length" }),
            },
            { type: 'tool-call', toolCallId: 'c2', toolName: 'fs_read', input: JSON.stringify({ path: 7 }) },
          ],
          finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
          usage,
          warnings: [],
        },
        {
          content: [{ type: 'text', text: 'There are 3 items.' }],
          finishReason: { unified: 'stop', raw: 'stop' },
          usage,
          warnings: [],
        },
      ],
    });
    const result = await generateText({ model, tools, stopWhen: stepCountIs(3), prompt: 'How many items?' });
    expect(result.text).toBe('There are 3 items.');

    // The tools were offered with their JSON Schemas.
    const offered = model.doGenerateCalls[0]!.tools!;
    expect(offered.map((t) => t.name)).toEqual(set.tools.map((t) => t.name));
    const runJs = offered.find((t) => t.name === 'run_js');
    expect(runJs).toMatchObject({ type: 'function', inputSchema: set.tools.at(-1)!.inputSchema });

    // The second call saw both results: text for the success, error-text for the bad call.
    const toolMessage = model.doGenerateCalls[1]!.prompt.find((m) => m.role === 'tool')!;
    expect(toolMessage.content).toEqual([
      expect.objectContaining({ type: 'tool-result', toolCallId: 'c1', output: { type: 'text', value: 'value: 3' } }),
      expect.objectContaining({
        type: 'tool-result',
        toolCallId: 'c2',
        output: {
          type: 'error-text',
          value: expect.stringMatching(/^ERROR INVALID_INPUT: fs_read: path must be a string/),
        },
      }),
    ]);
    const [first] = result.steps;
    expect(first!.toolResults.map((r) => r.output)).toEqual([
      { ok: true, content: 'value: 3' },
      { ok: false, code: 'INVALID_INPUT', content: expect.stringMatching(/^ERROR INVALID_INPUT/) },
    ]);
  });

  it('passes the abort signal of the call to the tool', async () => {
    const set = codeTool();
    const tools = toAISDKTools(set);
    // @ts-expect-error the declared type is the AI SDK's Tool, not any
    tools.run_js!.noSuchField;
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const out = await tools.run_js!.execute!(
      { code: 'for (;;) {}' },
      { toolCallId: 'c1', messages: [], abortSignal: controller.signal },
    );
    expect(out).toMatchObject({ ok: false, code: 'CANCELLED' });
  });
});
