//! Reading `ZipWorkspace` arguments: JavaScript type checks and conversions, with the messages
//! the API has always given (`path must be a string, got a number`). The rules the values must
//! follow (ranges, defaults, limits) belong to the workspace and exec layers; this file only
//! applies them while converting, in argument order.

use napi::bindgen_prelude::*;

use super::Res;
use crate::engine::limits::LimitOverrides;
use crate::exec::{CommitPolicy, ExecRequest};
use crate::napi::option_object::{self as opt, option_object, OptionObject, Wording};
use crate::napi::raw::{Host, Raw};
use crate::workspace::bounds::{to_usize, Bounds};
use crate::workspace::rules::MAX_PATTERNS;
use crate::workspace::{PathRulesSpec, WriteQuota, WsError, ZipLimits as Limits};

pub(super) fn invalid(message: impl Into<String>) -> WsError {
    WsError::invalid_input(message)
}

/// `None` for a missing, `undefined` or `null` argument.
pub(super) fn given(h: Host, v: Option<&Unknown>) -> Option<Raw> {
    v.map(|u| u.raw()).filter(|&r| !h.is_nullish(r))
}

fn wrong_type(h: Host, v: Raw, name: &str, wanted: &str) -> WsError {
    opt::wrong_type(h, v, name, wanted).into()
}

pub(super) fn string(h: Host, v: Raw, name: &str) -> Res<String> {
    Ok(opt::string(h, v, name)?)
}

pub(super) fn boolean(h: Host, v: Raw, name: &str) -> Res<bool> {
    Ok(opt::boolean(h, v, name)?)
}

fn number(h: Host, v: Raw, name: &str) -> Res<f64> {
    Ok(opt::number(h, v, name)?)
}

/// A whole number within `bounds` (a workspace or exec rule).
pub(super) fn integer(h: Host, v: Raw, name: &str, bounds: Bounds) -> Res<u64> {
    bounds.check(name, number(h, v, name)?)
}

/// An options argument of a workspace method, read as `T` (no keys when not given).
pub(super) fn options<T: OptionObject>(h: Host, v: Option<&Unknown>, name: &str) -> Res<T> {
    Ok(opt::read_given(h, given(h, v), name, Wording::Workspace)?)
}

/// A field of the options object `name`, converted by `read` under its label `name.key`.
pub(super) fn field<T>(
    name: &str,
    key: &str,
    v: Option<Raw>,
    read: impl FnOnce(Raw, &str) -> Res<T>,
) -> Res<Option<T>> {
    v.map(|v| read(v, &format!("{name}.{key}"))).transpose()
}

/// The memory of a `Uint8Array` (including `Buffer`) or an `ArrayBuffer` argument, borrowed for
/// the current call: no JavaScript may run while it is in use.
pub(super) enum Bytes<'env> {
    View(Uint8ArraySlice<'env>),
    Buffer(ArrayBuffer<'env>),
}

impl std::ops::Deref for Bytes<'_> {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Bytes::View(v) => v,
            Bytes::Buffer(b) => b,
        }
    }
}

pub(super) fn bytes<'env>(h: Host, v: &Unknown<'env>, name: &str) -> Res<Bytes<'env>> {
    if v.is_typedarray().unwrap_or(false) {
        return Uint8ArraySlice::from_unknown(*v)
            .map(Bytes::View)
            .map_err(|_| {
                invalid(format!(
                    "{name} must be a Buffer or Uint8Array, got another typed array"
                ))
            });
    }
    if v.is_arraybuffer().unwrap_or(false) {
        return ArrayBuffer::from_unknown(*v)
            .map(Bytes::Buffer)
            .map_err(|_| invalid(format!("{name} could not be read")));
    }
    Err(wrong_type(h, v.raw(), name, "a Buffer or Uint8Array"))
}

