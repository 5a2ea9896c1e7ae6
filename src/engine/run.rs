//! One run: a fresh runtime and context, injected data, evaluation in the requested mode,
//! the job loop under the deadline, and the copied-out result.

use super::errors::{
    describe_exception, exception_text, first_location, guest_stack, ErrorCode, ErrorInfo,
};
use super::ffi;
use super::limits::{CancelToken, StopReason, Watchdog, MAX_SOURCE_BYTES};
use super::marshal::{Copier, CopyLimits, CopyOutError, Data, GuestWriter, Path};
use super::membrane::{self, FromHost};
use super::persist;
use super::raw;
pub use super::realm::LiveGlobals;
use super::realm::{ConsoleMode, LogEntry};
use super::realm::{Realm, RealmSpec};
use super::realm_pool;
pub use super::request::{
    Deterministic, Extension, Mode, PersistState, RealmExtension, RunOutcome, RunRequest, Stats,
};
use super::template;
use rquickjs::context::EvalOptions;
use rquickjs::{qjs, Ctx, Module, Object, Persistent, Value};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Prefix for function mode; it shares the first line with the caller's source so line numbers
/// match, and columns on line 1 are shifted back by its length.
const FN_PREFIX: &str = "(async function () { ";
const FN_SUFFIX: &str = "\n})";

pub fn validate(req: &RunRequest) -> Result<(), ErrorInfo> {
    if req.source.len() > MAX_SOURCE_BYTES {
        return Err(ErrorInfo::invalid(format!(
            "source is {} bytes; the limit is {MAX_SOURCE_BYTES}",
            req.source.len()
        )));
    }
    if req.source.contains('\0') {
        return Err(ErrorInfo::invalid("source contains a NUL character"));
    }
    if req.filename.is_empty() || req.filename.len() > 256 || req.filename.contains(['\0', '\n']) {
        return Err(ErrorInfo::invalid(
            "filename must be 1 to 256 characters on one line",
        ));
    }
    if let Some(ps) = &req.state {
        if ps.key.len() < super::state::MIN_KEY_BYTES {
            return Err(ErrorInfo::invalid(format!(
                "a state key must be at least {} bytes",
                super::state::MIN_KEY_BYTES
            )));
        }
    }
    for (name, _) in &req.data {
        if name.is_empty() || name.contains('\0') {
            return Err(ErrorInfo::invalid("data keys must be non-empty strings"));
        }
    }
    Ok(())
}

/// Runs guest code to completion in a fresh realm. Never panics: a panic inside becomes an
/// `INTERNAL` error.
pub fn execute(req: &RunRequest, cancel: &CancelToken) -> RunOutcome {
    guarded(|| {
        let mut active = match ActiveRun::start(req.clone(), cancel, None) {
            Ok(s) => s,
            Err(outcome) => return outcome,
        };
        active.pump(false);
        active.finish()
    })
}

/// Runs guest code on one of quickrealm's worker threads; `done` receives the outcome there.
/// When no worker can take the run, `done` is dropped uncalled and the error comes back.
pub fn execute_on_worker(
    req: RunRequest,
    cancel: CancelToken,
    done: impl FnOnce(RunOutcome) + Send + 'static,
) -> Result<(), ErrorInfo> {
    let pool = super::workers::global()
        .ok_or_else(|| ErrorInfo::internal("the worker threads could not be started"))?;
    if pool.submit(Box::new(move || done(execute(&req, &cancel)))) {
        Ok(())
    } else {
        Err(ErrorInfo::internal(
            "the worker threads are not accepting work",
        ))
    }
}

/// Runs `f`, turning a panic into an `INTERNAL` outcome.
pub fn guarded(f: impl FnOnce() -> RunOutcome) -> RunOutcome {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(out) => out,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            RunOutcome::failed(ErrorInfo::internal(format!("quickrealm bug: {what}")))
        }
    }
}

/// Whether a run has finished or is waiting (for a host promise it awaits, or for the next of
/// its timers, due in the given time).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pump {
    Finished,
    Waiting(Option<Duration>),
}

