// Runs must not leak: every reference a run takes on host values (its globals, the identity map,
// callbacks, the wake function) is released when it ends, however it ends. Each case runs
// thousands of runs in a child `node --expose-gc` (a clean heap, and full collections on demand)
// and asserts the V8 heap retained per run stays near zero. Before the membrane released its
// references, a live run kept its whole `globals` graph and one Map: about 525 bytes per run
// for a small context, megabytes with a large host array.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const FIXTURE = join(__dirname, 'fixtures', 'retained-heap.cjs');
const LIB = join(__dirname, '..', '..', 'lib');
/**
 * `gc()` on demand; V8's collector on the main thread only (concurrent sweeping still running at
 * a measurement shows up as ±100 KB), and no optimising tiers or bytecode flushing, whose code
 * comes and goes by hundreds of kilobytes: either would drown a slope of a few bytes per run.
 */
const NODE_FLAGS = [
  '--expose-gc',
  '--single-threaded',
  '--no-opt',
  '--no-maglev',
  '--no-sparkplug',
  '--no-flush-bytecode',
];
/** Generous: a leak of the smallest live run is ~500 bytes; measurement noise is a few. */
const MAX_BYTES_PER_RUN = 64;

async function retainedPerRun(runs: number, kinds: string[]): Promise<Record<string, number>> {
  const { stdout } = await run(process.execPath, [...NODE_FLAGS, FIXTURE, LIB, String(runs), ...kinds], {
    maxBuffer: 1 << 20,
  });
  return JSON.parse(stdout) as Record<string, number>;
}

function expectFlat(retained: Record<string, number>, kinds: string[]): void {
  expect(Object.keys(retained).sort()).toEqual([...kinds].sort());
  for (const kind of kinds) {
    expect(retained[kind], `${kind}: ${JSON.stringify(retained)}`).toBeLessThan(MAX_BYTES_PER_RUN);
  }
}

describe('the heap a run leaves behind stays flat', () => {
  it('over 3,000 live runs each: untouched globals, touched globals, run() awaiting a host promise', async () => {
    const kinds = ['live untouched', 'live touched', 'live async'];
    expectFlat(await retainedPerRun(3000, kinds), kinds);
  }, 240_000);

  it('over 1,000 live runs each that fail, are refused, stop or are abandoned by their driver', async () => {
    const kinds = [
      'live guest error',
      'live host error',
      'live refused',
      'live budget',
      'live abandoned',
      'live abandoned mid-slice',
    ];
    expectFlat(await retainedPerRun(1000, kinds), kinds);
  }, 240_000);

  it('over 3,000 plain runs, runs in a ZipWorkspace and createSandboxExecutor edits each', async () => {
    const kinds = ['plain', 'plain async', 'workspace', 'executor'];
    expectFlat(await retainedPerRun(3000, kinds), kinds);
  }, 240_000);
});
