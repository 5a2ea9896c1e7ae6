//! The native `get` trap of every proxy: a plain C function QuickJS calls directly, with a fast
//! path that reads a plain name from the host as a primitive without making wrappers, and the
//! general path through the guest half's handler for everything else.

use super::super::marshal::{to_guest, Data, Text};
use super::super::realm::throw_uncatchable;
use super::guest::{registered, Serving};
use super::protocol::*;
use rquickjs::function::This;
use rquickjs::{qjs, Ctx, Exception, Function, Object, Value};
use std::ffi::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::NonNull;

pub(super) type Generic = unsafe extern "C" fn(
    *mut qjs::JSContext,
    qjs::JSValue,
    c_int,
    *mut qjs::JSValue,
) -> qjs::JSValue;
pub(super) type GenericMagic = unsafe extern "C" fn(
    *mut qjs::JSContext,
    qjs::JSValue,
    c_int,
    *mut qjs::JSValue,
    c_int,
) -> qjs::JSValue;

/// The `get` trap as QuickJS calls it: a plain C function, found by its membrane's number, so
/// that a host read costs one C call rather than a call through a closure's generic argument
/// conversion. Never unwinds into C: a panic becomes an uncatchable error.
pub(super) unsafe extern "C" fn native_get_trap(
    ctx: *mut qjs::JSContext,
    this: qjs::JSValue,
    argc: c_int,
    argv: *mut qjs::JSValue,
    magic: c_int,
) -> qjs::JSValue {
    let Some(raw_ctx) = NonNull::new(ctx) else {
        return qjs::JS_EXCEPTION;
    };
    // The common case without rquickjs's wrappers: a plain name read as a primitive.
    // SAFETY: QuickJS passes its live context, `this` and `argc` live arguments.
    let fast = catch_unwind(AssertUnwindSafe(|| unsafe {
        fast_get(ctx, this, argc, argv, magic)
    }));
    let found = match fast {
        Ok(FastGet::Done(v)) => return v,
        Ok(FastGet::Found(found)) => Some(found),
        Ok(FastGet::Slow) | Err(_) => None,
    };
    // SAFETY: QuickJS calls the trap with its live context, on the thread that runs it.
    let ctx = unsafe { Ctx::from_raw(raw_ctx) };
    let outcome = catch_unwind(AssertUnwindSafe(|| -> rquickjs::Result<qjs::JSValue> {
        if argc < 2 || argv.is_null() {
            return Err(throw_uncatchable(
                &ctx,
                "the get trap was called without its arguments",
            ));
        }
        // SAFETY: QuickJS passes `argc` live arguments (the proxy passes target, key and
        // receiver) and a live `this`; each is duplicated into a value of our own.
        let (handler, target, key) = unsafe {
            (
                Value::from_raw(ctx.clone(), qjs::JS_DupValue(ctx.as_raw().as_ptr(), this)),
                Value::from_raw(ctx.clone(), qjs::JS_DupValue(ctx.as_raw().as_ptr(), *argv)),
                Value::from_raw(
                    ctx.clone(),
                    qjs::JS_DupValue(ctx.as_raw().as_ptr(), *argv.add(1)),
                ),
            )
        };
        let (Some(handler), Some(target)) = (handler.into_object(), target.into_object()) else {
            return Err(throw_uncatchable(
                &ctx,
                "the get trap was called on a foreign object",
            ));
        };
        let Some(serving) = registered(magic) else {
            return Err(throw_uncatchable(&ctx, "the live run has ended"));
        };
        let v = match found {
            Some(found) => finish_get(&ctx, handler, target, found)?,
            None => get_trap(&ctx, &serving, handler, target, key)?,
        };
        // SAFETY: live context and value: the caller receives a reference of its own.
        Ok(unsafe { qjs::JS_DupValue(ctx.as_raw().as_ptr(), v.as_raw()) })
    }));
    match outcome {
        Ok(Ok(v)) => v,
        Ok(Err(rquickjs::Error::Exception)) => qjs::JS_EXCEPTION,
        Ok(Err(e)) => {
            let _ = Exception::throw_type(&ctx, &e.to_string());
            qjs::JS_EXCEPTION
        }
        Err(_) => {
            let _ = throw_uncatchable(&ctx, "quickrealm bug: the membrane's get trap panicked");
            qjs::JS_EXCEPTION
        }
    }
}

