// run_js with `persistent: true`: calls are cells of one REPL, so a model in code mode keeps its
// working set between calls (DESIGN §10).
import { describe, expect, it } from 'vitest';
import { codeTool, type RunResult, workspaceTools, ZipWorkspace } from '../../lib/index.js';

describe('codeTool({ persistent: true })', () => {
  it('two calls share their top-level bindings, closures included', async () => {
    const set = codeTool({ persistent: true });
    const one = await set.dispatch('run_js', {
      code: 'const rows = new Map(); let next = 1;\nfunction add(name) { rows.set(next, name); return next++ }\nadd("first")',
    });
    expect(one).toMatchObject({ ok: true, content: 'value: 1' });
    const two = await set.dispatch('run_js', { code: 'add("second"); [...rows.values()]' });
    expect(two.content).toBe("value: [ 'first', 'second' ]");
    expect((two.data as RunResult & { state?: unknown }).state).toBeUndefined();
  });

  it('a failed call does not lose the earlier state, nor keep its own changes', async () => {
    const set = codeTool({ persistent: true, limits: { timeoutMs: 200 } });
    await set.dispatch('run_js', { code: 'let total = 10; const seen = [];' });
    const thrown = await set.dispatch('run_js', { code: 'total = 99; seen.push(1); let extra = 1; null.x' });
    expect(thrown).toMatchObject({ ok: false, code: 'EVAL_ERROR' });
    const timedOut = await set.dispatch('run_js', { code: 'total = 98; while (true) {}' });
    expect(timedOut).toMatchObject({ ok: false, code: 'TIMEOUT' });
    const after = await set.dispatch('run_js', { code: '[total, seen.length, typeof extra]' });
    expect(after.content).toBe("value: [ 10, 0, 'undefined' ]");
  });

  it('says a cell is a script: no top-level return, the last expression is the value', async () => {
    const set = codeTool({ persistent: true });
    const r = await set.dispatch('run_js', { code: 'return 1' });
    expect(r).toMatchObject({ ok: false, code: 'EVAL_ERROR' });
    expect(r.content).toMatch(/SyntaxError: return not in a function/);
    expect(r.content).toMatch(/Hint: The code is a script, not a function: end it with the value as an expression/);
    const none = await set.dispatch('run_js', { code: 'const later = 2;' });
    expect(none.content).toBe(
      'value: undefined (the last statement has no value; end the code with an expression to see one)',
    );
    expect((await set.dispatch('run_js', { code: 'await Promise.resolve(later * 21)' })).content).toBe('value: 42');
  });

  it('describes what persists and what does not', () => {
    const [tool] = codeTool({ persistent: true }).tools;
    expect(tool.description).toMatch(/persistent sandbox/);
    expect(tool.description).toMatch(/is still there in later calls/);
    expect(tool.description).toMatch(/closures with their variables/);
    expect(tool.description).toMatch(/return works only inside functions/);
    expect(tool.description).toMatch(/A call that fails changes nothing/);
    expect(tool.description).toMatch(/promises and timers cannot be kept/);
    expect(tool.inputSchema.properties?.code).toMatchObject({ description: expect.stringMatching(/script/) });
    // Without the option the description stays as it was.
    expect(codeTool().tools[0].description).toMatch(/each call starts from a clean state/);
  });

  it('tools stay callable in every call; a binding holding one is refused with INVALID_INPUT naming it', async () => {
    const ws = new ZipWorkspace();
    const set = codeTool({ persistent: true, tools: workspaceTools(ws, { include: ['fs_write', 'fs_read'] }) });
    await set.dispatch('run_js', { code: 'const written = [];' });
    const wrote = await set.dispatch('run_js', {
      code: "const r = await tools.fs_write({ path: 'a.txt', content: 'hi' }); written.push(r.ok); written",
    });
    expect(wrote.content).toBe('value: [ true ]');
    expect(ws.readText('a.txt')).toBe('hi');
    const held = await set.dispatch('run_js', { code: 'const t = tools; written.push(false); 1' });
    expect(held).toMatchObject({ ok: false, code: 'INVALID_INPUT' });
    expect(held.content).toMatch(/binding `t`/);
    expect((await set.dispatch('run_js', { code: 'written' })).content).toBe('value: [ true ]');
  });

  it('reset() starts from an empty working set; dispose() ends it (DISPOSED)', async () => {
    const set = codeTool({ persistent: true });
    await set.dispatch('run_js', { code: 'let kept = 1;' });
    set.reset();
    expect((await set.dispatch('run_js', { code: 'typeof kept' })).content).toBe("value: 'undefined'");
    await set.dispatch('run_js', { code: 'let again = 2;' });
    expect((await set.dispatch('run_js', { code: 'again' })).content).toBe('value: 2');
    set.dispose();
    expect(await set.dispatch('run_js', { code: '1' })).toMatchObject({ ok: false, code: 'DISPOSED' });
  });

  it('concurrent calls run one after another, in order', async () => {
    const set = codeTool({ persistent: true });
    await set.dispatch('run_js', { code: 'const order = [];' });
    const calls = [1, 2, 3].map((i) => set.dispatch('run_js', { code: `await null; order.push(${i}); order.length` }));
    expect((await Promise.all(calls)).map((r) => r.content)).toEqual(['value: 1', 'value: 2', 'value: 3']);
  });

  it('refuses a persistent that is not a boolean, and persistent with a workspace', () => {
    expect(() => codeTool({ persistent: 'yes' as unknown as boolean })).toThrow(
      expect.objectContaining({
        code: 'INVALID_INPUT',
        message: expect.stringContaining('persistent must be a boolean'),
      }),
    );
    expect(() => codeTool({ persistent: true, workspace: new ZipWorkspace() })).toThrow(
      expect.objectContaining({ code: 'INVALID_INPUT', message: expect.stringContaining('workspace') }),
    );
    expect(() => codeTool({ persistant: true } as never)).toThrow(
      expect.objectContaining({ message: expect.stringContaining('expected: limits, workspace, tools, persistent') }),
    );
  });
});
