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
mod tests {
    use super::*;
    use crate::workspace::error::WsCode;

    fn patch(data: &str, start: usize, end: usize, repl: &str) -> String {
        match replace_lines(data.as_bytes(), start, end, repl, None) {
            Ok((out, _)) => String::from_utf8(out).unwrap_or_default(),
            Err(e) => panic!("patch failed: {e}"),
        }
    }

    fn patch_err(data: &str, start: usize, end: usize, expected: Option<&str>) -> WsError {
        match replace_lines(data.as_bytes(), start, end, "x", expected) {
            Ok(_) => panic!("patch {start}-{end} should fail"),
            Err(e) => e,
        }
    }

    #[test]
    fn line_counting_conventions() {
        assert_eq!(count_lines(b""), 0);
        assert_eq!(count_lines(b"a"), 1);
        assert_eq!(count_lines(b"a\n"), 1);
        assert_eq!(count_lines(b"a\nb"), 2);
        assert_eq!(count_lines(b"a\nb\n"), 2);
        assert_eq!(count_lines(b"\n"), 1);
        assert_eq!(count_lines(b"\n\n"), 2);
        assert_eq!(count_lines(b"a\r\nb\r\n"), 2);
        let spans = line_spans(b"ab\r\ncd");
        assert_eq!(
            spans,
            vec![
                LineSpan {
                    start: 0,
                    text_end: 2,
                    end: 4
                },
                LineSpan {
                    start: 4,
                    text_end: 6,
                    end: 6
                }
            ]
        );
    }

    #[test]
    fn lines_and_windows() {
        assert_eq!(text_lines(""), Vec::<&str>::new());
        assert_eq!(text_lines("a"), vec!["a"]);
        assert_eq!(text_lines("a\n"), vec!["a"]);
        assert_eq!(text_lines("\n"), vec![""]);
        assert_eq!(text_lines("a\r\nb\n\nc"), vec!["a", "b", "", "c"]);
    }

    #[test]
    fn binary_detection() {
        assert!(!is_binary(b"hello\nworld"));
        assert!(is_binary(b"he\0llo"));
        let mut late = vec![b'a'; BINARY_SNIFF_LEN];
        late.push(0);
        assert!(!is_binary(&late));
        assert_eq!(detect_eol(b"a\r\nb\n"), "\r\n");
        assert_eq!(detect_eol(b"a\nb\r\n"), "\n");
        assert_eq!(detect_eol(b"abc"), "\n");
    }

    #[test]
    fn select_is_one_based_inclusive_and_clamped() -> WsResult<()> {
        let data = b"one\ntwo\nthree\nfour\n";
        let s = select_lines(data, 2, 3, usize::MAX, KeepLines::First)?;
        assert_eq!(s.lines, vec!["two", "three"]);
        assert_eq!((s.start, s.end, s.total_lines), (2, 3, 4));
        let s = select_lines(data, 3, 100, usize::MAX, KeepLines::First)?;
        assert_eq!(s.lines, vec!["three", "four"]);
        assert_eq!(s.end, 4);
        let s = select_lines(data, 4, 4, usize::MAX, KeepLines::First)?;
        assert_eq!(s.lines, vec!["four"]);
        let s = select_lines(b"a\r\nb", 1, 2, usize::MAX, KeepLines::First)?;
        assert_eq!(s.lines, vec!["a", "b"]);
        let s = select_lines(b"", 1, 10, usize::MAX, KeepLines::First)?;
        assert!(s.lines.is_empty());
        assert_eq!((s.start, s.end, s.total_lines), (1, 0, 0));
        Ok(())
    }

