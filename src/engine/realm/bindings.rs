//! Host bindings every realm gets: `emit`, `read_input` and (unless absent) `console`.

use super::super::console::{Formatter, MAX_LINE};
use super::super::limits::StopReason;
use super::output::{floor_boundary, RunSlot};
use super::throw_uncatchable;
use rquickjs::function::Rest;
use rquickjs::{Ctx, Function, Object, Value};
use std::rc::Rc;

/// Installs `emit`, `read_input` and (unless absent) `console`.
pub fn install_bindings<'js>(
    ctx: &Ctx<'js>,
    slot: &Rc<RunSlot>,
    with_console: bool,
) -> rquickjs::Result<()> {
    let global = ctx.globals();

    let emit_slot = slot.clone();
    let emit = Function::new(
        ctx.clone(),
        move |ctx: Ctx<'js>, text: rquickjs::Coerced<String>| -> rquickjs::Result<()> {
            let fits = emit_slot.sink.borrow_mut().emit(&text.0);
            if fits {
                Ok(())
            } else {
                emit_slot.stop(StopReason::Output);
                Err(throw_uncatchable(&ctx, "output limit exceeded"))
            }
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
                let mut line = Formatter::new(&ctx).format_args(&args.0);
                line.truncate(floor_boundary(&line, MAX_LINE));
                let fits = slot.sink.borrow_mut().log(level, line);
                if fits {
                    Ok(())
                } else {
                    slot.stop(StopReason::Output);
                    Err(throw_uncatchable(&ctx, "output limit exceeded"))
                }
            },
        )?
        .with_name(method)?;
        console.set(method, f)?;
    }
    global.set("console", console)?;
    Ok(())
}
