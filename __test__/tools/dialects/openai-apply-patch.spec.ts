// OpenAI's apply_patch tool with V4A diffs: create_file diffs are `+` lines, update_file diffs
// are sections of ' ', '-' and '+' lines with optional `@@` anchors, and results read
// `Created <path>`, `Updated <path>`, `Deleted <path>` as in OpenAI's example editor for the tool.
import { describe, expect, it } from 'vitest';
import { ZipWorkspace } from '../../../lib/index.js';
import { editorTools } from '../../../lib/tools/dialects/index.js';

const APP = [
  'import os',
  '',
  'def main():',
  '    print("hi")',
  '    return 0',
  '',
  'def other():',
  '    print("hi")',
  '    return 1',
  '',
].join('\n');

function setup() {
  const ws = new ZipWorkspace();
  ws.writeFile('src/app.py', APP);
  ws.writeFile('src/old.py', 'old\n');
  const { tools, dispatch } = editorTools(ws, { dialect: 'openai-apply-patch' });
  const call = (args: unknown) => dispatch('apply_patch', args);
  return { ws, tools, call };
}

describe('openai-apply-patch: tool definition', () => {
  it('offers apply_patch with the three operation types', () => {
    const { tools } = setup();
    expect(tools.map((t) => t.name)).toEqual(['apply_patch']);
    const op = (
      tools[0]!.inputSchema as unknown as {
        properties: { operation: { properties: { type: { enum: string[] } }; required: string[] } };
      }
    ).properties.operation;
    expect(op.properties.type.enum).toEqual(['create_file', 'update_file', 'delete_file']);
    expect(op.required).toEqual(['type', 'path']);
  });
});

describe('openai-apply-patch: operations', () => {
  it('updates a file, an @@ anchor choosing between equal contexts', async () => {
    const { ws, call } = setup();
    const diff = '@@ def other():\n-    print("hi")\n+    print("bye")\n     return 1\n';
    expect(await call({ operation: { type: 'update_file', path: 'src/app.py', diff } })).toMatchObject({
      ok: true,
      content: 'Updated src/app.py',
    });
    expect(ws.readText('src/app.py')).toBe(
      APP.replace('    print("hi")\n    return 1', '    print("bye")\n    return 1'),
    );
  });

  it('keeps the cursor for an anchor it already passed, as the SDK does', async () => {
    const { ws, call } = setup();
    ws.writeFile('dup.py', 'def a():\n    return 1\ndef b():\n    return 1\ndef a():\n    return 1\n');
    // The second section's anchor was passed by the first one, so its context is searched from
    // where the first section ended: it lands in b(), not in the second a().
    const diff = '@@ def a():\n-    return 1\n+    return 10\n@@ def a():\n-    return 1\n+    return 20\n';
    expect((await call({ operation: { type: 'update_file', path: 'dup.py', diff } })).ok).toBe(true);
    expect(ws.readText('dup.py')).toBe('def a():\n    return 10\ndef b():\n    return 20\ndef a():\n    return 1\n');
  });

  it('updates several places in one diff and keeps the final newline', async () => {
    const { ws, call } = setup();
    const diff = [
      '@@',
      '-import os',
      '+import sys',
      ' ',
      ' def main():',
      '@@ def other():',
      '     print("hi")',
      '-    return 1',
      '+    return 2',
    ].join('\n');
    expect((await call({ operation: { type: 'update_file', path: 'src/app.py', diff } })).ok).toBe(true);
    expect(ws.readText('src/app.py')).toBe(APP.replace('import os', 'import sys').replace('return 1', 'return 2'));
  });

  it('creates a file from + lines', async () => {
    const { ws, call } = setup();
    expect(
      await call({ operation: { type: 'create_file', path: 'docs/readme.md', diff: '+# Title\n+\n+Body\n' } }),
    ).toMatchObject({ ok: true, content: 'Created docs/readme.md' });
    // V4A's create_file joins the + lines without adding a final newline.
    expect(ws.readText('docs/readme.md')).toBe('# Title\n\nBody');
  });

  it('deletes a file', async () => {
    const { ws, call } = setup();
    expect(await call({ operation: { type: 'delete_file', path: 'src/old.py' } })).toMatchObject({
      ok: true,
      content: 'Deleted src/old.py',
    });
    expect(ws.exists('src/old.py')).toBe(false);
  });

  it('matches context that differs only in trailing whitespace', async () => {
    const { ws, call } = setup();
    const diff = ' def main():   \n-    print("hi")\n+    print("ok")\n';
    expect((await call({ operation: { type: 'update_file', path: 'src/app.py', diff } })).ok).toBe(true);
    expect(ws.readText('src/app.py')).toContain('def main():\n    print("ok")\n');
  });

  it('keeps CRLF line endings', async () => {
    const { ws, call } = setup();
    ws.writeFile('win.txt', 'one\r\ntwo\r\nthree\r\n');
    expect(
      (await call({ operation: { type: 'update_file', path: 'win.txt', diff: ' one\n-two\n+2\n three\n' } })).ok,
    ).toBe(true);
    expect(ws.readText('win.txt')).toBe('one\r\n2\r\nthree\r\n');
  });

  it('anchors a section to the end of the file with *** End of File', async () => {
    const { ws, call } = setup();
    ws.writeFile('list.txt', 'x\nend\nx\nend\n');
    const diff = ' x\n-end\n+END\n*** End of File\n';
    expect((await call({ operation: { type: 'update_file', path: 'list.txt', diff } })).ok).toBe(true);
    expect(ws.readText('list.txt')).toBe('x\nend\nx\nEND\n');
  });
});

