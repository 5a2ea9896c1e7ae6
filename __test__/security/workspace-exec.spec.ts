// Workspace execution against hostile code: escapes through fs paths and imports, the hidden
// history area, quotas, and reaching host powers through the shims or `process`.
import { describe, expect, it } from 'vitest';
import { ZipWorkspace } from '../../lib/index.js';
import { expectHealthy } from '../helpers.js';
import { makeZip, thrownCode, unixMode } from '../workspace/helpers.js';

function workspace(files: Record<string, string>): ZipWorkspace {
  const ws = new ZipWorkspace();
  for (const [path, body] of Object.entries(files)) ws.writeFile(path, body);
  return ws;
}

/** Runs `body` (with `fs` imported and a `code(f)` helper giving the thrown code) and returns stdout lines. */
async function probe(body: string, files: Record<string, string> = {}): Promise<string[]> {
  const ws = workspace({
    'main.js': `import fs from 'fs';\nconst code = (f) => { try { f(); return 'ok'; } catch (e) { return e.code; } };\n${body}`,
    ...files,
  });
  const r = await ws.exec('main.js');
  expect(r.error, r.stderr).toBeUndefined();
  return r.stdout.trimEnd().split('\n');
}

describe('paths cannot leave the workspace', () => {
  const escapes = ['../x', '../../etc/passwd', '~/../x', 'a/../../x', './../x', '~/a/b/../../../x'];

  it('every fs call refuses `..` past the root with EACCES', async () => {
    const calls = [
      (p: string) => `fs.readFileSync(${p})`,
      (p: string) => `fs.writeFileSync(${p}, 'x')`,
      (p: string) => `fs.appendFileSync(${p}, 'x')`,
      (p: string) => `fs.mkdirSync(${p}, { recursive: true })`,
      (p: string) => `fs.readdirSync(${p})`,
      (p: string) => `fs.statSync(${p})`,
      (p: string) => `fs.rmSync(${p}, { recursive: true, force: true })`,
      (p: string) => `fs.unlinkSync(${p})`,
      (p: string) => `fs.accessSync(${p})`,
      (p: string) => `fs.renameSync('main.js', ${p})`,
      (p: string) => `fs.copyFileSync('main.js', ${p})`,
      (p: string) => `fs.copyFileSync(${p}, 'copy.js')`,
    ];
    const lines = escapes.flatMap((p) => calls.map((call) => `console.log(code(() => ${call(JSON.stringify(p))}));`));
    const out = await probe(
      lines.join('\n') + `\nconsole.log(${JSON.stringify(escapes)}.map((p) => fs.existsSync(p)).join());`,
    );
    expect(out.slice(0, -1)).toEqual(lines.map(() => 'EACCES'));
    expect(out.at(-1)).toBe(escapes.map(() => 'false').join());
  });

  it('absolute paths are workspace paths, never host files', async () => {
    const out = await probe(
      "console.log(code(() => fs.readFileSync('/etc/passwd')), code(() => fs.readdirSync('/proc')), fs.readdirSync('/').join(), fs.realpathSync('/'));",
    );
    expect(out).toEqual(['ENOENT ENOENT main.js ~']);
  });

  it('NUL bytes, backslashes and drive letters are refused', async () => {
    const out = await probe(
      [
        "console.log(code(() => fs.readFileSync('main.js\\0.txt')), code(() => fs.writeFileSync('a\\0b', 'x')));",
        "console.log(code(() => fs.writeFileSync('a\\\\b', 'x')), code(() => fs.readFileSync('..\\\\x')), code(() => fs.mkdirSync('C:/x')));",
        "console.log(code(() => fs.readFileSync(42)), code(() => fs.readFileSync({ toString() { return 'main.js'; } })));",
      ].join('\n'),
    );
    expect(out).toEqual([
      'ERR_INVALID_ARG_VALUE ERR_INVALID_ARG_VALUE',
      'EINVAL EINVAL EINVAL',
      'ERR_INVALID_ARG_TYPE ERR_INVALID_ARG_TYPE',
    ]);
  });

  it('there are no links: no symlink functions, nothing is a link, archives with links are refused', async () => {
    const out = await probe(
      "console.log(typeof fs.symlinkSync, typeof fs.readlinkSync, typeof fs.linkSync, fs.lstatSync('main.js').isSymbolicLink(), typeof fs.openSync, typeof fs.createReadStream);",
    );
    expect(out).toEqual(['undefined undefined undefined false undefined undefined']);
    const zip = makeZip([{ name: 'link', data: '/etc/passwd', externalAttrs: unixMode(0o120777) }]);
    expect(thrownCode(() => ZipWorkspace.fromZip(zip))).toBe('ZIP_INVALID');
  });
});

