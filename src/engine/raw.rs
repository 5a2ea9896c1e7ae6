//! Small safe wrappers over QuickJS C calls that rquickjs does not expose.

use rquickjs::{qjs, Ctx, Object, Value};

/// Own property keys of an object, as guest values (strings or symbols).
pub fn own_keys<'js>(
    ctx: &Ctx<'js>,
    obj: &Object<'js>,
    include_symbols: bool,
    enumerable_only: bool,
) -> Option<Vec<Value<'js>>> {
    let mut flags = qjs::JS_GPN_STRING_MASK as i32;
    if include_symbols {
        flags |= qjs::JS_GPN_SYMBOL_MASK as i32;
    }
    if enumerable_only {
        flags |= qjs::JS_GPN_ENUM_ONLY as i32;
    }
    let mut tab: *mut qjs::JSPropertyEnum = std::ptr::null_mut();
    let mut len: u32 = 0;
    // SAFETY: ctx and obj are live; the table is freed below with the matching call.
    unsafe {
        let rc = qjs::JS_GetOwnPropertyNames(
            ctx.as_raw().as_ptr(),
            &mut tab,
            &mut len,
            obj.as_raw(),
            flags,
        );
        if rc < 0 {
            return None;
        }
        let mut keys = Vec::with_capacity(len as usize);
        for i in 0..len as usize {
            let atom = (*tab.add(i)).atom;
            let v = qjs::JS_AtomToValue(ctx.as_raw().as_ptr(), atom);
            keys.push(Value::from_raw(ctx.clone(), v));
        }
        qjs::JS_FreePropertyEnum(ctx.as_raw().as_ptr(), tab, len);
        Some(keys)
    }
}

/// An own property descriptor's parts (value or accessor pair).
pub struct Descriptor<'js> {
    pub value: Value<'js>,
    pub getter: Value<'js>,
    pub setter: Value<'js>,
}

pub fn own_descriptor<'js>(
    ctx: &Ctx<'js>,
    obj: &Object<'js>,
    key: &Value<'js>,
) -> Option<Descriptor<'js>> {
    // SAFETY: the atom is created from a live value and freed; descriptor values are owned.
    unsafe {
        let c = ctx.as_raw().as_ptr();
        let atom = qjs::JS_ValueToAtom(c, key.as_raw());
        if atom == qjs::JS_ATOM_NULL {
            return None;
        }
        let mut desc = std::mem::MaybeUninit::<qjs::JSPropertyDescriptor>::uninit();
        let rc = qjs::JS_GetOwnProperty(c, desc.as_mut_ptr(), obj.as_raw(), atom);
        qjs::JS_FreeAtom(c, atom);
        if rc <= 0 {
            return None;
        }
        let desc = desc.assume_init();
        Some(Descriptor {
            value: Value::from_raw(ctx.clone(), desc.value),
            getter: Value::from_raw(ctx.clone(), desc.getter),
            setter: Value::from_raw(ctx.clone(), desc.setter),
        })
    }
}

/// Defines an own data property (writable, enumerable, configurable) without invoking setters,
/// so a key such as `__proto__` stays plain data.
pub fn define_data<'js>(ctx: &Ctx<'js>, obj: &Object<'js>, key: &str, value: Value<'js>) -> bool {
    // SAFETY: the value's reference is transferred to QuickJS (dup first, since `value` drops).
    unsafe {
        let c = ctx.as_raw().as_ptr();
        let atom = qjs::JS_NewAtomLen(c, key.as_ptr() as *const _, key.len() as _);
        if atom == qjs::JS_ATOM_NULL {
            return false;
        }
        let raw = qjs::JS_DupValue(c, value.as_raw());
        let rc = qjs::JS_DefinePropertyValue(
            c,
            obj.as_raw(),
            atom,
            raw,
            (qjs::JS_PROP_C_W_E | qjs::JS_PROP_THROW) as i32,
        );
        qjs::JS_FreeAtom(c, atom);
        rc >= 0
    }
}

/// Defines a read-only, non-configurable property on an object.
pub fn define_frozen<'js>(ctx: &Ctx<'js>, obj: &Object<'js>, key: &str, value: Value<'js>) -> bool {
    unsafe {
        let c = ctx.as_raw().as_ptr();
        let atom = qjs::JS_NewAtomLen(c, key.as_ptr() as *const _, key.len() as _);
        if atom == qjs::JS_ATOM_NULL {
            return false;
        }
        let raw = qjs::JS_DupValue(c, value.as_raw());
        let rc = qjs::JS_DefinePropertyValue(c, obj.as_raw(), atom, raw, 0);
        qjs::JS_FreeAtom(c, atom);
        rc >= 0
    }
}

