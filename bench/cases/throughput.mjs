// Case 5: throughput of off-thread execution with 1 and 2 workers.

import { timeAsync, timeSync, NA } from '../lib/measure.mjs';
import { timingTable, fmtInt } from '../lib/format.mjs';
import { needQuickrealm, qrValue, needIvm } from '../lib/peers.mjs';

export const CONCURRENCY = 64;
const SRC = 'return 1+1';

export const title = 'Throughput (off-thread)';
export const about =
  `${CONCURRENCY} concurrent \`run('${SRC}')\` calls per round, rounds repeated for the time box; µs/op = wall time / ops. ` +
  'quickrealm worker count is set with `configure({ workers })`; the 1- and 2-worker rows also set `poolSize: 0`, so no ' +
  'background thread prepares realms and construction and teardown are counted on the workers; isolated-vm reference: a fresh context per op ' +
  '(`createContext` + `eval("1+1")`, async) spread over 1 or 2 isolates, each isolate running on its own thread.';

async function qrWorkers(workers) {
  const qr = needQuickrealm('run', 'configure');
  try {
    await qr.configure({ workers, poolSize: 0 });
  } catch (e) {
    throw new NA(`configure({ workers: ${workers}, poolSize: 0 }) threw: ${e.message}`);
  }
  try {
    const r = await qr.run(SRC);
    if (qrValue(r, 'run') !== 2) throw new NA('run("return 1+1") did not return 2');
    return { stats: await timeAsync(() => qr.run(SRC), CONCURRENCY) };
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
    { impl: 'isolated-vm async, 1 isolate', run: () => ivmIsolates(1) },
    { impl: 'isolated-vm async, 2 isolates', run: () => ivmIsolates(2) },
  ];
}

export function render(results) {
  return timingTable(results, {
    extra: { title: 'ops/s', value: (r) => fmtInt(1e6 / r.stats.median) },
  });
}
