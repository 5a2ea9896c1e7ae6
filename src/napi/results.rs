//! The shapes a run's outcome takes in JavaScript. napi-rs generates their TypeScript
//! declarations from these structs, so the types users see are the ones the code builds.

use super::convert::write;
use super::raw::Host;
use crate::engine::{reply_text, Data, ErrorCode, ErrorInfo, LogEntry, RunOutcome};
use napi::bindgen_prelude::{Error, Status, ToNapiValue};
use napi::sys;
use napi_derive::napi;

/// A guest error as a model reads it.
#[napi(object, object_from_js = false)]
pub struct SandboxErrorInfo {
    pub code: ErrorCode,
    pub name: String,
    pub message: String,
    /// 1-based line in the caller's source.
    pub line: Option<u32>,
    /// 1-based column in the caller's source.
    pub column: Option<u32>,
    /// Guest frames only, never host paths.
    pub stack: Option<String>,
    /// A few source lines around the failing line, with a caret under the column.
    pub frame: Option<String>,
}

impl From<ErrorInfo> for SandboxErrorInfo {
    fn from(e: ErrorInfo) -> Self {
        SandboxErrorInfo {
            code: e.code,
            name: e.name,
            message: e.message,
            line: e.line,
            column: e.column,
            stack: e.stack,
            frame: e.frame,
        }
    }
}

/// One captured console line.
#[napi(object, object_from_js = false)]
pub struct LogLine {
    #[napi(ts_type = "'log' | 'info' | 'warn' | 'error' | 'debug'")]
    pub level: String,
    pub message: String,
}

impl From<LogEntry> for LogLine {
    fn from(l: LogEntry) -> Self {
        LogLine {
            level: l.level.to_string(),
            message: l.message,
        }
    }
}

/// What a run cost.
#[napi(object, object_from_js = false)]
pub struct RunStats {
    /// Wall-clock time of the run, promise jobs included.
    pub wall_ms: f64,
    /// Peak QuickJS heap use of the run: what it allocated on top of its thread's template
    /// realm, or the whole heap of a realm with a runtime of its own.
    pub heap_bytes: f64,
    /// Crossings into host code (live globals).
    pub host_calls: f64,
    /// Interpreter steps the guest took (loop iterations and calls; see `limits.steps`).
    pub steps: f64,
}

/// A run's result as the binding returns it; `lib/index.d.ts` narrows it to a union on `ok`.
#[napi(object, object_from_js = false)]
pub struct NativeRunResult {
    pub ok: bool,
    /// The completion value, return value or module exports, copied out (present when `ok`).
    #[napi(ts_type = "unknown")]
    pub value: Option<CopiedValue>,
    /// What `emit()` wrote (truncated at `outputBytes`).
    pub output: String,
    pub logs: Vec<LogLine>,
    pub error: Option<SandboxErrorInfo>,
    pub stats: RunStats,
    /// The persistent realm's state after the run, sealed (runs with `state` only; left out
    /// when the state stays as it was).
    pub state: Option<napi::bindgen_prelude::Buffer>,
}

impl From<RunOutcome> for NativeRunResult {
    fn from(o: RunOutcome) -> Self {
        NativeRunResult {
            // An ok result always carries `value`, `undefined` included.
            value: o
                .ok
                .then(|| CopiedValue(o.value.unwrap_or(Data::Undefined))),
            ok: o.ok,
            output: o.output,
            logs: o.logs.into_iter().map(LogLine::from).collect(),
            error: o.error.map(SandboxErrorInfo::from),
            stats: RunStats {
                wall_ms: o.stats.wall_ms,
                heap_bytes: o.stats.heap_bytes as f64,
                host_calls: o.stats.host_calls as f64,
                steps: o.stats.steps as f64,
            },
            state: o.state.map(Into::into),
        }
    }
}

/// A value copied out of a realm, built as a fresh host value when the result is returned.
pub struct CopiedValue(pub Data);

impl ToNapiValue for CopiedValue {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
        // SAFETY: napi-rs calls this with the env of the export whose result is being built.
        let host = unsafe { Host::from_raw(env) };
        write(host, &val.0).map_err(|e| Error::new(Status::GenericFailure, e))
    }
}

/// A run's result as `runSync`, `run` and `LiveRun.finish` hand it to the wrapper: the engine's
/// reply text when every part of it is JSON (format in `engine/reply.rs`; the wrapper parses
/// it: one host call instead of one per property and value), the object otherwise. A run
/// over a persistent realm's state that wrote a new state answers `[text, state]`.
pub enum RunReply {
    Text(String),
    TextAndState(String, Vec<u8>),
    Object(Box<NativeRunResult>),
}

impl From<RunOutcome> for RunReply {
    fn from(mut o: RunOutcome) -> Self {
        match reply_text(&o) {
            Some(text) => match o.state.take() {
                Some(state) => RunReply::TextAndState(text, state),
                None => RunReply::Text(text),
            },
            None => RunReply::Object(Box::new(o.into())),
        }
    }
}

fn check(status: sys::napi_status) -> napi::Result<()> {
    match status {
        sys::Status::napi_ok => Ok(()),
        _ => Err(Error::new(
            Status::GenericFailure,
            "the run's reply could not be built",
        )),
    }
}

/// `[text, state]`; the state is copied into a plain Buffer (no finalizer to run later).
unsafe fn text_and_state(
    env: sys::napi_env,
    text: String,
    state: &[u8],
) -> napi::Result<sys::napi_value> {
    // SAFETY: `env` is the env of the export whose result is being built; every out-pointer is
    // valid for the call, and `state` is readable for its length.
    unsafe {
        let text = String::to_napi_value(env, text)?;
        let mut data = std::ptr::null_mut();
        let mut buffer = std::ptr::null_mut();
        check(sys::napi_create_buffer_copy(
            env,
            state.len(),
            state.as_ptr().cast(),
            &mut data,
            &mut buffer,
        ))?;
        let mut array = std::ptr::null_mut();
        check(sys::napi_create_array_with_length(env, 2, &mut array))?;
        check(sys::napi_set_element(env, array, 0, text))?;
        check(sys::napi_set_element(env, array, 1, buffer))?;
        Ok(array)
    }
}

impl ToNapiValue for RunReply {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
        // SAFETY: napi-rs calls this with the env of the export whose result is being built.
        unsafe {
            match val {
                RunReply::Text(text) => String::to_napi_value(env, text),
                RunReply::TextAndState(text, state) => text_and_state(env, text, &state),
                RunReply::Object(result) => NativeRunResult::to_napi_value(env, *result),
            }
        }
    }
}
