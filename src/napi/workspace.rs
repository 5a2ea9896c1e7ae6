//! `ZipWorkspace`: the in-memory workspace exposed to JavaScript.
//!
//! Conversion only: arguments are checked for their JavaScript type and converted, the workspace
//! ([`crate::workspace::Workspace`]) or exec ([`crate::exec`]) layer does the work and applies
//! the rules, and results come back as generated objects (the `#[napi(object)]` structs below,
//! which `binding.d.ts` describes). Every failure is thrown as a JavaScript `Error` whose `code`
//! property holds a [`WsCode`]; `INVALID_INPUT` is thrown as a `TypeError`, which is also an
//! `Error`.
//!
//! Paths in results are plain relative paths (`src/a.js`, the root is `''`); paths in
//! arguments may be written `~/src/a.js`, `/src/a.js` or `src/a.js`.
//!
//! The workspace sits behind a mutex so code execution can share it: `exec` takes a snapshot,
//! runs on a worker thread, and settles the run (applying its changes) on the main thread when
//! its promise settles. Host calls made meanwhile are kept; the run's changes land on top.

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use napi::bindgen_prelude::*;
use napi_derive::napi;

use super::host::{Host, Raw};
use crate::engine::errors::ErrorInfo;
use crate::engine::limits::LimitOverrides;
use crate::engine::{workers, CancelToken, Extension, Mode};
use crate::exec::{
    lock_workspace, run_exec, workspace_extension, CommitPolicy, ExecOutcome, ExecRequest,
    SharedWorkspace,
};
use crate::workspace::bounds::{self, to_usize, Bounds};
use crate::workspace::{
    Entry, EntryKind, HistoryEntry, LineSlice, Query, SearchMatch, SearchResult, Stat, Workspace,
    WriteQuota, WsCode, WsError, WsResult, ZipLimits,
};

type Res<T> = std::result::Result<T, WsError>;

fn invalid(message: impl Into<String>) -> WsError {
    WsError::invalid_input(message)
}

/// Throws `e` as a JS error with a `code` property (a `TypeError` for `INVALID_INPUT`) and
/// returns the matching napi error, which tells the caller that an exception is pending.
fn throw(env: Env, e: WsError) -> Error {
    let built = Error::new(e.code.as_str(), e.message.clone());
    let value = if e.code == WsCode::InvalidInput {
        JsTypeError::from(built).into_unknown(env)
    } else {
        JsError::from(built).into_unknown(env)
    };
    match env.throw(value) {
        Ok(()) => Error::new(Status::PendingException, e.message),
        Err(_) => Error::new(Status::GenericFailure, e.to_string()),
    }
}

/// Runs `body` and throws its failure, if any.
fn run<T>(env: Env, body: impl FnOnce(Host) -> Res<T>) -> Result<T> {
    body(Host::new(env.raw())).map_err(|e| throw(env, e))
}

// ----- reading arguments -----

/// A host failure while reading an argument (a throwing getter, say) as `INVALID_INPUT`.
fn unreadable(message: String) -> WsError {
    invalid(message)
}

/// `None` for a missing, `undefined` or `null` argument.
fn given(h: Host, v: Option<&Unknown>) -> Option<Raw> {
    v.map(|u| u.raw()).filter(|&r| !h.is_nullish(r))
}

fn is_type(h: Host, v: Raw, t: ValueType) -> bool {
    ValueType::from(h.type_of(v)) == t
}

fn wrong_type(h: Host, v: Raw, name: &str, wanted: &str) -> WsError {
    invalid(format!(
        "{name} must be {wanted}, got {}",
        h.describe_type(v)
    ))
}

fn string(h: Host, v: Raw, name: &str) -> Res<String> {
    if !is_type(h, v, ValueType::String) {
        return Err(wrong_type(h, v, name, "a string"));
    }
    h.string(v).map_err(unreadable)
}

fn boolean(h: Host, v: Raw, name: &str) -> Res<bool> {
    if !is_type(h, v, ValueType::Boolean) {
        return Err(wrong_type(h, v, name, "a boolean"));
    }
    h.boolean(v).map_err(unreadable)
}

fn number(h: Host, v: Raw, name: &str) -> Res<f64> {
    if !is_type(h, v, ValueType::Number) {
        return Err(wrong_type(h, v, name, "a number"));
    }
    h.number(v).map_err(unreadable)
}

