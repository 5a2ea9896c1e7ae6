// What every dialect shares: the factory's checks, the neutral tool set form, a dispatcher that
// never throws, and one workspace history where each mutating call is exactly one entry.
import { describe, expect, it } from 'vitest';
import { ZipWorkspace } from '../../../lib/index.js';
import { DIALECTS, type EditorDialect, editorTools } from '../../../lib/tools/dialects/index.js';
import { twoFilesPatch } from '../../../lib/native/load.js';

const unifiedDiff = (name: string, before: string, after: string) => twoFilesPatch(name, before, after, 1 << 20).text;

const ALL: EditorDialect[] = ['anthropic-text-editor', 'anthropic-memory', 'openai-apply-patch', 'mcp-filesystem'];

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    return (e as { code?: string }).code;
  }
  return undefined;
}

describe('editorTools', () => {
  it('offers the four dialects', () => {
    expect([...DIALECTS]).toEqual(ALL);
  });

  it('throws INVALID_INPUT at creation for bad options', () => {
    const ws = new ZipWorkspace();
    expect(codeOf(() => editorTools(ws, { dialect: 'vim' as EditorDialect }))).toBe('INVALID_INPUT');
    expect(codeOf(() => editorTools(ws, { dialect: 'anthropic-memory', readOnly: true } as never))).toBe(
      'INVALID_INPUT',
    );
    expect(codeOf(() => editorTools(ws, undefined as never))).toBe('INVALID_INPUT');
    expect(codeOf(() => editorTools({} as never, { dialect: 'mcp-filesystem' }))).toBe('INVALID_INPUT');
    expect(() => editorTools(ws, { dialect: 'nope' as EditorDialect })).toThrow(/unknown dialect "nope"/);
    expect(() => editorTools(ws, { dialect: 'nope' as EditorDialect })).toThrow(Error);
  });

  it.each(ALL)('%s: tools have the neutral form', (dialect) => {
    const { tools } = editorTools(new ZipWorkspace(), { dialect });
    expect(tools.length).toBeGreaterThan(0);
    for (const tool of tools) {
      expect(tool.name).toMatch(/^[a-z_]+$/);
      expect(tool.description.length).toBeGreaterThan(20);
      expect(tool.inputSchema).toMatchObject({ type: 'object' });
      for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint'] as const) {
        expect(typeof tool.annotations[hint]).toBe('boolean');
      }
      expect(typeof tool.handler).toBe('function');
    }
  });

  it.each(ALL)('%s: refuses unknown tools and never throws on garbage', async (dialect) => {
    const ws = new ZipWorkspace();
    ws.writeFile('memories/a.md', 'a\n');
    const { tools, dispatch } = editorTools(ws, { dialect });
    expect(await dispatch('rm_rf', {})).toMatchObject({ ok: false, code: 'UNKNOWN_TOOL' });
    expect(await dispatch(undefined as never, {})).toMatchObject({ ok: false, code: 'UNKNOWN_TOOL' });
    const garbage: unknown[] = [
      undefined,
      null,
      0,
      'x',
      '{"a":',
      '[]',
      [],
      { __proto__: { command: 'view' } },
      { command: {} },
    ];
    for (const tool of tools) {
      for (const args of garbage) {
        const r = await dispatch(tool.name, args);
        expect(typeof r.ok).toBe('boolean');
        expect(typeof r.content).toBe('string');
      }
      expect(await dispatch(tool.name, {}, { signal: 'no' as never })).toMatchObject({ code: 'INVALID_INPUT' });
    }
    expect(ws.readText('memories/a.md')).toBe('a\n');
  });

  it.each([
    ['anthropic-text-editor', 'str_replace_based_edit_tool', '{"command":"view","path":"/a.md","view_range":null}'],
    ['anthropic-memory', 'memory', '{"command":"view","path":"/memories/a.md","view_range":null}'],
    [
      'openai-apply-patch',
      'apply_patch',
      '{"operation":{"type":"update_file","path":"a.md","diff":"-a\\n+b\\n"},"operations":null}',
    ],
    ['mcp-filesystem', 'read_text_file', '{"path":"/a.md","head":null,"tail":null}'],
  ] as const)('%s: takes arguments as a JSON string, null meaning absent', async (dialect, tool, json) => {
    const ws = new ZipWorkspace();
    ws.writeFile('a.md', 'a\n');
    ws.writeFile('memories/a.md', 'a\n');
    const r = await editorTools(ws, { dialect }).dispatch(tool, json);
    expect(r.ok, r.content).toBe(true);
  });

  it.each(ALL)('%s: an aborted signal stops the call before it runs', async (dialect) => {
    const { tools, dispatch } = editorTools(new ZipWorkspace(), { dialect });
    const r = await dispatch(tools[0]!.name, {}, { signal: AbortSignal.abort() });
    expect(r).toMatchObject({ ok: false, code: 'CANCELLED' });
  });
});

