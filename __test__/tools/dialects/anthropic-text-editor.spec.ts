// Golden outputs of Anthropic's text editor tool (str_replace_based_edit_tool), written from the
// formats of Anthropic's reference implementation: views as `cat -n` prints them (line number
// right-aligned in 6 columns, a tab), and its exact sentences.
import { describe, expect, it } from 'vitest';
import { ZipWorkspace } from '../../../lib/index.js';
import { editorTools } from '../../../lib/tools/dialects/index.js';

const APP = 'import os\n\ndef greet(name):\n    return "hi " + name\n\nprint(greet("x"))\n';
const TOOL = 'str_replace_based_edit_tool';

function setup() {
  const ws = new ZipWorkspace();
  ws.writeFile('repo/app.py', APP);
  ws.writeFile('repo/lib/util.py', 'X = 1\n');
  ws.writeFile('repo/lib/deep/more/z.py', 'Z = 1\n');
  ws.writeFile('repo/.git/config', '[core]\n');
  const { tools, dispatch } = editorTools(ws, { dialect: 'anthropic-text-editor' });
  const call = (args: unknown) => dispatch(TOOL, args);
  return { ws, tools, call };
}

describe('anthropic-text-editor: tool definition', () => {
  it('offers one tool with the five commands', () => {
    const { tools } = setup();
    expect(tools.map((t) => t.name)).toEqual([TOOL]);
    const schema = tools[0]!.inputSchema as { properties: Record<string, { enum?: string[] }>; required: string[] };
    expect(schema.properties.command!.enum).toEqual(['view', 'create', 'str_replace', 'insert', 'undo_edit']);
    expect(schema.required).toEqual(['command', 'path']);
    for (const key of ['file_text', 'old_str', 'new_str', 'insert_line', 'insert_text', 'view_range']) {
      expect(schema.properties).toHaveProperty(key);
    }
    expect(tools[0]!.annotations).toEqual({ readOnlyHint: false, destructiveHint: true, idempotentHint: false });
  });
});

