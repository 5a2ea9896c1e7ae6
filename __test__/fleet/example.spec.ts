// examples/fleet.js end to end: its own cluster, two worker processes, a turn paused for approval,
// approved from another process and resumed on a worker, the audit trail read with SQL.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = path.join(__dirname, '..', '..');

describe('examples/fleet.js', () => {
  it('runs turns on two workers, resumes an approval decided by another process, prints the audit rows', async () => {
    const { stdout } = await run(process.execPath, [path.join(root, 'examples', 'fleet.js')], {
      cwd: root,
      timeout: 90_000,
    });
    const lines = stdout.trim().split('\n');
    const workers = /workers started: pids (\d+), (\d+)/.exec(stdout);
    expect(workers).not.toBeNull();
    const workerPids = [workers?.[1], workers?.[2]];
    // Every turn ran on one of the two workers.
    const ranOn = [...stdout.matchAll(/on worker (\d+)/g)].map((m) => m[1]);
    expect(ranOn.length).toBe(4);
    for (const pid of ranOn) expect(workerPids).toContain(pid);
    expect(stdout).toMatch(/support-grace turn 1 on worker \d+: done → \["T-103"\]/);
    expect(stdout).toMatch(/support-ada turn 2 on worker \d+: paused, payments\.refund \[\{"ticket":"T-101"\}\] waits/);
    const approved = /approved \S+ from process (\d+)/.exec(stdout);
    expect(approved).not.toBeNull();
    expect(workerPids).not.toContain(approved?.[1]);
    expect(stdout).toMatch(/support-ada resumed turn 2 on worker \d+: done → refunded 40 for T-101/);
    // The audit rows: the search, the request waiting for approval, then the refund that ran once.
    const audit = lines.filter((line) => /^ {2}#\d+ turn/.test(line));
    expect(audit).toHaveLength(3);
    expect(audit[0]).toMatch(/#1 turn 1 tickets\.search \["ada"\]/);
    expect(audit[1]).toMatch(/#2 turn 2 payments\.refund .*awaiting approval/);
    expect(audit[2]).toMatch(/#3 turn 2 payments\.refund .*"refunded":40.*"idempotencyKey":"support-ada:2:0"/);
    expect(stdout).toContain('hash chain: intact (3 entries)');
    expect(lines.at(-1)).toBe('workers stopped, cluster removed');
  }, 120_000);
});