describe('one history for every dialect', () => {
  function all(ws: ZipWorkspace) {
    const text = editorTools(ws, { dialect: 'anthropic-text-editor' });
    const memory = editorTools(ws, { dialect: 'anthropic-memory' });
    const patch = editorTools(ws, { dialect: 'openai-apply-patch' });
    const mcp = editorTools(ws, { dialect: 'mcp-filesystem' });
    return {
      edit: (args: object) => text.dispatch('str_replace_based_edit_tool', args),
      remember: (args: object) => memory.dispatch('memory', args),
      patch: (args: object) => patch.dispatch('apply_patch', args),
      mcp: (name: string, args: object) => mcp.dispatch(name, args),
    };
  }

  it('records exactly one entry per mutating call and none for reads', async () => {
    const ws = new ZipWorkspace();
    ws.writeFile('a.txt', 'one\ntwo\n');
    const d = all(ws);
    const count = () => ws.history(1000).length;
    const steps: Array<[() => Promise<{ ok: boolean }>, number]> = [
      [() => d.edit({ command: 'view', path: '/a.txt' }), 0],
      [() => d.edit({ command: 'str_replace', path: '/a.txt', old_str: 'one', new_str: 'ONE' }), 1],
      [() => d.edit({ command: 'insert', path: '/a.txt', insert_line: 2, insert_text: 'three' }), 1],
      [() => d.edit({ command: 'create', path: '/b/c.txt', file_text: 'c' }), 1],
      [() => d.edit({ command: 'undo_edit', path: '/a.txt' }), 1],
      [() => d.remember({ command: 'create', path: '/memories/m/x.md', file_text: 'x' }), 1],
      [() => d.remember({ command: 'rename', old_path: '/memories/m', new_path: '/memories/n' }), 1],
      [() => d.remember({ command: 'delete', path: '/memories/n' }), 1],
      [() => d.remember({ command: 'view', path: '/memories' }), 0],
      [
        () =>
          d.patch({
            operations: [
              { type: 'create_file', path: 'p1.txt', diff: '+1' },
              { type: 'create_file', path: 'p2.txt', diff: '+2' },
              { type: 'update_file', path: 'a.txt', diff: '-ONE\n+uno\n' },
            ],
          }),
        1,
      ],
      [() => d.mcp('edit_file', { path: '/a.txt', edits: [{ oldText: 'uno', newText: 'un' }] }), 1],
      [() => d.mcp('move_file', { source: '/b', destination: '/d' }), 1],
      [() => d.mcp('write_file', { path: '/w.txt', content: 'w' }), 1],
      [() => d.mcp('create_directory', { path: '/e/f' }), 1],
      [() => d.mcp('search_files', { path: '/', pattern: '**' }), 0],
    ];
    for (const [step, added] of steps) {
      const before = count();
      const r = await step();
      expect(r.ok, step.toString()).toBe(true);
      expect(count() - before, step.toString()).toBe(added);
    }
  });

  it('undoes edits of every dialect with ws.undo(), newest first', async () => {
    const ws = new ZipWorkspace();
    ws.writeFile('notes.txt', 'alpha\nbeta\n');
    const d = all(ws);
    await d.edit({ command: 'str_replace', path: '/notes.txt', old_str: 'alpha', new_str: 'ALPHA' });
    await d.patch({ operation: { type: 'update_file', path: 'notes.txt', diff: ' ALPHA\n-beta\n+BETA\n' } });
    await d.mcp('edit_file', { path: '/notes.txt', edits: [{ oldText: 'BETA', newText: 'gamma' }] });
    await d.remember({ command: 'create', path: '/memories/todo.md', file_text: 'x' });
    expect(ws.readText('notes.txt')).toBe('ALPHA\ngamma\n');

    ws.undo();
    expect(ws.exists('memories/todo.md')).toBe(false);
    ws.undo();
    expect(ws.readText('notes.txt')).toBe('ALPHA\nBETA\n');
    ws.undo();
    expect(ws.readText('notes.txt')).toBe('ALPHA\nbeta\n');
    ws.undo();
    expect(ws.readText('notes.txt')).toBe('alpha\nbeta\n');
    ws.redo(4);
    expect(ws.readText('notes.txt')).toBe('ALPHA\ngamma\n');
    expect(ws.exists('memories/todo.md')).toBe(true);
  });

  it("lets the text editor's undo_edit take back another dialect's edit", async () => {
    const ws = new ZipWorkspace();
    ws.writeFile('src/x.js', 'let x = 1;\n');
    const d = all(ws);
    await d.patch({ operation: { type: 'update_file', path: 'src/x.js', diff: '-let x = 1;\n+let x = 2;\n' } });
    await d.mcp('write_file', { path: '/src/y.js', content: 'y' });
    const r = await d.edit({ command: 'undo_edit', path: '/src/x.js' });
    expect(r.ok).toBe(true);
    expect(ws.readText('src/x.js')).toBe('let x = 1;\n');
    expect(ws.readText('src/y.js')).toBe('y');
  });

  it('leaves history untouched when a call fails', async () => {
    const ws = new ZipWorkspace();
    ws.writeFile('a.txt', 'a\n');
    const d = all(ws);
    const newest = ws.history(1)[0]!.id;
    const failures = [
      await d.edit({ command: 'str_replace', path: '/a.txt', old_str: 'zzz', new_str: 'y' }),
      await d.remember({ command: 'rename', old_path: '/memories/none', new_path: '/memories/x' }),
      await d.patch({
        operations: [
          { type: 'delete_file', path: 'a.txt' },
          { type: 'update_file', path: 'missing.txt', diff: '-a\n+b\n' },
        ],
      }),
      await d.mcp('edit_file', {
        path: '/a.txt',
        edits: [
          { oldText: 'a', newText: 'b' },
          { oldText: 'zzz', newText: 'y' },
        ],
      }),
      await d.mcp('move_file', { source: '/a.txt', destination: '/a.txt/b' }),
    ];
    for (const r of failures) expect(r.ok).toBe(false);
    expect(ws.history(1)[0]!.id).toBe(newest);
    expect(ws.readText('a.txt')).toBe('a\n');
    // Nothing was recorded and rolled back either: the redo stack is empty.
    expect(() => ws.redo()).toThrow(/nothing to redo/);
  });
});

