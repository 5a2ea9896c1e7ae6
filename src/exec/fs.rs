//! The file system a run sees: a copy-on-write view over a snapshot of the workspace, with
//! Node-style errors and a quota on what one run may write.
//!
//! Every `fs` call of a run goes through [`FsHost`]. Reads see the run's own writes; nothing
//! reaches the real workspace until the caller takes [`FsHost::changes`] and applies them (see
//! [`crate::workspace::Workspace::apply_overlay`]).

use std::collections::{BTreeMap, BTreeSet};

use crate::workspace::bounds::Bounds;
use crate::workspace::path::{self as wpath, display};
use crate::workspace::{EntryKind, StagedOp, Vfs, WsCode, WsError};

/// How much one run may write. Counted over the whole run: rewriting a file twice counts its
/// bytes twice, but the path once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteQuota {
    /// Total bytes written by `writeFile`, `appendFile` and `copyFile`.
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

/// A failed `fs` call, shaped like Node's system errors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FsError {
    /// `ENOENT`, `EEXIST`, ... or `ERR_*` for argument errors.
    pub code: &'static str,
    /// The whole message, e.g. `ENOENT: no such file or directory, open '~/x'`.
    pub message: String,
    /// The system call Node would name (`open`, `scandir`, ...); empty for argument errors.
    pub syscall: &'static str,
    /// The path as shown in the message.
    pub path: Option<String>,
    /// The second path of `rename` and `copyFile`.
    pub dest: Option<String>,
    /// Thrown as a `TypeError` rather than an `Error`.
    pub type_error: bool,
}

/// Node's negative errno for a code, when it has one.
pub fn errno(code: &str) -> Option<i32> {
    Some(match code {
        "EPERM" => -1,
        "ENOENT" => -2,
        "EACCES" => -13,
        "EBUSY" => -16,
        "EEXIST" => -17,
        "ENOTDIR" => -20,
        "EISDIR" => -21,
        "EINVAL" => -22,
        "EFBIG" => -27,
        "ENOSPC" => -28,
        "ENAMETOOLONG" => -36,
        "ENOTEMPTY" => -39,
        "EDQUOT" => -122,
        _ => return None,
    })
}

fn describe(code: &str) -> &'static str {
    match code {
        "EPERM" => "operation not permitted",
        "ENOENT" => "no such file or directory",
        "EACCES" => "permission denied",
        "EBUSY" => "resource busy or locked",
        "EEXIST" => "file already exists",
        "ENOTDIR" => "not a directory",
        "EISDIR" => "illegal operation on a directory",
        "EINVAL" => "invalid argument",
        "EFBIG" => "file too large",
        "ENOSPC" => "no space left on device",
        "ENAMETOOLONG" => "name too long",
        "ENOTEMPTY" => "directory not empty",
        "EDQUOT" => "disk quota exceeded",
        _ => "error",
    }
}

impl FsError {
    /// `CODE: description, syscall 'path'`, plus an optional hint in parentheses.
    pub fn sys(code: &'static str, syscall: &'static str, path: &str) -> Self {
        FsError {
            code,
            message: format!("{code}: {}, {syscall} '{path}'", describe(code)),
            syscall,
            path: Some(path.to_string()),
            dest: None,
            type_error: false,
        }
    }

    /// Like [`FsError::sys`] for calls with two paths (`rename 'a' -> 'b'`).
    pub fn sys2(code: &'static str, syscall: &'static str, from: &str, to: &str) -> Self {
        FsError {
            code,
            message: format!("{code}: {}, {syscall} '{from}' -> '{to}'", describe(code)),
            syscall,
            path: Some(from.to_string()),
            dest: Some(to.to_string()),
            type_error: false,
        }
    }

    fn hint(mut self, hint: impl AsRef<str>) -> Self {
        self.message = format!("{} ({})", self.message, hint.as_ref());
        self
    }

    fn arg(code: &'static str, message: String) -> Self {
        FsError {
            code,
            message,
            syscall: "",
            path: None,
            dest: None,
            type_error: true,
        }
    }
}

type FsResult<T> = Result<T, FsError>;

