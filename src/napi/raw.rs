//! Every raw N-API call of quickrealm, behind [`Host`].
//!
//! Why raw calls: the membrane crosses into host objects on every property read, call and
//! callback, and copied data is built value by value; napi-rs's typed values cost a type check
//! and a wrapper per call there, and results must be built with define semantics for
//! `__proto__` (napi-rs's `Object::set` assigns). Exports elsewhere use napi-rs's typed API.
//!
//! The contract every method relies on: a `Host` holds the `napi_env` of the N-API call in
//! progress on this thread (see [`Host::from_raw`]; napi-rs exports get one from their `Env`),
//! and every `Raw` handle given to it was created in a handle scope that is still open. N-API
//! checks each handle's type itself and reports misuse as a status, which becomes an `Err`.
// `napi_value`s are opaque handles that N-API validates; passing one is not a dereference.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

use crate::engine::marshal::Text;
use napi::sys;
use std::ffi::c_void;
use std::ptr;

pub type Raw = sys::napi_value;
pub type RawRef = sys::napi_ref;

/// A raw napi value returned as-is from an export.
pub struct RawValue(pub Raw);

impl napi::bindgen_prelude::ToNapiValue for RawValue {
    unsafe fn to_napi_value(_env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
        Ok(val.0)
    }
}

/// The N-API environment of the call in progress.
#[derive(Clone, Copy)]
pub struct Host {
    env: sys::napi_env,
    /// On failure, leave a thrown exception pending for the caller (see [`Host::crossing`]).
    keep_thrown: bool,
}

fn ok(status: sys::napi_status) -> Result<(), String> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(format!("N-API call failed with status {status}"))
    }
}

impl Host {
    /// A host for the N-API call in progress.
    ///
    /// # Safety
    /// `env` must be the `napi_env` that N-API passed to the call (or callback) in progress on
    /// this thread, and the `Host` must not outlive that call.
    pub unsafe fn from_raw(env: sys::napi_env) -> Self {
        Host {
            env,
            keep_thrown: false,
        }
    }

    /// The host of a napi-rs export's `Env` (napi-rs hands each export the env of its call).
    pub fn of(env: &napi::Env) -> Self {
        Host {
            env: env.raw(),
            keep_thrown: false,
        }
    }

    /// The same host, but a call that fails because host code threw leaves the exception
    /// pending, so the caller can take the thrown value itself (the membrane passes its name
    /// and message on to the guest). By default a failure clears it into the error text.
    pub fn crossing(self) -> Self {
        Host {
            keep_thrown: true,
            ..self
        }
    }

    pub fn env(&self) -> sys::napi_env {
        self.env
    }

    /// Clears a pending host exception (thrown by a getter we called) and returns its text.
    pub fn take_exception(&self) -> Option<String> {
        let mut pending = false;
        // SAFETY: env and handles as the module contract requires; out-pointers are live locals.
        unsafe { sys::napi_is_exception_pending(self.env, &mut pending) };
        if !pending {
            return None;
        }
        let mut exc = ptr::null_mut();
        // SAFETY: env and handles as the module contract requires; out-pointers are live locals.
        unsafe { sys::napi_get_and_clear_last_exception(self.env, &mut exc) };
        let msg = self
            .get_named(exc, "message")
            .ok()
            .and_then(|m| self.string(m).ok());
        Some(msg.unwrap_or_else(|| "a host exception".into()))
    }

    pub fn check(&self, status: sys::napi_status) -> Result<(), String> {
        ok(status).map_err(|e| {
            if self.keep_thrown {
                e
            } else {
                self.take_exception().unwrap_or(e)
            }
        })
    }

    pub fn type_of(&self, v: Raw) -> sys::napi_valuetype {
        let mut t = 0;
        // SAFETY: env and handles as the module contract requires; out-pointers are live locals.
        unsafe { sys::napi_typeof(self.env, v, &mut t) };
        t
    }