    #[test]
    fn select_caps_the_bytes_it_returns() -> WsResult<()> {
        let data = b"one\ntwo\nthree\nfour\n";
        // "one\n" and "two\n" fit in 8 bytes; "three" would not.
        let s = select_lines(data, 1, 4, 8, KeepLines::First)?;
        assert_eq!(s.lines, vec!["one", "two"]);
        assert_eq!(
            (s.start, s.end, s.total_lines, s.truncated, s.line_cut),
            (1, 2, 4, true, false)
        );
        // A tail keeps the lines nearest the end of the window.
        let s = select_lines(data, 1, 4, 11, KeepLines::Last)?;
        assert_eq!(s.lines, vec!["three", "four"]);
        assert_eq!((s.start, s.end, s.truncated), (3, 4, true));
        let s = select_lines(data, 2, 3, usize::MAX, KeepLines::Last)?;
        assert_eq!(s.lines, vec!["two", "three"]);
        assert_eq!((s.start, s.end, s.truncated), (2, 3, false));
        // Exactly enough room is not a cut.
        let s = select_lines(data, 1, 2, 8, KeepLines::First)?;
        assert_eq!((s.lines.len(), s.truncated), (2, false));
        // No room: no lines, but the count.
        let s = select_lines(data, 1, 4, 0, KeepLines::First)?;
        assert!(s.lines.is_empty());
        assert_eq!(
            (s.start, s.end, s.total_lines, s.truncated),
            (1, 0, 4, true)
        );
        Ok(())
    }

    #[test]
    fn select_cuts_a_lone_long_line_on_a_character_boundary() -> WsResult<()> {
        let data = "a\u{e9}\u{e9}\u{e9}\r\nnext".as_bytes();
        // Room for 3 bytes of text: "a" and one two-byte character, not half of the next.
        let s = select_lines(data, 1, 2, 5, KeepLines::First)?;
        assert_eq!(s.lines, vec!["a\u{e9}"]);
        assert_eq!(
            (s.start, s.end, s.truncated, s.line_cut),
            (1, 1, true, true)
        );
        let s = select_lines(data, 1, 2, 4, KeepLines::Last)?;
        assert_eq!(s.lines, vec!["nex"]);
        assert_eq!((s.start, s.end, s.line_cut), (2, 2, true));
        Ok(())
    }

    #[test]
    fn select_matches_the_line_conventions_under_any_limit() -> WsResult<()> {
        let data = b"a\r\n\nbb\rb\n\r\nlast";
        let all = text_lines(std::str::from_utf8(data).unwrap_or_default());
        assert_eq!(all.len(), 5);
        for keep in [KeepLines::First, KeepLines::Last] {
            for start in 1..=5 {
                for end in start..=6 {
                    let s = select_lines(data, start, end, usize::MAX, keep)?;
                    assert_eq!(
                        s.lines,
                        all[start - 1..end.min(5)],
                        "{start}-{end} {keep:?}"
                    );
                    assert!(!s.truncated);
                    for max in 0..12 {
                        let s = select_lines(data, start, end, max, keep)?;
                        let used: usize = s.lines.iter().map(|l| l.len() + 1).sum();
                        assert!(used <= max, "{start}-{end} {max} {keep:?}");
                        assert_eq!(s.lines.len(), s.end + 1 - s.start);
                        if !s.line_cut {
                            assert_eq!(s.lines, all[s.start - 1..s.end], "{start}-{end} {max}");
                        }
                    }
                }
            }
        }
        Ok(())
    }

    #[test]
    fn select_range_errors() {
        let data = b"one\ntwo\n";
        for (start, end) in [(0, 1), (3, 3), (5, 9), (2, 1)] {
            match select_lines(data, start, end, usize::MAX, KeepLines::First) {
                Err(e) => assert_eq!(e.code, WsCode::Range, "{start}-{end}"),
                Ok(s) => panic!("{start}-{end} gave {s:?}"),
            }
        }
        assert_eq!(
            select_lines(b"", 2, 2, usize::MAX, KeepLines::First).map_err(|e| e.code),
            Err(WsCode::Range)
        );
    }

    #[test]
    fn replace_basic_cases() {
        let d = "a\nb\nc\n";
        assert_eq!(patch(d, 2, 2, "B"), "a\nB\nc\n");
        assert_eq!(patch(d, 2, 2, "B\n"), "a\nB\nc\n");
        assert_eq!(patch(d, 1, 3, "x\ny"), "x\ny\n");
        assert_eq!(patch(d, 2, 3, ""), "a\n");
        assert_eq!(patch(d, 1, 3, ""), "");
        assert_eq!(patch(d, 2, 2, "\n"), "a\n\nc\n");
        assert_eq!(patch(d, 2, 2, "p\nq\nr"), "a\np\nq\nr\nc\n");
    }

