// OpenAI strict mode: every converted schema follows the strict rules, and every ToolSet's
// dispatch takes the nulls strict mode sends for omitted optional fields.
import { describe, expect, it } from 'vitest';
import {
  codeTool,
  type OpenAIToolsOptions,
  toOpenAITools,
  toStrictJsonSchema,
  workspaceTools,
  ZipWorkspace,
} from '../../lib/index.js';
import { nullable, strictProblems } from './strict-rules.js';

describe('toOpenAITools strict', () => {
  const ws = new ZipWorkspace();
  const sets = [workspaceTools(ws), codeTool({ workspace: ws })];

  it('every workspace tool and run_js follows the strict rules, for both APIs', () => {
    for (const set of sets) {
      const chat = toOpenAITools(set, { api: 'chat', strict: true });
      const responses = toOpenAITools(set, { api: 'responses', strict: true });
      expect(chat).toHaveLength(set.tools.length);
      for (const [i, t] of chat.entries()) {
        expect(t.type).toBe('function');
        expect(t.function.strict).toBe(true);
        expect(strictProblems(t.function.parameters, t.function.name)).toEqual([]);
        expect(responses[i]).toEqual({ type: 'function', ...t.function });
        // Optional fields became nullable; required ones did not.
        const original = set.tools[i]!.inputSchema;
        for (const [k, v] of Object.entries(t.function.parameters.properties ?? {})) {
          expect(nullable(v), `${t.function.name}.${k}`).toBe(!(original.required ?? []).includes(k));
        }
      }
    }
  });

  it('keeps the constraints strict mode accepts and leaves out open maps', () => {
    const [execTool] = toOpenAITools(workspaceTools(ws, { include: ['js_exec'] }), { strict: true });
    const props = execTool!.function.parameters.properties!;
    expect(Object.keys(props)).toEqual(['path', 'argv', 'timeoutMs']);
    expect(props.path).toEqual({ type: 'string', minLength: 1, description: 'Entry file to run, e.g. ~/src/app.js' });
    // A nullable constrained field keeps its constraint on its own branch.
    expect(props.timeoutMs).toEqual({
      anyOf: [{ type: 'integer', minimum: 1 }, { type: 'null' }],
      description: 'Wall-clock limit for the run in milliseconds.',
    });
    expect(props.argv).toEqual({
      type: ['array', 'null'],
      items: { type: 'string' },
      description: 'Arguments, seen as process.argv.slice(2).',
    });
  });

  it('without strict the schemas pass unchanged', () => {
    const set = workspaceTools(ws);
    const chat = toOpenAITools(set);
    expect(chat.map((t) => t.function.parameters)).toEqual(set.tools.map((t) => t.inputSchema));
    expect(chat[0]!.function).not.toHaveProperty('strict');
    const responses = toOpenAITools(set, { api: 'responses' });
    expect(responses[0]).toMatchObject({ strict: false, parameters: set.tools[0]!.inputSchema });
  });

  it('nested objects, enums and const are made strict too', () => {
    const strict = toStrictJsonSchema({
      type: 'object',
      properties: {
        mode: { type: 'string', enum: ['a', 'b'] },
        kind: { const: 'x' },
        opts: { type: 'object', properties: { deep: { type: 'boolean' } } },
        list: {
          type: 'array',
          uniqueItems: true,
          items: { type: 'object', properties: { n: { type: 'number', maximum: 3 } }, required: ['n'] },
        },
      },
      required: ['list'],
    });
    expect(strictProblems(strict, 'root')).toEqual([]);
    expect(strict.properties!.mode).toEqual({ type: ['string', 'null'], enum: ['a', 'b', null] });
    expect(strict.properties!.kind).toEqual({ anyOf: [{ enum: ['x'] }, { type: 'null' }] });
    expect(strict.properties!.list!.items!.properties!.n).toEqual({ type: 'number', maximum: 3 });
    // uniqueItems is refused in strict mode: it becomes words.
    expect(strict.properties!.list).toMatchObject({ type: 'array', description: '(no duplicates)' });
    expect(strict.properties!.list).not.toHaveProperty('uniqueItems');
  });

  it('takes the API as a value known only at run time', () => {
    const options: OpenAIToolsOptions = { api: Math.random() < 2 ? 'responses' : 'chat', strict: true };
    const tools = toOpenAITools(workspaceTools(ws), options);
    expect(tools[0]).toMatchObject({ type: 'function', name: 'fs_read', strict: true });
  });

  it('refuses unknown options', () => {
    expect(() => toOpenAITools(workspaceTools(ws), { strict: 'yes' } as never)).toThrow(/strict/);
    expect(() => toOpenAITools(workspaceTools(ws), { api: 'assistants' } as never)).toThrow(/api/);
    expect(() => toOpenAITools(workspaceTools(ws), { stirct: true } as never)).toThrow(/stirct/);
  });
});

describe('dispatch takes strict-mode arguments', () => {
  it('null optional fields count as absent for every workspace tool', async () => {
    const ws = new ZipWorkspace();
    ws.writeFile('src/a.js', 'console.log(1 + 1);\n');
    const { dispatch } = workspaceTools(ws);
    const calls: [string, Record<string, unknown>, RegExp][] = [
      ['fs_read_lines', { path: 'src/a.js', start: null, end: null }, /^~\/src\/a\.js lines 1-1 of 1/],
      ['fs_list', { path: null, recursive: null }, /^~\/src\/$/],
      ['fs_search', { query: 'console', path: null, context: null, maxResults: null }, /\[1 match\]/],
      ['fs_delete', { path: 'nothing', recursive: null }, /NOT_FOUND/],
      ['js_exec', { path: 'src/a.js', argv: null, timeoutMs: null }, /^exit code 0\n--- stdout ---\n2/],
      [
        'fs_patch_lines',
        { path: 'src/a.js', start: 1, end: 0, replacement: '// top', expected: null },
        /inserted 1 line at line 1/,
      ],
    ];
    for (const [name, args, pattern] of calls) {
      const r = await dispatch(name, JSON.stringify(args));
      expect(r.content, name).toMatch(pattern);
    }
  });

  it('run_js takes its arguments as OpenAI sends them', async () => {
    const r = await codeTool().dispatch('run_js', '{"code":"return 1 + 1"}');
    expect(r).toMatchObject({ ok: true, content: 'value: 2' });
  });
});
