//! Reading `ZipWorkspace` arguments: JavaScript type checks and conversions, with the messages
//! the API has always given (`path must be a string, got a number`). The rules the values must
//! follow (ranges, defaults, limits) belong to the workspace and exec layers; this file only
//! applies them while converting, in argument order.

use napi::bindgen_prelude::*;

use super::Res;
use crate::engine::limits::LimitOverrides;
use crate::exec::{CommitPolicy, ExecRequest};
use crate::napi::raw::{Host, Raw};
use crate::workspace::bounds::{to_usize, Bounds};
use crate::workspace::rules::MAX_PATTERNS;
use crate::workspace::{PathRulesSpec, WriteQuota, WsError, ZipLimits};

pub(super) fn invalid(message: impl Into<String>) -> WsError {
    WsError::invalid_input(message)
}

/// A host failure while reading an argument (a throwing getter, say) as `INVALID_INPUT`.
fn unreadable(message: String) -> WsError {
    invalid(message)
}

/// `None` for a missing, `undefined` or `null` argument.
pub(super) fn given(h: Host, v: Option<&Unknown>) -> Option<Raw> {
    v.map(|u| u.raw()).filter(|&r| !h.is_nullish(r))
}

fn is_type(h: Host, v: Raw, t: ValueType) -> bool {
    ValueType::from(h.type_of(v)) == t
}

fn wrong_type(h: Host, v: Raw, name: &str, wanted: &str) -> WsError {
    invalid(format!(
        "{name} must be {wanted}, got {}",
        h.describe_type(v)
    ))
}

pub(super) fn string(h: Host, v: Raw, name: &str) -> Res<String> {
    if !is_type(h, v, ValueType::String) {
        return Err(wrong_type(h, v, name, "a string"));
    }
    h.string(v).map_err(unreadable)
}

pub(super) fn boolean(h: Host, v: Raw, name: &str) -> Res<bool> {
    if !is_type(h, v, ValueType::Boolean) {
        return Err(wrong_type(h, v, name, "a boolean"));
    }
    h.boolean(v).map_err(unreadable)
}

fn number(h: Host, v: Raw, name: &str) -> Res<f64> {
    if !is_type(h, v, ValueType::Number) {
        return Err(wrong_type(h, v, name, "a number"));
    }
    h.number(v).map_err(unreadable)
}