/// What stands at a normalized path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Node {
    Missing,
    /// A file stands where one of the parent folders should be.
    BlockedByFile,
    File,
    Dir,
}

/// Metadata returned by `stat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FsStat {
    pub is_dir: bool,
    pub size: u64,
    pub mtime_ms: u64,
}

/// How `write` treats an existing file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteMode {
    pub append: bool,
    pub exclusive: bool,
}

/// The run's file system: a view over a workspace snapshot plus the run's write accounting.
#[derive(Debug, Clone)]
pub struct FsHost {
    base: Vfs,
    view: Vfs,
    quota: WriteQuota,
    bytes_written: u64,
    touched: BTreeSet<String>,
}

impl FsHost {
    /// A view over `snapshot`; the snapshot is kept to compute [`FsHost::changes`].
    pub fn new(snapshot: Vfs, quota: WriteQuota) -> Self {
        FsHost {
            view: snapshot.clone(),
            base: snapshot,
            quota,
            bytes_written: 0,
            touched: BTreeSet::new(),
        }
    }

    /// The current view, the run's writes included.
    pub fn view(&self) -> &Vfs {
        &self.view
    }

    /// Bytes written so far by this run.
    pub fn bytes_written(&self) -> u64 {
        self.bytes_written
    }

    /// Resolves a guest path (relative to the working directory `~`) to its normalized form.
    pub fn resolve(&self, input: &str, syscall: &'static str) -> FsResult<String> {
        if input.contains('\0') {
            let shown: String = input.replace('\0', "\\x00").chars().take(80).collect();
            return Err(FsError::arg(
                "ERR_INVALID_ARG_VALUE",
                format!(
                    "The argument 'path' must be a string without null bytes. Received '{shown}'"
                ),
            ));
        }
        if input.contains('\\') {
            return Err(FsError::sys("EINVAL", syscall, input)
                .hint("a backslash is not a path separator here; use '/'"));
        }
        match wpath::normalize_any(input) {
            Ok(p) if wpath::is_hidden(&p) => Err(FsError::sys("EACCES", syscall, input)
                .hint("this area is reserved for workspace history")),
            Ok(p) => Ok(p),
            Err(_) => {
                let rest =
                    input
                        .strip_prefix("~/")
                        .unwrap_or(if input == "~" { "" } else { input });
                let first = rest.split('/').find(|s| !s.is_empty()).unwrap_or("");
                if wpath::is_drive(first) {
                    Err(FsError::sys("EINVAL", syscall, input)
                        .hint("drive letters do not exist here; paths look like ~/dir/file.txt"))
                } else if rest.split('/').any(|s| s == "..") {
                    Err(FsError::sys("EACCES", syscall, input)
                        .hint("the path leaves the workspace"))
                } else {
                    Err(FsError::sys("ENAMETOOLONG", syscall, input))
                }
            }
        }
    }

    fn node(&self, p: &str) -> Node {
        if p.is_empty() {
            return Node::Dir;
        }
        match self.view.stat(p) {
            Ok(s) if s.kind == EntryKind::Dir => Node::Dir,
            Ok(_) => Node::File,
            Err(e) if e.code == WsCode::NotADirectory => Node::BlockedByFile,
            Err(_) => Node::Missing,
        }
    }

    /// The parent of `p` must be an existing folder.
    fn check_parent(&self, p: &str, syscall: &'static str, shown: &str) -> FsResult<()> {
        match self.node(wpath::parent(p).unwrap_or("")) {
            Node::Dir => Ok(()),
            Node::Missing => Err(FsError::sys("ENOENT", syscall, shown)),
            Node::File | Node::BlockedByFile => Err(FsError::sys("ENOTDIR", syscall, shown)),
        }
    }

