//! `ZipWorkspace`: the in-memory workspace exposed to JavaScript.
//!
//! Conversion only: arguments are checked for their JavaScript type and converted (`args`),
//! the workspace ([`crate::workspace::Workspace`]) or exec ([`crate::exec`]) layer does the
//! work and applies the rules, and results come back as generated objects (`results`:
//! `#[napi(object)]` structs, which `binding.d.ts` describes). Every failure is thrown as a
//! JavaScript `Error` whose `code` property holds a [`WsCode`]; `INVALID_INPUT` is thrown as a
//! `TypeError`, which is also an `Error`.
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

use super::raw::{Host, RawValue};
use super::throw;
use crate::engine::{workers, Extension, Mode};
use crate::exec::{lock_workspace, run_exec, workspace_extension, SharedWorkspace};
use crate::workspace::bounds::{self, to_usize};
use crate::workspace::{
    KeepLines, PathChange, Query, Workspace, WsCode, WsError, WsResult, ZipExport,
};

mod args;
mod results;

use crate::napi::raw::Raw;
use crate::workspace::bounds::Bounds;
use args::{
    access_rules, boolean, bytes, contents, exec_request, field, given, integer, integer_or,
    invalid, options as read_options, recursive, string, zip_limits, HistoryOptions, PatchOptions,
    ReadLinesOptions, RenameOptions, ToZipOptions, WalkOptions, WorkspaceSearchOptions,
};
use results::{num, nums};
use results::{
    ExecResult, WorkspaceAccessRules, WorkspaceChange, WorkspaceEntry, WorkspaceHistoryEntry,
    WorkspaceLineRange, WorkspacePatchResult, WorkspaceSearchResult, WorkspaceStat,
    WorkspaceWalkEntry,
};

pub(crate) type Res<T> = std::result::Result<T, WsError>;

