// Intl and the locale-aware built-in methods inside the realm, checked against Node's own Intl
// (full ICU) running the same expressions in this process. The realm formats with ICU4X and its
// CLDR data, which is newer than Node 20's: where the two print differently (listed in the
// README), the case is left out here rather than hard-coded.
import { isDeepStrictEqual } from 'node:util';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { runSync } from '../../lib/index.js';

/** Evaluates each expression in the realm; a throw becomes `threw <name>`. */
function inRealm(exprs: string[]): unknown[] {
  const r = runSync(
    `return [${exprs.map((e) => `() => (${e})`).join(',\n')}].map((f) => { try { return f() } catch (e) { return 'threw ' + e.name } })`,
  );
  if (!r.ok) throw new Error(`${r.error?.name}: ${r.error?.message}`);
  return r.value as unknown[];
}

/** The same expressions in Node (the test process's own Intl). */
function inNode(exprs: string[]): unknown[] {
  return exprs.map((e) => {
    try {
      return vm.runInThisContext(`(${e})`);
    } catch (err) {
      return `threw ${(err as Error).name}`;
    }
  });
}

function sameAsNode(exprs: string[]): void {
  const expected = inNode(exprs);
  // Every case must produce a value in Node: a typo would otherwise compare two errors.
  expect(expected.filter((v) => typeof v === 'string' && v.startsWith('threw '))).toEqual([]);
  const got = inRealm(exprs);
  const differences = exprs.flatMap((expr, i) =>
    isDeepStrictEqual(got[i], expected[i]) ? [] : [{ expr, realm: got[i], node: expected[i] }],
  );
  expect(differences).toEqual([]);
}

const LOCALES = [
  'en-US',
  'en-GB',
  'de-DE',
  'fr-FR',
  'es-ES',
  'it-IT',
  'nl-NL',
  'pl-PL',
  'ru-RU',
  'sv-SE',
  'tr-TR',
  'pt-BR',
  'ja-JP',
  'zh-CN',
  'ko-KR',
  'hi-IN',
  'ar-EG',
];
const except = (...skip: string[]) => LOCALES.filter((l) => !skip.includes(l));
const q = JSON.stringify;

const LOCAL_CURRENCY: Record<string, string> = {
  'en-US': 'USD',
  'en-GB': 'GBP',
  'de-DE': 'EUR',
  'fr-FR': 'EUR',
  'es-ES': 'EUR',
  'it-IT': 'EUR',
  'nl-NL': 'EUR',
  'pl-PL': 'PLN',
  'ru-RU': 'RUB',
  'sv-SE': 'SEK',
  'tr-TR': 'TRY',
  'pt-BR': 'BRL',
  'ja-JP': 'JPY',
  'zh-CN': 'CNY',
  'ko-KR': 'KRW',
  'hi-IN': 'INR',
  'ar-EG': 'EGP',
};