pub fn freeze<'js>(ctx: &Ctx<'js>, obj: &Object<'js>) -> bool {
    unsafe { qjs::JS_FreezeObject(ctx.as_raw().as_ptr(), obj.as_raw()) >= 0 }
}

pub fn is_date(v: &Value<'_>) -> bool {
    unsafe { qjs::JS_IsDate(v.as_raw()) }
}
pub fn is_map(v: &Value<'_>) -> bool {
    unsafe { qjs::JS_IsMap(v.as_raw()) }
}
pub fn is_set(v: &Value<'_>) -> bool {
    unsafe { qjs::JS_IsSet(v.as_raw()) }
}
pub fn is_error(v: &Value<'_>) -> bool {
    unsafe { qjs::JS_IsError(v.as_raw()) }
}
pub fn is_array_buffer(v: &Value<'_>) -> bool {
    unsafe { qjs::JS_IsArrayBuffer(v.as_raw()) }
}
/// The typed array kind, if `v` is a typed array.
pub fn typed_array_kind(v: &Value<'_>) -> Option<super::marshal::TypedArrayKind> {
    let k = unsafe { qjs::JS_GetTypedArrayType(v.as_raw()) };
    super::marshal::TypedArrayKind::from_quickjs(k)
}

/// Marks the pending exception uncatchable so guest `catch`/`finally` cannot intercept it.
pub fn make_uncatchable<'js>(ctx: &Ctx<'js>, v: &Value<'js>) {
    unsafe { qjs::JS_SetUncatchableError(ctx.as_raw().as_ptr(), v.as_raw()) }
}

/// Copies the bytes viewed by a typed array or held by an ArrayBuffer.
pub fn view_bytes<'js>(ctx: &Ctx<'js>, v: &Value<'js>) -> Option<Vec<u8>> {
    unsafe {
        let c = ctx.as_raw().as_ptr();
        if is_array_buffer(v) {
            let mut size = 0usize;
            let p = qjs::JS_GetArrayBuffer(c, &mut size as *mut usize as *mut _, v.as_raw());
            if p.is_null() {
                return if size == 0 { Some(Vec::new()) } else { None };
            }
            return Some(std::slice::from_raw_parts(p, size).to_vec());
        }
        let mut offset = 0usize;
        let mut length = 0usize;
        let mut per = 0usize;
        let buf = qjs::JS_GetTypedArrayBuffer(
            c,
            v.as_raw(),
            &mut offset as *mut usize as *mut _,
            &mut length as *mut usize as *mut _,
            &mut per as *mut usize as *mut _,
        );
        let buf = Value::from_raw(ctx.clone(), buf);
        if buf.is_exception() {
            let _ = ctx.catch();
            return None;
        }
        let mut size = 0usize;
        let p = qjs::JS_GetArrayBuffer(c, &mut size as *mut usize as *mut _, buf.as_raw());
        if p.is_null() {
            return if length == 0 { Some(Vec::new()) } else { None };
        }
        let end = offset.checked_add(length)?;
        if end > size {
            return None;
        }
        Some(std::slice::from_raw_parts(p.add(offset), length).to_vec())
    }
}

/// A guest string as exact UTF-16 (lone surrogates preserved).
pub fn string_utf16<'js>(ctx: &Ctx<'js>, v: &Value<'js>) -> Option<Vec<u16>> {
    unsafe {
        let c = ctx.as_raw().as_ptr();
        let mut len = 0usize;
        let p = qjs::JS_ToCStringLenUTF16(c, &mut len as *mut usize as *mut _, v.as_raw());
        if p.is_null() {
            let _ = ctx.catch();
            return None;
        }
        let out = std::slice::from_raw_parts(p, len).to_vec();
        qjs::JS_FreeCString(c, p as *const _);
        Some(out)
    }
}

pub fn new_string_utf16<'js>(ctx: &Ctx<'js>, units: &[u16]) -> Option<Value<'js>> {
    unsafe {
        let raw = qjs::JS_NewStringUTF16(ctx.as_raw().as_ptr(), units.as_ptr(), units.len() as _);
        let v = Value::from_raw(ctx.clone(), raw);
        if v.is_exception() {
            let _ = ctx.catch();
            None
        } else {
            Some(v)
        }
    }
}

/// Converts any value with the engine's ToString (used for numbers and bigints).
pub fn to_display_string<'js>(ctx: &Ctx<'js>, v: &Value<'js>) -> Option<String> {
    unsafe {
        let c = ctx.as_raw().as_ptr();
        let mut len = 0usize;
        let p = qjs::JS_ToCStringLen2(c, &mut len as *mut usize as *mut _, v.as_raw(), false);
        if p.is_null() {
            let _ = ctx.catch();
            return None;
        }
        let bytes = std::slice::from_raw_parts(p as *const u8, len);
        let s = String::from_utf8_lossy(bytes).into_owned();
        qjs::JS_FreeCString(c, p);
        Some(s)
    }
}

