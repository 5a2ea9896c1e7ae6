//! Workspace execution: a workspace file runs as an ES module graph over a staged copy-on-write
//! overlay of the workspace, with a minimal `process`, and its file changes come back as one
//! batch.
//!
//! The facade (what napi and other layers use):
//! - [`run_exec`] is the whole run (it blocks; callers put it on a worker thread). It never
//!   touches the real workspace: the [`ExecOutcome`] carries the run's changes when its
//!   [`CommitPolicy`] keeps them, and [`ExecOutcome::settle`] applies them (as one history
//!   entry) on the thread that owns the workspace.
//! - [`workspace_extension`] gives plain `run()` calls the same file access: `fs` and `path`
//!   globals in function and script mode, imports in module mode.
//!
//! Inside, one file per job:
//! - `request`: what a run is asked to do and what it gave;
//! - `run`: one exec run, from the entry check to the outcome; `process`: its `process` global;
//!   `output`: its console, stream writes and `emit()`, under one byte cap;
//! - `commit`: applying a run's changes; `workspace_run`: workspace access for `run()`;
//! - `files`: the run's file system and modules, shared by the loader and the shims;
//! - `loader`, `resolve`, `typescript`: modules; `shims`, `fs`, `encoding`: the `fs`, `path`
//!   and `os` modules; `guest_errors`, `locate`: errors thrown into the guest and placed in the
//!   module they came from.

use std::sync::{Arc, Mutex, MutexGuard};

mod commit;
mod commonjs;
mod encoding;
mod files;
mod fs;
mod guest_errors;
mod loader;
mod locate;
mod output;
mod process;
mod request;
mod resolve;
mod run;
mod shims;
mod typescript;
mod workspace_run;

#[cfg(test)]
use commit::commit_changes;
pub use request::{CommitPolicy, ExecOutcome, ExecRequest, MAX_EXEC_ITEMS};
pub use run::run_exec;
pub use workspace_run::{workspace_extension, workspace_extension_with};

use crate::workspace::Workspace;

/// A workspace shared between the host and runs that write to it.
pub type SharedWorkspace = Arc<Mutex<Workspace>>;

/// Locks a shared workspace; a panic elsewhere never makes it unusable.
pub fn lock_workspace(ws: &SharedWorkspace) -> MutexGuard<'_, Workspace> {
    lock_unpoisoned(ws)
}

/// Locks `m` even if a thread panicked while holding it: the state a run shares is always
/// left consistent between calls, so a poisoned lock carries no broken invariant.
pub(crate) fn lock_unpoisoned<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests;