describe('Intl.NumberFormat and Number.prototype.toLocaleString', () => {
  const values = ['0', '1', '-1', '1234.5', '-9876543.21', '0.000123', '1234567.891', '0.5', '2.5', '-0', '1e21'];
  for (const l of LOCALES) {
    it(`decimal, digit options, grouping and sign in ${l}`, () => {
      sameAsNode([
        ...values.map((v) => `new Intl.NumberFormat(${q(l)}).format(${v})`),
        ...values.map((v) => `(${v}).toLocaleString(${q(l)})`),
        `new Intl.NumberFormat(${q(l)}, { minimumFractionDigits: 2, maximumFractionDigits: 4 }).format(3.14159)`,
        `new Intl.NumberFormat(${q(l)}, { maximumFractionDigits: 0 }).format(2.5)`,
        `new Intl.NumberFormat(${q(l)}, { maximumSignificantDigits: 3 }).format(123456.7)`,
        `new Intl.NumberFormat(${q(l)}, { minimumSignificantDigits: 5 }).format(1.5)`,
        `new Intl.NumberFormat(${q(l)}, { minimumIntegerDigits: 3 }).format(7.5)`,
        `new Intl.NumberFormat(${q(l)}, { useGrouping: false }).format(1234567.5)`,
        `new Intl.NumberFormat(${q(l)}, { useGrouping: 'min2' }).format(1234)`,
        `new Intl.NumberFormat(${q(l)}, { signDisplay: 'always' }).format(5)`,
        `new Intl.NumberFormat(${q(l)}, { signDisplay: 'exceptZero' }).format(0)`,
        `new Intl.NumberFormat(${q(l)}, { signDisplay: 'never' }).format(-5)`,
        `(12345678901234567890n).toLocaleString(${q(l)})`,
        `new Intl.NumberFormat(${q(l)}).format(-12345678901234567890n)`,
      ]);
    });

    it(`compact notation in ${l}`, () => {
      const numbers = ['999', '1234', '12345', '1234567', '1500000000', '-2500'];
      sameAsNode(
        ['short', 'long'].flatMap((d) =>
          numbers.map(
            (n) => `new Intl.NumberFormat(${q(l)}, { notation: 'compact', compactDisplay: '${d}' }).format(${n})`,
          ),
        ),
      );
    });

    it(`currency in ${l}`, () => {
      const c = LOCAL_CURRENCY[l];
      const cases = [
        `{ style: 'currency', currency: '${c}' }`,
        `{ style: 'currency', currency: 'USD', currencyDisplay: 'code' }`,
      ];
      if (!['ja-JP', 'zh-CN', 'tr-TR'].includes(l)) {
        cases.push(`{ style: 'currency', currency: 'EUR', currencyDisplay: 'name' }`);
      }
      sameAsNode(
        cases.flatMap((o) =>
          ['1234.5', '-3.456', '1', '0'].map((n) => `new Intl.NumberFormat(${q(l)}, ${o}).format(${n})`),
        ),
      );
    });

    it(`formatToParts in ${l}`, () => {
      const exprs = [
        `new Intl.NumberFormat(${q(l)}).formatToParts(-1234.5)`,
        `new Intl.NumberFormat(${q(l)}, { style: 'currency', currency: '${LOCAL_CURRENCY[l]}' }).formatToParts(-1234.5)`,
        `new Intl.NumberFormat(${q(l)}, { notation: 'compact' }).formatToParts(1234)`,
      ];
      if (l !== 'ar-EG') exprs.push(`new Intl.NumberFormat(${q(l)}, { style: 'percent' }).formatToParts(-0.5)`);
      sameAsNode(exprs);
    });
  }

  for (const l of except('ar-EG')) {
    it(`percent in ${l}`, () => {
      sameAsNode(
        ['0.256', '1', '-0.5', '12.345', '0.0001'].map(
          (n) => `new Intl.NumberFormat(${q(l)}, { style: 'percent' }).format(${n})`,
        ),
      );
    });
  }

  it('resolvedOptions are those Node reports', () => {
    const options = [
      '{}',
      "{ style: 'percent' }",
      "{ style: 'currency', currency: 'jpy' }",
      "{ style: 'currency', currency: 'EUR', currencyDisplay: 'name' }",
      '{ maximumSignificantDigits: 3 }',
      '{ minimumFractionDigits: 2 }',
      "{ notation: 'compact', compactDisplay: 'long' }",
      "{ useGrouping: false, signDisplay: 'always', minimumIntegerDigits: 4 }",
    ];
    sameAsNode(
      ['en-US', 'de-DE', 'ar-EG', 'hi-IN'].flatMap((l) =>
        options.map((o) => `new Intl.NumberFormat(${q(l)}, ${o}).resolvedOptions()`),
      ),
    );
  });

  it('bad options throw as ECMA-402 says', () => {
    sameAsNode([
      ...[
        "{ style: 'bogus' }",
        "{ style: 'currency' }",
        "{ style: 'currency', currency: 'US' }",
        "{ currencyDisplay: 'long' }",
        '{ minimumFractionDigits: 101 }',
        '{ minimumFractionDigits: 3, maximumFractionDigits: 1 }',
        '{ maximumSignificantDigits: 0 }',
        '{ minimumIntegerDigits: 22 }',
        "{ notation: 'tiny' }",
        "{ signDisplay: 'sometimes' }",
        "{ useGrouping: 'sometimes' }",
        "{ localeMatcher: 'closest' }",
      ].map(
        (o) =>
          `(() => { try { new Intl.NumberFormat('en', ${o}); return 'made' } catch (e) { return e.constructor.name } })()`,
      ),
      `(() => { try { Intl.NumberFormat('en', null); return 'made' } catch (e) { return e.constructor.name } })()`,
      `(() => { try { Number.prototype.toLocaleString.call('1'); return 'made' } catch (e) { return e.constructor.name } })()`,
      `(() => { try { Intl.NumberFormat.prototype.format; return 'made' } catch (e) { return e.constructor.name } })()`,
    ]);
  });

  it('format is a bound getter and the constructor works without new', () => {
    sameAsNode([
      `[1234.5, 0.25].map(new Intl.NumberFormat('de-DE').format)`,
      `Intl.NumberFormat('fr-FR').format(1234.5)`,
      `new Intl.NumberFormat('en').format === new Intl.NumberFormat('en').format`,
      `(() => { const f = new Intl.NumberFormat('en'); return f.format === f.format })()`,
      `new Intl.NumberFormat('en').format.length`,
      `new Intl.NumberFormat('en').format('1234.5')`,
      `Object.prototype.toString.call(new Intl.NumberFormat())`,
    ]);
  });
});

