//! Building a realm: intrinsics without code generation from strings, host bindings
//! (console, emit, read_input), and lockdown of everything reachable from the global object.

use super::console::{Formatter, MAX_LINE};
use super::limits::{StopReason, Watchdog};
use super::raw;
use rquickjs::function::{Constructor, Rest};
use rquickjs::{Ctx, Exception, Function, Object, Value};
use std::cell::RefCell;
use std::collections::HashSet;
use std::rc::Rc;
use std::sync::Arc;

pub const CODEGEN_DISABLED: &str = "Code generation from strings is disabled in this sandbox";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConsoleMode {
    /// Console output is captured into the run's logs (and counts toward the output cap).
    Capture,
    /// `console` exists but prints nowhere.
    Discard,
    /// No `console` global at all (deny-by-default profile).
    Absent,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogEntry {
    pub level: &'static str,
    pub message: String,
}

/// Output shared by `emit()` and console capture, bounded by one byte cap.
#[derive(Debug)]
pub struct OutputSink {
    pub output: String,
    pub logs: Vec<LogEntry>,
    used: usize,
    cap: usize,
    pub overflowed: bool,
}

fn floor_boundary(s: &str, max: usize) -> usize {
    let mut end = max.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    end
}

impl OutputSink {
    pub fn new(cap: usize) -> Self {
        OutputSink {
            output: String::new(),
            logs: Vec::new(),
            used: 0,
            cap,
            overflowed: false,
        }
    }

    /// Appends to the emitted output; false once the cap is exceeded (the rest is dropped).
    pub fn emit(&mut self, s: &str) -> bool {
        let room = self.cap - self.used;
        if s.len() <= room {
            self.output.push_str(s);
            self.used += s.len();
            return true;
        }
        let end = floor_boundary(s, room);
        self.output.push_str(&s[..end]);
        self.used += end;
        self.overflowed = true;
        false
    }

    pub fn log(&mut self, level: &'static str, message: String) -> bool {
        let room = self.cap - self.used;
        let cost = message.len();
        if cost <= room {
            self.used += cost;
            self.logs.push(LogEntry { level, message });
            return true;
        }
        let end = floor_boundary(&message, room);
        self.used += end;
        self.logs.push(LogEntry {
            level,
            message: message[..end].to_string(),
        });
        self.overflowed = true;
        false
    }
}

/// Throws an error the guest cannot catch; the watchdog already records why.
pub fn throw_uncatchable<'js>(ctx: &Ctx<'js>, message: &str) -> rquickjs::Error {
    match Exception::from_message(ctx.clone(), message) {
        Ok(e) => {
            raw::make_uncatchable(ctx, e.as_value());
            ctx.throw(e.into_value())
        }
        Err(e) => e,
    }
}

pub struct Bindings {
    pub input: Option<String>,
    pub console: ConsoleMode,
    pub sink: Rc<RefCell<OutputSink>>,
    pub watchdog: Arc<Watchdog>,
}

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
pub fn disable_codegen<'js>(ctx: &Ctx<'js>) -> rquickjs::Result<()> {
    let global = ctx.globals();
    global.remove("eval")?;
    // Atomics.wait would block the thread where no interrupt can reach it; without threads
    // there is nothing to share memory with, so both go.
    global.remove("Atomics")?;
    global.remove("SharedArrayBuffer")?;
    let protos: Vec<Object> = ctx.eval(
        "[Function.prototype, Object.getPrototypeOf(async function(){}), \
          Object.getPrototypeOf(function*(){}), Object.getPrototypeOf(async function*(){})]",
    )?;
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
pub fn tame_error_hooks<'js>(ctx: &Ctx<'js>) -> rquickjs::Result<()> {
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

/// Array methods whose engine loops never poll the interrupt handler: over a huge sparse array
/// or array-like they would run long past the deadline.
const UNPOLLED_ARRAY_METHODS: &[&str] = &[
    "concat",
    "copyWithin",
    "fill",
    "flat",
    "flatMap",
    "join",
    "lastIndexOf",
    "reverse",
    "shift",
    "slice",
    "sort",
    "splice",
    "toLocaleString",
    "unshift",
];

/// Filename of host-written helper code evaluated inside a realm; its frames are hidden.
pub const INTERNAL_FILENAME: &str = "quickrealm:internal";

/// Wraps each listed method in a guard written in JavaScript (so the garbage collector sees the
/// captured original) that refuses receivers longer than `max` elements.
const ARRAY_GUARD: &str = r#"(function (max, names) {
  'use strict';
  const AP = Array.prototype, apply = Reflect.apply, define = Object.defineProperty;
  const isArray = Array.isArray, toNumber = Number;
  const tooLong = (v) => (typeof v === 'object' && v !== null) || typeof v === 'function'
    ? toNumber(v.length) > max : false;
  for (const name of names) {
    const original = AP[name];
    const guarded = ({ [name]() {
      if (tooLong(this) || (name === 'concat' && [...arguments].some((a) => isArray(a) && tooLong(a)))) {
        throw new RangeError('Array.prototype.' + name + ' over more than ' + max +
          ' elements exceeds what fits in this sandbox\'s memory');
      }
      return apply(original, this, arguments);
    } })[name];
    define(guarded, 'length', { value: original.length });
    AP[name] = guarded;
  }
})"#;

