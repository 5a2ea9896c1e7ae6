// Case 5: throughput of off-thread execution with 1 and 2 workers.

import { timeAsync, timeSync, NA } from '../lib/measure.mjs';
import { timingTable, fmtInt } from '../lib/format.mjs';
import { needQuickrealm, qrValue, needIvm } from '../lib/peers.mjs';

export const CONCURRENCY = 64;
const SRC = 'return 1+1';
// A snippet that computes for a while (about 0.1 ms): what more workers are for. The trivial
// one measures dispatch, which happens on the main thread whatever the number of workers.
const WORK = 'function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2) } return fib(16)';
const WORK_VALUE = 987;

export const title = 'Throughput (off-thread)';
export const about =
  `${CONCURRENCY} concurrent \`run('${SRC}')\` calls per round, rounds repeated for the time box; µs/op = wall time / ops. ` +
  `The "fib(16)" rows run \`${WORK}\` instead (about 0.1 ms of guest work per op), where the workers, not the dispatch on the ` +
  'main thread, do most of the work; the scaling line below the table compares 1 and 2 workers for both. ' +
  'quickrealm worker count is set with `configure({ workers })`; the 1- and 2-worker rows also set `poolSize: 0`, so no ' +
  'background thread prepares realms and construction and teardown are counted on the workers; isolated-vm reference: a fresh context per op ' +
  '(`createContext` + `eval("1+1")`, async) spread over 1 or 2 isolates, each isolate running on its own thread.';

async function qrWorkers(workers, src = SRC, expected = 2) {
  const qr = needQuickrealm('run', 'configure');
  try {
    await qr.configure({ workers, poolSize: 0 });
  } catch (e) {
    throw new NA(`configure({ workers: ${workers}, poolSize: 0 }) threw: ${e.message}`);
  }
  try {
    const r = await qr.run(src);
    if (qrValue(r, 'run') !== expected) throw new NA(`run() did not return ${expected}`);
    return { stats: await timeAsync(() => qr.run(src), CONCURRENCY) };
  } finally {
    await qr.configure({ poolSize: 2 });
  }
}

async function ivmIsolates(k) {
  const ivm = needIvm();
  const isos = Array.from({ length: k }, () => new ivm.Isolate({ memoryLimit: 256 }));
  let next = 0;
  const op = async () => {
    const iso = isos[next++ % k];
    const ctx = await iso.createContext();
    try {
      return await ctx.eval('1+1');
    } finally {
      ctx.release();
    }
  };
  try {
    if ((await op()) !== 2) throw new NA('isolated-vm eval did not return 2');
    return { stats: await timeAsync(op, CONCURRENCY) };
  } finally {
    for (const iso of isos) iso.dispose();
  }
}

export function rows() {
  return [
    {
      impl: 'quickrealm runSync (main thread, sequential)',
      run: async () => {
        const qr = needQuickrealm('runSync');
        if (qrValue(qr.runSync(SRC), 'runSync') !== 2) throw new NA('runSync did not return 2');
        return { stats: timeSync(() => qr.runSync(SRC).value) };
      },
    },
    {
      impl: 'quickrealm run(), default pool',
      run: async () => {
        const qr = needQuickrealm('run');
        if (qrValue(await qr.run(SRC), 'run') !== 2) throw new NA('run did not return 2');
        return { stats: await timeAsync(() => qr.run(SRC), CONCURRENCY) };
      },
    },
    { impl: 'quickrealm run(), workers = 1', run: () => qrWorkers(1) },
    { impl: 'quickrealm run(), workers = 2', run: () => qrWorkers(2) },
    {
      impl: 'quickrealm runSync, fib(16) (main thread, sequential)',
      run: async () => {
        const qr = needQuickrealm('runSync');
        if (qrValue(qr.runSync(WORK), 'runSync') !== WORK_VALUE) throw new NA('runSync did not return fib(16)');
        return { stats: timeSync(() => qr.runSync(WORK).value) };
      },
    },
    { impl: 'quickrealm run(), fib(16), workers = 1', run: () => qrWorkers(1, WORK, WORK_VALUE) },
    { impl: 'quickrealm run(), fib(16), workers = 2', run: () => qrWorkers(2, WORK, WORK_VALUE) },
    { impl: 'isolated-vm async, 1 isolate', run: () => ivmIsolates(1) },
    { impl: 'isolated-vm async, 2 isolates', run: () => ivmIsolates(2) },
  ];
}

export function render(results) {
  const table = timingTable(results, {
    extra: { title: 'ops/s', value: (r) => fmtInt(1e6 / r.stats.median) },
  });
  const median = (impl) => results.find((r) => r.impl === impl && r.stats)?.stats.median;
  const scaling = (one, two) => {
    const a = median(one);
    const b = median(two);
    return a && b ? `${(a / b).toFixed(2)}×` : 'n/a';
  };
  return (
    `${table}\n\nScaling from 1 to 2 workers (throughput with 2 ÷ throughput with 1): ` +
    `\`${SRC}\` ${scaling('quickrealm run(), workers = 1', 'quickrealm run(), workers = 2')}, ` +
    `fib(16) ${scaling('quickrealm run(), fib(16), workers = 1', 'quickrealm run(), fib(16), workers = 2')}.`
  );
}
