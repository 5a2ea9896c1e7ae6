//! Tests of the history: recording, undo and redo, compaction, diffs and the archived log.

use super::*;
use crate::workspace::error::WsCode;

fn file(s: &str) -> Option<Content> {
    Some(Content::File(Arc::from(s.as_bytes())))
}

fn clock() -> u64 {
    42
}

/// Writes through the vfs and records the change, like the workspace does.
fn write(h: &mut HistoryState, v: &mut Vfs, p: &str, text: &str) -> Option<u64> {
    let before = v.content(p);
    v.set_content(p, file(text));
    let after = v.content(p);
    h.record(
        vec![Change {
            path: p.into(),
            before,
            after,
        }],
        &format!("write {p}"),
        v.now(),
    )
}

fn text(v: &Vfs, p: &str) -> String {
    v.read_file(p)
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .unwrap_or_default()
}

#[test]
fn record_skips_no_ops_and_numbers_entries() {
    let mut h = HistoryState::new();
    let mut v = Vfs::new().with_clock(clock);
    assert_eq!(h.record(Vec::new(), "nothing", 1), None);
    let same = Change {
        path: "a".into(),
        before: file("x"),
        after: file("x"),
    };
    assert_eq!(h.record(vec![same], "same", 1), None);
    assert_eq!(write(&mut h, &mut v, "a", "1"), Some(1));
    assert_eq!(write(&mut h, &mut v, "b", "2"), Some(2));
    let e = h.entries(10);
    assert_eq!(e.iter().map(|e| e.id).collect::<Vec<_>>(), vec![2, 1]);
    assert_eq!(e[0].op, "write b");
    assert_eq!(e[0].paths, vec!["b"]);
    assert_eq!(e[0].time, 42);
    assert!(!e[0].compacted);
    assert_eq!(h.entries(1).len(), 1);
}

#[test]
fn undo_redo_roundtrip() -> WsResult<()> {
    let mut h = HistoryState::new();
    let mut v = Vfs::new();
    write(&mut h, &mut v, "a", "1");
    write(&mut h, &mut v, "a", "2");
    write(&mut h, &mut v, "b", "3");
    assert_eq!(h.undo(&mut v, 2)?, vec![3, 2]);
    assert_eq!(text(&v, "a"), "1");
    assert!(!v.exists("b"));
    assert_eq!(h.redo_depth(), 2);
    assert_eq!(h.redo(&mut v, 1)?, vec![2]);
    assert_eq!(text(&v, "a"), "2");
    assert_eq!(h.redo(&mut v, 5)?, vec![3]);
    assert_eq!(text(&v, "b"), "3");
    assert_eq!(h.redo(&mut v, 1).map_err(|e| e.code), Err(WsCode::History));
    assert_eq!(h.undo(&mut v, 10)?, vec![3, 2, 1]);
    assert!(!v.exists("a"));
    assert_eq!(h.undo(&mut v, 1).map_err(|e| e.code), Err(WsCode::History));
    assert_eq!(h.undo(&mut v, 0)?, Vec::<u64>::new());
    Ok(())
}

#[test]
fn new_record_clears_redo() -> WsResult<()> {
    let mut h = HistoryState::new();
    let mut v = Vfs::new();
    write(&mut h, &mut v, "a", "1");
    write(&mut h, &mut v, "a", "2");
    h.undo(&mut v, 1)?;
    write(&mut h, &mut v, "c", "x");
    assert_eq!(h.redo_depth(), 0);
    assert_eq!(h.redo(&mut v, 1).map_err(|e| e.code), Err(WsCode::History));
    assert_eq!(h.last_id(), Some(3));
    Ok(())
}

#[test]
fn outside_changes_are_detected() -> WsResult<()> {
    let mut h = HistoryState::new();
    let mut v = Vfs::new();
    write(&mut h, &mut v, "a", "1");
    v.set_content("a", file("tampered"));
    let e = h.undo(&mut v, 1).map_err(|e| e.code);
    assert_eq!(e, Err(WsCode::History));
    assert_eq!(text(&v, "a"), "tampered");
    assert_eq!(h.undo_depth(), 1);
    Ok(())
}

