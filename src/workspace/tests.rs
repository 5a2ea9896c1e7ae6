//! Tests of the workspace facade ([`super::Workspace`]).

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

#[test]
fn every_mutation_is_recorded() -> WsResult<()> {
    let mut w = ws();
    w.write_file("~/src/a.txt", b"one\ntwo\n", true)?;
    w.mkdir("docs", false)?;
    w.patch_lines("src/a.txt", 2, 2, "TWO", Some("two"))?;
    w.delete("docs", false)?;
    assert_eq!(
        ops(&w),
        vec![
            "delete ~/docs",
            "patch ~/src/a.txt:2-2",
            "mkdir ~/docs",
            "write ~/src/a.txt"
        ]
    );
    let first = &w.history(100)[3];
    assert_eq!(first.id, 1);
    assert_eq!(first.paths, vec!["src", "src/a.txt"]);
    assert_eq!(first.time, 1_000);
    Ok(())
}

#[test]
fn mutations_return_the_id_they_recorded() -> WsResult<()> {
    let mut w = ws();
    assert_eq!(w.write_file("a.txt", b"one\n", false)?, Some(1));
    assert_eq!(w.write_file("a.txt", b"one\n", false)?, None);
    assert_eq!(w.mkdir("d/e", true)?, Some(2));
    assert_eq!(w.mkdir("d/e", true)?, None);
    let (outcome, id) = w.patch_lines("a.txt", 1, 1, "ONE", None)?;
    assert_eq!((outcome.removed, outcome.inserted, id), (1, 1, Some(3)));
    let (_, id) = w.patch_lines("a.txt", 1, 1, "ONE", None)?;
    assert_eq!(id, None);
    assert_eq!(w.delete("d", true)?, Some(4));
    assert_eq!(w.history(1)[0].id, 4);
    Ok(())
}

#[test]
fn text_reads_refuse_bytes_that_are_not_utf8() -> WsResult<()> {
    let mut w = ws();
    w.write_file("ok.txt", "héllo".as_bytes(), false)?;
    w.write_file("img/x.bin", &[b'a', 0xff, 0xfe], true)?;
    assert_eq!(w.read_text("~/ok.txt")?, "héllo");
    let e = w.read_text("/img/./x.bin").err();
    assert_eq!(e.as_ref().map(|e| e.code), Some(WsCode::NotText));
    assert_eq!(
        e.map(|e| e.message).unwrap_or_default(),
        "~/img/x.bin is not UTF-8 text (invalid byte at offset 1); read it as bytes instead"
    );
    assert_eq!(
        w.read_text("missing").map_err(|e| e.code),
        Err(WsCode::NotFound)
    );
    Ok(())
}

#[test]
fn search_queries_are_never_empty() -> WsResult<()> {
    let e = Query::new("").err();
    assert_eq!(e.as_ref().map(|e| e.code), Some(WsCode::InvalidInput));
    assert_eq!(
        e.map(|e| e.message).unwrap_or_default(),
        "query must not be empty"
    );
    assert_eq!(Query::new("x")?.as_str(), "x");
    Ok(())
}

