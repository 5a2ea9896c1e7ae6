//! Raw N-API helpers: reading host values into `Data` and building host values from it.
//! Results are built with define semantics for `__proto__`, so no host prototype is touched.
// `napi_value`s are opaque handles that N-API itself validates; passing one is not a dereference.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

use super::bigint::{decimal_to_words, words_to_decimal};
use crate::engine::marshal::{BytesKind, CopyBudget, CopyLimits, Data, Text, TypedArrayKind};
use napi::sys;
use std::ptr;

pub type Raw = sys::napi_value;

/// A raw napi value returned as-is from an export.
pub struct RawValue(pub Raw);

impl napi::bindgen_prelude::ToNapiValue for RawValue {
    unsafe fn to_napi_value(_env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
        Ok(val.0)
    }
}

#[derive(Clone, Copy)]
pub struct Host {
    pub env: sys::napi_env,
}

fn ok(status: sys::napi_status) -> Result<(), String> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(format!("N-API call failed with status {status}"))
    }
}

impl Host {
    pub fn new(env: sys::napi_env) -> Self {
        Host { env }
    }

    /// Clears a pending host exception (thrown by a getter we called) and returns its text.
    pub fn take_exception(&self) -> Option<String> {
        let mut pending = false;
        unsafe { sys::napi_is_exception_pending(self.env, &mut pending) };
        if !pending {
            return None;
        }
        let mut exc = ptr::null_mut();
        unsafe { sys::napi_get_and_clear_last_exception(self.env, &mut exc) };
        let msg = self
            .get_named(exc, "message")
            .ok()
            .and_then(|m| self.string(m).ok());
        Some(msg.unwrap_or_else(|| "a host exception".into()))
    }

    fn check(&self, status: sys::napi_status) -> Result<(), String> {
        ok(status).map_err(|e| self.take_exception().unwrap_or(e))
    }

    pub fn type_of(&self, v: Raw) -> sys::napi_valuetype {
        let mut t = 0;
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
        self.check(unsafe { sys::napi_get_property(self.env, obj, key, &mut out) })?;
        Ok(out)
    }

    pub fn global(&self) -> Result<Raw, String> {
        let mut g = ptr::null_mut();
        self.check(unsafe { sys::napi_get_global(self.env, &mut g) })?;
        Ok(g)
    }

    pub fn string(&self, v: Raw) -> Result<String, String> {
        let mut len = 0usize;
        self.check(unsafe {
            sys::napi_get_value_string_utf8(self.env, v, ptr::null_mut(), 0, &mut len)
        })?;
        let mut buf = vec![0u8; len + 1];
        let mut written = 0usize;
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
        self.check(unsafe {
            sys::napi_get_value_string_utf16(self.env, v, ptr::null_mut(), 0, &mut len)
        })?;
        let mut buf = vec![0u16; len + 1];
        let mut written = 0usize;
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
        self.check(unsafe { sys::napi_get_value_double(self.env, v, &mut n) })?;
        Ok(n)
    }

    pub fn boolean(&self, v: Raw) -> Result<bool, String> {
        let mut b = false;
        self.check(unsafe { sys::napi_get_value_bool(self.env, v, &mut b) })?;
        Ok(b)
    }

