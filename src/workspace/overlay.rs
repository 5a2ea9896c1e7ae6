//! A staged copy-on-write overlay over a snapshot of the workspace tree.
//!
//! Changes land in the overlay's own view of the tree; the snapshot it started from is kept,
//! and [`Overlay::changes`] gives the difference as [`StagedOp`]s that
//! [`super::Workspace::apply_overlay`] applies as one history entry. Nothing reaches the
//! workspace before that. A [`WriteQuota`] bounds what the staged changes may write, and every
//! path a caller names goes through the workspace's [`Access`] rules.
//!
//! The overlay stages changes; it does not decide which changes make sense. Its callers (the
//! sandbox `fs` shim, with Node's rules) check that a folder exists before writing into it,
//! that a rename does not move a folder into itself, and so on, and give paths already
//! resolved with [`Overlay::resolve`].

use std::collections::{BTreeMap, BTreeSet};

use super::access::{Access, AccessOp, Refusal};
use super::bounds::Bounds;
use super::error::{WsCode, WsError, WsResult};
use super::path;
use super::vfs::{Entry, EntryKind, Stat, Vfs};
use super::StagedOp;

/// How much the changes staged in one overlay may write. Counted over the overlay's whole life:
/// rewriting a file twice counts its bytes twice, but the path once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteQuota {
    /// Total bytes written (files written, appended to and copied).
    pub max_bytes: u64,
    /// Distinct files and folders created or changed.
    pub max_files: usize,
}

impl WriteQuota {
    /// Accepted values of `max_bytes`.
    pub const BYTES: Bounds = Bounds::at_least(0);
    /// Accepted values of `max_files`.
    pub const FILES: Bounds = Bounds::at_least(0);
}

impl Default for WriteQuota {
    fn default() -> Self {
        WriteQuota {
            max_bytes: 16 << 20,
            max_files: 1000,
        }
    }
}

/// What stands at a normalized path of the view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Presence {
    /// Nothing, and nothing in the way of creating it.
    Missing,
    /// A file stands where one of the parent folders should be.
    BlockedByFile,
    /// A file.
    File,
    /// A folder (the root always is one).
    Dir,
}

/// Why a staged change was refused; nothing changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OverlayError {
    /// The overlay's [`WriteQuota`] would be exceeded (code `QUOTA`).
    OverQuota(WsError),
    /// The tree refused the change (its own quota, or a path in the way).
    Tree(WsError),
}

impl From<OverlayError> for WsError {
    fn from(e: OverlayError) -> Self {
        match e {
            OverlayError::OverQuota(e) | OverlayError::Tree(e) => e,
        }
    }
}

type Staged<T> = Result<T, OverlayError>;

/// A snapshot of the tree, the changes staged over it, and what they have written.
#[derive(Debug, Clone)]
pub struct Overlay {
    base: Vfs,
    view: Vfs,
    access: Access,
    quota: WriteQuota,
    bytes_written: u64,
    touched: BTreeSet<String>,
}

impl Overlay {
    /// An overlay over `snapshot` whose paths follow `access` and whose changes stay within
    /// `quota`. The snapshot is kept to compute [`Overlay::changes`].
    pub fn new(snapshot: Vfs, access: Access, quota: WriteQuota) -> Self {
        Overlay {
            view: snapshot.clone(),
            base: snapshot,
            access,
            quota,
            bytes_written: 0,
            touched: BTreeSet::new(),
        }
    }

    /// Normalizes a caller's path and checks it for `op` (see [`Access::resolve`]).
    pub fn resolve(&self, op: AccessOp, input: &str) -> Result<String, Refusal> {
        self.access.resolve(op, input)
    }

    /// The path rules in force.
    pub fn access(&self) -> &Access {
        &self.access
    }

    /// The current view: the snapshot with the staged changes.
    pub fn view(&self) -> &Vfs {
        &self.view
    }

    /// Bytes the staged changes have written so far.
    pub fn bytes_written(&self) -> u64 {
        self.bytes_written
    }

    // ----- reads (normalized paths) -----

    /// What stands at `p`.
    pub fn presence(&self, p: &str) -> Presence {
        if p.is_empty() {
            return Presence::Dir;
        }
        match self.view.stat(p) {
            Ok(s) if s.kind == EntryKind::Dir => Presence::Dir,
            Ok(_) => Presence::File,
            Err(e) if e.code == WsCode::NotADirectory => Presence::BlockedByFile,
            Err(_) => Presence::Missing,
        }
    }

