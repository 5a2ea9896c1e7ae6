//! Applying a finished run's changes to the shared workspace, as one history entry.

use super::{lock_workspace, SharedWorkspace};
use crate::engine::errors::{ErrorCode, ErrorInfo};
use crate::workspace::{StagedOp, Workspace, WsResult};

/// Applies a run's changes to `ws` as one history entry labelled `label`. Deletions of paths the
/// host removed in the meantime are skipped; other host changes made meanwhile are kept and the
/// run's changes land on top. All or nothing. Returns the history entry id (`None` if nothing
/// changed).
pub fn commit_changes(
    ws: &mut Workspace,
    changes: &[StagedOp],
    label: &str,
) -> WsResult<Option<u64>> {
    let applicable: Vec<StagedOp> = changes
        .iter()
        .filter(|op| match op {
            StagedOp::Delete { path } => ws.exists(path),
            _ => true,
        })
        .cloned()
        .collect();
    if applicable.is_empty() {
        return Ok(None);
    }
    ws.apply_overlay(&applicable, label)
}

/// Applies a finished run's changes to `ws` as one history entry labelled `label` (see
/// [`commit_changes`]). Returns the entry id (`None` if nothing changed), or the `CommitError`
/// the run fails with when the changes cannot be applied (then none of them is).
pub fn commit_run(
    ws: &SharedWorkspace,
    changes: &[StagedOp],
    label: &str,
) -> Result<Option<u64>, ErrorInfo> {
    commit_changes(&mut lock_workspace(ws), changes, label).map_err(|e| {
        ErrorInfo::new(
            ErrorCode::EvalError,
            "CommitError",
            format!(
                "the run's file changes could not be applied to the workspace, so none were: {}",
                e.message
            ),
        )
    })
}