    #[test]
    fn replace_insert_and_append() {
        let d = "a\nb\n";
        assert_eq!(patch(d, 1, 0, "top"), "top\na\nb\n");
        assert_eq!(patch(d, 2, 1, "mid"), "a\nmid\nb\n");
        assert_eq!(patch(d, 3, 2, "end"), "a\nb\nend\n");
        assert_eq!(patch("", 1, 0, "first"), "first\n");
        // A file without a final newline keeps that shape.
        assert_eq!(patch("a\nb", 3, 2, "c"), "a\nb\nc");
        assert_eq!(patch("a\nb", 2, 2, "B"), "a\nB");
        assert_eq!(patch("a\nb", 2, 2, ""), "a");
    }

    #[test]
    fn replace_keeps_crlf() {
        assert_eq!(
            patch("a\r\nb\r\nc\r\n", 2, 2, "x\ny"),
            "a\r\nx\r\ny\r\nc\r\n"
        );
        assert_eq!(patch("a\r\nb\r\n", 2, 2, "x\r\n"), "a\r\nx\r\n");
    }

    #[test]
    fn replace_outcome_counts() -> WsResult<()> {
        let (_, o) = replace_lines(b"a\nb\nc\n", 2, 3, "x\ny\nz", None)?;
        assert_eq!(
            o,
            PatchOutcome {
                start: 2,
                removed: 2,
                inserted: 3,
                total_lines: 4
            }
        );
        let (_, o) = replace_lines(b"a\n", 2, 1, "b", None)?;
        assert_eq!(o.removed, 0);
        assert_eq!(o.inserted, 1);
        assert_eq!(o.total_lines, 2);
        Ok(())
    }

    #[test]
    fn replace_range_errors() {
        let d = "a\nb\n";
        assert_eq!(patch_err(d, 0, 1, None).code, WsCode::Range);
        assert_eq!(patch_err(d, 4, 3, None).code, WsCode::Range);
        assert_eq!(patch_err(d, 2, 3, None).code, WsCode::Range);
        assert_eq!(patch_err(d, 3, 1, None).code, WsCode::Range);
        assert_eq!(patch_err("", 2, 1, None).code, WsCode::Range);
    }

    #[test]
    fn replace_expected_text() -> WsResult<()> {
        let d = b"a\nb\nc\n";
        let (out, _) = replace_lines(d, 2, 3, "X", Some("b\nc"))?;
        assert_eq!(out, b"a\nX\n");
        // A trailing newline and CRLF in `expected` are tolerated.
        replace_lines(d, 2, 3, "X", Some("b\nc\n"))?;
        replace_lines(b"a\r\nb\r\n", 1, 2, "X", Some("a\nb"))?;
        replace_lines(b"a\nb\n", 1, 2, "X", Some("a\r\nb\r\n"))?;
        // Insertions compare against the empty range.
        replace_lines(d, 2, 1, "X", Some(""))?;
        let e = patch_err("a\nb\nc\n", 2, 2, Some("nope"));
        assert_eq!(e.code, WsCode::Conflict);
        assert!(e.message.contains('b'), "{}", e.message);
        assert_eq!(
            patch_err("a\nb\n", 1, 1, Some("a\nb")).code,
            WsCode::Conflict
        );
        assert_eq!(patch_err("a\nb\n", 2, 1, Some("a")).code, WsCode::Conflict);
        Ok(())
    }

    #[test]
    fn replace_is_byte_safe_for_non_utf8() -> WsResult<()> {
        let data = b"\xff\xfe\nline2\n";
        let (out, _) = replace_lines(data, 2, 2, "two", None)?;
        assert_eq!(out, b"\xff\xfe\ntwo\n");
        Ok(())
    }

    fn search(data: &str, query: &str, ctx: usize, max: usize) -> SearchResult {
        let mut r = SearchResult::new(usize::MAX);
        search_text("f.txt", data.as_bytes(), query, ctx, max, &mut r);
        r
    }

