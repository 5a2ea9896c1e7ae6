//! Small safe wrappers over QuickJS C calls that rquickjs does not expose.
//!
//! Why the wrappers can be safe: rquickjs hands out a `Ctx<'js>` only while its context is in
//! use on the current thread, and every `Value<'js>`/`Object<'js>` passed next to it carries the
//! same `'js` brand, so it is a counted reference of that same runtime, kept alive by the borrow
//! for the whole call. The C calls below therefore always see a live context and live values of
//! its runtime ("live context and value" in the `SAFETY` comments); what remains to be checked
//! at each call is who owns the references going in and coming out, which those comments state.

use super::locks::lock_unpoisoned;
use super::macros::listed_enum;
use rquickjs::{qjs, Ctx, Object, Value};
use std::collections::HashMap;
use std::ffi::CStr;
use std::sync::{Mutex, OnceLock};

/// Filename of host-written helper code evaluated inside a realm; its frames are hidden.
pub const INTERNAL_FILENAME: &str = "quickrealm:internal";
pub const INTERNAL_FILENAME_C: &std::ffi::CStr = c"quickrealm:internal";

/// The raw context pointer of a live `Ctx`.
fn raw_ctx(ctx: &Ctx<'_>) -> *mut qjs::JSContext {
    ctx.as_raw().as_ptr()
}

/// Wraps a value that QuickJS handed over, or reports the exception it signals (left pending
/// in the context, as rquickjs does).
///
/// # Safety
/// `raw` must be an owned reference of `ctx`'s runtime: a value a QuickJS call returned to the
/// caller (not one QuickJS still owns), not yet wrapped or freed elsewhere.
unsafe fn take_owned<'js>(ctx: &Ctx<'js>, raw: qjs::JSValue) -> rquickjs::Result<Value<'js>> {
    // SAFETY: per this function's contract the reference is ours to hand to `Value`, which
    // frees it exactly once on drop.
    let v = unsafe { Value::from_raw(ctx.clone(), raw) };
    if v.is_exception() {
        Err(rquickjs::Error::Exception)
    } else {
        Ok(v)
    }
}

/// Like `take_owned`, but an exception is caught (cleared) and reported as `None`.
///
/// # Safety
/// As for `take_owned`.
unsafe fn take_owned_or_catch<'js>(ctx: &Ctx<'js>, raw: qjs::JSValue) -> Option<Value<'js>> {
    // SAFETY: the caller's contract is `take_owned`'s.
    match unsafe { take_owned(ctx, raw) } {
        Ok(v) => Some(v),
        Err(_) => {
            let _ = ctx.catch();
            None
        }
    }
}

/// An atom held for the length of one call and freed on drop.
struct Atom<'a, 'js> {
    ctx: &'a Ctx<'js>,
    atom: qjs::JSAtom,
}

impl<'a, 'js> Atom<'a, 'js> {
    /// The atom for a property name; `None` (exception pending) when QuickJS cannot make one.
    fn from_str(ctx: &'a Ctx<'js>, key: &str) -> Option<Self> {
        // SAFETY: live context (module docs); the pointer and length describe `key`'s bytes,
        // which QuickJS only reads (and copies) during the call.
        let atom = unsafe { qjs::JS_NewAtomLen(raw_ctx(ctx), key.as_ptr().cast(), key.len() as _) };
        Self::held(ctx, atom)
    }

    /// The atom for a property key value (string, symbol or number); `None` on failure.
    fn from_value(ctx: &'a Ctx<'js>, key: &Value<'js>) -> Option<Self> {
        // SAFETY: live context and a live value of its runtime (module docs); QuickJS only
        // borrows `key` and returns a new atom reference, which this guard then owns.
        let atom = unsafe { qjs::JS_ValueToAtom(raw_ctx(ctx), key.as_raw()) };
        Self::held(ctx, atom)
    }

    fn held(ctx: &'a Ctx<'js>, atom: qjs::JSAtom) -> Option<Self> {
        (atom != qjs::JS_ATOM_NULL).then_some(Atom { ctx, atom })
    }
}

impl Drop for Atom<'_, '_> {
    fn drop(&mut self) {
        // SAFETY: the guard owns one reference to a non-null atom made in this context (see the
        // constructors), and drops it exactly once; the borrowed context outlives the guard.
        unsafe { qjs::JS_FreeAtom(raw_ctx(self.ctx), self.atom) }
    }
}

/// Own property keys of an object, as guest values (strings or symbols). `None` when the
/// object refused (a proxy trap threw; the exception is left pending).
pub(crate) fn own_keys<'js>(
    ctx: &Ctx<'js>,
    obj: &Object<'js>,
    include_symbols: bool,
    enumerable_only: bool,
) -> Option<Vec<Value<'js>>> {
    own_keys_where(ctx, obj, include_symbols, enumerable_only, |_| true)
}

