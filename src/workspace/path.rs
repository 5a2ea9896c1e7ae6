//! Helpers for normalized workspace paths (`a/b/c`, the root is `""`): parents, names,
//! ancestors and the form shown to people. The rules that make a path normalized, and every
//! check of who may use it, live in [`super::access`].

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
    }
}