    /// Checks the run's quota before `bytes` more bytes land on the paths in `paths`.
    fn charge(
        &self,
        paths: &[&str],
        bytes: u64,
        syscall: &'static str,
        shown: &str,
    ) -> FsResult<()> {
        if self.bytes_written.saturating_add(bytes) > self.quota.max_bytes {
            return Err(FsError::sys("EDQUOT", syscall, shown).hint(format!(
                "this run may write at most {} bytes; it has written {}",
                self.quota.max_bytes, self.bytes_written
            )));
        }
        let new = paths.iter().filter(|p| !self.touched.contains(**p)).count();
        if self.touched.len() + new > self.quota.max_files {
            return Err(FsError::sys("EDQUOT", syscall, shown).hint(format!(
                "this run may create or change at most {} files and folders",
                self.quota.max_files
            )));
        }
        Ok(())
    }

    fn record(&mut self, paths: &[&str], bytes: u64) {
        self.bytes_written = self.bytes_written.saturating_add(bytes);
        for p in paths {
            self.touched.insert((*p).to_string());
        }
    }

    /// Maps a failure of the underlying tree (quota, mostly) to an fs error.
    fn tree_error(e: WsError, syscall: &'static str, shown: &str) -> FsError {
        match e.code {
            WsCode::Quota => FsError::sys("ENOSPC", syscall, shown).hint(e.message),
            WsCode::NotFound => FsError::sys("ENOENT", syscall, shown),
            WsCode::Exists => FsError::sys("EEXIST", syscall, shown),
            WsCode::NotADirectory => FsError::sys("ENOTDIR", syscall, shown),
            WsCode::IsADirectory => FsError::sys("EISDIR", syscall, shown),
            WsCode::NotEmpty => FsError::sys("ENOTEMPTY", syscall, shown),
            _ => FsError::sys("EINVAL", syscall, shown).hint(e.message),
        }
    }

    // ----- reads -----

    /// A file's bytes.
    pub fn read(&self, input: &str) -> FsResult<Vec<u8>> {
        let p = self.resolve(input, "open")?;
        let shown = display(&p);
        match self.node(&p) {
            Node::File => self
                .view
                .read_file(&p)
                .map(<[u8]>::to_vec)
                .map_err(|e| Self::tree_error(e, "open", &shown)),
            Node::Dir => Err(FsError::sys("EISDIR", "read", &shown)),
            Node::Missing => Err(FsError::sys("ENOENT", "open", &shown)),
            Node::BlockedByFile => Err(FsError::sys("ENOTDIR", "open", &shown)),
        }
    }

    /// Whether something exists at the path (invalid and hidden paths do not).
    pub fn exists(&self, input: &str) -> bool {
        match self.resolve(input, "access") {
            Ok(p) => matches!(self.node(&p), Node::File | Node::Dir),
            Err(_) => false,
        }
    }

    /// Fails with `ENOENT` unless the path exists.
    pub fn access(&self, input: &str) -> FsResult<()> {
        let p = self.resolve(input, "access")?;
        match self.node(&p) {
            Node::File | Node::Dir => Ok(()),
            Node::Missing => Err(FsError::sys("ENOENT", "access", &display(&p))),
            Node::BlockedByFile => Err(FsError::sys("ENOTDIR", "access", &display(&p))),
        }
    }

    /// The canonical `~/...` form of an existing path.
    pub fn realpath(&self, input: &str) -> FsResult<String> {
        let p = self.resolve(input, "realpath")?;
        match self.node(&p) {
            Node::File | Node::Dir if p.is_empty() => Ok("~".into()),
            Node::File | Node::Dir => Ok(display(&p)),
            Node::Missing => Err(FsError::sys("ENOENT", "realpath", &display(&p))),
            Node::BlockedByFile => Err(FsError::sys("ENOTDIR", "realpath", &display(&p))),
        }
    }

    pub fn stat(&self, input: &str) -> FsResult<FsStat> {
        let p = self.resolve(input, "stat")?;
        let shown = display(&p);
        match self.node(&p) {
            Node::Missing => Err(FsError::sys("ENOENT", "stat", &shown)),
            Node::BlockedByFile => Err(FsError::sys("ENOTDIR", "stat", &shown)),
            Node::File | Node::Dir => {
                let s = self
                    .view
                    .stat(&p)
                    .map_err(|e| Self::tree_error(e, "stat", &shown))?;
                Ok(FsStat {
                    is_dir: s.kind == EntryKind::Dir,
                    size: s.size,
                    mtime_ms: s.mtime,
                })
            }
        }
    }

