// The package as users get it: `npm run pack` makes the main and this platform's tarball the way
// the release flow does; each test installs them into a fresh project outside the repository and
// uses the installed copy (CommonJS, ESM, TypeScript under --strict with nodenext and bundler
// resolution), or leaves the platform package out and checks what the user is told.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = join(__dirname, '..', '..');
const PKG = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  version: string;
  optionalDependencies: Record<string, string>;
  napi: { targets: string[] };
};
const { describePlatform } = require(join(ROOT, 'lib', 'native', 'platform.js')) as {
  describePlatform(): { abi: string; packageName: string; addonFile: string };
};
const PLATFORM = describePlatform();
const { hostTriple } = require(join(ROOT, 'scripts', 'rust-host.js')) as { hostTriple(): string };
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

let work: string;
let tarballs: { main: string; platform: string };

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'quickrealm-install-'));
  const out = execFileSync(
    process.execPath,
    [join(ROOT, 'scripts', 'pack.js'), '--debug', '--out', join(work, 'dist')],
    {
      cwd: ROOT,
      encoding: 'utf8',
    },
  );
  tarballs = JSON.parse(out);
}, 300_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

/** A new, empty npm project. */
function project(dir: string): string {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true }));
  return dir;
}

function npmInstall(dir: string, args: string[], env: NodeJS.ProcessEnv = process.env) {
  return spawnSync(NPM, ['install', '--no-audit', '--no-fund', '--prefer-offline', ...args], {
    cwd: dir,
    encoding: 'utf8',
    env,
  });
}

function node(dir: string, file: string): string {
  return execFileSync(process.execPath, [file], { cwd: dir, encoding: 'utf8' });
}

/** Lists a tarball's paths. */
function entries(tarball: string): string[] {
  return execFileSync('tar', ['tzf', tarball], { encoding: 'utf8' }).trim().split('\n');
}

describe('the packed packages', () => {
  it('the main package pins every platform package at its own version and ships sources, not binaries', () => {
    const files = entries(tarballs.main);
    expect(files.some((f) => f.endsWith('.node'))).toBe(false);
    for (const f of ['package/Cargo.toml', 'package/Cargo.lock', 'package/src/lib.rs', 'package/scripts/install.js']) {
      expect(files).toContain(f);
    }
    expect(files.some((f) => f.startsWith('package/vendor/rquickjs-sys/quickjs/'))).toBe(true);
    expect(files).toContain('package/LICENSE');
    const abis = readdirSync(join(ROOT, 'npm'));
    expect(abis).toHaveLength(PKG.napi.targets.length);
    expect(Object.keys(PKG.optionalDependencies).sort()).toEqual(abis.map((a) => `quickrealm-${a}`).sort());
    for (const abi of abis) {
      const platformPkg = JSON.parse(readFileSync(join(ROOT, 'npm', abi, 'package.json'), 'utf8'));
      expect(platformPkg.name).toBe(`quickrealm-${abi}`);
      expect(platformPkg.version).toBe(PKG.version);
      expect(PKG.optionalDependencies[platformPkg.name]).toBe(PKG.version);
      expect(platformPkg.main).toBe(`quickrealm.${abi}.node`);
      expect(platformPkg.os).toHaveLength(1);
      expect(platformPkg.cpu).toHaveLength(1);
    }
  });

  it("this platform's package carries the addon where its package.json says", () => {
    expect(entries(tarballs.platform)).toContain(`package/${PLATFORM.addonFile}`);
  });
});

