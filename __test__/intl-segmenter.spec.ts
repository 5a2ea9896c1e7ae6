// Intl.Segmenter inside the realm (ICU4X's UAX #29 segmenters and dictionaries), checked against
// Node's own Intl.Segmenter (ICU4C) on the same text. Where the two libraries legitimately
// differ, the realm's expected output is ICU4X's documented behaviour, said case by case.
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { runSync } from '../lib/index.js';

type Granularity = 'grapheme' | 'word' | 'sentence';
interface Segment {
  segment: string;
  index: number;
  isWordLike?: boolean;
}

/** Segments of `text` in the realm, without the `input` field (checked separately). */
function inRealm(locale: string, granularity: Granularity, texts: string[]): Segment[][] {
  const r = runSync(
    `const seg = new Intl.Segmenter(${JSON.stringify(locale)}, { granularity: ${JSON.stringify(granularity)} });
     return texts.map((t) => Array.from(seg.segment(t), ({ input, ...rest }) => rest));`,
    { data: { texts } },
  );
  if (!r.ok) throw new Error(`${r.error?.name}: ${r.error?.message}`);
  return r.value as Segment[][];
}

function inNode(locale: string, granularity: Granularity, texts: string[]): Segment[][] {
  const seg = new Intl.Segmenter(locale, { granularity });
  return texts.map((t) => Array.from(seg.segment(t), ({ input: _, ...rest }) => rest));
}

function sameAsNode(locale: string, granularity: Granularity, texts: string[]): void {
  const got = inRealm(locale, granularity, texts);
  const expected = inNode(locale, granularity, texts);
  const differences = texts.flatMap((text, i) =>
    isDeepStrictEqual(got[i], expected[i]) ? [] : [{ text, realm: got[i], node: expected[i] }],
  );
  expect(differences).toEqual([]);
}

const value = (source: string) => {
  const r = runSync(source);
  if (!r.ok) throw new Error(`${r.error?.name}: ${r.error?.message}`);
  return r.value;
};

describe('Intl.Segmenter matches Node', () => {
  it('graphemes: emoji ZWJ sequences, flags, skin tones, combining marks, Hangul, Devanagari', () => {
    sameAsNode('en', 'grapheme', [
      '',
      'abc',
      '👨‍👩‍👧‍👦 family',
      '🇫🇷🇩🇪🇯🇵',
      '👍🏽👋🏿',
      'e\u0301 a\u0300\u0316 Z\u0351\u0352\u0353',
      '한국어 \u1100\u1161\u11A8',
      'नमस्ते क्षत्रिय',
      'a\r\nb',
      '🏳️‍🌈 ❤️‍🔥 🧑🏻‍💻',
    ]);
  });

  it('words: punctuation, numbers, contractions, URLs, word-likeness', () => {
    sameAsNode('en', 'word', [
      '',
      "Hello, world! It's 3.14 o'clock.",
      'The quick (“brown”) fox — jumps over 1,000 lazy dogs.',
      'e-mail me at foo.bar@example.com or visit https://example.com/a?b=c',
      'naïve café déjà-vu',
      '   spaces\tand\nlines  ',
      'Emoji 👍🏽 count as non-words 🇫🇷',
    ]);
    sameAsNode('de', 'word', ['Donaudampfschifffahrtsgesellschaft und Straße']);
    sameAsNode('ru', 'word', ['Привет, мир! Как дела?']);
  });

  it('words in Chinese, Japanese and Thai come from dictionaries', () => {
    sameAsNode('zh', 'word', ['我们今天去北京大学。', '中华人民共和国']);
    sameAsNode('ja', 'word', ['こんにちは世界']);
    sameAsNode('th', 'word', ['ทุกสองสัปดาห์', 'ภาษาไทย']);
  });

  it('sentences: terminators, closing punctuation, quotes, numbers', () => {
    sameAsNode('en', 'sentence', [
      '',
      'One. Two? Three!',
      'He said "Stop." Then he left.',
      'Pi is 3.14. Is it?! Yes…',
      'Line one\nLine two\n\nParagraph.',
      '(Quoted sentence.) Next one.',
    ]);
    sameAsNode('ja', 'sentence', ['今日は晴れ。明日は雨？たぶん！']);
  });
});

