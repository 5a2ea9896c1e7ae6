//! Workspace access for plain `run()` calls: `fs` and `path` globals in function and script
//! mode, the shim modules and relative workspace imports in module mode. The run's writes are
//! applied when it ends, per its commit policy.

use std::sync::{Arc, Mutex};

use rquickjs::{Ctx, Runtime};

use super::commit::commit_run;
use super::commonjs::install_commonjs;
use super::files::{lock, RealmFiles, SharedFiles};
use super::fs::FsHost;
use super::loader::install_loader;
use super::request::CommitPolicy;
use super::shims::install_shims;
use super::{lock_unpoisoned, lock_workspace, SharedWorkspace};
use crate::engine::run::{Extension, Mode, RealmExtension, RunOutcome};
use crate::workspace::{Overlay, WriteQuota};

struct WorkspaceRun {
    ws: SharedWorkspace,
    /// The run's staged view, taken when the extension was made.
    overlay: Overlay,
    commit: CommitPolicy,
    globals: bool,
    label: String,
    files: Mutex<Option<SharedFiles>>,
}

impl WorkspaceRun {
    fn files(&self) -> Option<SharedFiles> {
        lock_unpoisoned(&self.files).clone()
    }
}

impl RealmExtension for WorkspaceRun {
    fn configure_runtime(&self, rt: &Runtime) {
        let files = RealmFiles::shared(FsHost::new(self.overlay.clone()));
        *lock_unpoisoned(&self.files) = Some(files.clone());
        install_loader(rt, files, None);
    }

    fn install(&self, ctx: &Ctx<'_>) -> rquickjs::Result<()> {
        let Some(files) = self.files() else {
            return Ok(());
        };
        let shims = install_shims(ctx, &files)?;
        let require = install_commonjs(ctx, &files)?;
        if self.globals {
            ctx.globals().set("fs", shims.fs)?;
            ctx.globals().set("path", shims.path)?;
            ctx.globals().set("require", require)?;
        }
        Ok(())
    }

    fn finish(&self, outcome: &mut RunOutcome) {
        let Some(files) = lock_unpoisoned(&self.files).take() else {
            return;
        };
        if !self.commit.commits(outcome.ok) {
            return;
        }
        let changes = lock(&files).fs.changes();
        if changes.is_empty() {
            return;
        }
        if let Err(error) = commit_run(&self.ws, &changes, &self.label) {
            outcome.ok = false;
            outcome.value = None;
            outcome.error = Some(error);
        }
    }
}

/// File access for a plain run: a view of `ws` taken now; in function and script mode frozen
/// `fs` and `path` globals, in module mode the shim modules and relative workspace imports. The
/// run's writes are applied to `ws` (as one history entry labelled `run <filename>`) when it
/// succeeds.
pub fn workspace_extension(ws: &SharedWorkspace, mode: Mode, filename: &str) -> Extension {
    workspace_extension_with(
        ws,
        mode,
        filename,
        WriteQuota::default(),
        CommitPolicy::OnSuccess,
    )
}

/// [`workspace_extension`] with an explicit quota and commit policy.
pub fn workspace_extension_with(
    ws: &SharedWorkspace,
    mode: Mode,
    filename: &str,
    quota: WriteQuota,
    commit: CommitPolicy,
) -> Extension {
    let overlay = lock_workspace(ws).stage(quota);
    Extension(Arc::new(WorkspaceRun {
        ws: ws.clone(),
        overlay,
        commit,
        globals: mode != Mode::Module,
        label: format!("run {filename}"),
        files: Mutex::new(None),
    }))
}
