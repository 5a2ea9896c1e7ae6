//! `Intl` and the locale-aware `toLocaleString`/`localeCompare` methods, over ICU4X and its
//! compiled CLDR data. The classes are guest code: `intl.js`, their public shape, is evaluated in
//! every realm before lockdown; `intl_impl.js`, which reads and checks options as ECMA-402 says,
//! is loaded into a realm by the first call that needs it. The formatting itself is done here by
//! native helpers that only that code can reach. Each helper takes an already resolved locale and a compact key of resolved options, so
//! formatters are built once per thread and key and kept in a small cache.

use super::super::marshal::text_of;
use super::super::{ffi, raw};
use super::intl_text;
use fixed_decimal::{
    Decimal, FloatPrecision, SignDisplay, SignedRoundingMode, UnsignedRoundingMode,
};
use icu_collator::options::{AlternateHandling, CaseLevel, CollatorOptions, Strength};
use icu_collator::{Collator, CollatorBorrowed};
use icu_datetime::fieldbag::{field, DateTimeFieldBag};
use icu_datetime::fieldsets::builder::{DateFields, FieldSetBuilder, ZoneStyle};
use icu_datetime::fieldsets::enums::CompositeFieldSet;
use icu_datetime::options::{Length, TimePrecision, YearStyle};
use icu_datetime::DateTimeFormatter;
use icu_decimal::options::{DecimalFormatterOptions, GroupingStrategy};
use icu_decimal::{CompactDecimalFormatter, DecimalFormatter};
use icu_experimental::dimension::currency::formatter::CurrencyFormatter;
use icu_experimental::dimension::currency::CurrencyType;
use icu_experimental::dimension::percent::formatter::PercentFormatter;
use icu_experimental::relativetime::options::Numeric;
use icu_experimental::relativetime::{RelativeTimeFormatter, RelativeTimeFormatterOptions};
use icu_list::options::{ListFormatterOptions, ListLength};
use icu_list::ListFormatter;
use icu_locale::{Locale, LocaleCanonicalizer};
use icu_plurals::{PluralCategory, PluralOperands, PluralRules};
use rquickjs::{Array, Ctx, Exception, Function, Object, Value};
use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::rc::Rc;
use writeable::{Part, PartsWrite, Writeable};

const SOURCE: &str = include_str!("intl.js");
const IMPL_SOURCE: &str = include_str!("intl_impl.js");
/// Formatters kept per thread; the cache is emptied when it reaches this size.
const CACHE_ENTRIES: usize = 128;

/// Defines `Intl` on the global object and replaces the locale-dependent methods of `Number`,
/// `BigInt`, `Date` and `String` (before lockdown). Only their public shape is made here; the
/// implementation is loaded into the realm by the first call that needs it.
/// With `eager` the implementation is loaded (and frozen) now, as a template realm needs.
pub(crate) fn install<'js>(ctx: &Ctx<'js>, eager: bool) -> rquickjs::Result<()> {
    let make: Function = raw::eval_helper(ctx, SOURCE, c"quickrealm:intl")?.get()?;
    let load = Function::new(ctx.clone(), load_implementation)?;
    let made: Array = make.call((load, eager))?;
    let intl: Value = made.get(0)?;
    let hidden: Vec<Object> = made.get(1)?;
    // Objects only instances lead to, which lockdown's walk from the global object misses.
    for obj in &hidden {
        if !raw::freeze(ctx, obj) {
            return Err(ctx.throw(ctx.catch()));
        }
        ffi::mark_hardened(ctx, obj);
    }
    ctx.globals().set("Intl", intl)?;
    Ok(())
}

/// Evaluates `intl_impl.js` with the native helpers; `publics` are the public constructors.
fn load_implementation<'js>(ctx: Ctx<'js>, publics: Value<'js>) -> rquickjs::Result<Value<'js>> {
    let make: Function = raw::eval_helper(&ctx, IMPL_SOURCE, c"quickrealm:intl")?.get()?;
    let natives = Object::new(ctx.clone())?;
    natives.set("canonicalize", Function::new(ctx.clone(), canonicalize)?)?;
    natives.set("formatNumber", Function::new(ctx.clone(), format_number)?)?;
    natives.set("pluralSelect", Function::new(ctx.clone(), plural_select)?)?;
    natives.set(
        "pluralCategories",
        Function::new(ctx.clone(), plural_categories)?,
    )?;
    natives.set("compare", Function::new(ctx.clone(), compare)?)?;
    natives.set("formatList", Function::new(ctx.clone(), format_list)?)?;
    natives.set(
        "formatRelative",
        Function::new(ctx.clone(), format_relative)?,
    )?;
    natives.set("formatDate", Function::new(ctx.clone(), format_date)?)?;
    natives.set(
        "segmentBreaks",
        Function::new(ctx.clone(), intl_text::segment_breaks)?,
    )?;
    natives.set(
        "transformCase",
        Function::new(ctx.clone(), intl_text::transform_case)?,
    )?;
    make.call((natives, publics))
}

enum Cached {
    Decimal(DecimalFormatter),
    Compact(CompactDecimalFormatter),
    Percent(PercentFormatter<DecimalFormatter>, DecimalFormatter),
    Currency(CurrencyFormatter<DecimalFormatter>),
    Plural(PluralRules),
    Collator(CollatorBorrowed<'static>),
    List(ListFormatter),
    Relative(RelativeTimeFormatter),
    Date(Box<DateTimeFormatter<CompositeFieldSet>>),
}

thread_local! {
    static CACHE: RefCell<HashMap<String, Rc<Cached>>> = RefCell::new(HashMap::new());
}

/// The cached formatter for `key`, built by `make` when missing.
fn cached(
    key: String,
    make: impl FnOnce() -> Result<Cached, String>,
) -> Result<Rc<Cached>, String> {
    if let Some(hit) = CACHE.with(|c| c.borrow().get(&key).cloned()) {
        return Ok(hit);
    }
    let made = Rc::new(make()?);
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() >= CACHE_ENTRIES {
            c.clear();
        }
        c.insert(key, made.clone());
    });
    Ok(made)
}

