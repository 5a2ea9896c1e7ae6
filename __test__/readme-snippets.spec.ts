// Every TypeScript snippet of the README compiles under `tsc --strict` against the package's
// own types (imported as 'quickrealm', through the exports map) and, unless it needs a
// SharedTree agent, runs as written.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(__dirname, '..');
const DIR = join(ROOT, '.readme-snippets');

/** What the snippets assume the reader already has: declared for tsc, defined for the run. */
const AMBIENT = `declare const createContext: (tree: unknown) => object;
declare const model: unknown;
declare const view: unknown;
declare class SharedTreeSemanticAgent {
  constructor(model: unknown, view: unknown, options: { editor: (tree: unknown, code: string) => Promise<void> });
}
declare const bytes: Uint8Array;
declare const metrics: { record(message: unknown): void };
`;
const PRELUDE = `import { ZipWorkspace } from 'quickrealm';
globalThis.bytes = new ZipWorkspace().toZip();
globalThis.metrics = { record() {} };
`;
/** Snippets that need a tree-agent model and view: compiled, not run. */
const NEEDS_AGENT = /SharedTreeSemanticAgent/;
/** Snippets that call a model API or serve a client over stdio: compiled, not run. */
const NEEDS_MODEL_API = /new OpenAI\(|new Anthropic\(|generateText\(|StdioServerTransport\(/;

function snippets(): string[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  return [...readme.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1] as string);
}

describe('README snippets', () => {
  const found = snippets();

  it('there are snippets to check', () => {
    expect(found.length).toBeGreaterThanOrEqual(5);
  });

  it('all compile under tsc --strict and the runnable ones run', () => {
    rmSync(DIR, { recursive: true, force: true });
    mkdirSync(DIR, { recursive: true });
    writeFileSync(join(DIR, 'ambient.d.ts'), AMBIENT);
    writeFileSync(join(DIR, 'prelude.mjs'), PRELUDE);
    const files = found.map((code, i) => {
      const name = `snippet-${i + 1}.mts`;
      writeFileSync(join(DIR, name), `import './prelude.mjs';\n${code}\nexport {};\n`);
      return name;
    });
    writeFileSync(
      join(DIR, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          skipLibCheck: true,
          allowJs: false,
          types: ['node'],
          typeRoots: [join(ROOT, 'node_modules', '@types')],
          rootDir: '.',
          outDir: '.',
        },
        files: ['ambient.d.ts', ...files],
      }),
    );
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    let compileErrors = '';
    try {
      execFileSync(process.execPath, [tsc, '-p', join(DIR, 'tsconfig.json')], { encoding: 'utf8' });
    } catch (e) {
      compileErrors = String((e as { stdout?: string }).stdout ?? e);
    }
    expect(compileErrors).toBe('');
    found.forEach((code, i) => {
      if (NEEDS_AGENT.test(code) || NEEDS_MODEL_API.test(code)) return;
      const out = execFileSync(process.execPath, [join(DIR, `snippet-${i + 1}.mjs`)], { encoding: 'utf8', cwd: DIR });
      expect(typeof out).toBe('string');
    });
  });
});