/// Own property keys whose atom `keep` accepts. `None` when the object refused (a proxy trap
/// threw; the exception is left pending).
fn own_keys_where<'js>(
    ctx: &Ctx<'js>,
    obj: &Object<'js>,
    include_symbols: bool,
    enumerable_only: bool,
    keep: impl Fn(qjs::JSAtom) -> bool,
) -> Option<Vec<Value<'js>>> {
    let mut flags = qjs::JS_GPN_STRING_MASK as i32;
    if include_symbols {
        flags |= qjs::JS_GPN_SYMBOL_MASK as i32;
    }
    if enumerable_only {
        flags |= qjs::JS_GPN_ENUM_ONLY as i32;
    }
    let c = raw_ctx(ctx);
    let mut tab: *mut qjs::JSPropertyEnum = std::ptr::null_mut();
    let mut len: u32 = 0;
    // SAFETY: live context and object (module docs); `tab` and `len` are locals QuickJS fills.
    let rc = unsafe { qjs::JS_GetOwnPropertyNames(c, &mut tab, &mut len, obj.as_raw(), flags) };
    if rc < 0 {
        return None;
    }
    let mut keys = Vec::new();
    for i in 0..len as usize {
        // SAFETY: on success `tab` holds `len` initialized entries, alive until freed below.
        let atom = unsafe { (*tab.add(i)).atom };
        if !keep(atom) {
            continue;
        }
        // SAFETY: a live atom of the table; JS_AtomToValue returns a new reference (JS_EXCEPTION
        // when out of memory), which `Value` takes over.
        keys.push(unsafe { Value::from_raw(ctx.clone(), qjs::JS_AtomToValue(c, atom)) });
    }
    // SAFETY: the table and its atoms were allocated by the call above and are freed once here;
    // the keys hold their own references.
    unsafe { qjs::JS_FreePropertyEnum(c, tab, len) };
    Some(keys)
}

/// An own property descriptor's parts (value or accessor pair).
pub(crate) struct Descriptor<'js> {
    /// `JS_PROP_*` flags (enumerable, writable, configurable, getset).
    pub flags: i32,
    pub value: Value<'js>,
    pub getter: Value<'js>,
    pub setter: Value<'js>,
}

/// The own property `key` of `obj`, if it exists (`None` also when a proxy trap threw).
pub(crate) fn own_descriptor<'js>(
    ctx: &Ctx<'js>,
    obj: &Object<'js>,
    key: &Value<'js>,
) -> Option<Descriptor<'js>> {
    let atom = Atom::from_value(ctx, key)?;
    let mut desc = std::mem::MaybeUninit::<qjs::JSPropertyDescriptor>::uninit();
    // SAFETY: live context, object and atom; `desc` is writable storage for one descriptor.
    let rc =
        unsafe { qjs::JS_GetOwnProperty(raw_ctx(ctx), desc.as_mut_ptr(), obj.as_raw(), atom.atom) };
    if rc <= 0 {
        return None;
    }
    // SAFETY: a return of 1 means QuickJS set every field of `desc`: value, getter and setter
    // are owned references (JS_UNDEFINED where absent), each wrapped exactly once here.
    unsafe {
        let desc = desc.assume_init();
        Some(Descriptor {
            flags: desc.flags,
            value: Value::from_raw(ctx.clone(), desc.value),
            getter: Value::from_raw(ctx.clone(), desc.getter),
            setter: Value::from_raw(ctx.clone(), desc.setter),
        })
    }
}

/// Defines an own property with the given `JS_PROP_*` flags, without invoking setters.
pub(crate) fn define_value<'js>(
    ctx: &Ctx<'js>,
    obj: &Object<'js>,
    key: &str,
    value: Value<'js>,
    flags: u32,
) -> bool {
    let Some(atom) = Atom::from_str(ctx, key) else {
        return false;
    };
    let c = raw_ctx(ctx);
    // SAFETY: live context, object and atom. JS_DefinePropertyValue takes ownership of the value
    // it is given, so it gets a new reference (the dup) while `value` keeps and drops its own.
    let rc = unsafe {
        let raw = qjs::JS_DupValue(c, value.as_raw());
        qjs::JS_DefinePropertyValue(c, obj.as_raw(), atom.atom, raw, flags as i32)
    };
    rc >= 0
}

/// Defines an own data property (writable, enumerable, configurable) without invoking setters,
/// so a key such as `__proto__` stays plain data.
pub(crate) fn define_data<'js>(
    ctx: &Ctx<'js>,
    obj: &Object<'js>,
    key: &str,
    value: Value<'js>,
) -> bool {
    define_value(
        ctx,
        obj,
        key,
        value,
        qjs::JS_PROP_C_W_E | qjs::JS_PROP_THROW,
    )
}

/// Defines a read-only, non-enumerable, non-configurable property on an object.
pub(crate) fn define_frozen<'js>(
    ctx: &Ctx<'js>,
    obj: &Object<'js>,
    key: &str,
    value: Value<'js>,
) -> bool {
    define_value(ctx, obj, key, value, 0)
}

/// `Object.freeze(obj)`; false if the object refused (a proxy trap threw).
pub(crate) fn freeze<'js>(ctx: &Ctx<'js>, obj: &Object<'js>) -> bool {
    // SAFETY: live context and object (module docs); the object is only borrowed.
    unsafe { qjs::JS_FreezeObject(raw_ctx(ctx), obj.as_raw()) >= 0 }
}

