//! Workspace archives on the host file system: reading one with a size cap, and saving one
//! atomically (a fresh temporary file next to the target, then a rename over it).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use super::error::{WsError, WsResult};
use super::zipio::ZipLimits;

fn io_error(what: &str, path: &Path, e: std::io::Error) -> WsError {
    WsError::io(format!("cannot {what} {}: {e}", path.display()))
}

/// Largest archive [`read_archive`] reads: everything the limits allow plus generous header
/// room.
pub(crate) fn max_archive_bytes(limits: &ZipLimits) -> u64 {
    let per_entry = 2 * limits.max_path_len as u64 + 1024;
    limits
        .max_total_size
        .saturating_add((limits.max_entries as u64).saturating_mul(per_entry))
        .saturating_add(1 << 20)
}

/// Reads the archive at `path`: a regular file no larger than [`max_archive_bytes`] (else
/// `ZIP_LIMIT`); host failures are `IO`.
pub(crate) fn read_archive(path: &Path, limits: &ZipLimits) -> WsResult<Vec<u8>> {
    let meta = fs::metadata(path).map_err(|e| io_error("read", path, e))?;
    if !meta.is_file() {
        return Err(WsError::io(format!(
            "cannot read {}: not a regular file",
            path.display()
        )));
    }
    let cap = max_archive_bytes(limits);
    if meta.len() > cap {
        return Err(WsError::zip_limit(format!(
            "{} is {} bytes; archives above {cap} bytes are refused",
            path.display(),
            meta.len()
        )));
    }
    fs::read(path).map_err(|e| io_error("read", path, e))
}

/// Writes `data` to a fresh file next to `target`, then renames it over `target`. A target
/// that names no file is `INVALID_INPUT`; host failures are `IO`, and leave no temporary file.
pub(crate) fn write_atomically(target: &Path, data: &[u8]) -> WsResult<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    if target.as_os_str().is_empty() {
        return Err(WsError::invalid_input("hostPath must not be empty"));
    }
    let name = target.file_name().ok_or_else(|| {
        WsError::invalid_input(format!(
            "hostPath {:?} does not name a file",
            target.display().to_string()
        ))
    })?;
    let dir = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let unique = format!(
        ".{}.{}-{nanos}-{}.tmp",
        name.to_string_lossy(),
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    let temp = dir.join(unique);
    let written = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temp)
        .and_then(|mut f| {
            f.write_all(data)?;
            f.sync_all()
        });
    if let Err(e) = written {
        let _ = fs::remove_file(&temp);
        return Err(io_error("write", target, e));
    }
    if let Err(e) = fs::rename(&temp, target) {
        let _ = fs::remove_file(&temp);
        return Err(io_error("replace", target, e));
    }
    // Make the rename itself durable where the platform allows it.
    #[cfg(unix)]
    if let Ok(d) = fs::File::open(&dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::error::WsCode;

    fn temp_dir(tag: &str) -> PathBuf {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let dir =
            std::env::temp_dir().join(format!("quickrealm-{tag}-{}-{nanos}", std::process::id()));
        if let Err(e) = fs::create_dir_all(&dir) {
            panic!("cannot create {}: {e}", dir.display());
        }
        dir
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut out: Vec<String> = match fs::read_dir(dir) {
            Ok(it) => it
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect(),
            Err(e) => panic!("cannot list {}: {e}", dir.display()),
        };
        out.sort();
        out
    }

    #[test]
    fn atomic_write_replaces_and_leaves_no_temporary_file() -> Result<(), String> {
        let dir = temp_dir("save");
        let target = dir.join("ws.zip");
        write_atomically(&target, b"first").map_err(|e| e.message)?;
        write_atomically(&target, b"second").map_err(|e| e.message)?;
        assert_eq!(fs::read(&target).map_err(|e| e.to_string())?, b"second");
        assert_eq!(names(&dir), vec!["ws.zip"]);
        let missing = dir.join("missing").join("ws.zip");
        let err = write_atomically(&missing, b"x").err().map(|e| e.code);
        assert_eq!(err, Some(WsCode::Io));
        assert_eq!(names(&dir), vec!["ws.zip"]);
        let _ = fs::remove_dir_all(&dir);
        Ok(())
    }

    #[test]
    fn a_target_must_name_a_file() {
        for (target, text) in [("", "must not be empty"), ("/", "does not name a file")] {
            match write_atomically(Path::new(target), b"x") {
                Ok(()) => panic!("{target:?} should be refused"),
                Err(e) => {
                    assert_eq!(e.code, WsCode::InvalidInput, "{target:?}");
                    assert!(e.message.contains(text), "{}", e.message);
                }
            }
        }
    }

    #[test]
    fn reading_archives_checks_the_host_file() -> Result<(), String> {
        let dir = temp_dir("open");
        let limits = ZipLimits::default();
        assert_eq!(
            read_archive(&dir, &limits).err().map(|e| e.code),
            Some(WsCode::Io)
        );
        assert_eq!(
            read_archive(&dir.join("nope.zip"), &limits)
                .err()
                .map(|e| e.code),
            Some(WsCode::Io)
        );
        let tiny = ZipLimits {
            max_entries: 1,
            max_total_size: 16,
            max_path_len: 8,
            ..ZipLimits::default()
        };
        let cap = max_archive_bytes(&tiny);
        let file = dir.join("big.zip");
        fs::write(&file, vec![0u8; cap as usize + 1]).map_err(|e| e.to_string())?;
        assert_eq!(
            read_archive(&file, &tiny).err().map(|e| e.code),
            Some(WsCode::ZipLimit)
        );
        fs::write(&file, vec![0u8; 4096]).map_err(|e| e.to_string())?;
        assert_eq!(
            read_archive(&file, &limits)
                .map(|d| d.len())
                .map_err(|e| e.message)?,
            4096
        );
        let _ = fs::remove_dir_all(&dir);
        Ok(())
    }

    #[test]
    fn archive_cap_covers_every_allowed_byte() {
        let limits = ZipLimits::default();
        assert!(max_archive_bytes(&limits) > limits.max_total_size);
        let huge = ZipLimits {
            max_entries: usize::MAX,
            max_total_size: u64::MAX,
            ..ZipLimits::default()
        };
        assert_eq!(max_archive_bytes(&huge), u64::MAX);
    }
}