/// Runs `body` and throws its failure, if any.
pub(crate) fn run<T>(env: Env, body: impl FnOnce(Host) -> Res<T>) -> Result<T> {
    body(Host::of(&env)).map_err(|e| throw(&env, e))
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
        ts_args_type = "bytes: Uint8Array | ArrayBuffer, limits?: ZipLimits | null"
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
        ts_args_type = "hostPath: string, limits?: ZipLimits | null"
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

    /// The form a workspace path is shown in, to people and models: `~/src/a.js` (the root is
    /// `~/`). Takes every form the other methods take (`~/a`, `/a`, `a`, with `.` and `..`); a
    /// path none of them accepts throws `PATH_INVALID`.
    #[napi(js_name = "displayPath", catch_unwind, ts_args_type = "path: string")]
    pub fn display_path(env: Env, path: Unknown) -> Result<String> {
        run(env, |h| {
            let path = string(h, path.raw(), "path")?;
            crate::workspace::display_path(&path)
        })
    }

    /// Frees the workspace's files and history (the JavaScript layer refuses every later call).
    #[napi(js_name = "releaseMemory", catch_unwind)]
    pub fn release_memory(&self) {
        *self.ws() = Workspace::new();
    }

    /// Exports the workspace and its history as zip bytes (the same workspace always gives the
    /// same bytes); `{ history: false }` leaves the history out, `{ compress: false }` stores the
    /// entries instead of deflating them.
    #[napi(
        js_name = "toZip",
        catch_unwind,
        ts_args_type = "options?: ToZipOptions | null"
    )]
    pub fn to_zip(&self, env: Env, options: Option<Unknown>) -> Result<Buffer> {
        run(env, |h| {
            let o: ToZipOptions = read_options(h, options.as_ref(), "options")?;
            let flag = |key: &str, v: Option<Raw>| -> Res<bool> {
                Ok(field("options", key, v, |v, l| boolean(h, v, l))?.unwrap_or(true))
            };
            let how = ZipExport {
                history: flag("history", o.history)?,
                compress: flag("compress", o.compress)?,
            };
            Ok(self.ws().export(how).into())
        })
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
        ts_args_type = "path: string, data: string | Uint8Array | ArrayBuffer"
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
        ts_args_type = "path: string, options?: RecursiveOptions | null"
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
        ts_args_type = "path: string, options?: RecursiveOptions | null"
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
        ts_args_type = "path?: string | null, options?: RecursiveOptions | null"
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
    /// to the last line and is clamped to it. `options.maxBytes` caps the line text returned
    /// (each line counts one more byte for its separator): whole lines past it are left out,
    /// at the end of the window or, with `keep: 'last'`, at its start; a single line over it
    /// comes back as its first bytes (`lineCut`). `truncated` tells whether anything was left
    /// out. Only the lines returned are copied out of the file.
    #[napi(
        js_name = "readLines",
        catch_unwind,
        ts_args_type = "path: string, start?: number | null, end?: number | null, options?: ReadLinesOptions | null"
    )]
    pub fn read_lines(
        &self,
        env: Env,
        path: Unknown,
        start: Option<Unknown>,
        end: Option<Unknown>,
        options: Option<Unknown>,
    ) -> Result<WorkspaceLineRange> {
        run(env, |h| {
            let path = string(h, path.raw(), "path")?;
            let start = integer_or(h, start.as_ref(), "start", bounds::ANY, 1)?;
            let end = integer_or(h, end.as_ref(), "end", bounds::ANY, bounds::MAX_EXACT)?;
            let o: ReadLinesOptions = read_options(h, options.as_ref(), "options")?;
            let max_bytes = field("options", "maxBytes", o.max_bytes, |v, l| {
                integer(h, v, l, bounds::ANY)
            })?
            .map_or(usize::MAX, to_usize);
            let keep = field("options", "keep", o.keep, |v, l| string(h, v, l))?;
            let keep = match keep.as_deref() {
                None | Some("first") => KeepLines::First,
                Some("last") => KeepLines::Last,
                Some(other) => {
                    return Err(invalid(format!(
                        "options.keep must be 'first' or 'last', got '{}'",
                        other.chars().take(40).collect::<String>()
                    )))
                }
            };
            let lines =
                self.ws()
                    .read_lines(&path, to_usize(start), to_usize(end), max_bytes, keep)?;
            Ok(lines.into())
        })
    }

    /// Replaces lines `start..=end` (1-based, inclusive) with `replacement`; `end = start - 1`
    /// inserts before `start`. With `expected`, the current text of the range must match it or
    /// `CONFLICT` is thrown and nothing changes.
    #[napi(
        js_name = "patchLines",
        catch_unwind,
        ts_args_type = "path: string, start: number, end: number, replacement: string, options?: PatchOptions | null"
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
            let o: PatchOptions = read_options(h, options.as_ref(), "options")?;
            let expected = field("options", "expected", o.expected, |v, l| string(h, v, l))?;
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
    /// at most `maxResults` hits (default 100) and `maxBytes` of answer (default 1 MiB);
    /// `truncated` tells whether the answer was cut.
    #[napi(
        catch_unwind,
        ts_args_type = "query: string, options?: WorkspaceSearchOptions | null"
    )]
    pub fn search(
        &self,
        env: Env,
        query: Unknown,
        options: Option<Unknown>,
    ) -> Result<WorkspaceSearchResult> {
        run(env, |h| {
            let query = Query::new(string(h, query.raw(), "query")?)?;
            let o: WorkspaceSearchOptions = read_options(h, options.as_ref(), "options")?;
            let int = |key: &str, v: Option<Raw>, b: Bounds| {
                field("options", key, v, |v, l| integer(h, v, l, b))
            };
            let path = field("options", "path", o.path, |v, l| string(h, v, l))?;
            let path = path.unwrap_or_else(|| "~".into());
            let context = int("context", o.context, bounds::SEARCH_CONTEXT)?.unwrap_or(0);
            let max = int("maxResults", o.max_results, bounds::SEARCH_RESULTS)?
                .unwrap_or(bounds::DEFAULT_SEARCH_RESULTS);
            let max_bytes = int("maxBytes", o.max_bytes, bounds::SEARCH_BYTES)?
                .unwrap_or(bounds::DEFAULT_SEARCH_BYTES);
            let found = self.ws().search(
                &query,
                &path,
                to_usize(context),
                to_usize(max),
                to_usize(max_bytes),
            )?;
            Ok(found.into())
        })
    }

    /// Restricts which paths may be read and written, for every method, every tool built on
    /// the workspace and every program `exec` runs; `null` lifts the rules. Refusals throw
    /// `POLICY_VIOLATION`.
    #[napi(catch_unwind, ts_args_type = "rules: WorkspaceAccessRules | null")]
    pub fn set_access_rules(&self, env: Env, rules: Option<Unknown>) -> Result<()> {
        run(env, |h| {
            let spec = access_rules(h, rules.as_ref())?;
            self.ws().set_path_rules(spec)
        })
    }

    /// The rules set by `setAccessRules`, or `null`.
    /// Narrows the rules in force: every later call must pass them and the rules already set
    /// (a session's policy over the host's rules). `accessRules()` still reports the latter.
    #[napi(
        js_name = "narrowAccessRules",
        catch_unwind,
        ts_args_type = "rules: NativeAccessRules"
    )]
    pub fn narrow_access_rules(&self, env: Env, rules: Unknown) -> Result<()> {
        run(env, |h| match access_rules(h, Some(&rules))? {
            Some(spec) => self.ws().narrow_path_rules(&spec),
            None => Err(WsError::new(
                WsCode::InvalidInput,
                "narrowAccessRules(rules): rules must be an object",
            )),
        })
    }

    #[napi(catch_unwind)]
    pub fn access_rules(&self) -> Option<WorkspaceAccessRules> {
        self.ws().path_rules().map(|s| WorkspaceAccessRules {
            read_patterns: s.read_patterns.clone(),
            write_patterns: s.write_patterns.clone(),
            read_only: s.read_only,
        })
    }

    /// The newest `n` history entries (default 20), newest first; with `options.path`, only
    /// the entries that changed that path.
    #[napi(
        catch_unwind,
        ts_args_type = "n?: number | null, options?: HistoryOptions | null"
    )]
    pub fn history(
        &self,
        env: Env,
        n: Option<Unknown>,
        options: Option<Unknown>,
    ) -> Result<Vec<WorkspaceHistoryEntry>> {
        run(env, |h| {
            let n = to_usize(integer_or(
                h,
                n.as_ref(),
                "n",
                bounds::ANY,
                bounds::DEFAULT_HISTORY,
            )?);
            let o: HistoryOptions = read_options(h, options.as_ref(), "options")?;
            let path = field("options", "path", o.path, |v, l| string(h, v, l))?;
            let entries = match path {
                Some(path) => self.ws().history_of(&path, n)?,
                None => self.ws().history(n),
            };
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

#[napi]
impl ZipWorkspace {
    /// The readable files matching a gitignore-style glob (`**/*.js`, `*.md` at any depth,
    /// `/docs/*` at the root only), sorted.
    #[napi(catch_unwind, ts_args_type = "pattern: string")]
    pub fn glob(&self, env: Env, pattern: Unknown) -> Result<Vec<String>> {
        run(env, |h| {
            let pattern = string(h, pattern.raw(), "pattern")?;
            self.ws().glob(&pattern)
        })
    }

    /// An independent copy (file bytes shared until written) with the same access rules and an
    /// empty history: a session's working copy.
    #[napi(catch_unwind)]
    pub fn fork(&self) -> ZipWorkspace {
        ZipWorkspace::from_workspace(self.ws().fork())
    }

    /// What differs from `origin` to this workspace, sorted by path: files and folders created,
    /// modified or deleted, with the bytes before and after and, for text files, a unified diff
    /// (cut at `diffLimit` bytes, default 64 KiB).
    #[napi(
        js_name = "changesSince",
        catch_unwind,
        ts_args_type = "origin: ZipWorkspace, diffLimit?: number | null"
    )]
    pub fn changes_since(
        &self,
        env: Env,
        origin: &ZipWorkspace,
        diff_limit: Option<Unknown>,
    ) -> Result<Vec<WorkspaceChange>> {
        run(env, |h| {
            let limit = integer_or(h, diff_limit.as_ref(), "diffLimit", bounds::ANY, 64 * 1024)?;
            Ok(changes_between(self, origin)
                .iter()
                .map(|c| WorkspaceChange::of(c, to_usize(limit)))
                .collect())
        })
    }

    /// Applies what changed from `origin` to `fork` as one history entry labelled `label`;
    /// `CONFLICT` (and nothing applied) if one of those paths changed here meanwhile. Returns
    /// the entry's id, `null` when there was nothing to apply.
    #[napi(
        js_name = "applyChangesOf",
        catch_unwind,
        ts_args_type = "fork: ZipWorkspace, origin: ZipWorkspace, label: string"
    )]
    pub fn apply_changes_of(
        &self,
        env: Env,
        fork: &ZipWorkspace,
        origin: &ZipWorkspace,
        label: Unknown,
    ) -> Result<Option<i64>> {
        run(env, |h| {
            let label = string(h, label.raw(), "label")?;
            let changes = changes_between(fork, origin);
            Ok(self.ws().apply_changes(&changes, &label)?.map(num))
        })
    }
}

