import { describe, expect, it } from 'vitest';
import { ZipWorkspace, workspaceTools, type ToolParameterSchema } from '../../lib/index.js';

const NAMES = [
  'fs_read',
  'fs_read_lines',
  'fs_write',
  'fs_patch_lines',
  'fs_list',
  'fs_stat',
  'fs_mkdir',
  'fs_delete',
  'fs_search',
  'js_exec',
];

function setup() {
  const ws = new ZipWorkspace();
  ws.writeFile('src/app.js', 'const a = 1;\nconst b = 2;\nconsole.log(a + b);\n');
  ws.writeFile('README.md', '# demo\n');
  return { ws, ...workspaceTools(ws) };
}

/** Checks that a schema only uses the keywords and shapes the tools promise. */
function checkSchema(s: ToolParameterSchema, where: string): void {
  const allowed = [
    'type',
    'description',
    'minimum',
    'maximum',
    'minLength',
    'items',
    'properties',
    'required',
    'additionalProperties',
  ];
  for (const key of Object.keys(s)) expect(allowed, `${where}: ${key}`).toContain(key);
  expect(['string', 'integer', 'number', 'boolean', 'array', 'object'], where).toContain(s.type);
  if (s.description !== undefined) expect(typeof s.description).toBe('string');
  if (s.items) checkSchema(s.items, `${where}[]`);
  if (s.properties) {
    for (const [k, v] of Object.entries(s.properties)) checkSchema(v, `${where}.${k}`);
    for (const r of s.required ?? []) expect(Object.keys(s.properties), `${where} requires ${r}`).toContain(r);
  }
  if (typeof s.additionalProperties === 'object') checkSchema(s.additionalProperties, `${where}.*`);
}

describe('tool definitions', () => {
  it('are the ten tools with valid JSON Schema objects', () => {
    const { tools } = setup();
    expect(tools.map((t) => t.name)).toEqual(NAMES);
    for (const t of tools) {
      expect(t.name).toMatch(/^[a-z_]+$/);
      expect(t.description.length).toBeGreaterThan(40);
      expect(t.inputSchema.type).toBe('object');
      expect(t.inputSchema.additionalProperties).toBe(false);
      expect(Array.isArray(t.inputSchema.required)).toBe(true);
      checkSchema(t.inputSchema, t.name);
      // Plain data (but the handler): survives JSON unchanged, as it must to be sent to a model API.
      const { handler, ...data } = t;
      expect(typeof handler).toBe('function');
      expect(JSON.parse(JSON.stringify(data))).toEqual(data);
    }
  });

  it('describe the conventions', () => {
    const { tools } = setup();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    expect(byName.fs_read_lines!.description).toMatch(/1-based/);
    expect(byName.fs_read_lines!.description).toMatch(/inclusive/);
    expect(byName.fs_patch_lines!.description).toMatch(/expected/);
    expect(byName.fs_read!.description).toContain('~/');
    expect(byName.fs_patch_lines!.inputSchema.required).toEqual(['path', 'start', 'end', 'replacement']);
    expect(byName.js_exec!.inputSchema.required).toEqual(['path']);
    expect(Object.keys(byName.js_exec!.inputSchema.properties!)).toEqual(['path', 'argv', 'env', 'timeoutMs']);
  });

  it('each call gets its own copy of the definitions', () => {
    const a = setup().tools;
    a[0]!.description = 'changed';
    expect(setup().tools[0]!.description).not.toBe('changed');
  });
});

