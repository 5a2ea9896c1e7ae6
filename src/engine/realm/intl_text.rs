//! The text operations of `Intl`: `Intl.Segmenter`'s breaks (ICU4X's UAX #29 segmenters, with
//! the dictionaries for Chinese, Japanese, Thai, Lao, Khmer and Burmese) and the locale-aware
//! `toLocaleUpperCase`/`toLocaleLowerCase` (ICU4X's full case mapping, with the Turkish,
//! Azerbaijani, Lithuanian and Greek rules).
//!
//! Both run on the guest's string on the guest's thread. Their cost is linear in the string,
//! and the host keeps no more than copies of it: the breaks are written into a typed array the
//! guest allocates (so they count toward the run's memory limit), and the work is counted
//! toward the interrupt budget as it goes, so the deadline and an abort stop it.

use super::super::{ffi, raw};
use icu_casemap::CaseMapper;
use icu_locale::LanguageIdentifier;
use icu_segmenter::options::{SentenceBreakOptions, WordBreakOptions};
use icu_segmenter::{GraphemeClusterSegmenter, SentenceSegmenter, WordSegmenter};
use rquickjs::{Ctx, Exception, Function, TypedArray, Value};

/// Breaks found between two polls of the interrupt handler.
const BREAKS_PER_POLL: usize = 1024;
/// Case-mapped text is flushed (and the work counted) at the first white space past this many
/// UTF-8 bytes; white space ends every context a case mapping rule looks at.
const CASE_CHUNK_BYTES: usize = 32 << 10;
/// The longest string QuickJS can make (`JS_STRING_LEN_MAX`).
const MAX_STRING_UNITS: usize = (1 << 30) - 1;
/// In a word segmenter's breaks: the segment ending here is word-like (letters or numbers).
/// String indices stay below 2^30, so the bit is free.
const WORD_LIKE: u32 = 1 << 31;

/// A segmenter for one granularity and locale.
enum Segmenter {
    Grapheme,
    Word(Box<WordSegmenter>),
    Sentence(Box<SentenceSegmenter>),
}

impl Segmenter {
    fn new(granularity: &str, language: &LanguageIdentifier) -> Result<Segmenter, String> {
        let tailored = (language != &LanguageIdentifier::UNKNOWN).then_some(language);
        match granularity {
            "grapheme" => Ok(Segmenter::Grapheme),
            "word" => {
                let mut options = WordBreakOptions::default();
                options.content_locale = tailored;
                WordSegmenter::try_new_dictionary(options)
                    .map(|w| Segmenter::Word(Box::new(w)))
                    .map_err(|e| e.to_string())
            }
            "sentence" => {
                let mut options = SentenceBreakOptions::default();
                options.content_locale = tailored;
                SentenceSegmenter::try_new(options)
                    .map(|s| Segmenter::Sentence(Box::new(s)))
                    .map_err(|e| e.to_string())
            }
            _ => Err(format!("unknown granularity {granularity}")),
        }
    }

    /// Calls `each(end, word_like)` for every segment of `text` in order, `end` the UTF-16
    /// index after it; stops at the first error.
    fn for_each_segment<E>(
        &self,
        text: &[u16],
        mut each: impl FnMut(usize, bool) -> Result<(), E>,
    ) -> Result<(), E> {
        match self {
            Segmenter::Grapheme => {
                for end in GraphemeClusterSegmenter::new().segment_utf16(text).skip(1) {
                    each(end, false)?;
                }
            }
            Segmenter::Word(w) => {
                let mut breaks = w.as_borrowed().segment_utf16(text);
                breaks.next();
                while let Some(end) = breaks.next() {
                    each(end, breaks.is_word_like())?;
                }
            }
            Segmenter::Sentence(s) => {
                for end in s.as_borrowed().segment_utf16(text).skip(1) {
                    each(end, false)?;
                }
            }
        }
        Ok(())
    }
}

