//! Pure helpers for line-based reading and patching, literal search and text diffs.
//!
//! Line conventions (the same an editor shows):
//! - lines are numbered from 1 and ranges are inclusive: lines `2..=3` are lines 2 and 3;
//! - a line ends at `\n`; a `\r` before it belongs to the terminator, not the text;
//! - a final newline does not start an extra empty line: `"a\nb\n"` has two lines, and so
//!   has `"a\nb"`; the empty file has none.

use std::collections::VecDeque;

use imara_diff::{Algorithm, Diff, Hunk, InternedInput, Token};

use super::error::{WsError, WsResult};

/// How many leading bytes are inspected to decide whether a file is binary.
pub const BINARY_SNIFF_LEN: usize = 8 * 1024;

/// The lines of `text` without their terminators, following the module's conventions (a final
/// newline does not start another line; `\r` before `\n` belongs to the terminator).
pub fn text_lines(text: &str) -> Vec<&str> {
    if text.is_empty() {
        return Vec::new();
    }
    let body = text.strip_suffix('\n').unwrap_or(text);
    body.split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect()
}

/// Whether `data` looks binary: it has a NUL byte in its first [`BINARY_SNIFF_LEN`] bytes.
pub fn is_binary(data: &[u8]) -> bool {
    data[..data.len().min(BINARY_SNIFF_LEN)].contains(&0)
}

/// One line inside a byte buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineSpan {
    /// Offset of the first byte of the line.
    pub start: usize,
    /// Offset just past the line's text (before `\r\n` or `\n`).
    pub text_end: usize,
    /// Offset just past the terminator (equal to `text_end` for a last line without one).
    pub end: usize,
}

/// Splits `data` into lines following the module's conventions.
pub fn line_spans(data: &[u8]) -> Vec<LineSpan> {
    let mut spans = Vec::new();
    let mut start = 0;
    while start < data.len() {
        match data[start..].iter().position(|&b| b == b'\n') {
            Some(rel) => {
                let nl = start + rel;
                let text_end = if nl > start && data[nl - 1] == b'\r' {
                    nl - 1
                } else {
                    nl
                };
                spans.push(LineSpan {
                    start,
                    text_end,
                    end: nl + 1,
                });
                start = nl + 1;
            }
            None => {
                spans.push(LineSpan {
                    start,
                    text_end: data.len(),
                    end: data.len(),
                });
                start = data.len();
            }
        }
    }
    spans
}

/// Number of lines in `data`.
#[cfg(test)]
pub fn count_lines(data: &[u8]) -> usize {
    line_spans(data).len()
}

/// The line terminator a file uses: `"\r\n"` if its first line ends that way, else `"\n"`.
pub fn detect_eol(data: &[u8]) -> &'static str {
    match data.iter().position(|&b| b == b'\n') {
        Some(i) if i > 0 && data[i - 1] == b'\r' => "\r\n",
        _ => "\n",
    }
}

/// A window of lines read from a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineSlice {
    /// First line returned (1-based).
    pub start: usize,
    /// Last line returned (1-based, inclusive); `start - 1` when nothing was returned.
    pub end: usize,
    /// Number of lines in the whole file.
    pub total_lines: usize,
    /// The lines' text, without terminators (invalid UTF-8 is replaced).
    pub lines: Vec<String>,
    /// Whether the byte limit left out lines of the window asked for, or cut a line short.
    pub truncated: bool,
    /// Whether the one line returned is only its first bytes (it alone was over the limit).
    pub line_cut: bool,
    /// Whether the file ends with a line terminator.
    pub final_newline: bool,
}

/// Which end of a window of lines [`select_lines`] keeps when the window is over its byte limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeepLines {
    /// The first lines of the window (reading on).
    First,
    /// The last lines of the window (a tail).
    Last,
}

/// Byte offset where line `n` (1-based) starts; `n` must be a line of `data` or one past the
/// last.
fn line_offset(data: &[u8], n: usize) -> usize {
    if n <= 1 {
        return 0;
    }
    data.iter()
        .enumerate()
        .filter(|&(_, &b)| b == b'\n')
        .nth(n - 2)
        .map_or(data.len(), |(i, _)| i + 1)
}

