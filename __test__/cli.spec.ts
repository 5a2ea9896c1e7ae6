import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const CLI = join(__dirname, '..', 'bin', 'quickrealm.js');

function cli(args: string[], stdin: string) {
  const started = Date.now();
  const r = spawnSync(process.execPath, [CLI, ...args], { input: stdin, encoding: 'utf8', timeout: 20_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, ms: Date.now() - started };
}

const request = (o: unknown) => JSON.stringify(o);

describe('quickrealm run (JSON contract)', () => {
  it('echoes input through emit', () => {
    const r = cli(['run'], request({ source: 'emit(read_input())', input: 'hello', limits: { output_kb: 4 } }));
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('{"output":"hello"}\n');
    expect(r.stderr).toBe('');
  });

  it('truncates at output_kb, still prints the output, and fails with OUTPUT_LIMIT', () => {
    const r = cli(
      ['run'],
      request({ source: 'emit(read_input())', input: 'a'.repeat(1500), limits: { output_kb: 1 } }),
    );
    expect(r.status).not.toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ output: 'a'.repeat(1024) });
    const err = JSON.parse(r.stderr);
    expect(err).toEqual({ code: 'OUTPUT_LIMIT', message: 'output exceeded 1 KB' });
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('interrupts a loop at wall_ms with TIMEOUT and an empty stdout', () => {
    const r = cli(['run'], request({ source: 'for(;;) {}', input: '', limits: { wall_ms: 100 } }));
    expect(r.status).not.toBe(0);
    expect(r.stdout).toBe('');
    expect(JSON.parse(r.stderr)).toEqual({ code: 'TIMEOUT', message: 'execution exceeded 100 ms' });
    expect(r.ms).toBeLessThan(5000);
  });

  it('is deny-by-default: only emit and read_input exist', () => {
    const names = ['console', 'require', 'process', 'setTimeout', 'setInterval', 'fetch', 'module', 'Buffer'];
    const src = `emit(${JSON.stringify(names)}.map((n) => typeof globalThis[n]).join() + '|' + typeof emit + typeof read_input)`;
    const r = cli(['run'], request({ source: src, input: '', limits: {} }));
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout).output).toBe(names.map(() => 'undefined').join() + '|functionfunction');
  });

  it('reports guest errors as EVAL_ERROR with a location', () => {
    const r = cli(['run'], request({ source: 'emit("x");\nnull.y', input: '', limits: {} }));
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    const err = JSON.parse(r.stderr);
    expect(err.code).toBe('EVAL_ERROR');
    expect(err.message).toMatch(/^TypeError: .*\(line 2, column 1\)$/);
  });

  it('malformed stdin is INVALID_INPUT with exit code 2', () => {
    for (const stdin of [
      'not json',
      '[]',
      request({ source: 1, input: '', limits: {} }),
      request({ source: '', input: 5, limits: {} }),
      request({ source: '', input: '', limits: [] }),
      request({ source: '', input: '', limits: { wall_ms: -5 } }),
      request({ source: '', input: '', limits: {}, extra: 1 }),
    ]) {
      const r = cli(['run'], stdin);
      expect(r.status, stdin).toBe(2);
      expect(JSON.parse(r.stderr).code, stdin).toBe('INVALID_INPUT');
      expect(r.stdout).toBe('');
    }
  });

  it('input and limits are optional, with the documented defaults', () => {
    const r = cli(['run'], request({ source: 'emit("[" + read_input() + "]")' }));
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ output: '[]' });
    const slow = cli(['run'], request({ source: 'for (;;) {}' }));
    expect(JSON.parse(slow.stderr)).toEqual({ code: 'TIMEOUT', message: 'execution exceeded 1000 ms' });
    const big = cli(['run'], request({ source: 'emit("x".repeat(70000))' }));
    expect(JSON.parse(big.stdout).output).toHaveLength(64 * 1024);
  });

  it('--help and --version answer on stdout; unknown options are INVALID_INPUT', () => {
    const help = cli(['--help'], '');
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^usage: quickrealm run/);
    expect(help.stdout).toMatch(/--version/);
    expect(cli(['-h'], '').stdout).toBe(help.stdout);
    const version = cli(['--version'], '');
    expect(version.status).toBe(0);
    expect(version.stdout.trim()).toBe(require('../package.json').version);
    const bad = cli(['run', '--fast'], '');
    expect(bad.status).toBe(2);
    expect(JSON.parse(bad.stderr)).toMatchObject({ code: 'INVALID_INPUT' });
    expect(JSON.parse(bad.stderr).message).toMatch(/--fast/);
  });

  it('an unknown command is INVALID_INPUT', () => {
    const r = cli(['frobnicate'], '');
    expect(r.status).toBe(2);
    expect(JSON.parse(r.stderr).message).toMatch(/unknown command 'frobnicate'/);
  });
});
