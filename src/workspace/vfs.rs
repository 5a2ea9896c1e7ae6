//! The in-memory file tree.
//!
//! Files hold bytes, directories hold nothing but their existence; both are keyed by their
//! normalized path (see [`super::path`]). The root always exists and is not stored. File
//! contents are shared (`Arc<[u8]>`), so cloning a [`Vfs`] for a snapshot copies the tree
//! structure but not the bytes.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use super::access;
use super::error::{WsError, WsResult};
use super::path::{self, display};
use super::text::{self, KeepLines, LineSlice, PatchOutcome, SearchResult};

/// Source of modification times, in milliseconds since the Unix epoch.
pub type Clock = fn() -> u64;

/// The wall clock, in milliseconds since the Unix epoch.
pub fn system_clock() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// Whether an entry is a file or a directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
}

impl EntryKind {
    /// `"file"` or `"dir"`.
    pub fn as_str(self) -> &'static str {
        match self {
            EntryKind::File => "file",
            EntryKind::Dir => "dir",
        }
    }
}

/// One item of a listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Normalized path (`a/b.txt`).
    pub path: String,
    /// File or directory.
    pub kind: EntryKind,
    /// Size in bytes (0 for directories).
    pub size: u64,
}

/// Metadata of one path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stat {
    /// Normalized path (`""` for the root).
    pub path: String,
    /// File or directory.
    pub kind: EntryKind,
    /// Size in bytes (0 for directories).
    pub size: u64,
    /// Last modification, in milliseconds since the Unix epoch (0 for the root).
    pub mtime: u64,
}

/// The state of one path, as history records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    /// A directory.
    Dir,
    /// A file and its bytes.
    File(Arc<[u8]>),
}

impl Content {
    /// Bytes this state occupies (0 for a directory).
    pub fn size(&self) -> u64 {
        match self {
            Content::Dir => 0,
            Content::File(data) => data.len() as u64,
        }
    }
}

/// Size limits enforced on writes.
///
/// A write that would grow the workspace past a limit fails with `QUOTA`; writes that do
/// not grow it still succeed, so an over-full workspace can always be cleaned up. The
/// defaults keep an exported workspace, with its history, inside the default import
/// limits of [`super::zipio::ZipLimits`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quota {
    /// Largest single file, in bytes.
    pub max_file_bytes: u64,
    /// Largest sum of all file sizes, in bytes.
    pub max_total_bytes: u64,
    /// Most files and directories together.
    pub max_nodes: usize,
}

impl Default for Quota {
    fn default() -> Self {
        Quota {
            max_file_bytes: 64 * 1024 * 1024,
            max_total_bytes: 128 * 1024 * 1024,
            max_nodes: 9_000,
        }
    }
}

#[derive(Debug, Clone)]
enum Node {
    Dir { mtime: u64 },
    File { data: Arc<[u8]>, mtime: u64 },
}

impl Node {
    fn kind(&self) -> EntryKind {
        match self {
            Node::Dir { .. } => EntryKind::Dir,
            Node::File { .. } => EntryKind::File,
        }
    }

    fn size(&self) -> u64 {
        match self {
            Node::Dir { .. } => 0,
            Node::File { data, .. } => data.len() as u64,
        }
    }
}

/// An in-memory tree of files and directories.
#[derive(Debug, Clone)]
pub struct Vfs {
    nodes: BTreeMap<String, Node>,
    total_bytes: u64,
    quota: Quota,
    clock: Clock,
}

impl Default for Vfs {
    fn default() -> Self {
        Vfs::new()
    }
}

impl PartialEq for Vfs {
    /// Two trees are equal when they hold the same paths, kinds and bytes (times, quota and
    /// clock are ignored).
    fn eq(&self, other: &Self) -> bool {
        self.nodes.len() == other.nodes.len()
            && self
                .nodes
                .iter()
                .zip(other.nodes.iter())
                .all(|((pa, a), (pb, b))| pa == pb && node_content(a) == node_content(b))
    }
}