/// The line starting at `start`: its span, found without looking past its end.
fn span_at(data: &[u8], start: usize) -> LineSpan {
    let end = data[start..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(data.len(), |rel| start + rel + 1);
    span_between(data, start, end)
}

/// The line ending at `end` (just past its terminator, or the end of `data`).
fn span_before(data: &[u8], end: usize) -> LineSpan {
    let body_end = if end > 0 && data[end - 1] == b'\n' {
        end - 1
    } else {
        end
    };
    let start = data[..body_end]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    span_between(data, start, end)
}

fn span_between(data: &[u8], start: usize, end: usize) -> LineSpan {
    let mut text_end = end;
    if text_end > start && data[text_end - 1] == b'\n' {
        text_end -= 1;
        if text_end > start && data[text_end - 1] == b'\r' {
            text_end -= 1;
        }
    }
    LineSpan {
        start,
        text_end,
        end,
    }
}

/// At most `max` leading bytes of `text`, cut before a UTF-8 sequence rather than inside one.
fn utf8_prefix(text: &[u8], max: usize) -> &[u8] {
    if text.len() <= max {
        return text;
    }
    let mut cut = max;
    // Back off continuation bytes (10xxxxxx), at most the three a sequence can have.
    while cut > 0 && max - cut < 3 && text[cut] & 0xC0 == 0x80 {
        cut -= 1;
    }
    &text[..cut]
}

/// Selects lines `start..=end` (1-based, inclusive) of `data`, with at most `max_bytes` bytes
/// of line text (each line also counts one byte for its separator).
///
/// `end` may run past the end of the file and is clamped. `start` must be at least 1 and
/// not past the last line; as the single exception, `start == 1` on an empty file returns
/// no lines. `end` must not be smaller than `start`.
///
/// The lines are found in one pass and only those returned are copied, so the cost is the
/// file's length plus the answer, whatever the window. Past the limit, whole lines are left
/// out at the end of the window (`KeepLines::First`) or at its start (`KeepLines::Last`); a
/// line over the limit by itself comes back as its first bytes, with `line_cut`.
pub fn select_lines(
    data: &[u8],
    start: usize,
    end: usize,
    max_bytes: usize,
    keep: KeepLines,
) -> WsResult<LineSlice> {
    if start == 0 {
        return Err(WsError::range("line numbers start at 1; got start line 0"));
    }
    if end < start {
        return Err(WsError::range(format!(
            "end line {end} is before start line {start}"
        )));
    }
    let total = line_count(data);
    if start > total && !(start == 1 && total == 0) {
        return Err(WsError::range(format!(
            "start line {start} is past the end of the file, which has {total} line{}",
            plural(total)
        )));
    }
    let last = end.min(total);
    let wanted = (last + 1).saturating_sub(start);
    let mut spans: Vec<LineSpan> = Vec::new();
    let mut used = 0usize;
    let mut line_cut = false;
    let mut take = |span: LineSpan, spans: &mut Vec<LineSpan>| -> bool {
        let cost = (span.text_end - span.start).saturating_add(1);
        if used.saturating_add(cost) <= max_bytes {
            used += cost;
            spans.push(span);
            return true;
        }
        let room = max_bytes.saturating_sub(1);
        if spans.is_empty() && room > 0 {
            let kept = utf8_prefix(&data[span.start..span.text_end], room).len();
            spans.push(LineSpan {
                text_end: span.start + kept,
                ..span
            });
            line_cut = true;
        }
        false
    };
    match keep {
        KeepLines::First => {
            let mut at = line_offset(data, start);
            while spans.len() < wanted {
                let span = span_at(data, at);
                at = span.end;
                if !take(span, &mut spans) {
                    break;
                }
            }
        }
        KeepLines::Last => {
            let mut at = line_offset(data, last + 1);
            while spans.len() < wanted {
                let span = span_before(data, at);
                at = span.start;
                if !take(span, &mut spans) {
                    break;
                }
            }
            spans.reverse();
        }
    }
    let returned = spans.len();
    let first = match keep {
        KeepLines::First => start,
        KeepLines::Last => last + 1 - returned,
    };
    let lines = spans
        .iter()
        .map(|s| String::from_utf8_lossy(&data[s.start..s.text_end]).into_owned())
        .collect();
    Ok(LineSlice {
        start: first,
        end: (first + returned).saturating_sub(1).max(first - 1),
        total_lines: total,
        lines,
        truncated: returned < wanted || line_cut,
        line_cut,
        final_newline: data.last() == Some(&b'\n'),
    })
}

/// What a line patch changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PatchOutcome {
    /// First line replaced (1-based); for an insertion, the line the new text starts at.
    pub start: usize,
    /// Number of lines removed.
    pub removed: usize,
    /// Number of lines inserted.
    pub inserted: usize,
    /// Number of lines in the file afterwards.
    pub total_lines: usize,
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// Normalizes a block of text for comparison: `\r\n` becomes `\n` and one final `\n` is
/// dropped.
fn comparable(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        if text[i] == b'\r' && text.get(i + 1) == Some(&b'\n') {
            i += 1;
            continue;
        }
        out.push(text[i]);
        i += 1;
    }
    if out.last() == Some(&b'\n') {
        out.pop();
    }
    out
}

