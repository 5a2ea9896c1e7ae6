// The reference MCP filesystem server's tools, with the result texts of its source
// (modelcontextprotocol/servers, src/filesystem): `[FILE]`/`[DIR]` listings, padded sizes with a
// summary, JSON trees, full paths from search_files, `key: value` file info, edit_file's fenced
// diff as the `diff` package prints it, and Node's fs error messages.
import { describe, expect, it } from 'vitest';
import { ZipWorkspace } from '../../../lib/index.js';
import { editorTools } from '../../../lib/tools/dialects/index.js';

const APP = 'const a = 1;\nconst b = 2;\nconsole.log(a + b);\n'; // 13 + 13 + 20 = 46 bytes

const NAMES = [
  'read_file',
  'read_text_file',
  'read_multiple_files',
  'write_file',
  'edit_file',
  'create_directory',
  'list_directory',
  'list_directory_with_sizes',
  'directory_tree',
  'move_file',
  'search_files',
  'get_file_info',
  'list_allowed_directories',
];

function setup() {
  const ws = new ZipWorkspace();
  ws.writeFile('src/app.js', APP);
  ws.writeFile('src/lib/util.js', 'export {}\n');
  ws.writeFile('README.md', '# demo\n');
  ws.writeFile('docs/guide.md', 'Guide\n');
  const { tools, dispatch } = editorTools(ws, { dialect: 'mcp-filesystem' });
  return { ws, tools, dispatch };
}

/** A line of list_directory_with_sizes, built with the server's own padding rule. */
const sized = (kind: 'FILE' | 'DIR', name: string, size = '') =>
  `[${kind}] ${name.padEnd(30)} ${kind === 'DIR' ? '' : size.padStart(10)}`;

describe('mcp-filesystem: tool definitions', () => {
  it("offers the server's tools but read_media_file, with its argument names and hints", () => {
    const { tools } = setup();
    expect(tools.map((t) => t.name)).toEqual(NAMES);
    const byName = new Map(tools.map((t) => [t.name, t]));
    const props = (name: string) => Object.keys((byName.get(name)!.inputSchema as { properties: object }).properties);
    expect(props('read_text_file')).toEqual(['path', 'tail', 'head']);
    expect(props('edit_file')).toEqual(['path', 'edits', 'dryRun']);
    expect(props('move_file')).toEqual(['source', 'destination']);
    expect(props('search_files')).toEqual(['path', 'pattern', 'excludePatterns']);
    expect(props('list_directory_with_sizes')).toEqual(['path', 'sortBy']);
    expect(byName.get('read_text_file')!.annotations.readOnlyHint).toBe(true);
    expect(byName.get('write_file')!.annotations).toEqual({
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
    });
    expect(byName.get('create_directory')!.annotations.destructiveHint).toBe(false);
  });
});

describe('mcp-filesystem: reading', () => {
  it('reads a whole file, its head and its tail', async () => {
    const { dispatch } = setup();
    expect(await dispatch('read_text_file', { path: '/src/app.js' })).toEqual({ ok: true, content: APP });
    expect((await dispatch('read_text_file', { path: '/src/app.js', head: 2 })).content).toBe(
      'const a = 1;\nconst b = 2;',
    );
    // Whole lines only: the final newline is not part of the head.
    expect((await dispatch('read_text_file', { path: '/src/app.js', head: 10 })).content).toBe(APP.slice(0, -1));
    // The server counts the empty piece after the final newline as a line when tailing.
    expect((await dispatch('read_text_file', { path: '/src/app.js', tail: 2 })).content).toBe('console.log(a + b);\n');
    expect((await dispatch('read_file', { path: 'src/app.js' })).content).toBe(APP);
    expect((await dispatch('read_text_file', { path: '/src/app.js', head: 1, tail: 1 })).content).toBe(
      'Cannot specify both head and tail parameters simultaneously',
    );
  });

  it("reports missing files with Node's messages", async () => {
    const { dispatch } = setup();
    expect(await dispatch('read_text_file', { path: '/src/nope.js' })).toEqual({
      ok: false,
      code: 'NOT_FOUND',
      content: "ENOENT: no such file or directory, open '/src/nope.js'",
    });
    expect((await dispatch('read_text_file', { path: '/nope/x.js' })).content).toBe(
      'Parent directory does not exist: /nope',
    );
    expect((await dispatch('read_text_file', { path: '/src' })).content).toBe(
      'EISDIR: illegal operation on a directory, read',
    );
  });

  it('reads several files, an unreadable one giving an error line', async () => {
    const { dispatch } = setup();
    expect((await dispatch('read_multiple_files', { paths: ['/README.md', '/nope.md'] })).content).toBe(
      "/README.md:\n# demo\n\n\n---\n/nope.md: Error - ENOENT: no such file or directory, open '/nope.md'",
    );
  });
});

