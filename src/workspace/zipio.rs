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
mod tests {
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
        let mut archive = ZipArchive::new(Cursor::new(&stored[..])).map_err(|e| {
            WsError::new(WsCode::ZipInvalid, format!("cannot reopen the export: {e}"))
        })?;
        for i in 0..archive.len() {
            let entry = archive.by_index(i).map_err(|e| {
                WsError::new(WsCode::ZipInvalid, format!("cannot read entry {i}: {e}"))
            })?;
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
}