fn node_content(node: &Node) -> Content {
    match node {
        Node::Dir { .. } => Content::Dir,
        Node::File { data, .. } => Content::File(Arc::clone(data)),
    }
}

impl Vfs {
    /// An empty tree with the default quota and the system clock.
    pub fn new() -> Self {
        Vfs {
            nodes: BTreeMap::new(),
            total_bytes: 0,
            quota: Quota::default(),
            clock: system_clock,
        }
    }

    /// Replaces the clock used for modification times.
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// Changes the clock used for modification times.
    pub fn set_clock(&mut self, clock: Clock) {
        self.clock = clock;
    }

    /// Replaces the quota.
    pub fn with_quota(mut self, quota: Quota) -> Self {
        self.quota = quota;
        self
    }

    /// The quota in force.
    pub fn quota(&self) -> Quota {
        self.quota
    }

    /// Changes the quota in force.
    pub fn set_quota(&mut self, quota: Quota) {
        self.quota = quota;
    }

    /// The current time according to this tree's clock.
    pub fn now(&self) -> u64 {
        (self.clock)()
    }

    /// Sum of all file sizes.
    pub fn total_bytes(&self) -> u64 {
        self.total_bytes
    }

    /// Number of files and directories (the root is not counted).
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Error for a path that does not exist: `NOT_A_DIRECTORY` if a file stands where a
    /// parent folder should be, `NOT_FOUND` otherwise.
    fn missing(&self, p: &str) -> WsError {
        for anc in path::ancestors(p) {
            match self.nodes.get(anc) {
                Some(Node::File { .. }) => {
                    return WsError::not_a_directory(format!(
                        "{} is a file, so {} cannot exist",
                        display(anc),
                        display(p)
                    ))
                }
                Some(Node::Dir { .. }) => {}
                None => break,
            }
        }
        WsError::not_found(format!("{} does not exist", display(p)))
    }

    fn node(&self, p: &str) -> WsResult<&Node> {
        self.nodes.get(p).ok_or_else(|| self.missing(p))
    }

