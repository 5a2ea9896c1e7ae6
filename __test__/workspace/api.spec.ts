import { describe, expect, it } from 'vitest';
import { ZipWorkspace } from '../../lib/index.js';
import { thrown, thrownCode } from './helpers.js';

// Calls with arguments the declared types forbid.
const loose = (ws: ZipWorkspace) => ws as unknown as Record<string, (...args: unknown[]) => unknown>;

function sample(): ZipWorkspace {
  const ws = new ZipWorkspace();
  ws.writeFile('~/src/app.js', 'const a = 1;\nconst b = 2;\nconsole.log(a + b);\n');
  ws.writeFile('src/lib/util.js', 'export const twice = (x) => x * 2;\n');
  ws.writeFile('/README.md', '# demo\n');
  return ws;
}

describe('files and folders', () => {
  it('writes and reads bytes and text', () => {
    const ws = new ZipWorkspace();
    expect(ws.writeFile('a.txt', 'héllo')).toBe(1);
    expect(ws.readText('a.txt')).toBe('héllo');
    const buf = ws.readFile('~/a.txt');
    expect(Buffer.isBuffer(buf)).toBe(true);
    expect(buf.equals(Buffer.from('héllo'))).toBe(true);

    const bin = Uint8Array.from([0, 255, 1, 128]);
    ws.writeFile('bin/data.bin', bin);
    expect([...ws.readFile('bin/data.bin')]).toEqual([0, 255, 1, 128]);
    ws.writeFile('bin/from-buffer', Buffer.from([7, 8]));
    expect([...ws.readFile('bin/from-buffer')]).toEqual([7, 8]);
    ws.writeFile('bin/from-arraybuffer', Uint8Array.from([9]).buffer);
    expect([...ws.readFile('bin/from-arraybuffer')]).toEqual([9]);
    // A view into a larger buffer writes only its own bytes.
    const big = Buffer.from('0123456789');
    ws.writeFile('bin/slice', big.subarray(2, 5));
    expect(ws.readText('bin/slice')).toBe('234');
    ws.writeFile('empty', '');
    expect(ws.readFile('empty').length).toBe(0);
    expect(ws.readText('empty')).toBe('');
  });

  it('writeFile creates missing parents and returns null when nothing changed', () => {
    const ws = new ZipWorkspace();
    const id = ws.writeFile('a/b/c/d.txt', 'x');
    expect(id).toBe(1);
    expect(ws.stat('a/b').kind).toBe('dir');
    expect(ws.writeFile('a/b/c/d.txt', 'x')).toBeNull();
    expect(ws.writeFile('a/b/c/d.txt', 'y')).toBe(2);
  });

  it('readText refuses invalid UTF-8 with NOT_TEXT', () => {
    const ws = new ZipWorkspace();
    ws.writeFile('img.bin', Uint8Array.from([0x89, 0x50, 0xff, 0xfe]));
    const e = thrown(() => ws.readText('img.bin'));
    expect(e.code).toBe('NOT_TEXT');
    expect(e.message).toMatch(/~\/img\.bin is not UTF-8/);
  });

  it('mkdir, with and without recursive', () => {
    const ws = new ZipWorkspace();
    expect(ws.mkdir('docs')).toBe(1);
    expect(thrownCode(() => ws.mkdir('docs'))).toBe('EXISTS');
    expect(ws.mkdir('docs', { recursive: true })).toBeNull();
    expect(thrownCode(() => ws.mkdir('x/y/z'))).toBe('NOT_FOUND');
    expect(ws.mkdir('x/y/z', { recursive: true })).toBe(2);
    expect(ws.list('x', { recursive: true }).map((e) => e.path)).toEqual(['x/y', 'x/y/z']);
    ws.writeFile('file', '1');
    expect(thrownCode(() => ws.mkdir('file/sub', { recursive: true }))).toBe('NOT_A_DIRECTORY');
  });

  it('delete, with and without recursive', () => {
    const ws = sample();
    expect(thrownCode(() => ws.delete('src'))).toBe('NOT_EMPTY');
    expect(typeof ws.delete('README.md')).toBe('number');
    expect(ws.exists('README.md')).toBe(false);
    ws.delete('src', { recursive: true });
    expect(ws.list()).toEqual([]);
    expect(thrownCode(() => ws.delete('src'))).toBe('NOT_FOUND');
  });

  it('list: plain relative paths, sorted, one level unless recursive', () => {
    const ws = sample();
    expect(ws.list()).toEqual([
      { path: 'README.md', kind: 'file', size: 7 },
      { path: 'src', kind: 'dir', size: 0 },
    ]);
    expect(ws.list('~')).toEqual(ws.list());
    expect(ws.list('~/').map((e) => e.path)).toEqual(['README.md', 'src']);
    expect(ws.list('src').map((e) => e.path)).toEqual(['src/app.js', 'src/lib']);
    expect(ws.list('/', { recursive: true }).map((e) => e.path)).toEqual([
      'README.md',
      'src',
      'src/app.js',
      'src/lib',
      'src/lib/util.js',
    ]);
    expect(thrownCode(() => ws.list('README.md'))).toBe('NOT_A_DIRECTORY');
    expect(thrownCode(() => ws.list('nope'))).toBe('NOT_FOUND');
  });

  it('stat and exists', () => {
    const ws = sample();
    const s = ws.stat('~/src/app.js');
    expect(s.path).toBe('src/app.js');
    expect(s.kind).toBe('file');
    expect(s.size).toBe(Buffer.byteLength(ws.readText('src/app.js')));
    expect(s.mtime).toBeGreaterThan(0);
    expect(ws.stat('~')).toEqual({ path: '', kind: 'dir', size: 0, mtime: 0 });
    expect(ws.stat('src').kind).toBe('dir');
    expect(thrownCode(() => ws.stat('missing'))).toBe('NOT_FOUND');
    expect(ws.exists('src/lib/util.js')).toBe(true);
    expect(ws.exists('./src/../src/lib')).toBe(true);
    expect(ws.exists('missing')).toBe(false);
    expect(ws.exists('../escape')).toBe(false);
    expect(ws.exists('~')).toBe(true);
  });

  it('paths: ~/x, /x and x are the same; escapes are PATH_INVALID', () => {
    const ws = new ZipWorkspace();
    ws.writeFile('~/a/b.txt', '1');
    expect(ws.readText('/a/b.txt')).toBe('1');
    expect(ws.readText('a/./b.txt')).toBe('1');
    expect(ws.readText('a/x/../b.txt')).toBe('1');
    for (const bad of ['../x', '/../x', '~/../../etc/passwd', 'a\\b', 'nul\0byte', 'C:/x', 'a/'.repeat(70) + 'f']) {
      expect(
        thrownCode(() => ws.writeFile(bad, 'x')),
        bad,
      ).toBe('PATH_INVALID');
      expect(
        thrownCode(() => ws.readFile(bad)),
        bad,
      ).toBe('PATH_INVALID');
    }
  });
});

