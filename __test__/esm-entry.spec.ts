// The package loads from ES modules too: `import { run } from 'quickrealm'` gives the same
// objects as `require('quickrealm')`.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(__dirname, '..');

describe('ES module entry', () => {
  it("named exports and the default export are the CommonJS entry's objects", () => {
    const dir = mkdtempSync(join(tmpdir(), 'quickrealm-esm-'));
    const file = join(dir, 'main.mjs');
    writeFileSync(
      file,
      `import { createRequire } from 'node:module';
       import quickrealm, { run, runSync, ZipWorkspace, workspaceTools, configure } from ${JSON.stringify(join(ROOT, 'lib', 'index.mjs'))};
       const cjs = createRequire(import.meta.url)(${JSON.stringify(join(ROOT, 'lib', 'index.js'))});
       const r = await run('return 6 * 7');
       process.stdout.write(JSON.stringify([r.value, runSync('return 1').value, quickrealm === cjs, run === cjs.run,
         ZipWorkspace === cjs.ZipWorkspace, typeof workspaceTools, typeof configure]));`,
    );
    const out = JSON.parse(execFileSync(process.execPath, [file], { encoding: 'utf8' }));
    expect(out).toEqual([42, 1, true, true, true, 'function', 'function']);
  });

  it("the package's exports map sends import to the ES entry and require to the CommonJS one", () => {
    const out = execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "import { run } from 'quickrealm'; import { createRequire } from 'node:module'; const require = createRequire(import.meta.url); process.stdout.write(String(run === require('quickrealm').run) + ' ' + import.meta.resolve('quickrealm'));",
      ],
      { cwd: ROOT, encoding: 'utf8' },
    );
    expect(out).toMatch(/^true file:.*\/lib\/index\.mjs$/);
  });
});
