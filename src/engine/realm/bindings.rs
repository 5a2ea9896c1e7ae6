//! Host bindings every realm gets: `emit`, `read_input` and (unless absent) `console`.

use super::super::console::Formatter;
use super::super::limits::StopReason;
use super::output::RunSlot;
use super::throw_uncatchable;
use rquickjs::function::Rest;
use rquickjs::{Ctx, Function, Object, Value};
use std::rc::Rc;

/// Installs `emit`, `read_input` and (unless absent) `console`.
pub(crate) fn install_bindings<'js>(
    ctx: &Ctx<'js>,
    slot: &Rc<RunSlot>,
    with_console: bool,
) -> rquickjs::Result<()> {
    let global = ctx.globals();
    // Node's and the browsers' names for the global object: UMD bundles and libraries such as
    // lodash look for them before falling back to `Function('return this')`.
    global.set("global", global.clone())?;
    global.set("self", global.clone())?;

    let emit_slot = slot.clone();
    let emit = Function::new(
        ctx.clone(),
        move |ctx: Ctx<'js>, text: rquickjs::Coerced<String>| -> rquickjs::Result<()> {
            let fits = emit_slot.sink.borrow_mut().emit(&text.0);
            within_cap(&ctx, &emit_slot, fits)
        },
    )?
    .with_name("emit")?;
    global.set("emit", emit)?;

    let input_slot = slot.clone();
    let read_input = Function::new(ctx.clone(), move || input_slot.input.borrow().clone())?
        .with_name("read_input")?;
    global.set("read_input", read_input)?;

    if !with_console {
        return Ok(());
    }
    let console = Object::new(ctx.clone())?;
    let levels: [(&str, &'static str); 7] = [
        ("log", "log"),
        ("info", "info"),
        ("warn", "warn"),
        ("error", "error"),
        ("debug", "debug"),
        ("trace", "debug"),
        ("dir", "log"),
    ];
    for (method, level) in levels {
        let slot = slot.clone();
        let f = Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>, args: Rest<Value<'js>>| -> rquickjs::Result<()> {
                if !slot.capture.get() {
                    return Ok(());
                }
                let line = Formatter::new(&ctx).format_args(&args.0);
                let fits = slot.sink.borrow_mut().log(level, line);
                within_cap(&ctx, &slot, fits)
            },
        )?
        .with_name(method)?;
        console.set(method, f)?;
    }
    global.set("console", console)?;
    Ok(())
}

/// Stops the run with an uncatchable error once a write no longer fit in the output cap.
fn within_cap(ctx: &Ctx<'_>, slot: &RunSlot, fits: bool) -> rquickjs::Result<()> {
    if fits {
        return Ok(());
    }
    slot.stop(StopReason::Output);
    Err(throw_uncatchable(ctx, "output limit exceeded"))
}
