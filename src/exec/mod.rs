//! Workspace execution: a workspace file runs as an ES module graph over a copy-on-write view of
//! the workspace, with a minimal `process`, and its file changes come back as one batch.
//!
//! [`run_exec`] is the whole run (it blocks; callers put it on a worker thread). It never touches
//! the real workspace: it returns the run's changes, and the caller applies them with
//! [`commit_changes`] (as one history entry) when the commit policy says so.
//!
//! [`workspace_extension`] gives plain `run()` calls the same file access: `fs` and `path`
//! globals in function and script mode, imports in module mode.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex, MutexGuard};

use rquickjs::{Array, Ctx, Function, Object, Runtime};

pub mod fs;
mod loader;
pub mod resolve;
pub mod typescript;

use crate::engine::errors::{ErrorCode, ErrorInfo};
use crate::engine::limits::{CancelToken, Limits};
use crate::engine::realm::{ConsoleMode, INTERNAL_FILENAME};
use crate::engine::run::{execute, Extension, Mode, RealmExtension, RunOutcome, RunRequest, Stats};
use crate::workspace::path::{self as wpath, display};
pub use crate::workspace::WriteQuota;
use crate::workspace::{
    AccessOp, EntryKind, Overlay, StagedOp, Workspace, WsCode, WsError, WsResult,
};
pub use fs::{FsError, FsHost, FsStat, WriteMode};
use loader::{lock, Boot, RealmFiles, SharedFiles};
use resolve::MODULE_EXTENSIONS;

/// A workspace shared between the host and runs that write to it.
pub type SharedWorkspace = Arc<Mutex<Workspace>>;

/// Locks a shared workspace; a panic elsewhere never makes it unusable.
pub fn lock_workspace(ws: &SharedWorkspace) -> MutexGuard<'_, Workspace> {
    ws.lock().unwrap_or_else(|e| e.into_inner())
}

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
}

/// Most `argv` entries and `env` variables one exec call takes.
pub const MAX_EXEC_ITEMS: usize = 10_000;

impl ExecRequest {
    /// Refuses an `argv` of more than [`MAX_EXEC_ITEMS`] entries.
    pub fn check_argv_len(n: usize) -> WsResult<()> {
        if n > MAX_EXEC_ITEMS {
            return Err(WsError::new(
                WsCode::InvalidInput,
                format!("options.argv has {n} entries; the limit is {MAX_EXEC_ITEMS}"),
            ));
        }
        Ok(())
    }

    /// Refuses an `env` of more than [`MAX_EXEC_ITEMS`] variables.
    pub fn check_env_len(n: usize) -> WsResult<()> {
        if n > MAX_EXEC_ITEMS {
            return Err(WsError::new(
                WsCode::InvalidInput,
                format!("options.env has {n} variables; the limit is {MAX_EXEC_ITEMS}"),
            ));
        }
        Ok(())
    }