const D1 = 'new Date(Date.UTC(2024, 0, 5, 15, 4, 5))';
const D2 = 'new Date(Date.UTC(1999, 11, 31, 9, 30, 0))';
const D3 = 'new Date(Date.UTC(1970, 0, 1, 0, 0, 0, 123))';

describe('Intl.DateTimeFormat and Date.prototype.toLocale*String', () => {
  const dateStyles = except('hi-IN', 'ko-KR', 'pl-PL');
  const timeStyles = except('ar-EG', 'es-ES', 'fr-FR', 'ja-JP', 'ko-KR');
  for (const l of LOCALES) {
    it(`styles in ${l}`, () => {
      const exprs: string[] = [];
      for (const d of [D1, D2]) {
        for (const s of ['full', 'long', 'medium', 'short']) {
          if (dateStyles.includes(l))
            exprs.push(`new Intl.DateTimeFormat(${q(l)}, { dateStyle: '${s}', timeZone: 'UTC' }).format(${d})`);
          if (timeStyles.includes(l))
            exprs.push(`new Intl.DateTimeFormat(${q(l)}, { timeStyle: '${s}', timeZone: 'UTC' }).format(${d})`);
          if (dateStyles.includes(l) && timeStyles.includes(l)) {
            exprs.push(
              `new Intl.DateTimeFormat(${q(l)}, { dateStyle: '${s}', timeStyle: '${s}', timeZone: 'UTC' }).format(${d})`,
            );
          }
        }
      }
      if (exprs.length === 0) return;
      sameAsNode(exprs);
    });
  }

  const dateDefaults = except('de-DE', 'ja-JP', 'ko-KR', 'nl-NL', 'pl-PL', 'tr-TR');
  const timeDefaults = except('es-ES', 'ko-KR');
  for (const l of LOCALES) {
    it(`toLocaleString, toLocaleDateString, toLocaleTimeString in ${l}`, () => {
      const exprs: string[] = [];
      for (const d of [D1, D2, D3]) {
        if (dateDefaults.includes(l)) exprs.push(`${d}.toLocaleDateString(${q(l)}, { timeZone: 'UTC' })`);
        if (timeDefaults.includes(l)) exprs.push(`${d}.toLocaleTimeString(${q(l)}, { timeZone: 'UTC' })`);
        if (dateDefaults.includes(l) && timeDefaults.includes(l))
          exprs.push(`${d}.toLocaleString(${q(l)}, { timeZone: 'UTC' })`);
      }
      if (exprs.length === 0) return;
      sameAsNode(exprs);
    });
  }

  it('component options', () => {
    const cases: [string, string[]][] = [
      ["{ year: 'numeric', month: 'long', day: 'numeric' }", except('hi-IN')],
      ["{ weekday: 'long' }", LOCALES],
      ["{ month: 'long' }", LOCALES],
      ["{ year: 'numeric' }", LOCALES],
      ["{ year: 'numeric', month: 'long' }", LOCALES],
      ["{ month: 'short', day: 'numeric' }", LOCALES],
      ["{ hour: 'numeric', minute: '2-digit' }", except('ko-KR')],
      ["{ hour: '2-digit', minute: '2-digit', hour12: false }", LOCALES],
      ["{ hour: 'numeric', minute: 'numeric', second: 'numeric', hour12: false }", except('es-ES', 'ko-KR')],
      ["{ hour: 'numeric', hour12: true }", except('de-DE', 'tr-TR', 'ko-KR', 'it-IT')],
    ];
    sameAsNode(
      cases.flatMap(([o, locales]) =>
        locales.flatMap((l) =>
          [D1, D2].map((d) => `new Intl.DateTimeFormat(${q(l)}, { ...${o}, timeZone: 'UTC' }).format(${d})`),
        ),
      ),
    );
  });

  it('formatToParts', () => {
    const o = "{ year: 'numeric', month: 'long', day: 'numeric', hour: 'numeric', minute: 'numeric', timeZone: 'UTC' }";
    sameAsNode([
      ...except('hi-IN', 'ko-KR').map((l) => `new Intl.DateTimeFormat(${q(l)}, ${o}).formatToParts(${D1})`),
      `new Intl.DateTimeFormat('en-US', { dateStyle: 'full', timeStyle: 'long', timeZone: 'UTC' }).formatToParts(${D2})`,
    ]);
  });

  it('the default time zone is UTC and only UTC is accepted', () => {
    expect(
      inRealm([
        `new Intl.DateTimeFormat().resolvedOptions().timeZone`,
        `${D1}.toLocaleString('en-US')`,
        `new Intl.DateTimeFormat('en-US', { timeZone: 'etc/utc' }).resolvedOptions().timeZone`,
        `new Intl.DateTimeFormat('en-US', { timeZone: 'Europe/Paris' })`,
      ]),
    ).toEqual(['UTC', inNode([`${D1}.toLocaleString('en-US', { timeZone: 'UTC' })`])[0], 'UTC', 'threw RangeError']);
  });

  it('resolvedOptions', () => {
    sameAsNode([
      ...LOCALES.map(
        (l) =>
          `(({ locale, calendar, numberingSystem, timeZone }) => [locale, calendar, numberingSystem, timeZone])(new Intl.DateTimeFormat(${q(l)}, { timeZone: 'UTC' }).resolvedOptions())`,
      ),
      ...LOCALES.map(
        (l) =>
          `(({ hourCycle, hour12 }) => [hourCycle, hour12])(new Intl.DateTimeFormat(${q(l)}, { hour: 'numeric', timeZone: 'UTC' }).resolvedOptions())`,
      ),
      `new Intl.DateTimeFormat('en-US', { dateStyle: 'long', timeZone: 'UTC' }).resolvedOptions()`,
      `new Intl.DateTimeFormat('de-DE', { timeStyle: 'short', hour12: false, timeZone: 'UTC' }).resolvedOptions().hourCycle`,
    ]);
  });

  it('bad options and dates throw as ECMA-402 says', () => {
    const attempt = (e: string) => `(() => { try { ${e}; return 'made' } catch (e) { return e.constructor.name } })()`;
    sameAsNode([
      ...[
        "{ dateStyle: 'huge' }",
        "{ weekday: 'tiny' }",
        "{ month: 'numeric', dateStyle: 'short' }",
        "{ hourCycle: 'h25' }",
        '{ fractionalSecondDigits: 4 }',
        "{ timeZoneName: 'sometimes' }",
      ].map((o) => attempt(`new Intl.DateTimeFormat('en', ${o})`)),
      attempt(`new Intl.DateTimeFormat('en', { timeZone: 'UTC' }).format(NaN)`),
      attempt(`${D1}.toLocaleDateString('en', { timeStyle: 'short' })`),
      attempt(`${D1}.toLocaleTimeString('en', { dateStyle: 'short' })`),
      attempt(`Date.prototype.toLocaleString.call({})`),
      `new Date(NaN).toLocaleString()`,
    ]);
  });
});

