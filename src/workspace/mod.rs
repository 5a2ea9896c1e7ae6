//! The workspace: an in-memory tree of files and folders with a recorded history, imported
//! from and exported to zip archives.
//!
//! The facade, which napi, exec and sessions use, is [`Workspace`] with the types its methods
//! take and give (re-exported below), the staged [`Overlay`] with its [`WriteQuota`], the path
//! rules ([`Access`], [`AccessRules`]), the error vocabulary ([`WsError`], [`WsCode`]) and
//! [`bounds`], the whole numbers the API accepts and its defaults.
//!
//! Inside, one file per job (crate-internal):
//! - `access`: the one place where paths are checked: normalization (`~/x`, `/x` and `x` are
//!   the same; no escapes; `.time` is hidden) and the pluggable read/write rules.
//! - `path`: helpers for normalized paths.
//! - `vfs`: the tree itself ([`Vfs`]).
//! - `overlay`: changes staged over a snapshot of the tree, with a write quota.
//! - `text`: line reading and patching, literal search, text diffs.
//! - `history`: undo, redo, restore and diffs.
//! - `batch`: several edits recorded as one history entry, all or nothing.
//! - `rename`: moving a file or folder as one entry.
//! - `walk`: a folder's contents in tree order, with paths relative to it.
//! - `zipio`: hardened import and deterministic export.
//! - `archive_file`: archives on the host file system (capped reads, atomic saves).
//! - `error`: the error type and its codes.
//!
//! [`Workspace`] ties the tree and its history together: every mutating call records one
//! history entry and returns its id. Every path it is given goes through its [`Access`].

pub(crate) mod access;
pub(crate) mod archive_file;
pub(crate) mod batch;
pub mod bounds;
pub(crate) mod changes;
pub(crate) mod error;
pub mod glob;
pub(crate) mod history;
pub mod line_match;
pub(crate) mod overlay;
pub(crate) mod path;
pub(crate) mod rename;
pub mod rules;
pub(crate) mod text;
pub(crate) mod vfs;
pub(crate) mod walk;
pub(crate) mod zipio;

use std::collections::BTreeSet;
use std::path::Path;

pub use access::{Access, AccessOp, AccessRules, AllowVisible, Refusal, Refused};
pub use batch::{BatchMark, MAX_BATCH_LABEL};
pub use changes::{ChangeKind, PathChange};
pub use error::{WsCode, WsError, WsResult};
pub use history::{HistoryConfig, HistoryEntry};
pub use overlay::{Overlay, OverlayError, Presence, WriteQuota};
pub use rules::{PathPattern, PathRules, PathRulesSpec};
pub use text::{KeepLines, LineSlice, PatchOutcome, Query, SearchMatch, SearchResult};
pub use vfs::{Clock, Content, Entry, EntryKind, Quota, Stat, Vfs};
pub use walk::WalkEntry;
pub use zipio::{pack, unpack, ZipLimits};

use batch::OpenBatch;
use history::{Change, HistoryState};
use path::display;

/// The form a workspace path is shown in, to people and models: `~/src/a.js` (the root is
/// `~/`). Takes every form the workspace takes (`~/a`, `/a`, `a`, with `.` and `..`); a path
/// the workspace refuses whatever its access rules (an escape, the hidden history area, a NUL
/// byte, too long or too deep) is `PATH_INVALID`.
pub fn display_path(input: &str) -> WsResult<String> {
    Ok(display(&access::normalize(input)?))
}

/// One staged operation of a batch applied by [`Workspace::apply_overlay`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StagedOp {
    /// Create or replace a file, creating missing parent folders.
    Write {
        /// Target path.
        path: String,
        /// New contents.
        data: Vec<u8>,
    },
    /// Create a folder and any missing parents (an existing folder is fine).
    Mkdir {
        /// Target path.
        path: String,
    },
    /// Delete a file or a folder with everything in it.
    Delete {
        /// Target path.
        path: String,
    },
}

/// How [`Workspace::export`] writes an archive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZipExport {
    /// Include the history (default true).
    pub history: bool,
    /// Deflate the entries (default true); stored entries are written several times faster.
    pub compress: bool,
}

