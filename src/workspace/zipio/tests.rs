//! Tests of zip import and export: the hardened reader and the deterministic writer.

use super::super::history::Change;
use super::super::vfs::EntryKind;
use super::*;
use crate::workspace::error::WsCode;
use std::io::Write;
use zip::write::SimpleFileOptions;

fn import(bytes: &[u8]) -> WsResult<(Vfs, HistoryState)> {
    from_zip(bytes, &ZipLimits::default())
}

fn import_code(bytes: &[u8]) -> WsCode {
    match import(bytes) {
        Ok(_) => panic!("import should fail"),
        Err(e) => {
            assert!(!e.message.is_empty());
            e.code
        }
    }
}

/// An archive written by the `zip` crate from (name, data) pairs; names ending in `/`
/// become directories.
fn build(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut w = ZipWriter::new(Cursor::new(Vec::new()));
    let opts = SimpleFileOptions::default().compression_method(CompressionMethod::Deflated);
    for (name, data) in entries {
        if name.ends_with('/') {
            w.add_directory(*name, opts).expect("add dir");
        } else {
            w.start_file(*name, opts).expect("start file");
            w.write_all(data).expect("write");
        }
    }
    w.finish().expect("finish").into_inner()
}

/// One entry of a hand-written archive; the fields are written as given, lies included.
struct Raw {
    name: Vec<u8>,
    data: Vec<u8>,
    method: u16,
    flags: u16,
    crc: u32,
    uncompressed: u32,
    made_by: u16,
    external: u32,
}

impl Raw {
    fn stored(name: &str, data: &[u8]) -> Raw {
        Raw {
            name: name.as_bytes().to_vec(),
            data: data.to_vec(),
            method: 0,
            flags: 0,
            crc: crc32fast::hash(data),
            uncompressed: data.len() as u32,
            made_by: 0x031E, // Unix, spec 3.0
            external: (0o100_644u32) << 16,
        }
    }
}