    /// How a value reads in an error message: "a string", "an array", "null", ...
    pub fn describe_type(&self, v: Raw) -> &'static str {
        match self.type_of(v) {
            sys::ValueType::napi_undefined => "undefined",
            sys::ValueType::napi_null => "null",
            sys::ValueType::napi_boolean => "a boolean",
            sys::ValueType::napi_number => "a number",
            sys::ValueType::napi_string => "a string",
            sys::ValueType::napi_symbol => "a symbol",
            sys::ValueType::napi_function => "a function",
            sys::ValueType::napi_bigint => "a bigint",
            sys::ValueType::napi_object if self.is_array(v) => "an array",
            sys::ValueType::napi_object => "an object",
            _ => "an unsupported value",
        }
    }

    pub fn is_nullish(&self, v: Raw) -> bool {
        matches!(
            self.type_of(v),
            sys::ValueType::napi_undefined | sys::ValueType::napi_null
        )
    }

    pub fn get_named(&self, obj: Raw, name: &str) -> Result<Raw, String> {
        let key = self.create_str(name)?;
        let mut out = ptr::null_mut();
        // SAFETY: env and handles as the module contract requires; out-pointers are live locals.
        self.check(unsafe { sys::napi_get_property(self.env, obj, key, &mut out) })?;
        Ok(out)
    }

    pub fn global(&self) -> Result<Raw, String> {
        let mut g = ptr::null_mut();
        // SAFETY: env and handles as the module contract requires; out-pointers are live locals.
        self.check(unsafe { sys::napi_get_global(self.env, &mut g) })?;
        Ok(g)
    }

    pub fn string(&self, v: Raw) -> Result<String, String> {
        let mut len = 0usize;
        // SAFETY: env and handles as the module contract requires; out-pointers are live locals.
        self.check(unsafe {
            sys::napi_get_value_string_utf8(self.env, v, ptr::null_mut(), 0, &mut len)
        })?;
        let mut buf = vec![0u8; len + 1];
        let mut written = 0usize;
        // SAFETY: env and handles as the module contract requires; out-pointers are live locals.
        self.check(unsafe {
            sys::napi_get_value_string_utf8(
                self.env,
                v,
                buf.as_mut_ptr() as *mut _,
                buf.len(),
                &mut written,
            )
        })?;
        buf.truncate(written);
        String::from_utf8(buf).map_err(|e| e.to_string())
    }

    /// Reads a string exactly; strings with lone surrogates stay UTF-16.
    pub fn text(&self, v: Raw) -> Result<Text, String> {
        let mut len = 0usize;
        // SAFETY: env and handles as the module contract requires; out-pointers are live locals.
        self.check(unsafe {
            sys::napi_get_value_string_utf16(self.env, v, ptr::null_mut(), 0, &mut len)
        })?;
        let mut buf = vec![0u16; len + 1];
        let mut written = 0usize;
        // SAFETY: env and handles as the module contract requires; out-pointers are live locals.
        self.check(unsafe {
            sys::napi_get_value_string_utf16(self.env, v, buf.as_mut_ptr(), buf.len(), &mut written)
        })?;
        buf.truncate(written);
        match String::from_utf16(&buf) {
            Ok(s) => Ok(Text::Utf8(s)),
            Err(_) => Ok(Text::Utf16(buf)),
        }
    }

    pub fn number(&self, v: Raw) -> Result<f64, String> {
        let mut n = 0f64;
        // SAFETY: env and handles as the module contract requires; out-pointers are live locals.
        self.check(unsafe { sys::napi_get_value_double(self.env, v, &mut n) })?;
        Ok(n)
    }

    pub fn boolean(&self, v: Raw) -> Result<bool, String> {
        let mut b = false;
        // SAFETY: env and handles as the module contract requires; out-pointers are live locals.
        self.check(unsafe { sys::napi_get_value_bool(self.env, v, &mut b) })?;
        Ok(b)
    }

    pub fn create_str(&self, s: &str) -> Result<Raw, String> {
        let mut out = ptr::null_mut();
        // SAFETY: env and handles as the module contract requires; out-pointers are live locals.
        self.check(unsafe {
            sys::napi_create_string_utf8(
                self.env,
                s.as_ptr() as *const _,
                s.len() as isize,
                &mut out,
            )
        })?;
        Ok(out)
    }

    pub fn create_text(&self, t: &Text) -> Result<Raw, String> {
        match t {
            Text::Utf8(s) => self.create_str(s),
            Text::Utf16(u) => {
                let mut out = ptr::null_mut();
                // SAFETY: env and handles as the module contract requires; out-pointers are live locals.
                self.check(unsafe {
                    sys::napi_create_string_utf16(self.env, u.as_ptr(), u.len() as isize, &mut out)
                })?;
                Ok(out)
            }
        }
    }

    pub fn create_number(&self, n: f64) -> Result<Raw, String> {
        let mut out = ptr::null_mut();
        // SAFETY: env and handles as the module contract requires; out-pointers are live locals.
        self.check(unsafe { sys::napi_create_double(self.env, n, &mut out) })?;
        Ok(out)
    }

    pub fn create_bool(&self, b: bool) -> Result<Raw, String> {
        let mut out = ptr::null_mut();
        // SAFETY: env and handles as the module contract requires; out-pointers are live locals.
        self.check(unsafe { sys::napi_get_boolean(self.env, b, &mut out) })?;
        Ok(out)
    }

    pub fn undefined(&self) -> Result<Raw, String> {
        let mut out = ptr::null_mut();
        // SAFETY: env and handles as the module contract requires; out-pointers are live locals.
        self.check(unsafe { sys::napi_get_undefined(self.env, &mut out) })?;
        Ok(out)
    }

    pub fn null(&self) -> Result<Raw, String> {
        let mut out = ptr::null_mut();
        // SAFETY: env and handles as the module contract requires; out-pointers are live locals.
        self.check(unsafe { sys::napi_get_null(self.env, &mut out) })?;
        Ok(out)
    }

    pub fn create_object(&self) -> Result<Raw, String> {
        let mut out = ptr::null_mut();
        // SAFETY: env and handles as the module contract requires; out-pointers are live locals.
        self.check(unsafe { sys::napi_create_object(self.env, &mut out) })?;
        Ok(out)
    }

    pub fn create_array(&self, len: usize) -> Result<Raw, String> {
        let mut out = ptr::null_mut();
        // SAFETY: env and handles as the module contract requires; out-pointers are live locals.
        self.check(unsafe { sys::napi_create_array_with_length(self.env, len, &mut out) })?;
        Ok(out)
    }

    pub fn set_element(&self, arr: Raw, i: u32, v: Raw) -> Result<(), String> {
        // SAFETY: env and handles as the module contract requires; out-pointers are live locals.
        self.check(unsafe { sys::napi_set_element(self.env, arr, i, v) })
    }

    /// Sets an own data property; `__proto__` is defined rather than assigned.
    pub fn set_own(&self, obj: Raw, key: &str, v: Raw) -> Result<(), String> {
        let k = self.create_str(key)?;
        if key == "__proto__" {
            let desc = sys::napi_property_descriptor {
                utf8name: ptr::null(),
                name: k,
                method: None,
                getter: None,
                setter: None,
                value: v,
                attributes: (sys::PropertyAttributes::writable
                    | sys::PropertyAttributes::enumerable
                    | sys::PropertyAttributes::configurable) as _,
                data: ptr::null_mut(),
            };
            // SAFETY: env and handles as the module contract requires; out-pointers are live locals.
            self.check(unsafe { sys::napi_define_properties(self.env, obj, 1, &desc) })
        } else {
            // SAFETY: env and handles as the module contract requires; out-pointers are live locals.
            self.check(unsafe { sys::napi_set_property(self.env, obj, k, v) })
        }
    }

    pub fn call(&self, this: Raw, f: Raw, args: &[Raw]) -> Result<Raw, String> {
        let mut out = ptr::null_mut();
        // SAFETY: env and handles as the module contract requires; out-pointers are live locals.
        self.check(unsafe {
            sys::napi_call_function(self.env, this, f, args.len(), args.as_ptr(), &mut out)
        })?;
        Ok(out)
    }

    pub fn new_instance(&self, ctor: Raw, args: &[Raw]) -> Result<Raw, String> {
        let mut out = ptr::null_mut();
        // SAFETY: env and handles as the module contract requires; out-pointers are live locals.
        self.check(unsafe {
            sys::napi_new_instance(self.env, ctor, args.len(), args.as_ptr(), &mut out)
        })?;
        Ok(out)
    }

    pub fn instance_of(&self, v: Raw, ctor: Raw) -> bool {
        let mut r = false;
        // SAFETY: env and handles as the module contract requires; out-pointers are live locals.
        let s = unsafe { sys::napi_instanceof(self.env, v, ctor, &mut r) };
        if s != sys::Status::napi_ok {
            let _ = self.take_exception();
            return false;
        }
        r
    }

    pub fn is_array(&self, v: Raw) -> bool {
        let mut r = false;
        // SAFETY: env and handles as the module contract requires; out-pointers are live locals.
        unsafe { sys::napi_is_array(self.env, v, &mut r) };
        r
    }

    pub fn array_length(&self, v: Raw) -> Result<u32, String> {
        let mut n = 0u32;
        // SAFETY: env and handles as the module contract requires; out-pointers are live locals.
        self.check(unsafe { sys::napi_get_array_length(self.env, v, &mut n) })?;
        Ok(n)
    }

    pub fn element(&self, v: Raw, i: u32) -> Result<Raw, String> {
        let mut out = ptr::null_mut();
        // SAFETY: env and handles as the module contract requires; out-pointers are live locals.
        self.check(unsafe { sys::napi_get_element(self.env, v, i, &mut out) })?;
        Ok(out)
    }

    /// Own enumerable string keys, in property order.
    pub fn own_keys(&self, obj: Raw) -> Result<Vec<Raw>, String> {
        self.own_string_keys(obj, true)
    }

    /// Own string keys (optionally only the enumerable ones), in property order.
    pub fn own_string_keys(&self, obj: Raw, enumerable_only: bool) -> Result<Vec<Raw>, String> {
        let filter = if enumerable_only {
            sys::KeyFilter::enumerable | sys::KeyFilter::skip_symbols
        } else {
            sys::KeyFilter::skip_symbols
        };
        let mut names = ptr::null_mut();
        // SAFETY: env and handles as the module contract requires; out-pointers are live locals.
        self.check(unsafe {
            sys::napi_get_all_property_names(
                self.env,
                obj,
                sys::KeyCollectionMode::own_only,
                filter,
                sys::KeyConversion::numbers_to_strings,
                &mut names,
            )
        })?;
        let n = self.array_length(names)?;
        (0..n).map(|i| self.element(names, i)).collect()
    }

    pub fn property(&self, obj: Raw, key: Raw) -> Result<Raw, String> {
        let mut out = ptr::null_mut();
        // SAFETY: env and handles as the module contract requires; out-pointers are live locals.
        self.check(unsafe { sys::napi_get_property(self.env, obj, key, &mut out) })?;
        Ok(out)
    }

    pub fn is_date(&self, v: Raw) -> bool {
        let mut r = false;
        // SAFETY: env and handles as the module contract requires; out-pointers are live locals.
        unsafe { sys::napi_is_date(self.env, v, &mut r) };
        r
    }

    pub fn is_typed_array(&self, v: Raw) -> bool {
        let mut r = false;
        // SAFETY: env and handles as the module contract requires; out-pointers are live locals.
        unsafe { sys::napi_is_typedarray(self.env, v, &mut r) };
        r
    }

    pub fn is_array_buffer(&self, v: Raw) -> bool {
        let mut r = false;
        // SAFETY: env and handles as the module contract requires; out-pointers are live locals.
        unsafe { sys::napi_is_arraybuffer(self.env, v, &mut r) };
        r
    }

    pub fn is_data_view(&self, v: Raw) -> bool {
        let mut r = false;
        // SAFETY: env and handles as the module contract requires; out-pointers are live locals.
        unsafe { sys::napi_is_dataview(self.env, v, &mut r) };
        r
    }

    pub fn global_named(&self, name: &str) -> Result<Raw, String> {
        self.get_named(self.global()?, name)
    }

    // ----- values the conversion layer reads and builds -----

    /// Sign and 64-bit words (little-endian) of a bigint's magnitude.
    pub fn bigint_words(&self, v: Raw) -> Result<(bool, Vec<u64>), String> {
        let mut count = 0usize;
        // Node requires both out-pointers to be null when asking only for the word count.
        // SAFETY: env and handles as the module contract requires; null out-pointers ask for the
        // count only.
        self.check(unsafe {
            sys::napi_get_value_bigint_words(
                self.env,
                v,
                ptr::null_mut(),
                &mut count,
                ptr::null_mut(),
            )
        })?;
        let mut words = vec![0u64; count.max(1)];
        let mut count = words.len();
        let mut sign = 0i32;
        // SAFETY: `words` holds `count` writable words, as the call requires.
        self.check(unsafe {
            sys::napi_get_value_bigint_words(self.env, v, &mut sign, &mut count, words.as_mut_ptr())
        })?;
        words.truncate(count);
        Ok((sign != 0, words))
    }

    pub fn create_bigint(&self, negative: bool, words: &[u64]) -> Result<Raw, String> {
        let mut out = ptr::null_mut();
        // SAFETY: `words` is a live slice of `words.len()` words; `out` is a live local.
        self.check(unsafe {
            sys::napi_create_bigint_words(
                self.env,
                negative as i32,
                words.len(),
                words.as_ptr(),
                &mut out,
            )
        })?;
        Ok(out)
    }

    pub fn date_value(&self, v: Raw) -> Result<f64, String> {
        let mut ms = 0f64;
        // SAFETY: env and handles as the module contract requires; out-pointers are live locals.
        self.check(unsafe { sys::napi_get_date_value(self.env, v, &mut ms) })?;
        Ok(ms)
    }

    pub fn create_date(&self, ms: f64) -> Result<Raw, String> {
        let mut out = ptr::null_mut();
        // SAFETY: env and handles as the module contract requires; out-pointers are live locals.
        self.check(unsafe { sys::napi_create_date(self.env, ms, &mut out) })?;
        Ok(out)
    }

    /// A typed array's N-API type and a copy of the bytes it views. `admit` sees the type and
    /// byte count first and may refuse (unsupported type, over budget) before anything is copied.
    pub fn typed_array(
        &self,
        v: Raw,
        admit: impl FnOnce(sys::napi_typedarray_type, usize) -> Result<usize, String>,
    ) -> Result<(sys::napi_typedarray_type, Vec<u8>), String> {
        let mut t = 0;
        let mut len = 0usize;
        let mut data: *mut c_void = ptr::null_mut();
        let mut buffer = ptr::null_mut();
        let mut offset = 0usize;
        // SAFETY: env and handles as the module contract requires; out-pointers are live locals.
        self.check(unsafe {
            sys::napi_get_typedarray_info(
                self.env,
                v,
                &mut t,
                &mut len,
                &mut data,
                &mut buffer,
                &mut offset,
            )
        })?;
        let byte_len = admit(t, len)?;
        // SAFETY: N-API reports `data` as the start of the `len` elements the array views, and
        // `admit` gave their size in bytes; they are copied before any JavaScript can run and
        // detach or resize the buffer.
        let bytes = unsafe { copy_bytes(data, byte_len) };
        Ok((t, bytes))
    }

    /// A copy of an ArrayBuffer's bytes; `admit` sees the length first and may refuse.
    pub fn array_buffer(
        &self,
        v: Raw,
        admit: impl FnOnce(usize) -> Result<(), String>,
    ) -> Result<Vec<u8>, String> {
        let mut data: *mut c_void = ptr::null_mut();
        let mut len = 0usize;
        // SAFETY: env and handles as the module contract requires; out-pointers are live locals.
        self.check(unsafe { sys::napi_get_arraybuffer_info(self.env, v, &mut data, &mut len) })?;
        admit(len)?;
        // SAFETY: N-API reports `data` as the buffer's `len` bytes; copied before any
        // JavaScript runs.
        Ok(unsafe { copy_bytes(data, len) })
    }

    /// A new ArrayBuffer holding a copy of `bytes`.
    pub fn create_array_buffer(&self, bytes: &[u8]) -> Result<Raw, String> {
        let mut data: *mut c_void = ptr::null_mut();
        let mut buffer = ptr::null_mut();
        // SAFETY: env as the module contract requires; out-pointers are live locals.
        self.check(unsafe {
            sys::napi_create_arraybuffer(self.env, bytes.len(), &mut data, &mut buffer)
        })?;
        if !bytes.is_empty() && !data.is_null() {
            // SAFETY: N-API just allocated `bytes.len()` writable bytes at `data`; the source is
            // a live slice of that length and the two cannot overlap.
            unsafe { ptr::copy_nonoverlapping(bytes.as_ptr(), data as *mut u8, bytes.len()) };
        }
        Ok(buffer)
    }

    pub fn create_typed_array(
        &self,
        t: sys::napi_typedarray_type,
        length: usize,
        buffer: Raw,
    ) -> Result<Raw, String> {
        let mut out = ptr::null_mut();
        // SAFETY: env and handles as the module contract requires; out-pointers are live locals.
        self.check(unsafe {
            sys::napi_create_typedarray(self.env, t, length, buffer, 0, &mut out)
        })?;
        Ok(out)
    }

    // ----- what the membrane's host side needs -----

    /// Clears a pending exception and returns the thrown value.
    pub fn take_thrown(&self) -> Option<Raw> {
        let mut pending = false;
        // SAFETY: env as the module contract requires; out-pointers are live locals.
        unsafe { sys::napi_is_exception_pending(self.env, &mut pending) };
        if !pending {
            return None;
        }
        let mut exc = ptr::null_mut();
        // SAFETY: env as the module contract requires; out-pointers are live locals.
        unsafe { sys::napi_get_and_clear_last_exception(self.env, &mut exc) };
        Some(exc)
    }

    /// Keeps `v` alive beyond the current handle scope (until `delete_reference`).
    pub fn create_reference(&self, v: Raw) -> Result<RawRef, String> {
        let mut r = ptr::null_mut();
        // SAFETY: env and handles as the module contract requires; out-pointers are live locals.
        let s = unsafe { sys::napi_create_reference(self.env, v, 1, &mut r) };
        if s != sys::Status::napi_ok || r.is_null() {
            return Err("could not keep a host value".into());
        }
        Ok(r)
    }

    /// A reference that does not keep `v` alive: `reference_value` fails once it is collected.
    pub fn create_weak_reference(&self, v: Raw) -> Result<RawRef, String> {
        let mut r = ptr::null_mut();
        // SAFETY: env and handles as the module contract requires; out-pointers are live locals.
        let s = unsafe { sys::napi_create_reference(self.env, v, 0, &mut r) };
        if s != sys::Status::napi_ok || r.is_null() {
            return Err("could not keep a host value".into());
        }
        Ok(r)
    }

    pub fn reference_value(&self, r: RawRef) -> Result<Raw, String> {
        if r.is_null() {
            return Err("a host handle is no longer valid".into());
        }
        let mut v = ptr::null_mut();
        // SAFETY: `r` was created by `create_reference` on this env and not yet deleted (the
        // owner deletes each reference once, in `release`).
        let s = unsafe { sys::napi_get_reference_value(self.env, r, &mut v) };
        if s != sys::Status::napi_ok || v.is_null() {
            return Err("a host handle is no longer valid".into());
        }
        Ok(v)
    }

    /// Deletes a reference; `r` must not be used afterwards.
    pub fn delete_reference(&self, r: RawRef) {
        if !r.is_null() {
            // SAFETY: `r` was created by `create_reference` on this env; its owner deletes it
            // exactly once.
            unsafe { sys::napi_delete_reference(self.env, r) };
        }
    }

    /// Calls `hook` when this environment is torn down (the main thread at exit, a worker when it
    /// stops), after which no `napi_ref` made on it may be used.
    pub fn on_teardown(&self, hook: fn()) -> Result<(), String> {
        let data = Box::into_raw(Box::new(hook));
        // SAFETY: env as the module contract requires; `data` is a live `Box<fn()>` that
        // `run_teardown_hook` frees, once, when the hook runs.
        let s = unsafe {
            sys::napi_add_env_cleanup_hook(self.env, Some(run_teardown_hook), data as *mut c_void)
        };
        if s != sys::Status::napi_ok {
            // SAFETY: the box was not handed to N-API; it is still ours to free.
            drop(unsafe { Box::from_raw(data) });
            return Err("could not register an environment cleanup hook".into());
        }
        Ok(())
    }

    /// Opens a handle scope closed when the guard drops: values made during one membrane
    /// crossing do not pile up in the caller's scope.
    pub fn scope(&self) -> HandleScope {
        let mut scope = ptr::null_mut();
        // SAFETY: env as the module contract requires; out-pointers are live locals.
        unsafe { sys::napi_open_handle_scope(self.env, &mut scope) };
        HandleScope {
            env: self.env,
            scope,
        }
    }

    /// Opens an escapable handle scope: one value may be kept for the enclosing scope.
    pub fn escapable_scope(&self) -> EscapableScope {
        let mut scope = ptr::null_mut();
        // SAFETY: env as the module contract requires; out-pointers are live locals.
        unsafe { sys::napi_open_escapable_handle_scope(self.env, &mut scope) };
        EscapableScope {
            env: self.env,
            scope,
        }
    }

    /// Compiles and runs host-written script text in the host realm (never guest text).
    pub fn run_script(&self, script: &str) -> Result<Raw, String> {
        let text = self.create_str(script)?;
        let mut out = ptr::null_mut();
        // SAFETY: env and handles as the module contract requires; out-pointers are live locals.
        self.check(unsafe { sys::napi_run_script(self.env, text, &mut out) })?;
        Ok(out)
    }

    pub fn is_promise(&self, v: Raw) -> bool {
        let mut r = false;
        // SAFETY: env and handles as the module contract requires; out-pointers are live locals.
        unsafe { sys::napi_is_promise(self.env, v, &mut r) };
        r
    }

    pub fn set_property(&self, obj: Raw, key: Raw, v: Raw) -> Result<(), String> {
        // SAFETY: env and handles as the module contract requires.
        self.check(unsafe { sys::napi_set_property(self.env, obj, key, v) })
    }

    pub fn has_property(&self, obj: Raw, key: Raw) -> Result<bool, String> {
        let mut r = false;
        // SAFETY: env and handles as the module contract requires; out-pointers are live locals.
        self.check(unsafe { sys::napi_has_property(self.env, obj, key, &mut r) })?;
        Ok(r)
    }

    pub fn delete_property(&self, obj: Raw, key: Raw) -> Result<bool, String> {
        let mut r = false;
        // SAFETY: env and handles as the module contract requires; out-pointers are live locals.
        self.check(unsafe { sys::napi_delete_property(self.env, obj, key, &mut r) })?;
        Ok(r)
    }

    /// A host function backed by the native callback `cb`, owning `data` until the function is
    /// garbage-collected; `cb` finds the data with [`callback_info`].
    pub fn create_function<T>(
        &self,
        name: &str,
        cb: NativeCallback,
        data: T,
    ) -> Result<Raw, String> {
        let data = Box::into_raw(Box::new(data));
        let mut f = ptr::null_mut();
        // SAFETY: `name` is a live UTF-8 slice of the given length; `data` stays valid until the
        // finalizer registered below frees it.
        let s = unsafe {
            sys::napi_create_function(
                self.env,
                name.as_ptr() as *const _,
                name.len() as isize,
                Some(cb),
                data as *mut c_void,
                &mut f,
            )
        };
        if s != sys::Status::napi_ok {
            // SAFETY: the box was not handed to N-API; it is still ours to free.
            drop(unsafe { Box::from_raw(data) });
            return Err(self
                .take_exception()
                .unwrap_or_else(|| "could not create a host function".into()));
        }
        // SAFETY: `f` is the function just created; `free_boxed::<T>` frees exactly the box of
        // type `T` passed here, once, when `f` is collected.
        let s = unsafe {
            sys::napi_add_finalizer(
                self.env,
                f,
                data as *mut c_void,
                Some(free_boxed::<T>),
                ptr::null_mut(),
                ptr::null_mut(),
            )
        };
        if s != sys::Status::napi_ok {
            return Err("could not attach a host function's data".into());
        }
        Ok(f)
    }

    /// Throws a host `Error` with `code`, `message` and `name`.
    pub fn throw_error(&self, code: &str, name: &str, message: &str) {
        let (Ok(msg), Ok(code)) = (self.create_str(message), self.create_str(code)) else {
            return;
        };
        let mut err = ptr::null_mut();
        // SAFETY: env and handles as the module contract requires; out-pointers are live locals.
        if unsafe { sys::napi_create_error(self.env, code, msg, &mut err) } != sys::Status::napi_ok
        {
            return;
        }
        if let Ok(name) = self.create_str(name) {
            let _ = self.set_own(err, "name", name);
        }
        // SAFETY: `err` is the error just created in this scope.
        unsafe { sys::napi_throw(self.env, err) };
    }
}

