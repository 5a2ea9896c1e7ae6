// Crafted history inside an imported zip: ids that cannot grow, entries that do not fit the
// archive's files, entries that would leave a file inside a file or without its folder. Each is
// refused with HISTORY_INVALID; whatever a workspace exports imports again with a history that
// still works.
import { describe, expect, it } from 'vitest';
import { ZipWorkspace } from '../../lib/index.js';
import { expectHealthy } from '../helpers.js';
import { makeZip, type RawEntry, thrown } from '../workspace/helpers.js';

const ABSENT = '{"kind":"absent"}';
const DIR = '{"kind":"dir"}';
/** The first three bytes of the pack: `abc`. */
const ABC = '{"kind":"file","pack":0,"offset":0,"len":3}';

const change = (path: string, before: string, after: string) =>
  `{"path":"${path}","before":${before},"after":${after}}`;
const entry = (id: number, ...changes: string[]) =>
  `{"id":${id},"op":"crafted","time":1,"path_count":${changes.length},"paths":[],"changes":[${changes.join(',')}]}`;

/** An archive of `tree` plus a hand-written `.time/log.json` (numbers given as JSON text). */
function archive(tree: RawEntry[], nextId: string, entries: string[], redo: string[] = []): Buffer {
  const log = `{"format":1,"next_id":${nextId},"entries":[${entries.join(',')}],"redo":[${redo.join(',')}]}`;
  return makeZip([...tree, { name: '.time/log.json', data: log }, { name: '.time/pack-00000.bin', data: 'abc' }]);
}

/** The import is refused with HISTORY_INVALID naming `why`; the host and new workspaces are fine. */
function expectRefused(zip: Buffer, why: RegExp): void {
  const e = thrown(() => ZipWorkspace.fromZip(zip));
  expect(e.code).toBe('HISTORY_INVALID');
  expect(e.message).toMatch(why);
  expect(e.message).toMatch(/import the archive without its \.time\/ folder/);
  expectHealthy();
  const ws = new ZipWorkspace();
  ws.writeFile('ok.txt', 'fine');
  expect(ZipWorkspace.fromZip(ws.toZip()).readText('ok.txt')).toBe('fine');
}

describe('crafted history is refused', () => {
  it('a hand-written history that fits its files imports and undoes', () => {
    const zip = archive([{ name: 'a.txt', data: 'abc' }], '2', [entry(1, change('a.txt', ABSENT, ABC))]);
    const ws = ZipWorkspace.fromZip(zip);
    expect(ws.history().map((h) => h.id)).toEqual([1]);
    expect(ws.undo()).toEqual([1]);
    expect(ws.exists('a.txt')).toBe(false);
    expect(ws.redo()).toEqual([1]);
    expect(ws.readText('a.txt')).toBe('abc');
  });

  it('ids that would wrap or leave JavaScript numbers are refused', () => {
    const tree = [{ name: 'a.txt', data: 'abc' }];
    const one = [entry(1, change('a.txt', ABSENT, ABC))];
    // The most is 2^53 - 1 - 2^32 = 9007194959773695.
    for (const next of ['18446744073709551615', '9007199254740991', '9007194959773696']) {
      expectRefused(archive(tree, next, one), /next id \d+ leaves no room/);
    }
    // Just inside the limit: accepted, and the workspace keeps working and exporting.
    const ws = ZipWorkspace.fromZip(archive(tree, '9007194959773694', one));
    expect(ws.writeFile('b.txt', 'b')).toBe(9007194959773694);
    // The ids reached the most: the kept entries are renumbered 1, 2 and the new one is 3.
    expect(ws.writeFile('b.txt', 'c')).toBe(3);
    expect(ws.history().map((h) => h.id)).toEqual([3, 2, 1]);
    const back = ZipWorkspace.fromZip(ws.toZip());
    expect(back.toZip().equals(ws.toZip())).toBe(true);
    expect(back.undo(3)).toEqual([3, 2, 1]);
    expect(back.list()).toEqual([]);
  });

  it('undoing a folder into a file while it holds files is refused', () => {
    const tree = [{ name: 'd/' }, { name: 'd/x.txt', data: 'x' }];
    expectRefused(
      archive(tree, '2', [entry(1, change('d', ABC, DIR))]),
      /~\/d would be a file while ~\/d\/x\.txt is inside it/,
    );
    expectRefused(archive(tree, '2', [entry(1, change('d', ABSENT, DIR))]), /~\/d would be gone while ~\/d\/x\.txt/);
  });

  it('a file without its folder, or inside a file, is refused', () => {
    // Redoing the creation of ~/nodir/deep/f.js, with no ~/nodir.
    expectRefused(
      archive([], '2', [], [entry(1, change('nodir/deep/f.js', ABSENT, ABC))]),
      /cannot be redone: ~\/nodir\/deep\/f\.js would exist without its folder ~\/nodir\/deep/,
    );
    // Undoing its deletion.
    expectRefused(archive([], '2', [entry(1, change('nodir/deep/f.js', ABC, ABSENT))]), /cannot be undone/);
    expectRefused(
      archive([{ name: 'f', data: 'x' }], '2', [], [entry(1, change('f/g.js', ABSENT, ABC))]),
      /~\/f\/g\.js would lie inside ~\/f/,
    );
  });

  it('entries that do not match the files are refused', () => {
    const tree = [{ name: 'a.txt', data: 'changed by hand' }];
    expectRefused(
      archive(tree, '2', [entry(1, change('a.txt', ABSENT, ABC))]),
      /~\/a\.txt does not hold the state it expects/,
    );
    expectRefused(
      archive(tree, '3', [], [entry(2, change('b.txt', ABC, ABSENT))]),
      /entry #2 \(crafted\) cannot be redone/,
    );
    expectRefused(
      archive([{ name: 'a.txt', data: 'abc' }], '2', [entry(1, change('a.txt', ABC, ABC))]),
      /records no change/,
    );
  });

  it('an unreadable log stays ZIP_INVALID', () => {
    const e = thrown(() => ZipWorkspace.fromZip(archive([], '2', ['{"id":1}'])));
    expect(e.code).toBe('ZIP_INVALID');
    expectHealthy();
  });
});

