//! Building a realm: intrinsics without code generation from strings, host bindings
//! (console, emit, read_input), and lockdown of everything reachable from the global object.

use super::console::{Formatter, MAX_LINE};
use super::limits::{StopReason, Watchdog};
use super::raw;
use rquickjs::function::{Constructor, Rest};
use rquickjs::{Ctx, Function, Object, Value};
use std::cell::{Cell, RefCell};
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
    // Built through the constructor: after lockdown, assigning `message` to a fresh error would
    // hit the frozen Error.prototype and throw a catchable TypeError instead.
    let build = || -> rquickjs::Result<Value<'js>> {
        let ctor: Constructor = ctx
            .globals()
            .get("InternalError")
            .or_else(|_| ctx.globals().get("Error"))?;
        ctor.construct((message,))
    };
    match build() {
        Ok(e) => {
            raw::make_uncatchable(ctx, &e);
            ctx.throw(e)
        }
        Err(e) => e,
    }
}

/// Per-run state read by a realm's host bindings and interrupt handler, so a realm prepared
/// ahead of time can be handed to the run that takes it.
pub struct RunSlot {
    pub input: RefCell<String>,
    pub capture: Cell<bool>,
    pub sink: RefCell<OutputSink>,
    pub watchdog: RefCell<Arc<Watchdog>>,
}

impl RunSlot {
    pub fn new(watchdog: Arc<Watchdog>) -> Rc<RunSlot> {
        Rc::new(RunSlot {
            input: RefCell::new(String::new()),
            capture: Cell::new(true),
            sink: RefCell::new(OutputSink::new(0)),
            watchdog: RefCell::new(watchdog),
        })
    }

    fn stop(&self, reason: StopReason) {
        self.watchdog.borrow().stop(reason);
    }
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
pub const INTERNAL_FILENAME_C: &std::ffi::CStr = c"quickrealm:internal";

const FUNCTION_PROTOTYPES: &str =
    "[Function.prototype, Object.getPrototypeOf(async function(){}), \
    Object.getPrototypeOf(function*(){}), Object.getPrototypeOf(async function*(){})]";

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
    let install: Function = raw::eval_helper(ctx, ARRAY_GUARD, INTERNAL_FILENAME_C)?.get()?;
    install.call::<_, ()>((max_elements, UNPOLLED_ARRAY_METHODS.to_vec()))?;
    Ok(())
}

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

/// How lockdown reaches one object from an earlier one (or from a root).
#[derive(Debug, Clone, PartialEq)]
enum Edge {
    /// The n-th hidden intrinsic (see `HIDDEN_INTRINSICS`).
    Hidden(usize),
    /// The global object's own property.
    Global(Key),
    Value(usize, Key),
    Getter(usize, Key),
    Setter(usize, Key),
    Proto(usize),
}

#[derive(Debug, Clone, PartialEq)]
enum Key {
    Name(String),
    /// A well-known symbol, by its name on `Symbol`.
    Symbol(&'static str),
}

const WELL_KNOWN_SYMBOLS: &[&str] = &[
    "iterator",
    "asyncIterator",
    "hasInstance",
    "isConcatSpreadable",
    "match",
    "matchAll",
    "replace",
    "search",
    "species",
    "split",
    "toPrimitive",
    "toStringTag",
    "unscopables",
    "dispose",
    "asyncDispose",
];

/// The discovery order of the first realm's walk, replayed by every later realm: one lookup per
/// object instead of reading every property descriptor again.
static PLAN: std::sync::OnceLock<Option<Vec<Edge>>> = std::sync::OnceLock::new();

fn key_of<'js>(
    ctx: &Ctx<'js>,
    k: &Value<'js>,
    symbols: &[(Value<'js>, &'static str)],
) -> Option<Key> {
    if let Some(s) = k.as_string() {
        return s.to_string().ok().map(Key::Name);
    }
    let _ = ctx;
    symbols
        .iter()
        .find(|(v, _)| v == k)
        .map(|(_, n)| Key::Symbol(n))
}

fn key_value<'js>(
    ctx: &Ctx<'js>,
    key: &Key,
    symbols: &[(Value<'js>, &'static str)],
) -> Option<Value<'js>> {
    match key {
        Key::Name(n) => rquickjs::String::from_str(ctx.clone(), n)
            .ok()
            .map(|s| s.into_value()),
        Key::Symbol(name) => symbols
            .iter()
            .find(|(_, n)| n == name)
            .map(|(v, _)| v.clone()),
    }
}

