// Text work the host does on a model's input (searches, glob patterns, diffs, patch context and
// string matching) is linear in that input and builds capped answers: each reproducer runs in a
// child process started with --expose-gc, which reports the call's wall time and how far its
// peak RSS rose above the collected heap before the call.
import { describe, expect, it } from 'vitest';
import { ZipWorkspace } from '../../lib/index.js';
import { GlobMatcher, LineIndex } from '../../lib/native/load.js';
import { editorTools } from '../../lib/tools/dialects/index.js';
import { measureInChild } from '../helpers.js';

const MB = 2 ** 20;

const measure = measureInChild;

/** A 4 MB file whose every line holds the query. */
const BIG_FILE = "ws.writeFile('big.txt', `${'a'.repeat(99)}\\n`.repeat(40_000));";

describe('search answers have a byte budget', () => {
  it('world.search with 100 lines of context and 10,000 hits from a session turn stays small', () => {
    const m = measure(`${BIG_FILE}
      const s = new q.Session({ workspace: ws, policy: {} });
      return async () => {
        const t = await s.executeTurn(
          "const r = world.search('a', { context: 100, maxResults: 10000 });" +
          "return [r.matches.length, r.truncated, JSON.stringify(r).length]");
        const again = await s.executeTurn("return world.search('a', { maxResults: 1 }).matches.length");
        return [t.outcome, again.outcome];
      };`);
    const [outcome, again] = m.result;
    expect(outcome.tag).toBe('ok');
    const [hits, truncated, size] = outcome.value;
    expect(truncated).toBe(true);
    expect(hits).toBeLessThan(100);
    expect(size).toBeLessThan(2 * MB);
    expect(m.grew).toBeLessThan(64);
    expect(again).toEqual({ tag: 'ok', value: 1 });
  });

  it('fs_search with 20 lines of context builds a 64 KiB answer, not a copy per hit', () => {
    const m = measure(`ws.writeFile('big.txt', \`\${'a'.repeat(1999)}\\n\`.repeat(2_000));
      const tools = q.workspaceTools(ws, { readOnly: true });
      return async () => {
        const r = await tools.dispatch('fs_search', { query: 'a', context: 20, maxResults: 1000 });
        return { ok: r.ok, length: r.content.length, tail: r.content.slice(-200) };
      };`);
    expect(m.result.ok).toBe(true);
    expect(m.result.length).toBeLessThan(200 * 1024);
    expect(m.result.tail).toMatch(/there are more/);
    expect(m.grew).toBeLessThan(64);
    expect(m.ms).toBeLessThan(5_000);
  });

  it('charges every string of the answer, refuses a budget out of range and leaves the files alone', () => {
    const ws = new ZipWorkspace();
    ws.writeFile('a.txt', 'x\n'.repeat(5_000));
    const r = ws.search('x', { context: 5, maxResults: 10_000, maxBytes: 4096 });
    expect(r.truncated).toBe(true);
    const charged = r.matches
      .flatMap((m) => [m.path, m.text, ...m.before, ...m.after])
      .reduce((sum, s) => sum + Buffer.byteLength(s) + 32, 0);
    expect(charged).toBeLessThanOrEqual(4096);
    for (const maxBytes of [0, 1023, 8 * MB + 1, 1.5]) {
      let code: unknown;
      try {
        ws.search('x', { maxBytes });
      } catch (e) {
        code = (e as { code?: string }).code;
      }
      expect(code, String(maxBytes)).toBe('INVALID_INPUT');
    }
    // A search that fits is whole and not marked cut; the file is unchanged.
    const whole = ws.search('x', { path: 'a.txt', maxResults: 3, context: 1 });
    expect(whole.matches.map((m) => [m.before.length, m.after.length])).toEqual([
      [0, 1],
      [1, 1],
      [1, 1],
    ]);
    expect(ws.readText('a.txt')).toBe('x\n'.repeat(5_000));
  });
});

