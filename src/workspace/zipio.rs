//! Zip import and export.
//!
//! Import treats the archive as hostile: every limit in [`ZipLimits`] is enforced while
//! entries are decompressed (sizes in headers are never trusted), and entries that could
//! not be represented faithfully or safely are refused with `ZIP_INVALID`.
//!
//! Export is deterministic: entries are sorted, timestamps and permissions are fixed, and
//! the compression method depends only on the content, so the same workspace always
//! produces the same bytes (and re-exporting an imported archive reproduces it).

use std::collections::BTreeMap;
use std::io::{Cursor, Read, Write};
use std::sync::Arc;

use zip::read::ZipReadOptions;
use zip::result::{ZipError, ZipResult};
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, DateTime, System, ZipArchive, ZipWriter};

use super::access::{self, HIDDEN_ROOT, MAX_DEPTH, MAX_PATH_LEN};
use super::bounds::Bounds;
use super::error::{WsCode, WsError, WsResult};
use super::history::HistoryState;
use super::path;
use super::vfs::{Content, Vfs};

const MIB: u64 = 1024 * 1024;

/// Import limits. Every one is checked against the bytes actually produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZipLimits {
    /// Most entries (files, directories and history files).
    pub max_entries: usize,
    /// Largest uncompressed entry, in bytes.
    pub max_entry_size: u64,
    /// Largest uncompressed total, in bytes.
    pub max_total_size: u64,
    /// Largest uncompressed-to-compressed ratio for entries above `ratio_threshold`.
    pub max_ratio: u64,
    /// Entries up to this many uncompressed bytes are exempt from the ratio limit.
    pub ratio_threshold: u64,
    /// Longest normalized entry path, in bytes.
    pub max_path_len: usize,
    /// Deepest normalized entry path, in segments.
    pub max_depth: usize,
}

impl ZipLimits {
    /// Accepted values of `max_entries`.
    pub const ENTRIES: Bounds = Bounds::at_least(1);
    /// Accepted values of `max_entry_size` and `max_total_size`.
    pub const BYTES: Bounds = Bounds::at_least(0);
    /// Accepted values of `max_ratio`.
    pub const RATIO: Bounds = Bounds::at_least(1);
}

impl Default for ZipLimits {
    fn default() -> Self {
        ZipLimits {
            max_entries: 10_000,
            max_entry_size: 64 * MIB,
            max_total_size: 256 * MIB,
            max_ratio: 200,
            ratio_threshold: MIB,
            max_path_len: MAX_PATH_LEN,
            max_depth: MAX_DEPTH,
        }
    }
}

fn zip_error(e: ZipError) -> WsError {
    WsError::zip_invalid(format!("the archive cannot be read: {e}"))
}

const S_IFMT: u32 = 0o170_000;
const S_IFREG: u32 = 0o100_000;
const S_IFDIR: u32 = 0o040_000;
const S_IFLNK: u32 = 0o120_000;

/// Checks an entry name and returns its normalized path and whether it names a directory.
///
/// Refused (`ZIP_INVALID`): NUL, backslash, absolute paths, drive letters, any `..`
/// segment, and names that reduce to nothing. `.` and empty segments are dropped, so
/// `./a//b` becomes `a/b` (and then collides with a plain `a/b`).
pub fn normalize_entry_name(name: &str, limits: &ZipLimits) -> WsResult<(String, bool)> {
    let shown: String = name
        .chars()
        .take(200)
        .collect::<String>()
        .replace('\0', "\\0");
    let bad = |why: &str| WsError::zip_invalid(format!("entry {shown:?} {why}"));
    if name.contains('\0') {
        return Err(bad("has a NUL byte in its name"));
    }
    if name.contains('\\') {
        return Err(bad("uses backslashes in its name"));
    }
    if name.starts_with('/') {
        return Err(bad("has an absolute path"));
    }
    let is_dir = name.ends_with('/');
    let mut segments = Vec::new();
    for (index, segment) in name.split('/').enumerate() {
        if index == 0 && access::is_drive(segment) {
            return Err(bad("starts with a drive letter"));
        }
        match segment {
            "" | "." => {}
            ".." => return Err(bad("climbs out of the archive with '..'")),
            s => segments.push(s),
        }
    }
    if segments.is_empty() {
        return Err(bad("does not name anything"));
    }
    let normalized = segments.join("/");
    if normalized.len() > limits.max_path_len {
        return Err(WsError::zip_limit(format!(
            "entry {shown:?} has a {}-byte path; the limit is {}",
            normalized.len(),
            limits.max_path_len
        )));
    }
    if segments.len() > limits.max_depth {
        return Err(WsError::zip_limit(format!(
            "entry {shown:?} is {} folders deep; the limit is {}",
            segments.len(),
            limits.max_depth
        )));
    }
    Ok((normalized, is_dir))
}