describe('imports cannot leave the workspace or reach the host', () => {
  const specifiers = [
    '../escape.js',
    '../../../../etc/passwd',
    '/etc/passwd',
    'file:///etc/passwd',
    'node:child_process',
    'child_process',
    'node:vm',
    'module',
    'http://127.0.0.1/x.js',
    'data:text/javascript,export default 1',
    './.time/log.json',
    '.\\main.js',
  ];
  it('static and dynamic imports are refused with the specifier named', async () => {
    for (const spec of specifiers) {
      const stat = await workspace({ 'main.js': `import x from ${JSON.stringify(spec)};` }).exec('main.js');
      expect(stat.ok, spec).toBe(false);
      expect(stat.error?.message, spec).toContain(`'${spec}'`);
    }
    const out = await probe(
      `const results = [];\nfor (const s of ${JSON.stringify(specifiers)}) { results.push(await import(s).then(() => 'loaded', (e) => e.code)); }\nconsole.log(results.join());`,
    );
    expect(out[0]!.split(',').every((c) => c === 'ERR_IMPORT_REFUSED' || c === 'ERR_MODULE_NOT_FOUND')).toBe(true);
  });
});

describe('the history area is invisible', () => {
  it('exec code cannot list, read, write, rename into or import from .time', async () => {
    const ws = workspace({ 'note.txt': 'n' });
    ws.writeFile('note.txt', 'n2');
    const zipped = ZipWorkspace.fromZip(ws.toZip());
    const history = zipped.history(10);
    zipped.writeFile(
      'main.js',
      [
        "import fs from 'fs';",
        "const code = (f) => { try { f(); return 'ok'; } catch (e) { return e.code; } };",
        "console.log(fs.readdirSync('~').join(), fs.readdirSync('/', { recursive: true }).join(), fs.existsSync('.time'));",
        "console.log([() => fs.readdirSync('.time'), () => fs.readFileSync('.time/log.json'), () => fs.writeFileSync('.time/log.json', '[]'),",
        "  () => fs.rmSync('.time', { recursive: true }), () => fs.renameSync('note.txt', '.time/x'), () => fs.mkdirSync('~/.time/y', { recursive: true }),",
        "  () => fs.statSync('./.time'), () => fs.copyFileSync('.time/log.json', 'stolen.json')].map(code).join());",
      ].join('\n'),
    );
    const r = await zipped.exec('main.js');
    expect(r.error).toBeUndefined();
    expect(r.stdout).toBe(
      'main.js,note.txt main.js,note.txt false\nEACCES,EACCES,EACCES,EACCES,EACCES,EACCES,EACCES,EACCES\n',
    );
    expect(zipped.history(10).slice(1)).toEqual(history);
    const imp = await workspace({ 'main.js': "import log from './.time/log.json';" }).exec('main.js');
    expect(imp.error?.message).toMatch(/reserved for workspace history/);
  });
});