/// A value saved as `Persistent` in one context of a runtime, handed to another context of it.
/// `Persistent::restore` keeps the context the value was saved in, and calls made through the
/// value would run from there: a template's helpers must be called from the run's own context.
pub(crate) fn rebind<'js, T: rquickjs::FromJs<'js> + rquickjs::IntoJs<'js>>(
    ctx: &Ctx<'js>,
    value: T,
) -> rquickjs::Result<T> {
    let v = value.into_js(ctx)?;
    // SAFETY: both contexts belong to one runtime (`Persistent::restore` checked it); the new
    // handle takes its own reference to the value, and `v` drops the old one.
    let moved = unsafe { Value::from_raw(ctx.clone(), qjs::JS_DupValue(raw_ctx(ctx), v.as_raw())) };
    T::from_js(ctx, moved)
}

/// `Object.preventExtensions(obj)`; false if the object refused.
pub(crate) fn prevent_extensions<'js>(ctx: &Ctx<'js>, obj: &Object<'js>) -> bool {
    // SAFETY: live context and object (module docs); the object is only borrowed.
    unsafe { qjs::JS_PreventExtensions(raw_ctx(ctx), obj.as_raw()) > 0 }
}

// The class checks below only read the tag of `v` and, for objects, the class id of the object
// it points to, which is alive while the borrowed `Value` holds its reference.

listed_enum! {
    /// The typed array kinds; the discriminants are QuickJS's `JSTypedArrayEnum` values.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum TypedArrayKind {
        Uint8Clamped = qjs::JSTypedArrayEnum_JS_TYPED_ARRAY_UINT8C as isize,
        Int8 = qjs::JSTypedArrayEnum_JS_TYPED_ARRAY_INT8 as isize,
        Uint8 = qjs::JSTypedArrayEnum_JS_TYPED_ARRAY_UINT8 as isize,
        Int16 = qjs::JSTypedArrayEnum_JS_TYPED_ARRAY_INT16 as isize,
        Uint16 = qjs::JSTypedArrayEnum_JS_TYPED_ARRAY_UINT16 as isize,
        Int32 = qjs::JSTypedArrayEnum_JS_TYPED_ARRAY_INT32 as isize,
        Uint32 = qjs::JSTypedArrayEnum_JS_TYPED_ARRAY_UINT32 as isize,
        BigInt64 = qjs::JSTypedArrayEnum_JS_TYPED_ARRAY_BIG_INT64 as isize,
        BigUint64 = qjs::JSTypedArrayEnum_JS_TYPED_ARRAY_BIG_UINT64 as isize,
        Float16 = qjs::JSTypedArrayEnum_JS_TYPED_ARRAY_FLOAT16 as isize,
        Float32 = qjs::JSTypedArrayEnum_JS_TYPED_ARRAY_FLOAT32 as isize,
        Float64 = qjs::JSTypedArrayEnum_JS_TYPED_ARRAY_FLOAT64 as isize,
    }
}

impl TypedArrayKind {
    pub(crate) fn constructor_name(self) -> &'static str {
        match self {
            TypedArrayKind::Uint8Clamped => "Uint8ClampedArray",
            TypedArrayKind::Int8 => "Int8Array",
            TypedArrayKind::Uint8 => "Uint8Array",
            TypedArrayKind::Int16 => "Int16Array",
            TypedArrayKind::Uint16 => "Uint16Array",
            TypedArrayKind::Int32 => "Int32Array",
            TypedArrayKind::Uint32 => "Uint32Array",
            TypedArrayKind::BigInt64 => "BigInt64Array",
            TypedArrayKind::BigUint64 => "BigUint64Array",
            TypedArrayKind::Float16 => "Float16Array",
            TypedArrayKind::Float32 => "Float32Array",
            TypedArrayKind::Float64 => "Float64Array",
        }
    }

    /// Bytes per element.
    pub fn element_bytes(self) -> usize {
        match self {
            TypedArrayKind::Uint8Clamped | TypedArrayKind::Int8 | TypedArrayKind::Uint8 => 1,
            TypedArrayKind::Int16 | TypedArrayKind::Uint16 | TypedArrayKind::Float16 => 2,
            TypedArrayKind::Int32 | TypedArrayKind::Uint32 | TypedArrayKind::Float32 => 4,
            TypedArrayKind::BigInt64 | TypedArrayKind::BigUint64 | TypedArrayKind::Float64 => 8,
        }
    }
}

pub(crate) fn is_date(v: &Value<'_>) -> bool {
    // SAFETY: see the note above the class checks.
    unsafe { qjs::JS_IsDate(v.as_raw()) }
}
pub(crate) fn is_map(v: &Value<'_>) -> bool {
    // SAFETY: see the note above the class checks.
    unsafe { qjs::JS_IsMap(v.as_raw()) }
}
pub(crate) fn is_set(v: &Value<'_>) -> bool {
    // SAFETY: see the note above the class checks.
    unsafe { qjs::JS_IsSet(v.as_raw()) }
}
pub(crate) fn is_error(v: &Value<'_>) -> bool {
    // SAFETY: see the note above the class checks.
    unsafe { qjs::JS_IsError(v.as_raw()) }
}
pub(crate) fn is_array_buffer(v: &Value<'_>) -> bool {
    // SAFETY: see the note above the class checks.
    unsafe { qjs::JS_IsArrayBuffer(v.as_raw()) }
}
/// The typed array kind, if `v` is a typed array.
pub(crate) fn typed_array_kind(v: &Value<'_>) -> Option<TypedArrayKind> {
    // SAFETY: see the note above the class checks (-1 for anything but a typed array).
    let k = unsafe { qjs::JS_GetTypedArrayType(v.as_raw()) };
    TypedArrayKind::from_discriminant(k.into())
}

