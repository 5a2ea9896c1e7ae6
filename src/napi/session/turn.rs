//! The working copies of a session turn, made, compared, counted and fingerprinted where the
//! files are.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::napi::workspace::{run, ZipWorkspace};
use crate::workspace::PathRulesSpec;

/// The two copies a turn works with.
#[napi(object, object_from_js = false)]
pub struct TurnCopies {
    /// The world as the turn found it (for the stat rule and landing the changes).
    pub origin: ZipWorkspace,
    /// The copy the turn changes, with the policy's world rules narrowing the world's own.
    pub work: ZipWorkspace,
}

/// Forks `base` twice and narrows the working copy's access rules by the session's world
/// rules (a policy narrows what the host set on the world; it never widens it).
#[napi(js_name = "turnCopies", catch_unwind)]
pub fn turn_copies(
    env: Env,
    base: &ZipWorkspace,
    read_patterns: Vec<String>,
    write_patterns: Vec<String>,
    read_only: bool,
) -> Result<TurnCopies> {
    run(env, |_| {
        let ws = base.ws();
        let origin = ws.fork();
        let mut work = ws.fork();
        drop(ws);
        work.narrow_path_rules(&PathRulesSpec {
            read_patterns: Some(read_patterns),
            write_patterns: Some(write_patterns),
            read_only,
        })?;
        Ok(TurnCopies {
            origin: ZipWorkspace::from_workspace(origin),
            work: ZipWorkspace::from_workspace(work),
        })
    })
}

/// Whether `work` differs from `origin` (no bytes cross to find out).
#[napi(js_name = "hasChangesSince", catch_unwind)]
pub fn has_changes_since(work: &ZipWorkspace, origin: &ZipWorkspace) -> bool {
    if std::ptr::eq(work, origin) {
        return false;
    }
    let (work, origin) = (work.ws(), origin.ws());
    !work.changes_since(&origin).is_empty()
}

/// Bytes of the files `work` holds that differ from `before` (what a program run wrote), counted
/// where the files are.
#[napi(js_name = "bytesWrittenSince", catch_unwind)]
pub fn bytes_written_since(work: &ZipWorkspace, before: &ZipWorkspace) -> f64 {
    if std::ptr::eq(work, before) {
        return 0.0;
    }
    let (work, before) = (work.ws(), before.ws());
    work.changes_since(&before)
        .iter()
        .filter_map(|c| c.after.as_ref())
        .map(|c| c.size() as f64)
        .sum()
}

/// The SHA-256 (hex) of the files of `work` matching `glob`, in path order: each path, a NUL,
/// its bytes, a NUL. Read rules apply as to every read.
#[napi(catch_unwind)]
pub fn fingerprint(env: Env, work: &ZipWorkspace, glob: String) -> Result<String> {
    run(env, |_| crate::session::fingerprint(&work.ws(), &glob))
}