describe('Intl.Collator and String.prototype.localeCompare', () => {
  const words = [
    'b',
    'a',
    'A',
    'ä',
    'z',
    'Z',
    '10',
    '9',
    'résumé',
    'resume',
    'Ähre',
    'ahre',
    'ch',
    'cz',
    'ñ',
    'n',
    'o',
    'å',
    'ø',
  ];
  for (const l of [...LOCALES, 'sv', 'es']) {
    it(`sorts as Node in ${l}`, () => {
      sameAsNode([
        `${q(words)}.sort(new Intl.Collator(${q(l)}).compare)`,
        `${q(words)}.sort((a, b) => a.localeCompare(b, ${q(l)}))`,
        `['a10', 'a9', 'a1', 'a100', 'A2'].sort(new Intl.Collator(${q(l)}, { numeric: true }).compare)`,
        ...['base', 'accent', 'case', 'variant'].map(
          (s) =>
            `[['a', 'A'], ['a', 'á'], ['a', 'b'], ['a', 'a']].map(([x, y]) => new Intl.Collator(${q(l)}, { sensitivity: '${s}' }).compare(x, y))`,
        ),
        `['a-b', 'ab', 'a b'].map((w) => new Intl.Collator(${q(l)}, { ignorePunctuation: true }).compare('ab', w))`,
        `['b', 'B', 'a', 'A'].sort(new Intl.Collator(${q(l)}, { caseFirst: 'upper' }).compare)`,
      ]);
    });
  }

  it('resolvedOptions, compare as a bound getter, bad options', () => {
    sameAsNode([
      `(({ locale, ...rest }) => rest)(new Intl.Collator('de-DE', { numeric: true, sensitivity: 'base' }).resolvedOptions())`,
      `new Intl.Collator('en').resolvedOptions()`,
      `(() => { const c = new Intl.Collator('en'); return [c.compare === c.compare, c.compare.length] })()`,
      `Intl.Collator('en').compare('a', 'b')`,
      `(() => { try { new Intl.Collator('en', { sensitivity: 'loose' }) } catch (e) { return e.constructor.name } })()`,
      `(() => { try { String.prototype.localeCompare.call(null, 'a') } catch (e) { return e.constructor.name } })()`,
      `'a'.localeCompare('b', 'en', { usage: 'search' })`,
      `[String.prototype.localeCompare.name, String.prototype.localeCompare.length, Number.prototype.toLocaleString.length, Date.prototype.toLocaleDateString.name]`,
    ]);
  });
});