/// QuickJS class ids of the vendored engine (`enum { JS_CLASS_OBJECT = 1, ... }` in quickjs.c);
/// a test below checks them against the engine.
pub(crate) mod class {
    pub const ERROR: u32 = 3;
    pub const NUMBER: u32 = 4;
    pub const STRING: u32 = 5;
    pub const BOOLEAN: u32 = 6;
    pub const SYMBOL: u32 = 7;
    pub const ARGUMENTS: u32 = 8;
    pub const MAPPED_ARGUMENTS: u32 = 9;
    pub const DATE: u32 = 10;
    pub const C_FUNCTION: u32 = 12;
    pub const C_FUNCTION_DATA: u32 = 15;
    pub const C_CLOSURE: u32 = 16;
    pub const GENERATOR_FUNCTION: u32 = 17;
    pub const REGEXP: u32 = 19;
    pub const DATAVIEW: u32 = 34;
    pub const BIG_INT: u32 = 35;
    pub const MAP: u32 = 36;
    pub const SET: u32 = 37;
    pub const WEAKMAP: u32 = 38;
    pub const WEAKSET: u32 = 39;
    pub const ASYNC_FUNCTION: u32 = 55;
    pub const ASYNC_GENERATOR_FUNCTION: u32 = 59;
    pub const DOM_EXCEPTION: u32 = 64;
}

/// The QuickJS class id of an object (0 for primitives).
pub(crate) fn class_id(v: &Value<'_>) -> u32 {
    // SAFETY: see the note above the class checks.
    unsafe { qjs::JS_GetClassID(v.as_raw()) }
}

/// Whether `v` is a function implemented natively (by the engine or the host), whose call
/// runs no guest code of its own.
pub(crate) fn is_native_function(v: &Value<'_>) -> bool {
    matches!(
        class_id(v),
        class::C_FUNCTION | class::C_FUNCTION_DATA | class::C_CLOSURE
    )
}

pub(crate) fn is_proxy(v: &Value<'_>) -> bool {
    // SAFETY: see the note above the class checks.
    unsafe { qjs::JS_IsProxy(v.as_raw()) }
}

/// `Array.isArray` without looking through proxies.
pub(crate) fn is_plain_array(v: &Value<'_>) -> bool {
    // SAFETY: see the note above the class checks.
    unsafe { qjs::JS_IsArray(v.as_raw()) }
}

/// The target of a proxy (no trap runs); `None` when revoked or not a proxy.
pub(crate) fn proxy_target<'js>(ctx: &Ctx<'js>, v: &Value<'js>) -> Option<Value<'js>> {
    if !is_proxy(v) {
        return None;
    }
    // SAFETY: live context and a live proxy (module docs); the target comes back as a new
    // reference (JS_NULL once revoked) or JS_EXCEPTION.
    let t = unsafe { take_owned_or_catch(ctx, qjs::JS_GetProxyTarget(raw_ctx(ctx), v.as_raw()))? };
    t.is_object().then_some(t)
}

/// The prototype of an object that is not a proxy (so no trap runs); `None` for `null`.
pub(crate) fn prototype_of<'js>(ctx: &Ctx<'js>, obj: &Object<'js>) -> Option<Object<'js>> {
    if is_proxy(obj.as_value()) {
        return None;
    }
    // SAFETY: live context and object (module docs); for an object that is not a proxy
    // JS_GetPrototype runs no code and returns a new reference.
    let p = unsafe { take_owned_or_catch(ctx, qjs::JS_GetPrototype(raw_ctx(ctx), obj.as_raw()))? };
    p.into_object()
}

/// The realm's own prototype for a class (`Map.prototype` for `class::MAP`), whatever the
/// guest did to the global bindings.
pub(crate) fn class_proto<'js>(ctx: &Ctx<'js>, class_id: u32) -> Option<Object<'js>> {
    // SAFETY: live context (module docs); the ids used are predefined classes, below the
    // runtime's class count; the prototype comes back as a new reference.
    let p = unsafe { take_owned_or_catch(ctx, qjs::JS_GetClassProto(raw_ctx(ctx), class_id))? };
    p.into_object()
}

/// The realm's own `Function.prototype`.
pub(crate) fn function_proto<'js>(ctx: &Ctx<'js>) -> Option<Object<'js>> {
    // SAFETY: live context (module docs); a new reference comes back.
    let p = unsafe { take_owned_or_catch(ctx, qjs::JS_GetFunctionProto(raw_ctx(ctx)))? };
    p.into_object()
}

/// The well-known symbol `Symbol.toStringTag`, from the engine.
pub(crate) fn symbol_to_string_tag<'js>(ctx: &Ctx<'js>) -> Option<Value<'js>> {
    // SAFETY: live context (module docs); a predefined atom is never freed, and JS_AtomToValue
    // returns a new reference to its symbol.
    unsafe {
        let atom = qjs::JS_ATOM_Symbol_toStringTag as qjs::JSAtom;
        take_owned_or_catch(ctx, qjs::JS_AtomToValue(raw_ctx(ctx), atom))
    }
}

