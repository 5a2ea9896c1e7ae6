// The restore fuzz target as properties: snapshot bytes flipped, truncated, spliced and grown
// are refused with SNAPSHOT_TAMPERED before the engine's reader sees them; bytes from another
// format or build (authentic, re-signed here with the key) are SNAPSHOT_VERSION; and payloads
// altered and then re-signed, which do reach the reader, are read or refused with a clear code,
// in bounded time, never crashing the process. Functions are never called after such a read:
// bytecode is trusted once the MAC verifies (that is what the MAC is for).
import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createRepl, ErrorCode, restoreRepl } from '../../lib/index.js';
import { PARAMS } from './bounds.js';

const KEY = 'the property test key, 16+ bytes';
const MAC_BYTES = 32;
/** `QRST`, format, engine build, template fingerprint, payload length. */
const HEADER_BYTES = 4 + 1 + 16 + 16 + 4;

function snapshotOf(setup: string): Uint8Array {
  const repl = createRepl();
  const r = repl.evalSync(setup);
  if (!r.ok) throw new Error(r.error.message);
  return repl.snapshot({ key: KEY });
}

const SETUPS = [
  'const t = [1, "two", { a: [3n, new Date(0)], m: new Map([[1, new Set([2])]]) }, /re/g, new Uint8Array([1, 2, 3]), -0, Symbol("s")]; t.push(t)',
  'const t = (() => { let c = 0; class A { #p = 1; m() { return ++c + this.#p } } return [new A(), (x) => x + c, function* g() { yield c }, Object.freeze({ get g() { return 1 } })] })()',
  'let t = "x".repeat(300); const u = { [Symbol.for("k")]: [t, t] }; var v = new Float64Array(4)',
  // Objects built alike share a numbered shape in the state.
  'const t = []; for (let i = 0; i < 30; i++) t.push({ i, even: i % 2 === 0, s: "x" + i }); const m = new Map(t.map((o) => [o.s, o]))',
];
const snapshots = SETUPS.map(snapshotOf);

/** Re-signs a body (everything before the MAC) with the test key. */
function signed(body: Uint8Array): Uint8Array {
  const mac = createHmac('sha256', KEY).update(body).digest();
  return new Uint8Array(Buffer.concat([body, mac]));
}

function codeOfRestore(bytes: Uint8Array): string {
  try {
    const repl = restoreRepl(bytes, { key: KEY });
    const r = repl.evalSync('typeof t');
    return r.ok ? 'ok' : r.error.code;
  } catch (e) {
    return (e as { code?: string }).code ?? `threw ${String(e)}`;
  }
}

const mutation = fc.oneof(
  fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }),
  fc.record({ kind: fc.constant('set' as const), at: fc.nat(), value: fc.integer({ min: 0, max: 255 }) }),
  fc.record({ kind: fc.constant('cut' as const), at: fc.nat() }),
  fc.record({
    kind: fc.constant('splice' as const),
    at: fc.nat(),
    from: fc.nat(),
    length: fc.integer({ min: 1, max: 64 }),
    other: fc.nat(),
  }),
  fc.record({ kind: fc.constant('grow' as const), tail: fc.uint8Array({ minLength: 1, maxLength: 64 }) }),
);
type Mutation = typeof mutation extends fc.Arbitrary<infer T> ? T : never;

function mutate(bytes: Uint8Array, m: Mutation): Uint8Array {
  const out = Uint8Array.from(bytes);
  if (bytes.length === 0) return out;
  const at = 'at' in m ? m.at % bytes.length : 0;
  switch (m.kind) {
    case 'flip':
      out[at] ^= 1 << m.bit;
      return out;
    case 'set':
      out[at] = out[at] === m.value ? (m.value + 1) & 255 : m.value;
      return out;
    case 'cut':
      return out.subarray(0, at);
    case 'splice': {
      const other = snapshots[m.other % snapshots.length] as Uint8Array;
      const from = m.from % other.length;
      const piece = other.subarray(from, from + m.length);
      return new Uint8Array(Buffer.concat([out.subarray(0, at), piece, out.subarray(at + piece.length)]));
    }
    case 'grow':
      return new Uint8Array(Buffer.concat([out, m.tail]));
  }
}

function differs(a: Uint8Array, b: Uint8Array) {
  return a.length !== b.length || a.some((x, i) => x !== b[i]);
}

describe('restore, fuzzed', () => {
  it('refuses every altered snapshot with SNAPSHOT_TAMPERED before reading it', () => {
    fc.assert(
      fc.property(fc.nat(), fc.array(mutation, { minLength: 1, maxLength: 4 }), (which, mutations) => {
        const original = snapshots[which % snapshots.length] as Uint8Array;
        const bytes = mutations.reduce(mutate, original);
        fc.pre(differs(bytes, original));
        expect(codeOfRestore(bytes)).toBe(ErrorCode.SnapshotTampered);
      }),
      { ...PARAMS, numRuns: Math.max(PARAMS.numRuns ?? 0, 300) },
    );
  });

  it('refuses authentic bytes of another format, engine build or template with SNAPSHOT_VERSION', () => {
    const original = snapshots[0] as Uint8Array;
    const body = original.subarray(0, original.length - MAC_BYTES);
    // The format byte, a byte of the engine build and one of the template fingerprint.
    for (const at of [4, 5, 20, 21, 36]) {
      const altered = Uint8Array.from(body);
      altered[at] ^= 0x10;
      expect(codeOfRestore(signed(altered)), `byte ${at}`).toBe(ErrorCode.SnapshotVersion);
    }
  });

  it('reads altered payloads that verify, or refuses them with a clear code, in bounded time', () => {
    const allowed = new Set<string>([
      'ok',
      ErrorCode.SnapshotTampered,
      ErrorCode.StateTooLarge,
      ErrorCode.MemoryLimit,
      ErrorCode.Timeout,
      ErrorCode.EvalError,
    ]);
    fc.assert(
      fc.property(fc.nat(), fc.array(mutation, { minLength: 1, maxLength: 4 }), (which, mutations) => {
        const original = snapshots[which % snapshots.length] as Uint8Array;
        const payload = original.subarray(HEADER_BYTES, original.length - MAC_BYTES);
        const altered = mutations.reduce(mutate, payload);
        const header = Uint8Array.from(original.subarray(0, HEADER_BYTES));
        new DataView(header.buffer).setUint32(HEADER_BYTES - 4, altered.length, true);
        const started = performance.now();
        const code = codeOfRestore(signed(new Uint8Array(Buffer.concat([header, altered]))));
        expect(allowed.has(code), code).toBe(true);
        expect(performance.now() - started).toBeLessThan(10_000);
      }),
      { ...PARAMS, numRuns: Math.max(PARAMS.numRuns ?? 0, 300) },
    );
  });
});