/// A whole number within `bounds` (a workspace or exec rule).
fn integer(h: Host, v: Raw, name: &str, bounds: Bounds) -> Res<u64> {
    bounds.check(name, number(h, v, name)?)
}

/// The memory of a `Uint8Array` (including `Buffer`) or an `ArrayBuffer` argument, borrowed for
/// the current call: no JavaScript may run while it is in use.
enum Bytes<'env> {
    View(Uint8ArraySlice<'env>),
    Buffer(ArrayBuffer<'env>),
}

impl std::ops::Deref for Bytes<'_> {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Bytes::View(v) => v,
            Bytes::Buffer(b) => b,
        }
    }
}

fn bytes<'env>(h: Host, v: &Unknown<'env>, name: &str) -> Res<Bytes<'env>> {
    if v.is_typedarray().unwrap_or(false) {
        return Uint8ArraySlice::from_unknown(*v)
            .map(Bytes::View)
            .map_err(|_| {
                invalid(format!(
                    "{name} must be a Buffer or Uint8Array, got another typed array"
                ))
            });
    }
    if v.is_arraybuffer().unwrap_or(false) {
        return ArrayBuffer::from_unknown(*v)
            .map(Bytes::Buffer)
            .map_err(|_| invalid(format!("{name} could not be read")));
    }
    Err(wrong_type(h, v.raw(), name, "a Buffer or Uint8Array"))
}

/// File contents: a string (written as UTF-8) or bytes.
fn contents(h: Host, v: &Unknown, name: &str) -> Res<Vec<u8>> {
    if is_type(h, v.raw(), ValueType::String) {
        return Ok(h.string(v.raw()).map_err(unreadable)?.into_bytes());
    }
    match bytes(h, v, name) {
        Ok(b) => Ok(b.to_vec()),
        Err(_) => Err(wrong_type(
            h,
            v.raw(),
            name,
            "a string, Buffer or Uint8Array",
        )),
    }
}

/// An options object restricted to `allowed` keys; empty when not given.
struct Options {
    h: Host,
    obj: Option<Raw>,
    name: &'static str,
}

impl Options {
    fn read(h: Host, v: Option<&Unknown>, name: &'static str, allowed: &[&str]) -> Res<Self> {
        Self::read_raw(h, given(h, v), name, allowed)
    }

    fn read_raw(h: Host, v: Option<Raw>, name: &'static str, allowed: &[&str]) -> Res<Self> {
        let Some(obj) = v.filter(|&r| !h.is_nullish(r)) else {
            return Ok(Options { h, obj: None, name });
        };
        if !is_type(h, obj, ValueType::Object) || h.is_array(obj) {
            return Err(wrong_type(h, obj, name, "an object"));
        }
        for key in h.own_keys(obj).map_err(unreadable)? {
            let key = h.string(key).map_err(unreadable)?;
            if !allowed.contains(&key.as_str()) {
                return Err(invalid(format!(
                    "unknown {name} key '{key}'; expected one of: {}",
                    allowed.join(", ")
                )));
            }
        }
        Ok(Options {
            h,
            obj: Some(obj),
            name,
        })
    }

    fn get(&self, key: &str) -> Res<Option<Raw>> {
        let Some(obj) = self.obj else { return Ok(None) };
        let v = self.h.get_named(obj, key).map_err(unreadable)?;
        Ok((!is_type(self.h, v, ValueType::Undefined)).then_some(v))
    }

    fn label(&self, key: &str) -> String {
        format!("{}.{key}", self.name)
    }

    fn boolean(&self, key: &str) -> Res<bool> {
        match self.get(key)? {
            Some(v) => boolean(self.h, v, &self.label(key)),
            None => Ok(false),
        }
    }

    fn string(&self, key: &str) -> Res<Option<String>> {
        self.get(key)?
            .map(|v| string(self.h, v, &self.label(key)))
            .transpose()
    }

    fn integer(&self, key: &str, bounds: Bounds) -> Res<Option<u64>> {
        self.get(key)?
            .map(|v| integer(self.h, v, &self.label(key), bounds))
            .transpose()
    }
}

/// `{ recursive?: boolean }`.
fn recursive(h: Host, options: Option<&Unknown>) -> Res<bool> {
    Options::read(h, options, "options", &["recursive"])?.boolean("recursive")
}

