import { describe, expect, it } from 'vitest';
import { runSync } from '../../lib/index.js';
import { expectHealthy } from '../helpers.js';

// TextEncoder/TextDecoder and crypto cross into native code: what they make counts against the
// run's memory, odd receivers and buffers are refused cleanly, and the host stays unaffected.
describe('web APIs under abuse', () => {
  it('encoded bytes count against the memory limit', () => {
    const r = runSync(
      "const s = 'x'.repeat(4 << 20); const keep = []; for (;;) keep.push(new TextEncoder().encode(s))",
      {
        limits: { memoryBytes: 64 << 20 },
      },
    );
    expect(r.error?.code).toBe('MEMORY_LIMIT');
    expectHealthy();
  });

  it('decoded strings count against the memory limit', () => {
    const r = runSync(
      'const b = new Uint8Array(4 << 20).fill(97); const keep = []; for (;;) keep.push(new TextDecoder().decode(b))',
      {
        limits: { memoryBytes: 64 << 20 },
      },
    );
    expect(r.error?.code).toBe('MEMORY_LIMIT');
  });

  it('detached buffers, odd receivers and non-buffers are TypeErrors', () => {
    const r = runSync(`
      const attempt = (f) => { try { f(); return 'ok' } catch (e) { return e.name } };
      const b = new ArrayBuffer(8); const view = new Uint8Array(b); b.transfer();
      return [
        attempt(() => new TextDecoder().decode(view)),
        attempt(() => TextDecoder.prototype.decode.call({}, new Uint8Array(1))),
        attempt(() => new TextDecoder().decode('text')),
        attempt(() => new TextEncoder().encodeInto('x', [])),
        attempt(() => crypto.getRandomValues(view)),
      ]`);
    expect(r.ok, JSON.stringify(r.error)).toBe(true);
    const results = r.ok ? (r.value as string[]) : [];
    expect(results.slice(0, 4)).toEqual(['TypeError', 'TypeError', 'TypeError', 'TypeError']);
    expect(results[4]).not.toBe('ok');
    expectHealthy();
  });

  it('a deadline stops a loop of encodes and decodes', () => {
    const started = performance.now();
    const r = runSync("const s = 'é'.repeat(1 << 20); for (;;) new TextDecoder().decode(new TextEncoder().encode(s))", {
      limits: { timeoutMs: 200 },
    });
    expect(r.error?.code).toBe('TIMEOUT');
    expect(performance.now() - started).toBeLessThan(1500);
  });
});