impl Default for ZipExport {
    fn default() -> Self {
        ZipExport {
            history: true,
            compress: true,
        }
    }
}

/// A saved copy of a workspace, tree and history, for [`Workspace::restore_snapshot`].
#[derive(Debug, Clone)]
pub struct Snapshot {
    vfs: Vfs,
    history: HistoryState,
}

/// A tree of files with its history. Reads go straight to the tree; every successful
/// mutation that changes something records one history entry. Paths follow the workspace's
/// [`Access`] rules.
#[derive(Debug, Clone, Default)]
pub struct Workspace {
    vfs: Vfs,
    history: HistoryState,
    access: Access,
    /// The host's path rules as written, when [`Workspace::set_path_rules`] set some.
    path_rules: Option<PathRulesSpec>,
    /// The batch in progress, whose edits are recorded as one entry when it ends.
    batch: Option<OpenBatch>,
}

impl Workspace {
    /// An empty workspace with default quota, clock and history settings.
    pub fn new() -> Self {
        Workspace::default()
    }

    /// A workspace from an existing tree and history.
    pub(crate) fn from_parts(vfs: Vfs, history: HistoryState) -> Self {
        Workspace {
            vfs,
            history,
            access: Access::default(),
            path_rules: None,
            batch: None,
        }
    }

    /// Imports a workspace (and its history) from a zip archive.
    pub fn from_zip(bytes: &[u8], limits: &ZipLimits) -> WsResult<Self> {
        let (vfs, history) = zipio::from_zip(bytes, limits)?;
        Ok(Workspace::from_parts(vfs, history))
    }

    /// Exports the workspace and its history as a zip archive (deterministic bytes).
    pub fn to_zip(&self) -> Vec<u8> {
        self.export(ZipExport::default())
    }

    /// Exports as `how` says: with or without the history, deflated or stored (storing is
    /// several times faster; sessions' snapshots use it). Inside a batch, the history shows
    /// the batch as if it ended now.
    pub fn export(&self, how: ZipExport) -> Vec<u8> {
        let none = HistoryState::new();
        let with_batch = self.history_with_open_batch();
        let history = match (how.history, &with_batch) {
            (false, _) => &none,
            (true, Some(pending)) => pending,
            (true, None) => &self.history,
        };
        zipio::to_zip(&self.vfs, history, how.compress)
    }

    /// Reads a zip archive from the host file system (see [`archive_file::read_archive`]) and
    /// imports it.
    pub fn open(host_path: &Path, limits: &ZipLimits) -> WsResult<Self> {
        let bytes = archive_file::read_archive(host_path, limits)?;
        Self::from_zip(&bytes, limits)
    }

    /// Writes [`Workspace::to_zip`] to the host file system atomically.
    pub fn save(&self, host_path: &Path) -> WsResult<()> {
        archive_file::write_atomically(host_path, &self.to_zip())
    }

    /// The tree, read-only. Mutations go through the workspace so they are recorded.
    pub fn vfs(&self) -> &Vfs {
        &self.vfs
    }

    /// Replaces the clock used for modification and history times.
    pub fn set_clock(&mut self, clock: Clock) {
        self.vfs.set_clock(clock);
    }

    /// Changes the write quota.
    pub fn set_quota(&mut self, quota: Quota) {
        self.vfs.set_quota(quota);
    }

    /// Changes how much history is kept.
    pub fn set_history_config(&mut self, config: HistoryConfig) {
        self.history.set_config(config);
    }

    /// The path rules in force.
    pub fn access(&self) -> &Access {
        &self.access
    }

    /// Replaces the path rules: every later call, and every overlay staged afterwards, follows
    /// `access`.
    pub fn set_access(&mut self, access: Access) {
        self.access = access;
    }

    /// Restricts which paths may be read and written (`None`: no restriction): every later
    /// call, every overlay staged afterwards (workspace programs' `fs`, their module loader)
    /// and every tool built on the workspace follow them. Refusals are `POLICY_VIOLATION`.
    pub fn set_path_rules(&mut self, spec: Option<PathRulesSpec>) -> WsResult<()> {
        match spec {
            Some(spec) => {
                self.access = Access::new(PathRules::new(&spec)?);
                self.path_rules = Some(spec);
            }
            None => {
                self.access = Access::default();
                self.path_rules = None;
            }
        }
        Ok(())
    }