/// The ICU4X locale for a tag `intl.js` resolved; the root locale if it does not parse.
fn locale(tag: &str) -> Locale {
    Locale::try_from_str(tag).unwrap_or(Locale::UNKNOWN)
}

fn range_error(ctx: &Ctx<'_>, message: &str) -> rquickjs::Error {
    Exception::throw_range(ctx, message)
}

fn type_error(ctx: &Ctx<'_>) -> rquickjs::Error {
    Exception::throw_type(ctx, "invalid Intl helper arguments")
}

/// `Intl.getCanonicalLocales` for one tag: the canonical form, or `null` when the tag is not a
/// structurally valid language tag.
fn canonicalize(tag: String) -> Option<String> {
    // ECMA-402 accepts only BCP 47 language tags, not the legacy "_" separators ICU4X allows.
    if tag.is_empty() || tag.contains('_') || tag.starts_with("root") {
        return None;
    }
    let mut loc = Locale::try_from_str(&tag).ok()?;
    LocaleCanonicalizer::new_extended().canonicalize(&mut loc);
    Some(loc.to_string())
}

/// Digit options of a number format, as `intl.js` resolved them.
#[derive(Clone, Copy)]
struct Digits {
    min_int: i16,
    min_frac: i16,
    max_frac: i16,
    /// 0 when significant digits are not used.
    min_sig: i16,
    max_sig: i16,
}

impl Digits {
    fn parse(fields: &[&str]) -> Option<Digits> {
        let n = |i: usize| fields.get(i).and_then(|f| f.parse::<i16>().ok());
        let d = Digits {
            min_int: n(0)?,
            min_frac: n(1)?,
            max_frac: n(2)?,
            min_sig: n(3)?,
            max_sig: n(4)?,
        };
        let ok = (1..=21).contains(&d.min_int)
            && (0..=100).contains(&d.min_frac)
            && (d.min_frac..=100).contains(&d.max_frac)
            && (d.min_sig == 0 || (1..=21).contains(&d.min_sig))
            && (d.max_sig == 0 || (d.min_sig.max(1)..=21).contains(&d.max_sig));
        ok.then_some(d)
    }

    /// Rounds (half away from zero) and pads `d` as ECMA-402's FormatNumericToString does.
    fn apply(&self, d: &mut Decimal) {
        let half_expand = SignedRoundingMode::Unsigned(UnsignedRoundingMode::HalfExpand);
        if self.max_sig > 0 {
            let magnitude = |d: &Decimal| {
                if d.absolute.is_zero() {
                    0
                } else {
                    d.absolute.nonzero_magnitude_start()
                }
            };
            d.round_with_mode(magnitude(d) - self.max_sig + 1, half_expand);
            d.absolute.trim_end();
            let min_sig = self.min_sig.max(1);
            let last = magnitude(d) - min_sig + 1;
            if last < 0 {
                d.absolute.pad_end(last);
            }
        } else {
            d.round_with_mode(-self.max_frac, half_expand);
            d.absolute.trim_end();
            d.absolute.pad_end(-self.min_frac);
        }
        d.absolute.pad_start(self.min_int);
    }
}

/// A number from the guest: a finite number, or the decimal digits of a BigInt.
fn decimal_of<'js>(ctx: &Ctx<'js>, value: &Value<'js>) -> Option<Decimal> {
    if let Some(x) = value.as_number() {
        if x == 0.0 {
            // -0 formats as 0 unless the sign display asks for it; keep its sign.
            let mut d = Decimal::from(0u8);
            if x.is_sign_negative() {
                d.sign = fixed_decimal::Sign::Negative;
            }
            return Some(d);
        }
        return Decimal::try_from_f64(x, FloatPrecision::RoundTrip).ok();
    }
    let text = text_of(ctx, value)?.to_lossy();
    Decimal::try_from_str(&text).ok()
}

/// Collects a [`Writeable`]'s output and where each annotated part lies in it.
#[derive(Default)]
struct PartsSink {
    out: String,
    /// Byte ranges, innermost first for nested parts.
    parts: Vec<(usize, usize, Part)>,
}

impl fmt::Write for PartsSink {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.out.push_str(s);
        Ok(())
    }
}

impl PartsWrite for PartsSink {
    type SubPartsWrite = Self;
    fn with_part(
        &mut self,
        part: Part,
        mut f: impl FnMut(&mut Self) -> fmt::Result,
    ) -> fmt::Result {
        let start = self.out.len();
        f(self)?;
        let end = self.out.len();
        if end > start {
            self.parts.push((start, end, part));
        }
        Ok(())
    }
}

/// How unannotated text of a format is named in `formatToParts`.
#[derive(Clone, Copy)]
enum Unlabeled {
    /// All of it is a literal.
    Literal,
    /// Surrounding white space is a literal, the rest is this type (`percentSign`, `currency`,
    /// `compact`).
    Affix(&'static str),
}

/// ECMA-402's name for a part ICU4X annotates.
fn part_type(part: &Part) -> &'static str {
    match part.value {
        "plusSign" => "plusSign",
        "minusSign" => "minusSign",
        "integer" => "integer",
        "fraction" => "fraction",
        "group" => "group",
        "decimal" => "decimal",
        "era" => "era",
        "year" | "extendedYear" => "year",
        "relatedYear" => "relatedYear",
        "yearName" => "yearName",
        "month" => "month",
        "day" => "day",
        "weekday" => "weekday",
        "dayPeriod" => "dayPeriod",
        "hour" => "hour",
        "minute" => "minute",
        "second" => "second",
        "timeZoneName" => "timeZoneName",
        "element" => "element",
        _ => "literal",
    }
}