fn zip_limits(h: Host, v: Option<&Unknown>) -> Res<ZipLimits> {
    let o = Options::read(
        h,
        v,
        "limits",
        &["maxEntries", "maxEntryBytes", "maxTotalBytes", "maxRatio"],
    )?;
    let mut limits = ZipLimits::default();
    if let Some(n) = o.integer("maxEntries", ZipLimits::ENTRIES)? {
        limits.max_entries = to_usize(n);
    }
    if let Some(n) = o.integer("maxEntryBytes", ZipLimits::BYTES)? {
        limits.max_entry_size = n;
    }
    if let Some(n) = o.integer("maxTotalBytes", ZipLimits::BYTES)? {
        limits.max_total_size = n;
    }
    if let Some(n) = o.integer("maxRatio", ZipLimits::RATIO)? {
        limits.max_ratio = n;
    }
    Ok(limits)
}

/// An optional whole number within `bounds`, `default` when not given.
fn integer_or(h: Host, v: Option<&Unknown>, name: &str, bounds: Bounds, default: u64) -> Res<u64> {
    match given(h, v) {
        Some(v) => integer(h, v, name, bounds),
        None => Ok(default),
    }
}

// ----- results -----

/// A JavaScript number for a count, size, id or time (all below 2^53).
fn num(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn nums(ids: Vec<u64>) -> Vec<i64> {
    ids.into_iter().map(num).collect()
}

/// Whether an entry is a file or a folder.
#[napi(string_enum = "lowercase")]
pub enum WorkspaceEntryKind {
    File,
    Dir,
}

impl From<EntryKind> for WorkspaceEntryKind {
    fn from(k: EntryKind) -> Self {
        match k {
            EntryKind::File => WorkspaceEntryKind::File,
            EntryKind::Dir => WorkspaceEntryKind::Dir,
        }
    }
}

/// One listed entry.
#[napi(object)]
pub struct WorkspaceEntry {
    pub path: String,
    pub kind: WorkspaceEntryKind,
    /// Bytes; 0 for folders.
    pub size: i64,
}

impl From<Entry> for WorkspaceEntry {
    fn from(e: Entry) -> Self {
        WorkspaceEntry {
            path: e.path,
            kind: e.kind.into(),
            size: num(e.size),
        }
    }
}

/// Metadata of one path (the root's path is `''`).
#[napi(object)]
pub struct WorkspaceStat {
    pub path: String,
    pub kind: WorkspaceEntryKind,
    pub size: i64,
    /// Last change in ms since the Unix epoch (0 for the root).
    pub mtime: i64,
}

impl From<Stat> for WorkspaceStat {
    fn from(s: Stat) -> Self {
        WorkspaceStat {
            path: s.path,
            kind: s.kind.into(),
            size: num(s.size),
            mtime: num(s.mtime),
        }
    }
}

/// Lines read by `readLines`, 1-based and inclusive.
#[napi(object)]
pub struct WorkspaceLineRange {
    pub start: i64,
    /// Last line returned; `start - 1` when none was.
    pub end: i64,
    pub total_lines: i64,
    pub lines: Vec<String>,
}

impl From<LineSlice> for WorkspaceLineRange {
    fn from(s: LineSlice) -> Self {
        WorkspaceLineRange {
            start: num(s.start as u64),
            end: num(s.end as u64),
            total_lines: num(s.total_lines as u64),
            lines: s.lines,
        }
    }
}

/// What `patchLines` changed.
#[napi(object, use_nullable = true)]
pub struct WorkspacePatchResult {
    /// First line replaced, or where inserted lines begin.
    pub start: i64,
    pub removed: i64,
    pub inserted: i64,
    /// Lines in the file afterwards.
    pub total_lines: i64,
    /// History entry recorded, or null when the file did not change.
    pub history_id: Option<i64>,
}

/// One search hit.
#[napi(object)]
pub struct WorkspaceSearchMatch {
    pub path: String,
    /// 1-based line.
    pub line: i64,
    /// 1-based column of the first hit on the line, in characters.
    pub column: i64,
    pub before: Vec<String>,
    /// The line holding the hit.
    pub text: String,
    pub after: Vec<String>,
}

impl From<SearchMatch> for WorkspaceSearchMatch {
    fn from(m: SearchMatch) -> Self {
        WorkspaceSearchMatch {
            path: m.path,
            line: num(m.line as u64),
            column: num(m.column as u64),
            before: m.before,
            text: m.line_text,
            after: m.after,
        }
    }
}

/// What `search` found.
#[napi(object)]
pub struct WorkspaceSearchResult {
    pub matches: Vec<WorkspaceSearchMatch>,
    /// Whether more hits existed than `maxResults`.
    pub truncated: bool,
    /// Text files searched (binary files are skipped).
    pub files_searched: i64,
}

impl From<SearchResult> for WorkspaceSearchResult {
    fn from(r: SearchResult) -> Self {
        WorkspaceSearchResult {
            matches: r.matches.into_iter().map(Into::into).collect(),
            truncated: r.truncated,
            files_searched: num(r.files_searched as u64),
        }
    }
}

/// One history entry.
#[napi(object)]
pub struct WorkspaceHistoryEntry {
    /// Increasing id, starting at 1.
    pub id: i64,
    /// What was done, e.g. `write ~/src/a.js`.
    pub op: String,
    /// Paths changed, sorted (a compacted entry keeps only the first 100).
    pub paths: Vec<String>,
    pub path_count: i64,
    /// When, in ms since the Unix epoch.
    pub time: i64,
    /// Whether the entry's contents were dropped: it can no longer be undone or diffed.
    pub compacted: bool,
}

impl From<HistoryEntry> for WorkspaceHistoryEntry {
    fn from(e: HistoryEntry) -> Self {
        WorkspaceHistoryEntry {
            id: num(e.id),
            op: e.op,
            paths: e.paths,
            path_count: num(e.path_count as u64),
            time: num(e.time),
            compacted: e.compacted,
        }
    }
}

// ----- the class -----

/// An in-memory tree of files and folders with a recorded history, imported from and exported
/// to zip archives.
#[napi]
pub struct ZipWorkspace {
    inner: SharedWorkspace,
}

#[napi]
impl ZipWorkspace {
    /// An empty workspace.
    #[napi(constructor)]
    pub fn new() -> Self {
        ZipWorkspace::from_workspace(Workspace::new())
    }

    /// Imports a workspace (and its history) from zip bytes, enforcing `limits`.
    #[napi(
        factory,
        js_name = "fromZip",
        catch_unwind,
        ts_args_type = "bytes: Uint8Array, limits?: object | null"
    )]
    pub fn from_zip(env: Env, bytes: Unknown, limits: Option<Unknown>) -> Result<Self> {
        run(env, |h| {
            let limits = zip_limits(h, limits.as_ref())?;
            let data = self::bytes(h, &bytes, "bytes")?;
            Ok(ZipWorkspace::from_workspace(Workspace::from_zip(
                &data, &limits,
            )?))
        })
    }

    /// Reads a zip archive from the host file system.
    #[napi(
        factory,
        catch_unwind,
        ts_args_type = "hostPath: string, limits?: object | null"
    )]
    pub fn open(env: Env, host_path: Unknown, limits: Option<Unknown>) -> Result<Self> {
        run(env, |h| {
            let path = string(h, host_path.raw(), "hostPath")?;
            let limits = zip_limits(h, limits.as_ref())?;
            Ok(ZipWorkspace::from_workspace(Workspace::open(
                Path::new(&path),
                &limits,
            )?))
        })
    }

    /// Exports the workspace and its history as zip bytes (the same workspace always gives the
    /// same bytes).
    #[napi(js_name = "toZip", catch_unwind)]
    pub fn to_zip(&self) -> Buffer {
        self.ws().to_zip().into()
    }

    /// Writes the archive to the host file system atomically (temporary file, then rename).
    #[napi(catch_unwind, ts_args_type = "hostPath: string")]
    pub fn save(&self, env: Env, host_path: Unknown) -> Result<()> {
        run(env, |h| {
            let path = string(h, host_path.raw(), "hostPath")?;
            self.ws().save(Path::new(&path))
        })
    }

    /// A file's bytes.
    #[napi(js_name = "readFile", catch_unwind, ts_args_type = "path: string")]
    pub fn read_file(&self, env: Env, path: Unknown) -> Result<Buffer> {
        run(env, |h| {
            let path = string(h, path.raw(), "path")?;
            Ok(self.ws().read_file(&path)?.to_vec().into())
        })
    }

    /// A file's text; `NOT_TEXT` if it is not valid UTF-8.
    #[napi(js_name = "readText", catch_unwind, ts_args_type = "path: string")]
    pub fn read_text(&self, env: Env, path: Unknown) -> Result<String> {
        run(env, |h| {
            let path = string(h, path.raw(), "path")?;
            self.ws().read_text(&path)
        })
    }

    /// Creates or replaces a file, creating missing parent folders. Returns the id of the
    /// history entry recorded, or `null` if nothing changed.
    #[napi(
        js_name = "writeFile",
        catch_unwind,
        ts_args_type = "path: string, data: string | Uint8Array"
    )]
    pub fn write_file(&mut self, env: Env, path: Unknown, data: Unknown) -> Result<Option<i64>> {
        run(env, |h| {
            let path = string(h, path.raw(), "path")?;
            let data = contents(h, &data, "data")?;
            Ok(self.ws().write_file(&path, &data, true)?.map(num))
        })
    }

    /// Creates a folder (with `recursive`, also missing parents, and an existing folder is
    /// fine). Returns the history entry id, or `null` if nothing changed.
    #[napi(
        catch_unwind,
        ts_args_type = "path: string, options?: { recursive?: boolean } | null"
    )]
    pub fn mkdir(
        &mut self,
        env: Env,
        path: Unknown,
        options: Option<Unknown>,
    ) -> Result<Option<i64>> {
        self.path_op(env, path, options, Workspace::mkdir)
    }

    /// Deletes a file or folder (a non-empty folder needs `recursive`). Returns the history
    /// entry id.
    #[napi(
        catch_unwind,
        ts_args_type = "path: string, options?: { recursive?: boolean } | null"
    )]
    pub fn delete(
        &mut self,
        env: Env,
        path: Unknown,
        options: Option<Unknown>,
    ) -> Result<Option<i64>> {
        self.path_op(env, path, options, Workspace::delete)
    }

    /// The entries of a folder (default: the root), sorted by path; with `recursive`,
    /// everything below it.
    #[napi(
        catch_unwind,
        ts_args_type = "path?: string | null, options?: { recursive?: boolean } | null"
    )]
    pub fn list(
        &self,
        env: Env,
        path: Option<Unknown>,
        options: Option<Unknown>,
    ) -> Result<Vec<WorkspaceEntry>> {
        run(env, |h| {
            let path = match given(h, path.as_ref()) {
                Some(v) => string(h, v, "path")?,
                None => "~".to_string(),
            };
            let recursive = recursive(h, options.as_ref())?;
            let entries = self.ws().list(&path, recursive)?;
            Ok(entries.into_iter().map(Into::into).collect())
        })
    }

    /// Metadata of a path: `{ path, kind, size, mtime }` (the root's path is `''`).
    #[napi(catch_unwind, ts_args_type = "path: string")]
    pub fn stat(&self, env: Env, path: Unknown) -> Result<WorkspaceStat> {
        run(env, |h| {
            let path = string(h, path.raw(), "path")?;
            Ok(self.ws().stat(&path)?.into())
        })
    }

    /// Whether something exists at a path (invalid and hidden paths do not exist).
    #[napi(catch_unwind, ts_args_type = "path: string")]
    pub fn exists(&self, env: Env, path: Unknown) -> Result<bool> {
        run(env, |h| {
            let path = string(h, path.raw(), "path")?;
            Ok(self.ws().exists(&path))
        })
    }

    /// Lines `start..=end` of a text file, 1-based and inclusive. `start` defaults to 1, `end`
    /// to the last line and is clamped to it.
    #[napi(
        js_name = "readLines",
        catch_unwind,
        ts_args_type = "path: string, start?: number | null, end?: number | null"
    )]
    pub fn read_lines(
        &self,
        env: Env,
        path: Unknown,
        start: Option<Unknown>,
        end: Option<Unknown>,
    ) -> Result<WorkspaceLineRange> {
        run(env, |h| {
            let path = string(h, path.raw(), "path")?;
            let start = integer_or(h, start.as_ref(), "start", bounds::ANY, 1)?;
            let end = integer_or(h, end.as_ref(), "end", bounds::ANY, bounds::MAX_EXACT)?;
            let lines = self
                .ws()
                .read_lines(&path, to_usize(start), to_usize(end))?;
            Ok(lines.into())
        })
    }

    /// Replaces lines `start..=end` (1-based, inclusive) with `replacement`; `end = start - 1`
    /// inserts before `start`. With `expected`, the current text of the range must match it or
    /// `CONFLICT` is thrown and nothing changes.
    #[napi(
        js_name = "patchLines",
        catch_unwind,
        ts_args_type = "path: string, start: number, end: number, replacement: string, options?: { expected?: string } | null"
    )]
    pub fn patch_lines(
        &mut self,
        env: Env,
        path: Unknown,
        start: Unknown,
        end: Unknown,
        replacement: Unknown,
        options: Option<Unknown>,
    ) -> Result<WorkspacePatchResult> {
        run(env, |h| {
            let path = string(h, path.raw(), "path")?;
            let start = to_usize(integer(h, start.raw(), "start", bounds::ANY)?);
            let end = to_usize(integer(h, end.raw(), "end", bounds::ANY)?);
            let replacement = string(h, replacement.raw(), "replacement")?;
            let expected =
                Options::read(h, options.as_ref(), "options", &["expected"])?.string("expected")?;
            let (o, id) =
                self.ws()
                    .patch_lines(&path, start, end, &replacement, expected.as_deref())?;
            Ok(WorkspacePatchResult {
                start: num(o.start as u64),
                removed: num(o.removed as u64),
                inserted: num(o.inserted as u64),
                total_lines: num(o.total_lines as u64),
                history_id: id.map(num),
            })
        })
    }

    /// Literal, case-sensitive search of the text files at or below `options.path` (default:
    /// everything). At most one hit per line; `context` lines (default 0) around each hit;
    /// at most `maxResults` hits (default 100), `truncated` tells whether more exist.
    #[napi(
        catch_unwind,
        ts_args_type = "query: string, options?: { path?: string, context?: number, maxResults?: number } | null"
    )]
    pub fn search(
        &self,
        env: Env,
        query: Unknown,
        options: Option<Unknown>,
    ) -> Result<WorkspaceSearchResult> {
        run(env, |h| {
            let query = Query::new(string(h, query.raw(), "query")?)?;
            let o = Options::read(
                h,
                options.as_ref(),
                "options",
                &["path", "context", "maxResults"],
            )?;
            let path = o.string("path")?.unwrap_or_else(|| "~".into());
            let context = o.integer("context", bounds::SEARCH_CONTEXT)?.unwrap_or(0);
            let max = o
                .integer("maxResults", bounds::SEARCH_RESULTS)?
                .unwrap_or(bounds::DEFAULT_SEARCH_RESULTS);
            let found = self
                .ws()
                .search(&query, &path, to_usize(context), to_usize(max))?;
            Ok(found.into())
        })
    }

    /// The newest `n` history entries (default 20), newest first.
    #[napi(catch_unwind, ts_args_type = "n?: number | null")]
    pub fn history(&self, env: Env, n: Option<Unknown>) -> Result<Vec<WorkspaceHistoryEntry>> {
        run(env, |h| {
            let n = integer_or(h, n.as_ref(), "n", bounds::ANY, bounds::DEFAULT_HISTORY)?;
            let entries = self.ws().history(to_usize(n));
            Ok(entries.into_iter().map(Into::into).collect())
        })
    }

    /// A unified diff of the text changes made by history entry `id`.
    #[napi(catch_unwind, ts_args_type = "id: number")]
    pub fn diff(&self, env: Env, id: Unknown) -> Result<String> {
        run(env, |h| {
            let id = integer(h, id.raw(), "id", bounds::ANY)?;
            self.ws().diff(id)
        })
    }

    /// Undoes the newest `n` entries (default 1); returns their ids, newest first.
    #[napi(catch_unwind, ts_args_type = "n?: number | null")]
    pub fn undo(&mut self, env: Env, n: Option<Unknown>) -> Result<Vec<i64>> {
        run(env, |h| {
            let n = integer_or(h, n.as_ref(), "n", bounds::STEPS, 1)?;
            Ok(nums(self.ws().undo(to_usize(n))?))
        })
    }

    /// Redoes up to `n` undone entries (default 1); returns their ids, oldest first.
    #[napi(catch_unwind, ts_args_type = "n?: number | null")]
    pub fn redo(&mut self, env: Env, n: Option<Unknown>) -> Result<Vec<i64>> {
        run(env, |h| {
            let n = integer_or(h, n.as_ref(), "n", bounds::STEPS, 1)?;
            Ok(nums(self.ws().redo(to_usize(n))?))
        })
    }

    /// Returns the tree to its state right after entry `id`, recorded as a new entry whose id
    /// is returned (`null` if the tree was already in that state).
    #[napi(catch_unwind, ts_args_type = "id: number")]
    pub fn restore(&mut self, env: Env, id: Unknown) -> Result<Option<i64>> {
        run(env, |h| {
            let id = integer(h, id.raw(), "id", bounds::ANY)?;
            Ok(self.ws().restore(id)?.map(num))
        })
    }
}