/// Replaces lines `start..=end` (1-based, inclusive) of `data` with `replacement`.
///
/// - `end == start - 1` inserts before line `start` without removing anything;
///   `start == total + 1` appends.
/// - `replacement` is split into lines; one trailing newline is optional. An empty
///   replacement deletes the range. New lines use the file's own terminator.
/// - Whether the file ends with a newline is preserved (an empty file gains one).
/// - If `expected` is given, it must equal the current text of the range (line endings
///   and one trailing newline are ignored in the comparison), or `CONFLICT` is returned.
pub fn replace_lines(
    data: &[u8],
    start: usize,
    end: usize,
    replacement: &str,
    expected: Option<&str>,
) -> WsResult<(Vec<u8>, PatchOutcome)> {
    let spans = line_spans(data);
    let total = spans.len();
    check_patch_range(start, end, total)?;
    if let Some(expected) = expected {
        check_expected(data, &spans[start - 1..end], start, end, expected)?;
    }
    let eol = detect_eol(data).as_bytes();
    let ends_with_newline = data.is_empty() || data.last() == Some(&b'\n');
    let new_lines = text_lines(replacement);

    // (text, own terminator) for every line of the result.
    let mut lines: Vec<(&[u8], Option<&[u8]>)> = Vec::with_capacity(total + new_lines.len());
    let original = |s: &LineSpan| -> (&[u8], Option<&[u8]>) {
        let term = &data[s.text_end..s.end];
        (
            &data[s.start..s.text_end],
            (!term.is_empty()).then_some(term),
        )
    };
    lines.extend(spans[..start - 1].iter().map(original));
    lines.extend(new_lines.iter().map(|l| (l.as_bytes(), None)));
    lines.extend(spans[end..].iter().map(original));

    let mut out = Vec::with_capacity(data.len() + replacement.len() + eol.len());
    let count = lines.len();
    for (i, (text, term)) in lines.into_iter().enumerate() {
        out.extend_from_slice(text);
        if i + 1 < count || ends_with_newline {
            out.extend_from_slice(term.unwrap_or(eol));
        }
    }
    Ok((
        out,
        PatchOutcome {
            start,
            removed: end + 1 - start,
            inserted: new_lines.len(),
            total_lines: count,
        },
    ))
}

/// Lines `start..=end` of a file of `total` lines can be replaced (`end = start - 1` inserts,
/// `start = total + 1` appends).
fn check_patch_range(start: usize, end: usize, total: usize) -> WsResult<()> {
    if start == 0 {
        return Err(WsError::range("line numbers start at 1; got start line 0"));
    }
    if start > total + 1 {
        return Err(WsError::range(format!(
            "start line {start} is past the end of the file, which has {total} line{}; \
             use start {} to append",
            plural(total),
            total + 1
        )));
    }
    if end + 1 < start {
        return Err(WsError::range(format!(
            "end line {end} is before start line {start}; use end = start - 1 to insert"
        )));
    }
    if end > total {
        return Err(WsError::range(format!(
            "end line {end} is past the end of the file, which has {total} line{}",
            plural(total)
        )));
    }
    Ok(())
}

