//! Live host values inside a realm. The guest half (`membrane_guest.js`) turns host handles into
//! proxies; this half implements the native functions those proxies call, and converts values
//! between the guest and the `HostBridge` (implemented by the napi layer on the main thread).

use super::limits::StopReason;
use super::marshal::{text_of, to_guest, BytesKind, Data, Text};
use super::raw;
use super::realm::{throw_uncatchable, RunSlot};
use super::stack;
use rquickjs::function::This;
use rquickjs::{qjs, Array, Ctx, Exception, Function, IntoJs, Object, Persistent, Value};
use std::cell::{Cell, RefCell};
use std::ffi::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::NonNull;
use std::rc::{Rc, Weak};

const GUEST_HALF: &str = include_str!("membrane_guest.js");
/// Deepest guest value the membrane copies into the host.
pub const MAX_OUTGOING_DEPTH: u32 = 128;
/// Keys the traps answer from the guest side and never forward: they would lead to host
/// prototypes or host constructors.
const BLOCKED_KEYS: [&str; 10] = [
    "__proto__",
    "constructor",
    "prototype",
    "caller",
    "callee",
    "arguments",
    "__defineGetter__",
    "__defineSetter__",
    "__lookupGetter__",
    "__lookupSetter__",
];

// ----- the wire protocol -----
// The guest half and this module agree on these encodings only through `protocol_object`, which
// hands the guest half a frozen copy of the tables below; no literal is shared by convention.

/// What a host handle stands for; decides the shape of the guest proxy. `Method` is the wire
/// kind of [`FromHost::Method`]: a method token, never a handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefKind {
    Object = 0,
    Function = 1,
    Array = 2,
    Promise = 3,
    Method = 4,
    /// Not a handle: copied data (bytes) that is already a guest value.
    Data = 5,
}

impl RefKind {
    const ALL: [RefKind; 6] = [
        RefKind::Object,
        RefKind::Function,
        RefKind::Array,
        RefKind::Promise,
        RefKind::Method,
        RefKind::Data,
    ];

    fn name(self) -> &'static str {
        match self {
            RefKind::Object => "object",
            RefKind::Function => "function",
            RefKind::Array => "array",
            RefKind::Promise => "promise",
            RefKind::Method => "method",
            RefKind::Data => "data",
        }
    }
}

/// The tag of a guest value the guest half encodes for the host (`[tag, body]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ToHostTag {
    Ref,
    Callback,
    Date,
    Array,
    Set,
    Object,
    Map,
    Bytes,
}

impl ToHostTag {
    const ALL: [ToHostTag; 8] = [
        ToHostTag::Ref,
        ToHostTag::Callback,
        ToHostTag::Date,
        ToHostTag::Array,
        ToHostTag::Set,
        ToHostTag::Object,
        ToHostTag::Map,
        ToHostTag::Bytes,
    ];

    /// The short form that travels (one character: encoded once per value).
    fn code(self) -> &'static str {
        match self {
            ToHostTag::Ref => "r",
            ToHostTag::Callback => "f",
            ToHostTag::Date => "d",
            ToHostTag::Array => "a",
            ToHostTag::Set => "s",
            ToHostTag::Object => "o",
            ToHostTag::Map => "m",
            ToHostTag::Bytes => "b",
        }
    }

    fn name(self) -> &'static str {
        match self {
            ToHostTag::Ref => "ref",
            ToHostTag::Callback => "callback",
            ToHostTag::Date => "date",
            ToHostTag::Array => "array",
            ToHostTag::Set => "set",
            ToHostTag::Object => "object",
            ToHostTag::Map => "map",
            ToHostTag::Bytes => "bytes",
        }
    }

    fn from_code(code: &str) -> Option<ToHostTag> {
        ToHostTag::ALL.into_iter().find(|t| t.code() == code)
    }
}

/// How the host answers `desc` (does an own property exist, and is it enumerable).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Presence {
    Absent = 0,
    Enumerable = 1,
    Hidden = 2,
}

impl Presence {
    const ALL: [Presence; 3] = [Presence::Absent, Presence::Enumerable, Presence::Hidden];

    fn name(self) -> &'static str {
        match self {
            Presence::Absent => "absent",
            Presence::Enumerable => "enumerable",
            Presence::Hidden => "hidden",
        }
    }

    fn of(described: Option<bool>) -> Presence {
        match described {
            None => Presence::Absent,
            Some(true) => Presence::Enumerable,
            Some(false) => Presence::Hidden,
        }
    }
}

/// The frozen protocol object the guest half reads its encodings from.
fn protocol_object<'js>(ctx: &Ctx<'js>) -> rquickjs::Result<Object<'js>> {
    let frozen = |o: Object<'js>| -> rquickjs::Result<Object<'js>> {
        super::raw::freeze(ctx, &o);
        Ok(o)
    };
    let tags = Object::new(ctx.clone())?;
    for t in ToHostTag::ALL {
        tags.set(t.name(), t.code())?;
    }
    let kinds = Object::new(ctx.clone())?;
    for k in RefKind::ALL {
        kinds.set(k.name(), k as u32)?;
    }
    let presence = Object::new(ctx.clone())?;
    for p in Presence::ALL {
        presence.set(p.name(), p as u32)?;
    }
    let protocol = Object::new(ctx.clone())?;
    protocol.set("tag", frozen(tags)?)?;
    protocol.set("kind", frozen(kinds)?)?;
    protocol.set("presence", frozen(presence)?)?;
    protocol.set("maxDepth", MAX_OUTGOING_DEPTH)?;
    let blocked = Array::new(ctx.clone())?;
    for (i, k) in BLOCKED_KEYS.into_iter().enumerate() {
        blocked.set(i, k)?;
    }
    protocol.set("blocked", frozen(blocked.into_object())?)?;
    frozen(protocol)
}