describe('mcp-filesystem: listing and searching', () => {
  it('lists a directory with [FILE] and [DIR]', async () => {
    const { dispatch } = setup();
    expect((await dispatch('list_directory', { path: '/' })).content).toBe('[FILE] README.md\n[DIR] docs\n[DIR] src');
    expect((await dispatch('list_directory', { path: '/src' })).content).toBe('[FILE] app.js\n[DIR] lib');
    expect((await dispatch('list_directory', { path: '/README.md' })).content).toBe(
      "ENOTDIR: not a directory, scandir '/README.md'",
    );
  });

  it('lists with sizes and a summary, by name or by size', async () => {
    const { dispatch } = setup();
    const summary = ['', 'Total: 1 files, 2 directories', 'Combined size: 7 B'];
    expect((await dispatch('list_directory_with_sizes', { path: '/' })).content).toBe(
      [sized('DIR', 'docs'), sized('FILE', 'README.md', '7 B'), sized('DIR', 'src'), ...summary].join('\n'),
    );
    expect((await dispatch('list_directory_with_sizes', { path: '/', sortBy: 'size' })).content).toBe(
      [sized('FILE', 'README.md', '7 B'), sized('DIR', 'docs'), sized('DIR', 'src'), ...summary].join('\n'),
    );
  });

  it('prints sizes as the server does', async () => {
    const { ws, dispatch } = setup();
    ws.writeFile('big/one.bin', new Uint8Array(1536));
    ws.writeFile('big/two.bin', new Uint8Array(3 * 1024 * 1024));
    expect((await dispatch('list_directory_with_sizes', { path: '/big' })).content).toBe(
      [
        sized('FILE', 'one.bin', '1.50 KB'),
        sized('FILE', 'two.bin', '3.00 MB'),
        '',
        'Total: 2 files, 0 directories',
        'Combined size: 3.00 MB',
      ].join('\n'),
    );
  });

  it('shows a JSON tree, leaving out excluded names', async () => {
    const { dispatch } = setup();
    const tree = [
      { name: 'README.md', type: 'file' },
      { name: 'docs', type: 'directory', children: [{ name: 'guide.md', type: 'file' }] },
      { name: 'src', type: 'directory', children: [{ name: 'app.js', type: 'file' }] },
    ];
    expect((await dispatch('directory_tree', { path: '/', excludePatterns: ['lib'] })).content).toBe(
      JSON.stringify(tree, null, 2),
    );
    const full = JSON.parse((await dispatch('directory_tree', { path: '/src' })).content);
    expect(full).toEqual([
      { name: 'app.js', type: 'file' },
      { name: 'lib', type: 'directory', children: [{ name: 'util.js', type: 'file' }] },
    ]);
  });

  it('searches with glob patterns and returns full paths', async () => {
    const { dispatch } = setup();
    expect((await dispatch('search_files', { path: '/', pattern: '**/*.js' })).content).toBe(
      '/src/app.js\n/src/lib/util.js',
    );
    expect((await dispatch('search_files', { path: '/', pattern: '*.md' })).content).toBe('/README.md');
    expect((await dispatch('search_files', { path: '/src', pattern: '*.js' })).content).toBe('/src/app.js');
    expect(
      (await dispatch('search_files', { path: '/', pattern: '**/*.js', excludePatterns: ['src/lib'] })).content,
    ).toBe('/src/app.js');
    expect((await dispatch('search_files', { path: '/', pattern: '*.rs' })).content).toBe('No matches found');
  });

  it('describes a file and the allowed directory', async () => {
    const { ws, dispatch } = setup();
    const when = new Date(ws.stat('README.md').mtime);
    expect((await dispatch('get_file_info', { path: '/README.md' })).content).toBe(
      `size: 7\ncreated: ${when}\nmodified: ${when}\naccessed: ${when}\nisDirectory: false\nisFile: true\npermissions: 644`,
    );
    expect((await dispatch('get_file_info', { path: '/nope' })).content).toBe(
      "ENOENT: no such file or directory, stat '/nope'",
    );
    expect((await dispatch('list_allowed_directories', {})).content).toBe('Allowed directories:\n/');
  });
});