/** A small deterministic generator, so failures can be replayed. */
function rng(seed: number): (n: number) => number {
  let x = seed;
  return (n) => {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    return x % n;
  };
}

/** Every file and folder of a workspace with its contents. */
function snapshot(ws: ZipWorkspace): string[] {
  return ws
    .list('~', { recursive: true })
    .map((e) => (e.kind === 'dir' ? `${e.path}/` : `${e.path}=${ws.readFile(e.path).toString('hex')}`));
}

describe('every export imports again', () => {
  it('random operations, undo and redo: export, import, export are identical and undo still works', async () => {
    const paths = ['a', 'a/b', 'a/b/c.txt', 'a/d.txt', 'e', 'e/f.js', 'g.txt'];
    const texts = ['', 'one\n', 'one\ntwo\n', 'x\r\ny', '\0bin'];
    for (let seed = 1; seed <= 12; seed++) {
      const pick = rng(seed);
      const ws = new ZipWorkspace();
      for (let step = 0; step < 40; step++) {
        const p = paths[pick(paths.length)]!;
        try {
          switch (pick(9)) {
            case 0:
            case 1:
            case 2:
              ws.writeFile(p, texts[pick(texts.length)]!);
              break;
            case 3:
              ws.mkdir(p, { recursive: true });
              break;
            case 4:
              ws.delete(p, { recursive: true });
              break;
            case 5:
              ws.undo(1 + pick(3));
              break;
            case 6:
              ws.redo(1 + pick(2));
              break;
            case 7: {
              const ids = ws.history(100).map((h) => h.id);
              if (ids.length > 0) ws.restore(ids[pick(ids.length)]!);
              break;
            }
            default: {
              ws.writeFile(
                'run.mjs',
                `import fs from 'fs';\nfs.mkdirSync('${p}-x', { recursive: true });\nfs.writeFileSync('${p}-x/out.txt', '${step}');\n`,
              );
              await ws.exec('run.mjs');
            }
          }
        } catch (e) {
          // A missing path or a file in the way: part of the game, but only workspace errors.
          expect((e as { code?: string }).code).toMatch(/^[A-Z_]+$/);
        }
        if (step % 8 !== 7) continue;
        const zip = ws.toZip();
        const back = ZipWorkspace.fromZip(zip);
        expect(back.toZip().equals(zip), `seed ${seed} step ${step}`).toBe(true);
        expect(back.history(100)).toEqual(ws.history(100));
        expect(snapshot(back)).toEqual(snapshot(ws));
        // The imported history undoes and redoes like the original.
        const copy = ZipWorkspace.fromZip(zip);
        let steps = 0;
        for (;;) {
          let undone: number[] | undefined;
          let code: string | undefined;
          try {
            undone = copy.undo();
          } catch (e) {
            code = (e as { code?: string }).code;
          }
          if (undone === undefined) {
            expect(code).toBe('HISTORY');
            break;
          }
          expect(copy.redo()).toEqual(undone);
          expect(copy.undo()).toEqual(undone);
          steps++;
        }
        if (steps > 0) expect(copy.redo(steps).length).toBe(steps);
        expect(snapshot(copy)).toEqual(snapshot(ws));
      }
    }
    expectHealthy();
  });
});