    /// Entries of a folder as `(name relative to it, is_dir)`, sorted; with `recursive`,
    /// everything below it.
    pub fn readdir(&self, input: &str, recursive: bool) -> FsResult<Vec<(String, bool)>> {
        let p = self.resolve(input, "scandir")?;
        let shown = display(&p);
        match self.node(&p) {
            Node::Dir => {}
            Node::Missing => return Err(FsError::sys("ENOENT", "scandir", &shown)),
            Node::File | Node::BlockedByFile => {
                return Err(FsError::sys("ENOTDIR", "scandir", &shown))
            }
        }
        let skip = if p.is_empty() { 0 } else { p.len() + 1 };
        let entries = self
            .view
            .list(&p, recursive)
            .map_err(|e| Self::tree_error(e, "scandir", &shown))?;
        Ok(entries
            .into_iter()
            .map(|e| (e.path[skip..].to_string(), e.kind == EntryKind::Dir))
            .collect())
    }

    // ----- writes -----

    /// Writes (or appends to) a file; the parent folder must exist.
    pub fn write(&mut self, input: &str, data: &[u8], mode: WriteMode) -> FsResult<()> {
        let p = self.resolve(input, "open")?;
        let shown = display(&p);
        match self.node(&p) {
            Node::Dir => return Err(FsError::sys("EISDIR", "open", &shown)),
            Node::BlockedByFile => return Err(FsError::sys("ENOTDIR", "open", &shown)),
            Node::File if mode.exclusive => return Err(FsError::sys("EEXIST", "open", &shown)),
            Node::File | Node::Missing => {}
        }
        self.check_parent(&p, "open", &shown)?;
        self.charge(&[&p], data.len() as u64, "write", &shown)?;
        let result = if mode.append && self.node(&p) == Node::File {
            let mut joined = self
                .view
                .read_file(&p)
                .map_err(|e| Self::tree_error(e, "open", &shown))?
                .to_vec();
            joined.extend_from_slice(data);
            self.view.write_file(&p, &joined, false)
        } else {
            self.view.write_file(&p, data, false)
        };
        result.map_err(|e| Self::tree_error(e, "write", &shown))?;
        self.record(&[&p], data.len() as u64);
        Ok(())
    }

    /// Creates a folder. Returns, for `recursive`, the first folder created (as Node does).
    pub fn mkdir(&mut self, input: &str, recursive: bool) -> FsResult<Option<String>> {
        let p = self.resolve(input, "mkdir")?;
        let shown = display(&p);
        match self.node(&p) {
            Node::Dir if recursive => return Ok(None),
            Node::Dir | Node::File => return Err(FsError::sys("EEXIST", "mkdir", &shown)),
            Node::BlockedByFile => return Err(FsError::sys("ENOTDIR", "mkdir", &shown)),
            Node::Missing => {}
        }
        let mut created: Vec<&str> = Vec::new();
        if recursive {
            for anc in wpath::ancestors(&p) {
                match self.node(anc) {
                    Node::Dir => {}
                    Node::Missing => created.push(anc),
                    Node::File | Node::BlockedByFile => {
                        return Err(FsError::sys("ENOTDIR", "mkdir", &shown))
                    }
                }
            }
        } else {
            self.check_parent(&p, "mkdir", &shown)?;
        }
        created.push(&p);
        self.charge(&created, 0, "mkdir", &shown)?;
        self.view
            .mkdir(&p, recursive)
            .map_err(|e| Self::tree_error(e, "mkdir", &shown))?;
        let first = created.first().map(|c| display(c));
        self.record(&created, 0);
        Ok(first)
    }

    /// Deletes a file (never a folder).
    pub fn unlink(&mut self, input: &str) -> FsResult<()> {
        let p = self.resolve(input, "unlink")?;
        let shown = display(&p);
        match self.node(&p) {
            Node::File => self
                .view
                .delete(&p, false)
                .map_err(|e| Self::tree_error(e, "unlink", &shown)),
            Node::Dir => Err(FsError::sys("EISDIR", "unlink", &shown)),
            Node::Missing => Err(FsError::sys("ENOENT", "unlink", &shown)),
            Node::BlockedByFile => Err(FsError::sys("ENOTDIR", "unlink", &shown)),
        }
    }

