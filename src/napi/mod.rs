//! The N-API layer: converts arguments in and results out, owns host handles. No logic: what a
//! run does, what a setting allows and when a live run is finished are the engine's decisions.

pub(crate) mod convert;
pub(crate) mod live;
pub(crate) mod option_object;
pub(crate) mod options;
pub(crate) mod raw;
pub(crate) mod results;
pub mod session;
pub mod text;
pub(crate) mod workspace;

use crate::codes::ErrorCode;
use crate::engine::errors::ErrorInfo;
use crate::engine::run::execute_on_worker;
use crate::engine::settings::{self, SettingsRequest};
use crate::engine::{execute, CancelToken, RunOutcome};
use crate::session::{SessionCode, SessionError};
use crate::workspace::{WsCode, WsError};
use napi::bindgen_prelude::*;
use napi_derive::napi;
use raw::{Host, RawValue};
use results::RunReply;

/// The class of JavaScript error a failure is thrown as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ErrorClass {
    Error,
    /// An argument of the wrong shape.
    TypeError,
    /// A number outside the range an option allows.
    RangeError,
}

/// A failure as JavaScript receives it: its class, its `code` property and its whole message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Thrown {
    pub class: ErrorClass,
    pub code: ErrorCode,
    pub message: String,
}

/// Engine errors keep the class their name says, and a message that starts with the code.
impl From<&ErrorInfo> for Thrown {
    fn from(e: &ErrorInfo) -> Self {
        let class = match e.name.as_str() {
            "TypeError" => ErrorClass::TypeError,
            "RangeError" => ErrorClass::RangeError,
            _ => ErrorClass::Error,
        };
        Thrown {
            class,
            code: e.code,
            message: format!("{}: {}", e.code.as_str(), e.message),
        }
    }
}

/// Workspace errors: `INVALID_INPUT` is a TypeError; the message is the workspace's own.
impl From<WsError> for Thrown {
    fn from(e: WsError) -> Self {
        let class = if e.code == WsCode::InvalidInput {
            ErrorClass::TypeError
        } else {
            ErrorClass::Error
        };
        Thrown {
            class,
            code: e.code,
            message: e.message,
        }
    }
}

/// Session errors: `INVALID_INPUT` is a TypeError; the message starts with the code.
impl From<SessionError> for Thrown {
    fn from(e: SessionError) -> Self {
        let class = if e.code == SessionCode::InvalidInput {
            ErrorClass::TypeError
        } else {
            ErrorClass::Error
        };
        Thrown {
            class,
            code: e.code,
            message: format!("{}: {}", e.code.as_str(), e.message),
        }
    }
}

impl From<&SessionError> for Thrown {
    fn from(e: &SessionError) -> Self {
        Thrown::from(e.clone())
    }
}

/// Throws `failure` as a JavaScript error of its class with its `code` property set, and
/// returns the napi error that tells the caller an exception is pending. The one way every
/// export reports a failure.
pub(crate) fn throw(env: &Env, failure: impl Into<Thrown>) -> Error {
    let Thrown {
        class,
        code,
        message,
    } = failure.into();
    let code = Some(code.as_str());
    let thrown = match class {
        ErrorClass::TypeError => env.throw_type_error(&message, code),
        ErrorClass::RangeError => env.throw_range_error(&message, code),
        ErrorClass::Error => env.throw_error(&message, code),
    };
    match thrown {
        Ok(()) => Error::new(Status::PendingException, message),
        Err(e) => e,
    }
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

/// A run's source and options (with the workspace instance, if the options name one).
fn parse(
    h: Host,
    source: &Unknown,
    options: Option<&Unknown>,
    workspace: Option<&workspace::ZipWorkspace>,
    data_text: Option<&str>,
) -> std::result::Result<options::ParsedRun, ErrorInfo> {
    let mut parsed = options::parse_run(h, source.raw(), options.map(|o| o.raw()), data_text)?;
    parsed.attach_workspace(workspace)?;
    Ok(parsed)
}

pub(crate) fn token_of(cancel: Option<&CancelHandle>) -> CancelToken {
    cancel.map(CancelHandle::token).unwrap_or_default()
}

/// Runs guest code on the calling thread.
#[napi(
    js_name = "runSync",
    catch_unwind,
    ts_args_type = "source: string, options?: RunOptions | null, cancel?: CancelHandle | null, workspace?: ZipWorkspace | null, dataText?: string | null",
    ts_return_type = "NativeRunResult | string | [string, Buffer]"
)]
pub fn run_sync(
    env: Env,
    source: Unknown,
    options: Option<Unknown>,
    cancel: Option<&CancelHandle>,
    workspace: Option<&workspace::ZipWorkspace>,
    data_text: Option<String>,
) -> RunReply {
    let h = Host::of(&env);
    let outcome = match parse(
        h,
        &source,
        options.as_ref(),
        workspace,
        data_text.as_deref(),
    ) {
        Err(e) => RunOutcome::failed(e),
        Ok(parsed) if !parsed.globals.is_empty() => live::run_to_end(h, parsed, token_of(cancel)),
        Ok(parsed) => execute(&parsed.request, &token_of(cancel)),
    };
    outcome.into()
}