describe('installed into a fresh project', () => {
  let app: string;

  beforeAll(() => {
    app = project(join(work, 'app'));
    const r = npmInstall(app, [tarballs.main, tarballs.platform]);
    expect(r.status, r.stderr).toBe(0);
  }, 300_000);

  it('installs the platform package beside the main one, and no source build happened', () => {
    expect(existsSync(join(app, 'node_modules', PLATFORM.packageName, PLATFORM.addonFile))).toBe(true);
    const installed = join(app, 'node_modules', 'quickrealm');
    expect(readdirSync(join(installed, 'lib', 'native')).filter((f) => f.endsWith('.node'))).toEqual([]);
    expect(existsSync(join(installed, 'target'))).toBe(false);
  });

  it('works from CommonJS', () => {
    writeFileSync(
      join(app, 'main.cjs'),
      `const { runSync, ZipWorkspace } = require('quickrealm');
const r = runSync('return n * 2', { data: { n: 21 } });
const ws = new ZipWorkspace();
ws.writeFile('a.txt', 'hi');
const { workspaceTools } = require('quickrealm/tools');
const { createContext } = require('quickrealm/tree');
console.log(JSON.stringify([r.ok && r.value, ws.readText('a.txt'), require('quickrealm/package.json').version,
  workspaceTools(ws).tools.length > 0, typeof createContext]));`,
    );
    expect(JSON.parse(node(app, 'main.cjs'))).toEqual([42, 'hi', PKG.version, true, 'function']);
  });

  it('works from ESM', () => {
    writeFileSync(
      join(app, 'main.mjs'),
      `import { run } from 'quickrealm';
import quickrealm from 'quickrealm';
import { codeTool } from 'quickrealm/tools';
import { createContext } from 'quickrealm/tree';
const r = await run('return [1, 2, 3].map((x) => x * x)');
const tool = await codeTool().dispatch('run_js', { code: 'return 1 + 1' });
console.log(JSON.stringify([r.ok ? r.value : r.error.code, typeof quickrealm.runSync, tool.ok, typeof createContext]));`,
    );
    expect(JSON.parse(node(app, 'main.mjs'))).toEqual([[1, 4, 9], 'function', true, 'function']);
  });

  const SOURCE = `import { run, type RunResult } from 'quickrealm';
import { workspaceTools, type ToolResult } from 'quickrealm/tools';
import { ZipWorkspace } from 'quickrealm';
async function main(): Promise<void> {
  const listed: ToolResult = await workspaceTools(new ZipWorkspace()).dispatch('fs_list', { path: '~/' });
  if (!listed.ok) throw new Error(listed.content);
  const r: RunResult = await run('return 6 * 7');
  // The result is a discriminated union: narrowing on ok gives value or error.
  if (r.ok) console.log(JSON.stringify(r.value));
  else console.log(r.error.code, r.error.line);
  const bad = await run('throw new RangeError("no")');
  if (!bad.ok) console.log(bad.error.code);
}
void main();
`;

  for (const [resolution, options] of [
    ['nodenext', { module: 'NodeNext', moduleResolution: 'NodeNext' }],
    ['bundler', { module: 'ESNext', moduleResolution: 'Bundler' }],
  ] as const) {
    it(`type-checks under tsc --strict with moduleResolution ${resolution}, and the output runs`, () => {
      const dir = join(app, `ts-${resolution}`);
      mkdirSync(dir, { recursive: true });
      // ESM output either way: .mts under nodenext, "type": "module" beside the bundler build.
      const file = resolution === 'nodenext' ? 'main.mts' : 'main.ts';
      writeFileSync(join(dir, file), SOURCE);
      writeFileSync(
        join(dir, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            ...options,
            target: 'ES2022',
            strict: true,
            outDir: 'out',
            types: ['node'],
            typeRoots: [join(ROOT, 'node_modules', '@types')],
          },
          files: [file],
        }),
      );
      const tsc = spawnSync(process.execPath, [TSC, '-p', dir], { cwd: dir, encoding: 'utf8' });
      expect(tsc.stdout + tsc.stderr).toBe('');
      expect(tsc.status).toBe(0);
      if (resolution === 'bundler') writeFileSync(join(dir, 'out', 'package.json'), '{"type":"module"}');
      const output = node(dir, join('out', file.replace(/ts$/, 'js')));
      expect(output.trim().split('\n')).toEqual(['42', 'EVAL_ERROR']);
    });
  }

  it('a type error in user code is still reported (the types are real, not any)', () => {
    const dir = join(app, 'ts-wrong');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'main.mts'),
      `import { run } from 'quickrealm';\nconst r = await run('1');\nr.error.code;\n`,
    );
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          target: 'ES2022',
          strict: true,
          noEmit: true,
        },
        files: ['main.mts'],
      }),
    );
    const tsc = spawnSync(process.execPath, [TSC, '-p', dir], { cwd: dir, encoding: 'utf8' });
    expect(tsc.status).not.toBe(0);
    expect(tsc.stdout).toMatch(/error TS\d+.*error/);
  });
});

describe('without the platform package', () => {
  it('without Rust, the install stops and says what is missing and both remedies', () => {
    const dir = project(join(work, 'no-rust'));
    const path = (process.env.PATH ?? '')
      .split(delimiter)
      .filter((p) => p !== '' && !existsSync(join(p, 'cargo')))
      .concat(dirname(process.execPath))
      .join(delimiter);
    const r = npmInstall(dir, [tarballs.main], { ...process.env, PATH: path, CARGO: '' });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(`the prebuilt package ${PLATFORM.packageName} is not installed`);
    expect(r.stderr).toContain('the Rust toolchain was not found');
    expect(r.stderr).toContain('https://rustup.rs');
    expect(r.stderr).toContain(`npm rebuild quickrealm`);
    expect(r.stderr).not.toMatch(/cargo metadata|at Object\.<anonymous>/);
  }, 300_000);

  it('with install scripts off, the first require names the package and both remedies', () => {
    const dir = project(join(work, 'no-scripts'));
    expect(npmInstall(dir, ['--ignore-scripts', tarballs.main]).status).toBe(0);
    writeFileSync(
      join(dir, 'main.cjs'),
      `try { require('quickrealm'); console.log('loaded') } catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message })) }`,
    );
    const { code, message } = JSON.parse(node(dir, 'main.cjs'));
    expect(code).toBe('ADDON_NOT_FOUND');
    expect(message).toContain(`npm install ${PLATFORM.packageName}@${PKG.version}`);
    expect(message).toContain('https://rustup.rs');
    expect(message).toContain('npm rebuild quickrealm');
  }, 120_000);

  it('with Rust, the install builds the addon from the shipped sources and it works', () => {
    // A fixed folder and the repository's target directory: cargo reuses every compiled
    // dependency and rebuilds only the two crates whose path changed.
    const dir = project(join(tmpdir(), 'quickrealm-source-install'));
    const r = npmInstall(dir, ['--foreground-scripts', tarballs.main], {
      ...process.env,
      QUICKREALM_BUILD_PROFILE: 'dev',
      CARGO_BUILD_TARGET: hostTriple(),
      CARGO_TARGET_DIR: join(ROOT, 'target'),
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).toContain('building the native addon');
    expect(r.stdout + r.stderr).toContain('built from source and loads');
    const installed = join(dir, 'node_modules', 'quickrealm', 'lib', 'native', PLATFORM.addonFile);
    expect(existsSync(installed)).toBe(true);
    writeFileSync(join(dir, 'main.cjs'), `console.log(require('quickrealm').runSync('return 2 ** 10').value)`);
    expect(node(dir, 'main.cjs').trim()).toBe('1024');
    rmSync(dir, { recursive: true, force: true });
  }, 900_000);
});