    /// A file's bytes.
    pub fn read(&self, p: &str) -> WsResult<&[u8]> {
        self.view.read_file(p)
    }

    /// Metadata of `p`.
    pub fn stat(&self, p: &str) -> WsResult<Stat> {
        self.view.stat(p)
    }

    /// The entries of folder `p`, sorted; with `recursive`, everything below it.
    pub fn list(&self, p: &str, recursive: bool) -> WsResult<Vec<Entry>> {
        let mut entries = self.view.list(p, recursive)?;
        entries.retain(|e| self.access.visible(&e.path, e.kind == EntryKind::Dir));
        Ok(entries)
    }

    // ----- staged changes (normalized paths) -----

    /// Refuses a change that would write `bytes` more bytes or change paths beyond the quota.
    fn charge(&self, paths: &[&str], bytes: u64) -> Staged<()> {
        if self.bytes_written.saturating_add(bytes) > self.quota.max_bytes {
            return Err(OverlayError::OverQuota(WsError::quota(format!(
                "this run may write at most {} bytes; it has written {}",
                self.quota.max_bytes, self.bytes_written
            ))));
        }
        let new = paths.iter().filter(|p| !self.touched.contains(**p)).count();
        if self.touched.len() + new > self.quota.max_files {
            return Err(OverlayError::OverQuota(WsError::quota(format!(
                "this run may create or change at most {} files and folders",
                self.quota.max_files
            ))));
        }
        Ok(())
    }

    fn record(&mut self, paths: &[&str], bytes: u64) {
        self.bytes_written = self.bytes_written.saturating_add(bytes);
        for p in paths {
            self.touched.insert((*p).to_string());
        }
    }

    /// Writes file `p` (appending to it with `append`); its folder must exist.
    pub fn write(&mut self, p: &str, data: &[u8], append: bool) -> Staged<()> {
        self.charge(&[p], data.len() as u64)?;
        let written = if append && self.presence(p) == Presence::File {
            let mut joined = self.view.read_file(p).map_err(OverlayError::Tree)?.to_vec();
            joined.extend_from_slice(data);
            self.view.write_file(p, &joined, false)
        } else {
            self.view.write_file(p, data, false)
        };
        written.map_err(OverlayError::Tree)?;
        self.record(&[p], data.len() as u64);
        Ok(())
    }

    /// Creates folder `p`; with `recursive` also its missing parents, and an existing folder is
    /// fine. Returns the folders created, shallowest first.
    pub fn mkdir(&mut self, p: &str, recursive: bool) -> Staged<Vec<String>> {
        let mut created: Vec<&str> = Vec::new();
        if recursive {
            created.extend(path::ancestors(p).filter(|a| self.presence(a) == Presence::Missing));
        }
        if self.presence(p) == Presence::Missing {
            created.push(p);
        }
        self.charge(&created, 0)?;
        self.view.mkdir(p, recursive).map_err(OverlayError::Tree)?;
        self.record(&created, 0);
        Ok(created.into_iter().map(str::to_string).collect())
    }

    /// Deletes `p`; a folder with entries needs `recursive`. Deleting is not charged.
    pub fn delete(&mut self, p: &str, recursive: bool) -> WsResult<()> {
        self.view.delete(p, recursive)
    }

    /// Moves `from` (a file, or a folder with everything in it) to `to`, replacing what stands
    /// there. The caller checks that the move makes sense (`to` is not inside `from`, ...).
    pub fn rename(&mut self, from: &str, to: &str) -> Staged<()> {
        let tree = OverlayError::Tree;
        // Everything that moves, shallowest first, as (path relative to `from`, is_dir).
        let mut moved: Vec<(String, bool)> =
            vec![(String::new(), self.presence(from) == Presence::Dir)];
        if self.presence(from) == Presence::Dir {
            let skip = if from.is_empty() { 0 } else { from.len() + 1 };
            let below = self.view.list(from, true).map_err(tree)?;
            moved.extend(
                below
                    .into_iter()
                    .map(|e| (e.path[skip..].to_string(), e.kind == EntryKind::Dir)),
            );
        }
        let below = |root: &str, rel: &str| {
            if rel.is_empty() {
                root.to_string()
            } else {
                format!("{root}/{rel}")
            }
        };
        let targets: Vec<String> = moved.iter().map(|(rel, _)| below(to, rel)).collect();
        let target_refs: Vec<&str> = targets.iter().map(String::as_str).collect();
        self.charge(&target_refs, 0)?;
        let mut work = self.view.clone();
        if self.presence(to) != Presence::Missing {
            work.delete(to, true).map_err(tree)?;
        }
        for ((rel, is_dir), target) in moved.iter().zip(&targets) {
            let done = if *is_dir {
                work.mkdir(target, false)
            } else {
                let data = self.view.read_file(&below(from, rel)).map_err(tree)?;
                work.write_file(target, data, false)
            };
            done.map_err(tree)?;
        }
        work.delete(from, true).map_err(tree)?;
        self.view = work;
        self.record(&target_refs, 0);
        Ok(())
    }

