// The neutral tool form: createToolSet's checking, restriction, combination and annotations.
import { describe, expect, it } from 'vitest';
import {
  combineToolSets,
  createToolSet,
  restrictToolSet,
  type ToolDefinitionInput,
  workspaceTools,
  ZipWorkspace,
} from '../../lib/index.js';
import * as toolsEntry from '../../lib/tools/index.js';

const add: ToolDefinitionInput = {
  name: 'add',
  description: 'Add two integers.',
  inputSchema: {
    type: 'object',
    properties: {
      a: { type: 'integer' },
      b: { type: 'integer' },
      note: { type: 'string', minLength: 1 },
    },
    required: ['a', 'b'],
    additionalProperties: false,
  },
  annotations: { readOnlyHint: true },
  handler: ({ a, b, note }) => `${Number(a) + Number(b)}${note === undefined ? '' : ` (${note})`}`,
};

describe('createToolSet', () => {
  it('validates, runs and answers text', async () => {
    const set = createToolSet([add]);
    expect(await set.dispatch('add', { a: 1, b: 2 })).toEqual({ ok: true, content: '3' });
    expect(await set.dispatch('add', '{"a": 1, "b": 2, "note": "x"}')).toEqual({ ok: true, content: '3 (x)' });
    const bad = await set.dispatch('add', { a: 1, b: 'two', c: 3 });
    expect(bad.ok).toBe(false);
    expect(bad.code).toBe('INVALID_INPUT');
    // Every problem at once, each naming its field.
    expect(bad.content).toMatch(/^ERROR INVALID_INPUT: add: /);
    expect(bad.content).toContain('b must be an integer, got a string');
    expect(bad.content).toContain("unknown argument 'c'; expected: a, b, note");
    expect(bad.content).toMatch(/\nHint: Check the arguments/);
  });

  it('treats null as absent for optional fields only', async () => {
    const set = createToolSet([add]);
    expect(await set.dispatch('add', { a: 1, b: 2, note: null })).toEqual({ ok: true, content: '3' });
    const r = await set.dispatch('add', { a: null, b: 2 });
    expect(r.ok).toBe(false);
    expect(r.content).toMatch(/a must be an integer, got null/);
  });

  it('names every type a field may have', async () => {
    const set = createToolSet([
      {
        ...add,
        inputSchema: {
          type: 'object',
          properties: { when: { anyOf: [{ type: 'string' }, { type: 'integer', minimum: 0 }] } },
          required: ['when'],
        },
        handler: () => 'ok',
      },
    ]);
    const r = await set.dispatch('add', { when: true });
    expect(r.content).toBe(
      'ERROR INVALID_INPUT: add: when must be a string or an integer, got a boolean\nHint: Check the arguments against the tool definition.',
    );
    expect((await set.dispatch('add', { when: -1 })).content).toMatch(/when must be at least 0, got -1/);
  });

  it('fills in annotations and the safe handler', async () => {
    const [tool] = createToolSet([{ ...add, annotations: undefined }]).tools;
    expect(tool!.annotations).toEqual({ readOnlyHint: false, destructiveHint: true, idempotentHint: false });
    // The tool's own handler checks arguments too, and never throws.
    expect(await tool!.handler({ a: 'x', b: 1 })).toMatchObject({ ok: false, code: 'INVALID_INPUT' });
  });

  it('turns thrown errors into coded results with hints', async () => {
    const set = createToolSet(
      [
        {
          ...add,
          handler: () => {
            throw Object.assign(new Error('the thing is gone'), { code: 'NOT_FOUND' });
          },
        },
        { ...add, name: 'plain', handler: () => Promise.reject(new Error('boom')) },
        { ...add, name: 'odd', handler: () => 42 as unknown as string },
      ],
      { hints: { NOT_FOUND: 'Look elsewhere.' } },
    );
    expect(await set.dispatch('add', { a: 1, b: 1 })).toEqual({
      ok: false,
      code: 'NOT_FOUND',
      content: 'ERROR NOT_FOUND: the thing is gone\nHint: Look elsewhere.',
    });
    expect(await set.dispatch('plain', { a: 1, b: 1 })).toEqual({
      ok: false,
      code: 'INTERNAL',
      content: 'ERROR INTERNAL: boom',
    });
    expect((await set.dispatch('odd', { a: 1, b: 1 })).code).toBe('INTERNAL');
  });

  it('writes every failure with formatFailure, keeping the code', async () => {
    const seen: [string, string, string | null][] = [];
    const set = createToolSet(
      [
        add,
        {
          ...add,
          name: 'gone',
          handler: () => {
            throw Object.assign(new Error('the thing is gone'), { code: 'NOT_FOUND' });
          },
        },
      ],
      {
        hints: { NOT_FOUND: 'Look elsewhere.' },
        formatFailure: (code, message, hint) => {
          seen.push([code, message, hint]);
          return `Error: ${message}`;
        },
      },
    );
    expect(await set.dispatch('gone', { a: 1, b: 1 })).toEqual({
      ok: false,
      code: 'NOT_FOUND',
      content: 'Error: the thing is gone',
    });
    expect(seen).toEqual([['NOT_FOUND', 'the thing is gone', 'Look elsewhere.']]);
    expect(await set.dispatch('add', { a: 1 })).toEqual({
      ok: false,
      code: 'INVALID_INPUT',
      content: 'Error: add: b is required',
    });
    expect(await set.dispatch('add', '{')).toMatchObject({
      code: 'INVALID_INPUT',
      content: expect.stringMatching(/^Error: the arguments of add are not valid JSON/),
    });
    expect(await set.dispatch('nope', {})).toEqual({
      ok: false,
      code: 'UNKNOWN_TOOL',
      content: 'Error: there is no tool named "nope"; available: add, gone',
    });
    expect(await set.dispatch('add', { a: 1, b: 1 }, { signal: AbortSignal.abort() })).toEqual({
      ok: false,
      code: 'CANCELLED',
      content: 'Error: add was not run: the call was cancelled',
    });
    expect(() => createToolSet([add], { formatFailure: 'x' as never })).toThrow(/formatFailure must be a function/);
  });

  it('refuses malformed definitions at creation', () => {
    expect(() => createToolSet([{ ...add, name: 'has space' }])).toThrow(/name/);
    expect(() => createToolSet([add, add])).toThrow(/two tools are named 'add'/);
    expect(() =>
      createToolSet([{ ...add, inputSchema: { type: 'string' } as unknown as ToolDefinitionInput['inputSchema'] }]),
    ).toThrow(/inputSchema/);
    expect(() => createToolSet([add], { hint: {} } as never)).toThrow(/unknown createToolSet\(\) option 'hint'/);
    expect(() =>
      createToolSet([{ ...add, inputSchema: { type: 'object', properties: { a: { type: 'integr' } } } as never }]),
    ).toThrow(/tools\[0\]\.inputSchema is not a valid JSON Schema/);
    try {
      createToolSet([{ ...add, handler: undefined as never }]);
      expect.unreachable();
    } catch (e) {
      expect((e as { code?: string }).code).toBe('INVALID_INPUT');
    }
  });

  it('never rejects, whatever the call', async () => {
    const set = createToolSet([add]);
    const calls: [unknown, unknown, unknown][] = [
      [undefined, {}, undefined],
      [42, {}, undefined],
      ['add', 7, undefined],
      ['add', '[1]', undefined],
      ['add', '{', undefined],
      ['add', { a: 1, b: 2 }, { signal: 'x' }],
      ['add', { a: 1, b: 2 }, { signal: AbortSignal.abort() }],
    ];
    for (const [name, args, options] of calls) {
      const r = await set.dispatch(name as string, args, options as never);
      expect(r.ok, JSON.stringify([name, args])).toBe(false);
      expect(r.content).toMatch(/^ERROR (UNKNOWN_TOOL|INVALID_INPUT|CANCELLED): /);
    }
  });

  it('is reachable from the main entry and from quickrealm/tools', () => {
    expect(toolsEntry.createToolSet).toBe(createToolSet);
    expect(toolsEntry.workspaceTools).toBe(workspaceTools);
  });
});