#[test]
fn compaction_by_count_and_cap() -> WsResult<()> {
    let config = HistoryConfig {
        keep_full: 3,
        max_entries: 5,
        max_full_bytes: u64::MAX,
    };
    let mut h = HistoryState::with_config(config);
    let mut v = Vfs::new();
    for i in 0..7 {
        write(&mut h, &mut v, "a", &i.to_string());
    }
    let e = h.entries(100);
    assert_eq!(e.len(), 5);
    assert_eq!(
        e.iter().map(|e| e.id).collect::<Vec<_>>(),
        vec![7, 6, 5, 4, 3]
    );
    assert_eq!(e.iter().filter(|e| e.compacted).count(), 2);
    assert_eq!(h.undo_depth(), 3);
    assert_eq!(h.undo(&mut v, 10)?, vec![7, 6, 5]);
    assert_eq!(text(&v, "a"), "3");
    let err = h.undo(&mut v, 1).map_err(|e| e.code);
    assert_eq!(err, Err(WsCode::History));
    assert_eq!(h.diff(4).map_err(|e| e.code), Err(WsCode::History));
    assert_eq!(h.diff(1).map_err(|e| e.code), Err(WsCode::History));
    Ok(())
}

#[test]
fn compaction_by_bytes() {
    let config = HistoryConfig {
        keep_full: 50,
        max_entries: 200,
        max_full_bytes: 25,
    };
    let mut h = HistoryState::with_config(config);
    let mut v = Vfs::new();
    write(&mut h, &mut v, "a", "0123456789");
    write(&mut h, &mut v, "b", "0123456789");
    // Entry 1 holds 10 bytes, entry 2 10 bytes: 20 <= 25.
    assert_eq!(h.undo_depth(), 2);
    write(&mut h, &mut v, "c", "0123456789");
    assert_eq!(h.undo_depth(), 2);
    assert!(h.entries(3)[2].compacted);
}

#[test]
fn compacted_entries_keep_limited_paths() {
    let config = HistoryConfig {
        keep_full: 0,
        max_entries: 10,
        max_full_bytes: u64::MAX,
    };
    let mut h = HistoryState::with_config(config);
    let changes: Vec<Change> = (0..150)
        .map(|i| Change {
            path: format!("f{i:03}"),
            before: None,
            after: file("x"),
        })
        .collect();
    h.record(changes, "batch", 1);
    let e = &h.entries(1)[0];
    assert!(e.compacted);
    assert_eq!(e.paths.len(), MAX_KEPT_PATHS);
    assert_eq!(e.path_count, 150);
}

#[test]
fn diff_text_binary_and_dirs() -> WsResult<()> {
    let mut h = HistoryState::new();
    let changes = vec![
        Change {
            path: "d".into(),
            before: None,
            after: Some(Content::Dir),
        },
        Change {
            path: "d/t.txt".into(),
            before: file("a\nb\n"),
            after: file("a\nc\n"),
        },
        Change {
            path: "bin".into(),
            before: None,
            after: Some(Content::File(Arc::from(&b"\0\x01"[..]))),
        },
        Change {
            path: "new.txt".into(),
            before: None,
            after: file("hi\n"),
        },
        Change {
            path: "old".into(),
            before: Some(Content::Dir),
            after: None,
        },
    ];
    let id = h.record(changes, "batch", 1).unwrap_or_default();
    let d = h.diff(id)?;
    assert!(
        d.contains("binary file ~/bin changed (0 -> 2 bytes)"),
        "{d}"
    );
    assert!(d.contains("created directory ~/d\n"), "{d}");
    assert!(
        d.contains("--- a/d/t.txt\n+++ b/d/t.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n"),
        "{d}"
    );
    assert!(
        d.contains("--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hi\n"),
        "{d}"
    );
    assert!(d.contains("deleted directory ~/old\n"), "{d}");
    assert_eq!(h.diff(99).map_err(|e| e.code), Err(WsCode::History));
    Ok(())
}

