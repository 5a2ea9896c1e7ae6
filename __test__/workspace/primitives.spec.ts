// Workspace primitives: batch (one history entry, all or nothing), rename, fileBefore, walk and
// history by path.
import { describe, expect, it } from 'vitest';
import { ZipWorkspace } from '../../lib/index.js';
import { thrown } from './helpers.js';

const ops = (ws: ZipWorkspace) => ws.history(100).map((e) => e.op);

describe('ZipWorkspace.batch', () => {
  it('records several edits as one entry that one undo takes back', () => {
    const ws = new ZipWorkspace();
    ws.writeFile('keep.txt', 'k');
    const seen: unknown[] = [];
    const id = ws.batch('move notes', (w) => {
      seen.push(w instanceof ZipWorkspace, w === ws);
      seen.push(w.writeFile('notes/a.md', 'a'));
      w.mkdir('empty');
      w.delete('keep.txt');
      // The workspace itself reads what the handle wrote, and refuses to be edited meanwhile.
      seen.push(ws.readText('notes/a.md'));
      seen.push(thrown(() => ws.writeFile('other.txt', 'x')).message.includes('borrow'));
    });
    expect(seen).toEqual([true, false, null, 'a', true]);
    expect(ws.exists('other.txt')).toBe(false);
    expect(id).toBe(2);
    expect(ops(ws)).toEqual(['move notes', 'write ~/keep.txt']);
    expect(ws.history(1)[0]?.paths).toEqual(['empty', 'keep.txt', 'notes', 'notes/a.md']);
    ws.undo();
    expect(ws.readText('keep.txt')).toBe('k');
    expect(ws.exists('notes') || ws.exists('empty')).toBe(false);
  });

  it('puts workspace and history back when the edits throw, and rethrows', () => {
    const ws = new ZipWorkspace();
    ws.writeFile('a.txt', 'a');
    ws.writeFile('a.txt', 'b');
    ws.undo();
    const before = ws.toZip();
    const failure = new RangeError('stop here');
    let caught: unknown;
    try {
      ws.batch('half done', (w) => {
        w.writeFile('a.txt', 'changed');
        w.writeFile('new.txt', 'n');
        throw failure;
      });
    } catch (e) {
      caught = e;
    }
    expect(caught).toBe(failure);
    expect(ws.toZip().equals(before)).toBe(true);
    expect(ws.redo()).toEqual([2]);
    expect(ws.readText('a.txt')).toBe('b');
    // A workspace error inside is rethrown with its code, state unchanged too.
    const e = thrown(() => ws.batch('x', (w) => void w.delete('missing')));
    expect(e.code).toBe('NOT_FOUND');
    expect(ops(ws)).toEqual(['write ~/a.txt', 'write ~/a.txt']);
  });

  it('refuses history moves, promises and bad arguments with stable codes', async () => {
    const ws = new ZipWorkspace();
    ws.writeFile('a', '1');
    const inside: string[] = [];
    ws.batch('edits', (w) => {
      w.writeFile('a', '2');
      inside.push(thrown(() => w.undo()).code, thrown(() => w.redo()).code, thrown(() => w.restore(1)).code);
    });
    expect(inside).toEqual(['HISTORY', 'HISTORY', 'HISTORY']);
    const before = ws.toZip();
    const asyncEdits = thrown(() =>
      ws.batch('async', async (w) => {
        w.writeFile('a', 'sync part');
        await Promise.resolve();
      }),
    );
    expect(asyncEdits.code).toBe('INVALID_INPUT');
    expect(asyncEdits.message).toContain('synchronously');
    expect(ws.toZip().equals(before)).toBe(true);
    for (const [label, edits] of [
      ['', () => {}],
      [42, () => {}],
      ['ok', 'not a function'],
    ] as const) {
      const e = thrown(() => ws.batch(label as string, edits as () => void));
      expect(e.code).toBe('INVALID_INPUT');
      expect(e.error).toBeInstanceOf(TypeError);
    }
    expect(ws.toZip().equals(before)).toBe(true);
  });

  it('joins an outer batch, and an inner failure takes back only its own edits', () => {
    const ws = new ZipWorkspace();
    const id = ws.batch('outer', (w) => {
      w.writeFile('one', '1');
      expect(w.batch('inner', (v) => void v.writeFile('two', '2'))).toBeNull();
      const failing = () =>
        w.batch('failing', (v) => {
          v.writeFile('three', '3');
          v.delete('nope');
        });
      expect(thrown(failing).code).toBe('NOT_FOUND');
      expect(w.exists('three')).toBe(false);
    });
    expect(id).toBe(1);
    expect(ws.history(1)[0]?.paths).toEqual(['one', 'two']);
  });
});

