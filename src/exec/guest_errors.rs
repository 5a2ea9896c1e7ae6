//! Errors thrown into guest code: Node-shaped errors with a `code` (and, for `fs`, `errno`,
//! `syscall` and paths), module loading errors, and the uncatchable error that ends a run.

use rquickjs::function::Constructor;
use rquickjs::{Ctx, Object, Value};

use super::fs::{self, FsError};
use crate::engine::raw;

/// Builds a guest error (`Error` or `TypeError`) with `code` and extra string properties.
pub fn guest_error<'js>(
    ctx: &Ctx<'js>,
    type_error: bool,
    code: &str,
    message: &str,
    extra: &[(&str, Value<'js>)],
) -> rquickjs::Result<Value<'js>> {
    let ctor: Constructor = ctx
        .globals()
        .get(if type_error { "TypeError" } else { "Error" })?;
    let err: Object = ctor.construct((message,))?;
    err.set("code", code)?;
    for (k, v) in extra {
        err.set(*k, v.clone())?;
    }
    Ok(err.into_value())
}

/// Throws an error that guest `catch` and `finally` cannot intercept. The error is built with
/// the `Error` constructor, which works after lockdown (assigning `message` to a fresh error would
/// hit the frozen `Error.prototype.message`).
pub fn throw_uncatchable<'js>(ctx: &Ctx<'js>, message: &str) -> rquickjs::Error {
    match guest_error(ctx, false, "ERR_RUN_ENDED", message, &[]) {
        Ok(v) => {
            raw::make_uncatchable(ctx, &v);
            ctx.throw(v)
        }
        Err(e) => e,
    }
}

/// Throws an fs error shaped like Node's (`errno`, `code`, `syscall`, `path`, `dest`).
pub fn throw_fs<'js>(ctx: &Ctx<'js>, e: &FsError) -> rquickjs::Error {
    let built = (|| -> rquickjs::Result<Value<'js>> {
        let text = |s: &str| rquickjs::String::from_str(ctx.clone(), s).map(|s| s.into_value());
        let mut extra = Vec::new();
        if let Some(n) = fs::errno(e.code) {
            extra.push(("errno", Value::new_int(ctx.clone(), n)));
        }
        if !e.syscall.is_empty() {
            extra.push(("syscall", text(e.syscall)?));
        }
        if let Some(p) = &e.path {
            extra.push(("path", text(p)?));
        }
        if let Some(d) = &e.dest {
            extra.push(("dest", text(d)?));
        }
        guest_error(ctx, e.type_error, e.code, &e.message, &extra)
    })();
    match built {
        Ok(v) => ctx.throw(v),
        Err(err) => err,
    }
}

/// Throws an `ERR_MODULE_LOAD` error for module `name`.
pub fn load_error<'js>(ctx: &Ctx<'js>, name: &str, message: String) -> rquickjs::Error {
    match guest_error(ctx, false, "ERR_MODULE_LOAD", &message, &[]) {
        Ok(e) => ctx.throw(e),
        Err(_) => rquickjs::Error::new_loading_message(name, message),
    }
}

/// Throws a `SyntaxError` (a module that does not compile).
pub fn syntax_error<'js>(ctx: &Ctx<'js>, message: &str) -> rquickjs::Error {
    let built = (|| -> rquickjs::Result<Value<'js>> {
        let ctor: Constructor = ctx.globals().get("SyntaxError")?;
        ctor.construct((message,))
    })();
    match built {
        Ok(v) => ctx.throw(v),
        Err(e) => e,
    }
}