/// A promise's state and, once settled, its result (no code runs).
pub(crate) enum PromiseState<'js> {
    Pending,
    Fulfilled(Value<'js>),
    Rejected(Value<'js>),
}

pub(crate) fn promise_state<'js>(ctx: &Ctx<'js>, v: &Value<'js>) -> Option<PromiseState<'js>> {
    // SAFETY: see the note above the class checks.
    if !unsafe { qjs::JS_IsPromise(v.as_raw()) } {
        return None;
    }
    let c = raw_ctx(ctx);
    // SAFETY: live context and promise (module docs); the state is read from the object.
    let state = unsafe { qjs::JS_PromiseState(c, v.as_raw()) };
    if state == qjs::JSPromiseStateEnum_JS_PROMISE_PENDING {
        return Some(PromiseState::Pending);
    }
    // SAFETY: live context and a settled promise; the result is a new reference.
    let result = unsafe { take_owned_or_catch(ctx, qjs::JS_PromiseResult(c, v.as_raw()))? };
    Some(if state == qjs::JSPromiseStateEnum_JS_PROMISE_REJECTED {
        PromiseState::Rejected(result)
    } else {
        PromiseState::Fulfilled(result)
    })
}

/// Own property keys of an object that is not a proxy, leaving out array indices below
/// 2^31 without making strings of them (a long array lists them all). `None` when the object
/// refused; the exception is caught.
pub(crate) fn own_non_index_keys<'js>(
    ctx: &Ctx<'js>,
    obj: &Object<'js>,
    include_symbols: bool,
    enumerable_only: bool,
) -> Option<Vec<Value<'js>>> {
    if is_proxy(obj.as_value()) {
        return None;
    }
    // Tagged-integer atoms (JS_ATOM_TAG_INT in quickjs.c) are the indices 0..2^31-1.
    const TAG_INT: u32 = 1 << 31;
    let keys = own_keys_where(ctx, obj, include_symbols, enumerable_only, |atom| {
        atom & TAG_INT == 0
    });
    if keys.is_none() {
        let _ = ctx.catch();
    }
    keys
}

/// Marks an error object uncatchable, so that once thrown guest `catch`/`finally` cannot
/// intercept it (no effect on other values).
pub fn make_uncatchable<'js>(ctx: &Ctx<'js>, v: &Value<'js>) {
    // SAFETY: live context and value (module docs); QuickJS only sets a flag on the object.
    unsafe { qjs::JS_SetUncatchableError(raw_ctx(ctx), v.as_raw()) }
}

/// Copies the bytes viewed by a typed array or held by an ArrayBuffer; `None` for anything
/// else, or for a detached buffer.
pub fn view_bytes<'js>(ctx: &Ctx<'js>, v: &Value<'js>) -> Option<Vec<u8>> {
    view_bytes_capped(ctx, v, usize::MAX).map(|(bytes, _)| bytes)
}

/// Like `view_bytes`, but copies at most `cap` bytes; also gives the whole length in bytes.
pub(crate) fn view_bytes_capped<'js>(
    ctx: &Ctx<'js>,
    v: &Value<'js>,
    cap: usize,
) -> Option<(Vec<u8>, usize)> {
    if is_array_buffer(v) {
        return buffer_bytes(ctx, v, 0, None, cap);
    }
    let mut offset: qjs::size_t = 0;
    let mut length: qjs::size_t = 0;
    let mut per: qjs::size_t = 0;
    // SAFETY: live context and value (module docs); the out-pointers point to locals; the
    // buffer comes back as a new reference (or JS_EXCEPTION), as `take_owned` needs.
    let buffer = unsafe {
        let raw = qjs::JS_GetTypedArrayBuffer(
            raw_ctx(ctx),
            v.as_raw(),
            &mut offset,
            &mut length,
            &mut per,
        );
        take_owned_or_catch(ctx, raw)?
    };
    buffer_bytes(ctx, &buffer, offset as usize, Some(length as usize), cap)
}

/// Copies `length` bytes (all of them for `None`) from `offset` of an ArrayBuffer's data, at
/// most `cap` of them; with the length in bytes.
fn buffer_bytes<'js>(
    ctx: &Ctx<'js>,
    buffer: &Value<'js>,
    offset: usize,
    length: Option<usize>,
    cap: usize,
) -> Option<(Vec<u8>, usize)> {
    let mut size: qjs::size_t = 0;
    // SAFETY: live context and value (module docs); `size` is a local QuickJS fills.
    let data = unsafe { qjs::JS_GetArrayBuffer(raw_ctx(ctx), &mut size, buffer.as_raw()) };
    let size = size as usize;
    let length = length.unwrap_or(size);
    if data.is_null() {
        // A detached buffer throws; a live empty one may simply have no data.
        // SAFETY: live context (module docs).
        if unsafe { qjs::JS_HasException(raw_ctx(ctx)) } {
            let _ = ctx.catch();
            return None;
        }
        return (length == 0).then(|| (Vec::new(), 0));
    }
    if offset.checked_add(length)? > size {
        return None;
    }
    let whole = length;
    let length = length.min(cap);
    // SAFETY: `data` points to the buffer's `size` bytes, kept alive by `buffer`; no JS code runs
    // between the call above and this copy, so nothing can detach or resize the buffer, and
    // `offset + length <= size` keeps the slice inside it.
    Some((
        unsafe { std::slice::from_raw_parts(data.add(offset), length) }.to_vec(),
        whole,
    ))
}