/// What changed from `origin` to `fork` (nothing when they are the same object).
fn changes_between(fork: &ZipWorkspace, origin: &ZipWorkspace) -> Vec<PathChange> {
    if Arc::ptr_eq(&fork.inner, &origin.inner) {
        return Vec::new();
    }
    let origin = origin.ws().fork();
    fork.ws().changes_since(&origin)
}

impl Default for ZipWorkspace {
    fn default() -> Self {
        Self::new()
    }
}

impl ZipWorkspace {
    pub(crate) fn from_workspace(inner: Workspace) -> Self {
        ZipWorkspace {
            inner: Arc::new(Mutex::new(inner)),
        }
    }

    /// The workspace, locked for the duration of the guard.
    pub(crate) fn ws(&self) -> MutexGuard<'_, Workspace> {
        lock_workspace(&self.inner)
    }

    /// The shared workspace, for natives that work on it while JavaScript holds this object
    /// (a session turn's `world`).
    pub(crate) fn shared(&self) -> SharedWorkspace {
        self.inner.clone()
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
        ts_args_type = "entryPath: string, options?: ExecOptions | null, cancel?: CancelHandle | null",
        ts_return_type = "Promise<Executed>"
    )]
    pub fn exec<'env>(
        &self,
        env: &'env Env,
        entry_path: Unknown,
        options: Option<Unknown>,
        cancel: Option<&crate::napi::CancelHandle>,
    ) -> Result<Object<'env>> {
        let token = crate::napi::token_of(cancel);
        let env_value = *env;
        let req = run(env_value, |h| {
            exec_request(h, entry_path.raw(), options.as_ref())
        })?;
        let overlay = self.ws().stage(req.quota);
        let shared = self.inner.clone();
        let (deferred, promise) = env.create_deferred()?;
        let job = move || {
            let outcome = run_exec(&req, overlay, &token);
            deferred.resolve(move |_env: Env| Ok(ExecResult::from(outcome.settle(&shared))));
        };
        match workers::global() {
            Some(pool) if pool.submit(Box::new(job)) => Ok(promise),
            _ => Err(throw(
                &env_value,
                WsError::internal("the worker pool is not accepting work"),
            )),
        }
    }
}

