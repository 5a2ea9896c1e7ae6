// Typed arrays and ArrayBuffers cross the membrane as copies of the same kind, both ways: a
// proxy over a host Uint8Array would cross into the host once per element, and a guest typed
// array reached the host as a plain object of indices.
import { describe, expect, it } from 'vitest';
import { run, runSync } from '../lib/index.js';

describe('bytes from the guest to the host', () => {
  it('every typed array kind arrives as that kind over a copy of its bytes', () => {
    const got: unknown[] = [];
    const r = runSync(
      `const u = new Uint8Array([1, 2, 3, 4]);
       take(u); take(u.subarray(1, 3)); take(new Int16Array([-2, 7])); take(new Float64Array([1.5]));
       take(new BigInt64Array([-5n])); take(new Uint8ClampedArray([300])); take(u.buffer.slice(2));
       take({ nested: [new Float32Array([0.5])] });
       u[0] = 99;`,
      { globals: { take: (x: unknown) => got.push(x) } },
    );
    expect(r.ok).toBe(true);
    expect(got[0]).toEqual(new Uint8Array([1, 2, 3, 4]));
    expect(got[1]).toEqual(new Uint8Array([2, 3]));
    expect((got[1] as Uint8Array).byteLength).toBe(2);
    expect(got[2]).toEqual(new Int16Array([-2, 7]));
    expect(got[3]).toEqual(new Float64Array([1.5]));
    expect(got[4]).toEqual(new BigInt64Array([-5n]));
    expect(got[5]).toEqual(new Uint8ClampedArray([255]));
    expect(got[6]).toBeInstanceOf(ArrayBuffer);
    expect([...new Uint8Array(got[6] as ArrayBuffer)]).toEqual([3, 4]);
    expect((got[7] as { nested: unknown[] }).nested[0]).toEqual(new Float32Array([0.5]));
    expect((got[0] as Uint8Array)[0]).toBe(1);
  });

  it('look-alikes are copied as objects, detached buffers are refused, and the host survives', () => {
    const got: unknown[] = [];
    const r = runSync(
      `take(Object.create(Uint8Array.prototype)); take(Object.create(ArrayBuffer.prototype));
       take(new Proxy(new Uint8Array(2), {})); take(new DataView(new ArrayBuffer(2)));
       const b = new ArrayBuffer(8); b.transfer();
       try { take(new Uint8Array(b)) } catch (e) { return e.name + ': ' + e.message }
       try { take(b) } catch (e) { return e.name + ': ' + e.message }
       return 'sent';`,
      { globals: { take: (x: unknown) => got.push(x) } },
    );
    expect(r.ok).toBe(true);
    expect(got.slice(0, 4).every((x) => !ArrayBuffer.isView(x) && !(x instanceof ArrayBuffer))).toBe(true);
    expect(r.ok && r.value).toMatch(/^TypeError: .*(detached|out-of-bounds)/);
  });
});

describe('bytes from the host to the guest', () => {
  it('arrive as guest copies: instanceof works, writes stay in the guest, Buffers become Uint8Arrays', async () => {
    const host = new Uint8Array([1, 2, 3]);
    const r = await run(
      `const a = bytes; a[0] = 42;
       const nested = get().inner;
       return [a instanceof Uint8Array, a[0], buf instanceof Uint8Array, new TextDecoder().decode(buf),
               ab instanceof ArrayBuffer, ab.byteLength, nested instanceof Float64Array, nested[1]]`,
      {
        globals: {
          bytes: host,
          buf: Buffer.from('héllo'),
          ab: new ArrayBuffer(5),
          get: () => ({ inner: new Float64Array([0, 2.5]) }),
        },
      },
    );
    expect(r.ok && r.value).toEqual([true, 42, true, 'héllo', true, 5, true, 2.5]);
    expect(host[0]).toBe(1);
  });

  it('a large array crosses in one copy, not one crossing per element', () => {
    const big = new Uint8Array(4 << 20).fill(7);
    const r = runSync('let s = 0; for (let i = 0; i < data.length; i += 4096) s += data[i]; return [s, data.length]', {
      globals: { data: big },
      limits: { timeoutMs: 2000 },
    });
    expect(r.ok && r.value).toEqual([7 * 1024, 4 << 20]);
    expect(r.stats.hostCalls).toBeLessThan(10);
  });

  it('a host array beyond the copy budget is refused with an error the guest can read', () => {
    const huge = new Uint8Array(80 << 20);
    const r = runSync('try { return get().length } catch (e) { return e.name }', {
      globals: { get: () => huge },
      limits: { memoryBytes: 256 << 20 },
    });
    expect(r.ok).toBe(true);
    expect(r.ok && r.value).toBe('TypeError');
  });
});
