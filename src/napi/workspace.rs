//! `ZipWorkspace`: the in-memory workspace exposed to JavaScript.
//!
//! The class is a thin shell over [`crate::workspace::Workspace`]: it checks and converts
//! arguments, calls the workspace, and turns results into plain objects. Every failure is
//! thrown as a JavaScript `Error` whose `code` property holds a stable code (the workspace's
//! own codes, `INVALID_INPUT` for bad arguments, `NOT_TEXT` and `IO`); bad arguments throw a
//! `TypeError`, which is also an `Error`.
//!
//! Paths in results are plain relative paths (`src/a.js`, the root is `''`); paths in
//! arguments may be written `~/src/a.js`, `/src/a.js` or `src/a.js`.
//!
//! The workspace sits behind a mutex so code execution can share it: `exec` takes a snapshot,
//! runs on a worker thread, and applies the run's changes back on the main thread when its
//! promise settles. Host calls made meanwhile are kept; the run's changes land on top.

use std::fs;
use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::ptr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use napi::bindgen_prelude::*;
use napi::sys;
use napi_derive::napi;

use super::host::{Host, Raw, RawValue};
use crate::engine::errors::{ErrorCode, ErrorInfo};
use crate::engine::limits::LimitOverrides;
use crate::engine::{workers, CancelToken, Extension, Mode};
use crate::exec::WriteQuota;
use crate::exec::{
    commit_changes, lock_workspace, run_exec, workspace_extension, CommitPolicy, ExecOutcome,
    ExecRequest, SharedWorkspace,
};
use crate::workspace::path::{display, normalize};
use crate::workspace::{HistoryEntry, Workspace, WsError, WsResult, ZipLimits};

/// Code for arguments of the wrong type or out of range.
pub const INVALID_INPUT: &str = "INVALID_INPUT";
/// Code for `readText` on bytes that are not UTF-8.
pub const NOT_TEXT: &str = "NOT_TEXT";
/// Code for host file system failures in `open` and `save`.
pub const IO: &str = "IO";
/// Code for failures of the bridge itself (should not happen).
pub const INTERNAL: &str = "INTERNAL";

/// Largest integer a JavaScript number holds exactly.
const MAX_SAFE: u64 = (1 << 53) - 1;
/// Default number of history entries returned by `history()`.
const DEFAULT_HISTORY: u64 = 20;
/// Default and largest `maxResults` of `search()`.
const DEFAULT_MAX_RESULTS: u64 = 100;
const MAX_MAX_RESULTS: u64 = 10_000;
/// Largest `context` of `search()`.
const MAX_CONTEXT: u64 = 100;

/// A failure on its way to JavaScript.
#[derive(Debug)]
struct Failure {
    code: &'static str,
    message: String,
}

type Res<T> = std::result::Result<T, Failure>;

impl From<WsError> for Failure {
    fn from(e: WsError) -> Self {
        Failure {
            code: e.code.as_str(),
            message: e.message,
        }
    }
}

fn invalid(message: impl Into<String>) -> Failure {
    Failure {
        code: INVALID_INPUT,
        message: message.into(),
    }
}

fn internal(message: String) -> Failure {
    Failure {
        code: INTERNAL,
        message,
    }
}

/// Throws `f` as a JS error with a `code` property and returns the matching napi error, which
/// tells the caller that an exception is already pending.
fn throw(h: Host, f: Failure) -> Error {
    let fallback = || Error::new(Status::GenericFailure, format!("{}: {}", f.code, f.message));
    let (Ok(code), Ok(msg)) = (h.create_str(f.code), h.create_str(&f.message)) else {
        return fallback();
    };
    let mut err = ptr::null_mut();
    let status = unsafe {
        if f.code == INVALID_INPUT {
            sys::napi_create_type_error(h.env, code, msg, &mut err)
        } else {
            sys::napi_create_error(h.env, code, msg, &mut err)
        }
    };
    if status != sys::Status::napi_ok
        || unsafe { sys::napi_throw(h.env, err) } != sys::Status::napi_ok
    {
        return fallback();
    }
    Error::new(Status::PendingException, f.message)
}

/// Runs `body` and throws its failure, if any.
fn run<T>(env: &Env, body: impl FnOnce(Host) -> Res<T>) -> Result<T> {
    let h = Host::new(env.raw());
    body(h).map_err(|f| throw(h, f))
}

// ----- reading arguments -----

fn describe(h: Host, v: Raw) -> &'static str {
    h.describe_type(v)
}

fn raw(v: &Unknown) -> Raw {
    v.raw()
}

/// `None` for a missing, `undefined` or `null` argument.
fn given(h: Host, v: Option<&Unknown>) -> Option<Raw> {
    v.map(raw).filter(|&r| !h.is_nullish(r))
}

fn string(h: Host, v: Raw, name: &str) -> Res<String> {
    if h.type_of(v) != sys::ValueType::napi_string {
        return Err(invalid(format!(
            "{name} must be a string, got {}",
            describe(h, v)
        )));
    }
    h.string(v).map_err(invalid)
}

fn boolean(h: Host, v: Raw, name: &str) -> Res<bool> {
    if h.type_of(v) != sys::ValueType::napi_boolean {
        return Err(invalid(format!(
            "{name} must be a boolean, got {}",
            describe(h, v)
        )));
    }
    h.boolean(v).map_err(invalid)
}

