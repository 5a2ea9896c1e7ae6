//! What differs between two trees: the changes a session proposes (its staged copy against the
//! world) and the batch that commits them.

use std::sync::Arc;

use super::text::{is_binary, write_unified_diff, DiffText};
use super::vfs::{Content, Vfs};

/// How a path differs between two trees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    /// Only in the newer tree.
    Create,
    /// In both, with other contents (or a file became a folder, or the reverse).
    Modify,
    /// Only in the older tree.
    Delete,
}

impl ChangeKind {
    /// The name the JavaScript surface uses.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Create => "create",
            ChangeKind::Modify => "modify",
            ChangeKind::Delete => "delete",
        }
    }
}

/// One path that differs between two trees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathChange {
    /// Normalized path.
    pub path: String,
    /// Created, modified or deleted.
    pub kind: ChangeKind,
    /// The state in the older tree (`None`: absent).
    pub before: Option<Content>,
    /// The state in the newer tree (`None`: absent).
    pub after: Option<Content>,
}

impl PathChange {
    /// Whether either side is a folder.
    pub fn is_dir(&self) -> bool {
        matches!(self.before, Some(Content::Dir)) || matches!(self.after, Some(Content::Dir))
    }

    /// A unified diff with 3 lines of context when both sides are text (absent counts as
    /// empty), cut at `limit` bytes; `None` for folders and binary files.
    pub fn text_diff(&self, limit: usize) -> Option<String> {
        let text = |c: &Option<Content>| -> Option<String> {
            match c {
                None => Some(String::new()),
                Some(Content::Dir) => None,
                Some(Content::File(data)) if is_binary(data) => None,
                Some(Content::File(data)) => std::str::from_utf8(data).ok().map(str::to_string),
            }
        };
        let (old, new) = (text(&self.before)?, text(&self.after)?);
        let old_name = if self.before.is_some() {
            format!("a/{}", self.path)
        } else {
            "/dev/null".into()
        };
        let new_name = if self.after.is_some() {
            format!("b/{}", self.path)
        } else {
            "/dev/null".into()
        };
        let mut out = DiffText::new(limit);
        write_unified_diff(&mut out, &old_name, &new_name, &old, &new, 3);
        Some(out.into_string())
    }
}

/// Every path whose state differs from `older` to `newer`, sorted by path.
pub(super) fn between(older: &Vfs, newer: &Vfs) -> Vec<PathChange> {
    let mut out = Vec::new();
    let mut a = older.contents().peekable();
    let mut b = newer.contents().peekable();
    loop {
        let change = match (a.peek(), b.peek()) {
            (None, None) => break,
            (Some(_), None) => a.next().map(|(p, c)| (p, Some(c), None)),
            (None, Some(_)) => b.next().map(|(p, c)| (p, None, Some(c))),
            (Some((pa, _)), Some((pb, _))) => match pa.cmp(pb) {
                std::cmp::Ordering::Less => a.next().map(|(p, c)| (p, Some(c), None)),
                std::cmp::Ordering::Greater => b.next().map(|(p, c)| (p, None, Some(c))),
                std::cmp::Ordering::Equal => {
                    let (p, before) = a.next().unzip();
                    let after = b.next().map(|(_, c)| c);
                    p.map(|p| (p, before, after))
                }
            },
        };
        let Some((p, before, after)) = change else {
            break;
        };
        if same(&before, &after) {
            continue;
        }
        let kind = match (&before, &after) {
            (None, _) => ChangeKind::Create,
            (_, None) => ChangeKind::Delete,
            _ => ChangeKind::Modify,
        };
        out.push(PathChange {
            path: p.to_string(),
            kind,
            before,
            after,
        });
    }
    out
}

