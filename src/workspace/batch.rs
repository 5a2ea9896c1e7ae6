//! Batches: several edits recorded as one history entry, all or nothing.
//!
//! While a batch is open the mutating calls change the tree but record nothing; closing it
//! records everything that differs from the tree it started from as one entry, or puts that
//! tree back. A batch opened inside another joins it: its edits land in the outer entry, and
//! abandoning it only takes back its own edits. Undo, redo and restore are refused while a
//! batch is open (they would step over edits that are not recorded yet); an export or a
//! snapshot taken meanwhile shows the open batch as if it had been recorded, so the tree and
//! its history always agree.

use super::changes;
use super::error::{WsError, WsResult};
use super::history::{Change, HistoryState};
use super::vfs::Vfs;
use super::Workspace;

/// Longest label a batch may be recorded under, in bytes.
pub const MAX_BATCH_LABEL: usize = 1024;

/// The batch in progress: the label its entry gets, the tree it started from, and how many
/// batches are open inside one another.
#[derive(Debug, Clone)]
pub(super) struct OpenBatch {
    label: String,
    start: Vfs,
    depth: usize,
}

/// What [`Workspace::end_batch`] needs to close the batch [`Workspace::begin_batch`] opened:
/// the tree as it was when it opened, to put back if the batch is abandoned.
#[derive(Debug)]
#[must_use = "a batch stays open until end_batch is given its mark"]
pub struct BatchMark {
    saved: Vfs,
    depth: usize,
}

impl Workspace {
    /// Opens a batch recorded as `label` (inside an open batch: joins it, and `label` is not
    /// used). `INVALID_INPUT` for an empty label or one longer than [`MAX_BATCH_LABEL`] bytes.
    pub fn begin_batch(&mut self, label: &str) -> WsResult<BatchMark> {
        if label.trim().is_empty() {
            return Err(WsError::invalid_input(
                "a batch needs a label saying what it does, got an empty one",
            ));
        }
        if label.len() > MAX_BATCH_LABEL {
            return Err(WsError::invalid_input(format!(
                "a batch label may be at most {MAX_BATCH_LABEL} bytes, got {}",
                label.len()
            )));
        }
        let depth = match &mut self.batch {
            Some(open) => {
                open.depth += 1;
                open.depth
            }
            None => {
                self.batch = Some(OpenBatch {
                    label: label.to_string(),
                    start: self.vfs.clone(),
                    depth: 1,
                });
                1
            }
        };
        Ok(BatchMark {
            saved: self.vfs.clone(),
            depth,
        })
    }

    /// Closes the batch `mark` opened. With `keep`, its edits stay: the outermost batch
    /// records them as one entry and returns its id (`None` when the tree ended as it began,
    /// and for a batch inside another). Without, the tree goes back to what it was when the
    /// batch opened and nothing is recorded. A mark whose batch is gone (the workspace was
    /// replaced or restored meanwhile) changes nothing.
    pub fn end_batch(&mut self, mark: BatchMark, keep: bool) -> Option<u64> {
        let open = self.batch.as_mut().filter(|b| b.depth == mark.depth)?;
        open.depth -= 1;
        let outermost = open.depth == 0;
        if !keep {
            self.vfs = mark.saved;
        }
        if !outermost {
            return None;
        }
        let open = self.batch.take()?;
        if !keep {
            return None;
        }
        let changes = batch_changes(&open.start, &self.vfs);
        self.history.record(changes, &open.label, self.vfs.now())
    }

    /// Runs `edits` as one batch labelled `label`: kept if they succeed, taken back if they
    /// fail. Returns what they gave and the entry recorded.
    pub fn batch<T>(
        &mut self,
        label: &str,
        edits: impl FnOnce(&mut Workspace) -> WsResult<T>,
    ) -> WsResult<(T, Option<u64>)> {
        let mark = self.begin_batch(label)?;
        match edits(self) {
            Ok(value) => Ok((value, self.end_batch(mark, true))),
            Err(e) => {
                let _ = self.end_batch(mark, false);
                Err(e)
            }
        }
    }

    /// Whether a batch is open.
    pub fn in_batch(&self) -> bool {
        self.batch.is_some()
    }

    /// `HISTORY` while a batch is open: `what` would step over its unrecorded edits.
    pub(super) fn refuse_in_batch(&self, what: &str) -> WsResult<()> {
        match &self.batch {
            Some(open) => Err(WsError::history(format!(
                "cannot {what} inside the batch '{}': its edits are recorded when it ends",
                open.label
            ))),
            None => Ok(()),
        }
    }

    /// The history with the open batch recorded as if it ended now (`None` without a batch).
    pub(super) fn history_with_open_batch(&self) -> Option<HistoryState> {
        let open = self.batch.as_ref()?;
        let mut history = self.history.clone();
        history.record(
            batch_changes(&open.start, &self.vfs),
            &open.label,
            self.vfs.now(),
        );
        Some(history)
    }
}

/// Every path that differs from `start` to `now`, as history records it.
fn batch_changes(start: &Vfs, now: &Vfs) -> Vec<Change> {
    changes::between(start, now)
        .into_iter()
        .map(|c| Change {
            path: c.path,
            before: c.before,
            after: c.after,
        })
        .collect()
}