describe('dispatch: happy paths', () => {
  it('fs_read returns the text', async () => {
    const { dispatch } = setup();
    expect(await dispatch('fs_read', { path: '~/README.md' })).toEqual({ ok: true, content: '# demo\n' });
  });

  it('fs_read_lines numbers the lines', async () => {
    const { dispatch } = setup();
    const r = await dispatch('fs_read_lines', { path: 'src/app.js', start: 2, end: 3 });
    expect(r).toEqual({ ok: true, content: '~/src/app.js lines 2-3 of 3\n2| const b = 2;\n3| console.log(a + b);' });
    const part = await dispatch('fs_read_lines', { path: 'src/app.js', end: 1 });
    expect(part.content).toBe('~/src/app.js lines 1-1 of 3\n1| const a = 1;\n[2 more lines; continue with start 2]');
  });

  it('fs_write confirms with the byte count and history id', async () => {
    const { ws, dispatch } = setup();
    const r = await dispatch('fs_write', { path: 'out/new.txt', content: 'héllo' });
    expect(r).toEqual({ ok: true, content: 'wrote 6 bytes to ~/out/new.txt (history #3)' });
    expect(ws.readText('out/new.txt')).toBe('héllo');
    expect((await dispatch('fs_write', { path: 'out/new.txt', content: 'héllo' })).content).toMatch(/no change/);
  });

  it('fs_patch_lines patches and echoes the new lines', async () => {
    const { ws, dispatch } = setup();
    const r = await dispatch('fs_patch_lines', {
      path: 'src/app.js',
      start: 2,
      end: 2,
      replacement: 'const b = 20;\nconst c = 3;',
      expected: 'const b = 2;',
    });
    expect(r.ok).toBe(true);
    expect(r.content).toBe(
      'patched ~/src/app.js: replaced lines 2-2 (1 removed, 2 inserted); the file now has 4 lines (history #3)\n' +
        '2| const b = 20;\n3| const c = 3;',
    );
    expect(ws.readLines('src/app.js').lines).toEqual([
      'const a = 1;',
      'const b = 20;',
      'const c = 3;',
      'console.log(a + b);',
    ]);
    const ins = await dispatch('fs_patch_lines', { path: 'README.md', start: 1, end: 0, replacement: '<!-- top -->' });
    expect(ins.content).toMatch(/^patched ~\/README\.md: inserted 1 line at line 1/);
  });

  it('fs_patch_lines with stale expected text is a CONFLICT showing the current text', async () => {
    const { ws, dispatch } = setup();
    const r = await dispatch('fs_patch_lines', {
      path: 'src/app.js',
      start: 1,
      end: 1,
      replacement: 'x',
      expected: 'const a = 9;',
    });
    expect(r.ok).toBe(false);
    expect(r.content).toMatch(/^ERROR CONFLICT: /);
    expect(r.content).toContain('const a = 1;');
    expect(r.content).toMatch(/Hint: .*fs_read_lines/);
    expect(ws.readText('src/app.js').startsWith('const a = 1;')).toBe(true);
  });

  it('fs_list marks folders with / and shows sizes', async () => {
    const { dispatch } = setup();
    expect((await dispatch('fs_list', {})).content).toBe('~/README.md (7 bytes)\n~/src/');
    expect((await dispatch('fs_list', { path: '~/src' })).content).toBe('~/src/app.js (46 bytes)');
    expect((await dispatch('fs_list', { recursive: true })).content).toBe(
      '~/README.md (7 bytes)\n~/src/\n~/src/app.js (46 bytes)',
    );
    await dispatch('fs_mkdir', { path: 'empty' });
    expect((await dispatch('fs_list', { path: 'empty' })).content).toBe('~/empty is empty');
  });

  it('fs_stat, fs_mkdir and fs_delete', async () => {
    const { ws, dispatch } = setup();
    expect((await dispatch('fs_stat', { path: 'README.md' })).content).toMatch(
      /^~\/README\.md: file, 7 bytes, modified \d{4}-/,
    );
    expect((await dispatch('fs_stat', { path: '~' })).content).toBe('~/: folder');
    expect(await dispatch('fs_mkdir', { path: 'a/b/c' })).toEqual({
      ok: true,
      content: 'created folder ~/a/b/c (history #3)',
    });
    expect((await dispatch('fs_mkdir', { path: 'a/b/c' })).content).toBe('~/a/b/c already exists');
    expect((await dispatch('fs_stat', { path: 'a/b' })).content).toMatch(/^~\/a\/b: folder/);
    const notEmpty = await dispatch('fs_delete', { path: 'a' });
    expect(notEmpty.ok).toBe(false);
    expect(notEmpty.content).toMatch(/^ERROR NOT_EMPTY: .*\nHint: Pass recursive: true/);
    expect(await dispatch('fs_delete', { path: 'a', recursive: true })).toEqual({
      ok: true,
      content: 'deleted ~/a (history #4)',
    });
    expect(ws.exists('a')).toBe(false);
  });

  it('fs_search shows path:line:col with context', async () => {
    const { dispatch } = setup();
    const r = await dispatch('fs_search', { query: 'const b' });
    expect(r).toEqual({
      ok: true,
      content:
        '~/src/app.js-1- const a = 1;\n~/src/app.js:2:1: const b = 2;\n~/src/app.js-3- console.log(a + b);\n[1 match]',
    });
    const bare = await dispatch('fs_search', { query: 'const', context: 0 });
    expect(bare.content).toBe('~/src/app.js:1:1: const a = 1;\n~/src/app.js:2:1: const b = 2;\n[2 matches]');
    const capped = await dispatch('fs_search', { query: 'const', context: 0, maxResults: 1 });
    expect(capped.content).toMatch(/1 matches shown; there are more/);
    const none = await dispatch('fs_search', { query: 'nothing here', path: 'src' });
    expect(none).toEqual({ ok: true, content: 'no matches for "nothing here" in ~/src (1 text files searched)' });
  });

  it('arguments may arrive as a JSON string', async () => {
    const { dispatch } = setup();
    expect((await dispatch('fs_read', '{"path":"README.md"}')).content).toBe('# demo\n');
    expect((await dispatch('fs_list', '')).ok).toBe(true);
    const bad = await dispatch('fs_read', '{"path":');
    expect(bad.ok).toBe(false);
    expect(bad.content).toMatch(/^ERROR INVALID_INPUT: the arguments of fs_read are not valid JSON/);
  });

  it('cuts very long output with a note', async () => {
    const { ws, dispatch } = setup();
    ws.writeFile('huge.txt', 'x'.repeat(200_000));
    const r = await dispatch('fs_read', { path: 'huge.txt' });
    expect(r.ok).toBe(true);
    expect(r.content.length).toBeLessThan(70_000);
    expect(r.content).toMatch(/cut off after 65536 of 200000 characters; read the rest with fs_read_lines/);
  });
});