/// What the trap's fast path did: answered, read the host but needs the general path to hand
/// the value over (or to report the failure), or left everything to the general path.
pub(super) enum FastGet {
    Done(qjs::JSValue),
    Found(HostResult<FromHost>),
    Slow,
}

/// A string key that is not blocked, read from the host as a primitive, without making
/// wrappers for the context or the values. Anything else is left to `get_trap` untouched, or,
/// once the host was read, handed to `finish_get` (a host getter must run once).
///
/// # Safety
/// `ctx` is the live context QuickJS called the trap with, `this` a live value and `argv` holds
/// `argc` live values.
unsafe fn fast_get(
    ctx: *mut qjs::JSContext,
    this: qjs::JSValue,
    argc: c_int,
    argv: *mut qjs::JSValue,
    magic: c_int,
) -> FastGet {
    if argc < 2 || argv.is_null() {
        return FastGet::Slow;
    }
    // SAFETY: `argv` holds at least two live values (checked above).
    let key = unsafe { *argv.add(1) };
    // SAFETY: a live value.
    if unsafe { qjs::JS_VALUE_GET_TAG(key) } != qjs::JS_TAG_STRING {
        return FastGet::Slow;
    }
    let Some(serving) = registered(magic) else {
        return FastGet::Slow;
    };
    let Some(atom) = serving.id_atom.get() else {
        return FastGet::Slow;
    };
    let mut len: qjs::size_t = 0;
    // SAFETY: live context and string; the bytes are released below, on every path.
    let chars = unsafe { qjs::JS_ToCStringLen2(ctx, &mut len, key, false) };
    if chars.is_null() {
        // SAFETY: live context: the failed conversion left an exception pending; clear it, the
        // general path will meet the same condition and report it.
        unsafe { qjs::JS_FreeValue(ctx, qjs::JS_GetException(ctx)) };
        return FastGet::Slow;
    }
    // SAFETY: QuickJS returned `len` bytes at `chars`, alive until freed below.
    let bytes = unsafe { std::slice::from_raw_parts(chars.cast::<u8>(), len as usize) };
    let outcome = match std::str::from_utf8(bytes) {
        Ok(name) if !BLOCKED_KEYS.contains(&name) => {
            // SAFETY: as this function's contract states.
            unsafe { fast_read(ctx, this, &serving, atom, name) }
        }
        _ => FastGet::Slow,
    };
    // SAFETY: the bytes came from JS_ToCStringLen2 on this context and are no longer used.
    unsafe { qjs::JS_FreeCString(ctx, chars) };
    outcome
}

/// The host read of the fast path, for a name already checked.
///
/// # Safety
/// As for [`fast_get`].
unsafe fn fast_read(
    ctx: *mut qjs::JSContext,
    this: qjs::JSValue,
    serving: &Serving,
    atom: qjs::JSAtom,
    name: &str,
) -> FastGet {
    let Some((bridge, guest)) = serving.now() else {
        return FastGet::Slow;
    };
    // SAFETY: live context and handler; the atom lives as long as the membrane's symbol.
    let id = unsafe { qjs::JS_GetProperty(ctx, this, atom) };
    // SAFETY: `id` is an owned value; an int carries no reference, anything else is freed.
    let id = unsafe {
        if qjs::JS_VALUE_GET_TAG(id) == qjs::JS_TAG_INT {
            u32::try_from(qjs::JS_VALUE_GET_INT(id)).ok()
        } else {
            qjs::JS_FreeValue(ctx, id);
            None
        }
    };
    // A handler without its id (or a getter that threw) is the general path's to report.
    let Some(id) = id else {
        // SAFETY: live context; a pending exception, if any, is the general path's to meet again.
        unsafe { qjs::JS_FreeValue(ctx, qjs::JS_GetException(ctx)) };
        return FastGet::Slow;
    };
    if guest.cross().is_err() {
        // The general path counts this crossing again and stops the run with the reason.
        guest
            .host_calls
            .set(guest.host_calls.get().saturating_sub(1));
        return FastGet::Slow;
    }
    let found = bridge.get_name(id, name);
    let value = match &found {
        Ok(FromHost::Prim(Data::Undefined)) => qjs::JS_UNDEFINED,
        Ok(FromHost::Prim(Data::Null)) => qjs::JS_NULL,
        Ok(FromHost::Prim(Data::Bool(b))) => qjs::JS_MKVAL(qjs::JS_TAG_BOOL, i32::from(*b)),
        Ok(FromHost::Prim(Data::Number(n))) => number_value(*n),
        Ok(FromHost::Prim(Data::String(Text::Utf8(s)))) => {
            // SAFETY: live context; QuickJS copies the bytes.
            let v = unsafe { qjs::JS_NewStringLen(ctx, s.as_ptr().cast(), s.len() as _) };
            // SAFETY: an owned value QuickJS returned.
            if unsafe { qjs::JS_IsException(v) } {
                // SAFETY: live context; the general path makes the string again and reports.
                unsafe { qjs::JS_FreeValue(ctx, qjs::JS_GetException(ctx)) };
                return FastGet::Found(found);
            }
            v
        }
        _ => return FastGet::Found(found),
    };
    FastGet::Done(value)
}