    /// Narrows the path rules in force by `spec`: every later call must pass both (a session's
    /// policy over a host's rules). [`Workspace::path_rules`] still reports the host's.
    pub fn narrow_path_rules(&mut self, spec: &PathRulesSpec) -> WsResult<()> {
        self.access = self.access.narrowed(PathRules::new(spec)?);
        Ok(())
    }

    /// The path rules set by [`Workspace::set_path_rules`].
    pub fn path_rules(&self) -> Option<&PathRulesSpec> {
        self.path_rules.as_ref()
    }

    /// A copy-on-write overlay over the tree as it is now, following the workspace's access
    /// rules, whose staged changes may write up to `quota`. Apply its
    /// [`Overlay::changes`] with [`Workspace::apply_overlay`].
    pub fn stage(&self, quota: WriteQuota) -> Overlay {
        Overlay::new(self.vfs.clone(), self.access.clone(), quota)
    }

    fn resolve(&self, op: AccessOp, path: &str) -> WsResult<String> {
        Ok(self.access.resolve(op, path)?)
    }

    // ----- reads -----

    /// See [`Vfs::read_file`].
    pub fn read_file(&self, path: &str) -> WsResult<&[u8]> {
        self.vfs.read_file(&self.resolve(AccessOp::Read, path)?)
    }

    /// A file's text; `NOT_TEXT` if it is not valid UTF-8.
    pub fn read_text(&self, path: &str) -> WsResult<String> {
        let p = self.resolve(AccessOp::Read, path)?;
        let data = self.vfs.read_file(&p)?;
        match std::str::from_utf8(data) {
            Ok(s) => Ok(s.to_string()),
            Err(e) => Err(WsError::not_text(format!(
                "{} is not UTF-8 text (invalid byte at offset {}); read it as bytes instead",
                display(&p),
                e.valid_up_to()
            ))),
        }
    }

    /// See [`Vfs::list`].
    pub fn list(&self, path: &str, recursive: bool) -> WsResult<Vec<Entry>> {
        let p = self.resolve(AccessOp::Traverse, path)?;
        if self.vfs.stat(&p).is_ok_and(|s| s.kind == EntryKind::File) {
            self.resolve(AccessOp::Read, path)?;
        }
        let mut entries = self.vfs.list(&p, recursive)?;
        entries.retain(|e| self.access.visible(&e.path, e.kind == EntryKind::Dir));
        Ok(entries)
    }

    /// The readable files matching a gitignore-style `pattern` ([`PathPattern`]), sorted.
    pub fn glob(&self, pattern: &str) -> WsResult<Vec<String>> {
        let pattern = PathPattern::new(pattern)?;
        Ok(self
            .vfs
            .contents()
            .filter(|(p, c)| matches!(c, Content::File(_)) && pattern.matches(p))
            .filter(|(p, _)| self.access.visible(p, false))
            .map(|(p, _)| p.to_string())
            .collect())
    }

    /// See [`Vfs::stat`]. A file must be readable, a folder listable.
    pub fn stat(&self, path: &str) -> WsResult<Stat> {
        let stat = self.vfs.stat(&self.resolve(AccessOp::Traverse, path)?)?;
        if stat.kind == EntryKind::File {
            self.resolve(AccessOp::Read, path)?;
        }
        Ok(stat)
    }

    /// Whether something exists at `path`. Paths the access rules refuse do not.
    pub fn exists(&self, path: &str) -> bool {
        self.stat(path).is_ok()
    }

    /// See [`Vfs::read_lines`].
    pub fn read_lines(
        &self,
        path: &str,
        start: usize,
        end: usize,
        max_bytes: usize,
        keep: KeepLines,
    ) -> WsResult<LineSlice> {
        self.vfs.read_lines(
            &self.resolve(AccessOp::Read, path)?,
            start,
            end,
            max_bytes,
            keep,
        )
    }