describe('lines', () => {
  it('readLines is 1-based and inclusive, end clamped, defaults to the whole file', () => {
    const ws = new ZipWorkspace();
    ws.writeFile('f.txt', 'one\ntwo\nthree\nfour\n');
    expect(ws.readLines('f.txt', 2, 3)).toEqual({
      start: 2,
      end: 3,
      totalLines: 4,
      lines: ['two', 'three'],
      truncated: false,
      lineCut: false,
      finalNewline: true,
    });
    expect(ws.readLines('f.txt', 1, 4, { maxBytes: 8 })).toMatchObject({ lines: ['one', 'two'], truncated: true });
    expect(ws.readLines('f.txt', 3, 99).lines).toEqual(['three', 'four']);
    expect(ws.readLines('f.txt').lines).toEqual(['one', 'two', 'three', 'four']);
    expect(ws.readLines('f.txt', 4).lines).toEqual(['four']);
    expect(thrownCode(() => ws.readLines('f.txt', 0, 1))).toBe('RANGE');
    expect(thrownCode(() => ws.readLines('f.txt', 5, 6))).toBe('RANGE');
    expect(thrownCode(() => ws.readLines('f.txt', 3, 2))).toBe('RANGE');
    expect(thrownCode(() => ws.readLines('f.txt', 1.5, 2))).toBe('INVALID_INPUT');
    expect(thrownCode(() => ws.readLines('f.txt', -1, 2))).toBe('INVALID_INPUT');
    expect(thrownCode(() => ws.readLines('dir-missing/f', 1, 2))).toBe('NOT_FOUND');
    ws.writeFile('empty', '');
    expect(ws.readLines('empty', 1, 10)).toMatchObject({
      start: 1,
      end: 0,
      totalLines: 0,
      lines: [],
      truncated: false,
    });
  });

  it('patchLines replaces, inserts, appends and deletes', () => {
    const ws = new ZipWorkspace();
    ws.writeFile('f.txt', 'a\nb\nc\n');
    expect(ws.patchLines('f.txt', 2, 2, 'B')).toEqual({
      start: 2,
      removed: 1,
      inserted: 1,
      totalLines: 3,
      historyId: 2,
    });
    expect(ws.readText('f.txt')).toBe('a\nB\nc\n');
    ws.patchLines('f.txt', 1, 0, 'top');
    expect(ws.readText('f.txt')).toBe('top\na\nB\nc\n');
    ws.patchLines('f.txt', 5, 4, 'end\nmore');
    expect(ws.readText('f.txt')).toBe('top\na\nB\nc\nend\nmore\n');
    const r = ws.patchLines('f.txt', 2, 4, '');
    expect(r.removed).toBe(3);
    expect(r.inserted).toBe(0);
    expect(ws.readText('f.txt')).toBe('top\nend\nmore\n');
    expect(ws.patchLines('f.txt', 1, 1, 'top').historyId).toBeNull();
  });

  it('patchLines keeps CRLF files CRLF', () => {
    const ws = new ZipWorkspace();
    ws.writeFile('w.txt', 'a\r\nb\r\n');
    ws.patchLines('w.txt', 2, 2, 'x\ny');
    expect(ws.readText('w.txt')).toBe('a\r\nx\r\ny\r\n');
  });

  it('patchLines with expected: CONFLICT leaves the file alone', () => {
    const ws = new ZipWorkspace();
    ws.writeFile('f.txt', 'a\nb\nc\n');
    const e = thrown(() => ws.patchLines('f.txt', 2, 3, 'X', { expected: 'b\nWRONG' }));
    expect(e.code).toBe('CONFLICT');
    expect(e.message).toContain('b\nc');
    expect(ws.readText('f.txt')).toBe('a\nb\nc\n');
    expect(ws.history().length).toBe(1);
    ws.patchLines('f.txt', 2, 3, 'X', { expected: 'b\nc\n' });
    expect(ws.readText('f.txt')).toBe('a\nX\n');
    expect(thrownCode(() => ws.patchLines('f.txt', 4, 4, 'x'))).toBe('RANGE');
    expect(thrownCode(() => loose(ws).patchLines!('f.txt', 1, 1, 'x', { expect: 'a' }))).toBe('INVALID_INPUT');
  });
});

