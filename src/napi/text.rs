//! The text algorithms the JavaScript tools and dialects share, from the workspace's `glob`,
//! `line_match` and `text` modules. Conversion only.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use super::workspace::{run, Res};
use crate::workspace::glob::{self, BareNames};
use crate::workspace::line_match::{self, Leniency};
use crate::workspace::text::{self as text_ops, DiffText};
use crate::workspace::WsError;

/// Glob patterns compiled once and matched against many relative paths (minimatch's rules with
/// `dot: true`; see the workspace's `glob` module). Throws `INVALID_INPUT` for a pattern that is
/// not a glob or is longer than 1024 bytes, or for more than 256 patterns.
#[napi]
pub struct GlobMatcher {
    inner: glob::GlobMatcher,
}

#[napi]
impl GlobMatcher {
    /// With `bareNamesAnyDepth`, a pattern without `*` also matches a name at any depth and
    /// everything below it.
    #[napi(constructor, catch_unwind)]
    pub fn new(
        env: Env,
        patterns: Vec<String>,
        bare_names_any_depth: Option<bool>,
    ) -> Result<Self> {
        run(env, |_| {
            let bare = if bare_names_any_depth.unwrap_or(false) {
                BareNames::AnyDepth
            } else {
                BareNames::AsWritten
            };
            Ok(GlobMatcher {
                inner: glob::GlobMatcher::new(&patterns, bare)?,
            })
        })
    }

    /// Whether `path` (relative, `/`-separated) matches one of the patterns.
    #[napi(js_name = "isMatch")]
    pub fn is_match(&self, path: String) -> bool {
        self.inner.is_match(&path)
    }
}

fn leniency(name: Option<&str>) -> Res<Option<Leniency>> {
    match name {
        None => Ok(None),
        Some("exact") => Ok(Some(Leniency::Exact)),
        Some("trailing") => Ok(Some(Leniency::TrailingSpace)),
        Some("surrounding") => Ok(Some(Leniency::SurroundingSpace)),
        Some(other) => Err(WsError::invalid_input(format!(
            "leniency must be 'exact', 'trailing' or 'surrounding', got {other:?}"
        ))),
    }
}

/// A count or line number as a JavaScript number.
fn num(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn position(found: Option<usize>) -> i64 {
    found.map_or(-1, |at| num(at as u64))
}

/// A text's lines (split at every line feed, as JavaScript's `split` does, so a final line feed
/// leaves an empty last line), indexed to find lines and blocks of lines in linear time.
/// Leniency: `'exact'`, `'trailing'` (trailing whitespace ignored) or `'surrounding'`
/// (surrounding whitespace ignored); left out, each in turn.
#[napi]
pub struct LineIndex {
    inner: line_match::LineIndex,
}

#[napi]
impl LineIndex {
    #[napi(constructor, catch_unwind)]
    pub fn new(env: Env, text: String) -> Result<Self> {
        run(env, |_| {
            Ok(LineIndex {
                inner: line_match::LineIndex::new(text)?,
            })
        })
    }

    /// Number of lines.
    #[napi(getter)]
    pub fn length(&self) -> u32 {
        u32::try_from(self.inner.len()).unwrap_or(u32::MAX)
    }

    /// The first line number `i >= from` where `wanted` is lines `i..i + wanted.length` and
    /// ends by `end` (default: the last line); -1 if none. `TOO_COMPLEX` once the index's work
    /// budget is spent.
    #[napi(
        js_name = "findBlock",
        catch_unwind,
        ts_args_type = "wanted: string[], from: number, end?: number | null, leniency?: 'exact' | 'trailing' | 'surrounding' | null"
    )]
    pub fn find_block(
        &mut self,
        env: Env,
        wanted: Vec<String>,
        from: u32,
        end: Option<u32>,
        leniency: Option<String>,
    ) -> Result<i64> {
        run(env, |_| {
            let end = end.map_or(usize::MAX, |e| e as usize);
            let found = match self::leniency(leniency.as_deref())? {
                Some(how) => self.inner.find_block_as(&wanted, from as usize, end, how)?,
                None => self.inner.find_block(&wanted, from as usize, end)?,
            };
            Ok(position(found))
        })
    }

    /// How many leading lines of `wanted` occur together (surrounding whitespace ignored) at
    /// or after `from`.
    #[napi(js_name = "matchingPrefix", catch_unwind)]
    pub fn matching_prefix(&mut self, env: Env, wanted: Vec<String>, from: u32) -> Result<u32> {
        run(env, |_| {
            let n = self.inner.matching_prefix(&wanted, from as usize)?;
            Ok(u32::try_from(n).unwrap_or(u32::MAX))
        })
    }

    /// The first line number `>= from` equal to `line` under `leniency`; -1 if none.
    #[napi(
        js_name = "findLine",
        catch_unwind,
        ts_args_type = "line: string, from: number, leniency: 'exact' | 'trailing' | 'surrounding'"
    )]
    pub fn find_line(&self, env: Env, line: String, from: u32, leniency: String) -> Result<i64> {
        run(env, |_| {
            let how = self::leniency(Some(&leniency))?.unwrap_or(Leniency::Exact);
            Ok(position(self.inner.find_line(&line, from as usize, how)))
        })
    }
}

/// A diff cut at a byte limit.
#[napi(object)]
pub struct CappedText {
    pub text: String,
    /// Whether lines were left out for want of room.
    pub truncated: bool,
}

/// A file patch as the `diff` package's `createTwoFilesPatch(name, name, before, after,
/// 'original', 'modified')` prints it, with four lines of context, at most `maxBytes` long
/// (whole lines; `truncated` tells whether lines were left out).
#[napi(js_name = "twoFilesPatch", catch_unwind)]
pub fn two_files_patch(name: String, before: String, after: String, max_bytes: u32) -> CappedText {
    let mut out = DiffText::new(max_bytes as usize);
    text_ops::write_two_files_patch(&mut out, &name, &before, &after, 4);
    let truncated = out.is_cut();
    CappedText {
        text: out.into_string(),
        truncated,
    }
}

/// Where the occurrences of a literal string start.
#[napi(object)]
pub struct Occurrences {
    /// 1-based lines of the first occurrences (at most the number asked for).
    pub lines: Vec<u32>,
    /// How many occurrences there are in all.
    pub count: i64,
}

/// The lines where the occurrences of `needle` in `text` start (left to right, without
/// overlap): the first `keep` of them and the count of all.
#[napi(js_name = "occurrenceLines", catch_unwind)]
pub fn occurrence_lines(text: String, needle: String, keep: u32) -> Occurrences {
    let (lines, count) = line_match::occurrence_lines(&text, &needle, keep as usize);
    Occurrences {
        lines: lines
            .into_iter()
            .map(|l| u32::try_from(l).unwrap_or(u32::MAX))
            .collect(),
        count: num(count as u64),
    }
}