    /// Deletes a folder; without `recursive` it must be empty.
    pub fn rmdir(&mut self, input: &str, recursive: bool) -> FsResult<()> {
        let p = self.resolve(input, "rmdir")?;
        let shown = display(&p);
        match self.node(&p) {
            Node::Dir if p.is_empty() => {
                Err(FsError::sys("EBUSY", "rmdir", &shown)
                    .hint("the workspace root cannot be removed"))
            }
            Node::Dir => {
                let empty = self
                    .view
                    .list(&p, false)
                    .map(|l| l.is_empty())
                    .unwrap_or(true);
                if !empty && !recursive {
                    return Err(FsError::sys("ENOTEMPTY", "rmdir", &shown));
                }
                self.view
                    .delete(&p, true)
                    .map_err(|e| Self::tree_error(e, "rmdir", &shown))
            }
            Node::File | Node::BlockedByFile => Err(FsError::sys("ENOTDIR", "rmdir", &shown)),
            Node::Missing => Err(FsError::sys("ENOENT", "rmdir", &shown)),
        }
    }

    /// `rm`: files, and folders with `recursive`; `force` ignores missing paths.
    pub fn rm(&mut self, input: &str, recursive: bool, force: bool) -> FsResult<()> {
        let p = self.resolve(input, "lstat")?;
        let shown = display(&p);
        match self.node(&p) {
            Node::Missing | Node::BlockedByFile if force => Ok(()),
            Node::Missing => Err(FsError::sys("ENOENT", "lstat", &shown)),
            Node::BlockedByFile => Err(FsError::sys("ENOTDIR", "lstat", &shown)),
            Node::Dir if p.is_empty() => Err(FsError::sys("EBUSY", "rm", &shown)
                .hint("the workspace root cannot be removed")),
            Node::Dir if !recursive => Err(FsError {
                code: "ERR_FS_EISDIR",
                message: format!(
                    "Path is a directory: rm returned EISDIR (is a directory) {shown} (use {{ recursive: true }})"
                ),
                syscall: "rm",
                path: Some(shown.clone()),
                dest: None,
                type_error: false,
            }),
            Node::Dir | Node::File => self
                .view
                .delete(&p, true)
                .map_err(|e| Self::tree_error(e, "rm", &shown)),
        }
    }