/// One pass of the job loop: done for now, go again (a timer ran), or a timer is due later.
#[derive(Clone, Copy)]
enum Turn {
    Done(Pump),
    Again,
    TimerIn(Duration),
}

/// One run in progress: created by `start`, advanced by `pump`, ended by `finish`. Plain runs go
/// through all three at once (`execute`); runs with live host values pump again whenever a host
/// promise settles.
pub struct ActiveRun {
    // Guest values kept across calls; released before the realm (field order is drop order).
    main: Option<Persistent<Value<'static>>>,
    namespace: Option<Persistent<Object<'static>>>,
    early_error: Option<ErrorInfo>,
    main_promise: Option<usize>,
    realm: Option<Realm>,
    req: RunRequest,
    watchdog: Arc<Watchdog>,
    /// Runs over a persistent realm's state: the globals the host installed for this run,
    /// which are not state; `None` until the state was read (a run whose state could not be
    /// read writes none back).
    host_names: Option<Vec<String>>,
}

impl ActiveRun {
    /// Takes a prepared realm (or builds one), injects data and live globals, and starts the
    /// guest code.
    // The error is the run's final outcome, returned once; boxing it would buy nothing.
    #[allow(clippy::result_large_err)]
    pub fn start(
        req: RunRequest,
        cancel: &CancelToken,
        live: Option<LiveGlobals>,
    ) -> Result<ActiveRun, RunOutcome> {
        validate(&req).map_err(RunOutcome::failed)?;
        if cancel.is_cancelled() {
            return Err(RunOutcome::failed(ErrorInfo::new(
                ErrorCode::Cancelled,
                "AbortError",
                "the run was cancelled",
            )));
        }
        let limits = req.limits;
        let watchdog = Watchdog::new(Duration::from_millis(limits.timeout_ms), cancel.clone());
        let mut spec = RealmSpec {
            with_console: req.console != ConsoleMode::Absent,
            extension: req.extension.as_ref(),
            live,
            deterministic: req.deterministic,
        };
        if req.state.is_some() && !spec.derivable() {
            return Err(RunOutcome::failed(ErrorInfo::invalid(
                "a persistent realm needs the standard realm: console on and no workspace",
            )));
        }
        // The globals the host installs for this run are not state: with live values or an
        // extension, their names are those the global object gains while they are installed.
        let installs = spec.live.is_some() || spec.extension.is_some();
        let mut names_before = None;
        let realm = if spec.derivable() {
            let derived = template::derive();
            if let (Some(realm), Some(_)) = (derived.as_ref(), req.state.as_ref()) {
                names_before = Some(match installs {
                    true => realm.context.with(|ctx| persist::global_names(&ctx)),
                    false => Vec::new(),
                });
            }
            if let (Some(realm), Some(d)) = (derived.as_ref(), spec.deterministic) {
                realm.make_deterministic(d);
            }
            match derived {
                Some(mut derived) => {
                    if let Some(live) = spec.live.take() {
                        if let Err(e) = derived.attach_live(live) {
                            template::retire(derived, true);
                            return Err(RunOutcome::failed(e.into()));
                        }
                    }
                    if let Some(ext) = spec.extension {
                        if let Err(e) = derived.attach_extension(ext) {
                            // What the extension left half-installed is not worth keeping.
                            template::retire(derived, false);
                            return Err(RunOutcome::failed(e.into()));
                        }
                    }
                    Some(derived)
                }
                None if spec.is_standard() => realm_pool::take_standard(),
                None => None,
            }
        } else {
            None
        };
        let realm = match realm {
            Some(r) => r,
            None if req.state.is_some() => {
                return Err(RunOutcome::failed(ErrorInfo::internal(
                    "the thread's template realm could not be derived",
                )))
            }
            None => Realm::build(spec).map_err(|e| RunOutcome::failed(e.into()))?,
        };
        let host_names = names_before.map(|before| {
            if !installs {
                return Vec::new();
            }
            let before: std::collections::HashSet<String> = before.into_iter().collect();
            let after = realm.context.with(|ctx| persist::global_names(&ctx));
            after
                .into_iter()
                .filter(|n| !before.contains(n))
                .collect::<Vec<_>>()
        });
        realm.begin(
            &limits,
            watchdog.clone(),
            req.input.as_deref(),
            req.console == ConsoleMode::Capture,
            req.on_log.clone(),
        );
        let mut active = ActiveRun {
            main: None,
            namespace: None,
            early_error: None,
            main_promise: None,
            realm: Some(realm),
            req,
            watchdog,
            host_names: None,
        };
        active.inject_and_start(host_names);
        Ok(active)
    }