describe('unified diff', () => {
  // Expected texts as the `diff` package's createTwoFilesPatch prints them.
  const head =
    'Index: /f.txt\n===================================================================\n--- /f.txt\toriginal\n+++ /f.txt\tmodified\n';

  it('splits distant changes into hunks with four lines of context', () => {
    const lines = Array.from({ length: 20 }, (_, i) => String(i + 1));
    const after = [...lines];
    after[1] = 'X';
    after[18] = 'Y';
    expect(unifiedDiff('/f.txt', `${lines.join('\n')}\n`, `${after.join('\n')}\n`)).toBe(
      `${head}@@ -1,6 +1,6 @@\n 1\n-2\n+X\n 3\n 4\n 5\n 6\n@@ -15,6 +15,6 @@\n 15\n 16\n 17\n 18\n-19\n+Y\n 20\n`,
    );
  });

  it('marks lines without a final newline', () => {
    expect(unifiedDiff('/f.txt', 'a\nb', 'a\nc')).toBe(
      `${head}@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n`,
    );
    expect(unifiedDiff('/f.txt', 'a\nb\n', 'a\nb')).toBe(
      `${head}@@ -1,2 +1,2 @@\n a\n-b\n+b\n\\ No newline at end of file\n`,
    );
  });

  it('ends the last hunk after four lines of context', () => {
    expect(unifiedDiff('/f.txt', 'a\nb\nc\nd\ne\nf\ng\n', 'A\nb\nc\nd\ne\nf\ng\n')).toBe(
      `${head}@@ -1,5 +1,5 @@\n-a\n+A\n b\n c\n d\n e\n`,
    );
  });

  it('starts an empty range one line early and merges close changes', () => {
    expect(unifiedDiff('/f.txt', '', 'x\n')).toBe(`${head}@@ -0,0 +1,1 @@\n+x\n`);
    expect(unifiedDiff('/f.txt', 'keep\nold1\nold2\nkeep2\n', 'keep\nnew\nkeep2\nadded\n')).toBe(
      `${head}@@ -1,4 +1,4 @@\n keep\n-old1\n-old2\n+new\n keep2\n+added\n`,
    );
  });
});