describe('ZipWorkspace.rename', () => {
  it('moves a folder with everything in it as one entry', () => {
    const ws = new ZipWorkspace();
    ws.writeFile('src/a.js', 'a');
    ws.writeFile('src/lib/b.js', 'b');
    expect(ws.rename('/src', '~/out/code')).toBe(3);
    expect(ws.readText('out/code/lib/b.js')).toBe('b');
    expect(ws.exists('src')).toBe(false);
    expect(ops(ws)[0]).toBe('rename ~/src -> ~/out/code');
    ws.undo();
    expect(ws.readText('src/a.js')).toBe('a');
    expect(ws.exists('out')).toBe(false);
    expect(ws.rename('src/a.js', 'src/a.js')).toBeNull();
  });

  it('refuses an existing destination unless told to overwrite, and changes nothing on failure', () => {
    const ws = new ZipWorkspace();
    ws.writeFile('a.txt', 'a');
    ws.writeFile('b.txt', 'b');
    const before = ws.toZip();
    const cases: [() => unknown, string][] = [
      [() => ws.rename('a.txt', 'b.txt'), 'EXISTS'],
      [() => ws.rename('missing', 'c'), 'NOT_FOUND'],
      [() => ws.rename('a.txt', 'b.txt/c'), 'NOT_A_DIRECTORY'],
      [() => ws.rename('/', 'x'), 'INVALID_INPUT'],
      [() => ws.rename('a.txt', '../x'), 'PATH_INVALID'],
      [() => ws.rename('a.txt', 'c', { overwrite: 'yes' } as never), 'INVALID_INPUT'],
      [() => ws.rename('a.txt', 'c', { force: true } as never), 'INVALID_INPUT'],
    ];
    for (const [call, code] of cases) expect(thrown(call).code).toBe(code);
    expect(ws.toZip().equals(before)).toBe(true);
    expect(ws.rename('a.txt', 'b.txt', { overwrite: true })).toBe(3);
    expect(ws.readText('b.txt')).toBe('a');
    expect(ws.exists('a.txt')).toBe(false);
  });

  it('applies the access rules to both paths', () => {
    const ws = new ZipWorkspace();
    ws.writeFile('src/a.js', 'a');
    ws.writeFile('docs/b.md', 'b');
    ws.setAccessRules({ writePatterns: ['src/**'] });
    expect(thrown(() => ws.rename('src/a.js', 'docs/a.js')).code).toBe('POLICY_VIOLATION');
    expect(thrown(() => ws.rename('docs/b.md', 'src/b.md')).code).toBe('POLICY_VIOLATION');
    expect(ws.readText('src/a.js')).toBe('a');
    expect(ws.rename('src/a.js', 'src/c.js')).toBe(3);
  });
});

describe('ZipWorkspace.fileBefore', () => {
  it('gives what a file held before an entry, applied or undone', () => {
    const ws = new ZipWorkspace();
    ws.writeFile('a.txt', 'v1');
    ws.writeFile('a.txt', 'v2');
    ws.writeFile('other', 'o');
    expect(ws.fileBefore(1, 'a.txt')).toBeNull();
    expect(ws.fileBefore(2, '/a.txt')?.toString()).toBe('v1');
    expect(ws.fileBefore(3, '~/a.txt')?.toString()).toBe('v2');
    ws.undo(2);
    expect(ws.fileBefore(2, 'a.txt')?.toString()).toBe('v1');
    expect(ws.fileBefore(3, 'a.txt')?.toString()).toBe('v2');
    expect(ws.readText('a.txt')).toBe('v1');
    expect(thrown(() => ws.fileBefore(99, 'a.txt')).code).toBe('HISTORY');
    expect(thrown(() => ws.fileBefore(1, '.time/log.json')).code).toBe('PATH_INVALID');
    expect(thrown(() => ws.fileBefore('1' as never, 'a.txt')).code).toBe('INVALID_INPUT');
  });
});

describe('ZipWorkspace.walk and history by path', () => {
  it('walks a folder in tree order with paths relative to it', () => {
    const ws = new ZipWorkspace();
    for (const p of ['src/a.txt', 'src/a/b.js', 'src/a/c/d.js', 'top.txt']) ws.writeFile(p, 'xy');
    expect(ws.walk('/src').map((e) => e.relative)).toEqual(['a', 'a/b.js', 'a/c', 'a/c/d.js', 'a.txt']);
    expect(ws.walk('src', { maxDepth: 1 })).toEqual([
      { path: 'src/a', relative: 'a', name: 'a', kind: 'dir', size: 0, depth: 1 },
      { path: 'src/a.txt', relative: 'a.txt', name: 'a.txt', kind: 'file', size: 2, depth: 1 },
    ]);
    expect(thrown(() => ws.walk('top.txt')).code).toBe('NOT_A_DIRECTORY');
    expect(thrown(() => ws.walk('src', { maxDepth: 0 })).code).toBe('INVALID_INPUT');
  });

  it('lists the entries that changed one path', () => {
    const ws = new ZipWorkspace();
    ws.writeFile('a', '1');
    ws.writeFile('b', '1');
    ws.writeFile('a', '2');
    expect(ws.history(10, { path: '~/a' }).map((e) => e.id)).toEqual([3, 1]);
    expect(ws.history(1, { path: '/a' }).map((e) => e.id)).toEqual([3]);
    expect(thrown(() => ws.history(10, { path: '../a' })).code).toBe('PATH_INVALID');
  });
});
