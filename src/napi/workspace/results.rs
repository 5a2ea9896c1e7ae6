//! What `ZipWorkspace` methods return: generated `#[napi(object)]` structs (described in
//! `binding.d.ts`), converted from the workspace and exec types.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::engine::errors::{ErrorCode, ErrorInfo};
use crate::exec::ExecOutcome;
use crate::workspace::{
    Content, Entry, EntryKind, HistoryEntry, LineSlice, PathChange, SearchMatch, SearchResult, Stat,
};

/// A JavaScript number for a count, size, id or time (all below 2^53).
pub(super) fn num(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

pub(super) fn nums(ids: Vec<u64>) -> Vec<i64> {
    ids.into_iter().map(num).collect()
}

/// Which paths a workspace lets be read and written (gitignore-style globs; a list left out
/// restricts nothing of its kind).
#[napi(object)]
pub struct WorkspaceAccessRules {
    /// Paths that may be read (and the folders leading to them); others are refused and hidden
    /// from listings and searches.
    pub read_patterns: Option<Vec<String>>,
    /// Paths that may be created, changed or deleted.
    pub write_patterns: Option<Vec<String>>,
    /// Refuses every change.
    pub read_only: bool,
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
    /// Whether `maxBytes` left out lines asked for, or cut the one line returned short.
    pub truncated: bool,
    /// Whether the one line returned is only its first `maxBytes` bytes.
    pub line_cut: bool,
    /// Whether the file ends with a line terminator.
    pub final_newline: bool,
}

impl From<LineSlice> for WorkspaceLineRange {
    fn from(s: LineSlice) -> Self {
        WorkspaceLineRange {
            start: num(s.start as u64),
            end: num(s.end as u64),
            total_lines: num(s.total_lines as u64),
            lines: s.lines,
            truncated: s.truncated,
            line_cut: s.line_cut,
            final_newline: s.final_newline,
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

/// Where an exec error happened: `line`, `column`, `frame` and `stack` refer to `file`.
#[napi(object)]
pub struct ExecErrorInfo {
    pub code: ErrorCode,
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
            code: e.code,
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
    /// Interpreter steps the program took (see `limits.steps`).
    pub steps: i64,
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
    /// Bytes the run wrote through `fs` (written, appended and copied: what `quota.bytes`
    /// counts), whether or not its changes were applied. Always set.
    pub bytes_written: Option<i64>,
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
            bytes_written: Some(num(o.bytes_written)),
            stats: Some(ExecStats {
                wall_ms: o.stats.wall_ms,
                heap_bytes: num(o.stats.heap_bytes as u64),
                steps: num(o.stats.steps),
            }),
        }
    }
}

/// One path that differs between two workspaces.
#[napi(object)]
pub struct WorkspaceChange {
    /// Relative path.
    pub path: String,
    /// `create`, `modify` or `delete`.
    #[napi(ts_type = "'create' | 'modify' | 'delete'")]
    pub kind: String,
    /// Whether it is (or was) a folder.
    pub dir: bool,
    /// The file's bytes before (`null`: absent, or a folder).
    pub before: Option<Buffer>,
    /// The file's bytes after (`null`: absent, or a folder).
    pub after: Option<Buffer>,
    /// A unified diff when both sides are text.
    pub diff: Option<String>,
}

impl WorkspaceChange {
    pub(super) fn of(c: &PathChange, diff_limit: usize) -> Self {
        let bytes = |content: &Option<Content>| match content {
            Some(Content::File(data)) => Some(Buffer::from(data.to_vec())),
            _ => None,
        };
        WorkspaceChange {
            path: c.path.clone(),
            kind: c.kind.as_str().to_string(),
            dir: c.is_dir(),
            before: bytes(&c.before),
            after: bytes(&c.after),
            diff: if c.is_dir() {
                None
            } else {
                c.text_diff(diff_limit)
            },
        }
    }
}

/// One entry of `walk`: a folder's contents in tree order.
#[napi(object)]
pub struct WorkspaceWalkEntry {
    /// The workspace path (`src/lib/a.js`).
    pub path: String,
    /// The path below the walked folder (`lib/a.js` when walking `src`), the form a listing
    /// shows under the folder's own name.
    pub relative: String,
    /// The last segment (`a.js`).
    pub name: String,
    pub kind: WorkspaceEntryKind,
    /// Bytes; 0 for folders.
    pub size: i64,
    /// 1 for the walked folder's own entries.
    pub depth: i64,
}

impl From<crate::workspace::WalkEntry> for WorkspaceWalkEntry {
    fn from(e: crate::workspace::WalkEntry) -> Self {
        WorkspaceWalkEntry {
            path: e.path,
            relative: e.relative,
            name: e.name,
            kind: e.kind.into(),
            size: num(e.size),
            depth: num(e.depth as u64),
        }
    }
}
