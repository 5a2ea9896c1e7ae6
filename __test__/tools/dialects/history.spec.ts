// The history the dialects rely on: several workspace changes as one entry (`ws.batch`), rolled
// back on failure, and a file's content from before its last change read without a trace.
import { describe, expect, it } from 'vitest';
import { ZipWorkspace } from '../../../lib/index.js';
import { contentBeforeLastChange } from '../../../lib/tools/dialects/history.js';

function tree(ws: ZipWorkspace) {
  return ws
    .list(null, { recursive: true })
    .map((e) => (e.kind === 'file' ? `${e.path}=${ws.readText(e.path)}` : `${e.path}/`));
}

describe('ws.batch, as the dialects use it', () => {
  it('folds several changes into one entry that undo and redo take as a whole', () => {
    const ws = new ZipWorkspace();
    ws.writeFile('a.txt', 'a');
    const entries = ws.history(100).length;
    let value: string | undefined;
    const historyId = ws.batch('several', (w) => {
      w.writeFile('b.txt', 'b');
      w.writeFile('a.txt', 'A');
      w.delete('b.txt');
      w.mkdir('d');
      value = 'done';
    });
    expect(value).toBe('done');
    expect(ws.history(100).length).toBe(entries + 1);
    expect(historyId).toBe(ws.history(1)[0]!.id);
    const after = tree(ws);
    expect(after).toEqual(['a.txt=A', 'd/']);
    ws.undo();
    expect(tree(ws)).toEqual(['a.txt=a']);
    ws.redo();
    expect(tree(ws)).toEqual(after);
  });

  it('records a single change under its label and nothing when nothing changed', () => {
    const ws = new ZipWorkspace();
    ws.writeFile('a.txt', 'a');
    const single = ws.batch('one write', (w) => void w.writeFile('a.txt', 'b'));
    expect(ws.history(1)[0]).toMatchObject({ id: single, op: 'one write', paths: ['a.txt'] });
    const none = ws.batch('same again', (w) => void w.writeFile('a.txt', 'b'));
    expect(none).toBeNull();
    expect(ws.history(1)[0]!.id).toBe(single);
  });

  it('puts the tree back and rethrows when a step fails', () => {
    const ws = new ZipWorkspace();
    ws.writeFile('a.txt', 'a');
    const newest = ws.history(1)[0]!.id;
    expect(() =>
      ws.batch('failing', (w) => {
        w.writeFile('b.txt', 'b');
        w.writeFile('a.txt', 'changed');
        w.writeFile('a.txt/inside', 'x'); // a file is in the way
      }),
    ).toThrow(/is a file/);
    expect(tree(ws)).toEqual(['a.txt=a']);
    expect(ws.history(1)[0]!.id).toBe(newest);
    expect(() => ws.redo()).toThrow(/nothing to redo/);
  });
});

describe('contentBeforeLastChange', () => {
  it("reads a file's content from before its newest change and leaves everything as it was", () => {
    const ws = new ZipWorkspace();
    ws.writeFile('a.txt', 'one');
    ws.writeFile('a.txt', 'two');
    ws.writeFile('b.txt', 'other');
    const ids = ws.history(100).map((e) => e.id);
    const found = contentBeforeLastChange(ws, 'a.txt', () => false);
    expect(found.entryId).toBe(ids[1]);
    expect(found.entryId !== null && found.before?.toString()).toBe('one');
    expect(ws.history(100).map((e) => e.id)).toEqual(ids);
    expect(tree(ws)).toEqual(['a.txt=two', 'b.txt=other']);
    expect(() => ws.redo()).toThrow(/nothing to redo/);
  });

  it('skips ignored entries and reports a file that did not exist before', () => {
    const ws = new ZipWorkspace();
    ws.writeFile('a.txt', 'one');
    const second = ws.writeFile('a.txt', 'two')!;
    const found = contentBeforeLastChange(ws, 'a.txt', (id) => id === second);
    expect(found).toEqual({ entryId: 1, before: null });
    expect(contentBeforeLastChange(ws, 'never.txt', () => false)).toEqual({ entryId: null, reason: 'none' });
  });
});
