// Every command of every editor dialect driven with generated hostile arguments over a workspace
// of hostile files, plus the calls that reach each dialect's text algorithms with large inputs
// (globs, diffs, patch context): each answers a ToolResult within the bounds of DESIGN §4.4.
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { type EditorDialect, editorTools } from '../../lib/tools/index.js';
import { expectBounded, expectToolResult, MiB, measure, PARAMS, PATHOLOGICAL, size } from './bounds.js';
import { checkEveryTool, hostileWorkspace } from './tools.js';

const DIALECTS: EditorDialect[] = ['anthropic-text-editor', 'anthropic-memory', 'openai-apply-patch', 'mcp-filesystem'];

for (const dialect of DIALECTS) {
  const make = (ws: Parameters<typeof editorTools>[0]) => editorTools(ws, { dialect });
  const names = make(hostileWorkspace().ws).tools.map((t) => t.name);
  describe(`${dialect} stays within the host bounds`, () => {
    for (const name of names) {
      it(name, () => checkEveryTool(dialect, make, name), 120_000);
    }
  });
}

/** Calls one tool of a dialect on a fresh hostile workspace with `args` and checks the bounds. */
async function call(dialect: EditorDialect, tool: string, args: Record<string, unknown>, extraBytes: number) {
  const { ws, bytes } = hostileWorkspace();
  const cost = await measure(() => editorTools(ws, { dialect }).dispatch(tool, args));
  const what = `${dialect} ${tool}(${JSON.stringify(args).slice(0, 200)})`;
  expectToolResult(what, cost.value);
  expectBounded(what, cost, bytes + JSON.stringify(args).length + extraBytes);
}

const lines = (n: number, line: string) => `${line}\n`.repeat(Math.max(1, Math.floor(n / (line.length + 1))));

describe('dialect text algorithms on large inputs', () => {
  it('mcp-filesystem search_files and directory_tree with pathological globs', () =>
    fc.assert(
      fc.asyncProperty(fc.constantFrom(...PATHOLOGICAL), fc.boolean(), async (pattern, tree) => {
        if (tree) await call('mcp-filesystem', 'directory_tree', { path: '.', excludePatterns: [pattern] }, 0);
        else await call('mcp-filesystem', 'search_files', { path: '.', pattern }, 0);
      }),
      PARAMS,
    ));

  it('mcp-filesystem edit_file replacing a large block', () =>
    fc.assert(
      fc.asyncProperty(size(MiB), fc.string({ maxLength: 20 }), async (n, line) => {
        const { ws, bytes } = hostileWorkspace();
        const before = lines(n, `old ${line}`);
        ws.writeFile('edit.txt', before);
        const args = { path: 'edit.txt', edits: [{ oldText: before, newText: lines(n, `new ${line}`) }] };
        const cost = await measure(() => editorTools(ws, { dialect: 'mcp-filesystem' }).dispatch('edit_file', args));
        expectToolResult(`edit_file of ${n} bytes`, cost.value);
        expectBounded(`edit_file of ${n} bytes`, cost, bytes + 3 * n);
      }),
      PARAMS,
    ));

  it('openai-apply-patch update with a large context', () =>
    fc.assert(
      fc.asyncProperty(size(MiB), async (n) => {
        const { ws, bytes } = hostileWorkspace();
        const file = lines(n, 'same line');
        ws.writeFile('patch.txt', `${file}last\n`);
        const context = file
          .split('\n')
          .filter((l) => l)
          .map((l) => ` ${l}`)
          .join('\n');
        const diff = `@@\n${context}\n-last\n+changed\n`;
        const args = { operation: { type: 'update_file', path: 'patch.txt', diff } };
        const cost = await measure(() =>
          editorTools(ws, { dialect: 'openai-apply-patch' }).dispatch('apply_patch', args),
        );
        expectToolResult(`apply_patch of ${diff.length} bytes`, cost.value);
        expectBounded(`apply_patch of ${diff.length} bytes`, cost, bytes + n + diff.length);
      }),
      PARAMS,
    ));

  it('anthropic-text-editor str_replace of a large block', () =>
    fc.assert(
      fc.asyncProperty(size(MiB), async (n) => {
        const { ws, bytes } = hostileWorkspace();
        const old = lines(n, 'x y z');
        ws.writeFile('s.txt', `${old}end\n`);
        const args = { command: 'str_replace', path: '/s.txt', old_str: old, new_str: lines(n, 'z y x') };
        const set = editorTools(ws, { dialect: 'anthropic-text-editor' });
        const cost = await measure(() => set.dispatch(set.tools[0].name, args));
        expectToolResult(`str_replace of ${n} bytes`, cost.value);
        expectBounded(`str_replace of ${n} bytes`, cost, bytes + 3 * n);
      }),
      PARAMS,
    ));
});