#[napi]
impl ZipWorkspace {
    /// Runs `edits(handle)` as one history entry labelled `label`, all or nothing: if `edits`
    /// throws, the workspace and its history are put back as they were and the error is
    /// rethrown. `handle` is a second `ZipWorkspace` object over the same files, through which
    /// the edits are made (the workspace's own mutating methods are refused while its batch
    /// runs). Inside, mutating methods return `null` (the entry is recorded when the batch
    /// ends), and `undo`, `redo` and `restore` throw `HISTORY`; a batch inside a batch joins it.
    /// Returns the entry's id, `null` when the edits changed nothing. `edits` must finish
    /// synchronously: one that returns a promise is refused with `INVALID_INPUT` and its edits
    /// are taken back.
    #[napi(
        catch_unwind,
        ts_args_type = "label: string, edits: (ws: ZipWorkspace) => void",
        ts_return_type = "number | null"
    )]
    pub fn batch(&self, env: Env, label: Unknown, edits: Unknown) -> Result<Option<i64>> {
        let (shared, mark) = run(env, |h| {
            let label = string(h, label.raw(), "label")?;
            if ValueType::from(h.type_of(edits.raw())) != ValueType::Function {
                return Err(invalid(format!(
                    "edits must be a function, got {}",
                    h.describe_type(edits.raw())
                )));
            }
            Ok((self.inner.clone(), self.ws().begin_batch(&label)?))
        })?;
        // The edits go through a second object over the same workspace: this one is borrowed
        // while its `batch` runs. The workspace is not locked meanwhile; each call locks it.
        let handle = ZipWorkspace {
            inner: shared.clone(),
        }
        .into_instance(&env);
        let host = Host::of(&env).crossing();
        let called = match handle {
            Ok(handle) => host.call(handle.value, edits.raw(), &[handle.value]),
            Err(e) => Err(e.reason.clone()),
        };
        let keep = matches!(called, Ok(value) if !host.is_promise(value));
        let id = lock_workspace(&shared).end_batch(mark, keep);
        match called {
            Ok(_) if keep => Ok(id.map(num)),
            Ok(_) => Err(throw(
                &env,
                invalid(
                    "batch(label, edits): edits returned a promise; a batch must finish \
                     synchronously, so its edits were taken back",
                ),
            )),
            Err(why) => match host.take_thrown() {
                Some(thrown) => {
                    env.throw(RawValue(thrown))?;
                    Err(Error::new(
                        Status::PendingException,
                        "the batch's edits threw",
                    ))
                }
                None => Err(throw(&env, WsError::internal(why))),
            },
        }
    }

    /// Moves a file, or a folder with everything in it, creating missing parent folders, as
    /// one history entry (`rename ~/a -> ~/b`). An existing destination is `EXISTS` unless
    /// `options.overwrite`, which replaces it (a folder with everything in it). Both paths
    /// follow the access rules. Returns the entry's id, `null` when both name the same path.
    #[napi(
        catch_unwind,
        ts_args_type = "from: string, to: string, options?: RenameOptions | null"
    )]
    pub fn rename(
        &self,
        env: Env,
        from: Unknown,
        to: Unknown,
        options: Option<Unknown>,
    ) -> Result<Option<i64>> {
        run(env, |h| {
            let from = string(h, from.raw(), "from")?;
            let to = string(h, to.raw(), "to")?;
            let o: RenameOptions = read_options(h, options.as_ref(), "options")?;
            let overwrite = field("options", "overwrite", o.overwrite, |v, l| boolean(h, v, l))?
                .unwrap_or(false);
            Ok(self.ws().rename(&from, &to, overwrite)?.map(num))
        })
    }

    /// The bytes the file at `path` held right before history entry `id` (applied or undone)
    /// was made; `null` when no file was there. `HISTORY` for an unknown id or one whose
    /// contents were compacted away.
    #[napi(
        js_name = "fileBefore",
        catch_unwind,
        ts_args_type = "id: number, path: string"
    )]
    pub fn file_before(&self, env: Env, id: Unknown, path: Unknown) -> Result<Option<Buffer>> {
        run(env, |h| {
            let id = integer(h, id.raw(), "id", bounds::ANY)?;
            let path = string(h, path.raw(), "path")?;
            Ok(self.ws().file_before(id, &path)?.map(|b| b.to_vec().into()))
        })
    }

    /// Everything below a folder, in tree order (depth first, names sorted, each folder right
    /// before its contents), at most `options.maxDepth` levels deep; each entry carries its
    /// path relative to the folder.
    #[napi(
        catch_unwind,
        ts_args_type = "path: string, options?: WalkOptions | null"
    )]
    pub fn walk(
        &self,
        env: Env,
        path: Unknown,
        options: Option<Unknown>,
    ) -> Result<Vec<WorkspaceWalkEntry>> {
        run(env, |h| {
            let path = string(h, path.raw(), "path")?;
            let o: WalkOptions = read_options(h, options.as_ref(), "options")?;
            let max_depth = field("options", "maxDepth", o.max_depth, |v, l| {
                integer(h, v, l, bounds::STEPS)
            })?
            .map_or(usize::MAX, to_usize);
            let entries = self.ws().walk(&path, max_depth)?;
            Ok(entries.into_iter().map(Into::into).collect())
        })
    }
}