/// A whole number in `min..=max`.
fn integer(h: Host, v: Raw, name: &str, min: u64, max: u64) -> Res<u64> {
    if h.type_of(v) != sys::ValueType::napi_number {
        return Err(invalid(format!(
            "{name} must be a number, got {}",
            describe(h, v)
        )));
    }
    let n = h.number(v).map_err(invalid)?;
    if !n.is_finite() || n.fract() != 0.0 {
        return Err(invalid(format!("{name} must be a whole number, got {n}")));
    }
    if n < min as f64 || n > max as f64 {
        return Err(invalid(format!(
            "{name} must be between {min} and {max}, got {n}"
        )));
    }
    Ok(n as u64)
}

fn to_usize(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// The bytes of a `Uint8Array` (including `Buffer`) or an `ArrayBuffer`.
///
/// The slice borrows the JavaScript value's memory: it must not outlive the current call, and
/// no JavaScript may run while it is in use.
fn bytes<'a>(h: Host, v: Raw, name: &str) -> Res<&'a [u8]> {
    let mut data: *mut std::ffi::c_void = ptr::null_mut();
    let mut len = 0usize;
    let mut is_typed = false;
    let mut is_buffer = false;
    unsafe {
        sys::napi_is_typedarray(h.env, v, &mut is_typed);
        sys::napi_is_arraybuffer(h.env, v, &mut is_buffer);
    }
    if is_typed {
        let mut kind = 0;
        let mut array_buffer = ptr::null_mut();
        let mut offset = 0usize;
        let status = unsafe {
            sys::napi_get_typedarray_info(
                h.env,
                v,
                &mut kind,
                &mut len,
                &mut data,
                &mut array_buffer,
                &mut offset,
            )
        };
        if status != sys::Status::napi_ok {
            return Err(invalid(format!("{name} could not be read")));
        }
        if kind != sys::TypedarrayType::uint8_array {
            return Err(invalid(format!(
                "{name} must be a Buffer or Uint8Array, got another typed array"
            )));
        }
    } else if is_buffer {
        let status = unsafe { sys::napi_get_arraybuffer_info(h.env, v, &mut data, &mut len) };
        if status != sys::Status::napi_ok {
            return Err(invalid(format!("{name} could not be read")));
        }
    } else {
        return Err(invalid(format!(
            "{name} must be a Buffer or Uint8Array, got {}",
            describe(h, v)
        )));
    }
    if data.is_null() || len == 0 {
        return Ok(&[]);
    }
    Ok(unsafe { std::slice::from_raw_parts(data as *const u8, len) })
}

/// File contents: a string (written as UTF-8) or bytes.
fn contents(h: Host, v: Raw, name: &str) -> Res<Vec<u8>> {
    if h.type_of(v) == sys::ValueType::napi_string {
        return Ok(h.string(v).map_err(invalid)?.into_bytes());
    }
    match bytes(h, v, name) {
        Ok(b) => Ok(b.to_vec()),
        Err(_) => Err(invalid(format!(
            "{name} must be a string, Buffer or Uint8Array, got {}",
            describe(h, v)
        ))),
    }
}

/// An options object restricted to `allowed` keys; `None` when not given.
struct Options {
    h: Host,
    obj: Option<Raw>,
    name: &'static str,
}

impl Options {
    fn read(h: Host, v: Option<&Unknown>, name: &'static str, allowed: &[&str]) -> Res<Self> {
        Self::read_raw(h, given(h, v), name, allowed)
    }

    fn read_raw(h: Host, v: Option<Raw>, name: &'static str, allowed: &[&str]) -> Res<Self> {
        let Some(obj) = v.filter(|&r| !h.is_nullish(r)) else {
            return Ok(Options { h, obj: None, name });
        };
        if h.type_of(obj) != sys::ValueType::napi_object || h.is_array(obj) {
            return Err(invalid(format!(
                "{name} must be an object, got {}",
                describe(h, obj)
            )));
        }
        for key in h.own_keys(obj).map_err(invalid)? {
            let key = h.string(key).map_err(invalid)?;
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

    fn get(&self, key: &str) -> Res<Option<Raw>> {
        let Some(obj) = self.obj else { return Ok(None) };
        let v = self.h.get_named(obj, key).map_err(invalid)?;
        Ok((!matches!(self.h.type_of(v), sys::ValueType::napi_undefined)).then_some(v))
    }

    fn label(&self, key: &str) -> String {
        format!("{}.{key}", self.name)
    }

    fn boolean(&self, key: &str) -> Res<bool> {
        match self.get(key)? {
            Some(v) => boolean(self.h, v, &self.label(key)),
            None => Ok(false),
        }
    }

    fn string(&self, key: &str) -> Res<Option<String>> {
        self.get(key)?
            .map(|v| string(self.h, v, &self.label(key)))
            .transpose()
    }

    fn integer(&self, key: &str, min: u64, max: u64) -> Res<Option<u64>> {
        self.get(key)?
            .map(|v| integer(self.h, v, &self.label(key), min, max))
            .transpose()
    }
}

fn zip_limits(h: Host, v: Option<&Unknown>) -> Res<ZipLimits> {
    let o = Options::read(
        h,
        v,
        "limits",
        &["maxEntries", "maxEntryBytes", "maxTotalBytes", "maxRatio"],
    )?;
    let mut limits = ZipLimits::default();
    if let Some(n) = o.integer("maxEntries", 1, MAX_SAFE)? {
        limits.max_entries = to_usize(n);
    }
    if let Some(n) = o.integer("maxEntryBytes", 0, MAX_SAFE)? {
        limits.max_entry_size = n;
    }
    if let Some(n) = o.integer("maxTotalBytes", 0, MAX_SAFE)? {
        limits.max_total_size = n;
    }
    if let Some(n) = o.integer("maxRatio", 1, MAX_SAFE)? {
        limits.max_ratio = n;
    }
    Ok(limits)
}

// ----- building results -----

fn out<T>(r: std::result::Result<T, String>) -> Res<T> {
    r.map_err(internal)
}

fn num(h: Host, n: u64) -> Res<Raw> {
    out(h.create_number(n as f64))
}

fn buffer(h: Host, data: &[u8]) -> Res<RawValue> {
    let mut copy: *mut std::ffi::c_void = ptr::null_mut();
    let mut result = ptr::null_mut();
    let status = unsafe {
        sys::napi_create_buffer_copy(
            h.env,
            data.len(),
            data.as_ptr().cast(),
            &mut copy,
            &mut result,
        )
    };
    if status != sys::Status::napi_ok {
        let detail = h
            .take_exception()
            .unwrap_or_else(|| format!("status {status}"));
        return Err(internal(format!(
            "could not create a Buffer of {} bytes: {detail}",
            data.len()
        )));
    }
    Ok(RawValue(result))
}

fn strings(h: Host, items: &[String]) -> Res<Raw> {
    let arr = out(h.create_array(items.len()))?;
    for (i, s) in items.iter().enumerate() {
        out(h.set_element(arr, i as u32, out(h.create_str(s))?))?;
    }
    Ok(arr)
}

fn numbers(h: Host, items: &[u64]) -> Res<RawValue> {
    let arr = out(h.create_array(items.len()))?;
    for (i, n) in items.iter().enumerate() {
        out(h.set_element(arr, i as u32, num(h, *n)?))?;
    }
    Ok(RawValue(arr))
}

fn id_or_null(h: Host, id: Option<u64>) -> Res<RawValue> {
    Ok(RawValue(match id {
        Some(id) => num(h, id)?,
        None => out(h.null())?,
    }))
}

fn history_entry(h: Host, e: &HistoryEntry) -> Res<Raw> {
    let obj = out(h.create_object())?;
    out(h.set_own(obj, "id", num(h, e.id)?))?;
    out(h.set_own(obj, "op", out(h.create_str(&e.op))?))?;
    out(h.set_own(obj, "paths", strings(h, &e.paths)?))?;
    out(h.set_own(obj, "pathCount", num(h, e.path_count as u64)?))?;
    out(h.set_own(obj, "time", num(h, e.time)?))?;
    out(h.set_own(obj, "compacted", out(h.create_bool(e.compacted))?))?;
    Ok(obj)
}

// ----- host files -----

fn io_error(what: &str, path: &Path, e: std::io::Error) -> Failure {
    Failure {
        code: IO,
        message: format!("cannot {what} {}: {e}", path.display()),
    }
}

/// Largest archive `open` reads: everything the limits allow plus generous header room.
fn max_archive_bytes(limits: &ZipLimits) -> u64 {
    let per_entry = 2 * limits.max_path_len as u64 + 1024;
    limits
        .max_total_size
        .saturating_add((limits.max_entries as u64).saturating_mul(per_entry))
        .saturating_add(1 << 20)
}

/// Writes `data` to a fresh file next to `target`, then renames it over `target`.
fn write_atomically(target: &Path, data: &[u8]) -> Res<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let name = target.file_name().ok_or_else(|| {
        invalid(format!(
            "hostPath {:?} does not name a file",
            target.display().to_string()
        ))
    })?;
    let dir = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let unique = format!(
        ".{}.{}-{nanos}-{}.tmp",
        name.to_string_lossy(),
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    let temp = dir.join(unique);
    let written = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temp)
        .and_then(|mut f| {
            f.write_all(data)?;
            f.sync_all()
        });
    if let Err(e) = written {
        let _ = fs::remove_file(&temp);
        return Err(io_error("write", target, e));
    }
    if let Err(e) = fs::rename(&temp, target) {
        let _ = fs::remove_file(&temp);
        return Err(io_error("replace", target, e));
    }
    // Make the rename itself durable where the platform allows it.
    #[cfg(unix)]
    if let Ok(d) = fs::File::open(&dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

fn read_archive(path: &Path, limits: &ZipLimits) -> Res<Vec<u8>> {
    let meta = fs::metadata(path).map_err(|e| io_error("read", path, e))?;
    if !meta.is_file() {
        return Err(Failure {
            code: IO,
            message: format!("cannot read {}: not a regular file", path.display()),
        });
    }
    let cap = max_archive_bytes(limits);
    if meta.len() > cap {
        return Err(WsError::new(
            crate::workspace::WsCode::ZipLimit,
            format!(
                "{} is {} bytes; archives above {cap} bytes are refused",
                path.display(),
                meta.len()
            ),
        )
        .into());
    }
    fs::read(path).map_err(|e| io_error("read", path, e))
}

// ----- the class -----

/// An in-memory tree of files and folders with a recorded history, imported from and exported
/// to zip archives.
#[napi]
pub struct ZipWorkspace {
    inner: SharedWorkspace,
}

#[napi]
impl ZipWorkspace {
    /// An empty workspace.
    #[napi(constructor)]
    pub fn new() -> Self {
        ZipWorkspace::from_workspace(Workspace::new())
    }

    /// Imports a workspace (and its history) from zip bytes, enforcing `limits`.
    #[napi(
        factory,
        js_name = "fromZip",
        catch_unwind,
        ts_args_type = "bytes: Uint8Array, limits?: object | null"
    )]
    pub fn from_zip(env: Env, bytes: Unknown, limits: Option<Unknown>) -> Result<Self> {
        run(&env, |h| {
            let limits = zip_limits(h, limits.as_ref())?;
            let data = self::bytes(h, raw(&bytes), "bytes")?;
            Ok(ZipWorkspace::from_workspace(Workspace::from_zip(
                data, &limits,
            )?))
        })
    }

    /// Reads a zip archive from the host file system.
    #[napi(
        factory,
        catch_unwind,
        ts_args_type = "hostPath: string, limits?: object | null"
    )]
    pub fn open(env: Env, host_path: Unknown, limits: Option<Unknown>) -> Result<Self> {
        run(&env, |h| {
            let path = string(h, raw(&host_path), "hostPath")?;
            let limits = zip_limits(h, limits.as_ref())?;
            let data = read_archive(Path::new(&path), &limits)?;
            Ok(ZipWorkspace::from_workspace(Workspace::from_zip(
                &data, &limits,
            )?))
        })
    }

    /// Exports the workspace and its history as zip bytes (the same workspace always gives the
    /// same bytes).
    #[napi(js_name = "toZip", catch_unwind, ts_return_type = "Buffer")]
    pub fn to_zip(&self, env: Env) -> Result<RawValue> {
        run(&env, |h| buffer(h, &self.ws().to_zip()))
    }

    /// Writes the archive to the host file system atomically (temporary file, then rename).
    #[napi(catch_unwind, ts_args_type = "hostPath: string")]
    pub fn save(&self, env: Env, host_path: Unknown) -> Result<()> {
        run(&env, |h| {
            let path = string(h, raw(&host_path), "hostPath")?;
            if path.is_empty() {
                return Err(invalid("hostPath must not be empty"));
            }
            let bytes = self.ws().to_zip();
            write_atomically(Path::new(&path), &bytes)
        })
    }

    /// A file's bytes.
    #[napi(
        js_name = "readFile",
        catch_unwind,
        ts_args_type = "path: string",
        ts_return_type = "Buffer"
    )]
    pub fn read_file(&self, env: Env, path: Unknown) -> Result<RawValue> {
        run(&env, |h| {
            let path = string(h, raw(&path), "path")?;
            buffer(h, self.ws().read_file(&path)?)
        })
    }

    /// A file's text; `NOT_TEXT` if it is not valid UTF-8.
    #[napi(js_name = "readText", catch_unwind, ts_args_type = "path: string")]
    pub fn read_text(&self, env: Env, path: Unknown) -> Result<String> {
        run(&env, |h| {
            let path = string(h, raw(&path), "path")?;
            let ws = self.ws();
            let data = ws.read_file(&path)?;
            match std::str::from_utf8(data) {
                Ok(s) => Ok(s.to_string()),
                Err(e) => Err(Failure {
                    code: NOT_TEXT,
                    message: format!(
                        "{} is not UTF-8 text (invalid byte at offset {}); read it as bytes instead",
                        display(&normalize(&path)?),
                        e.valid_up_to()
                    ),
                }),
            }
        })
    }

    /// Creates or replaces a file, creating missing parent folders. Returns the id of the
    /// history entry recorded, or `null` if nothing changed.
    #[napi(
        js_name = "writeFile",
        catch_unwind,
        ts_args_type = "path: string, data: string | Uint8Array",
        ts_return_type = "number | null"
    )]
    pub fn write_file(&mut self, env: Env, path: Unknown, data: Unknown) -> Result<RawValue> {
        run(&env, |h| {
            let path = string(h, raw(&path), "path")?;
            let data = contents(h, raw(&data), "data")?;
            let id = self.recorded(|w| w.write_file(&path, &data, true))?;
            id_or_null(h, id)
        })
    }

    /// Creates a folder (with `recursive`, also missing parents, and an existing folder is
    /// fine). Returns the history entry id, or `null` if nothing changed.
    #[napi(
        catch_unwind,
        ts_args_type = "path: string, options?: { recursive?: boolean } | null",
        ts_return_type = "number | null"
    )]
    pub fn mkdir(&mut self, env: Env, path: Unknown, options: Option<Unknown>) -> Result<RawValue> {
        run(&env, |h| {
            let path = string(h, raw(&path), "path")?;
            let recursive = Options::read(h, options.as_ref(), "options", &["recursive"])?
                .boolean("recursive")?;
            let id = self.recorded(|w| w.mkdir(&path, recursive))?;
            id_or_null(h, id)
        })
    }

    /// Deletes a file or folder (a non-empty folder needs `recursive`). Returns the history
    /// entry id.
    #[napi(
        catch_unwind,
        ts_args_type = "path: string, options?: { recursive?: boolean } | null",
        ts_return_type = "number | null"
    )]
    pub fn delete(
        &mut self,
        env: Env,
        path: Unknown,
        options: Option<Unknown>,
    ) -> Result<RawValue> {
        run(&env, |h| {
            let path = string(h, raw(&path), "path")?;
            let recursive = Options::read(h, options.as_ref(), "options", &["recursive"])?
                .boolean("recursive")?;
            let id = self.recorded(|w| w.delete(&path, recursive))?;
            id_or_null(h, id)
        })
    }

    /// The entries of a folder (default: the root), sorted by path; with `recursive`,
    /// everything below it.
    #[napi(
        catch_unwind,
        ts_args_type = "path?: string | null, options?: { recursive?: boolean } | null",
        ts_return_type = "object[]"
    )]
    pub fn list(
        &self,
        env: Env,
        path: Option<Unknown>,
        options: Option<Unknown>,
    ) -> Result<RawValue> {
        run(&env, |h| {
            let path = match given(h, path.as_ref()) {
                Some(v) => string(h, v, "path")?,
                None => "~".to_string(),
            };
            let recursive = Options::read(h, options.as_ref(), "options", &["recursive"])?
                .boolean("recursive")?;
            let entries = self.ws().list(&path, recursive)?;
            let arr = out(h.create_array(entries.len()))?;
            for (i, e) in entries.iter().enumerate() {
                let obj = out(h.create_object())?;
                out(h.set_own(obj, "path", out(h.create_str(&e.path))?))?;
                out(h.set_own(obj, "kind", out(h.create_str(e.kind.as_str()))?))?;
                out(h.set_own(obj, "size", num(h, e.size)?))?;
                out(h.set_element(arr, i as u32, obj))?;
            }
            Ok(RawValue(arr))
        })
    }

    /// Metadata of a path: `{ path, kind, size, mtime }` (the root's path is `''`).
    #[napi(catch_unwind, ts_args_type = "path: string", ts_return_type = "object")]
    pub fn stat(&self, env: Env, path: Unknown) -> Result<RawValue> {
        run(&env, |h| {
            let path = string(h, raw(&path), "path")?;
            let s = self.ws().stat(&path)?;
            let obj = out(h.create_object())?;
            out(h.set_own(obj, "path", out(h.create_str(&s.path))?))?;
            out(h.set_own(obj, "kind", out(h.create_str(s.kind.as_str()))?))?;
            out(h.set_own(obj, "size", num(h, s.size)?))?;
            out(h.set_own(obj, "mtime", num(h, s.mtime)?))?;
            Ok(RawValue(obj))
        })
    }

    /// Whether something exists at a path (invalid and hidden paths do not exist).
    #[napi(catch_unwind, ts_args_type = "path: string")]
    pub fn exists(&self, env: Env, path: Unknown) -> Result<bool> {
        run(&env, |h| {
            let path = string(h, raw(&path), "path")?;
            Ok(self.ws().exists(&path))
        })
    }

    /// Lines `start..=end` of a text file, 1-based and inclusive. `start` defaults to 1, `end`
    /// to the last line and is clamped to it.
    #[napi(
        js_name = "readLines",
        catch_unwind,
        ts_args_type = "path: string, start?: number | null, end?: number | null",
        ts_return_type = "object"
    )]
    pub fn read_lines(
        &self,
        env: Env,
        path: Unknown,
        start: Option<Unknown>,
        end: Option<Unknown>,
    ) -> Result<RawValue> {
        run(&env, |h| {
            let path = string(h, raw(&path), "path")?;
            let start = match given(h, start.as_ref()) {
                Some(v) => integer(h, v, "start", 0, MAX_SAFE)?,
                None => 1,
            };
            let end = match given(h, end.as_ref()) {
                Some(v) => integer(h, v, "end", 0, MAX_SAFE)?,
                None => MAX_SAFE,
            };
            let s = self
                .ws()
                .read_lines(&path, to_usize(start), to_usize(end))?;
            let obj = out(h.create_object())?;
            out(h.set_own(obj, "start", num(h, s.start as u64)?))?;
            out(h.set_own(obj, "end", num(h, s.end as u64)?))?;
            out(h.set_own(obj, "totalLines", num(h, s.total_lines as u64)?))?;
            out(h.set_own(obj, "lines", strings(h, &s.lines)?))?;
            Ok(RawValue(obj))
        })
    }

    /// Replaces lines `start..=end` (1-based, inclusive) with `replacement`; `end = start - 1`
    /// inserts before `start`. With `expected`, the current text of the range must match it or
    /// `CONFLICT` is thrown and nothing changes.
    #[napi(
        js_name = "patchLines",
        catch_unwind,
        ts_args_type = "path: string, start: number, end: number, replacement: string, options?: { expected?: string } | null",
        ts_return_type = "object"
    )]
    pub fn patch_lines(
        &mut self,
        env: Env,
        path: Unknown,
        start: Unknown,
        end: Unknown,
        replacement: Unknown,
        options: Option<Unknown>,
    ) -> Result<RawValue> {
        run(&env, |h| {
            let path = string(h, raw(&path), "path")?;
            let start = to_usize(integer(h, raw(&start), "start", 0, MAX_SAFE)?);
            let end = to_usize(integer(h, raw(&end), "end", 0, MAX_SAFE)?);
            let replacement = string(h, raw(&replacement), "replacement")?;
            let expected =
                Options::read(h, options.as_ref(), "options", &["expected"])?.string("expected")?;
            let mut outcome = None;
            let id = self.recorded(|w| {
                outcome =
                    Some(w.patch_lines(&path, start, end, &replacement, expected.as_deref())?);
                Ok(())
            })?;
            let Some(o) = outcome else {
                return Err(internal("the patch produced no outcome".into()));
            };
            let obj = out(h.create_object())?;
            out(h.set_own(obj, "start", num(h, o.start as u64)?))?;
            out(h.set_own(obj, "removed", num(h, o.removed as u64)?))?;
            out(h.set_own(obj, "inserted", num(h, o.inserted as u64)?))?;
            out(h.set_own(obj, "totalLines", num(h, o.total_lines as u64)?))?;
            out(h.set_own(obj, "historyId", id_or_null(h, id)?.0))?;
            Ok(RawValue(obj))
        })
    }

    /// Literal, case-sensitive search of the text files at or below `options.path` (default:
    /// everything). At most one hit per line; `context` lines (default 0) around each hit;
    /// at most `maxResults` hits (default 100), `truncated` tells whether more exist.
    #[napi(
        catch_unwind,
        ts_args_type = "query: string, options?: { path?: string, context?: number, maxResults?: number } | null",
        ts_return_type = "object"
    )]
    pub fn search(&self, env: Env, query: Unknown, options: Option<Unknown>) -> Result<RawValue> {
        run(&env, |h| {
            let query = string(h, raw(&query), "query")?;
            if query.is_empty() {
                return Err(invalid("query must not be empty"));
            }
            let o = Options::read(
                h,
                options.as_ref(),
                "options",
                &["path", "context", "maxResults"],
            )?;
            let path = o.string("path")?.unwrap_or_else(|| "~".into());
            let context = o.integer("context", 0, MAX_CONTEXT)?.unwrap_or(0);
            let max = o
                .integer("maxResults", 1, MAX_MAX_RESULTS)?
                .unwrap_or(DEFAULT_MAX_RESULTS);
            let r = self
                .ws()
                .search(&query, &path, to_usize(context), to_usize(max))?;
            let arr = out(h.create_array(r.matches.len()))?;
            for (i, m) in r.matches.iter().enumerate() {
                let obj = out(h.create_object())?;
                out(h.set_own(obj, "path", out(h.create_str(&m.path))?))?;
                out(h.set_own(obj, "line", num(h, m.line as u64)?))?;
                out(h.set_own(obj, "column", num(h, m.column as u64)?))?;
                out(h.set_own(obj, "before", strings(h, &m.before)?))?;
                out(h.set_own(obj, "text", out(h.create_str(&m.line_text))?))?;
                out(h.set_own(obj, "after", strings(h, &m.after)?))?;
                out(h.set_element(arr, i as u32, obj))?;
            }
            let obj = out(h.create_object())?;
            out(h.set_own(obj, "matches", arr))?;
            out(h.set_own(obj, "truncated", out(h.create_bool(r.truncated))?))?;
            out(h.set_own(obj, "filesSearched", num(h, r.files_searched as u64)?))?;
            Ok(RawValue(obj))
        })
    }

    /// The newest `n` history entries (default 20), newest first.
    #[napi(
        catch_unwind,
        ts_args_type = "n?: number | null",
        ts_return_type = "object[]"
    )]
    pub fn history(&self, env: Env, n: Option<Unknown>) -> Result<RawValue> {
        run(&env, |h| {
            let n = match given(h, n.as_ref()) {
                Some(v) => integer(h, v, "n", 0, MAX_SAFE)?,
                None => DEFAULT_HISTORY,
            };
            let entries = self.ws().history(to_usize(n));
            let arr = out(h.create_array(entries.len()))?;
            for (i, e) in entries.iter().enumerate() {
                out(h.set_element(arr, i as u32, history_entry(h, e)?))?;
            }
            Ok(RawValue(arr))
        })
    }

    /// A unified diff of the text changes made by history entry `id`.
    #[napi(catch_unwind, ts_args_type = "id: number")]
    pub fn diff(&self, env: Env, id: Unknown) -> Result<String> {
        run(&env, |h| {
            let id = integer(h, raw(&id), "id", 0, MAX_SAFE)?;
            Ok(self.ws().diff(id)?)
        })
    }

    /// Undoes the newest `n` entries (default 1); returns their ids, newest first.
    #[napi(
        catch_unwind,
        ts_args_type = "n?: number | null",
        ts_return_type = "number[]"
    )]
    pub fn undo(&mut self, env: Env, n: Option<Unknown>) -> Result<RawValue> {
        run(&env, |h| {
            let n = count(h, n.as_ref())?;
            let ids = self.ws().undo(n)?;
            numbers(h, &ids)
        })
    }

    /// Redoes up to `n` undone entries (default 1); returns their ids, oldest first.
    #[napi(
        catch_unwind,
        ts_args_type = "n?: number | null",
        ts_return_type = "number[]"
    )]
    pub fn redo(&mut self, env: Env, n: Option<Unknown>) -> Result<RawValue> {
        run(&env, |h| {
            let n = count(h, n.as_ref())?;
            let ids = self.ws().redo(n)?;
            numbers(h, &ids)
        })
    }

    /// Returns the tree to its state right after entry `id`, recorded as a new entry whose id
    /// is returned (`null` if the tree was already in that state).
    #[napi(
        catch_unwind,
        ts_args_type = "id: number",
        ts_return_type = "number | null"
    )]
    pub fn restore(&mut self, env: Env, id: Unknown) -> Result<RawValue> {
        run(&env, |h| {
            let id = integer(h, raw(&id), "id", 0, MAX_SAFE)?;
            let new_id = self.ws().restore(id)?;
            id_or_null(h, new_id)
        })
    }
}