/// A native function N-API can call.
pub type NativeCallback =
    unsafe extern "C" fn(sys::napi_env, sys::napi_callback_info) -> sys::napi_value;

/// Frees the data box of a host function created by `create_function`.
///
/// # Safety
/// `data` must be null or the `Box<T>` pointer `create_function::<T>` registered, not yet freed.
unsafe extern "C" fn free_boxed<T>(_env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
    if !data.is_null() {
        // SAFETY: per the contract above, `data` is a live `Box<T>` freed only here.
        drop(unsafe { Box::from_raw(data as *mut T) });
    }
}

/// Runs and frees the hook registered by [`Host::on_teardown`].
///
/// # Safety
/// `data` must be the `Box<fn()>` pointer `on_teardown` registered, not yet freed.
unsafe extern "C" fn run_teardown_hook(data: *mut c_void) {
    if data.is_null() {
        return;
    }
    // SAFETY: per the contract above, `data` is a live `Box<fn()>` freed only here.
    let hook = unsafe { Box::from_raw(data as *mut fn()) };
    let _ = std::panic::catch_unwind(*hook);
}

/// Copies `len` bytes from `data` (null or empty gives an empty vector).
///
/// # Safety
/// Unless null, `data` must point to `len` readable bytes.
unsafe fn copy_bytes(data: *mut c_void, len: usize) -> Vec<u8> {
    if len == 0 || data.is_null() {
        return Vec::new();
    }
    // SAFETY: per the contract above.
    unsafe { std::slice::from_raw_parts(data as *const u8, len).to_vec() }
}

