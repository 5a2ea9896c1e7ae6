//! Realm state as bytes (the engine's `JS_WriteRealmState` / `JS_ReadRealmState`): the
//! top-level bindings of a context derived from the thread's template, and what they reach,
//! closures included, written as one object graph; read back into a fresh context derived from
//! a template of the same build, on any thread or process. Objects of the template are written
//! by their index in a walk of the template (see [`template_fingerprint`]), never copied.
//!
//! The reader loads bytecode without validating it: bytes given to [`read_realm_state`] must be
//! bytes this build wrote, authenticated by the caller.

// Persistent realms call these from runs; until they do, only the tests use them.
#![cfg_attr(not(test), allow(dead_code))]

use rquickjs::{qjs, Ctx};
use std::ffi::CString;
use std::os::raw::{c_char, c_int};

#[repr(C)]
struct JSSnapshotLimits {
    max_bytes: usize,
    max_depth: u32,
    max_nodes: u32,
}

extern "C" {
    fn JS_WriteRealmState(
        ctx: *mut qjs::JSContext,
        skip: *const *const c_char,
        nskip: usize,
        lim: *const JSSnapshotLimits,
        psize: *mut usize,
        kind: *mut c_int,
    ) -> *mut u8;
    fn JS_ReadRealmState(
        ctx: *mut qjs::JSContext,
        buf: *const u8,
        len: usize,
        lim: *const JSSnapshotLimits,
        kind: *mut c_int,
    ) -> c_int;
    fn JS_SnapshotTemplateFingerprint(ctx: *mut qjs::JSContext, out: *mut u8) -> c_int;
}

/// Caps on a snapshot, the same in both directions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SnapshotLimits {
    /// Bytes of a written snapshot; a longer input is refused before reading.
    pub max_bytes: usize,
    /// Nesting of objects.
    pub max_depth: u32,
    /// Objects, closure cells and atoms.
    pub max_nodes: u32,
}

impl Default for SnapshotLimits {
    fn default() -> Self {
        SnapshotLimits {
            max_bytes: 64 << 20,
            max_depth: 10_000,
            max_nodes: 4_000_000,
        }
    }
}

impl SnapshotLimits {
    fn raw(&self) -> JSSnapshotLimits {
        JSSnapshotLimits {
            max_bytes: self.max_bytes,
            max_depth: self.max_depth,
            max_nodes: self.max_nodes,
        }
    }
}

/// Why a snapshot could not be written or read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SnapshotErrorKind {
    /// A value that is not state (a Proxy, a Promise, a host function...), or a context that is
    /// not derived from a template (or, when reading, not fresh).
    Refused,
    /// A cap of [`SnapshotLimits`].
    Limit,
    /// The interrupt handler stopped it (deadline, abort).
    Interrupted,
    OutOfMemory,
    /// Reading: bytes that do not parse.
    Malformed,
}

impl SnapshotErrorKind {
    fn from_raw(kind: c_int) -> Self {
        match kind {
            1 => SnapshotErrorKind::Refused,
            2 => SnapshotErrorKind::Limit,
            3 => SnapshotErrorKind::Interrupted,
            4 => SnapshotErrorKind::OutOfMemory,
            _ => SnapshotErrorKind::Malformed,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SnapshotError {
    pub kind: SnapshotErrorKind,
    /// The engine's message, e.g. "binding `cfg` (cfg.conn) holds a Proxy, which is not state".
    pub message: String,
}

impl std::fmt::Display for SnapshotError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// The pending exception of `ctx`, taken, as a message.
fn take_message(ctx: &Ctx<'_>) -> String {
    let value = ctx.catch();
    if let Some(e) = value.as_exception() {
        if let Some(m) = e.message() {
            return m;
        }
    }
    if let Some(s) = value.as_string() {
        if let Ok(s) = s.to_string() {
            return s;
        }
    }
    "the snapshot failed".to_string()
}

/// Writes the state of `ctx` (a context derived from the thread's template): its global
/// lexical bindings and the properties of its global object that differ from the template's,
/// except the globals named in `skip` (installed by the host per run). No JavaScript runs.
pub(crate) fn write_realm_state(
    ctx: &Ctx<'_>,
    skip: &[&str],
    limits: &SnapshotLimits,
) -> Result<Vec<u8>, SnapshotError> {
    // A name with a NUL cannot be a global the host installs; it matches nothing.
    let names: Vec<CString> = skip.iter().filter_map(|s| CString::new(*s).ok()).collect();
    let pointers: Vec<*const c_char> = names.iter().map(|s| s.as_ptr()).collect();
    let lim = limits.raw();
    let mut size = 0usize;
    let mut kind: c_int = 0;
    let raw = ctx.as_raw().as_ptr();
    // SAFETY: `ctx` is a live context entered on this thread; the name pointers live in
    // `names` for the call, the limits and out-parameters are valid for writes.
    let buf = unsafe {
        JS_WriteRealmState(
            raw,
            pointers.as_ptr(),
            pointers.len(),
            &lim,
            &mut size,
            &mut kind,
        )
    };
    if buf.is_null() {
        return Err(SnapshotError {
            kind: SnapshotErrorKind::from_raw(kind),
            message: take_message(ctx),
        });
    }
    // SAFETY: the engine returned a buffer of `size` bytes, ours to free with js_free.
    let bytes = unsafe {
        let bytes = std::slice::from_raw_parts(buf, size).to_vec();
        qjs::js_free(raw, buf.cast());
        bytes
    };
    Ok(bytes)
}

/// Reads state written by [`write_realm_state`] into `ctx`, a context just derived from a
/// template of the same build. No JavaScript runs. On failure `ctx` must be discarded.
pub(crate) fn read_realm_state(
    ctx: &Ctx<'_>,
    bytes: &[u8],
    limits: &SnapshotLimits,
) -> Result<(), SnapshotError> {
    let lim = limits.raw();
    let mut kind: c_int = 0;
    // SAFETY: `ctx` is a live context entered on this thread; `bytes` is read-only for the
    // call, within its length.
    let rc = unsafe {
        JS_ReadRealmState(
            ctx.as_raw().as_ptr(),
            bytes.as_ptr(),
            bytes.len(),
            &lim,
            &mut kind,
        )
    };
    if rc < 0 {
        return Err(SnapshotError {
            kind: SnapshotErrorKind::from_raw(kind),
            message: take_message(ctx),
        });
    }
    Ok(())
}

/// A hash of the well-known objects of the template `ctx` derives from: the same on every
/// thread and process of one build, different for another template. All zeros when the table
/// could not be built (out of memory), which matches no template.
pub(crate) fn template_fingerprint(ctx: &Ctx<'_>) -> [u8; 32] {
    let mut out = [0u8; 32];
    // SAFETY: `ctx` is a live context entered on this thread; `out` holds the 32 bytes written.
    let rc = unsafe { JS_SnapshotTemplateFingerprint(ctx.as_raw().as_ptr(), out.as_mut_ptr()) };
    if rc < 0 {
        let _ = ctx.catch();
        return [0u8; 32];
    }
    out
}