describe('dispatch: failures are results, never exceptions', () => {
  it('unknown tools', async () => {
    const { dispatch } = setup();
    const r = await dispatch('rm_rf', { path: '~' });
    expect(r.ok).toBe(false);
    expect(r.content).toMatch(/^ERROR UNKNOWN_TOOL: there is no tool named "rm_rf"; available: fs_read, /);
    expect((await dispatch(undefined as unknown as string, {})).ok).toBe(false);
  });

  it('bad arguments name the bad field', async () => {
    const { ws, dispatch } = setup();
    const cases: [string, unknown, RegExp][] = [
      ['fs_read', {}, /fs_read: path is required/],
      ['fs_read', { path: 42 }, /fs_read: path must be a string, got the number 42/],
      ['fs_read', { path: '' }, /path must not be empty/],
      ['fs_read', { path: 'a', extra: 1 }, /unknown argument 'extra'; expected: path/],
      ['fs_read_lines', { path: 'a', start: 0 }, /start must be at least 1, got 0/],
      ['fs_read_lines', { path: 'a', start: 1.5 }, /start must be an integer, got the number 1.5/],
      ['fs_read_lines', { path: 'a', end: '3' }, /end must be an integer, got a string/],
      ['fs_write', { path: 'a' }, /content is required/],
      ['fs_write', { path: 'a', content: null }, /content must be a string, got null/],
      ['fs_patch_lines', { path: 'a', start: 1, end: 1 }, /replacement is required/],
      ['fs_patch_lines', { path: 'a', start: 1, end: -1, replacement: '' }, /end must be at least 0/],
      ['fs_list', { recursive: 'yes' }, /recursive must be a boolean, got a string/],
      ['fs_search', { query: 'x', context: 50 }, /context must be at most 20/],
      ['fs_search', { query: 'x', maxResults: 0 }, /maxResults must be at least 1/],
      ['fs_search', { query: '' }, /query must not be empty/],
      ['js_exec', { path: 'a.js', argv: 'x' }, /argv must be an array/],
      ['js_exec', { path: 'a.js', argv: ['ok', 1] }, /argv\[1\] must be a string/],
      ['js_exec', { path: 'a.js', env: { A: 1 } }, /env\.A must be a string, got the number 1/],
      ['js_exec', { path: 'a.js', env: ['A'] }, /env must be an object, got an array/],
      ['js_exec', { path: 'a.js', timeoutMs: 0 }, /timeoutMs must be at least 1/],
      ['fs_stat', [], /the arguments of fs_stat must be an object, got an array/],
      ['fs_stat', 7, /must be an object, got the number 7/],
    ];
    const before = ws.toZip();
    for (const [name, args, pattern] of cases) {
      const r = await dispatch(name, args);
      expect(r.ok, `${name} ${JSON.stringify(args)}`).toBe(false);
      expect(r.content, `${name} ${JSON.stringify(args)}`).toMatch(/^ERROR INVALID_INPUT: /);
      expect(r.content, `${name} ${JSON.stringify(args)}`).toMatch(pattern);
    }
    expect(ws.toZip().equals(before)).toBe(true);
  });

  it('workspace errors carry their code and a hint', async () => {
    const { dispatch } = setup();
    const missing = await dispatch('fs_read', { path: 'nope.txt' });
    expect(missing).toEqual({
      ok: false,
      code: 'NOT_FOUND',
      content: 'ERROR NOT_FOUND: ~/nope.txt does not exist\nHint: Check the path with fs_list.',
    });
    expect((await dispatch('fs_write', { path: '../escape', content: 'x' })).content).toMatch(/^ERROR PATH_INVALID: /);
    expect((await dispatch('fs_read', { path: '.time/log.json' })).content).toMatch(/^ERROR PATH_INVALID: /);
    expect((await dispatch('fs_read_lines', { path: 'README.md', start: 5 })).content).toMatch(
      /^ERROR RANGE: .*\nHint: Line numbers/,
    );
    expect((await dispatch('fs_read', { path: 'src' })).content).toMatch(/^ERROR IS_A_DIRECTORY: /);
  });

  it('binary files are refused as NOT_TEXT', async () => {
    const { ws, dispatch } = setup();
    ws.writeFile('img.png', Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0xff, 0x0a, 0xfe]));
    expect((await dispatch('fs_read', { path: 'img.png' })).content).toMatch(/^ERROR NOT_TEXT: /);
    expect((await dispatch('fs_read_lines', { path: 'img.png' })).content).toMatch(/^ERROR NOT_TEXT: /);
  });
});