describe('Intl.PluralRules', () => {
  const numbers = ['0', '1', '2', '3', '5', '11', '21', '22', '101', '1.5', '0.0', '-1'];
  for (const l of LOCALES) {
    it(`select in ${l}`, () => {
      const types = l === 'es-ES' ? ['cardinal'] : ['cardinal', 'ordinal'];
      sameAsNode([
        ...types.flatMap((t) => numbers.map((n) => `new Intl.PluralRules(${q(l)}, { type: '${t}' }).select(${n})`)),
        `new Intl.PluralRules(${q(l)}, { minimumFractionDigits: 1 }).select(1)`,
        ...types.map(
          (t) => `new Intl.PluralRules(${q(l)}, { type: '${t}' }).resolvedOptions().pluralCategories.sort()`,
        ),
      ]);
    });
  }

  it('resolvedOptions and bad options', () => {
    sameAsNode([
      `(({ pluralCategories, locale, ...rest }) => rest)(new Intl.PluralRules('ar-EG', { maximumSignificantDigits: 2 }).resolvedOptions())`,
      `(({ pluralCategories, locale, ...rest }) => rest)(new Intl.PluralRules('en-US', { type: 'ordinal' }).resolvedOptions())`,
      `(() => { try { new Intl.PluralRules('en', { type: 'dual' }) } catch (e) { return e.constructor.name } })()`,
      `(() => { try { Intl.PluralRules('en') } catch (e) { return e.constructor.name } })()`,
    ]);
  });
});

describe('Intl.RelativeTimeFormat', () => {
  const cases: [string, string][] = [
    ['-1', 'day'],
    ['1', 'day'],
    ['0', 'day'],
    ['2', 'hours'],
    ['-3', 'month'],
    ['1', 'year'],
    ['-1', 'week'],
    ['1.5', 'minute'],
    ['1', 'quarter'],
    ['-10', 'seconds'],
    ['1000', 'year'],
  ];
  for (const l of LOCALES) {
    it(`format in ${l}`, () => {
      sameAsNode(
        ['long', 'short', 'narrow'].flatMap((style) =>
          ['always', 'auto'].flatMap((numeric) =>
            cases
              .filter(([, unit]) => !(l === 'nl-NL' && style === 'narrow' && unit.startsWith('second')))
              .map(
                ([v, unit]) =>
                  `new Intl.RelativeTimeFormat(${q(l)}, { style: '${style}', numeric: '${numeric}' }).format(${v}, '${unit}')`,
              ),
          ),
        ),
      );
    });
  }

  it('resolvedOptions and bad arguments', () => {
    sameAsNode([
      `new Intl.RelativeTimeFormat('ar-EG', { style: 'short' }).resolvedOptions()`,
      `(() => { try { new Intl.RelativeTimeFormat('en').format(1, 'fortnight') } catch (e) { return e.constructor.name } })()`,
      `(() => { try { new Intl.RelativeTimeFormat('en').format(Infinity, 'day') } catch (e) { return e.constructor.name } })()`,
      `(() => { try { new Intl.RelativeTimeFormat('en', { numeric: 'never' }) } catch (e) { return e.constructor.name } })()`,
    ]);
  });
});

