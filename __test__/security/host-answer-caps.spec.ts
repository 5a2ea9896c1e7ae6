// Tool answers are built within the tool result size, not built whole and cut: line views read
// only the lines they show out of the file, listings stop adding entries at the answer's size and
// say how many were left out, success messages quote what the model sent at a bounded length,
// and a component's state values are printed with a budget.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Permission, StatefulComponent, StateType, ZipWorkspace } from '../../lib/index.js';
import { editorTools, workspaceTools } from '../../lib/tools/index.js';
import { MAX_ANSWER_BYTES, measure } from '../property/bounds.js';

const MiB = 1 << 20;
const bytes = (text: string) => Buffer.byteLength(text);

/** A workspace holding one large file of short lines under /memories. */
function bigFile(lineCount: number, line = 'x'.repeat(49)): ZipWorkspace {
  const ws = new ZipWorkspace();
  ws.writeFile('memories/big.txt', `${line}\n`.repeat(lineCount));
  return ws;
}

describe('line views read only the lines they show', () => {
  // 16 MB of one-character lines: reading it whole into a string and splitting it into lines
  // held hundreds of MiB.
  const LINES = 8_000_000;
  const views: [string, (ws: ZipWorkspace) => Promise<{ ok: boolean; content: string }>][] = [
    [
      'fs_read_lines',
      (ws) => workspaceTools(ws).dispatch('fs_read_lines', { path: 'memories/big.txt', start: 1, end: LINES }),
    ],
    [
      'text editor view with view_range',
      (ws) =>
        editorTools(ws, { dialect: 'anthropic-text-editor' }).dispatch('str_replace_based_edit_tool', {
          command: 'view',
          path: '/memories/big.txt',
          view_range: [1, -1],
        }),
    ],
    [
      'text editor view of a whole file',
      (ws) =>
        editorTools(ws, { dialect: 'anthropic-text-editor' }).dispatch('str_replace_based_edit_tool', {
          command: 'view',
          path: '/memories/big.txt',
        }),
    ],
    [
      'memory view with view_range',
      (ws) =>
        editorTools(ws, { dialect: 'anthropic-memory' }).dispatch('memory', {
          command: 'view',
          path: '/memories/big.txt',
          view_range: [2, -1],
        }),
    ],
    [
      'read_text_file head',
      (ws) =>
        editorTools(ws, { dialect: 'mcp-filesystem' }).dispatch('read_text_file', {
          path: '/memories/big.txt',
          head: LINES,
        }),
    ],
    [
      'read_text_file tail',
      (ws) =>
        editorTools(ws, { dialect: 'mcp-filesystem' }).dispatch('read_text_file', {
          path: '/memories/big.txt',
          tail: LINES,
        }),
    ],
  ];
  for (const [what, call] of views) {
    it(`${what}: bounded memory, capped answer, then the next call works`, async () => {
      const ws = bigFile(LINES, 'x');
      const cost = await measure(() => call(ws));
      expect(cost.value.ok, cost.value.content.slice(0, 200)).toBe(true);
      expect(bytes(cost.value.content)).toBeLessThanOrEqual(MAX_ANSWER_BYTES);
      expect(cost.memoryGrowth / MiB).toBeLessThan(32);
      expect(cost.ms).toBeLessThan(3000);
      // The file is unchanged and a small view still reads as before.
      expect(ws.stat('memories/big.txt').size).toBe(LINES * 2);
      const small = await workspaceTools(ws).dispatch('fs_read_lines', { path: 'memories/big.txt', start: 2, end: 3 });
      expect(small.content).toBe(
        `~/memories/big.txt lines 2-3 of ${LINES}\n2| x\n3| x\n[${LINES - 3} more lines; continue with start 4]`,
      );
    }, 30_000);
  }

  it('says where the view was cut and keeps the last lines for a tail', async () => {
    const ws = bigFile(100_000);
    const mcp = editorTools(ws, { dialect: 'mcp-filesystem' });
    const tail = (await mcp.dispatch('read_text_file', { path: '/memories/big.txt', tail: 100_000 })).content;
    expect(tail).toMatch(/^\[\d+ earlier lines not shown: the answer is full; ask for a shorter tail\]\n/);
    expect(tail.endsWith(`${'x'.repeat(49)}\n`)).toBe(true);
    const head = (await mcp.dispatch('read_text_file', { path: '/memories/big.txt', head: 100_000 })).content;
    expect(head).toMatch(/\n\[cut off after line \d+: the answer is full; ask for fewer lines\]$/);
    const lines = (
      await workspaceTools(ws).dispatch('fs_read_lines', { path: 'memories/big.txt', start: 10, end: 100_000 })
    ).content;
    expect(lines).toMatch(/\n\[\d+ more lines; continue with start \d+ \(the answer is full\)\]$/);
  });

  it('cuts a single line longer than an answer on a character boundary', async () => {
    const ws = new ZipWorkspace();
    ws.writeFile('wide.txt', `${'é'.repeat(200_000)}\nnext\n`);
    const r = await workspaceTools(ws).dispatch('fs_read_lines', { path: 'wide.txt' });
    expect(r.ok).toBe(true);
    expect(bytes(r.content)).toBeLessThanOrEqual(MAX_ANSWER_BYTES);
    expect(r.content).not.toContain('\uFFFD');
    expect(r.content).toMatch(/\[line 1 is cut off after about 65536 bytes; it is longer than one answer\]$/);
    const binary = new ZipWorkspace();
    binary.writeFile('bin.dat', Buffer.from([0xff, 0xfe, 0x0a, 0x41]));
    expect((await workspaceTools(binary).dispatch('fs_read_lines', { path: 'bin.dat' })).code).toBe('NOT_TEXT');
  });
});