fn well_known_symbols<'js>(ctx: &Ctx<'js>) -> Vec<(Value<'js>, &'static str)> {
    let Ok(symbol) = ctx.globals().get::<_, Object>("Symbol") else {
        return Vec::new();
    };
    WELL_KNOWN_SYMBOLS
        .iter()
        .filter_map(|n| {
            symbol
                .get::<_, Value>(*n)
                .ok()
                .filter(|v| v.is_symbol())
                .map(|v| (v, *n))
        })
        .collect()
}

/// Walks everything reachable and returns the objects in discovery order with how each was
/// reached (`None` for an edge that cannot be replayed, e.g. a non-well-known symbol key).
fn discover<'js>(ctx: &Ctx<'js>, hidden: &[Value<'js>]) -> (Vec<Object<'js>>, Option<Vec<Edge>>) {
    let global = ctx.globals();
    let symbols = well_known_symbols(ctx);
    let mut seen: HashSet<usize> = HashSet::new();
    seen.insert(raw::identity(global.as_value()));
    let mut objects: Vec<Object<'js>> = Vec::new();
    let mut edges: Option<Vec<Edge>> = Some(Vec::new());
    let mut add = |v: &Value<'js>,
                   edge: Option<Edge>,
                   objects: &mut Vec<Object<'js>>,
                   edges: &mut Option<Vec<Edge>>| {
        if let Some(o) = v.as_object() {
            if seen.insert(raw::identity(v)) {
                objects.push(o.clone());
                match (edges.as_mut(), edge) {
                    (Some(list), Some(e)) => list.push(e),
                    _ => *edges = None,
                }
            }
        }
    };
    for (i, v) in hidden.iter().enumerate() {
        add(v, Some(Edge::Hidden(i)), &mut objects, &mut edges);
    }
    for key in raw::own_keys(ctx, &global, true, false).unwrap_or_default() {
        if let Some(d) = raw::own_descriptor(ctx, &global, &key) {
            let k = key_of(ctx, &key, &symbols);
            add(
                &d.value,
                k.clone().map(Edge::Global),
                &mut objects,
                &mut edges,
            );
            if !d.getter.is_undefined() || !d.setter.is_undefined() {
                edges = None; // the global has no accessors today; replay only handles data
                add(&d.getter, None, &mut objects, &mut edges);
                add(&d.setter, None, &mut objects, &mut edges);
            }
        }
    }
    let mut i = 0;
    while i < objects.len() {
        let obj = objects[i].clone();
        for key in raw::own_keys(ctx, &obj, true, false).unwrap_or_default() {
            if let Some(d) = raw::own_descriptor(ctx, &obj, &key) {
                let k = key_of(ctx, &key, &symbols);
                add(
                    &d.value,
                    k.clone().map(|k| Edge::Value(i, k)),
                    &mut objects,
                    &mut edges,
                );
                add(
                    &d.getter,
                    k.clone().map(|k| Edge::Getter(i, k)),
                    &mut objects,
                    &mut edges,
                );
                add(
                    &d.setter,
                    k.map(|k| Edge::Setter(i, k)),
                    &mut objects,
                    &mut edges,
                );
            }
        }
        if let Some(p) = obj.get_prototype() {
            add(p.as_value(), Some(Edge::Proto(i)), &mut objects, &mut edges);
        }
        i += 1;
    }
    (objects, edges)
}