describe('search', () => {
  it('finds literal text with context, columns and truncation', () => {
    const ws = sample();
    const r = ws.search('const', { context: 1 });
    expect(r.truncated).toBe(false);
    expect(r.filesSearched).toBe(3);
    expect(r.matches.map((m) => [m.path, m.line, m.column])).toEqual([
      ['src/app.js', 1, 1],
      ['src/app.js', 2, 1],
      ['src/lib/util.js', 1, 8],
    ]);
    expect(r.matches[0]).toEqual({
      path: 'src/app.js',
      line: 1,
      column: 1,
      before: [],
      text: 'const a = 1;',
      after: ['const b = 2;'],
    });
    expect(ws.search('a + b').matches[0]).toMatchObject({ line: 3, column: 13, before: [], after: [] });
    const capped = ws.search('const', { maxResults: 2 });
    expect(capped.matches.length).toBe(2);
    expect(capped.truncated).toBe(true);
    expect(ws.search('const', { path: '~/src/lib' }).matches.map((m) => m.path)).toEqual(['src/lib/util.js']);
    expect(ws.search('const', { path: 'src/app.js' }).matches.length).toBe(2);
    expect(ws.search('CONST').matches).toEqual([]);
    expect(ws.search('x.*').matches).toEqual([]);
  });

  it('skips binary files and checks its options', () => {
    const ws = new ZipWorkspace();
    ws.writeFile('bin', Buffer.from('needle\0'));
    ws.writeFile('txt', 'needle');
    expect(ws.search('needle').matches.map((m) => m.path)).toEqual(['txt']);
    expect(thrownCode(() => ws.search(''))).toBe('INVALID_INPUT');
    expect(thrownCode(() => ws.search('x', { context: -1 }))).toBe('INVALID_INPUT');
    expect(thrownCode(() => ws.search('x', { maxResults: 0 }))).toBe('INVALID_INPUT');
    expect(thrownCode(() => ws.search('x', { path: 'nope' }))).toBe('NOT_FOUND');
    expect(thrownCode(() => ws.search('x', { path: '../' }))).toBe('PATH_INVALID');
  });
});

