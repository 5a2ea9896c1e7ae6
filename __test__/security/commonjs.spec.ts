// `require` in a workspace reaches workspace files and the fs/path/os shims only: no way out of
// the workspace, into the history area, to Node's built-in modules, or past the module limits,
// and nothing a module graph does can crash or hang the host.
import { describe, expect, it } from 'vitest';
import { ZipWorkspace } from '../../lib/index.js';
import { expectHealthy } from '../helpers.js';

function workspace(files: Record<string, string>): ZipWorkspace {
  const ws = new ZipWorkspace();
  for (const [path, body] of Object.entries(files)) ws.writeFile(path, body);
  return ws;
}

/** Runs main.cjs, which prints one line per attempt: the error code, or 'LOADED'. */
async function attempts(ids: string[], files: Record<string, string> = {}): Promise<string[]> {
  const main = `for (const id of ${JSON.stringify(ids)}) { try { require(id); console.log('LOADED') } catch (e) { console.log(e.code ?? e.name) } }\n`;
  const r = await workspace({ ...files, 'main.cjs': main }).exec('main.cjs');
  expect(r.error, r.stderr).toBeUndefined();
  return r.stdout.trim().split('\n');
}

describe('require stays inside the workspace', () => {
  it('paths that leave the workspace are refused', async () => {
    const ids = [
      '../outside.js',
      '../../etc/passwd',
      './lib/../../x.js',
      '/etc/passwd',
      '~/main.cjs',
      'file:///etc/passwd',
      'C:/x.js',
      './a\\b.js',
    ];
    expect(await attempts(ids, { 'lib/x.js': '' })).toEqual(ids.map(() => 'ERR_IMPORT_REFUSED'));
  });

  it('the history area cannot be required, directly or through a package', async () => {
    const ws = workspace({ 'a.txt': 'one' });
    ws.writeFile('a.txt', 'two');
    const ids = ['./.time/log.json', './.time/pack-00000.bin', './.time'];
    const out = await attempts(ids, { 'node_modules/evil/package.json': '{ "main": "../../.time/log.json" }' });
    expect(out).toEqual(ids.map(() => 'ERR_IMPORT_REFUSED'));
    expect(
      await attempts(['evil'], { 'node_modules/evil/package.json': '{ "main": "../../.time/log.json" }' }),
    ).not.toEqual(['LOADED']);
  });

  it("Node's built-in modules are refused, with and without node:", async () => {
    const ids = [
      'child_process',
      'node:child_process',
      'process',
      'module',
      'vm',
      'node:vm',
      'worker_threads',
      'net',
      'http',
      'crypto',
      'util',
      'node:internal/x',
    ];
    expect(await attempts(ids)).toEqual(ids.map(() => 'ERR_IMPORT_REFUSED'));
  });

  it('a package subpath cannot climb out of its package', async () => {
    const files = {
      'node_modules/p/package.json': '{ "main": "index.js" }',
      'node_modules/p/index.js': 'module.exports = 1;',
      'secret.js': "module.exports = 'secret';",
    };
    const ids = ['p/../../secret.js', 'p/../p/../../secret', 'p/..', '@scope/../secret.js'];
    const out = await attempts(ids, files);
    expect(out.every((o) => o !== 'LOADED')).toBe(true);
  });

  it('a non-module file is refused', async () => {
    expect(await attempts(['./notes.txt', './image.png'], { 'notes.txt': 'x', 'image.png': 'x' })).toEqual([
      'ERR_IMPORT_REFUSED',
      'ERR_IMPORT_REFUSED',
    ]);
  });
});

describe('module graphs cannot exhaust the host', () => {
  it('a graph past the module limit stops with a clear error', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 2100; i++) files[`m/${i}.js`] = `module.exports = ${i};`;
    const main = 'let n = 0; for (let i = 0; i < 2100; i++) n += require(`./m/${i}.js`); console.log(n);';
    const r = await workspace({ ...files, 'main.cjs': main }).exec('main.cjs');
    expect(r.ok).toBe(false);
    expect(r.error?.message).toMatch(/at most 2000 modules/);
    await expectHealthy();
  });

  it('a chain of requires deeper than the stack is a RangeError, not a crash', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 1900; i++) files[`c/${i}.js`] = `module.exports = 1 + require('./${i + 1}.js');`;
    files['c/1900.js'] = 'module.exports = 0;';
    const r = await workspace({ ...files, 'main.cjs': "console.log(require('./c/0.js'))" }).exec('main.cjs', {
      limits: { stackBytes: 256 << 10 },
    });
    expect(r.ok).toBe(false);
    expect(r.error?.name).toBe('RangeError');
    expect(r.error?.message).toMatch(/Maximum call stack size exceeded/);
    await expectHealthy();
  });

  it('a module that loops forever is stopped by the deadline', async () => {
    const started = Date.now();
    const r = await workspace({ 'spin.js': 'for (;;) {}', 'main.mjs': "import './spin.js';" }).exec('main.mjs', {
      limits: { timeoutMs: 300 },
    });
    expect(r.error?.code).toBe('TIMEOUT');
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('a huge or malformed JSON file fails cleanly', async () => {
    const out = await attempts(['./bad.json', './deep.json'], {
      'bad.json': '{ "a": ',
      'deep.json': '['.repeat(100000),
    });
    expect(out[0]).toBe('SyntaxError');
    expect(out[1]).not.toBe('LOADED');
    await expectHealthy();
  });

  it("one run cannot see another run's module cache", async () => {
    const ws = workspace({
      'state.js': 'module.exports = { hits: 0 };',
      'main.cjs': "const s = require('./state'); s.hits++; console.log(s.hits);",
    });
    const first = await ws.exec('main.cjs');
    const second = await ws.exec('main.cjs');
    expect([first.stdout, second.stdout]).toEqual(['1\n', '1\n']);
  });
});