#[test]
fn long_diffs_are_cut_with_a_marker() -> WsResult<()> {
    let mut h = HistoryState::new();
    let mut v = Vfs::new();
    let big = "\n".repeat(16 << 20);
    let id = write(&mut h, &mut v, "big.txt", &big).unwrap_or_default();
    write(&mut h, &mut v, "small.txt", "one\n");
    let d = h.diff(id)?;
    let (body, marker) = d.trim_end().rsplit_once('\n').unwrap_or_default();
    assert!(body.len() < MAX_DIFF_BYTES, "{}", body.len());
    assert!(body.starts_with("--- /dev/null\n+++ b/big.txt\n@@ -0,0 +1,16777216 @@\n+\n"));
    assert!(body.ends_with("\n+"), "cut at a line boundary");
    assert_eq!(
        marker,
        format!(
            "[diff cut off here: the diff of entry #{id} is longer than {MAX_DIFF_BYTES} bytes]"
        )
    );
    // A diff that fits has no marker.
    let d = h.diff(id + 1)?;
    assert_eq!(d, "--- /dev/null\n+++ b/small.txt\n@@ -0,0 +1 @@\n+one\n");
    // An entry with many files stops at the cap too.
    let changes: Vec<Change> = (0..3000)
        .map(|i| Change {
            path: format!("f{i:04}.txt"),
            before: None,
            after: file(&"line\n".repeat(100)),
        })
        .collect();
    let id = h.record(changes, "batch", 1).unwrap_or_default();
    let d = h.diff(id)?;
    assert!(d.len() < MAX_DIFF_BYTES + 200);
    assert!(d.ends_with("bytes]\n"));
    Ok(())
}

#[test]
fn restore_back_and_forward() -> WsResult<()> {
    let mut h = HistoryState::new();
    let mut v = Vfs::new();
    write(&mut h, &mut v, "a", "1");
    write(&mut h, &mut v, "a", "2");
    write(&mut h, &mut v, "b", "x");
    let r = h.restore(&mut v, 1, 5)?;
    assert_eq!(r, Some(4));
    assert_eq!(text(&v, "a"), "1");
    assert!(!v.exists("b"));
    assert_eq!(h.entries(1)[0].op, "restore #1");
    // The restore is itself undoable.
    h.undo(&mut v, 1)?;
    assert_eq!(text(&v, "a"), "2");
    assert_eq!(text(&v, "b"), "x");
    // Restoring to the current state records nothing.
    assert_eq!(h.restore(&mut v, 3, 6)?, None);
    // Restore to an undone entry.
    h.undo(&mut v, 2)?;
    assert_eq!(text(&v, "a"), "1");
    assert_eq!(h.restore(&mut v, 3, 7)?, Some(5));
    assert_eq!(text(&v, "a"), "2");
    assert_eq!(text(&v, "b"), "x");
    assert_eq!(h.redo_depth(), 0);
    assert_eq!(
        h.restore(&mut v, 77, 8).map_err(|e| e.code),
        Err(WsCode::History)
    );
    Ok(())
}

#[test]
fn restore_refuses_to_cross_compacted_entries() {
    let config = HistoryConfig {
        keep_full: 1,
        max_entries: 10,
        max_full_bytes: u64::MAX,
    };
    let mut h = HistoryState::with_config(config);
    let mut v = Vfs::new();
    write(&mut h, &mut v, "a", "1");
    write(&mut h, &mut v, "a", "2");
    write(&mut h, &mut v, "a", "3");
    // Entry 2 is compacted: entry 1's state cannot be rebuilt.
    assert_eq!(
        h.restore(&mut v, 1, 0).map_err(|e| e.code),
        Err(WsCode::History)
    );
    assert_eq!(text(&v, "a"), "3");
    // Entry 2's state only needs entry 3, which is kept.
    assert!(h.restore(&mut v, 2, 0).is_ok());
    assert_eq!(text(&v, "a"), "2");
}

#[test]
fn files_roundtrip_and_dedupe() -> WsResult<()> {
    let mut h = HistoryState::new();
    let mut v = Vfs::new();
    write(&mut h, &mut v, "a", "same");
    write(&mut h, &mut v, "b", "same");
    write(&mut h, &mut v, "a", "other");
    h.undo(&mut v, 1)?;
    let files = h.to_files();
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, vec![LOG_FILE, ".time/pack-00000.bin"]);
    assert_eq!(files[1].1, b"sameother", "each content is stored once");
    let map: BTreeMap<String, Vec<u8>> = files.into_iter().collect();
    let back = HistoryState::from_files(&map)?;
    assert_eq!(back, h);
    assert_eq!(back.to_files(), h.to_files());
    Ok(())
}

#[test]
fn empty_history_has_no_files() -> WsResult<()> {
    assert!(HistoryState::new().to_files().is_empty());
    assert_eq!(
        HistoryState::from_files(&BTreeMap::new())?,
        HistoryState::new()
    );
    Ok(())
}