/// What a native callback was called with.
pub struct CallbackInfo {
    pub args: Vec<Raw>,
    pub this: Raw,
    /// The data pointer given to `create_function`.
    pub data: *mut c_void,
}

/// Reads a native callback's arguments (at most `max_args`), `this` and data pointer.
///
/// # Safety
/// `env` and `info` must be the arguments N-API passed to the native callback in progress.
pub unsafe fn callback_info(
    env: sys::napi_env,
    info: sys::napi_callback_info,
    max_args: usize,
) -> CallbackInfo {
    let mut argc = max_args;
    let mut argv = vec![ptr::null_mut(); max_args];
    let mut this = ptr::null_mut();
    let mut data: *mut c_void = ptr::null_mut();
    // SAFETY: per the contract above; `argv` has room for `argc` values.
    unsafe {
        sys::napi_get_cb_info(
            env,
            info,
            &mut argc,
            argv.as_mut_ptr(),
            &mut this,
            &mut data,
        )
    };
    argv.truncate(argc.min(max_args));
    CallbackInfo {
        args: argv,
        this,
        data,
    }
}

/// A handle scope, closed on drop.
pub struct HandleScope {
    env: sys::napi_env,
    scope: sys::napi_handle_scope,
}

impl Drop for HandleScope {
    fn drop(&mut self) {
        if !self.scope.is_null() {
            // SAFETY: the scope was opened on this env by `Host::scope` and is closed once,
            // innermost first (guards drop in reverse order of creation).
            unsafe { sys::napi_close_handle_scope(self.env, self.scope) };
        }
    }
}