/// What followed the bytes read by [`read_bounded`].
#[derive(Debug)]
pub enum Probe {
    /// The source ended exactly at the bytes returned.
    End,
    /// The source has more bytes than the cap.
    More,
    /// Reading past the cap failed.
    Failed(std::io::Error),
}

/// Reads at most `cap` bytes from `reader`, then tries one more byte to learn whether the
/// source goes on. Never buffers more than `cap` bytes, whatever `size_hint` claims.
pub fn read_bounded<R: Read>(
    mut reader: R,
    cap: u64,
    size_hint: u64,
) -> std::io::Result<(Vec<u8>, Probe)> {
    let capacity = size_hint.min(cap).min(MIB);
    let mut buf = Vec::with_capacity(usize::try_from(capacity).unwrap_or(0));
    (&mut reader).take(cap).read_to_end(&mut buf)?;
    if (buf.len() as u64) < cap {
        return Ok((buf, Probe::End));
    }
    let mut one = [0u8; 1];
    let probe = loop {
        match reader.read(&mut one) {
            Ok(0) => break Probe::End,
            Ok(_) => break Probe::More,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => break Probe::Failed(e),
        }
    };
    Ok((buf, probe))
}

type Archive<'a> = ZipArchive<Cursor<&'a [u8]>>;

/// Imports an archive into a tree and its history.
pub fn from_zip(bytes: &[u8], limits: &ZipLimits) -> WsResult<(Vfs, HistoryState)> {
    let mut archive = open_archive(bytes, limits)?;
    let mut import = Import::default();
    for index in 0..archive.len() {
        let header = read_header(&mut archive, index, limits)?;
        import.claim(&header)?;
        if header.is_dir {
            continue;
        }
        let budget = EntryBudget::new(&header, bytes.len() as u64, import.total, limits);
        let data = read_entry(&mut archive, index, &header, &budget, limits)?;
        import.add_file(header.path, data);
    }
    import.check_folders()?;
    let hidden = std::mem::take(&mut import.hidden);
    let tree = import.tree();
    let history = HistoryState::from_archive(&hidden, &tree)?;
    Ok((tree, history))
}

/// Opens the archive and checks its entry count; duplicate names are refused.
fn open_archive<'a>(bytes: &'a [u8], limits: &ZipLimits) -> WsResult<Archive<'a>> {
    let archive = ZipArchive::new(Cursor::new(bytes)).map_err(zip_error)?;
    if archive.has_duplicate_names() {
        return Err(WsError::zip_invalid(
            "the archive holds the same entry name twice",
        ));
    }
    if archive.len() > limits.max_entries {
        return Err(WsError::zip_limit(format!(
            "the archive holds {} entries; the limit is {}",
            archive.len(),
            limits.max_entries
        )));
    }
    Ok(archive)
}

/// What an entry's headers say, once they passed the checks of [`read_header`].
struct EntryHeader {
    /// The name as the archive spells it.
    name: String,
    /// The normalized path.
    path: String,
    is_dir: bool,
    compressed: u64,
    declared: u64,
    crc: u32,
}

