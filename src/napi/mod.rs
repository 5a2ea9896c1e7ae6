//! The thin N-API layer: converts options and results, owns host handles, schedules runs.

pub mod bigint;
pub mod host;
pub mod live;
pub mod options;
pub mod workspace;

use crate::engine::errors::ErrorInfo;
use crate::engine::{execute, workers, CancelToken, RunOutcome};
use host::{Host, Raw, RawValue};
use napi::bindgen_prelude::*;
use napi_derive::napi;

fn build_error(h: Host, e: &ErrorInfo) -> std::result::Result<Raw, String> {
    let obj = h.create_object()?;
    h.set_own(obj, "code", h.create_str(e.code.as_str())?)?;
    h.set_own(obj, "name", h.create_str(&e.name)?)?;
    h.set_own(obj, "message", h.create_str(&e.message)?)?;
    if let Some(l) = e.line {
        h.set_own(obj, "line", h.create_number(l as f64)?)?;
    }
    if let Some(c) = e.column {
        h.set_own(obj, "column", h.create_number(c as f64)?)?;
    }
    if let Some(s) = &e.stack {
        h.set_own(obj, "stack", h.create_str(s)?)?;
    }
    if let Some(f) = &e.frame {
        h.set_own(obj, "frame", h.create_str(f)?)?;
    }
    Ok(obj)
}

/// Builds the `RunResult` object; if `inherit_console`, replays captured lines on the host console.
pub fn build_result(
    h: Host,
    out: &RunOutcome,
    inherit_console: bool,
) -> std::result::Result<Raw, String> {
    let obj = h.create_object()?;
    h.set_own(obj, "ok", h.create_bool(out.ok)?)?;
    if let Some(v) = &out.value {
        h.set_own(obj, "value", host::write(h, v)?)?;
    } else if out.ok {
        h.set_own(obj, "value", h.undefined()?)?;
    }
    h.set_own(obj, "output", h.create_str(&out.output)?)?;
    let logs = if inherit_console {
        replay_console(h, out)?;
        h.create_array(0)?
    } else {
        let logs = h.create_array(out.logs.len())?;
        for (i, l) in out.logs.iter().enumerate() {
            let entry = h.create_object()?;
            h.set_own(entry, "level", h.create_str(l.level)?)?;
            h.set_own(entry, "message", h.create_str(&l.message)?)?;
            h.set_element(logs, i as u32, entry)?;
        }
        logs
    };
    h.set_own(obj, "logs", logs)?;
    if let Some(e) = &out.error {
        h.set_own(obj, "error", build_error(h, e)?)?;
    }
    let stats = h.create_object()?;
    h.set_own(stats, "wallMs", h.create_number(out.stats.wall_ms)?)?;
    h.set_own(
        stats,
        "heapBytes",
        h.create_number(out.stats.heap_bytes as f64)?,
    )?;
    h.set_own(
        stats,
        "hostCalls",
        h.create_number(out.stats.host_calls as f64)?,
    )?;
    h.set_own(obj, "stats", stats)?;
    Ok(obj)
}

fn replay_console(h: Host, out: &RunOutcome) -> std::result::Result<(), String> {
    let console = h.get_named(h.global()?, "console")?;
    for l in &out.logs {
        let f = h.get_named(console, l.level)?;
        h.call(console, f, &[h.create_str(&l.message)?])?;
    }
    Ok(())
}

fn to_napi_err(e: String) -> Error {
    Error::new(Status::GenericFailure, e)
}

/// One resolver type for every way a `run()` promise settles.
fn resolver(outcome: RunOutcome, inherit: bool) -> impl FnOnce(Env) -> Result<RawValue> + Send {
    move |env: Env| {
        build_result(Host::new(env.raw()), &outcome, inherit)
            .map(RawValue)
            .map_err(to_napi_err)
    }
}

fn raw_of(v: &Unknown) -> Raw {
    v.raw()
}

/// Cancels a `run()` from JavaScript (the wrapper connects it to an AbortSignal).
#[napi]
pub struct CancelHandle {
    token: CancelToken,
}

#[napi]
impl CancelHandle {
    #[napi(constructor)]
    pub fn new() -> Self {
        CancelHandle {
            token: CancelToken::new(),
        }
    }

    #[napi]
    pub fn cancel(&self) {
        self.token.cancel();
    }

    #[napi(getter)]
    pub fn cancelled(&self) -> bool {
        self.token.is_cancelled()
    }
}

impl CancelHandle {
    pub fn token(&self) -> CancelToken {
        self.token.clone()
    }
}

impl Default for CancelHandle {
    fn default() -> Self {
        Self::new()
    }
}

/// Runs guest code on the calling thread and returns a `RunResult`.
#[napi(
    js_name = "runSync",
    catch_unwind,
    ts_args_type = "source: string, options?: object | null, cancel?: CancelHandle | null, workspace?: ZipWorkspace | null",
    ts_return_type = "object"
)]
pub fn run_sync(
    env: Env,
    source: Unknown,
    options: Option<Unknown>,
    cancel: Option<&CancelHandle>,
    workspace: Option<&workspace::ZipWorkspace>,
) -> Result<RawValue> {
    let h = Host::new(env.raw());
    let outcome;
    let mut inherit = false;
    let parsed = options::parse_run(h, raw_of(&source), options.as_ref().map(raw_of))
        .and_then(|mut p| p.attach_workspace(workspace).map(|()| p));
    match parsed {
        Err(e) => outcome = RunOutcome::failed(e),
        Ok(parsed) if !parsed.globals.is_empty() => {
            let token = cancel.map(|c| c.token.clone()).unwrap_or_default();
            (outcome, inherit) = live::LiveRun::run_to_end(env.raw(), parsed, token);
        }
        Ok(parsed) => {
            inherit = parsed.inherit_console;
            let token = cancel.map(|c| c.token.clone()).unwrap_or_default();
            outcome = execute(&parsed.request, &token);
        }
    }
    build_result(h, &outcome, inherit)
        .map(RawValue)
        .map_err(to_napi_err)
}

