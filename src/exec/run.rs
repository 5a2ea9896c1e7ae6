//! One exec run: a tiny bootstrap module imports the entry file, which runs as an ES module
//! graph over the run's staged view of the workspace, with the shims and a `process` global.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

use rquickjs::{Ctx, Runtime};

use super::commonjs::install_commonjs;
use super::files::{lock, RealmFiles};
use super::fs::FsHost;
use super::loader::{install_loader, Boot};
use super::locate::locate;
use super::output::{OutputHost, RunOutput, Stream};
use super::process::{install_process, lock_state, ProcessState};
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
    output: OutputHost,
    boot: Boot,
    argv: Vec<String>,
    env: Vec<(String, String)>,
}

impl RealmExtension for ExecExtension {
    fn configure_runtime(&self, rt: &Runtime) {
        install_loader(rt, self.output.files.clone(), Some(self.boot.clone()));
    }

    fn install(&self, ctx: &Ctx<'_>) -> rquickjs::Result<()> {
        install_shims(ctx, &self.output.files)?;
        install_commonjs(ctx, &self.output.files)?;
        self.output.install_console(ctx)?;
        install_process(ctx, &self.output, &self.argv, &self.env)
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
            "{} cannot run: only .js, .mjs, .cjs, .ts and .mts files can be executed",
            display(&p)
        ))),
        Ok(_) => Err(ErrorInfo::invalid(format!(
            "{} is a folder; give the file to run",
            display(&p)
        ))),
        Err(_) => Err(ErrorInfo::new(
            ErrorCode::NotFound,
            "Error",
            format!("{} does not exist", display(&p)),
        )),
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
    let state = Arc::new(Mutex::new(ProcessState::new(req.limits.output_bytes)));
    let mut argv = vec!["quickrealm".to_string(), entry.clone()];
    argv.extend(req.argv.iter().cloned());
    let ext = ExecExtension {
        output: OutputHost {
            state: state.clone(),
            files: files.clone(),
            cancel: cancel.clone(),
            on_log: req.on_log.clone(),
        },
        boot: Boot {
            name: BOOT_NAME.to_string(),
            entry: entry.clone(),
        },
        argv,
        env: req.env.clone(),
    };
    let literal = serde_json::to_string(&entry).unwrap_or_else(|_| "\"\"".into());
    let mut run = RunRequest::new(format!("import {literal};\n"));
    run.mode = Mode::Module;
    run.filename = BOOT_NAME.to_string();
    run.limits = req.limits;
    run.deterministic = req.deterministic;
    run.console = ConsoleMode::Capture;
    run.extension = Some(Extension(Arc::new(ext)));
    let outcome = execute(&run, cancel);
    let mut state = lock_state(&state);
    let files = lock(&files);
    finish(req, entry, outcome, &mut state, &files)
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

/// How the run ended: by writing more than its output cap, through `process.exit()`, by
/// completing (with `process.exitCode` or a promise rejection nobody handled), or with an error
/// or a limit.
fn ending(
    req: &ExecRequest,
    outcome: &RunOutcome,
    state: &ProcessState,
    files: &RealmFiles,
) -> Ending {
    let engine_stopped = outcome
        .error
        .as_ref()
        .is_some_and(|e| e.code != ErrorCode::Cancelled);
    if state.output.overflowed() && !engine_stopped {
        return Ending {
            ok: false,
            exit_code: 1,
            error: Some(ErrorInfo::new(
                ErrorCode::OutputLimit,
                "RangeError",
                format!("output exceeded {} bytes", req.limits.output_bytes),
            )),
            error_file: None,
        };
    }
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

/// The run's stdout and stderr. What the engine reported itself (promise rejections nobody
/// handled) is added as stderr lines, under the same cap; the guest's own writes went to
/// `output` as they happened.
fn output(outcome: &RunOutcome, mut output: RunOutput) -> (String, String) {
    output.append(Stream::Stdout, &outcome.output);
    for l in &outcome.logs {
        let stream = if matches!(l.level, "warn" | "error") {
            Stream::Stderr
        } else {
            Stream::Stdout
        };
        output.line(stream, &l.message);
    }
    output.finish()
}

fn finish(
    req: &ExecRequest,
    entry: String,
    outcome: RunOutcome,
    state: &mut ProcessState,
    files: &RealmFiles,
) -> ExecOutcome {
    let end = ending(req, &outcome, state, files);
    let (stdout, stderr) = output(&outcome, std::mem::take(&mut state.output));
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
        bytes_written: files.fs.overlay().bytes_written(),
        history_id: None,
        stats: outcome.stats,
    }
}
