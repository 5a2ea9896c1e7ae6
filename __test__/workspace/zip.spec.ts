import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ZipWorkspace } from '../../lib/index.js';
import { makeZip, thrown, thrownCode, unixMode } from './helpers.js';

function sample(): ZipWorkspace {
  const ws = new ZipWorkspace();
  ws.writeFile('src/app.js', 'let x = 1;\nlet y = 2;\n');
  ws.writeFile('data/blob.bin', Uint8Array.from([0, 1, 2, 250, 251]));
  ws.mkdir('empty-dir');
  ws.writeFile('big.txt', 'repeat me\n'.repeat(5000));
  ws.patchLines('src/app.js', 2, 2, 'let y = 3;');
  return ws;
}

/** Entry names of an archive, read from its central directory. */
function entryNames(zip: Buffer): string[] {
  const end = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  const count = zip.readUInt16LE(end + 10);
  let p = zip.readUInt32LE(end + 16);
  const names: string[] = [];
  for (let i = 0; i < count; i++) {
    const nameLen = zip.readUInt16LE(p + 28);
    const extraLen = zip.readUInt16LE(p + 30);
    const commentLen = zip.readUInt16LE(p + 32);
    names.push(zip.toString('utf8', p + 46, p + 46 + nameLen));
    p += 46 + nameLen + extraLen + commentLen;
  }
  return names;
}

describe('export', () => {
  it('toZip is deterministic and survives fromZip unchanged', () => {
    const ws = sample();
    const a = ws.toZip();
    const b = ws.toZip();
    expect(Buffer.isBuffer(a)).toBe(true);
    expect(a.equals(b)).toBe(true);
    const back = ZipWorkspace.fromZip(a);
    expect(back.toZip().equals(a)).toBe(true);
    expect(ZipWorkspace.fromZip(new Uint8Array(a)).toZip().equals(a)).toBe(true);
    expect(back.list('~', { recursive: true })).toEqual(ws.list('~', { recursive: true }));
    expect([...back.readFile('data/blob.bin')]).toEqual([0, 1, 2, 250, 251]);
    expect(back.readText('big.txt')).toBe(ws.readText('big.txt'));
    expect(back.stat('empty-dir').kind).toBe('dir');
  });

  it('an empty workspace round-trips', () => {
    const z = new ZipWorkspace().toZip();
    const back = ZipWorkspace.fromZip(z);
    expect(back.list()).toEqual([]);
    expect(back.history()).toEqual([]);
    expect(back.toZip().equals(z)).toBe(true);
  });

  it('the archive holds the files, folders and the hidden history', () => {
    const names = entryNames(sample().toZip());
    expect(names).toContain('src/app.js');
    expect(names).toContain('empty-dir/');
    expect(names.some((n) => n.startsWith('.time/'))).toBe(true);
  });
});

describe('the .time history area', () => {
  it('is invisible to list, read, write, search and stat', () => {
    const ws = ZipWorkspace.fromZip(sample().toZip());
    expect(ws.history().length).toBeGreaterThan(0);
    const all = ws.list('~', { recursive: true }).map((e) => e.path);
    expect(all.some((p) => p.startsWith('.time'))).toBe(false);
    for (const p of ['.time', '~/.time', '/.time/log.json', '.time/x', 'a/../.time/y']) {
      expect(ws.exists(p), p).toBe(false);
      expect(
        thrownCode(() => ws.readFile(p)),
        p,
      ).toBe('PATH_INVALID');
      expect(
        thrownCode(() => ws.readText(p)),
        p,
      ).toBe('PATH_INVALID');
      expect(
        thrownCode(() => ws.stat(p)),
        p,
      ).toBe('PATH_INVALID');
      expect(
        thrownCode(() => ws.list(p)),
        p,
      ).toBe('PATH_INVALID');
      expect(
        thrownCode(() => ws.writeFile(p, 'x')),
        p,
      ).toBe('PATH_INVALID');
      expect(
        thrownCode(() => ws.mkdir(p, { recursive: true })),
        p,
      ).toBe('PATH_INVALID');
      expect(
        thrownCode(() => ws.delete(p, { recursive: true })),
        p,
      ).toBe('PATH_INVALID');
      expect(
        thrownCode(() => ws.readLines(p, 1, 1)),
        p,
      ).toBe('PATH_INVALID');
      expect(
        thrownCode(() => ws.patchLines(p, 1, 1, '')),
        p,
      ).toBe('PATH_INVALID');
      expect(
        thrownCode(() => ws.search('op', { path: p })),
        p,
      ).toBe('PATH_INVALID');
    }
    // The history's own JSON is not searchable.
    expect(ws.search('"op"').matches).toEqual([]);
    expect(ws.search('write').matches).toEqual([]);
  });

  it('survives toZip/fromZip: the history, undo and diffs still work', () => {
    const ws = sample();
    const back = ZipWorkspace.fromZip(ws.toZip());
    expect(back.history(100)).toEqual(ws.history(100));
    const last = back.history(1)[0]!;
    expect(back.diff(last.id)).toBe(ws.diff(last.id));
    back.undo();
    expect(back.readText('src/app.js')).toBe('let x = 1;\nlet y = 2;\n');
  });
});