#[test]
fn malformed_logs_are_refused() {
    let mut h = HistoryState::new();
    let mut v = Vfs::new();
    write(&mut h, &mut v, "a", "content");
    write(&mut h, &mut v, "b", "more");
    let good: BTreeMap<String, Vec<u8>> = h.to_files().into_iter().collect();
    assert!(HistoryState::from_files(&good).is_ok());
    let log = String::from_utf8_lossy(&good[LOG_FILE]).into_owned();
    let with_log = |from: &str, to: &str| {
        let edited = log.replace(from, to);
        assert_ne!(edited, log, "{from:?} must occur in the log");
        let mut m = good.clone();
        m.insert(LOG_FILE.to_string(), edited.into_bytes());
        m
    };
    let mut without_pack = good.clone();
    without_pack.remove(".time/pack-00000.bin");
    let mut short_pack = good.clone();
    short_pack.insert(".time/pack-00000.bin".into(), b"abc".to_vec());
    let cases: Vec<(&str, BTreeMap<String, Vec<u8>>)> = vec![
        (
            "not json",
            [(LOG_FILE.to_string(), b"not json".to_vec())].into(),
        ),
        ("format", with_log("\"format\":1", "\"format\":9")),
        ("pack missing", without_pack),
        ("pack too short", short_pack),
        ("escaping path", with_log("\"a\"", "\"../a\"")),
        ("hidden path", with_log("\"a\"", "\".time/x\"")),
        ("next id", with_log("\"next_id\":3", "\"next_id\":2")),
        ("id order", with_log("\"id\":2", "\"id\":1")),
        ("missing field", with_log("\"time\":", "\"tim\":")),
    ];
    for (label, files) in &cases {
        match HistoryState::from_files(files) {
            Ok(_) => panic!("{label}: should be refused"),
            Err(e) => assert_eq!(e.code, WsCode::ZipInvalid, "{label}: {e}"),
        }
    }
}

/// The files of a hand-written history: `log` as `.time/log.json` and `pack` as its
/// one pack.
fn crafted(log: &str, pack: &[u8]) -> BTreeMap<String, Vec<u8>> {
    [
        (LOG_FILE.to_string(), log.as_bytes().to_vec()),
        (pack_name(0), pack.to_vec()),
    ]
    .into()
}