impl Default for ZipWorkspace {
    fn default() -> Self {
        Self::new()
    }
}

impl ZipWorkspace {
    fn from_workspace(inner: Workspace) -> Self {
        ZipWorkspace {
            inner: Arc::new(Mutex::new(inner)),
        }
    }

    /// The workspace, locked for the duration of the guard.
    fn ws(&self) -> MutexGuard<'_, Workspace> {
        lock_workspace(&self.inner)
    }

    /// Converts `path` and `{ recursive?: boolean }`, runs `op`, and returns the id of the history
    /// entry it recorded.
    fn path_op(
        &self,
        env: Env,
        path: Unknown,
        options: Option<Unknown>,
        op: fn(&mut Workspace, &str, bool) -> WsResult<Option<u64>>,
    ) -> Result<Option<i64>> {
        run(env, |h| {
            let path = string(h, path.raw(), "path")?;
            let recursive = recursive(h, options.as_ref())?;
            Ok(op(&mut self.ws(), &path, recursive)?.map(num))
        })
    }

    /// The extension that gives a `run()` this workspace (`fs`/`path` globals in function and
    /// script mode, imports in module mode); its writes are applied when the run succeeds.
    pub fn run_extension(&self, mode: Mode, filename: &str) -> Extension {
        workspace_extension(&self.inner, mode, filename)
    }
}

