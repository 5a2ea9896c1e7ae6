//! The file system a run sees: Node's `fs` rules and errors over a staged [`Overlay`] of the
//! workspace.
//!
//! Every `fs` call of a run goes through [`FsHost`]. The overlay holds the state (the snapshot,
//! the run's copy-on-write view, its write quota) and resolves every path through the
//! workspace's access rules; this layer adds what Node would check (a file's folder must exist,
//! `rmdir` wants an empty folder, ...) and reports failures as Node does: `ENOENT` with an
//! `errno`, a `syscall` name and the path. Nothing reaches the real workspace until the caller
//! takes [`FsHost::changes`] and applies them (see
//! [`crate::workspace::Workspace::apply_overlay`]).

use crate::workspace::access;
use crate::workspace::path::{self as wpath, display};
use crate::workspace::{
    AccessOp, EntryKind, Overlay, OverlayError, Presence, Refused, StagedOp, WsCode, WsError,
};

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

/// The run's file system: Node's rules over the run's staged overlay.
#[derive(Debug, Clone)]
pub struct FsHost {
    overlay: Overlay,
}

impl FsHost {
    /// The file system of a run over `overlay`.
    pub fn new(overlay: Overlay) -> Self {
        FsHost { overlay }
    }

    /// The run's overlay: its view of the tree, the run's writes included.
    pub fn overlay(&self) -> &Overlay {
        &self.overlay
    }

    /// The run's changes (see [`Overlay::changes`]).
    pub fn changes(&self) -> Vec<StagedOp> {
        self.overlay.changes()
    }