    /// See [`Vfs::search`].
    pub fn search(
        &self,
        query: &Query,
        path_prefix: &str,
        context_lines: usize,
        max_results: usize,
        max_bytes: usize,
    ) -> WsResult<SearchResult> {
        let p = self.resolve(AccessOp::Traverse, path_prefix)?;
        if self.vfs.stat(&p).is_ok_and(|s| s.kind == EntryKind::File) {
            self.resolve(AccessOp::Read, path_prefix)?;
        }
        self.vfs.search(
            query.as_str(),
            &p,
            context_lines,
            max_results,
            max_bytes,
            &|f| self.access.visible(f, false),
        )
    }

    // ----- recorded mutations -----

    /// Runs `op` on the tree and records the states of `keys` before and after it. Returns
    /// what `op` gave and the id of the history entry recorded (`None` if nothing changed).
    fn recorded<T>(
        &mut self,
        label: String,
        keys: Vec<String>,
        op: impl FnOnce(&mut Vfs) -> WsResult<T>,
    ) -> WsResult<(T, Option<u64>)> {
        let before: Vec<(String, Option<Content>)> = keys
            .into_iter()
            .map(|k| {
                let state = self.vfs.content(&k);
                (k, state)
            })
            .collect();
        let out = op(&mut self.vfs)?;
        if self.batch.is_some() {
            return Ok((out, None));
        }
        let changes = before
            .into_iter()
            .map(|(path, before)| Change {
                after: self.vfs.content(&path),
                path,
                before,
            })
            .collect();
        let id = self.history.record(changes, &label, self.vfs.now());
        Ok((out, id))
    }

    /// A path and its parent folders: everything a write or mkdir can change.
    fn with_ancestors(p: &str) -> Vec<String> {
        path::ancestors(p)
            .map(str::to_string)
            .chain(std::iter::once(p.to_string()))
            .collect()
    }

    /// Creates or replaces a file (see [`Vfs::write_file`]); recorded as `write <path>`.
    /// Returns the history entry id (`None` if the file already held these bytes).
    pub fn write_file(
        &mut self,
        path: &str,
        data: &[u8],
        create_parents: bool,
    ) -> WsResult<Option<u64>> {
        let p = self.resolve(AccessOp::Write, path)?;
        let keys = Self::with_ancestors(&p);
        let label = format!("write {}", display(&p));
        let ((), id) = self.recorded(label, keys, |v| v.write_file(&p, data, create_parents))?;
        Ok(id)
    }

    /// Creates a folder (see [`Vfs::mkdir`]); recorded as `mkdir <path>`. Returns the history
    /// entry id (`None` if the folder existed).
    pub fn mkdir(&mut self, path: &str, recursive: bool) -> WsResult<Option<u64>> {
        let p = self.resolve(AccessOp::Write, path)?;
        let keys = Self::with_ancestors(&p);
        let label = format!("mkdir {}", display(&p));
        let ((), id) = self.recorded(label, keys, |v| v.mkdir(&p, recursive))?;
        Ok(id)
    }

    /// Deletes a file or folder (see [`Vfs::delete`]); recorded as `delete <path>`. Returns
    /// the history entry id.
    pub fn delete(&mut self, path: &str, recursive: bool) -> WsResult<Option<u64>> {
        let p = self.resolve(AccessOp::Write, path)?;
        let keys = self.vfs.subtree_keys(&p);
        // Deleting a folder changes everything in it: each entry must be writable too.
        for key in &keys {
            self.resolve(AccessOp::Write, key)?;
        }
        let label = format!("delete {}", display(&p));
        let ((), id) = self.recorded(label, keys, |v| v.delete(&p, recursive))?;
        Ok(id)
    }

