// Golden outputs of Anthropic's memory tool (memory_20250818), written from the formats of
// Anthropic's SDK implementation: directory listings with human-readable sizes and a tab, file
// views numbered in six columns, its sentences, and `Error: <message>` for failures.
import { describe, expect, it } from 'vitest';
import { ZipWorkspace } from '../../../lib/index.js';
import { editorTools } from '../../../lib/tools/dialects/index.js';

const NOTES = 'Alice likes tea\nBob likes coffee\n'; // 16 + 17 = 33 bytes

function setup() {
  const ws = new ZipWorkspace();
  const { tools, dispatch } = editorTools(ws, { dialect: 'anthropic-memory' });
  const call = (args: unknown) => dispatch('memory', args);
  return { ws, tools, call };
}

async function seeded() {
  const s = setup();
  await s.call({ command: 'create', path: '/memories/notes.md', file_text: NOTES });
  await s.call({ command: 'create', path: '/memories/projects/q3.md', file_text: 'Ship it\n' });
  s.ws.writeFile('memories/.secret', 'x');
  s.ws.writeFile('memories/node_modules/m.js', 'y');
  return s;
}

describe('anthropic-memory: tool definition', () => {
  it('offers the memory tool with its six commands', () => {
    const { tools } = setup();
    expect(tools.map((t) => t.name)).toEqual(['memory']);
    const schema = tools[0]!.inputSchema as { properties: Record<string, { enum?: string[] }> };
    expect(schema.properties.command!.enum).toEqual(['view', 'create', 'str_replace', 'insert', 'delete', 'rename']);
  });
});

describe('anthropic-memory: view', () => {
  it('lists a missing or empty /memories as empty', async () => {
    const { ws, call } = setup();
    const empty =
      "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n0B\t/memories";
    expect(await call({ command: 'view', path: '/memories' })).toEqual({ ok: true, content: empty });
    ws.mkdir('memories');
    expect((await call({ command: 'view', path: '/memories' })).content).toBe(empty);
  });

  it('lists files with sizes, folders with a slash, leaving out hidden items and node_modules', async () => {
    const { call } = await seeded();
    expect((await call({ command: 'view', path: '/memories' })).content).toBe(
      "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n" +
        '43B\t/memories\n' +
        '33B\t/memories/notes.md\n' +
        '8B\t/memories/projects/\n' +
        '8B\t/memories/projects/q3.md',
    );
  });

  it('shows a file with line numbers, and a range of it', async () => {
    const { call } = await seeded();
    expect((await call({ command: 'view', path: '/memories/notes.md' })).content).toBe(
      "Here's the content of /memories/notes.md with line numbers:\n     1\tAlice likes tea\n     2\tBob likes coffee",
    );
    expect((await call({ command: 'view', path: '/memories/notes.md', view_range: [2, -1] })).content).toBe(
      "Here's the content of /memories/notes.md with line numbers:\n     2\tBob likes coffee",
    );
  });

  it('reports a missing path', async () => {
    const { call } = await seeded();
    expect(await call({ command: 'view', path: '/memories/nope.md' })).toEqual({
      ok: false,
      code: 'NOT_FOUND',
      content: 'Error: The path /memories/nope.md does not exist. Please provide a valid path.',
    });
  });
});

describe('anthropic-memory: create, str_replace, insert', () => {
  it('creates files and refuses to overwrite one', async () => {
    const { ws, call } = setup();
    expect(await call({ command: 'create', path: '/memories/a/b.md', file_text: 'x' })).toMatchObject({
      ok: true,
      content: 'File created successfully at: /memories/a/b.md',
    });
    expect(ws.readText('memories/a/b.md')).toBe('x');
    expect(await call({ command: 'create', path: '/memories/a/b.md', file_text: 'y' })).toEqual({
      ok: false,
      code: 'EXISTS',
      content: 'Error: File /memories/a/b.md already exists',
    });
  });

  it('replaces a unique string and shows the snippet', async () => {
    const { ws, call } = await seeded();
    const r = await call({ command: 'str_replace', path: '/memories/notes.md', old_str: 'tea', new_str: 'green tea' });
    expect(r.content).toBe(
      'The memory file has been edited. Here is the snippet showing the change (with line numbers):\n' +
        '     1\tAlice likes green tea\n' +
        '     2\tBob likes coffee',
    );
    expect(ws.readText('memories/notes.md')).toBe('Alice likes green tea\nBob likes coffee\n');
  });

  it('shows two lines before and after the change', async () => {
    const { call } = setup();
    await call({ command: 'create', path: '/memories/l.md', file_text: '1\n2\n3\n4\n5\n6\n7\n' });
    expect(
      (await call({ command: 'str_replace', path: '/memories/l.md', old_str: '4', new_str: 'four' })).content,
    ).toBe(
      'The memory file has been edited. Here is the snippet showing the change (with line numbers):\n' +
        '     2\t2\n     3\t3\n     4\tfour\n     5\t5\n     6\t6',
    );
    expect((await call({ command: 'str_replace', path: '/memories/l.md', old_str: '1', new_str: 'one' })).content).toBe(
      'The memory file has been edited. Here is the snippet showing the change (with line numbers):\n' +
        '     1\tone\n     2\t2\n     3\t3',
    );
  });

  it('refuses a missing string and a repeated one', async () => {
    const { ws, call } = await seeded();
    expect(await call({ command: 'str_replace', path: '/memories/notes.md', old_str: 'milk', new_str: 'x' })).toEqual({
      ok: false,
      code: 'NO_MATCH',
      content: 'Error: No replacement was performed, old_str `milk` did not appear verbatim in /memories/notes.md.',
    });
    expect(await call({ command: 'str_replace', path: '/memories/notes.md', old_str: 'likes', new_str: 'x' })).toEqual({
      ok: false,
      code: 'AMBIGUOUS_MATCH',
      content:
        'Error: No replacement was performed. Multiple occurrences of old_str `likes` in lines: 1, 2. Please ensure it is unique',
    });
    expect(
      (await call({ command: 'str_replace', path: '/memories/projects', old_str: 'a', new_str: 'b' })).content,
    ).toBe('Error: The path /memories/projects is not a file.');
    expect(ws.readText('memories/notes.md')).toBe(NOTES);
  });

  it('inserts at a line and checks the range', async () => {
    const { ws, call } = await seeded();
    expect(
      await call({ command: 'insert', path: '/memories/notes.md', insert_line: 1, insert_text: 'Carol likes juice\n' }),
    ).toMatchObject({ ok: true, content: 'The file /memories/notes.md has been edited.' });
    expect(ws.readText('memories/notes.md')).toBe('Alice likes tea\nCarol likes juice\nBob likes coffee\n');
    expect(await call({ command: 'insert', path: '/memories/notes.md', insert_line: 5, insert_text: 'x' })).toEqual({
      ok: false,
      code: 'RANGE',
      content: 'Error: Invalid `insert_line` parameter: 5. It should be within the range of lines of the file: [0, 3]',
    });
  });
});

