// Real npm libraries run inside the realm: each library's browser (UMD) bundle is loaded from
// node_modules as a script, exercised, and the answer compared with the same calls made on the
// same library in Node.
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runSync, ZipWorkspace } from '../../lib/index.js';

const require = createRequire(__filename);

interface Library {
  /** The package, as Node requires it. */
  pkg: string;
  /** The UMD bundle, relative to node_modules (read as a file: packages need not export it). */
  bundle: string;
  /** The global the bundle defines. */
  name: string;
  /** A function body using `name`; it returns JSON-like data. */
  use: string;
}

const LIBRARIES: Record<string, Library> = {
  lodash: {
    pkg: 'lodash',
    bundle: 'lodash/lodash.min.js',
    name: '_',
    use: `return [_.chunk([1, 2, 3, 4, 5], 2), _.camelCase('Hello big world'), _.groupBy([1.2, 1.5, 2.1], Math.floor),
      _.uniqBy([{ id: 1 }, { id: 1 }, { id: 2 }], 'id'), _.merge({ a: { b: 1 } }, { a: { c: 2 } }), _.sortBy([{ n: 'b' }, { n: 'a' }], 'n')]`,
  },
  dayjs: {
    pkg: 'dayjs',
    bundle: 'dayjs/dayjs.min.js',
    name: 'dayjs',
    use: `return [dayjs('2024-01-15T10:00:00Z').add(1, 'day').toISOString(), dayjs('2024-03-01').diff(dayjs('2024-01-01'), 'day'),
      dayjs('2024-02-29').isValid(), dayjs('2024-01-31').add(1, 'month').format('YYYY-MM-DD')]`,
  },
  'decimal.js': {
    pkg: 'decimal.js',
    bundle: 'decimal.js/decimal.js',
    name: 'Decimal',
    use: `return [new Decimal('0.1').plus('0.2').toString(), Decimal.sqrt(2).toFixed(20), new Decimal(1).div(3).toSignificantDigits(5).toString()]`,
  },
  'big.js': {
    pkg: 'big.js',
    bundle: 'big.js/big.js',
    name: 'Big',
    use: `let e; try { new Big('not a number') } catch (x) { e = x.name } return [new Big('0.1').plus('0.2').toString(), new Big(2).pow(100).toFixed(), e]`,
  },
  'js-yaml': {
    pkg: 'js-yaml',
    bundle: 'js-yaml/dist/js-yaml.min.js',
    name: 'jsyaml',
    use: `let e; try { jsyaml.load('a: [') } catch (x) { e = [x.name, typeof x.message] }
      return [jsyaml.load('a: 1\\nb: [x, y]\\nc: { d: true }'), jsyaml.dump({ k: [1, 2], s: 'text' }), e]`,
  },
  zod: {
    // zod 3's UMD bundle, installed under an alias (the project's own zod is version 4).
    pkg: 'zod3-umd',
    bundle: 'zod3-umd/lib/index.umd.js',
    name: 'Zod',
    use: `const { z } = Zod; const User = z.object({ name: z.string().min(1), age: z.number().int().nonnegative(), tags: z.array(z.string()).default([]) });
      const bad = User.safeParse({ name: '', age: -1.5 }); let thrown; try { User.parse(null) } catch (x) { thrown = [x.name, x instanceof z.ZodError] }
      return [User.parse({ name: 'Ada', age: 36 }), bad.success, bad.error.issues.map((i) => [i.path.join('.'), i.code]), thrown]`,
  },
  papaparse: {
    pkg: 'papaparse',
    bundle: 'papaparse/papaparse.min.js',
    name: 'Papa',
    use: `return [Papa.parse('a,b\\n1,2\\n3,"x,y"', { header: true, dynamicTyping: true }).data, Papa.unparse([{ a: 1, b: 'q"r' }])]`,
  },
  marked: {
    pkg: 'marked',
    bundle: 'marked/marked.min.js',
    name: 'marked',
    use: `return [marked.parse('# Title\\n\\n- **bold** item\\n- [link](https://example.com)'), marked.parseInline('a *b* \`c\`')]`,
  },
  ramda: {
    pkg: 'ramda',
    bundle: 'ramda/dist/ramda.min.js',
    name: 'R',
    use: `return [R.pipe(R.map(R.inc), R.filter((x) => x % 2 === 0))([1, 2, 3, 4]), R.groupBy(R.prop('k'))([{ k: 'a' }, { k: 'b' }, { k: 'a' }]),
      R.assocPath(['a', 'b'], 1, {})]`,
  },
  handlebars: {
    pkg: 'handlebars',
    bundle: 'handlebars/dist/handlebars.min.js',
    name: 'Handlebars',
    // Templates are compiled by the host (compiling in the realm would generate code from
    // strings, which the realm refuses); the realm runs them with the library's runtime.
    use: `const t = Handlebars.template(${require('handlebars').precompile('Hello {{name}}! {{#each items}}<{{this}}>{{/each}} {{{raw}}}')});
      return [t({ name: '<Ada>', items: [1, 2], raw: '<b>' }), Handlebars.Utils.escapeExpression('<&>')]`,
  },
};