pub fn new_date<'js>(ctx: &Ctx<'js>, ms: f64) -> Option<Value<'js>> {
    unsafe {
        let v = Value::from_raw(ctx.clone(), qjs::JS_NewDate(ctx.as_raw().as_ptr(), ms));
        if v.is_exception() {
            let _ = ctx.catch();
            None
        } else {
            Some(v)
        }
    }
}

/// A stable identity for an object while it is alive (used for cycle detection).
pub fn identity(v: &Value<'_>) -> usize {
    unsafe { qjs::JS_VALUE_GET_PTR(v.as_raw()) as usize }
}

/// `Array.isArray` semantics, which see through proxies.
pub fn is_array_value<'js>(ctx: &Ctx<'js>, v: &Value<'js>) -> bool {
    let check = || -> rquickjs::Result<bool> {
        let array: Object = ctx.globals().get("Array")?;
        let is_array: rquickjs::Function = array.get("isArray")?;
        is_array.call((v.clone(),))
    };
    check().unwrap_or(false)
}

/// Compiled bytecode of the host's own helper scripts, shared by every realm of the process.
static BYTECODE: std::sync::OnceLock<std::sync::Mutex<std::collections::HashMap<usize, Vec<u8>>>> =
    std::sync::OnceLock::new();

/// Evaluates one of the host's helper scripts (a `'static` source), compiling it once per
/// process and loading bytecode afterwards.
pub fn eval_helper<'js>(
    ctx: &Ctx<'js>,
    source: &'static str,
    filename: &'static std::ffi::CStr,
) -> rquickjs::Result<Value<'js>> {
    let key = source.as_ptr() as usize;
    let cache = BYTECODE.get_or_init(Default::default);
    let c = ctx.as_raw().as_ptr();
    let cached = cache.lock().ok().and_then(|m| m.get(&key).cloned());
    // SAFETY: bytecode comes from this same engine build; every value is owned and freed once.
    unsafe {
        let func = match cached {
            Some(bytes) => {
                let f = qjs::JS_ReadObject(
                    c,
                    bytes.as_ptr(),
                    bytes.len() as _,
                    qjs::JS_READ_OBJ_BYTECODE as i32,
                );
                Value::from_raw(ctx.clone(), f)
            }
            None => {
                let src = std::ffi::CString::new(source).map_err(|_| rquickjs::Error::Unknown)?;
                let flags = (qjs::JS_EVAL_TYPE_GLOBAL
                    | qjs::JS_EVAL_FLAG_STRICT
                    | qjs::JS_EVAL_FLAG_COMPILE_ONLY) as i32;
                let f = qjs::JS_Eval(c, src.as_ptr(), source.len() as _, filename.as_ptr(), flags);
                let f = Value::from_raw(ctx.clone(), f);
                if f.is_exception() {
                    return Err(rquickjs::Error::Exception);
                }
                let mut size = 0usize;
                let buf = qjs::JS_WriteObject(
                    c,
                    &mut size as *mut usize as *mut _,
                    f.as_raw(),
                    qjs::JS_WRITE_OBJ_BYTECODE as i32,
                );
                if !buf.is_null() {
                    let bytes = std::slice::from_raw_parts(buf, size).to_vec();
                    qjs::js_free(c, buf as *mut _);
                    if let Ok(mut m) = cache.lock() {
                        m.insert(key, bytes);
                    }
                }
                f
            }
        };
        if func.is_exception() {
            return Err(rquickjs::Error::Exception);
        }
        let r = qjs::JS_EvalFunction(c, qjs::JS_DupValue(c, func.as_raw()));
        let r = Value::from_raw(ctx.clone(), r);
        if r.is_exception() {
            return Err(rquickjs::Error::Exception);
        }
        Ok(r)
    }
}

/// Reads a named property without creating a JS string for the key (lockdown replay fast path).
/// Only used where the property is known to be a data property, so no getter runs.
pub fn get_named<'js>(ctx: &Ctx<'js>, obj: &Object<'js>, key: &str) -> Option<Value<'js>> {
    // SAFETY: the atom is freed after use; the returned value is owned.
    unsafe {
        let c = ctx.as_raw().as_ptr();
        let atom = qjs::JS_NewAtomLen(c, key.as_ptr() as *const _, key.len() as _);
        if atom == qjs::JS_ATOM_NULL {
            let _ = ctx.catch();
            return None;
        }
        let v = qjs::JS_GetProperty(c, obj.as_raw(), atom);
        qjs::JS_FreeAtom(c, atom);
        let v = Value::from_raw(ctx.clone(), v);
        if v.is_exception() {
            let _ = ctx.catch();
            return None;
        }
        Some(v)
    }
}