    pub fn new(entry: impl Into<String>) -> Self {
        ExecRequest {
            entry: entry.into(),
            argv: Vec::new(),
            env: Vec::new(),
            limits: Limits::default(),
            quota: WriteQuota::default(),
            commit: CommitPolicy::OnSuccess,
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

/// Name of the bootstrap module that imports the entry. Every workspace module name contains it,
/// so the engine keeps all their frames in stacks.
pub const BOOT_NAME: &str = "~/";

/// `process` state the host reads after the run.
#[derive(Debug, Default)]
struct ProcessState {
    /// The code passed to `process.exit()`.
    exit: Option<i32>,
    /// The last `process.exitCode` set.
    exit_code: Option<i32>,
    /// Text written to stdout/stderr after their last newline.
    partial: [String; 2],
}

fn lock_state(s: &Arc<Mutex<ProcessState>>) -> MutexGuard<'_, ProcessState> {
    s.lock().unwrap_or_else(|e| e.into_inner())
}

const PROCESS_JS: &str = r#"(function (native, argv, env, log, error) {
  'use strict';
  const StringCtor = String, TypeErrorCtor = TypeError, isInteger = Number.isInteger;
  const NumberCtor = Number, BigIntCtor = BigInt, floor = Math.floor, now = Date.now;
  const PromiseCtor = Promise, U8 = Uint8Array;
  const started = now();
  let exitCode;
  function toCode(code) {
    if (code === undefined || code === null) return undefined;
    const n = typeof code === 'string' && /^-?[0-9]+$/.test(code) ? NumberCtor(code) : code;
    if (typeof n !== 'number' || !isInteger(n)) {
      const e = new TypeErrorCtor('The "code" argument must be an integer. Received ' + StringCtor(code));
      e.code = 'ERR_INVALID_ARG_TYPE';
      throw e;
    }
    return n;
  }
  function later(fn, args) {
    PromiseCtor.resolve().then(() => fn(...args));
  }
  function stream(fd, sink) {
    let pending = '';
    const s = {
      fd,
      isTTY: false,
      columns: 80,
      write(chunk, encoding, cb) {
        pending += typeof chunk === 'string' ? chunk : chunk instanceof U8 ? native.decode(chunk) : StringCtor(chunk);
        let nl;
        while ((nl = pending.indexOf('\n')) !== -1) {
          sink(pending.slice(0, nl));
          pending = pending.slice(nl + 1);
        }
        native.partial(fd, pending);
        const done = typeof encoding === 'function' ? encoding : cb;
        if (typeof done === 'function') later(done, []);
        return true;
      },
      end() {},
      on() { return s; },
      once() { return s; },
    };
    return s;
  }
  function hrtime(previous) {
    const ms = now() - started;
    let sec = floor(ms / 1000), ns = (ms % 1000) * 1e6;
    if (previous) {
      sec -= previous[0];
      ns -= previous[1];
      if (ns < 0) { sec -= 1; ns += 1e9; }
    }
    return [sec, ns];
  }
  hrtime.bigint = () => BigIntCtor(now() - started) * 1000000n;
  const process = {
    title: 'quickrealm',
    pid: 1,
    ppid: 0,
    platform: 'linux',
    arch: 'x64',
    argv0: 'quickrealm',
    execArgv: [],
    versions: {},
    release: { name: 'quickrealm' },
    get argv() { return argv; },
    set argv(v) { argv = v; },
    get env() { return env; },
    set env(v) { env = v; },
    get exitCode() { return exitCode; },
    set exitCode(v) {
      exitCode = toCode(v);
      native.setExitCode(exitCode === undefined ? null : exitCode);
    },
    exit(code) {
      const c = code === undefined ? exitCode : toCode(code);
      native.exit(c === undefined ? 0 : c);
    },
    cwd() { return '~'; },
    chdir() {
      const e = new Error('process.chdir() is not supported here; the working directory is always ~');
      e.code = 'ERR_UNSUPPORTED';
      throw e;
    },
    uptime() { return (now() - started) / 1000; },
    hrtime,
    memoryUsage() { return { rss: 0, heapTotal: 0, heapUsed: 0, external: 0, arrayBuffers: 0 }; },
    nextTick(fn, ...args) {
      if (typeof fn !== 'function') {
        const e = new TypeErrorCtor('The "callback" argument must be of type function');
        e.code = 'ERR_INVALID_ARG_TYPE';
        throw e;
      }
      later(fn, args);
    },
    emitWarning(warning) {
      error('Warning: ' + (warning && typeof warning === 'object' && 'message' in warning ? warning.message : StringCtor(warning)));
    },
    on() { return process; },
    once() { return process; },
    off() { return process; },
    addListener() { return process; },
    removeListener() { return process; },
    removeAllListeners() { return process; },
    emit() { return false; },
    listeners() { return []; },
    stdout: stream(1, log),
    stderr: stream(2, error),
  };
  return process;
})"#;

/// Installs the global `process` of an exec run.
fn install_process<'js>(
    ctx: &Ctx<'js>,
    files: &SharedFiles,
    state: &Arc<Mutex<ProcessState>>,
    cancel: &CancelToken,
    argv: &[String],
    env: &[(String, String)],
) -> rquickjs::Result<()> {
    let native = Object::new(ctx.clone())?;
    {
        let (files, state, cancel) = (files.clone(), state.clone(), cancel.clone());
        let exit = Function::new(ctx.clone(), move |ctx: Ctx<'js>, code: i32| {
            lock_state(&state).exit = Some(code);
            lock(&files).halted = true;
            cancel.cancel();
            Err::<(), _>(loader::throw_uncatchable(
                &ctx,
                &format!("process.exit({code})"),
            ))
        })?
        .with_name("exit")?;
        native.set("exit", exit)?;
    }
    {
        let state = state.clone();
        let set = Function::new(ctx.clone(), move |code: Option<i32>| {
            lock_state(&state).exit_code = code;
        })?;
        native.set("setExitCode", set)?;
    }
    {
        let state = state.clone();
        let partial = Function::new(ctx.clone(), move |fd: u32, text: String| {
            let index = usize::from(fd != 1);
            lock_state(&state).partial[index] = text;
        })?;
        native.set("partial", partial)?;
    }
    let decode = Function::new(ctx.clone(), |ctx: Ctx<'js>, bytes: rquickjs::Value<'js>| {
        let data = crate::engine::raw::view_bytes(&ctx, &bytes).unwrap_or_default();
        loader::decode(&data, "utf8")
    })?;
    native.set("decode", decode)?;

    let argv_arr = Array::new(ctx.clone())?;
    for (i, a) in argv.iter().enumerate() {
        argv_arr.set(i, a.as_str())?;
    }
    let env_obj = Object::new(ctx.clone())?;
    for (k, v) in env {
        env_obj.set(k.as_str(), v.as_str())?;
    }
    let console: Object = ctx.globals().get("console")?;
    let log: Function = console.get("log")?;
    let error: Function = console.get("error")?;
    let mut opts = rquickjs::context::EvalOptions::default();
    opts.filename = Some(INTERNAL_FILENAME.into());
    opts.strict = true;
    let build: Function = ctx.eval_with_options(PROCESS_JS, opts)?;
    let process: Object = build.call((native, argv_arr, env_obj, log, error))?;
    ctx.globals().set("process", process)?;
    Ok(())
}