/// White space and the bidirectional marks formats put around numbers: literals in parts.
fn is_spacing(c: char) -> bool {
    c.is_whitespace() || matches!(c, '\u{200e}' | '\u{200f}' | '\u{61c}')
}

/// Appends `(ty, text)`, merging adjacent literals.
fn push_part(out: &mut Vec<(&'static str, String)>, ty: &'static str, text: &str) {
    if text.is_empty() {
        return;
    }
    match out.last_mut() {
        Some((last, s)) if *last == ty && ty == "literal" => s.push_str(text),
        _ => out.push((ty, text.to_string())),
    }
}

/// Text around a number (a percent sign, a currency, a compact suffix): spacing is a literal, a
/// sign is a sign, the rest (from its first to its last other character) is one `kind` part.
fn push_affix(out: &mut Vec<(&'static str, String)>, run: &str, kind: &'static str) {
    let class = |c: char| -> &'static str {
        match c {
            '-' | '\u{2212}' => "minusSign",
            '+' => "plusSign",
            c if is_spacing(c) => "literal",
            _ => kind,
        }
    };
    let first = run.char_indices().find(|&(_, c)| class(c) == kind);
    let last = run.char_indices().rev().find(|&(_, c)| class(c) == kind);
    let (inner_start, inner_end) = match (first, last) {
        (Some((a, _)), Some((b, c))) => (a, b + c.len_utf8()),
        _ => (run.len(), run.len()),
    };
    let classified = |text: &str, out: &mut Vec<(&'static str, String)>| {
        let mut start = 0;
        let mut current: Option<&'static str> = None;
        for (i, c) in text.char_indices() {
            let k = class(c);
            if current.is_some_and(|cur| cur != k) {
                push_part(out, current.unwrap_or("literal"), &text[start..i]);
                start = i;
            }
            current = Some(k);
        }
        if let Some(cur) = current {
            push_part(out, cur, &text[start..]);
        }
    };
    classified(&run[..inner_start], out);
    push_part(out, kind, &run[inner_start..inner_end]);
    classified(&run[inner_end..], out);
}

/// The parts of `w`'s output as (type, text) pairs, adjacent literals merged.
fn parts_of(w: &impl Writeable, unlabeled: Unlabeled) -> Vec<(&'static str, String)> {
    let mut sink = PartsSink::default();
    // Writing to a String cannot fail.
    let _ = w.write_to_parts(&mut sink);
    let mut label: Vec<Option<(&'static str, &'static str)>> = vec![None; sink.out.len()];
    // Outer parts first; an inner part refines an outer one, except that the digits of a date
    // field stay that field (ICU4X marks them as a number inside the field).
    for (start, end, part) in sink.parts.iter().rev() {
        for l in &mut label[*start..*end] {
            let keep =
                matches!(l, Some((cat, _)) if *cat != "decimal" && part.category == "decimal");
            if !keep {
                *l = Some((part.category, part_type(part)));
            }
        }
    }
    let mut out: Vec<(&'static str, String)> = Vec::new();
    let text = &sink.out;
    let mut i = 0;
    while i < text.len() {
        let ty = label[i].map(|(_, t)| t);
        let mut j = i;
        while j < text.len() && label[j].map(|(_, t)| t) == ty {
            j += 1;
        }
        let run = &text[i..j];
        match (ty, unlabeled) {
            (Some(t @ ("minusSign" | "plusSign")), _) => {
                // Bidirectional marks written with the sign are literals, as ICU4C has them.
                let core = run.trim_matches(is_spacing);
                let lead = run.len() - run.trim_start_matches(is_spacing).len();
                push_part(&mut out, "literal", &run[..lead]);
                push_part(&mut out, t, core);
                push_part(&mut out, "literal", &run[lead + core.len()..]);
            }
            (Some(t), _) => push_part(&mut out, t, run),
            (None, Unlabeled::Literal) => push_part(&mut out, "literal", run),
            (None, Unlabeled::Affix(kind)) => push_affix(&mut out, run, kind),
        }
        i = j;
    }
    out
}

/// Parts of a number written inside an affix pattern (percent) by a formatter that does not
/// annotate its digits: the digits are found again by `decimal`, which does.
fn affixed_parts(
    full: &str,
    decimal: &DecimalFormatter,
    d: &Decimal,
    kind: &'static str,
) -> Vec<(&'static str, String)> {
    let mut abs = d.clone();
    abs.sign = fixed_decimal::Sign::None;
    let number = decimal.format(&abs);
    let digits = number.write_to_string();
    let Some(at) = full.find(digits.as_ref()) else {
        let mut out = Vec::new();
        push_affix(&mut out, full, kind);
        return out;
    };
    let mut out = Vec::new();
    push_affix(&mut out, &full[..at], kind);
    for (ty, text) in parts_of(&number, Unlabeled::Literal) {
        push_part(&mut out, ty, &text);
    }
    push_affix(&mut out, &full[at + digits.len()..], kind);
    out
}

/// Parts of a compact number ("1.2K", "١٫٢ ألف"): ICU4X does not annotate them. The number is
/// the span from the first to the last digit: digit runs split by one separator are the integer,
/// the decimal separator and the fraction (compact numbers are never grouped below 10,000).
fn compact_parts(full: &str) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    let first = full.char_indices().find(|(_, c)| c.is_numeric());
    let last = full.char_indices().rev().find(|(_, c)| c.is_numeric());
    let (Some((start, _)), Some((end, c))) = (first, last) else {
        push_affix(&mut out, full, "compact");
        return out;
    };
    let end = end + c.len_utf8();
    push_affix(&mut out, &full[..start], "compact");
    let number = &full[start..end];
    let mut seen_separator = false;
    let mut run_start = 0;
    let mut in_digits = true;
    for (i, c) in number.char_indices() {
        if c.is_numeric() != in_digits {
            let ty = match (in_digits, seen_separator) {
                (true, false) => "integer",
                (true, true) => "fraction",
                (false, _) => "decimal",
            };
            push_part(&mut out, ty, &number[run_start..i]);
            if !in_digits {
                seen_separator = true;
            }
            run_start = i;
            in_digits = !in_digits;
        }
    }
    push_part(
        &mut out,
        if seen_separator {
            "fraction"
        } else {
            "integer"
        },
        &number[run_start..],
    );
    push_affix(&mut out, &full[end..], "compact");
    out
}

/// The result for the guest: a string, or a flat array `[type, text, type, text, …]`.
fn result<'js>(
    ctx: &Ctx<'js>,
    w: &impl Writeable,
    parts: bool,
    unlabeled: Unlabeled,
) -> rquickjs::Result<Value<'js>> {
    if !parts {
        let s = w.write_to_string();
        return Ok(rquickjs::String::from_str(ctx.clone(), &s)?.into_value());
    }
    parts_array(ctx, parts_of(w, unlabeled))
}

