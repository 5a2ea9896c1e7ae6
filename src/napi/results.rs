//! The shapes a run's outcome takes in JavaScript. napi-rs generates their TypeScript
//! declarations from these structs, so the types users see are the ones the code builds.

use super::convert::write;
use super::raw::Host;
use crate::engine::marshal::Text;
use crate::engine::{Data, ErrorCode, ErrorInfo, LogEntry, RunOutcome};
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

/// A run's result as `runSync`, `run` and `LiveRun.finish` hand it to the wrapper: JSON text
/// when every part of it is JSON (the wrapper parses it: one host call instead of one per
/// property and value), the object otherwise (a value with `undefined` inside, `-0`, `NaN`, a
/// bigint, a Date, a Map, bytes, shared parts).
pub enum RunReply {
    Text(String),
    Object(Box<NativeRunResult>),
}

impl From<RunOutcome> for RunReply {
    fn from(o: RunOutcome) -> Self {
        match reply_text(&o) {
            Some(text) => RunReply::Text(text),
            None => RunReply::Object(Box::new(o.into())),
        }
    }
}

impl ToNapiValue for RunReply {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
        // SAFETY: napi-rs calls this with the env of the export whose result is being built.
        unsafe {
            match val {
                RunReply::Text(text) => String::to_napi_value(env, text),
                RunReply::Object(result) => NativeRunResult::to_napi_value(env, *result),
            }
        }
    }
}

/// The outcome as text, or `None` when a part of it has no JSON form. The common case, a run
/// that succeeded without output or console lines, is `|wallMs|heapBytes|hostCalls|steps|`
/// followed by the value's JSON (nothing for `undefined`); anything else is JSON with
/// `NativeRunResult`'s keys (a top-level `undefined` value left out). `lib/run.js` reads both.
fn reply_text(o: &RunOutcome) -> Option<String> {
    if o.ok && o.output.is_empty() && o.logs.is_empty() {
        return brief_reply(o);
    }
    full_reply(o)
}

fn brief_reply(o: &RunOutcome) -> Option<String> {
    use std::fmt::Write;
    let mut text = String::with_capacity(64);
    let s = &o.stats;
    write!(
        text,
        "|{}|{}|{}|{}|",
        s.wall_ms, s.heap_bytes, s.host_calls, s.steps
    )
    .ok()?;
    match &o.value {
        Some(Data::Undefined) | None => {}
        Some(v) => {
            let mut out = text.into_bytes();
            serde_json::to_writer(&mut out, &JsonData(v)).ok()?;
            text = String::from_utf8(out).ok()?;
        }
    }
    Some(text)
}

fn full_reply(o: &RunOutcome) -> Option<String> {
    let value = match (&o.value, o.ok) {
        (Some(Data::Undefined) | None, _) | (_, false) => None,
        (Some(v), true) => Some(JsonData(v)),
    };
    let reply = ReplyText {
        ok: o.ok,
        value,
        output: &o.output,
        logs: o
            .logs
            .iter()
            .map(|l| LogText {
                level: l.level,
                message: &l.message,
            })
            .collect(),
        error: o.error.as_ref().map(|e| ErrorText {
            code: e.code.as_str(),
            name: &e.name,
            message: &e.message,
            line: e.line,
            column: e.column,
            stack: e.stack.as_deref(),
            frame: e.frame.as_deref(),
        }),
        stats: StatsText {
            wall_ms: o.stats.wall_ms,
            heap_bytes: o.stats.heap_bytes as f64,
            host_calls: o.stats.host_calls as f64,
            steps: o.stats.steps as f64,
        },
    };
    serde_json::to_string(&reply).ok()
}

#[derive(serde::Serialize)]
struct ReplyText<'a> {
    ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    value: Option<JsonData<'a>>,
    output: &'a str,
    logs: Vec<LogText<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<ErrorText<'a>>,
    stats: StatsText,
}

#[derive(serde::Serialize)]
struct LogText<'a> {
    level: &'a str,
    message: &'a str,
}

#[derive(serde::Serialize)]
struct ErrorText<'a> {
    code: &'a str,
    name: &'a str,
    message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    column: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stack: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    frame: Option<&'a str>,
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct StatsText {
    wall_ms: f64,
    heap_bytes: f64,
    host_calls: f64,
    steps: f64,
}

/// A copied value written as JSON; fails for every value JSON would change or lose.
struct JsonData<'a>(&'a Data);

impl serde::Serialize for JsonData<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error as _, SerializeMap, SerializeSeq};
        match self.0 {
            Data::Null => s.serialize_unit(),
            Data::Bool(b) => s.serialize_bool(*b),
            Data::Number(n) if n.is_finite() && !(*n == 0.0 && n.is_sign_negative()) => {
                // Integers print without a fraction ("3", not "3.0"); both parse to the same.
                if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 {
                    s.serialize_i64(*n as i64)
                } else {
                    s.serialize_f64(*n)
                }
            }
            Data::String(Text::Utf8(text)) => s.serialize_str(text),
            Data::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(&JsonData(item))?;
                }
                seq.end()
            }
            Data::Object(entries) => {
                let mut map = s.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    map.serialize_entry(k, &JsonData(v))?;
                }
                map.end()
            }
            _ => Err(S::Error::custom("no JSON form")),
        }
    }
}
