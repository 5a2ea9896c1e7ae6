// setAccessRules: one set of path rules, checked in the native layer, for the workspace API,
// every tool built on the workspace and the fs and module loader of programs `exec` runs.
import { describe, expect, it } from 'vitest';
import { codeTool, workspaceTools, ZipWorkspace } from '../../lib/index.js';
import { editorTools } from '../../lib/tools/dialects/index.js';

/** A workspace with a source tree, docs and a secret, restricted to reading src and docs. */
function restricted(): ZipWorkspace {
  const ws = new ZipWorkspace();
  ws.writeFile('src/app.js', "export const app = 'app';\n");
  ws.writeFile('src/lib/util.js', 'export const util = 1;\n');
  ws.writeFile('docs/guide.md', '# needle guide\n');
  ws.writeFile('secret/key.txt', 'needle: hunter2\n');
  ws.writeFile('notes.md', 'needle notes\n');
  ws.setAccessRules({ readPatterns: ['src/**', 'docs/**', '/notes.md'], writePatterns: ['src/**'] });
  return ws;
}

function thrown(f: () => unknown): { code?: string; message: string } | undefined {
  try {
    f();
  } catch (e) {
    return e as { code?: string; message: string };
  }
  return undefined;
}

describe('ZipWorkspace.setAccessRules', () => {
  it('refuses reads and writes outside the patterns, naming the path and the rule', () => {
    const ws = restricted();
    expect(ws.readText('src/app.js')).toContain('app');
    expect(ws.readText('docs/guide.md')).toContain('guide');
    const read = thrown(() => ws.readText('secret/key.txt'));
    expect(read?.code).toBe('POLICY_VIOLATION');
    expect(read?.message).toContain('~/secret/key.txt');
    expect(read?.message).toContain('readPatterns [src/**, docs/**, /notes.md]');
    const write = thrown(() => ws.writeFile('docs/new.md', 'x'));
    expect(write?.code).toBe('POLICY_VIOLATION');
    expect(write?.message).toContain('writePatterns [src/**]');
    expect(ws.exists('docs/new.md')).toBe(false);
    expect(ws.writeFile('src/new.js', 'ok')).toEqual(expect.any(Number));
  });

  it('leaves unreadable paths out of listings and searches', () => {
    const ws = restricted();
    expect(ws.list('', { recursive: true }).map((e) => e.path)).toEqual([
      'docs',
      'docs/guide.md',
      'notes.md',
      'src',
      'src/app.js',
      'src/lib',
      'src/lib/util.js',
    ]);
    const hits = ws.search('needle').matches.map((m) => m.path);
    expect(hits).toEqual(['docs/guide.md', 'notes.md']);
    expect(thrown(() => ws.list('secret'))?.code).toBe('POLICY_VIOLATION');
    expect(ws.exists('secret/key.txt')).toBe(false);
    expect(thrown(() => ws.stat('secret/key.txt'))?.code).toBe('POLICY_VIOLATION');
  });

  it('a pattern that can match at any depth lets every folder be listed, and only matching files be read', () => {
    const ws = restricted();
    ws.setAccessRules({ readPatterns: ['*.md'] });
    expect(ws.list('', { recursive: true }).map((e) => e.path)).toEqual([
      'docs',
      'docs/guide.md',
      'notes.md',
      'secret',
      'src',
      'src/lib',
    ]);
    expect(thrown(() => ws.readText('secret/key.txt'))?.code).toBe('POLICY_VIOLATION');
    expect(ws.stat('secret').kind).toBe('dir');
  });

  it('a pattern covers everything below what it matches, and a folder is deleted only if it may be written', () => {
    const ws = new ZipWorkspace();
    ws.writeFile('src/keep/locked.txt', 'x');
    ws.writeFile('src/free.js', 'x');
    ws.writeFile('out/a/b.txt', 'x');
    ws.setAccessRules({ writePatterns: ['src/*.js', 'out'] });
    expect(thrown(() => ws.delete('src', { recursive: true }))?.code).toBe('POLICY_VIOLATION');
    expect(thrown(() => ws.writeFile('src/keep/locked.txt', 'y'))?.code).toBe('POLICY_VIOLATION');
    expect(ws.exists('src/keep/locked.txt')).toBe(true);
    ws.writeFile('out/a/c/d.txt', 'deep');
    ws.delete('out', { recursive: true });
    expect(ws.exists('out')).toBe(false);
    ws.delete('src/free.js');
    expect(ws.exists('src/free.js')).toBe(false);
  });

  it('readOnly refuses every change; null lifts the rules; Sets are accepted and given back as arrays', () => {
    const ws = restricted();
    ws.setAccessRules({ readOnly: true, readPatterns: new Set(['**']) });
    expect(ws.accessRules()).toEqual({ readPatterns: ['**'], readOnly: true });
    expect(thrown(() => ws.mkdir('src/x'))?.message).toContain('read-only (readOnly)');
    expect(ws.readText('secret/key.txt')).toContain('hunter2');
    ws.setAccessRules(null);
    expect(ws.accessRules()).toBeNull();
    ws.writeFile('anywhere.txt', 'x');
    expect(ws.readText('anywhere.txt')).toBe('x');
  });

  it('refuses malformed rules with INVALID_INPUT and keeps the rules it had', () => {
    const ws = restricted();
    for (const rules of [
      { readPatterns: ['src/['] },
      { writePatterns: ['../up'] },
      { readPatterns: 'src/**' },
      { readPatterns: [42] },
      { deny: ['x'] },
    ]) {
      const e = thrown(() => ws.setAccessRules(rules as never));
      expect(e?.code, JSON.stringify(rules)).toBe('INVALID_INPUT');
    }
    expect(ws.accessRules()).toEqual({
      readPatterns: ['src/**', 'docs/**', '/notes.md'],
      writePatterns: ['src/**'],
      readOnly: false,
    });
  });

  it('the rules are not saved with the workspace', () => {
    const copy = ZipWorkspace.fromZip(restricted().toZip());
    expect(copy.accessRules()).toBeNull();
    expect(copy.readText('secret/key.txt')).toContain('hunter2');
  });
});