    fn inject_and_start(&mut self, host_names: Option<Vec<String>>) {
        let Some(realm) = self.realm.as_ref() else {
            return;
        };
        let req = &self.req;
        let watchdog = &self.watchdog;
        let mut restored = false;
        let (main, namespace, error) = realm.context.with(|ctx| {
            if let Some(ps) = &req.state {
                if let Err(info) = persist::restore(&ctx, ps, &req.limits) {
                    return (None, None, Some(info));
                }
                restored = true;
            }
            if let Err(info) = inject_data(&ctx, &req.data) {
                return (None, None, Some(info));
            }
            let run = GuestRun {
                ctx: &ctx,
                req,
                watchdog,
            };
            match run.start(realm.derived) {
                Ok((value, module)) => {
                    let ns = module
                        .and_then(|m| m.namespace().ok())
                        .map(|ns| Persistent::save(&ctx, ns));
                    let promise_id = value.as_promise().map(|p| raw::identity(p.as_value()));
                    (Some((Persistent::save(&ctx, value), promise_id)), ns, None)
                }
                Err(e) => (None, None, Some(run.guest_error(e))),
            }
        });
        if let Some((main, promise_id)) = main {
            self.main = Some(main);
            self.main_promise = promise_id;
        }
        self.namespace = namespace;
        self.early_error = error;
        if restored {
            self.host_names = host_names;
        }
    }

    /// Delivers a host promise settlement, then the caller pumps.
    pub fn settle(&mut self, settle: u32, outcome: Result<FromHost, membrane::HostFailure>) {
        let Some(realm) = self.realm.as_ref() else {
            return;
        };
        if let Some(g) = realm.guest.clone() {
            realm.enter(self.req.limits.stack_bytes);
            let failed = realm.context.with(|ctx| match g.settle(settle, outcome) {
                Ok(()) => None,
                Err(e) => Some(
                    GuestRun {
                        ctx: &ctx,
                        req: &self.req,
                        watchdog: &self.watchdog,
                    }
                    .guest_error(e),
                ),
            });
            if let (Some(e), None) = (failed, &self.early_error) {
                self.early_error = Some(e);
            }
        }
    }

    /// Runs queued jobs, and the guest's timers as they fall due. With `can_wait`, a
    /// still-pending result means "waiting" (for the host, or for the next timer, which the
    /// answer names); without it the run waits for its timers here, and a result nothing could
    /// settle any more is an error.
    pub fn pump(&mut self, can_wait: bool) -> Pump {
        loop {
            match self.turn(can_wait) {
                Turn::Done(pump) => return pump,
                Turn::Again => {}
                Turn::TimerIn(wait) if can_wait => return Pump::Waiting(Some(wait)),
                Turn::TimerIn(wait) => self.sleep_until_due(wait),
            }
        }
    }

    /// Waits for a timer on this thread, ending early at the deadline or an abort.
    fn sleep_until_due(&self, wait: Duration) {
        let until = Instant::now() + wait;
        while !self.watchdog.should_stop() {
            let now = Instant::now();
            if now >= until {
                return;
            }
            // Short naps: an abort is noticed within a few milliseconds.
            std::thread::sleep((until - now).min(Duration::from_millis(5)));
        }
    }

