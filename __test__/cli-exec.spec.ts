import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ZipWorkspace } from '../lib/index.js';

const CLI = join(__dirname, '..', 'bin', 'quickrealm.js');

function cli(stdin: string) {
  const r = spawnSync(process.execPath, [CLI, 'exec'], { input: stdin, encoding: 'utf8', timeout: 20_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function zipOf(files: Record<string, string>): string {
  const ws = new ZipWorkspace();
  for (const [path, body] of Object.entries(files)) ws.writeFile(path, body);
  return ws.toZip().toString('base64');
}

const fromZip = (b64: string) => ZipWorkspace.fromZip(Buffer.from(b64, 'base64'));

describe('quickrealm exec (JSON contract)', () => {
  it('runs the entry and returns the updated workspace', () => {
    const zipBase64 = zipOf({
      'main.ts':
        "import fs from 'fs';\nimport { label } from './lib';\nfs.mkdirSync('out', { recursive: true });\nfs.writeFileSync('out/result.txt', `${label}:${process.argv[2]}:${process.env.MODE}`);\nconsole.log('wrote');\nconsole.error('note');\n",
      'lib.ts': "export const label: string = 'lib';\n",
    });
    const r = cli(
      JSON.stringify({ zipBase64, entryPath: '~/main.ts', argv: ['--x'], env: { MODE: 'cli' }, timeoutMs: 5000 }),
    );
    expect(r.status).toBe(0);
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout);
    expect(Object.keys(out)).toEqual(['ok', 'stdout', 'stderr', 'exitCode', 'zipBase64']);
    expect(out).toMatchObject({ ok: true, stdout: 'wrote\n', stderr: 'note\n', exitCode: 0 });
    const ws = fromZip(out.zipBase64);
    expect(ws.readText('out/result.txt')).toBe('lib:--x:cli');
    expect(ws.history(1)[0]!.op).toBe('exec ~/main.ts');
  });

  it('a failed run keeps the workspace and reports the exit code and error', () => {
    const zipBase64 = zipOf({ 'main.js': "import fs from 'fs';\nfs.writeFileSync('x.txt', 'x');\nprocess.exit(7);\n" });
    const r = cli(JSON.stringify({ zipBase64, entryPath: 'main.js' }));
    expect(r.status).toBe(1);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ ok: false, exitCode: 7, error: { name: 'ExitError' } });
    expect(fromZip(out.zipBase64).exists('x.txt')).toBe(false);
    expect(Buffer.from(out.zipBase64, 'base64').equals(Buffer.from(zipBase64, 'base64'))).toBe(true);
  });

  it('times out at timeoutMs', () => {
    const r = cli(
      JSON.stringify({ zipBase64: zipOf({ 'main.js': 'for (;;) {}' }), entryPath: 'main.js', timeoutMs: 100 }),
    );
    expect(r.status).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, exitCode: 1, error: { code: 'TIMEOUT' } });
  });

  it('malformed input is INVALID_INPUT on stderr with exit code 2', () => {
    const good = zipOf({ 'main.js': '' });
    const cases: [string, RegExp][] = [
      ['not json', /not valid JSON/],
      ['[]', /JSON object/],
      [JSON.stringify({ entryPath: 'main.js' }), /zipBase64/],
      [JSON.stringify({ zipBase64: '***', entryPath: 'main.js' }), /not valid base64/],
      [
        JSON.stringify({ zipBase64: Buffer.from('not a zip').toString('base64'), entryPath: 'main.js' }),
        /not a usable workspace archive: ZIP_INVALID/,
      ],
      [JSON.stringify({ zipBase64: good }), /entryPath/],
      [JSON.stringify({ zipBase64: good, entryPath: 'main.js', argv: [1] }), /argv/],
      [JSON.stringify({ zipBase64: good, entryPath: 'main.js', env: { A: 1 } }), /env\.A/],
      [JSON.stringify({ zipBase64: good, entryPath: 'main.js', timeoutMs: 0 }), /timeoutMs/],
      [JSON.stringify({ zipBase64: good, entryPath: 'main.js', extra: true }), /unknown request field 'extra'/],
      [JSON.stringify({ zipBase64: good, entryPath: 'missing.js' }), /does not exist/],
      [JSON.stringify({ zipBase64: good, entryPath: '../escape.js' }), /climbs above/],
    ];
    for (const [stdin, why] of cases) {
      const r = cli(stdin);
      expect(r.status, stdin).toBe(2);
      expect(r.stdout, stdin).toBe('');
      const err = JSON.parse(r.stderr);
      expect(err.code, stdin).toBe('INVALID_INPUT');
      expect(err.message, stdin).toMatch(why);
      expect(r.stderr.trim().split('\n'), stdin).toHaveLength(1);
    }
  });
});
