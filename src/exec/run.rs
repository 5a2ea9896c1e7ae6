//! One exec run: a tiny bootstrap module imports the entry file, which runs as an ES module
//! graph over the run's staged view of the workspace, with the shims and a `process` global.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

use rquickjs::{Ctx, Runtime};

use super::files::{lock, RealmFiles, SharedFiles};
use super::fs::FsHost;
use super::loader::{install_loader, Boot};
use super::locate::locate;
use super::process::{install_process, lock_state, ProcessState, SharedState};
use super::request::{ExecOutcome, ExecRequest};
use super::resolve::MODULE_EXTENSIONS;
use super::shims::install_shims;
use crate::engine::errors::{ErrorCode, ErrorInfo};
use crate::engine::limits::CancelToken;
use crate::engine::realm::ConsoleMode;
use crate::engine::run::{execute, Extension, Mode, RealmExtension, RunOutcome, RunRequest};
use crate::workspace::path::{self as wpath, display};
use crate::workspace::{AccessOp, EntryKind, Overlay};

/// Name of the bootstrap module that imports the entry. Every workspace module name contains it,
/// so the engine keeps all their frames in stacks.
pub const BOOT_NAME: &str = "~/";

struct ExecExtension {
    files: SharedFiles,
    state: SharedState,
    boot: Boot,
    cancel: CancelToken,
    argv: Vec<String>,
    env: Vec<(String, String)>,
}

impl RealmExtension for ExecExtension {
    fn configure_runtime(&self, rt: &Runtime) {
        install_loader(rt, self.files.clone(), Some(self.boot.clone()));
    }

    fn install(&self, ctx: &Ctx<'_>) -> rquickjs::Result<()> {
        install_shims(ctx, &self.files)?;
        install_process(
            ctx,
            &self.files,
            &self.state,
            &self.cancel,
            &self.argv,
            &self.env,
        )
    }
}

/// The normalized entry path, or why it cannot run.
fn check_entry(overlay: &Overlay, entry: &str) -> Result<String, ErrorInfo> {
    let p = overlay
        .resolve(AccessOp::Read, entry)
        .map_err(|r| ErrorInfo::invalid(format!("entryPath: {}", r.error.message)))?;
    let name = wpath::file_name(&p);
    let ext_ok = name
        .rsplit_once('.')
        .is_some_and(|(stem, ext)| !stem.is_empty() && MODULE_EXTENSIONS.contains(&ext));
    match overlay.stat(&p) {
        Ok(s) if s.kind == EntryKind::File && ext_ok => Ok(p),
        Ok(s) if s.kind == EntryKind::File => Err(ErrorInfo::invalid(format!(
            "{} cannot run: only .js, .mjs, .ts and .mts files can be executed",
            display(&p)
        ))),
        Ok(_) => Err(ErrorInfo::invalid(format!(
            "{} is a folder; give the file to run",
            display(&p)
        ))),
        Err(_) => Err(ErrorInfo::invalid(format!(
            "{} does not exist",
            display(&p)
        ))),
    }
}

const UNHANDLED_PREFIX: &str = "Unhandled promise rejection: ";

/// Runs `req.entry` to completion on the calling thread, over `overlay`: the run's staged view of
/// the workspace (usually `workspace.stage(req.quota)`). A panic inside the run becomes an
/// `INTERNAL` outcome.
pub fn run_exec(req: &ExecRequest, overlay: Overlay, cancel: &CancelToken) -> ExecOutcome {
    catch_unwind(AssertUnwindSafe(|| {
        run_exec_unguarded(req, overlay, cancel)
    }))
    .unwrap_or_else(|_| {
        ExecOutcome::failed(
            &req.entry,
            ErrorInfo::internal("quickrealm bug: the exec run panicked"),
        )
    })
}

fn run_exec_unguarded(req: &ExecRequest, overlay: Overlay, cancel: &CancelToken) -> ExecOutcome {
    let entry = match check_entry(&overlay, &req.entry) {
        Ok(p) => display(&p),
        Err(e) => return ExecOutcome::failed(&req.entry, e),
    };
    let files = RealmFiles::shared(FsHost::new(overlay));
    lock(&files).entry = Some(entry.clone());
    let state = Arc::new(Mutex::new(ProcessState::default()));
    let mut argv = vec!["quickrealm".to_string(), entry.clone()];
    argv.extend(req.argv.iter().cloned());
    let ext = ExecExtension {
        files: files.clone(),
        state: state.clone(),
        boot: Boot {
            name: BOOT_NAME.to_string(),
            entry: entry.clone(),
        },
        cancel: cancel.clone(),
        argv,
        env: req.env.clone(),
    };
    let literal = serde_json::to_string(&entry).unwrap_or_else(|_| "\"\"".into());
    let mut run = RunRequest::new(format!("import {literal};\n"));
    run.mode = Mode::Module;
    run.filename = BOOT_NAME.to_string();
    run.limits = req.limits;
    run.console = ConsoleMode::Capture;
    run.extension = Some(Extension(Arc::new(ext)));
    let outcome = execute(&run, cancel);
    let state = lock_state(&state);
    let files = lock(&files);
    finish(req, entry, outcome, &state, &files)
}