// ----- exec -----

fn string_list(h: Host, v: Raw) -> Res<Vec<String>> {
    if !h.is_array(v) {
        return Err(wrong_type(h, v, "options.argv", "an array of strings"));
    }
    let n = h.array_length(v).map_err(unreadable)?;
    ExecRequest::check_argv_len(n as usize)?;
    (0..n)
        .map(|i| {
            let item = h.element(v, i).map_err(unreadable)?;
            string(h, item, &format!("options.argv[{i}]"))
        })
        .collect()
}

fn string_map(h: Host, v: Raw) -> Res<Vec<(String, String)>> {
    if !is_type(h, v, ValueType::Object) || h.is_array(v) {
        return Err(wrong_type(h, v, "options.env", "an object of strings"));
    }
    let keys = h.own_keys(v).map_err(unreadable)?;
    ExecRequest::check_env_len(keys.len())?;
    keys.into_iter()
        .map(|key| {
            let name = h.string(key).map_err(unreadable)?;
            let value = h.property(v, key).map_err(unreadable)?;
            let value = string(h, value, &format!("options.env.{name}"))?;
            Ok((name, value))
        })
        .collect()
}

fn write_quota(h: Host, v: Raw) -> Res<WriteQuota> {
    let q = Options::read_raw(h, Some(v), "quota", &["bytes", "files"])?;
    let mut quota = WriteQuota::default();
    if let Some(n) = q.integer("bytes", WriteQuota::BYTES)? {
        quota.max_bytes = n;
    }
    if let Some(n) = q.integer("files", WriteQuota::FILES)? {
        quota.max_files = to_usize(n);
    }
    Ok(quota)
}