/// The `removed` lines (`start..=end`) of `data` hold `expected`, line endings and one final
/// newline aside; `CONFLICT` with their current text otherwise.
fn check_expected(
    data: &[u8],
    removed: &[LineSpan],
    start: usize,
    end: usize,
    expected: &str,
) -> WsResult<()> {
    let current = match (removed.first(), removed.last()) {
        (Some(first), Some(last)) => &data[first.start..last.text_end],
        _ => &[][..],
    };
    if comparable(current) != comparable(expected.as_bytes()) {
        return Err(WsError::conflict(format!(
            "lines {start}-{end} do not hold the expected text; they currently read:\n{}",
            String::from_utf8_lossy(current)
        )));
    }
    Ok(())
}

/// The text a search looks for: a literal, case-sensitive string that is never empty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query(String);

impl Query {
    /// Checks that `text` is not empty (`INVALID_INPUT` otherwise).
    pub fn new(text: impl Into<String>) -> WsResult<Self> {
        let text = text.into();
        if text.is_empty() {
            return Err(WsError::invalid_input("query must not be empty"));
        }
        Ok(Query(text))
    }

    /// The text searched for.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// One search hit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchMatch {
    /// Normalized path of the file.
    pub path: String,
    /// Line number (1-based).
    pub line: usize,
    /// Column of the first occurrence on the line (1-based, in characters).
    pub column: usize,
    /// Up to `context_lines` lines before the hit.
    pub before: Vec<String>,
    /// The line holding the hit.
    pub line_text: String,
    /// Up to `context_lines` lines after the hit.
    pub after: Vec<String>,
}

/// What one string of a search answer is charged on top of its bytes: the answer's strings
/// become JavaScript strings and array slots, which cost memory of their own, so many short
/// lines cannot take more memory than their bytes suggest.
pub const SEARCH_STRING_COST: usize = 32;

/// Result of a search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchResult {
    /// Hits in path order, then line order.
    pub matches: Vec<SearchMatch>,
    /// Whether the answer was cut: more hits existed than were asked for, or the hits and
    /// their context did not fit in the byte budget.
    pub truncated: bool,
    /// Number of text files searched (binary files are skipped).
    pub files_searched: usize,
    /// What is left of the byte budget (see [`SearchResult::new`]).
    bytes_left: usize,
}

impl SearchResult {
    /// An empty result that may hold `max_bytes` of answer: every path, hit line and context
    /// line is charged its length plus [`SEARCH_STRING_COST`] before it is copied, and the
    /// search stops (with `truncated`) at the first that does not fit.
    pub fn new(max_bytes: usize) -> Self {
        SearchResult {
            matches: Vec::new(),
            truncated: false,
            files_searched: 0,
            bytes_left: max_bytes,
        }
    }

    /// Takes `text`'s cost from the budget; false (and `truncated` set) when it does not fit.
    fn charge(&mut self, text: &str) -> bool {
        let cost = text.len().saturating_add(SEARCH_STRING_COST);
        if cost > self.bytes_left {
            self.truncated = true;
            return false;
        }
        self.bytes_left -= cost;
        true
    }
}

/// Searches one file's text for the literal `query` and appends hits to `result`
/// (at most one hit per line). Returns `false` once the search has to stop (`max_results`
/// reached and another hit found, or the byte budget spent), so the caller can stop.
///
/// One pass over the lines: the `context_lines` before a hit come from a ring of the last
/// lines seen, the lines after it are added as they are read, and nothing is copied before
/// it is charged to the budget, so time and memory are linear in the file plus the budget.
pub fn search_text(
    path: &str,
    data: &[u8],
    query: &str,
    context_lines: usize,
    max_results: usize,
    result: &mut SearchResult,
) -> bool {
    if is_binary(data) {
        return true;
    }
    result.files_searched += 1;
    if query.is_empty() {
        return true;
    }
    // Hits are found within a line, so a query spanning lines has none (and each `find` would
    // first prepare a searcher over the whole query: quadratic over many short lines).
    if query.contains('\n') {
        return true;
    }
    let text = String::from_utf8_lossy(data);
    if !text.contains(query) {
        return true;
    }
    let mut recent: VecDeque<&str> = VecDeque::new();
    // Hits still collecting lines after them: (index in `result.matches`, lines still wanted).
    let mut waiting: VecDeque<(usize, usize)> = VecDeque::new();
    for (i, line) in lines_of(&text).enumerate() {
        for entry in waiting.iter_mut() {
            if !result.charge(line) {
                return false;
            }
            result.matches[entry.0].after.push(line.to_string());
            entry.1 -= 1;
        }
        while waiting.front().is_some_and(|&(_, left)| left == 0) {
            waiting.pop_front();
        }
        // A line shorter than the query cannot hold it; checking first keeps the cost of
        // preparing each search within the line's own length.
        let found = if line.len() < query.len() {
            None
        } else {
            line.find(query)
        };
        if let Some(byte_col) = found {
            if result.matches.len() >= max_results {
                result.truncated = true;
                return false;
            }
            if !result.charge(path) || !result.charge(line) {
                return false;
            }
            let mut before = Vec::new();
            let mut complete = true;
            for l in recent.iter().rev() {
                if !result.charge(l) {
                    complete = false;
                    break;
                }
                before.push(l.to_string());
            }
            before.reverse();
            result.matches.push(SearchMatch {
                path: path.to_string(),
                line: i + 1,
                column: line[..byte_col].chars().count() + 1,
                before,
                line_text: line.to_string(),
                after: Vec::new(),
            });
            if !complete {
                return false;
            }
            if context_lines > 0 {
                waiting.push_back((result.matches.len() - 1, context_lines));
            }
        }
        if context_lines > 0 {
            if recent.len() == context_lines {
                recent.pop_front();
            }
            recent.push_back(line);
        }
    }
    true
}