fn exit_error(message: String) -> ErrorInfo {
    ErrorInfo::new(ErrorCode::EvalError, "ExitError", message)
}

/// How a run ended.
struct Ending {
    ok: bool,
    exit_code: i32,
    error: Option<ErrorInfo>,
    /// The workspace module the error points into.
    error_file: Option<String>,
}

/// How the run ended: through `process.exit()`, by completing (with `process.exitCode` or a
/// promise rejection nobody handled), or with an error or a limit.
fn ending(outcome: &RunOutcome, state: &ProcessState, files: &RealmFiles) -> Ending {
    let engine_stopped = outcome
        .error
        .as_ref()
        .is_some_and(|e| e.code != ErrorCode::Cancelled);
    match state.exit {
        Some(code) if !engine_stopped => Ending {
            ok: code == 0,
            exit_code: code,
            error: (code != 0).then(|| exit_error(format!("process.exit({code}) was called"))),
            error_file: None,
        },
        _ if outcome.ok => completed(outcome, state.exit_code.unwrap_or(0)),
        _ => failed(outcome.error.clone(), files),
    }
}

/// The end of a run whose module graph completed.
fn completed(outcome: &RunOutcome, exit_code: i32) -> Ending {
    let (ok, exit_code, error) = match (exit_code, unhandled_rejection(outcome)) {
        (_, Some(e)) => (false, 1, Some(e)),
        (0, None) => (true, 0, outcome.error.clone()),
        (code, None) => (
            false,
            code,
            Some(exit_error(format!(
                "the run ended with process.exitCode = {code}"
            ))),
        ),
    };
    Ending {
        ok,
        exit_code,
        error,
        error_file: None,
    }
}

/// The first promise rejection nobody handled, as the error it carried.
fn unhandled_rejection(outcome: &RunOutcome) -> Option<ErrorInfo> {
    let log = outcome
        .logs
        .iter()
        .find(|l| l.level == "error" && l.message.starts_with(UNHANDLED_PREFIX))?;
    let text = &log.message[UNHANDLED_PREFIX.len()..];
    let (name, message) = text.split_once(": ").unwrap_or(("Error", text));
    Some(ErrorInfo::new(
        ErrorCode::EvalError,
        name,
        format!("{message} (a promise rejection was never handled)"),
    ))
}

/// The end of a run stopped by an error or a limit; a guest error is placed in its module.
fn failed(mut error: Option<ErrorInfo>, files: &RealmFiles) -> Ending {
    let mut error_file = None;
    if let Some(e) = error.as_mut() {
        if e.code == ErrorCode::EvalError {
            error_file = locate(files, e);
        }
    }
    Ending {
        ok: false,
        exit_code: 1,
        error,
        error_file,
    }
}

/// The run's stdout and stderr: console lines by level, then unfinished stream lines.
fn output(outcome: &RunOutcome, state: &ProcessState) -> (String, String) {
    let mut stdout = outcome.output.clone();
    let mut stderr = String::new();
    for l in &outcome.logs {
        let target = if matches!(l.level, "warn" | "error") {
            &mut stderr
        } else {
            &mut stdout
        };
        target.push_str(&l.message);
        target.push('\n');
    }
    stdout.push_str(&state.partial[0]);
    stderr.push_str(&state.partial[1]);
    (stdout, stderr)
}

fn finish(
    req: &ExecRequest,
    entry: String,
    outcome: RunOutcome,
    state: &ProcessState,
    files: &RealmFiles,
) -> ExecOutcome {
    let end = ending(&outcome, state, files);
    let (stdout, stderr) = output(&outcome, state);
    let changes = req.commit.commits(end.ok).then(|| files.fs.changes());
    ExecOutcome {
        ok: end.ok,
        exit_code: end.exit_code,
        stdout,
        stderr,
        error: end.error,
        error_file: end.error_file,
        entry,
        changes,
        history_id: None,
        stats: outcome.stats,
    }
}
