//! Reading `run`/`runSync` options from host values, with clear INVALID_INPUT messages.

use super::convert::{read_data_text, HostReader};
use super::raw::{Host, Raw};
use crate::engine::limits::LimitOverrides;
use crate::engine::marshal::{CopyLimits, Path};
use crate::engine::{ConsoleMode, Deterministic, ErrorInfo, Mode, RunRequest};
use napi::sys;

pub const RUN_OPTION_KEYS: &[&str] = &[
    "mode",
    "filename",
    "input",
    "data",
    "globals",
    "limits",
    "signal",
    "console",
    "workspace",
    "deterministic",
    "onLog",
];
const DETERMINISTIC_KEYS: &[&str] = &["seed", "now"];
const LIMIT_KEYS: &[&str] = &[
    "timeoutMs",
    "memoryBytes",
    "stackBytes",
    "outputBytes",
    "hostCalls",
    "steps",
];

pub struct ParsedRun {
    pub request: RunRequest,
    /// Live host values (`globals`, a Record or a Map), for runs on the main thread.
    pub globals: Vec<(String, Raw)>,
    /// A `workspace` option was given (the export receives the instance itself).
    pub wants_workspace: bool,
}

impl ParsedRun {
    /// Connects the `workspace` option, passed to the export as a class instance.
    pub fn attach_workspace(
        &mut self,
        ws: Option<&super::workspace::ZipWorkspace>,
    ) -> Result<(), ErrorInfo> {
        match (self.wants_workspace, ws) {
            (false, _) => Ok(()),
            (true, Some(ws)) => {
                self.request.extension =
                    Some(ws.run_extension(self.request.mode, &self.request.filename));
                Ok(())
            }
            (true, None) => Err(invalid("workspace must be a ZipWorkspace")),
        }
    }
}

fn invalid(msg: impl Into<String>) -> ErrorInfo {
    ErrorInfo::invalid(msg)
}

fn type_name(h: Host, v: Raw) -> &'static str {
    h.describe_type(v)
}

fn expect_string(h: Host, v: Raw, what: &str) -> Result<String, ErrorInfo> {
    if h.type_of(v) != sys::ValueType::napi_string {
        return Err(invalid(format!(
            "{what} must be a string, got {}",
            type_name(h, v)
        )));
    }
    h.string(v).map_err(|e| invalid(format!("{what}: {e}")))
}

/// Own enumerable keys of an options object, refusing any key not in `allowed`.
fn checked_keys(
    h: Host,
    obj: Raw,
    allowed: &[&str],
    what: &str,
) -> Result<Vec<(String, Raw)>, ErrorInfo> {
    if h.type_of(obj) != sys::ValueType::napi_object || h.is_array(obj) {
        return Err(invalid(format!(
            "{what} must be an object, got {}",
            type_name(h, obj)
        )));
    }
    let keys = h.own_keys(obj).map_err(invalid)?;
    let mut out = Vec::new();
    for k in keys {
        let name = h.string(k).map_err(invalid)?;
        if !allowed.contains(&name.as_str()) {
            return Err(invalid(format!(
                "unknown {what} key '{name}' (expected one of: {})",
                allowed.join(", ")
            )));
        }
        let v = h.property(obj, k).map_err(invalid)?;
        if !h.is_nullish(v) || name == "input" {
            out.push((name, v));
        }
    }
    Ok(out)
}

pub fn read_source(h: Host, source: Raw) -> Result<String, ErrorInfo> {
    expect_string(h, source, "source")
}

pub fn parse_limits(h: Host, v: Raw) -> Result<LimitOverrides, ErrorInfo> {
    let mut o = LimitOverrides::default();
    for (name, val) in checked_keys(h, v, LIMIT_KEYS, "limits")? {
        if h.type_of(val) != sys::ValueType::napi_number {
            return Err(invalid(format!(
                "limits.{name} must be a number, got {}",
                type_name(h, val)
            )));
        }
        let n = h.number(val).map_err(invalid)?;
        match name.as_str() {
            "timeoutMs" => o.timeout_ms = Some(n),
            "memoryBytes" => o.memory_bytes = Some(n),
            "stackBytes" => o.stack_bytes = Some(n),
            "hostCalls" => o.host_calls = Some(n),
            "steps" => o.steps = Some(n),
            _ => o.output_bytes = Some(n),
        }
    }
    Ok(o)
}