/// Most lines the line matcher looks at for one diff (both texts, every file of it together).
/// Its time grows faster than linearly on repetitive input (about 0.1 s for 10,000 random lines
/// of a few kinds each side), and diffs run on the caller's thread. A changed region that
/// does not fit in what is left is shown as one block: its old lines removed, then its new
/// lines added.
pub const MATCH_BUDGET_LINES: usize = 20_000;

/// A diff being written, cut off at a byte limit. Lines are kept whole: the first line that
/// does not fit, and everything after it, is dropped.
#[derive(Debug)]
pub struct DiffText {
    out: String,
    limit: usize,
    cut: bool,
    /// Lines the line matcher may still look at (see [`MATCH_BUDGET_LINES`]).
    match_budget: usize,
}

impl DiffText {
    /// An empty diff that keeps at most `limit` bytes.
    pub fn new(limit: usize) -> Self {
        DiffText {
            out: String::new(),
            limit,
            cut: false,
            match_budget: MATCH_BUDGET_LINES,
        }
    }

    /// Appends `parts` and a newline as one line. Returns false (and keeps nothing) once the
    /// text is full.
    pub fn line(&mut self, parts: &[&str]) -> bool {
        if self.cut {
            return false;
        }
        let len = parts.iter().map(|p| p.len()).sum::<usize>() + 1;
        if self.out.len() + len > self.limit {
            self.cut = true;
            return false;
        }
        for p in parts {
            self.out.push_str(p);
        }
        self.out.push('\n');
        true
    }

    /// Whether a line was dropped for want of room.
    pub fn is_cut(&self) -> bool {
        self.cut
    }

    /// The text written, without any marker.
    pub fn into_string(self) -> String {
        self.out
    }
}

/// Number of lines in `text` (see the module's conventions), counted without keeping them.
fn line_count(text: &(impl AsRef<[u8]> + ?Sized)) -> usize {
    let data = text.as_ref();
    let newlines = data.iter().filter(|&&b| b == b'\n').count();
    newlines + usize::from(data.last().is_some_and(|&b| b != b'\n'))
}

/// The lines of `text`, first to last, without terminators (no allocation).
fn lines_of(text: &str) -> impl DoubleEndedIterator<Item = &str> {
    let body = (!text.is_empty()).then(|| text.strip_suffix('\n').unwrap_or(text));
    body.into_iter()
        .flat_map(|b| b.split('\n'))
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
}

/// `text` without its first `n` lines.
fn skip_lines(text: &str, n: usize) -> &str {
    if n == 0 {
        return text;
    }
    let newlines = text.bytes().enumerate().filter(|&(_, b)| b == b'\n');
    match newlines.map(|(i, _)| i).nth(n - 1) {
        Some(i) => &text[i + 1..],
        None => "",
    }
}

