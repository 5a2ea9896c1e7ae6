//! Reading `run`/`runSync` options from host values, with clear INVALID_INPUT messages. The
//! option types are declared here for the generated `binding.d.ts` and read by the one reader
//! (`option_object`).

use super::convert::{read_data_text, HostReader};
use super::option_object::{self as opt, option_object, Read, Refusal, Wording};
use super::raw::{Host, Raw};
use crate::engine::limits::LimitOverrides;
use crate::engine::marshal::{CopyLimits, Path};
use crate::engine::{ConsoleMode, Deterministic, ErrorInfo, Mode, RunRequest};

option_object! {
    #[doc = "The options of a native run, as `run()`/`runSync()` pass them (the wrapper handles"]
    #[doc = "`signal`; `workspace` is passed beside them as the class instance)."]
    pub struct RunOptions {
        mode: "mode" = "'function' | 'script' | 'module'",
        filename: "filename" = "string",
        input: "input" = "string",
        data: "data" = "Record<string, unknown>",
        globals: "globals" = "Record<string, unknown> | Map<string, unknown>",
        limits: "limits" = "RunLimits",
        signal: "signal" = "AbortSignal",
        console: "console" = "'capture' | 'inherit' | 'off' | 'none'",
        workspace: "workspace" = "ZipWorkspace",
        deterministic: "deterministic" = "boolean | DeterministicOptions",
        on_log: "onLog" = "(line: LogLine) => void",
    }
}

option_object! {
    #[doc = "Hard limits for one run (see `Limits` in the package's declarations)."]
    pub struct RunLimits {
        timeout_ms: "timeoutMs" = "number",
        memory_bytes: "memoryBytes" = "number",
        stack_bytes: "stackBytes" = "number",
        output_bytes: "outputBytes" = "number",
        host_calls: "hostCalls" = "number",
        steps: "steps" = "number",
    }
}

option_object! {
    #[doc = "A reproducible run's seed and virtual start time (both 0 when left out)."]
    pub struct DeterministicOptions {
        seed: "seed" = "number",
        now: "now" = "number | Date",
    }
}

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

pub fn read_source(h: Host, source: Raw) -> Result<String, ErrorInfo> {
    Ok(opt::string(h, source, "source")?)
}

pub fn parse_limits(h: Host, v: Raw) -> Read<LimitOverrides> {
    let given: RunLimits = opt::read(h, v, "limits", Wording::Run)?;
    let number = |v: Option<Raw>, key: &str| -> Read<Option<f64>> {
        v.map(|v| opt::number(h, v, &format!("limits.{key}")))
            .transpose()
    };
    Ok(LimitOverrides {
        timeout_ms: number(given.timeout_ms, "timeoutMs")?,
        memory_bytes: number(given.memory_bytes, "memoryBytes")?,
        stack_bytes: number(given.stack_bytes, "stackBytes")?,
        output_bytes: number(given.output_bytes, "outputBytes")?,
        host_calls: number(given.host_calls, "hostCalls")?,
        steps: number(given.steps, "steps")?,
    })
}

/// `deterministic`: `true`, `false`/nullish, or `{ seed?: integer, now?: number | Date }`
/// (both 0 when left out).
pub fn parse_deterministic(h: Host, v: Raw) -> Read<Option<Deterministic>> {
    if h.is_nullish(v) {
        return Ok(None);
    }
    let mut d = Deterministic {
        seed: 0,
        now_ms: 0.0,
    };
    if h.type_of(v) == napi::sys::ValueType::napi_boolean {
        return Ok(h.boolean(v)?.then_some(d));
    }
    let given: DeterministicOptions = opt::read(h, v, "deterministic", Wording::Run)?;
    if let Some(seed) = given.seed {
        let n = opt::number_or_nan(h, seed)?;
        if !(n.is_finite() && n >= 0.0 && n.fract() == 0.0 && n <= 9_007_199_254_740_991.0) {
            return Err(Refusal(format!(
                "deterministic.seed must be a non-negative safe integer, got {}",
                h.describe_type(seed)
            )));
        }
        d.seed = n as u64;
    }
    if let Some(now) = given.now {
        let ms = if h.is_date(now) {
            h.date_value(now)?
        } else {
            opt::number_or_nan(h, now)?
        };
        // The range a Date can hold.
        if !(ms.is_finite() && ms.abs() <= 8.64e15) {
            return Err(Refusal(
                "deterministic.now must be a valid Date or a number of milliseconds since 1970"
                    .into(),
            ));
        }
        d.now_ms = ms;
    }
    Ok(Some(d))
}

fn choice<T>(h: Host, v: Raw, key: &str, choices: &[(&str, T)], wording: &str) -> Read<T>
where
    T: Copy,
{
    let name = opt::string(h, v, key)?;
    choices
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, c)| *c)
        .ok_or_else(|| Refusal(format!("{key} must be {wording}, got '{name}'")))
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
    let given: RunOptions = opt::read_given(h, options, "option", Wording::Run)?;
    if let Some(v) = given.mode {
        let modes = [
            ("function", Mode::Function),
            ("script", Mode::Script),
            ("module", Mode::Module),
        ];
        request.mode = choice(h, v, "mode", &modes, "'function', 'script' or 'module'")?;
    }
    if let Some(v) = given.filename {
        request.filename = opt::string(h, v, "filename")?;
    }
    if let Some(v) = given.input {
        request.input = Some(opt::string(h, v, "input")?);
    }
    if let Some(v) = given.console {
        let modes = [
            ("capture", ConsoleMode::Capture),
            // Captured here; the JavaScript wrapper prints the lines on the host console.
            ("inherit", ConsoleMode::Capture),
            ("off", ConsoleMode::Discard),
            ("none", ConsoleMode::Absent),
        ];
        let wording = "'capture', 'inherit', 'off' or 'none'";
        request.console = choice(h, v, "console", &modes, wording)?;
    }
    let limits = match given.limits {
        Some(v) => parse_limits(h, v)?,
        None => LimitOverrides::default(),
    };
    if let Some(v) = given.data {
        if data_text.is_some() {
            return Err(invalid(
                "data is given twice (as an option and as JSON text)",
            ));
        }
        let entries = read_all_keys(h, v)?;
        let mut reader = HostReader::new(h, CopyLimits::default());
        for (key, value) in entries {
            let d = reader
                .read(value, &Path::Key(&Path::Root("data"), &key))
                .map_err(|e| invalid(format!("data cannot be copied: {e}")))?;
            request.data.push((key, d));
        }
    }
    let globals = match given.globals {
        Some(v) => read_globals(h, v)?,
        None => Vec::new(),
    };
    if let Some(v) = given.deterministic {
        request.deterministic = parse_deterministic(h, v)?;
    }
    if let Some(v) = given.on_log {
        if !opt::is_function(h, v) {
            return Err(opt::wrong_type(h, v, "onLog", "a function").into());
        }
        request.on_log = Some(h.log_listener(v).map_err(|e| invalid(e.to_string()))?);
    }
    // `signal` is handled by the JavaScript wrapper.
    let wants_workspace = given.workspace.is_some();
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
            let name = opt::string(h, k, "a globals key")?;
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
    if h.type_of(obj) != napi::sys::ValueType::napi_object || h.is_array(obj) {
        return Err(opt::wrong_type(h, obj, "data", "an object").into());
    }
    let mut out = Vec::new();
    for k in h.own_keys(obj).map_err(invalid)? {
        let name = h.string(k).map_err(invalid)?;
        let v = h.property(obj, k).map_err(invalid)?;
        out.push((name, v));
    }
    Ok(out)
}