/// Runs guest code on a quickrealm worker thread; resolves to the result, never rejects for
/// guest errors.
#[napi(
    js_name = "run",
    catch_unwind,
    ts_args_type = "source: string, options?: RunOptions | null, cancel?: CancelHandle | null, workspace?: ZipWorkspace | null, dataText?: string | null",
    ts_return_type = "Promise<NativeRunResult | string | [string, Buffer]>"
)]
pub fn run(
    env: Env,
    source: Unknown,
    options: Option<Unknown>,
    cancel: Option<&CancelHandle>,
    workspace: Option<&workspace::ZipWorkspace>,
    data_text: Option<String>,
) -> Result<RawValue> {
    let h = Host::of(&env);
    let (deferred, promise) = env.create_deferred()?;
    let parsed = parse(h, &source, options.as_ref(), workspace, data_text.as_deref()).and_then(|p| {
            if p.globals.is_empty() {
                Ok(p)
            } else {
                Err(ErrorInfo::invalid(
                    "runs with live globals execute on the main thread: call run() from the quickrealm package entry point",
                ))
            }
        });
    let settle = move |outcome: RunOutcome| {
        deferred.resolve(move |_| Ok(RunReply::from(outcome)));
    };
    match parsed {
        Err(e) => settle(RunOutcome::failed(e)),
        Ok(p) => {
            if let Err(error) = execute_on_worker(p.request, token_of(cancel), settle) {
                return Err(throw(&env, &error));
            }
        }
    }
    Ok(RawValue(promise.raw()))
}

/// Verifies a persistent realm's sealed state under the key `from` and seals the same state
/// under `to`: how a state is handed out under the caller's key, or taken back in. Throws
/// SNAPSHOT_TAMPERED when it does not verify, SNAPSHOT_VERSION when it is from another build.
#[napi(
    js_name = "resealState",
    catch_unwind,
    ts_args_type = "bytes: Uint8Array, from: string | Uint8Array, to: string | Uint8Array"
)]
pub fn reseal_state(
    env: Env,
    bytes: Unknown,
    from: Unknown,
    to: Unknown,
) -> Result<napi::bindgen_prelude::Buffer> {
    let h = Host::of(&env);
    let read = || -> std::result::Result<Vec<u8>, ErrorInfo> {
        let bytes = options::read_bytes(h, bytes.raw(), "bytes")?;
        let from = options::read_key(h, from.raw(), "key")?;
        let to = options::read_key(h, to.raw(), "key")?;
        crate::engine::reseal_state(&bytes, &from, &to)
    };
    read().map(Into::into).map_err(|e| throw(&env, &e))
}

option_object::option_object! {
    #[doc = "Process-wide settings to change; those left out stay as they are."]
    pub struct ConfigureOptions {
        #[doc = "Worker threads used by run(); default one per core."]
        workers: "workers" = "number",
        #[doc = "Realms built and frozen ahead of time on a background thread for plain runs (no globals, no"]
        #[doc = "workspace, default memory limit, console not 'none'); default 2, 0 turns it off. Each realm"]
        #[doc = "serves exactly one run and is torn down on another background thread afterwards."]
        pool_size: "poolSize" = "number",
    }
}

/// Settings as JavaScript passes them to `configure()`. Anything but a number is refused by
/// the settings' range check, as NaN.
fn settings_request(h: Host, options: Unknown) -> std::result::Result<SettingsRequest, ErrorInfo> {
    use option_object::{number_or_nan, read, Wording};
    let given: ConfigureOptions = read(h, options.raw(), "options", Wording::Configure)?;
    let number = |v: Option<raw::Raw>| v.map(|v| number_or_nan(h, v)).transpose();
    Ok(SettingsRequest {
        workers: number(given.workers)?,
        pool_size: number(given.pool_size)?,
    })
}

/// Process-wide settings in force.
#[napi(object, object_from_js = false)]
pub struct Settings {
    /// Worker threads that run `run()` calls.
    pub workers: u32,
    /// Realms kept prepared for plain runs.
    pub pool_size: u32,
}

impl From<settings::Settings> for Settings {
    fn from(s: settings::Settings) -> Self {
        Settings {
            workers: s.workers as u32,
            pool_size: s.pool_size as u32,
        }
    }
}

/// Changes process-wide settings (`workers`, `poolSize`) and returns those in force.
#[napi(catch_unwind, ts_args_type = "options: ConfigureOptions")]
pub fn configure(env: Env, options: Unknown) -> Result<Settings> {
    let h = Host::of(&env);
    settings_request(h, options)
        .and_then(settings::configure)
        .map(Settings::from)
        .map_err(|e| throw(&env, &e))
}

/// Counters of the prepared-realm pool.
#[napi(object, object_from_js = false)]
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

/// Wraps `value` so that a sandbox that receives it (as a host function's result, a property of a
/// host object or a live global) gets a deep copy, as `data` is copied, instead of a live proxy.
#[napi(
    js_name = "copyOf",
    catch_unwind,
    ts_args_type = "value: unknown",
    ts_return_type = "unknown"
)]
pub fn copy_of<'env>(env: Env, value: Unknown<'env>) -> Result<Unknown<'env>> {
    let h = Host::of(&env);
    let boxed = live::copy_of(h, value.raw()).map_err(|e| Error::new(Status::GenericFailure, e))?;
    // SAFETY: `boxed` was just returned by a call in this environment and scope.
    Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), boxed) })
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

/// Memory of realms as their allocator counts it.
#[napi(object, object_from_js = false)]
pub struct RealmStats {
    /// A fresh realm of a plain run: a context derived from the thread's template realm.
    pub bytes_per_realm: u32,
    /// The template realm, built once per thread that runs code.
    pub bytes_per_template: u32,
    /// A realm with a runtime of its own (runs with live globals, a workspace or `deterministic`).
    pub bytes_per_own_realm: u32,
}

#[napi(catch_unwind)]
pub fn realm_stats(env: Env) -> Result<RealmStats> {
    let own = crate::engine::realm::measure_fresh_realm()
        .map_err(|e| throw(&env, &ErrorInfo::from(e)))?;
    let (template, derived) = crate::engine::template::measure().unwrap_or((0, own));
    Ok(RealmStats {
        bytes_per_realm: derived as u32,
        bytes_per_template: template as u32,
        bytes_per_own_realm: own as u32,
    })
}