describe('errors', () => {
  it('are Errors with a stable code and a human message', () => {
    const ws = new ZipWorkspace();
    const e = thrown(() => ws.readFile('missing.txt'));
    expect(e.error).toBeInstanceOf(Error);
    expect(e.code).toBe('NOT_FOUND');
    expect(e.message).toBe('~/missing.txt does not exist');
    expect(Object.keys(e.error)).toContain('code');
  });

  it('bad argument types are TypeErrors with INVALID_INPUT naming the argument', () => {
    const ws = loose(new ZipWorkspace());
    const cases: [string, unknown[], RegExp][] = [
      ['readFile', [42], /path must be a string, got a number/],
      ['readFile', [], /path must be a string, got undefined/],
      ['readText', [null], /path must be a string, got null/],
      ['writeFile', ['a', 5], /data must be a string, Buffer or Uint8Array, got a number/],
      ['writeFile', ['a', new Uint16Array(2)], /data must be a string, Buffer or Uint8Array/],
      ['writeFile', ['a', { length: 1 }], /data must be a string, Buffer or Uint8Array, got an object/],
      ['mkdir', ['d', { recursive: 'yes' }], /options\.recursive must be a boolean, got a string/],
      ['mkdir', ['d', { recurse: true }], /unknown options key 'recurse'/],
      ['delete', ['d', 'recursive'], /options must be an object, got a string/],
      ['list', [5], /path must be a string/],
      ['readLines', ['f', '1', 2], /start must be a number, got a string/],
      ['readLines', ['f', 1, Infinity], /end must be a whole number/],
      ['patchLines', ['f', 1, 1, 7], /replacement must be a string, got a number/],
      ['patchLines', ['f', 1, 1, 'x', { expected: 1 }], /options\.expected must be a string/],
      ['search', [/re/], /query must be a string, got an object/],
      ['history', [-1], /n must be between/],
      ['diff', ['1'], /id must be a number/],
      ['undo', [0], /n must be between 1/],
      ['redo', [1.5], /n must be a whole number/],
      ['restore', [undefined], /id must be a number, got undefined/],
    ];
    for (const [method, args, pattern] of cases) {
      const e = thrown(() => ws[method]!(...args));
      expect(e.error, method).toBeInstanceOf(TypeError);
      expect(e.code, method).toBe('INVALID_INPUT');
      expect(e.message, method).toMatch(pattern);
    }
    const Z = ZipWorkspace as unknown as Record<string, (...args: unknown[]) => unknown>;
    expect(thrown(() => Z.fromZip!('zip')).message).toMatch(/bytes must be a Buffer or Uint8Array, got a string/);
    expect(thrown(() => Z.fromZip!(Buffer.alloc(0), { maxEntries: 0 })).message).toMatch(
      /limits\.maxEntries must be between 1/,
    );
    expect(thrown(() => Z.fromZip!(Buffer.alloc(0), { maxFiles: 1 })).message).toMatch(/unknown limits key 'maxFiles'/);
    expect(thrown(() => Z.open!(1)).message).toMatch(/hostPath must be a string/);
  });

  it('a throwing options getter becomes INVALID_INPUT and changes nothing', () => {
    const ws = new ZipWorkspace();
    const options = {
      get recursive(): boolean {
        throw new Error('boom');
      },
    };
    const e = thrown(() => ws.mkdir('d', options));
    expect(e.code).toBe('INVALID_INPUT');
    expect(e.message).toContain('boom');
    expect(ws.exists('d')).toBe(false);
  });

  it('re-entering the workspace from an options getter is refused, not undefined behaviour', () => {
    const ws = new ZipWorkspace();
    ws.writeFile('a', '1');
    const options = {
      get recursive(): boolean {
        ws.writeFile('b', '2');
        return true;
      },
    };
    expect(() => ws.mkdir('d', options)).toThrow();
    expect(ws.exists('b')).toBe(false);
    expect(ws.readText('a')).toBe('1');
  });
});
