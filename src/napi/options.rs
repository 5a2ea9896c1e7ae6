//! Reading `run`/`runSync` options from host values, with clear INVALID_INPUT messages. The
//! option types are declared here for the generated `binding.d.ts` and read by the one reader
//! (`option_object`).

use super::convert::{read_data_text, HostReader};
use super::option_object::{self as opt, option_object, Read, Refusal, Wording};
use super::raw::{Host, Raw};
use crate::engine::limits::LimitOverrides;
use crate::engine::marshal::{CopyLimits, Path};
use crate::engine::{ConsoleMode, Deterministic, ErrorInfo, Mode, PersistState, RunRequest};
use std::sync::Arc;

option_object! {
    #[doc = "The options of a run (`run()`, `runSync()`)."]
    #[doc = "`workspace` is passed to the native export beside them, as the class instance."]
    pub struct RunOptions {
        #[doc = "'function' (default): the body of an async function, so `return` and top-level `await` work."]
        #[doc = "'script': a classic script; the result is its completion value."]
        #[doc = "'module': an ES module; the result is its exports namespace."]
        #[doc = "'repl': a cell of a persistent realm (with `state`): a script with top-level `await`."]
        mode: "mode" = "'function' | 'script' | 'module' | 'repl'",
        #[doc = "Shown in stacks. Default 'sandbox.js'."]
        filename: "filename" = "string",
        #[doc = "What read_input() returns."]
        input: "input" = "string",
        #[doc = "Deep-copied into the realm as globals: JSON-like data plus undefined, bigint, Date, Map, Set,"]
        #[doc = "ArrayBuffer and typed arrays. Like structuredClone, a value reached twice (even under two"]
        #[doc = "keys) is one value inside, and cycles are kept. Functions and symbols are INVALID_INPUT."]
        data: "data" = "Record<string, unknown>",
        #[doc = "LIVE host values, reached through the membrane: objects, arrays, maps and class instances"]
        #[doc = "appear as proxies (identity preserved), functions are callable (async ones return promises"]
        #[doc = "the guest can await), and guest functions passed to the host become callbacks that work"]
        #[doc = "while the run is active. Runs with globals execute on the main thread."]
        globals: "globals" = "Record<string, unknown> | Map<string, unknown>",
        limits: "limits" = "Limits",
        #[doc = "Aborting stops the run within milliseconds with CANCELLED, or TIMEOUT when the signal's"]
        #[doc = "reason is a TimeoutError (`AbortSignal.timeout(ms)`)."]
        signal: "signal" = "AbortSignal",
        #[doc = "'capture' (default): console lines go to `logs`. 'inherit': they are printed to the host"]
        #[doc = "console when the run ends. 'off': console exists and prints nowhere. 'none': no console global."]
        console: "console" = "'capture' | 'inherit' | 'off' | 'none'",
        #[doc = "Gives the snippet the workspace's files: frozen `fs` and `path` globals in function and"]
        #[doc = "script mode, importable `fs`, `fs/promises`, `path`, `os` and workspace files in module mode."]
        #[doc = "Writes are applied when the run succeeds."]
        workspace: "workspace" = "ZipWorkspace",
        #[doc = "A reproducible run: the same code and values give the same result, byte for byte. `Date`"]
        #[doc = "reads a virtual clock starting at `now` (default 0, i.e. 1970-01-01T00:00:00Z) that moves"]
        #[doc = "only when a timer fires; timers fire at once in due order without waiting;"]
        #[doc = "`performance.now()` starts at 0; `Math.random`, `crypto.getRandomValues` and"]
        #[doc = "`crypto.randomUUID` draw from `seed` (default 0) and are not cryptographically secure in"]
        #[doc = "this mode. `true` means `{ seed: 0, now: 0 }`."]
        #[doc = "@example"]
        #[doc = "runSync('return [Date.now(), Math.random()]', { deterministic: { seed: 7, now: new Date('2026-01-01') } })"]
        deterministic: "deterministic" = "boolean | DeterministicOptions",
        #[doc = "Called with each captured console line as the run prints it (the lines are still in"]
        #[doc = "`logs`). From a worker run the lines arrive while it runs; from `runSync` and runs with live"]
        #[doc = "`globals`, which hold the main thread, they arrive when it is next free. Errors it throws are"]
        #[doc = "reported by Node as uncaught exceptions, as for any callback."]
        #[doc = "@example"]
        #[doc = "await run(code, { onLog: ({ level, message }) => ui.append(level, message) });"]
        on_log: "onLog" = "(line: LogLine) => void",
        #[doc = "A run over a persistent realm's state (with mode 'repl'; see `createRepl`)."]
        state: "state" = "StateOptions",
    }
}

