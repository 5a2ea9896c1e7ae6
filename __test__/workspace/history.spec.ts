import { describe, expect, it } from 'vitest';
import { ZipWorkspace } from '../../lib/index.js';
import { thrown, thrownCode } from './helpers.js';

describe('history', () => {
  it('records one entry per change, newest first', () => {
    const ws = new ZipWorkspace();
    const before = Date.now();
    ws.writeFile('src/a.txt', 'one\ntwo\n');
    ws.mkdir('docs');
    ws.patchLines('src/a.txt', 2, 2, 'TWO', { expected: 'two' });
    ws.delete('docs');
    ws.writeFile('src/a.txt', 'one\nTWO\n'); // unchanged: not recorded
    const h = ws.history();
    expect(h.map((e) => e.op)).toEqual(['delete ~/docs', 'patch ~/src/a.txt:2-2', 'mkdir ~/docs', 'write ~/src/a.txt']);
    expect(h.map((e) => e.id)).toEqual([4, 3, 2, 1]);
    expect(h[3]).toMatchObject({ id: 1, paths: ['src', 'src/a.txt'], pathCount: 2, compacted: false });
    expect(h[3]!.time).toBeGreaterThanOrEqual(before - 1000);
    expect(ws.history(2).map((e) => e.id)).toEqual([4, 3]);
    expect(ws.history(0)).toEqual([]);
  });

  it('keeps 20 entries by default in the listing', () => {
    const ws = new ZipWorkspace();
    for (let i = 0; i < 25; i++) ws.writeFile('n', String(i));
    expect(ws.history().length).toBe(20);
    expect(ws.history(100).length).toBe(25);
  });

  it('diff shows a unified diff of an entry', () => {
    const ws = new ZipWorkspace();
    ws.writeFile('code.js', 'let a = 1;\nlet b = 2;\nlet c = 3;\n');
    ws.patchLines('code.js', 2, 2, 'let b = 20;');
    expect(ws.diff(2)).toBe(
      '--- a/code.js\n+++ b/code.js\n@@ -1,3 +1,3 @@\n let a = 1;\n-let b = 2;\n+let b = 20;\n let c = 3;\n',
    );
    expect(ws.diff(1)).toMatch(/^--- \/dev\/null\n\+\+\+ b\/code\.js\n/);
    const e = thrown(() => ws.diff(99));
    expect(e.code).toBe('HISTORY');
  });

  it('undo and redo step through changes', () => {
    const ws = new ZipWorkspace();
    ws.writeFile('a/b/c.txt', 'v1');
    ws.writeFile('a/b/c.txt', 'v2');
    ws.delete('a', { recursive: true });
    expect(ws.exists('a')).toBe(false);
    expect(ws.undo()).toEqual([3]);
    expect(ws.readText('a/b/c.txt')).toBe('v2');
    expect(ws.undo(1)).toEqual([2]);
    expect(ws.readText('a/b/c.txt')).toBe('v1');
    expect(ws.undo(5)).toEqual([1]);
    expect(ws.exists('a')).toBe(false);
    expect(thrownCode(() => ws.undo())).toBe('HISTORY');
    expect(ws.redo(2)).toEqual([1, 2]);
    expect(ws.readText('a/b/c.txt')).toBe('v2');
    expect(ws.redo()).toEqual([3]);
    expect(ws.exists('a')).toBe(false);
    expect(thrownCode(() => ws.redo())).toBe('HISTORY');
    // A new change after an undo clears the redo stack.
    ws.undo();
    ws.writeFile('z', '');
    expect(thrownCode(() => ws.redo())).toBe('HISTORY');
  });

  it('restore returns to an earlier state as a new, undoable entry', () => {
    const ws = new ZipWorkspace();
    ws.writeFile('f', '1');
    ws.writeFile('f', '2');
    ws.writeFile('g', '3');
    expect(ws.restore(1)).toBe(4);
    expect(ws.readText('f')).toBe('1');
    expect(ws.exists('g')).toBe(false);
    expect(ws.history(1)[0]!.op).toBe('restore #1');
    expect(ws.diff(4)).toContain('-2\n+1\n');
    expect(ws.restore(4)).toBeNull();
    ws.undo();
    expect(ws.readText('f')).toBe('2');
    expect(ws.readText('g')).toBe('3');
    expect(thrownCode(() => ws.restore(999))).toBe('HISTORY');
  });

  it('undo and redo survive an export and import', () => {
    const ws = new ZipWorkspace();
    ws.writeFile('notes.md', 'a\n');
    ws.patchLines('notes.md', 2, 1, 'b');
    ws.undo();
    const back = ZipWorkspace.fromZip(ws.toZip());
    expect(back.readText('notes.md')).toBe('a\n');
    expect(back.redo()).toEqual([2]);
    expect(back.readText('notes.md')).toBe('a\nb\n');
  });
});