/// File contents: a string (written as UTF-8) or bytes.
pub(super) fn contents(h: Host, v: &Unknown, name: &str) -> Res<Vec<u8>> {
    if h.type_of(v.raw()) == napi::sys::ValueType::napi_string {
        return Ok(h.string(v.raw()).map_err(invalid)?.into_bytes());
    }
    match bytes(h, v, name) {
        Ok(b) => Ok(b.to_vec()),
        Err(_) => Err(wrong_type(
            h,
            v.raw(),
            name,
            "a string, Buffer or Uint8Array",
        )),
    }
}

/// An array of strings, as `name`; `check_len` refuses a length before any element is read.
fn string_list(
    h: Host,
    v: Raw,
    name: &str,
    check_len: impl FnOnce(usize) -> Res<()>,
) -> Res<Vec<String>> {
    if !h.is_array(v) {
        return Err(wrong_type(h, v, name, "an array of strings"));
    }
    let n = h.array_length(v).map_err(invalid)?;
    check_len(n as usize)?;
    (0..n)
        .map(|i| {
            let item = h.element(v, i).map_err(invalid)?;
            string(h, item, &format!("{name}[{i}]"))
        })
        .collect()
}

option_object! {
    #[doc = "Access rules as the native layer takes them (the package also accepts Sets)."]
    pub struct NativeAccessRules {
        read_patterns: "readPatterns" = "string[] | null",
        write_patterns: "writePatterns" = "string[] | null",
        read_only: "readOnly" = "boolean",
    }
}

/// `{ readPatterns?: string[], writePatterns?: string[], readOnly?: boolean }`, or `None` for
/// `null`/`undefined` (no rules).
pub(super) fn access_rules(h: Host, v: Option<&Unknown>) -> Res<Option<PathRulesSpec>> {
    if given(h, v).is_none() {
        return Ok(None);
    }
    let rules: NativeAccessRules = options(h, v, "rules")?;
    let list = |key: &str, v: Option<Raw>| -> Res<Option<Vec<String>>> {
        v.filter(|&r| !h.is_nullish(r))
            .map(|r| {
                string_list(h, r, &format!("rules.{key}"), |n| {
                    if n > MAX_PATTERNS {
                        return Err(invalid(format!(
                            "rules.{key} has {n} patterns; the limit is {MAX_PATTERNS}"
                        )));
                    }
                    Ok(())
                })
            })
            .transpose()
    };
    Ok(Some(PathRulesSpec {
        read_patterns: list("readPatterns", rules.read_patterns)?,
        write_patterns: list("writePatterns", rules.write_patterns)?,
        read_only: field("rules", "readOnly", rules.read_only, |v, l| {
            boolean(h, v, l)
        })?
        .unwrap_or(false),
    }))
}

option_object! {
    #[doc = "Whether a folder is made or deleted with everything on the way or below it."]
    pub struct RecursiveOptions {
        recursive: "recursive" = "boolean",
    }
}

/// `{ recursive?: boolean }`.
pub(super) fn recursive(h: Host, v: Option<&Unknown>) -> Res<bool> {
    let o: RecursiveOptions = options(h, v, "options")?;
    Ok(field("options", "recursive", o.recursive, |v, l| boolean(h, v, l))?.unwrap_or(false))
}

option_object! {
    #[doc = "Import limits for `fromZip` and `open`; each is checked against the bytes actually produced."]
    pub struct ZipLimits {
        #[doc = "Most entries, history files included."]
        #[doc = "@defaultValue 10000"]
        max_entries: "maxEntries" = "number",
        #[doc = "Largest uncompressed entry in bytes."]
        #[doc = "@defaultValue 64 MiB"]
        max_entry_bytes: "maxEntryBytes" = "number",
        #[doc = "Largest uncompressed total in bytes."]
        #[doc = "@defaultValue 256 MiB"]
        max_total_bytes: "maxTotalBytes" = "number",
        #[doc = "Largest uncompressed/compressed ratio for entries above 1 MiB."]
        #[doc = "@defaultValue 200"]
        max_ratio: "maxRatio" = "number",
    }
}

