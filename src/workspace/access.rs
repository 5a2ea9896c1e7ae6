//! The one place where workspace paths are checked.
//!
//! Paths are POSIX-style and rooted at the workspace root. `~/x`, `/x` and `x` all name
//! the same entry. The normalized form has no leading or trailing slash and no `.` or
//! empty segments: `a/b/c`. The root itself normalizes to the empty string.
//!
//! Refused with `PATH_INVALID`: NUL bytes, backslashes, drive letters (`C:`), `..` that
//! would climb above the root, paths longer than [`MAX_PATH_LEN`] bytes or deeper than
//! [`MAX_DEPTH`] segments, and the hidden history area [`HIDDEN_ROOT`].
//!
//! On top of those fixed rules, an [`Access`] carries pluggable [`AccessRules`]: a hook that
//! sees every path a caller reads or writes, after normalization. The workspace API
//! ([`super::Workspace`]), the staged overlay ([`super::overlay::Overlay`]) and through it the
//! sandbox `fs` shim and module loader all resolve their paths with [`Access::resolve`], so a
//! rule plugged in here applies to all of them. The default, [`AllowVisible`], allows every
//! path the fixed rules allow.

use std::fmt;
use std::sync::Arc;

use super::error::{WsError, WsResult};
use super::path::{depth, display};

/// First segment of the hidden history area. No public operation can reach it.
pub const HIDDEN_ROOT: &str = ".time";
/// Longest normalized path, in bytes.
pub const MAX_PATH_LEN: usize = 1024;
/// Deepest normalized path, in segments.
pub const MAX_DEPTH: usize = 64;

/// Normalizes `input` to the canonical `a/b/c` form, refusing the hidden area.
///
/// These are the fixed rules of [`Access::resolve`], without the pluggable ones: the tree
/// itself and the history log use it for paths that no caller chose.
pub(crate) fn normalize(input: &str) -> WsResult<String> {
    let path = normalize_any(input)?;
    if is_hidden(&path) {
        return Err(hidden_error(&path));
    }
    Ok(path)
}

/// Normalizes `input` like [`normalize`] but allows the hidden area.
pub(crate) fn normalize_any(input: &str) -> WsResult<String> {
    if input.contains('\0') {
        return Err(WsError::path_invalid(format!(
            "path {:?} contains a NUL byte",
            input.replace('\0', "\\0")
        )));
    }
    if input.contains('\\') {
        return Err(WsError::path_invalid(format!(
            "path {input:?} contains a backslash; use '/' to separate folders"
        )));
    }
    let rest = if input == "~" {
        ""
    } else if let Some(rest) = input.strip_prefix("~/") {
        rest
    } else {
        input
    };
    let mut segments: Vec<&str> = Vec::new();
    for (index, segment) in rest.split('/').filter(|s| !s.is_empty()).enumerate() {
        if index == 0 && is_drive(segment) {
            return Err(WsError::path_invalid(format!(
                "path {input:?} starts with a drive letter; workspace paths look like ~/dir/file.txt"
            )));
        }
        match segment {
            "." => {}
            ".." => {
                if segments.pop().is_none() {
                    return Err(WsError::path_invalid(format!(
                        "path {input:?} climbs above the workspace root"
                    )));
                }
            }
            other => segments.push(other),
        }
    }
    if segments.first().is_some_and(|s| is_drive(s)) {
        return Err(WsError::path_invalid(format!(
            "path {input:?} resolves to a drive letter"
        )));
    }
    let path = segments.join("/");
    check_size(&path, input)?;
    Ok(path)
}

fn check_size(path: &str, input: &str) -> WsResult<()> {
    if path.len() > MAX_PATH_LEN {
        return Err(WsError::path_invalid(format!(
            "path is {} bytes long; the limit is {MAX_PATH_LEN}",
            path.len()
        )));
    }
    let depth = depth(path);
    if depth > MAX_DEPTH {
        let shown: String = input.chars().take(60).collect();
        return Err(WsError::path_invalid(format!(
            "path {shown:?}... is {depth} folders deep; the limit is {MAX_DEPTH}"
        )));
    }
    Ok(())
}

