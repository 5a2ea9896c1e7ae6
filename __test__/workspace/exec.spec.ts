import { describe, expect, it } from 'vitest';
import { ZipWorkspace, type ExecResult } from '../../lib/index.js';

function workspace(files: Record<string, string>): ZipWorkspace {
  const ws = new ZipWorkspace();
  for (const [path, body] of Object.entries(files)) ws.writeFile(path, body);
  return ws;
}

/** Runs `main.js` alone; fails the test unless the run succeeds, and returns its stdout. */
async function stdoutOf(main: string, files: Record<string, string> = {}): Promise<string> {
  const r = await workspace({ 'main.js': main, ...files }).exec('main.js');
  expect(r.error, r.stderr).toBeUndefined();
  expect(r.ok).toBe(true);
  return r.stdout;
}

describe('module graphs', () => {
  it('runs TypeScript with relative, index and .js-to-.ts imports', async () => {
    const ws = workspace({
      'main.ts': [
        "import { greet, type Named } from './lib/greet';",
        "import { twice } from './lib/math.js';",
        "import helpers from './helpers';",
        "import { tag } from './lib/m.mjs';",
        "const who: Named = { name: 'ts' };",
        'console.log(greet(who), twice(21), helpers.name, tag);',
      ].join('\n'),
      'lib/greet.ts':
        'export interface Named { name: string }\nexport const greet = (n: Named): string => `hello ${n.name}`;\n',
      'lib/math.ts': 'export const twice = (x: number): number => x * 2;\n',
      'lib/m.mjs': "export const tag = 'mjs';\n",
      'helpers/index.js': "export default { name: 'index' };\n",
    });
    const r = await ws.exec('~/main.ts');
    expect(r).toMatchObject({ ok: true, exitCode: 0, stdout: 'hello ts 42 index mjs\n', stderr: '' });
    expect(r.historyId).toBeNull();
    expect(r.stats.wallMs).toBeGreaterThanOrEqual(0);
  });

  it('compiles TypeScript enums, namespaces, generics and parameter properties', async () => {
    const src = [
      'enum Color { Red, Green = 5, Blue }',
      'namespace Geo { export const unit = 2; }',
      'class Box<T> { constructor(private readonly v: T) {} get(): T { return this.v; } }',
      'abstract class Shape { abstract area(): number }',
      'class Sq extends Shape { constructor(public s: number) { super(); } area() { return this.s ** 2; } }',
      'const pick = <K extends keyof typeof Color>(k: K) => Color[k];',
      "console.log(Color.Blue, Color[5], Geo.unit, new Box<string>('b').get(), new Sq(3).area(), pick('Red'));",
    ].join('\n');
    const r = await workspace({ 'main.ts': src }).exec('main.ts');
    expect(r.error).toBeUndefined();
    expect(r.stdout).toBe('6 Green 2 b 9 0\n');
  });

  it('reports TypeScript syntax errors in the original file', async () => {
    const r = await workspace({ 'main.ts': "import './bad';\n", 'bad.ts': 'const ok = 1;\nconst b: = 2;\n' }).exec(
      'main.ts',
    );
    expect(r.ok).toBe(false);
    expect(r.error).toMatchObject({ code: 'EVAL_ERROR', name: 'SyntaxError', file: '~/bad.ts', line: 2 });
    expect(r.error?.frame).toContain('> 2 | const b: = 2;');
  });

  it('places runtime errors in the failing module, TypeScript positions included', async () => {
    const ws = workspace({
      'main.ts': "import { f } from './lib/util';\nconsole.log('start');\nf();\n",
      'lib/util.ts': 'type A = number;\n\nexport function f(): A {\n  const x: any = null;\n  return x.boom;\n}\n',
    });
    const r = await ws.exec('main.ts');
    expect(r).toMatchObject({ ok: false, exitCode: 1, stdout: 'start\n' });
    expect(r.error).toMatchObject({
      code: 'EVAL_ERROR',
      name: 'TypeError',
      file: '~/lib/util.ts',
      line: 5,
      column: 10,
    });
    expect(r.error?.frame).toContain('> 5 |   return x.boom;');
    expect(r.error?.stack).toContain('~/lib/util.ts:5:10');
    expect(r.error?.stack).toContain('~/main.ts:3:');
  });

  it('dynamic import() works for workspace files and shims', async () => {
    const out = await stdoutOf(
      "const { v } = await import('./lib.js');\nconst path = await import('node:path');\nconsole.log(v, path.default.join('a', 'b'));",
      { 'lib.js': 'export const v = 7;' },
    );
    expect(out).toBe('7 a/b\n');
  });

  it('refuses entries that cannot run', async () => {
    const ws = workspace({ 'notes.txt': 'x', 'dir/a.js': '' });
    for (const [entry, text, code] of [
      ['missing.js', 'does not exist', 'NOT_FOUND'],
      ['notes.txt', 'only .js', 'INVALID_INPUT'],
      ['dir', 'is a folder', 'INVALID_INPUT'],
    ] as const) {
      const r = await ws.exec(entry);
      expect(r.ok).toBe(false);
      expect(r.error?.code).toBe(code);
      expect(r.error?.message).toContain(text);
    }
    const loose = ws as unknown as Record<string, (...a: unknown[]) => unknown>;
    // Bad arguments reject (never a synchronous throw), with a coded TypeError.
    for (const args of [
      [42],
      ['a.js', { argv: 'x' }],
      ['a.js', { env: { A: 1 } }],
      ['a.js', { commit: 'sometimes' }],
      ['a.js', { timeoutMs: 0 }],
      ['a.js', { nope: 1 }],
      ['a.js', { signal: 'soon' }],
    ]) {
      let pending: unknown;
      expect(() => {
        pending = loose.exec!(...args);
      }).not.toThrow();
      const e = await (pending as Promise<unknown>).then(
        () => undefined,
        (x: unknown) => x as { code?: string; name?: string },
      );
      expect(e?.code, JSON.stringify(args)).toBe('INVALID_INPUT');
      expect(e?.name).toBe('TypeError');
    }
  });
});

