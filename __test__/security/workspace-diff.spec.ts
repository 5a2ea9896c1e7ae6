// `ws.diff` over agent-written files: memory and time stay bounded whatever the files hold, and
// the output is capped with a line that says so.
import { describe, expect, it } from 'vitest';
import { ZipWorkspace } from '../../lib/index.js';
import { expectHealthy } from '../helpers.js';

/** The most bytes a diff returns before its cut-off line. */
const MAX_DIFF = 1024 * 1024;
const CUT = /\n\[diff cut off here: the diff of entry #\d+ is longer than 1048576 bytes\]\n$/;

/** Runs `fn`, returning what it gave, how long it took and how much the RSS grew. */
function measure<T>(fn: () => T): { value: T; ms: number; grewMiB: number } {
  const before = process.memoryUsage().rss;
  const started = performance.now();
  const value = fn();
  const ms = performance.now() - started;
  return { value, ms, grewMiB: (process.memoryUsage().rss - before) / 2 ** 20 };
}

/** A healthy host and a workspace that still records and diffs. */
function expectUsable(ws: ZipWorkspace): void {
  expectHealthy();
  const id = ws.writeFile('after.txt', 'a\nb\n');
  expect(ws.diff(id!)).toBe('--- /dev/null\n+++ b/after.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n');
  expect(ws.undo()).toEqual([id]);
}

describe('diffs of large files', () => {
  it('a created 16 MiB file of newlines is streamed and cut', () => {
    const ws = new ZipWorkspace();
    const id = ws.writeFile('big.txt', '\n'.repeat(16 << 20))!;
    const { value: d, ms, grewMiB } = measure(() => ws.diff(id));
    expect(d.startsWith('--- /dev/null\n+++ b/big.txt\n@@ -0,0 +1,16777216 @@\n+\n+\n')).toBe(true);
    expect(d).toMatch(CUT);
    expect(d.length).toBeLessThan(MAX_DIFF + 200);
    expect(grewMiB).toBeLessThan(64);
    expect(ms).toBeLessThan(2000);
    expectUsable(ws);
  });

  it('one changed line in a 16 MiB file gives one small hunk', () => {
    const ws = new ZipWorkspace();
    const half = '\n'.repeat(8 << 20);
    ws.writeFile('big.txt', half + half);
    const id = ws.writeFile('big.txt', `${half}x\n${half}`)!;
    const { value: d, grewMiB } = measure(() => ws.diff(id));
    expect(d).toBe('--- a/big.txt\n+++ b/big.txt\n@@ -8388606,6 +8388606,7 @@\n \n \n \n+x\n \n \n \n');
    expect(grewMiB).toBeLessThan(64);
    expectUsable(ws);
  });

  it('a rewritten 16 MiB file is one block, cut', () => {
    const ws = new ZipWorkspace();
    ws.writeFile('big.txt', 'a\n'.repeat(8 << 20));
    const id = ws.writeFile('big.txt', 'b\n'.repeat(8 << 20))!;
    const { value: d, grewMiB } = measure(() => ws.diff(id));
    expect(d.startsWith('--- a/big.txt\n+++ b/big.txt\n@@ -1,8388608 +1,8388608 @@\n-a\n')).toBe(true);
    expect(d).toMatch(CUT);
    expect(grewMiB).toBeLessThan(64);
    expectUsable(ws);
  });

  it('a deleted file and a single 16 MiB line are cut too', () => {
    const ws = new ZipWorkspace();
    ws.writeFile('big.txt', 'line\n'.repeat(4 << 20));
    const del = ws.delete('big.txt')!;
    const d = ws.diff(del);
    expect(d.startsWith('--- a/big.txt\n+++ /dev/null\n@@ -1,4194304 +0,0 @@\n-line\n')).toBe(true);
    expect(d).toMatch(CUT);
    const one = ws.writeFile('one.txt', 'x'.repeat(16 << 20))!;
    const d1 = ws.diff(one);
    expect(d1).toMatch(/^--- \/dev\/null\n\+\+\+ b\/one\.txt\n@@ -0,0 \+1 @@\n\[diff cut off here/);
    expectUsable(ws);
  });
});

describe('diffs of many or repetitive files', () => {
  it('an entry of many repetitive files stays fast', async () => {
    // Lines of four kinds in random order are the line matcher's worst case.
    const generator = (seed: number) =>
      `let seed = ${seed};\nconst next = () => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed % 4; };\n` +
      'const text = () => Array.from({ length: 10000 }, () => `${next()}\\n`).join("");\n';
    const ws = new ZipWorkspace();
    const write = 'for (let i = 0; i < 40; i++) fs.writeFileSync(`f${i}.txt`, text());\n';
    ws.writeFile('make.mjs', `import fs from 'fs';\n${generator(7)}${write}`);
    ws.writeFile('rewrite.mjs', `import fs from 'fs';\n${generator(11)}${write}`);
    expect((await ws.exec('make.mjs')).error).toBeUndefined();
    // One run rewrites them all: one entry, 40 files of 10,000 lines each side.
    const r = await ws.exec('rewrite.mjs', { limits: { timeoutMs: 20_000 } });
    expect(r.error).toBeUndefined();
    const { value: d, ms } = measure(() => ws.diff(r.historyId!));
    expect(d.length).toBeLessThan(MAX_DIFF + 200);
    expect(ms).toBeLessThan(3000);
    expect(d.startsWith('--- a/f0.txt\n+++ b/f0.txt\n@@ ')).toBe(true);
    expect(d).toContain('--- a/f1.txt\n+++ b/f1.txt\n@@ ');
    expectUsable(ws);
  });

  it('hunks keep the unified format and context rules', () => {
    const ws = new ZipWorkspace();
    const lines = Array.from({ length: 30 }, (_, i) => `l${i + 1}`);
    ws.writeFile('f.txt', `${lines.join('\n')}\n`);
    const changed = lines.map((l, i) => (i === 1 ? 'two' : l)).filter((_, i) => i !== 25);
    const id = ws.writeFile('f.txt', `${changed.join('\n')}\n`)!;
    expect(ws.diff(id)).toBe(
      '--- a/f.txt\n+++ b/f.txt\n' +
        '@@ -1,5 +1,5 @@\n l1\n-l2\n+two\n l3\n l4\n l5\n' +
        '@@ -23,7 +23,6 @@\n l23\n l24\n l25\n-l26\n l27\n l28\n l29\n',
    );
    // Line endings and a missing final newline are not changes.
    const crlf = ws.writeFile('f.txt', `${changed.join('\r\n')}`)!;
    expect(ws.diff(crlf)).toBe('--- a/f.txt\n+++ b/f.txt\n');
    expectUsable(ws);
  });
});