/// `n` for undo and redo: a whole number of at least 1, default 1.
fn count(h: Host, v: Option<&Unknown>) -> Res<usize> {
    match given(h, v) {
        Some(v) => Ok(to_usize(integer(h, v, "n", 1, MAX_SAFE)?)),
        None => Ok(1),
    }
}

impl Default for ZipWorkspace {
    fn default() -> Self {
        Self::new()
    }
}

impl ZipWorkspace {
    /// Wraps an existing workspace.
    pub fn from_workspace(inner: Workspace) -> Self {
        ZipWorkspace {
            inner: Arc::new(Mutex::new(inner)),
        }
    }

    /// The workspace, shared with runs that read and write it.
    pub fn shared(&self) -> SharedWorkspace {
        self.inner.clone()
    }

    /// The workspace, locked for the duration of the guard.
    pub fn ws(&self) -> MutexGuard<'_, Workspace> {
        lock_workspace(&self.inner)
    }

    /// Runs a recorded mutation and returns the id of the history entry it added, if any.
    fn recorded(&mut self, op: impl FnOnce(&mut Workspace) -> WsResult<()>) -> Res<Option<u64>> {
        let mut ws = self.ws();
        let before = ws.history_state().last_id();
        op(&mut ws)?;
        let after = ws.history_state().last_id();
        Ok(after.filter(|&id| Some(id) != before))
    }
}

