//! Workspace path rules.
//!
//! Paths are POSIX-style and rooted at the workspace root. `~/x`, `/x` and `x` all name
//! the same entry. The normalized form has no leading or trailing slash and no `.` or
//! empty segments: `a/b/c`. The root itself normalizes to the empty string.
//!
//! Refused with `PATH_INVALID`: NUL bytes, backslashes, drive letters (`C:`), `..` that
//! would climb above the root, paths longer than [`MAX_PATH_LEN`] bytes or deeper than
//! [`MAX_DEPTH`] segments, and (for public operations) the hidden history area
//! [`HIDDEN_ROOT`].

use super::error::{WsError, WsResult};

/// First segment of the hidden history area. No public operation can reach it.
pub const HIDDEN_ROOT: &str = ".time";
/// Longest normalized path, in bytes.
pub const MAX_PATH_LEN: usize = 1024;
/// Deepest normalized path, in segments.
pub const MAX_DEPTH: usize = 64;

/// Normalizes `input` to the canonical `a/b/c` form, refusing the hidden area.
///
/// This is the form every public operation uses.
pub fn normalize(input: &str) -> WsResult<String> {
    let path = normalize_any(input)?;
    if is_hidden(&path) {
        return Err(WsError::path_invalid(format!(
            "{} is reserved for workspace history and cannot be used",
            display(&path)
        )));
    }
    Ok(path)
}

/// Normalizes `input` like [`normalize`] but allows the hidden area.
pub fn normalize_any(input: &str) -> WsResult<String> {
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
pub fn is_drive(segment: &str) -> bool {
    let bytes = segment.as_bytes();
    bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':'
}

/// Whether a normalized path lies in the hidden history area.
pub fn is_hidden(path: &str) -> bool {
    path.split('/').next() == Some(HIDDEN_ROOT)
}

/// Number of segments in a normalized path (the root has depth 0).
pub fn depth(path: &str) -> usize {
    if path.is_empty() {
        0
    } else {
        path.split('/').count()
    }
}

/// Parent of a normalized path; `None` for the root.
pub fn parent(path: &str) -> Option<&str> {
    if path.is_empty() {
        return None;
    }
    Some(path.rfind('/').map_or("", |i| &path[..i]))
}

/// Last segment of a normalized path (empty for the root).
pub fn file_name(path: &str) -> &str {
    path.rfind('/').map_or(path, |i| &path[i + 1..])
}

/// Joins a normalized directory and a single name.
pub fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

/// Proper ancestors of a normalized path, shallowest first, excluding the root.
///
/// `ancestors("a/b/c")` yields `a` then `a/b`.
pub fn ancestors(path: &str) -> impl Iterator<Item = &str> {
    path.match_indices('/').map(move |(i, _)| &path[..i])
}

/// Whether `path` is `root` itself or lies below it (every path is within the root `""`).
pub fn is_within(path: &str, root: &str) -> bool {
    root.is_empty()
        || path == root
        || (path.len() > root.len()
            && path.starts_with(root)
            && path.as_bytes()[root.len()] == b'/')
}

/// The form shown to people and models: `~/a/b` (the root is `~/`).
pub fn display(path: &str) -> String {
    format!("~/{path}")
}

#[cfg(test)]
mod tests {
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
    fn helpers() {
        assert_eq!(parent("a/b/c"), Some("a/b"));
        assert_eq!(parent("a"), Some(""));
        assert_eq!(parent(""), None);
        assert_eq!(file_name("a/b/c.txt"), "c.txt");
        assert_eq!(file_name("a"), "a");
        assert_eq!(join("", "a"), "a");
        assert_eq!(join("a/b", "c"), "a/b/c");
        assert_eq!(ancestors("a/b/c").collect::<Vec<_>>(), vec!["a", "a/b"]);
        assert_eq!(ancestors("a").count(), 0);
        assert!(is_within("a/b", "a"));
        assert!(is_within("a", "a"));
        assert!(is_within("a", ""));
        assert!(!is_within("ab", "a"));
        assert!(!is_within("a", "a/b"));
        assert_eq!(depth(""), 0);
        assert_eq!(depth("a/b"), 2);
        assert_eq!(display("a/b"), "~/a/b");
        assert!(is_hidden(".time"));
        assert!(is_hidden(".time/x"));
        assert!(!is_hidden("x/.time"));
    }
}