struct ExecExtension {
    files: SharedFiles,
    state: Arc<Mutex<ProcessState>>,
    boot: Boot,
    cancel: CancelToken,
    argv: Vec<String>,
    env: Vec<(String, String)>,
}

impl RealmExtension for ExecExtension {
    fn configure_runtime(&self, rt: &Runtime) {
        loader::install_loader(rt, self.files.clone(), Some(self.boot.clone()));
    }

    fn install(&self, ctx: &Ctx<'_>) -> rquickjs::Result<()> {
        loader::install_shims(ctx, &self.files)?;
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

fn finish(
    req: &ExecRequest,
    entry: String,
    outcome: RunOutcome,
    state: &ProcessState,
    files: &RealmFiles,
) -> ExecOutcome {
    let mut error = outcome.error.clone();
    let mut error_file = None;
    let unhandled = outcome
        .logs
        .iter()
        .find(|l| l.level == "error" && l.message.starts_with(UNHANDLED_PREFIX));
    let engine_stopped = error
        .as_ref()
        .is_some_and(|e| e.code != ErrorCode::Cancelled);
    let (ok, exit_code) = match state.exit {
        Some(code) if !engine_stopped => {
            error = (code != 0).then(|| exit_error(format!("process.exit({code}) was called")));
            (code == 0, code)
        }
        _ if outcome.ok => match (state.exit_code.unwrap_or(0), unhandled) {
            (_, Some(u)) => {
                let text = &u.message[UNHANDLED_PREFIX.len()..];
                let (name, message) = text.split_once(": ").unwrap_or(("Error", text));
                error = Some(ErrorInfo::new(
                    ErrorCode::EvalError,
                    name,
                    format!("{message} (a promise rejection was never handled)"),
                ));
                (false, 1)
            }
            (0, None) => (true, 0),
            (code, None) => {
                error = Some(exit_error(format!(
                    "the run ended with process.exitCode = {code}"
                )));
                (false, code)
            }
        },
        _ => {
            if let Some(e) = error.as_mut() {
                if e.code == ErrorCode::EvalError {
                    error_file = loader::locate(files, e);
                }
            }
            (false, 1)
        }
    };
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
    let changes = req.commit.commits(ok).then(|| files.fs.changes());
    ExecOutcome {
        ok,
        exit_code,
        stdout,
        stderr,
        error,
        error_file,
        entry,
        changes,
        history_id: None,
        stats: outcome.stats,
    }
}

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

// ----- run() with a workspace -----

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
        self.files.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl RealmExtension for WorkspaceRun {
    fn configure_runtime(&self, rt: &Runtime) {
        let files = RealmFiles::shared(FsHost::new(self.overlay.clone()));
        *self.files.lock().unwrap_or_else(|e| e.into_inner()) = Some(files.clone());
        loader::install_loader(rt, files, None);
    }

    fn install(&self, ctx: &Ctx<'_>) -> rquickjs::Result<()> {
        let Some(files) = self.files() else {
            return Ok(());
        };
        let shims = loader::install_shims(ctx, &files)?;
        if self.globals {
            ctx.globals().set("fs", shims.fs)?;
            ctx.globals().set("path", shims.path)?;
        }
        Ok(())
    }

    fn finish(&self, outcome: &mut RunOutcome) {
        let Some(files) = self.files.lock().unwrap_or_else(|e| e.into_inner()).take() else {
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

#[cfg(test)]
mod tests;