    pub fn create_str(&self, s: &str) -> Result<Raw, String> {
        let mut out = ptr::null_mut();
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
                self.check(unsafe {
                    sys::napi_create_string_utf16(self.env, u.as_ptr(), u.len() as isize, &mut out)
                })?;
                Ok(out)
            }
        }
    }

    pub fn create_number(&self, n: f64) -> Result<Raw, String> {
        let mut out = ptr::null_mut();
        self.check(unsafe { sys::napi_create_double(self.env, n, &mut out) })?;
        Ok(out)
    }

    pub fn create_bool(&self, b: bool) -> Result<Raw, String> {
        let mut out = ptr::null_mut();
        self.check(unsafe { sys::napi_get_boolean(self.env, b, &mut out) })?;
        Ok(out)
    }

    pub fn undefined(&self) -> Result<Raw, String> {
        let mut out = ptr::null_mut();
        self.check(unsafe { sys::napi_get_undefined(self.env, &mut out) })?;
        Ok(out)
    }

    pub fn null(&self) -> Result<Raw, String> {
        let mut out = ptr::null_mut();
        self.check(unsafe { sys::napi_get_null(self.env, &mut out) })?;
        Ok(out)
    }

    pub fn create_object(&self) -> Result<Raw, String> {
        let mut out = ptr::null_mut();
        self.check(unsafe { sys::napi_create_object(self.env, &mut out) })?;
        Ok(out)
    }

    pub fn create_array(&self, len: usize) -> Result<Raw, String> {
        let mut out = ptr::null_mut();
        self.check(unsafe { sys::napi_create_array_with_length(self.env, len, &mut out) })?;
        Ok(out)
    }

    pub fn set_element(&self, arr: Raw, i: u32, v: Raw) -> Result<(), String> {
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
            self.check(unsafe { sys::napi_define_properties(self.env, obj, 1, &desc) })
        } else {
            self.check(unsafe { sys::napi_set_property(self.env, obj, k, v) })
        }
    }

    pub fn call(&self, this: Raw, f: Raw, args: &[Raw]) -> Result<Raw, String> {
        let mut out = ptr::null_mut();
        self.check(unsafe {
            sys::napi_call_function(self.env, this, f, args.len(), args.as_ptr(), &mut out)
        })?;
        Ok(out)
    }

    pub fn new_instance(&self, ctor: Raw, args: &[Raw]) -> Result<Raw, String> {
        let mut out = ptr::null_mut();
        self.check(unsafe {
            sys::napi_new_instance(self.env, ctor, args.len(), args.as_ptr(), &mut out)
        })?;
        Ok(out)
    }

    pub fn instance_of(&self, v: Raw, ctor: Raw) -> bool {
        let mut r = false;
        let s = unsafe { sys::napi_instanceof(self.env, v, ctor, &mut r) };
        if s != sys::Status::napi_ok {
            let _ = self.take_exception();
            return false;
        }
        r
    }

    pub fn strict_equals(&self, a: Raw, b: Raw) -> bool {
        let mut r = false;
        unsafe { sys::napi_strict_equals(self.env, a, b, &mut r) };
        r
    }

    pub fn is_array(&self, v: Raw) -> bool {
        let mut r = false;
        unsafe { sys::napi_is_array(self.env, v, &mut r) };
        r
    }

    pub fn array_length(&self, v: Raw) -> Result<u32, String> {
        let mut n = 0u32;
        self.check(unsafe { sys::napi_get_array_length(self.env, v, &mut n) })?;
        Ok(n)
    }

    pub fn element(&self, v: Raw, i: u32) -> Result<Raw, String> {
        let mut out = ptr::null_mut();
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
        self.check(unsafe { sys::napi_get_property(self.env, obj, key, &mut out) })?;
        Ok(out)
    }

    fn is_date(&self, v: Raw) -> bool {
        let mut r = false;
        unsafe { sys::napi_is_date(self.env, v, &mut r) };
        r
    }

    fn is_typed_array(&self, v: Raw) -> bool {
        let mut r = false;
        unsafe { sys::napi_is_typedarray(self.env, v, &mut r) };
        r
    }

    fn is_array_buffer(&self, v: Raw) -> bool {
        let mut r = false;
        unsafe { sys::napi_is_arraybuffer(self.env, v, &mut r) };
        r
    }

    fn is_data_view(&self, v: Raw) -> bool {
        let mut r = false;
        unsafe { sys::napi_is_dataview(self.env, v, &mut r) };
        r
    }

    fn global_named(&self, name: &str) -> Result<Raw, String> {
        self.get_named(self.global()?, name)
    }
}

