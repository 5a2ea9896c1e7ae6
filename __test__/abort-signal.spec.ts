// AbortSignal on run, runSync and ZipWorkspace#exec: aborting stops the run (CANCELLED), a
// signal from AbortSignal.timeout() reports TIMEOUT, and nothing the run wrote is kept.
import { describe, expect, it } from 'vitest';
import { run, runSync, ZipWorkspace } from '../lib/index.js';

const SPIN = 'for (;;) {}';

describe('AbortSignal', () => {
  it("exec stops when its signal aborts, and keeps none of the run's writes", async () => {
    const ws = new ZipWorkspace();
    ws.writeFile('main.js', "import fs from 'fs';\nfs.writeFileSync('out.txt', 'partial');\nfor (;;) {}\n");
    const controller = new AbortController();
    const started = Date.now();
    const pending = ws.exec('main.js', { signal: controller.signal, limits: { timeoutMs: 20_000 } });
    setTimeout(() => controller.abort(), 50);
    const r = await pending;
    expect(r.ok).toBe(false);
    expect(r.error?.code).toBe('CANCELLED');
    expect(Date.now() - started).toBeLessThan(5000);
    expect(ws.exists('out.txt')).toBe(false);
  });

  it('exec with an already aborted signal does not run at all', async () => {
    const ws = new ZipWorkspace();
    ws.writeFile('main.js', "import fs from 'fs';\nfs.writeFileSync('ran.txt', 'yes');\n");
    const r = await ws.exec('main.js', { signal: AbortSignal.abort(), commit: 'always' });
    expect(r.error?.code).toBe('CANCELLED');
    expect(ws.exists('ran.txt')).toBe(false);
  });

  it('AbortSignal.timeout() gives TIMEOUT, for exec, run and runSync', async () => {
    const ws = new ZipWorkspace();
    ws.writeFile('main.js', SPIN);
    const viaExec = await ws.exec('main.js', { signal: AbortSignal.timeout(100), limits: { timeoutMs: 20_000 } });
    expect(viaExec.error).toMatchObject({ code: 'TIMEOUT', name: 'TimeoutError' });
    const viaRun = await run(SPIN, { signal: AbortSignal.timeout(100), limits: { timeoutMs: 20_000 } });
    expect(viaRun.error).toMatchObject({ code: 'TIMEOUT', name: 'TimeoutError' });
    // runSync blocks the event loop, so only a signal that already fired can stop it.
    const fired = AbortSignal.timeout(1);
    await new Promise((r) => setTimeout(r, 20));
    const viaRunSync = runSync(SPIN, { signal: fired, limits: { timeoutMs: 20_000 } });
    expect(viaRunSync.error).toMatchObject({ code: 'TIMEOUT', name: 'TimeoutError' });
  });

  it('an abort with another reason stays CANCELLED', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('user pressed stop')), 50);
    const r = await run(SPIN, { signal: controller.signal, limits: { timeoutMs: 20_000 } });
    expect(r.error?.code).toBe('CANCELLED');
  });

  it('a run that finishes before its signal fires is unaffected', async () => {
    const ws = new ZipWorkspace();
    ws.writeFile('main.js', 'console.log(6 * 7);');
    const r = await ws.exec('main.js', { signal: AbortSignal.timeout(10_000) });
    expect(r).toMatchObject({ ok: true, stdout: '42\n' });
  });
});

describe('AbortSignal in the agent layers', () => {
  it('dispatch passes its signal to js_exec and refuses calls after an abort', async () => {
    const { workspaceTools } = await import('../lib/index.js');
    const ws = new ZipWorkspace();
    ws.writeFile('spin.js', SPIN);
    const { dispatch } = workspaceTools(ws);
    const timed = await dispatch(
      'js_exec',
      { path: 'spin.js', timeoutMs: 20_000 },
      { signal: AbortSignal.timeout(100) },
    );
    expect(timed.ok).toBe(false);
    expect(timed.content).toMatch(/TIMEOUT/);
    const refused = await dispatch('fs_read', { path: 'spin.js' }, { signal: AbortSignal.abort() });
    expect(refused).toMatchObject({ ok: false });
    expect(refused.content).toMatch(/CANCELLED/);
    const bad = await dispatch('fs_read', { path: 'spin.js' }, { signal: 'stop' as unknown as AbortSignal });
    expect(bad.content).toMatch(/INVALID_INPUT/);
  });

  it('the executor stops an edit when its signal aborts', async () => {
    const { createSandboxExecutor } = await import('../lib/index.js');
    const editor = createSandboxExecutor({
      createContext: (tree: unknown) => ({ tree }),
      limits: { timeoutMs: 20_000 },
    });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const r = await editor.run({ root: {} }, SPIN, { signal: controller.signal });
    expect(r.type).toBe('editingError');
    expect(r.result.error?.code).toBe('CANCELLED');
    await expect(editor({ root: {} }, SPIN, { signal: AbortSignal.timeout(50) })).rejects.toMatchObject({
      code: 'TIMEOUT',
    });
  });
});
