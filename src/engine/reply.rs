//! The native reply format: how a run's outcome crosses to JavaScript as one string. This is
//! the other half of `lib/run.js` (`fromNative` decodes it); change both together.
//!
//! A reply is text whenever every part of the outcome has a JSON form (the JSON writer of
//! `json.rs` refuses a value JSON would change or lose: `undefined` inside, `-0`, `NaN`,
//! infinities, bigints, dates, maps, sets, bytes, lone surrogates, shared parts); otherwise the
//! napi layer hands over the outcome as an object with the same keys. The text takes one of
//! two shapes:
//!
//! - Brief, for a run that succeeded without output and without console lines:
//!   `|wallMs|heapBytes|hostCalls|steps|` followed by the value's JSON, or by nothing when the
//!   value is `undefined`. It starts with `|`, which no JSON text does.
//! - Full, anything else: a JSON object `{ ok, value?, output, logs, error?, stats }` with the
//!   keys of the object form (`value` left out when it is `undefined` or the run failed;
//!   `error` with `code`, `name`, `message` and, when known, `line`, `column`, `stack`,
//!   `frame`; `stats` with `wallMs`, `heapBytes`, `hostCalls`, `steps`).
//!
//! A run over a persistent realm's state that wrote a new state crosses as `[text, state]`, the
//! state a Buffer (the object form's `state` key).

use super::json::JsonData;
use super::marshal::Data;
use super::run::RunOutcome;

/// The outcome as text, or `None` when a part of it has no JSON form. The common case, a run
/// that succeeded without output or console lines, is `|wallMs|heapBytes|hostCalls|steps|`
/// followed by the value's JSON (nothing for `undefined`); anything else is JSON with
/// `NativeRunResult`'s keys (a top-level `undefined` value left out). `lib/run.js` reads both.
pub fn reply_text(o: &RunOutcome) -> Option<String> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::realm::LogEntry;
    use crate::engine::run::Stats;
    use crate::engine::{ErrorCode, ErrorInfo};

    fn outcome(value: Option<Data>) -> RunOutcome {
        RunOutcome {
            ok: true,
            value,
            output: String::new(),
            logs: Vec::new(),
            error: None,
            stats: Stats {
                wall_ms: 1.5,
                heap_bytes: 2048,
                host_calls: 3,
                steps: 40,
            },
            state: None,
        }
    }

    #[test]
    fn a_quiet_success_is_the_brief_form() {
        let value = Data::Object(vec![("a".into(), Data::Number(1.0))]);
        assert_eq!(
            reply_text(&outcome(Some(value))).unwrap(),
            r#"|1.5|2048|3|40|{"a":1}"#
        );
        assert_eq!(
            reply_text(&outcome(Some(Data::Undefined))).unwrap(),
            "|1.5|2048|3|40|"
        );
        assert_eq!(reply_text(&outcome(None)).unwrap(), "|1.5|2048|3|40|");
    }

    #[test]
    fn output_logs_and_errors_take_the_full_form() {
        let mut o = outcome(Some(Data::str("v")));
        o.output = "out".into();
        o.logs.push(LogEntry {
            level: "warn",
            message: "w".into(),
        });
        assert_eq!(
            reply_text(&o).unwrap(),
            r#"{"ok":true,"value":"v","output":"out","logs":[{"level":"warn","message":"w"}],"stats":{"wallMs":1.5,"heapBytes":2048.0,"hostCalls":3.0,"steps":40.0}}"#
        );
        let mut failed = RunOutcome::failed(ErrorInfo {
            line: Some(2),
            ..ErrorInfo::new(ErrorCode::EvalError, "TypeError", "x is not a function")
        });
        failed.value = Some(Data::Number(1.0));
        let text = reply_text(&failed).unwrap();
        assert_eq!(
            text,
            r#"{"ok":false,"output":"","logs":[],"error":{"code":"EVAL_ERROR","name":"TypeError","message":"x is not a function","line":2},"stats":{"wallMs":0.0,"heapBytes":0.0,"hostCalls":0.0,"steps":0.0}}"#
        );
    }

    #[test]
    fn a_value_without_a_json_form_has_no_text() {
        assert_eq!(reply_text(&outcome(Some(Data::Number(-0.0)))), None);
        let mut o = outcome(Some(Data::Date(0.0)));
        o.output = "x".into();
        assert_eq!(reply_text(&o), None);
    }
}
