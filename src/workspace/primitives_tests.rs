//! Tests of batches, renames, past file contents and tree walks.

use super::*;

fn ws() -> Workspace {
    let mut w = Workspace::new();
    w.set_clock(|| 1_000);
    w
}

fn text(w: &Workspace, p: &str) -> String {
    match w.read_file(p) {
        Ok(b) => String::from_utf8_lossy(b).into_owned(),
        Err(e) => panic!("{p}: {e}"),
    }
}

fn ops(w: &Workspace) -> Vec<String> {
    w.history(100).into_iter().map(|e| e.op).collect()
}

fn code<T: std::fmt::Debug>(r: WsResult<T>) -> WsCode {
    match r {
        Ok(v) => panic!("expected an error, got {v:?}"),
        Err(e) => e.code,
    }
}

#[test]
fn a_batch_records_its_edits_as_one_entry() -> WsResult<()> {
    let mut w = ws();
    w.write_file("a.txt", b"a", false)?;
    let ((), id) = w.batch("tidy up", |w| {
        assert_eq!(w.write_file("b/c.txt", b"c", true)?, None, "no id inside");
        w.mkdir("d", false)?;
        w.delete("a.txt", false)?;
        assert!(w.in_batch());
        Ok(())
    })?;
    assert_eq!(id, Some(2));
    assert!(!w.in_batch());
    assert_eq!(ops(&w), vec!["tidy up", "write ~/a.txt"]);
    assert_eq!(w.history(1)[0].paths, vec!["a.txt", "b", "b/c.txt", "d"]);
    w.undo(1)?;
    assert_eq!(text(&w, "a.txt"), "a");
    assert!(!w.exists("b") && !w.exists("d"));
    w.redo(1)?;
    assert_eq!(text(&w, "b/c.txt"), "c");
    Ok(())
}

#[test]
fn a_failed_batch_leaves_tree_and_history_as_they_were() -> WsResult<()> {
    let mut w = ws();
    w.write_file("a.txt", b"a", false)?;
    let before = w.to_zip();
    let failed = w.batch("half done", |w| {
        w.write_file("a.txt", b"changed", false)?;
        w.write_file("new.txt", b"n", false)?;
        w.delete("missing", false)
    });
    assert_eq!(code(failed), WsCode::NotFound);
    assert_eq!(w.to_zip(), before);
    assert!(!w.in_batch());
    // Redo is untouched too: nothing was recorded and undone on the way.
    w.undo(1)?;
    w.redo(1)?;
    assert_eq!(text(&w, "a.txt"), "a");
    Ok(())
}

#[test]
fn a_batch_that_changes_nothing_records_nothing() -> WsResult<()> {
    let mut w = ws();
    let ((), id) = w.batch("round trip", |w| {
        w.write_file("tmp", b"x", false)?;
        w.delete("tmp", false)?;
        Ok(())
    })?;
    assert_eq!(id, None);
    assert!(w.history(10).is_empty());
    Ok(())
}

#[test]
fn a_batch_inside_a_batch_joins_it_and_can_fail_alone() -> WsResult<()> {
    let mut w = ws();
    let ((), id) = w.batch("outer", |w| {
        w.write_file("one", b"1", false)?;
        let ((), inner) = w.batch("inner", |w| {
            w.write_file("two", b"2", false)?;
            Ok(())
        })?;
        assert_eq!(inner, None, "joined the outer entry");
        let failed = w.batch("inner failing", |w| {
            w.write_file("three", b"3", false)?;
            w.write_file("one", b"overwritten", false)?;
            w.mkdir("one/x", false)
        });
        assert_eq!(code(failed), WsCode::NotADirectory);
        assert!(
            !w.exists("three"),
            "only the failed inner batch is taken back"
        );
        assert_eq!(text(w, "one"), "1");
        Ok(())
    })?;
    assert_eq!(id, Some(1));
    assert_eq!(ops(&w), vec!["outer"]);
    assert_eq!(w.history(1)[0].paths, vec!["one", "two"]);
    Ok(())
}

#[test]
fn history_moves_are_refused_inside_a_batch() -> WsResult<()> {
    let mut w = ws();
    w.write_file("a", b"1", false)?;
    let ((), id) = w.batch("edits", |w| {
        w.write_file("a", b"2", false)?;
        assert_eq!(code(w.undo(1)), WsCode::History);
        assert_eq!(code(w.redo(1)), WsCode::History);
        let e = w.restore(1).err();
        assert_eq!(e.as_ref().map(|e| e.code), Some(WsCode::History));
        assert!(e.is_some_and(|e| e.message.contains("inside the batch 'edits'")));
        Ok(())
    })?;
    assert_eq!(id, Some(2));
    assert_eq!(text(&w, "a"), "2");
    Ok(())
}

#[test]
fn batch_labels_are_checked() {
    let mut w = ws();
    assert_eq!(code(w.begin_batch(" ")), WsCode::InvalidInput);
    assert_eq!(
        code(w.begin_batch(&"x".repeat(MAX_BATCH_LABEL + 1))),
        WsCode::InvalidInput
    );
    assert!(!w.in_batch());
}