/// Guards the array methods above: a receiver (or concat argument) longer than any array that
/// fits in the heap cannot be dense, so iterating it would only spin; refuse it up front.
pub fn guard_unbounded_builtins<'js>(ctx: &Ctx<'js>, max_elements: f64) -> rquickjs::Result<()> {
    let mut opts = rquickjs::context::EvalOptions::default();
    opts.filename = Some(INTERNAL_FILENAME.into());
    let install: Function = ctx.eval_with_options(ARRAY_GUARD, opts)?;
    install.call::<_, ()>((max_elements, UNPOLLED_ARRAY_METHODS.to_vec()))?;
    Ok(())
}

/// Installs `emit`, `read_input` and (unless absent) `console`.
pub fn install_bindings<'js>(ctx: &Ctx<'js>, b: &Bindings) -> rquickjs::Result<()> {
    let global = ctx.globals();

    let sink = b.sink.clone();
    let wd = b.watchdog.clone();
    let emit = Function::new(
        ctx.clone(),
        move |ctx: Ctx<'js>, text: rquickjs::Coerced<String>| -> rquickjs::Result<()> {
            if sink.borrow_mut().emit(&text.0) {
                Ok(())
            } else {
                wd.stop(StopReason::Output);
                Err(throw_uncatchable(&ctx, "output limit exceeded"))
            }
        },
    )?
    .with_name("emit")?;
    global.set("emit", emit)?;

    let input = b.input.clone().unwrap_or_default();
    let read_input = Function::new(ctx.clone(), move || input.clone())?.with_name("read_input")?;
    global.set("read_input", read_input)?;

    if b.console == ConsoleMode::Absent {
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
        let sink = b.sink.clone();
        let wd = b.watchdog.clone();
        let capture = b.console == ConsoleMode::Capture;
        let f = Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>, args: Rest<Value<'js>>| -> rquickjs::Result<()> {
                if !capture {
                    return Ok(());
                }
                let mut line = Formatter::new(&ctx).format_args(&args.0);
                line.truncate(floor_boundary(&line, MAX_LINE));
                if sink.borrow_mut().log(level, line) {
                    Ok(())
                } else {
                    wd.stop(StopReason::Output);
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

/// Freezes every object reachable from the global object (and the intrinsics that are only
/// reachable through syntax), then makes the global's own bindings read-only. The global object
/// itself stays extensible so guest code can declare top-level names.
pub fn lockdown<'js>(ctx: &Ctx<'js>) -> rquickjs::Result<usize> {
    let global = ctx.globals();
    let hidden: Vec<Value> = ctx.eval(HIDDEN_INTRINSICS)?;
    let mut seen: HashSet<usize> = HashSet::new();
    let mut work: Vec<Object> = Vec::new();
    seen.insert(raw::identity(global.as_value()));
    for v in hidden {
        if let Some(o) = v.into_object() {
            work.push(o);
        }
    }
    let global_keys = raw::own_keys(ctx, &global, true, false).unwrap_or_default();
    let mut visit = |v: &Value<'js>, work: &mut Vec<Object<'js>>| {
        if let Some(o) = v.as_object() {
            if seen.insert(raw::identity(v)) {
                work.push(o.clone());
            }
        }
    };
    for key in &global_keys {
        if let Some(d) = raw::own_descriptor(ctx, &global, key) {
            visit(&d.value, &mut work);
            visit(&d.getter, &mut work);
            visit(&d.setter, &mut work);
        }
    }
    if let Some(p) = global.get_prototype() {
        visit(p.as_value(), &mut work);
    }
    let mut frozen = 0usize;
    while let Some(obj) = work.pop() {
        for key in raw::own_keys(ctx, &obj, true, false).unwrap_or_default() {
            if let Some(d) = raw::own_descriptor(ctx, &obj, &key) {
                visit(&d.value, &mut work);
                visit(&d.getter, &mut work);
                visit(&d.setter, &mut work);
            }
        }
        if let Some(p) = obj.get_prototype() {
            visit(p.as_value(), &mut work);
        }
        if !raw::freeze(ctx, &obj) {
            return Err(ctx.throw(ctx.catch()));
        }
        frozen += 1;
    }
    for key in &global_keys {
        if let Some(d) = raw::own_descriptor(ctx, &global, key) {
            if d.getter.is_undefined() && d.setter.is_undefined() {
                if let Some(name) = key.as_string().and_then(|s| s.to_string().ok()) {
                    raw::define_frozen(ctx, &global, &name, d.value);
                }
            }
        }
    }
    Ok(frozen)
}

/// Intrinsics that no property path from the global object leads to: they are only reachable
/// through syntax or by calling built-ins, so lockdown names them explicitly.
pub const HIDDEN_INTRINSICS: &str = r#"(() => {
  const P = Object.getPrototypeOf;
  const gen = function* () {};
  const agen = async function* () {};
  const arrIt = [][Symbol.iterator]();
  const out = [
    P(async function () {}), P(gen), P(agen), P(gen()), P(P(gen())), P(agen()), P(P(agen())),
    P(P(P(agen()))), arrIt, P(arrIt), P(P(arrIt)), P(new Map().entries()), P(new Set().values()),
    P(''[Symbol.iterator]()), P(/a/[Symbol.matchAll]('')),
    P(Int8Array), (function () { 'use strict'; return Object.getOwnPropertyDescriptor(arguments, 'callee').get; })(),
  ];
  if (typeof Iterator === 'function') {
    out.push(Iterator, P(Iterator.prototype.map.call(arrIt, (x) => x)));
    out.push(P(Iterator.from({ next() { return { done: true }; } })));
    if (typeof Iterator.concat === 'function') out.push(P(Iterator.concat([])));
  }
  return out;
})()"#;
