//! Finding blocks of lines in a text, exactly or ignoring whitespace, for patch tools (V4A
//! `apply_patch` sections and anchors, `edit_file`'s indentation-tolerant edits) and finding
//! the lines where a literal string occurs (`str_replace`).
//!
//! A [`LineIndex`] is built once per file: every line gets an id per way of comparing (equal
//! ids, equal lines), so a block is found by Knuth-Morris-Pratt over ids, in time linear in the
//! lines scanned whatever the lines hold, and single lines are found by binary search. Lines
//! are the text split at `\n` (a final newline leaves an empty last line, as JavaScript's
//! `split('\n')` does); a `\r` stays part of its line.

use std::cmp::Ordering;

use super::error::{WsError, WsResult};

/// How two lines are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Leniency {
    /// Equal text.
    Exact,
    /// Equal once trailing whitespace is removed.
    TrailingSpace,
    /// Equal once leading and trailing whitespace are removed.
    SurroundingSpace,
}

const LENIENCIES: [Leniency; 3] = [
    Leniency::Exact,
    Leniency::TrailingSpace,
    Leniency::SurroundingSpace,
];

/// JavaScript's whitespace (what `String.prototype.trim` removes), so lines compare as the
/// JavaScript tools describe them.
fn is_js_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202f}'
                | '\u{205f}'
                | '\u{3000}'
                | '\u{feff}'
    )
}

fn normalized(line: &str, how: Leniency) -> &str {
    match how {
        Leniency::Exact => line,
        Leniency::TrailingSpace => line.trim_end_matches(is_js_space),
        Leniency::SurroundingSpace => line.trim_matches(is_js_space),
    }
}

/// An id that no line of the file has: a wanted line absent from the file.
const ABSENT: u32 = u32::MAX;

/// The lines of a file under one way of comparing them.
#[derive(Debug)]
struct Level {
    how: Leniency,
    /// The id of each line.
    ids: Vec<u32>,
    /// Line numbers grouped by id, ids in the order of their text, lines ascending in a group.
    by_text: Vec<u32>,
    /// Where each id's group starts in `by_text` (one extra entry: the end).
    group_start: Vec<u32>,
}

/// Most line comparisons one index makes over its lifetime beyond what its size pays for:
/// blocks that match nowhere make a search scan to the end of the file, and a patch of many
/// such sections would otherwise cost sections × lines.
pub const BASE_WORK: u64 = 1 << 26;
/// Line comparisons an index may make per line of the file, on top of [`BASE_WORK`].
pub const WORK_PER_LINE: u64 = 64;

/// A file's lines, indexed for finding lines and blocks of lines.
#[derive(Debug)]
pub struct LineIndex {
    text: String,
    /// Byte range of each line.
    spans: Vec<(usize, usize)>,
    levels: Vec<Level>,
    /// Line comparisons left (see [`BASE_WORK`]).
    work_left: u64,
}

impl LineIndex {
    /// Indexes `text` (time n log n in its lines, memory linear).
    pub fn new(text: String) -> WsResult<Self> {
        let mut spans = Vec::new();
        let mut start = 0;
        for (i, b) in text.bytes().enumerate() {
            if b == b'\n' {
                spans.push((start, i));
                start = i + 1;
            }
        }
        spans.push((start, text.len()));
        if u32::try_from(spans.len()).is_err() {
            return Err(WsError::invalid_input("a text of more than 2^32 lines"));
        }
        let mut index = LineIndex {
            work_left: BASE_WORK + WORK_PER_LINE * spans.len() as u64,
            text,
            spans,
            levels: Vec::new(),
        };
        index.levels = LENIENCIES.iter().map(|&how| index.level(how)).collect();
        Ok(index)
    }

    fn line(&self, i: usize) -> &str {
        let (a, b) = self.spans[i];
        &self.text[a..b]
    }