/// A flat array `[type, text, type, text, …]`.
fn parts_array<'js>(
    ctx: &Ctx<'js>,
    parts: Vec<(&'static str, String)>,
) -> rquickjs::Result<Value<'js>> {
    let list = Array::new(ctx.clone())?;
    let mut n = 0;
    for (ty, text) in parts {
        list.set(n, ty)?;
        list.set(n + 1, text)?;
        n += 2;
    }
    Ok(list.into_value())
}

fn grouping(name: &str) -> Option<GroupingStrategy> {
    Some(match name {
        "auto" => GroupingStrategy::Auto,
        "always" => GroupingStrategy::Always,
        "min2" => GroupingStrategy::Min2,
        "false" => GroupingStrategy::Never,
        _ => return None,
    })
}

fn sign_display(name: &str) -> Option<SignDisplay> {
    Some(match name {
        "auto" => SignDisplay::Auto,
        "always" => SignDisplay::Always,
        "never" => SignDisplay::Never,
        "exceptZero" => SignDisplay::ExceptZero,
        "negative" => SignDisplay::Negative,
        _ => return None,
    })
}

/// Formats a number. `key` holds the resolved options, `|`-separated: style, currency,
/// currencyDisplay, notation, compactDisplay, useGrouping, signDisplay, then minimumIntegerDigits,
/// minimumFractionDigits, maximumFractionDigits, minimumSignificantDigits,
/// maximumSignificantDigits (0 for the last two when unused).
fn format_number<'js>(
    ctx: Ctx<'js>,
    tag: String,
    key: String,
    value: Value<'js>,
    parts: bool,
) -> rquickjs::Result<Value<'js>> {
    let fields: Vec<&str> = key.split('|').collect();
    if fields.len() != 12 {
        return Err(type_error(&ctx));
    }
    let (style, currency, display, notation, compact_display) =
        (fields[0], fields[1], fields[2], fields[3], fields[4]);
    let (Some(group), Some(sign), Some(digits)) = (
        grouping(fields[5]),
        sign_display(fields[6]),
        Digits::parse(&fields[7..]),
    ) else {
        return Err(type_error(&ctx));
    };
    let Some(mut d) = decimal_of(&ctx, &value) else {
        return Err(range_error(&ctx, "number out of the formattable range"));
    };
    if style == "percent" {
        d.multiply_pow10(2);
    }
    let loc = locale(&tag);
    let cache_key = format!(
        "n|{tag}|{style}|{currency}|{display}|{notation}|{compact_display}|{}",
        fields[5]
    );
    let made = cached(cache_key, || {
        let options = DecimalFormatterOptions::from(group);
        let e = |e: icu_provider::DataError| e.to_string();
        Ok(if notation == "compact" {
            let prefs = (&loc).into();
            let options = options.into();
            Cached::Compact(if compact_display == "long" {
                CompactDecimalFormatter::try_new_long(prefs, options).map_err(e)?
            } else {
                CompactDecimalFormatter::try_new_short(prefs, options).map_err(e)?
            })
        } else if style == "percent" {
            let decimal = DecimalFormatter::try_new((&loc).into(), options).map_err(e)?;
            let digits = DecimalFormatter::try_new((&loc).into(), options).map_err(e)?;
            Cached::Percent(
                PercentFormatter::try_new_with_decimal_formatter(
                    (&loc).into(),
                    decimal,
                    Default::default(),
                )
                .map_err(e)?,
                digits,
            )
        } else if style == "currency" {
            let code =
                CurrencyType::try_from_str(currency).map_err(|_| "bad currency".to_string())?;
            let prefs = (&loc).into();
            Cached::Currency(
                match display {
                    "code" => CurrencyFormatter::try_new_code(prefs, code, Default::default()),
                    "name" => CurrencyFormatter::try_new_name(prefs, code),
                    "narrowSymbol" => {
                        CurrencyFormatter::try_new_symbol_narrow(prefs, code, Default::default())
                    }
                    _ => CurrencyFormatter::try_new_symbol(prefs, code, Default::default()),
                }
                .map_err(e)?,
            )
        } else {
            Cached::Decimal(DecimalFormatter::try_new((&loc).into(), options).map_err(e)?)
        })
    })
    .map_err(|m| range_error(&ctx, &m))?;
    if !matches!(*made, Cached::Compact(_)) {
        digits.apply(&mut d);
    }
    d.apply_sign_display(sign);
    match &*made {
        Cached::Decimal(f) => result(&ctx, &f.format(&d), parts, Unlabeled::Literal),
        Cached::Compact(f) if parts => {
            let full = f.format(&d).write_to_string().into_owned();
            parts_array(&ctx, compact_parts(&full))
        }
        Cached::Compact(f) => result(&ctx, &f.format(&d), false, Unlabeled::Literal),
        Cached::Percent(f, digits) if parts => {
            let full = f.format(&d).write_to_string().into_owned();
            parts_array(&ctx, affixed_parts(&full, digits, &d, "percentSign"))
        }
        Cached::Percent(f, _) => result(&ctx, &f.format(&d), false, Unlabeled::Literal),
        Cached::Currency(f) => result(
            &ctx,
            &f.format_fixed_decimal(&d),
            parts,
            Unlabeled::Affix("currency"),
        ),
        _ => Err(type_error(&ctx)),
    }
}

