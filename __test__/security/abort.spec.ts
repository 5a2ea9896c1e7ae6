import { describe, expect, it } from 'vitest';
import { run, runSync } from '../../lib/index.js';

// An abort raised while a run is in progress stops it with CANCELLED, also when host code the
// run itself calls raises it, and the next run is unaffected.
describe('aborts raised during a run', () => {
  it('runSync: a host function aborts, then the guest spins', () => {
    const ac = new AbortController();
    const started = Date.now();
    const r = runSync('stop(); for (;;) {}', {
      signal: ac.signal,
      globals: { stop: () => ac.abort() },
      limits: { timeoutMs: 3000 },
    });
    expect(r.ok).toBe(false);
    expect(r.error?.code).toBe('CANCELLED');
    expect(Date.now() - started).toBeLessThan(1500);
    expect(runSync('return 1').ok).toBe(true);
  });

  it('runSync: a host callback aborts halfway through a loop of host calls', () => {
    const ac = new AbortController();
    let calls = 0;
    const r = runSync('for (let i = 0; i < 1e6; i++) tick(); return "finished"', {
      signal: ac.signal,
      globals: {
        tick: () => {
          calls += 1;
          if (calls === 10) ac.abort();
        },
      },
      limits: { timeoutMs: 3000 },
    });
    expect(r.error?.code).toBe('CANCELLED');
    expect(calls).toBeLessThan(1000);
  });

  it('runSync: the listener is removed afterwards (a later abort affects nothing)', () => {
    const ac = new AbortController();
    const first = runSync('return 1', { signal: ac.signal, globals: { x: 1 } });
    expect(first.ok).toBe(true);
    ac.abort();
    const second = runSync('return 2', { globals: { x: 1 } });
    expect(second.ok && second.value).toBe(2);
  });

  it('run(): a host function aborts during a live run', async () => {
    const ac = new AbortController();
    const r = await run('stop(); for (;;) {}', {
      signal: ac.signal,
      globals: { stop: () => ac.abort() },
      limits: { timeoutMs: 3000 },
    });
    expect(r.error?.code).toBe('CANCELLED');
  });
});