#[test]
fn an_export_inside_a_batch_shows_it_recorded() -> WsResult<()> {
    let mut w = ws();
    w.write_file("a", b"1", false)?;
    let mark = w.begin_batch("pending")?;
    w.write_file("a", b"2", false)?;
    w.write_file("b", b"3", false)?;
    let zip = w.to_zip();
    let snapshot = w.snapshot();
    assert_eq!(w.end_batch(mark, true), Some(2));
    let mut back = Workspace::from_zip(&zip, &ZipLimits::default())?;
    assert_eq!(back.history(10), w.history(10));
    back.undo(1)?;
    assert_eq!(text(&back, "a"), "1");
    let mut restored = ws();
    restored.restore_snapshot(snapshot);
    assert_eq!(restored.history(10), w.history(10));
    Ok(())
}

#[test]
fn a_mark_of_a_batch_that_is_gone_changes_nothing() -> WsResult<()> {
    let mut w = ws();
    let snap = w.snapshot();
    let mark = w.begin_batch("lost")?;
    w.write_file("a", b"1", false)?;
    w.restore_snapshot(snap);
    w.write_file("b", b"2", false)?;
    assert_eq!(w.end_batch(mark, false), None);
    assert_eq!(text(&w, "b"), "2");
    assert_eq!(ops(&w), vec!["write ~/b"]);
    Ok(())
}

#[test]
fn rename_moves_files_and_folders_as_one_entry() -> WsResult<()> {
    let mut w = ws();
    w.write_file("src/a.js", b"a", true)?;
    w.write_file("src/lib/b.js", b"b", true)?;
    assert_eq!(w.rename("/src", "~/out/code", false)?, Some(3));
    assert!(!w.exists("src"));
    assert_eq!(text(&w, "out/code/a.js"), "a");
    assert_eq!(text(&w, "out/code/lib/b.js"), "b");
    assert_eq!(ops(&w)[0], "rename ~/src -> ~/out/code");
    w.undo(1)?;
    assert_eq!(text(&w, "src/lib/b.js"), "b");
    assert!(!w.exists("out"), "created parents go with the undo");
    assert_eq!(w.rename("src/a.js", "src/z.js", false)?, Some(4));
    assert_eq!(text(&w, "src/z.js"), "a");
    assert_eq!(w.rename("src/z.js", "./src/z.js", false)?, None);
    Ok(())
}

#[test]
fn rename_refuses_what_it_cannot_do_and_changes_nothing() -> WsResult<()> {
    let mut w = ws();
    w.write_file("a/x.txt", b"x", true)?;
    w.write_file("b.txt", b"b", false)?;
    w.write_file("file", b"f", false)?;
    let before = w.to_zip();
    assert_eq!(code(w.rename("missing", "c", false)), WsCode::NotFound);
    assert_eq!(code(w.rename("b.txt", "a/x.txt", false)), WsCode::Exists);
    assert_eq!(code(w.rename("a", "a/inner", false)), WsCode::InvalidInput);
    assert_eq!(code(w.rename("~/", "c", false)), WsCode::InvalidInput);
    assert_eq!(code(w.rename("b.txt", "/", true)), WsCode::InvalidInput);
    assert_eq!(code(w.rename("a/x.txt", "a", true)), WsCode::InvalidInput);
    assert_eq!(
        code(w.rename("b.txt", "file/c", false)),
        WsCode::NotADirectory
    );
    assert_eq!(
        code(w.rename("b.txt", ".time/x", false)),
        WsCode::PathInvalid
    );
    assert_eq!(w.to_zip(), before);
    Ok(())
}

#[test]
fn rename_with_overwrite_replaces_the_destination() -> WsResult<()> {
    let mut w = ws();
    w.write_file("new.txt", b"new", false)?;
    w.write_file("old/deep/x.txt", b"x", true)?;
    assert_eq!(w.rename("new.txt", "old", true)?, Some(3));
    assert_eq!(text(&w, "old"), "new");
    assert!(!w.exists("new.txt") && !w.exists("old/deep"));
    w.undo(1)?;
    assert_eq!(text(&w, "old/deep/x.txt"), "x");
    assert_eq!(text(&w, "new.txt"), "new");
    Ok(())
}

#[test]
fn rename_follows_the_access_rules_on_both_sides() -> WsResult<()> {
    let mut w = ws();
    w.write_file("src/a.js", b"a", true)?;
    w.write_file("ro/b.txt", b"b", true)?;
    w.set_path_rules(Some(PathRulesSpec {
        read_patterns: None,
        write_patterns: Some(vec!["src/**".into()]),
        read_only: false,
    }))?;
    let before = w.to_zip();
    assert_eq!(
        code(w.rename("src/a.js", "ro/a.js", false)),
        WsCode::PolicyViolation
    );
    assert_eq!(
        code(w.rename("ro/b.txt", "src/b.txt", false)),
        WsCode::PolicyViolation
    );
    assert_eq!(w.to_zip(), before);
    assert!(w.rename("src/a.js", "src/c.js", false)?.is_some());
    Ok(())
}