/// Counts the work of the breaks found so far every [`BREAKS_PER_POLL`] breaks.
struct Poller<'a, 'js> {
    ctx: &'a Ctx<'js>,
    breaks: usize,
    polled_at: usize,
}

impl Poller<'_, '_> {
    fn advance(&mut self, end: usize) -> rquickjs::Result<()> {
        self.breaks += 1;
        if self.breaks.is_multiple_of(BREAKS_PER_POLL) {
            let units = end.saturating_sub(self.polled_at) + BREAKS_PER_POLL;
            self.polled_at = end;
            ffi::poll_interrupts(self.ctx, units)?;
        }
        Ok(())
    }
}

/// The language a tag resolved by `intl_impl.js` names (`und` when it does not parse).
fn language_of(tag: &str) -> LanguageIdentifier {
    LanguageIdentifier::try_from_str(tag)
        .map(|id| LanguageIdentifier::from((id.language, id.script, id.region)))
        .unwrap_or(LanguageIdentifier::UNKNOWN)
}

/// `Intl.Segmenter`'s segments of `text`: a `Uint32Array` made by `allocate(count)` (in the
/// guest's heap) holding each segment's end index, with [`WORD_LIKE`] set for word-like words.
/// The breaks are found twice, once to count them and once to write them, so the host holds
/// nothing but a copy of the text.
pub(super) fn segment_breaks<'js>(
    ctx: Ctx<'js>,
    tag: String,
    granularity: String,
    text: Value<'js>,
    allocate: Function<'js>,
) -> rquickjs::Result<Value<'js>> {
    let segmenter = Segmenter::new(&granularity, &language_of(&tag))
        .map_err(|m| Exception::throw_range(&ctx, &m))?;
    let Some(units) = raw::string_utf16(&ctx, &text) else {
        return Err(Exception::throw_type(&ctx, "invalid Intl helper arguments"));
    };
    let mut poller = Poller {
        ctx: &ctx,
        breaks: 0,
        polled_at: 0,
    };
    segmenter.for_each_segment(&units, |end, _| poller.advance(end))?;
    let count = poller.breaks;
    let array: Value = allocate.call((count,))?;
    let typed = TypedArray::<u32>::from_value(array.clone())?;
    let Some(raw) = typed.as_raw().filter(|_| typed.len() == count) else {
        return Err(Exception::throw_type(&ctx, "invalid Intl helper arguments"));
    };
    let out = raw.as_ptr().cast::<u8>();
    let mut poller = Poller {
        ctx: &ctx,
        breaks: 0,
        polled_at: 0,
    };
    let mut written = 0usize;
    segmenter.for_each_segment(&units, |end, word_like| {
        // The text is the same, so the second pass finds the same breaks; never more than fit.
        if written >= count {
            return Ok(());
        }
        let value = u32::try_from(end).unwrap_or(0) | if word_like { WORD_LIKE } else { 0 };
        // SAFETY: `out` points at the `count * 4` bytes of the typed array's view (checked
        // above), which nothing else touches while this native call runs on the guest's thread;
        // `written < count`, and the write is unaligned-safe.
        unsafe {
            out.add(written * 4)
                .cast::<[u8; 4]>()
                .write_unaligned(value.to_ne_bytes())
        };
        written += 1;
        poller.advance(end)
    })?;
    Ok(array)
}