describe('refused imports', () => {
  const cases: [string, RegExp][] = [
    ['lodash', /packages cannot be installed/],
    ['child_process', /Node\.js built-in module/],
    ['node:child_process', /not available in this sandbox/],
    ['/abs.js', /absolute paths cannot be imported/],
    ['file:///x.js', /URL imports are not allowed/],
    ['https://example.test/x.js', /URL imports are not allowed/],
    ['../../escape.js', /leaves the workspace/],
    ['./missing.js', /Cannot find module/],
  ];
  for (const [spec, why] of cases) {
    it(`refuses '${spec}' with a message naming it`, async () => {
      const r = await workspace({ 'main.js': `// header\nimport x from '${spec}';\nconsole.log(x);\n` }).exec(
        'main.js',
      );
      expect(r.ok).toBe(false);
      expect(r.exitCode).toBe(1);
      expect(r.error?.code).toBe('EVAL_ERROR');
      expect(r.error?.message).toContain(`'${spec}'`);
      expect(r.error?.message).toMatch(why);
      expect(r.error).toMatchObject({ file: '~/main.js', line: 2 });
    });
  }
});

describe('fs, path and os shims', () => {
  it('default and named imports, under both names', async () => {
    const out = await stdoutOf(
      [
        "import fs, { readFileSync, writeFileSync } from 'fs';",
        "import * as nodeFs from 'node:fs';",
        "import fsp, { readFile } from 'fs/promises';",
        "import path, { join } from 'node:path';",
        "import os, { EOL, homedir } from 'os';",
        "writeFileSync('a.txt', 'A');",
        "console.log(readFileSync('a.txt', 'utf8'), nodeFs.default === fs, fs.promises === fsp, readFile === fsp.readFile, join('x', 'y'), path.sep, homedir(), os.tmpdir(), EOL === '\\n');",
      ].join('\n'),
    );
    expect(out).toBe('A true true true x/y / ~ ~/tmp true\n');
  });

  it('behaves like Node for missing parents and recursive mkdir', async () => {
    const out = await stdoutOf(`
import fs from 'fs';
const err = (f) => { try { f(); return 'ok'; } catch (e) { return e.code + ' ' + e.message; } };
console.log(err(() => fs.writeFileSync('out/x.txt', 'x')));
console.log(err(() => fs.mkdirSync('out/a/b')));
console.log(fs.mkdirSync('out/a/b', { recursive: true }));
fs.writeFileSync('out/a/b/x.txt', 'x');
console.log(err(() => fs.mkdirSync('out')), err(() => fs.rmdirSync('out')), err(() => fs.readFileSync('out')));
const e = (() => { try { fs.readFileSync('nope.txt'); } catch (x) { return x; } })();
console.log(e instanceof Error, e.code, e.errno, e.syscall, e.path);
`);
    expect(out.split('\n')).toEqual([
      "ENOENT ENOENT: no such file or directory, open '~/out/x.txt'",
      "ENOENT ENOENT: no such file or directory, mkdir '~/out/a/b'",
      '~/out',
      "EEXIST EEXIST: file already exists, mkdir '~/out' ENOTEMPTY ENOTEMPTY: directory not empty, rmdir '~/out' EISDIR EISDIR: illegal operation on a directory, read '~/out'",
      'true ENOENT -2 open ~/nope.txt',
      '',
    ]);
  });

  it('reads bytes as Uint8Array and text with an encoding', async () => {
    const out = await stdoutOf(`
import fs from 'fs';
fs.writeFileSync('bin', new Uint8Array([104, 105, 0, 255]));
const b = fs.readFileSync('bin');
console.log(b instanceof Uint8Array, typeof Buffer, b.length, b[3], fs.readFileSync('bin', 'hex'), fs.readFileSync('bin', { encoding: 'base64' }), b.subarray(0, 2).toString());
fs.writeFileSync('t.txt', 'héllo', 'utf8');
fs.appendFileSync('t.txt', '!');
console.log(fs.readFileSync('t.txt', 'utf-8'), fs.statSync('t.txt').size);
`);
    expect(out).toBe('true undefined 4 255 686900ff aGkA/w== hi\nhéllo! 7\n');
  });

  it('lists, stats, renames, copies and removes', async () => {
    const out = await stdoutOf(`
import fs from 'fs';
fs.mkdirSync('d/e', { recursive: true });
fs.writeFileSync('d/e/f.txt', 'f');
fs.writeFileSync('d/g.txt', 'gg');
console.log(fs.readdirSync('d').join(), fs.readdirSync('d', { recursive: true }).join());
console.log(fs.readdirSync('d', { withFileTypes: true }).map((x) => x.name + (x.isDirectory() ? '/' : '')).join());
const s = fs.statSync('d/g.txt');
console.log(s.isFile(), s.isDirectory(), s.size, fs.statSync('d').isDirectory(), fs.existsSync('d/e'), fs.existsSync('zz'));
fs.renameSync('d', 'moved');
fs.copyFileSync('moved/g.txt', 'copy.txt');
fs.unlinkSync('moved/g.txt');
fs.rmSync('moved', { recursive: true });
fs.rmSync('never', { force: true });
console.log(fs.readdirSync('~').join(), fs.readFileSync('copy.txt', 'utf8'));
`);
    expect(out).toBe('e,g.txt e,e/f.txt,g.txt\ne/,g.txt\ntrue false 2 true true false\ncopy.txt,main.js gg\n');
  });

  it('fs/promises and callbacks', async () => {
    const out = await stdoutOf(`
import { mkdir, writeFile, readFile, readdir, stat, rm, access } from 'fs/promises';
import fs from 'fs';
await mkdir('p/q', { recursive: true });
await writeFile('p/q/a.txt', 'async');
const text = await readFile('p/q/a.txt', 'utf8');
const missing = await access('nope').then(() => 'found', (e) => e.code);
const names = await readdir('p/q');
const size = (await stat('p/q/a.txt')).size;
await rm('p', { recursive: true });
const cb = await new Promise((done) => fs.readFile('main.js', 'utf8', (e, d) => done(e ? e.code : typeof d)));
console.log(text, missing, names.join(), size, fs.existsSync('p'), cb);
`);
    expect(out).toBe('async ENOENT a.txt 5 false string\n');
  });

  it('path is POSIX with ~ as the working directory', async () => {
    const out = await stdoutOf(`
import path from 'path';
console.log([path.join('/a/b', '../c'), path.resolve('x'), path.resolve('/r', 'y'), path.dirname('a/b/c.ts'),
  path.basename('a/b/c.ts', '.ts'), path.extname('f.tar.gz'), path.relative('/a/b', '/a/c/d'), path.normalize('a//b/./../c'),
  path.isAbsolute('/x'), path.isAbsolute('x'), process.cwd()].join(' '));
`);
    expect(out).toBe('/a/c ~/x /r/y a/b c .gz ../c/d a/c true false ~\n');
  });
});