    /// Copies file `from` to `to` (replacing a file there); `to`'s folder must exist.
    pub fn copy_file(&mut self, from: &str, to: &str) -> Staged<()> {
        let data = self
            .view
            .read_file(from)
            .map_err(OverlayError::Tree)?
            .to_vec();
        self.charge(&[to], data.len() as u64)?;
        self.view
            .write_file(to, &data, false)
            .map_err(OverlayError::Tree)?;
        self.record(&[to], data.len() as u64);
        Ok(())
    }

    // ----- the result -----

    /// The staged changes as operations, smallest first: deletions (outermost paths only),
    /// then folders and files in path order. Applying them to the snapshot gives the view.
    pub fn changes(&self) -> Vec<StagedOp> {
        let listing = |v: &Vfs| -> BTreeMap<String, bool> {
            v.list("", true)
                .unwrap_or_default()
                .into_iter()
                .map(|e| (e.path, e.kind == EntryKind::Dir))
                .collect()
        };
        let before = listing(&self.base);
        let after = listing(&self.view);
        let mut deleted: BTreeSet<String> = BTreeSet::new();
        let mut ops = Vec::new();
        for (p, was_dir) in &before {
            let gone = match after.get(p) {
                None => true,
                Some(is_dir) => is_dir != was_dir,
            };
            if gone && !path::ancestors(p).any(|a| deleted.contains(a)) {
                deleted.insert(p.clone());
                ops.push(StagedOp::Delete { path: p.clone() });
            }
        }
        for (p, is_dir) in &after {
            let replaced = deleted.contains(p) || path::ancestors(p).any(|a| deleted.contains(a));
            let existed = !replaced && before.get(p) == Some(is_dir);
            if *is_dir {
                if !existed {
                    ops.push(StagedOp::Mkdir { path: p.clone() });
                }
                continue;
            }
            let Ok(now) = self.view.read_file(p) else {
                continue;
            };
            let same = existed
                && self.base.read_file(p).is_ok_and(|old| {
                    (old.as_ptr() == now.as_ptr() && old.len() == now.len()) || old == now
                });
            if !same {
                ops.push(StagedOp::Write {
                    path: p.clone(),
                    data: now.to_vec(),
                });
            }
        }
        ops
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::access::testing::Policy;
    use crate::workspace::access::Refused;
    use crate::workspace::Workspace;

    fn workspace() -> WsResult<Workspace> {
        let mut w = Workspace::new();
        w.set_clock(|| 1_000);
        w.write_file("src/a.txt", b"alpha", true)?;
        w.write_file("keep.txt", b"k", false)?;
        w.mkdir("empty", false)?;
        Ok(w)
    }

    fn overlay(quota: WriteQuota) -> WsResult<Overlay> {
        Ok(workspace()?.stage(quota))
    }

    fn over_quota<T: std::fmt::Debug>(r: Staged<T>) -> String {
        match r {
            Err(OverlayError::OverQuota(e)) => {
                assert_eq!(e.code, WsCode::Quota);
                e.message
            }
            other => panic!("expected the quota to refuse, got {other:?}"),
        }
    }

    #[test]
    fn presence_of_paths() -> WsResult<()> {
        let o = overlay(WriteQuota::default())?;
        assert_eq!(o.presence(""), Presence::Dir);
        assert_eq!(o.presence("src"), Presence::Dir);
        assert_eq!(o.presence("src/a.txt"), Presence::File);
        assert_eq!(o.presence("nope"), Presence::Missing);
        assert_eq!(o.presence("keep.txt/x"), Presence::BlockedByFile);
        Ok(())
    }

    #[test]
    fn staged_changes_stay_in_the_view() -> WsResult<()> {
        let w = workspace()?;
        let mut o = w.stage(WriteQuota::default());
        o.write("keep.txt", b"!", true)?;
        assert_eq!(o.mkdir("n/m", true)?, vec!["n", "n/m"]);
        assert_eq!(o.mkdir("n/m", true)?, Vec::<String>::new());
        o.copy_file("src/a.txt", "n/m/a.txt")?;
        o.rename("src", "moved")?;
        o.delete("empty", false)?;
        assert_eq!(o.read("keep.txt")?, b"k!");
        assert_eq!(o.read("moved/a.txt")?, b"alpha");
        assert_eq!(o.read("n/m/a.txt")?, b"alpha");
        assert_eq!(o.presence("src"), Presence::Missing);
        assert_eq!(o.bytes_written(), 1 + 5);
        assert_eq!(w.read_file("keep.txt")?, b"k", "the workspace is untouched");
        assert!(w.exists("src") && w.exists("empty"));
        Ok(())
    }

    #[test]
    fn the_quota_counts_bytes_and_paths() -> WsResult<()> {
        let quota = WriteQuota {
            max_bytes: 10,
            max_files: 3,
        };
        let mut o = Overlay::new(Vfs::new(), Access::default(), quota);
        o.write("a", b"12345", false)?;
        o.write("a", b"12345", false)?;
        let message = over_quota(o.write("a", b"1", false));
        assert!(message.contains("at most 10 bytes"), "{message}");
        let mut o = Overlay::new(
            Vfs::new(),
            Access::default(),
            WriteQuota {
                max_bytes: 100,
                max_files: 3,
            },
        );
        o.mkdir("d/e", true)?;
        o.write("d/f", b"", false)?;
        let message = over_quota(o.write("d/g", b"", false));
        assert!(message.contains("at most 3 files"), "{message}");
        o.write("d/f", b"again", false)?;
        assert_eq!(o.read("d/f")?, b"again");
        over_quota(o.rename("d", "x"));
        assert_eq!(
            o.presence("d/e"),
            Presence::Dir,
            "a refused move changes nothing"
        );
        Ok(())
    }

    #[test]
    fn tree_refusals_are_not_quota_refusals() -> WsResult<()> {
        let mut o = overlay(WriteQuota::default())?;
        match o.write("missing/x.txt", b"x", false) {
            Err(OverlayError::Tree(e)) => assert_eq!(e.code, WsCode::NotFound),
            other => panic!("{other:?}"),
        }
        match o.mkdir("keep.txt", false) {
            Err(OverlayError::Tree(e)) => assert_eq!(e.code, WsCode::Exists),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            WsError::from(OverlayError::Tree(WsError::not_found("x"))).code,
            WsCode::NotFound
        );
        Ok(())
    }

    #[test]
    fn changes_replay_onto_the_snapshot() -> WsResult<()> {
        let mut w = Workspace::new();
        w.set_clock(|| 1_000);
        w.write_file("a/x.txt", b"x", true)?;
        w.write_file("a-b.txt", b"ab", false)?;
        w.write_file("same.txt", b"s", false)?;
        w.write_file("d/sub/deep.txt", b"d", true)?;
        let mut o = w.stage(WriteQuota::default());
        o.delete("a", true)?;
        o.write("a", b"now a file", false)?;
        o.delete("a-b.txt", false)?;
        o.write("same.txt", b"s", false)?;
        o.delete("d", true)?;
        o.mkdir("n/m", true)?;
        o.write("n/m/f.txt", b"f", false)?;
        let ops = o.changes();
        assert_eq!(
            ops,
            vec![
                StagedOp::Delete { path: "a".into() },
                StagedOp::Delete {
                    path: "a-b.txt".into()
                },
                StagedOp::Delete { path: "d".into() },
                StagedOp::Write {
                    path: "a".into(),
                    data: b"now a file".to_vec()
                },
                StagedOp::Mkdir { path: "n".into() },
                StagedOp::Mkdir { path: "n/m".into() },
                StagedOp::Write {
                    path: "n/m/f.txt".into(),
                    data: b"f".to_vec()
                },
            ]
        );
        w.apply_overlay(&ops, "exec")?;
        assert_eq!(w.vfs(), o.view());
        Ok(())
    }

    #[test]
    fn paths_follow_the_workspace_access_rules() -> WsResult<()> {
        let mut w = workspace()?;
        let o = w.stage(WriteQuota::default());
        assert_eq!(o.resolve(AccessOp::Write, "~/src/./b.txt")?, "src/b.txt");
        w.write_file("ro/a.txt", b"a", true)?;
        w.set_access(Access::new(Policy));
        let o = w.stage(WriteQuota::default());
        assert_eq!(o.resolve(AccessOp::Read, "/ro/a.txt")?, "ro/a.txt");
        let refused = o.resolve(AccessOp::Write, "ro/a.txt").err().map(|r| r.why);
        assert_eq!(refused, Some(Refused::Denied));
        Ok(())
    }
}