describe('openai-apply-patch: several operations in one call', () => {
  it('applies them in order as one history entry', async () => {
    const { ws, call } = setup();
    const entries = ws.history(100).length;
    const r = await call({
      operations: [
        { type: 'create_file', path: 'src/new.py', diff: '+x = 1\n' },
        { type: 'update_file', path: 'src/new.py', diff: '-x = 1\n+x = 2' },
        { type: 'update_file', path: 'src/app.py', diff: '-import os\n+import sys\n' },
        { type: 'delete_file', path: 'src/old.py' },
      ],
    });
    expect(r).toMatchObject({
      ok: true,
      content: 'Created src/new.py\nUpdated src/new.py\nUpdated src/app.py\nDeleted src/old.py',
    });
    expect(ws.readText('src/new.py')).toBe('x = 2');
    expect(ws.history(100).length).toBe(entries + 1);
    expect(r.data).toEqual({ historyId: ws.history(1)[0]!.id });

    ws.undo();
    expect(ws.exists('src/new.py')).toBe(false);
    expect(ws.readText('src/app.py')).toBe(APP);
    expect(ws.readText('src/old.py')).toBe('old\n');
  });

  it('applies nothing when one operation fails, naming the path and the line that does not match', async () => {
    const { ws, call } = setup();
    const newest = ws.history(1)[0]!.id;
    const entries = ws.history(100).length;
    const r = await call({
      operations: [
        { type: 'create_file', path: 'src/new.py', diff: '+x = 1\n' },
        { type: 'delete_file', path: 'src/old.py' },
        { type: 'update_file', path: 'src/app.py', diff: ' def main():\n-    print("hello")\n+    print("bye")\n' },
      ],
    });
    expect(r).toEqual({
      ok: false,
      code: 'PATCH_MISMATCH',
      content:
        'Operation 3 of 3 (update_file src/app.py) failed: Could not apply the update to src/app.py: section 1 does not match the file.\n' +
        'First line that does not match:     print("hello")\n' +
        'Expected these lines (context and removed lines), in order, at or after line 1:\n' +
        'def main():\n' +
        '    print("hello")\n' +
        'No operation was applied.',
    });
    expect(ws.exists('src/new.py')).toBe(false);
    expect(ws.readText('src/old.py')).toBe('old\n');
    expect(ws.readText('src/app.py')).toBe(APP);
    expect(ws.history(100).length).toBe(entries);
    expect(ws.history(1)[0]!.id).toBe(newest);
  });
});