    fn turn(&mut self, can_wait: bool) -> Turn {
        if self.early_error.is_some() {
            return Turn::Done(Pump::Finished);
        }
        let Some(realm) = self.realm.as_ref() else {
            return Turn::Done(Pump::Finished);
        };
        realm.enter(self.req.limits.stack_bytes);
        let req = &self.req;
        let watchdog = &self.watchdog;
        let main = self.main.clone();
        let timers = realm.timers.as_ref();
        let finished = Turn::Done(Pump::Finished);
        let (turn, error, promise_id) = realm.context.with(|ctx| {
            let run = GuestRun { ctx: &ctx, req, watchdog };
            if let Err(e) = run.drain_jobs() {
                return (finished, Some(e), None);
            }
            if watchdog.reason() != StopReason::None {
                return (finished, None, None);
            }
            let Some(main) = main.and_then(|m| m.restore(&ctx).ok()) else {
                return (finished, None, None);
            };
            let Some(p) = main.as_promise() else {
                return (finished, None, None);
            };
            let id = Some(raw::identity(p.as_value()));
            if p.state() != rquickjs::promise::PromiseState::Pending {
                return (finished, None, id);
            }
            if let Some(timers) = timers {
                let next = timers.next_due(&ctx).and_then(|due| match due {
                    Some(ms) if ms <= 0.0 => timers.fire_next(&ctx).map(|_| Some(Turn::Again)),
                    // Virtual time: the clock jumps to the timer instead of waiting for it.
                    Some(ms) if req.deterministic.is_some() => {
                        ffi::advance_virtual_clock(&ctx, ms);
                        Ok(Some(Turn::Again))
                    }
                    Some(ms) => Ok(Some(Turn::TimerIn(Duration::from_secs_f64(ms / 1000.0)))),
                    None => Ok(None),
                });
                match next {
                    Ok(Some(turn)) => return (turn, None, id),
                    Ok(None) => {}
                    // Stopped inside a callback: the stop reason is the outcome.
                    Err(_) if watchdog.reason() != StopReason::None => {
                        let _ = ctx.catch();
                        return (finished, None, id);
                    }
                    // A timer callback threw: nothing can catch it, so the run fails with it.
                    Err(e) => return (finished, Some(run.guest_error(e)), id),
                }
            }
            if can_wait {
                return (Turn::Done(Pump::Waiting(None)), None, id);
            }
            let info = ErrorInfo::new(
                ErrorCode::Timeout,
                "TimeoutError",
                "the awaited promise can never settle: no pending work is left that could settle it",
            );
            (finished, Some(info), id)
        });
        if promise_id.is_some() {
            self.main_promise = promise_id;
        }
        if error.is_some() && self.early_error.is_none() {
            self.early_error = error;
        }
        turn
    }

    /// Writes a persistent realm's state once the run is over: after a success, or after a
    /// failure unless the state is transactional. A realm stopped for memory, or whose state
    /// cannot be written, keeps the state the run started from; a success whose state cannot
    /// be written becomes that failure.
    fn capture_state(
        req: &RunRequest,
        host_names: Option<Vec<String>>,
        realm: &Realm,
        error: Option<ErrorInfo>,
    ) -> (Option<ErrorInfo>, Option<Vec<u8>>) {
        let (Some(ps), Some(names)) = (req.state.as_ref(), host_names) else {
            return (error, None);
        };
        if (error.is_some() && ps.transactional) || realm.meter.exhausted() {
            return (error, None);
        }
        match persist::capture(realm, ps, &req.limits, &names) {
            Ok(sealed) => (error, Some(sealed)),
            Err(e) => (error.or(Some(e)), None),
        }
    }

