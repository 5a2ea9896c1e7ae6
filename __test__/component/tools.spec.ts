// getCommonTools(): execute_script and attempt_completion in the neutral tool form.
import Ajv from 'ajv';
import { describe, expect, it } from 'vitest';
import { toAnthropicToolResult, toAnthropicTools, toOpenAITools } from '../../lib/index.js';
import { SearchComponent, Store } from './fixtures.js';

describe('getCommonTools()', () => {
  it('offers execute_script and attempt_completion with JSON Schemas and annotations', () => {
    const { tools } = new SearchComponent().getCommonTools();
    expect(tools.map((t) => t.name)).toEqual(['execute_script', 'attempt_completion']);
    const ajv = new Ajv({ strict: true });
    for (const tool of tools) {
      expect(typeof tool.description).toBe('string');
      expect(typeof tool.handler).toBe('function');
      expect(ajv.validateSchema(tool.inputSchema)).toBe(true);
      expect(Object.keys(tool.annotations).sort()).toEqual(['destructiveHint', 'idempotentHint', 'readOnlyHint']);
    }
    const [exec, complete] = tools;
    expect(exec.inputSchema.required).toEqual(['script']);
    expect(exec.annotations).toEqual({ readOnlyHint: false, destructiveHint: true, idempotentHint: false });
    expect(complete.inputSchema.required).toEqual(['result']);
    expect(complete.annotations.idempotentHint).toBe(true);
    expect(ajv.compile(exec.inputSchema)({ script: 'x' })).toBe(true);
    expect(ajv.compile(exec.inputSchema)({ script: 1 })).toBe(false);
  });

  it('execute_script answers with compact text for the model and the full result as data', async () => {
    const c = new SearchComponent();
    const r = await c.getCommonTools().dispatch('execute_script', {
      script: 'console.log("hi");\nsearch_box_state.search_pattern = "tea";',
    });
    expect(r.ok).toBe(true);
    expect(r.content).toBe('The script ran. Changes:\n- search_box_state.search_pattern: "" -> "tea"\n[log] hi');
    expect(r.data).toMatchObject({
      success: true,
      patch: [{ op: 'replace', path: '/search_box_state/search_pattern' }],
    });
    expect(c.box.search_pattern).toBe('tea');
  });

  it('accepts arguments as a JSON string', async () => {
    const c = new SearchComponent();
    const r = await c
      .getCommonTools()
      .dispatch('execute_script', JSON.stringify({ script: 'search_box_state.search_pattern = "x"' }));
    expect(r.ok).toBe(true);
    expect(c.box.search_pattern).toBe('x');
  });

  it('a failing script is an error result with the code, location and frame', async () => {
    const r = await new Store()
      .getCommonTools()
      .dispatch('execute_script', { script: 'const a = 1;\nconfig.limit = 2;' });
    expect(r).toMatchObject({ ok: false, code: 'EVAL_ERROR' });
    expect(r.content).toContain(
      'ERROR EVAL_ERROR: TypeError: config is read-only: cannot set config.limit (line 2, column 1)',
    );
    expect(r.content).toContain('> 2 | config.limit = 2;');
    expect(r.content).toContain('Nothing was changed.');
  });

  it('a validation failure lists each issue', async () => {
    const r = await new Store().getCommonTools().dispatch('execute_script', { script: 'profile.address.zip = "x";' });
    expect(r).toMatchObject({ ok: false, code: 'VALIDATION_FAILED' });
    expect(r.content).toMatch(/^ERROR VALIDATION_FAILED: .*nothing was changed\.\n- profile\.address\.zip: /);
  });

  it('never shows the previous value of a write-only state, in text or data', async () => {
    const r = await new Store().getCommonTools().dispatch('execute_script', { script: 'audit.secret = "new";' });
    expect(r.ok).toBe(true);
    expect(r.content).toBe('The script ran. Changes:\n- audit.secret = "new"');
    expect(JSON.stringify(r.data)).not.toContain('hunter2');
  });

  it('attempt_completion records the completion', async () => {
    const c = new SearchComponent();
    const r = await c.getCommonTools().dispatch('attempt_completion', { result: 'Found 3 teas' });
    expect(r).toEqual({ ok: true, content: 'Completion recorded.', data: { result: 'Found 3 teas' } });
    expect(c.getCompletion()).toEqual({ result: 'Found 3 teas' });
  });

  it('dispatch never throws: unknown tools, bad JSON, missing or extra arguments', async () => {
    const { dispatch } = new SearchComponent().getCommonTools();
    expect(await dispatch('rm_rf', {})).toMatchObject({ ok: false, code: 'UNKNOWN_TOOL' });
    expect(await dispatch('execute_script', '{not json')).toMatchObject({ ok: false, code: 'INVALID_INPUT' });
    expect(await dispatch('execute_script', [])).toMatchObject({ ok: false, code: 'INVALID_INPUT' });
    expect(await dispatch('execute_script', {})).toMatchObject({
      ok: false,
      content: expect.stringContaining('script is required'),
    });
    expect(await dispatch('execute_script', { script: 'x', extra: 1 })).toMatchObject({
      ok: false,
      code: 'INVALID_INPUT',
    });
    expect(await dispatch('attempt_completion', { result: 5 })).toMatchObject({ ok: false, code: 'INVALID_INPUT' });
  });

  it('a broken component definition is reported as a failed call, not thrown', async () => {
    class Broken extends SearchComponent {
      publicStates = { 'bad-name': { ...new SearchComponent().publicStates.search_box_state } } as never;
    }
    const r = await new Broken().getCommonTools().dispatch('execute_script', { script: '1' });
    expect(r).toMatchObject({ ok: false, code: 'INVALID_INPUT' });
  });

  it('the signal stops a running script', async () => {
    const c = new (class Unbounded extends SearchComponent {
      securityConfig = { maxIterations: 2 ** 53 };
    })();
    const r = await c
      .getCommonTools()
      .dispatch('execute_script', { script: 'for (;;) {}' }, { signal: AbortSignal.timeout(50) });
    expect(r).toMatchObject({ ok: false, code: 'TIMEOUT' });
  });

  it('converts like any tool set: OpenAI (strict too) and Anthropic', async () => {
    const set = new Store().getCommonTools();
    const openai = toOpenAITools(set, { api: 'chat', strict: true });
    expect(openai.map((t) => t.function.name)).toEqual(['execute_script', 'attempt_completion']);
    expect(openai[0].function.parameters).toMatchObject({ required: ['script'], additionalProperties: false });
    const anthropic = toAnthropicTools(set);
    expect(anthropic.map((t) => t.name)).toEqual(['execute_script', 'attempt_completion']);
    const failed = await set.dispatch('execute_script', { script: 'config.limit = 1;' });
    expect(toAnthropicToolResult('toolu_1', failed)).toMatchObject({ tool_use_id: 'toolu_1', is_error: true });
  });
});
