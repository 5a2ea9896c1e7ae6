// The component API is reachable from both entries of the package, as the same objects.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(__dirname, '..', '..');

describe('component exports', () => {
  it('ES module named exports are the CommonJS objects', () => {
    const out = execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "import { StatefulComponent, ComponentGroup, StateType, Permission, compose } from 'quickrealm'; import { createRequire } from 'node:module'; const cjs = createRequire(import.meta.url)('quickrealm'); process.stdout.write(JSON.stringify([StatefulComponent === cjs.StatefulComponent, ComponentGroup === cjs.ComponentGroup, compose === cjs.compose, StateType.public, Permission.rw, Permission.READ_ONLY]));",
      ],
      { cwd: ROOT, encoding: 'utf8' },
    );
    expect(JSON.parse(out)).toEqual([true, true, true, 'public', 'rw', 'r']);
  });
});