/// `deterministic`: `true`, `false`/nullish, or `{ seed?: integer, now?: number | Date }`
/// (both 0 when left out).
pub fn parse_deterministic(h: Host, v: Raw) -> Result<Option<Deterministic>, ErrorInfo> {
    if h.is_nullish(v) {
        return Ok(None);
    }
    if h.type_of(v) == sys::ValueType::napi_boolean {
        let on = h.boolean(v).map_err(invalid)?;
        return Ok(on.then_some(Deterministic {
            seed: 0,
            now_ms: 0.0,
        }));
    }
    let mut d = Deterministic {
        seed: 0,
        now_ms: 0.0,
    };
    for (name, val) in checked_keys(h, v, DETERMINISTIC_KEYS, "deterministic")? {
        if name == "seed" {
            let n = if h.type_of(val) == sys::ValueType::napi_number {
                h.number(val).map_err(invalid)?
            } else {
                f64::NAN
            };
            if !(n.is_finite() && n >= 0.0 && n.fract() == 0.0 && n <= 9_007_199_254_740_991.0) {
                return Err(invalid(format!(
                    "deterministic.seed must be a non-negative safe integer, got {}",
                    type_name(h, val)
                )));
            }
            d.seed = n as u64;
        } else {
            let ms = if h.is_date(val) {
                h.date_value(val).map_err(invalid)?
            } else if h.type_of(val) == sys::ValueType::napi_number {
                h.number(val).map_err(invalid)?
            } else {
                f64::NAN
            };
            // The range a Date can hold.
            if !(ms.is_finite() && ms.abs() <= 8.64e15) {
                return Err(invalid(
                    "deterministic.now must be a valid Date or a number of milliseconds since 1970",
                ));
            }
            d.now_ms = ms;
        }
    }
    Ok(Some(d))
}