/// Reads and checks entry `index`'s headers: its name, encryption, type and compression method.
fn read_header(
    archive: &mut Archive<'_>,
    index: usize,
    limits: &ZipLimits,
) -> WsResult<EntryHeader> {
    let entry = archive.by_index_data(index).map_err(zip_error)?;
    if entry.name_raw().contains(&0) {
        return Err(WsError::zip_invalid(format!(
            "entry {index} has a NUL byte in its name"
        )));
    }
    let name = entry.name().map_err(zip_error)?.into_owned();
    if entry.encrypted() {
        return Err(WsError::zip_invalid(format!(
            "entry {name:?} is encrypted; encrypted archives are not supported"
        )));
    }
    let mode_type = entry.unix_mode().map_or(0, |m| m & S_IFMT);
    if mode_type == S_IFLNK {
        return Err(WsError::zip_invalid(format!(
            "entry {name:?} is a symbolic link; links are not supported"
        )));
    }
    if mode_type != 0 && mode_type != S_IFREG && mode_type != S_IFDIR {
        return Err(WsError::zip_invalid(format!(
            "entry {name:?} is a special file (mode {mode_type:o}); only files and folders are supported"
        )));
    }
    let (path, dir_by_name) = normalize_entry_name(&name, limits)?;
    let is_dir = dir_by_name || mode_type == S_IFDIR;
    if !is_dir {
        let method = entry.compression();
        if method != CompressionMethod::Stored && method != CompressionMethod::Deflated {
            return Err(WsError::zip_invalid(format!(
                "entry {name:?} uses compression method {method}; only stored and deflated entries are supported"
            )));
        }
    }
    Ok(EntryHeader {
        path,
        is_dir,
        compressed: entry.compressed_size(),
        declared: entry.size(),
        crc: entry.crc32(),
        name,
    })
}

/// How many bytes one entry may expand to, and which limit says so.
struct EntryBudget {
    /// The smallest of the per-entry, remaining total and ratio limits.
    limit: u64,
    /// What remained of the total limit before this entry.
    remaining: u64,
    /// The compressed bytes really present (at most the archive's size).
    compressed: u64,
}

impl EntryBudget {
    fn new(header: &EntryHeader, archive_len: u64, total: u64, limits: &ZipLimits) -> Self {
        // The compressed bytes really present bound the ratio budget, whatever the header says.
        let compressed = header.compressed.min(archive_len);
        let ratio_cap = compressed
            .saturating_mul(limits.max_ratio)
            .max(limits.ratio_threshold);
        let remaining = limits.max_total_size.saturating_sub(total);
        EntryBudget {
            limit: limits.max_entry_size.min(remaining).min(ratio_cap),
            remaining,
            compressed,
        }
    }

    /// The error for an entry that expands past the limit.
    fn exceeded(&self, name: &str, limits: &ZipLimits) -> WsError {
        let why = if self.limit == limits.max_entry_size {
            format!(
                "is larger than the per-entry limit of {} bytes",
                limits.max_entry_size
            )
        } else if self.limit == self.remaining {
            format!(
                "takes the archive past its total limit of {} bytes",
                limits.max_total_size
            )
        } else {
            format!(
                "expands more than {}:1 (from {} compressed bytes)",
                limits.max_ratio, self.compressed
            )
        };
        WsError::zip_limit(format!("entry {name:?} {why}"))
    }
}

/// Decompresses a file entry within its budget and checks its size and checksum against the
/// headers.
fn read_entry(
    archive: &mut Archive<'_>,
    index: usize,
    header: &EntryHeader,
    budget: &EntryBudget,
    limits: &ZipLimits,
) -> WsResult<Vec<u8>> {
    let (name, declared) = (&header.path, header.declared);
    // Read no more than the header declares nor than the limits allow. The reader's own
    // checksum test is off (the checksum is checked below), so a failure when reading
    // past the declared size can only mean the data runs on beyond it.
    let cap = budget.limit.min(declared);
    let options = ZipReadOptions::new().ignore_crc32(true);
    let reader = archive
        .by_index_with_options(index, options)
        .map_err(zip_error)?;
    let corrupt =
        |e: std::io::Error| WsError::zip_invalid(format!("entry {name:?} is corrupt: {e}"));
    let (data, probe) = read_bounded(reader, cap, declared).map_err(corrupt)?;
    let past_header = || {
        WsError::zip_limit(format!(
            "entry {name:?} expands past the {declared} bytes its header declares"
        ))
    };
    match probe {
        Probe::End if data.len() as u64 == declared => {}
        Probe::End => {
            return Err(WsError::zip_invalid(format!(
                "entry {name:?} holds {} bytes but its header declares {declared}",
                data.len()
            )))
        }
        Probe::More if cap < declared => return Err(budget.exceeded(name, limits)),
        Probe::More => return Err(past_header()),
        Probe::Failed(_) if cap == declared => return Err(past_header()),
        Probe::Failed(e) => return Err(corrupt(e)),
    }
    if crc32fast::hash(&data) != header.crc {
        return Err(WsError::zip_invalid(format!(
            "entry {name:?} fails its checksum; the archive is damaged"
        )));
    }
    Ok(data)
}