pub(super) fn zip_limits(h: Host, v: Option<&Unknown>) -> Res<Limits> {
    let o: ZipLimits = options(h, v, "limits")?;
    let int = |key: &str, v: Option<Raw>, bounds: Bounds| {
        field("limits", key, v, |v, l| integer(h, v, l, bounds))
    };
    let mut limits = Limits::default();
    if let Some(n) = int("maxEntries", o.max_entries, Limits::ENTRIES)? {
        limits.max_entries = to_usize(n);
    }
    if let Some(n) = int("maxEntryBytes", o.max_entry_bytes, Limits::BYTES)? {
        limits.max_entry_size = n;
    }
    if let Some(n) = int("maxTotalBytes", o.max_total_bytes, Limits::BYTES)? {
        limits.max_total_size = n;
    }
    if let Some(n) = int("maxRatio", o.max_ratio, Limits::RATIO)? {
        limits.max_ratio = n;
    }
    Ok(limits)
}

/// An optional whole number within `bounds`, `default` when not given.
pub(super) fn integer_or(
    h: Host,
    v: Option<&Unknown>,
    name: &str,
    bounds: Bounds,
    default: u64,
) -> Res<u64> {
    match given(h, v) {
        Some(v) => integer(h, v, name, bounds),
        None => Ok(default),
    }
}

option_object! {
    #[doc = "What `toZip` writes: the history (default true), deflated entries (default true)."]
    pub struct ToZipOptions {
        history: "history" = "boolean",
        compress: "compress" = "boolean",
    }
}

option_object! {
    #[doc = "A cap on the line text `readLines` returns, and which end of the window it keeps."]
    pub struct ReadLinesOptions {
        max_bytes: "maxBytes" = "number",
        keep: "keep" = "'first' | 'last'",
    }
}

option_object! {
    #[doc = "The text `patchLines` expects to replace (refused when the file says otherwise)."]
    pub struct PatchOptions {
        expected: "expected" = "string",
    }
}

option_object! {
    #[doc = "Where `search` looks and how much it answers."]
    pub struct WorkspaceSearchOptions {
        #[doc = "Folder or file to search. Range: everything."]
        #[doc = "@defaultValue '~'"]
        path: "path" = "string",
        #[doc = "Lines of context around each hit, 0-100."]
        #[doc = "@defaultValue 0"]
        context: "context" = "number",
        #[doc = "Most hits returned, 1-10000."]
        #[doc = "@defaultValue 100"]
        max_results: "maxResults" = "number",
        #[doc = "Most bytes of answer, 1024-8388608 (8 MiB): every path, hit line and context line counts"]
        #[doc = "its UTF-8 length plus 32. The search stops at the first that does not fit, without"]
        #[doc = "copying anything past it, so its cost is the files' size plus this budget."]
        #[doc = "@defaultValue 1048576 (1 MiB)"]
        max_bytes: "maxBytes" = "number",
    }
}

option_object! {
    #[doc = "Only the history entries that touched `path`."]
    pub struct HistoryOptions {
        path: "path" = "string",
    }
}

option_object! {
    #[doc = "Whether `rename` replaces what is at the destination."]
    pub struct RenameOptions {
        overwrite: "overwrite" = "boolean",
    }
}

option_object! {
    #[doc = "How many levels deep `walk` goes."]
    pub struct WalkOptions {
        max_depth: "maxDepth" = "number",
    }
}

// ----- exec -----

