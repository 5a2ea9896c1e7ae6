// CommonJS inside a workspace: require, module.exports, the module cache, ES modules importing
// CommonJS ones, and packages in node_modules folders of the workspace.
import { describe, expect, it } from 'vitest';
import { runSync, ZipWorkspace } from '../../lib/index.js';

function workspace(files: Record<string, string>): ZipWorkspace {
  const ws = new ZipWorkspace();
  for (const [path, body] of Object.entries(files)) ws.writeFile(path, body);
  return ws;
}

async function stdoutOf(entry: string, files: Record<string, string>): Promise<string> {
  const r = await workspace(files).exec(entry);
  expect(r.error, r.stderr).toBeUndefined();
  return r.stdout;
}

describe('require', () => {
  it('loads .js, .cjs and .json files with exports, module.exports, __filename and __dirname', async () => {
    const out = await stdoutOf('main.cjs', {
      'lib/math.js': 'exports.add = (a, b) => a + b;\nmodule.exports.PI = 3.14;\n',
      'lib/util.cjs': [
        "const math = require('./math');",
        "const config = require('../config.json');",
        'module.exports = { twice: (x) => math.add(x, x), config, file: __filename, dir: __dirname, self: this === module.exports };',
      ].join('\n'),
      'config.json': '{ "retries": 3, "hosts": ["a", "b"] }',
      'main.cjs':
        "const u = require('./lib/util.cjs');\nconsole.log(JSON.stringify([u.twice(21), u.config, u.file, u.dir, u.self]));\n",
    });
    expect(JSON.parse(out)).toEqual([42, { retries: 3, hosts: ['a', 'b'] }, '~/lib/util.cjs', '~/lib', true]);
  });

  it('caches modules: a second require gives the same object and does not run the file again', async () => {
    const out = await stdoutOf('main.cjs', {
      'counter.js': 'globalThis.loads = (globalThis.loads || 0) + 1;\nmodule.exports = { n: 0 };\n',
      'main.cjs':
        "const a = require('./counter'); const b = require('./counter.js'); a.n++;\nconsole.log(a === b, b.n, globalThis.loads);\n",
    });
    expect(out).toBe('true 1 1\n');
  });

  it('cycles see the partial exports, as in Node', async () => {
    const out = await stdoutOf('main.cjs', {
      'a.js': "exports.done = false;\nconst b = require('./b');\nexports.bSawA = b.sawADone;\nexports.done = true;\n",
      'b.js': "const a = require('./a');\nexports.sawADone = a.done;\n",
      'main.cjs': "const a = require('./a');\nconsole.log(a.done, a.bSawA);\n",
    });
    expect(out).toBe('true false\n');
  });

  it('require.main is the entry module', async () => {
    const out = await stdoutOf('main.cjs', {
      'lib.js': 'module.exports = require.main === module;\n',
      'main.cjs':
        "const libIsMain = require('./lib');\nconsole.log(require.main === module, libIsMain, require.main.filename);\n",
    });
    expect(out).toBe('true false ~/main.cjs\n');
  });

  it('require.resolve names the file a specifier finds', async () => {
    const out = await stdoutOf('main.cjs', {
      'lib/index.js': 'module.exports = 1;\n',
      'main.cjs': "console.log(require.resolve('./lib'), require.resolve('fs'));\n",
    });
    expect(out).toBe('~/lib/index.js node:fs\n');
  });

  it('the fs, path and os shims are required with or without node:', async () => {
    const r = await workspace({
      'main.cjs': [
        "const fs = require('fs'); const path = require('node:path'); const os = require('os');",
        "fs.writeFileSync('out/report.txt', path.join('a', 'b') + ' ' + os.EOL.length, { flag: 'w' });",
      ].join('\n'),
    }).exec('main.cjs');
    expect(r.error).toBeDefined();
    const ws = workspace({
      'main.cjs': [
        "const fs = require('fs'); const path = require('node:path'); const os = require('os');",
        "fs.mkdirSync('out', { recursive: true }); fs.writeFileSync('out/report.txt', path.join('a', 'b') + ' ' + os.EOL.length);",
      ].join('\n'),
    });
    const ok = await ws.exec('main.cjs');
    expect(ok.error).toBeUndefined();
    expect(ws.readText('out/report.txt')).toBe('a/b 1');
  });

  it('an error inside a required file points at that file, line and column', async () => {
    const r = await workspace({
      'lib/parse.js':
        "function parse(s) {\n  if (!s) throw new TypeError('empty input');\n}\nmodule.exports = parse;\n",
      'main.cjs': "const parse = require('./lib/parse');\nparse('');\n",
    }).exec('main.cjs');
    expect(r.ok).toBe(false);
    expect(r.error).toMatchObject({
      name: 'TypeError',
      message: 'empty input',
      file: '~/lib/parse.js',
      line: 2,
      column: 21,
    });
    expect(r.error?.frame).toContain("throw new TypeError('empty input')");
  });

  it('a module that throws is not cached: requiring it again runs it again', async () => {
    const out = await stdoutOf('main.cjs', {
      'flaky.js':
        "globalThis.tries = (globalThis.tries || 0) + 1;\nif (globalThis.tries === 1) throw new Error('first time');\nmodule.exports = 'ok';\n",
      'main.cjs':
        "let first; try { require('./flaky') } catch (e) { first = e.message }\nconsole.log(first, require('./flaky'), globalThis.tries);\n",
    });
    expect(out).toBe('first time ok 2\n');
  });

  it('a missing file is MODULE_NOT_FOUND and lists what was tried', async () => {
    const out = await stdoutOf('main.cjs', {
      'main.cjs': "try { require('./nope') } catch (e) { console.log(e.code, e.message) }\n",
    });
    expect(out).toMatch(
      /^MODULE_NOT_FOUND Cannot find module '\.\/nope' required from ~\/main\.cjs \(looked for ~\/nope\.js, ~\/nope\.cjs, ~\/nope\.json/,
    );
  });

  it('requiring an ES module is ERR_REQUIRE_ESM', async () => {
    const out = await stdoutOf('main.cjs', {
      'esm.mjs': 'export const x = 1;\n',
      'esm-syntax.js': 'export default 2;\n',
      'main.cjs':
        "for (const f of ['./esm.mjs', './esm-syntax.js']) { try { require(f) } catch (e) { console.log(e.code) } }\n",
    });
    expect(out).toBe('ERR_REQUIRE_ESM\nERR_REQUIRE_ESM\n');
  });

  it("bad ids are TypeErrors like Node's", async () => {
    const out = await stdoutOf('main.cjs', {
      'main.cjs': "for (const id of [42, '', null]) { try { require(id) } catch (e) { console.log(e.name) } }\n",
    });
    expect(out).toBe('TypeError\nTypeError\nTypeError\n');
  });

  it('plain runs with a workspace get a require global in function mode', () => {
    const ws = workspace({ 'lib/math.js': 'exports.mul = (a, b) => a * b;\n' });
    const r = runSync("const { mul } = require('./lib/math'); return mul(6, 7)", { workspace: ws });
    expect(r.ok && r.value).toBe(42);
    expect(runSync('return typeof require').value).toBe('undefined');
  });
});

describe('ES modules and CommonJS together', () => {
  it('an ES module imports a CommonJS one: default is module.exports, its keys are named exports', async () => {
    const out = await stdoutOf('main.mjs', {
      'lib/shapes.js': "exports.area = (r) => Math.round(Math.PI * r * r);\nexports.unit = 'cm';\n",
      'lib/single.cjs': 'module.exports = function greet(n) { return `hi ${n}` };\n',
      'main.mjs': [
        "import shapes, { area, unit } from './lib/shapes.js';",
        "import greet from './lib/single.cjs';",
        "console.log(area(2), unit, shapes.unit, greet('ada'));",
      ].join('\n'),
    });
    expect(out).toBe('13 cm cm hi ada\n');
  });

  it('package.json "type" decides how .js files load', async () => {
    const files = {
      'esm/package.json': '{ "type": "module" }',
      'esm/lib.js': "export const kind = 'esm';\n",
      'cjs/package.json': '{ "type": "commonjs" }',
      // No require/exports words: only the package type makes this CommonJS.
      'cjs/lib.js': "this.kind = 'cjs';\n",
      'main.mjs':
        "import { kind } from './esm/lib.js';\nimport cjs from './cjs/lib.js';\nconsole.log(kind, cjs.kind);\n",
    };
    expect(await stdoutOf('main.mjs', files)).toBe('esm cjs\n');
  });

  it('a .js file without a package type is CommonJS only when it has no import or export', async () => {
    const out = await stdoutOf('main.mjs', {
      'detected.js': "module.exports = { via: 'module.exports' };\n",
      'esm.js': "export const via = 'export';\n",
      'main.mjs': "import d from './detected.js';\nimport { via } from './esm.js';\nconsole.log(d.via, via);\n",
    });
    expect(out).toBe('module.exports export\n');
  });
});

describe('packages in node_modules folders of the workspace', () => {
  const pkgFiles = {
    'node_modules/left-pad/package.json': '{ "name": "left-pad", "main": "lib/index.js" }',
    'node_modules/left-pad/lib/index.js': "module.exports = (s, n, c = ' ') => String(s).padStart(n, c);\n",
    'node_modules/@acme/dual/package.json': JSON.stringify({
      name: '@acme/dual',
      exports: { '.': { import: './index.mjs', require: './index.cjs' }, './extra': './extra.js' },
    }),
    'node_modules/@acme/dual/index.mjs': "export default 'import';\n",
    'node_modules/@acme/dual/index.cjs': "module.exports = 'require';\n",
    'node_modules/@acme/dual/extra.js': "module.exports = 'extra';\n",
  };

  it('require finds main, exports conditions and subpaths', async () => {
    const out = await stdoutOf('main.cjs', {
      ...pkgFiles,
      'main.cjs':
        "console.log(JSON.stringify(require('left-pad')(5, 3, '0')), require('@acme/dual'), require('@acme/dual/extra'));\n",
    });
    expect(out).toBe('"005" require extra\n');
  });

  it('import reads the import condition', async () => {
    const out = await stdoutOf('src/main.mjs', {
      ...pkgFiles,
      'src/main.mjs': "import dual from '@acme/dual';\nimport pad from 'left-pad';\nconsole.log(dual, pad('x', 3));\n",
    });
    expect(out).toBe('import   x\n');
  });

  it('a package that is not there is refused with a message that says so', async () => {
    const out = await stdoutOf('main.cjs', {
      'main.cjs':
        "try { require('express') } catch (e) { console.log(e.code, /no node_modules folder/.test(e.message)) }\n",
    });
    expect(out).toBe('ERR_IMPORT_REFUSED true\n');
  });
});