#[test]
fn a_file_before_an_entry_is_read_from_the_history() -> WsResult<()> {
    let mut w = ws();
    w.write_file("a.txt", b"v1", false)?; // 1
    w.write_file("a.txt", b"v2", false)?; // 2
    w.write_file("other", b"o", false)?; // 3
    w.write_file("a.txt", b"v3", false)?; // 4
    let before = |w: &Workspace, id: u64, p: &str| -> WsResult<Option<String>> {
        Ok(w.file_before(id, p)?
            .map(|b| String::from_utf8_lossy(&b).into_owned()))
    };
    assert_eq!(before(&w, 1, "a.txt")?, None, "did not exist");
    assert_eq!(before(&w, 2, "/a.txt")?.as_deref(), Some("v1"));
    assert_eq!(
        before(&w, 3, "a.txt")?.as_deref(),
        Some("v2"),
        "untouched by #3"
    );
    assert_eq!(before(&w, 4, "a.txt")?.as_deref(), Some("v2"));
    assert_eq!(
        before(&w, 4, "other")?.as_deref(),
        Some("o"),
        "as it is now"
    );
    // Undone entries answer too.
    w.undo(3)?;
    assert_eq!(before(&w, 4, "a.txt")?.as_deref(), Some("v2"));
    assert_eq!(before(&w, 3, "a.txt")?.as_deref(), Some("v2"));
    assert_eq!(before(&w, 4, "other")?.as_deref(), Some("o"));
    assert_eq!(before(&w, 2, "other")?, None);
    w.mkdir("d", false)?;
    w.write_file("e", b"", false)?;
    assert_eq!(before(&w, 6, "d")?, None, "a folder is no file");
    assert_eq!(code(w.file_before(99, "a.txt")), WsCode::History);
    assert_eq!(
        code(w.file_before(1, ".time/log.json")),
        WsCode::PathInvalid
    );
    Ok(())
}

#[test]
fn a_file_before_a_compacted_entry_is_a_history_error() -> WsResult<()> {
    let mut w = ws();
    w.set_history_config(HistoryConfig {
        keep_full: 2,
        max_entries: 20,
        max_full_bytes: u64::MAX,
    });
    for i in 0..5 {
        w.write_file("f", i.to_string().as_bytes(), false)?;
    }
    let e = w.file_before(2, "f").err();
    assert_eq!(e.as_ref().map(|e| e.code), Some(WsCode::History));
    assert!(e.is_some_and(|e| e.message.contains("compacted")));
    assert_eq!(
        w.file_before(5, "f")?.as_deref(),
        Some(&b"3"[..]),
        "kept entries still answer"
    );
    Ok(())
}

#[test]
fn file_before_follows_the_read_rules() -> WsResult<()> {
    let mut w = ws();
    w.write_file("secret.txt", b"s", false)?;
    w.write_file("secret.txt", b"t", false)?;
    w.set_path_rules(Some(PathRulesSpec {
        read_patterns: Some(vec!["src/**".into()]),
        write_patterns: None,
        read_only: false,
    }))?;
    assert_eq!(
        code(w.file_before(2, "secret.txt")),
        WsCode::PolicyViolation
    );
    Ok(())
}

#[test]
fn history_of_a_path_lists_the_entries_that_changed_it() -> WsResult<()> {
    let mut w = ws();
    w.write_file("a", b"1", false)?;
    w.write_file("b", b"1", false)?;
    w.write_file("a", b"2", false)?;
    let ids = |v: Vec<HistoryEntry>| v.into_iter().map(|e| e.id).collect::<Vec<_>>();
    assert_eq!(ids(w.history_of("~/a", 10)?), vec![3, 1]);
    assert_eq!(ids(w.history_of("/a", 1)?), vec![3]);
    assert_eq!(ids(w.history_of("c", 10)?), Vec::<u64>::new());
    assert_eq!(code(w.history_of("../x", 10)), WsCode::PathInvalid);
    Ok(())
}

#[test]
fn a_walk_lists_each_folder_before_its_contents() -> WsResult<()> {
    let mut w = ws();
    for p in [
        "src/a.txt",
        "src/a/b.js",
        "src/a/c/d.js",
        "src/z.md",
        "top.txt",
    ] {
        w.write_file(p, b"xy", true)?;
    }
    let walked = w.walk("~/src", usize::MAX)?;
    let rel: Vec<&str> = walked.iter().map(|e| e.relative.as_str()).collect();
    assert_eq!(rel, vec!["a", "a/b.js", "a/c", "a/c/d.js", "a.txt", "z.md"]);
    let d = &walked[3];
    assert_eq!(
        (d.path.as_str(), d.name.as_str(), d.depth, d.size, d.kind),
        ("src/a/c/d.js", "d.js", 3, 2, EntryKind::File)
    );
    let shallow: Vec<String> = w.walk("/", 2)?.into_iter().map(|e| e.relative).collect();
    assert_eq!(
        shallow,
        vec!["src", "src/a", "src/a.txt", "src/z.md", "top.txt"]
    );
    assert_eq!(code(w.walk("top.txt", 1)), WsCode::NotADirectory);
    assert_eq!(code(w.walk("nope", 1)), WsCode::NotFound);
    Ok(())
}