/// `text` without its last `n` lines.
fn drop_lines(text: &str, n: usize) -> &str {
    if n == 0 {
        return text;
    }
    // The kept text ends at the `n`-th newline from the end, the final one aside.
    let body = text.strip_suffix('\n').unwrap_or(text);
    let newlines = body.bytes().enumerate().rev().filter(|&(_, b)| b == b'\n');
    match newlines.map(|(i, _)| i).nth(n - 1) {
        Some(i) => &text[..=i],
        None => "",
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    Head,
    Tail,
}

/// How many bytes `a` and `b` share at their start (or end).
fn common_bytes(a: &[u8], b: &[u8], direction: Direction) -> usize {
    const CHUNK: usize = 4096;
    let n = a.len().min(b.len());
    let (a, b) = match direction {
        Direction::Head => (&a[..n], &b[..n]),
        Direction::Tail => (&a[a.len() - n..], &b[b.len() - n..]),
    };
    let at = |i: usize, len: usize| match direction {
        Direction::Head => i..i + len,
        Direction::Tail => n - i - len..n - i,
    };
    let mut same = 0;
    while same + CHUNK <= n && a[at(same, CHUNK)] == b[at(same, CHUNK)] {
        same += CHUNK;
    }
    while same < n && a[at(same, 1)] == b[at(same, 1)] {
        same += 1;
    }
    same
}

/// How many lines `a` and `b` share at their start (or end), line endings aside. Equal bytes
/// are skipped in bulk; only the lines after them are compared one by one.
fn common_lines(a: &str, b: &str, direction: Direction) -> usize {
    let same = common_bytes(a.as_bytes(), b.as_bytes(), direction);
    match direction {
        Direction::Head => {
            // Whole lines of the equal bytes, then line by line.
            let whole = a[..same].rfind('\n').map_or(0, |i| i + 1);
            let rest = lines_of(&a[whole..])
                .zip(lines_of(&b[whole..]))
                .take_while(|(x, y)| x == y)
                .count();
            line_count(&a[..whole]) + rest
        }
        Direction::Tail => {
            // The equal bytes from just after their first newline are whole lines in both
            // texts; then line by line, backwards.
            let tail = &a[a.len() - same..];
            let whole = tail.find('\n').map_or(0, |i| same - i - 1);
            let rest = lines_of(&a[..a.len() - whole])
                .rev()
                .zip(lines_of(&b[..b.len() - whole]).rev())
                .take_while(|(x, y)| x == y)
                .count();
            line_count(&a[a.len() - whole..]) + rest
        }
    }
}

fn hunk_range(start: usize, len: usize) -> String {
    // Unified diff numbering: a range with no lines names the line before it.
    let first = if len == 0 { start } else { start + 1 };
    if len == 1 {
        first.to_string()
    } else {
        format!("{first},{len}")
    }
}

/// The part of two texts a diff has to look at: their changed middle with up to `context`
/// unchanged lines either side. Everything outside it is the same in both texts.
struct Window<'a> {
    old: &'a str,
    new: &'a str,
    /// Lines of both texts before the window.
    offset: usize,
    old_lines: usize,
    new_lines: usize,
    /// Unchanged lines at the start and at the end of the window.
    lead: usize,
    trail: usize,
}

impl<'a> Window<'a> {
    fn new(old: &'a str, new: &'a str, context: usize) -> Self {
        let (old_total, new_total) = (line_count(old), line_count(new));
        let prefix = common_lines(old, new, Direction::Head);
        let suffix = common_lines(old, new, Direction::Tail).min(old_total.min(new_total) - prefix);
        let (lead, trail) = (prefix.min(context), suffix.min(context));
        let (skipped, dropped) = (prefix - lead, suffix - trail);
        Window {
            old: drop_lines(skip_lines(old, skipped), dropped),
            new: drop_lines(skip_lines(new, skipped), dropped),
            offset: skipped,
            old_lines: old_total - skipped - dropped,
            new_lines: new_total - skipped - dropped,
            lead,
            trail,
        }
    }

    fn unchanged(&self) -> bool {
        self.lead + self.trail == self.old_lines && self.old_lines == self.new_lines
    }

    fn header(&self, old: std::ops::Range<usize>, new: std::ops::Range<usize>) -> String {
        format!(
            "@@ -{} +{} @@",
            hunk_range(self.offset + old.start, old.len()),
            hunk_range(self.offset + new.start, new.len())
        )
    }

