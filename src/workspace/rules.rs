//! Path rules a host sets on a workspace: which paths may be read and which written, as
//! gitignore-style globs (the `globset` crate), plus a read-only switch. They plug into
//! [`super::access::Access`], so the workspace API, the tools built on it, the sandbox `fs` of
//! workspace programs and the module loader all pass the same check.
//!
//! Pattern syntax, over workspace paths (`src/app.js`; a leading `~/` or `/` anchors at the
//! root): `*` and `?` stay within one folder name, `**` spans folders, `[abc]` and `{a,b}` as
//! usual. A pattern without a `/` matches a name at any depth (`*.md`), as in `.gitignore`.
//! A pattern also covers everything below what it matches (`docs` covers `docs/a/b.md`).

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};

use super::access::{AccessOp, AccessRules};
use super::error::{WsError, WsResult};
use super::path::display;

/// Most patterns in one list.
pub const MAX_PATTERNS: usize = 256;
/// Longest pattern, in bytes.
pub const MAX_PATTERN_LEN: usize = 1024;

/// One list of patterns, compiled.
#[derive(Debug, Clone)]
struct Patterns {
    /// As the host wrote them, for messages.
    written: Vec<String>,
    set: GlobSet,
    /// For each pattern, the folders before its first wildcard (`src/lib` for `src/lib/**/*.js`;
    /// empty when it starts with a wildcard): the folders a reader passes through to reach it.
    literal_prefixes: Vec<String>,
}

impl Patterns {
    fn compile(list: &[String], name: &str) -> WsResult<Patterns> {
        if list.len() > MAX_PATTERNS {
            return Err(WsError::invalid_input(format!(
                "{name} has {} patterns; the limit is {MAX_PATTERNS}",
                list.len()
            )));
        }
        let mut builder = GlobSetBuilder::new();
        let mut literal_prefixes = Vec::with_capacity(list.len());
        for written in list {
            if written.len() > MAX_PATTERN_LEN || written.contains('\0') {
                return Err(WsError::invalid_input(format!(
                    "{name} holds a pattern longer than {MAX_PATTERN_LEN} bytes or with a NUL byte"
                )));
            }
            let anchored = written.starts_with('/') || written.starts_with("~/");
            let body = written
                .trim_start_matches("~/")
                .trim_start_matches('/')
                .trim_end_matches('/');
            if body.is_empty() || body.split('/').any(|s| s == "..") {
                return Err(WsError::invalid_input(format!(
                    "{name}: {written:?} is not a usable pattern (empty, or with '..')"
                )));
            }
            // gitignore: a pattern with no slash inside matches a name at any depth.
            let pattern = if !anchored && !body.contains('/') {
                format!("**/{body}")
            } else {
                body.to_string()
            };
            for p in [pattern.clone(), format!("{pattern}/**")] {
                builder.add(glob(&p).map_err(|e| {
                    WsError::invalid_input(format!("{name}: {written:?} is not a valid glob: {e}"))
                })?);
            }
            literal_prefixes.push(literal_prefix(&pattern));
        }
        let set = builder
            .build()
            .map_err(|e| WsError::invalid_input(format!("{name} cannot be compiled: {e}")))?;
        Ok(Patterns {
            written: list.to_vec(),
            set,
            literal_prefixes,
        })
    }

    fn matches(&self, path: &str) -> bool {
        self.set.is_match(path)
    }

    /// Whether folder `dir` lies on the way to something a pattern can match: above a
    /// pattern's literal folders, or inside them where its wildcards begin (a folder there may
    /// hold nothing readable; listing it then shows nothing).
    fn leads_to(&self, dir: &str) -> bool {
        let below = |a: &str, b: &str| a.strip_prefix(b).is_some_and(|rest| rest.starts_with('/'));
        self.literal_prefixes.iter().any(|prefix| {
            dir.is_empty()
                || prefix.is_empty()
                || prefix == dir
                || below(prefix, dir)
                || below(dir, prefix)
        })
    }

    fn shown(&self) -> String {
        let mut list: Vec<String> = self.written.iter().take(8).cloned().collect();
        if self.written.len() > 8 {
            list.push(format!("... {} more", self.written.len() - 8));
        }
        format!("[{}]", list.join(", "))
    }
}