fn raw_zip(entries: &[Raw]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    for e in entries {
        let offset = out.len() as u32;
        let local = |v: &mut Vec<u8>| {
            v.extend_from_slice(&e.flags.to_le_bytes());
            v.extend_from_slice(&e.method.to_le_bytes());
            v.extend_from_slice(&0u16.to_le_bytes()); // time
            v.extend_from_slice(&0x21u16.to_le_bytes()); // date 1980-01-01
            v.extend_from_slice(&e.crc.to_le_bytes());
            v.extend_from_slice(&(e.data.len() as u32).to_le_bytes());
            v.extend_from_slice(&e.uncompressed.to_le_bytes());
            v.extend_from_slice(&(e.name.len() as u16).to_le_bytes());
            v.extend_from_slice(&0u16.to_le_bytes()); // extra length
        };
        out.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
        out.extend_from_slice(&20u16.to_le_bytes());
        local(&mut out);
        out.extend_from_slice(&e.name);
        out.extend_from_slice(&e.data);

        central.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
        central.extend_from_slice(&e.made_by.to_le_bytes());
        central.extend_from_slice(&20u16.to_le_bytes());
        local(&mut central);
        central.extend_from_slice(&0u16.to_le_bytes()); // comment length
        central.extend_from_slice(&0u16.to_le_bytes()); // disk
        central.extend_from_slice(&0u16.to_le_bytes()); // internal attributes
        central.extend_from_slice(&e.external.to_le_bytes());
        central.extend_from_slice(&offset.to_le_bytes());
        central.extend_from_slice(&e.name);
    }
    let cd_offset = out.len() as u32;
    out.extend_from_slice(&central);
    out.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(&(entries.len() as u16).to_le_bytes());
    out.extend_from_slice(&(entries.len() as u16).to_le_bytes());
    out.extend_from_slice(&(central.len() as u32).to_le_bytes());
    out.extend_from_slice(&cd_offset.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out
}

/// Rewrites the declared uncompressed size of the first entry in both headers.
fn lie_about_size(mut zip: Vec<u8>, size: u32) -> Vec<u8> {
    assert_eq!(zip[..4], 0x0403_4b50u32.to_le_bytes());
    zip[22..26].copy_from_slice(&size.to_le_bytes());
    let sig = 0x0201_4b50u32.to_le_bytes();
    let cd = zip
        .windows(4)
        .position(|w| w == sig)
        .expect("central directory");
    zip[cd + 24..cd + 28].copy_from_slice(&size.to_le_bytes());
    zip
}

fn sample() -> WsResult<(Vfs, HistoryState)> {
    let mut v = Vfs::new();
    let mut h = HistoryState::new();
    v.write_file("src/main.js", b"console.log(1)\n", true)?;
    v.write_file("README.md", b"# hi\n", false)?;
    v.mkdir("empty/dir", true)?;
    v.write_file("bin/blob", &[0, 1, 2, 3, 255], true)?;
    let before = v.content("src/main.js");
    v.write_file("src/main.js", b"console.log(2)\n", false)?;
    h.record(
        vec![Change {
            path: "src/main.js".into(),
            before,
            after: v.content("src/main.js"),
        }],
        "write src/main.js",
        1_000,
    );
    Ok((v, h))
}

#[test]
fn roundtrip_preserves_tree_and_history() -> WsResult<()> {
    let (v, h) = sample()?;
    let bytes = to_zip(&v, &h, true);
    let (v2, h2) = import(&bytes)?;
    assert_eq!(v2, v);
    assert_eq!(h2, h);
    assert_eq!(v2.read_file("bin/blob")?, &[0, 1, 2, 3, 255]);
    assert!(v2.exists("empty/dir"));
    assert!(!v2.exists(".time"));
    assert!(v2
        .list("", true)?
        .iter()
        .all(|e| !e.path.starts_with(".time")));
    Ok(())
}

#[test]
fn pack_and_unpack_keep_names_bytes_and_order_within_limits() -> WsResult<()> {
    let big = vec![7u8; 3000];
    let packed = pack(&[("b.json", b"{}"), ("a.zip", &big)])?;
    let back = unpack(&packed, 8, 10_000)?;
    assert_eq!(
        back,
        vec![
            ("b.json".to_string(), b"{}".to_vec()),
            ("a.zip".to_string(), big)
        ]
    );
    assert_eq!(
        unpack(&packed, 1, 10_000).map_err(|e| e.code),
        Err(WsCode::ZipLimit)
    );
    assert_eq!(
        unpack(&packed, 8, 2_000).map_err(|e| e.code),
        Err(WsCode::ZipLimit)
    );
    assert_eq!(
        unpack(b"not a zip", 8, 100).map_err(|e| e.code),
        Err(WsCode::ZipInvalid)
    );
    Ok(())
}

#[test]
fn a_stored_export_holds_the_same_tree_uncompressed() -> WsResult<()> {
    let (v, h) = sample()?;
    let stored = to_zip(&v, &h, false);
    let mut archive = ZipArchive::new(Cursor::new(&stored[..]))
        .map_err(|e| WsError::new(WsCode::ZipInvalid, format!("cannot reopen the export: {e}")))?;
    for i in 0..archive.len() {
        let entry = archive
            .by_index(i)
            .map_err(|e| WsError::new(WsCode::ZipInvalid, format!("cannot read entry {i}: {e}")))?;
        assert_eq!(entry.compression(), CompressionMethod::Stored, "entry {i}");
    }
    let (v2, h2) = import(&stored)?;
    assert!(v2 == v);
    assert_eq!(to_zip(&v2, &h2, true), to_zip(&v, &h, true));
    Ok(())
}

#[test]
fn export_is_deterministic() -> WsResult<()> {
    let (v, h) = sample()?;
    let a = to_zip(&v, &h, true);
    let b = to_zip(&v.clone(), &h.clone(), true);
    assert_eq!(a, b);
    let (v2, h2) = import(&a)?;
    assert_eq!(
        to_zip(&v2, &h2, true),
        a,
        "re-export of an import is byte-identical"
    );
    // Building the same tree in another order gives the same bytes.
    let mut w = Vfs::new();
    w.write_file("bin/blob", &[0, 1, 2, 3, 255], true)?;
    w.mkdir("empty/dir", true)?;
    w.write_file("README.md", b"# hi\n", false)?;
    w.write_file("src/main.js", b"console.log(2)\n", true)?;
    assert_eq!(to_zip(&w, &h, true), a);
    Ok(())
}

#[test]
fn export_entries_are_sorted_with_fixed_metadata() -> WsResult<()> {
    let (v, h) = sample()?;
    let bytes = to_zip(&v, &h, true);
    let mut archive = ZipArchive::new(Cursor::new(&bytes[..])).map_err(zip_error)?;
    let names: Vec<String> = (0..archive.len())
        .filter_map(|i| {
            archive
                .name_for_index(i)
                .and_then(|n| n.ok())
                .map(|n| n.into_owned())
        })
        .collect();
    assert_eq!(
        names,
        vec![
            "README.md",
            "bin/",
            "bin/blob",
            "empty/",
            "empty/dir/",
            "src/",
            "src/main.js",
            ".time/log.json",
            ".time/pack-00000.bin"
        ]
    );
    for i in 0..archive.len() {
        let f = archive.by_index(i).map_err(zip_error)?;
        assert_eq!(f.last_modified(), Some(DateTime::default()));
        assert_eq!(
            f.extra_data_fields().count(),
            0,
            "no time-dependent extra fields"
        );
        let mode = f.unix_mode().unwrap_or(0) & 0o777;
        assert!(mode == 0o644 || mode == 0o755, "{mode:o}");
    }
    Ok(())
}

#[test]
fn empty_workspace_roundtrip() -> WsResult<()> {
    let bytes = to_zip(&Vfs::new(), &HistoryState::new(), true);
    let (v, h) = import(&bytes)?;
    assert_eq!(v.node_count(), 0);
    assert!(h.is_empty());
    assert_eq!(to_zip(&v, &h, true), bytes);
    Ok(())
}

#[test]
fn highly_compressible_files_reimport() -> WsResult<()> {
    let mut v = Vfs::new();
    v.write_file("zeros.bin", &vec![0u8; 8 * 1024 * 1024], false)?;
    v.write_file("small.txt", &vec![b'a'; 900 * 1024], false)?;
    let bytes = to_zip(&v, &HistoryState::new(), true);
    let (v2, _) = import(&bytes)?;
    assert_eq!(v2, v);
    Ok(())
}

#[test]
fn import_from_foreign_writer() -> WsResult<()> {
    let bytes = build(&[
        ("./docs//a.md", b"A"),
        ("dir/", b""),
        ("x/y/z.txt", b"deep"),
    ]);
    let (v, h) = import(&bytes)?;
    assert_eq!(v.read_file("docs/a.md")?, b"A");
    assert!(v.exists("dir"));
    assert!(v.exists("x/y"));
    assert!(h.is_empty());
    Ok(())
}

#[test]
fn zip_slip_names() {
    for name in ["../evil.txt", "a/../../evil.txt", "a/../b", "..", "x/.."] {
        assert_eq!(
            import_code(&raw_zip(&[Raw::stored(name, b"x")])),
            WsCode::ZipInvalid,
            "{name}"
        );
    }
}

#[test]
fn absolute_drive_backslash_nul_names() {
    for name in [
        "/etc/passwd",
        "//x",
        "C:/Windows/x",
        "c:x",
        "a\\b.txt",
        "..\\evil",
        "a\0b",
    ] {
        let code = import_code(&raw_zip(&[Raw::stored(name, b"x")]));
        assert_eq!(code, WsCode::ZipInvalid, "{name:?}");
    }
}

#[test]
fn names_that_reduce_to_nothing() {
    assert_eq!(
        import_code(&raw_zip(&[Raw::stored("./", b"")])),
        WsCode::ZipInvalid
    );
}

#[test]
fn symlink_and_special_entries() {
    let mut link = Raw::stored("link", b"/etc/passwd");
    link.external = 0o120_777u32 << 16;
    assert_eq!(import_code(&raw_zip(&[link])), WsCode::ZipInvalid);
    let mut fifo = Raw::stored("fifo", b"");
    fifo.external = 0o010_644u32 << 16;
    assert_eq!(import_code(&raw_zip(&[fifo])), WsCode::ZipInvalid);
    // The same entry with a regular-file mode is fine.
    assert!(import(&raw_zip(&[Raw::stored("link", b"/etc/passwd")])).is_ok());
}

#[test]
fn directory_by_mode_without_slash() -> WsResult<()> {
    let mut dir = Raw::stored("folder", b"");
    dir.external = 0o040_755u32 << 16;
    let (v, _) = import(&raw_zip(&[dir, Raw::stored("folder/f", b"x")]))?;
    assert_eq!(v.stat("folder")?.kind, EntryKind::Dir);
    assert_eq!(v.read_file("folder/f")?, b"x");
    Ok(())
}

#[test]
fn encrypted_entries() {
    let mut e = Raw::stored("secret.txt", b"xxxxxxxxxxxxxxxx");
    e.flags = 1;
    assert_eq!(import_code(&raw_zip(&[e])), WsCode::ZipInvalid);
}

#[test]
fn unsupported_methods() {
    for method in [12u16, 14, 93, 99, 1] {
        let mut e = Raw::stored("f.txt", b"data");
        e.method = method;
        assert_eq!(
            import_code(&raw_zip(&[e])),
            WsCode::ZipInvalid,
            "method {method}"
        );
    }
}

#[test]
fn duplicates_and_collisions() {
    let dup = raw_zip(&[Raw::stored("a.txt", b"1"), Raw::stored("a.txt", b"2")]);
    assert_eq!(import_code(&dup), WsCode::ZipInvalid);
    for (x, y) in [
        ("a/b", "a//b"),
        ("a/b", "./a/b"),
        ("d/", "d//"),
        ("d/", "./d/"),
    ] {
        let z = raw_zip(&[Raw::stored(x, b"1"), Raw::stored(y, b"2")]);
        assert_eq!(import_code(&z), WsCode::ZipInvalid, "{x} vs {y}");
    }
    let file_and_dir = raw_zip(&[Raw::stored("a", b"1"), Raw::stored("a/", b"")]);
    assert_eq!(import_code(&file_and_dir), WsCode::ZipInvalid);
    let file_as_parent = raw_zip(&[Raw::stored("a", b"1"), Raw::stored("a/b.txt", b"2")]);
    assert_eq!(import_code(&file_as_parent), WsCode::ZipInvalid);
    let hidden_file = raw_zip(&[Raw::stored(".time", b"1")]);
    assert_eq!(import_code(&hidden_file), WsCode::ZipInvalid);
}

#[test]
fn ratio_bomb() {
    let zeros = vec![0u8; 50 * 1024 * 1024];
    let bomb = build(&[("bomb.bin", &zeros)]);
    assert!(bomb.len() < 1024 * 1024);
    match import(&bomb) {
        Ok(_) => panic!("the bomb should be refused"),
        Err(e) => {
            assert_eq!(e.code, WsCode::ZipLimit);
            assert!(e.message.contains("200:1"), "{}", e.message);
        }
    }
}

#[test]
fn small_compressible_entries_are_exempt_from_ratio() -> WsResult<()> {
    let zeros = vec![0u8; 1024 * 1024];
    let (v, _) = import(&build(&[("z", &zeros)]))?;
    assert_eq!(v.read_file("z")?.len(), 1024 * 1024);
    Ok(())
}

#[test]
fn lying_size_header_is_cut_off() {
    // Headers say 100 bytes; the deflated data expands to 20 MiB. Reading stops at the
    // declared size.
    let data = vec![7u8; 20 * 1024 * 1024];
    let zip = lie_about_size(build(&[("liar.bin", &data)]), 100);
    let err = import(&zip).err();
    assert_eq!(
        err.as_ref().map(|e| e.code),
        Some(WsCode::ZipLimit),
        "{err:?}"
    );
    assert!(err
        .map(|e| e.message)
        .unwrap_or_default()
        .contains("declares"));
    // Same for a stored entry whose headers understate its size.
    let mut stored = Raw::stored("s.bin", &[1u8; 5000]);
    stored.uncompressed = 10;
    assert_eq!(import_code(&raw_zip(&[stored])), WsCode::ZipLimit);
    // With a per-entry limit below the declared size, the limit stops it first.
    let zip = lie_about_size(build(&[("liar.bin", &data)]), 5_000);
    let limits = ZipLimits {
        max_entry_size: 1_000,
        ..ZipLimits::default()
    };
    let err = from_zip(&zip, &limits).err();
    assert_eq!(err.as_ref().map(|e| e.code), Some(WsCode::ZipLimit));
    assert!(err
        .map(|e| e.message)
        .unwrap_or_default()
        .contains("per-entry"));
}

#[test]
fn header_declaring_more_than_present_is_invalid() {
    let zip = lie_about_size(build(&[("short.txt", b"hello")]), 10);
    assert_eq!(import_code(&zip), WsCode::ZipInvalid);
}

#[test]
fn bounded_reads_never_pass_the_cap() -> std::io::Result<()> {
    let (buf, probe) = read_bounded(std::io::repeat(1), 1000, u64::MAX)?;
    assert_eq!(buf.len(), 1000);
    assert!(matches!(probe, Probe::More));
    let (buf, probe) = read_bounded(&b"abc"[..], 3, 3)?;
    assert_eq!(buf, b"abc");
    assert!(matches!(probe, Probe::End));
    let (buf, probe) = read_bounded(&b"abc"[..], 10, 0)?;
    assert_eq!(buf, b"abc");
    assert!(matches!(probe, Probe::End));
    let (buf, probe) = read_bounded(&b"abc"[..], 0, 3)?;
    assert!(buf.is_empty());
    assert!(matches!(probe, Probe::More));
    Ok(())
}

#[test]
fn crc32_known_values() {
    // The checksum zip stores (IEEE CRC-32), as the import checks it.
    assert_eq!(crc32fast::hash(b""), 0);
    assert_eq!(crc32fast::hash(b"123456789"), 0xCBF4_3926);
    assert_eq!(
        crc32fast::hash(b"The quick brown fox jumps over the lazy dog"),
        0x414F_A339
    );
}

#[test]
fn per_entry_and_total_limits() {
    let data = vec![b'x'; 4096];
    let zip = build(&[("a", &data), ("b", &data), ("c", &data)]);
    let per_entry = ZipLimits {
        max_entry_size: 4095,
        ..ZipLimits::default()
    };
    assert_eq!(
        from_zip(&zip, &per_entry).err().map(|e| e.code),
        Some(WsCode::ZipLimit)
    );
    let total = ZipLimits {
        max_total_size: 10_000,
        ..ZipLimits::default()
    };
    let err = from_zip(&zip, &total).err();
    assert_eq!(err.as_ref().map(|e| e.code), Some(WsCode::ZipLimit));
    assert!(err.map(|e| e.message).unwrap_or_default().contains("total"));
    assert!(from_zip(
        &zip,
        &ZipLimits {
            max_total_size: 3 * 4096,
            ..ZipLimits::default()
        }
    )
    .is_ok());
}

#[test]
fn too_many_entries() {
    let names: Vec<String> = (0..10_001).map(|i| format!("f{i}")).collect();
    let entries: Vec<Raw> = names.iter().map(|n| Raw::stored(n, b"")).collect();
    let zip = raw_zip(&entries);
    assert_eq!(import_code(&zip), WsCode::ZipLimit);
    let fewer = ZipLimits {
        max_entries: 3,
        ..ZipLimits::default()
    };
    let small = raw_zip(&[
        Raw::stored("a", b""),
        Raw::stored("b", b""),
        Raw::stored("c", b""),
        Raw::stored("d", b""),
    ]);
    assert_eq!(
        from_zip(&small, &fewer).err().map(|e| e.code),
        Some(WsCode::ZipLimit)
    );
}

#[test]
fn path_length_and_depth_limits() {
    let long = "a".repeat(1025);
    assert_eq!(
        import_code(&raw_zip(&[Raw::stored(&long, b"")])),
        WsCode::ZipLimit
    );
    let deep = vec!["d"; 65].join("/");
    assert_eq!(
        import_code(&raw_zip(&[Raw::stored(&deep, b"")])),
        WsCode::ZipLimit
    );
    let ok = vec!["d"; 64].join("/");
    assert!(import(&raw_zip(&[Raw::stored(&ok, b"")])).is_ok());
}

#[test]
fn truncated_and_garbage_input() -> WsResult<()> {
    assert_eq!(import_code(b""), WsCode::ZipInvalid);
    assert_eq!(
        import_code(b"this is not a zip file at all"),
        WsCode::ZipInvalid
    );
    assert_eq!(import_code(&[0x50, 0x4b, 0x05, 0x06]), WsCode::ZipInvalid);
    let (v, h) = sample()?;
    let good = to_zip(&v, &h, true);
    for cut in [good.len() / 4, good.len() / 2, good.len() - 10] {
        assert_eq!(
            import_code(&good[..cut]),
            WsCode::ZipInvalid,
            "cut at {cut}"
        );
    }
    // Corrupt the first entry's compressed data but keep the directory intact.
    let mut corrupt = build(&[("f.txt", &b"hello hello hello hello".repeat(50))]);
    for b in corrupt.iter_mut().skip(40).take(20) {
        *b ^= 0xA5;
    }
    assert_eq!(import_code(&corrupt), WsCode::ZipInvalid);
    // A wrong checksum.
    let mut bad_crc = Raw::stored("f.txt", b"data");
    bad_crc.crc ^= 1;
    assert_eq!(import_code(&raw_zip(&[bad_crc])), WsCode::ZipInvalid);
    Ok(())
}

#[test]
fn malformed_history_is_refused() {
    let zip = build(&[("a.txt", b"x"), (".time/log.json", b"{ broken")]);
    assert_eq!(import_code(&zip), WsCode::ZipInvalid);
    // Unknown files in the history folder are ignored.
    let zip = build(&[("a.txt", b"x"), (".time/", b""), (".time/notes", b"?")]);
    assert!(import(&zip).is_ok());
}

#[test]
fn entry_name_normalization() -> WsResult<()> {
    let l = ZipLimits::default();
    assert_eq!(
        normalize_entry_name("a/b.txt", &l)?,
        ("a/b.txt".into(), false)
    );
    assert_eq!(normalize_entry_name("./a//b/", &l)?, ("a/b".into(), true));
    assert_eq!(
        normalize_entry_name("dir/C:", &l)?,
        ("dir/C:".into(), false)
    );
    assert_eq!(
        normalize_entry_name(".time/log.json", &l)?.0,
        ".time/log.json"
    );
    Ok(())
}