/// A host value arriving in the guest: copied primitives, a handle to a live host object, or a
/// method token.
#[derive(Debug, Clone, PartialEq)]
pub enum FromHost {
    Prim(Data),
    Ref(u32, RefKind),
    /// A method of a host built-in prototype (`Array.prototype.map`), read from a host object.
    /// The function itself never crosses: the guest gets a stand-in that asks the host to call
    /// method `token` on a host object the guest holds ([`HostBridge::call_method`]).
    Method(u32),
}

/// A guest value leaving for the host.
#[derive(Debug, Clone, PartialEq)]
pub enum ToHost {
    Prim(Data),
    /// A proxy the guest received earlier: the same host object goes back.
    Ref(u32),
    /// A guest function; the host gets a function that calls back into the guest.
    Callback(u32),
    Array(Vec<ToHost>),
    Object(Vec<(String, ToHost)>),
    Date(f64),
    Map(Vec<(ToHost, ToHost)>),
    Set(Vec<ToHost>),
}

/// A property key as the host sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Key {
    Name(String),
    /// A well-known symbol by name: iterator, asyncIterator, toPrimitive, toStringTag.
    Symbol(String),
}

/// A host exception, reduced to what may reach the guest.
#[derive(Debug, Clone, PartialEq)]
pub struct HostFailure {
    pub name: String,
    pub message: String,
}

impl HostFailure {
    pub fn new(name: &str, message: impl Into<String>) -> Self {
        HostFailure {
            name: name.into(),
            message: message.into(),
        }
    }
}

pub type HostResult<T> = Result<T, HostFailure>;

/// What the host side provides. Implemented by the napi layer; every method runs on the thread
/// that owns the host objects.
pub trait HostBridge {
    fn get(&self, id: u32, key: &Key) -> HostResult<FromHost>;
    /// `get` of a plain name (the membrane's fast path); bridges may skip building a `Key`.
    fn get_name(&self, id: u32, name: &str) -> HostResult<FromHost> {
        self.get(id, &Key::Name(name.to_owned()))
    }
    fn set(&self, id: u32, key: &Key, value: ToHost) -> HostResult<()>;
    fn has(&self, id: u32, key: &Key) -> HostResult<bool>;
    fn delete(&self, id: u32, key: &str) -> HostResult<bool>;
    fn own_keys(&self, id: u32) -> HostResult<Vec<String>>;
    /// None when absent; Some(enumerable) otherwise.
    fn describe(&self, id: u32, key: &str) -> HostResult<Option<bool>>;
    fn call(&self, id: u32, this: Option<u32>, args: Vec<ToHost>) -> HostResult<FromHost>;
    fn construct(&self, id: u32, args: Vec<ToHost>) -> HostResult<FromHost>;
    /// Calls the host built-in method `method` (a token from [`FromHost::Method`]) on the host
    /// object `this`.
    fn call_method(&self, method: u32, this: u32, args: Vec<ToHost>) -> HostResult<FromHost> {
        let _ = (method, this, args);
        Err(HostFailure::new(
            "TypeError",
            "this host has no built-in methods to call",
        ))
    }
    /// Arranges for `settle` to be delivered (through the run's driver) when the promise settles.
    fn then(&self, id: u32, settle: u32) -> HostResult<()>;
    /// Receives the guest handle before any guest code runs, for host-to-guest callbacks.
    fn attach(&self, _guest: &Rc<GuestHandle>) {}
}

/// The guest's side of a live run, shared with host callbacks so they can call back in.
pub struct GuestHandle {
    ctx: Cell<Option<NonNull<rquickjs::qjs::JSContext>>>,
    /// The realm's guest half and this run's state in it, both handed to every call into it.
    guest: RefCell<Option<GuestHalf>>,
    /// The membrane this run is attached to; released with the run.
    serving: Rc<Serving>,
    pub host_calls: Cell<u64>,
    budget: u64,
    slot: Rc<RunSlot>,
    /// Set when a crossing exceeded the host-call budget.
    pub over_budget: Cell<bool>,
}

impl GuestHandle {
    pub fn is_alive(&self) -> bool {
        self.ctx.get().is_some()
    }

    /// Releases the guest half; host functions kept by the host stop working.
    pub fn release(&self) {
        self.guest.borrow_mut().take();
        self.ctx.set(None);
        self.serving.end_for(self);
    }

    fn ctx<'js>(&self) -> Option<Ctx<'js>> {
        // SAFETY: the pointer is cleared (release) before the context is freed, and all use is on
        // the one thread that owns the run.
        self.ctx.get().map(|p| unsafe { Ctx::from_raw(p) })
    }