/// What an import has gathered so far.
#[derive(Default)]
struct Import {
    /// Every normalized path and whether it is a folder.
    kinds: BTreeMap<String, bool>,
    /// Visible files, in archive order.
    files: Vec<(String, Vec<u8>)>,
    /// Files of the history area.
    hidden: BTreeMap<String, Vec<u8>>,
    /// Uncompressed bytes read.
    total: u64,
}

impl Import {
    /// Takes the entry's path; two entries may not share one after normalization.
    fn claim(&mut self, header: &EntryHeader) -> WsResult<()> {
        let Some(previous) = self.kinds.insert(header.path.clone(), header.is_dir) else {
            return Ok(());
        };
        let what = if previous == header.is_dir {
            "duplicate"
        } else {
            "file and folder"
        };
        Err(WsError::zip_invalid(format!(
            "entry {:?} collides with another entry at {} ({what})",
            header.name,
            path::display(&header.path)
        )))
    }

    fn add_file(&mut self, path: String, data: Vec<u8>) {
        self.total += data.len() as u64;
        if access::is_hidden(&path) {
            self.hidden.insert(path, data);
        } else {
            self.files.push((path, data));
        }
    }

    /// Every folder above an entry must not be a file, and the history area is a folder.
    fn check_folders(&self) -> WsResult<()> {
        for p in self.kinds.keys() {
            for ancestor in path::ancestors(p) {
                if self.kinds.get(ancestor) == Some(&false) {
                    return Err(WsError::zip_invalid(format!(
                        "{} is a file in the archive but also the folder of {}",
                        path::display(ancestor),
                        path::display(p)
                    )));
                }
            }
        }
        if self.kinds.get(HIDDEN_ROOT) == Some(&false) {
            return Err(WsError::zip_invalid(format!(
                "{HIDDEN_ROOT} must be the history folder, not a file"
            )));
        }
        Ok(())
    }

    /// The visible folders and files as a tree (folders named only as parents included).
    fn tree(self) -> Vfs {
        fn add_folders(vfs: &mut Vfs, p: &str) {
            for ancestor in path::ancestors(p) {
                vfs.set_content(ancestor, Some(Content::Dir));
            }
        }
        let mut vfs = Vfs::new();
        for (p, is_dir) in &self.kinds {
            if *is_dir && !access::is_hidden(p) {
                add_folders(&mut vfs, p);
                vfs.set_content(p, Some(Content::Dir));
            }
        }
        for (p, data) in self.files {
            add_folders(&mut vfs, &p);
            vfs.set_content(&p, Some(Content::File(Arc::from(data))));
        }
        vfs
    }
}

/// Above this size an entry's compressed size is checked before it is written.
const RATIO_CHECK_THRESHOLD: usize = 1024 * 1024;
/// Entries compressing better than this are stored, so a re-import stays inside the
/// default ratio limit.
const STORE_ABOVE_RATIO: usize = 100;

fn compressed_size(data: &[u8]) -> ZipResult<usize> {
    let mut probe = ZipWriter::new(Cursor::new(Vec::new()));
    probe.start_file(
        "probe",
        file_options(CompressionMethod::Deflated, data.len()),
    )?;
    probe.write_all(data)?;
    let bytes = probe.finish()?.into_inner();
    Ok(bytes.len())
}

fn file_options(method: CompressionMethod, len: usize) -> SimpleFileOptions {
    SimpleFileOptions::default()
        .compression_method(method)
        .system(System::Unix)
        .last_modified_time(DateTime::default())
        .unix_permissions(0o644)
        .large_file(len as u64 >= u64::from(u32::MAX))
}

fn dir_options() -> SimpleFileOptions {
    SimpleFileOptions::default()
        .compression_method(CompressionMethod::Stored)
        .system(System::Unix)
        .last_modified_time(DateTime::default())
        .unix_permissions(0o755)
}

fn method_for(data: &[u8]) -> ZipResult<CompressionMethod> {
    if data.len() > RATIO_CHECK_THRESHOLD {
        let packed = compressed_size(data)?;
        if data.len() > packed.saturating_mul(STORE_ABOVE_RATIO) {
            return Ok(CompressionMethod::Stored);
        }
    }
    Ok(CompressionMethod::Deflated)
}

