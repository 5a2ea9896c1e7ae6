// Locale-aware String.prototype.toLocaleUpperCase/toLocaleLowerCase inside the realm (ICU4X's
// full case mapping), checked against Node's own (ICU4C) on the same strings and locales.
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { runSync } from '../lib/index.js';

const CORPUS = [
  '',
  'istanbul IRMAK Iı İi',
  'Diyarbakır DİYARBAKIR',
  'ß straße ŉ ǰ ﬀ ﬁ',
  'ΌΣΟΣ ΣΊΣΥΦΟΣ σας Σ',
  'άέήίόύώ ΐ ΰ Ἀθῆναι',
  'i\u0307 I\u0307 J\u0301 Į\u0301 ÌÍĨ',
  'Ǆǅǆ ǈ ǋ',
  'ǰ̌ 𐐨𐐩 𞤢',
  'և Երևան',
  'Hello, World! 123',
];
const LOCALES = [undefined, 'en', 'tr', 'az', 'lt', 'el', 'hy', 'de', 'tr-TR', ['tr', 'en'], ['en', 'tr']];

function inRealm(strings: string[], locales: unknown[]): unknown {
  const r = runSync(
    `return strings.map((s) => locales.map((l) => [s.toLocaleUpperCase(l ?? undefined), s.toLocaleLowerCase(l ?? undefined)]))`,
    { data: { strings, locales: locales.map((l) => l ?? null) } },
  );
  if (!r.ok) throw new Error(`${r.error?.name}: ${r.error?.message}`);
  return r.value;
}

function inNode(strings: string[], locales: unknown[]): unknown {
  return strings.map((s) =>
    locales.map((l) => [s.toLocaleUpperCase(l as string | undefined), s.toLocaleLowerCase(l as string | undefined)]),
  );
}

const value = (source: string) => {
  const r = runSync(source);
  if (!r.ok) throw new Error(`${r.error?.name}: ${r.error?.message}`);
  return r.value;
};

describe('toLocaleUpperCase/toLocaleLowerCase match Node', () => {
  it('on a corpus of special casings in every locale with rules of its own', () => {
    const got = inRealm(CORPUS, LOCALES) as unknown[][];
    const expected = inNode(CORPUS, LOCALES) as unknown[][];
    const differences = CORPUS.flatMap((s, i) =>
      LOCALES.flatMap((l, j) =>
        isDeepStrictEqual(got[i][j], expected[i][j]) ? [] : [{ s, locale: l, realm: got[i][j], node: expected[i][j] }],
      ),
    );
    expect(differences).toEqual([]);
  });

  it('the cases everyone knows', () => {
    expect(
      value(`return ['i'.toLocaleUpperCase('tr'), 'I'.toLocaleLowerCase('tr'), 'i'.toLocaleUpperCase('az'),
        'I'.toLocaleLowerCase('az'), 'i'.toLocaleUpperCase('en'), 'ß'.toLocaleUpperCase(), 'İ'.toLocaleLowerCase('en'),
        'i'.toLocaleUpperCase(['tr', 'en']), 'i'.toLocaleUpperCase('tr-u-co-search'), 'I\u0307'.toLocaleLowerCase('lt')]`),
    ).toEqual(['İ', 'ı', 'İ', 'ı', 'I', 'SS', 'i\u0307', 'İ', 'İ', 'i\u0307\u0307']);
  });
});

describe('toLocaleUpperCase/toLocaleLowerCase (ECMA-402)', () => {
  it('validates the locale argument: RangeError for a bad tag, TypeError for a bad element or null', () => {
    expect(
      value(`const t = (f) => { try { return f() } catch (e) { return e.name } };
             return [t(() => 'a'.toLocaleUpperCase('not a tag!')), t(() => 'a'.toLocaleLowerCase([''])),
               t(() => 'a'.toLocaleUpperCase([5])), t(() => 'a'.toLocaleUpperCase(['en', 'x_y'])),
               t(() => 'a'.toLocaleUpperCase([])), t(() => 'a'.toLocaleUpperCase(null))]`),
    ).toEqual(['RangeError', 'RangeError', 'TypeError', 'RangeError', 'A', 'TypeError']);
  });

  it('converts its receiver as String methods do, and refuses null and undefined', () => {
    expect(
      value(`const up = String.prototype.toLocaleUpperCase;
             const t = (f) => { try { return f() } catch (e) { return e.name } };
             return [up.call(12), up.call(true), up.call({ toString: () => 'ıi' }, 'tr'), t(() => up.call(null)),
               t(() => up.call(undefined)), t(() => up.call(Symbol())), up.length, String.prototype.toLocaleLowerCase.length]`),
    ).toEqual(['12', 'TRUE', 'Iİ', 'TypeError', 'TypeError', 'TypeError', 0, 0]);
  });

  it('keeps lone surrogates as they are', () => {
    expect(
      value(
        `const s = 'a\\uD800b\\uDC00ß'.toLocaleUpperCase(); return [s.length, s.charCodeAt(1), s.charCodeAt(3), s]`,
      ),
    ).toEqual([6, 0xd800, 0xdc00, 'A\uD800B\uDC00SS']);
  });

  it('are frozen built-ins', () => {
    expect(
      value(`return [Object.isFrozen(String.prototype.toLocaleUpperCase), Object.isFrozen(String.prototype.toLocaleLowerCase),
        Object.getOwnPropertyDescriptor(String.prototype, 'toLocaleUpperCase').writable]`),
    ).toEqual([true, true, false]);
  });

  it('long text is mapped in pieces with the same result (white space ends every context)', () => {
    expect(
      value(`const s = 'ΣΑΣ ıi '.repeat(20000); const u = s.toLocaleLowerCase('tr');
             return [u.length, u === 'σας ıi '.repeat(20000), s.toLocaleUpperCase('tr') === 'ΣΑΣ Iİ '.repeat(20000)]`),
    ).toEqual([140000, true, true]);
  });
});