option_object! {
    #[doc = "The sealed state a run starts from and the key that seals it; the result's `state` is"]
    #[doc = "the state after the run, sealed with the same key."]
    pub struct StateOptions {
        #[doc = "Sealed state bytes; left out: an empty realm."]
        bytes: "bytes" = "Uint8Array",
        #[doc = "The HMAC-SHA256 key, at least 16 bytes (a string is taken as its UTF-8 bytes)."]
        key: "key" = "string | Uint8Array",
        #[doc = "Keep the state only when the run succeeds."]
        transactional: "transactional" = "boolean",
    }
}

option_object! {
    #[doc = "Hard limits for one run. Every field is optional; defaults are shown."]
    pub struct Limits {
        #[doc = "Wall clock for the whole run, promise jobs included."]
        #[doc = "@defaultValue 5000"]
        timeout_ms: "timeoutMs" = "number",
        #[doc = "QuickJS heap cap in bytes. Range: min 1 MiB, max 4 GiB."]
        #[doc = "@defaultValue 64 MiB"]
        memory_bytes: "memoryBytes" = "number",
        #[doc = "Native stack for guest frames in bytes. Default 8 MiB (about 12,000 frames; min 64 KiB,"]
        #[doc = "max 64 MiB), never more than the executing thread has left less 1 MiB: on the main thread"]
        #[doc = "(runSync, live globals) a larger value is clamped."]
        stack_bytes: "stackBytes" = "number",
        #[doc = "Cap on emit() output plus captured console text, in bytes."]
        #[doc = "@defaultValue 64 KiB"]
        output_bytes: "outputBytes" = "number",
        #[doc = "Crossings into the host (membrane reads, writes, calls) a run may make."]
        #[doc = "@defaultValue 1,000,000"]
        host_calls: "hostCalls" = "number",
        #[doc = "A deterministic budget of steps: one per loop iteration (backward jump) and one per function"]
        #[doc = "call, counted by the engine. Past it the run stops with `STEP_LIMIT` (no `catch` or"]
        #[doc = "`finally` runs), at the same point every time for the same code and input. Default: no"]
        #[doc = "budget (`stats.steps` still counts). Min 1, max 2^53."]
        #[doc = "@example"]
        #[doc = "(await run('for (;;) {}', { limits: { steps: 10_000 } })).error?.code; // 'STEP_LIMIT'"]
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
    let given: Limits = opt::read(h, v, "limits", Wording::Run)?;
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
            ("repl", Mode::Repl),
        ];
        request.mode = choice(
            h,
            v,
            "mode",
            &modes,
            "'function', 'script', 'module' or 'repl'",
        )?;
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
    if let Some(v) = given.state {
        request.state = Some(parse_state(h, v)?);
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

fn parse_state(h: Host, v: Raw) -> Read<PersistState> {
    let given: StateOptions = opt::read(h, v, "state", Wording::Run)?;
    let key = match given.key {
        Some(k) => read_key(h, k, "state.key")?,
        None => return Err(Refusal("state.key is required".into())),
    };
    let sealed = match given.bytes {
        Some(b) if !h.is_nullish(b) => Some(Arc::new(read_bytes(h, b, "state.bytes")?)),
        _ => None,
    };
    let transactional = match given.transactional {
        Some(t) => opt::boolean(h, t, "state.transactional")?,
        None => false,
    };
    Ok(PersistState {
        sealed,
        key: Arc::new(key),
        transactional,
    })
}

/// The bytes of a Uint8Array (or any typed array or ArrayBuffer).
pub fn read_bytes(h: Host, v: Raw, label: &str) -> Read<Vec<u8>> {
    if h.is_typed_array(v) {
        let uint8 = |t, len| match t {
            napi::sys::TypedarrayType::uint8_array => Ok(len),
            _ => Err(format!("{label} must be a Uint8Array")),
        };
        return Ok(h.typed_array(v, uint8).map_err(Refusal)?.1);
    }
    if h.is_array_buffer(v) {
        return h.array_buffer(v, |_| Ok(())).map_err(Refusal);
    }
    Err(opt::wrong_type(h, v, label, "a Uint8Array"))
}

/// A key: a string (its UTF-8 bytes) or bytes.
pub fn read_key(h: Host, v: Raw, label: &str) -> Read<Vec<u8>> {
    if h.type_of(v) == napi::sys::ValueType::napi_string {
        return Ok(opt::string(h, v, label)?.into_bytes());
    }
    read_bytes(h, v, label)
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