    fn level(&self, how: Leniency) -> Level {
        let n = self.spans.len();
        let mut by_text: Vec<u32> = (0..n as u32).collect();
        // Stable: equal lines keep ascending line numbers.
        by_text.sort_by(|&a, &b| {
            normalized(self.line(a as usize), how).cmp(normalized(self.line(b as usize), how))
        });
        let mut ids = vec![0u32; n];
        let mut group_start = Vec::new();
        for (k, &line) in by_text.iter().enumerate() {
            let new_group = k == 0
                || normalized(self.line(by_text[k - 1] as usize), how)
                    != normalized(self.line(line as usize), how);
            if new_group {
                group_start.push(k as u32);
            }
            ids[line as usize] = group_start.len() as u32 - 1;
        }
        group_start.push(n as u32);
        Level {
            how,
            ids,
            by_text,
            group_start,
        }
    }

    fn level_of(&self, how: Leniency) -> &Level {
        &self.levels[how as usize]
    }

    /// The id of `line` under `how`, [`ABSENT`] if no line of the file compares equal.
    fn id_of(&self, line: &str, how: Leniency) -> u32 {
        let level = self.level_of(how);
        let wanted = normalized(line, how);
        let groups = level.group_start.len() - 1;
        let (mut lo, mut hi) = (0, groups);
        while lo < hi {
            let mid = (lo + hi) / 2;
            let representative = level.by_text[level.group_start[mid] as usize] as usize;
            match normalized(self.line(representative), level.how).cmp(wanted) {
                Ordering::Less => lo = mid + 1,
                Ordering::Greater => hi = mid,
                Ordering::Equal => return mid as u32,
            }
        }
        ABSENT
    }

    /// Number of lines.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// Whether the index has no lines (never: the empty text is one empty line).
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// The first line at or after `from` equal to `line` under `how`.
    pub fn find_line(&self, line: &str, from: usize, how: Leniency) -> Option<usize> {
        let id = self.id_of(line, how);
        if id == ABSENT {
            return None;
        }
        let level = self.level_of(how);
        let group = &level.by_text
            [level.group_start[id as usize] as usize..level.group_start[id as usize + 1] as usize];
        let at = group.partition_point(|&l| (l as usize) < from);
        group.get(at).map(|&l| l as usize)
    }

    fn charge(&mut self, steps: usize) -> WsResult<()> {
        self.work_left = self.work_left.checked_sub(steps as u64).ok_or_else(|| {
            WsError::too_complex(format!(
                "matching these lines needs more than {} line comparisons in a file of {} lines; \
                 send fewer or smaller sections that match exactly",
                BASE_WORK + WORK_PER_LINE * self.spans.len() as u64,
                self.spans.len()
            ))
        })?;
        Ok(())
    }

    /// The first position `i` in `from..=end - wanted.len()` where `wanted` is lines
    /// `i..i + wanted.len()` under `how`; `Some(from)` for an empty `wanted` when `from <= end`.
    /// `TOO_COMPLEX` once the index's work budget is spent.
    pub fn find_block_as(
        &mut self,
        wanted: &[String],
        from: usize,
        end: usize,
        how: Leniency,
    ) -> WsResult<Option<usize>> {
        let end = end.min(self.len());
        if wanted.is_empty() {
            return Ok((from <= end).then_some(from));
        }
        if from >= end || end - from < wanted.len() {
            return Ok(None);
        }
        let pattern: Vec<u32> = wanted.iter().map(|l| self.id_of(l, how)).collect();
        self.charge(end - from + pattern.len())?;
        let ids = &self.level_of(how).ids[from..end];
        let fail = failure_table(&pattern);
        let mut matched = 0;
        for (k, &id) in ids.iter().enumerate() {
            while matched > 0 && pattern[matched] != id {
                matched = fail[matched - 1];
            }
            if pattern[matched] == id {
                matched += 1;
                if matched == pattern.len() {
                    return Ok(Some(from + k + 1 - pattern.len()));
                }
            }
        }
        Ok(None)
    }