    /// Counts one crossing; false when the run must stop (deadline, cancel, or budget).
    fn cross(&self) -> Result<(), &'static str> {
        let n = self.host_calls.get() + 1;
        self.host_calls.set(n);
        if n > self.budget {
            self.over_budget.set(true);
            self.slot.watchdog.borrow().stop(StopReason::HostCalls);
            return Err("host call budget exceeded");
        }
        if self.slot.watchdog.borrow().should_stop() {
            return Err("interrupted");
        }
        Ok(())
    }

    /// Calls a guest callback from the host. `this` and `args` arrive as host handles/copies.
    pub fn invoke(&self, callback: u32, this: FromHost, args: Vec<FromHost>) -> HostResult<ToHost> {
        let Some(ctx) = self.ctx() else {
            return Err(HostFailure::new(
                "Error",
                "a sandbox callback was called after its run ended",
            ));
        };
        if self.slot.paused() {
            return Err(HostFailure::new(
                "Error",
                "a sandbox callback cannot be called while its run is paused between time slices; call it from a host function the sandbox calls, or while the sandbox awaits",
            ));
        }
        if let Err(why) = self.cross() {
            return Err(HostFailure::new(
                "Error",
                format!("the sandbox run stopped: {why}"),
            ));
        }
        // The callback may run on another stack than the guest code that handed it out (the
        // host's own, for a time-sliced run): QuickJS must check the stack it runs on.
        // SAFETY: the context is alive (checked above) and used only by this thread.
        let rt = unsafe { rquickjs::qjs::JS_GetRuntime(ctx.as_raw().as_ptr()) };
        let outer = self.slot.stack_limit.get();
        // SAFETY: as above.
        let inner = unsafe { stack::limit_here(rt, self.slot.stack_bytes.get()) };
        self.slot.stack_limit.set(inner);
        let result = self.invoke_here(&ctx, callback, this, args);
        self.slot.stack_limit.set(outer);
        // SAFETY: as above; the runtime outlives every callback into it.
        unsafe { stack::restore_limit(rt, outer) };
        result
    }

    fn invoke_here(
        &self,
        ctx: &Ctx<'_>,
        callback: u32,
        this: FromHost,
        args: Vec<FromHost>,
    ) -> HostResult<ToHost> {
        let ctx = ctx.clone();
        let guest = self.guest.borrow().clone();
        let Some(guest) = guest else {
            return Err(HostFailure::new(
                "Error",
                "a sandbox callback was called after its run ended",
            ));
        };
        let result = (|| -> rquickjs::Result<ToHost> {
            let (kernel, run) = guest.restore(&ctx)?;
            let invoke: Function = kernel.get("invoke")?;
            let args_arr = Array::new(ctx.clone())?;
            for (i, a) in args.iter().enumerate() {
                args_arr.set(i, from_host_to_guest(&ctx, a)?)?;
            }
            let out: Value =
                invoke.call((run, callback, from_host_to_guest(&ctx, &this)?, args_arr))?;
            to_host_from_guest(&ctx, &out)
        })();
        result.map_err(|e| guest_failure(&ctx, e))
    }

    /// Delivers a host promise settlement to the guest promise waiting for it.
    pub fn settle(
        &self,
        settle: u32,
        outcome: Result<FromHost, HostFailure>,
    ) -> rquickjs::Result<()> {
        let Some(ctx) = self.ctx() else { return Ok(()) };
        let guest = self.guest.borrow().clone();
        let Some(guest) = guest else { return Ok(()) };
        let (kernel, run) = guest.restore(&ctx)?;
        let settle_fn: Function = kernel.get("settle")?;
        match outcome {
            Ok(v) => {
                settle_fn.call::<_, ()>((run, settle, true, from_host_to_guest(&ctx, &v)?, ""))
            }
            Err(f) => {
                settle_fn.call::<_, ()>((run, settle, false, f.message.as_str(), f.name.as_str()))
            }
        }
    }
}

/// Converts a guest exception raised while the host called back in into a host failure.
fn guest_failure(ctx: &Ctx<'_>, e: rquickjs::Error) -> HostFailure {
    if matches!(e, rquickjs::Error::Exception) {
        let exc = ctx.catch();
        if exc.is_uncatchable_error() {
            // Put it back so the guest run keeps unwinding once control returns to it.
            let _ = ctx.throw(exc);
            return HostFailure::new("Error", "the sandbox run was stopped");
        }
        let (name, message, _) = super::errors::describe_exception(ctx, &exc);
        HostFailure::new(&name, message)
    } else {
        HostFailure::new("Error", e.to_string())
    }
}

pub fn from_host_to_guest<'js>(ctx: &Ctx<'js>, v: &FromHost) -> rquickjs::Result<Value<'js>> {
    match v {
        FromHost::Prim(d) => {
            let v = to_guest(ctx, d)?;
            if !v.is_object() {
                return Ok(v);
            }
            // Copied data that is an object travels tagged, so it is not taken for a handle.
            tagged(ctx, v, RefKind::Data as u32)
        }
        FromHost::Ref(id, kind) => tagged(ctx, id.into_js(ctx)?, *kind as u32),
        FromHost::Method(token) => tagged(ctx, token.into_js(ctx)?, RefKind::Method as u32),
    }
}

/// `[value, kind]`: how a handle, a method token or copied object data travels to the guest half.
fn tagged<'js>(ctx: &Ctx<'js>, value: Value<'js>, kind: u32) -> rquickjs::Result<Value<'js>> {
    let a = Array::new(ctx.clone())?;
    a.set(0, value)?;
    a.set(1, kind)?;
    Ok(a.into_value())
}

fn tag_items<'js>(arr: &Array<'js>) -> rquickjs::Result<Vec<Value<'js>>> {
    (0..arr.len()).map(|i| arr.get(i)).collect()
}

/// A typed array or ArrayBuffer the guest passes to the host, copied as the same kind of view
/// over a copy of its bytes (a detached or out-of-bounds view is a TypeError).
fn guest_bytes<'js>(ctx: &Ctx<'js>, v: &Value<'js>) -> rquickjs::Result<Data> {
    let kind = match raw::typed_array_kind(v) {
        Some(kind) => BytesKind::Typed(kind),
        None if raw::is_array_buffer(v) => BytesKind::ArrayBuffer,
        None => {
            return Err(Exception::throw_type(
                ctx,
                "only typed arrays and ArrayBuffers cross to the host as bytes",
            ))
        }
    };
    match raw::view_bytes(ctx, v) {
        Some(bytes) => Ok(Data::Bytes(kind, bytes)),
        None => Err(Exception::throw_type(
            ctx,
            "a detached or out-of-bounds buffer cannot be passed to the host",
        )),
    }
}

/// Most bytes (strings, typed arrays, 16 per value) one crossing may copy to the host: a guest
/// that passes one buffer many times must not multiply it in host memory.
pub const MAX_OUTGOING_BYTES: usize = 64 << 20;

/// Decodes the tagged form produced by the guest half's `out()`.
pub fn to_host_from_guest<'js>(ctx: &Ctx<'js>, v: &Value<'js>) -> rquickjs::Result<ToHost> {
    decode(ctx, v, &mut { MAX_OUTGOING_BYTES })
}