/// Reads a run's source and options. `data_text` is the `data` record as JSON text (the
/// wrapper's form for plain JSON data, see `lib/data-text.js`), given instead of `options.data`.
pub fn parse_run(
    h: Host,
    source: Raw,
    options: Option<Raw>,
    data_text: Option<&str>,
) -> Result<ParsedRun, ErrorInfo> {
    let mut request = RunRequest::new(read_source(h, source)?);
    if let Some(text) = data_text {
        request.data = read_data_text(text, CopyLimits::default())
            .map_err(|e| invalid(format!("data cannot be copied: {e}")))?;
    }
    let Some(options) = options.filter(|o| !h.is_nullish(*o)) else {
        crate::engine::run::validate(&request)?;
        return Ok(ParsedRun {
            request,
            globals: Vec::new(),
            wants_workspace: false,
        });
    };
    let mut limits = LimitOverrides::default();
    let mut globals = Vec::new();
    let mut workspace = None;
    for (name, v) in checked_keys(h, options, RUN_OPTION_KEYS, "option")? {
        match name.as_str() {
            "mode" => {
                request.mode = match expect_string(h, v, "mode")?.as_str() {
                    "function" => Mode::Function,
                    "script" => Mode::Script,
                    "module" => Mode::Module,
                    other => {
                        return Err(invalid(format!(
                            "mode must be 'function', 'script' or 'module', got '{other}'"
                        )))
                    }
                }
            }
            "filename" => request.filename = expect_string(h, v, "filename")?,
            "input" if !h.is_nullish(v) => request.input = Some(expect_string(h, v, "input")?),
            "input" => {}
            "console" => {
                request.console = match expect_string(h, v, "console")?.as_str() {
                    "capture" => ConsoleMode::Capture,
                    // Captured here; the JavaScript wrapper prints the lines on the host console.
                    "inherit" => ConsoleMode::Capture,
                    "off" => ConsoleMode::Discard,
                    "none" => ConsoleMode::Absent,
                    other => {
                        return Err(invalid(format!(
                            "console must be 'capture', 'inherit', 'off' or 'none', got '{other}'"
                        )))
                    }
                }
            }
            "limits" => limits = parse_limits(h, v)?,
            "data" if data_text.is_some() => {
                return Err(invalid(
                    "data is given twice (as an option and as JSON text)",
                ));
            }
            "data" => {
                let entries = read_all_keys(h, v)?;
                let mut reader = HostReader::new(h, CopyLimits::default());
                for (key, value) in entries {
                    let d = reader
                        .read(value, &Path::Key(&Path::Root("data"), &key))
                        .map_err(|e| invalid(format!("data cannot be copied: {e}")))?;
                    request.data.push((key, d));
                }
            }
            "globals" => globals = read_globals(h, v)?,
            "workspace" => workspace = Some(v),
            "deterministic" => request.deterministic = parse_deterministic(h, v)?,
            "onLog" if h.is_nullish(v) => {}
            "onLog" => {
                if h.type_of(v) != sys::ValueType::napi_function {
                    return Err(invalid(format!(
                        "onLog must be a function, got {}",
                        type_name(h, v)
                    )));
                }
                request.on_log = Some(h.log_listener(v).map_err(|e| invalid(e.to_string()))?);
            }
            _ => {} // signal: handled by the JavaScript wrapper
        }
    }
    let wants_workspace = workspace.is_some();
    request.limits = limits.resolve().map_err(invalid)?;
    crate::engine::run::validate(&request)?;
    for (name, _) in &globals {
        if request.data.iter().any(|(d, _)| d == name) {
            return Err(invalid(format!(
                "'{name}' is given both in data and in globals"
            )));
        }
    }
    Ok(ParsedRun {
        request,
        globals,
        wants_workspace,
    })
}

/// Reads `globals`: a plain object or a Map with string keys; values stay live host values.
pub fn read_globals(h: Host, v: Raw) -> Result<Vec<(String, Raw)>, ErrorInfo> {
    let map_ctor = h
        .get_named(h.global().map_err(invalid)?, "Map")
        .map_err(invalid)?;
    let mut out = Vec::new();
    if h.instance_of(v, map_ctor) {
        let array = h
            .get_named(h.global().map_err(invalid)?, "Array")
            .map_err(invalid)?;
        let from = h.get_named(array, "from").map_err(invalid)?;
        let entries = h.call(array, from, &[v]).map_err(invalid)?;
        for i in 0..h.array_length(entries).map_err(invalid)? {
            let pair = h.element(entries, i).map_err(invalid)?;
            let k = h.element(pair, 0).map_err(invalid)?;
            let name = expect_string(h, k, "a globals key")?;
            out.push((name, h.element(pair, 1).map_err(invalid)?));
        }
    } else {
        out = read_all_keys(h, v).map_err(|_| invalid("globals must be an object or a Map"))?;
    }
    for (name, _) in &out {
        if name.is_empty() || name.contains('\0') {
            return Err(invalid("globals keys must be non-empty strings"));
        }
    }
    Ok(out)
}

fn read_all_keys(h: Host, obj: Raw) -> Result<Vec<(String, Raw)>, ErrorInfo> {
    if h.type_of(obj) != sys::ValueType::napi_object || h.is_array(obj) {
        return Err(invalid(format!(
            "data must be an object, got {}",
            type_name(h, obj)
        )));
    }
    let mut out = Vec::new();
    for k in h.own_keys(obj).map_err(invalid)? {
        let name = h.string(k).map_err(invalid)?;
        let v = h.property(obj, k).map_err(invalid)?;
        out.push((name, v));
    }
    Ok(out)
}