describe('glob patterns are matched by automata, not backtracking', () => {
  const HOSTILE = ['*a*a*a*a*a*a*a*a*a*a*a*b', `${'**/'.repeat(200)}b`, `{${Array(50).fill('*a*a*a*c').join(',')}}`];

  it('search_files and directory_tree answer at once for a 44-character name', () => {
    const m = measure(`ws.writeFile('d/${'a'.repeat(44)}', 'x'); ws.writeFile('${'a/'.repeat(30)}z', 'x');
      const { dispatch } = editorTools(ws, { dialect: 'mcp-filesystem' });
      const patterns = ${JSON.stringify(HOSTILE)};
      return async () => {
        const out = [];
        for (const pattern of patterns) {
          out.push((await dispatch('search_files', { path: '/', pattern, excludePatterns: patterns })).content);
          out.push((await dispatch('directory_tree', { path: '/', excludePatterns: [pattern] })).ok);
        }
        return out;
      };`);
    expect(m.ms).toBeLessThan(2_000);
    expect(m.result.filter((x: unknown) => typeof x === 'string')).toEqual([
      'No matches found',
      'No matches found',
      'No matches found',
    ]);
    expect(m.result.filter((x: unknown) => typeof x === 'boolean')).toEqual([true, true, true]);
  });

  it('keeps the server semantics: bare names exclude at any depth, patterns match whole paths', async () => {
    const ws = new ZipWorkspace();
    ws.writeFile('src/node_modules/x.js', '1');
    ws.writeFile('src/a.js', '1');
    ws.writeFile('.env', '1');
    const { dispatch } = editorTools(ws, { dialect: 'mcp-filesystem' });
    const tree = JSON.parse(
      (await dispatch('directory_tree', { path: '/', excludePatterns: ['node_modules'] })).content,
    );
    expect(JSON.stringify(tree)).not.toContain('node_modules');
    expect((await dispatch('search_files', { path: '/', pattern: '*.js' })).content).toBe('No matches found');
    expect((await dispatch('search_files', { path: '/', pattern: '**/*.js' })).content).toBe(
      '/src/a.js\n/src/node_modules/x.js',
    );
    expect((await dispatch('search_files', { path: '/', pattern: '.*' })).content).toBe('/.env');
    const m = new GlobMatcher(['{a,b}/[!x]?'], false);
    expect([m.isMatch('a/yz'), m.isMatch('b/xz'), m.isMatch('c/yz')]).toEqual([true, false, false]);
  });

  it('refuses patterns that are not globs or are too long with INVALID_INPUT, and the next call works', async () => {
    const ws = new ZipWorkspace();
    ws.writeFile('a.txt', '1');
    const { dispatch } = editorTools(ws, { dialect: 'mcp-filesystem' });
    for (const pattern of ['a[b', '{a,b', 'x'.repeat(1025)]) {
      const r = await dispatch('search_files', { path: '/', pattern });
      expect(r, pattern.slice(0, 10)).toMatchObject({ ok: false, code: 'INVALID_INPUT' });
      const t = await dispatch('directory_tree', { path: '/', excludePatterns: [pattern] });
      expect(t).toMatchObject({ ok: false, code: 'INVALID_INPUT' });
    }
    expect(() => new GlobMatcher(Array(257).fill('a'), false)).toThrow(/at most 256/);
    expect((await dispatch('search_files', { path: '/', pattern: '*.txt' })).content).toBe('/a.txt');
  });
});

describe('diffs are computed natively with a capped answer', () => {
  const LINES = 9_000;
  const EDIT = `const oldLines = Array.from({ length: ${LINES} }, (_, i) => 'o' + i).join('\\n');
    const newLines = Array.from({ length: ${LINES} }, (_, i) => 'n' + i).join('\\n');
    ws.writeFile('f.txt', oldLines + '\\n');
    const { dispatch } = editorTools(ws, { dialect: 'mcp-filesystem' });`;

  it('a 90 KB edit_file request takes little memory and answers at most 64 KiB of diff', () => {
    const m = measure(`${EDIT}
      return async () => {
        const r = await dispatch('edit_file', { path: '/f.txt', edits: [{ oldText: oldLines, newText: newLines }], dryRun: true });
        return { ok: r.ok, length: r.content.length, tail: r.content.slice(-60), file: ws.readText('f.txt') === oldLines + '\\n' };
      };`);
    expect(m.result.ok).toBe(true);
    expect(m.result.length).toBeLessThan(66 * 1024);
    expect(m.result.tail).toMatch(/diff cut off after 65536 bytes/);
    expect(m.result.file).toBe(true);
    expect(m.grew).toBeLessThan(64);
    expect(m.ms).toBeLessThan(2_000);
  });

  it('a real edit still writes the whole new text and a small change gives a small diff', async () => {
    const ws = new ZipWorkspace();
    const text = Array.from({ length: 20_000 }, (_, i) => `line ${i}`).join('\n');
    ws.writeFile('f.txt', text);
    const { dispatch } = editorTools(ws, { dialect: 'mcp-filesystem' });
    const r = await dispatch('edit_file', { path: '/f.txt', edits: [{ oldText: 'line 10000\n', newText: 'ten\n' }] });
    expect(r.ok).toBe(true);
    expect(r.content).toContain('@@ -9997,9 +9997,9 @@\n line 9996\n');
    expect(r.content.length).toBeLessThan(1_000);
    expect(ws.readText('f.txt')).toBe(text.replace('line 10000\n', 'ten\n'));
  });
});