    /// Like [`Self::find_block_as`], trying exact comparison first, then ignoring trailing
    /// whitespace, then surrounding whitespace (the V4A rules).
    pub fn find_block(
        &mut self,
        wanted: &[String],
        from: usize,
        end: usize,
    ) -> WsResult<Option<usize>> {
        for how in LENIENCIES {
            if let Some(at) = self.find_block_as(wanted, from, end, how)? {
                return Ok(Some(at));
            }
        }
        Ok(None)
    }

    /// How many leading lines of `wanted` occur together, ignoring surrounding whitespace,
    /// somewhere at or after `from` (what a failed match reports: the line after them is the
    /// first that does not match).
    pub fn matching_prefix(&mut self, wanted: &[String], from: usize) -> WsResult<usize> {
        let end = self.len();
        if wanted.is_empty() || from >= end {
            return Ok(0);
        }
        let how = Leniency::SurroundingSpace;
        let pattern: Vec<u32> = wanted.iter().map(|l| self.id_of(l, how)).collect();
        self.charge(end - from + pattern.len())?;
        let ids = &self.level_of(how).ids[from..end];
        let fail = failure_table(&pattern);
        let (mut matched, mut best) = (0, 0);
        for &id in ids {
            while matched > 0 && (matched == pattern.len() || pattern[matched] != id) {
                matched = fail[matched - 1];
            }
            if pattern[matched] == id {
                matched += 1;
                best = best.max(matched);
                if best == pattern.len() {
                    break;
                }
            }
        }
        Ok(best)
    }
}

/// Knuth-Morris-Pratt's table: for each prefix of `pattern`, the length of its longest proper
/// prefix that is also its suffix.
fn failure_table(pattern: &[u32]) -> Vec<usize> {
    let mut fail = vec![0; pattern.len()];
    let mut k = 0;
    for i in 1..pattern.len() {
        while k > 0 && pattern[i] != pattern[k] {
            k = fail[k - 1];
        }
        if pattern[i] == pattern[k] {
            k += 1;
        }
        fail[i] = k;
    }
    fail
}