/// N-API's typed array types and the kinds they stand for (N-API has no Float16Array).
const NAPI_TYPED_ARRAYS: [(sys::napi_typedarray_type, TypedArrayKind); 11] = [
    (sys::TypedarrayType::int8_array, TypedArrayKind::Int8),
    (sys::TypedarrayType::uint8_array, TypedArrayKind::Uint8),
    (
        sys::TypedarrayType::uint8_clamped_array,
        TypedArrayKind::Uint8Clamped,
    ),
    (sys::TypedarrayType::int16_array, TypedArrayKind::Int16),
    (sys::TypedarrayType::uint16_array, TypedArrayKind::Uint16),
    (sys::TypedarrayType::int32_array, TypedArrayKind::Int32),
    (sys::TypedarrayType::uint32_array, TypedArrayKind::Uint32),
    (sys::TypedarrayType::float32_array, TypedArrayKind::Float32),
    (sys::TypedarrayType::float64_array, TypedArrayKind::Float64),
    (
        sys::TypedarrayType::bigint64_array,
        TypedArrayKind::BigInt64,
    ),
    (
        sys::TypedarrayType::biguint64_array,
        TypedArrayKind::BigUint64,
    ),
];

fn kind_of_napi_type(t: sys::napi_typedarray_type) -> Option<TypedArrayKind> {
    NAPI_TYPED_ARRAYS
        .into_iter()
        .find(|(n, _)| *n == t)
        .map(|(_, k)| k)
}

/// The N-API type for a kind; a kind N-API lacks crosses as its raw bytes (a Uint8Array).
fn napi_type_of_kind(k: TypedArrayKind) -> (sys::napi_typedarray_type, TypedArrayKind) {
    NAPI_TYPED_ARRAYS
        .into_iter()
        .find(|(_, kind)| *kind == k)
        .unwrap_or((sys::TypedarrayType::uint8_array, TypedArrayKind::Uint8))
}

/// Copies a host value into `Data`, refusing functions, symbols, cycles and oversized input.
pub struct HostReader {
    host: Host,
    budget: CopyBudget,
    stack: Vec<Raw>,
    map_ctor: Option<Raw>,
    set_ctor: Option<Raw>,
    array_from: Option<Raw>,
}

impl HostReader {
    pub fn new(host: Host, limits: CopyLimits) -> Self {
        HostReader {
            host,
            budget: CopyBudget::new(limits),
            stack: Vec::new(),
            map_ctor: None,
            set_ctor: None,
            array_from: None,
        }
    }

    fn ctor(&mut self, name: &str) -> Result<Raw, String> {
        let slot = match name {
            "Map" => &mut self.map_ctor,
            _ => &mut self.set_ctor,
        };
        if let Some(c) = slot {
            return Ok(*c);
        }
        let c = self.host.global_named(name)?;
        *slot = Some(c);
        Ok(c)
    }

    fn array_from(&mut self, v: Raw) -> Result<Raw, String> {
        let from = match self.array_from {
            Some(f) => f,
            None => {
                let array = self.host.global_named("Array")?;
                let f = self.host.get_named(array, "from")?;
                self.array_from = Some(f);
                f
            }
        };
        let this = self.host.undefined()?;
        self.host.call(this, from, &[v])
    }