/// An escapable handle scope, closed on drop.
pub struct EscapableScope {
    env: sys::napi_env,
    scope: sys::napi_escapable_handle_scope,
}

impl EscapableScope {
    /// Keeps `v` valid in the enclosing scope.
    pub fn escape(&self, v: Raw) -> Result<Raw, String> {
        let mut out = ptr::null_mut();
        // SAFETY: the scope is open (closed only on drop) and `v` was created inside it.
        let s = unsafe { sys::napi_escape_handle(self.env, self.scope, v, &mut out) };
        ok(s)?;
        Ok(out)
    }
}

impl Drop for EscapableScope {
    fn drop(&mut self) {
        if !self.scope.is_null() {
            // SAFETY: opened on this env by `Host::escapable_scope`, closed once.
            unsafe { sys::napi_close_escapable_handle_scope(self.env, self.scope) };
        }
    }
}

impl Host {
    /// A listener that hands each captured console line to the JavaScript function `f` through
    /// a thread-safe function: from a worker thread, or queued for the event loop when the run
    /// is on the main thread. It never keeps the process alive on its own.
    pub fn log_listener(&self, f: Raw) -> napi::Result<crate::engine::LogListener> {
        use super::results::LogLine;
        use napi::bindgen_prelude::{FromNapiValue, Function};
        use napi::threadsafe_function::ThreadsafeFunctionCallMode;
        // SAFETY: `self.env` is the env of the call in progress (see `from_raw`) and `f` a value
        // of it; `from_napi_value` checks that it is a function.
        let function = unsafe { Function::<LogLine, ()>::from_napi_value(self.env, f) }?;
        let tsfn = function
            .build_threadsafe_function::<LogLine>()
            .callee_handled::<false>()
            .weak::<true>()
            .build()?;
        Ok(crate::engine::LogListener(std::sync::Arc::new(
            move |entry: &crate::engine::LogEntry| {
                // A full queue or a closing environment drops the line; the run's logs still
                // hold it.
                let _ = tsfn.call(
                    LogLine::from(entry.clone()),
                    ThreadsafeFunctionCallMode::NonBlocking,
                );
            },
        )))
    }
}
