// ZipWorkspace#dispose and Symbol.dispose: the memory is released at once and every later call
// is refused with DISPOSED, including runs that were in progress.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ZipWorkspace } from '../../lib/index.js';

function codeOf(f: () => unknown): string | undefined {
  try {
    f();
  } catch (e) {
    return (e as { code?: string }).code;
  }
  return undefined;
}

describe('ZipWorkspace disposal', () => {
  it('dispose() refuses every later call with DISPOSED, and may be called twice', async () => {
    const ws = new ZipWorkspace();
    ws.writeFile('a.txt', 'hello');
    ws.dispose();
    ws.dispose();
    for (const call of [
      () => ws.readText('a.txt'),
      () => ws.writeFile('b.txt', 'x'),
      () => ws.list('/'),
      () => ws.toZip(),
      () => ws.history(),
    ]) {
      expect(codeOf(call)).toBe('DISPOSED');
    }
    await expect(ws.exec('a.txt')).rejects.toMatchObject({ code: 'DISPOSED' });
  });

  it('Symbol.dispose disposes (a `using` declaration calls it)', () => {
    const ws = new ZipWorkspace();
    ws.writeFile('a.txt', 'x');
    ws[Symbol.dispose]();
    expect(codeOf(() => ws.exists('a.txt'))).toBe('DISPOSED');
  });

  it("the workspace's memory is released at once, while the object is still referenced", () => {
    // In a process of its own: the resident size of this one moves with every other test.
    const lib = join(__dirname, '..', '..', 'lib', 'index.js');
    const script = `const { ZipWorkspace } = require(${JSON.stringify(lib)});
      const ws = new ZipWorkspace(); const chunk = Buffer.alloc(4 << 20, 7);
      for (let i = 0; i < 24; i++) ws.writeFile('f' + i + '.bin', chunk);
      const before = process.memoryUsage().rss; ws.dispose();
      let code; try { ws.exists('f0.bin') } catch (e) { code = e.code }
      process.stdout.write(JSON.stringify([before - process.memoryUsage().rss, code]));`;
    const [released, code] = JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }));
    // Large buffers go back to the system when freed: the resident size drops by most of 96 MiB.
    expect(released).toBeGreaterThan(60 << 20);
    expect(code).toBe('DISPOSED');
  });

  it('a run in progress finishes, but its changes are not kept', async () => {
    const ws = new ZipWorkspace();
    ws.writeFile(
      'main.js',
      "import fs from 'fs';\nconst t = Date.now(); while (Date.now() - t < 100) {}\nfs.writeFileSync('out.txt', 'late');\n",
    );
    const pending = ws.exec('main.js');
    ws.dispose();
    const r = await pending;
    expect(r.ok).toBe(true);
    expect(codeOf(() => ws.exists('out.txt'))).toBe('DISPOSED');
  });

  it('other workspaces are unaffected', () => {
    const a = new ZipWorkspace();
    const b = new ZipWorkspace();
    b.writeFile('keep.txt', 'kept');
    a.dispose();
    expect(b.readText('keep.txt')).toBe('kept');
  });
});