/// Case-maps `text` as `language` does (ECMA-402's TransformCase): ICU4X's full mapping, so
/// `ß` uppercases to `SS` and `i` in Turkish to `İ`. Lone surrogates are kept as they are.
pub(super) fn transform_case<'js>(
    ctx: Ctx<'js>,
    tag: String,
    upper: bool,
    text: Value<'js>,
) -> rquickjs::Result<Value<'js>> {
    let Some(units) = raw::string_utf16(&ctx, &text) else {
        return Err(Exception::throw_type(&ctx, "invalid Intl helper arguments"));
    };
    let language = language_of(&tag);
    let mapper = CaseMapper::new();
    let mut out: Vec<u16> = Vec::with_capacity(units.len());
    let mut chunk = String::new();
    let flush = |chunk: &mut String, out: &mut Vec<u16>| -> rquickjs::Result<()> {
        if chunk.is_empty() {
            return Ok(());
        }
        let mapped = if upper {
            mapper.uppercase_to_string(chunk, &language)
        } else {
            mapper.lowercase_to_string(chunk, &language)
        };
        out.extend(mapped.encode_utf16());
        ffi::poll_interrupts(&ctx, chunk.len())?;
        chunk.clear();
        if out.len() > MAX_STRING_UNITS {
            return Err(Exception::throw_range(&ctx, "invalid string length"));
        }
        Ok(())
    };
    for decoded in char::decode_utf16(units.iter().copied()) {
        match decoded {
            Ok(c) => {
                if chunk.len() >= CASE_CHUNK_BYTES && c.is_ascii_whitespace() {
                    flush(&mut chunk, &mut out)?;
                }
                chunk.push(c);
            }
            Err(lone) => {
                flush(&mut chunk, &mut out)?;
                out.push(lone.unpaired_surrogate());
            }
        }
    }
    flush(&mut chunk, &mut out)?;
    raw::new_string_utf16(&ctx, &out).ok_or(rquickjs::Error::Exception)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utf16(s: &str) -> Vec<u16> {
        s.encode_utf16().collect()
    }

    fn ends(granularity: &str, tag: &str, text: &str) -> Vec<(usize, bool)> {
        let s = Segmenter::new(granularity, &language_of(tag)).expect("a segmenter");
        let mut out = Vec::new();
        s.for_each_segment(&utf16(text), |end, w| {
            out.push((end, w));
            Ok::<(), ()>(())
        })
        .expect("no error");
        out
    }

    #[test]
    fn graphemes_keep_emoji_sequences_and_combining_marks_together() {
        // A family (four emoji joined by ZWJ, 11 code units), then "é" as e + U+0301.
        let text = "\u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}\u{200D}\u{1F466}e\u{301}x";
        let got: Vec<usize> = ends("grapheme", "en", text)
            .into_iter()
            .map(|(e, _)| e)
            .collect();
        assert_eq!(got, vec![11, 13, 14]);
    }

    #[test]
    fn words_say_which_segments_are_word_like() {
        let got = ends("word", "en", "Hi, 42 cats!");
        assert_eq!(
            got,
            vec![
                (2, true),
                (3, false),
                (4, false),
                (6, true),
                (7, false),
                (11, true),
                (12, false)
            ]
        );
    }

    #[test]
    fn chinese_and_thai_words_come_from_the_dictionaries() {
        let ja: Vec<usize> = ends("word", "ja", "こんにちは世界")
            .into_iter()
            .map(|(e, _)| e)
            .collect();
        assert_eq!(ja, vec![5, 7]);
        let th: Vec<usize> = ends("word", "th", "ทุกสองสัปดาห์")
            .into_iter()
            .map(|(e, _)| e)
            .collect();
        assert_eq!(th, vec![3, 6, 13]);
    }

    #[test]
    fn sentences_end_after_their_terminator_and_spaces() {
        let got: Vec<usize> = ends("sentence", "en", "One. Two? Three!")
            .into_iter()
            .map(|(e, _)| e)
            .collect();
        assert_eq!(got, vec![5, 10, 16]);
    }

    #[test]
    fn empty_text_has_no_segments() {
        for g in ["grapheme", "word", "sentence"] {
            assert!(ends(g, "en", "").is_empty(), "{g}");
        }
    }

    #[test]
    fn an_unknown_granularity_is_refused() {
        assert!(Segmenter::new("line", &language_of("en")).is_err());
    }

    #[test]
    fn languages_are_read_from_resolved_tags() {
        assert_eq!(language_of("tr-TR").language.as_str(), "tr");
        assert_eq!(language_of("not a tag"), LanguageIdentifier::UNKNOWN);
    }
}