/// Whether `segment` looks like a Windows drive (`C:` or `C:name`).
pub(crate) fn is_drive(segment: &str) -> bool {
    let bytes = segment.as_bytes();
    bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':'
}

/// Whether a normalized path lies in the hidden history area.
pub(crate) fn is_hidden(path: &str) -> bool {
    path.split('/').next() == Some(HIDDEN_ROOT)
}

/// What a caller wants to do with a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AccessOp {
    /// Read a file's content, search it, import it as a module.
    Read,
    /// List a folder, or stat or test the existence of a path (a file found there must then
    /// also pass [`AccessOp::Read`]).
    Traverse,
    /// Create, change or delete a file or folder.
    Write,
}

/// A rule on which normalized, visible paths may be read or written. Implementations refuse
/// with the error the caller should see (for instance `PATH_INVALID` with a message that says
/// which rule refused).
pub trait AccessRules: Send + Sync + fmt::Debug {
    /// `Ok` if `op` may use `path` (normalized, never in the hidden area).
    fn check(&self, op: AccessOp, path: &str) -> WsResult<()>;

    /// Whether listings and searches show `path` (normalized, never in the hidden area), a
    /// folder when `is_dir`.
    fn visible(&self, path: &str, is_dir: bool) -> bool {
        let op = if is_dir {
            AccessOp::Traverse
        } else {
            AccessOp::Read
        };
        self.check(op, path).is_ok()
    }
}

/// The default rules: every visible path may be read and written.
#[derive(Debug, Default, Clone, Copy)]
pub struct AllowVisible;

impl AccessRules for AllowVisible {
    fn check(&self, _op: AccessOp, _path: &str) -> WsResult<()> {
        Ok(())
    }
}

/// Which rule refused a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// The path cannot be normalized: NUL, backslash, drive letter, an escape above the root,
    /// too long or too deep.
    Malformed,
    /// The path lies in the hidden history area.
    Hidden,
    /// The pluggable [`AccessRules`] refused it.
    Denied,
}

/// A refused path: which rule refused it, and the error to report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// Which rule refused the path.
    pub why: Refused,
    /// What to tell the caller.
    pub error: WsError,
}

impl From<Refusal> for WsError {
    fn from(r: Refusal) -> Self {
        r.error
    }
}

/// The path rules in force: the fixed ones of this module plus pluggable [`AccessRules`].
#[derive(Clone, Debug)]
pub struct Access {
    rules: Arc<dyn AccessRules>,
}

impl Default for Access {
    fn default() -> Self {
        Access::new(AllowVisible)
    }
}

/// Two sets of rules that must both allow a path: a host's rules narrowed by a session's.
#[derive(Debug)]
struct Both {
    outer: Arc<dyn AccessRules>,
    inner: Arc<dyn AccessRules>,
}

impl AccessRules for Both {
    fn check(&self, op: AccessOp, path: &str) -> WsResult<()> {
        self.outer.check(op, path)?;
        self.inner.check(op, path)
    }

    fn visible(&self, path: &str, is_dir: bool) -> bool {
        self.outer.visible(path, is_dir) && self.inner.visible(path, is_dir)
    }
}

impl Access {
    /// These rules narrowed by `rules`: a path must pass both.
    pub fn narrowed(&self, rules: impl AccessRules + 'static) -> Access {
        Access {
            rules: Arc::new(Both {
                outer: Arc::clone(&self.rules),
                inner: Arc::new(rules),
            }),
        }
    }

    /// The fixed rules plus `rules`.
    pub fn new(rules: impl AccessRules + 'static) -> Self {
        Access {
            rules: Arc::new(rules),
        }
    }