/// The lines (1-based) where the occurrences of `needle` in `text` start, scanning left to
/// right without overlap (as repeated `indexOf` from the end of the last occurrence does):
/// the first `keep` of them, and how many there are in all. Linear in `text`.
pub fn occurrence_lines(text: &str, needle: &str, keep: usize) -> (Vec<usize>, usize) {
    let mut lines = Vec::new();
    let mut count = 0;
    if needle.is_empty() {
        return (lines, 0);
    }
    let (mut line, mut counted) = (1, 0);
    let mut from = 0;
    while let Some(rel) = text[from..].find(needle) {
        let at = from + rel;
        line += text.as_bytes()[counted..at]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        counted = at;
        if lines.len() < keep {
            lines.push(line);
        }
        count += 1;
        from = at + needle.len();
    }
    (lines, count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::error::WsCode;

    fn strings(lines: &[&str]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    fn index(text: &str) -> LineIndex {
        match LineIndex::new(text.to_string()) {
            Ok(i) => i,
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn lines_split_like_javascript() {
        assert_eq!(index("").len(), 1);
        assert_eq!(index("a\nb\n").len(), 3);
        let i = index("a\r\nb");
        assert_eq!(i.find_line("a\r", 0, Leniency::Exact), Some(0));
        assert_eq!(i.find_line("a", 0, Leniency::Exact), None);
        assert_eq!(i.find_line("a", 0, Leniency::TrailingSpace), Some(0));
    }

    #[test]
    fn blocks_are_found_exactly_then_leniently() -> WsResult<()> {
        let mut i = index("x\n  a  \nb\nx\na\nb \nz\n");
        let ab = strings(&["a", "b"]);
        assert_eq!(i.find_block_as(&ab, 0, 99, Leniency::Exact)?, None);
        assert_eq!(
            i.find_block_as(&ab, 0, 99, Leniency::TrailingSpace)?,
            Some(4)
        );
        assert_eq!(
            i.find_block_as(&ab, 0, 99, Leniency::SurroundingSpace)?,
            Some(1)
        );
        // An exact match far away wins over a lenient one close by.
        assert_eq!(i.find_block(&strings(&["x", "a"]), 0, 99)?, Some(3));
        assert_eq!(i.find_block(&ab, 0, 99)?, Some(4));
        assert_eq!(i.find_block(&ab, 5, 99)?, None);
        assert_eq!(
            i.find_block(&ab, 0, 5)?,
            Some(1),
            "the block must fit before end"
        );
        assert_eq!(i.find_block(&[], 3, 99)?, Some(3));
        assert_eq!(i.find_block(&strings(&["nowhere"]), 0, 99)?, None);
        // Overlapping candidates (KMP's fall back).
        let mut i = index("a\na\na\nb\n");
        assert_eq!(i.find_block(&strings(&["a", "a", "b"]), 0, 99)?, Some(1));
        Ok(())
    }

    #[test]
    fn javascript_whitespace_is_trimmed() -> WsResult<()> {
        let mut i = index("\u{feff}\u{a0}x\t\u{3000}\n\u{85}y");
        assert_eq!(
            i.find_block_as(&strings(&["x"]), 0, 9, Leniency::SurroundingSpace)?,
            Some(0)
        );
        assert_eq!(
            i.find_block_as(&strings(&["y"]), 0, 9, Leniency::SurroundingSpace)?,
            None,
            "U+0085 is not JavaScript whitespace"
        );
        Ok(())
    }

    #[test]
    fn matching_prefix_reports_the_longest_leading_run() -> WsResult<()> {
        let mut i = index("a\nb\nc\na\nb\nx\n");
        assert_eq!(i.matching_prefix(&strings(&["a", "b", "x", "q"]), 0)?, 3);
        assert_eq!(i.matching_prefix(&strings(&["a", "b", "c"]), 1)?, 2);
        assert_eq!(i.matching_prefix(&strings(&["q"]), 0)?, 0);
        assert_eq!(i.matching_prefix(&strings(&[" a ", "b"]), 0)?, 2);
        Ok(())
    }

    #[test]
    fn single_lines_are_found_after_a_cursor() {
        let i = index("f\ng\nf\n");
        assert_eq!(i.find_line("f", 0, Leniency::Exact), Some(0));
        assert_eq!(i.find_line("f", 1, Leniency::Exact), Some(2));
        assert_eq!(i.find_line("f", 3, Leniency::Exact), None);
        assert_eq!(i.find_line(" g ", 0, Leniency::SurroundingSpace), Some(1));
    }

    #[test]
    fn repetitive_input_costs_linear_time() -> WsResult<()> {
        let n = 200_000;
        let mut i = index(&"x\n".repeat(n));
        let mut wanted = vec!["x".to_string(); n / 2];
        wanted.push("y".to_string());
        let started = std::time::Instant::now();
        assert_eq!(i.find_block(&wanted, 0, usize::MAX)?, None);
        assert_eq!(i.matching_prefix(&wanted, 0)?, n / 2);
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
        Ok(())
    }

    #[test]
    fn the_work_budget_ends_endless_rescans() {
        let mut i = index(&"x\n".repeat(1000));
        let wanted = strings(&["x", "y"]);
        let mut outcome = Ok(None);
        for _ in 0..100_000 {
            outcome = i.find_block(&wanted, 0, usize::MAX);
            if outcome.is_err() {
                break;
            }
        }
        match outcome {
            Err(e) => assert_eq!(e.code, WsCode::TooComplex),
            Ok(r) => panic!("the budget was never spent: {r:?}"),
        }
    }

    #[test]
    fn occurrences_are_counted_without_overlap() {
        assert_eq!(occurrence_lines("aaaa", "aa", 10), (vec![1, 1], 2));
        assert_eq!(occurrence_lines("x\nab\n\nab", "ab", 10), (vec![2, 4], 2));
        assert_eq!(occurrence_lines("ab\nab\nab", "ab", 2), (vec![1, 2], 3));
        assert_eq!(occurrence_lines("abc", "", 10), (vec![], 0));
        assert_eq!(occurrence_lines("é\néx", "x", 10), (vec![2], 1));
    }
}
