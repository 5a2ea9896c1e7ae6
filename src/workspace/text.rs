//! Pure helpers for line-based reading and patching, literal search and text diffs.
//!
//! Line conventions (the same an editor shows):
//! - lines are numbered from 1 and ranges are inclusive: lines `2..=3` are lines 2 and 3;
//! - a line ends at `\n`; a `\r` before it belongs to the terminator, not the text;
//! - a final newline does not start an extra empty line: `"a\nb\n"` has two lines, and so
//!   has `"a\nb"`; the empty file has none.

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

/// Indices `first..=last` of a sequence of `len` items widened by `context` on each side and
/// clamped to the sequence: the window shown around a search hit or a diff hunk.
pub fn around(first: usize, last: usize, context: usize, len: usize) -> std::ops::Range<usize> {
    first.saturating_sub(context)..(last + context + 1).min(len)
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
}

/// Selects lines `start..=end` (1-based, inclusive) of `data`.
///
/// `end` may run past the end of the file and is clamped. `start` must be at least 1 and
/// not past the last line; as the single exception, `start == 1` on an empty file returns
/// no lines. `end` must not be smaller than `start`.
pub fn select_lines(data: &[u8], start: usize, end: usize) -> WsResult<LineSlice> {
    if start == 0 {
        return Err(WsError::range("line numbers start at 1; got start line 0"));
    }
    if end < start {
        return Err(WsError::range(format!(
            "end line {end} is before start line {start}"
        )));
    }
    let spans = line_spans(data);
    let total = spans.len();
    if start > total && !(start == 1 && total == 0) {
        return Err(WsError::range(format!(
            "start line {start} is past the end of the file, which has {total} line{}",
            plural(total)
        )));
    }
    let last = end.min(total);
    let lines = spans
        .get(start - 1..last)
        .unwrap_or(&[])
        .iter()
        .map(|s| String::from_utf8_lossy(&data[s.start..s.text_end]).into_owned())
        .collect();
    Ok(LineSlice {
        start,
        end: last.max(start - 1),
        total_lines: total,
        lines,
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

/// Result of a search.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SearchResult {
    /// Hits in path order, then line order.
    pub matches: Vec<SearchMatch>,
    /// Whether more hits existed than were returned.
    pub truncated: bool,
    /// Number of text files searched (binary files are skipped).
    pub files_searched: usize,
}

/// Searches one file's text for the literal `query` and appends hits to `result`
/// (at most one hit per line). Returns `false` once `max_results` is reached and another
/// hit was found, so the caller can stop.
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
    let text = String::from_utf8_lossy(data);
    if !text.contains(query) {
        return true;
    }
    let lines = text_lines(&text);
    for (i, line) in lines.iter().enumerate() {
        let Some(byte_col) = line.find(query) else {
            continue;
        };
        if result.matches.len() >= max_results {
            result.truncated = true;
            return false;
        }
        let window = around(i, i, context_lines, lines.len());
        result.matches.push(SearchMatch {
            path: path.to_string(),
            line: i + 1,
            column: line[..byte_col].chars().count() + 1,
            before: lines[window.start..i]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            line_text: line.to_string(),
            after: lines[i + 1..window.end]
                .iter()
                .map(|s| s.to_string())
                .collect(),
        });
    }
    true
}

/// Largest number of cells the line-matching table may use before the diff falls back to
/// showing the changed middle as one block.
const DIFF_CELL_BUDGET: usize = 4_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Edit {
    Same(usize, usize),
    Del(usize),
    Ins(usize),
}

fn edit_script(old: &[&str], new: &[&str]) -> Vec<Edit> {
    let prefix = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let suffix = old[prefix..]
        .iter()
        .rev()
        .zip(new[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let (o, n) = (
        &old[prefix..old.len() - suffix],
        &new[prefix..new.len() - suffix],
    );
    let mut script: Vec<Edit> = (0..prefix).map(|i| Edit::Same(i, i)).collect();
    if o.len().saturating_mul(n.len()) > DIFF_CELL_BUDGET {
        script.extend((0..o.len()).map(|i| Edit::Del(prefix + i)));
        script.extend((0..n.len()).map(|j| Edit::Ins(prefix + j)));
    } else {
        // lcs[i][j] = length of the longest common subsequence of o[i..] and n[j..].
        let width = n.len() + 1;
        let mut lcs = vec![0u32; (o.len() + 1) * width];
        for i in (0..o.len()).rev() {
            for j in (0..n.len()).rev() {
                lcs[i * width + j] = if o[i] == n[j] {
                    lcs[(i + 1) * width + j + 1] + 1
                } else {
                    lcs[(i + 1) * width + j].max(lcs[i * width + j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < o.len() || j < n.len() {
            if i < o.len() && j < n.len() && o[i] == n[j] {
                script.push(Edit::Same(prefix + i, prefix + j));
                i += 1;
                j += 1;
            } else if i < o.len()
                && (j == n.len() || lcs[(i + 1) * width + j] >= lcs[i * width + j + 1])
            {
                script.push(Edit::Del(prefix + i));
                i += 1;
            } else {
                script.push(Edit::Ins(prefix + j));
                j += 1;
            }
        }
    }
    let (old_tail, new_tail) = (old.len() - suffix, new.len() - suffix);
    script.extend((0..suffix).map(|k| Edit::Same(old_tail + k, new_tail + k)));
    script
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

/// A unified diff of two texts with `context` lines around each change.
///
/// `old_name`/`new_name` label the `---`/`+++` lines. Returns only the headers when the
/// texts are equal line for line.
pub fn unified_diff(
    old_name: &str,
    new_name: &str,
    old: &str,
    new: &str,
    context: usize,
) -> String {
    let (a, b) = (text_lines(old), text_lines(new));
    let script = edit_script(&a, &b);
    let mut out = format!("--- {old_name}\n+++ {new_name}\n");
    let changed: Vec<usize> = script
        .iter()
        .enumerate()
        .filter(|(_, e)| !matches!(e, Edit::Same(..)))
        .map(|(k, _)| k)
        .collect();
    let mut k = 0;
    while k < changed.len() {
        // Grow the hunk while the next change is close enough to share context.
        let first = changed[k];
        let mut last = first;
        while k + 1 < changed.len() && changed[k + 1] - last <= 2 * context + 1 {
            k += 1;
            last = changed[k];
        }
        k += 1;
        let window = around(first, last, context, script.len());
        let lo = window.start;
        let slice = &script[window];
        // Position of the hunk in each text: count lines consumed before `lo`.
        let (mut old_start, mut new_start) = (0, 0);
        for e in &script[..lo] {
            match e {
                Edit::Same(..) => {
                    old_start += 1;
                    new_start += 1;
                }
                Edit::Del(_) => old_start += 1,
                Edit::Ins(_) => new_start += 1,
            }
        }
        let old_len = slice.iter().filter(|e| !matches!(e, Edit::Ins(_))).count();
        let new_len = slice.iter().filter(|e| !matches!(e, Edit::Del(_))).count();
        out.push_str(&format!(
            "@@ -{} +{} @@\n",
            hunk_range(old_start, old_len),
            hunk_range(new_start, new_len)
        ));
        for e in slice {
            match *e {
                Edit::Same(i, _) => {
                    out.push(' ');
                    out.push_str(a[i]);
                }
                Edit::Del(i) => {
                    out.push('-');
                    out.push_str(a[i]);
                }
                Edit::Ins(j) => {
                    out.push('+');
                    out.push_str(b[j]);
                }
            }
            out.push('\n');
        }
    }
    out
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
        assert_eq!(around(5, 5, 2, 10), 3..8);
        assert_eq!(around(0, 1, 3, 10), 0..5);
        assert_eq!(around(8, 9, 3, 10), 5..10);
        assert_eq!(around(4, 4, 0, 10), 4..5);
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
        let s = select_lines(data, 2, 3)?;
        assert_eq!(s.lines, vec!["two", "three"]);
        assert_eq!((s.start, s.end, s.total_lines), (2, 3, 4));
        let s = select_lines(data, 3, 100)?;
        assert_eq!(s.lines, vec!["three", "four"]);
        assert_eq!(s.end, 4);
        let s = select_lines(data, 4, 4)?;
        assert_eq!(s.lines, vec!["four"]);
        let s = select_lines(b"a\r\nb", 1, 2)?;
        assert_eq!(s.lines, vec!["a", "b"]);
        let s = select_lines(b"", 1, 10)?;
        assert!(s.lines.is_empty());
        assert_eq!((s.start, s.end, s.total_lines), (1, 0, 0));
        Ok(())
    }

    #[test]
    fn select_range_errors() {
        let data = b"one\ntwo\n";
        for (start, end) in [(0, 1), (3, 3), (5, 9), (2, 1)] {
            match select_lines(data, start, end) {
                Err(e) => assert_eq!(e.code, WsCode::Range, "{start}-{end}"),
                Ok(s) => panic!("{start}-{end} gave {s:?}"),
            }
        }
        assert_eq!(
            select_lines(b"", 2, 2).map_err(|e| e.code),
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
        let mut r = SearchResult::default();
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
}
