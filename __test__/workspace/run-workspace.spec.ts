import { describe, expect, it } from 'vitest';
import { ZipWorkspace, run, runSync } from '../../lib/index.js';

function workspace() {
  const ws = new ZipWorkspace();
  ws.writeFile('~/data/in.txt', 'hello');
  ws.writeFile('~/lib.js', 'export const shout = (s) => s.toUpperCase();\n');
  return ws;
}

describe('run(source, { workspace })', () => {
  it('snippets read and write the workspace through fs and path globals', async () => {
    const ws = workspace();
    const r = await run(
      "const text = fs.readFileSync('data/in.txt', 'utf8'); fs.writeFileSync(path.join('data', 'out.txt'), text + '!'); return text",
      { workspace: ws },
    );
    expect(r.ok).toBe(true);
    expect(r.value).toBe('hello');
    expect(ws.readText('~/data/out.txt')).toBe('hello!');
  });

  it('a failed snippet leaves the workspace byte-for-byte unchanged', async () => {
    const ws = workspace();
    const before = ws.toZip();
    const r = await run("fs.writeFileSync('data/out.txt', 'x'); throw new Error('boom')", { workspace: ws });
    expect(r.error?.message).toBe('boom');
    expect(ws.exists('~/data/out.txt')).toBe(false);
    expect(Buffer.compare(ws.toZip(), before)).toBe(0);
  });

  it('module mode imports the shims and workspace files', async () => {
    const ws = workspace();
    const r = await run(
      "import { readFileSync } from 'node:fs'; import { shout } from './lib.js'; export const v = shout(readFileSync('data/in.txt', 'utf8'));",
      {
        workspace: ws,
        mode: 'module',
      },
    );
    expect(r.ok).toBe(true);
    expect(r.value).toEqual({ v: 'HELLO' });
  });

  it('the fs global cannot reach outside the workspace or its history', () => {
    const ws = workspace();
    const escape = runSync("return fs.readFileSync('../../etc/passwd', 'utf8')", { workspace: ws });
    expect(escape.ok).toBe(false);
    const hidden = runSync("return fs.readdirSync('.').includes('.time')", { workspace: ws });
    expect(hidden.value).toBe(false);
  });

  it('workspace and live globals cannot be combined', async () => {
    const r = await run('return 1', { workspace: workspace(), globals: { x: {} } });
    expect(r.error?.code).toBe('INVALID_INPUT');
    expect(r.error?.message).toMatch(/cannot be combined/);
  });

  it('a value that is not a workspace is INVALID_INPUT', () => {
    const r = runSync('return 1', { workspace: {} as never });
    expect(r.error?.code).toBe('INVALID_INPUT');
  });
});