/// Decodes every value of one crossing (a call's arguments) under one byte budget.
fn to_host_all<'js>(ctx: &Ctx<'js>, values: &[Value<'js>]) -> rquickjs::Result<Vec<ToHost>> {
    let mut budget = MAX_OUTGOING_BYTES;
    values.iter().map(|v| decode(ctx, v, &mut budget)).collect()
}

/// Takes `n` bytes from a crossing's budget, or throws a RangeError in the guest.
fn charge(ctx: &Ctx<'_>, budget: &mut usize, n: usize) -> rquickjs::Result<()> {
    match budget.checked_sub(n) {
        Some(left) => {
            *budget = left;
            Ok(())
        }
        None => Err(Exception::throw_range(
            ctx,
            &format!(
                "a value passed to the host is larger than {} MiB",
                MAX_OUTGOING_BYTES >> 20
            ),
        )),
    }
}

fn decode<'js>(ctx: &Ctx<'js>, v: &Value<'js>, budget: &mut usize) -> rquickjs::Result<ToHost> {
    charge(ctx, budget, 16)?;
    if let Some(arr) = v.as_array() {
        let tag: String = arr.get(0)?;
        let body: Value = arr.get(1)?;
        let list = || -> rquickjs::Result<Vec<Value<'js>>> {
            body.as_array()
                .map(tag_items)
                .unwrap_or_else(|| Ok(Vec::new()))
        };
        let num = || body.as_number().unwrap_or(0.0);
        let tag = ToHostTag::from_code(&tag).ok_or(rquickjs::Error::Unknown)?;
        return Ok(match tag {
            ToHostTag::Ref => ToHost::Ref(num() as u32),
            ToHostTag::Callback => ToHost::Callback(num() as u32),
            ToHostTag::Date => ToHost::Date(num()),
            ToHostTag::Bytes => {
                let bytes = guest_bytes(ctx, &body)?;
                if let Data::Bytes(_, b) = &bytes {
                    charge(ctx, budget, b.len())?;
                }
                ToHost::Prim(bytes)
            }
            ToHostTag::Array => ToHost::Array(
                list()?
                    .iter()
                    .map(|x| decode(ctx, x, budget))
                    .collect::<Result<_, _>>()?,
            ),
            ToHostTag::Set => ToHost::Set(
                list()?
                    .iter()
                    .map(|x| decode(ctx, x, budget))
                    .collect::<Result<_, _>>()?,
            ),
            ToHostTag::Object => {
                let mut entries = Vec::new();
                for pair in list()? {
                    let pair = pair.as_array().cloned().ok_or(rquickjs::Error::Unknown)?;
                    let k: Value = pair.get(0)?;
                    let k = text_of(ctx, &k).map(|t| t.to_lossy()).unwrap_or_default();
                    charge(ctx, budget, k.len())?;
                    entries.push((k, decode(ctx, &pair.get(1)?, budget)?));
                }
                ToHost::Object(entries)
            }
            ToHostTag::Map => {
                let mut entries = Vec::new();
                for pair in list()? {
                    let pair = pair.as_array().cloned().ok_or(rquickjs::Error::Unknown)?;
                    entries.push((
                        decode(ctx, &pair.get(0)?, budget)?,
                        decode(ctx, &pair.get(1)?, budget)?,
                    ));
                }
                ToHost::Map(entries)
            }
        });
    }
    // Primitives only reach here.
    if v.is_undefined() {
        return Ok(ToHost::Prim(Data::Undefined));
    }
    if v.is_null() {
        return Ok(ToHost::Prim(Data::Null));
    }
    if let Some(b) = v.as_bool() {
        return Ok(ToHost::Prim(Data::Bool(b)));
    }
    if let Some(n) = v.as_number() {
        return Ok(ToHost::Prim(Data::Number(n)));
    }
    if v.is_string() {
        let text = text_of(ctx, v).ok_or(rquickjs::Error::Unknown)?;
        charge(ctx, budget, text.byte_len())?;
        return Ok(ToHost::Prim(Data::String(text)));
    }
    if v.is_big_int() {
        let (negative, words) = super::marshal::bigint_words(ctx, v).map_err(|why| {
            Exception::throw_range(ctx, &format!("a value passed to the host {why}"))
        })?;
        return Ok(ToHost::Prim(Data::BigInt { negative, words }));
    }
    Ok(ToHost::Prim(Data::Undefined))
}

fn key_of(name: String, is_symbol: u32) -> Key {
    if is_symbol == 1 {
        Key::Symbol(name)
    } else {
        Key::Name(name)
    }
}

fn throw_failure<'js>(ctx: &Ctx<'js>, f: HostFailure) -> rquickjs::Error {
    let ctor_name = match f.name.as_str() {
        "TypeError" | "RangeError" | "SyntaxError" | "ReferenceError" | "EvalError"
        | "URIError" => f.name.as_str(),
        _ => "Error",
    };
    let build = || -> rquickjs::Result<Value<'js>> {
        let ctor: rquickjs::function::Constructor = ctx.globals().get(ctor_name)?;
        let e: Object = ctor.construct((f.message.as_str(),))?;
        if ctor_name != f.name {
            super::raw::define_data(
                ctx,
                &e,
                "name",
                rquickjs::String::from_str(ctx.clone(), &f.name)?.into_value(),
            );
        }
        Ok(e.into_value())
    };
    match build() {
        Ok(v) => ctx.throw(v),
        Err(e) => e,
    }
}

/// The guest half and this run's state object in it (see `membrane_guest.js`), saved in the
/// run's own context.
#[derive(Clone)]
struct GuestHalf {
    kernel: Persistent<Object<'static>>,
    run: Persistent<Object<'static>>,
}

impl GuestHalf {
    fn restore<'js>(self, ctx: &Ctx<'js>) -> rquickjs::Result<(Object<'js>, Object<'js>)> {
        Ok((self.kernel.restore(ctx)?, self.run.restore(ctx)?))
    }
}

