// Host work a model drives through the tools, dialects and session turns stays bounded: values
// that share parts are shown without expanding them, listings walk each entry once, and
// failures and multi-file reads do not echo or gather unbounded text. Each reproducer runs in
// a child process started with --expose-gc, which reports the call's wall time and how far its
// peak RSS rose above the collected heap before the call; a child that hangs is killed.
import { describe, expect, it } from 'vitest';
import { codeTool, describeTurn, Session, ZipWorkspace } from '../../lib/index.js';
import { editorTools } from '../../lib/tools/dialects/index.js';
import { measureInChild } from '../helpers.js';

const MB = 2 ** 20;

const measure = (body: string) => measureInChild(body, 20_000);

/** Guest code that builds `levels` nested arrays of `width` times the same array. */
const shared = (levels: number, width: number) =>
  `let x = 1; for (let i = 0; i < ${levels}; i++) x = Array(${width}).fill(x);`;

describe('values that repeat shared parts are shown without expanding them', () => {
  it('run_js returning 6 levels of 200 shared arrays answers fast and small', () => {
    const m = measure(`
      const set = tools.codeTool();
      return async () => {
        const r = await set.dispatch('run_js', { code: ${JSON.stringify(`${shared(6, 200)} return x;`)} });
        return { ok: r.ok, length: r.content.length, head: r.content.slice(0, 40) };
      };`);
    expect(m.result.ok).toBe(true);
    expect(m.result.head).toMatch(/^value: \[/);
    expect(m.result.length).toBeLessThanOrEqual(70 * 1024);
    expect(m.ms).toBeLessThan(3000);
    expect(m.grew).toBeLessThan(200);
  });

  it('run_js shows a shared value less deep but still shows a small one whole', async () => {
    const set = codeTool();
    const small = await set.dispatch('run_js', { code: 'return { a: [1, 2, { b: "c" }], d: new Map([[1, 2]]) };' });
    expect(small.content).toBe("value: { a: [ 1, 2, { b: 'c' } ], d: Map(1) { 1 => 2 } }");
    const wide = await set.dispatch('run_js', { code: `${shared(4, 100)} return x;` });
    expect(wide.ok).toBe(true);
    expect(wide.content).toContain('[Array]');
    // A cycle still reads as inspect writes it.
    const cyclic = await set.dispatch('run_js', { code: 'const o = { n: 1 }; o.self = o; return o;' });
    expect(cyclic.content).toContain('[Circular *1]');
    // The next call works.
    expect((await set.dispatch('run_js', { code: 'return 1 + 1;' })).content).toBe('value: 2');
  });

  it('execute_turn and describeTurn of a turn returning 5 levels of 100 shared arrays stay small', () => {
    const m = measure(`
      const s = new q.Session({ policy: q.policies.SAFE_EDIT });
      const set = q.sessionTools(s);
      return async () => {
        const r = await set.dispatch('execute_turn', { code: ${JSON.stringify(`${shared(5, 100)} return x;`)} });
        return { ok: r.ok, length: r.content.length, head: r.content.slice(0, 30) };
      };`);
    expect(m.result.ok).toBe(true);
    expect(m.result.head).toMatch(/^Turn 1 finished. Value: \[\n \[\n/);
    expect(m.result.length).toBeLessThanOrEqual(8100);
    expect(m.ms).toBeLessThan(3000);
    expect(m.grew).toBeLessThan(200);
  });

  it('describeTurn shows small values as JSON, cycles as inspect does, and marks a cut value', async () => {
    const s = new Session({});
    expect(describeTurn(await s.executeTurn('return { a: [1, 2n] };'))).toBe(
      'Turn 1 finished. Value: {\n "a": [\n  1,\n  "2n"\n ]\n}',
    );
    const cyclic = describeTurn(await s.executeTurn('const o = { n: 1 }; o.self = o; return o;'));
    expect(cyclic).toContain('[Circular *1]');
    const wide = describeTurn(await s.executeTurn(`${shared(3, 100)} return x;`));
    expect(wide.length).toBeLessThanOrEqual(8100);
    expect(wide).toMatch(/… \((cut|\d+ chars)\)$/);
    expect(describeTurn(await s.executeTurn('return 3;'))).toBe('Turn 4 finished. Value: 3');
  });
});

/** A workspace with `n` empty folders at its root, or below `memories/`. */
const folders = (n: number, under = '') =>
  `for (let i = 0; i < ${n}; i++) ws.mkdir('${under}d' + i, { recursive: true });`;

describe('listings look at each entry once', () => {
  it('search_files excluding each of 8,900 folders answers in linear time', () => {
    const m = measure(`${folders(8900)}
      const set = editorTools(ws, { dialect: 'mcp-filesystem' });
      return async () => {
        const r = await set.dispatch('search_files', { path: '/', pattern: '**/*.js', excludePatterns: ['d*'] });
        return { ok: r.ok, content: r.content };
      };`);
    expect(m.result).toEqual({ ok: true, content: 'No matches found' });
    // Every excluded folder was compared with every earlier one: 0.9 s here.
    expect(m.ms).toBeLessThan(400);
  });

  it('search_files skips exactly the contents of an excluded folder', async () => {
    const ws = new ZipWorkspace();
    for (const p of ['d1/a.js', 'd1/sub/b.js', 'd10/c.js', 'd2/d.js', 'e.js']) ws.writeFile(p, '');
    const set = editorTools(ws, { dialect: 'mcp-filesystem' });
    const r = await set.dispatch('search_files', { path: '/', pattern: '**/*.js', excludePatterns: ['d1'] });
    expect(r.content.split('\n')).toEqual(['/d10/c.js', '/d2/d.js', '/e.js']);
    const all = await set.dispatch('search_files', { path: '/', pattern: '**/*.js' });
    expect(all.content.split('\n')).toHaveLength(5);
  });

  it('memory view of 8,900 folders answers in linear time', () => {
    const m = measure(`${folders(8900, 'memories/')}
      const set = editorTools(ws, { dialect: 'anthropic-memory' });
      return async () => {
        const r = await set.dispatch('memory', { command: 'view', path: '/memories' });
        return { ok: r.ok, length: r.content.length };
      };`);
    expect(m.result.ok).toBe(true);
    expect(m.result.length).toBeLessThanOrEqual(70 * 1024);
    // Each folder's size summed over every entry: 0.37 s here.
    expect(m.ms).toBeLessThan(200);
  });

  it('memory view gives each shown folder the size of everything below it', async () => {
    const ws = new ZipWorkspace();
    ws.writeFile('memories/a/b/c/d.txt', 'x'.repeat(3000));
    ws.writeFile('memories/a/e.txt', 'yy');
    ws.mkdir('memories/g', { recursive: true });
    const set = editorTools(ws, { dialect: 'anthropic-memory' });
    const r = await set.dispatch('memory', { command: 'view', path: '/memories' });
    expect(r.content.split('\n').slice(1)).toEqual([
      '2.9K\t/memories',
      '2.9K\t/memories/a/',
      '2.9K\t/memories/a/b/',
      '2B\t/memories/a/e.txt',
      '0B\t/memories/g/',
    ]);
  });
});

describe('read_multiple_files builds its answer within the tool result size', () => {
  it('the same 50 MB file asked for 16 times is decoded once, up to the answer size', () => {
    const m = measure(`
      ws.writeFile('big.txt', ('abcdefghij'.repeat(7) + '\\n').repeat(Math.floor(${50 * MB} / 71)));
      const set = editorTools(ws, { dialect: 'mcp-filesystem' });
      return async () => {
        const r = await set.dispatch('read_multiple_files', { paths: Array(16).fill('/big.txt') });
        return { ok: r.ok, length: r.content.length, tail: r.content.slice(-200) };
      };`);
    // Every copy was decoded and held (1.6 GB here) until the join failed with INTERNAL.
    expect(m.result.ok).toBe(true);
    expect(m.result.length).toBeLessThanOrEqual(68 * 1024);
    expect(m.result.tail).toContain('[15 more files not read: the answer is full; read them in another call]');
    expect(m.ms).toBeLessThan(1000);
    expect(m.grew).toBeLessThan(200);
  });

  it('small files read whole, errors stay short and the next call works', async () => {
    const ws = new ZipWorkspace();
    ws.writeFile('a.txt', 'alpha\n');
    ws.writeFile('b.txt', 'beta');
    const set = editorTools(ws, { dialect: 'mcp-filesystem' });
    const r = await set.dispatch('read_multiple_files', { paths: ['/a.txt', '/missing.txt', '/b.txt'] });
    expect(r.content).toBe(
      "/a.txt:\nalpha\n\n\n---\n/missing.txt: Error - ENOENT: no such file or directory, open '/missing.txt'\n---\n/b.txt:\nbeta\n",
    );
    const long = `/${'x'.repeat(5 * MB)}`;
    const bad = await set.dispatch('read_multiple_files', { paths: Array(50).fill(long) });
    expect(bad.ok).toBe(true);
    expect(bad.content.length).toBeLessThanOrEqual(68 * 1024);
    expect((await set.dispatch('read_multiple_files', { paths: ['/b.txt'] })).content).toBe('/b.txt:\nbeta\n');
  });
});

describe('failures quote what the model sent at a bounded length', () => {
  const huge = 'Z'.repeat(5 * MB);

  it('a 5 MB old_str or oldText that does not match is quoted short; the file is unchanged', async () => {
    const ws = new ZipWorkspace();
    ws.writeFile('a.txt', 'hello\n');
    ws.writeFile('memories/a.txt', 'hello\n');
    const editor = editorTools(ws, { dialect: 'anthropic-text-editor' });
    const memory = editorTools(ws, { dialect: 'anthropic-memory' });
    const mcp = editorTools(ws, { dialect: 'mcp-filesystem' });
    const results = [
      await editor.dispatch('str_replace_based_edit_tool', { command: 'str_replace', path: '/a.txt', old_str: huge }),
      await memory.dispatch('memory', { command: 'str_replace', path: '/memories/a.txt', old_str: huge, new_str: '' }),
      await mcp.dispatch('edit_file', { path: '/a.txt', edits: [{ oldText: huge, newText: 'x' }] }),
    ];
    for (const r of results) {
      expect(r.code).toBe('NO_MATCH');
      expect(r.content.length).toBeLessThan(1200);
    }
    expect(results[0].content).toContain(`${'Z'.repeat(1000)}… (${5 * MB} characters)`);
    expect(ws.readText('a.txt')).toBe('hello\n');
    const next = await editor.dispatch('str_replace_based_edit_tool', {
      command: 'str_replace',
      path: '/a.txt',
      old_str: 'hello',
      new_str: 'bye',
    });
    expect(next.ok).toBe(true);
    expect(ws.readText('a.txt')).toBe('bye\n');
  });

  it('a 5 MB path or tool name comes back within the tool result size, with its code', async () => {
    const ws = new ZipWorkspace();
    const editor = editorTools(ws, { dialect: 'anthropic-text-editor' });
    const view = await editor.dispatch('str_replace_based_edit_tool', { command: 'view', path: `/${huge}` });
    expect(view.code).toBe('PATH_INVALID');
    expect(view.content.length).toBeLessThanOrEqual(68 * 1024);
    const unknown = await editor.dispatch(huge, {});
    expect(unknown.code).toBe('UNKNOWN_TOOL');
    expect(unknown.content.length).toBeLessThanOrEqual(68 * 1024);
    const memory = editorTools(ws, { dialect: 'anthropic-memory' });
    const bad = await memory.dispatch('memory', { command: 'view', path: `/memories/${huge}` });
    expect(bad.code).toBe('PATH_INVALID');
    expect(bad.content.length).toBeLessThanOrEqual(68 * 1024);
    expect((await memory.dispatch('memory', { command: 'view', path: '/memories' })).ok).toBe(true);
  });
});