describe('Intl.Segmenter where ICU4X differs from ICU4C', () => {
  it('sentences after abbreviations: ICU4X applies UAX #29 without ICU4C’s abbreviation list', () => {
    // Node's ICU4C (with its CLDR "suppressions") keeps "Mr. Smith" together; ICU4X implements
    // UAX #29's rules, under which a period followed by a space and an uppercase letter ends a
    // sentence (SB11), so "Mr. " is a sentence of its own. A lowercase word after the period
    // keeps it going (SB8).
    const r = value(
      `return Array.from(new Intl.Segmenter('en', { granularity: 'sentence' }).segment('Mr. Smith came. He left at 5 p.m. yesterday.'), (s) => s.segment)`,
    );
    expect(r).toEqual(['Mr. ', 'Smith came. ', 'He left at 5 p.m. yesterday.']);
  });

  it('Japanese words: ICU4X’s dictionary splits kanji compounds and inflections its own way', () => {
    // Both split at script changes and along dictionary words, but the dictionaries differ:
    // the realm is checked against ICU4X's output, which keeps every character once, in order.
    const text = '東京都に住んでいます';
    const r = value(
      `return Array.from(new Intl.Segmenter('ja', { granularity: 'word' }).segment(${JSON.stringify(text)}), (s) => s.segment)`,
    ) as string[];
    expect(r.join('')).toBe(text);
    expect(r.length).toBeGreaterThan(1);
    expect(r[0]).toBe('東京');
  });
});