/// A guest string as exact UTF-16 (lone surrogates preserved); `None` if it could not be read.
pub(crate) fn string_utf16<'js>(ctx: &Ctx<'js>, v: &Value<'js>) -> Option<Vec<u16>> {
    let c = raw_ctx(ctx);
    let mut len: qjs::size_t = 0;
    // SAFETY: live context and value (module docs); `len` is a local QuickJS fills.
    let p = unsafe { qjs::JS_ToCStringLenUTF16(c, &mut len, v.as_raw()) };
    if p.is_null() {
        let _ = ctx.catch();
        return None;
    }
    // SAFETY: a non-null result points to `len` code units owned by us until the matching free
    // below, which happens once and after the copy.
    let out = unsafe { std::slice::from_raw_parts(p, len as usize) }.to_vec();
    // SAFETY: see above.
    unsafe { qjs::JS_FreeCStringUTF16(c, p) };
    Some(out)
}

/// A guest string from exact UTF-16 code units (lone surrogates allowed).
pub(crate) fn new_string_utf16<'js>(ctx: &Ctx<'js>, units: &[u16]) -> Option<Value<'js>> {
    // SAFETY: live context (module docs); QuickJS copies `units` (pointer and length of a live
    // slice) into a new string and returns an owned reference or JS_EXCEPTION.
    unsafe {
        let raw = qjs::JS_NewStringUTF16(raw_ctx(ctx), units.as_ptr(), units.len() as _);
        take_owned_or_catch(ctx, raw)
    }
}

/// Converts any value with the engine's ToString (used for numbers and bigints).
pub(crate) fn to_display_string<'js>(ctx: &Ctx<'js>, v: &Value<'js>) -> Option<String> {
    let c = raw_ctx(ctx);
    let mut len: qjs::size_t = 0;
    // SAFETY: live context and value (module docs); `len` is a local QuickJS fills.
    let p = unsafe { qjs::JS_ToCStringLen2(c, &mut len, v.as_raw(), false) };
    if p.is_null() {
        let _ = ctx.catch();
        return None;
    }
    // SAFETY: a non-null result points to `len` bytes owned by us until the matching free below,
    // which happens once and after the copy.
    let s = String::from_utf8_lossy(unsafe {
        std::slice::from_raw_parts(p.cast::<u8>(), len as usize)
    })
    .into_owned();
    // SAFETY: see above.
    unsafe { qjs::JS_FreeCString(c, p) };
    Some(s)
}

/// A new `Date` for a time value in milliseconds.
pub(crate) fn new_date<'js>(ctx: &Ctx<'js>, ms: f64) -> Option<Value<'js>> {
    // SAFETY: live context (module docs); JS_NewDate returns an owned reference or JS_EXCEPTION.
    unsafe { take_owned_or_catch(ctx, qjs::JS_NewDate(raw_ctx(ctx), ms)) }
}

/// A stable identity for an object while it is alive (used for cycle detection). Meaningful
/// only for objects and other heap values; for numbers and the like it is an arbitrary number.
pub(crate) fn identity(v: &Value<'_>) -> usize {
    // SAFETY: reads the pointer member of the value's payload as plain bits; nothing is
    // dereferenced, and any bit pattern is a valid raw pointer.
    unsafe { qjs::JS_VALUE_GET_PTR(v.as_raw()) as usize }
}

/// `a === b` (no guest code runs: strict equality has no hooks).
pub(crate) fn strict_equal<'js>(ctx: &Ctx<'js>, a: &Value<'js>, b: &Value<'js>) -> bool {
    // SAFETY: live context and values (module docs); the call only compares them.
    unsafe { qjs::JS_IsStrictEqual(raw_ctx(ctx), a.as_raw(), b.as_raw()) }
}

/// `Array.isArray` semantics, which see through proxies.
pub(crate) fn is_array_value<'js>(ctx: &Ctx<'js>, v: &Value<'js>) -> bool {
    let check = || -> rquickjs::Result<bool> {
        let array: Object = ctx.globals().get("Array")?;
        let is_array: rquickjs::Function = array.get("isArray")?;
        is_array.call((v.clone(),))
    };
    check().unwrap_or(false)
}

/// Compiled bytecode of the host's own helper scripts, shared by every realm of the process,
/// keyed by where the `'static` source lies (address and length).
static BYTECODE: OnceLock<Mutex<BytecodeCache>> = OnceLock::new();

/// Bytecode by the (address, length) of its `'static` source.
type BytecodeCache = HashMap<(usize, usize), Vec<u8>>;

/// Evaluates one of the host's helper scripts (a `'static` source), compiling it once per
/// process and loading bytecode afterwards.
pub(crate) fn eval_helper<'js>(
    ctx: &Ctx<'js>,
    source: &'static str,
    filename: &'static CStr,
) -> rquickjs::Result<Value<'js>> {
    let key = (source.as_ptr() as usize, source.len());
    let cache = BYTECODE.get_or_init(Default::default);
    let cached = lock_unpoisoned(cache).get(&key).cloned();
    let func = match cached {
        Some(bytes) => {
            // SAFETY: live context (module docs); the bytes were written by JS_WriteObject in
            // this process (same engine build, below), so they are well-formed bytecode; the
            // result is an owned reference or JS_EXCEPTION.
            unsafe {
                let f = qjs::JS_ReadObject(
                    raw_ctx(ctx),
                    bytes.as_ptr(),
                    bytes.len() as _,
                    qjs::JS_READ_OBJ_BYTECODE as i32,
                );
                take_owned(ctx, f)?
            }
        }
        None => {
            let f = compile_helper(ctx, source, filename)?;
            if let Some(bytes) = bytecode_of(ctx, &f) {
                lock_unpoisoned(cache).insert(key, bytes);
            }
            f
        }
    };
    let c = raw_ctx(ctx);
    // SAFETY: JS_EvalFunction consumes the function reference it is given, so it gets a new one
    // (the dup) while `func` keeps its own; the result is an owned reference or JS_EXCEPTION.
    unsafe {
        let r = qjs::JS_EvalFunction(c, qjs::JS_DupValue(c, func.as_raw()));
        take_owned(ctx, r)
    }
}