    /// Ends the run: copies the result out, collects output, and releases the realm.
    pub fn finish(mut self) -> RunOutcome {
        let Some(realm) = self.realm.take() else {
            return RunOutcome::failed(ErrorInfo::internal("the run has no realm"));
        };
        let req = &self.req;
        let watchdog = &self.watchdog;
        let (value, guest_error) = match self.early_error.take() {
            Some(e) => (None, Some(e)),
            None => {
                let main = self.main.take();
                let namespace = self.namespace.take();
                realm.context.with(|ctx| {
                    let run = GuestRun {
                        ctx: &ctx,
                        req,
                        watchdog,
                    };
                    let main = main.and_then(|m| m.restore(&ctx).ok());
                    let namespace = namespace.and_then(|n| n.restore(&ctx).ok());
                    run.settle_and_copy(main, namespace)
                })
            }
        };
        self.main = None;
        self.namespace = None;
        let (steps, steps_exhausted) = realm.context.with(|ctx| ffi::steps(&ctx));
        let host_calls = realm
            .guest
            .as_ref()
            .map(|g| g.host_calls.get())
            .unwrap_or(0);
        if let Some(g) = realm.guest.as_ref() {
            g.release();
        }

        let limits = req.limits;
        // Engine stops first, then memory, then the guest's own error.
        let error = match watchdog.reason() {
            StopReason::Timeout => Some(ErrorInfo::new(
                ErrorCode::Timeout,
                "TimeoutError",
                format!("execution exceeded {} ms", limits.timeout_ms),
            )),
            StopReason::Cancelled => Some(ErrorInfo::new(
                ErrorCode::Cancelled,
                "AbortError",
                "the run was cancelled",
            )),
            StopReason::Output => Some(ErrorInfo::new(
                ErrorCode::OutputLimit,
                "RangeError",
                format!("output exceeded {} bytes", limits.output_bytes),
            )),
            StopReason::HostCalls => Some(ErrorInfo::new(
                ErrorCode::HostCallLimit,
                "RangeError",
                "the run made more host calls than its budget allows",
            )),
            StopReason::None if steps_exhausted => Some(ErrorInfo::new(
                ErrorCode::StepLimit,
                "RangeError",
                format!(
                    "the run took more than {} steps (loop iterations and calls)",
                    limits.steps.unwrap_or_default()
                ),
            )),
            StopReason::None if realm.meter.exhausted() => Some(ErrorInfo::new(
                ErrorCode::MemoryLimit,
                "RangeError",
                format!("memory limit of {} bytes exceeded", limits.memory_bytes),
            )),
            StopReason::None => guest_error,
        };
        let (error, state) = Self::capture_state(req, self.host_names.take(), &realm, error);
        let (output, mut logs) = {
            let mut sink = realm.slot.sink.borrow_mut();
            (
                std::mem::take(&mut sink.output),
                std::mem::take(&mut sink.logs),
            )
        };
        {
            let u = realm.unhandled.borrow();
            for (id, text) in &u.entries {
                if Some(*id) != self.main_promise {
                    logs.push(LogEntry {
                        level: "error",
                        message: format!("Unhandled promise rejection: {text}"),
                    });
                }
            }
            if u.dropped > 0 {
                logs.push(LogEntry {
                    level: "error",
                    message: format!("... and {} more unhandled rejections", u.dropped),
                });
            }
        }
        let ok = error.is_none();
        let heap_bytes = realm.meter.peak().saturating_sub(realm.heap_base.get());
        if realm.derived {
            let clean = watchdog.reason() == StopReason::None
                && !steps_exhausted
                && !realm.meter.exhausted();
            template::retire(realm, clean);
        } else if realm.standard {
            realm_pool::retire(realm);
        } else {
            drop(realm);
        }
        let mut outcome = RunOutcome {
            ok,
            value: if ok { value } else { None },
            output,
            logs,
            error,
            stats: Stats {
                wall_ms: watchdog.elapsed_ms(),
                heap_bytes,
                host_calls,
                steps,
            },
            state,
        };
        if let Some(ext) = &req.extension {
            ext.0.finish(&mut outcome);
        }
        outcome
    }
}

fn inject_data(ctx: &Ctx<'_>, data: &[(String, Data)]) -> Result<(), ErrorInfo> {
    let global = ctx.globals();
    // One writer for every key: the host read them as one copy, so a value shared between two
    // keys is a `Ref` across them.
    let mut writer = GuestWriter::new(ctx);
    for (name, value) in data {
        if raw::own_descriptor(
            ctx,
            &global,
            &rquickjs::String::from_str(ctx.clone(), name)
                .map_err(|e| ErrorInfo::internal(e.to_string()))?
                .into_value(),
        )
        .is_some()
        {
            return Err(ErrorInfo::invalid(format!(
                "data key '{name}' collides with a built-in global"
            )));
        }
        let v = writer.write(value).map_err(|e| {
            ErrorInfo::invalid(format!(
                "data.{name} could not be copied in: {}",
                exception_text(ctx, e)
            ))
        })?;
        if !raw::define_data(ctx, &global, name, v) {
            let _ = ctx.catch();
            return Err(ErrorInfo::invalid(format!(
                "data key '{name}' could not be defined"
            )));
        }
    }
    Ok(())
}