describe('patch context is matched in linear time', () => {
  it('a 117 KB apply_patch whose context almost matches fails fast with PATCH_MISMATCH', () => {
    const m = measure(`ws.writeFile('f.txt', 'x\\n'.repeat(60_000));
      const { dispatch } = editorTools(ws, { dialect: 'openai-apply-patch' });
      const diff = '@@\\n' + ' x\\n'.repeat(38_999) + ' y\\n';
      const small = '@@\\n x\\n-x\\n+y\\n*** End of File';
      return async () => {
        const r = await dispatch('apply_patch', { operation: { type: 'update_file', path: 'f.txt', diff } });
        const ok = await dispatch('apply_patch', { operation: { type: 'update_file', path: 'f.txt', diff: small } });
        return { ok: r.ok, code: r.code, size: diff.length, head: r.content.slice(0, 200), next: ok.ok, file: ws.readText('f.txt').slice(-6) };
      };`);
    expect(m.result.size).toBeGreaterThan(117_000);
    expect(m.result).toMatchObject({ ok: false, code: 'PATCH_MISMATCH', next: true, file: 'x\nx\ny\n' });
    expect(m.result.head).toContain('First line that does not match: y');
    expect(m.ms).toBeLessThan(2_000);
  });

  it('a section whose context is a whole 4 MB file applies (the patched file is not built by spreading lines)', async () => {
    for (const [line, count] of [
      ['same line', 420_000],
      ['', 2_000_000],
    ] as const) {
      const ws = new ZipWorkspace();
      const file = `${line}\n`.repeat(count);
      ws.writeFile('f.txt', `${file}last\n`);
      const { dispatch } = editorTools(ws, { dialect: 'openai-apply-patch' });
      const context = file.replace(/^/gm, ' ').replace(/ $/, '');
      const started = performance.now();
      const r = await dispatch('apply_patch', {
        operation: { type: 'update_file', path: 'f.txt', diff: `@@\n${context}-last\n+changed\n` },
      });
      expect(performance.now() - started).toBeLessThan(10_000);
      expect(r).toMatchObject({ ok: true });
      expect(ws.readText('f.txt').endsWith(`${line}\nchanged\n`)).toBe(true);
      const next = await dispatch('apply_patch', {
        operation: { type: 'update_file', path: 'f.txt', diff: '@@\n-changed\n+again\n*** End of File' },
      });
      expect(next.ok).toBe(true);
    }
  });

  it('many sections that only match leniently cost linear time, and the V4A fallbacks still hold', async () => {
    const ws = new ZipWorkspace();
    const lines = Array.from({ length: 20_000 }, (_, i) => `  v${i}  `);
    ws.writeFile('f.txt', `${lines.join('\n')}\n`);
    const { dispatch } = editorTools(ws, { dialect: 'openai-apply-patch' });
    // Each section's context has its whitespace stripped: only the third pass matches.
    const sections = Array.from({ length: 2_000 }, (_, k) => `@@\n v${k * 10}\n-v${k * 10 + 1}\n+w${k}`).join('\n');
    const started = performance.now();
    const r = await dispatch('apply_patch', { operation: { type: 'update_file', path: 'f.txt', diff: sections } });
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(r.ok).toBe(true);
    const after = ws.readText('f.txt').split('\n');
    expect(after[1]).toBe('w0');
    expect(after[11]).toBe('w1');
    // End-of-file anchoring: the section pins to the last lines.
    ws.writeFile('e.txt', 'a\nb\na\nb\n');
    const eof = await dispatch('apply_patch', {
      operation: { type: 'update_file', path: 'e.txt', diff: '@@\n a\n-b\n+B\n*** End of File' },
    });
    expect(eof.ok).toBe(true);
    expect(ws.readText('e.txt')).toBe('a\nb\na\nB\n');
  });

  it('a line index refuses work past its budget with TOO_COMPLEX instead of scanning on', () => {
    const index = new LineIndex('x\n'.repeat(1_000));
    let code: unknown;
    try {
      for (let i = 0; i < 100_000; i++) index.findBlock(['x', 'y'], 0);
    } catch (e) {
      code = (e as { code?: string }).code;
    }
    expect(code).toBe('TOO_COMPLEX');
  });
});

describe('str_replace finds occurrences natively', () => {
  it('a one-character old_str in a 1 MB file is refused quickly with a short message', async () => {
    const ws = new ZipWorkspace();
    ws.writeFile('f.txt', 'a\n'.repeat(500_000));
    const { dispatch } = editorTools(ws, { dialect: 'anthropic-text-editor' });
    const started = performance.now();
    const r = await dispatch('str_replace_based_edit_tool', {
      command: 'str_replace',
      path: '/f.txt',
      old_str: 'a',
      new_str: 'b',
    });
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(r).toMatchObject({ ok: false, code: 'AMBIGUOUS_MATCH' });
    expect(r.content.length).toBeLessThan(2_000);
    expect(r.content).toContain('[1, 2, 3');
    expect(ws.readText('f.txt')).toBe('a\n'.repeat(500_000));
  });
});