    /// Moves a file or folder; an existing target is replaced under POSIX rules.
    pub fn rename(&mut self, from: &str, to: &str) -> FsResult<()> {
        let a = self.resolve(from, "rename")?;
        let b = self.resolve(to, "rename")?;
        let (sa, sb) = (display(&a), display(&b));
        let err = |code| FsError::sys2(code, "rename", &sa, &sb);
        let kind = match self.node(&a) {
            Node::Missing => return Err(err("ENOENT")),
            Node::BlockedByFile => return Err(err("ENOTDIR")),
            k => k,
        };
        if a == b {
            return Ok(());
        }
        if a.is_empty() || b.is_empty() {
            return Err(err("EBUSY"));
        }
        if wpath::is_within(&b, &a) {
            return Err(err("EINVAL"));
        }
        match self.node(wpath::parent(&b).unwrap_or("")) {
            Node::Dir => {}
            Node::Missing => return Err(err("ENOENT")),
            Node::File | Node::BlockedByFile => return Err(err("ENOTDIR")),
        }
        let target_empty = || {
            self.view
                .list(&b, false)
                .map(|l| l.is_empty())
                .unwrap_or(true)
        };
        match (kind, self.node(&b)) {
            (Node::File, Node::Dir) => return Err(err("EISDIR")),
            (Node::Dir, Node::File) => return Err(err("ENOTDIR")),
            (Node::Dir, Node::Dir) if !target_empty() => return Err(err("ENOTEMPTY")),
            _ => {}
        }
        // Everything that moves, shallowest first, as (relative path, is_dir).
        let mut moved: Vec<(String, bool)> = vec![(String::new(), kind == Node::Dir)];
        if kind == Node::Dir {
            moved.extend(self.readdir(&a, true)?);
        }
        let targets: Vec<String> = moved
            .iter()
            .map(|(rel, _)| {
                if rel.is_empty() {
                    b.clone()
                } else {
                    format!("{b}/{rel}")
                }
            })
            .collect();
        let target_refs: Vec<&str> = targets.iter().map(String::as_str).collect();
        self.charge(&target_refs, 0, "rename", &sa)?;
        let mut work = self.view.clone();
        if self.node(&b) != Node::Missing {
            work.delete(&b, true)
                .map_err(|e| Self::tree_error(e, "rename", &sa))?;
        }
        for ((rel, is_dir), target) in moved.iter().zip(&targets) {
            let source = if rel.is_empty() {
                a.clone()
            } else {
                format!("{a}/{rel}")
            };
            let done = if *is_dir {
                work.mkdir(target, false)
            } else {
                let data = self
                    .view
                    .read_file(&source)
                    .map_err(|e| Self::tree_error(e, "rename", &sa))?;
                work.write_file(target, data, false)
            };
            done.map_err(|e| Self::tree_error(e, "rename", &sa))?;
        }
        work.delete(&a, true)
            .map_err(|e| Self::tree_error(e, "rename", &sa))?;
        self.view = work;
        self.record(&target_refs, 0);
        Ok(())
    }

    /// Copies a file; with `exclusive` the target must not exist.
    pub fn copy_file(&mut self, from: &str, to: &str, exclusive: bool) -> FsResult<()> {
        let a = self.resolve(from, "copyfile")?;
        let b = self.resolve(to, "copyfile")?;
        let (sa, sb) = (display(&a), display(&b));
        let err = |code| FsError::sys2(code, "copyfile", &sa, &sb);
        match self.node(&a) {
            Node::File => {}
            Node::Dir => return Err(err("EISDIR")),
            Node::Missing => return Err(err("ENOENT")),
            Node::BlockedByFile => return Err(err("ENOTDIR")),
        }
        match self.node(&b) {
            Node::Dir => return Err(err("EISDIR")),
            Node::BlockedByFile => return Err(err("ENOTDIR")),
            Node::File if exclusive => return Err(err("EEXIST")),
            _ => {}
        }
        match self.node(wpath::parent(&b).unwrap_or("")) {
            Node::Dir => {}
            Node::Missing => return Err(err("ENOENT")),
            Node::File | Node::BlockedByFile => return Err(err("ENOTDIR")),
        }
        let data = self
            .view
            .read_file(&a)
            .map_err(|e| Self::tree_error(e, "copyfile", &sa))?
            .to_vec();
        self.charge(&[&b], data.len() as u64, "copyfile", &sb)?;
        self.view
            .write_file(&b, &data, false)
            .map_err(|e| Self::tree_error(e, "copyfile", &sb))?;
        self.record(&[&b], data.len() as u64);
        Ok(())
    }

    // ----- the result -----