describe('hostile archives', () => {
  const cases: [string, () => Buffer, string, RegExp][] = [
    ['zip-slip ../x', () => makeZip([{ name: '../x', data: 'pwned' }]), 'ZIP_INVALID', /\.\./],
    ['zip-slip a/../../x', () => makeZip([{ name: 'a/../../x', data: 'pwned' }]), 'ZIP_INVALID', /\.\./],
    ['absolute /etc/x', () => makeZip([{ name: '/etc/x', data: 'pwned' }]), 'ZIP_INVALID', /absolute/],
    ['drive letter', () => makeZip([{ name: 'C:/x', data: 'pwned' }]), 'ZIP_INVALID', /drive/],
    ['backslash', () => makeZip([{ name: '..\\x', data: 'pwned' }]), 'ZIP_INVALID', /backslash/],
    ['NUL in a name', () => makeZip([{ name: 'a\0.txt', data: 'x' }]), 'ZIP_INVALID', /NUL/],
    [
      'symlink',
      () => makeZip([{ name: 'link', data: '/etc/passwd', externalAttrs: unixMode(0o120777) }]),
      'ZIP_INVALID',
      /symbolic link/,
    ],
    ['fifo', () => makeZip([{ name: 'pipe', externalAttrs: unixMode(0o010644) }]), 'ZIP_INVALID', /special file/],
    [
      'duplicate names',
      () =>
        makeZip([
          { name: 'a.txt', data: '1' },
          { name: 'a.txt', data: '2' },
        ]),
      'ZIP_INVALID',
      /twice/,
    ],
    [
      'names that collide after normalisation',
      () =>
        makeZip([
          { name: 'a/b.txt', data: '1' },
          { name: './a//b.txt', data: '2' },
        ]),
      'ZIP_INVALID',
      /collides/,
    ],
    [
      'a file that is also a folder',
      () =>
        makeZip([
          { name: 'a', data: '1' },
          { name: 'a/b', data: '2' },
        ]),
      'ZIP_INVALID',
      /folder/,
    ],
    ['encrypted entry', () => makeZip([{ name: 'a', data: 'x', flags: 1 }]), 'ZIP_INVALID', /encrypted/],
    ['unsupported method', () => makeZip([{ name: 'a', data: 'x', method: 12 }]), 'ZIP_INVALID', /compression method/],
    ['garbage bytes', () => Buffer.from('this is not a zip file at all'), 'ZIP_INVALID', /cannot be read/],
    ['empty input', () => Buffer.alloc(0), 'ZIP_INVALID', /cannot be read/],
    ['a lone local header', () => Buffer.from('PK\x03\x04\x14\x00\x00\x00'), 'ZIP_INVALID', /cannot be read/],
    ['unusable history', () => makeZip([{ name: '.time/log.json', data: '{not json' }]), 'ZIP_INVALID', /history/],
  ];
  for (const [label, build, code, pattern] of cases) {
    it(label, () => {
      const e = thrown(() => ZipWorkspace.fromZip(build()));
      expect(e.code).toBe(code);
      expect(e.message).toMatch(pattern);
    });
  }

  it('truncated archives', () => {
    const z = sample().toZip();
    for (const cut of [1, 10, 22, 100, Math.floor(z.length / 2), z.length - 30]) {
      expect(
        thrownCode(() => ZipWorkspace.fromZip(z.subarray(0, z.length - cut))),
        `cut ${cut}`,
      ).toBe('ZIP_INVALID');
    }
  });

  it('corrupted file data fails its checksum', () => {
    const z = makeZip([{ name: 'a.txt', data: 'hello world' }]);
    const at = z.indexOf('hello world');
    z[at] = 'j'.charCodeAt(0);
    expect(thrownCode(() => ZipWorkspace.fromZip(z))).toBe('ZIP_INVALID');
  });

  it('limits: entries, entry size, total size', () => {
    const three = makeZip([{ name: 'a' }, { name: 'b' }, { name: 'c' }]);
    expect(ZipWorkspace.fromZip(three).list().length).toBe(3);
    const many = thrown(() => ZipWorkspace.fromZip(three, { maxEntries: 2 }));
    expect(many.code).toBe('ZIP_LIMIT');
    expect(many.message).toMatch(/3 entries; the limit is 2/);
    const one = makeZip([{ name: 'a', data: 'x'.repeat(100) }]);
    expect(thrownCode(() => ZipWorkspace.fromZip(one, { maxEntryBytes: 99 }))).toBe('ZIP_LIMIT');
    expect(ZipWorkspace.fromZip(one, { maxEntryBytes: 100 }).readText('a').length).toBe(100);
    const two = makeZip([
      { name: 'a', data: 'x'.repeat(60) },
      { name: 'b', data: 'x'.repeat(60) },
    ]);
    expect(thrownCode(() => ZipWorkspace.fromZip(two, { maxTotalBytes: 100 }))).toBe('ZIP_LIMIT');
    expect(ZipWorkspace.fromZip(two, { maxTotalBytes: 120, maxRatio: 1 }).list().length).toBe(2);
  });

  it('a hand-built archive with folders imports', () => {
    const ws = ZipWorkspace.fromZip(
      makeZip([
        { name: 'dir/' },
        { name: 'dir/a.txt', data: 'hi' },
        { name: 'deep/er/b.txt', data: 'implicit parents' },
        { name: './c.txt', data: 'dot' },
      ]),
    );
    expect(ws.list('~', { recursive: true }).map((e) => `${e.path}:${e.kind}`)).toEqual([
      'c.txt:file',
      'deep:dir',
      'deep/er:dir',
      'deep/er/b.txt:file',
      'dir:dir',
      'dir/a.txt:file',
    ]);
    expect(ws.readText('deep/er/b.txt')).toBe('implicit parents');
    expect(ws.history()).toEqual([]);
  });
});