// ----- exec -----

/// Most `argv` entries and `env` variables an exec call accepts.
const MAX_EXEC_ITEMS: u32 = 10_000;

fn exec_request(h: Host, entry: Raw, options: Option<&Unknown>) -> Res<ExecRequest> {
    let mut req = ExecRequest::new(string(h, entry, "entryPath")?);
    let o = Options::read(
        h,
        options,
        "options",
        &["argv", "env", "limits", "timeoutMs", "commit", "quota"],
    )?;
    if let Some(v) = o.get("argv")? {
        if !h.is_array(v) {
            return Err(invalid(format!(
                "options.argv must be an array of strings, got {}",
                describe(h, v)
            )));
        }
        let n = h.array_length(v).map_err(invalid)?;
        if n > MAX_EXEC_ITEMS {
            return Err(invalid(format!(
                "options.argv has {n} entries; the limit is {MAX_EXEC_ITEMS}"
            )));
        }
        for i in 0..n {
            let item = h.element(v, i).map_err(invalid)?;
            req.argv
                .push(string(h, item, &format!("options.argv[{i}]"))?);
        }
    }
    if let Some(v) = o.get("env")? {
        if h.type_of(v) != sys::ValueType::napi_object || h.is_array(v) {
            return Err(invalid(format!(
                "options.env must be an object of strings, got {}",
                describe(h, v)
            )));
        }
        let keys = h.own_keys(v).map_err(invalid)?;
        if keys.len() > MAX_EXEC_ITEMS as usize {
            return Err(invalid(format!(
                "options.env has {} variables; the limit is {MAX_EXEC_ITEMS}",
                keys.len()
            )));
        }
        for key in keys {
            let name = h.string(key).map_err(invalid)?;
            let value = h.property(v, key).map_err(invalid)?;
            let value = string(h, value, &format!("options.env.{name}"))?;
            req.env.push((name, value));
        }
    }
    let mut limits = LimitOverrides::default();
    if let Some(v) = o.get("limits")? {
        limits = super::options::parse_limits(h, v).map_err(|e| invalid(e.message))?;
    }
    if let Some(v) = o.get("timeoutMs")? {
        if h.type_of(v) != sys::ValueType::napi_number {
            return Err(invalid(format!(
                "options.timeoutMs must be a number, got {}",
                describe(h, v)
            )));
        }
        limits.timeout_ms = Some(h.number(v).map_err(invalid)?);
    }
    req.limits = limits.resolve().map_err(invalid)?;
    if let Some(c) = o.string("commit")? {
        req.commit = match c.as_str() {
            "on-success" => CommitPolicy::OnSuccess,
            "always" => CommitPolicy::Always,
            "never" => CommitPolicy::Never,
            other => {
                return Err(invalid(format!(
                    "options.commit must be 'on-success', 'always' or 'never', got '{other}'"
                )))
            }
        };
    }
    if let Some(v) = o.get("quota")? {
        let q = Options::read_raw(h, Some(v), "quota", &["bytes", "files"])?;
        let mut quota = WriteQuota::default();
        if let Some(n) = q.integer("bytes", 0, MAX_SAFE)? {
            quota.max_bytes = n;
        }
        if let Some(n) = q.integer("files", 0, MAX_SAFE)? {
            quota.max_files = to_usize(n);
        }
        req.quota = quota;
    }
    Ok(req)
}