    #[test]
    fn search_context_and_columns() {
        let data = "l1\nl2\nfoo bar\nl4\nl5\nl6\n";
        let r = search(data, "bar", 2, 10);
        assert_eq!(r.matches.len(), 1);
        let m = &r.matches[0];
        assert_eq!((m.line, m.column), (3, 5));
        assert_eq!(m.before, vec!["l1", "l2"]);
        assert_eq!(m.line_text, "foo bar");
        assert_eq!(m.after, vec!["l4", "l5"]);
        // Context is clipped at the file edges.
        let r = search("hit\nx\n", "hit", 3, 10);
        assert!(r.matches[0].before.is_empty());
        assert_eq!(r.matches[0].after, vec!["x"]);
        // Columns count characters, not bytes.
        let r = search("héllo wörld", "wörld", 0, 10);
        assert_eq!(r.matches[0].column, 7);
        assert!(r.matches[0].before.is_empty() && r.matches[0].after.is_empty());
    }

    #[test]
    fn search_caps_and_skips() {
        let r = search("x\nx\nx\nx\n", "x", 0, 2);
        assert_eq!(r.matches.len(), 2);
        assert!(r.truncated);
        let r = search("x\nx\n", "x", 0, 2);
        assert!(!r.truncated);
        let r = search("xx x\n", "x", 0, 10);
        assert_eq!(r.matches.len(), 1, "one hit per line");
        let r = search("a\0x", "x", 0, 10);
        assert!(r.matches.is_empty());
        assert_eq!(r.files_searched, 0);
        let r = search("abc", "", 0, 10);
        assert!(r.matches.is_empty());
        let r = search("a\r\nneedle\r\n", "needle", 1, 10);
        assert_eq!(r.matches[0].before, vec!["a"]);
        assert_eq!(r.matches[0].line_text, "needle");
    }

    #[test]
    fn search_queries_longer_than_lines_or_spanning_them_find_nothing_quickly() {
        // A query spanning lines never matches within one; the file still counts as searched.
        let text = "a\n".repeat(200_000);
        let query = "a\n".repeat(100_000);
        let started = std::time::Instant::now();
        let r = search(&text, &query, 0, 10);
        assert!(r.matches.is_empty());
        assert_eq!(r.files_searched, 1);
        let r = search(&text, &"a".repeat(100_000), 0, 10);
        assert!(r.matches.is_empty());
        assert!(started.elapsed().as_secs() < 2, "{:?}", started.elapsed());
        let r = search("short\nthe needle here\n", "needle", 0, 10);
        assert_eq!(r.matches[0].line_text, "the needle here");
    }

    #[test]
    fn search_answers_stay_within_their_byte_budget() {
        // Every line holds a hit: with 100 lines of context each hit would copy 201 lines.
        let data = format!("{}\n", "a".repeat(99)).repeat(40_000);
        for budget in [0, 100, 4096, 64 << 10, 1 << 20] {
            let mut r = SearchResult::new(budget);
            let more = search_text("f", data.as_bytes(), "a", 100, 10_000, &mut r);
            assert!(!more && r.truncated, "budget {budget}");
            let used: usize = r
                .matches
                .iter()
                .map(|m| {
                    let strings = m
                        .before
                        .iter()
                        .chain(&m.after)
                        .chain([&m.line_text, &m.path]);
                    strings.map(|s| s.len() + SEARCH_STRING_COST).sum::<usize>()
                })
                .sum();
            assert!(used <= budget, "{used} > {budget}");
            assert!(budget < 1 << 20 || r.matches.len() > 10);
        }
        // Hits keep their context in order; the last one may lose some when the budget ends.
        let mut r = SearchResult::new(1 << 20);
        search_text("f", data.as_bytes(), "a", 2, 10_000, &mut r);
        assert_eq!(r.matches[5].before.len(), 2);
        assert_eq!(r.matches[5].after.len(), 2);
        assert_eq!(r.matches[0].before.len(), 0);
        // A search that fits is not marked cut.
        let mut r = SearchResult::new(1 << 20);
        assert!(search_text("f", b"x\na\ny\n", "a", 5, 10, &mut r));
        assert!(!r.truncated);
        assert_eq!(
            (r.matches[0].before.clone(), r.matches[0].after.clone()),
            (vec!["x".to_string()], vec!["y".to_string()])
        );
    }