/// Runs guest code on a quickrealm worker thread; resolves to a `RunResult`, never rejects for
/// guest errors.
#[napi(
    js_name = "run",
    catch_unwind,
    ts_args_type = "source: string, options?: object | null, cancel?: CancelHandle | null, workspace?: ZipWorkspace | null",
    ts_return_type = "Promise<object>"
)]
pub fn run(
    env: Env,
    source: Unknown,
    options: Option<Unknown>,
    cancel: Option<&CancelHandle>,
    workspace: Option<&workspace::ZipWorkspace>,
) -> Result<RawValue> {
    let h = Host::new(env.raw());
    let (deferred, promise) = env.create_deferred()?;
    let promise_raw = promise.raw();
    let parsed = options::parse_run(h, raw_of(&source), options.as_ref().map(raw_of))
        .and_then(|mut p| p.attach_workspace(workspace).map(|()| p));
    let parsed = match parsed {
        Ok(p) => p,
        Err(e) => {
            let outcome = RunOutcome::failed(e);
            deferred.resolve(resolver(outcome, false));
            return Ok(RawValue(promise_raw));
        }
    };
    let token = cancel.map(|c| c.token.clone()).unwrap_or_default();
    let Some(pool) = workers::global() else {
        let outcome =
            RunOutcome::failed(ErrorInfo::internal("the worker pool could not be started"));
        deferred.resolve(resolver(outcome, false));
        return Ok(RawValue(promise_raw));
    };
    if !parsed.globals.is_empty() {
        let outcome = RunOutcome::failed(ErrorInfo::invalid(
            "runs with live globals execute on the main thread: call run() from the quickrealm package entry point",
        ));
        deferred.resolve(resolver(outcome, false));
        return Ok(RawValue(promise_raw));
    }
    let inherit = parsed.inherit_console;
    let request = parsed.request;
    let submitted = pool.submit(Box::new(move || {
        let outcome = execute(&request, &token);
        deferred.resolve(resolver(outcome, inherit));
    }));
    if !submitted {
        return Err(Error::new(
            Status::GenericFailure,
            "INTERNAL: the worker pool is not accepting work",
        ));
    }
    Ok(RawValue(promise_raw))
}

/// Sets the number of worker threads used by `run()` (default: one per core).
#[napi(catch_unwind)]
pub fn configure_workers(workers: u32) -> Result<u32> {
    if workers == 0 || workers as usize > workers::MAX_WORKERS {
        return Err(Error::new(
            Status::InvalidArg,
            format!(
                "INVALID_INPUT: workers must be between 1 and {}",
                workers::MAX_WORKERS
            ),
        ));
    }
    let pool = workers::global()
        .ok_or_else(|| Error::new(Status::GenericFailure, "INTERNAL: no worker pool"))?;
    pool.resize(workers as usize)
        .map_err(|e| Error::new(Status::GenericFailure, e.to_string()))?;
    Ok(pool.workers() as u32)
}

/// The current number of worker threads.
#[napi(catch_unwind)]
pub fn worker_count() -> u32 {
    workers::global().map(|p| p.workers() as u32).unwrap_or(0)
}

/// Sets how many prepared realms are kept ready for plain runs (0 turns preparation off).
#[napi(catch_unwind)]
pub fn configure_pool(size: u32) -> Result<u32> {
    if size > 64 {
        return Err(Error::new(
            Status::InvalidArg,
            "INVALID_INPUT: poolSize must be between 0 and 64",
        ));
    }
    crate::engine::realm_pool::set_pool_size(size as usize);
    Ok(size)
}

/// Counters of the prepared-realm pool.
#[napi(object)]
pub struct PoolStats {
    /// Realms built and frozen, waiting for a run.
    pub ready: u32,
    /// How many the pool keeps ready.
    pub size: u32,
    /// Runs that asked the pool for a realm.
    pub taken: u32,
    /// Realms the background builder has prepared so far.
    pub built: u32,
}

#[napi(catch_unwind)]
pub fn pool_stats() -> PoolStats {
    let s = crate::engine::realm_pool::pool_stats();
    PoolStats {
        ready: s.ready as u32,
        size: s.wanted as u32,
        taken: s.taken as u32,
        built: s.built as u32,
    }
}

/// Memory of one fresh, frozen realm as its allocator counts it.
#[napi(object)]
pub struct RealmStats {
    pub bytes_per_realm: u32,
}

#[napi(catch_unwind)]
pub fn realm_stats() -> Result<RealmStats> {
    let realm = crate::engine::realm::Realm::build(crate::engine::realm::RealmSpec {
        with_console: true,
        max_elements: crate::engine::realm::RealmSpec::max_elements_for(
            crate::engine::limits::DEFAULT_MEMORY_BYTES,
        ),
        extension: None,
        live: None,
    })
    .map_err(|e| Error::new(Status::GenericFailure, e.to_string()))?;
    Ok(RealmStats {
        bytes_per_realm: realm.meter.used() as u32,
    })
}