describe('anthropic-memory: delete and rename', () => {
  it('deletes files and folders but not /memories itself', async () => {
    const { ws, call } = await seeded();
    expect(await call({ command: 'delete', path: '/memories/projects' })).toMatchObject({
      ok: true,
      content: 'Successfully deleted /memories/projects',
    });
    expect(ws.exists('memories/projects')).toBe(false);
    expect((await call({ command: 'delete', path: '/memories/nope' })).content).toBe(
      'Error: The path /memories/nope does not exist',
    );
    expect((await call({ command: 'delete', path: '/memories' })).content).toBe(
      'Error: Cannot delete the /memories directory itself',
    );
  });

  it('renames a file as one history entry', async () => {
    const { ws, call } = await seeded();
    const entries = ws.history(100).length;
    expect(
      await call({ command: 'rename', old_path: '/memories/notes.md', new_path: '/memories/people/notes.md' }),
    ).toMatchObject({ ok: true, content: 'Successfully renamed /memories/notes.md to /memories/people/notes.md' });
    expect(ws.readText('memories/people/notes.md')).toBe(NOTES);
    expect(ws.exists('memories/notes.md')).toBe(false);
    expect(ws.history(100).length).toBe(entries + 1);
    ws.undo();
    expect(ws.readText('memories/notes.md')).toBe(NOTES);
    expect(ws.exists('memories/people')).toBe(false);
  });

  it('renames a folder with its contents', async () => {
    const { ws, call } = await seeded();
    expect((await call({ command: 'rename', old_path: '/memories/projects', new_path: '/memories/archive' })).ok).toBe(
      true,
    );
    expect(ws.readText('memories/archive/q3.md')).toBe('Ship it\n');
    expect(ws.exists('memories/projects')).toBe(false);
  });

  it('refuses an existing destination, a missing source and /memories itself', async () => {
    const { call } = await seeded();
    expect(
      (await call({ command: 'rename', old_path: '/memories/notes.md', new_path: '/memories/projects/q3.md' })).content,
    ).toBe('Error: The destination /memories/projects/q3.md already exists');
    expect((await call({ command: 'rename', old_path: '/memories/nope', new_path: '/memories/x' })).content).toBe(
      'Error: The path /memories/nope does not exist',
    );
    expect((await call({ command: 'rename', old_path: '/memories', new_path: '/memories/x' })).content).toBe(
      'Error: Cannot rename the /memories directory itself',
    );
  });
});

describe('anthropic-memory: confinement', () => {
  it('refuses every path outside /memories and any .. segment', async () => {
    const { ws, call } = setup();
    ws.writeFile('secret.txt', 'top secret');
    expect(await call({ command: 'view', path: '/etc/passwd' })).toEqual({
      ok: false,
      code: 'PATH_INVALID',
      content: 'Error: Path must start with /memories, got: /etc/passwd',
    });
    expect((await call({ command: 'view', path: '/memories/../secret.txt' })).content).toBe(
      'Error: Path /memories/../secret.txt would escape /memories directory',
    );
    expect((await call({ command: 'view', path: '/memoriesX/a' })).content).toBe(
      'Error: Path must start with /memories, got: /memoriesX/a',
    );
    expect((await call({ command: 'create', path: 'secret.txt', file_text: 'x' })).ok).toBe(false);
    expect((await call({ command: 'delete', path: '/memories/../secret.txt' })).ok).toBe(false);
    expect(
      (await call({ command: 'rename', old_path: '/memories/../secret.txt', new_path: '/memories/s.txt' })).ok,
    ).toBe(false);
    expect(ws.readText('secret.txt')).toBe('top secret');
  });

  it('takes back a create with ws.undo()', async () => {
    const { ws, call } = setup();
    await call({ command: 'create', path: '/memories/a.md', file_text: 'a' });
    ws.undo();
    expect(ws.exists('memories/a.md')).toBe(false);
  });

  it('answers garbage with INVALID_INPUT', async () => {
    const { call } = setup();
    for (const args of [
      '{',
      3,
      { command: 'forget' },
      { command: 'create', path: '/memories/x' },
      { path: '/memories' },
    ]) {
      const r = await call(args);
      expect(r.ok, JSON.stringify(args)).toBe(false);
      expect(r.code).toBe('INVALID_INPUT');
      expect(r.content.startsWith('Error: ')).toBe(true);
    }
  });
});
