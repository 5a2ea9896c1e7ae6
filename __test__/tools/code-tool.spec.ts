// run_js: the code tool's answers, limits, workspace access and cancellation.
import { describe, expect, it } from 'vitest';
import { codeTool, type RunResult, workspaceTools, ZipWorkspace } from '../../lib/index.js';

describe('codeTool', () => {
  it('is one tool, run_js, taking { code }, not read-only', () => {
    const { tools } = codeTool();
    expect(tools.map((t) => t.name)).toEqual(['run_js']);
    const [t] = tools;
    expect(t!.inputSchema.required).toEqual(['code']);
    expect(Object.keys(t!.inputSchema.properties!)).toEqual(['code']);
    expect(t!.annotations).toEqual({ readOnlyHint: false, destructiveHint: false, idempotentHint: false });
    expect(t!.description).toMatch(/return/);
    const withFiles = codeTool({ workspace: new ZipWorkspace() }).tools[0]!;
    expect(withFiles.annotations.destructiveHint).toBe(true);
    expect(withFiles.description).toMatch(/fs/);
  });

  it('answers with the value, the emitted output and the console lines', async () => {
    const r = await codeTool().dispatch('run_js', {
      code: 'console.log("hi", 1); console.warn("careful"); emit("out"); return { n: 42n, list: [1, "two"] };',
    });
    expect(r.ok).toBe(true);
    expect(r.content).toBe(
      "value: { n: 42n, list: [ 1, 'two' ] }\n--- output ---\nout\n--- console ---\n[log] hi 1\n[warn] careful",
    );
    const data = r.data as RunResult;
    expect(data.ok && data.value).toEqual({ n: 42n, list: [1, 'two'] });
  });

  it('says how to see a value when nothing was returned', async () => {
    const r = await codeTool().dispatch('run_js', { code: '1 + 1' });
    expect(r.content).toMatch(/^value: undefined \(nothing was returned; end the code with `return <value>`/);
  });

  it('reports a guest error with its code, line and frame', async () => {
    const r = await codeTool().dispatch('run_js', { code: 'const a = 1;\nconst b = a.missing.deeper;\nreturn b;' });
    expect(r.ok).toBe(false);
    expect(r.code).toBe('EVAL_ERROR');
    const [first, ...frame] = r.content.split('\n');
    expect(first).toMatch(/^ERROR EVAL_ERROR: TypeError: .*deeper.* \(line 2, column \d+\)$/);
    expect(frame.join('\n')).toContain('> 2 | const b = a.missing.deeper;');
    expect(r.content).toMatch(/\nHint: Fix the code at the line shown/);
    const syntax = await codeTool().dispatch('run_js', { code: 'return (1 +;' });
    expect(syntax.content).toMatch(/^ERROR EVAL_ERROR: SyntaxError: .*\(line 1, column \d+\)/);
  });

  it('applies the limits it was given', async () => {
    const r = await codeTool({ limits: { timeoutMs: 200 } }).dispatch('run_js', { code: 'for (;;) {}' });
    expect(r).toMatchObject({ ok: false, code: 'TIMEOUT' });
    expect(r.content).toMatch(/^ERROR TIMEOUT: .*\nHint: The code ran too long/);
  });

  it('stops when the signal aborts', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const r = await codeTool().dispatch('run_js', { code: 'for (;;) {}' }, { signal: controller.signal });
    expect(r).toMatchObject({ ok: false, code: 'CANCELLED' });
  });

  it('reads and writes the workspace it was given, keeping changes only on success', async () => {
    const ws = new ZipWorkspace();
    ws.writeFile('in.txt', 'abc');
    const set = codeTool({ workspace: ws });
    const r = await set.dispatch('run_js', {
      code: "const t = fs.readFileSync('in.txt', 'utf8'); fs.writeFileSync('out.txt', t.toUpperCase()); return t;",
    });
    expect(r.content).toBe("value: 'abc'");
    expect(ws.readText('out.txt')).toBe('ABC');
    const failed = await set.dispatch('run_js', { code: "fs.writeFileSync('later.txt', 'x'); throw new Error('no');" });
    expect(failed.ok).toBe(false);
    expect(ws.exists('later.txt')).toBe(false);
  });

  it('refuses bad arguments and bad options', async () => {
    const set = codeTool();
    expect((await set.dispatch('run_js', {})).content).toMatch(/^ERROR INVALID_INPUT: run_js: code is required/);
    expect((await set.dispatch('run_js', { code: '' })).content).toMatch(/code must not be empty/);
    expect(() => codeTool({ limit: {} } as never)).toThrow(/unknown codeTool\(\) option 'limit'/);
    expect(() => codeTool({ workspace: {} } as never)).toThrow(/ZipWorkspace/);
  });
});

describe('codeTool with tools: many tool calls from one script', () => {
  it('lists the tools in its description and lets the code call them, with their answers', async () => {
    const ws = new ZipWorkspace();
    const code = codeTool({ tools: workspaceTools(ws) });
    const runJs = code.tools[0]!;
    expect(runJs.description).toContain('tools.fs_write({ path, content');
    expect(runJs.description).toContain('tools.fs_read({ path })');
    expect(runJs.annotations.destructiveHint).toBe(true);
    const r = await code.dispatch('run_js', {
      code: `for (const name of ['a', 'b', 'c']) {
        const w = await tools.fs_write({ path: name + '.txt', content: name.toUpperCase() });
        if (!w.ok) throw new Error(w.content);
      }
      const read = await tools.fs_read({ path: 'b.txt' });
      const missing = await tools.fs_read({ path: 'nope.txt' });
      return [read.ok, read.content, missing.ok, missing.code];`,
    });
    expect(r.ok, r.content).toBe(true);
    expect((r.data as RunResult).ok && (r.data as { value: unknown }).value).toEqual([true, 'B', false, 'NOT_FOUND']);
    expect(ws.readText('a.txt') + ws.readText('c.txt')).toBe('AC');
    expect(ws.history(10)).toHaveLength(3);
  });

  it('offers only the given tools, and checks their arguments as dispatch does', async () => {
    const ws = new ZipWorkspace();
    ws.writeFile('x.txt', 'x');
    const code = codeTool({ tools: workspaceTools(ws, { readOnly: true }) });
    const r = await code.dispatch('run_js', {
      code: `const bad = await tools.fs_read({ path: 42 });
      try { tools.fs_write = () => ({ ok: true }) } catch {}
      return [typeof tools.fs_write, typeof tools.fs_read, bad.ok, bad.code, Object.keys(tools).length > 0];`,
    });
    expect((r.data as { value: unknown }).value).toEqual(['undefined', 'function', false, 'INVALID_INPUT', true]);
    expect(ws.readText('x.txt')).toBe('x');
  });

  it('refuses something that is not a tool set', () => {
    expect(() => codeTool({ tools: {} as never })).toThrow(/codeTool\(\) tools takes a tool set/);
  });
});