fn plural_rules(tag: &str, kind: &str) -> Result<Rc<Cached>, String> {
    cached(format!("p|{tag}|{kind}"), || {
        let loc = locale(tag);
        let rules = if kind == "ordinal" {
            PluralRules::try_new_ordinal((&loc).into())
        } else {
            PluralRules::try_new_cardinal((&loc).into())
        };
        rules.map(Cached::Plural).map_err(|e| e.to_string())
    })
}

fn category_name(c: PluralCategory) -> &'static str {
    match c {
        PluralCategory::Zero => "zero",
        PluralCategory::One => "one",
        PluralCategory::Two => "two",
        PluralCategory::Few => "few",
        PluralCategory::Many => "many",
        PluralCategory::Other => "other",
    }
}

/// `Intl.PluralRules.prototype.select`: `digits` are the five digit options, `|`-separated.
fn plural_select<'js>(
    ctx: Ctx<'js>,
    tag: String,
    kind: String,
    digits: String,
    value: f64,
) -> rquickjs::Result<&'static str> {
    let fields: Vec<&str> = digits.split('|').collect();
    let Some(digits) = Digits::parse(&fields) else {
        return Err(type_error(&ctx));
    };
    if !value.is_finite() {
        return Ok("other");
    }
    let Some(mut d) = decimal_of(&ctx, &Value::new_number(ctx.clone(), value)) else {
        return Ok("other");
    };
    digits.apply(&mut d);
    let rules = plural_rules(&tag, &kind).map_err(|m| range_error(&ctx, &m))?;
    let Cached::Plural(rules) = &*rules else {
        return Err(type_error(&ctx));
    };
    Ok(category_name(rules.category_for(PluralOperands::from(&d))))
}

/// The plural categories a locale uses, in CLDR's order.
fn plural_categories(
    ctx: Ctx<'_>,
    tag: String,
    kind: String,
) -> rquickjs::Result<Vec<&'static str>> {
    let rules = plural_rules(&tag, &kind).map_err(|m| range_error(&ctx, &m))?;
    let Cached::Plural(rules) = &*rules else {
        return Err(type_error(&ctx));
    };
    Ok(rules.categories().map(category_name).collect())
}

/// `Intl.Collator.prototype.compare`. `key`: sensitivity, ignorePunctuation, numeric, caseFirst,
/// `|`-separated.
fn compare<'js>(
    ctx: Ctx<'js>,
    tag: String,
    key: String,
    a: Value<'js>,
    b: Value<'js>,
) -> rquickjs::Result<i32> {
    let made = cached(format!("c|{tag}|{key}"), || {
        let fields: Vec<&str> = key.split('|').collect();
        let [sensitivity, punctuation, numeric, case_first] = fields[..] else {
            return Err("bad collator key".to_string());
        };
        let mut options = CollatorOptions::default();
        let (strength, case_level) = match sensitivity {
            "base" => (Strength::Primary, false),
            "accent" => (Strength::Secondary, false),
            "case" => (Strength::Primary, true),
            _ => (Strength::Tertiary, false),
        };
        options.strength = Some(strength);
        if case_level {
            options.case_level = Some(CaseLevel::On);
        }
        if punctuation == "true" {
            options.alternate_handling = Some(AlternateHandling::Shifted);
        }
        let mut full = tag.clone();
        let mut ext = String::new();
        if numeric == "true" {
            ext.push_str("-kn");
        }
        if matches!(case_first, "upper" | "lower") {
            ext.push_str("-kf-");
            ext.push_str(case_first);
        }
        if !ext.is_empty() {
            full.push_str("-u");
            full.push_str(&ext);
        }
        Collator::try_new((&locale(&full)).into(), options)
            .map(Cached::Collator)
            .map_err(|e| e.to_string())
    })
    .map_err(|m| range_error(&ctx, &m))?;
    let Cached::Collator(c) = &*made else {
        return Err(type_error(&ctx));
    };
    let (Some(a), Some(b)) = (text_of(&ctx, &a), text_of(&ctx, &b)) else {
        return Err(type_error(&ctx));
    };
    Ok(match c.compare(&a.to_lossy(), &b.to_lossy()) {
        std::cmp::Ordering::Less => -1,
        std::cmp::Ordering::Equal => 0,
        std::cmp::Ordering::Greater => 1,
    })
}