/// Compiles a helper script (strict, global code) without running it.
fn compile_helper<'js>(
    ctx: &Ctx<'js>,
    source: &'static str,
    filename: &'static CStr,
) -> rquickjs::Result<Value<'js>> {
    let src = std::ffi::CString::new(source).map_err(|_| rquickjs::Error::Unknown)?;
    let flags = (qjs::JS_EVAL_TYPE_GLOBAL
        | qjs::JS_EVAL_FLAG_STRICT
        | qjs::JS_EVAL_FLAG_COMPILE_ONLY) as i32;
    // SAFETY: live context (module docs); `src` is NUL-terminated and `source.len()` long,
    // `filename` is NUL-terminated, both outlive the call; the result is an owned reference or
    // JS_EXCEPTION.
    unsafe {
        let f = qjs::JS_Eval(
            raw_ctx(ctx),
            src.as_ptr(),
            source.len() as _,
            filename.as_ptr(),
            flags,
        );
        take_owned(ctx, f)
    }
}

/// Serializes a compiled function to bytecode; `None` if QuickJS cannot.
fn bytecode_of<'js>(ctx: &Ctx<'js>, func: &Value<'js>) -> Option<Vec<u8>> {
    let c = raw_ctx(ctx);
    let mut size: qjs::size_t = 0;
    // SAFETY: live context and value (module docs); `size` is a local QuickJS fills.
    let buf = unsafe {
        qjs::JS_WriteObject(
            c,
            &mut size,
            func.as_raw(),
            qjs::JS_WRITE_OBJ_BYTECODE as i32,
        )
    };
    if buf.is_null() {
        let _ = ctx.catch();
        return None;
    }
    // SAFETY: a non-null result is a `size`-byte allocation of this context that we own; it is
    // copied, then freed once with the context's allocator.
    let bytes = unsafe { std::slice::from_raw_parts(buf, size as usize) }.to_vec();
    // SAFETY: see above.
    unsafe { qjs::js_free(c, buf.cast()) };
    Some(bytes)
}

/// Reads a named property without creating a JS string for the key (lockdown replay fast path).
/// A getter, if the property has one, runs; callers use it where the property is plain data.
pub(crate) fn get_named<'js>(ctx: &Ctx<'js>, obj: &Object<'js>, key: &str) -> Option<Value<'js>> {
    let Some(atom) = Atom::from_str(ctx, key) else {
        let _ = ctx.catch();
        return None;
    };
    // SAFETY: live context, object and atom; JS_GetProperty returns an owned reference or
    // JS_EXCEPTION.
    unsafe {
        let v = qjs::JS_GetProperty(raw_ctx(ctx), obj.as_raw(), atom.atom);
        take_owned_or_catch(ctx, v)
    }
}