option_object! {
    #[doc = "Options of `ZipWorkspace.exec` as the native layer takes them (the package's"]
    #[doc = "`ExecOptions` adds `signal`)."]
    pub struct NativeExecOptions {
        #[doc = "Arguments after the entry: `process.argv` is `['quickrealm', '~/main.ts', ...argv]`."]
        argv: "argv" = "string[]",
        #[doc = "`process.env` (a copy; the run may change it)."]
        env: "env" = "Record<string, string>",
        limits: "limits" = "Limits",
        #[doc = "Shorthand for `limits.timeoutMs`."]
        timeout_ms: "timeoutMs" = "number",
        #[doc = "When the run's file changes reach the workspace: 'on-success' (default: only if `ok`),"]
        #[doc = "'always' (even after a failure: the changes made up to it), 'never' (a dry run)."]
        commit: "commit" = "'on-success' | 'always' | 'never'",
        #[doc = "What one run may write: `bytes` written in total (default 16 MiB) and distinct `files` and"]
        #[doc = "folders created or changed (default 1000). A write past either fails with `EDQUOT`."]
        quota: "quota" = "ExecQuota",
        #[doc = "A reproducible run (virtual `Date` and timers, seeded randomness): see `RunOptions.deterministic`."]
        deterministic: "deterministic" = "boolean | DeterministicOptions",
        #[doc = "Called with each console line as the run prints it, from the worker thread's queue (the"]
        #[doc = "lines are also in `stdout`/`stderr`). `process.stdout.write` text is not a console line."]
        on_log: "onLog" = "(line: LogLine) => void",
    }
}

option_object! {
    #[doc = "What one `exec` run may write."]
    pub struct ExecQuota {
        bytes: "bytes" = "number",
        files: "files" = "number",
    }
}

fn string_map(h: Host, v: Raw) -> Res<Vec<(String, String)>> {
    if h.type_of(v) != napi::sys::ValueType::napi_object || h.is_array(v) {
        return Err(wrong_type(h, v, "options.env", "an object of strings"));
    }
    let keys = h.own_keys(v).map_err(invalid)?;
    ExecRequest::check_env_len(keys.len())?;
    keys.into_iter()
        .map(|key| {
            let name = h.string(key).map_err(invalid)?;
            let value = h.property(v, key).map_err(invalid)?;
            let value = string(h, value, &format!("options.env.{name}"))?;
            Ok((name, value))
        })
        .collect()
}

fn write_quota(h: Host, v: Raw) -> Res<WriteQuota> {
    let q: ExecQuota = opt::read_given(h, Some(v), "quota", Wording::Workspace)?;
    let mut quota = WriteQuota::default();
    if let Some(n) = field("quota", "bytes", q.bytes, |v, l| {
        integer(h, v, l, WriteQuota::BYTES)
    })? {
        quota.max_bytes = n;
    }
    if let Some(n) = field("quota", "files", q.files, |v, l| {
        integer(h, v, l, WriteQuota::FILES)
    })? {
        quota.max_files = to_usize(n);
    }
    Ok(quota)
}

pub(super) fn exec_request(h: Host, entry: Raw, options: Option<&Unknown>) -> Res<ExecRequest> {
    let mut req = ExecRequest::new(string(h, entry, "entryPath")?);
    let o: NativeExecOptions = self::options(h, options, "options")?;
    if let Some(v) = o.argv {
        req.argv = string_list(h, v, "options.argv", ExecRequest::check_argv_len)?;
    }
    if let Some(v) = o.env {
        req.env = string_map(h, v)?;
    }
    let mut limits = LimitOverrides::default();
    if let Some(v) = o.limits {
        limits = crate::napi::options::parse_limits(h, v)?;
    }
    if let Some(v) = o.timeout_ms {
        limits.timeout_ms = Some(number(h, v, "options.timeoutMs")?);
    }
    req.limits = limits.resolve().map_err(invalid)?;
    if let Some(v) = o.commit {
        let c = string(h, v, "options.commit")?;
        req.commit = CommitPolicy::from_name(&c).ok_or_else(|| {
            invalid(format!(
                "options.commit must be 'on-success', 'always' or 'never', got '{c}'"
            ))
        })?;
    }
    if let Some(v) = o.quota {
        req.quota = write_quota(h, v)?;
    }
    if let Some(v) = o.on_log {
        if !opt::is_function(h, v) {
            return Err(invalid("options.onLog must be a function"));
        }
        req.on_log = Some(h.log_listener(v).map_err(|e| invalid(e.to_string()))?);
    }
    if let Some(v) = o.deterministic {
        req.deterministic = crate::napi::options::parse_deterministic(h, v)?;
    }
    Ok(req)
}