/// `Intl.ListFormat`: `kind` is conjunction/disjunction/unit, `style` long/short/narrow; `items`
/// an array of strings (checked by `intl.js`).
fn format_list<'js>(
    ctx: Ctx<'js>,
    tag: String,
    kind: String,
    style: String,
    items: Array<'js>,
    parts: bool,
) -> rquickjs::Result<Value<'js>> {
    let made = cached(format!("l|{tag}|{kind}|{style}"), || {
        let loc = locale(&tag);
        let length = match style.as_str() {
            "short" => ListLength::Short,
            "narrow" => ListLength::Narrow,
            _ => ListLength::Wide,
        };
        let options = ListFormatterOptions::default().with_length(length);
        let f = match kind.as_str() {
            "disjunction" => ListFormatter::try_new_or((&loc).into(), options),
            "unit" => ListFormatter::try_new_unit((&loc).into(), options),
            _ => ListFormatter::try_new_and((&loc).into(), options),
        };
        f.map(Cached::List).map_err(|e| e.to_string())
    })
    .map_err(|m| range_error(&ctx, &m))?;
    let Cached::List(f) = &*made else {
        return Err(type_error(&ctx));
    };
    let mut texts = Vec::with_capacity(items.len());
    for item in items.iter::<Value>() {
        let item = item?;
        let Some(t) = text_of(&ctx, &item) else {
            return Err(type_error(&ctx));
        };
        texts.push(t.to_lossy());
    }
    result(
        &ctx,
        &f.format(texts.iter().map(|s| s.as_str())),
        parts,
        Unlabeled::Literal,
    )
}

/// `Intl.RelativeTimeFormat.prototype.format`: `unit` singular, `style` long/short/narrow,
/// `numeric` always/auto.
fn format_relative<'js>(
    ctx: Ctx<'js>,
    tag: String,
    unit: String,
    style: String,
    numeric: String,
    value: f64,
) -> rquickjs::Result<String> {
    let made = cached(format!("r|{tag}|{unit}|{style}|{numeric}"), || {
        let prefs = (&locale(&tag)).into();
        let mut options = RelativeTimeFormatterOptions::default();
        if numeric == "auto" {
            options = options.with_numeric(Numeric::Auto);
        }
        type Make = fn(
            icu_experimental::relativetime::RelativeTimeFormatterPreferences,
            RelativeTimeFormatterOptions,
        ) -> Result<RelativeTimeFormatter, icu_provider::DataError>;
        let make: Make = match (style.as_str(), unit.as_str()) {
            ("short", "second") => RelativeTimeFormatter::try_new_short_second,
            ("short", "minute") => RelativeTimeFormatter::try_new_short_minute,
            ("short", "hour") => RelativeTimeFormatter::try_new_short_hour,
            ("short", "day") => RelativeTimeFormatter::try_new_short_day,
            ("short", "week") => RelativeTimeFormatter::try_new_short_week,
            ("short", "month") => RelativeTimeFormatter::try_new_short_month,
            ("short", "quarter") => RelativeTimeFormatter::try_new_short_quarter,
            ("short", "year") => RelativeTimeFormatter::try_new_short_year,
            ("narrow", "second") => RelativeTimeFormatter::try_new_narrow_second,
            ("narrow", "minute") => RelativeTimeFormatter::try_new_narrow_minute,
            ("narrow", "hour") => RelativeTimeFormatter::try_new_narrow_hour,
            ("narrow", "day") => RelativeTimeFormatter::try_new_narrow_day,
            ("narrow", "week") => RelativeTimeFormatter::try_new_narrow_week,
            ("narrow", "month") => RelativeTimeFormatter::try_new_narrow_month,
            ("narrow", "quarter") => RelativeTimeFormatter::try_new_narrow_quarter,
            ("narrow", "year") => RelativeTimeFormatter::try_new_narrow_year,
            (_, "second") => RelativeTimeFormatter::try_new_long_second,
            (_, "minute") => RelativeTimeFormatter::try_new_long_minute,
            (_, "hour") => RelativeTimeFormatter::try_new_long_hour,
            (_, "day") => RelativeTimeFormatter::try_new_long_day,
            (_, "week") => RelativeTimeFormatter::try_new_long_week,
            (_, "month") => RelativeTimeFormatter::try_new_long_month,
            (_, "quarter") => RelativeTimeFormatter::try_new_long_quarter,
            (_, "year") => RelativeTimeFormatter::try_new_long_year,
            _ => return Err("bad unit".to_string()),
        };
        make(prefs, options)
            .map(Cached::Relative)
            .map_err(|e| e.to_string())
    })
    .map_err(|m| range_error(&ctx, &m))?;
    let Cached::Relative(f) = &*made else {
        return Err(type_error(&ctx));
    };
    let Some(mut d) = decimal_of(&ctx, &Value::new_number(ctx.clone(), value)) else {
        return Err(range_error(&ctx, "Invalid value"));
    };
    Digits {
        min_int: 1,
        min_frac: 0,
        max_frac: 3,
        min_sig: 0,
        max_sig: 0,
    }
    .apply(&mut d);
    Ok(f.format(d).write_to_string().into_owned())
}

/// The Rata Die (days since 0001-01-01, counted from 1) of 1970-01-01.
const UNIX_EPOCH_RATA_DIE: i64 = 719_163;

fn style_length(name: &str) -> Option<Length> {
    Some(match name {
        "full" | "long" => Length::Long,
        "medium" => Length::Medium,
        "short" => Length::Short,
        _ => return None,
    })
}