describe('listings stop at the answer size and say what was left out', () => {
  // Names of three-byte characters: a cut counted in characters let answers reach ~200 KB.
  const name = (i: number) => `${'文'.repeat(60)}-${i}.txt`;
  function wideWorkspace(n: number): ZipWorkspace {
    const ws = new ZipWorkspace();
    for (let i = 0; i < n; i++) ws.writeFile(`memories/${name(i)}`, 'x');
    return ws;
  }
  const N = 2000;

  it.each([
    [
      'mcp-filesystem',
      'list_directory',
      { path: '/memories' },
      /\n\[\d+ more entries not shown: the answer is full; list a sub-folder or use search_files\]$/,
    ],
    [
      'mcp-filesystem',
      'list_directory_with_sizes',
      { path: '/memories' },
      /\[\d+ more entries not shown: the answer is full; list a sub-folder or use search_files\]\n\nTotal: 2000 files, 0 directories\n/,
    ],
    [
      'mcp-filesystem',
      'search_files',
      { path: '/', pattern: '**/*.txt' },
      /\n\[\d+ more entries not shown: the answer is full; narrow the pattern or the path\]$/,
    ],
    [
      'anthropic-text-editor',
      'str_replace_based_edit_tool',
      { command: 'view', path: '/memories' },
      /more entries not shown/,
    ],
    ['anthropic-memory', 'memory', { command: 'view', path: '/memories' }, /more entries not shown/],
  ] as const)('%s %s', async (dialect, tool, args, note) => {
    const ws = wideWorkspace(N);
    const cost = await measure(() => editorTools(ws, { dialect }).dispatch(tool, args));
    expect(cost.value.ok).toBe(true);
    expect(bytes(cost.value.content)).toBeLessThanOrEqual(MAX_ANSWER_BYTES);
    expect(cost.value.content).toMatch(note);
    expect(cost.ms).toBeLessThan(2000);
  });

  it('directory_tree stays valid JSON and ends with a truncated entry', async () => {
    const ws = wideWorkspace(N);
    const r = await editorTools(ws, { dialect: 'mcp-filesystem' }).dispatch('directory_tree', { path: '/' });
    expect(r.ok).toBe(true);
    expect(bytes(r.content)).toBeLessThanOrEqual(MAX_ANSWER_BYTES);
    const tree = JSON.parse(r.content) as { name: string; type: string; children?: unknown[] }[];
    const last = tree[tree.length - 1];
    expect(last.type).toBe('truncated');
    expect(last.name).toMatch(
      /^\[\d+ more entries not shown: the answer is full; show a sub-folder or leave folders out with excludePatterns\]$/,
    );
    // A small tree reads as the server writes it.
    const small = new ZipWorkspace();
    small.writeFile('a/b.txt', 'x');
    const plain = await editorTools(small, { dialect: 'mcp-filesystem' }).dispatch('directory_tree', { path: '/' });
    expect(JSON.parse(plain.content)).toEqual([
      { name: 'a', type: 'directory', children: [{ name: 'b.txt', type: 'file' }] },
    ]);
  });

  it('fs_list counts what it did not show', async () => {
    const ws = wideWorkspace(N);
    const r = await workspaceTools(ws).dispatch('fs_list', { path: '~/memories' });
    expect(bytes(r.content)).toBeLessThanOrEqual(MAX_ANSWER_BYTES);
    expect(r.content).toMatch(/\n\[\d+ more entries not shown; list a sub-folder\]$/);
  });
});

