// TextEncoder/TextDecoder and crypto inside the realm, checked against Node's own
// implementations run on the same inputs in this process.
import { describe, expect, it } from 'vitest';
import { runSync } from '../../lib/index.js';

function inRealm(body: string): unknown {
  const r = runSync(body);
  if (!r.ok) return `error: ${r.error?.name}: ${r.error?.message}`;
  return r.value;
}

const TEXTS = [
  '',
  'plain ascii',
  'héllo wörld',
  '€ and 😀 and 𝄞',
  'a\u0000b',
  '\ud800 lone',
  'tail \udfff',
  'x'.repeat(3000),
];

describe('TextEncoder and TextDecoder behave as in Node', () => {
  for (const text of TEXTS) {
    const label = JSON.stringify(text.length > 20 ? `${text.slice(0, 20)}…` : text);
    it(`encode ${label}`, () => {
      const expected = Array.from(new TextEncoder().encode(text));
      expect(inRealm(`return Array.from(new TextEncoder().encode(${JSON.stringify(text)}))`)).toEqual(expected);
    });
    it(`round trip and encodeInto ${label}`, () => {
      const into = new Uint8Array(7);
      const expected = [
        new TextDecoder().decode(new TextEncoder().encode(text)),
        new TextEncoder().encodeInto(text, into),
        Array.from(into),
      ];
      expect(
        inRealm(`const t = ${JSON.stringify(text)}; const into = new Uint8Array(7);
          return [new TextDecoder().decode(new TextEncoder().encode(t)), new TextEncoder().encodeInto(t, into), Array.from(into)]`),
      ).toEqual(expected);
    });
  }

  const BYTES: number[][] = [
    [0xef, 0xbb, 0xbf, 0x61],
    [0x61, 0xff, 0x62],
    [0xe2, 0x82],
    [0xf0, 0x9f, 0x98, 0x80, 0xc3],
    [0xc0, 0xaf],
    [0xed, 0xa0, 0x80],
  ];
  for (const bytes of BYTES) {
    it(`decode [${bytes.map((b) => b.toString(16)).join(' ')}] (lenient, fatal, ignoreBOM)`, () => {
      const attempt = (f: () => string) => {
        try {
          return f();
        } catch (e) {
          return (e as Error).name;
        }
      };
      const u8 = new Uint8Array(bytes);
      const expected = [
        new TextDecoder().decode(u8),
        attempt(() => new TextDecoder('utf-8', { fatal: true }).decode(u8)),
        new TextDecoder('utf8', { ignoreBOM: true }).decode(u8),
      ];
      expect(
        inRealm(`const u8 = new Uint8Array(${JSON.stringify(bytes)});
          const attempt = (f) => { try { return f() } catch (e) { return e.name } };
          return [new TextDecoder().decode(u8), attempt(() => new TextDecoder('utf-8', { fatal: true }).decode(u8)),
                  new TextDecoder('utf8', { ignoreBOM: true }).decode(u8)]`),
      ).toEqual(expected);
    });
  }

  it('streaming decode joins a character split across calls', () => {
    const src = '€uro 😀!';
    const bytes = Array.from(new TextEncoder().encode(src));
    expect(
      inRealm(`const b = new Uint8Array(${JSON.stringify(bytes)}); const d = new TextDecoder(); let out = '';
        for (let i = 0; i < b.length; i++) out += d.decode(b.subarray(i, i + 1), { stream: true });
        return out + d.decode()`),
    ).toBe(src);
  });

  it('only UTF-8 labels are accepted', () => {
    expect(inRealm(`try { new TextDecoder('latin1'); return 'made' } catch (e) { return e.name }`)).toBe('RangeError');
    expect(inRealm(`return [new TextDecoder(' UTF-8 ').encoding, new TextEncoder().encoding]`)).toEqual([
      'utf-8',
      'utf-8',
    ]);
  });
});

describe('crypto', () => {
  it('randomUUID gives distinct version-4 UUIDs', () => {
    const r = inRealm(
      `const ids = Array.from({ length: 50 }, () => crypto.randomUUID()); return [new Set(ids).size, ids.every((u) => /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(u))]`,
    );
    expect(r).toEqual([50, true]);
  });

  it('getRandomValues fills integer arrays, refuses floats and more than 65536 bytes', () => {
    const r = inRealm(`
      const a = new Uint8Array(4096); const same = crypto.getRandomValues(a) === a;
      const counts = new Array(256).fill(0); for (const x of a) counts[x]++;
      const attempt = (f) => { try { f(); return 'filled' } catch (e) { return e.name } };
      return [same, Math.max(...counts) < 64, attempt(() => crypto.getRandomValues(new BigInt64Array(2))),
        attempt(() => crypto.getRandomValues(new Float32Array(2))), attempt(() => crypto.getRandomValues(new Uint8Array(65537))),
        attempt(() => crypto.getRandomValues([1, 2]))]`);
    expect(r).toEqual([true, true, 'filled', 'TypeMismatchError', 'QuotaExceededError', 'TypeMismatchError']);
  });

  it('the new globals are frozen like every intrinsic', () => {
    expect(
      inRealm(
        'return [TextEncoder, TextEncoder.prototype, TextDecoder.prototype, crypto, crypto.randomUUID].every(Object.isFrozen)',
      ),
    ).toBe(true);
  });
});
