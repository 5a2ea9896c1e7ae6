// `ws.exec` output against hostile code: every byte a run writes (stdout, stderr, console,
// unfinished lines) counts against the one `outputBytes` cap, and a run past it stops with
// OUTPUT_LIMIT, keeping exactly the first bytes it wrote.
import { describe, expect, it } from 'vitest';
import type { ExecResult } from '../../lib/index.js';
import { ZipWorkspace } from '../../lib/index.js';
import { expectHealthy } from '../helpers.js';

async function run(main: string, outputBytes: number): Promise<{ ws: ZipWorkspace; r: ExecResult }> {
  const ws = new ZipWorkspace();
  ws.writeFile('main.js', main);
  const r = await ws.exec('main.js', { limits: { outputBytes, timeoutMs: 10_000 } });
  return { ws, r };
}

/** The run stopped at the cap, the host is fine and the workspace still runs code. */
async function expectCapped(ws: ZipWorkspace, r: ExecResult, cap: number): Promise<void> {
  expect(r).toMatchObject({ ok: false, exitCode: 1 });
  expect(r.error?.code).toBe('OUTPUT_LIMIT');
  expect(r.error?.message).toBe(`output exceeded ${cap} bytes`);
  expect(Buffer.byteLength(r.stdout) + Buffer.byteLength(r.stderr)).toBeLessThanOrEqual(cap);
  expect(ws.exists('written.txt')).toBe(false);
  expectHealthy();
  ws.writeFile('ok.js', "console.log('still fine');");
  expect(await ws.exec('ok.js')).toMatchObject({ ok: true, stdout: 'still fine\n', stderr: '' });
}

const WRITES_FILE = "import fs from 'fs';\nfs.writeFileSync('written.txt', 'x');\n";

describe('the output cap counts every byte', () => {
  it('an 8 MiB partial line on stdout is cut at the cap', async () => {
    const { ws, r } = await run(`${WRITES_FILE}process.stdout.write('x'.repeat(8 << 20));\n`, 4096);
    expect(r.stdout).toBe('x'.repeat(4096));
    expect(r.stderr).toBe('');
    await expectCapped(ws, r, 4096);
  });

  it('stderr, bytes and strings alike', async () => {
    const { ws, r } = await run(`${WRITES_FILE}process.stderr.write(new Uint8Array(1 << 20).fill(65));\n`, 1000);
    expect(r.stderr).toBe('A'.repeat(1000));
    expect(r.stdout).toBe('');
    await expectCapped(ws, r, 1000);
  });

  it('many small writes stop at the cap, quickly', async () => {
    const started = Date.now();
    const { ws, r } = await run(`${WRITES_FILE}for (let i = 0; i < 1e7; i++) process.stdout.write('ab');\n`, 4095);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(r.stdout).toBe(`${'ab'.repeat(2047)}a`);
    await expectCapped(ws, r, 4095);
  });

  it('console lines, stream writes and a final partial line share the cap', async () => {
    const { ws, r } = await run(
      `${WRITES_FILE}console.log('1234');\nprocess.stderr.write('ab');\nconsole.error('err');\nprocess.stdout.write('partial');\n` +
        "try { process.stdout.write('z'.repeat(50)); } catch { console.log('caught'); }\nconsole.log('after');\n",
      26,
    );
    // 5 + 2 + 4 + 7 = 18 bytes fit whole, then 8 of the 50 z.
    expect(r.stdout).toBe('1234\npartialzzzzzzzz');
    expect(r.stderr).toBe('err\nab');
    await expectCapped(ws, r, 26);
  });

  it('a cut never splits a character', async () => {
    const { ws, r } = await run(`${WRITES_FILE}process.stdout.write('abc' + 'é'.repeat(10));\n`, 6);
    expect(r.stdout).toBe('abcé');
    await expectCapped(ws, r, 6);
    const emoji = await run(`${WRITES_FILE}console.log('😀😀');\n`, 7);
    expect(emoji.r.stdout).toBe('😀');
    await expectCapped(emoji.ws, emoji.r, 7);
  });

  it('output within the cap is kept whole, the unfinished line last', async () => {
    const { ws, r } = await run("process.stdout.write('a\\nb');\nconsole.log('c');\nprocess.stderr.write('e');\n", 7);
    expect(r).toMatchObject({ ok: true, exitCode: 0, stdout: 'a\nc\nb', stderr: 'e' });
    expect(r.error).toBeUndefined();
    expectHealthy();
    expect(ws.history(1)[0]!.op).toBe('write ~/main.js');
  });
});