    pub fn read(&mut self, v: Raw, path: &str) -> Result<Data, String> {
        let h = self.host;
        let depth = self.stack.len();
        match h.type_of(v) {
            sys::ValueType::napi_undefined => Ok(Data::Undefined),
            sys::ValueType::napi_null => Ok(Data::Null),
            sys::ValueType::napi_boolean => Ok(Data::Bool(h.boolean(v)?)),
            sys::ValueType::napi_number => {
                self.budget.node(8, depth, path)?;
                Ok(Data::Number(h.number(v)?))
            }
            sys::ValueType::napi_string => {
                let t = h.text(v)?;
                self.budget.node(t.byte_len(), depth, path)?;
                Ok(Data::String(t))
            }
            sys::ValueType::napi_bigint => {
                let mut count = 0usize;
                let mut sign = 0i32;
                // Node requires both out-pointers to be null when asking only for the word count.
                h.check(unsafe {
                    sys::napi_get_value_bigint_words(
                        h.env,
                        v,
                        ptr::null_mut(),
                        &mut count,
                        ptr::null_mut(),
                    )
                })?;
                count = count.max(1);
                let mut words = vec![0u64; count];
                h.check(unsafe {
                    sys::napi_get_value_bigint_words(
                        h.env,
                        v,
                        &mut sign,
                        &mut count,
                        words.as_mut_ptr(),
                    )
                })?;
                words.truncate(count.max(1));
                let digits = words_to_decimal(sign != 0, &words);
                self.budget.node(digits.len(), depth, path)?;
                Ok(Data::BigInt(digits))
            }
            sys::ValueType::napi_symbol => {
                Err(format!("{path} is a symbol, which cannot be copied"))
            }
            sys::ValueType::napi_function => Err(format!(
                "{path} is a function, which cannot be copied (pass live values through `globals`)"
            )),
            sys::ValueType::napi_object | sys::ValueType::napi_external => {
                if let Err(e) = self.budget.node(16, depth, path) {
                    if self.stack.iter().any(|p| h.strict_equals(*p, v)) {
                        return Err(format!("{path} contains a cycle"));
                    }
                    return Err(e);
                }
                if self.stack.iter().any(|p| h.strict_equals(*p, v)) {
                    return Err(format!("{path} contains a cycle"));
                }
                self.stack.push(v);
                let out = self.read_object(v, path);
                self.stack.pop();
                out
            }
            other => Err(format!("{path} has an unsupported type ({other})")),
        }
    }

    fn read_object(&mut self, v: Raw, path: &str) -> Result<Data, String> {
        let h = self.host;
        if h.is_array(v) {
            let n = h.array_length(v)?;
            let mut items = Vec::with_capacity(n.min(4096) as usize);
            for i in 0..n {
                let item = h.element(v, i)?;
                items.push(self.read(item, &format!("{path}[{i}]"))?);
            }
            return Ok(Data::Array(items));
        }
        if h.is_date(v) {
            let mut ms = 0f64;
            h.check(unsafe { sys::napi_get_date_value(h.env, v, &mut ms) })?;
            return Ok(Data::Date(ms));
        }
        if h.is_typed_array(v) {
            let mut t = 0;
            let mut len = 0usize;
            let mut data: *mut std::ffi::c_void = ptr::null_mut();
            let mut ab = ptr::null_mut();
            let mut offset = 0usize;
            h.check(unsafe {
                sys::napi_get_typedarray_info(
                    h.env,
                    v,
                    &mut t,
                    &mut len,
                    &mut data,
                    &mut ab,
                    &mut offset,
                )
            })?;
            let kind = kind_of_napi_type(t)
                .ok_or_else(|| format!("{path} is an unsupported typed array"))?;
            let bytes = len * kind.element_bytes();
            self.budget.node(bytes, self.stack.len(), path)?;
            let slice = if bytes == 0 || data.is_null() {
                Vec::new()
            } else {
                unsafe { std::slice::from_raw_parts(data as *const u8, bytes).to_vec() }
            };
            return Ok(Data::Bytes(BytesKind::Typed(kind), slice));
        }
        if h.is_array_buffer(v) {
            let mut data: *mut std::ffi::c_void = ptr::null_mut();
            let mut len = 0usize;
            h.check(unsafe { sys::napi_get_arraybuffer_info(h.env, v, &mut data, &mut len) })?;
            self.budget.node(len, self.stack.len(), path)?;
            let slice = if len == 0 || data.is_null() {
                Vec::new()
            } else {
                unsafe { std::slice::from_raw_parts(data as *const u8, len).to_vec() }
            };
            return Ok(Data::Bytes(BytesKind::ArrayBuffer, slice));
        }
        if h.is_data_view(v) {
            return Err(format!(
                "{path} is a DataView, which cannot be copied; pass its buffer"
            ));
        }
        let map_ctor = self.ctor("Map")?;
        if h.instance_of(v, map_ctor) {
            let entries = self.array_from(v)?;
            let n = h.array_length(entries)?;
            let mut out = Vec::with_capacity(n as usize);
            for i in 0..n {
                let pair = h.element(entries, i)?;
                let p = format!("{path}<entry {i}>");
                let k = self.read(h.element(pair, 0)?, &p)?;
                let val = self.read(h.element(pair, 1)?, &p)?;
                out.push((k, val));
            }
            return Ok(Data::Map(out));
        }
        let set_ctor = self.ctor("Set")?;
        if h.instance_of(v, set_ctor) {
            let items = self.array_from(v)?;
            let n = h.array_length(items)?;
            let mut out = Vec::with_capacity(n as usize);
            for i in 0..n {
                out.push(self.read(h.element(items, i)?, &format!("{path}<item {i}>"))?);
            }
            return Ok(Data::Set(out));
        }
        let keys = h.own_keys(v)?;
        let mut entries = Vec::with_capacity(keys.len());
        for k in keys {
            let name = h.string(k)?;
            let item = h.property(v, k)?;
            let p = crate::engine::marshal::child_path(path, &name);
            entries.push((name, self.read(item, &p)?));
        }
        Ok(Data::Object(entries))
    }
}