function inRealm(lib: Library): unknown {
  const bundle = readFileSync(join(__dirname, '..', '..', 'node_modules', lib.bundle), 'utf8');
  const r = runSync(`${bundle}\n;JSON.stringify((function () { ${lib.use}\n})())`, {
    mode: 'script',
    limits: { memoryBytes: 256 << 20, timeoutMs: 20_000 },
  });
  return r.ok ? JSON.parse(r.value as string) : `error: ${r.error?.name}: ${r.error?.message}`;
}

function inNode(lib: Library): unknown {
  const exported = require(lib.pkg);
  const value = lib.pkg === 'zod3-umd' ? { z: exported.z } : exported;
  return JSON.parse(JSON.stringify(new Function(lib.name, lib.use)(value)));
}

describe('npm libraries inside the realm answer as they do in Node', () => {
  for (const [name, lib] of Object.entries(LIBRARIES)) {
    it(name, () => {
      expect(inRealm(lib)).toEqual(inNode(lib));
    });
  }
});

const NODE_MODULES = join(__dirname, '..', '..', 'node_modules');

/** Copies a package and, recursively, its dependencies from node_modules into the workspace. */
function addPackage(ws: ZipWorkspace, name: string, seen = new Set<string>()): void {
  if (seen.has(name)) return;
  seen.add(name);
  const dir = join(NODE_MODULES, name);
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory() && e.name !== 'node_modules') walk(p);
      else if (e.isFile() && /\.(c?js|mjs|json)$/.test(e.name))
        ws.writeFile(join('node_modules', name, relative(dir, p)), readFileSync(p));
    }
  };
  walk(dir);
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  for (const dep of Object.keys(pkg.dependencies ?? {})) addPackage(ws, dep, seen);
}

const GRAPH_LIMITS = { limits: { memoryBytes: 512 << 20, timeoutMs: 60_000 } };

async function inWorkspace(lib: Library, esm: boolean): Promise<unknown> {
  const ws = new ZipWorkspace();
  addPackage(ws, lib.pkg);
  const bind = lib.pkg === 'zod3-umd' ? '{ z: lib.z }' : 'lib';
  const body = `const ${lib.name} = ${bind};\nconsole.log(JSON.stringify((function () { ${lib.use}\n})()));\n`;
  if (esm) {
    // zod's ES build exports `z` by name (its default export is `z` itself).
    const pick = lib.pkg === 'zod3-umd' ? 'ns' : "'default' in ns ? ns.default : ns";
    ws.writeFile('main.mjs', `import * as ns from '${lib.pkg}';\nconst lib = ${pick};\n${body}`);
  } else {
    ws.writeFile('main.cjs', `const lib = require('${lib.pkg}');\n${body}`);
  }
  const r = await ws.exec(esm ? 'main.mjs' : 'main.cjs', GRAPH_LIMITS);
  return r.ok ? JSON.parse(r.stdout) : `error: ${r.error?.name}: ${r.error?.message}`;
}

// The same libraries as files in a workspace, loaded through `require` (CommonJS) and `import`
// from node_modules folders, as a project on disk would load them.
describe('npm libraries as workspace module graphs answer as they do in Node', () => {
  for (const [name, lib] of Object.entries(LIBRARIES)) {
    it(`${name} through require`, async () => {
      expect(await inWorkspace(lib, false)).toEqual(inNode(lib));
    });
    it(`${name} through import`, async () => {
      expect(await inWorkspace(lib, true)).toEqual(inNode(lib));
    });
  }

  it('mathjs, whose CommonJS build spans hundreds of modules, evaluates as in Node', async () => {
    const use = `return [math.evaluate('sqrt(16) + 2^3'), math.format(math.fraction(1, 3)), math.det([[1, 2], [3, 4]]),
      math.evaluate('5 cm + 2 inch').toString(), math.round(math.e, 5), math.std([2, 4, 4, 4, 5, 5, 7, 9])]`;
    const lib: Library = { pkg: 'mathjs', bundle: '', name: 'math', use };
    const ws = new ZipWorkspace();
    addPackage(ws, 'mathjs');
    ws.writeFile(
      'main.js',
      `const math = require('mathjs');\nconsole.log(JSON.stringify((function () { ${use}\n})()));\n`,
    );
    const r = await ws.exec('main.js', GRAPH_LIMITS);
    expect(r.error).toBeUndefined();
    expect(JSON.parse(r.stdout)).toEqual(inNode(lib));
  });
});

describe('what the realm refuses in libraries, by design', () => {
  const load = (bundle: string, use: string) =>
    runSync(
      `${readFileSync(join(__dirname, '..', '..', 'node_modules', bundle), 'utf8')}\n;(function () { ${use}\n})()`,
      {
        mode: 'script',
        limits: { memoryBytes: 256 << 20, timeoutMs: 20_000 },
      },
    );

  it('compiling templates to code at run time (lodash.template, Handlebars.compile) is an EvalError', () => {
    expect(load('lodash/lodash.min.js', "return _.template('hi <%- who %>')({ who: 'x' })").error?.name).toBe(
      'EvalError',
    );
    expect(load('handlebars/dist/handlebars.min.js', "return Handlebars.compile('{{a}}')({ a: 1 })").error?.name).toBe(
      'EvalError',
    );
  });

  it("a bundle whose polyfills replace built-ins (mathjs's browser build patches Function.prototype.toString) fails", () => {
    const r = load('mathjs/lib/browser/math.js', 'return math.evaluate("1 + 1")');
    expect(r.error?.name).toBe('TypeError');
    expect(r.error?.message).toMatch(/'toString' is read-only/);
  });
});