describe('anthropic-text-editor: view', () => {
  it('shows a file as cat -n does', async () => {
    const { call } = setup();
    expect(await call({ command: 'view', path: '/repo/app.py' })).toEqual({
      ok: true,
      content:
        "Here's the result of running `cat -n` on /repo/app.py:\n" +
        '     1\timport os\n' +
        '     2\t\n' +
        '     3\tdef greet(name):\n' +
        '     4\t    return "hi " + name\n' +
        '     5\t\n' +
        '     6\tprint(greet("x"))\n',
    });
  });

  it('shows a range of lines, -1 meaning the end', async () => {
    const { call } = setup();
    const middle = await call({ command: 'view', path: '/repo/app.py', view_range: [3, 4] });
    expect(middle.content).toBe(
      'Here\'s the result of running `cat -n` on /repo/app.py:\n     3\tdef greet(name):\n     4\t    return "hi " + name\n',
    );
    const tail = await call({ command: 'view', path: '/repo/app.py', view_range: [5, -1] });
    expect(tail.content).toBe(
      'Here\'s the result of running `cat -n` on /repo/app.py:\n     5\t\n     6\tprint(greet("x"))\n',
    );
  });

  it('lists a directory two levels deep without hidden items', async () => {
    const { call } = setup();
    expect((await call({ command: 'view', path: '/repo' })).content).toBe(
      "Here's the files and directories up to 2 levels deep in /repo, excluding hidden items:\n" +
        '/repo\n/repo/app.py\n/repo/lib\n/repo/lib/deep\n/repo/lib/util.py\n\n',
    );
  });

  it('refuses out-of-range view_range values with the reference wording', async () => {
    const { call } = setup();
    const first = await call({ command: 'view', path: '/repo/app.py', view_range: [0, 2] });
    expect(first).toEqual({
      ok: false,
      code: 'RANGE',
      content:
        'Invalid `view_range`: [0, 2]. Its first element `0` should be within the range of lines of the file: [1, 6]',
    });
    expect((await call({ command: 'view', path: '/repo/app.py', view_range: [2, 9] })).content).toBe(
      'Invalid `view_range`: [2, 9]. Its second element `9` should be smaller than the number of lines in the file: `6`',
    );
    expect((await call({ command: 'view', path: '/repo/app.py', view_range: [4, 2] })).content).toBe(
      'Invalid `view_range`: [4, 2]. Its second element `2` should be larger or equal than its first `4`',
    );
    expect((await call({ command: 'view', path: '/repo/app.py', view_range: [1] })).content).toBe(
      'Invalid `view_range`. It should be a list of two integers.',
    );
    expect((await call({ command: 'view', path: '/repo', view_range: [1, 2] })).content).toBe(
      'The `view_range` parameter is not allowed when `path` points to a directory.',
    );
  });

  it('accepts the workspace path forms and a null view_range', async () => {
    const { call } = setup();
    for (const path of ['repo/app.py', '~/repo/app.py', '/repo/app.py']) {
      const r = await call({ command: 'view', path, view_range: null });
      expect(r.ok).toBe(true);
      expect(r.content).toContain('     3\tdef greet(name):\n');
    }
  });

  it('lists the workspace root with paths from /', async () => {
    const ws = new ZipWorkspace();
    ws.writeFile('a.txt', 'a');
    ws.writeFile('d/b.txt', 'b');
    const { dispatch } = editorTools(ws, { dialect: 'anthropic-text-editor' });
    expect((await dispatch(TOOL, { command: 'view', path: '/' })).content).toBe(
      "Here's the files and directories up to 2 levels deep in /, excluding hidden items:\n/\n/a.txt\n/d\n/d/b.txt\n\n",
    );
  });

  it('clips a long view at a line boundary with a note', async () => {
    const { ws, call } = setup();
    ws.writeFile('repo/big.txt', `${'x'.repeat(99)}\n`.repeat(300));
    const r = await call({ command: 'view', path: '/repo/big.txt' });
    expect(r.ok).toBe(true);
    expect(r.content.length).toBeLessThan(16_500);
    expect(r.content).toMatch(/\n +\d+\tx{99}\n<response clipped><NOTE>[^\n]*view_range[^\n]*<\/NOTE>\n$/);
  });

  it('refuses binary files', async () => {
    const { ws, call } = setup();
    ws.writeFile('repo/blob.bin', new Uint8Array([0xff, 0xfe, 0x00, 0x80]));
    expect(await call({ command: 'view', path: '/repo/blob.bin' })).toEqual({
      ok: false,
      code: 'NOT_TEXT',
      content: 'The file /repo/blob.bin is not UTF-8 text and cannot be edited with this tool.',
    });
  });

  it('reports a missing path', async () => {
    const { call } = setup();
    expect(await call({ command: 'view', path: '/repo/nope.py' })).toEqual({
      ok: false,
      code: 'NOT_FOUND',
      content: 'The path /repo/nope.py does not exist. Please provide a valid path.',
    });
  });
});

