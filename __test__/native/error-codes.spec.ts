// One error vocabulary: every code any layer reports is a member of the generated ErrorCode,
// and the JavaScript layers name codes through its members, not string literals.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { ErrorCode } from '../../lib/native/load.js';

const lib = path.resolve(__dirname, '../../lib');
const codes = new Set<string>(Object.values(ErrorCode));

/**
 * Codes other libraries give their errors, which quickrealm only reads (Node's fs, signals), and
 * HTTP's own words (methods, X-Frame-Options).
 */
const FOREIGN = /^(E[A-Z]+|ERR_[A-Z_]+|SIG[A-Z]+|GET|HEAD|POST|PUT|DELETE|OPTIONS|DENY)$/;

/** Files that still spell codes as literals: the loader runs before the binding is loaded. */
const LITERALS_ALLOWED = new Set(['native/load.js']);

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sources(full);
    return e.name.endsWith('.js') && e.name !== 'binding.js' ? [full] : [];
  });
}

/** Code-shaped string literals (`'NOT_FOUND'`, `'IO'`) in a source file. */
function codeLiterals(file: string): string[] {
  return [...readFileSync(file, 'utf8').matchAll(/'([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[A-Z]{2,})'/g)]
    .map((m) => m[1])
    .filter((c) => !FOREIGN.test(c) && !['B', 'KB', 'MB', 'GB', 'TB', 'OK', 'JSON'].includes(c));
}

describe('ErrorCode', () => {
  it('maps member names to codes at run time, as the declaration says', () => {
    expect(ErrorCode.InvalidInput).toBe('INVALID_INPUT');
    expect(ErrorCode.NotADirectory).toBe('NOT_A_DIRECTORY');
    expect(ErrorCode.Io).toBe('IO');
    for (const [name, code] of Object.entries(ErrorCode)) {
      const member = code
        .split('_')
        .map((w) => w[0] + w.slice(1).toLowerCase())
        .join('');
      expect(name).toBe(member);
    }
    expectTypeOf(ErrorCode.Disposed).toEqualTypeOf<'DISPOSED'>();
  });

  it('holds the codes of every layer', () => {
    for (const code of ['EVAL_ERROR', 'ZIP_LIMIT', 'BUDGET_EXCEEDED', 'AUDIT_TAMPERED', 'DISPOSED', 'SESSION_STATE']) {
      expect(codes.has(code), code).toBe(true);
    }
  });

  it('every code-shaped literal in lib/ is a member', () => {
    const strays = sources(lib).flatMap((file) =>
      codeLiterals(file)
        .filter((c) => !codes.has(c))
        .map((c) => `${path.relative(lib, file)}: '${c}'`),
    );
    expect(strays).toEqual([]);
  });

  it('the JavaScript layers name codes by member, not by literal', () => {
    const literals = sources(lib)
      .filter((file) => !LITERALS_ALLOWED.has(path.relative(lib, file).split(path.sep).join('/')))
      .flatMap((file) => codeLiterals(file).map((c) => `${path.relative(lib, file)}: '${c}'`));
    expect(literals).toEqual([]);
  });
});