/// A number as QuickJS keeps it: an int when it is one (but never -0), a float otherwise.
pub(super) fn number_value(n: f64) -> qjs::JSValue {
    let int = n as i32;
    #[allow(clippy::float_cmp)]
    if f64::from(int) == n && !(n == 0.0 && n.is_sign_negative()) {
        qjs::JS_MKVAL(qjs::JS_TAG_INT, int)
    } else {
        qjs::JS_NewFloat64(n)
    }
}

/// The `get` trap of every proxy, native for the common case: a property name that is not
/// blocked, read from the host. Symbols and blocked names go to the handler's `getOther`, and a
/// value that is not a copied primitive to its `into` (both in `guest.js`).
pub(super) fn get_trap<'js>(
    ctx: &Ctx<'js>,
    serving: &Serving,
    handler: Object<'js>,
    target: Object<'js>,
    key: Value<'js>,
) -> rquickjs::Result<Value<'js>> {
    let name = match key.as_string() {
        Some(s) => s.to_string()?,
        None => return call_handler(&handler, "getOther", target, key),
    };
    if BLOCKED_KEYS.contains(&name.as_str()) {
        return call_handler(&handler, "getOther", target, key);
    }
    let Some((bridge, guest)) = serving.now() else {
        return Err(throw_uncatchable(ctx, "the live run has ended"));
    };
    if let Err(why) = guest.cross() {
        return Err(throw_uncatchable(ctx, why));
    }
    let atom = serving.id_atom.get().ok_or(rquickjs::Error::Unknown)?;
    // SAFETY: live context and handler; the atom is alive while the membrane holds its symbol.
    let id = unsafe { qjs::JS_GetProperty(ctx.as_raw().as_ptr(), handler.as_raw(), atom) };
    // SAFETY: an owned reference QuickJS just returned.
    let id: u32 = unsafe { Value::from_raw(ctx.clone(), id) }.get()?;
    let found = bridge
        .get(id, &Key::Name(name))
        .map_err(|f| throw_failure(ctx, f))?;
    finish_get(ctx, handler, target, Ok(found))
}

/// Hands what a host read found to the guest: a copied primitive as it is, anything else
/// through the handler's `into`.
pub(super) fn finish_get<'js>(
    ctx: &Ctx<'js>,
    handler: Object<'js>,
    target: Object<'js>,
    found: HostResult<FromHost>,
) -> rquickjs::Result<Value<'js>> {
    let found = found.map_err(|f| throw_failure(ctx, f))?;
    let wire = match &found {
        FromHost::Prim(d) => {
            let v = to_guest(ctx, d)?;
            if !v.is_object() {
                return Ok(v);
            }
            tagged(ctx, v, RefKind::Data as u32)?
        }
        _ => from_host_to_guest(ctx, &found)?,
    };
    call_handler(&handler, "into", target, wire)
}

/// Calls one of the guest half's methods on a proxy's handler.
pub(super) fn call_handler<'js>(
    handler: &Object<'js>,
    method: &str,
    target: Object<'js>,
    arg: Value<'js>,
) -> rquickjs::Result<Value<'js>> {
    let f: Function = handler.get(method)?;
    f.call((This(handler.clone()), target, arg))
}