fn exec_request(h: Host, entry: Raw, options: Option<&Unknown>) -> Res<ExecRequest> {
    let mut req = ExecRequest::new(string(h, entry, "entryPath")?);
    let o = Options::read(
        h,
        options,
        "options",
        &["argv", "env", "limits", "timeoutMs", "commit", "quota"],
    )?;
    if let Some(v) = o.get("argv")? {
        req.argv = string_list(h, v)?;
    }
    if let Some(v) = o.get("env")? {
        req.env = string_map(h, v)?;
    }
    let mut limits = LimitOverrides::default();
    if let Some(v) = o.get("limits")? {
        limits = super::options::parse_limits(h, v).map_err(|e| invalid(e.message))?;
    }
    if let Some(v) = o.get("timeoutMs")? {
        limits.timeout_ms = Some(number(h, v, "options.timeoutMs")?);
    }
    req.limits = limits.resolve().map_err(invalid)?;
    if let Some(c) = o.string("commit")? {
        req.commit = CommitPolicy::from_name(&c).ok_or_else(|| {
            invalid(format!(
                "options.commit must be 'on-success', 'always' or 'never', got '{c}'"
            ))
        })?;
    }
    if let Some(v) = o.get("quota")? {
        req.quota = write_quota(h, v)?;
    }
    Ok(req)
}