    /// Replaces a range of lines (see [`Vfs::patch_lines`]); recorded as
    /// `patch <path>:<start>-<end>`. Returns what changed and the history entry id (`None` if
    /// the file did not change).
    pub fn patch_lines(
        &mut self,
        path: &str,
        start: usize,
        end: usize,
        replacement: &str,
        expected: Option<&str>,
    ) -> WsResult<(PatchOutcome, Option<u64>)> {
        let p = self.resolve(AccessOp::Write, path)?;
        let label = format!("patch {}:{start}-{end}", display(&p));
        self.recorded(label, vec![p.clone()], |v| {
            v.patch_lines(&p, start, end, replacement, expected)
        })
    }

    /// Applies a batch of staged operations, in order, as one history entry labelled `op`.
    /// All or nothing: if any operation fails, the workspace is left unchanged and the
    /// error is returned. Returns the new entry's id (`None` if the batch changed nothing).
    pub fn apply_overlay(&mut self, ops: &[StagedOp], op: &str) -> WsResult<Option<u64>> {
        let mut work = self.vfs.clone();
        let mut keys: BTreeSet<String> = BTreeSet::new();
        for staged in ops {
            match staged {
                StagedOp::Write { path, data } => {
                    let p = self.resolve(AccessOp::Write, path)?;
                    keys.extend(Self::with_ancestors(&p));
                    work.write_file(&p, data, true)?;
                }
                StagedOp::Mkdir { path } => {
                    let p = self.resolve(AccessOp::Write, path)?;
                    keys.extend(Self::with_ancestors(&p));
                    work.mkdir(&p, true)?;
                }
                StagedOp::Delete { path } => {
                    let p = self.resolve(AccessOp::Write, path)?;
                    keys.extend(work.subtree_keys(&p));
                    work.delete(&p, true)?;
                }
            }
        }
        Ok(self.adopt(work, keys, op))
    }

    /// Makes `work` the tree, recording the paths in `keys` (their states before and after) as
    /// one history entry labelled `op`.
    fn adopt(&mut self, work: Vfs, keys: BTreeSet<String>, op: &str) -> Option<u64> {
        if self.batch.is_some() {
            self.vfs = work;
            return None;
        }
        let changes = keys
            .into_iter()
            .map(|p| Change {
                before: self.vfs.content(&p),
                after: work.content(&p),
                path: p,
            })
            .collect();
        self.vfs = work;
        self.history.record(changes, op, self.vfs.now())
    }

    // ----- history -----

    /// The newest `n` history entries, newest first.
    pub fn history(&self, n: usize) -> Vec<HistoryEntry> {
        self.history.entries(n)
    }

    /// The newest `n` history entries that changed `path`, newest first.
    pub fn history_of(&self, path: &str, n: usize) -> WsResult<Vec<HistoryEntry>> {
        let p = access::normalize(path)?;
        Ok(self.history.entries_touching(n, &p))
    }

    /// The bytes the file at `path` held right before history entry `id` (applied or undone)
    /// was made; `None` when no file was there (nothing, or a folder). The path must be
    /// readable. `HISTORY` for an unknown id or one whose contents were compacted away.
    pub fn file_before(&self, id: u64, path: &str) -> WsResult<Option<std::sync::Arc<[u8]>>> {
        let p = self.resolve(AccessOp::Read, path)?;
        Ok(match self.history.state_before(id, &p, &self.vfs)? {
            Some(Content::File(data)) => Some(data),
            Some(Content::Dir) | None => None,
        })
    }

    /// A unified diff of the text changes of entry `id`.
    pub fn diff(&self, id: u64) -> WsResult<String> {
        self.history.diff(id)
    }

    /// Undoes up to `n` entries; returns the ids undone, newest first.
    pub fn undo(&mut self, n: usize) -> WsResult<Vec<u64>> {
        self.refuse_in_batch("undo")?;
        self.history.undo(&mut self.vfs, n)
    }

    /// Redoes up to `n` undone entries; returns the ids redone, in order.
    pub fn redo(&mut self, n: usize) -> WsResult<Vec<u64>> {
        self.refuse_in_batch("redo")?;
        self.history.redo(&mut self.vfs, n)
    }

    /// Returns the tree to its state right after entry `id` and records that as a new
    /// entry (`restore #id`), whose id is returned.
    pub fn restore(&mut self, id: u64) -> WsResult<Option<u64>> {
        self.refuse_in_batch("restore")?;
        let now = self.vfs.now();
        self.history.restore(&mut self.vfs, id, now)
    }