/// Evaluates a compiled global script (`JS_Eval` with `JS_EVAL_FLAG_COMPILE_ONLY`) in `ctx`:
/// its declarations go to `ctx`'s global object; returns the completion value.
pub(crate) fn eval_script<'js>(ctx: &Ctx<'js>, script: Value<'js>) -> rquickjs::Result<Value<'js>> {
    // SAFETY: live context and value; JS_EvalFunction takes the reference it is given (a
    // duplicate of the caller's) and returns an owned one.
    unsafe {
        let v = qjs::JS_EvalFunction(
            raw_ctx(ctx),
            qjs::JS_DupValue(raw_ctx(ctx), script.as_raw()),
        );
        take_owned(ctx, v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rquickjs::{Context, Runtime};

    fn with_ctx(f: impl FnOnce(&Ctx<'_>)) {
        let rt = Runtime::new().unwrap();
        let context = Context::full(&rt).unwrap();
        context.with(|ctx| f(&ctx));
    }

    fn eval<'js>(ctx: &Ctx<'js>, src: &str) -> Value<'js> {
        ctx.eval(src).unwrap()
    }

    fn no_pending_exception(ctx: &Ctx<'_>) -> bool {
        // SAFETY: live context of this thread.
        !unsafe { qjs::JS_HasException(raw_ctx(ctx)) }
    }

    #[test]
    fn typed_array_kinds_match_quickjs() {
        with_ctx(|ctx| {
            for kind in TypedArrayKind::ALL {
                let v = eval(ctx, &format!("new {}(3)", kind.constructor_name()));
                assert_eq!(typed_array_kind(&v), Some(kind));
                assert_eq!(
                    view_bytes(ctx, &v).map(|b| b.len()),
                    Some(3 * kind.element_bytes())
                );
            }
            assert_eq!(typed_array_kind(&eval(ctx, "new ArrayBuffer(3)")), None);
            assert_eq!(typed_array_kind(&eval(ctx, "[1, 2]")), None);
        });
    }

    #[test]
    fn view_bytes_reads_views_and_refuses_the_rest() {
        with_ctx(|ctx| {
            let view = eval(ctx, "new Uint8Array([1, 2, 3, 4, 5]).subarray(1, 4)");
            assert_eq!(view_bytes(ctx, &view), Some(vec![2, 3, 4]));
            let words = eval(ctx, "new Uint16Array([0x0102, 0x0304])");
            assert_eq!(view_bytes(ctx, &words).map(|b| b.len()), Some(4));
            let buffer = eval(ctx, "new Uint8Array([9, 8]).buffer");
            assert_eq!(view_bytes(ctx, &buffer), Some(vec![9, 8]));
            assert_eq!(
                view_bytes(ctx, &eval(ctx, "new ArrayBuffer(0)")),
                Some(vec![])
            );
            // A length-tracking view reads what its resizable buffer holds now.
            let grown = eval(
                ctx,
                "(() => { const b = new ArrayBuffer(2, { maxByteLength: 8 }); const v = new Uint8Array(b, 1); b.resize(6); v[4] = 9; return v })()",
            );
            assert_eq!(view_bytes(ctx, &grown), Some(vec![0, 0, 0, 0, 9]));
            let shrunk = eval(
                ctx,
                "(() => { const b = new ArrayBuffer(8, { maxByteLength: 8 }); const v = new Uint16Array(b); b.resize(4); return v })()",
            );
            assert_eq!(view_bytes(ctx, &shrunk).map(|b| b.len()), Some(4));
            for src in [
                "(() => { const b = new ArrayBuffer(8, { maxByteLength: 8 }); const v = new Uint8Array(b, 0, 4); b.resize(2); return v })()",
                "(() => { const b = new ArrayBuffer(8); b.transfer(); return b })()",
                "(() => { const b = new ArrayBuffer(8), v = new Uint8Array(b); b.transfer(); return v })()",
                "'bytes'",
                "({ length: 2 })",
            ] {
                assert_eq!(view_bytes(ctx, &eval(ctx, src)), None, "{src}");
                assert!(no_pending_exception(ctx), "{src}");
            }
        });
    }

    #[test]
    fn properties_are_defined_and_read_without_setters() {
        with_ctx(|ctx| {
            let obj = Object::new(ctx.clone()).unwrap();
            let one = Value::new_number(ctx.clone(), 1.0);
            assert!(define_data(ctx, &obj, "__proto__", one.clone()));
            assert!(define_frozen(ctx, &obj, "fixed", one));
            let proto = obj.get_prototype().map(|p| p.into_value());
            assert_eq!(
                proto,
                Some(eval(ctx, "Object.prototype")),
                "prototype unchanged"
            );
            assert_eq!(
                get_named(ctx, &obj, "__proto__").and_then(|v| v.as_number()),
                Some(1.0)
            );
            let keys = own_keys(ctx, &obj, false, true).unwrap();
            assert_eq!(keys.len(), 1, "the frozen property is not enumerable");
            let key = rquickjs::String::from_str(ctx.clone(), "fixed")
                .unwrap()
                .into_value();
            let d = own_descriptor(ctx, &obj, &key).unwrap();
            assert_eq!(d.value.as_number(), Some(1.0));
            assert!(d.getter.is_undefined() && d.setter.is_undefined());
            assert!(!define_data(
                ctx,
                &obj,
                "fixed",
                Value::new_null(ctx.clone())
            ));
            let _ = ctx.catch();
            let missing = rquickjs::String::from_str(ctx.clone(), "nope")
                .unwrap()
                .into_value();
            assert!(own_descriptor(ctx, &obj, &missing).is_none());
        });
    }

    #[test]
    fn strings_keep_lone_surrogates() {
        with_ctx(|ctx| {
            let units = [0xd800, u16::from(b'x')];
            let v = new_string_utf16(ctx, &units).unwrap();
            assert_eq!(string_utf16(ctx, &v), Some(units.to_vec()));
            assert_eq!(
                to_display_string(ctx, &eval(ctx, "2n ** 70n")).unwrap(),
                "1180591620717411303424"
            );
            assert_eq!(to_display_string(ctx, &eval(ctx, "-1.5")).unwrap(), "-1.5");
        });
    }

    #[test]
    fn helpers_compile_once_and_run_in_every_runtime() {
        static SOURCE: &str = "(() => ({ answer: 6 * 7 }))()";
        let key = (SOURCE.as_ptr() as usize, SOURCE.len());
        for _ in 0..2 {
            with_ctx(|ctx| {
                let v: Object = eval_helper(ctx, SOURCE, c"test:helper")
                    .unwrap()
                    .get()
                    .unwrap();
                assert_eq!(v.get::<_, i32>("answer").unwrap(), 42);
            });
            assert!(lock_unpoisoned(BYTECODE.get().unwrap()).contains_key(&key));
        }
        with_ctx(|ctx| {
            assert!(eval_helper(ctx, "(() => { throw 1 })()", c"test:throws").is_err());
            assert!(eval_helper(ctx, "syntax error here", c"test:bad").is_err());
        });
    }
}
