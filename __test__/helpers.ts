import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { runSync, type RunResult } from '../lib/index.js';

/** Asserts the realm still works after something hostile happened. */
export function expectHealthy(): void {
  const r = runSync('return [1, 2, 3].map((x) => x * 2).join()');
  if (!r.ok || r.value !== '2,4,6') throw new Error(`the next run failed: ${JSON.stringify(r)}`);
  if (({} as Record<string, unknown>).polluted !== undefined) throw new Error('host Object.prototype polluted');
}

export function errorCode(r: RunResult): string | undefined {
  return r.error?.code;
}

/** One call measured in a child process (see {@link measureInChild}). */
export interface ChildMeasurement {
  ms: number;
  /** Peak RSS growth during the call, in MiB. */
  grew: number;
  result: any;
}

/**
 * Runs `body` (an async function body that prepares the scenario and returns the call to
 * measure) in a child process started with --expose-gc, and reports the call's wall time and
 * how far its peak RSS rose above the collected heap before the call; a child that hangs past
 * `timeoutMs` is killed. `q` (quickrealm), `tools` (lib/tools), `editorTools` and `ws` (an empty
 * workspace) are in scope.
 */
export function measureInChild(body: string, timeoutMs = 60_000): ChildMeasurement {
  const mib = 2 ** 20;
  const lib = path.resolve(__dirname, '../lib');
  const script = `
    const q = require(${JSON.stringify(path.join(lib, 'index.js'))});
    const tools = require(${JSON.stringify(path.join(lib, 'tools/index.js'))});
    const { editorTools } = require(${JSON.stringify(path.join(lib, 'tools/dialects/index.js'))});
    (async () => {
      const ws = new q.ZipWorkspace();
      const act = await (async () => { ${body} })();
      global.gc();
      const rss0 = process.memoryUsage().rss;
      const t0 = performance.now();
      const result = await act();
      const ms = performance.now() - t0;
      const grew = (process.resourceUsage().maxRSS * 1024 - rss0) / ${mib};
      process.stdout.write(JSON.stringify({ ms, grew, result }));
    })().catch((e) => { process.stdout.write(JSON.stringify({ error: String((e && e.stack) || e) })); });`;
  const out = execFileSync(process.execPath, ['--expose-gc', '-e', script], {
    encoding: 'utf8',
    timeout: timeoutMs,
    maxBuffer: 64 * mib,
  });
  const parsed = JSON.parse(out);
  if (parsed.error) throw new Error(parsed.error);
  return parsed;
}
