// What Intl does (intl.js defines its public shape): the implementation of NumberFormat,
// DateTimeFormat, Collator, PluralRules, RelativeTimeFormat, ListFormat, Locale, Segmenter,
// getCanonicalLocales and the locale-aware Number/BigInt/Date toLocale*String and
// String.prototype.localeCompare/toLocaleUpperCase/toLocaleLowerCase. Loaded on first use. `P`
// holds the public constructors and the prototypes of Segments objects and their iterators.
// Options are read and checked here in ECMA-402's order; the host's native helpers (ICU4X) do
// the formatting for an already resolved locale and a compact key of resolved options. Time
// zones: only UTC, which is also the default.
(N, P) => {
  'use strict';
  // Methods of the public prototypes (called with the public object as `this`) and initialisers
  // of the public constructors, by class.
  const protos = {};
  const inits = {};
  // Languages offered; any region or script of them is accepted (ICU4X falls back within the
  // language when it has no data for the exact tag).
  const LANGUAGES = new Set(
    (
      'af am ar as az be bg bn bs ca cs cy da de el en es et eu fa fi fil fr ga gl gu he hi hr hu hy id is it ja ' +
      'ka kk km kn ko ky lo lt lv mk ml mn mr ms my nb ne nl no or pa pl ps pt ro ru si sk sl sq sr sv sw ta te th ' +
      'tk tr uk ur uz vi yue zh zu'
    ).split(' '),
  );
  const DEFAULT_LOCALE = 'en-US';
  const TIME_ZONE = 'UTC';
  const UTC_NAMES = [
    'UTC',
    'ETC/UTC',
    'ETC/GMT',
    'GMT',
    'ETC/UCT',
    'UCT',
    'ETC/ZULU',
    'ZULU',
    'ETC/UNIVERSAL',
    'UNIVERSAL',
  ];
  // ISO 4217 minor units where they are not 2.
  const CURRENCY_DIGITS = {
    BHD: 3,
    BIF: 0,
    CLF: 4,
    CLP: 0,
    DJF: 0,
    GNF: 0,
    IQD: 3,
    ISK: 0,
    JOD: 3,
    JPY: 0,
    KMF: 0,
    KRW: 0,
    KWD: 3,
    LYD: 3,
    OMR: 3,
    PYG: 0,
    RWF: 0,
    TND: 3,
    UGX: 0,
    UYI: 0,
    UYW: 4,
    VND: 0,
    VUV: 0,
    XAF: 0,
    XOF: 0,
    XPF: 0,
  };
  const RELATIVE_UNITS = ['second', 'minute', 'hour', 'day', 'week', 'month', 'quarter', 'year'];
  const dateValueOf = Date.prototype.valueOf;

  // ---- options --------------------------------------------------------------------------------

  function toObjectOptions(options) {
    if (options === undefined) return Object.create(null);
    if (options === null) throw new TypeError('Cannot convert undefined or null to object');
    return Object(options);
  }

  function getOption(options, prop, type, values, fallback) {
    let value = options[prop];
    if (value === undefined) return fallback;
    value = type === 'boolean' ? Boolean(value) : `${value}`;
    if (values !== undefined && !values.includes(value)) {
      throw new RangeError(`Value ${value} out of range for options property ${prop}`);
    }
    return value;
  }

  function defaultNumberOption(value, min, max, fallback, prop) {
    if (value === undefined) return fallback;
    const n = Number(value);
    if (Number.isNaN(n) || n < min || n > max) throw new RangeError(`${prop} value is out of range.`);
    return Math.floor(n);
  }

  function getNumberOption(options, prop, min, max, fallback) {
    return defaultNumberOption(options[prop], min, max, fallback, prop);
  }

  // ECMA-402 SetNumberFormatDigitOptions (roundingPriority "auto").
  function digitOptions(options, mnfdDefault, mxfdDefault, notation) {
    const minimumIntegerDigits = getNumberOption(options, 'minimumIntegerDigits', 1, 21, 1);
    const mnfd = options.minimumFractionDigits;
    const mxfd = options.maximumFractionDigits;
    const mnsd = options.minimumSignificantDigits;
    const mxsd = options.maximumSignificantDigits;
    const roundingIncrement = getNumberOption(options, 'roundingIncrement', 1, 5000, 1);
    if (roundingIncrement !== 1) throw new RangeError('roundingIncrement other than 1 is not supported');
    const roundingMode = getOption(
      options,
      'roundingMode',
      'string',
      ['ceil', 'floor', 'expand', 'trunc', 'halfCeil', 'halfFloor', 'halfExpand', 'halfTrunc', 'halfEven'],
      'halfExpand',
    );
    if (roundingMode !== 'halfExpand') throw new RangeError(`roundingMode ${roundingMode} is not supported`);
    const roundingPriority = getOption(
      options,
      'roundingPriority',
      'string',
      ['auto', 'morePrecision', 'lessPrecision'],
      'auto',
    );
    if (roundingPriority !== 'auto') throw new RangeError(`roundingPriority ${roundingPriority} is not supported`);
    const trailingZeroDisplay = getOption(options, 'trailingZeroDisplay', 'string', ['auto', 'stripIfInteger'], 'auto');
    if (trailingZeroDisplay !== 'auto') throw new RangeError('trailingZeroDisplay stripIfInteger is not supported');
    const d = { minimumIntegerDigits, roundingIncrement, roundingMode, roundingPriority, trailingZeroDisplay };
    const hasSd = mnsd !== undefined || mxsd !== undefined;
    const hasFd = mnfd !== undefined || mxfd !== undefined;
    const needSd = hasSd;
    const needFd = !(hasSd || (!hasFd && notation === 'compact'));
    if (needSd) {
      d.minimumSignificantDigits = defaultNumberOption(mnsd, 1, 21, 1, 'minimumSignificantDigits');
      d.maximumSignificantDigits = defaultNumberOption(
        mxsd,
        d.minimumSignificantDigits,
        21,
        21,
        'maximumSignificantDigits',
      );
    }
    if (needFd) {
      if (hasFd) {
        let min = defaultNumberOption(mnfd, 0, 100, undefined, 'minimumFractionDigits');
        let max = defaultNumberOption(mxfd, 0, 100, undefined, 'maximumFractionDigits');
        if (min === undefined) min = Math.min(mnfdDefault, max);
        else if (max === undefined) max = Math.max(mxfdDefault, min);
        else if (min > max) throw new RangeError('maximumFractionDigits value is out of range.');
        d.minimumFractionDigits = min;
        d.maximumFractionDigits = max;
      } else {
        d.minimumFractionDigits = mnfdDefault;
        d.maximumFractionDigits = mxfdDefault;
      }
    }
    if (!needSd && !needFd) {
      // Compact notation's own rounding: two significant digits, whole numbers above 100.
      d.minimumFractionDigits = 0;
      d.maximumFractionDigits = 0;
      d.minimumSignificantDigits = 1;
      d.maximumSignificantDigits = 2;
      d.roundingPriority = 'morePrecision';
      d.compactRounding = true;
    }
    return d;
  }

  /** resolvedOptions()'s fraction and significant digit fields, in their order, for those set. */
  function reportDigits(r, d) {
    if (d.minimumFractionDigits !== undefined) {
      r.minimumFractionDigits = d.minimumFractionDigits;
      r.maximumFractionDigits = d.maximumFractionDigits;
    }
    if (d.minimumSignificantDigits !== undefined) {
      r.minimumSignificantDigits = d.minimumSignificantDigits;
      r.maximumSignificantDigits = d.maximumSignificantDigits;
    }
  }

  function digitsKey(d) {
    return [
      d.minimumIntegerDigits,
      d.minimumFractionDigits ?? 0,
      d.maximumFractionDigits ?? 0,
      d.compactRounding ? 0 : (d.minimumSignificantDigits ?? 0),
      d.compactRounding ? 0 : (d.maximumSignificantDigits ?? 0),
    ].join('|');
  }

  // ---- locales --------------------------------------------------------------------------------

  function canonicalizeLocaleList(locales) {
    if (locales === undefined) return [];
    if (locales === null) throw new TypeError('Cannot convert undefined or null to object');
    const seen = [];
    const list = typeof locales === 'string' || locales instanceof P.Locale ? [locales] : Object(locales);
    const len =
      typeof locales === 'string' || locales instanceof P.Locale ? 1 : Math.min(Number(list.length) || 0, 2 ** 32);
    for (let k = 0; k < len; k++) {
      if (!(k in list)) continue;
      const value = list[k];
      if (typeof value !== 'string' && (typeof value !== 'object' || value === null)) {
        throw new TypeError('Language ID should be string or object.');
      }
      const tag = value instanceof P.Locale ? localeState(value).tag : `${value}`;
      const canonical = N.canonicalize(tag);
      if (canonical === null || canonical === undefined) throw new RangeError(`Incorrect locale information provided`);
      if (!seen.includes(canonical)) seen.push(canonical);
    }
    return seen;
  }

  function withoutUnicodeExtension(tag) {
    const parts = tag.split('-');
    const out = [];
    for (let i = 0; i < parts.length; i++) {
      if (parts[i] === 'u') {
        i++;
        while (i < parts.length && parts[i].length > 1) i++;
        i--;
        continue;
      }
      if (parts[i] === 'x') {
        out.push(...parts.slice(i));
        break;
      }
      out.push(parts[i]);
    }
    return out.join('-');
  }

  function isSupported(tag) {
    return LANGUAGES.has(tag.split('-')[0]);
  }

  function resolveLocale(locales, options) {
    const requested = canonicalizeLocaleList(locales);
    getOption(options, 'localeMatcher', 'string', ['lookup', 'best fit'], 'best fit');
    for (const tag of requested) {
      const base = withoutUnicodeExtension(tag);
      if (isSupported(base)) return base.split('-x-')[0];
    }
    return DEFAULT_LOCALE;
  }

  function supportedLocalesOf(locales, options) {
    const requested = canonicalizeLocaleList(locales);
    if (options !== undefined)
      getOption(toObjectOptions(options), 'localeMatcher', 'string', ['lookup', 'best fit'], 'best fit');
    return requested.filter((tag) => isSupported(withoutUnicodeExtension(tag)));
  }

  function numberingSystemOption(options) {
    const ns = getOption(options, 'numberingSystem', 'string', undefined, undefined);
    if (ns !== undefined && !/^[a-zA-Z0-9]{3,8}(-[a-zA-Z0-9]{3,8})*$/.test(ns)) {
      throw new RangeError(`Invalid numberingSystem : ${ns}`);
    }
    return ns;
  }

  // The numbering system a locale's numbers use, read off how it writes zero.
  function numberingSystemOf(locale) {
    const zero = N.formatNumber(locale, 'decimal||||short|auto|auto|1|0|0|0|0', 0, false);
    const code = zero.codePointAt(0);
    // biome-ignore lint/complexity/useSimpleNumberKeys: the keys are code points, read as hex
    return { 0x660: 'arab', 0x6f0: 'arabext', 0x966: 'deva', 0x9e6: 'beng', 0x1040: 'mymr' }[code] ?? 'latn';
  }

  function stateGetter(map, name) {
    return (obj) => {
      const s = typeof obj === 'object' && obj !== null ? map.get(obj) : undefined;
      if (s === undefined) throw new TypeError(`Method called on incompatible receiver: not an ${name}`);
      return s;
    };
  }

  function partsToObjects(flat) {
    const out = [];
    for (let i = 0; i < flat.length; i += 2) out.push({ type: flat[i], value: flat[i + 1] });
    return out;
  }

  // ---- Locale (only as an input to the constructors and as Intl.Locale's basic shape) --------

  const locales = new WeakMap();
  const localeState = stateGetter(locales, 'Intl.Locale');
  inits.Locale = (obj, tag, options) => {
    if (typeof tag !== 'string' && (typeof tag !== 'object' || tag === null)) {
      throw new TypeError("First argument to Intl.Locale constructor can't be empty or missing");
    }
    const text = tag instanceof P.Locale ? localeState(tag).tag : `${tag}`;
    toObjectOptions(options);
    const canonical = N.canonicalize(text);
    if (canonical === null || canonical === undefined) throw new RangeError('Incorrect locale information provided');
    locales.set(obj, { tag: canonical });
  };
  protos.Locale = {
    toString() {
      return localeState(this).tag;
    },
    get baseName() {
      return withoutUnicodeExtension(localeState(this).tag).split('-x-')[0];
    },
    get language() {
      return localeState(this).tag.split('-')[0];
    },
    get region() {
      const parts = this.baseName.split('-').slice(1);
      return parts.find((p) => /^([A-Z]{2}|[0-9]{3})$/.test(p));
    },
    get script() {
      return this.baseName
        .split('-')
        .slice(1)
        .find((p) => /^[A-Z][a-z]{3}$/.test(p));
    },
  };

  // ---- NumberFormat ---------------------------------------------------------------------------

  const numberFormats = new WeakMap();
  const nfState = stateGetter(numberFormats, 'Intl.NumberFormat');

  function initNumberFormat(nf, locales, options) {
    options = toObjectOptions(options);
    const locale = resolveLocale(locales, options);
    numberingSystemOption(options);
    const style = getOption(options, 'style', 'string', ['decimal', 'percent', 'currency', 'unit'], 'decimal');
    let currency = getOption(options, 'currency', 'string', undefined, undefined);
    if (currency !== undefined && !/^[A-Za-z]{3}$/.test(currency))
      throw new RangeError(`Invalid currency code : ${currency}`);
    const currencyDisplay = getOption(
      options,
      'currencyDisplay',
      'string',
      ['code', 'symbol', 'narrowSymbol', 'name'],
      'symbol',
    );
    const currencySign = getOption(options, 'currencySign', 'string', ['standard', 'accounting'], 'standard');
    const unit = getOption(options, 'unit', 'string', undefined, undefined);
    getOption(options, 'unitDisplay', 'string', ['short', 'narrow', 'long'], 'short');
    if (style === 'currency') {
      if (currency === undefined) throw new TypeError('Currency code is required with currency style.');
      currency = currency.toUpperCase();
    }
    if (style === 'unit') {
      if (unit === undefined) throw new TypeError('Unit is required with unit style.');
      throw new RangeError('style "unit" is not supported');
    }
    if (currencySign !== 'standard') throw new RangeError('currencySign "accounting" is not supported');
    const notation = getOption(
      options,
      'notation',
      'string',
      ['standard', 'scientific', 'engineering', 'compact'],
      'standard',
    );
    if (notation === 'scientific' || notation === 'engineering')
      throw new RangeError(`notation "${notation}" is not supported`);
    let mnfdDefault = 0;
    let mxfdDefault = style === 'percent' ? 0 : 3;
    if (style === 'currency' && notation === 'standard') {
      mnfdDefault = CURRENCY_DIGITS[currency] ?? 2;
      mxfdDefault = mnfdDefault;
    }
    if (notation === 'compact') mxfdDefault = 0;
    const digits = digitOptions(options, mnfdDefault, mxfdDefault, notation);
    if (notation === 'compact' && !digits.compactRounding) {
      throw new RangeError('digit options with compact notation are not supported');
    }
    const compactDisplay = getOption(options, 'compactDisplay', 'string', ['short', 'long'], 'short');
    const groupingDefault = notation === 'compact' ? 'min2' : 'auto';
    let useGrouping = options.useGrouping;
    if (useGrouping === undefined) useGrouping = groupingDefault;
    else if (useGrouping === true) useGrouping = 'always';
    else if (!useGrouping) useGrouping = false;
    else {
      useGrouping = `${useGrouping}`;
      if (useGrouping === 'true' || useGrouping === 'false') useGrouping = groupingDefault;
      else if (!['min2', 'auto', 'always'].includes(useGrouping)) {
        throw new RangeError(`Value ${useGrouping} out of range for options property useGrouping`);
      }
    }
    const signDisplay = getOption(
      options,
      'signDisplay',
      'string',
      ['auto', 'never', 'always', 'exceptZero', 'negative'],
      'auto',
    );
    const key = [
      style,
      currency ?? '',
      currencyDisplay,
      notation,
      compactDisplay,
      useGrouping === false ? 'false' : useGrouping,
      signDisplay,
      digitsKey(digits),
    ].join('|');
    numberFormats.set(nf, {
      locale,
      key,
      style,
      currency,
      currencyDisplay,
      currencySign,
      notation,
      compactDisplay,
      useGrouping,
      signDisplay,
      digits,
      bound: undefined,
    });
  }

  function toIntlNumber(value) {
    if (typeof value === 'bigint') return value;
    if (typeof value === 'object' && value !== null) value = value.valueOf();
    return typeof value === 'bigint' ? value : Number(value);
  }

  function formatNumberTo(s, value, parts) {
    const x = toIntlNumber(value);
    if (typeof x === 'number' && !Number.isFinite(x)) {
      const text = Number.isNaN(x) ? 'NaN' : '∞';
      const negative = x < 0 && s.signDisplay !== 'never';
      const plus = x > 0 && (s.signDisplay === 'always' || s.signDisplay === 'exceptZero');
      const list = [];
      if (negative) list.push('minusSign', '-');
      if (plus) list.push('plusSign', '+');
      list.push(Number.isNaN(x) ? 'nan' : 'infinity', text);
      if (s.style === 'percent') list.push('percentSign', '%');
      return parts ? list : list.filter((_, i) => i % 2 === 1).join('');
    }
    if (typeof x === 'bigint') {
      const digits = String(x);
      if (digits.length > MAX_DECIMAL_DIGITS) return hugeBigInt(s, digits, parts);
      return N.formatNumber(s.locale, s.key, digits, parts);
    }
    return N.formatNumber(s.locale, s.key, x, parts);
  }

  // ICU4X's decimals hold at most 32,767 digits; a larger bigint is written here with the
  // locale's digits and group separator, in groups of three.
  const MAX_DECIMAL_DIGITS = 30000;
  function hugeBigInt(s, digits, parts) {
    const sample = N.formatNumber(s.locale, 'decimal||||short|always|auto|1|0|0|0|0', 1000, true);
    const group = s.useGrouping === false ? '' : (sample[sample.indexOf('group') + 1] ?? '');
    const zero = N.formatNumber(s.locale, 'decimal||||short|auto|auto|1|0|0|0|0', 0, false).codePointAt(0);
    const negative = digits[0] === '-';
    const abs = negative ? digits.slice(1) : digits;
    const local =
      zero === 0x30 ? abs : abs.replace(/[0-9]/g, (d) => String.fromCodePoint(zero + (d.charCodeAt(0) - 0x30)));
    const list = [];
    if (negative && s.signDisplay !== 'never') {
      // The locale's minus sign with the marks around it, as it writes -1.
      const minusOne = N.formatNumber(s.locale, 'decimal||||short|auto|auto|1|0|0|0|0', -1, true);
      list.push(...minusOne.slice(0, minusOne.indexOf('integer')));
    } else if (!negative && (s.signDisplay === 'always' || s.signDisplay === 'exceptZero')) list.push('plusSign', '+');
    let at = local.length % 3 || 3;
    list.push('integer', local.slice(0, at));
    for (; at < local.length; at += 3) {
      if (group !== '') list.push('group', group);
      list.push('integer', local.slice(at, at + 3));
    }
    return parts ? list : list.filter((_, i) => i % 2 === 1).join('');
  }

  inits.NumberFormat = initNumberFormat;
  protos.NumberFormat = {
    get format() {
      const s = nfState(this);
      if (s.bound === undefined) s.bound = (value) => formatNumberTo(s, value, false);
      return s.bound;
    },
    formatToParts(value) {
      return partsToObjects(formatNumberTo(nfState(this), value, true));
    },
    resolvedOptions() {
      const s = nfState(this);
      const r = { locale: s.locale, numberingSystem: numberingSystemOf(s.locale), style: s.style };
      if (s.style === 'currency') {
        r.currency = s.currency;
        r.currencyDisplay = s.currencyDisplay;
        r.currencySign = s.currencySign;
      }
      r.minimumIntegerDigits = s.digits.minimumIntegerDigits;
      reportDigits(r, s.digits);
      r.useGrouping = s.useGrouping;
      r.notation = s.notation;
      if (s.notation === 'compact') r.compactDisplay = s.compactDisplay;
      r.signDisplay = s.signDisplay;
      r.roundingIncrement = s.digits.roundingIncrement;
      r.roundingMode = s.digits.roundingMode;
      r.roundingPriority = s.digits.roundingPriority;
      r.trailingZeroDisplay = s.digits.trailingZeroDisplay;
      return r;
    },
  };

  // ---- DateTimeFormat -------------------------------------------------------------------------

  const dateTimeFormats = new WeakMap();
  const dtfState = stateGetter(dateTimeFormats, 'Intl.DateTimeFormat');
  const DATE_FIELDS = ['weekday', 'era', 'year', 'month', 'day'];
  const TIME_FIELDS = ['dayPeriod', 'hour', 'minute', 'second', 'fractionalSecondDigits'];
  const TEXT = ['narrow', 'short', 'long'];
  const NUMERIC = ['2-digit', 'numeric'];
  const STYLES = ['full', 'long', 'medium', 'short'];

  function canonicalTimeZone(tz) {
    if (UTC_NAMES.includes(tz.toUpperCase())) return TIME_ZONE;
    throw new RangeError(`Invalid time zone specified: ${tz} (only UTC is available)`);
  }

  // ECMA-402 CreateDateTimeFormat; `required` is date/time/any, `defaults` date/time/all.
  function initDateTimeFormat(dtf, locales, options, required, defaults) {
    options = toObjectOptions(options);
    const locale = resolveLocale(locales, options);
    const calendar = getOption(options, 'calendar', 'string', undefined, undefined);
    if (calendar !== undefined && !/^[a-zA-Z0-9]{3,8}(-[a-zA-Z0-9]{3,8})*$/.test(calendar)) {
      throw new RangeError(`Invalid calendar : ${calendar}`);
    }
    numberingSystemOption(options);
    const hour12 = getOption(options, 'hour12', 'boolean', undefined, undefined);
    let hourCycle = getOption(options, 'hourCycle', 'string', ['h11', 'h12', 'h23', 'h24'], undefined);
    if (hour12 !== undefined) hourCycle = null;
    let timeZone = options.timeZone;
    timeZone = timeZone === undefined ? TIME_ZONE : canonicalTimeZone(`${timeZone}`);
    const f = {};
    f.weekday = getOption(options, 'weekday', 'string', TEXT, undefined);
    f.era = getOption(options, 'era', 'string', TEXT, undefined);
    f.year = getOption(options, 'year', 'string', NUMERIC, undefined);
    f.month = getOption(options, 'month', 'string', [...NUMERIC, ...TEXT], undefined);
    f.day = getOption(options, 'day', 'string', NUMERIC, undefined);
    f.dayPeriod = getOption(options, 'dayPeriod', 'string', TEXT, undefined);
    f.hour = getOption(options, 'hour', 'string', NUMERIC, undefined);
    f.minute = getOption(options, 'minute', 'string', NUMERIC, undefined);
    f.second = getOption(options, 'second', 'string', NUMERIC, undefined);
    f.fractionalSecondDigits = getNumberOption(options, 'fractionalSecondDigits', 1, 3, undefined);
    f.timeZoneName = getOption(
      options,
      'timeZoneName',
      'string',
      ['short', 'long', 'shortOffset', 'longOffset', 'shortGeneric', 'longGeneric'],
      undefined,
    );
    getOption(options, 'formatMatcher', 'string', ['basic', 'best fit'], 'best fit');
    const dateStyle = getOption(options, 'dateStyle', 'string', STYLES, undefined);
    const timeStyle = getOption(options, 'timeStyle', 'string', STYLES, undefined);
    const explicit = [...DATE_FIELDS, ...TIME_FIELDS, 'timeZoneName'].find((k) => f[k] !== undefined);
    if (dateStyle !== undefined || timeStyle !== undefined) {
      if (explicit !== undefined)
        throw new TypeError(`Can't set option ${explicit} when dateStyle or timeStyle is used`);
      if (required === 'date' && timeStyle !== undefined) throw new TypeError('Invalid option : timeStyle');
      if (required === 'time' && dateStyle !== undefined) throw new TypeError('Invalid option : dateStyle');
    } else {
      let needDefaults = true;
      if ((required === 'date' || required === 'any') && DATE_FIELDS.some((k) => k !== 'era' && f[k] !== undefined)) {
        needDefaults = false;
      }
      if ((required === 'time' || required === 'any') && TIME_FIELDS.some((k) => f[k] !== undefined))
        needDefaults = false;
      if (needDefaults && (defaults === 'date' || defaults === 'all')) {
        f.year = 'numeric';
        f.month = 'numeric';
        f.day = 'numeric';
      }
      if (needDefaults && (defaults === 'time' || defaults === 'all')) {
        f.hour = 'numeric';
        f.minute = 'numeric';
        f.second = 'numeric';
      }
    }
    if (f.dayPeriod !== undefined) throw new RangeError('dayPeriod is not supported');
    const hasHour = f.hour !== undefined || timeStyle !== undefined;
    let hc = '';
    if (hasHour) {
      if (hour12 !== undefined) hc = hour12 ? 'h12' : 'h23';
      else if (hourCycle === 'h11' || hourCycle === 'h12') hc = 'h12';
      else if (hourCycle === 'h23' || hourCycle === 'h24') hc = 'h23';
    }
    const key = [
      dateStyle ?? '',
      timeStyle ?? '',
      f.weekday ?? '',
      f.era ?? '',
      f.year ?? '',
      f.month ?? '',
      f.day ?? '',
      f.hour ?? '',
      f.minute ?? '',
      f.second ?? '',
      f.fractionalSecondDigits ?? '',
      f.timeZoneName ?? '',
    ].join('|');
    // Refuse combinations ICU4X has no pattern for now rather than at the first format().
    N.formatDate(locale, key, hc, 0, false);
    dateTimeFormats.set(dtf, { locale, key, hc, timeZone, fields: f, dateStyle, timeStyle, hasHour, bound: undefined });
  }

  function timeValue(date) {
    const t = date === undefined ? Date.now() : Number(date);
    if (!Number.isFinite(t) || Math.abs(t) > 8.64e15) throw new RangeError('Invalid time value');
    return Math.trunc(t) + 0;
  }

  inits.DateTimeFormat = (obj, locales, options) => initDateTimeFormat(obj, locales, options, 'any', 'date');
  protos.DateTimeFormat = {
    get format() {
      const s = dtfState(this);
      if (s.bound === undefined) s.bound = (date) => N.formatDate(s.locale, s.key, s.hc, timeValue(date), false);
      return s.bound;
    },
    formatToParts(date) {
      const s = dtfState(this);
      return partsToObjects(N.formatDate(s.locale, s.key, s.hc, timeValue(date), true));
    },
    resolvedOptions() {
      const s = dtfState(this);
      const r = {
        locale: s.locale,
        calendar: 'gregory',
        numberingSystem: numberingSystemOf(s.locale),
        timeZone: s.timeZone,
      };
      if (s.hasHour) {
        // The locale's clock, read off how it writes 13:00.
        const parts = N.formatDate(s.locale, '|||||||numeric||||', s.hc, 13 * 3600000, true);
        const hour = parts[parts.indexOf('hour') + 1] ?? '';
        const last = hour.codePointAt(hour.length - 1) ?? 0x33;
        const twelve = ![0x33, 0x663, 0x6f3, 0x969, 0x9e9].includes(last);
        r.hourCycle = twelve ? 'h12' : 'h23';
        r.hour12 = twelve;
      }
      for (const k of [
        'weekday',
        'era',
        'year',
        'month',
        'day',
        'hour',
        'minute',
        'second',
        'fractionalSecondDigits',
        'timeZoneName',
      ]) {
        if (s.fields[k] !== undefined) r[k] = s.fields[k];
      }
      if (s.dateStyle !== undefined) r.dateStyle = s.dateStyle;
      if (s.timeStyle !== undefined) r.timeStyle = s.timeStyle;
      return r;
    },
  };

  // ---- Collator -------------------------------------------------------------------------------

  const collators = new WeakMap();
  const collatorState = stateGetter(collators, 'Intl.Collator');

  function initCollator(c, locales, options) {
    options = toObjectOptions(options);
    const usage = getOption(options, 'usage', 'string', ['sort', 'search'], 'sort');
    const locale = resolveLocale(locales, options);
    const collation = getOption(options, 'collation', 'string', undefined, undefined);
    if (collation !== undefined && !/^[a-zA-Z0-9]{3,8}(-[a-zA-Z0-9]{3,8})*$/.test(collation)) {
      throw new RangeError(`Invalid collation : ${collation}`);
    }
    const numeric = getOption(options, 'numeric', 'boolean', undefined, false);
    const caseFirst = getOption(options, 'caseFirst', 'string', ['upper', 'lower', 'false'], 'false');
    const sensitivity = getOption(options, 'sensitivity', 'string', ['base', 'accent', 'case', 'variant'], 'variant');
    const ignorePunctuation = getOption(options, 'ignorePunctuation', 'boolean', undefined, false);
    const key = [sensitivity, ignorePunctuation, numeric, caseFirst].join('|');
    collators.set(c, { locale, usage, sensitivity, ignorePunctuation, numeric, caseFirst, key, bound: undefined });
  }

  inits.Collator = initCollator;
  protos.Collator = {
    get compare() {
      const s = collatorState(this);
      if (s.bound === undefined) s.bound = (x, y) => N.compare(s.locale, s.key, `${x}`, `${y}`);
      return s.bound;
    },
    resolvedOptions() {
      const s = collatorState(this);
      return {
        locale: s.locale,
        usage: s.usage,
        sensitivity: s.sensitivity,
        ignorePunctuation: s.ignorePunctuation,
        collation: 'default',
        numeric: s.numeric,
        caseFirst: s.caseFirst,
      };
    },
  };

  // ---- PluralRules ----------------------------------------------------------------------------

  const pluralRules = new WeakMap();
  const prState = stateGetter(pluralRules, 'Intl.PluralRules');

  inits.PluralRules = (obj, locales, options) => {
    options = toObjectOptions(options);
    const locale = resolveLocale(locales, options);
    const type = getOption(options, 'type', 'string', ['cardinal', 'ordinal'], 'cardinal');
    const digits = digitOptions(options, 0, 3, 'standard');
    pluralRules.set(obj, { locale, type, digits, key: digitsKey(digits) });
  };
  protos.PluralRules = {
    select(value) {
      const s = prState(this);
      return N.pluralSelect(s.locale, s.type, s.key, Number(value));
    },
    resolvedOptions() {
      const s = prState(this);
      const r = { locale: s.locale, type: s.type, minimumIntegerDigits: s.digits.minimumIntegerDigits };
      reportDigits(r, s.digits);
      // As Node 20 reports them: without the rounding options.
      r.pluralCategories = N.pluralCategories(s.locale, s.type);
      return r;
    },
  };

  // ---- RelativeTimeFormat ---------------------------------------------------------------------

  const relativeFormats = new WeakMap();
  const rtfState = stateGetter(relativeFormats, 'Intl.RelativeTimeFormat');

  inits.RelativeTimeFormat = (obj, locales, options) => {
    options = toObjectOptions(options);
    const locale = resolveLocale(locales, options);
    numberingSystemOption(options);
    const style = getOption(options, 'style', 'string', ['long', 'short', 'narrow'], 'long');
    const numeric = getOption(options, 'numeric', 'string', ['always', 'auto'], 'always');
    relativeFormats.set(obj, { locale, style, numeric });
  };
  protos.RelativeTimeFormat = {
    format(value, unit) {
      const s = rtfState(this);
      const x = Number(value);
      let u = `${unit}`;
      if (!Number.isFinite(x)) throw new RangeError('Invalid value');
      if (u.endsWith('s') && RELATIVE_UNITS.includes(u.slice(0, -1))) u = u.slice(0, -1);
      if (!RELATIVE_UNITS.includes(u)) throw new RangeError(`Invalid unit argument for format() '${unit}'`);
      return N.formatRelative(s.locale, u, s.style, s.numeric, x);
    },
    resolvedOptions() {
      const s = rtfState(this);
      return { locale: s.locale, style: s.style, numeric: s.numeric, numberingSystem: numberingSystemOf(s.locale) };
    },
  };

  // ---- ListFormat -----------------------------------------------------------------------------

  const listFormats = new WeakMap();
  const lfState = stateGetter(listFormats, 'Intl.ListFormat');

  function stringList(iterable) {
    if (iterable === undefined) return [];
    const list = [];
    for (const item of iterable) {
      if (typeof item !== 'string') throw new TypeError(`Iterable yielded ${String(item)} which is not a string`);
      list.push(item);
    }
    // The host copies the items to format them: joining them here first makes a list whose text
    // would not fit in the realm's memory fail on the realm's own limit.
    list.join('');
    return list;
  }

  inits.ListFormat = (obj, locales, options) => {
    options = toObjectOptions(options);
    const locale = resolveLocale(locales, options);
    const type = getOption(options, 'type', 'string', ['conjunction', 'disjunction', 'unit'], 'conjunction');
    const style = getOption(options, 'style', 'string', ['long', 'short', 'narrow'], 'long');
    listFormats.set(obj, { locale, type, style });
  };
  protos.ListFormat = {
    format(list) {
      const s = lfState(this);
      return N.formatList(s.locale, s.type, s.style, stringList(list), false);
    },
    formatToParts(list) {
      const s = lfState(this);
      return partsToObjects(N.formatList(s.locale, s.type, s.style, stringList(list), true));
    },
    resolvedOptions() {
      const s = lfState(this);
      return { locale: s.locale, type: s.type, style: s.style };
    },
  };

  // ---- Segmenter ------------------------------------------------------------------------------

  const segmenters = new WeakMap();
  const segmenterState = stateGetter(segmenters, 'Intl.Segmenter');
  const segmentsObjects = new WeakMap();
  const segmentsState = stateGetter(segmentsObjects, 'Intl.Segmenter Segments object');
  const segmentIterators = new WeakMap();
  const segmentIteratorState = stateGetter(segmentIterators, 'Intl.Segmenter String Iterator');
  const Uint32ArrayCtor = Uint32Array;
  const allocateBreaks = (count) => new Uint32ArrayCtor(count);
  // segmentBreaks gives each segment's end index; the top bit marks a word-like word.
  const END_MASK = 0x7fffffff;
  const WORD_LIKE = 0x80000000;

  function getOptionsObject(options) {
    if (options === undefined) return Object.create(null);
    if ((typeof options === 'object' && options !== null) || typeof options === 'function') return options;
    throw new TypeError('Options must be an object');
  }

  inits.Segmenter = (obj, locales, options) => {
    const requested = canonicalizeLocaleList(locales);
    options = getOptionsObject(options);
    const locale = resolveLocale(requested, options);
    const granularity = getOption(options, 'granularity', 'string', ['grapheme', 'word', 'sentence'], 'grapheme');
    segmenters.set(obj, { locale, granularity });
  };
  protos.Segmenter = {
    segment(string) {
      const segmenter = segmenterState(this);
      const segments = Object.create(P.SegmentsPrototype);
      segmentsObjects.set(segments, { segmenter, input: `${string}`, ends: undefined });
      return segments;
    },
    resolvedOptions() {
      const s = segmenterState(this);
      return { locale: s.locale, granularity: s.granularity };
    },
  };

  // The breaks are found once per Segments object, at its first use, and kept in the run's heap
  // (four bytes a segment).
  function segmentEnds(st) {
    st.ends ??= N.segmentBreaks(st.segmenter.locale, st.segmenter.granularity, st.input, allocateBreaks);
    return st.ends;
  }

  function segmentData(st, start, packedEnd) {
    const end = packedEnd & END_MASK;
    const data = { segment: st.input.slice(start, end), index: start, input: st.input };
    if (st.segmenter.granularity === 'word') data.isWordLike = packedEnd >= WORD_LIKE;
    return data;
  }

  protos.Segments = {
    containing(index) {
      const st = segmentsState(this);
      const n = Math.trunc(+index) || 0;
      if (n < 0 || n >= st.input.length) return undefined;
      const ends = segmentEnds(st);
      // The first segment that ends after n.
      let lo = 0;
      let hi = ends.length - 1;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if ((ends[mid] & END_MASK) > n) hi = mid;
        else lo = mid + 1;
      }
      return segmentData(st, lo === 0 ? 0 : ends[lo - 1] & END_MASK, ends[lo]);
    },
    iterator() {
      const st = segmentsState(this);
      const iterator = Object.create(P.SegmentIteratorPrototype);
      segmentIterators.set(iterator, { st, position: 0, next: 0 });
      return iterator;
    },
  };
  protos.SegmentIterator = {
    next() {
      const it = segmentIteratorState(this);
      if (it.position >= it.st.input.length) return { value: undefined, done: true };
      const packed = segmentEnds(it.st)[it.next++];
      const value = segmentData(it.st, it.position, packed);
      it.position = packed & END_MASK;
      return { value, done: false };
    },
  };

  // ---- locale-aware methods of the built-ins ---------------------------------------------------

  // Languages whose case mapping has rules of its own (ECMA-402 asks at least for az, lt and tr;
  // Greek as ICU4C and V8 have it). ICU4X's Armenian rule is left out, as ICU4C has none.
  const CASE_LANGUAGES = new Set(['az', 'el', 'lt', 'tr']);

  // Formatters for calls without locales and options, made on first use.
  const defaults = {};
  function defaultOr(name, locales, options, make) {
    if (locales !== undefined || options !== undefined) return make();
    defaults[name] ??= make();
    return defaults[name];
  }
  function dateFormatter(name, locales, options, required, fallback) {
    return defaultOr(name, locales, options, () => {
      const dtf = Object.create(P.DateTimeFormat.prototype);
      initDateTimeFormat(dtf, locales, options, required, fallback);
      return dtf;
    });
  }
  function dateToLocale(date, name, locales, options, required, fallback) {
    const t = dateValueOf.call(date);
    if (Number.isNaN(t)) return 'Invalid Date';
    const s = dtfState(dateFormatter(name, locales, options, required, fallback));
    return N.formatDate(s.locale, s.key, s.hc, t, false);
  }

  return {
    protos,
    inits,
    canonicalizeLocaleList,
    supportedLocalesOf,
    numberToLocaleString(x, locales, options) {
      return formatNumberTo(
        nfState(defaultOr('number', locales, options, () => new P.NumberFormat(locales, options))),
        x,
        false,
      );
    },
    dateToLocaleString(date, locales, options) {
      return dateToLocale(date, 'all', locales, options, 'any', 'all');
    },
    dateToLocaleDateString(date, locales, options) {
      return dateToLocale(date, 'date', locales, options, 'date', 'date');
    },
    dateToLocaleTimeString(date, locales, options) {
      return dateToLocale(date, 'time', locales, options, 'time', 'time');
    },
    // ECMA-402 TransformCase: the first requested locale's language, if it has rules of its own.
    transformCase(s, locales, upper) {
      const requested = canonicalizeLocaleList(locales);
      const language = withoutUnicodeExtension(requested[0] ?? DEFAULT_LOCALE).split('-')[0];
      return N.transformCase(CASE_LANGUAGES.has(language) ? language : 'und', upper, s);
    },
    localeCompare(s, that, locales, options) {
      const c = collatorState(defaultOr('collator', locales, options, () => new P.Collator(locales, options)));
      return N.compare(c.locale, c.key, s, that);
    },
  };
};