/// The bridge of the run attached to a membrane, and its guest handle.
type Attached = (Rc<dyn HostBridge>, Rc<GuestHandle>);

/// The live run a realm's membrane serves now. The natives are made once per realm; the run
/// they cross into is looked up here on every call.
#[derive(Default)]
struct Serving {
    run: RefCell<Option<Attached>>,
    /// The key a proxy's handler holds its host id under (handed over by the guest half).
    id_key: RefCell<Option<Persistent<rquickjs::Symbol<'static>>>>,
    /// The atom of `id_key`, valid while `id_key` holds the symbol (a symbol is its own atom).
    id_atom: Cell<Option<qjs::JSAtom>>,
}

thread_local! {
    /// The membranes of this thread's realms, indexed by the number (`magic`) their native
    /// `get` trap was made with: the trap is a plain C function and finds its membrane here.
    static SERVINGS: RefCell<Vec<Weak<Serving>>> = const { RefCell::new(Vec::new()) };
}

/// Registers a membrane for its native trap; a slot whose membrane is gone is reused.
fn register(serving: &Rc<Serving>) -> Option<i32> {
    SERVINGS.with(|all| {
        let mut all = all.borrow_mut();
        let index = match all.iter().position(|w| w.strong_count() == 0) {
            Some(i) => {
                all[i] = Rc::downgrade(serving);
                i
            }
            None => {
                all.push(Rc::downgrade(serving));
                all.len() - 1
            }
        };
        i32::try_from(index).ok()
    })
}

fn registered(magic: i32) -> Option<Rc<Serving>> {
    let index = usize::try_from(magic).ok()?;
    SERVINGS
        .try_with(|all| all.borrow().get(index).and_then(Weak::upgrade))
        .ok()
        .flatten()
}

impl Serving {
    fn now(&self) -> Option<Attached> {
        self.run.borrow().clone()
    }

    fn end(&self) {
        // Taken out first: dropping the bridge may run host code that looks here again.
        let ended = self.run.borrow_mut().take();
        drop(ended);
    }

    /// Ends `guest`'s run if it is the one attached; a handle of an earlier run, released
    /// late, must not detach the run that came after it.
    fn end_for(&self, guest: &GuestHandle) {
        let attached = self
            .run
            .borrow()
            .as_ref()
            .is_some_and(|(_, g)| std::ptr::eq(Rc::as_ptr(g), guest));
        if attached {
            self.end();
        }
    }
}

/// The membrane of one realm, made once (a template realm's serves every run derived from it):
/// the native functions the guest half calls, and the guest half itself, frozen. Each live run
/// attaches to it with its own bridge and gets its own state in the guest half.
pub(crate) struct Membrane {
    kernel: Persistent<Object<'static>>,
    serving: Rc<Serving>,
}

impl Membrane {
    pub(crate) fn new(ctx: &Ctx<'_>) -> rquickjs::Result<Membrane> {
        let serving = Rc::new(Serving::default());
        let natives = natives(ctx, &serving)?;
        let build: Function =
            super::raw::eval_helper(ctx, GUEST_HALF, super::realm::INTERNAL_FILENAME_C)?.get()?;
        let kernel: Object = build.call((natives, protocol_object(ctx)?))?;
        Ok(Membrane {
            kernel: Persistent::save(ctx, kernel),
            serving,
        })
    }

    /// Attaches a live run in `ctx` (the realm's own context or one derived from it). Returns
    /// the handle host callbacks use to call back into the guest.
    pub(crate) fn attach(
        &self,
        ctx: &Ctx<'_>,
        bridge: Rc<dyn HostBridge>,
        slot: Rc<RunSlot>,
        budget: u64,
    ) -> rquickjs::Result<Rc<GuestHandle>> {
        // Calls through the guest half must run from the run's context, not the one it was
        // made in.
        let kernel = raw::rebind(ctx, self.kernel.clone().restore(ctx)?)?;
        let begin: Function = kernel.get("begin")?;
        let run: Object = begin.call(())?;
        let handle = Rc::new(GuestHandle {
            ctx: Cell::new(Some(ctx.as_raw())),
            guest: RefCell::new(Some(GuestHalf {
                kernel: Persistent::save(ctx, kernel),
                run: Persistent::save(ctx, run),
            })),
            serving: self.serving.clone(),
            host_calls: Cell::new(0),
            budget,
            slot,
            over_budget: Cell::new(false),
        });
        *self.serving.run.borrow_mut() = Some((bridge.clone(), handle.clone()));
        bridge.attach(&handle);
        Ok(handle)
    }
}

impl Drop for Membrane {
    fn drop(&mut self) {
        // Before the realm's context and runtime go (the natives outlive this in the heap).
        self.serving.id_atom.set(None);
        self.serving.id_key.borrow_mut().take();
        self.serving.end();
    }
}