describe('anthropic-text-editor: str_replace', () => {
  it('replaces the one occurrence and shows a snippet', async () => {
    const { ws, call } = setup();
    const r = await call({
      command: 'str_replace',
      path: '/repo/app.py',
      old_str: '    return "hi " + name',
      new_str: '    return f"hi {name}"',
    });
    expect(r.content).toBe(
      "The file /repo/app.py has been edited. Here's the result of running `cat -n` on a snippet of /repo/app.py:\n" +
        '     1\timport os\n' +
        '     2\t\n' +
        '     3\tdef greet(name):\n' +
        '     4\t    return f"hi {name}"\n' +
        '     5\t\n' +
        '     6\tprint(greet("x"))\n' +
        'Review the changes and make sure they are as expected. Edit the file again if necessary.',
    );
    expect(r.ok).toBe(true);
    expect(ws.readText('repo/app.py')).toBe(APP.replace('return "hi " + name', 'return f"hi {name}"'));
    expect(r.data).toEqual({ historyId: ws.history(1)[0]!.id });
  });

  it('refuses no match and several matches, naming the lines, and changes nothing', async () => {
    const { ws, call } = setup();
    const entries = ws.history(100).length;
    expect(await call({ command: 'str_replace', path: '/repo/app.py', old_str: 'nothing here', new_str: 'x' })).toEqual(
      {
        ok: false,
        code: 'NO_MATCH',
        content: 'No replacement was performed, old_str `nothing here` did not appear verbatim in /repo/app.py.',
      },
    );
    expect(await call({ command: 'str_replace', path: '/repo/app.py', old_str: 'greet', new_str: 'hello' })).toEqual({
      ok: false,
      code: 'AMBIGUOUS_MATCH',
      content:
        'No replacement was performed. Multiple occurrences of old_str `greet` in lines [3, 6]. Please ensure it is unique',
    });
    expect(ws.readText('repo/app.py')).toBe(APP);
    expect(ws.history(100).length).toBe(entries);
  });

  it('matches across lines and deletes when new_str is left out', async () => {
    const { ws, call } = setup();
    const r = await call({ command: 'str_replace', path: '/repo/app.py', old_str: '\nprint(greet("x"))\n' });
    expect(r.ok).toBe(true);
    expect(ws.readText('repo/app.py')).toBe('import os\n\ndef greet(name):\n    return "hi " + name\n');
  });

  it('refuses directories', async () => {
    const { call } = setup();
    expect(await call({ command: 'str_replace', path: '/repo/lib', old_str: 'a', new_str: 'b' })).toEqual({
      ok: false,
      code: 'IS_A_DIRECTORY',
      content: 'The path /repo/lib is a directory and only the `view` command can be used on directories',
    });
  });

  it('is undone by ws.undo() as one history entry', async () => {
    const { ws, call } = setup();
    const entries = ws.history(100).length;
    await call({ command: 'str_replace', path: '/repo/app.py', old_str: 'import os', new_str: 'import sys' });
    expect(ws.history(100).length).toBe(entries + 1);
    ws.undo();
    expect(ws.readText('repo/app.py')).toBe(APP);
  });
});

describe('anthropic-text-editor: create and insert', () => {
  it('creates a new file, missing folders included, and refuses an existing one', async () => {
    const { ws, call } = setup();
    expect(await call({ command: 'create', path: '/repo/docs/notes.txt', file_text: 'hello\n' })).toMatchObject({
      ok: true,
      content: 'File created successfully at: /repo/docs/notes.txt',
    });
    expect(ws.readText('repo/docs/notes.txt')).toBe('hello\n');
    expect(await call({ command: 'create', path: '/repo/app.py', file_text: 'x' })).toEqual({
      ok: false,
      code: 'EXISTS',
      content: 'File already exists at: /repo/app.py. Cannot overwrite files using command `create`.',
    });
    expect((await call({ command: 'create', path: '/repo/x.txt' })).content).toBe(
      'Parameter `file_text` is required for command: create',
    );
  });

  it('inserts after a line and shows the snippet', async () => {
    const { ws, call } = setup();
    const r = await call({ command: 'insert', path: '/repo/app.py', insert_line: 1, insert_text: 'import sys\n' });
    expect(r.content).toBe(
      "The file /repo/app.py has been edited. Here's the result of running `cat -n` on a snippet of the edited file:\n" +
        '     1\timport os\n' +
        '     2\timport sys\n' +
        '     3\t\n' +
        '     4\tdef greet(name):\n' +
        '     5\t    return "hi " + name\n' +
        '     6\t\n' +
        'Review the changes and make sure they are as expected (correct indentation, no duplicate lines, etc). ' +
        'Edit the file again if necessary.',
    );
    expect(ws.readText('repo/app.py')).toBe(`import os\nimport sys\n${APP.slice('import os\n'.length)}`);
  });

  it('inserts at the top with 0 and at the end, taking new_str too', async () => {
    const { ws, call } = setup();
    expect(
      (await call({ command: 'insert', path: '/repo/app.py', insert_line: 0, new_str: '#!/usr/bin/env python' })).ok,
    ).toBe(true);
    expect((await call({ command: 'insert', path: '/repo/app.py', insert_line: 7, insert_text: '# end' })).ok).toBe(
      true,
    );
    expect(ws.readText('repo/app.py')).toBe(`#!/usr/bin/env python\n${APP}# end\n`);
  });

  it('refuses an insert_line outside the file', async () => {
    const { call } = setup();
    expect(await call({ command: 'insert', path: '/repo/app.py', insert_line: 7, insert_text: 'x' })).toEqual({
      ok: false,
      code: 'RANGE',
      content: 'Invalid `insert_line` parameter: 7. It should be within the range of lines of the file: [0, 6]',
    });
    expect((await call({ command: 'insert', path: '/repo/app.py', insert_text: 'x' })).content).toBe(
      'Parameter `insert_line` is required for command: insert',
    );
  });
});