describe('every way in passes the same check', () => {
  it('workspace tools answer POLICY_VIOLATION and list only what may be read', async () => {
    const tools = workspaceTools(restricted());
    const denied = await tools.dispatch('fs_read', { path: 'secret/key.txt' });
    expect([denied.ok, denied.code]).toEqual([false, 'POLICY_VIOLATION']);
    const write = await tools.dispatch('fs_write', { path: 'notes.md', content: 'changed' });
    expect([write.ok, write.code]).toEqual([false, 'POLICY_VIOLATION']);
    const listing = await tools.dispatch('fs_list', { path: '~/' });
    expect(listing.content).not.toContain('secret');
    const found = await tools.dispatch('fs_search', { query: 'needle' });
    expect(found.content).not.toContain('hunter2');
  });

  it('editor dialects are refused too', async () => {
    const ws = restricted();
    const editor = editorTools(ws, { dialect: 'anthropic-text-editor' });
    const view = await editor.dispatch('str_replace_based_edit_tool', { command: 'view', path: '/secret/key.txt' });
    expect(view.ok).toBe(false);
    expect(view.content).not.toContain('hunter2');
    const listing = await editor.dispatch('str_replace_based_edit_tool', { command: 'view', path: '/' });
    expect(listing.content).not.toContain('secret');
    const created = await editor.dispatch('str_replace_based_edit_tool', {
      command: 'create',
      path: '/docs/x.md',
      file_text: 'x',
    });
    expect(created.ok).toBe(false);
    expect(ws.exists('docs/x.md')).toBe(false);
  });

  it("a program's fs gets EACCES with the rule, its readdir hides, and the run changes nothing", async () => {
    const ws = restricted();
    ws.writeFile(
      'src/main.js',
      `import fs from 'fs';
const seen = fs.readdirSync('/');
let read, write;
try { fs.readFileSync('/secret/key.txt', 'utf8') } catch (e) { read = e.code + ' ' + e.message }
try { fs.writeFileSync('/notes.md', 'overwritten') } catch (e) { write = e.code }
fs.mkdirSync('/src/out', { recursive: true });
fs.writeFileSync('/src/out/result.txt', 'ok');
console.log(JSON.stringify({ seen, read, write }));`,
    );
    ws.setAccessRules({ readPatterns: ['src/**', 'docs/**', '/notes.md'], writePatterns: ['src/out'] });
    const r = await ws.exec('src/main.js');
    expect(r.ok, r.stderr).toBe(true);
    const out = JSON.parse(r.stdout);
    expect(out.seen).toEqual(['docs', 'notes.md', 'src']);
    expect(out.read).toMatch(/^EACCES .*readPatterns/);
    expect(out.write).toBe('EACCES');
    expect(ws.readText('notes.md')).toBe('needle notes\n');
    expect(ws.readText('src/out/result.txt')).toBe('ok');
  });

  it('a program cannot import or require what it may not read', async () => {
    const ws = new ZipWorkspace();
    ws.writeFile('secret/config.js', "export default 'hunter2';");
    ws.writeFile('secret/data.json', '{"key":"hunter2"}');
    ws.writeFile('src/esm.mjs', "import c from '../secret/config.js'; console.log(c);");
    ws.writeFile('src/cjs.cjs', "console.log(require('../secret/data.json').key);");
    ws.setAccessRules({ readPatterns: ['src/**'] });
    for (const entry of ['src/esm.mjs', 'src/cjs.cjs']) {
      const r = await ws.exec(entry);
      expect(r.ok, entry).toBe(false);
      expect(r.stdout).not.toContain('hunter2');
      expect(r.stderr + JSON.stringify(r.error)).toMatch(/POLICY_VIOLATION|EACCES|readPatterns/);
    }
  });

  it('run_js with the workspace follows the rules', async () => {
    const ws = restricted();
    const r = await codeTool({ workspace: ws }).dispatch('run_js', {
      code: "try { fs.writeFileSync('/docs/x.md', 'x') } catch (e) { return e.code } return 'written'",
    });
    expect(r.content).toBe("value: 'EACCES'");
    expect(ws.exists('docs/x.md')).toBe(false);
  });
});