    // ----- forks: sessions' working copies -----

    /// An independent copy of the tree (file bytes shared, not copied) with the same path rules,
    /// quota and clock, and an empty history with the same settings: a session's working copy,
    /// whose changes are read with [`Workspace::changes_since`] and applied elsewhere with
    /// [`Workspace::apply_changes`].
    pub fn fork(&self) -> Workspace {
        Workspace {
            vfs: self.vfs.clone(),
            history: HistoryState::with_config(self.history.config()),
            access: self.access.clone(),
            path_rules: self.path_rules.clone(),
            batch: None,
        }
    }

    /// Every path whose state differs from `origin` to this workspace, sorted by path.
    pub fn changes_since(&self, origin: &Workspace) -> Vec<PathChange> {
        changes::between(&origin.vfs, &self.vfs)
    }

    /// Gives each changed path its `after` state, as one history entry labelled `op` (`None`
    /// when nothing changed). The changes were checked by the access rules of the copy they
    /// were made in, so they are not checked again. Every path must still be as the change
    /// found it (or already as it leaves it): otherwise `CONFLICT`. Deletions remove whatever
    /// is now below the path; missing parent folders are created. All or nothing: a change
    /// that cannot land leaves the workspace as it was.
    pub fn apply_changes(&mut self, changes: &[PathChange], op: &str) -> WsResult<Option<u64>> {
        for change in changes {
            let now = self.vfs.content(&change.path);
            if now != change.before && now != change.after {
                return Err(WsError::new(
                    WsCode::Conflict,
                    format!(
                        "{} changed since these changes were made; nothing was applied",
                        display(&change.path)
                    ),
                ));
            }
        }
        let mut work = self.vfs.clone();
        let mut keys: BTreeSet<String> = BTreeSet::new();
        for change in changes.iter().rev().filter(|c| c.after.is_none()) {
            for key in work.subtree_keys(&change.path).into_iter().rev() {
                work.set_content(&key, None);
                keys.insert(key);
            }
        }
        for change in changes.iter().filter(|c| c.after.is_some()) {
            for parent in path::ancestors(&change.path) {
                match work.content(parent) {
                    Some(Content::Dir) => {}
                    Some(Content::File(_)) => {
                        return Err(WsError::not_a_directory(format!(
                            "cannot apply the change to {}: {} is now a file",
                            display(&change.path),
                            display(parent)
                        )))
                    }
                    None => {
                        work.set_content(parent, Some(Content::Dir));
                        keys.insert(parent.to_string());
                    }
                }
            }
            if matches!(change.after, Some(Content::File(_))) {
                for key in work.subtree_keys(&change.path).into_iter().rev() {
                    work.set_content(&key, None);
                }
            }
            work.set_content(&change.path, change.after.clone());
            keys.insert(change.path.clone());
        }
        let quota = work.quota();
        if work.total_bytes() > quota.max_total_bytes.max(self.vfs.total_bytes())
            || work.node_count() > quota.max_nodes.max(self.vfs.node_count())
        {
            return Err(WsError::new(
                WsCode::Quota,
                format!(
                    "applying the changes would exceed the workspace quota ({} bytes, {} entries)",
                    quota.max_total_bytes, quota.max_nodes
                ),
            ));
        }
        Ok(self.adopt(work, keys, op))
    }

    // ----- snapshots -----

    /// A copy of the whole workspace (file bytes are shared, not copied). Inside a batch,
    /// its history shows the batch as if it ended now.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            vfs: self.vfs.clone(),
            history: self
                .history_with_open_batch()
                .unwrap_or_else(|| self.history.clone()),
        }
    }

    /// Puts back a snapshot taken earlier, tree and history; a batch in progress ends
    /// without being recorded.
    pub fn restore_snapshot(&mut self, snapshot: Snapshot) {
        self.vfs = snapshot.vfs;
        self.history = snapshot.history;
        self.batch = None;
    }
}

#[cfg(test)]
mod primitives_tests;
#[cfg(test)]
mod tests;