fn glob(pattern: &str) -> Result<Glob, globset::Error> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
}

fn literal_prefix(pattern: &str) -> String {
    let is_wild = |s: &str| s.contains(['*', '?', '[', '{', '\\']);
    pattern
        .split('/')
        .take_while(|s| !is_wild(s))
        .collect::<Vec<_>>()
        .join("/")
}

/// A compiled file pattern with the rules' gitignore-style meaning (`*.js` at any depth, `**`
/// across folders, a leading `/` or `~/` anchors at the root), for listing by glob.
#[derive(Debug, Clone)]
pub struct PathPattern(Patterns);

impl PathPattern {
    /// Compiles `pattern`; `INVALID_INPUT` when it is not a usable glob.
    pub fn new(pattern: &str) -> WsResult<Self> {
        Ok(PathPattern(Patterns::compile(
            &[pattern.to_string()],
            "pattern",
        )?))
    }

    /// Whether the normalized `path` matches.
    pub fn matches(&self, path: &str) -> bool {
        self.0.matches(path)
    }
}

/// What a host allows: `None` for a list means "no restriction of that kind".
#[derive(Debug, Clone)]
pub struct PathRules {
    read: Option<Patterns>,
    write: Option<Patterns>,
    read_only: bool,
}

/// The rules as the host wrote them (what `accessRules()` gives back).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PathRulesSpec {
    pub read_patterns: Option<Vec<String>>,
    pub write_patterns: Option<Vec<String>>,
    pub read_only: bool,
}

impl PathRules {
    /// Compiles `spec`; `INVALID_INPUT` names the pattern that is not a glob.
    pub fn new(spec: &PathRulesSpec) -> WsResult<PathRules> {
        Ok(PathRules {
            read: spec
                .read_patterns
                .as_deref()
                .map(|l| Patterns::compile(l, "readPatterns"))
                .transpose()?,
            write: spec
                .write_patterns
                .as_deref()
                .map(|l| Patterns::compile(l, "writePatterns"))
                .transpose()?,
            read_only: spec.read_only,
        })
    }

    /// The rules as written.
    pub fn spec(&self) -> PathRulesSpec {
        PathRulesSpec {
            read_patterns: self.read.as_ref().map(|p| p.written.clone()),
            write_patterns: self.write.as_ref().map(|p| p.written.clone()),
            read_only: self.read_only,
        }
    }

    fn readable(&self, path: &str) -> bool {
        self.read.as_ref().is_none_or(|p| p.matches(path))
    }

    /// A folder may be listed when it is readable or lies on the way to something readable.
    fn traversable(&self, path: &str) -> bool {
        self.read
            .as_ref()
            .is_none_or(|p| p.matches(path) || p.leads_to(path))
    }

    fn refuse_read(&self, path: &str) -> WsError {
        let shown = self.read.as_ref().map(Patterns::shown).unwrap_or_default();
        WsError::policy_violation(format!(
            "reading {} is refused by the workspace's access rules: it matches none of readPatterns {shown}",
            display(path)
        ))
    }
}