fn same(a: &Option<Content>, b: &Option<Content>) -> bool {
    match (a, b) {
        (Some(Content::File(x)), Some(Content::File(y))) => Arc::ptr_eq(x, y) || x == y,
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use crate::workspace::{ChangeKind, PathRulesSpec, Workspace, WsCode};

    fn ws() -> Workspace {
        let mut w = Workspace::new();
        w.set_clock(|| 1_000);
        w
    }

    fn kinds(changes: &[super::PathChange]) -> Vec<(String, ChangeKind)> {
        changes.iter().map(|c| (c.path.clone(), c.kind)).collect()
    }

    #[test]
    fn a_fork_reports_what_changed_and_its_changes_land_as_one_entry() {
        let mut base = ws();
        assert!(base.write_file("src/a.js", b"one\ntwo\n", true).is_ok());
        assert!(base.write_file("old.txt", b"bye", true).is_ok());
        let mut work = base.fork();
        assert!(work.write_file("src/a.js", b"one\n2\n", true).is_ok());
        assert!(work.write_file("new/b.txt", b"hi", true).is_ok());
        assert!(work.delete("old.txt", false).is_ok());
        assert_eq!(
            base.read_file("src/a.js").ok(),
            Some(&b"one\ntwo\n"[..]),
            "base untouched"
        );

        let changes = work.changes_since(&base);
        assert_eq!(
            kinds(&changes),
            vec![
                ("new".into(), ChangeKind::Create),
                ("new/b.txt".into(), ChangeKind::Create),
                ("old.txt".into(), ChangeKind::Delete),
                ("src/a.js".into(), ChangeKind::Modify),
            ]
        );
        assert_eq!(work.glob("*.js").ok(), Some(vec!["src/a.js".to_string()]));
        assert_eq!(work.glob("**/*").map(|v| v.len()).ok(), Some(2));
        assert_eq!(work.glob("/b.txt").ok(), Some(vec![]), "anchored");
        let diff = changes[3].text_diff(10_000).expect("text");
        assert!(diff.contains("-two") && diff.contains("+2"), "{diff}");
        assert!(changes[0].text_diff(100).is_none(), "folders have no diff");

        let before = base.history(10).len();
        let id = base.apply_changes(&changes, "commit").expect("apply");
        assert!(id.is_some());
        assert_eq!(base.history(10).len(), before + 1, "one entry");
        assert!(base.vfs() == work.vfs());
        assert!(base.undo(1).is_ok());
        assert_eq!(base.read_file("old.txt").ok(), Some(&b"bye"[..]));
        assert!(!base.exists("new/b.txt"));
    }

    #[test]
    fn a_fork_keeps_the_path_rules_and_applying_onto_a_moved_base_is_all_or_nothing() {
        let mut base = ws();
        let rules = PathRulesSpec {
            read_patterns: Some(vec!["**".into()]),
            write_patterns: Some(vec!["src/**".into()]),
            read_only: false,
        };
        assert!(base.set_path_rules(Some(rules)).is_ok());
        let mut work = base.fork();
        let refused = work
            .write_file("etc/passwd", b"x", true)
            .expect_err("rules");
        assert_eq!(refused.code, WsCode::PolicyViolation);
        assert!(work.write_file("src/x/y.txt", b"y", true).is_ok());
        let changes = work.changes_since(&base);

        assert!(base.set_path_rules(None).is_ok());
        assert!(base.write_file("src", b"now a file", true).is_ok());
        let snapshot = base.vfs().clone();
        let e = base
            .apply_changes(&changes, "commit")
            .expect_err("src is now a file");
        assert_eq!(e.code, WsCode::Conflict);
        assert!(e.message.contains("~/src"), "{}", e.message);
        assert!(base.vfs() == &snapshot, "unchanged");

        let mut other = ws();
        assert!(other.write_file("src/x/y.txt", b"y", true).is_ok());
        assert!(other.write_file("keep.txt", b"k", true).is_ok());
        let id = other
            .apply_changes(&changes, "same change")
            .expect("already applied");
        assert_eq!(id, None, "nothing left to change");
    }
}