describe('restriction', () => {
  const ws = new ZipWorkspace();
  ws.writeFile('a.txt', 'hello\n');

  it('readOnly keeps only read-only tools, and dispatch refuses the others', async () => {
    const set = workspaceTools(ws, { readOnly: true });
    expect(set.tools.map((t) => t.name)).toEqual(['fs_read', 'fs_read_lines', 'fs_list', 'fs_stat', 'fs_search']);
    expect(set.tools.every((t) => t.annotations.readOnlyHint)).toBe(true);
    expect((await set.dispatch('fs_read', { path: 'a.txt' })).content).toBe('hello\n');
    const refused = await set.dispatch('fs_write', { path: 'a.txt', content: 'x' });
    expect(refused).toMatchObject({ ok: false, code: 'UNKNOWN_TOOL' });
    expect(refused.content).not.toContain('fs_write,');
    expect(ws.readText('a.txt')).toBe('hello\n');
  });

  it('include and exclude', async () => {
    const only = workspaceTools(ws, { include: ['fs_read', 'fs_delete'] });
    expect(only.tools.map((t) => t.name)).toEqual(['fs_read', 'fs_delete']);
    const without = workspaceTools(ws, { exclude: ['fs_delete', 'js_exec'] });
    expect(without.tools.map((t) => t.name)).not.toContain('fs_delete');
    expect(without.tools).toHaveLength(8);
    expect((await without.dispatch('fs_delete', { path: 'a.txt' })).code).toBe('UNKNOWN_TOOL');
    expect(ws.exists('a.txt')).toBe(true);
    const both = workspaceTools(ws, { include: ['fs_read', 'fs_write'], exclude: ['fs_write'], readOnly: true });
    expect(both.tools.map((t) => t.name)).toEqual(['fs_read']);
  });

  it('unknown options and tool names throw INVALID_INPUT at creation', () => {
    const cases: unknown[] = [
      { include: ['fs_raed'] },
      { exclude: ['rm'] },
      { readonly: true },
      { include: 'fs_read' },
      { readOnly: 'yes' },
    ];
    for (const options of cases) {
      let thrown: unknown;
      try {
        workspaceTools(ws, options as never);
      } catch (e) {
        thrown = e;
      }
      expect(thrown, JSON.stringify(options)).toBeInstanceOf(Error);
      expect((thrown as { code?: string }).code).toBe('INVALID_INPUT');
    }
    expect(() => workspaceTools(ws, { include: ['fs_raed'] } as never)).toThrow(/fs_raed/);
  });

  it('restrictToolSet and combineToolSets work on any set', async () => {
    const math = createToolSet([
      add,
      { ...add, name: 'sub', annotations: {}, handler: ({ a, b }) => `${Number(a) - Number(b)}` },
    ]);
    const readOnlyMath = restrictToolSet(math, { readOnly: true });
    expect(readOnlyMath.tools.map((t) => t.name)).toEqual(['add']);
    const combined = combineToolSets(readOnlyMath, workspaceTools(ws, { include: ['fs_read'] }));
    expect(combined.tools.map((t) => t.name)).toEqual(['add', 'fs_read']);
    expect(await combined.dispatch('add', { a: 2, b: 2 })).toEqual({ ok: true, content: '4' });
    expect((await combined.dispatch('fs_read', { path: 'a.txt' })).content).toBe('hello\n');
    expect((await combined.dispatch('sub', { a: 2, b: 2 })).code).toBe('UNKNOWN_TOOL');
    expect(() => combineToolSets(math, math)).toThrow(/two tools are named 'add'/);
  });

  it("calls still go through each set's own dispatch when restricted or combined", async () => {
    const math = createToolSet([add]);
    const seen: string[] = [];
    const audited = {
      tools: math.tools,
      dispatch: async (name: string, args: unknown) => {
        seen.push(name);
        return math.dispatch(name, args);
      },
    };
    const set = restrictToolSet(combineToolSets(audited, workspaceTools(ws, { include: ['fs_stat'] })), {
      exclude: ['fs_stat'],
    });
    expect(await set.dispatch('add', { a: 1, b: 1 })).toEqual({ ok: true, content: '2' });
    expect(seen).toEqual(['add']);
    const throwing = combineToolSets({
      tools: math.tools,
      dispatch: () => {
        throw new Error('broken set');
      },
    });
    expect(await throwing.dispatch('add', { a: 1, b: 1 })).toEqual({
      ok: false,
      code: 'INTERNAL',
      content: 'ERROR INTERNAL: broken set',
    });
  });
});

describe('workspace tool annotations', () => {
  it('say what each tool does to the workspace', () => {
    const byName = Object.fromEntries(workspaceTools(new ZipWorkspace()).tools.map((t) => [t.name, t.annotations]));
    for (const name of ['fs_read', 'fs_read_lines', 'fs_list', 'fs_stat', 'fs_search']) {
      expect(byName[name], name).toEqual({ readOnlyHint: true, destructiveHint: false, idempotentHint: true });
    }
    expect(byName.fs_write).toEqual({ readOnlyHint: false, destructiveHint: true, idempotentHint: true });
    expect(byName.fs_patch_lines).toEqual({ readOnlyHint: false, destructiveHint: true, idempotentHint: false });
    expect(byName.fs_mkdir).toEqual({ readOnlyHint: false, destructiveHint: false, idempotentHint: true });
    expect(byName.fs_delete).toEqual({ readOnlyHint: false, destructiveHint: true, idempotentHint: true });
    expect(byName.js_exec).toEqual({ readOnlyHint: false, destructiveHint: true, idempotentHint: false });
  });
});
