//! Tests of the text functions: line reading and patching, search and diffs.

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