fn error_object(h: Host, e: &ErrorInfo, file: Option<&str>) -> Res<Raw> {
    let obj = out(h.create_object())?;
    out(h.set_own(obj, "code", out(h.create_str(e.code.as_str()))?))?;
    out(h.set_own(obj, "name", out(h.create_str(&e.name))?))?;
    out(h.set_own(obj, "message", out(h.create_str(&e.message))?))?;
    if let Some(f) = file {
        out(h.set_own(obj, "file", out(h.create_str(f))?))?;
    }
    if let Some(l) = e.line {
        out(h.set_own(obj, "line", num(h, u64::from(l))?))?;
    }
    if let Some(c) = e.column {
        out(h.set_own(obj, "column", num(h, u64::from(c))?))?;
    }
    if let Some(s) = &e.frame {
        out(h.set_own(obj, "frame", out(h.create_str(s))?))?;
    }
    if let Some(s) = &e.stack {
        out(h.set_own(obj, "stack", out(h.create_str(s))?))?;
    }
    Ok(obj)
}

/// Applies the run's changes (main thread) and builds the `ExecResult`.
fn exec_result(h: Host, mut o: ExecOutcome, ws: &SharedWorkspace) -> Res<Raw> {
    let mut history: Option<Option<u64>> = None;
    if let Some(changes) = o.changes.take() {
        let label = o.label();
        match commit_changes(&mut lock_workspace(ws), &changes, &label) {
            Ok(id) => history = Some(id),
            Err(e) => {
                o.ok = false;
                if o.exit_code == 0 {
                    o.exit_code = 1;
                }
                o.error = Some(ErrorInfo::new(
                    ErrorCode::EvalError,
                    "CommitError",
                    format!(
                        "the run's file changes could not be applied to the workspace, so none were: {}",
                        e.message
                    ),
                ));
                o.error_file = None;
            }
        }
    }
    let obj = out(h.create_object())?;
    out(h.set_own(obj, "ok", out(h.create_bool(o.ok))?))?;
    out(h.set_own(
        obj,
        "exitCode",
        out(h.create_number(f64::from(o.exit_code)))?,
    ))?;
    out(h.set_own(obj, "stdout", out(h.create_str(&o.stdout))?))?;
    out(h.set_own(obj, "stderr", out(h.create_str(&o.stderr))?))?;
    if let Some(e) = &o.error {
        out(h.set_own(obj, "error", error_object(h, e, o.error_file.as_deref())?))?;
    }
    if let Some(id) = history {
        out(h.set_own(obj, "historyId", id_or_null(h, id)?.0))?;
    }
    let stats = out(h.create_object())?;
    out(h.set_own(stats, "wallMs", out(h.create_number(o.stats.wall_ms))?))?;
    out(h.set_own(stats, "heapBytes", num(h, o.stats.heap_bytes as u64)?))?;
    out(h.set_own(obj, "stats", stats))?;
    Ok(obj)
}

