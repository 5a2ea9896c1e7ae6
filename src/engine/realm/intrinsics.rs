//! The realm's intrinsics, adjusted before lockdown: no code generation from strings, and error
//! hooks made inert.

use super::super::raw;
use super::INTERNAL_FILENAME_C;
use rquickjs::function::Constructor;
use rquickjs::{Ctx, Function, Object, Value};

const CODEGEN_DISABLED: &str = "Code generation from strings is disabled in this sandbox";

fn codegen_thrower<'js>(
    ctx: &Ctx<'js>,
    name: &str,
    prototype: &Object<'js>,
) -> rquickjs::Result<Function<'js>> {
    let f = Function::new(ctx.clone(), |ctx: Ctx<'js>| -> rquickjs::Result<()> {
        let ctor: Constructor = ctx.globals().get("EvalError")?;
        let err: Value = ctor.construct((CODEGEN_DISABLED,))?;
        Err(ctx.throw(err))
    })?
    .with_name(name)?
    .with_constructor(true);
    let object = f.as_object().ok_or(rquickjs::Error::Unknown)?;
    // Every function constructor has length 1, like the ones it stands in for.
    let one = Value::new_int(ctx.clone(), 1);
    raw::define_value(
        ctx,
        object,
        "length",
        one,
        rquickjs::qjs::JS_PROP_CONFIGURABLE,
    );
    raw::define_frozen(
        ctx,
        f.as_object().ok_or(rquickjs::Error::Unknown)?,
        "prototype",
        prototype.clone().into_value(),
    );
    Ok(f)
}

/// Replaces `eval` and every function constructor reachable by guest code with throwers.
/// The host still compiles source through the C API, which guest code cannot reach.
pub(crate) fn disable_codegen<'js>(ctx: &Ctx<'js>) -> rquickjs::Result<()> {
    let global = ctx.globals();
    global.remove("eval")?;
    // Atomics.wait would block the thread where no interrupt can reach it; without threads
    // there is nothing to share memory with, so both go.
    global.remove("Atomics")?;
    global.remove("SharedArrayBuffer")?;
    let protos: Vec<Object> =
        raw::eval_helper(ctx, FUNCTION_PROTOTYPES, INTERNAL_FILENAME_C)?.get()?;
    let names = [
        "Function",
        "AsyncFunction",
        "GeneratorFunction",
        "AsyncGeneratorFunction",
    ];
    for (proto, name) in protos.iter().zip(names) {
        let thrower = codegen_thrower(ctx, name, proto)?;
        raw::define_frozen(ctx, proto, "constructor", thrower.clone().into_value());
        if name == "Function" {
            raw::define_frozen(ctx, &global, "Function", thrower.into_value());
        }
    }
    Ok(())
}

/// Turns `Error.prepareStackTrace` and `Error.stackTraceLimit` (engine accessors whose setters
/// would survive freezing) into read-only data, so guest code cannot hook stack creation.
pub(crate) fn tame_error_hooks<'js>(ctx: &Ctx<'js>) -> rquickjs::Result<()> {
    let error_ctor: Object = ctx.globals().get("Error")?;
    let limit: Value = error_ctor.get("stackTraceLimit")?;
    raw::define_frozen(ctx, &error_ctor, "stackTraceLimit", limit);
    raw::define_frozen(
        ctx,
        &error_ctor,
        "prepareStackTrace",
        Value::new_undefined(ctx.clone()),
    );
    Ok(())
}

const FUNCTION_PROTOTYPES: &str =
    "[Function.prototype, Object.getPrototypeOf(async function(){}), \
    Object.getPrototypeOf(function*(){}), Object.getPrototypeOf(async function*(){})]";
