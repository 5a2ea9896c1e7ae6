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
//! - `zipio`: hardened import and deterministic export.
//! - `archive_file`: archives on the host file system (capped reads, atomic saves).
//! - `error`: the error type and its codes.
//!
//! [`Workspace`] ties the tree and its history together: every mutating call records one
//! history entry and returns its id. Every path it is given goes through its [`Access`].

pub(crate) mod access;
pub(crate) mod archive_file;
pub mod bounds;
pub(crate) mod changes;
pub(crate) mod error;
pub mod glob;
pub(crate) mod history;
pub mod line_match;
pub(crate) mod overlay;
pub(crate) mod path;
pub mod rules;
pub(crate) mod text;
pub(crate) mod vfs;
pub(crate) mod zipio;

use std::collections::BTreeSet;
use std::path::Path;

pub use access::{Access, AccessOp, AccessRules, AllowVisible, Refusal, Refused};
pub use changes::{ChangeKind, PathChange};
pub use error::{WsCode, WsError, WsResult};
pub use history::{HistoryConfig, HistoryEntry};
pub use overlay::{Overlay, OverlayError, Presence, WriteQuota};
pub use rules::{PathPattern, PathRules, PathRulesSpec};
pub use text::{KeepLines, LineSlice, PatchOutcome, Query, SearchMatch, SearchResult};
pub use vfs::{Clock, Content, Entry, EntryKind, Quota, Stat, Vfs};
pub use zipio::{pack, unpack, ZipLimits};

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
    /// several times faster; sessions' snapshots use it).
    pub fn export(&self, how: ZipExport) -> Vec<u8> {
        let none = HistoryState::new();
        let history = if how.history { &self.history } else { &none };
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

    /// A unified diff of the text changes of entry `id`.
    pub fn diff(&self, id: u64) -> WsResult<String> {
        self.history.diff(id)
    }

    /// Undoes up to `n` entries; returns the ids undone, newest first.
    pub fn undo(&mut self, n: usize) -> WsResult<Vec<u64>> {
        self.history.undo(&mut self.vfs, n)
    }

    /// Redoes up to `n` undone entries; returns the ids redone, in order.
    pub fn redo(&mut self, n: usize) -> WsResult<Vec<u64>> {
        self.history.redo(&mut self.vfs, n)
    }

    /// Returns the tree to its state right after entry `id` and records that as a new
    /// entry (`restore #id`), whose id is returned.
    pub fn restore(&mut self, id: u64) -> WsResult<Option<u64>> {
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

    /// A copy of the whole workspace (file bytes are shared, not copied).
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            vfs: self.vfs.clone(),
            history: self.history.clone(),
        }
    }

    /// Puts back a snapshot taken earlier, tree and history.
    pub fn restore_snapshot(&mut self, snapshot: Snapshot) {
        self.vfs = snapshot.vfs;
        self.history = snapshot.history;
    }
}

#[cfg(test)]
mod tests {
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
}
