import { describe, expect, it } from 'vitest';
import { run, runSync } from '../../lib/index.js';

// A typed array over a resizable ArrayBuffer is copied out as it is when the copy reaches it:
// a buffer grown or shrunk earlier (by a getter of the same result, or before returning) is
// neither truncated nor read past its end.
describe('typed arrays over resizable buffers in results', () => {
  const grow = (view: string) =>
    `const b = new ArrayBuffer(4, { maxByteLength: 16 }); const t = new ${view}; return { get first() { b.resize(16); new Uint8Array(b)[12] = 7; return 1 }, t }`;

  it('a length-tracking view grown by a getter earlier in the result keeps its new length', () => {
    const r = runSync(grow('Uint8Array(b)'));
    expect(r.ok).toBe(true);
    const t = (r.ok ? r.value : {}) as { t: Uint8Array };
    expect(t.t).toBeInstanceOf(Uint8Array);
    expect(t.t.length).toBe(16);
    expect(t.t[12]).toBe(7);
  });

  it('variants: an offset view, a wider element type, run() and the buffer itself', async () => {
    const offset = runSync(grow('Uint8Array(b, 2)'));
    expect(offset.ok && (offset.value as { t: Uint8Array }).t.length).toBe(14);
    const wide = runSync(grow('Uint32Array(b)'));
    expect(wide.ok && (wide.value as { t: Uint32Array }).t.length).toBe(4);
    const viaRun = await run(grow('Uint16Array(b)'));
    expect(viaRun.ok && (viaRun.value as { t: Uint16Array }).t.length).toBe(8);
    const buffer = runSync('const b = new ArrayBuffer(4, { maxByteLength: 16 }); b.resize(12); return b');
    expect(buffer.ok && (buffer.value as ArrayBuffer).byteLength).toBe(12);
  });

  it('a view resized before the return is read at its current length', () => {
    const r = runSync(
      'const b = new ArrayBuffer(8, { maxByteLength: 8 }); const t = new Int16Array(b); b.resize(4); t[1] = -2; return t',
    );
    expect(r.ok && Array.from(r.value as Int16Array)).toEqual([0, -2]);
  });

  it('a fixed-length view left out of bounds by a shrink is refused clearly', () => {
    const r = runSync(
      'const b = new ArrayBuffer(8, { maxByteLength: 8 }); const t = new Uint8Array(b, 0, 6); return { get first() { b.resize(2); return 1 }, t }',
    );
    expect(r.ok).toBe(false);
    expect(r.error?.message).toMatch(/out-of-bounds buffer at value\.t/);
    expect(runSync('return 1').ok).toBe(true);
  });
});