/// A whole number within `bounds` (a workspace or exec rule).
pub(super) fn integer(h: Host, v: Raw, name: &str, bounds: Bounds) -> Res<u64> {
    bounds.check(name, number(h, v, name)?)
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
    if is_type(h, v.raw(), ValueType::String) {
        return Ok(h.string(v.raw()).map_err(unreadable)?.into_bytes());
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

/// An options object restricted to `allowed` keys; empty when not given.
pub(super) struct Options {
    h: Host,
    obj: Option<Raw>,
    name: &'static str,
}

impl Options {
    pub(super) fn read(
        h: Host,
        v: Option<&Unknown>,
        name: &'static str,
        allowed: &[&str],
    ) -> Res<Self> {
        Self::read_raw(h, given(h, v), name, allowed)
    }

    pub(super) fn read_raw(
        h: Host,
        v: Option<Raw>,
        name: &'static str,
        allowed: &[&str],
    ) -> Res<Self> {
        let Some(obj) = v.filter(|&r| !h.is_nullish(r)) else {
            return Ok(Options { h, obj: None, name });
        };
        if !is_type(h, obj, ValueType::Object) || h.is_array(obj) {
            return Err(wrong_type(h, obj, name, "an object"));
        }
        for key in h.own_keys(obj).map_err(unreadable)? {
            let key = h.string(key).map_err(unreadable)?;
            if !allowed.contains(&key.as_str()) {
                return Err(invalid(format!(
                    "unknown {name} key '{key}'; expected one of: {}",
                    allowed.join(", ")
                )));
            }
        }
        Ok(Options {
            h,
            obj: Some(obj),
            name,
        })
    }

    pub(super) fn get(&self, key: &str) -> Res<Option<Raw>> {
        let Some(obj) = self.obj else { return Ok(None) };
        let v = self.h.get_named(obj, key).map_err(unreadable)?;
        Ok((!is_type(self.h, v, ValueType::Undefined)).then_some(v))
    }

    fn label(&self, key: &str) -> String {
        format!("{}.{key}", self.name)
    }

    pub(super) fn boolean(&self, key: &str) -> Res<bool> {
        match self.get(key)? {
            Some(v) => boolean(self.h, v, &self.label(key)),
            None => Ok(false),
        }
    }

    pub(super) fn string(&self, key: &str) -> Res<Option<String>> {
        self.get(key)?
            .map(|v| string(self.h, v, &self.label(key)))
            .transpose()
    }

    pub(super) fn integer(&self, key: &str, bounds: Bounds) -> Res<Option<u64>> {
        self.get(key)?
            .map(|v| integer(self.h, v, &self.label(key), bounds))
            .transpose()
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
    let n = h.array_length(v).map_err(unreadable)?;
    check_len(n as usize)?;
    (0..n)
        .map(|i| {
            let item = h.element(v, i).map_err(unreadable)?;
            string(h, item, &format!("{name}[{i}]"))
        })
        .collect()
}

/// `{ readPatterns?: string[], writePatterns?: string[], readOnly?: boolean }`, or `None` for
/// `null`/`undefined` (no rules).
pub(super) fn access_rules(h: Host, v: Option<&Unknown>) -> Res<Option<PathRulesSpec>> {
    if given(h, v).is_none_or(|r| h.is_nullish(r)) {
        return Ok(None);
    }
    let o = Options::read(
        h,
        v,
        "rules",
        &["readPatterns", "writePatterns", "readOnly"],
    )?;
    let list = |key: &str| -> Res<Option<Vec<String>>> {
        o.get(key)?
            .filter(|&r| !h.is_nullish(r))
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
        read_patterns: list("readPatterns")?,
        write_patterns: list("writePatterns")?,
        read_only: o.boolean("readOnly")?,
    }))
}

/// `{ recursive?: boolean }`.
pub(super) fn recursive(h: Host, options: Option<&Unknown>) -> Res<bool> {
    Options::read(h, options, "options", &["recursive"])?.boolean("recursive")
}

pub(super) fn zip_limits(h: Host, v: Option<&Unknown>) -> Res<ZipLimits> {
    let o = Options::read(
        h,
        v,
        "limits",
        &["maxEntries", "maxEntryBytes", "maxTotalBytes", "maxRatio"],
    )?;
    let mut limits = ZipLimits::default();
    if let Some(n) = o.integer("maxEntries", ZipLimits::ENTRIES)? {
        limits.max_entries = to_usize(n);
    }
    if let Some(n) = o.integer("maxEntryBytes", ZipLimits::BYTES)? {
        limits.max_entry_size = n;
    }
    if let Some(n) = o.integer("maxTotalBytes", ZipLimits::BYTES)? {
        limits.max_total_size = n;
    }
    if let Some(n) = o.integer("maxRatio", ZipLimits::RATIO)? {
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

// ----- exec -----

fn string_map(h: Host, v: Raw) -> Res<Vec<(String, String)>> {
    if !is_type(h, v, ValueType::Object) || h.is_array(v) {
        return Err(wrong_type(h, v, "options.env", "an object of strings"));
    }
    let keys = h.own_keys(v).map_err(unreadable)?;
    ExecRequest::check_env_len(keys.len())?;
    keys.into_iter()
        .map(|key| {
            let name = h.string(key).map_err(unreadable)?;
            let value = h.property(v, key).map_err(unreadable)?;
            let value = string(h, value, &format!("options.env.{name}"))?;
            Ok((name, value))
        })
        .collect()
}

fn write_quota(h: Host, v: Raw) -> Res<WriteQuota> {
    let q = Options::read_raw(h, Some(v), "quota", &["bytes", "files"])?;
    let mut quota = WriteQuota::default();
    if let Some(n) = q.integer("bytes", WriteQuota::BYTES)? {
        quota.max_bytes = n;
    }
    if let Some(n) = q.integer("files", WriteQuota::FILES)? {
        quota.max_files = to_usize(n);
    }
    Ok(quota)
}

pub(super) fn exec_request(h: Host, entry: Raw, options: Option<&Unknown>) -> Res<ExecRequest> {
    let mut req = ExecRequest::new(string(h, entry, "entryPath")?);
    let o = Options::read(
        h,
        options,
        "options",
        &[
            "argv",
            "env",
            "limits",
            "timeoutMs",
            "commit",
            "quota",
            "deterministic",
            "onLog",
        ],
    )?;
    if let Some(v) = o.get("argv")? {
        req.argv = string_list(h, v, "options.argv", ExecRequest::check_argv_len)?;
    }
    if let Some(v) = o.get("env")? {
        req.env = string_map(h, v)?;
    }
    let mut limits = LimitOverrides::default();
    if let Some(v) = o.get("limits")? {
        limits = crate::napi::options::parse_limits(h, v)?;
    }
    if let Some(v) = o.get("timeoutMs")? {
        limits.timeout_ms = Some(number(h, v, "options.timeoutMs")?);
    }
    req.limits = limits.resolve().map_err(invalid)?;
    if let Some(c) = o.string("commit")? {
        req.commit = CommitPolicy::from_name(&c).ok_or_else(|| {
            invalid(format!(
                "options.commit must be 'on-success', 'always' or 'never', got '{c}'"
            ))
        })?;
    }
    if let Some(v) = o.get("quota")? {
        req.quota = write_quota(h, v)?;
    }
    if let Some(v) = o.get("onLog")? {
        if h.type_of(v) != napi::sys::ValueType::napi_function {
            return Err(invalid("options.onLog must be a function"));
        }
        req.on_log = Some(h.log_listener(v).map_err(|e| invalid(e.to_string()))?);
    }
    if let Some(v) = o.get("deterministic")? {
        req.deterministic =
            crate::napi::options::parse_deterministic(h, v)?;
    }
    Ok(req)
}
