//! Glob matching for the editor dialects: patterns compiled once by `globset` (finite automata,
//! so matching costs time linear in the path whatever the pattern), then matched against many
//! paths.
//!
//! The meaning is minimatch's with `dot: true`, as the MCP filesystem server uses it: `*` and
//! `?` stay inside one path segment, `**` as a whole segment spans any number of them (none
//! included), `[...]` is a character class (`[!...]` negated), `{a,b}` an alternation and `\`
//! escapes the next character. Paths are relative and use `/`.

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use super::error::{WsError, WsResult};

/// Longest pattern accepted, in bytes: a glob longer than any path a workspace holds has no use,
/// and the automaton grows with the pattern.
pub const MAX_GLOB_PATTERN_BYTES: usize = 1024;

/// Most patterns one matcher takes.
pub const MAX_GLOB_PATTERNS: usize = 256;

/// Whether a pattern without `*` also matches a name at any depth and everything below it (the
/// MCP server's rule for `directory_tree` exclusions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BareNames {
    /// Patterns match whole relative paths only.
    AsWritten,
    /// `p` without `*` also matches as `**/p` and `**/p/**`.
    AnyDepth,
}

/// A set of compiled glob patterns; a path matches when any of them matches it.
#[derive(Debug, Clone)]
pub struct GlobMatcher {
    set: GlobSet,
}

impl GlobMatcher {
    /// Compiles `patterns`. A pattern that is too long or not a glob (an unclosed `[` or `{`, for
    /// instance), or too many patterns, give `INVALID_INPUT` naming the pattern.
    pub fn new(patterns: &[String], bare: BareNames) -> WsResult<Self> {
        if patterns.len() > MAX_GLOB_PATTERNS {
            return Err(WsError::invalid_input(format!(
                "at most {MAX_GLOB_PATTERNS} glob patterns are accepted, got {}",
                patterns.len()
            )));
        }
        let mut builder = GlobSetBuilder::new();
        for pattern in patterns {
            if pattern.len() > MAX_GLOB_PATTERN_BYTES {
                return Err(WsError::invalid_input(format!(
                    "a glob pattern may have at most {MAX_GLOB_PATTERN_BYTES} bytes, got one of {}",
                    pattern.len()
                )));
            }
            let mut forms = vec![pattern.clone()];
            if bare == BareNames::AnyDepth && !pattern.contains('*') {
                forms.push(format!("**/{pattern}"));
                forms.push(format!("**/{pattern}/**"));
            }
            for form in forms {
                let glob = GlobBuilder::new(&form)
                    .literal_separator(true)
                    .backslash_escape(true)
                    .empty_alternates(true)
                    .build()
                    .map_err(|e| {
                        WsError::invalid_input(format!(
                            "invalid glob pattern {pattern:?}: {}",
                            e.kind()
                        ))
                    })?;
                builder.add(glob);
            }
        }
        let set = builder
            .build()
            .map_err(|e| WsError::invalid_input(format!("invalid glob patterns: {}", e.kind())))?;
        Ok(GlobMatcher { set })
    }

    /// Whether `path` (relative, `/`-separated) matches one of the patterns.
    pub fn is_match(&self, path: &str) -> bool {
        self.set.is_match(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::error::WsCode;
    use std::time::{Duration, Instant};

    fn matcher(patterns: &[&str], bare: BareNames) -> GlobMatcher {
        let owned: Vec<String> = patterns.iter().map(|p| p.to_string()).collect();
        match GlobMatcher::new(&owned, bare) {
            Ok(m) => m,
            Err(e) => panic!("{patterns:?}: {e}"),
        }
    }

    fn refused(pattern: &str) -> WsError {
        match GlobMatcher::new(&[pattern.to_string()], BareNames::AsWritten) {
            Ok(_) => panic!("{pattern:?} should be refused"),
            Err(e) => e,
        }
    }

    #[test]
    fn minimatch_rules_with_dot_files() {
        let m = matcher(&["*.js"], BareNames::AsWritten);
        assert!(m.is_match("a.js"));
        assert!(m.is_match(".hidden.js"), "dot: true");
        assert!(!m.is_match("src/a.js"), "* stays in one segment");
        let m = matcher(&["**/*.js"], BareNames::AsWritten);
        assert!(m.is_match("a.js") && m.is_match("src/deep/a.js"));
        let m = matcher(&["src/**"], BareNames::AsWritten);
        assert!(m.is_match("src/a") && m.is_match("src/a/b"));
        let m = matcher(&["?.[ch]", "{x,y}/[!a]*"], BareNames::AsWritten);
        assert!(m.is_match("a.c") && m.is_match("b.h") && !m.is_match("ab.c"));
        assert!(m.is_match("x/bc") && m.is_match("y/z") && !m.is_match("x/abc"));
        let m = matcher(&[r"a\*b"], BareNames::AsWritten);
        assert!(m.is_match("a*b") && !m.is_match("axb"));
    }

    #[test]
    fn bare_names_match_at_any_depth_when_asked() {
        let m = matcher(&["node_modules", "*.log"], BareNames::AnyDepth);
        assert!(m.is_match("node_modules"));
        assert!(m.is_match("a/node_modules"));
        assert!(m.is_match("a/node_modules/x/y.js"));
        assert!(
            m.is_match("x.log") && !m.is_match("a/x.log"),
            "only bare names"
        );
        let m = matcher(&["node_modules"], BareNames::AsWritten);
        assert!(!m.is_match("a/node_modules"));
        assert!(!matcher(&[], BareNames::AnyDepth).is_match("a"));
    }

    #[test]
    fn bad_patterns_are_invalid_input() {
        for p in ["a[b", "{a,b", "{a,{b}"] {
            let e = refused(p);
            assert_eq!(e.code, WsCode::InvalidInput, "{p}");
            assert!(e.message.contains("invalid glob pattern"), "{}", e.message);
        }
        let long = "a".repeat(MAX_GLOB_PATTERN_BYTES + 1);
        assert!(refused(&long).message.contains("at most 1024 bytes"));
        let many: Vec<String> = (0..=MAX_GLOB_PATTERNS).map(|i| format!("{i}")).collect();
        match GlobMatcher::new(&many, BareNames::AsWritten) {
            Err(e) => assert_eq!(e.code, WsCode::InvalidInput),
            Ok(_) => panic!("too many patterns accepted"),
        }
    }

    #[test]
    fn pathological_patterns_match_in_linear_time() {
        let star = format!("{}b", "*a".repeat(40));
        let deep = "**/".repeat(300) + "x";
        let braces = format!("{{{}}}", vec!["*a*a*b"; 100].join(","));
        let m = matcher(&[&star, &deep, &braces], BareNames::AnyDepth);
        let name = "a".repeat(4000);
        let path = vec!["a"; 2000].join("/");
        let started = Instant::now();
        assert!(!m.is_match(&name));
        assert!(!m.is_match(&path));
        assert!(started.elapsed() < Duration::from_secs(2));
    }
}