/// Where an exec error happened: `line`, `column`, `frame` and `stack` refer to `file`.
#[napi(object)]
pub struct ExecErrorInfo {
    pub code: String,
    pub name: String,
    pub message: String,
    /// The workspace module the error points into, e.g. `~/lib/util.ts`.
    pub file: Option<String>,
    pub line: Option<i64>,
    pub column: Option<i64>,
    pub frame: Option<String>,
    pub stack: Option<String>,
}

impl ExecErrorInfo {
    fn new(e: ErrorInfo, file: Option<String>) -> Self {
        ExecErrorInfo {
            code: e.code.as_str().to_string(),
            name: e.name,
            message: e.message,
            file,
            line: e.line.map(i64::from),
            column: e.column.map(i64::from),
            frame: e.frame,
            stack: e.stack,
        }
    }
}

/// Time and memory one exec run used.
#[napi(object)]
pub struct ExecStats {
    pub wall_ms: f64,
    pub heap_bytes: i64,
}

/// What `exec` resolves to. Fields are set in this order: `error` and `historyId` only when
/// present, `stats` last.
#[napi(object)]
pub struct ExecResult {
    /// Exit code 0 and no error.
    pub ok: bool,
    pub exit_code: i32,
    pub stdout: String,
    pub stderr: String,
    /// Why the run failed (a non-zero exit is an ExitError).
    pub error: Option<ExecErrorInfo>,
    /// Present when the changes were applied: the history entry, or null if nothing changed.
    pub history_id: Option<Either<i64, Null>>,
    /// Always set; optional only so that it comes after the optional fields.
    pub stats: Option<ExecStats>,
}