describe('writes are all or nothing', () => {
  const failing =
    "import fs from 'fs';\nfs.writeFileSync('new.txt', 'n');\nfs.rmSync('keep.txt');\nfs.mkdirSync('dir');\nthrow new Error('late');\n";

  it('a failed run leaves the workspace byte-for-byte unchanged', async () => {
    const ws = workspace({ 'main.js': failing, 'keep.txt': 'k' });
    const before = ws.toZip();
    const r = await ws.exec('main.js');
    expect(r.ok).toBe(false);
    expect(r.error?.message).toBe('late');
    expect(r.historyId).toBeUndefined();
    expect(Buffer.compare(ws.toZip(), before)).toBe(0);
  });

  it("commit: 'always' keeps the writes made before the failure, as one history entry", async () => {
    const ws = workspace({ 'main.js': failing, 'keep.txt': 'k' });
    const r = await ws.exec('main.js', { commit: 'always' });
    expect(r.ok).toBe(false);
    expect(typeof r.historyId).toBe('number');
    expect(ws.readText('new.txt')).toBe('n');
    expect(ws.exists('keep.txt')).toBe(false);
    expect(ws.history(1)[0]).toMatchObject({
      id: r.historyId,
      op: 'exec ~/main.js',
      paths: ['dir', 'keep.txt', 'new.txt'],
    });
    expect(ws.undo()).toEqual([r.historyId]);
    expect(ws.exists('new.txt')).toBe(false);
    expect(ws.readText('keep.txt')).toBe('k');
  });

  it("commit: 'never' is a dry run", async () => {
    const ws = workspace({
      'main.js': "import fs from 'fs';\nfs.writeFileSync('x', 'x');\nconsole.log(fs.readFileSync('x', 'utf8'));\n",
    });
    const r = await ws.exec('main.js', { commit: 'never' });
    expect(r).toMatchObject({ ok: true, stdout: 'x\n' });
    expect(ws.exists('x')).toBe(false);
  });

  it('a successful run is one history entry applied on top of host changes made meanwhile', async () => {
    const ws = workspace({
      'main.js': "import fs from 'fs';\nfor (let i = 0; i < 3; i++) fs.writeFileSync(`out${i}.txt`, String(i));\n",
      'shared.txt': 'v1',
    });
    const pending = ws.exec('main.js');
    ws.writeFile('host.txt', 'host');
    const r = await pending;
    expect(r.ok).toBe(true);
    expect(ws.readText('host.txt')).toBe('host');
    expect(ws.readText('out2.txt')).toBe('2');
    expect(ws.history(1)[0]).toMatchObject({ op: 'exec ~/main.js', paths: ['out0.txt', 'out1.txt', 'out2.txt'] });
  });

  it('reads see the run’s own staged writes', async () => {
    const out = await stdoutOf(
      "import fs from 'fs';\nfs.writeFileSync('s.txt', 'staged');\nconst { v } = await import('./gen.js').catch(() => ({ v: 'no' }));\nfs.writeFileSync('gen.js', 'export const v = 1;');\nconsole.log(fs.readFileSync('s.txt', 'utf8'), v, (await import('./gen.js')).v);\n",
    );
    expect(out).toBe('staged no 1\n');
  });
});

