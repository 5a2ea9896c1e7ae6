// Timing and memory helpers. All timings are wall-clock (performance.now).

export const cfg = {
  warmMs: 300, // warm-up time per row
  batches: 9, // measured batches per row
  batchMs: 200, // time box per batch
  minOps: 2, // at least this many ops per batch, whatever the time box
  memSeconds: 10, // time cap for each "sequential runs" memory row
  liveRealms: 200, // realms kept alive for "memory per live realm"
};

/** A row that cannot be measured: printed as `n/a (reason)`. */
export class NA extends Error {}

export const now = () => performance.now();

export function gcFull() {
  if (typeof globalThis.gc === 'function') {
    globalThis.gc();
    globalThis.gc();
  }
}

export const rss = () => process.memoryUsage.rss();

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export function summarize(perOp) {
  const med = median(perOp);
  const min = Math.min(...perOp);
  const max = Math.max(...perOp);
  return { median: med, min, max, spread: med > 0 ? (max - min) / (2 * med) : 0, batches: perOp };
}

/**
 * Time a synchronous op: warm up, then `cfg.batches` time-boxed batches.
 * Returns µs/op statistics over batches.
 */
export function timeSync(op, opts = {}) {
  const o = { ...cfg, ...opts };
  gcFull();
  let t0 = now();
  let n = 0;
  while (now() - t0 < o.warmMs || n < o.minOps) {
    op();
    n++;
  }
  const perOp = [];
  for (let b = 0; b < o.batches; b++) {
    let count = 0;
    const start = now();
    let end;
    do {
      op();
      count++;
      end = now();
    } while (end - start < o.batchMs || count < o.minOps);
    perOp.push(((end - start) * 1000) / count);
  }
  return summarize(perOp);
}

/**
 * Time an async op with `concurrency` ops in flight: each round starts
 * `concurrency` ops and awaits them all; a batch runs rounds until its time
 * box. µs/op = batch wall time / ops completed.
 */
export async function timeAsync(op, concurrency, opts = {}) {
  const o = { ...cfg, ...opts };
  const round = async () => {
    const ps = new Array(concurrency);
    for (let i = 0; i < concurrency; i++) ps[i] = op();
    await Promise.all(ps);
  };
  gcFull();
  let t0 = now();
  let n = 0;
  while (now() - t0 < o.warmMs || n < 1) {
    await round();
    n++;
  }
  const perOp = [];
  for (let b = 0; b < o.batches; b++) {
    let count = 0;
    const start = now();
    let end;
    do {
      await round();
      count += concurrency;
      end = now();
    } while (end - start < o.batchMs || count < o.minOps);
    perOp.push(((end - start) * 1000) / count);
  }
  return summarize(perOp);
}

/**
 * RSS growth over many sequential runs of `op`: warm up, GC, run up to
 * `target` ops (capped at `cfg.memSeconds`), GC, and compare RSS.
 */
export function rssGrowth(op, target, opts = {}) {
  const o = { ...cfg, ...opts };
  for (let i = 0; i < Math.min(1000, target / 10); i++) op();
  gcFull();
  const before = rss();
  const heapBefore = process.memoryUsage().heapUsed;
  const t0 = now();
  let runs = 0;
  const capMs = o.memSeconds * 1000;
  while (runs < target) {
    op();
    runs++;
    if ((runs & 127) === 0 && now() - t0 > capMs) break;
  }
  const elapsed = now() - t0;
  const peak = rss();
  gcFull();
  const after = rss();
  return {
    runs,
    target,
    elapsedMs: elapsed,
    usPerRun: (elapsed * 1000) / runs,
    growth: after - before,
    peakGrowth: peak - before,
    heapGrowth: process.memoryUsage().heapUsed - heapBefore,
  };
}

/**
 * Memory per live realm: create `n` realms with `make()` and keep them,
 * GC, divide the RSS delta by n, then free them with `free(realm)`.
 * `engine()` (optional) returns an engine-reported byte count sampled
 * before and after.
 */
export function liveRealms(make, free, n, engine) {
  for (let i = 0; i < 5; i++) free(make());
  gcFull();
  const before = rss();
  const eBefore = engine ? engine() : undefined;
  const held = [];
  for (let i = 0; i < n; i++) held.push(make());
  gcFull();
  const after = rss();
  const eAfter = engine ? engine() : undefined;
  for (const r of held) free(r);
  held.length = 0;
  gcFull();
  return {
    n,
    delta: after - before,
    perRealm: (after - before) / n,
    enginePerRealm: engine ? (eAfter - eBefore) / n : undefined,
  };
}