#[napi]
impl ZipWorkspace {
    /// Runs a `.js`, `.mjs`, `.ts` or `.mts` file of the workspace as an ES module graph on a
    /// worker thread. Resolves to `{ ok, exitCode, stdout, stderr, error?, historyId?, stats }`;
    /// rejects only for bad arguments (thrown synchronously as a TypeError with code
    /// INVALID_INPUT). The run sees a snapshot taken now; its changes are applied when the promise
    /// settles (by default only if it succeeded), as one history entry, on top of whatever the
    /// host changed meanwhile.
    #[napi(
        catch_unwind,
        ts_args_type = "entryPath: string, options?: object | null",
        ts_return_type = "Promise<object>"
    )]
    pub fn exec(
        &self,
        env: Env,
        entry_path: Unknown,
        options: Option<Unknown>,
    ) -> Result<RawValue> {
        let h = Host::new(env.raw());
        let req = exec_request(h, raw(&entry_path), options.as_ref()).map_err(|f| throw(h, f))?;
        let snapshot = self.ws().vfs().clone();
        let shared = self.inner.clone();
        let (deferred, promise) = env.create_deferred()?;
        let promise_raw = promise.raw();
        let job = move || {
            let outcome = catch_unwind(AssertUnwindSafe(|| {
                run_exec(&req, snapshot, &CancelToken::new())
            }))
            .unwrap_or_else(|_| {
                ExecOutcome::failed(
                    &req.entry,
                    ErrorInfo::internal("quickrealm bug: the exec run panicked"),
                )
            });
            deferred.resolve(move |env: Env| {
                exec_result(Host::new(env.raw()), outcome, &shared)
                    .map(RawValue)
                    .map_err(|f| {
                        Error::new(Status::GenericFailure, format!("{}: {}", f.code, f.message))
                    })
            });
        };
        match workers::global() {
            Some(pool) if pool.submit(Box::new(job)) => Ok(RawValue(promise_raw)),
            _ => Err(throw(
                h,
                internal("the worker pool is not accepting work".into()),
            )),
        }
    }
}