/// Resolves a recorded plan in this realm; None if the realm does not match it.
fn replay<'js>(ctx: &Ctx<'js>, hidden: &[Value<'js>], plan: &[Edge]) -> Option<Vec<Object<'js>>> {
    let global = ctx.globals();
    let symbols = well_known_symbols(ctx);
    let mut objects: Vec<Object<'js>> = Vec::with_capacity(plan.len());
    let part = |obj: &Object<'js>, key: &Key, which: u8| -> Option<Value<'js>> {
        let k = key_value(ctx, key, &symbols)?;
        let d = raw::own_descriptor(ctx, obj, &k)?;
        Some(match which {
            0 => d.value,
            1 => d.getter,
            _ => d.setter,
        })
    };
    for edge in plan {
        let v = match edge {
            Edge::Hidden(i) => hidden.get(*i)?.clone(),
            // Data properties by name: a plain property read, no key string, no descriptor.
            Edge::Global(Key::Name(n)) => raw::get_named(ctx, &global, n)?,
            Edge::Value(p, Key::Name(n)) => raw::get_named(ctx, objects.get(*p)?, n)?,
            Edge::Global(k) => part(&global, k, 0)?,
            Edge::Value(p, k) => part(objects.get(*p)?, k, 0)?,
            Edge::Getter(p, k) => part(objects.get(*p)?, k, 1)?,
            Edge::Setter(p, k) => part(objects.get(*p)?, k, 2)?,
            Edge::Proto(p) => objects.get(*p)?.get_prototype()?.into_value(),
        };
        objects.push(v.into_object()?);
    }
    Some(objects)
}

/// Freezes every object reachable from the global object (and the intrinsics that are only
/// reachable through syntax), then makes the global's own bindings read-only. The global object
/// itself stays extensible so guest code can declare top-level names.
///
/// The first realm of the process walks every property; later realms replay the discovery
/// order it recorded, which visits the same objects (the walk-based test proves it).
///
/// Only realms of the standard shape (`standard`) record or replay the plan; any other realm
/// (extra globals from an extension, no console) is walked in full.
pub fn lockdown<'js>(ctx: &Ctx<'js>, standard: bool) -> rquickjs::Result<usize> {
    if !standard {
        return lockdown_by_walk(ctx);
    }
    let hidden: Vec<Value> =
        raw::eval_helper(ctx, HIDDEN_INTRINSICS, INTERNAL_FILENAME_C)?.get()?;
    let planned = PLAN
        .get()
        .and_then(|p| p.as_ref())
        .and_then(|plan| replay(ctx, &hidden, plan));
    let objects = match planned {
        Some(objects) => objects,
        None => {
            let (objects, edges) = discover(ctx, &hidden);
            let _ = PLAN.set(edges);
            objects
        }
    };
    lockdown_objects(ctx, &objects)
}

/// The generic walk alone, without a recorded plan (used by tests to check the plan).
pub fn lockdown_by_walk<'js>(ctx: &Ctx<'js>) -> rquickjs::Result<usize> {
    let hidden: Vec<Value> =
        raw::eval_helper(ctx, HIDDEN_INTRINSICS, INTERNAL_FILENAME_C)?.get()?;
    let (objects, _) = discover(ctx, &hidden);
    lockdown_objects(ctx, &objects)
}

fn lockdown_objects<'js>(ctx: &Ctx<'js>, objects: &[Object<'js>]) -> rquickjs::Result<usize> {
    for obj in objects {
        if !raw::freeze(ctx, obj) {
            return Err(ctx.throw(ctx.catch()));
        }
    }
    let global = ctx.globals();
    for key in raw::own_keys(ctx, &global, true, false).unwrap_or_default() {
        if let Some(d) = raw::own_descriptor(ctx, &global, &key) {
            if d.getter.is_undefined() && d.setter.is_undefined() {
                if let Some(name) = key.as_string().and_then(|s| s.to_string().ok()) {
                    raw::define_frozen(ctx, &global, &name, d.value);
                }
            }
        }
    }
    Ok(objects.len())
}

/// Intrinsics that no property path from the global object leads to: they are only reachable
/// through syntax or by calling built-ins, so lockdown names them explicitly.
pub const HIDDEN_INTRINSICS: &str = r#"(() => {
  'use strict';
  const P = Object.getPrototypeOf;
  const gen = function* () {};
  const agen = async function* () {};
  const arrIt = [][Symbol.iterator]();
  const out = [
    P(async function () {}), P(gen), P(agen), P(P(gen())), P(P(agen())), P(P(P(agen()))),
    P(arrIt), P(P(arrIt)), P(new Map().entries()), P(new Set().values()),
    P(''[Symbol.iterator]()), P(/a/[Symbol.matchAll]('')), P(Int8Array),
    (function () { return Object.getOwnPropertyDescriptor(arguments, 'callee').get; })(),
  ];
  if (typeof Iterator === 'function') {
    out.push(Iterator, P(Iterator.prototype.map.call(arrIt, (x) => x)));
    out.push(P(Iterator.from({ next() { return { done: true }; } })));
    if (typeof Iterator.concat === 'function') out.push(P(Iterator.concat([])));
  }
  return out;
})()"#;

/// Counts objects the generic walk reaches that are not frozen (tests use it to prove that the
/// replayed plan misses nothing).
pub fn unfrozen_reachable<'js>(ctx: &Ctx<'js>) -> rquickjs::Result<usize> {
    let hidden: Vec<Value> =
        raw::eval_helper(ctx, HIDDEN_INTRINSICS, INTERNAL_FILENAME_C)?.get()?;
    let (objects, _) = discover(ctx, &hidden);
    let object: Object = ctx.globals().get("Object")?;
    let is_frozen: Function = object.get("isFrozen")?;
    let mut n = 0;
    for o in objects {
        if !is_frozen.call::<_, bool>((o,))? {
            n += 1;
        }
    }
    Ok(n)
}
