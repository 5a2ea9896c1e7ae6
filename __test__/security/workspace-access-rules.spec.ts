// Getting around a workspace's access rules: path spellings, the fs shim's other entry points,
// module loading, copying and renaming. Every way must meet the same refusal and leave the
// workspace as it was.
import { describe, expect, it } from 'vitest';
import { workspaceTools, ZipWorkspace } from '../../lib/index.js';

const SECRET = 'hunter2';

function guarded(): ZipWorkspace {
  const ws = new ZipWorkspace();
  ws.writeFile('secret/key.txt', `key=${SECRET}\n`);
  ws.writeFile('secret/mod.js', `export default '${SECRET}';`);
  ws.writeFile('secret/data.json', `{"key":"${SECRET}"}`);
  ws.writeFile('notes.md', 'notes\n');
  ws.writeFile('src/keep.txt', 'keep\n');
  ws.setAccessRules({ readPatterns: ['src/**'], writePatterns: ['src/out'] });
  return ws;
}

const SPELLINGS = [
  'secret/key.txt',
  '/secret/key.txt',
  '~/secret/key.txt',
  './secret//key.txt',
  'src/../secret/key.txt',
  '~/src/./../secret/./key.txt',
  'src/out/../../secret/key.txt',
];

describe('path spellings all normalize to the same refused path', () => {
  it('through the workspace API', () => {
    const ws = guarded();
    for (const p of SPELLINGS) {
      let code: string | undefined;
      try {
        ws.readText(p);
      } catch (e) {
        code = (e as { code?: string }).code;
      }
      expect(code, p).toBe('POLICY_VIOLATION');
      expect(ws.exists(p), p).toBe(false);
    }
    // Climbing above the root is not a way around either.
    expect(() => ws.readText('src/../../secret/key.txt')).toThrow(/PATH_INVALID|climbs above/);
  });

  it('through the tools', async () => {
    const tools = workspaceTools(guarded());
    for (const p of SPELLINGS) {
      const r = await tools.dispatch('fs_read', { path: p });
      expect(r.ok, p).toBe(false);
      expect(r.content, p).not.toContain(SECRET);
      const lines = await tools.dispatch('fs_read_lines', { path: p, start: 1 });
      expect(lines.content, p).not.toContain(SECRET);
    }
    const search = await tools.dispatch('fs_search', { query: SECRET });
    expect(search.content).toMatch(/^no matches/);
    expect(search.content).not.toContain(`key=`);
  });
});

describe("a program's every way to the bytes is refused", () => {
  const attempts: Record<string, string> = {
    readFileSync: "fs.readFileSync('/secret/key.txt', 'utf8')",
    'readFileSync through ..': "fs.readFileSync('src/../secret/key.txt', 'utf8')",
    'promises.readFile': "await fs.promises.readFile('/secret/key.txt', 'utf8')",
    'readFile callback':
      "await new Promise((res, rej) => fs.readFile('/secret/key.txt', 'utf8', (e, d) => e ? rej(e) : res(d)))",
    copyFileSync:
      "fs.copyFileSync('/secret/key.txt', '/src/out/copy.txt'); fs.readFileSync('/src/out/copy.txt', 'utf8')",
    renameSync: "fs.renameSync('/secret/key.txt', '/src/out/moved.txt'); fs.readFileSync('/src/out/moved.txt', 'utf8')",
    'dynamic import': "(await import('../secret/mod.js')).default",
    'import through ..': "(await import('./out/../../secret/mod.js')).default",
  };
  for (const [name, expr] of Object.entries(attempts)) {
    it(name, async () => {
      const ws = guarded();
      ws.setAccessRules(null);
      ws.writeFile(
        'src/main.mjs',
        `import fs from 'fs';\nfs.mkdirSync('/src/out', { recursive: true });\nlet got;\ntry { got = ${expr} } catch (e) { got = 'refused ' + (e.code ?? e.name) }\nconsole.log(String(got));\n`,
      );
      ws.setAccessRules({ readPatterns: ['src/**'], writePatterns: ['src/out'] });
      const before = ws.toZip();
      const r = await ws.exec('src/main.mjs', { commit: 'always' });
      expect(r.stdout + r.stderr, name).not.toContain(SECRET);
      expect(r.stdout + JSON.stringify(r.error ?? null), name).toMatch(/refused|EACCES|POLICY_VIOLATION|readPatterns/);
      ws.setAccessRules(null);
      expect(ws.readText('secret/key.txt')).toBe(`key=${SECRET}\n`);
      expect(ws.exists('src/out/copy.txt') || ws.exists('src/out/moved.txt')).toBe(false);
      expect(before.length).toBeGreaterThan(0);
    });
  }

  it('require of a refused JSON file', async () => {
    const ws = guarded();
    ws.setAccessRules(null);
    ws.writeFile(
      'src/main.cjs',
      "let got; try { got = require('../secret/data.json').key } catch (e) { got = 'refused ' + e.code } console.log(got);",
    );
    ws.setAccessRules({ readPatterns: ['src/**'] });
    const r = await ws.exec('src/main.cjs');
    expect(r.stdout + r.stderr).not.toContain(SECRET);
  });

  it('writes outside the write patterns, however spelled, change nothing', async () => {
    const ws = guarded();
    ws.setAccessRules(null);
    ws.writeFile(
      'src/w.mjs',
      `import fs from 'fs';
const out = [];
for (const p of ['/notes.md', 'src/out/../../notes.md', '~/notes.md', '/src/keep.txt']) {
  try { fs.writeFileSync(p, 'pwned'); out.push('wrote ' + p) } catch (e) { out.push(e.code) }
}
try { fs.rmSync('/src', { recursive: true }); out.push('removed') } catch (e) { out.push(e.code) }
try { fs.unlinkSync('/notes.md'); out.push('unlinked') } catch (e) { out.push(e.code) }
console.log(out.join(' '));`,
    );
    ws.setAccessRules({ writePatterns: ['src/out'] });
    const r = await ws.exec('src/w.mjs', { commit: 'always' });
    expect(r.stdout.trim()).toBe('EACCES EACCES EACCES EACCES EACCES EACCES');
    ws.setAccessRules(null);
    expect(ws.readText('notes.md')).toBe('notes\n');
    expect(ws.readText('src/keep.txt')).toBe('keep\n');
  });
});
