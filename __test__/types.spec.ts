// `tsc` checks the hand-written declarations against the JavaScript (__test__/types/): a
// declaration that drifts from its implementation fails the type check, and so `npm test`.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = path.resolve(__dirname, '..');
const copy = mkdtempSync(path.join(tmpdir(), 'quickrealm-types-'));
afterAll(() => rmSync(copy, { recursive: true, force: true }));

cpSync(path.join(root, 'lib'), path.join(copy, 'lib'), {
  recursive: true,
  filter: (src) => !src.endsWith('.node'),
});
cpSync(path.join(root, '__test__/types'), path.join(copy, '__test__/types'), { recursive: true });
for (const file of ['tsconfig.json', 'tsconfig.declarations.json', 'package.json']) {
  cpSync(path.join(root, file), path.join(copy, file));
}
symlinkSync(path.join(root, 'node_modules'), path.join(copy, 'node_modules'), 'dir');

/** Runs the declaration check on the copy: its errors, or '' when it passes. */
function typeErrors(): string {
  try {
    execFileSync(
      process.execPath,
      [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.declarations.json'],
      {
        cwd: copy,
        encoding: 'utf8',
        stdio: 'pipe',
      },
    );
    return '';
  } catch (e) {
    return String((e as { stdout?: string }).stdout);
  }
}

/** Replaces `from` by `to` in a file of the copy. */
function edit(file: string, from: string, to: string): void {
  const full = path.join(copy, file);
  const text = readFileSync(full, 'utf8');
  expect(text).toContain(from);
  writeFileSync(full, text.replace(from, to));
}

describe('declarations checked against the JavaScript', () => {
  it('the declarations as shipped pass', () => {
    expect(typeErrors()).toBe('');
  }, 120_000);

  it('a declaration that drifts from its implementation fails', () => {
    edit(
      'lib/index.d.ts',
      'export function runSync(source: string, options?: RunOptions): RunResult;',
      'export function runSync(source: string, options?: RunOptions): RunResult & { extra: string };',
    );
    edit(
      'lib/session/index.d.ts',
      'export declare function describeTurn(turn: TurnResult): string;',
      'export declare function describeTurn(turn: TurnResult): number;',
    );
    const errors = typeErrors();
    expect(errors).toMatch(/__test__\/types\/declarations\.ts.*error TS2344/);
    // Each drift is reported at the line that checks that export, and nothing else fails.
    const checks = readFileSync(path.join(copy, '__test__/types/declarations.ts'), 'utf8').split('\n');
    const lineOf = (needle: string) => checks.findIndex((l) => l.includes(needle)) + 1;
    expect(errors).toContain(`declarations.ts(${lineOf('typeof run.runSync')},`);
    expect(errors).toContain(`declarations.ts(${lineOf('typeof sessionTools.describeTurn')},`);
    expect(errors.match(/error TS/g)).toHaveLength(2);
  }, 120_000);
});