describe('quotas', () => {
  it('a huge file hits the default quota and nothing is written', async () => {
    const ws = workspace({
      'main.js': "import fs from 'fs';\nfs.writeFileSync('huge.bin', new Uint8Array(17 * 1024 * 1024));\n",
    });
    const before = ws.toZip();
    const r = await ws.exec('main.js');
    expect(r.ok).toBe(false);
    expect(r.error?.message).toMatch(/^EDQUOT: .*at most 16777216 bytes/);
    expect(Buffer.compare(ws.toZip(), before)).toBe(0);
  });

  it('many small appends add up', async () => {
    const ws = workspace({
      'main.js':
        "import fs from 'fs';\nconst chunk = 'x'.repeat(1024 * 1024);\nfor (let i = 0; i < 100; i++) fs.appendFileSync('grow.txt', chunk);\n",
    });
    const r = await ws.exec('main.js', { limits: { memoryBytes: 256 << 20 } });
    expect(r.ok).toBe(false);
    expect(r.error?.message).toMatch(/^EDQUOT/);
    expect(ws.exists('grow.txt')).toBe(false);
  });
});

describe('no host powers through the shims or process', () => {
  it('shim objects and their functions are frozen and cannot compile code', async () => {
    const out = await probe(
      [
        "import path from 'path';",
        "import os from 'os';",
        "import * as fsp from 'fs/promises';",
        "const bytes = fs.readFileSync('main.js');",
        'const proto = Object.getPrototypeOf(bytes);',
        'console.log([fs, path, os, fsp.default, fs.Stats.prototype, proto, process, process.stdout].every(Object.isFrozen));',
        "console.log(code(() => { fs.readFileSync = () => 'pwned'; }), code(() => { proto.toString = () => 'pwned'; }), code(() => { Object.prototype.polluted = 1; }));",
        "console.log([() => fs.readFileSync.constructor('return 1')(), () => fs.promises.readFile.constructor('return 1')(), () => path.join.constructor('return 1')()].map((f) => { try { f(); return 'ran'; } catch (e) { return e.name; } }).join());",
      ].join('\n'),
    );
    expect(out).toEqual(['true', 'undefined undefined undefined', 'EvalError,EvalError,EvalError']);
  });

  it('process is a sandbox object without host hooks', async () => {
    const out = await probe(
      "const names = ['binding', 'dlopen', 'mainModule', 'kill', 'abort', 'setuid', 'chdir'];\nconsole.log(names.map((n) => typeof process[n]).join(), code(() => process.chdir('/')), typeof require, typeof module, typeof globalThis.Buffer);",
    );
    expect(out).toEqual([
      'undefined,undefined,undefined,undefined,undefined,undefined,function ERR_UNSUPPORTED undefined undefined undefined',
    ]);
  });

  it('errors carry guest frames only, never host paths', async () => {
    const r = await workspace({ 'main.js': "import fs from 'fs';\nfs.readFileSync('missing.txt');\n" }).exec('main.js');
    expect(r.error?.message).toBe("ENOENT: no such file or directory, open '~/missing.txt'");
    expect(r.error?.stack).toBe('    at <anonymous> (~/main.js:2:4)');
    expect(JSON.stringify(r)).not.toMatch(/quickrealm:internal|\/work\/|node_modules|\.rs:/);
  });

  it('concurrent runs are isolated: each sees its own snapshot', async () => {
    const ws = workspace({
      'a.js':
        "import fs from 'fs';\nfs.writeFileSync('a.txt', 'a');\nconst end = Date.now() + 100; while (Date.now() < end) {}\nconsole.log(fs.existsSync('b.txt'));\n",
      'b.js':
        "import fs from 'fs';\nfs.writeFileSync('b.txt', 'b');\nconst end = Date.now() + 100; while (Date.now() < end) {}\nconsole.log(fs.existsSync('a.txt'));\n",
    });
    const [a, b] = await Promise.all([ws.exec('a.js'), ws.exec('b.js')]);
    expect([a.stdout, b.stdout]).toEqual(['false\n', 'false\n']);
    expect(ws.readText('a.txt') + ws.readText('b.txt')).toBe('ab');
    expectHealthy();
  });
});