fn put_file(
    zip: &mut ZipWriter<Cursor<Vec<u8>>>,
    name: &str,
    data: &[u8],
    compress: bool,
) -> ZipResult<()> {
    let method = if compress {
        method_for(data)?
    } else {
        CompressionMethod::Stored
    };
    zip.start_file(name, file_options(method, data.len()))?;
    zip.write_all(data)?;
    Ok(())
}

fn write_zip(vfs: &Vfs, history: &HistoryState, compress: bool) -> ZipResult<Vec<u8>> {
    let mut zip = ZipWriter::new(Cursor::new(Vec::new()));
    for (p, content) in vfs.contents() {
        match content {
            Content::Dir => zip.add_directory(format!("{p}/"), dir_options())?,
            Content::File(data) => put_file(&mut zip, p, &data, compress)?,
        }
    }
    for (name, data) in history.to_files() {
        put_file(&mut zip, &name, &data, compress)?;
    }
    Ok(zip.finish()?.into_inner())
}

/// Exports a tree and its history as a zip archive, deflated (`compress`) or stored. The
/// same inputs always give the same bytes.
pub fn to_zip(vfs: &Vfs, history: &HistoryState, compress: bool) -> Vec<u8> {
    // Names are normalized and short, no name repeats, and the target is memory: the
    // writer has nothing left to fail on.
    write_zip(vfs, history, compress).expect("writing a zip archive into memory cannot fail")
}

/// Writes `entries` (name, bytes) as an archive of stored entries, in the given order: a
/// container for parts that are archives already (a session snapshot), with no size limit but
/// memory's.
pub fn pack(entries: &[(&str, &[u8])]) -> WsResult<Vec<u8>> {
    let fail =
        |e: zip::result::ZipError| WsError::invalid_input(format!("cannot write the archive: {e}"));
    let mut zip = ZipWriter::new(Cursor::new(Vec::new()));
    for (name, data) in entries {
        zip.start_file(*name, file_options(CompressionMethod::Stored, data.len()))
            .map_err(fail)?;
        zip.write_all(data)
            .map_err(|e| WsError::invalid_input(format!("cannot write the archive: {e}")))?;
    }
    Ok(zip.finish().map_err(fail)?.into_inner())
}

/// Reads an archive of plain entries (as [`pack`] writes them): names and bytes, in order. At
/// most `max_entries` entries and `max_total` uncompressed bytes, each checked before it is
/// read; folders, encrypted entries and other methods than stored or deflated are refused.
pub fn unpack(
    bytes: &[u8],
    max_entries: usize,
    max_total: u64,
) -> WsResult<Vec<(String, Vec<u8>)>> {
    let invalid = |e: String| WsError::new(WsCode::ZipInvalid, e);
    let mut archive = ZipArchive::new(Cursor::new(bytes))
        .map_err(|e| invalid(format!("not a zip archive: {e}")))?;
    if archive.len() > max_entries {
        return Err(WsError::new(
            WsCode::ZipLimit,
            format!(
                "the archive has {} entries; the limit is {max_entries}",
                archive.len()
            ),
        ));
    }
    let mut total: u64 = 0;
    let mut out = Vec::with_capacity(archive.len());
    for i in 0..archive.len() {
        let mut entry = archive
            .by_index(i)
            .map_err(|e| invalid(format!("entry {i}: {e}")))?;
        if entry.is_dir() || entry.encrypted() {
            return Err(invalid(format!("entry {i} is a folder or encrypted")));
        }
        if !matches!(
            entry.compression(),
            CompressionMethod::Stored | CompressionMethod::Deflated
        ) {
            return Err(invalid(format!("entry {i} uses an unsupported method")));
        }
        total = total.saturating_add(entry.size());
        if total > max_total {
            return Err(WsError::new(
                WsCode::ZipLimit,
                format!("the archive holds more than {max_total} bytes"),
            ));
        }
        let name = entry
            .name()
            .map_err(|e| invalid(format!("entry {i}: {e}")))?
            .into_owned();
        let size = entry.size();
        let mut data = Vec::with_capacity(size.min(max_total) as usize);
        (&mut entry)
            .take(size.saturating_add(1))
            .read_to_end(&mut data)
            .map_err(|e| invalid(format!("entry {name}: {e}")))?;
        if data.len() as u64 != size {
            return Err(invalid(format!("entry {name} is not the size it declares")));
        }
        out.push((name, data));
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