describe('open and save', () => {
  const dir = mkdtempSync(join(tmpdir(), 'quickrealm-ws-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('save writes toZip() atomically and open reads it back', () => {
    const ws = sample();
    const file = join(dir, 'project.zip');
    ws.save(file);
    expect(readFileSync(file).equals(ws.toZip())).toBe(true);
    expect(readdirSync(dir)).toEqual(['project.zip']);
    const back = ZipWorkspace.open(file);
    expect(back.toZip().equals(ws.toZip())).toBe(true);

    // Saving again replaces the file and leaves no temporary file behind.
    back.writeFile('new.txt', 'more');
    back.save(file);
    expect(readdirSync(dir)).toEqual(['project.zip']);
    expect(ZipWorkspace.open(file).readText('new.txt')).toBe('more');
  });

  it('open applies limits and reports host errors as IO', () => {
    const file = join(dir, 'three.zip');
    writeFileSync(file, makeZip([{ name: 'a' }, { name: 'b' }, { name: 'c' }]));
    expect(thrownCode(() => ZipWorkspace.open(file, { maxEntries: 2 }))).toBe('ZIP_LIMIT');
    expect(ZipWorkspace.open(file).list().length).toBe(3);
    const missing = thrown(() => ZipWorkspace.open(join(dir, 'missing.zip')));
    expect(missing.code).toBe('IO');
    expect(missing.message).toContain('missing.zip');
    expect(thrownCode(() => ZipWorkspace.open(dir))).toBe('IO');
    const junk = join(dir, 'junk.zip');
    writeFileSync(junk, 'not a zip');
    expect(thrownCode(() => ZipWorkspace.open(junk))).toBe('ZIP_INVALID');
    rmSync(file);
    rmSync(junk);
  });

  it('a failed save reports IO and leaves nothing behind', () => {
    const ws = sample();
    const e = thrown(() => ws.save(join(dir, 'no-such-dir', 'x.zip')));
    expect(e.code).toBe('IO');
    expect(thrownCode(() => ws.save(dir))).toBe('IO');
    expect(readdirSync(dir)).toEqual(['project.zip']);
  });
});
