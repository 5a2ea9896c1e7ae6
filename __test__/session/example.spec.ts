// examples/session-review.js runs the README's session loop end to end.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';

it('examples/session-review.js analyses, proposes, commits and resumes after an approval', () => {
  const out = execFileSync(process.execPath, [join(__dirname, '../../examples/session-review.js')], {
    encoding: 'utf8',
  });
  expect(out).toContain('turn 2: proposed');
  expect(out).toContain('-  return xs.reduce((a, b) => a + b, 0) / xs.length - 1;');
  expect(out).toMatch(/committed as history entry \d+/);
  expect(out).toContain('turn 3: needs-approval');
  expect(out).toContain('turn 3 resumed: ok');
  expect(out).toContain('status: completed | turns: 3 | notifications sent: 1');
  expect(out).toContain(
    'fixed code: "export function average(xs) {\\n  return xs.reduce((a, b) => a + b, 0) / xs.length;\\n}\\n"',
  );
  expect(out).toContain('chain verified: true');
});