/// The native functions the guest half crosses into the host with (`N` in `membrane_guest.js`).
/// Each serves whichever run is attached to the membrane; none works between runs.
fn natives<'js>(ctx: &Ctx<'js>, serving: &Rc<Serving>) -> rquickjs::Result<Object<'js>> {
    let n = Object::new(ctx.clone())?;
    {
        let serving = serving.clone();
        let init = Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>, id_key: rquickjs::Symbol<'js>| {
                // SAFETY: live context and value; the atom's reference is given back at once,
                // as the symbol kept in `id_key` keeps the atom alive.
                unsafe {
                    let atom = qjs::JS_ValueToAtom(ctx.as_raw().as_ptr(), id_key.as_raw());
                    qjs::JS_FreeAtom(ctx.as_raw().as_ptr(), atom);
                    serving.id_atom.set(Some(atom));
                }
                *serving.id_key.borrow_mut() = Some(Persistent::save(&ctx, id_key));
            },
        )?;
        n.set("init", init)?;
    }
    {
        let magic = register(serving).ok_or(rquickjs::Error::Unknown)?;
        // SAFETY: live context; the name is a NUL-terminated literal; a generic_magic function
        // is called through the JSCFunction slot with the extra `magic` argument, as QuickJS's
        // own magic built-ins are (JS_CFUNC_generic_magic tells it which signature to use).
        let trap = unsafe {
            let f = std::mem::transmute::<GenericMagic, Generic>(native_get_trap);
            qjs::JS_NewCFunction2(
                ctx.as_raw().as_ptr(),
                Some(f),
                c"get".as_ptr(),
                3,
                qjs::JSCFunctionEnum_JS_CFUNC_generic_magic,
                magic,
            )
        };
        // SAFETY: an owned reference QuickJS just returned.
        let trap = unsafe { Value::from_raw(ctx.clone(), trap) };
        if trap.is_exception() {
            return Err(rquickjs::Error::Exception);
        }
        n.set("getTrap", trap)?;
    }
    macro_rules! native {
        ($name:literal, |$ctx:ident, $b:ident $(, $arg:ident : $ty:ty)*| $body:expr) => {{
            let serving = serving.clone();
            let f = Function::new(ctx.clone(), move |$ctx: Ctx<'js>, $($arg: $ty),*| -> rquickjs::Result<Value<'js>> {
                let Some((bridge, handle)) = serving.now() else {
                    return Err(throw_uncatchable(&$ctx, "the live run has ended"));
                };
                if let Err(why) = handle.cross() {
                    return Err(throw_uncatchable(&$ctx, why));
                }
                let $b = &*bridge;
                $body
            })?;
            n.set($name, f)?;
        }};
    }
    native!("get", |ctx, b, id: u32, key: String, sym: u32| {
        let v = b
            .get(id, &key_of(key, sym))
            .map_err(|f| throw_failure(&ctx, f))?;
        from_host_to_guest(&ctx, &v)
    });
    native!("set", |ctx,
                    b,
                    id: u32,
                    key: String,
                    sym: u32,
                    value: Value<'js>| {
        let w = to_host_from_guest(&ctx, &value)?;
        b.set(id, &key_of(key, sym), w)
            .map_err(|f| throw_failure(&ctx, f))?;
        Ok(Value::new_undefined(ctx.clone()))
    });
    native!("has", |ctx, b, id: u32, key: String, sym: u32| {
        let r = b
            .has(id, &key_of(key, sym))
            .map_err(|f| throw_failure(&ctx, f))?;
        Ok(Value::new_bool(ctx.clone(), r))
    });
    native!("del", |ctx, b, id: u32, key: String| {
        let r = b.delete(id, &key).map_err(|f| throw_failure(&ctx, f))?;
        Ok(Value::new_bool(ctx.clone(), r))
    });
    native!("keys", |ctx, b, id: u32| {
        let names = b.own_keys(id).map_err(|f| throw_failure(&ctx, f))?;
        let arr = Array::new(ctx.clone())?;
        for (i, k) in names.iter().enumerate() {
            arr.set(i, k.as_str())?;
        }
        Ok(arr.into_value())
    });
    native!("desc", |ctx, b, id: u32, key: String| {
        let d = b.describe(id, &key).map_err(|f| throw_failure(&ctx, f))?;
        Ok(Value::new_int(ctx.clone(), Presence::of(d) as i32))
    });
    native!("call", |ctx, b, id: u32, this: i64, args: Array<'js>| {
        let wires = to_host_all(&ctx, &tag_items(&args)?)?;
        let this = u32::try_from(this).ok();
        let v = b
            .call(id, this, wires)
            .map_err(|f| throw_failure(&ctx, f))?;
        from_host_to_guest(&ctx, &v)
    });
    native!("construct", |ctx, b, id: u32, args: Array<'js>| {
        let wires = to_host_all(&ctx, &tag_items(&args)?)?;
        let v = b.construct(id, wires).map_err(|f| throw_failure(&ctx, f))?;
        from_host_to_guest(&ctx, &v)
    });
    native!("method", |ctx,
                       b,
                       method: u32,
                       this: u32,
                       args: Array<'js>| {
        let wires = to_host_all(&ctx, &tag_items(&args)?)?;
        let v = b
            .call_method(method, this, wires)
            .map_err(|f| throw_failure(&ctx, f))?;
        from_host_to_guest(&ctx, &v)
    });
    native!("then", |ctx, b, id: u32, settle: u32| {
        b.then(id, settle).map_err(|f| throw_failure(&ctx, f))?;
        Ok(Value::new_undefined(ctx.clone()))
    });
    super::raw::freeze(ctx, &n);
    Ok(n)
}

type Generic = unsafe extern "C" fn(
    *mut qjs::JSContext,
    qjs::JSValue,
    c_int,
    *mut qjs::JSValue,
) -> qjs::JSValue;
type GenericMagic = unsafe extern "C" fn(
    *mut qjs::JSContext,
    qjs::JSValue,
    c_int,
    *mut qjs::JSValue,
    c_int,
) -> qjs::JSValue;