    /// Normalizes `input` and checks it for `op`: the fixed rules first, then the pluggable
    /// ones. Returns the normalized path.
    pub fn resolve(&self, op: AccessOp, input: &str) -> Result<String, Refusal> {
        let p = normalize_any(input).map_err(|error| Refusal {
            why: Refused::Malformed,
            error,
        })?;
        if is_hidden(&p) {
            return Err(Refusal {
                why: Refused::Hidden,
                error: hidden_error(&p),
            });
        }
        self.rules.check(op, &p).map_err(|error| Refusal {
            why: Refused::Denied,
            error,
        })?;
        Ok(p)
    }

    /// Whether listings and searches show the normalized `path` (a folder when `is_dir`).
    pub fn visible(&self, path: &str, is_dir: bool) -> bool {
        !is_hidden(path) && self.rules.visible(path, is_dir)
    }

    /// Whether `op` may use `input` (see [`Access::resolve`]).
    pub fn allows(&self, op: AccessOp, input: &str) -> bool {
        self.resolve(op, input).is_ok()
    }
}

fn hidden_error(p: &str) -> WsError {
    WsError::path_invalid(format!(
        "{} is reserved for workspace history and cannot be used",
        display(p)
    ))
}

/// Access rules for tests.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;

    /// Refuses writes at or below `ro` and any use of `secret`, saying `~/<path> is off limits`.
    #[derive(Debug)]
    pub(crate) struct Policy;

    impl AccessRules for Policy {
        fn check(&self, op: AccessOp, path: &str) -> WsResult<()> {
            let read_only = path == "ro" || path.starts_with("ro/");
            if (op == AccessOp::Write && read_only) || path == "secret" {
                return Err(WsError::path_invalid(format!(
                    "{} is off limits",
                    display(path)
                )));
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testing::Policy;
    use super::*;
    use crate::workspace::error::WsCode;

    fn norm(s: &str) -> String {
        match normalize(s) {
            Ok(p) => p,
            Err(e) => panic!("{s:?} should normalize: {e}"),
        }
    }

    fn refused(s: &str) -> WsError {
        match normalize(s) {
            Ok(p) => panic!("{s:?} should be refused, got {p:?}"),
            Err(e) => e,
        }
    }

    #[test]
    fn tilde_slash_and_bare_are_the_same() {
        assert_eq!(norm("~/x"), "x");
        assert_eq!(norm("/x"), "x");
        assert_eq!(norm("x"), "x");
        assert_eq!(norm("~/a/b/c.txt"), "a/b/c.txt");
        assert_eq!(norm("/a/b/c.txt"), "a/b/c.txt");
    }

    #[test]
    fn root_forms() {
        for root in ["", "~", "~/", "/", "//", ".", "./", "~/.", "a/.."] {
            assert_eq!(norm(root), "", "{root:?}");
        }
    }

    #[test]
    fn dots_and_empty_segments() {
        assert_eq!(norm("./a/./b/"), "a/b");
        assert_eq!(norm("a//b///c"), "a/b/c");
        assert_eq!(norm("a/../b"), "b");
        assert_eq!(norm("a/b/../../c"), "c");
        assert_eq!(norm("~/a/b/.."), "a");
        assert_eq!(norm("..."), "...");
        assert_eq!(norm("a/..b"), "a/..b");
        assert_eq!(norm("~foo/bar"), "~foo/bar");
        assert_eq!(norm("~/~"), "~");
    }

    #[test]
    fn escapes_are_refused() {
        for p in [
            "..",
            "../x",
            "~/../x",
            "/..",
            "a/../../b",
            "a/b/../../../c",
            "./..",
        ] {
            let e = refused(p);
            assert_eq!(e.code, WsCode::PathInvalid, "{p}");
            assert!(e.message.contains("root"), "{}", e.message);
        }
    }

    #[test]
    fn nul_backslash_drive_refused() {
        assert_eq!(refused("a\0b").code, WsCode::PathInvalid);
        assert_eq!(refused("a\\b").code, WsCode::PathInvalid);
        assert_eq!(refused("..\\..\\x").code, WsCode::PathInvalid);
        assert_eq!(refused("C:").code, WsCode::PathInvalid);
        assert_eq!(refused("C:/Windows").code, WsCode::PathInvalid);
        assert_eq!(refused("c:foo").code, WsCode::PathInvalid);
        assert_eq!(refused("~/D:/x").code, WsCode::PathInvalid);
        assert_eq!(refused("/C:/x").code, WsCode::PathInvalid);
        assert_eq!(refused("a/../C:").code, WsCode::PathInvalid);
        // A colon deeper in the path is an ordinary POSIX name.
        assert_eq!(norm("dir/C:"), "dir/C:");
        assert_eq!(norm("a1:b"), "a1:b");
    }

    #[test]
    fn hidden_area_refused_everywhere() {
        for p in [
            ".time",
            "~/.time",
            "/.time/log.json",
            ".time/",
            "a/../.time/x",
            "./.time",
        ] {
            let e = refused(p);
            assert_eq!(e.code, WsCode::PathInvalid, "{p}");
            assert!(e.message.contains("history"), "{}", e.message);
        }
        // Only the first segment is special.
        assert_eq!(norm("a/.time"), "a/.time");
        assert_eq!(norm(".timex"), ".timex");
        assert_eq!(
            normalize_any("~/.time/log.json").as_deref(),
            Ok(".time/log.json")
        );
    }

    #[test]
    fn length_and_depth_limits() {
        let long = "a".repeat(MAX_PATH_LEN + 1);
        assert_eq!(refused(&long).code, WsCode::PathInvalid);
        assert_eq!(norm(&"a".repeat(MAX_PATH_LEN)).len(), MAX_PATH_LEN);
        let deep = vec!["d"; MAX_DEPTH + 1].join("/");
        assert_eq!(refused(&deep).code, WsCode::PathInvalid);
        let ok = vec!["d"; MAX_DEPTH].join("/");
        assert_eq!(depth(&norm(&ok)), MAX_DEPTH);
    }

    #[test]
    fn only_the_first_segment_is_hidden() {
        assert!(is_hidden(".time"));
        assert!(is_hidden(".time/x"));
        assert!(!is_hidden("x/.time"));
    }

    #[test]
    fn the_default_allows_every_visible_path() -> WsResult<()> {
        let a = Access::default();
        assert_eq!(a.resolve(AccessOp::Write, "~/a/./b/../c")?, "a/c");
        assert_eq!(a.resolve(AccessOp::Read, "~")?, "");
        assert!(a.allows(AccessOp::Read, "secret"));
        Ok(())
    }

    #[test]
    fn refusals_say_which_rule_refused() {
        let a = Access::new(Policy);
        let why = |op, p: &str| a.resolve(op, p).map_err(|r| r.why);
        assert_eq!(why(AccessOp::Read, "../x"), Err(Refused::Malformed));
        assert_eq!(why(AccessOp::Read, "a\\b"), Err(Refused::Malformed));
        assert_eq!(
            why(AccessOp::Read, "~/.time/log.json"),
            Err(Refused::Hidden)
        );
        assert_eq!(why(AccessOp::Write, "/ro/x.txt"), Err(Refused::Denied));
        assert_eq!(why(AccessOp::Read, "ro/x.txt"), Ok("ro/x.txt".to_string()));
        assert_eq!(why(AccessOp::Read, "./secret"), Err(Refused::Denied));
        assert!(!a.allows(AccessOp::Write, "ro"));
        let e = WsError::from(
            a.resolve(AccessOp::Write, "ro/a/../b")
                .err()
                .unwrap_or_else(|| panic!("ro/b should be refused")),
        );
        assert_eq!(e.code, WsCode::PathInvalid);
        assert_eq!(e.message, "~/ro/b is off limits");
        // The fixed rules come first: the hook never sees hidden or malformed paths.
        let e = a
            .resolve(AccessOp::Read, ".time")
            .err()
            .map(|r| r.error.message);
        assert!(e.unwrap_or_default().contains("history"));
    }
}
