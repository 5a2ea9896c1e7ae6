//! Host bindings every realm gets: `emit`, `read_input` and (unless absent) `console`.

use super::super::console::{format_console, table_cell, Formatter, CONSOLE_LEVELS};
use super::super::limits::StopReason;
use super::super::raw;
use super::throw_uncatchable;
use super::RunSlot;
use rquickjs::function::Rest;
use rquickjs::{Ctx, Function, Object, Value};
use std::rc::Rc;

/// Installs `emit`, `read_input` and (unless absent) `console`; returns the function that
/// resets the console's per-run state (its counters and timers) when there is a console.
pub(crate) fn install_bindings<'js>(
    ctx: &Ctx<'js>,
    slot: &Rc<RunSlot>,
    with_console: bool,
) -> rquickjs::Result<Option<Function<'js>>> {
    let global = ctx.globals();

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
        return Ok(None);
    }
    let console = Object::new(ctx.clone())?;
    for (method, level) in CONSOLE_LEVELS {
        let slot = slot.clone();
        let f = Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>, args: Rest<Value<'js>>| -> rquickjs::Result<()> {
                if !slot.capture.get() {
                    return Ok(());
                }
                let line = format_console(&ctx, method, &args.0)?;
                write_line(&ctx, &slot, level, &line)
            },
        )?
        .with_name(method)?;
        console.set(method, f)?;
    }
    install_groups(ctx, slot, &console)?;
    let reset = install_extras(ctx, slot, &console)?;
    global.set("console", console)?;
    Ok(Some(reset))
}

/// Writes one console line, indented by the open groups (every line of it, as Node does).
fn write_line(
    ctx: &Ctx<'_>,
    slot: &RunSlot,
    level: &'static str,
    text: &str,
) -> rquickjs::Result<()> {
    let indent = " ".repeat(slot.group_indent.get());
    let line = if indent.is_empty() {
        text.to_string()
    } else {
        format!("{indent}{}", text.replace('\n', &format!("\n{indent}")))
    };
    let fits = slot.sink.borrow_mut().log(level, line);
    within_cap(ctx, slot, fits)
}

/// Deepest group nesting that still indents (Node indents without bound; the output cap would
/// end the run long before, but the indentation itself is built per line).
const MAX_GROUP_INDENT: usize = 2 * 64;

/// `console.group`, `groupCollapsed` (the same in text) and `groupEnd`.
fn install_groups<'js>(
    ctx: &Ctx<'js>,
    slot: &Rc<RunSlot>,
    console: &Object<'js>,
) -> rquickjs::Result<()> {
    for name in ["group", "groupCollapsed"] {
        let slot = slot.clone();
        let f = Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>, args: Rest<Value<'js>>| -> rquickjs::Result<()> {
                if slot.capture.get() && !args.0.is_empty() {
                    let line = Formatter::new(&ctx).format_args(&args.0)?;
                    write_line(&ctx, &slot, "log", &line)?;
                }
                let indent = (slot.group_indent.get() + 2).min(MAX_GROUP_INDENT);
                slot.group_indent.set(indent);
                Ok(())
            },
        )?
        .with_name(name)?;
        console.set(name, f)?;
    }
    let end_slot = slot.clone();
    let group_end = Function::new(ctx.clone(), move || {
        end_slot
            .group_indent
            .set(end_slot.group_indent.get().saturating_sub(2));
    })?
    .with_name("groupEnd")?;
    console.set("groupEnd", group_end)
}

/// `console.table`, `count`, `time` and `assert`: guest code (`console_extras.js`) over a line
/// writer and the console's own value formatting. Returns the function that forgets their
/// counters and timers.
fn install_extras<'js>(
    ctx: &Ctx<'js>,
    slot: &Rc<RunSlot>,
    console: &Object<'js>,
) -> rquickjs::Result<Function<'js>> {
    let line_slot = slot.clone();
    let line = Function::new(
        ctx.clone(),
        move |ctx: Ctx<'js>,
              level: String,
              text: rquickjs::Coerced<String>|
              -> rquickjs::Result<()> {
            if !line_slot.capture.get() {
                return Ok(());
            }
            let level = match level.as_str() {
                "info" => "info",
                "warn" => "warn",
                "error" => "error",
                _ => "log",
            };
            write_line(&ctx, &line_slot, level, &text.0)
        },
    )?;
    let inspect = Function::new(ctx.clone(), |ctx: Ctx<'js>, v: Value<'js>| {
        Formatter::new(&ctx).inspect_value(&v)
    })?;
    let cell = Function::new(ctx.clone(), |ctx: Ctx<'js>, v: Value<'js>| {
        table_cell(&ctx, &v)
    })?;
    let format = Function::new(ctx.clone(), |ctx: Ctx<'js>, args: Rest<Value<'js>>| {
        Formatter::new(&ctx).format_args(&args.0)
    })?;
    let install: Function = raw::eval_helper(ctx, EXTRAS, c"quickrealm:console")?.get()?;
    install.call((
        console.clone(),
        line,
        inspect,
        cell,
        format,
        slot.touch_function(ctx)?,
    ))
}

const EXTRAS: &str = include_str!("console_extras.js");

/// Globals QuickJS-ng defines as a host would (Web and HTML APIs, in no ECMAScript edition): the
/// deny-by-default profile has none of them.
const ENGINE_HOST_GLOBALS: [&str; 5] = [
    "performance",
    "queueMicrotask",
    "atob",
    "btoa",
    "DOMException",
];

/// Shapes the deny-by-default profile's global object: the language's built-ins, `emit` and
/// `read_input`, nothing a host adds.
pub(crate) fn remove_host_globals(ctx: &Ctx<'_>) -> rquickjs::Result<()> {
    let global = ctx.globals();
    for name in ENGINE_HOST_GLOBALS {
        global.remove(name)?;
    }
    Ok(())
}

/// Node's and the browsers' names for the global object: UMD bundles and libraries such as
/// lodash look for them before falling back to `Function('return this')`. Defined after
/// lockdown, writable and configurable as in Node, so a script may still declare its own
/// `self` or `global` (`const self = this` at the top of a script).
pub(crate) fn alias_global(ctx: &Ctx<'_>) -> rquickjs::Result<()> {
    let global = ctx.globals();
    for name in ["global", "self"] {
        let flags = rquickjs::qjs::JS_PROP_CONFIGURABLE | rquickjs::qjs::JS_PROP_WRITABLE;
        if !raw::define_value(ctx, &global, name, global.clone().into_value(), flags) {
            return Err(ctx.throw(ctx.catch()));
        }
    }
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