struct GuestRun<'a, 'js> {
    ctx: &'a Ctx<'js>,
    req: &'a RunRequest,
    watchdog: &'a Watchdog,
}

impl<'a, 'js> GuestRun<'a, 'js> {
    /// Reads the settled result (awaiting a promise's outcome) and copies it out.
    fn settle_and_copy(
        &self,
        main: Option<Value<'js>>,
        namespace: Option<Object<'js>>,
    ) -> (Option<Data>, Option<ErrorInfo>) {
        if self.watchdog.reason() != StopReason::None {
            return (None, None);
        }
        let Some(started) = main else {
            return (None, Some(ErrorInfo::internal("the run produced no value")));
        };
        let settled = match started.as_promise() {
            None => started,
            Some(p) => match p.state() {
                rquickjs::promise::PromiseState::Resolved => match p.result::<Value>() {
                    Some(Ok(v)) => v,
                    Some(Err(e)) => return (None, Some(self.guest_error(e))),
                    None => Value::new_undefined(self.ctx.clone()),
                },
                rquickjs::promise::PromiseState::Rejected => {
                    let reason = match p.result::<Value>() {
                        Some(Err(rquickjs::Error::Exception)) => self.ctx.catch(),
                        _ => Value::new_undefined(self.ctx.clone()),
                    };
                    return (None, Some(self.error_from_value(&reason)));
                }
                rquickjs::promise::PromiseState::Pending => {
                    let info = ErrorInfo::new(
                        ErrorCode::Timeout,
                        "TimeoutError",
                        "the awaited promise can never settle: no pending work is left that could settle it",
                    );
                    return (None, Some(info));
                }
            },
        };
        let settled = match (self.req.mode, settled.as_object()) {
            // The engine's own `{ value }` record: reading it runs no guest code.
            (Mode::Repl, Some(record)) => match record.get::<_, Value>("value") {
                Ok(v) => v,
                Err(e) => return (None, Some(self.guest_error(e))),
            },
            _ => settled,
        };
        let result = namespace.map(|ns| ns.into_value()).unwrap_or(settled);
        let mut copier = Copier::new(self.ctx, CopyLimits::default());
        match copier.copy(&result, &Path::Root("value")) {
            Ok(d) => (Some(d), None),
            Err(CopyOutError::Invalid(why)) => (
                None,
                Some(ErrorInfo::new(
                    ErrorCode::EvalError,
                    "ResultError",
                    format!("the result cannot be copied out: {why}"),
                )),
            ),
            Err(CopyOutError::Guest(e)) => (None, Some(self.guest_error(e))),
        }
    }

    fn eval_options(&self) -> EvalOptions {
        let mut opts = EvalOptions::default();
        opts.global = true;
        opts.strict = true;
        opts.filename = Some(self.req.filename.clone());
        opts
    }