describe('Intl.ListFormat', () => {
  const lists = [[], ['a'], ['a', 'b'], ['apple', 'banana', 'cherry'], ['x', 'y', 'z', 'w']];
  for (const l of [...LOCALES, 'es']) {
    it(`format in ${l}`, () => {
      const exprs: string[] = [];
      for (const type of ['conjunction', 'disjunction', 'unit']) {
        for (const style of ['long', 'short', 'narrow']) {
          if (l === 'hi-IN' && style === 'long' && type !== 'disjunction') continue;
          for (const list of lists)
            exprs.push(`new Intl.ListFormat(${q(l)}, { type: '${type}', style: '${style}' }).format(${q(list)})`);
        }
      }
      exprs.push(`new Intl.ListFormat(${q(l)}, { type: 'disjunction' }).formatToParts(['a', 'b', 'c'])`);
      sameAsNode(exprs);
    });
  }

  it('Spanish changes y to e and o to u before the matching sounds', () => {
    sameAsNode([
      `new Intl.ListFormat('es').format(['agua', 'hielo'])`,
      `new Intl.ListFormat('es', { type: 'disjunction' }).format(['siete', 'ocho'])`,
    ]);
  });

  it('resolvedOptions and bad input', () => {
    sameAsNode([
      `new Intl.ListFormat('de', { style: 'short', type: 'unit' }).resolvedOptions()`,
      `new Intl.ListFormat('en').format(new Set(['a', 'b']))`,
      `(() => { try { new Intl.ListFormat('en').format(['a', 1]) } catch (e) { return e.constructor.name } })()`,
      `(() => { try { new Intl.ListFormat('en', { type: 'either' }) } catch (e) { return e.constructor.name } })()`,
    ]);
  });

  it('a long list is built within the realm memory limit', () => {
    const r = runSync(
      `const s = 'x'.repeat(1 << 20); return new Intl.ListFormat('en').format(Array(200).fill(s)).length`,
      {
        limits: { memoryBytes: 64 << 20 },
      },
    );
    expect(r.ok).toBe(false);
    expect(r.error?.code).toBe('MEMORY_LIMIT');
  });
});

describe('locales', () => {
  it('getCanonicalLocales and supportedLocalesOf', () => {
    sameAsNode([
      `Intl.getCanonicalLocales(['EN-us', 'de-de', 'en-US', 'zh-hant-tw'])`,
      `Intl.getCanonicalLocales('iw')`,
      `Intl.getCanonicalLocales()`,
      `(() => { try { Intl.getCanonicalLocales('en_US') } catch (e) { return e.constructor.name } })()`,
      `(() => { try { Intl.getCanonicalLocales([1]) } catch (e) { return e.constructor.name } })()`,
      ...['NumberFormat', 'DateTimeFormat', 'Collator', 'PluralRules', 'RelativeTimeFormat', 'ListFormat'].map(
        (c) => `Intl.${c}.supportedLocalesOf(['de-AT', 'fr', 'ja-JP', 'zh-Hant-TW'])`,
      ),
    ]);
  });

  it('an unsupported locale falls back to en-US, as Node does for a locale without data', () => {
    sameAsNode([
      `new Intl.NumberFormat('tlh').resolvedOptions().locale`,
      `new Intl.NumberFormat(['tlh', 'de-AT']).resolvedOptions().locale`,
      `new Intl.NumberFormat('tlh').format(1234.5)`,
      `Intl.NumberFormat.supportedLocalesOf(['tlh', 'de'])`,
    ]);
    expect(
      inRealm([
        `new Intl.DateTimeFormat().resolvedOptions().locale`,
        `new Intl.NumberFormat().resolvedOptions().locale`,
      ]),
    ).toEqual(['en-US', 'en-US']);
  });
});