/// A log of `entries` and `redo` (JSON arrays) with `next_id`.
fn log(next_id: &str, entries: &str, redo: &str) -> String {
    format!(r#"{{"format":1,"next_id":{next_id},"entries":{entries},"redo":{redo}}}"#)
}

/// One entry changing `changes` (a JSON array).
fn entry(id: u64, changes: &str) -> String {
    format!(
        r#"{{"id":{id},"op":"crafted","time":1,"path_count":0,"paths":[],"changes":{changes}}}"#
    )
}

const ABSENT: &str = r#"{"kind":"absent"}"#;
const DIR: &str = r#"{"kind":"dir"}"#;
/// The first three bytes of the pack, `abc`.
const ABC: &str = r#"{"kind":"file","pack":0,"offset":0,"len":3}"#;

fn change(path: &str, before: &str, after: &str) -> String {
    format!(r#"{{"path":"{path}","before":{before},"after":{after}}}"#)
}

fn tree(files: &[(&str, Option<&str>)]) -> Vfs {
    let mut v = Vfs::new();
    for (p, text) in files {
        match text {
            Some(t) => v.write_file(p, t.as_bytes(), true),
            None => v.mkdir(p, true),
        }
        .unwrap_or_else(|e| panic!("{p}: {e}"));
    }
    v
}

fn refused(files: &BTreeMap<String, Vec<u8>>, v: &Vfs) -> WsError {
    match HistoryState::from_archive(files, v) {
        Ok(h) => panic!("should be refused: {h:?}"),
        Err(e) => e,
    }
}

#[test]
fn ids_without_headroom_are_refused() {
    let v = tree(&[("a", Some("abc"))]);
    let one = format!("[{}]", entry(1, &format!("[{}]", change("a", ABSENT, ABC))));
    for next in [u64::MAX, MAX_NEXT_ID + 1, MAX_EXACT] {
        let e = refused(&crafted(&log(&next.to_string(), &one, "[]"), b"abc"), &v);
        assert_eq!(e.code, WsCode::HistoryInvalid, "{next}: {e}");
        assert!(e.message.contains("leaves no room"), "{e}");
    }
    // Past u64 does not even read.
    let e = refused(
        &crafted(&log("18446744073709551616", &one, "[]"), b"abc"),
        &v,
    );
    assert_eq!(e.code, WsCode::ZipInvalid);
}

#[test]
fn ids_renumber_before_they_run_out() -> WsResult<()> {
    let mut v = tree(&[("a", Some("abc"))]);
    let one = format!(
        "[{}]",
        entry(MAX_NEXT_ID - 1, &format!("[{}]", change("a", ABSENT, ABC)))
    );
    let files = crafted(&log(&MAX_NEXT_ID.to_string(), &one, "[]"), b"abc");
    let mut h = HistoryState::from_archive(&files, &v)?;
    assert_eq!(h.last_id(), Some(MAX_NEXT_ID - 1));
    assert_eq!(write(&mut h, &mut v, "b", "x"), Some(2));
    assert_eq!(write(&mut h, &mut v, "b", "y"), Some(3));
    assert_eq!(
        h.entries(5).iter().map(|e| e.id).collect::<Vec<_>>(),
        vec![3, 2, 1]
    );
    assert_eq!(h.undo(&mut v, 3)?, vec![3, 2, 1]);
    assert!(!v.exists("a") && !v.exists("b"));
    assert_eq!(h.redo(&mut v, 1)?, vec![1]);
    // What it exports imports again.
    let back = HistoryState::from_archive(&h.to_files().into_iter().collect(), &v)?;
    assert_eq!(back, h);
    Ok(())
}

#[test]
fn a_folder_undone_into_a_file_under_its_entries_is_refused() {
    // The tree has ~/d/ with ~/d/x.txt; the entry claims ~/d was a file before.
    let v = tree(&[("d/x.txt", Some("abc"))]);
    let one = format!("[{}]", entry(1, &format!("[{}]", change("d", ABC, DIR))));
    let e = refused(&crafted(&log("2", &one, "[]"), b"abc"), &v);
    assert_eq!(e.code, WsCode::HistoryInvalid);
    assert!(
        e.message
            .contains("~/d would be a file while ~/d/x.txt is inside it"),
        "{e}"
    );
    assert!(
        e.message.contains("entry #1 (crafted) cannot be undone"),
        "{e}"
    );
    // Deleting the folder under its file is refused the same way.
    let one = format!("[{}]", entry(1, &format!("[{}]", change("d", ABSENT, DIR))));
    let e = refused(&crafted(&log("2", &one, "[]"), b"abc"), &v);
    assert!(
        e.message
            .contains("~/d would be gone while ~/d/x.txt is still inside it"),
        "{e}"
    );
}

#[test]
fn files_without_their_folder_are_refused() {
    // Undoing the deletion of ~/nodir/deep/f.js would bring it back without its folders.
    let v = tree(&[]);
    let one = format!(
        "[{}]",
        entry(1, &format!("[{}]", change("nodir/deep/f.js", ABC, ABSENT)))
    );
    let e = refused(&crafted(&log("2", &one, "[]"), b"abc"), &v);
    assert_eq!(e.code, WsCode::HistoryInvalid);
    assert!(
        e.message
            .contains("~/nodir/deep/f.js would exist without its folder ~/nodir/deep"),
        "{e}"
    );
    // The same entry as an undone one: redoing it is refused.
    let redo = format!(
        "[{}]",
        entry(1, &format!("[{}]", change("nodir/deep/f.js", ABSENT, ABC)))
    );
    let e = refused(&crafted(&log("2", "[]", &redo), b"abc"), &v);
    assert!(e.message.contains("cannot be redone"), "{e}");
    // Inside a file.
    let v = tree(&[("f", Some("abc"))]);
    let redo = format!(
        "[{}]",
        entry(1, &format!("[{}]", change("f/g", ABSENT, ABC)))
    );
    let e = refused(&crafted(&log("2", "[]", &redo), b"abc"), &v);
    assert!(e.message.contains("~/f/g would lie inside ~/f"), "{e}");
}

#[test]
fn entries_that_do_not_fit_the_tree_are_refused() {
    let v = tree(&[("a", Some("other"))]);
    // The newest entry says ~/a holds "abc"; the tree disagrees.
    let one = format!("[{}]", entry(1, &format!("[{}]", change("a", ABSENT, ABC))));
    let e = refused(&crafted(&log("2", &one, "[]"), b"abc"), &v);
    assert_eq!(e.code, WsCode::HistoryInvalid);
    assert!(
        e.message.contains("~/a does not hold the state it expects"),
        "{e}"
    );
    // An older entry that stops fitting once the newer one is undone.
    let v = tree(&[("a", Some("abc"))]);
    let two = format!(
        "[{},{}]",
        entry(1, &format!("[{}]", change("b", ABSENT, ABC))),
        entry(2, &format!("[{}]", change("a", ABSENT, ABC)))
    );
    let e = refused(&crafted(&log("3", &two, "[]"), b"abc"), &v);
    assert!(e.message.contains("entry #1"), "{e}");
    // The cursor: the next entry to redo must start from the tree as it is.
    let redo = format!("[{}]", entry(2, &format!("[{}]", change("a", ABSENT, ABC))));
    let e = refused(&crafted(&log("3", "[]", &redo), b"abc"), &v);
    assert!(e.message.contains("cannot be redone"), "{e}");
}

#[test]
fn entries_the_workspace_never_writes_are_refused() {
    let v = tree(&[("a", Some("abc"))]);
    let cases = [
        ("no change", entry(1, "[]")),
        (
            "a change to the same state",
            entry(1, &format!("[{}]", change("a", ABC, ABC))),
        ),
        (
            "a time past 2^53",
            entry(1, &format!("[{}]", change("a", ABSENT, ABC)))
                .replace(r#""time":1"#, r#""time":18446744073709551615"#),
        ),
    ];
    for (label, e) in &cases {
        let err = refused(&crafted(&log("2", &format!("[{e}]"), "[]"), b"abc"), &v);
        assert_eq!(err.code, WsCode::HistoryInvalid, "{label}: {err}");
    }
    let compacted = |id: u64, paths: &str| {
        format!(r#"{{"id":{id},"op":"old","time":1,"path_count":3,"paths":{paths}}}"#)
    };
    let full = entry(2, &format!("[{}]", change("a", ABSENT, ABC)));
    // A compacted entry newer than one that keeps its contents.
    let e = refused(
        &crafted(
            &log("4", &format!("[{full},{}]", compacted(3, "[]")), "[]"),
            b"abc",
        ),
        &v,
    );
    assert_eq!(e.code, WsCode::HistoryInvalid, "{e}");
    assert!(e.message.contains("entry #3 dropped its contents"), "{e}");
    for paths in [r#"["b","a"]"#, r#"["a","a"]"#] {
        let e = refused(
            &crafted(
                &log("3", &format!("[{},{full}]", compacted(1, paths)), "[]"),
                b"abc",
            ),
            &v,
        );
        assert!(e.message.contains("out of order"), "{e}");
    }
    let many: Vec<String> = (0..=MAX_KEPT_PATHS)
        .map(|i| format!("\"p{i:04}\""))
        .collect();
    let e = refused(
        &crafted(
            &log(
                "3",
                &format!(
                    "[{},{full}]",
                    compacted(1, &format!("[{}]", many.join(",")))
                ),
                "[]",
            ),
            b"abc",
        ),
        &v,
    );
    assert!(e.message.contains("more than 100 paths"), "{e}");
    // The same log with a valid compacted entry is accepted.
    let ok = crafted(
        &log(
            "3",
            &format!("[{},{full}]", compacted(1, r#"["a","b"]"#)),
            "[]",
        ),
        b"abc",
    );
    assert!(HistoryState::from_archive(&ok, &v).is_ok());
}

#[test]
fn history_never_leaves_the_tree_out_of_shape() -> WsResult<()> {
    // Entries that did not come through an import are checked when applied, too.
    let mut h = HistoryState::new();
    let mut v = tree(&[("d/x.txt", Some("x"))]);
    h.record(
        vec![Change {
            path: "d".into(),
            before: file("was a file"),
            after: Some(Content::Dir),
        }],
        "bad",
        1,
    );
    let before = v.clone();
    let e = h.undo(&mut v, 1).map_err(|e| e.code);
    assert_eq!(e, Err(WsCode::HistoryInvalid));
    assert_eq!(v, before, "nothing changed");
    assert_eq!(h.undo_depth(), 1);
    let e = h.restore(&mut v, 0, 1).map_err(|e| e.code);
    assert_eq!(e, Err(WsCode::History), "no entry #0");
    Ok(())
}