    /// Resolves a guest path (relative to the working directory `~`) for `op` to its normalized
    /// form.
    pub fn resolve(&self, input: &str, op: AccessOp, syscall: &'static str) -> FsResult<String> {
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
        let refusal = match self.overlay.resolve(op, input) {
            Ok(p) => return Ok(p),
            Err(r) => r,
        };
        match refusal.why {
            Refused::Hidden => Err(FsError::sys("EACCES", syscall, input)
                .hint("this area is reserved for workspace history")),
            Refused::Denied => {
                Err(FsError::sys("EACCES", syscall, input).hint(refusal.error.message))
            }
            Refused::Malformed => {
                let rest =
                    input
                        .strip_prefix("~/")
                        .unwrap_or(if input == "~" { "" } else { input });
                let first = rest.split('/').find(|s| !s.is_empty()).unwrap_or("");
                if access::is_drive(first) {
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

    fn node(&self, p: &str) -> Presence {
        self.overlay.presence(p)
    }

    /// The parent of `p` must be an existing folder.
    fn check_parent(&self, p: &str, syscall: &'static str, shown: &str) -> FsResult<()> {
        match self.node(wpath::parent(p).unwrap_or("")) {
            Presence::Dir => Ok(()),
            Presence::Missing => Err(FsError::sys("ENOENT", syscall, shown)),
            Presence::File | Presence::BlockedByFile => {
                Err(FsError::sys("ENOTDIR", syscall, shown))
            }
        }
    }

    /// Maps a refused staged change to an fs error: the run's quota is `EDQUOT`.
    fn staged_error(e: OverlayError, syscall: &'static str, shown: &str) -> FsError {
        match e {
            OverlayError::OverQuota(e) => FsError::sys("EDQUOT", syscall, shown).hint(e.message),
            OverlayError::Tree(e) => Self::tree_error(e, syscall, shown),
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
        let p = self.resolve(input, AccessOp::Read, "open")?;
        let shown = display(&p);
        match self.node(&p) {
            Presence::File => self
                .overlay
                .read(&p)
                .map(<[u8]>::to_vec)
                .map_err(|e| Self::tree_error(e, "open", &shown)),
            Presence::Dir => Err(FsError::sys("EISDIR", "read", &shown)),
            Presence::Missing => Err(FsError::sys("ENOENT", "open", &shown)),
            Presence::BlockedByFile => Err(FsError::sys("ENOTDIR", "open", &shown)),
        }
    }

    /// Resolves a path to stat, list or test: a folder must be listable, a file readable.
    fn resolve_found(&self, input: &str, syscall: &'static str) -> FsResult<String> {
        let p = self.resolve(input, AccessOp::Traverse, syscall)?;
        if self.node(&p) == Presence::File {
            self.resolve(input, AccessOp::Read, syscall)?;
        }
        Ok(p)
    }

    /// Whether something exists at the path (invalid, hidden and refused paths do not).
    pub fn exists(&self, input: &str) -> bool {
        match self.resolve_found(input, "access") {
            Ok(p) => matches!(self.node(&p), Presence::File | Presence::Dir),
            Err(_) => false,
        }
    }

    /// Fails with `ENOENT` unless the path exists.
    pub fn access(&self, input: &str) -> FsResult<()> {
        let p = self.resolve_found(input, "access")?;
        match self.node(&p) {
            Presence::File | Presence::Dir => Ok(()),
            Presence::Missing => Err(FsError::sys("ENOENT", "access", &display(&p))),
            Presence::BlockedByFile => Err(FsError::sys("ENOTDIR", "access", &display(&p))),
        }
    }

    /// The canonical `~/...` form of an existing path.
    pub fn realpath(&self, input: &str) -> FsResult<String> {
        let p = self.resolve_found(input, "realpath")?;
        match self.node(&p) {
            Presence::File | Presence::Dir if p.is_empty() => Ok("~".into()),
            Presence::File | Presence::Dir => Ok(display(&p)),
            Presence::Missing => Err(FsError::sys("ENOENT", "realpath", &display(&p))),
            Presence::BlockedByFile => Err(FsError::sys("ENOTDIR", "realpath", &display(&p))),
        }
    }

    pub fn stat(&self, input: &str) -> FsResult<FsStat> {
        let p = self.resolve_found(input, "stat")?;
        let shown = display(&p);
        match self.node(&p) {
            Presence::Missing => Err(FsError::sys("ENOENT", "stat", &shown)),
            Presence::BlockedByFile => Err(FsError::sys("ENOTDIR", "stat", &shown)),
            Presence::File | Presence::Dir => {
                let s = self
                    .overlay
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
        let p = self.resolve(input, AccessOp::Traverse, "scandir")?;
        let shown = display(&p);
        match self.node(&p) {
            Presence::Dir => {}
            Presence::Missing => return Err(FsError::sys("ENOENT", "scandir", &shown)),
            Presence::File | Presence::BlockedByFile => {
                return Err(FsError::sys("ENOTDIR", "scandir", &shown))
            }
        }
        let skip = if p.is_empty() { 0 } else { p.len() + 1 };
        let entries = self
            .overlay
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
        let p = self.resolve(input, AccessOp::Write, "open")?;
        let shown = display(&p);
        match self.node(&p) {
            Presence::Dir => return Err(FsError::sys("EISDIR", "open", &shown)),
            Presence::BlockedByFile => return Err(FsError::sys("ENOTDIR", "open", &shown)),
            Presence::File if mode.exclusive => return Err(FsError::sys("EEXIST", "open", &shown)),
            Presence::File | Presence::Missing => {}
        }
        self.check_parent(&p, "open", &shown)?;
        self.overlay
            .write(&p, data, mode.append)
            .map_err(|e| Self::staged_error(e, "write", &shown))
    }

    /// Creates a folder. Returns, for `recursive`, the first folder created (as Node does).
    pub fn mkdir(&mut self, input: &str, recursive: bool) -> FsResult<Option<String>> {
        let p = self.resolve(input, AccessOp::Write, "mkdir")?;
        let shown = display(&p);
        match self.node(&p) {
            Presence::Dir if recursive => return Ok(None),
            Presence::Dir | Presence::File => return Err(FsError::sys("EEXIST", "mkdir", &shown)),
            Presence::BlockedByFile => return Err(FsError::sys("ENOTDIR", "mkdir", &shown)),
            Presence::Missing => {}
        }
        if !recursive {
            self.check_parent(&p, "mkdir", &shown)?;
        }
        let created = self
            .overlay
            .mkdir(&p, recursive)
            .map_err(|e| Self::staged_error(e, "mkdir", &shown))?;
        Ok(created.first().map(|c| display(c)))
    }

    /// Deletes a file (never a folder).
    pub fn unlink(&mut self, input: &str) -> FsResult<()> {
        let p = self.resolve(input, AccessOp::Write, "unlink")?;
        let shown = display(&p);
        match self.node(&p) {
            Presence::File => self
                .overlay
                .delete(&p, false)
                .map_err(|e| Self::tree_error(e, "unlink", &shown)),
            Presence::Dir => Err(FsError::sys("EISDIR", "unlink", &shown)),
            Presence::Missing => Err(FsError::sys("ENOENT", "unlink", &shown)),
            Presence::BlockedByFile => Err(FsError::sys("ENOTDIR", "unlink", &shown)),
        }
    }

    /// Deletes a folder; without `recursive` it must be empty.
    pub fn rmdir(&mut self, input: &str, recursive: bool) -> FsResult<()> {
        let p = self.resolve(input, AccessOp::Write, "rmdir")?;
        let shown = display(&p);
        match self.node(&p) {
            Presence::Dir if p.is_empty() => {
                Err(FsError::sys("EBUSY", "rmdir", &shown)
                    .hint("the workspace root cannot be removed"))
            }
            Presence::Dir => {
                if !recursive && !self.is_empty_dir(&p) {
                    return Err(FsError::sys("ENOTEMPTY", "rmdir", &shown));
                }
                self.overlay
                    .delete(&p, true)
                    .map_err(|e| Self::tree_error(e, "rmdir", &shown))
            }
            Presence::File | Presence::BlockedByFile => {
                Err(FsError::sys("ENOTDIR", "rmdir", &shown))
            }
            Presence::Missing => Err(FsError::sys("ENOENT", "rmdir", &shown)),
        }
    }

    /// `rm`: files, and folders with `recursive`; `force` ignores missing paths.
    pub fn rm(&mut self, input: &str, recursive: bool, force: bool) -> FsResult<()> {
        let p = self.resolve(input, AccessOp::Write, "lstat")?;
        let shown = display(&p);
        match self.node(&p) {
            Presence::Missing | Presence::BlockedByFile if force => Ok(()),
            Presence::Missing => Err(FsError::sys("ENOENT", "lstat", &shown)),
            Presence::BlockedByFile => Err(FsError::sys("ENOTDIR", "lstat", &shown)),
            Presence::Dir if p.is_empty() => Err(FsError::sys("EBUSY", "rm", &shown)
                .hint("the workspace root cannot be removed")),
            Presence::Dir if !recursive => Err(FsError {
                code: "ERR_FS_EISDIR",
                message: format!(
                    "Path is a directory: rm returned EISDIR (is a directory) {shown} (use {{ recursive: true }})"
                ),
                syscall: "rm",
                path: Some(shown.clone()),
                dest: None,
                type_error: false,
            }),
            Presence::Dir | Presence::File => self
                .overlay
                .delete(&p, true)
                .map_err(|e| Self::tree_error(e, "rm", &shown)),
        }
    }

    /// Whether folder `p` has no entries.
    fn is_empty_dir(&self, p: &str) -> bool {
        self.overlay
            .list(p, false)
            .map(|l| l.is_empty())
            .unwrap_or(true)
    }

    /// Moves a file or folder; an existing target is replaced under POSIX rules.
    pub fn rename(&mut self, from: &str, to: &str) -> FsResult<()> {
        let a = self.resolve(from, AccessOp::Write, "rename")?;
        let b = self.resolve(to, AccessOp::Write, "rename")?;
        let (sa, sb) = (display(&a), display(&b));
        let err = |code| FsError::sys2(code, "rename", &sa, &sb);
        let kind = match self.node(&a) {
            Presence::Missing => return Err(err("ENOENT")),
            Presence::BlockedByFile => return Err(err("ENOTDIR")),
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
            Presence::Dir => {}
            Presence::Missing => return Err(err("ENOENT")),
            Presence::File | Presence::BlockedByFile => return Err(err("ENOTDIR")),
        }
        match (kind, self.node(&b)) {
            (Presence::File, Presence::Dir) => return Err(err("EISDIR")),
            (Presence::Dir, Presence::File) => return Err(err("ENOTDIR")),
            (Presence::Dir, Presence::Dir) if !self.is_empty_dir(&b) => {
                return Err(err("ENOTEMPTY"))
            }
            _ => {}
        }
        self.overlay
            .rename(&a, &b)
            .map_err(|e| Self::staged_error(e, "rename", &sa))
    }

    /// Copies a file; with `exclusive` the target must not exist.
    pub fn copy_file(&mut self, from: &str, to: &str, exclusive: bool) -> FsResult<()> {
        let a = self.resolve(from, AccessOp::Read, "copyfile")?;
        let b = self.resolve(to, AccessOp::Write, "copyfile")?;
        let (sa, sb) = (display(&a), display(&b));
        let err = |code| FsError::sys2(code, "copyfile", &sa, &sb);
        match self.node(&a) {
            Presence::File => {}
            Presence::Dir => return Err(err("EISDIR")),
            Presence::Missing => return Err(err("ENOENT")),
            Presence::BlockedByFile => return Err(err("ENOTDIR")),
        }
        match self.node(&b) {
            Presence::Dir => return Err(err("EISDIR")),
            Presence::BlockedByFile => return Err(err("ENOTDIR")),
            Presence::File if exclusive => return Err(err("EEXIST")),
            _ => {}
        }
        match self.node(wpath::parent(&b).unwrap_or("")) {
            Presence::Dir => {}
            Presence::Missing => return Err(err("ENOENT")),
            Presence::File | Presence::BlockedByFile => return Err(err("ENOTDIR")),
        }
        self.overlay
            .copy_file(&a, &b)
            .map_err(|e| Self::staged_error(e, "copyfile", &sb))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::access::testing::Policy;
    use crate::workspace::{Access, Vfs, Workspace, WriteQuota};

    fn host() -> FsHost {
        let mut w = Workspace::new();
        w.set_clock(|| 1_000);
        w.write_file("src/a.txt", b"alpha", true).unwrap();
        w.write_file("keep.txt", b"k", false).unwrap();
        w.mkdir("empty", false).unwrap();
        FsHost::new(w.stage(WriteQuota::default()))
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
        assert_eq!(
            h.resolve("~/src/a.txt", AccessOp::Read, "open").unwrap(),
            "src/a.txt"
        );
        assert_eq!(
            h.resolve("./src/../keep.txt", AccessOp::Read, "open")
                .unwrap(),
            "keep.txt"
        );
        assert_eq!(
            h.resolve("/keep.txt", AccessOp::Read, "open").unwrap(),
            "keep.txt"
        );
        assert_eq!(code(h.resolve("../x", AccessOp::Read, "open")), "EACCES");
        assert_eq!(
            code(h.resolve("~/a/../../x", AccessOp::Read, "open")),
            "EACCES"
        );
        assert_eq!(
            code(h.resolve(".time/log.json", AccessOp::Read, "open")),
            "EACCES"
        );
        assert_eq!(code(h.resolve("a\\b", AccessOp::Read, "open")), "EINVAL");
        assert_eq!(code(h.resolve("C:/x", AccessOp::Read, "open")), "EINVAL");
        let nul = h.resolve("a\0b", AccessOp::Read, "open").unwrap_err();
        assert_eq!(nul.code, "ERR_INVALID_ARG_VALUE");
        assert!(nul.type_error);
        let long = "a/".repeat(100);
        assert_eq!(
            code(h.resolve(&long, AccessOp::Read, "open")),
            "ENAMETOOLONG"
        );
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
        let mut h = host_over(
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
        let mut h = host_over(
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

    fn host_over(snapshot: Vfs, quota: WriteQuota) -> FsHost {
        FsHost::new(Overlay::new(snapshot, Access::default(), quota))
    }

    #[test]
    fn paths_refused_by_the_access_rules_are_eacces() {
        let mut w = Workspace::new();
        w.write_file("ro/a.txt", b"a", true).unwrap();
        w.set_access(Access::new(Policy));
        let mut h = FsHost::new(w.stage(WriteQuota::default()));
        assert_eq!(h.read("ro/a.txt").unwrap(), b"a");
        assert!(h.exists("ro/a.txt"));
        let e = h.write("ro/b.txt", b"b", W).unwrap_err();
        assert_eq!(e.code, "EACCES");
        assert_eq!(
            e.message,
            "EACCES: permission denied, open 'ro/b.txt' (~/ro/b.txt is off limits)"
        );
        assert_eq!(code(h.rm("ro", true, false)), "EACCES");
        assert_eq!(code(h.rename("ro/a.txt", "b.txt")), "EACCES");
        h.copy_file("ro/a.txt", "b.txt", false).unwrap();
        assert_eq!(h.changes().len(), 1);
    }
}