    /// Checks the parent folders of `p`: every existing one must be a directory. Returns the
    /// missing ones, shallowest first.
    fn missing_parents<'a>(&self, p: &'a str) -> WsResult<Vec<&'a str>> {
        let mut missing = Vec::new();
        for anc in path::ancestors(p) {
            match self.nodes.get(anc) {
                Some(Node::Dir { .. }) => {}
                Some(Node::File { .. }) => {
                    return Err(WsError::not_a_directory(format!(
                        "{} is a file, not a directory",
                        display(anc)
                    )))
                }
                None => missing.push(anc),
            }
        }
        Ok(missing)
    }

    fn check_node_quota(&self, added: usize) -> WsResult<()> {
        if added > 0 && self.nodes.len() + added > self.quota.max_nodes {
            return Err(WsError::quota(format!(
                "the workspace may hold at most {} files and folders",
                self.quota.max_nodes
            )));
        }
        Ok(())
    }

    fn check_size_quota(&self, old_len: u64, new_len: u64) -> WsResult<()> {
        if new_len > self.quota.max_file_bytes && new_len > old_len {
            return Err(WsError::quota(format!(
                "a file may hold at most {} bytes; this one would hold {new_len}",
                self.quota.max_file_bytes
            )));
        }
        let total = self.total_bytes - old_len + new_len;
        if total > self.quota.max_total_bytes && new_len > old_len {
            return Err(WsError::quota(format!(
                "the workspace may hold at most {} bytes of files; this write would make it {total}",
                self.quota.max_total_bytes
            )));
        }
        Ok(())
    }

    /// Reads a whole file.
    pub fn read_file(&self, path: &str) -> WsResult<&[u8]> {
        let p = access::normalize(path)?;
        if p.is_empty() {
            return Err(WsError::is_a_directory(
                "~/ is the workspace root, a directory",
            ));
        }
        match self.node(&p)? {
            Node::File { data, .. } => Ok(data),
            Node::Dir { .. } => Err(WsError::is_a_directory(format!(
                "{} is a directory",
                display(&p)
            ))),
        }
    }

    /// Creates or replaces a file.
    ///
    /// With `create_parents`, missing parent folders are created; without it a missing
    /// parent is `NOT_FOUND`.
    pub fn write_file(&mut self, path: &str, data: &[u8], create_parents: bool) -> WsResult<()> {
        let p = access::normalize(path)?;
        self.write_normalized(&p, Arc::from(data), create_parents)
    }

    fn write_normalized(&mut self, p: &str, data: Arc<[u8]>, create_parents: bool) -> WsResult<()> {
        if p.is_empty() {
            return Err(WsError::is_a_directory(
                "~/ is the workspace root; give a file name",
            ));
        }
        let missing = self.missing_parents(p)?;
        if !missing.is_empty() && !create_parents {
            return Err(WsError::not_found(format!(
                "folder {} does not exist; create it first",
                display(path::parent(p).unwrap_or(""))
            )));
        }
        let old_len = match self.nodes.get(p) {
            Some(Node::Dir { .. }) => {
                return Err(WsError::is_a_directory(format!(
                    "{} is a directory",
                    display(p)
                )))
            }
            Some(Node::File { data, .. }) => Some(data.len() as u64),
            None => None,
        };
        let new_len = data.len() as u64;
        self.check_size_quota(old_len.unwrap_or(0), new_len)?;
        self.check_node_quota(missing.len() + usize::from(old_len.is_none()))?;
        let mtime = self.now();
        for dir in missing {
            self.nodes.insert(dir.to_string(), Node::Dir { mtime });
        }
        self.total_bytes = self.total_bytes - old_len.unwrap_or(0) + new_len;
        self.nodes.insert(p.to_string(), Node::File { data, mtime });
        Ok(())
    }

    /// Creates a directory.
    ///
    /// Without `recursive`, the parent must exist and the directory must not. With it,
    /// missing parents are created and an existing directory is accepted.
    pub fn mkdir(&mut self, path: &str, recursive: bool) -> WsResult<()> {
        let p = access::normalize(path)?;
        if p.is_empty() {
            return if recursive {
                Ok(())
            } else {
                Err(WsError::exists(
                    "~/ is the workspace root and always exists",
                ))
            };
        }
        let missing = self.missing_parents(&p)?;
        match self.nodes.get(&p) {
            Some(Node::Dir { .. }) if recursive => return Ok(()),
            Some(Node::Dir { .. }) => {
                return Err(WsError::exists(format!(
                    "directory {} already exists",
                    display(&p)
                )))
            }
            Some(Node::File { .. }) => {
                return Err(WsError::exists(format!(
                    "{} already exists as a file",
                    display(&p)
                )))
            }
            None => {}
        }
        if !missing.is_empty() && !recursive {
            return Err(WsError::not_found(format!(
                "folder {} does not exist; create it first or use recursive",
                display(path::parent(&p).unwrap_or(""))
            )));
        }
        self.check_node_quota(missing.len() + 1)?;
        let mtime = self.now();
        for dir in missing {
            self.nodes.insert(dir.to_string(), Node::Dir { mtime });
        }
        self.nodes.insert(p, Node::Dir { mtime });
        Ok(())
    }

    /// Deletes a file or directory. A directory with entries needs `recursive`.
    pub fn delete(&mut self, path: &str, recursive: bool) -> WsResult<()> {
        let p = access::normalize(path)?;
        if p.is_empty() {
            return Err(WsError::path_invalid(
                "the workspace root cannot be deleted",
            ));
        }
        if let Node::Dir { .. } = self.node(&p)? {
            let has_children = self.children_keys(&p).next().is_some();
            if has_children && !recursive {
                return Err(WsError::not_empty(format!(
                    "directory {} is not empty; delete recursively to remove it with its contents",
                    display(&p)
                )));
            }
        }
        for key in self.subtree_keys(&p) {
            if let Some(Node::File { data, .. }) = self.nodes.remove(&key) {
                self.total_bytes -= data.len() as u64;
            }
        }
        Ok(())
    }

    /// Keys strictly below `p` (all keys for the root), in order.
    fn children_keys<'a>(&'a self, p: &str) -> impl Iterator<Item = &'a String> + 'a {
        let prefix = if p.is_empty() {
            String::new()
        } else {
            format!("{p}/")
        };
        self.nodes
            .range(prefix.clone()..)
            .map(|(k, _)| k)
            .take_while(move |k| k.starts_with(&prefix))
    }

    /// `p` itself (if present) and every key below it.
    pub(super) fn subtree_keys(&self, p: &str) -> Vec<String> {
        let mut keys = Vec::new();
        if self.nodes.contains_key(p) {
            keys.push(p.to_string());
        }
        keys.extend(self.children_keys(p).cloned());
        keys
    }

    /// Lists a directory, sorted by path. With `recursive`, everything below it is listed.
    pub fn list(&self, path: &str, recursive: bool) -> WsResult<Vec<Entry>> {
        let p = access::normalize(path)?;
        if !p.is_empty() {
            if let Node::File { .. } = self.node(&p)? {
                return Err(WsError::not_a_directory(format!(
                    "{} is a file, not a directory",
                    display(&p)
                )));
            }
        }
        let skip = if p.is_empty() { 0 } else { p.len() + 1 };
        Ok(self
            .children_keys(&p)
            .filter(|k| recursive || !k[skip..].contains('/'))
            .filter(|k| !access::is_hidden(k))
            .filter_map(|k| {
                self.nodes.get(k).map(|n| Entry {
                    path: k.clone(),
                    kind: n.kind(),
                    size: n.size(),
                })
            })
            .collect())
    }

    /// Metadata of a path (the root is a directory).
    pub fn stat(&self, path: &str) -> WsResult<Stat> {
        let p = access::normalize(path)?;
        if p.is_empty() {
            return Ok(Stat {
                path: p,
                kind: EntryKind::Dir,
                size: 0,
                mtime: 0,
            });
        }
        let node = self.node(&p)?;
        let mtime = match node {
            Node::Dir { mtime } | Node::File { mtime, .. } => *mtime,
        };
        Ok(Stat {
            kind: node.kind(),
            size: node.size(),
            mtime,
            path: p,
        })
    }

    /// Whether a path exists. Invalid and hidden paths do not.
    pub fn exists(&self, path: &str) -> bool {
        match access::normalize(path) {
            Ok(p) => p.is_empty() || self.nodes.contains_key(&p),
            Err(_) => false,
        }
    }

    /// Reads lines `start..=end` (1-based, inclusive; `end` is clamped to the file).
    /// See [`text::select_lines`].
    pub fn read_lines(
        &self,
        path: &str,
        start: usize,
        end: usize,
        max_bytes: usize,
        keep: KeepLines,
    ) -> WsResult<LineSlice> {
        text::select_lines(self.read_file(path)?, start, end, max_bytes, keep)
    }

    /// Replaces lines `start..=end` (1-based, inclusive) with `replacement`; `end = start - 1`
    /// inserts. If `expected` is given it must match the current text of the range, or
    /// `CONFLICT` is returned and nothing changes. See [`text::replace_lines`].
    pub fn patch_lines(
        &mut self,
        path: &str,
        start: usize,
        end: usize,
        replacement: &str,
        expected: Option<&str>,
    ) -> WsResult<PatchOutcome> {
        let p = access::normalize(path)?;
        let (data, outcome) =
            text::replace_lines(self.read_file(&p)?, start, end, replacement, expected)?;
        self.write_normalized(&p, Arc::from(data), false)?;
        Ok(outcome)
    }

    /// Literal, case-sensitive search of every text file at or below `path_prefix` (a
    /// directory or a single file; `""` or `~/` for everything). Returns at most
    /// `max_results` hits, each with up to `context_lines` lines around it, and at most
    /// `max_bytes` of answer (see [`SearchResult::new`]). Files with a NUL
    /// byte in their first 8 KiB are treated as binary and skipped.
    pub fn search(
        &self,
        query: &str,
        path_prefix: &str,
        context_lines: usize,
        max_results: usize,
        max_bytes: usize,
        searchable: &dyn Fn(&str) -> bool,
    ) -> WsResult<SearchResult> {
        let p = access::normalize(path_prefix)?;
        let mut result = SearchResult::new(max_bytes);
        if !p.is_empty() {
            if let Node::File { data, .. } = self.node(&p)? {
                text::search_text(&p, data, query, context_lines, max_results, &mut result);
                return Ok(result);
            }
        }
        for key in self.children_keys(&p) {
            if access::is_hidden(key) || !searchable(key) {
                continue;
            }
            if let Some(Node::File { data, .. }) = self.nodes.get(key) {
                if !text::search_text(key, data, query, context_lines, max_results, &mut result) {
                    break;
                }
            }
        }
        Ok(result)
    }

    /// The state of a normalized path (`None` when absent; the root is a directory).
    pub(super) fn content(&self, p: &str) -> Option<Content> {
        if p.is_empty() {
            return Some(Content::Dir);
        }
        self.nodes.get(p).map(node_content)
    }

    /// Sets the state of a normalized path directly, without checks. The caller keeps the
    /// tree consistent (every parent of a present path is a directory).
    pub(super) fn set_content(&mut self, p: &str, content: Option<Content>) {
        if p.is_empty() {
            return;
        }
        let mtime = self.now();
        let old = match content {
            None => self.nodes.remove(p),
            Some(Content::Dir) => self.nodes.insert(p.to_string(), Node::Dir { mtime }),
            Some(Content::File(data)) => {
                self.total_bytes += data.len() as u64;
                self.nodes.insert(p.to_string(), Node::File { data, mtime })
            }
        };
        if let Some(Node::File { data, .. }) = old {
            self.total_bytes -= data.len() as u64;
        }
    }

    /// Why the tree is out of shape at the normalized path `p`, if it is: something present
    /// at `p` needs its parent folder, and nothing may lie below a `p` that is not a folder.
    /// A tree whose every path passes this check is consistent, so after a direct change
    /// ([`Vfs::set_content`]) checking the changed paths is enough.
    pub(super) fn shape_error(&self, p: &str) -> Option<String> {
        let node = self.nodes.get(p);
        if node.is_some() {
            let parent = path::parent(p).unwrap_or("");
            match self.nodes.get(parent) {
                _ if parent.is_empty() => {}
                Some(Node::Dir { .. }) => {}
                Some(Node::File { .. }) => {
                    return Some(format!(
                        "{} would lie inside {}, which would be a file",
                        display(p),
                        display(parent)
                    ))
                }
                None => {
                    return Some(format!(
                        "{} would exist without its folder {}",
                        display(p),
                        display(parent)
                    ))
                }
            }
        }
        if matches!(node, Some(Node::Dir { .. })) {
            return None;
        }
        let below = self.children_keys(p).next()?;
        Some(match node {
            Some(_) => format!(
                "{} would be a file while {} is inside it",
                display(p),
                display(below)
            ),
            None => format!(
                "{} would be gone while {} is still inside it",
                display(p),
                display(below)
            ),
        })
    }

    /// Every stored path with its state, in path order.
    pub(super) fn contents(&self) -> impl Iterator<Item = (&str, Content)> + '_ {
        self.nodes
            .iter()
            .map(|(k, n)| (k.as_str(), node_content(n)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::error::WsCode;

    fn fixed_clock() -> u64 {
        1_700_000_000_000
    }

    fn vfs() -> Vfs {
        Vfs::new().with_clock(fixed_clock)
    }

    fn code<T: std::fmt::Debug>(r: WsResult<T>) -> WsCode {
        match r {
            Ok(v) => panic!("expected an error, got {v:?}"),
            Err(e) => e.code,
        }
    }

    fn paths(entries: &[Entry]) -> Vec<&str> {
        entries.iter().map(|e| e.path.as_str()).collect()
    }

    #[test]
    fn write_and_read() -> WsResult<()> {
        let mut v = vfs();
        v.write_file("~/a.txt", b"hello", false)?;
        assert_eq!(v.read_file("a.txt")?, b"hello");
        assert_eq!(v.read_file("/a.txt")?, b"hello");
        v.write_file("a.txt", b"bye", false)?;
        assert_eq!(v.read_file("~/a.txt")?, b"bye");
        assert_eq!(v.total_bytes(), 3);
        Ok(())
    }

    #[test]
    fn write_parents() -> WsResult<()> {
        let mut v = vfs();
        assert_eq!(
            code(v.write_file("d/e/f.txt", b"x", false)),
            WsCode::NotFound
        );
        v.write_file("d/e/f.txt", b"x", true)?;
        assert_eq!(v.stat("d")?.kind, EntryKind::Dir);
        assert_eq!(v.stat("d/e")?.kind, EntryKind::Dir);
        assert_eq!(
            code(v.write_file("d/e/f.txt/g", b"x", true)),
            WsCode::NotADirectory
        );
        assert_eq!(code(v.write_file("d/e", b"x", true)), WsCode::IsADirectory);
        assert_eq!(code(v.write_file("~/", b"x", true)), WsCode::IsADirectory);
        assert_eq!(code(v.write_file("../x", b"x", true)), WsCode::PathInvalid);
        assert_eq!(
            code(v.write_file(".time/x", b"x", true)),
            WsCode::PathInvalid
        );
        Ok(())
    }

    #[test]
    fn read_errors() -> WsResult<()> {
        let mut v = vfs();
        v.write_file("f", b"x", false)?;
        v.mkdir("d", false)?;
        assert_eq!(code(v.read_file("missing")), WsCode::NotFound);
        assert_eq!(code(v.read_file("d")), WsCode::IsADirectory);
        assert_eq!(code(v.read_file("~/")), WsCode::IsADirectory);
        assert_eq!(code(v.read_file("f/inner")), WsCode::NotADirectory);
        assert_eq!(code(v.read_file("a\\b")), WsCode::PathInvalid);
        assert_eq!(code(v.read_file(".time/log.json")), WsCode::PathInvalid);
        Ok(())
    }

    #[test]
    fn mkdir_rules() -> WsResult<()> {
        let mut v = vfs();
        v.mkdir("a", false)?;
        assert_eq!(code(v.mkdir("a", false)), WsCode::Exists);
        v.mkdir("a", true)?;
        assert_eq!(code(v.mkdir("x/y", false)), WsCode::NotFound);
        v.mkdir("x/y/z", true)?;
        assert!(v.exists("x/y"));
        v.write_file("f", b"", false)?;
        assert_eq!(code(v.mkdir("f", true)), WsCode::Exists);
        assert_eq!(code(v.mkdir("f/g", true)), WsCode::NotADirectory);
        assert_eq!(code(v.mkdir("~/", false)), WsCode::Exists);
        v.mkdir("~/", true)?;
        assert_eq!(code(v.mkdir(".time", true)), WsCode::PathInvalid);
        Ok(())
    }

    #[test]
    fn delete_rules() -> WsResult<()> {
        let mut v = vfs();
        v.write_file("d/a.txt", b"aaa", true)?;
        v.write_file("d/sub/b.txt", b"bb", true)?;
        v.write_file("d2.txt", b"keep", false)?;
        assert_eq!(code(v.delete("d", false)), WsCode::NotEmpty);
        assert_eq!(code(v.delete("nope", true)), WsCode::NotFound);
        assert_eq!(code(v.delete("~/", true)), WsCode::PathInvalid);
        assert_eq!(code(v.delete("d2.txt/x", true)), WsCode::NotADirectory);
        v.delete("d/a.txt", false)?;
        assert!(!v.exists("d/a.txt"));
        v.delete("d", true)?;
        assert!(!v.exists("d"));
        assert!(!v.exists("d/sub/b.txt"));
        assert!(v.exists("d2.txt"));
        assert_eq!(v.total_bytes(), 4);
        v.mkdir("empty", false)?;
        v.delete("empty", false)?;
        assert_eq!(v.node_count(), 1);
        Ok(())
    }

    #[test]
    fn listing() -> WsResult<()> {
        let mut v = vfs();
        v.write_file("b.txt", b"12", false)?;
        v.write_file("a/x.txt", b"1", true)?;
        v.write_file("a/y/z.txt", b"123", true)?;
        v.write_file("a-b.txt", b"", false)?;
        let root = v.list("~/", false)?;
        assert_eq!(paths(&root), vec!["a", "a-b.txt", "b.txt"]);
        assert_eq!(root[2].size, 2);
        assert_eq!(root[0].kind, EntryKind::Dir);
        let all = v.list("", true)?;
        assert_eq!(
            paths(&all),
            vec!["a", "a-b.txt", "a/x.txt", "a/y", "a/y/z.txt", "b.txt"]
        );
        assert_eq!(paths(&v.list("a", false)?), vec!["a/x.txt", "a/y"]);
        assert_eq!(
            paths(&v.list("/a/", true)?),
            vec!["a/x.txt", "a/y", "a/y/z.txt"]
        );
        assert_eq!(code(v.list("b.txt", false)), WsCode::NotADirectory);
        assert_eq!(code(v.list("zzz", false)), WsCode::NotFound);
        assert_eq!(code(v.list(".time", true)), WsCode::PathInvalid);
        Ok(())
    }

    #[test]
    fn stat_and_exists() -> WsResult<()> {
        let mut v = vfs();
        v.write_file("f.txt", b"abc", false)?;
        let s = v.stat("~/f.txt")?;
        assert_eq!(
            s,
            Stat {
                path: "f.txt".into(),
                kind: EntryKind::File,
                size: 3,
                mtime: fixed_clock()
            }
        );
        assert_eq!(v.stat("~")?.kind, EntryKind::Dir);
        assert_eq!(code(v.stat("nope")), WsCode::NotFound);
        assert!(v.exists("f.txt"));
        assert!(v.exists("~/"));
        assert!(!v.exists("nope"));
        assert!(!v.exists("../f.txt"));
        assert!(!v.exists(".time"));
        Ok(())
    }

    #[test]
    fn lines_through_vfs() -> WsResult<()> {
        let mut v = vfs();
        v.write_file("f", b"a\nb\nc\n", false)?;
        assert_eq!(
            v.read_lines("f", 2, 3, usize::MAX, KeepLines::First)?.lines,
            vec!["b", "c"]
        );
        assert_eq!(
            v.read_lines("f", 2, 99, usize::MAX, KeepLines::First)?.end,
            3
        );
        assert_eq!(
            code(v.read_lines("f", 4, 4, usize::MAX, KeepLines::First)),
            WsCode::Range
        );
        assert_eq!(
            code(v.read_lines("nope", 1, 1, usize::MAX, KeepLines::First)),
            WsCode::NotFound
        );
        let o = v.patch_lines("f", 2, 2, "B1\nB2", Some("b"))?;
        assert_eq!(o.total_lines, 4);
        assert_eq!(v.read_file("f")?, b"a\nB1\nB2\nc\n");
        assert_eq!(
            code(v.patch_lines("f", 1, 1, "z", Some("wrong"))),
            WsCode::Conflict
        );
        assert_eq!(v.read_file("f")?, b"a\nB1\nB2\nc\n");
        assert_eq!(code(v.patch_lines("f", 1, 9, "z", None)), WsCode::Range);
        v.mkdir("d", false)?;
        assert_eq!(
            code(v.patch_lines("d", 1, 1, "z", None)),
            WsCode::IsADirectory
        );
        Ok(())
    }

    #[test]
    fn search_tree() -> WsResult<()> {
        let mut v = vfs();
        v.write_file("src/a.js", b"const x = 1;\nneedle();\nend\n", true)?;
        v.write_file("src/b.js", b"needle\n", true)?;
        v.write_file("docs/n.md", b"a needle here\n", true)?;
        v.write_file("bin.dat", b"needle\0needle", false)?;
        let r = v.search("needle", "", 1, 10, usize::MAX, &|_| true)?;
        let hits: Vec<(&str, usize)> = r
            .matches
            .iter()
            .map(|m| (m.path.as_str(), m.line))
            .collect();
        assert_eq!(
            hits,
            vec![("docs/n.md", 1), ("src/a.js", 2), ("src/b.js", 1)]
        );
        assert_eq!(r.files_searched, 3);
        assert_eq!(r.matches[1].before, vec!["const x = 1;"]);
        assert_eq!(r.matches[1].after, vec!["end"]);
        let r = v.search("needle", "~/src", 0, 10, usize::MAX, &|_| true)?;
        assert_eq!(r.matches.len(), 2);
        let r = v.search("needle", "src/b.js", 0, 10, usize::MAX, &|_| true)?;
        assert_eq!(r.matches.len(), 1);
        let r = v.search("needle", "", 0, 2, usize::MAX, &|_| true)?;
        assert_eq!(r.matches.len(), 2);
        assert!(r.truncated);
        assert_eq!(
            code(v.search("x", "nope", 0, 1, usize::MAX, &|_| true)),
            WsCode::NotFound
        );
        assert_eq!(
            code(v.search("x", ".time", 0, 1, usize::MAX, &|_| true)),
            WsCode::PathInvalid
        );
        Ok(())
    }

    #[test]
    fn quota_enforced_on_growth_only() -> WsResult<()> {
        let quota = Quota {
            max_file_bytes: 10,
            max_total_bytes: 15,
            max_nodes: 4,
        };
        let mut v = vfs().with_quota(quota);
        assert_eq!(code(v.write_file("big", &[1; 11], false)), WsCode::Quota);
        v.write_file("a", &[1; 10], false)?;
        assert_eq!(code(v.write_file("b", &[1; 6], false)), WsCode::Quota);
        v.write_file("b", &[1; 5], false)?;
        // Shrinking is always allowed.
        v.write_file("a", &[1; 2], false)?;
        v.write_file("c/d", b"", true)?;
        assert_eq!(v.node_count(), 4);
        assert_eq!(code(v.mkdir("e", false)), WsCode::Quota);
        assert_eq!(code(v.write_file("e", b"", false)), WsCode::Quota);
        // Replacing an existing file adds no node.
        v.write_file("c/d", b"x", false)?;
        assert_eq!(
            code(v.patch_lines("a", 1, 1, &"z".repeat(20), None)),
            WsCode::Quota
        );
        Ok(())
    }

    #[test]
    fn clones_share_bytes_and_compare_by_content() -> WsResult<()> {
        let mut v = vfs();
        v.write_file("a", b"1", false)?;
        let snap = v.clone();
        v.write_file("a", b"2", false)?;
        assert_eq!(snap.read_file("a")?, b"1");
        assert_ne!(snap, v);
        v.write_file("a", b"1", false)?;
        assert_eq!(snap, v);
        Ok(())
    }

    #[test]
    fn raw_content_access() -> WsResult<()> {
        let mut v = vfs();
        v.set_content("d", Some(Content::Dir));
        v.set_content("d/f", Some(Content::File(Arc::from(&b"abc"[..]))));
        assert_eq!(v.read_file("d/f")?, b"abc");
        assert_eq!(v.total_bytes(), 3);
        assert_eq!(v.content(""), Some(Content::Dir));
        assert_eq!(v.subtree_keys("d"), vec!["d", "d/f"]);
        v.set_content("d/f", None);
        assert_eq!(v.total_bytes(), 0);
        assert_eq!(v.contents().count(), 1);
        Ok(())
    }
}