/// The field set for a `DateTimeFormat`'s resolved options: `key` holds dateStyle, timeStyle,
/// weekday, era, year, month, day, hour, minute, second, fractionalSecondDigits, timeZoneName,
/// `|`-separated ('' when absent).
fn field_set(key: &str) -> Option<CompositeFieldSet> {
    let f: Vec<&str> = key.split('|').collect();
    let [date_style, time_style, weekday, era, year, month, day, hour, minute, second, fraction, zone] =
        f[..]
    else {
        return None;
    };
    if !date_style.is_empty() || !time_style.is_empty() {
        let mut b = FieldSetBuilder::default();
        if let Some(len) = style_length(date_style) {
            b.length = Some(len);
            b.date_fields = Some(if date_style == "full" {
                DateFields::YMDE
            } else {
                DateFields::YMD
            });
            if date_style != "short" {
                b.year_style = Some(YearStyle::Auto);
            }
        }
        if let Some(len) = style_length(time_style) {
            if b.length.is_none() {
                b.length = Some(len);
            }
            b.time_precision = Some(if time_style == "short" {
                TimePrecision::Minute
            } else {
                TimePrecision::Second
            });
            b.zone_style = match time_style {
                "full" => Some(ZoneStyle::SpecificLong),
                "long" => Some(ZoneStyle::SpecificShort),
                _ => None,
            };
        }
        return b.build_composite().ok();
    }
    let mut bag = DateTimeFieldBag::default();
    let text = |v: &str| match v {
        "long" => Some(0),
        "short" => Some(1),
        "narrow" => Some(2),
        _ => None,
    };
    let num = |v: &str| match v {
        "numeric" => Some(false),
        "2-digit" => Some(true),
        _ => None,
    };
    bag.weekday = text(weekday).map(|i| {
        [
            field::Weekday::Long,
            field::Weekday::Short,
            field::Weekday::Narrow,
        ][i]
    });
    bag.era = text(era).map(|i| [field::Era::Long, field::Era::Short, field::Era::Narrow][i]);
    bag.year = num(year).map(|two| {
        if two {
            field::Year::TwoDigit
        } else {
            field::Year::Numeric
        }
    });
    bag.month = match month {
        "numeric" => Some(field::Month::Numeric),
        "2-digit" => Some(field::Month::TwoDigit),
        _ => text(month).map(|i| {
            [
                field::Month::Long,
                field::Month::Short,
                field::Month::Narrow,
            ][i]
        }),
    };
    bag.day = num(day).map(|two| {
        if two {
            field::Day::TwoDigit
        } else {
            field::Day::Numeric
        }
    });
    bag.hour = num(hour).map(|two| {
        if two {
            field::Hour::TwoDigit
        } else {
            field::Hour::Numeric
        }
    });
    bag.minute = num(minute).map(|two| {
        if two {
            field::Minute::TwoDigit
        } else {
            field::Minute::Numeric
        }
    });
    bag.second = num(second).map(|two| {
        if two {
            field::Second::TwoDigit
        } else {
            field::Second::Numeric
        }
    });
    bag.fractional_second_digits = match fraction {
        "1" => Some(field::FractionalSecondDigits::F1),
        "2" => Some(field::FractionalSecondDigits::F2),
        "3" => Some(field::FractionalSecondDigits::F3),
        _ => None,
    };
    bag.time_zone_name = match zone {
        "long" => Some(field::TimeZoneName::LongSpecific),
        "short" => Some(field::TimeZoneName::ShortSpecific),
        "shortOffset" => Some(field::TimeZoneName::ShortOffset),
        "longOffset" => Some(field::TimeZoneName::LongOffset),
        "shortGeneric" => Some(field::TimeZoneName::ShortGeneric),
        "longGeneric" => Some(field::TimeZoneName::LongGeneric),
        _ => None,
    };
    bag.to_field_set_builder().build_composite().ok()
}

/// `Intl.DateTimeFormat.prototype.format` for a time value (ms since the epoch) in UTC. `hc` is
/// h12, h23 or '' (the locale's own).
fn format_date<'js>(
    ctx: Ctx<'js>,
    tag: String,
    key: String,
    hc: String,
    time: f64,
    parts: bool,
) -> rquickjs::Result<Value<'js>> {
    if !time.is_finite() || time.abs() > 8.64e15 {
        return Err(range_error(&ctx, "Invalid time value"));
    }
    let made = cached(format!("d|{tag}|{hc}|{key}"), || {
        let Some(fields) = field_set(&key) else {
            return Err("unsupported combination of date and time fields".to_string());
        };
        let mut full = tag.clone();
        if matches!(hc.as_str(), "h12" | "h23" | "h11" | "h24") {
            full.push_str("-u-hc-");
            full.push_str(&hc);
        }
        DateTimeFormatter::try_new((&locale(&full)).into(), fields)
            .map(|f| Cached::Date(Box::new(f)))
            .map_err(|e| e.to_string())
    })
    .map_err(|m| range_error(&ctx, &m))?;
    let Cached::Date(f) = &*made else {
        return Err(type_error(&ctx));
    };
    let ms = time as i64;
    let days = ms.div_euclid(86_400_000);
    let in_day = ms.rem_euclid(86_400_000);
    // From the day number: ECMAScript's ±275,760 years are inside ICU4X's range (±999,999
    // years), while its year-month-day constructors stop at ±9999.
    let date = icu_calendar::Date::from_rata_die(
        icu_calendar::types::RataDie::new(UNIX_EPOCH_RATA_DIE + days),
        icu_calendar::Iso,
    );
    let clock = icu_time::Time::try_new(
        (in_day / 3_600_000) as u8,
        (in_day / 60_000 % 60) as u8,
        (in_day / 1000 % 60) as u8,
        (in_day % 1000) as u32 * 1_000_000,
    )
    .ok();
    let Some(clock) = clock else {
        return Err(range_error(&ctx, "Invalid time value"));
    };
    let zone = icu_time::TimeZoneInfo::utc().at_date_time(icu_time::DateTime { date, time: clock });
    let input = icu_time::ZonedDateTime {
        date,
        time: clock,
        zone,
    };
    let mut list = parts_of(&f.format(&input), Unlabeled::Literal);
    adjust_widths(&mut list, &key);
    if parts {
        return parts_array(&ctx, list);
    }
    // CLDR 42+ writes U+202F before day periods ("3:04\u{202f}PM") and in a few other places;
    // V8's `format` (so Node's and Chrome's) prints a plain space there, and scripts compare
    // against that. Its `formatToParts` keeps U+202F, and so does this one.
    let text: String = list.iter().map(|(_, t)| t.as_str()).collect();
    let text = text.replace('\u{202f}', " ");
    Ok(rquickjs::String::from_str(ctx.clone(), &text)?.into_value())
}