/// The `get` trap as QuickJS calls it: a plain C function, found by its membrane's number, so
/// that a host read costs one C call rather than a call through a closure's generic argument
/// conversion. Never unwinds into C: a panic becomes an uncatchable error.
unsafe extern "C" fn native_get_trap(
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
enum FastGet {
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
fn number_value(n: f64) -> qjs::JSValue {
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
/// value that is not a copied primitive to its `into` (both in `membrane_guest.js`).
fn get_trap<'js>(
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
fn finish_get<'js>(
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
fn call_handler<'js>(
    handler: &Object<'js>,
    method: &str,
    target: Object<'js>,
    arg: Value<'js>,
) -> rquickjs::Result<Value<'js>> {
    let f: Function = handler.get(method)?;
    f.call((This(handler.clone()), target, arg))
}

/// Binds live host values as globals (after lockdown: proxies are never frozen). Returns the
/// first name that a built-in global already takes, if any.
pub fn bind_globals<'js>(
    ctx: &Ctx<'js>,
    handle: &GuestHandle,
    globals: &[(String, FromHost)],
) -> rquickjs::Result<Option<String>> {
    let (kernel, run) = handle
        .guest
        .borrow()
        .clone()
        .ok_or(rquickjs::Error::Unknown)?
        .restore(ctx)?;
    let wrap: Function = kernel.get("wrap")?;
    let global = ctx.globals();
    for (name, value) in globals {
        let v: Value = wrap.call((run.clone(), from_host_to_guest(ctx, value)?))?;
        if !super::raw::define_data(ctx, &global, name, v) {
            return Ok(Some(name.clone()));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::limits::CancelToken;
    use crate::engine::live::{run_to_end, HostPromises};
    use crate::engine::marshal::Text;
    use crate::engine::run::{LiveGlobals, RunRequest};

    /// A host with one object (handle 1) whose `push` is built-in method token 7, whose `one`
    /// is 1, and whose `releaseEarlier` releases the guest handle kept in `earlier`.
    #[derive(Default)]
    struct MethodHost {
        calls: RefCell<Vec<(u32, u32, usize)>>,
        attached: RefCell<Option<Rc<GuestHandle>>>,
        earlier: RefCell<Option<Rc<GuestHandle>>>,
    }

    impl HostBridge for MethodHost {
        fn get(&self, _: u32, key: &Key) -> HostResult<FromHost> {
            match key {
                Key::Name(k) if k == "push" => Ok(FromHost::Method(7)),
                Key::Name(k) if k == "one" => Ok(FromHost::Prim(Data::Number(1.0))),
                Key::Name(k) if k == "releaseEarlier" => {
                    if let Some(g) = self.earlier.borrow().as_ref() {
                        g.release();
                    }
                    Ok(FromHost::Prim(Data::Bool(true)))
                }
                _ => Ok(FromHost::Prim(Data::Undefined)),
            }
        }
        fn set(&self, _: u32, _: &Key, _: ToHost) -> HostResult<()> {
            Ok(())
        }
        fn has(&self, _: u32, _: &Key) -> HostResult<bool> {
            Ok(false)
        }
        fn delete(&self, _: u32, _: &str) -> HostResult<bool> {
            Ok(false)
        }
        fn own_keys(&self, _: u32) -> HostResult<Vec<String>> {
            Ok(Vec::new())
        }
        fn describe(&self, _: u32, _: &str) -> HostResult<Option<bool>> {
            Ok(None)
        }
        fn call(&self, _: u32, _: Option<u32>, _: Vec<ToHost>) -> HostResult<FromHost> {
            Ok(FromHost::Prim(Data::Undefined))
        }
        fn construct(&self, _: u32, _: Vec<ToHost>) -> HostResult<FromHost> {
            Ok(FromHost::Prim(Data::Undefined))
        }
        fn call_method(&self, method: u32, this: u32, args: Vec<ToHost>) -> HostResult<FromHost> {
            self.calls.borrow_mut().push((method, this, args.len()));
            Ok(FromHost::Prim(Data::Number(args.len() as f64)))
        }
        fn then(&self, _: u32, _: u32) -> HostResult<()> {
            Ok(())
        }
        fn attach(&self, guest: &Rc<GuestHandle>) {
            *self.attached.borrow_mut() = Some(guest.clone());
        }
    }

    fn run_with(source: &str, host: Rc<MethodHost>) -> crate::engine::RunOutcome {
        let live = LiveGlobals {
            bridge: host,
            globals: vec![("obj".into(), FromHost::Ref(1, RefKind::Object))],
            budget: 1000,
            slicer: None,
        };
        run_to_end(
            RunRequest::new(source),
            &CancelToken::new(),
            live,
            &HostPromises::default(),
        )
    }

    #[test]
    fn live_runs_derive_from_the_threads_template_and_keep_it() {
        std::thread::spawn(|| {
            for _ in 0..5 {
                let host = Rc::new(MethodHost::default());
                let outcome = run_with("return obj.push(1, 2)", host.clone());
                assert!(outcome.ok, "{:?}", outcome.error);
                assert_eq!(host.calls.borrow().len(), 1);
            }
            let builds = crate::engine::template::BUILDS.with(|b| b.get());
            assert_eq!(builds, 1);
        })
        .join()
        .expect("the thread survives");
    }

    #[test]
    fn a_live_runs_state_leaves_with_it_and_the_template_keeps_its_size() {
        std::thread::spawn(|| {
            // Proxies, a method stand-in, a callback and copies: all of it is the run's state.
            let source = "const f = () => 1; obj.push(f, obj, [obj], { o: obj }); \
                          return typeof obj.push === 'function' && obj.push === obj.push";
            let mut heaps = Vec::new();
            for _ in 0..3 {
                for _ in 0..300 {
                    let host = Rc::new(MethodHost::default());
                    let outcome = run_with(source, host.clone());
                    assert!(outcome.ok, "{:?}", outcome.error);
                    assert_eq!(outcome.value, Some(Data::Bool(true)));
                    assert_eq!(host.calls.borrow().as_slice(), &[(7, 1, 4)]);
                }
                heaps.push(crate::engine::template::collected_heap().expect("a template"));
            }
            let builds = crate::engine::template::BUILDS.with(|b| b.get());
            assert_eq!(builds, 1);
            // 300 runs that each left one proxy or closure behind would add far more.
            assert!(
                heaps[2] <= heaps[0] + 8 * 1024,
                "the template grew: {heaps:?}"
            );
        })
        .join()
        .expect("the thread survives");
    }

    #[test]
    fn releasing_an_earlier_runs_handle_leaves_the_current_run_attached() {
        std::thread::spawn(|| {
            let first = Rc::new(MethodHost::default());
            assert!(run_with("return obj.one", first.clone()).ok);
            let earlier = first
                .attached
                .borrow()
                .clone()
                .expect("the first run's handle");
            let second = Rc::new(MethodHost::default());
            *second.earlier.borrow_mut() = Some(earlier);
            // Both runs used this thread's template and its one membrane.
            let outcome = run_with("return obj.releaseEarlier && obj.one + obj.one", second);
            assert!(outcome.ok, "{:?}", outcome.error);
            assert_eq!(outcome.value, Some(Data::Number(2.0)));
            assert_eq!(crate::engine::template::BUILDS.with(|b| b.get()), 1);
        })
        .join()
        .expect("the thread survives");
    }

    #[test]
    fn a_live_run_sets_up_under_its_own_deadline_and_stack_not_the_last_runs() {
        std::thread::Builder::new()
            .stack_size(crate::engine::workers::WORKER_STACK_BYTES)
            .spawn(|| {
                // The run before: a short deadline that passes after it ended, a small stack.
                let mut before = RunRequest::new("return 1");
                before.limits.timeout_ms = 20;
                before.limits.stack_bytes = 64 << 10;
                let first = crate::engine::run::execute(&before, &CancelToken::new());
                assert!(first.ok, "{:?}", first.error);
                std::thread::sleep(std::time::Duration::from_millis(40));
                // And runs that leave garbage up to their own small memory limit.
                for size in (1_000_000..1_046_000).step_by(3_000) {
                    let mut tight = RunRequest::new(format!(
                        "const o = {{}}; o.self = o; o.s = 'x'.repeat({size}); return 1"
                    ));
                    tight.limits.memory_bytes = 1 << 20;
                    let _ = crate::engine::run::execute(&tight, &CancelToken::new());
                    let host = Rc::new(MethodHost::default());
                    let outcome = run_with("return obj.push(1)", host);
                    assert!(outcome.ok, "after {size}: {:?}", outcome.error);
                }
                let host = Rc::new(MethodHost::default());
                let outcome = run_with("return obj.push(1)", host);
                assert!(outcome.ok, "{:?}", outcome.error);
            })
            .expect("spawn")
            .join()
            .expect("the thread survives");
    }

    #[test]
    fn a_method_token_is_a_frozen_guest_function_calling_the_host_on_its_receiver() {
        let host = Rc::new(MethodHost::default());
        let outcome = run_with(
            "const f = obj.push;
            const out = [typeof f, Object.isFrozen(f), f === obj.push, 'prototype' in f, obj.push(1, 2, 3)];
            for (const attempt of [() => f(1), () => f.call({}, 1), () => new f()]) {
              try { attempt(); out.push('called'); } catch (e) { out.push(e.name); }
            }
            return out.join();",
            host.clone(),
        );
        assert!(outcome.ok, "{:?}", outcome.error);
        assert_eq!(
            outcome.value,
            Some(Data::String(Text::Utf8(
                "function,true,true,false,3,TypeError,TypeError,TypeError".into()
            )))
        );
        // Only the call on the host object crossed, with the object as its receiver.
        assert_eq!(*host.calls.borrow(), vec![(7, 1, 3)]);
    }

    #[test]
    fn a_host_without_built_in_methods_refuses_a_token_call() {
        // The trait's own answer: a bridge that never hands out tokens refuses to call one.
        let host = MethodHost::default();
        let refused = HostBridge::call_method(&NoMethods(host), 1, 1, Vec::new()).unwrap_err();
        assert_eq!(refused.name, "TypeError");
    }

    #[test]
    fn live_realms_replay_their_shapes_lockdown_plan_and_miss_nothing() {
        use crate::engine::realm::{lockdown, Realm, RealmSpec};
        for with_console in [true, false] {
            // The first realm of each live shape records the plan, later ones replay it.
            let realms: Vec<Realm> = (0..3)
                .map(|_| {
                    Realm::build(RealmSpec {
                        with_console,
                        extension: None,
                        live: Some(LiveGlobals {
                            bridge: Rc::new(MethodHost::default()),
                            // Bound after lockdown, and live (never frozen): left out here.
                            globals: Vec::new(),
                            budget: 1000,
                            slicer: None,
                        }),
                        deterministic: None,
                    })
                    .expect("a live realm")
                })
                .collect();
            for realm in &realms {
                let unfrozen = realm
                    .context
                    .with(|ctx| lockdown::unfrozen_reachable(&ctx))
                    .expect("walk");
                assert_eq!(unfrozen, 0, "console: {with_console}");
            }
        }
    }

    /// `MethodHost` without its `call_method`: the trait's default.
    struct NoMethods(MethodHost);

    impl HostBridge for NoMethods {
        fn get(&self, id: u32, key: &Key) -> HostResult<FromHost> {
            self.0.get(id, key)
        }
        fn set(&self, id: u32, key: &Key, value: ToHost) -> HostResult<()> {
            self.0.set(id, key, value)
        }
        fn has(&self, id: u32, key: &Key) -> HostResult<bool> {
            self.0.has(id, key)
        }
        fn delete(&self, id: u32, key: &str) -> HostResult<bool> {
            self.0.delete(id, key)
        }
        fn own_keys(&self, id: u32) -> HostResult<Vec<String>> {
            self.0.own_keys(id)
        }
        fn describe(&self, id: u32, key: &str) -> HostResult<Option<bool>> {
            self.0.describe(id, key)
        }
        fn call(&self, id: u32, this: Option<u32>, args: Vec<ToHost>) -> HostResult<FromHost> {
            self.0.call(id, this, args)
        }
        fn construct(&self, id: u32, args: Vec<ToHost>) -> HostResult<FromHost> {
            self.0.construct(id, args)
        }
        fn then(&self, id: u32, settle: u32) -> HostResult<()> {
            self.0.then(id, settle)
        }
    }
}
