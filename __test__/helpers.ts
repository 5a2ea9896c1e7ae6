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