    /// The whole window as one hunk: context, every old line removed, every new line added,
    /// context. Streams the lines, so it needs no memory beyond the output.
    fn write_block(&self, out: &mut DiffText) {
        if !out.line(&[&self.header(0..self.old_lines, 0..self.new_lines)]) {
            return;
        }
        let changed_end = self.old_lines - self.trail;
        let old_part = lines_of(self.old)
            .take(changed_end)
            .enumerate()
            .map(|(i, l)| (if i < self.lead { " " } else { "-" }, l));
        let new_part = lines_of(self.new)
            .take(self.new_lines - self.trail)
            .skip(self.lead)
            .map(|l| ("+", l));
        let tail = lines_of(self.old).skip(changed_end).map(|l| (" ", l));
        for (mark, l) in old_part.chain(new_part).chain(tail) {
            if !out.line(&[mark, l]) {
                return;
            }
        }
    }

    /// The window through the line matcher, as hunks with `context` lines around changes.
    fn write_matched(&self, context: usize, out: &mut DiffText) {
        let mut input: InternedInput<&str> = InternedInput::default();
        input.update_before(lines_of(self.old));
        input.update_after(lines_of(self.new));
        let mut diff = Diff::compute(Algorithm::Myers, &input);
        diff.postprocess_lines(&input);
        let line = |tokens: &[Token], i: u32| input.interner[tokens[i as usize]];
        let hunks: Vec<Hunk> = diff.hunks().collect();
        let mut k = 0;
        while k < hunks.len() {
            // Hunks whose gap is at most twice the context share one printed hunk.
            let first = k;
            while k + 1 < hunks.len()
                && (hunks[k + 1].before.start - hunks[k].before.end) as usize <= 2 * context
            {
                k += 1;
            }
            let (a, b) = (&hunks[first], &hunks[k]);
            k += 1;
            let lead = (a.before.start as usize).min(context) as u32;
            let trail = (self.old_lines - b.before.end as usize).min(context) as u32;
            let old = (a.before.start - lead) as usize..(b.before.end + trail) as usize;
            let new = (a.after.start - lead) as usize..(b.after.end + trail) as usize;
            if !out.line(&[&self.header(old, new)]) {
                return;
            }
            let mut at = a.before.start - lead;
            for h in &hunks[first..k] {
                let context_lines = (at..h.before.start).map(|i| (" ", line(&input.before, i)));
                let removed = h.before.clone().map(|i| ("-", line(&input.before, i)));
                let added = h.after.clone().map(|i| ("+", line(&input.after, i)));
                for (mark, l) in context_lines.chain(removed).chain(added) {
                    if !out.line(&[mark, l]) {
                        return;
                    }
                }
                at = h.before.end;
            }
            for i in at..b.before.end + trail {
                if !out.line(&[" ", line(&input.before, i)]) {
                    return;
                }
            }
        }
    }
}

/// Writes a unified diff of two texts, with `context` lines around each change, into `out`.
///
/// `old_name`/`new_name` label the `---`/`+++` lines; only they are written when the texts are
/// equal line for line. Lines the texts share at their start and end are skipped without being
/// stored, and the changed middle is matched line by line with imara-diff's Myers algorithm
/// (linear memory, heuristics that keep it near linear time on most input), so memory grows
/// with the changed region, never with the whole files. A changed region larger than what is
/// left of `out`'s matching budget ([`MATCH_BUDGET_LINES`]) is streamed as one block.
pub fn write_unified_diff(
    out: &mut DiffText,
    old_name: &str,
    new_name: &str,
    old: &str,
    new: &str,
    context: usize,
) {
    if !out.line(&["--- ", old_name]) || !out.line(&["+++ ", new_name]) {
        return;
    }
    let window = Window::new(old, new, context);
    if window.unchanged() {
        return;
    }
    let lines = window.old_lines + window.new_lines;
    if lines > out.match_budget {
        window.write_block(out);
    } else {
        out.match_budget -= lines;
        window.write_matched(context, out);
    }
}