/// The `ZipWorkspace` wrapped by a JavaScript object, if it is one.
impl ZipWorkspace {
    /// The extension that gives a `run()` this workspace (`fs`/`path` globals in function and
    /// script mode, imports in module mode); its writes are applied when the run succeeds.
    pub fn run_extension(&self, mode: Mode, filename: &str) -> Extension {
        workspace_extension(&self.inner, mode, filename)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(tag: &str) -> PathBuf {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let dir =
            std::env::temp_dir().join(format!("quickrealm-{tag}-{}-{nanos}", std::process::id()));
        if let Err(e) = fs::create_dir_all(&dir) {
            panic!("cannot create {}: {e}", dir.display());
        }
        dir
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut out: Vec<String> = match fs::read_dir(dir) {
            Ok(it) => it
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect(),
            Err(e) => panic!("cannot list {}: {e}", dir.display()),
        };
        out.sort();
        out
    }

    #[test]
    fn atomic_write_replaces_and_leaves_no_temporary_file() -> std::result::Result<(), String> {
        let dir = temp_dir("save");
        let target = dir.join("ws.zip");
        write_atomically(&target, b"first").map_err(|f| f.message)?;
        write_atomically(&target, b"second").map_err(|f| f.message)?;
        assert_eq!(fs::read(&target).map_err(|e| e.to_string())?, b"second");
        assert_eq!(names(&dir), vec!["ws.zip"]);
        let missing = dir.join("missing").join("ws.zip");
        let err = write_atomically(&missing, b"x").err().map(|f| f.code);
        assert_eq!(err, Some(IO));
        let _ = fs::remove_dir_all(&dir);
        Ok(())
    }

    #[test]
    fn reading_archives_checks_the_host_file() -> std::result::Result<(), String> {
        let dir = temp_dir("open");
        let limits = ZipLimits::default();
        assert_eq!(read_archive(&dir, &limits).err().map(|f| f.code), Some(IO));
        assert_eq!(
            read_archive(&dir.join("nope.zip"), &limits)
                .err()
                .map(|f| f.code),
            Some(IO)
        );
        let tiny = ZipLimits {
            max_entries: 1,
            max_total_size: 16,
            max_path_len: 8,
            ..ZipLimits::default()
        };
        let cap = max_archive_bytes(&tiny);
        let file = dir.join("big.zip");
        fs::write(&file, vec![0u8; cap as usize + 1]).map_err(|e| e.to_string())?;
        assert_eq!(
            read_archive(&file, &tiny).err().map(|f| f.code),
            Some("ZIP_LIMIT")
        );
        fs::write(&file, vec![0u8; 4096]).map_err(|e| e.to_string())?;
        assert_eq!(
            read_archive(&file, &limits)
                .map(|d| d.len())
                .map_err(|f| f.message)?,
            4096
        );
        let _ = fs::remove_dir_all(&dir);
        Ok(())
    }

    #[test]
    fn archive_cap_covers_every_allowed_byte() {
        let limits = ZipLimits::default();
        assert!(max_archive_bytes(&limits) > limits.max_total_size);
        let huge = ZipLimits {
            max_entries: usize::MAX,
            max_total_size: u64::MAX,
            ..ZipLimits::default()
        };
        assert_eq!(max_archive_bytes(&huge), u64::MAX);
    }
}