describe('js_exec', () => {
  it('is UNAVAILABLE without ws.exec', async () => {
    const noExec = Object.assign(new ZipWorkspace(), { exec: undefined }) as unknown as ZipWorkspace;
    const { dispatch } = workspaceTools(noExec);
    const r = await dispatch('js_exec', { path: 'main.js' });
    expect(r.ok).toBe(false);
    expect(r.content).toMatch(/^ERROR UNAVAILABLE: /);
  });

  it('calls ws.exec with the arguments and reports its output', async () => {
    const calls: unknown[][] = [];
    const ws = Object.assign(new ZipWorkspace(), {
      exec: async (...args: unknown[]) => {
        calls.push(args);
        return { ok: true, stdout: 'hello\n', stderr: '', exitCode: 0 };
      },
    });
    const { dispatch } = workspaceTools(ws);
    const r = await dispatch('js_exec', { path: 'main.js', argv: ['a'], env: { MODE: 'x' }, timeoutMs: 500 });
    expect(calls).toEqual([['main.js', { argv: ['a'], env: { MODE: 'x' }, timeoutMs: 500 }]]);
    expect(r).toEqual({ ok: true, content: 'exit code 0\n--- stdout ---\nhello\n' });
    await dispatch('js_exec', { path: 'main.js' });
    expect(calls[1]).toEqual(['main.js', {}]);
  });

  it('reports failed runs and exec errors as ok: false', async () => {
    const failing = Object.assign(new ZipWorkspace(), {
      exec: () => ({
        ok: false,
        stdout: '',
        stderr: 'oops\n',
        exitCode: 1,
        error: { code: 'EVAL_ERROR', message: 'x is not defined' },
      }),
    });
    const r = await workspaceTools(failing).dispatch('js_exec', { path: 'main.js' });
    expect(r.ok).toBe(false);
    expect(r.content).toBe('exit code 1\n--- stderr ---\noops\n\n--- error ---\nEVAL_ERROR: x is not defined');

    const throwing = Object.assign(new ZipWorkspace(), {
      exec: () => {
        throw Object.assign(new Error('~/main.js does not exist'), { code: 'NOT_FOUND' });
      },
    });
    const t = await workspaceTools(throwing).dispatch('js_exec', { path: 'main.js' });
    expect(t).toEqual({
      ok: false,
      code: 'NOT_FOUND',
      content: 'ERROR NOT_FOUND: ~/main.js does not exist\nHint: Check the path with fs_list.',
    });
  });

  it('workspaceTools rejects things that are not workspaces', () => {
    expect(() => workspaceTools({} as unknown as ZipWorkspace)).toThrow(TypeError);
  });
});