/// Builds a host value from `Data`.
pub fn write(h: Host, d: &Data) -> Result<Raw, String> {
    match d {
        Data::Undefined => h.undefined(),
        Data::Null => h.null(),
        Data::Bool(b) => h.create_bool(*b),
        Data::Number(n) => h.create_number(*n),
        Data::String(t) => h.create_text(t),
        Data::BigInt(digits) => {
            let (neg, words) = decimal_to_words(digits).ok_or("malformed bigint")?;
            let mut out = ptr::null_mut();
            h.check(unsafe {
                sys::napi_create_bigint_words(
                    h.env,
                    neg as i32,
                    words.len(),
                    words.as_ptr(),
                    &mut out,
                )
            })?;
            Ok(out)
        }
        Data::Array(items) => {
            let arr = h.create_array(items.len())?;
            for (i, item) in items.iter().enumerate() {
                h.set_element(arr, i as u32, write(h, item)?)?;
            }
            Ok(arr)
        }
        Data::Object(entries) => {
            let obj = h.create_object()?;
            for (k, v) in entries {
                h.set_own(obj, k, write(h, v)?)?;
            }
            Ok(obj)
        }
        Data::Date(ms) => {
            let mut out = ptr::null_mut();
            h.check(unsafe { sys::napi_create_date(h.env, *ms, &mut out) })?;
            Ok(out)
        }
        Data::Map(entries) => {
            let map = h.new_instance(h.global_named("Map")?, &[])?;
            let set = h.get_named(map, "set")?;
            for (k, v) in entries {
                h.call(map, set, &[write(h, k)?, write(h, v)?])?;
            }
            Ok(map)
        }
        Data::Set(items) => {
            let set = h.new_instance(h.global_named("Set")?, &[])?;
            let add = h.get_named(set, "add")?;
            for v in items {
                h.call(set, add, &[write(h, v)?])?;
            }
            Ok(set)
        }
        Data::Bytes(kind, bytes) => {
            let mut data: *mut std::ffi::c_void = ptr::null_mut();
            let mut ab = ptr::null_mut();
            h.check(unsafe {
                sys::napi_create_arraybuffer(h.env, bytes.len(), &mut data, &mut ab)
            })?;
            if !bytes.is_empty() && !data.is_null() {
                unsafe {
                    std::ptr::copy_nonoverlapping(bytes.as_ptr(), data as *mut u8, bytes.len())
                };
            }
            match kind {
                BytesKind::ArrayBuffer => Ok(ab),
                BytesKind::Typed(k) => {
                    let (t, kind) = napi_type_of_kind(*k);
                    let length = bytes.len() / kind.element_bytes();
                    let mut out = ptr::null_mut();
                    h.check(unsafe {
                        sys::napi_create_typedarray(h.env, t, length, ab, 0, &mut out)
                    })?;
                    Ok(out)
                }
            }
        }
    }
}