describe('large and odd inputs', () => {
  it('format as in Node without failing the run', () => {
    sameAsNode([
      `new Intl.NumberFormat('en', { minimumFractionDigits: 20 }).format(1.7976931348623157e308).length`,
      `new Intl.NumberFormat('en', { maximumSignificantDigits: 21 }).format(5e-324)`,
      `new Intl.NumberFormat('en', { maximumFractionDigits: 20 }).format(5e-324)`,
      `(2n ** 120000n).toLocaleString('de-DE').slice(0, 40)`,
      `(-(2n ** 120000n)).toLocaleString('ar-EG').slice(0, 40)`,
      `(2n ** 120000n).toLocaleString('en', { useGrouping: false }).length`,
      `'x'.repeat(1e6).localeCompare('x'.repeat(1e6) + 'y', 'de')`,
      `new Intl.DateTimeFormat('en', { dateStyle: 'full', timeZone: 'UTC' }).format(8.64e15)`,
      `new Intl.PluralRules('en').select(Infinity)`,
      `new Intl.ListFormat('en').format(Array.from({ length: 10000 }, (_, i) => String(i))).length`,
      `[9999, 10000, 275759].map((y) => new Date(Date.UTC(y, 0, 1)).toLocaleDateString('en-US', { timeZone: 'UTC' }))`,
    ]);
  });

  it('fraction digits go up to 100, as ECMA-402 2023 says (Node 20 stops at 20)', () => {
    expect(inRealm([`new Intl.NumberFormat('en', { minimumFractionDigits: 100 }).format(1).length`])).toEqual([102]);
  });
});

describe('Intl in the frozen realm', () => {
  it("is part of the standard profile only, as the other web APIs (console: 'none' has none)", () => {
    expect(runSync('return [typeof Intl, (1234.5).toLocaleString()]', { console: 'none' }).value).toEqual([
      'undefined',
      '1234.5',
    ]);
  });

  it('the implementation is loaded once per thread, with the template realm, not on the heap of a run', () => {
    const plain = runSync('return 1');
    const used = runSync(`return (1234.5).toLocaleString('de-DE')`);
    expect(used.value).toBe('1.234,5');
    // The implementation (over 100 KB) is shared: a run that formats allocates only its own values.
    expect((used.stats?.heapBytes ?? 0) - (plain.stats?.heapBytes ?? 0)).toBeLessThan(20_000);
    // So a run that has used nearly all of its memory can still format.
    const tight = runSync(`const keep = 'x'.repeat(900_000); return keep.length + (1234.5).toLocaleString('de-DE')`, {
      limits: { memoryBytes: 1 << 20 },
    });
    expect(tight.value).toBe('9000001.234,5');
    expect(runSync(`return new Intl.NumberFormat('fr-FR').format(1234.5)`).value).toBe(
      new Intl.NumberFormat('fr-FR').format(1234.5),
    );
  });

  it('everything is frozen and the methods look like built-ins', () => {
    expect(
      inRealm([
        `[Intl, Intl.NumberFormat, Intl.NumberFormat.prototype, Intl.DateTimeFormat.prototype, Intl.Collator.prototype, Intl.PluralRules.prototype, Intl.RelativeTimeFormat.prototype, Intl.ListFormat.prototype, Intl.Locale.prototype].every(Object.isFrozen)`,
        `(({ value, ...d }) => [typeof value, d])(Object.getOwnPropertyDescriptor(Number.prototype, 'toLocaleString'))`,
        `Object.keys(Intl.NumberFormat.prototype)`,
        `[Object.prototype.toString.call(Intl), Object.prototype.toString.call(new Intl.Collator())]`,
        `(() => { 'use strict'; try { Intl.NumberFormat = null } catch (e) { return e.constructor.name } })()`,
        `(() => { try { new Number.prototype.toLocaleString() } catch (e) { return e.constructor.name } })()`,
        `Intl.NumberFormat.supportedLocalesOf === Intl.Collator.supportedLocalesOf`,
      ]),
    ).toEqual([
      true,
      ['function', { writable: false, enumerable: false, configurable: false }],
      [],
      ['[object Intl]', '[object Intl.Collator]'],
      'TypeError',
      'TypeError',
      false,
    ]);
  });
});