/// A file patch as the `diff` npm package's `createTwoFilesPatch(name, name, old, new,
/// 'original', 'modified')` prints it (what the MCP filesystem server's `edit_file` returns):
/// an `Index:` line and a rule, headers with a tab and a label, hunks with `context` lines
/// around changes whose headers always give both counts, and `\ No newline at end of file`
/// after a last line without one. Unlike [`write_unified_diff`], lines keep their terminators:
/// a changed line ending or final newline is a change.
///
/// Lines both texts share at their start and end are skipped before matching; the changed
/// middle goes through imara-diff's Myers algorithm while it fits in `out`'s matching budget
/// and is written as one block (old lines removed, new lines added) otherwise. Output stops at
/// `out`'s byte limit.
pub fn write_two_files_patch(out: &mut DiffText, name: &str, old: &str, new: &str, context: usize) {
    const RULE: &str = "===================================================================";
    if !out.line(&["Index: ", name])
        || !out.line(&[RULE])
        || !out.line(&["--- ", name, "\toriginal"])
        || !out.line(&["+++ ", name, "\tmodified"])
    {
        return;
    }
    let before: Vec<&str> = old.split_inclusive('\n').collect();
    let after: Vec<&str> = new.split_inclusive('\n').collect();
    let prefix = before
        .iter()
        .zip(&after)
        .take_while(|(a, b)| a == b)
        .count();
    let suffix = before[prefix..]
        .iter()
        .rev()
        .zip(after[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let (old_end, new_end) = (before.len() - suffix, after.len() - suffix);
    // Changed regions as (old range, new range), in order.
    let mut changes: Vec<(std::ops::Range<usize>, std::ops::Range<usize>)> = Vec::new();
    let middle = (old_end - prefix) + (new_end - prefix);
    if middle == 0 {
        return;
    }
    if middle > out.match_budget {
        changes.push((prefix..old_end, prefix..new_end));
    } else {
        out.match_budget -= middle;
        let mut input: InternedInput<&str> = InternedInput::default();
        input.update_before(before[prefix..old_end].iter().copied());
        input.update_after(after[prefix..new_end].iter().copied());
        let mut diff = Diff::compute(Algorithm::Myers, &input);
        diff.postprocess_lines(&input);
        changes.extend(diff.hunks().map(|h| {
            let at = |r: std::ops::Range<u32>| prefix + r.start as usize..prefix + r.end as usize;
            (at(h.before), at(h.after))
        }));
    }
    let write = |out: &mut DiffText, mark: &str, line: &str| -> bool {
        match line.strip_suffix('\n') {
            Some(text) => out.line(&[mark, text]),
            None => out.line(&[mark, line]) && out.line(&["\\ No newline at end of file"]),
        }
    };
    let mut k = 0;
    while k < changes.len() {
        let first = k;
        while k + 1 < changes.len() && changes[k + 1].0.start - changes[k].0.end <= 2 * context {
            k += 1;
        }
        let (a, b) = (&changes[first], &changes[k]);
        k += 1;
        let lead = a.0.start.min(context);
        let trail = (before.len() - b.0.end).min(context);
        let old_range = a.0.start - lead..b.0.end + trail;
        let new_range = a.1.start - lead..b.1.end + trail;
        let start = |r: &std::ops::Range<usize>| if r.is_empty() { r.start } else { r.start + 1 };
        let header = format!(
            "@@ -{},{} +{},{} @@",
            start(&old_range),
            old_range.len(),
            start(&new_range),
            new_range.len()
        );
        if !out.line(&[&header]) {
            return;
        }
        let mut at = old_range.start;
        for (removed, added) in &changes[first..k] {
            let lines = before[at..removed.start]
                .iter()
                .map(|l| (" ", *l))
                .chain(before[removed.clone()].iter().map(|l| ("-", *l)))
                .chain(after[added.clone()].iter().map(|l| ("+", *l)));
            for (mark, l) in lines {
                if !write(out, mark, l) {
                    return;
                }
            }
            at = removed.end;
        }
        for l in &before[at..old_range.end] {
            if !write(out, " ", l) {
                return;
            }
        }
    }
}

/// A unified diff of two texts with `context` lines around each change (see
/// [`write_unified_diff`]), whole.
#[cfg(test)]
pub fn unified_diff(
    old_name: &str,
    new_name: &str,
    old: &str,
    new: &str,
    context: usize,
) -> String {
    let mut out = DiffText::new(usize::MAX);
    write_unified_diff(&mut out, old_name, new_name, old, new, context);
    out.into_string()
}

#[cfg(test)]
mod tests;