describe('Intl.Segmenter API (ECMA-402)', () => {
  it('segment data: segment, index, input, and isWordLike only for words', () => {
    expect(
      value(`const s = new Intl.Segmenter('en', { granularity: 'word' }).segment('Hi you');
             const g = new Intl.Segmenter().segment('ab');
             return [[...s], [...g]]`),
    ).toEqual([
      [
        { segment: 'Hi', index: 0, input: 'Hi you', isWordLike: true },
        { segment: ' ', index: 2, input: 'Hi you', isWordLike: false },
        { segment: 'you', index: 3, input: 'Hi you', isWordLike: true },
      ],
      [
        { segment: 'a', index: 0, input: 'ab' },
        { segment: 'b', index: 1, input: 'ab' },
      ],
    ]);
  });

  it('indices are UTF-16 code unit offsets', () => {
    expect(value(`return [...new Intl.Segmenter().segment('😀a👍🏽b')].map((s) => s.index)`)).toEqual([0, 2, 3, 7]);
  });

  it('containing(index) finds the segment around a code unit, undefined outside', () => {
    const source = `const s = new Intl.Segmenter('en', { granularity: 'word' }).segment('Hello big world');
      const at = (i) => { const d = s.containing(i); return d === undefined ? null : [d.segment, d.index, d.isWordLike] };
      return [at(0), at(4), at(5), at(7), at(14), at(15), at(-1), at(), at('6'), at(NaN), at(Infinity), at(2.9)]`;
    const expected = (() => {
      const s = new Intl.Segmenter('en', { granularity: 'word' }).segment('Hello big world');
      const at = (i?: unknown) => {
        const d = s.containing(i as number);
        return d === undefined ? null : [d.segment, d.index, d.isWordLike];
      };
      return [at(0), at(4), at(5), at(7), at(14), at(15), at(-1), at(), at('6'), at(Number.NaN), at(Infinity), at(2.9)];
    })();
    expect(value(source)).toEqual(expected);
  });

  it('a Segments object can be iterated again and its iterator is an Iterator', () => {
    expect(
      value(`const s = new Intl.Segmenter().segment('xyz');
             const it = s[Symbol.iterator]();
             return [[...s].length, [...s].length, Object.prototype.toString.call(it), typeof it.map,
               it.next().value.segment, Array.from(it, (d) => d.segment).join(''), JSON.stringify(it.next())]`),
    ).toEqual([3, 3, '[object Segmenter String Iterator]', 'function', 'x', 'yz', '{"done":true}']);
  });

  it('resolvedOptions, supportedLocalesOf, toStringTag and lengths', () => {
    expect(
      value(`const S = Intl.Segmenter;
             return [new S('fr-CA', { granularity: 'sentence' }).resolvedOptions(), new S().resolvedOptions(),
               S.supportedLocalesOf(['th', 'xx-Unknown', 'ja-JP']), Object.prototype.toString.call(new S()),
               S.length, S.prototype.segment.length, S.supportedLocalesOf.length]`),
    ).toEqual([
      { locale: 'fr-CA', granularity: 'sentence' },
      { locale: 'en-US', granularity: 'grapheme' },
      ['th', 'ja-JP'],
      '[object Intl.Segmenter]',
      0,
      1,
      1,
    ]);
  });

  it('refuses what ECMA-402 refuses', () => {
    expect(
      value(`const t = (f) => { try { f(); return 'ok' } catch (e) { return e.name } };
             const seg = new Intl.Segmenter();
             return [t(() => Intl.Segmenter()), t(() => new Intl.Segmenter('en', { granularity: 'line' })),
               t(() => new Intl.Segmenter('en', 5)), t(() => new Intl.Segmenter('not a tag!')),
               t(() => Intl.Segmenter.prototype.segment.call({}, 'x')),
               t(() => seg.segment('a').containing.call({}, 0)),
               t(() => seg.segment('a')[Symbol.iterator]().next.call({})),
               t(() => new Intl.Segmenter('en', null)), t(() => seg.segment(Symbol()))]`),
    ).toEqual([
      'TypeError',
      'RangeError',
      'TypeError',
      'RangeError',
      'TypeError',
      'TypeError',
      'TypeError',
      'TypeError',
      'TypeError',
    ]);
  });

  it('is frozen like every intrinsic, with its hidden prototypes', () => {
    expect(
      value(`const s = new Intl.Segmenter().segment('a');
             const segments = Object.getPrototypeOf(s);
             const iterator = Object.getPrototypeOf(s[Symbol.iterator]());
             return [Intl.Segmenter, Intl.Segmenter.prototype, Intl.Segmenter.prototype.segment, segments,
               segments.containing, segments[Symbol.iterator], iterator, iterator.next].map(Object.isFrozen)`),
    ).toEqual([true, true, true, true, true, true, true, true]);
    // Assigning a method on a Segments object shadows it (the override mistake is fixed for
    // frozen intrinsics), and nothing reaches the shared prototype.
    expect(
      value(`const s = new Intl.Segmenter().segment('ab');
             s.containing = () => 'own';
             return [s.containing(0), new Intl.Segmenter().segment('ab').containing(0).segment]`),
    ).toEqual(['own', 'a']);
  });

  it('exists in every run, and a change in one run is not seen by the next', () => {
    const first = runSync(
      `try { Intl.Segmenter.prototype.segment = null } catch {} return typeof Intl.Segmenter.prototype.segment`,
    );
    expect(first.value).toBe('function');
    expect(value(`return [...new Intl.Segmenter().segment('ok')].length`)).toBe(2);
  });

  it('works in a realm with a runtime of its own (deterministic), loading the implementation there', () => {
    const r = runSync(
      `return Array.from(new Intl.Segmenter('en', { granularity: 'word' }).segment('a b'), (s) => s.segment)`,
      {
        deterministic: true,
      },
    );
    expect(r.value).toEqual(['a', ' ', 'b']);
  });
});