describe('openai-apply-patch: errors', () => {
  it('names the path and the first context line that does not match', async () => {
    const { ws, call } = setup();
    const r = await call({ operation: { type: 'update_file', path: 'src/app.py', diff: ' import sys\n-\n+# x\n' } });
    expect(r).toEqual({
      ok: false,
      code: 'PATCH_MISMATCH',
      content:
        'Could not apply the update to src/app.py: section 1 does not match the file.\n' +
        'First line that does not match: import sys\n' +
        'Expected these lines (context and removed lines), in order, at or after line 1:\n' +
        'import sys\n',
    });
    expect(ws.readText('src/app.py')).toBe(APP);
  });

  it('requires every anchor of a nested @@ pair to exist', async () => {
    const { ws, call } = setup();
    const diff = '@@ class Missing:\n@@ def main():\n-    print("hi")\n+    print("x")\n';
    expect(await call({ operation: { type: 'update_file', path: 'src/app.py', diff } })).toEqual({
      ok: false,
      code: 'PATCH_MISMATCH',
      content: 'Could not apply the update to src/app.py: the anchor line was not found: class Missing:',
    });
    expect(ws.readText('src/app.py')).toBe(APP);
  });

  it('refuses a missing file, a missing diff and a bad create line', async () => {
    const { call } = setup();
    expect(await call({ operation: { type: 'update_file', path: 'src/nope.py', diff: '-a\n+b\n' } })).toEqual({
      ok: false,
      code: 'NOT_FOUND',
      content: 'Cannot update missing file: src/nope.py',
    });
    expect((await call({ operation: { type: 'delete_file', path: 'src/nope.py' } })).content).toBe(
      'Cannot delete missing file: src/nope.py',
    );
    expect((await call({ operation: { type: 'update_file', path: 'src/app.py' } })).content).toBe(
      'The update_file operation for src/app.py needs a diff',
    );
    const bad = await call({ operation: { type: 'create_file', path: 'x.txt', diff: '+ok\nnot a plus line\n' } });
    expect(bad).toMatchObject({ ok: false, code: 'PATCH_INVALID' });
    expect(bad.content).toContain('x.txt');
    expect(bad.content).toContain('not a plus line');
  });

  it('refuses a create below a file before writing anything', async () => {
    const { ws, call } = setup();
    const newest = ws.history(1)[0]!.id;
    const r = await call({
      operations: [
        { type: 'create_file', path: 'fresh.txt', diff: '+x' },
        { type: 'create_file', path: 'src/app.py/inner.txt', diff: '+y' },
      ],
    });
    expect(r).toMatchObject({ ok: false, code: 'NOT_A_DIRECTORY' });
    expect(r.content).toContain('src/app.py/inner.txt');
    expect(ws.exists('fresh.txt')).toBe(false);
    expect(ws.history(1)[0]!.id).toBe(newest);
    expect(() => ws.redo()).toThrow(/nothing to redo/);
  });

  it('answers garbage with INVALID_INPUT', async () => {
    const { ws, call } = setup();
    for (const args of [
      {},
      '{"operation":',
      { operation: { type: 'rename_file', path: 'a' } },
      { operation: { type: 'update_file' } },
      { operation: {}, operations: [] },
      { operations: [] },
      { operation: { type: 'create_file', path: 'a', diff: 5 } },
    ]) {
      const r = await call(args);
      expect(r.ok, JSON.stringify(args)).toBe(false);
      expect(r.code).toBe('INVALID_INPUT');
    }
    expect(ws.readText('src/app.py')).toBe(APP);
  });
});