    #[test]
    fn search_context_overlapping_hits_matches_the_window() {
        let data = "h1\nx\nh2\ny\nz\nh3\n";
        let r = search(data, "h", 2, 10);
        let windows: Vec<(Vec<String>, Vec<String>)> = r
            .matches
            .iter()
            .map(|m| (m.before.clone(), m.after.clone()))
            .collect();
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            windows,
            vec![
                (s(&[]), s(&["x", "h2"])),
                (s(&["h1", "x"]), s(&["y", "z"])),
                (s(&["y", "z"]), s(&[])),
            ]
        );
    }

    #[test]
    fn diff_shows_changes_with_context() {
        let old = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n";
        let new = "1\n2\n3\n4\nFIVE\n6\n7\n8\n9\n10\n";
        let d = unified_diff("a/f", "b/f", old, new, 3);
        assert_eq!(
            d,
            "--- a/f\n+++ b/f\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+FIVE\n 6\n 7\n 8\n"
        );
    }

    #[test]
    fn diff_separate_hunks_and_edges() {
        let old: String = (1..=20).map(|i| format!("{i}\n")).collect();
        let new: String = (1..=20)
            .filter(|&i| i != 19)
            .map(|i| {
                if i == 2 {
                    "two\n".to_string()
                } else {
                    format!("{i}\n")
                }
            })
            .collect();
        let d = unified_diff("a", "b", &old, &new, 1);
        assert_eq!(d.matches("@@ -").count(), 2, "{d}");
        assert!(d.contains("-2\n+two\n"), "{d}");
        assert!(d.contains("-19\n"), "{d}");
        let created = unified_diff("/dev/null", "b/x", "", "a\nb\n", 3);
        assert_eq!(created, "--- /dev/null\n+++ b/x\n@@ -0,0 +1,2 @@\n+a\n+b\n");
        let deleted = unified_diff("a/x", "/dev/null", "a\n", "", 3);
        assert_eq!(deleted, "--- a/x\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n");
        assert_eq!(
            unified_diff("a", "b", "same\n", "same\n", 3),
            "--- a\n+++ b\n"
        );
    }

    #[test]
    fn diff_large_inputs_fall_back() {
        let old: String = (0..3000).map(|i| format!("o{i}\n")).collect();
        let new: String = (0..3000).map(|i| format!("n{i}\n")).collect();
        let d = unified_diff("a", "b", &old, &new, 3);
        assert_eq!(
            d.lines()
                .filter(|l| l.starts_with('-') && !l.starts_with("---"))
                .count(),
            3000
        );
        assert_eq!(
            d.lines()
                .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
                .count(),
            3000
        );
    }

    /// Applies a unified diff to `old`'s lines, checking every context and removed line.
    fn apply_diff(old: &str, diff: &str) -> Vec<String> {
        let old_lines = text_lines(old);
        let mut out: Vec<String> = Vec::new();
        let mut at = 0;
        for l in diff.lines().skip(2) {
            if let Some(h) = l.strip_prefix("@@ -") {
                let range = h.split(' ').next().unwrap_or_default();
                let mut parts = range.split(',');
                let first: usize = parts.next().unwrap_or("0").parse().unwrap_or(0);
                let len: usize = parts.next().map_or(1, |n| n.parse().unwrap_or(0));
                let start = if len == 0 { first } else { first - 1 };
                assert!(start >= at, "hunks out of order in {diff}");
                out.extend(old_lines[at..start].iter().map(|s| s.to_string()));
                at = start;
            } else if let Some(t) = l.strip_prefix(' ') {
                assert_eq!(old_lines[at], t, "context line {at}");
                out.push(t.to_string());
                at += 1;
            } else if let Some(t) = l.strip_prefix('-') {
                assert_eq!(old_lines[at], t, "removed line {at}");
                at += 1;
            } else if let Some(t) = l.strip_prefix('+') {
                out.push(t.to_string());
            } else {
                panic!("unexpected diff line {l:?}");
            }
        }
        out.extend(old_lines[at..].iter().map(|s| s.to_string()));
        out
    }

    /// A small deterministic generator (xorshift), so the property tests need no crate.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    #[test]
    fn diffs_apply_back_to_the_new_text() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let words = ["a", "b", "c", "", "  x", "y\r"];
        for round in 0..400 {
            let text = |rng: &mut Rng| -> String {
                let n = rng.below(30);
                let mut t: String = (0..n)
                    .map(|_| format!("{}\n", words[rng.below(words.len() as u64) as usize]))
                    .collect();
                if rng.below(4) == 0 {
                    t.pop();
                }
                t
            };
            let old = text(&mut rng);
            let new = text(&mut rng);
            let context = rng.below(4) as usize;
            let d = unified_diff("a", "b", &old, &new, context);
            assert_eq!(
                apply_diff(&old, &d),
                text_lines(&new),
                "round {round}, context {context}:\n{old:?}\n{new:?}\n{d}"
            );
            if text_lines(&old) == text_lines(&new) {
                assert_eq!(d, "--- a\n+++ b\n");
            }
        }
    }

    #[test]
    fn diff_line_conventions_match_the_editor() {
        // Line endings and one final newline are not changes.
        assert_eq!(
            unified_diff("a", "b", "x\r\ny\r\n", "x\ny", 3),
            "--- a\n+++ b\n"
        );
        assert_eq!(
            unified_diff("a", "b", "x\n", "x\n\n", 3),
            "--- a\n+++ b\n@@ -1 +1,2 @@\n x\n+\n"
        );
        assert_eq!(skip_lines("a\nb\nc", 2), "c");
        assert_eq!(skip_lines("a\nb\n", 5), "");
        assert_eq!(drop_lines("a\nb\nc\n", 1), "a\nb\n");
        assert_eq!(drop_lines("a\nb\nc", 2), "a\n");
        assert_eq!(drop_lines("a\nb\nc", 3), "");
        assert_eq!(line_count(""), 0);
        assert_eq!(line_count("\n"), 1);
        assert_eq!(line_count("a\nb"), 2);
        assert_eq!(lines_of("a\r\n\nb").collect::<Vec<_>>(), vec!["a", "", "b"]);
        assert_eq!(lines_of("a\nb\n").rev().collect::<Vec<_>>(), vec!["b", "a"]);
    }

    #[test]
    fn a_small_change_in_a_large_file_gives_a_small_hunk() {
        let old = "\n".repeat(1 << 20);
        let new = format!("{}x\n{}", "\n".repeat(1 << 19), "\n".repeat(1 << 19));
        let d = unified_diff("a/f", "b/f", &old, &new, 3);
        assert_eq!(
            d,
            "--- a/f\n+++ b/f\n@@ -524286,6 +524286,7 @@\n \n \n \n+x\n \n \n \n"
        );
    }

    #[test]
    fn a_huge_change_is_one_streamed_block() {
        let n = MATCH_BUDGET_LINES / 2;
        let old: String = "keep\n".to_string() + &"a\n".repeat(n) + "end\n";
        let new: String = "keep\n".to_string() + &"b\n".repeat(n) + "end\n";
        let d = unified_diff("a", "b", &old, &new, 3);
        let header = format!("@@ -1,{} +1,{} @@", n + 2, n + 2);
        assert_eq!(d.lines().nth(2), Some(header.as_str()));
        assert_eq!(d.lines().filter(|l| *l == "-a").count(), n);
        assert_eq!(d.lines().filter(|l| *l == "+b").count(), n);
        assert_eq!(apply_diff(&old, &d), text_lines(&new));
        // The budget is shared by every text of one diff: the first small change is
        // matched, the second, once the budget is spent, is one block.
        let mut out = DiffText::new(usize::MAX);
        let small_old = "a\nb\nc\n";
        write_unified_diff(&mut out, "a", "b", small_old, "a\nB\nc\n", 0);
        out.match_budget = 2;
        write_unified_diff(&mut out, "a", "b", small_old, "a\nB\nc\n", 0);
        assert_eq!(
            out.into_string(),
            "--- a\n+++ b\n@@ -2 +2 @@\n-b\n+B\n--- a\n+++ b\n@@ -2 +2 @@\n-b\n+B\n"
        );
        let mut out = DiffText::new(usize::MAX);
        out.match_budget = 5;
        write_unified_diff(&mut out, "a", "b", "x\ny\nz\n", "y\nz\nx\n", 1);
        assert_eq!(
            out.into_string(),
            "--- a\n+++ b\n@@ -1,3 +1,3 @@\n-x\n-y\n-z\n+y\n+z\n+x\n"
        );
        // Creating a huge file is streamed too, and the byte cap stops it early.
        let mut out = DiffText::new(1000);
        write_unified_diff(
            &mut out,
            "/dev/null",
            "b/big",
            "",
            &"\n".repeat(16 << 20),
            3,
        );
        assert!(out.is_cut());
        let text = out.into_string();
        assert!(text.len() <= 1000);
        assert!(text.starts_with("--- /dev/null\n+++ b/big\n@@ -0,0 +1,16777216 @@\n+\n"));
        assert!(text.ends_with("+\n"));
    }

    fn two_files_patch(old: &str, new: &str) -> String {
        let mut out = DiffText::new(usize::MAX);
        write_two_files_patch(&mut out, "/f.txt", old, new, 4);
        out.into_string()
    }

    const PATCH_HEAD: &str = "Index: /f.txt\n===================================================================\n--- /f.txt\toriginal\n+++ /f.txt\tmodified\n";

    #[test]
    fn two_files_patch_prints_like_the_diff_package() {
        let lines: Vec<String> = (1..=20).map(|i| i.to_string()).collect();
        let mut changed = lines.clone();
        changed[1] = "X".into();
        changed[18] = "Y".into();
        assert_eq!(
            two_files_patch(&(lines.join("\n") + "\n"), &(changed.join("\n") + "\n")),
            format!("{PATCH_HEAD}@@ -1,6 +1,6 @@\n 1\n-2\n+X\n 3\n 4\n 5\n 6\n@@ -15,6 +15,6 @@\n 15\n 16\n 17\n 18\n-19\n+Y\n 20\n")
        );
        assert_eq!(
            two_files_patch("a\nb", "a\nc"),
            format!("{PATCH_HEAD}@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n")
        );
        assert_eq!(
            two_files_patch("a\nb\n", "a\nb"),
            format!("{PATCH_HEAD}@@ -1,2 +1,2 @@\n a\n-b\n+b\n\\ No newline at end of file\n")
        );
        assert_eq!(
            two_files_patch("a\nb\nc\nd\ne\nf\ng\n", "A\nb\nc\nd\ne\nf\ng\n"),
            format!("{PATCH_HEAD}@@ -1,5 +1,5 @@\n-a\n+A\n b\n c\n d\n e\n")
        );
        assert_eq!(
            two_files_patch("", "x\n"),
            format!("{PATCH_HEAD}@@ -0,0 +1,1 @@\n+x\n")
        );
        assert_eq!(
            two_files_patch("keep\nold1\nold2\nkeep2\n", "keep\nnew\nkeep2\nadded\n"),
            format!("{PATCH_HEAD}@@ -1,4 +1,4 @@\n keep\n-old1\n-old2\n+new\n keep2\n+added\n")
        );
        assert_eq!(two_files_patch("same\n", "same\n"), PATCH_HEAD);
    }

    #[test]
    fn a_large_two_files_patch_is_capped_and_streamed() {
        let old: String = (0..30_000).map(|i| format!("o{i}\n")).collect();
        let new: String = (0..30_000).map(|i| format!("n{i}\n")).collect();
        let mut out = DiffText::new(64 << 10);
        let started = std::time::Instant::now();
        write_two_files_patch(&mut out, "/f", &old, &new, 4);
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
        assert!(out.is_cut());
        let text = out.into_string();
        assert!(text.len() <= 64 << 10);
        assert!(
            text.contains("@@ -1,30000 +1,30000 @@\n-o0\n-o1\n"),
            "{}",
            &text[..300]
        );
        // Uncapped, the block holds every old line then every new line.
        let mut out = DiffText::new(usize::MAX);
        write_two_files_patch(&mut out, "/f", &old, &new, 4);
        let text = out.into_string();
        assert_eq!(text.lines().filter(|l| l.starts_with("-o")).count(), 30_000);
        assert_eq!(text.lines().filter(|l| l.starts_with("+n")).count(), 30_000);
    }

    #[test]
    fn diff_text_keeps_whole_lines_up_to_its_limit() {
        let mut out = DiffText::new(10);
        assert!(out.line(&["abc", "de"]));
        assert!(!out.is_cut());
        assert!(!out.line(&["12345"]), "6 + 6 bytes do not fit in 10");
        assert!(out.is_cut());
        assert!(!out.line(&["x"]), "nothing is kept after a cut");
        assert_eq!(out.into_string(), "abcde\n");
    }
}