describe('mcp-filesystem: writing', () => {
  it('writes files, needing the parent directory', async () => {
    const { ws, dispatch } = setup();
    expect(await dispatch('write_file', { path: '/docs/new.md', content: 'new' })).toMatchObject({
      ok: true,
      content: 'Successfully wrote to /docs/new.md',
    });
    expect(ws.readText('docs/new.md')).toBe('new');
    expect((await dispatch('write_file', { path: '/a/b/c.md', content: 'x' })).content).toBe(
      'Parent directory does not exist: /a/b',
    );
    ws.undo();
    expect(ws.exists('docs/new.md')).toBe(false);
  });

  it('edits a file and returns the fenced unified diff', async () => {
    const { ws, dispatch } = setup();
    const expected =
      '```diff\n' +
      'Index: /src/app.js\n' +
      '===================================================================\n' +
      '--- /src/app.js\toriginal\n' +
      '+++ /src/app.js\tmodified\n' +
      '@@ -1,3 +1,3 @@\n' +
      ' const a = 1;\n' +
      '-const b = 2;\n' +
      '+const b = 3;\n' +
      ' console.log(a + b);\n' +
      '```\n\n';
    const edits = [{ oldText: 'const b = 2;', newText: 'const b = 3;' }];
    const entries = ws.history(100).length;
    expect(await dispatch('edit_file', { path: '/src/app.js', edits, dryRun: true })).toEqual({
      ok: true,
      content: expected,
    });
    expect(ws.readText('src/app.js')).toBe(APP);
    expect(ws.history(100).length).toBe(entries);
    expect((await dispatch('edit_file', { path: '/src/app.js', edits })).content).toBe(expected);
    expect(ws.readText('src/app.js')).toBe(APP.replace('b = 2', 'b = 3'));
    expect(ws.history(100).length).toBe(entries + 1);
  });

  it('applies several edits in order, matching lines loosely when the text is not exact', async () => {
    const { ws, dispatch } = setup();
    const r = await dispatch('edit_file', {
      path: '/src/app.js',
      edits: [
        { oldText: '   const a = 1;', newText: 'let a = 1;' },
        { oldText: 'let a = 1;\nconst b = 2;', newText: 'let a = 1;\nlet b = 2;' },
      ],
    });
    expect(r.ok).toBe(true);
    expect(ws.readText('src/app.js')).toBe('let a = 1;\nlet b = 2;\nconsole.log(a + b);\n');
    expect(await dispatch('edit_file', { path: '/src/app.js', edits: [{ oldText: 'nothing', newText: 'x' }] })).toEqual(
      {
        ok: false,
        code: 'NO_MATCH',
        content: 'Could not find exact match for edit:\nnothing',
      },
    );
  });

  it('re-indents loosely matched lines from the file, keeping their relative indentation', async () => {
    const { ws, dispatch } = setup();
    ws.writeFile('block.js', '    a();\n        b();\n');
    const r = await dispatch('edit_file', {
      path: '/block.js',
      edits: [{ oldText: 'a();\n    b();', newText: 'a2();\n      b2();' }],
    });
    expect(r.ok).toBe(true);
    expect(ws.readText('block.js')).toBe('    a2();\n      b2();\n');
  });

  it('creates nested directories', async () => {
    const { ws, dispatch } = setup();
    expect(await dispatch('create_directory', { path: '/a/b/c' })).toMatchObject({
      ok: true,
      content: 'Successfully created directory /a/b/c',
    });
    expect(ws.stat('a/b/c').kind).toBe('dir');
    expect((await dispatch('create_directory', { path: '/README.md' })).content).toBe(
      "EEXIST: file already exists, mkdir '/README.md'",
    );
  });

  it('moves files and folders as one history entry, refusing an existing destination', async () => {
    const { ws, dispatch } = setup();
    expect(await dispatch('move_file', { source: '/src/app.js', destination: '/src/main.js' })).toMatchObject({
      ok: true,
      content: 'Successfully moved /src/app.js to /src/main.js',
    });
    expect(ws.readText('src/main.js')).toBe(APP);
    const entries = ws.history(100).length;
    expect((await dispatch('move_file', { source: '/src', destination: '/code' })).ok).toBe(true);
    expect(ws.readText('code/lib/util.js')).toBe('export {}\n');
    expect(ws.exists('src')).toBe(false);
    expect(ws.history(100).length).toBe(entries + 1);
    ws.undo();
    expect(ws.readText('src/lib/util.js')).toBe('export {}\n');
    expect(ws.exists('code')).toBe(false);

    expect((await dispatch('move_file', { source: '/README.md', destination: '/docs/guide.md' })).content).toBe(
      "EEXIST: file already exists, rename '/README.md' -> '/docs/guide.md'",
    );
    expect((await dispatch('move_file', { source: '/nope', destination: '/x' })).content).toBe(
      "ENOENT: no such file or directory, rename '/nope' -> '/x'",
    );
    expect((await dispatch('move_file', { source: '/src', destination: '/src/lib/x' })).content).toBe(
      "EINVAL: invalid argument, rename '/src' -> '/src/lib/x'",
    );
  });

  it('refuses the hidden history folder and answers garbage without throwing', async () => {
    const { tools, dispatch } = setup();
    expect((await dispatch('read_text_file', { path: '/.time/x' })).content).toBe(
      'Access denied - path outside allowed directories: /.time/x not in /',
    );
    for (const tool of tools) {
      for (const args of ['{', 9, [], { path: 5 }, { paths: 'x' }, { edits: [{}] }]) {
        const r = await dispatch(tool.name, args);
        expect(typeof r.ok).toBe('boolean');
        expect(typeof r.content).toBe('string');
        if (tool.name !== 'list_allowed_directories') expect(r.ok, `${tool.name} ${JSON.stringify(args)}`).toBe(false);
      }
    }
  });
});
