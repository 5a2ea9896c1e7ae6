// Intl's public shape: the constructors, prototypes and methods of NumberFormat, DateTimeFormat,
// Collator, PluralRules, RelativeTimeFormat, ListFormat, Locale and Segmenter,
// getCanonicalLocales, and the locale-aware Number/BigInt/Date toLocale*String and
// String.prototype.localeCompare/toLocaleUpperCase/toLocaleLowerCase. They are
// frozen with the other built-ins. What they do lives in intl_impl.js, which `load` (a native
// helper) evaluates the first time a script uses any of them: a realm that never formats pays
// only for this file. With `eager` (a realm that serves many runs) it is loaded and frozen at
// once: loading it during a run would tie it to that run, and its state would outlive the run.
(load, eager) => {
  'use strict';
  let impl;
  const I = () => {
    impl ??= load(P);
    return impl;
  };
  const defineProperty = Object.defineProperty;
  const numberValueOf = Number.prototype.valueOf;
  const bigintValueOf = BigInt.prototype.valueOf;
  const apply = Reflect.apply;
  const getter = (cls, name, obj) => apply(Object.getOwnPropertyDescriptor(I().protos[cls], name).get, obj, []);
  const call = (cls, name, obj, args) => apply(I().protos[cls][name], obj, args);

  // Defines methods and getters from an object literal as built-ins are: non-enumerable.
  function defineMethods(target, source) {
    for (const key of Reflect.ownKeys(source)) {
      const desc = Object.getOwnPropertyDescriptor(source, key);
      desc.enumerable = false;
      defineProperty(target, key, desc);
    }
  }
  function setTag(proto, tag) {
    defineProperty(proto, Symbol.toStringTag, { value: tag, configurable: true });
  }
  // A `supportedLocalesOf` of its own for each constructor.
  const supported = () => ({
    supportedLocalesOf(locales, options = undefined) {
      return I().supportedLocalesOf(locales, options);
    },
  });

  function NumberFormat(locales = undefined, options = undefined) {
    if (new.target === undefined) return new NumberFormat(locales, options);
    I().inits.NumberFormat(this, locales, options);
  }
  defineMethods(NumberFormat, supported());
  defineMethods(NumberFormat.prototype, {
    get format() {
      return getter('NumberFormat', 'format', this);
    },
    formatToParts(value) {
      return call('NumberFormat', 'formatToParts', this, [value]);
    },
    resolvedOptions() {
      return call('NumberFormat', 'resolvedOptions', this, []);
    },
  });
  setTag(NumberFormat.prototype, 'Intl.NumberFormat');

  function DateTimeFormat(locales = undefined, options = undefined) {
    if (new.target === undefined) return new DateTimeFormat(locales, options);
    I().inits.DateTimeFormat(this, locales, options);
  }
  defineMethods(DateTimeFormat, supported());
  defineMethods(DateTimeFormat.prototype, {
    get format() {
      return getter('DateTimeFormat', 'format', this);
    },
    formatToParts(date) {
      return call('DateTimeFormat', 'formatToParts', this, [date]);
    },
    resolvedOptions() {
      return call('DateTimeFormat', 'resolvedOptions', this, []);
    },
  });
  setTag(DateTimeFormat.prototype, 'Intl.DateTimeFormat');

  function Collator(locales = undefined, options = undefined) {
    if (new.target === undefined) return new Collator(locales, options);
    I().inits.Collator(this, locales, options);
  }
  defineMethods(Collator, supported());
  defineMethods(Collator.prototype, {
    get compare() {
      return getter('Collator', 'compare', this);
    },
    resolvedOptions() {
      return call('Collator', 'resolvedOptions', this, []);
    },
  });
  setTag(Collator.prototype, 'Intl.Collator');

  class PluralRules {
    constructor(locales = undefined, options = undefined) {
      I().inits.PluralRules(this, locales, options);
    }
    select(value) {
      return call('PluralRules', 'select', this, [value]);
    }
    resolvedOptions() {
      return call('PluralRules', 'resolvedOptions', this, []);
    }
  }
  defineMethods(PluralRules, supported());
  setTag(PluralRules.prototype, 'Intl.PluralRules');

  class RelativeTimeFormat {
    constructor(locales = undefined, options = undefined) {
      I().inits.RelativeTimeFormat(this, locales, options);
    }
    format(value, unit) {
      return call('RelativeTimeFormat', 'format', this, [value, unit]);
    }
    resolvedOptions() {
      return call('RelativeTimeFormat', 'resolvedOptions', this, []);
    }
  }
  defineMethods(RelativeTimeFormat, supported());
  setTag(RelativeTimeFormat.prototype, 'Intl.RelativeTimeFormat');

  class ListFormat {
    constructor(locales = undefined, options = undefined) {
      I().inits.ListFormat(this, locales, options);
    }
    format(list) {
      return call('ListFormat', 'format', this, [list]);
    }
    formatToParts(list) {
      return call('ListFormat', 'formatToParts', this, [list]);
    }
    resolvedOptions() {
      return call('ListFormat', 'resolvedOptions', this, []);
    }
  }
  defineMethods(ListFormat, supported());
  setTag(ListFormat.prototype, 'Intl.ListFormat');

  class Locale {
    constructor(tag, options = undefined) {
      I().inits.Locale(this, tag, options);
    }
    toString() {
      return call('Locale', 'toString', this, []);
    }
    get baseName() {
      return getter('Locale', 'baseName', this);
    }
    get language() {
      return getter('Locale', 'language', this);
    }
    get region() {
      return getter('Locale', 'region', this);
    }
    get script() {
      return getter('Locale', 'script', this);
    }
  }
  setTag(Locale.prototype, 'Intl.Locale');

  class Segmenter {
    constructor(locales = undefined, options = undefined) {
      I().inits.Segmenter(this, locales, options);
    }
    segment(string) {
      return call('Segmenter', 'segment', this, [string]);
    }
    resolvedOptions() {
      return call('Segmenter', 'resolvedOptions', this, []);
    }
  }
  defineMethods(Segmenter, supported());
  setTag(Segmenter.prototype, 'Intl.Segmenter');

  // %SegmentsPrototype% and %SegmentIteratorPrototype%: only instances lead to them, so they and
  // their methods are handed back to be frozen with the intrinsics (`hidden`).
  const SegmentsPrototype = {};
  defineMethods(SegmentsPrototype, {
    containing(index) {
      return call('Segments', 'containing', this, [index]);
    },
    [Symbol.iterator]() {
      return call('Segments', 'iterator', this, []);
    },
  });
  const IteratorPrototype = Object.getPrototypeOf(Object.getPrototypeOf([][Symbol.iterator]()));
  const SegmentIteratorPrototype = Object.create(IteratorPrototype);
  defineMethods(SegmentIteratorPrototype, {
    next() {
      return call('SegmentIterator', 'next', this, []);
    },
  });
  setTag(SegmentIteratorPrototype, 'Segmenter String Iterator');
  const hidden = [
    SegmentsPrototype,
    SegmentsPrototype.containing,
    SegmentsPrototype[Symbol.iterator],
    SegmentIteratorPrototype,
    SegmentIteratorPrototype.next,
  ];

  const P = {
    NumberFormat,
    DateTimeFormat,
    Collator,
    PluralRules,
    RelativeTimeFormat,
    ListFormat,
    Locale,
    Segmenter,
    SegmentsPrototype,
    SegmentIteratorPrototype,
  };

  // biome-ignore lint/suspicious/noShadowRestrictedNames: this is the realm's Intl, being built
  const Intl = {};
  defineMethods(Intl, {
    getCanonicalLocales(locales) {
      return I().canonicalizeLocaleList(locales);
    },
  });
  for (const name of [
    'Collator',
    'DateTimeFormat',
    'ListFormat',
    'Locale',
    'NumberFormat',
    'PluralRules',
    'RelativeTimeFormat',
    'Segmenter',
  ]) {
    defineProperty(Intl, name, { value: P[name], writable: true, configurable: true });
  }
  setTag(Intl, 'Intl');

  defineMethods(Number.prototype, {
    toLocaleString(locales = undefined, options = undefined) {
      return I().numberToLocaleString(numberValueOf.call(this), locales, options);
    },
  });
  defineMethods(BigInt.prototype, {
    toLocaleString(locales = undefined, options = undefined) {
      return I().numberToLocaleString(bigintValueOf.call(this), locales, options);
    },
  });
  defineMethods(Date.prototype, {
    toLocaleString(locales = undefined, options = undefined) {
      return I().dateToLocaleString(this, locales, options);
    },
    toLocaleDateString(locales = undefined, options = undefined) {
      return I().dateToLocaleDateString(this, locales, options);
    },
    toLocaleTimeString(locales = undefined, options = undefined) {
      return I().dateToLocaleTimeString(this, locales, options);
    },
  });
  defineMethods(String.prototype, {
    localeCompare(that, locales = undefined, options = undefined) {
      if (this === undefined || this === null)
        throw new TypeError('String.prototype.localeCompare called on null or undefined');
      return I().localeCompare(`${this}`, `${that}`, locales, options);
    },
    toLocaleUpperCase(locales = undefined) {
      if (this === undefined || this === null)
        throw new TypeError('String.prototype.toLocaleUpperCase called on null or undefined');
      return I().transformCase(`${this}`, locales, true);
    },
    toLocaleLowerCase(locales = undefined) {
      if (this === undefined || this === null)
        throw new TypeError('String.prototype.toLocaleLowerCase called on null or undefined');
      return I().transformCase(`${this}`, locales, false);
    },
  });
  if (eager) {
    // The formatters that toLocaleString and friends make on first use, made now.
    const epoch = new Date(0);
    [
      (0).toLocaleString(),
      0n.toLocaleString(),
      epoch.toLocaleString(),
      epoch.toLocaleDateString(),
      epoch.toLocaleTimeString(),
      'a'.localeCompare('b'),
    ];
    const seen = new WeakSet();
    const harden = (v) => {
      if ((typeof v !== 'object' && typeof v !== 'function') || v === null || seen.has(v)) return;
      seen.add(v);
      Object.freeze(v);
      harden(Object.getPrototypeOf(v));
      for (const key of Reflect.ownKeys(v)) {
        const d = Object.getOwnPropertyDescriptor(v, key);
        harden(d.value);
        harden(d.get);
        harden(d.set);
      }
    };
    harden(I());
  }
  return [Intl, hidden];
};
