// QuickJS-ng's own C API test (vendor/rquickjs-sys/quickjs/api-test.c), built against our
// patched engine sources and run: a patch that breaks an embedder API the addon does not happen
// to use still fails here. Where a patch changes documented behaviour on purpose (patch 0011:
// error stacks begin with "Name: message"), that patch updates the test's expectations too.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ENGINE = join(__dirname, '..', 'vendor', 'rquickjs-sys', 'quickjs');
const SOURCES = ['api-test.c', 'quickjs.c', 'libregexp.c', 'libunicode.c', 'dtoa.c', 'quickjs-libc.c'];
const work = mkdtempSync(join(tmpdir(), 'quickrealm-api-test-'));

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("QuickJS-ng's C API test", () => {
  it('builds against the patched sources and passes', () => {
    const binary = join(work, 'api-test');
    const cc = process.env.CC || 'cc';
    const build = spawnSync(
      cc,
      [
        '-O0',
        '-w',
        '-D_GNU_SOURCE',
        `-I${ENGINE}`,
        ...SOURCES.map((f) => join(ENGINE, f)),
        '-o',
        binary,
        '-lm',
        '-lpthread',
        '-ldl',
      ],
      { encoding: 'utf8' },
    );
    expect(build.error, `${cc} is needed to build the engine (it builds the addon too)`).toBeUndefined();
    expect(build.status, build.stderr).toBe(0);
    const run = spawnSync(binary, [], { encoding: 'utf8', timeout: 60_000 });
    expect(run.stderr).toBe('');
    expect(run.signal).toBeNull();
    expect(run.status).toBe(0);
  }, 240_000);
});