/// A `numeric` hour with `2-digit` minutes drops the leading zero of CLDR's two-digit hour
/// ("9:30" rather than "09:30"), as ICU4C's pattern generator adjusts it for that request.
fn adjust_widths(list: &mut [(&'static str, String)], key: &str) {
    let f: Vec<&str> = key.split('|').collect();
    let asked =
        f.get(7).is_some_and(|h| *h == "numeric") && f.get(8).is_some_and(|m| *m == "2-digit");
    if !asked {
        return;
    }
    for (ty, text) in list.iter_mut() {
        if *ty != "hour" {
            continue;
        }
        let mut chars = text.chars();
        if let (Some(first), Some(second), None) = (chars.next(), chars.next(), chars.next()) {
            if is_zero_digit(first) && second.is_numeric() {
                *text = second.to_string();
            }
        }
    }
}

/// Zero in the decimal digit sets CLDR locales use by default.
fn is_zero_digit(c: char) -> bool {
    matches!(
        c,
        '0' | '\u{660}'
            | '\u{6f0}'
            | '\u{966}'
            | '\u{9e6}'
            | '\u{a66}'
            | '\u{ae6}'
            | '\u{b66}'
            | '\u{be6}'
            | '\u{c66}'
            | '\u{ce6}'
            | '\u{d66}'
            | '\u{e50}'
            | '\u{ed0}'
            | '\u{1040}'
            | '\u{17e0}'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_epoch_is_1970_01_01() {
        let date = icu_calendar::Date::from_rata_die(
            icu_calendar::types::RataDie::new(UNIX_EPOCH_RATA_DIE),
            icu_calendar::Iso,
        );
        assert_eq!(
            (
                date.year().extended_year(),
                date.month().ordinal,
                date.day_of_month().0
            ),
            (1970, 1, 1)
        );
    }

    #[test]
    fn digits_round_half_away_from_zero_and_pad() {
        let fmt = |x: &str, d: Digits| {
            let mut v = Decimal::try_from_str(x).unwrap();
            d.apply(&mut v);
            v.to_string()
        };
        let frac = |min_frac, max_frac| Digits {
            min_int: 1,
            min_frac,
            max_frac,
            min_sig: 0,
            max_sig: 0,
        };
        assert_eq!(fmt("2.5", frac(0, 0)), "3");
        assert_eq!(fmt("-2.5", frac(0, 0)), "-3");
        assert_eq!(fmt("1.005", frac(2, 2)), "1.01");
        assert_eq!(fmt("1.2", frac(2, 3)), "1.20");
        assert_eq!(fmt("1.23456", frac(0, 3)), "1.235");
        let sig = Digits {
            min_int: 1,
            min_frac: 0,
            max_frac: 0,
            min_sig: 1,
            max_sig: 3,
        };
        assert_eq!(fmt("123456", sig), "123000");
        assert_eq!(fmt("0.0012345", sig), "0.00123");
        assert_eq!(fmt("999.9", sig), "1000");
        let padded = Digits {
            min_int: 3,
            ..frac(0, 3)
        };
        assert_eq!(fmt("7", padded), "007");
    }

    #[test]
    fn bad_digit_options_are_refused() {
        assert!(Digits::parse(&["1", "3", "2", "0", "0"]).is_none());
        assert!(Digits::parse(&["0", "0", "3", "0", "0"]).is_none());
        assert!(Digits::parse(&["1", "0", "3", "5", "2"]).is_none());
        assert!(Digits::parse(&["1", "0", "x", "0", "0"]).is_none());
    }

    #[test]
    fn canonical_tags() {
        assert_eq!(canonicalize("EN-us".into()).as_deref(), Some("en-US"));
        assert_eq!(canonicalize("iw".into()).as_deref(), Some("he"));
        assert_eq!(canonicalize("en_US".into()), None);
        assert_eq!(canonicalize("".into()), None);
        assert_eq!(canonicalize("not a tag".into()), None);
    }

    #[test]
    fn every_style_of_date_field_set_builds() {
        for d in ["", "full", "long", "medium", "short"] {
            for t in ["", "full", "long", "medium", "short"] {
                if d.is_empty() && t.is_empty() {
                    continue;
                }
                let key = format!("{d}|{t}||||||||||");
                assert!(field_set(&key).is_some(), "{key}");
            }
        }
        assert!(field_set("||long||numeric|long|numeric|numeric|2-digit|2-digit||").is_some());
        assert!(field_set("bad").is_none());
    }
}