describe('anthropic-text-editor: undo_edit', () => {
  it('steps back through the edits of that file, each undo a history entry', async () => {
    const { ws, call } = setup();
    await call({ command: 'str_replace', path: '/repo/app.py', old_str: 'import os', new_str: 'import sys' });
    ws.writeFile('repo/lib/util.py', 'X = 2\n'); // a later change to another file stays
    await call({ command: 'insert', path: '/repo/app.py', insert_line: 0, insert_text: '# top' });

    const first = await call({ command: 'undo_edit', path: '/repo/app.py' });
    const afterReplace = APP.replace('import os', 'import sys');
    expect(first.content).toBe(
      "Last edit to /repo/app.py undone successfully. Here's the result of running `cat -n` on /repo/app.py:\n" +
        '     1\timport sys\n' +
        '     2\t\n' +
        '     3\tdef greet(name):\n' +
        '     4\t    return "hi " + name\n' +
        '     5\t\n' +
        '     6\tprint(greet("x"))\n',
    );
    expect(ws.readText('repo/app.py')).toBe(afterReplace);
    expect(ws.readText('repo/lib/util.py')).toBe('X = 2\n');

    expect((await call({ command: 'undo_edit', path: '/repo/app.py' })).ok).toBe(true);
    expect(ws.readText('repo/app.py')).toBe(APP);

    // The edit before that created the file: undoing it removes the file.
    expect((await call({ command: 'undo_edit', path: '/repo/app.py' })).content).toBe(
      'Last edit to /repo/app.py undone successfully. The file did not exist before that edit, so it was removed.',
    );
    expect(ws.exists('repo/app.py')).toBe(false);
    expect(await call({ command: 'undo_edit', path: '/repo/app.py' })).toEqual({
      ok: false,
      code: 'NO_HISTORY',
      content: 'No edit history found for /repo/app.py.',
    });

    // undo_edit is itself an entry: ws.undo() takes the last one back.
    ws.undo();
    expect(ws.readText('repo/app.py')).toBe(APP);
  });

  it('reports a file without history', async () => {
    const { call } = setup();
    expect((await call({ command: 'undo_edit', path: '/repo/never.py' })).content).toBe(
      'No edit history found for /repo/never.py.',
    );
  });
});

describe('anthropic-text-editor: bad calls', () => {
  it('answers garbage with INVALID_INPUT instead of throwing', async () => {
    const { call } = setup();
    for (const args of [
      'not json',
      42,
      [],
      { command: 'view' },
      { command: 'view', path: '/repo', extra: 1 },
      { command: 'explode', path: '/x' },
      { command: 'view', path: 7 },
    ]) {
      const r = await call(args);
      expect(r.ok, JSON.stringify(args)).toBe(false);
      expect(r.code).toBe('INVALID_INPUT');
      expect(typeof r.content).toBe('string');
    }
  });
});