impl AccessRules for PathRules {
    fn check(&self, op: AccessOp, path: &str) -> WsResult<()> {
        match op {
            AccessOp::Read if self.readable(path) => Ok(()),
            AccessOp::Traverse if self.traversable(path) => Ok(()),
            AccessOp::Read | AccessOp::Traverse => Err(self.refuse_read(path)),
            AccessOp::Write => {
                if self.read_only {
                    return Err(WsError::policy_violation(format!(
                        "writing {} is refused by the workspace's access rules: the workspace is read-only (readOnly)",
                        display(path)
                    )));
                }
                match &self.write {
                    Some(p) if !p.matches(path) => Err(WsError::policy_violation(format!(
                        "writing {} is refused by the workspace's access rules: it matches none of writePatterns {}",
                        display(path),
                        p.shown()
                    ))),
                    _ => Ok(()),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::error::WsCode;

    fn rules(read: Option<&[&str]>, write: Option<&[&str]>, read_only: bool) -> PathRules {
        let own = |l: &[&str]| l.iter().map(|s| s.to_string()).collect();
        match PathRules::new(&PathRulesSpec {
            read_patterns: read.map(own),
            write_patterns: write.map(own),
            read_only,
        }) {
            Ok(r) => r,
            Err(e) => panic!("{e}"),
        }
    }

    fn may(r: &PathRules, op: AccessOp, p: &str) -> bool {
        r.check(op, p).is_ok()
    }

    #[test]
    fn globs_follow_gitignore_conventions() {
        let r = rules(
            None,
            Some(&["src/**/*.js", "*.md", "/top.txt", "docs/"]),
            false,
        );
        for ok in [
            "src/a.js",
            "src/x/y/z.js",
            "README.md",
            "deep/er/NOTES.md",
            "top.txt",
            "docs/a/b.png",
        ] {
            assert!(may(&r, AccessOp::Write, ok), "{ok}");
        }
        for no in ["src/a.ts", "a.js", "x/top.txt", "docsx/a", "srcx/a.js", ""] {
            assert!(!may(&r, AccessOp::Write, no), "{no}");
        }
        // `*` stays within one folder name.
        let one = rules(None, Some(&["src/*.js"]), false);
        assert!(may(&one, AccessOp::Write, "src/a.js"));
        assert!(!may(&one, AccessOp::Write, "src/sub/a.js"));
    }

    #[test]
    fn reads_reach_matching_files_through_their_folders_only() {
        let r = rules(Some(&["src/lib/**/*.js"]), None, false);
        for ok in ["", "src", "src/lib", "src/lib/a"] {
            assert!(may(&r, AccessOp::Traverse, ok), "{ok}");
            assert!(!may(&r, AccessOp::Read, ok), "{ok}");
        }
        assert!(may(&r, AccessOp::Read, "src/lib/a/b.js"));
        for no in [
            "secrets",
            "secrets/key.txt",
            "src/other",
            "src/lib.js",
            "srcx",
        ] {
            assert!(!may(&r, AccessOp::Traverse, no), "{no}");
            assert!(!may(&r, AccessOp::Read, no), "{no}");
        }
        // A pattern that may match at any depth lets every folder be listed, and no other file.
        let md = rules(Some(&["*.md"]), None, false);
        assert!(may(&md, AccessOp::Traverse, "any/folder"));
        assert!(may(&md, AccessOp::Read, "any/folder/a.md"));
        assert!(!may(&md, AccessOp::Read, "any/folder/a.txt"));
        let e = r.check(AccessOp::Read, "secrets/key.txt").err();
        assert!(e.as_ref().is_some_and(|e| e.code == WsCode::PolicyViolation
            && e.message.contains("~/secrets/key.txt")
            && e.message.contains("readPatterns [src/lib/**/*.js]")));
    }

    #[test]
    fn read_only_refuses_every_write_and_no_patterns_restrict_nothing() {
        let r = rules(None, Some(&["**"]), true);
        let e = r.check(AccessOp::Write, "a.txt").err();
        assert!(e.is_some_and(|e| e.message.contains("read-only (readOnly)")));
        assert!(may(&r, AccessOp::Read, "any/where.txt"));
        let open = rules(None, None, false);
        assert!(may(&open, AccessOp::Write, "x/y") && may(&open, AccessOp::Read, "x/y"));
        let none = rules(Some(&[]), Some(&[]), false);
        assert!(!may(&none, AccessOp::Write, "a") && !may(&none, AccessOp::Read, "a"));
    }

    #[test]
    fn bad_patterns_are_refused_with_the_pattern_named() {
        for bad in ["src/[", "", "../x", "a/../../b"] {
            let spec = PathRulesSpec {
                write_patterns: Some(vec![bad.to_string()]),
                ..PathRulesSpec::default()
            };
            let e = PathRules::new(&spec).err();
            assert!(
                e.as_ref().is_some_and(
                    |e| e.code == WsCode::InvalidInput && e.message.contains("writePatterns")
                ),
                "{bad}: {e:?}"
            );
        }
        let many = PathRulesSpec {
            read_patterns: Some(vec!["a".to_string(); MAX_PATTERNS + 1]),
            ..PathRulesSpec::default()
        };
        assert!(PathRules::new(&many).is_err());
    }
}
