// `quickrealm mcp --zip <file> [--dialect <name>]` as an MCP client sees it: spawned over stdio,
// the zip saved after each successful change (through the workspace tools, run_js or a dialect)
// and only then, guest console output kept off the JSON-RPC stream.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { combinePreferring } from '../../lib/cli/mcp.js';
import { createToolSet, workspaceTools, ZipWorkspace } from '../../lib/index.js';
import { textOf } from './mcp-client.js';

const ROOT = join(__dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'quickrealm.js');

let client: Client | undefined;
let dir: string | undefined;
afterEach(async () => {
  await client?.close();
  client = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

async function start(zip: string, ...more: string[]) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp', '--zip', zip, ...more],
    cwd: ROOT,
    stderr: 'pipe',
  });
  client = new Client({ name: 'test-client', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

/** What the server offers without --dialect, in order. */
const SERVER_TOOLS = [
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
  'run_js',
];

describe('quickrealm mcp', () => {
  it('serves a new workspace and saves the zip after each successful change', async () => {
    dir = mkdtempSync(join(tmpdir(), 'quickrealm-mcp-'));
    const zip = join(dir, 'work.zip');
    const c = await start(zip);
    const { tools } = await c.listTools();
    expect(tools.map((t) => t.name)).toEqual(SERVER_TOOLS);
    expect(existsSync(zip)).toBe(false);

    const written = await c.callTool({
      name: 'fs_write',
      arguments: { path: 'main.js', content: 'console.log("hi from exec")\n' },
    });
    expect(written.isError).toBe(false);
    expect(ZipWorkspace.open(zip).readText('main.js')).toBe('console.log("hi from exec")\n');

    // Read-only calls and failed calls do not save: the removed zip stays away.
    rmSync(zip);
    expect((await c.callTool({ name: 'fs_read', arguments: { path: 'main.js' } })).isError).toBe(false);
    const bad = await c.callTool({ name: 'fs_write', arguments: { path: 'x.txt' } });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatch(/^ERROR INVALID_INPUT: fs_write: content is required/);
    expect(existsSync(zip)).toBe(false);

    // Guest console output comes back in results; stdout stays a clean JSON-RPC stream.
    const exec = await c.callTool({ name: 'js_exec', arguments: { path: 'main.js' } });
    expect(textOf(exec)).toBe('exit code 0\n--- stdout ---\nhi from exec\n');
    const ran = await c.callTool({
      name: 'run_js',
      arguments: { code: "console.log('logged'); fs.writeFileSync('made.txt', 'by run_js'); return 1" },
    });
    expect(ran.isError).toBe(false);
    expect(textOf(ran)).toBe('value: 1\n--- console ---\n[log] logged');
    const saved = ZipWorkspace.open(zip);
    expect(saved.readText('made.txt')).toBe('by run_js');
    expect(saved.history().length).toBeGreaterThanOrEqual(2);

    const failed = await c.callTool({ name: 'run_js', arguments: { code: 'throw new RangeError("nope")' } });
    expect(failed.isError).toBe(true);
    expect(textOf(failed)).toMatch(/^ERROR EVAL_ERROR: RangeError: nope \(line 1, column \d+\)/);
  });

  it('writes nothing but JSON-RPC messages on stdout', async () => {
    dir = mkdtempSync(join(tmpdir(), 'quickrealm-mcp-'));
    const zip = join(dir, 'raw.zip');
    const ws = new ZipWorkspace();
    ws.writeFile(
      'loud.js',
      'console.log("to stdout?"); console.error("to stderr?"); process.stdout.write("raw\\n");\n',
    );
    ws.save(zip);
    const messages = [
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'js_exec', arguments: { path: 'loud.js' } } },
      {
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'run_js', arguments: { code: 'console.log("guest"); console.info("x"); return 5' } },
      },
    ];
    const child = spawn(process.execPath, [BIN, 'mcp', '--zip', zip], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString('utf8');
      // Close stdin once both calls are answered: the server then exits.
      if (/"id":2\b/.test(stdout) && /"id":3\b/.test(stdout)) child.stdin.end();
    });
    for (const m of messages) child.stdin.write(`${JSON.stringify(m)}\n`);
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(0);
    const lines = stdout.split('\n').filter((l) => l !== '');
    // The two calls run concurrently and may answer in either order.
    const parsed = lines.map((l) => JSON.parse(l)).sort((a, b) => a.id - b.id);
    expect(parsed.every((m) => m.jsonrpc === '2.0')).toBe(true);
    expect(parsed.map((m) => m.id)).toEqual([1, 2, 3]);
    expect(parsed[1].result.content[0].text).toBe(
      'exit code 0\n--- stdout ---\nto stdout?\nraw\n\n--- stderr ---\nto stderr?\n',
    );
    expect(parsed[2].result.content[0].text).toBe('value: 5\n--- console ---\n[log] guest\n[info] x');
  });

  it('opens an existing zip', async () => {
    dir = mkdtempSync(join(tmpdir(), 'quickrealm-mcp-'));
    const zip = join(dir, 'existing.zip');
    const ws = new ZipWorkspace();
    ws.writeFile('docs/readme.md', '# hello\n');
    ws.save(zip);
    const c = await start(zip);
    const listed = await c.callTool({ name: 'fs_list', arguments: { recursive: true } });
    expect(textOf(listed)).toBe('~/docs/\n~/docs/readme.md (8 bytes)');
    await c.callTool({ name: 'fs_delete', arguments: { path: 'docs', recursive: true } });
    expect(ZipWorkspace.open(zip).exists('docs')).toBe(false);
  });

  it('refuses a missing --zip, a zip that is not one, and options of other commands', () => {
    dir = mkdtempSync(join(tmpdir(), 'quickrealm-mcp-'));
    const notZip = join(dir, 'bad.zip');
    writeFileSync(notZip, 'not a zip');
    const cases: [string[], RegExp][] = [
      [['mcp'], /needs --zip <file>/],
      [['mcp', '--zip', notZip], /"code":"ZIP_INVALID"/],
      [['mcp', '--zip', join(dir, 'no', 'such', 'dir.zip')], /does not exist/],
      [['run', '--zip', notZip], /--zip belongs to quickrealm mcp/],
    ];
    for (const [args, pattern] of cases) {
      const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', input: '' });
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(pattern);
    }
  });

  it('--dialect anthropic-text-editor: edits and undo_edit through the dialect are saved', async () => {
    dir = mkdtempSync(join(tmpdir(), 'quickrealm-mcp-'));
    const zip = join(dir, 'edit.zip');
    const c = await start(zip, '--dialect', 'anthropic-text-editor');
    const { tools } = await c.listTools();
    expect(tools.map((t) => t.name)).toEqual([...SERVER_TOOLS, 'str_replace_based_edit_tool']);
    const edit = (args: Record<string, unknown>) =>
      c.callTool({ name: 'str_replace_based_edit_tool', arguments: args });

    const created = await edit({ command: 'create', path: '/app.py', file_text: 'print("hi")\n' });
    expect(textOf(created)).toBe('File created successfully at: /app.py');
    expect(ZipWorkspace.open(zip).readText('app.py')).toBe('print("hi")\n');

    const replaced = await edit({ command: 'str_replace', path: '/app.py', old_str: 'hi', new_str: 'bye' });
    expect(replaced.isError).toBe(false);
    expect(ZipWorkspace.open(zip).readText('app.py')).toBe('print("bye")\n');

    // A failed edit does not save.
    rmSync(zip);
    const missed = await edit({ command: 'str_replace', path: '/app.py', old_str: 'nope', new_str: 'x' });
    expect(missed.isError).toBe(true);
    expect(textOf(missed)).toBe('No replacement was performed, old_str `nope` did not appear verbatim in /app.py.');
    expect(existsSync(zip)).toBe(false);

    const undone = await edit({ command: 'undo_edit', path: '/app.py' });
    expect(textOf(undone)).toMatch(/^Last edit to \/app\.py undone successfully\./);
    const saved = ZipWorkspace.open(zip);
    expect(saved.readText('app.py')).toBe('print("hi")\n');
    // The workspace tools see the dialect's changes: one workspace, one history.
    expect(textOf(await c.callTool({ name: 'fs_read', arguments: { path: 'app.py' } }))).toBe('print("hi")\n');
    expect(saved.history().length).toBe(3);
  });

  it('--dialect mcp-filesystem: an edit is saved; a call that changed nothing does not save', async () => {
    dir = mkdtempSync(join(tmpdir(), 'quickrealm-mcp-'));
    const zip = join(dir, 'fs.zip');
    const ws = new ZipWorkspace();
    ws.writeFile('src/a.js', 'let x = 1;\n');
    ws.save(zip);
    const c = await start(zip, '--dialect', 'mcp-filesystem');
    const names = (await c.listTools()).tools.map((t) => t.name);
    expect(names).toContain('edit_file');
    expect(names).toContain('fs_write');
    const edited = await c.callTool({
      name: 'edit_file',
      arguments: { path: '/src/a.js', edits: [{ oldText: 'let', newText: 'const' }] },
    });
    expect(edited.isError).toBe(false);
    expect(ZipWorkspace.open(zip).readText('src/a.js')).toBe('const x = 1;\n');

    rmSync(zip);
    const same = await c.callTool({ name: 'move_file', arguments: { source: '/src/a.js', destination: '/src/a.js' } });
    expect(same.isError).toBe(false);
    expect(existsSync(zip)).toBe(false);
  });

  it('--dialect refuses an unknown dialect', () => {
    dir = mkdtempSync(join(tmpdir(), 'quickrealm-mcp-'));
    const r = spawnSync(process.execPath, [BIN, 'mcp', '--zip', join(dir, 'x.zip'), '--dialect', 'vim'], {
      encoding: 'utf8',
      input: '',
    });
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(
      /"code":"INVALID_INPUT".*unknown dialect \\"vim\\"; expected one of: anthropic-text-editor/,
    );
  });

  it('a dialect tool named like a workspace tool replaces it', async () => {
    const ws = new ZipWorkspace();
    ws.writeFile('a.txt', 'from the workspace');
    const dialect = createToolSet([
      {
        name: 'fs_read',
        description: 'A dialect tool that shares a name with a workspace tool.',
        inputSchema: { type: 'object', properties: {} },
        annotations: { readOnlyHint: true },
        handler: () => 'from the dialect',
      },
    ]);
    const set = combinePreferring([workspaceTools(ws)], dialect);
    expect(set.tools.filter((t) => t.name === 'fs_read')).toEqual([dialect.tools[0]]);
    expect(set.tools.map((t) => t.name)).toContain('fs_write');
    expect(await set.dispatch('fs_read', {})).toEqual({ ok: true, content: 'from the dialect' });
  });
});
