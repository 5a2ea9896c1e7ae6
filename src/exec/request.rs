//! What an exec run is asked to do ([`ExecRequest`]), when its changes land
//! ([`CommitPolicy`]), and what it gave ([`ExecOutcome`]).

use super::commit::commit_run;
use super::SharedWorkspace;
use crate::engine::errors::ErrorInfo;
use crate::engine::limits::Limits;
use crate::engine::run::{Deterministic, Stats};
use crate::engine::LogListener;
use crate::workspace::{StagedOp, WriteQuota, WsCode, WsError, WsResult};

/// When a run's file changes reach the workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CommitPolicy {
    /// Only if the run succeeds (exit code 0, no error).
    #[default]
    OnSuccess,
    /// Whatever the outcome (the changes made up to the failure).
    Always,
    /// Never (a dry run).
    Never,
}

impl CommitPolicy {
    /// The policy named `on-success`, `always` or `never`.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "on-success" => Some(CommitPolicy::OnSuccess),
            "always" => Some(CommitPolicy::Always),
            "never" => Some(CommitPolicy::Never),
            _ => None,
        }
    }

    /// Whether a run that ended `ok` gets its changes applied.
    pub fn commits(self, ok: bool) -> bool {
        match self {
            CommitPolicy::OnSuccess => ok,
            CommitPolicy::Always => true,
            CommitPolicy::Never => false,
        }
    }
}

/// What to run and how.
#[derive(Debug, Clone)]
pub struct ExecRequest {
    /// Entry file, in any workspace path form (`~/main.ts`, `main.ts`, `/main.ts`).
    pub entry: String,
    /// Arguments after the entry (`process.argv.slice(2)`).
    pub argv: Vec<String>,
    /// `process.env`.
    pub env: Vec<(String, String)>,
    pub limits: Limits,
    pub quota: WriteQuota,
    pub commit: CommitPolicy,
    /// A reproducible run (virtual time, seeded randomness), as for `run`.
    pub deterministic: Option<Deterministic>,
    /// Told about each console line as the run prints it.
    pub on_log: Option<LogListener>,
}

/// Most `argv` entries and `env` variables one exec call takes.
pub const MAX_EXEC_ITEMS: usize = 10_000;

fn check_items(option: &str, n: usize, what: &str) -> WsResult<()> {
    if n > MAX_EXEC_ITEMS {
        return Err(WsError::new(
            WsCode::InvalidInput,
            format!("{option} has {n} {what}; the limit is {MAX_EXEC_ITEMS}"),
        ));
    }
    Ok(())
}

impl ExecRequest {
    /// Refuses an `argv` of more than [`MAX_EXEC_ITEMS`] entries.
    pub fn check_argv_len(n: usize) -> WsResult<()> {
        check_items("options.argv", n, "entries")
    }

    /// Refuses an `env` of more than [`MAX_EXEC_ITEMS`] variables.
    pub fn check_env_len(n: usize) -> WsResult<()> {
        check_items("options.env", n, "variables")
    }

    pub fn new(entry: impl Into<String>) -> Self {
        ExecRequest {
            entry: entry.into(),
            argv: Vec::new(),
            env: Vec::new(),
            limits: Limits::default(),
            quota: WriteQuota::default(),
            commit: CommitPolicy::OnSuccess,
            deterministic: None,
            on_log: None,
        }
    }
}

/// The outcome of one exec run.
#[derive(Debug, Clone)]
pub struct ExecOutcome {
    /// Exit code 0 and no error.
    pub ok: bool,
    /// 0 on success, the `process.exit()` code if called, 1 for an uncaught error or a limit.
    pub exit_code: i32,
    /// `console.log/info/debug` and `process.stdout.write`, one line each.
    pub stdout: String,
    /// `console.warn/error` and `process.stderr.write`.
    pub stderr: String,
    pub error: Option<ErrorInfo>,
    /// The workspace module the error points into (`~/lib/util.ts`).
    pub error_file: Option<String>,
    /// The entry as shown (`~/main.ts`).
    pub entry: String,
    /// The run's changes when the commit policy says to apply them.
    pub changes: Option<Vec<StagedOp>>,
    /// Bytes the run wrote through `fs` (written, appended and copied: what its write quota
    /// counts), whether or not its changes were applied.
    pub bytes_written: u64,
    /// Set by [`ExecOutcome::settle`] when the changes were applied: the history entry, or
    /// `None` if they changed nothing.
    pub history_id: Option<Option<u64>>,
    pub stats: Stats,
}

impl ExecOutcome {
    /// An outcome for a run that could not start (or broke down).
    pub fn failed(entry: &str, error: ErrorInfo) -> Self {
        ExecOutcome {
            ok: false,
            exit_code: 1,
            stdout: String::new(),
            stderr: String::new(),
            error: Some(error),
            error_file: None,
            entry: entry.to_string(),
            changes: None,
            bytes_written: 0,
            history_id: None,
            stats: Stats::default(),
        }
    }

    /// The history label of the changes: `exec ~/main.ts`.
    pub fn label(&self) -> String {
        format!("exec {}", self.entry)
    }

    /// Applies the run's changes, if its commit policy kept them, to `ws` as one history entry
    /// (see [`commit_run`]). If they cannot be applied the run fails with a `CommitError` and
    /// exit code 1, and none of them lands.
    pub fn settle(mut self, ws: &SharedWorkspace) -> Self {
        let Some(changes) = self.changes.take() else {
            return self;
        };
        match commit_run(ws, &changes, &self.label()) {
            Ok(id) => self.history_id = Some(id),
            Err(error) => {
                self.ok = false;
                if self.exit_code == 0 {
                    self.exit_code = 1;
                }
                self.error = Some(error);
                self.error_file = None;
            }
        }
        self
    }
}