describe('quotas', () => {
  it('a write past the byte quota fails with EDQUOT and the run fails', async () => {
    const ws = workspace({ 'main.js': "import fs from 'fs';\nfs.writeFileSync('big.bin', new Uint8Array(4096));\n" });
    const before = ws.toZip();
    const r = await ws.exec('main.js', { quota: { bytes: 1024 } });
    expect(r.ok).toBe(false);
    expect(r.error?.message).toMatch(
      /^EDQUOT: disk quota exceeded, write '~\/big\.bin' \(this run may write at most 1024 bytes/,
    );
    expect(r.error?.line).toBe(2);
    expect(Buffer.compare(ws.toZip(), before)).toBe(0);
  });

  it('counts files and folders, and the error is catchable like Node’s', async () => {
    const ws = workspace({
      'main.js':
        "import fs from 'fs';\nlet n = 0;\ntry { for (;;) { fs.writeFileSync(`f${n}.txt`, ''); n++; } } catch (e) { console.log(e.code, n); }\n",
    });
    const r = await ws.exec('main.js', { quota: { files: 5 } });
    expect(r).toMatchObject({ ok: true, stdout: 'EDQUOT 5\n' });
    expect(ws.list().length).toBe(6);
  });

  it('bytesWritten counts what the run wrote, whether or not it lands', async () => {
    // 5 written, 3 appended, 8 copied, 2 written: 18.
    const main =
      "import fs from 'fs';\nfs.writeFileSync('a.txt', 'hello');\nfs.appendFileSync('a.txt', 'abc');\n" +
      "fs.copyFileSync('a.txt', 'b.txt');\nfs.writeFileSync('c.txt', 'hi');\n";
    const ok = await workspace({ 'main.js': main }).exec('main.js');
    expect(ok).toMatchObject({ ok: true, bytesWritten: 18 });
    const dry = await workspace({ 'main.js': main }).exec('main.js', { commit: 'never' });
    expect(dry).toMatchObject({ ok: true, bytesWritten: 18 });
    expect(dry.historyId).toBeUndefined();
    const failed = await workspace({ 'main.js': `${main}throw new Error('late');\n` }).exec('main.js');
    expect(failed).toMatchObject({ ok: false, bytesWritten: 18 });
    const big = await workspace({
      'main.js': "import fs from 'fs';\nfs.writeFileSync('big.bin', new Uint8Array(1 << 20));\n",
    }).exec('main.js');
    expect(big.bytesWritten).toBe(1 << 20);
    expect((await workspace({ 'main.js': '1;' }).exec('main.js')).bytesWritten).toBe(0);
    expect((await new ZipWorkspace().exec('missing.js')).bytesWritten).toBe(0);
  });
});

describe('process', () => {
  it('argv, env, cwd and exit codes', async () => {
    const ws = workspace({
      'tool.mjs':
        "console.log(JSON.stringify(process.argv.slice(1)), process.env.MODE, process.cwd());\nprocess.env.X = '1';\nif (process.argv[2] === 'fail') process.exit(3);\nconsole.log('end');\n",
    });
    const ok = await ws.exec('tool.mjs', { argv: ['run'], env: { MODE: 'test' } });
    expect(ok).toMatchObject({ ok: true, exitCode: 0, stdout: '["~/tool.mjs","run"] test ~\nend\n' });
    const failed = await ws.exec('tool.mjs', { argv: ['fail'] });
    expect(failed).toMatchObject({ ok: false, exitCode: 3, stdout: '["~/tool.mjs","fail"] undefined ~\n' });
    expect(failed.error).toMatchObject({ code: 'EVAL_ERROR', name: 'ExitError' });
  });

  it('exit stops immediately: catch, finally and pending jobs do not run', async () => {
    const ws = workspace({
      'main.js': [
        "import fs from 'fs';",
        "fs.writeFileSync('before.txt', '1');",
        "Promise.resolve().then(() => fs.writeFileSync('late.txt', '2'));",
        "try { process.exit(0); } catch { console.log('caught'); } finally { console.log('finally'); }",
        "console.log('after');",
      ].join('\n'),
    });
    const r = await ws.exec('main.js');
    expect(r).toMatchObject({ ok: true, exitCode: 0, stdout: '' });
    expect(ws.exists('before.txt')).toBe(true);
    expect(ws.exists('late.txt')).toBe(false);
  });

  it('uncaught errors and unhandled rejections exit with 1; exitCode is honoured', async () => {
    const codes = await Promise.all(
      [
        "throw new Error('x');",
        "Promise.reject(new TypeError('lost'));",
        'process.exitCode = 4;',
        'await null; process.exit(2);',
        '',
      ].map(async (src) => {
        const r = await workspace({ 'main.js': src }).exec('main.js');
        return [r.exitCode, r.ok];
      }),
    );
    expect(codes).toEqual([
      [1, false],
      [1, false],
      [4, false],
      [2, false],
      [0, true],
    ]);
  });

  it('maps console levels and stream writes to stdout and stderr', async () => {
    const r = await workspace({
      'main.js':
        "console.log('log');\nconsole.info('info');\nconsole.debug('debug');\nconsole.warn('warn');\nconsole.error('error');\nprocess.stdout.write('a');\nprocess.stdout.write('b\\nc');\nprocess.stderr.write('e\\n');\nconsole.log({ k: [1] });\n",
    }).exec('main.js');
    expect(r.stdout).toBe('log\ninfo\ndebug\nab\n{ k: [ 1 ] }\nc');
    expect(r.stderr).toBe('warn\nerror\ne\n');
  });

  it('process does not exist in plain runs', async () => {
    const { runSync } = await import('../../lib/index.js');
    expect(runSync('return typeof process').value).toBe('undefined');
  });
});

describe('limits', () => {
  it('times out inside exec without applying writes', async () => {
    const ws = workspace({
      'main.js': "import fs from 'fs';\nfs.writeFileSync('x', '1');\nconsole.log('spin');\nfor (;;) {}\n",
    });
    const started = Date.now();
    const r: ExecResult = await ws.exec('main.js', { timeoutMs: 150 });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(r).toMatchObject({ ok: false, exitCode: 1, stdout: 'spin\n' });
    expect(r.error?.code).toBe('TIMEOUT');
    expect(ws.exists('x')).toBe(false);
  });

  it('honours memory and output limits', async () => {
    const mem = await workspace({ 'main.js': "const a = []; for (;;) a.push('x'.repeat(1000));" }).exec('main.js', {
      limits: { memoryBytes: 8 << 20 },
    });
    expect(mem.error?.code).toBe('MEMORY_LIMIT');
    const out = await workspace({ 'main.js': "for (;;) console.log('y'.repeat(100));" }).exec('main.js', {
      limits: { outputBytes: 1000 },
    });
    expect(out.error?.code).toBe('OUTPUT_LIMIT');
    expect(out.stdout.length).toBeLessThanOrEqual(1100);
  });

  it('runs in parallel off the main thread', async () => {
    const ws = workspace({
      'main.js': "const end = Date.now() + 150; while (Date.now() < end) {}\nconsole.log('done');\n",
    });
    let ticks = 0;
    const timer = setInterval(() => ticks++, 10);
    const results = await Promise.all([ws.exec('main.js'), ws.exec('main.js')]);
    clearInterval(timer);
    expect(results.map((r) => r.stdout)).toEqual(['done\n', 'done\n']);
    expect(ticks).toBeGreaterThan(3);
  });
});