#[test]
fn save_and_open_round_trip_through_the_host() -> WsResult<()> {
    let mut w = ws();
    w.write_file("a.txt", b"A", false)?;
    let dir = std::env::temp_dir().join(format!(
        "quickrealm-ws-{}-{}",
        std::process::id(),
        vfs::system_clock()
    ));
    std::fs::create_dir_all(&dir).map_err(|e| WsError::io(e.to_string()))?;
    let file = dir.join("ws.zip");
    w.save(&file)?;
    let back = Workspace::open(&file, &ZipLimits::default())?;
    assert_eq!(back.read_text("a.txt")?, "A");
    assert_eq!(back.history(10), w.history(10));
    let missing = Workspace::open(&dir.join("nope.zip"), &ZipLimits::default());
    assert_eq!(missing.map(|_| ()).map_err(|e| e.code), Err(WsCode::Io));
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

#[test]
fn every_path_goes_through_the_access_rules() -> WsResult<()> {
    let mut w = ws();
    w.write_file("ro/a.txt", b"a\n", true)?;
    w.write_file("secret", b"s", false)?;
    w.set_access(Access::new(access::testing::Policy));
    let refused = |r: WsResult<Option<u64>>| r.map_err(|e| (e.code, e.message));
    let denied = |p: &str| Err((WsCode::PathInvalid, format!("~/{p} is off limits")));
    assert_eq!(
        refused(w.write_file("ro/b.txt", b"b", true)),
        denied("ro/b.txt")
    );
    assert_eq!(refused(w.mkdir("/ro/d", true)), denied("ro/d"));
    assert_eq!(refused(w.delete("~/ro", true)), denied("ro"));
    assert_eq!(
        w.patch_lines("ro/a.txt", 1, 1, "b", None)
            .map_err(|e| e.code),
        Err(WsCode::PathInvalid)
    );
    let batch = vec![StagedOp::Write {
        path: "ro/c.txt".into(),
        data: vec![],
    }];
    assert_eq!(refused(w.apply_overlay(&batch, "exec")), denied("ro/c.txt"));
    assert_eq!(w.read_text("ro/a.txt")?, "a\n");
    assert_eq!(w.list("ro", false)?.len(), 1);
    assert_eq!(
        w.read_file("secret").map_err(|e| e.code),
        Err(WsCode::PathInvalid)
    );
    assert_eq!(
        w.stat("./secret").map_err(|e| e.code),
        Err(WsCode::PathInvalid)
    );
    assert!(!w.exists("secret") && w.exists("ro/a.txt"));
    assert_eq!(
        w.search(&Query::new("s")?, "secret", 0, 10, usize::MAX)
            .map_err(|e| e.code),
        Err(WsCode::PathInvalid)
    );
    // Staged overlays follow the same rules.
    let o = w.stage(WriteQuota::default());
    assert_eq!(
        o.resolve(AccessOp::Write, "ro/x").map_err(|r| r.why),
        Err(Refused::Denied)
    );
    assert_eq!(ops(&w), vec!["write ~/secret", "write ~/ro/a.txt"]);
    Ok(())
}

#[test]
fn failed_and_no_op_mutations_record_nothing() -> WsResult<()> {
    let mut w = ws();
    w.mkdir("d", false)?;
    assert!(w.write_file("x/y", b"", false).is_err());
    assert!(w.delete("missing", true).is_err());
    assert!(w.patch_lines("missing", 1, 1, "", None).is_err());
    w.mkdir("d", true)?; // already there
    w.write_file("f", b"same", false)?;
    w.write_file("f", b"same", false)?;
    assert_eq!(ops(&w), vec!["write ~/f", "mkdir ~/d"]);
    Ok(())
}

#[test]
fn undo_redo_through_workspace() -> WsResult<()> {
    let mut w = ws();
    w.write_file("a/b/c.txt", b"v1", true)?;
    w.write_file("a/b/c.txt", b"v2", false)?;
    w.delete("a", true)?;
    assert!(!w.exists("a"));
    assert_eq!(w.undo(1)?, vec![3]);
    assert_eq!(text(&w, "a/b/c.txt"), "v2");
    assert_eq!(w.undo(1)?, vec![2]);
    assert_eq!(text(&w, "a/b/c.txt"), "v1");
    assert_eq!(w.undo(1)?, vec![1]);
    assert!(
        !w.exists("a"),
        "parents created by the write are removed too"
    );
    assert_eq!(w.undo(1).map_err(|e| e.code), Err(WsCode::History));
    assert_eq!(w.redo(3)?, vec![1, 2, 3]);
    assert!(!w.exists("a"));
    w.undo(2)?;
    assert_eq!(text(&w, "a/b/c.txt"), "v1");
    w.write_file("z", b"", false)?;
    assert_eq!(
        w.redo(1).map_err(|e| e.code),
        Err(WsCode::History),
        "a new write clears redo"
    );
    Ok(())
}

#[test]
fn restore_is_recorded() -> WsResult<()> {
    let mut w = ws();
    w.write_file("f", b"1", false)?;
    w.write_file("f", b"2", false)?;
    w.write_file("g", b"3", false)?;
    assert_eq!(w.restore(1)?, Some(4));
    assert_eq!(text(&w, "f"), "1");
    assert!(!w.exists("g"));
    assert_eq!(ops(&w)[0], "restore #1");
    assert!(w.diff(4)?.contains("-2\n+1\n"));
    w.undo(1)?;
    assert_eq!(text(&w, "g"), "3");
    assert_eq!(w.restore(999).map_err(|e| e.code), Err(WsCode::History));
    Ok(())
}

#[test]
fn diff_of_an_edit() -> WsResult<()> {
    let mut w = ws();
    w.write_file("code.js", b"let a = 1;\nlet b = 2;\nlet c = 3;\n", false)?;
    w.patch_lines("code.js", 2, 2, "let b = 20;", None)?;
    let d = w.diff(2)?;
    assert_eq!(
        d,
        "--- a/code.js\n+++ b/code.js\n@@ -1,3 +1,3 @@\n let a = 1;\n-let b = 2;\n+let b = 20;\n let c = 3;\n"
    );
    assert!(w.diff(1)?.starts_with("--- /dev/null\n+++ b/code.js\n"));
    assert_eq!(w.diff(3).map_err(|e| e.code), Err(WsCode::History));
    Ok(())
}

#[test]
fn overlay_is_one_entry_and_atomic() -> WsResult<()> {
    let mut w = ws();
    w.write_file("keep.txt", b"k", false)?;
    w.write_file("old/x.txt", b"x", true)?;
    let batch = vec![
        StagedOp::Write {
            path: "~/out/a.txt".into(),
            data: b"A".to_vec(),
        },
        StagedOp::Mkdir {
            path: "/out/sub".into(),
        },
        StagedOp::Delete { path: "old".into() },
        StagedOp::Write {
            path: "keep.txt".into(),
            data: b"K".to_vec(),
        },
    ];
    let id = w.apply_overlay(&batch, "exec main.js")?;
    assert_eq!(id, Some(3));
    let e = &w.history(1)[0];
    assert_eq!(e.op, "exec main.js");
    assert_eq!(
        e.paths,
        vec![
            "keep.txt",
            "old",
            "old/x.txt",
            "out",
            "out/a.txt",
            "out/sub"
        ]
    );
    assert_eq!(text(&w, "out/a.txt"), "A");
    assert!(!w.exists("old"));
    w.undo(1)?;
    assert_eq!(text(&w, "keep.txt"), "k");
    assert_eq!(text(&w, "old/x.txt"), "x");
    assert!(!w.exists("out"));
    w.redo(1)?;

    // A failing batch changes nothing and records nothing.
    let before = w.to_zip();
    let bad = vec![
        StagedOp::Write {
            path: "new.txt".into(),
            data: b"n".to_vec(),
        },
        StagedOp::Delete {
            path: "does/not/exist".into(),
        },
    ];
    assert_eq!(
        w.apply_overlay(&bad, "bad").map_err(|e| e.code),
        Err(WsCode::NotFound)
    );
    let hidden = vec![StagedOp::Write {
        path: ".time/log.json".into(),
        data: vec![],
    }];
    assert_eq!(
        w.apply_overlay(&hidden, "bad").map_err(|e| e.code),
        Err(WsCode::PathInvalid)
    );
    assert_eq!(w.to_zip(), before);
    assert!(!w.exists("new.txt"));
    // A batch that ends where it started records nothing.
    let noop = vec![
        StagedOp::Write {
            path: "tmp".into(),
            data: vec![1],
        },
        StagedOp::Delete { path: "tmp".into() },
    ];
    assert_eq!(w.apply_overlay(&noop, "noop")?, None);
    Ok(())
}

#[test]
fn snapshots_roll_back_everything() -> WsResult<()> {
    let mut w = ws();
    w.write_file("a", b"1", false)?;
    let snap = w.snapshot();
    w.write_file("a", b"2", false)?;
    w.write_file("b", b"3", false)?;
    w.restore_snapshot(snap);
    assert_eq!(text(&w, "a"), "1");
    assert!(!w.exists("b"));
    assert_eq!(w.history(10).len(), 1);
    Ok(())
}

#[test]
fn compaction_limits_undo_with_defaults() -> WsResult<()> {
    let mut w = ws();
    for i in 0..260 {
        w.write_file("counter", i.to_string().as_bytes(), false)?;
    }
    let h = w.history(1000);
    assert_eq!(h.len(), 200, "capped at 200 entries");
    assert_eq!(h[0].id, 260);
    assert_eq!(h[199].id, 61);
    assert_eq!(h.iter().filter(|e| !e.compacted).count(), 50);
    assert!(h[49].compacted.eq(&false) && h[50].compacted);
    assert_eq!(w.undo(1000)?.len(), 50);
    assert_eq!(text(&w, "counter"), "209");
    let err = w.undo(1).err();
    assert_eq!(err.as_ref().map(|e| e.code), Some(WsCode::History));
    assert!(err
        .map(|e| e.message)
        .unwrap_or_default()
        .contains("compacted"));
    Ok(())
}

#[test]
fn history_survives_zip_roundtrip() -> WsResult<()> {
    let mut w = ws();
    w.write_file("notes.md", b"a\n", false)?;
    w.patch_lines("notes.md", 2, 1, "b", None)?;
    w.mkdir("dir/sub", true)?;
    w.write_file("bin.dat", &[0, 159, 146, 150], false)?;
    w.undo(1)?;
    let bytes = w.to_zip();
    let mut back = Workspace::from_zip(&bytes, &ZipLimits::default())?;
    assert_eq!(back.history(10), w.history(10));
    assert_eq!(back.to_zip(), bytes, "import then export is byte-identical");
    assert_eq!(back.diff(2)?, w.diff(2)?);
    back.redo(1)?;
    assert_eq!(back.read_file("bin.dat")?, &[0, 159, 146, 150]);
    back.undo(3)?;
    assert_eq!(text(&back, "notes.md"), "a\n");
    assert!(!back.exists("dir"));
    back.undo(1)?;
    assert!(!back.exists("notes.md"));
    Ok(())
}

#[test]
fn time_area_is_invisible() -> WsResult<()> {
    let mut w = ws();
    w.write_file("a.txt", b"needle", false)?;
    let mut back = Workspace::from_zip(&w.to_zip(), &ZipLimits::default())?;
    assert!(!back.history(10).is_empty());
    assert_eq!(
        back.list("~/", true)?
            .iter()
            .map(|e| e.path.as_str())
            .collect::<Vec<_>>(),
        vec!["a.txt"]
    );
    for p in [
        ".time",
        "~/.time",
        "/.time/log.json",
        ".time/pack-00000.bin",
    ] {
        assert!(!back.exists(p));
        assert_eq!(
            back.read_file(p).map_err(|e| e.code),
            Err(WsCode::PathInvalid)
        );
        assert_eq!(back.stat(p).map_err(|e| e.code), Err(WsCode::PathInvalid));
        assert_eq!(
            back.list(p, false).map_err(|e| e.code),
            Err(WsCode::PathInvalid)
        );
        assert_eq!(
            back.write_file(p, b"x", true).map_err(|e| e.code),
            Err(WsCode::PathInvalid)
        );
        assert_eq!(
            back.mkdir(p, true).map_err(|e| e.code),
            Err(WsCode::PathInvalid)
        );
        assert_eq!(
            back.delete(p, true).map_err(|e| e.code),
            Err(WsCode::PathInvalid)
        );
        assert_eq!(
            back.read_lines(p, 1, 1, usize::MAX, KeepLines::First)
                .map_err(|e| e.code),
            Err(WsCode::PathInvalid)
        );
        assert_eq!(
            back.patch_lines(p, 1, 1, "", None).map_err(|e| e.code),
            Err(WsCode::PathInvalid)
        );
        assert_eq!(
            back.search(&Query::new("x")?, p, 0, 1, usize::MAX)
                .map_err(|e| e.code),
            Err(WsCode::PathInvalid)
        );
    }
    let r = back.search(&Query::new("\"op\"")?, "", 0, 10, usize::MAX)?;
    assert!(r.matches.is_empty(), "history contents are not searchable");
    assert_eq!(
        back.search(&Query::new("needle")?, "", 0, 10, usize::MAX)?
            .matches
            .len(),
        1
    );
    Ok(())
}

/// A small deterministic generator (xorshift), so the property test needs no crate.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

/// One random operation; failures (a missing path, a file in the way) are part of the game.
fn random_op(w: &mut Workspace, rng: &mut Rng) {
    const PATHS: [&str; 8] = [
        "a",
        "a/b",
        "a/b/c.txt",
        "a/d.txt",
        "e",
        "e/f",
        "g.txt",
        "a/b/h",
    ];
    const TEXTS: [&str; 5] = ["", "one\n", "one\ntwo\n", "x\r\ny\r\n", "\0bin"];
    let p = rng.pick(&PATHS);
    let _ = match rng.below(12) {
        0..=3 => w.write_file(p, rng.pick(&TEXTS).as_bytes(), true).map(drop),
        4 => w.mkdir(p, true).map(drop),
        5 => w.delete(p, true).map(drop),
        6 | 7 => w.patch_lines(p, 1, 0, "top", None).map(drop),
        8 => {
            let batch = vec![
                StagedOp::Write {
                    path: rng.pick(&PATHS).into(),
                    data: rng.pick(&TEXTS).into(),
                },
                StagedOp::Delete {
                    path: rng.pick(&PATHS).into(),
                },
                StagedOp::Mkdir {
                    path: rng.pick(&PATHS).into(),
                },
            ];
            w.apply_overlay(&batch, "batch").map(drop)
        }
        9 => w.undo(1 + rng.below(3)).map(drop),
        10 => w.redo(1 + rng.below(3)).map(drop),
        _ => {
            let ids: Vec<u64> = w.history(100).iter().map(|e| e.id).collect();
            match ids.get(rng.below(ids.len().max(1))) {
                Some(&id) => w.restore(id).map(drop),
                None => Ok(()),
            }
        }
    };
}

/// Undoes one entry at a time in both workspaces, which must agree all the way down.
fn undo_alike(a: &mut Workspace, b: &mut Workspace) -> WsResult<()> {
    loop {
        let (x, y) = (a.undo(1), b.undo(1));
        assert_eq!(x, y);
        assert_eq!(a.vfs(), b.vfs());
        if x.is_err() {
            return Ok(());
        }
    }
}

#[test]
fn every_export_imports_again_with_a_working_history() -> WsResult<()> {
    let limits = ZipLimits::default();
    for seed in 1..=40u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let mut w = ws();
        // Little history kept, so compaction takes part too.
        w.set_history_config(HistoryConfig {
            keep_full: 8,
            max_entries: 20,
            max_full_bytes: u64::MAX,
        });
        for step in 0..60 {
            random_op(&mut w, &mut rng);
            if step % 10 != 9 {
                continue;
            }
            let zip = w.to_zip();
            let mut back = Workspace::from_zip(&zip, &limits)
                .unwrap_or_else(|e| panic!("seed {seed} step {step}: {e}"));
            assert_eq!(back.to_zip(), zip, "seed {seed} step {step}");
            assert_eq!(back.vfs(), w.vfs());
            assert_eq!(back.history(100), w.history(100));
            let mut copy = w.clone();
            back.set_history_config(HistoryConfig {
                keep_full: 8,
                max_entries: 20,
                max_full_bytes: u64::MAX,
            });
            // Redo and undo agree with the original, all the way.
            let (x, y) = (copy.redo(100), back.redo(100));
            assert_eq!(x, y);
            assert_eq!(copy.vfs(), back.vfs());
            undo_alike(&mut copy, &mut back)?;
        }
    }
    Ok(())
}

#[test]
fn paths_display_in_one_form() {
    let shown = |p: &str| display_path(p).unwrap_or_else(|e| panic!("{p}: {e}"));
    for (input, want) in [
        ("", "~/"),
        ("~", "~/"),
        ("~/", "~/"),
        ("/", "~/"),
        ("src/a.js", "~/src/a.js"),
        ("~/src/a.js", "~/src/a.js"),
        ("/src//a.js", "~/src/a.js"),
        ("./src/./x/../a.js", "~/src/a.js"),
        ("~foo", "~/~foo"),
    ] {
        assert_eq!(shown(input), want, "{input:?}");
    }
    for bad in [
        "../x",
        "~/a/../../x",
        "a\\b",
        "a\0b",
        ".time/log.json",
        "C:/x",
    ] {
        assert_eq!(
            display_path(bad).map_err(|e| e.code),
            Err(WsCode::PathInvalid),
            "{bad:?}"
        );
    }
}