impl From<ExecOutcome> for ExecResult {
    fn from(o: ExecOutcome) -> Self {
        ExecResult {
            ok: o.ok,
            exit_code: o.exit_code,
            stdout: o.stdout,
            stderr: o.stderr,
            error: o.error.map(|e| ExecErrorInfo::new(e, o.error_file)),
            history_id: o.history_id.map(|id| match id {
                Some(id) => Either::A(num(id)),
                None => Either::B(Null),
            }),
            stats: Some(ExecStats {
                wall_ms: o.stats.wall_ms,
                heap_bytes: num(o.stats.heap_bytes as u64),
            }),
        }
    }
}

#[napi]
impl ZipWorkspace {
    /// Runs a `.js`, `.mjs`, `.ts` or `.mts` file of the workspace as an ES module graph on a
    /// worker thread. Resolves to `{ ok, exitCode, stdout, stderr, error?, historyId?, stats }`;
    /// rejects only for bad arguments (thrown synchronously as a TypeError with code
    /// INVALID_INPUT). The run sees a snapshot taken now; its changes are applied when the promise
    /// settles (by default only if it succeeded), as one history entry, on top of whatever the
    /// host changed meanwhile.
    #[napi(
        catch_unwind,
        ts_args_type = "entryPath: string, options?: object | null",
        ts_return_type = "Promise<ExecResult>"
    )]
    pub fn exec<'env>(
        &self,
        env: &'env Env,
        entry_path: Unknown,
        options: Option<Unknown>,
    ) -> Result<Object<'env>> {
        let env_value = *env;
        let req = run(env_value, |h| {
            exec_request(h, entry_path.raw(), options.as_ref())
        })?;
        let overlay = self.ws().stage(req.quota);
        let shared = self.inner.clone();
        let (deferred, promise) = env.create_deferred()?;
        let job = move || {
            let outcome = run_exec(&req, overlay, &CancelToken::new());
            deferred.resolve(move |_env: Env| Ok(ExecResult::from(outcome.settle(&shared))));
        };
        match workers::global() {
            Some(pool) if pool.submit(Box::new(job)) => Ok(promise),
            _ => Err(throw(
                env_value,
                WsError::internal("the worker pool is not accepting work"),
            )),
        }
    }
}