    /// The run's changes as staged operations, smallest first: deletions (outermost paths only),
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
            if gone && !wpath::ancestors(p).any(|a| deleted.contains(a)) {
                deleted.insert(p.clone());
                ops.push(StagedOp::Delete { path: p.clone() });
            }
        }
        for (p, is_dir) in &after {
            let replaced = deleted.contains(p) || wpath::ancestors(p).any(|a| deleted.contains(a));
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
    use crate::workspace::Workspace;

    fn host() -> FsHost {
        let mut w = Workspace::new();
        w.set_clock(|| 1_000);
        w.write_file("src/a.txt", b"alpha", true).unwrap();
        w.write_file("keep.txt", b"k", false).unwrap();
        w.mkdir("empty", false).unwrap();
        FsHost::new(w.vfs().clone(), WriteQuota::default())
    }

    fn code<T: std::fmt::Debug>(r: FsResult<T>) -> &'static str {
        match r {
            Ok(v) => panic!("expected an error, got {v:?}"),
            Err(e) => e.code,
        }
    }

    const W: WriteMode = WriteMode {
        append: false,
        exclusive: false,
    };

    #[test]
    fn paths_resolve_like_the_workspace() {
        let h = host();
        assert_eq!(h.resolve("~/src/a.txt", "open").unwrap(), "src/a.txt");
        assert_eq!(h.resolve("./src/../keep.txt", "open").unwrap(), "keep.txt");
        assert_eq!(h.resolve("/keep.txt", "open").unwrap(), "keep.txt");
        assert_eq!(code(h.resolve("../x", "open")), "EACCES");
        assert_eq!(code(h.resolve("~/a/../../x", "open")), "EACCES");
        assert_eq!(code(h.resolve(".time/log.json", "open")), "EACCES");
        assert_eq!(code(h.resolve("a\\b", "open")), "EINVAL");
        assert_eq!(code(h.resolve("C:/x", "open")), "EINVAL");
        let nul = h.resolve("a\0b", "open").unwrap_err();
        assert_eq!(nul.code, "ERR_INVALID_ARG_VALUE");
        assert!(nul.type_error);
        let long = "a/".repeat(100);
        assert_eq!(code(h.resolve(&long, "open")), "ENAMETOOLONG");
    }

    #[test]
    fn reads_and_node_errors() {
        let h = host();
        assert_eq!(h.read("src/a.txt").unwrap(), b"alpha");
        let e = h.read("missing.txt").unwrap_err();
        assert_eq!(e.code, "ENOENT");
        assert_eq!(
            e.message,
            "ENOENT: no such file or directory, open '~/missing.txt'"
        );
        assert_eq!(code(h.read("src")), "EISDIR");
        assert_eq!(code(h.read("keep.txt/x")), "ENOTDIR");
        assert!(h.exists("src") && h.exists("~/keep.txt") && !h.exists("nope"));
        assert!(!h.exists(".time") && !h.exists("../x"));
        assert_eq!(
            h.readdir("~", false).unwrap(),
            vec![
                ("empty".to_string(), true),
                ("keep.txt".to_string(), false),
                ("src".to_string(), true)
            ]
        );
        assert_eq!(h.readdir("~", true).unwrap().last().unwrap().0, "src/a.txt");
        assert_eq!(code(h.readdir("keep.txt", false)), "ENOTDIR");
        assert_eq!(code(h.readdir("nope", false)), "ENOENT");
        let s = h.stat("src/a.txt").unwrap();
        assert!(!s.is_dir && s.size == 5);
        assert!(h.stat("~").unwrap().is_dir);
        assert_eq!(h.realpath("./src/../src").unwrap(), "~/src");
    }

    #[test]
    fn writes_need_the_parent_unless_mkdir_is_recursive() {
        let mut h = host();
        assert_eq!(code(h.write("new/dir/f.txt", b"x", W)), "ENOENT");
        assert_eq!(code(h.mkdir("new/dir", false)), "ENOENT");
        assert_eq!(h.mkdir("new/dir", true).unwrap().as_deref(), Some("~/new"));
        assert_eq!(h.mkdir("new/dir", true).unwrap(), None);
        assert_eq!(code(h.mkdir("new/dir", false)), "EEXIST");
        assert_eq!(code(h.mkdir("keep.txt/x", true)), "ENOTDIR");
        h.write("new/dir/f.txt", b"x", W).unwrap();
        h.write(
            "new/dir/f.txt",
            b"y",
            WriteMode {
                append: true,
                exclusive: false,
            },
        )
        .unwrap();
        assert_eq!(h.read("new/dir/f.txt").unwrap(), b"xy");
        assert_eq!(
            code(h.write(
                "new/dir/f.txt",
                b"z",
                WriteMode {
                    append: false,
                    exclusive: true
                }
            )),
            "EEXIST"
        );
        assert_eq!(code(h.write("src", b"x", W)), "EISDIR");
        assert_eq!(code(h.write("~", b"x", W)), "EISDIR");
    }

    #[test]
    fn deletes_follow_posix_rules() {
        let mut h = host();
        assert_eq!(code(h.unlink("src")), "EISDIR");
        assert_eq!(code(h.rmdir("src", false)), "ENOTEMPTY");
        assert_eq!(code(h.rmdir("keep.txt", false)), "ENOTDIR");
        assert_eq!(code(h.rm("src", false, false)), "ERR_FS_EISDIR");
        assert_eq!(code(h.rm("nope", false, false)), "ENOENT");
        h.rm("nope", false, true).unwrap();
        assert_eq!(code(h.rm("~", true, true)), "EBUSY");
        h.rmdir("empty", false).unwrap();
        h.unlink("keep.txt").unwrap();
        h.rm("src", true, false).unwrap();
        assert!(h.readdir("~", false).unwrap().is_empty());
    }

    #[test]
    fn rename_moves_trees_and_checks_targets() {
        let mut h = host();
        h.write("src/b.txt", b"beta", W).unwrap();
        assert_eq!(code(h.rename("src", "src/inner")), "EINVAL");
        assert_eq!(code(h.rename("keep.txt", "empty")), "EISDIR");
        assert_eq!(code(h.rename("src", "keep.txt")), "ENOTDIR");
        assert_eq!(code(h.rename("nope", "x")), "ENOENT");
        assert_eq!(code(h.rename("keep.txt", "no/such/x")), "ENOENT");
        let e = h.rename("nope", "x").unwrap_err();
        assert_eq!(
            e.message,
            "ENOENT: no such file or directory, rename '~/nope' -> '~/x'"
        );
        h.rename("src", "empty").unwrap();
        assert_eq!(h.read("empty/b.txt").unwrap(), b"beta");
        assert!(!h.exists("src"));
        h.rename("keep.txt", "empty/a.txt").unwrap();
        assert_eq!(h.read("empty/a.txt").unwrap(), b"k");
        h.copy_file("empty/a.txt", "copy.txt", false).unwrap();
        assert_eq!(code(h.copy_file("empty/a.txt", "copy.txt", true)), "EEXIST");
        assert_eq!(h.read("copy.txt").unwrap(), b"k");
    }

    #[test]
    fn quota_counts_bytes_and_paths() {
        let mut h = FsHost::new(
            Vfs::new(),
            WriteQuota {
                max_bytes: 10,
                max_files: 3,
            },
        );
        h.write("a", b"12345", W).unwrap();
        h.write("a", b"12345", W).unwrap();
        let e = h.write("a", b"1", W).unwrap_err();
        assert_eq!(e.code, "EDQUOT");
        assert!(e.message.contains("at most 10 bytes"), "{}", e.message);
        let mut h = FsHost::new(
            Vfs::new(),
            WriteQuota {
                max_bytes: 100,
                max_files: 3,
            },
        );
        h.mkdir("d/e", true).unwrap();
        h.write("d/f", b"", W).unwrap();
        assert_eq!(code(h.write("d/g", b"", W)), "EDQUOT");
        h.write("d/f", b"again", W).unwrap();
    }

    #[test]
    fn changes_replay_onto_the_snapshot() {
        let mut w = Workspace::new();
        w.set_clock(|| 1_000);
        w.write_file("a/x.txt", b"x", true).unwrap();
        w.write_file("a-b.txt", b"ab", false).unwrap();
        w.write_file("same.txt", b"s", false).unwrap();
        w.write_file("d/sub/deep.txt", b"d", true).unwrap();
        let mut h = FsHost::new(w.vfs().clone(), WriteQuota::default());
        h.rm("a", true, false).unwrap();
        h.write("a", b"now a file", W).unwrap();
        h.rm("a-b.txt", false, false).unwrap();
        h.write("same.txt", b"s", W).unwrap();
        h.rm("d", true, false).unwrap();
        h.mkdir("n/m", true).unwrap();
        h.write("n/m/f.txt", b"f", W).unwrap();
        let ops = h.changes();
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
        w.apply_overlay(&ops, "exec").unwrap();
        assert_eq!(w.vfs(), h.view());
    }
}