describe('success messages quote what the model sent at a bounded length', () => {
  const long = `${'~/../..'.repeat(150_000)}x`;
  it.each([
    ['create_directory', { path: long }],
    ['write_file', { path: long, content: 'hi' }],
    ['move_file', { source: '/a.txt', destination: long }],
  ] as const)('%s', async (tool, args) => {
    const ws = new ZipWorkspace();
    ws.writeFile('a.txt', 'a');
    const r = await editorTools(ws, { dialect: 'mcp-filesystem' }).dispatch(tool, args);
    expect(r.ok, r.content.slice(0, 100)).toBe(true);
    expect(bytes(r.content)).toBeLessThan(2 * 1024);
    expect(r.content).toMatch(/^Successfully /);
  });

  it('a tool answer of any shape is capped in bytes, not characters', async () => {
    const ws = new ZipWorkspace();
    ws.writeFile('wide.txt', '文'.repeat(100_000));
    const r = await editorTools(ws, { dialect: 'mcp-filesystem' }).dispatch('read_text_file', { path: '/wide.txt' });
    expect(bytes(r.content)).toBeLessThanOrEqual(MAX_ANSWER_BYTES);
    expect(r.content).toMatch(/\[\.\.\. cut off after \d+ of 300000 bytes; ask for less\]$/);
  });
});

describe('a search query longer than the lines it is matched against', () => {
  it.each([
    ['spanning lines', 'a\n'.repeat(800_000)],
    ['on one line', 'a'.repeat(1_000_000)],
  ])('%s: no per-line cost in its length, a short answer, then the next search works', async (_what, query) => {
    const ws = new ZipWorkspace();
    ws.writeFile('big.txt', 'a\n'.repeat(1 << 18));
    const tools = workspaceTools(ws);
    const cost = await measure(() => tools.dispatch('fs_search', { query }));
    expect(cost.ms).toBeLessThan(2000);
    expect(cost.value.ok).toBe(true);
    expect(cost.value.content).toMatch(/^no matches for "a.*… \(\d+ characters\) in ~\/ \(1 text files searched\)$/s);
    expect(bytes(cost.value.content)).toBeLessThan(1024);
    expect((await tools.dispatch('fs_search', { query: 'a', maxResults: 1 })).content).toMatch(/^~\/big\.txt:1:1: a/);
  });
});

describe('component state values are printed with a budget', () => {
  /** One array held 200 times at each of `depth` levels: a few objects, 200^depth when expanded. */
  function shared(depth: number): unknown {
    let v: unknown = ['leaf'];
    for (let i = 0; i < depth; i++) v = Array.from({ length: 200 }, () => v);
    return v;
  }
  /** A component with one readable state holding `value`. */
  function wide(value: unknown): StatefulComponent {
    return new (class Wide extends StatefulComponent {
      publicStates = {
        wide_state: {
          type: StateType.public,
          permission: Permission.r,
          schema: z.any(),
          sideEffectsDesc: 'none',
          state: { value },
        },
      };
    })();
  }
  it.each([4, 6])('render() and renderWithScriptSection() of %i shared levels', async (depth) => {
    const c = wide(shared(depth));
    const started = performance.now();
    const text = await c.render();
    const script = await c.renderWithScriptSection();
    expect(performance.now() - started).toBeLessThan(2000);
    expect(text.length).toBeLessThan(8000);
    expect(script.length).toBeLessThan(20_000);
    expect(text).toContain('"…"');
  });
  it('a cycle is shown, not thrown, and a small value reads as JSON', async () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    expect(await wide(cyclic).render()).toContain('<ref *1> { a: 1, self: [Circular *1] }');
    expect(await wide({ n: 1n, s: new Set([1]) }).render()).toContain('{"value":{"n":1,"s":[1]}}');
  });
});
