// A workspace module whose link fails part-way (an import with no matching export) stays unlinked;
// importing it again links it again. Each attempt must release what the one before took: a
// reference left behind made the engine abort when the run's runtime was freed, killing the host
// process. Each case runs in its own process, so an abort fails the test instead of the suite.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const lib = path.resolve(__dirname, '../../lib/index.js');

/** Runs `entry` of a workspace holding `files` with ws.exec in a fresh process. */
function execInChild(files: Record<string, string>, entry: string) {
  const script = `
    const { ZipWorkspace } = require(${JSON.stringify(lib)});
    const ws = new ZipWorkspace();
    for (const [p, c] of Object.entries(${JSON.stringify(files)})) ws.writeFile(p, c);
    ws.exec(${JSON.stringify(entry)}, { limits: { timeoutMs: 5000 } }).then((r) => {
      process.stdout.write(JSON.stringify({ ok: r.ok, stdout: r.stdout, error: r.error && r.error.message }));
    });`;
  const child = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 30_000 });
  return {
    status: child.status,
    signal: child.signal,
    stderr: child.stderr,
    result: JSON.parse(child.stdout || 'null'),
  };
}

/** An entry that imports `target` `times` times, printing how each attempt ended. */
function importer(target: string, times: number) {
  return `for (let i = 0; i < ${times}; i++) {
    const got = await import('${target}').then(() => 'loaded', (e) => e.name + ': ' + e.message);
    console.log(got);
  }`;
}

describe('a module imported again after its link failed', () => {
  it('the reproducer: a named import from fs, then a missing export, imported twice', () => {
    const run = execInChild(
      {
        'main.mts': importer('./bad.mjs', 2),
        'bad.mjs':
          "import { readFileSync } from 'fs';\nimport missing from './main.mts';\nexport const used = readFileSync;",
      },
      'main.mts',
    );
    expect(run.signal).toBeNull();
    expect(run.status).toBe(0);
    expect(run.result.ok).toBe(true);
    const lines = run.result.stdout.trim().split('\n');
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(line).toMatch(/^SyntaxError: /);
  });

  it('a named import from another workspace module, imported five times', () => {
    const run = execInChild(
      {
        'main.mjs': importer('./bad.mjs', 5),
        'bad.mjs': "import { kept } from './lib.mjs';\nimport { nope } from './lib.mjs';\nexport const x = kept;",
        'lib.mjs': 'export const kept = { big: new Array(1000).fill(1) };',
      },
      'main.mjs',
    );
    expect(run.signal).toBeNull();
    expect(run.status).toBe(0);
    expect(run.result.stdout.trim().split('\n')).toEqual(Array(5).fill(expect.stringMatching(/^SyntaxError: .*nope/)));
  });

  it('a namespace re-exported by name (export * as ns), imported three times', () => {
    const run = execInChild(
      {
        'main.mjs': importer('./bad.mjs', 3),
        'bad.mjs': "import { ns } from './hub.mjs';\nimport { absent } from './hub.mjs';\nexport const x = ns;",
        'hub.mjs': "export * as ns from './leaf.mjs';",
        'leaf.mjs': 'export const leaf = 1;',
      },
      'main.mjs',
    );
    expect(run.signal).toBeNull();
    expect(run.status).toBe(0);
    expect(run.result.stdout.trim().split('\n')).toHaveLength(3);
  });

  it('a re-export of a missing binding from a module that imports it back and has exports', () => {
    for (const exported of ['export const d = 1;', 'export function f() {}', 'export let a = 1, b = 2;']) {
      const run = execInChild(
        {
          'main.mjs': importer('./bad.mjs', 2),
          'bad.mjs': "export { default as dd } from './a/cycle.mjs';",
          'a/cycle.mjs': `import '../bad.mjs';\n${exported}`,
        },
        'main.mjs',
      );
      expect(run.signal, exported).toBeNull();
      expect(run.status, exported).toBe(0);
      expect(run.result.stdout.trim().split('\n'), exported).toEqual([
        expect.stringMatching(/^SyntaxError: /),
        expect.stringMatching(/^SyntaxError: /),
      ]);
    }
  });

  it('after the failed attempts the module graph still works: a good module imports fine', () => {
    const run = execInChild(
      {
        'main.mjs': `${importer('./bad.mjs', 2)}\nconst good = await import('./good.mjs');\nconsole.log(good.value);`,
        'bad.mjs': "import { value } from './good.mjs';\nimport { nothing } from './good.mjs';",
        'good.mjs': 'export const value = 42;',
      },
      'main.mjs',
    );
    expect(run.status).toBe(0);
    expect(run.result.stdout.trim().split('\n').at(-1)).toBe('42');
  });
});