    /// The source compiled once per thread, for runs derived from the thread's template.
    fn compiled(&self, derived: bool, source: &str) -> Option<Value<'js>> {
        if !derived {
            return None;
        }
        let cell = self.req.mode == Mode::Repl;
        template::compiled_script(self.ctx, source, &self.req.filename, cell)
    }

    /// Compiles and starts the guest code; returns its first value (maybe a promise).
    #[allow(clippy::type_complexity)]
    fn start(
        &self,
        derived: bool,
    ) -> rquickjs::Result<(Value<'js>, Option<Module<'js, rquickjs::module::Evaluated>>)> {
        let ctx = self.ctx;
        match self.req.mode {
            Mode::Function => {
                let wrapped = format!("{FN_PREFIX}{}{FN_SUFFIX}", self.req.source);
                let f: rquickjs::Function = match self.compiled(derived, &wrapped) {
                    Some(script) => raw::eval_script(ctx, script)?.get()?,
                    None => ctx.eval_with_options(wrapped, self.eval_options())?,
                };
                let v: Value = f.call(())?;
                Ok((v, None))
            }
            Mode::Script => {
                let v: Value = match self.compiled(derived, &self.req.source) {
                    Some(script) => raw::eval_script(ctx, script)?,
                    None => ctx.eval_with_options(self.req.source.as_str(), self.eval_options())?,
                };
                Ok((v, None))
            }
            Mode::Repl => {
                // Top-level await; the completion value comes as the promise's `{ value }`.
                let v: Value = match self.compiled(derived, &self.req.source) {
                    Some(script) => raw::eval_script(ctx, script)?,
                    None => {
                        let mut opts = self.eval_options();
                        opts.promise = true;
                        ctx.eval_with_options(self.req.source.as_str(), opts)?
                    }
                };
                Ok((v, None))
            }
            Mode::Module => {
                let declared = Module::declare(
                    ctx.clone(),
                    self.req.filename.as_str(),
                    self.req.source.as_str(),
                )?;
                let (module, promise) = declared.eval()?;
                Ok((promise.into_value(), Some(module)))
            }
        }
    }

    /// Runs queued promise jobs until none is left or the watchdog stops the run.
    fn drain_jobs(&self) -> Result<(), ErrorInfo> {
        let c = self.ctx.as_raw().as_ptr();
        loop {
            if self.watchdog.should_stop() {
                return Ok(());
            }
            // SAFETY: the runtime outlives this call; the job context pointer is only used
            // to fetch the pending exception of the job that failed.
            unsafe {
                let rt = qjs::JS_GetRuntime(c);
                if !qjs::JS_IsJobPending(rt) {
                    return Ok(());
                }
                let mut job_ctx: *mut qjs::JSContext = std::ptr::null_mut();
                if qjs::JS_ExecutePendingJob(rt, &mut job_ctx) < 0 {
                    let exc = self.ctx.catch();
                    if self.watchdog.reason() != StopReason::None || exc.is_uncatchable_error() {
                        continue;
                    }
                    return Err(self.error_from_value(&exc));
                }
            }
        }
    }

    fn guest_error(&self, e: rquickjs::Error) -> ErrorInfo {
        match e {
            rquickjs::Error::Exception => {
                let exc = self.ctx.catch();
                self.error_from_value(&exc)
            }
            other => ErrorInfo::new(ErrorCode::EvalError, "TypeError", other.to_string()),
        }
    }

    /// Turns a thrown guest value into a report located in the caller's source.
    fn error_from_value(&self, exc: &Value<'js>) -> ErrorInfo {
        let (name, message, stack) = describe_exception(self.ctx, exc);
        let _ = self.ctx.catch();
        let mut info = ErrorInfo::new(ErrorCode::EvalError, &name, message);
        let filename = &self.req.filename;
        let Some(stack) = stack else {
            return info;
        };
        let stack = if self.req.mode == Mode::Function {
            shift_first_line_columns(&stack, filename, FN_PREFIX.len() as u32)
        } else {
            stack
        };
        let guest = guest_stack(&stack, filename);
        if let Some((line, column)) = first_location(&stack, filename) {
            let last_line = self.req.source.split('\n').count() as u32;
            let (line, column) = if line > last_line {
                let last = self.req.source.rsplit('\n').next().unwrap_or("");
                (last_line, last.chars().count() as u32 + 1)
            } else {
                (line, column)
            };
            info = info.at(&self.req.source, line, column);
        }
        if !guest.is_empty() {
            info.stack = Some(guest);
        }
        info
    }
}

/// In function mode the wrapper shares line 1 with the caller's code; shift those columns back.
fn shift_first_line_columns(stack: &str, filename: &str, by: u32) -> String {
    let needle = format!("{filename}:1:");
    let mut out = String::with_capacity(stack.len());
    let mut rest = stack;
    while let Some(pos) = rest.find(&needle) {
        let (head, tail) = rest.split_at(pos + needle.len());
        out.push_str(head);
        let digits: String = tail.chars().take_while(|c| c.is_ascii_digit()).collect();
        let col = digits.parse::<u32>().unwrap_or(1);
        out.push_str(&col.saturating_sub(by).max(1).to_string());
        rest = &tail[digits.len()..];
    }
    out.push_str(rest);
    out
}
