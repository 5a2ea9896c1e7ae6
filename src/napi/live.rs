//! Live host values for runs on the main thread: the N-API side of the membrane (`HostBridge`),
//! host functions that call back into the guest, and `LiveRun`, the resumable run the
//! JavaScript wrapper drives across event-loop turns while host promises settle.
use super::convert::{write, HostReader};
use super::options::{self, ParsedRun};
use super::raw::{callback_info, Host, Raw, RawRef};
use super::results::RunReply;
use super::session::world::NativeWorld;
use super::CancelHandle;
use crate::engine::errors::ErrorInfo;
use crate::engine::live::{self as engine_live, HostPromises, SlicedRun, Step};
use crate::engine::marshal::{Data, Path};
use crate::engine::membrane::{
    FromHost, GuestHandle, HostBridge, HostFailure, HostResult, Key, RefKind, ToHost,
};
use crate::engine::run::{LiveGlobals, RunRequest};
use crate::engine::{CancelToken, RunOutcome};
use napi::bindgen_prelude::{Env, JsValue, Unknown};
use napi::sys;
use napi_derive::napi;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::{Rc, Weak};

/// The membrane's host-side helpers and the host primordials, captured once per environment:
/// see `lib/membrane/primordials.js`, the host policy, kept with the JavaScript layer and its
/// security specs and compiled in here so that nothing in JavaScript can stand in for it.
const CAPTURE: &str = include_str!("../../lib/membrane/primordials.js");
/// The well-known symbols the membrane translates, in the order `lib/membrane/primordials.js`
/// lists them.
const SYMBOLS: [&str; 5] = [
    "iterator",
    "asyncIterator",
    "toPrimitive",
    "toStringTag",
    "hasInstance",
];
const UNREACHABLE: &str = "this host value is not reachable from the sandbox";
/// What `classify` answers for a box made by `copyOf` (see `lib/membrane/primordials.js`).
const COPY: f64 = 0.5;

/// Every host primordial, and the host helpers that refuse them by identity. Captured once per
/// Node environment (one per thread, as napi-rs assumes too) and kept for its life: these
/// references are never deleted by a run, and Node frees them when the environment goes.
struct Primordials {
    env: sys::napi_env,
    /// `classify(identity, value, next)`: a run's id for a host object, 0 when refused, -token
    /// for a method of a built-in prototype (see `lib/membrane/primordials.js`).
    classify: RawRef,
    /// `isDenied(value)`: whether a value is a host primordial.
    is_denied: RawRef,
    /// `copyOf(value)`: a box that `classify` answers with [`COPY`], holding `value`.
    copy_of: RawRef,
    /// `makesCode(f)`: whether constructing `f` runs a host code-making constructor.
    makes_code: RawRef,
    /// `presence(object, key)`: 0 absent, 1 enumerable own property, 2 other own property.
    presence: RawRef,
    /// `newIdentity()`: a fresh identity `Map` for one run.
    new_identity: RawRef,
    /// Method token -> the built-in method it stands for.
    methods: RawRef,
    symbols: HashMap<&'static str, RawRef>,
}

thread_local! {
    static PRIMORDIALS: RefCell<Option<Rc<Primordials>>> = const { RefCell::new(None) };
    static CAPTURING: Cell<bool> = const { Cell::new(false) };
}

impl Primordials {
    /// The primordials of `h`'s environment, captured on first use.
    fn of(h: Host) -> Result<Rc<Primordials>, String> {
        let known = PRIMORDIALS.with(|p| p.borrow().clone());
        if let Some(p) = known.filter(|p| p.env == h.env()) {
            return Ok(p);
        }
        // A host getter run by the capture could start a live run of its own.
        if CAPTURING.with(|c| c.replace(true)) {
            return Err("host primordials are being captured".into());
        }
        let captured = Primordials::capture(h);
        CAPTURING.with(|c| c.set(false));
        let p = Rc::new(captured?);
        let first = PRIMORDIALS.with(|slot| slot.borrow_mut().replace(p.clone()).is_none());
        if first {
            h.on_teardown(forget_primordials)?;
        }
        Ok(p)
    }

    fn capture(h: Host) -> Result<Primordials, String> {
        let _scope = h.scope();
        let helpers = h.run_script(CAPTURE)?;
        let keep = |name: &str| h.create_reference(h.get_named(helpers, name)?);
        let list = h.get_named(helpers, "symbols")?;
        let mut symbols = HashMap::new();
        for (i, name) in SYMBOLS.into_iter().enumerate() {
            symbols.insert(name, h.create_reference(h.element(list, i as u32)?)?);
        }
        Ok(Primordials {
            env: h.env(),
            classify: keep("classify")?,
            is_denied: keep("isDenied")?,
            copy_of: keep("copyOf")?,
            makes_code: keep("makesCode")?,
            presence: keep("presence")?,
            new_identity: keep("newIdentity")?,
            methods: keep("methods")?,
            symbols,
        })
    }
}

/// Boxes `value` so that a sandbox receives a copy of it (as `data` is copied) instead of a
/// live proxy, wherever it crosses: a host function's result, a property value, a global.
pub(crate) fn copy_of(h: Host, value: Raw) -> Result<Raw, String> {
    let p = Primordials::of(h)?;
    let helper = h.reference_value(p.copy_of)?;
    let undef = h.undefined()?;
    h.call(undef, helper, &[value])
}

/// The environment is going away, and its references with it.
fn forget_primordials() {
    let _ = PRIMORDIALS.try_with(|p| p.borrow_mut().take());
}

/// Whether `env` is still up: references made on it may still be deleted. Once its teardown
/// began, Node deletes them itself.
fn env_alive(env: sys::napi_env) -> bool {
    PRIMORDIALS
        .try_with(|p| p.borrow().as_ref().is_some_and(|p| p.env == env))
        .unwrap_or(false)
}

pub struct NapiBridge {
    host: Host,
    prim: Rc<Primordials>,
    /// Handle id -> reference and kind; id 0 is never handed out.
    handles: RefCell<Vec<(RawRef, RefKind)>>,
    /// This run's host `Map` from object to handle id (identity).
    identity: Cell<RawRef>,
    callbacks: RefCell<HashMap<u32, RawRef>>,
    guest: RefCell<Weak<GuestHandle>>,
    promises: Rc<HostPromises>,
    /// The driver's wake function, weakly: a run abandoned by its driver can be collected.
    wake: RefCell<Option<RawRef>>,
    released: Cell<bool>,
    me: RefCell<Weak<NapiBridge>>,
}

fn failure_from_host(h: Host, exc: Raw) -> HostFailure {
    let read = |k: &str| -> Option<String> {
        let v = h.get_named(exc, k).ok()?;
        if h.type_of(v) == sys::ValueType::napi_string {
            h.string(v).ok()
        } else {
            None
        }
    };
    if h.type_of(exc) == sys::ValueType::napi_object {
        let name = read("name").unwrap_or_else(|| "Error".into());
        let message = read("message").unwrap_or_default();
        return HostFailure::new(&name, message);
    }
    let shown = match h.type_of(exc) {
        sys::ValueType::napi_string => h.string(exc).unwrap_or_default(),
        sys::ValueType::napi_number => h.number(exc).map(|n| n.to_string()).unwrap_or_default(),
        _ => "a non-error value".into(),
    };
    HostFailure::new("Error", shown)
}

impl NapiBridge {
    fn host(&self) -> Host {
        self.host
    }

    fn reference(&self, v: Raw) -> Result<RawRef, String> {
        self.host.create_reference(v)
    }

    fn deref(&self, r: RawRef) -> Result<Raw, String> {
        self.host.reference_value(r)
    }

    pub fn new(h: Host) -> Result<Rc<NapiBridge>, String> {
        let prim = Primordials::of(h)?;
        let _scope = h.scope();
        let make = h.reference_value(prim.new_identity)?;
        let identity = h.call(h.undefined()?, make, &[])?;
        let bridge = Rc::new(NapiBridge {
            host: h,
            prim,
            handles: RefCell::new(vec![(std::ptr::null_mut(), RefKind::Object)]),
            identity: Cell::new(h.create_reference(identity)?),
            callbacks: RefCell::new(HashMap::new()),
            guest: RefCell::new(Weak::new()),
            promises: Rc::default(),
            wake: RefCell::new(None),
            released: Cell::new(false),
            me: RefCell::new(Weak::new()),
        });
        *bridge.me.borrow_mut() = Rc::downgrade(&bridge);
        Ok(bridge)
    }

    fn pending_failure(&self) -> HostFailure {
        match self.host.take_thrown() {
            Some(exc) => failure_from_host(self.host, exc),
            None => HostFailure::new("Error", "a host operation failed"),
        }
    }

    fn value(&self, id: u32) -> HostResult<Raw> {
        let r = self
            .handles
            .borrow()
            .get(id as usize)
            .map(|(r, _)| *r)
            .filter(|r| !r.is_null());
        let r = r.ok_or_else(|| HostFailure::new("TypeError", "unknown host handle"))?;
        self.deref(r).map_err(|e| HostFailure::new("Error", e))
    }

    /// Converts a host value for the guest: primitives, typed arrays and ArrayBuffers copied,
    /// objects by handle (one id per object, so identity holds), promises as promise handles. Host primordials are refused
    /// wherever they appear, except that a method of a built-in prototype read as a property
    /// (`allow_method`) becomes a method token.
    pub fn incoming(&self, v: Raw, allow_method: bool) -> HostResult<FromHost> {
        let h = self.host();
        let t = h.type_of(v);
        let fail = |e: String| HostFailure::new("TypeError", e);
        let prim = match t {
            sys::ValueType::napi_undefined => Some(Data::Undefined),
            sys::ValueType::napi_null => Some(Data::Null),
            sys::ValueType::napi_boolean => Some(Data::Bool(h.boolean(v).map_err(fail)?)),
            sys::ValueType::napi_number => Some(Data::Number(h.number(v).map_err(fail)?)),
            sys::ValueType::napi_string => Some(Data::String(h.text(v).map_err(fail)?)),
            sys::ValueType::napi_bigint => {
                let mut reader = HostReader::new(h, Default::default());
                Some(reader.read(v, &Path::Root("value")).map_err(fail)?)
            }
            sys::ValueType::napi_symbol => Some(Data::Undefined),
            _ => None,
        };
        if let Some(d) = prim {
            return Ok(FromHost::Prim(d));
        }
        if self.released.get() {
            return Err(HostFailure::new("Error", "the sandbox run has ended"));
        }
        // Bytes are data: a typed array or ArrayBuffer arrives as a guest copy of the same kind
        // (a proxy would cross into the host once per element).
        if h.is_typed_array(v) || h.is_array_buffer(v) {
            let mut reader = HostReader::new(h, Default::default());
            return Ok(FromHost::Prim(
                reader.read(v, &Path::Root("value")).map_err(fail)?,
            ));
        }
        let classify = self.deref(self.prim.classify).map_err(fail)?;
        let identity = self.deref(self.identity.get()).map_err(fail)?;
        // The next id is reserved before host code runs, so a crossing nested inside it cannot
        // take the same id.
        let next = {
            let mut handles = self.handles.borrow_mut();
            handles.push((std::ptr::null_mut(), RefKind::Object));
            handles.len() - 1
        };
        let answer = h
            .undefined()
            .and_then(|undef| {
                let n = h.create_number(next as f64)?;
                h.call(undef, classify, &[identity, v, n])
            })
            .and_then(|n| h.number(n));
        let unreserve = || {
            let mut handles = self.handles.borrow_mut();
            if handles.len() == next + 1 {
                handles.pop();
            }
        };
        let n = match answer {
            Ok(n) => n,
            Err(e) => {
                unreserve();
                return Err(fail(e));
            }
        };
        if n == next as f64 {
            let kind = self.kind_of(v);
            let r = self.reference(v).map_err(fail)?;
            self.handles.borrow_mut()[next] = (r, kind);
            return Ok(FromHost::Ref(next as u32, kind));
        }
        unreserve();
        if n == COPY {
            // The host asked for a copy: the boxed value crosses as data, like `data` does.
            let payload = h.get_named(v, "value").map_err(fail)?;
            let mut reader = HostReader::new(h, Default::default());
            return Ok(FromHost::Prim(
                reader.read(payload, &Path::Root("value")).map_err(fail)?,
            ));
        }
        if n >= 1.0 {
            let kind = self
                .handles
                .borrow()
                .get(n as usize)
                .map(|(_, k)| *k)
                .unwrap_or(RefKind::Object);
            return Ok(FromHost::Ref(n as u32, kind));
        }
        if n < 0.0 && allow_method {
            return Ok(FromHost::Method((-n) as u32));
        }
        Err(HostFailure::new("TypeError", UNREACHABLE))
    }

    /// Asks a yes/no helper of the primordials about `v`.
    fn ask(&self, helper: RawRef, v: Raw) -> HostResult<bool> {
        let h = self.host();
        let f = self
            .deref(helper)
            .map_err(|e| HostFailure::new("Error", e))?;
        h.undefined()
            .and_then(|undef| h.call(undef, f, &[v]))
            .and_then(|d| h.boolean(d))
            .map_err(|e| HostFailure::new("Error", e))
    }

    /// The host side never changes a primordial, whatever asks.
    fn refuse_primordial(&self, obj: Raw) -> HostResult<()> {
        if self.ask(self.prim.is_denied, obj)? {
            return Err(HostFailure::new(
                "TypeError",
                "host built-ins cannot be changed from the sandbox",
            ));
        }
        Ok(())
    }

    fn kind_of(&self, v: Raw) -> RefKind {
        let h = self.host();
        if h.is_promise(v) {
            RefKind::Promise
        } else if h.type_of(v) == sys::ValueType::napi_function {
            RefKind::Function
        } else if h.is_array(v) {
            RefKind::Array
        } else {
            RefKind::Object
        }
    }

    /// Converts a guest value for the host: handles unwrap to the same host object, callbacks
    /// become host functions, plain data is copied into fresh host objects.
    pub fn outgoing(&self, w: ToHost) -> HostResult<Raw> {
        let h = self.host();
        let fail = |e: String| HostFailure::new("TypeError", e);
        Ok(match w {
            ToHost::Prim(d) => write(h, &d).map_err(fail)?,
            ToHost::Ref(id) => self.value(id)?,
            ToHost::Callback(cb) => self.callback(cb)?,
            ToHost::Array(items) => {
                let arr = h.create_array(items.len()).map_err(fail)?;
                for (i, item) in items.into_iter().enumerate() {
                    h.set_element(arr, i as u32, self.outgoing(item)?)
                        .map_err(fail)?;
                }
                arr
            }
            ToHost::Object(entries) => {
                let obj = h.create_object().map_err(fail)?;
                for (k, v) in entries {
                    h.set_own(obj, &k, self.outgoing(v)?).map_err(fail)?;
                }
                obj
            }
            ToHost::Date(ms) => write(h, &Data::Date(ms)).map_err(fail)?,
            ToHost::Map(entries) => {
                let map = write(h, &Data::Map(Vec::new())).map_err(fail)?;
                let set = h.get_named(map, "set").map_err(fail)?;
                for (k, v) in entries {
                    h.call(map, set, &[self.outgoing(k)?, self.outgoing(v)?])
                        .map_err(fail)?;
                }
                map
            }
            ToHost::Set(items) => {
                let set_obj = write(h, &Data::Set(Vec::new())).map_err(fail)?;
                let add = h.get_named(set_obj, "add").map_err(fail)?;
                for v in items {
                    h.call(set_obj, add, &[self.outgoing(v)?]).map_err(fail)?;
                }
                set_obj
            }
        })
    }

    fn key(&self, key: &Key) -> HostResult<Raw> {
        match key {
            Key::Name(s) => self
                .host()
                .create_str(s)
                .map_err(|e| HostFailure::new("TypeError", e)),
            Key::Symbol(name) => {
                let r = self.prim.symbols.get(name.as_str()).copied();
                let r = r.ok_or_else(|| HostFailure::new("TypeError", "unsupported symbol"))?;
                self.deref(r).map_err(|e| HostFailure::new("Error", e))
            }
        }
    }

    /// The host function standing for guest callback `cb` (one per callback, so identity holds).
    fn callback(&self, cb: u32) -> HostResult<Raw> {
        if let Some(r) = self.callbacks.borrow().get(&cb).copied() {
            return self.deref(r).map_err(|e| HostFailure::new("Error", e));
        }
        let data = CallbackData {
            bridge: self.me.borrow().clone(),
            cb,
        };
        let f = self
            .host
            .create_function("sandboxCallback", call_guest, data)
            .map_err(|e| HostFailure::new("Error", e))?;
        let r = self
            .reference(f)
            .map_err(|e| HostFailure::new("Error", e))?;
        self.callbacks.borrow_mut().insert(cb, r);
        Ok(f)
    }

    fn settled(&self, settle: u32, outcome: Result<FromHost, HostFailure>) {
        self.promises.settled(settle, outcome);
        let wake = *self.wake.borrow();
        if let Some(w) = wake {
            if let Ok(f) = self.deref(w) {
                let h = self.host();
                if let Ok(undef) = h.undefined() {
                    let _ = h.call(undef, f, &[]);
                }
            }
        }
    }

    /// Drops every reference the run holds (its host values, its identity map, callbacks and
    /// the wake function); guest callbacks kept by the host go dead. Runs once; later calls and
    /// the drop do nothing.
    pub fn release(&self) {
        if self.released.replace(true) {
            return;
        }
        if !env_alive(self.host.env()) {
            self.handles.borrow_mut().clear();
            self.callbacks.borrow_mut().clear();
            self.wake.borrow_mut().take();
            self.identity.set(std::ptr::null_mut());
            return;
        }
        for (r, _) in self.handles.borrow_mut().drain(..) {
            self.host.delete_reference(r);
        }
        for (_, r) in self.callbacks.borrow_mut().drain() {
            self.host.delete_reference(r);
        }
        if let Some(w) = self.wake.borrow_mut().take() {
            self.host.delete_reference(w);
        }
        self.host
            .delete_reference(self.identity.replace(std::ptr::null_mut()));
        *self.guest.borrow_mut() = Weak::new();
    }
}

impl Drop for NapiBridge {
    /// A run that was never finished (its driver dropped it, or a panic unwound past it) still
    /// gives its references back when it is collected.
    fn drop(&mut self) {
        self.release();
    }
}

struct CallbackData {
    bridge: Weak<NapiBridge>,
    cb: u32,
}

fn throw_host(h: Host, f: &HostFailure) {
    h.throw_error("SANDBOX_CALLBACK", &f.name, &f.message);
}

/// A host call into a guest callback.
///
/// # Safety
/// Called by N-API only, for a function made by `create_function` with `CallbackData`.
unsafe extern "C" fn call_guest(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    // SAFETY: N-API passes the env and info of this callback.
    let (h, call) = unsafe {
        (
            Host::from_raw(env),
            callback_info(env, info, MAX_CALLBACK_ARGS),
        )
    };
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // SAFETY: the data pointer of a `call_guest` function is its `CallbackData`, freed only
        // when the function is collected (which cannot happen during this call).
        let data = unsafe { (call.data as *const CallbackData).as_ref() };
        call_guest_inner(h, data, call.this, &call.args)
    }));
    match result {
        Ok(Ok(v)) => v,
        Ok(Err(f)) => {
            throw_host(h, &f);
            std::ptr::null_mut()
        }
        Err(_) => {
            throw_host(
                h,
                &HostFailure::new("Error", "quickrealm: internal error in a sandbox callback"),
            );
            std::ptr::null_mut()
        }
    }
}

/// Most arguments a host call passes on to a guest callback.
const MAX_CALLBACK_ARGS: usize = 16;

fn call_guest_inner(
    h: Host,
    data: Option<&CallbackData>,
    this: Raw,
    argv: &[Raw],
) -> HostResult<Raw> {
    let dead = || HostFailure::new("Error", "a sandbox callback was called after its run ended");
    let data = data.ok_or_else(dead)?;
    let bridge = data.bridge.upgrade().ok_or_else(dead)?;
    let guest = bridge.guest.borrow().upgrade().ok_or_else(dead)?;
    if !guest.is_alive() {
        return Err(dead());
    }
    let scope = h.escapable_scope();
    let this_in = if h.is_nullish(this) {
        FromHost::Prim(Data::Undefined)
    } else {
        bridge
            .incoming(this, false)
            .unwrap_or(FromHost::Prim(Data::Undefined))
    };
    let mut args = Vec::with_capacity(argv.len());
    for a in argv {
        args.push(bridge.incoming(*a, false)?);
    }
    let out = guest.invoke(data.cb, this_in, args)?;
    let v = bridge.outgoing(out)?;
    scope.escape(v).map_err(|e| HostFailure::new("Error", e))
}

struct SettleData {
    bridge: Weak<NapiBridge>,
    settle: u32,
    ok: bool,
}

/// A host promise settled: queue the outcome for the run and wake its driver.
///
/// # Safety
/// Called by N-API only, for a function made by `create_function` with `SettleData`.
unsafe extern "C" fn on_settle(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    // SAFETY: N-API passes the env and info of this callback.
    let (h, call) = unsafe { (Host::from_raw(env), callback_info(env, info, 1)) };
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // SAFETY: the data pointer of an `on_settle` function is its `SettleData`, freed only
        // when the function is collected (which cannot happen during this call).
        let Some(data) = (unsafe { (call.data as *const SettleData).as_ref() }) else {
            return;
        };
        let Some(bridge) = data.bridge.upgrade() else {
            return;
        };
        let value = match call.args.first() {
            Some(v) => *v,
            None => h.undefined().unwrap_or(std::ptr::null_mut()),
        };
        if bridge.released.get() {
            return;
        }
        let outcome = if data.ok {
            bridge.incoming(value, false)
        } else {
            Err(failure_from_host(h, value))
        };
        bridge.settled(data.settle, outcome);
    }));
    std::ptr::null_mut()
}

impl HostBridge for NapiBridge {
    fn get(&self, id: u32, key: &Key) -> HostResult<FromHost> {
        let _scope = self.host.scope();
        let obj = self.value(id)?;
        let k = self.key(key)?;
        let out = self
            .host
            .crossing()
            .property(obj, k)
            .map_err(|_| self.pending_failure())?;
        self.incoming(out, true)
    }

    fn get_name(&self, id: u32, name: &str) -> HostResult<FromHost> {
        let _scope = self.host.scope();
        let obj = self.value(id)?;
        let k = self
            .host
            .create_str(name)
            .map_err(|e| HostFailure::new("TypeError", e))?;
        let out = self
            .host
            .crossing()
            .property(obj, k)
            .map_err(|_| self.pending_failure())?;
        self.incoming(out, true)
    }

    fn set(&self, id: u32, key: &Key, value: ToHost) -> HostResult<()> {
        let _scope = self.host.scope();
        let obj = self.value(id)?;
        self.refuse_primordial(obj)?;
        let k = self.key(key)?;
        let v = self.outgoing(value)?;
        self.host
            .crossing()
            .set_property(obj, k, v)
            .map_err(|_| self.pending_failure())
    }

    fn has(&self, id: u32, key: &Key) -> HostResult<bool> {
        let _scope = self.host.scope();
        let obj = self.value(id)?;
        let k = self.key(key)?;
        self.host
            .crossing()
            .has_property(obj, k)
            .map_err(|_| self.pending_failure())
    }

    fn delete(&self, id: u32, key: &str) -> HostResult<bool> {
        let _scope = self.host.scope();
        let obj = self.value(id)?;
        self.refuse_primordial(obj)?;
        let k = self.key(&Key::Name(key.into()))?;
        self.host
            .crossing()
            .delete_property(obj, k)
            .map_err(|_| self.pending_failure())
    }

    fn own_keys(&self, id: u32) -> HostResult<Vec<String>> {
        let _scope = self.host.scope();
        let obj = self.value(id)?;
        let h = self.host().crossing();
        let keys = h
            .own_string_keys(obj, false)
            .map_err(|_| self.pending_failure())?;
        keys.into_iter()
            .map(|k| h.string(k).map_err(|e| HostFailure::new("Error", e)))
            .collect()
    }

    fn describe(&self, id: u32, key: &str) -> HostResult<Option<bool>> {
        let _scope = self.host.scope();
        let obj = self.value(id)?;
        let h = self.host().crossing();
        let f = self
            .deref(self.prim.presence)
            .map_err(|e| HostFailure::new("Error", e))?;
        let k = h
            .create_str(key)
            .map_err(|e| HostFailure::new("Error", e))?;
        let undef = h.undefined().map_err(|e| HostFailure::new("Error", e))?;
        let presence = h
            .call(undef, f, &[obj, k])
            .map_err(|_| self.pending_failure())?;
        let p = h
            .number(presence)
            .map_err(|e| HostFailure::new("Error", e))?;
        Ok((p != 0.0).then_some(p == 1.0))
    }

    fn call(&self, id: u32, this: Option<u32>, args: Vec<ToHost>) -> HostResult<FromHost> {
        let _scope = self.host.scope();
        let f = self.value(id)?;
        let h = self.host().crossing();
        let this = match this {
            Some(t) => self.value(t)?,
            None => h.undefined().map_err(|e| HostFailure::new("Error", e))?,
        };
        let argv = args
            .into_iter()
            .map(|a| self.outgoing(a))
            .collect::<HostResult<Vec<_>>>()?;
        let out = h.call(this, f, &argv).map_err(|_| self.pending_failure())?;
        self.incoming(out, false)
    }

    fn construct(&self, id: u32, args: Vec<ToHost>) -> HostResult<FromHost> {
        let _scope = self.host.scope();
        let f = self.value(id)?;
        if self.ask(self.prim.makes_code, f)? {
            return Err(HostFailure::new(
                "TypeError",
                "a host class that extends Function cannot be constructed from the sandbox",
            ));
        }
        let argv = args
            .into_iter()
            .map(|a| self.outgoing(a))
            .collect::<HostResult<Vec<_>>>()?;
        let out = self
            .host
            .crossing()
            .new_instance(f, &argv)
            .map_err(|_| self.pending_failure())?;
        self.incoming(out, false)
    }

    fn call_method(&self, method: u32, this: u32, args: Vec<ToHost>) -> HostResult<FromHost> {
        let _scope = self.host.scope();
        let receiver = self.value(this)?;
        let h = self.host().crossing();
        let methods = self
            .deref(self.prim.methods)
            .map_err(|e| HostFailure::new("Error", e))?;
        let f = h
            .element(methods, method)
            .map_err(|e| HostFailure::new("Error", e))?;
        if method == 0 || h.type_of(f) != sys::ValueType::napi_function {
            return Err(HostFailure::new("TypeError", "unknown host method"));
        }
        let argv = args
            .into_iter()
            .map(|a| self.outgoing(a))
            .collect::<HostResult<Vec<_>>>()?;
        let out = h
            .call(receiver, f, &argv)
            .map_err(|_| self.pending_failure())?;
        self.incoming(out, false)
    }

    fn then(&self, id: u32, settle: u32) -> HostResult<()> {
        let _scope = self.host.scope();
        let promise = self.value(id)?;
        let h = self.host().crossing();
        let then = h
            .get_named(promise, "then")
            .map_err(|_| self.pending_failure())?;
        let mut fns = [std::ptr::null_mut(); 2];
        for (i, ok) in [true, false].into_iter().enumerate() {
            let data = SettleData {
                bridge: self.me.borrow().clone(),
                settle,
                ok,
            };
            fns[i] = h
                .create_function("settle", on_settle, data)
                .map_err(|e| HostFailure::new("Error", e))?;
        }
        h.call(promise, then, &fns)
            .map_err(|_| self.pending_failure())?;
        self.promises.awaiting();
        Ok(())
    }

    fn attach(&self, guest: &Rc<GuestHandle>) {
        *self.guest.borrow_mut() = Rc::downgrade(guest);
    }
}

/// Where a live run stands after `pump()`.
#[napi(string_enum)]
pub enum LiveStep {
    /// Call `finish()` for the result.
    #[napi(value = "finished")]
    Finished,
    /// The guest awaits a host promise: pump again when `wake` fires, or at the deadline.
    #[napi(value = "waiting")]
    Waiting,
    /// The run's time slice is spent: pump again after the event loop had a turn.
    #[napi(value = "paused")]
    Paused,
}

impl From<Step> for LiveStep {
    fn from(step: Step) -> Self {
        match step {
            Step::Finished => LiveStep::Finished,
            Step::Waiting => LiveStep::Waiting,
            Step::Paused => LiveStep::Paused,
        }
    }
}

/// A run's request with its live globals, ready to start.
struct Prepared {
    request: RunRequest,
    live: LiveGlobals,
    bridge: Rc<NapiBridge>,
}

fn prepare(h: Host, parsed: ParsedRun, wake: Option<Raw>) -> Result<Prepared, ErrorInfo> {
    if parsed.wants_workspace {
        return Err(ErrorInfo::invalid(
            "workspace and globals cannot be combined in one run",
        ));
    }
    let bridge = NapiBridge::new(h).map_err(ErrorInfo::internal)?;
    if let Some(w) = wake {
        let r = bridge
            .host
            .create_weak_reference(w)
            .map_err(ErrorInfo::internal)?;
        *bridge.wake.borrow_mut() = Some(r);
    }
    let mut globals = Vec::new();
    for (name, raw) in &parsed.globals {
        match bridge.incoming(*raw, false) {
            Ok(v) => globals.push((name.clone(), v)),
            Err(f) => {
                bridge.release();
                return Err(ErrorInfo::invalid(format!("globals.{name}: {}", f.message)));
            }
        }
    }
    let live = LiveGlobals {
        bridge: bridge.clone(),
        globals,
        budget: parsed.request.limits.host_calls,
        slicer: None,
    };
    Ok(Prepared {
        request: parsed.request,
        live,
        bridge,
    })
}

/// Runs a live run to completion on the calling thread (runSync with globals).
pub fn run_to_end(h: Host, parsed: ParsedRun, cancel: CancelToken) -> RunOutcome {
    match prepare(h, parsed, None) {
        Ok(p) => {
            let promises = p.bridge.promises.clone();
            let outcome = engine_live::run_to_end(p.request, &cancel, p.live, &promises);
            p.bridge.release();
            outcome
        }
        Err(e) => RunOutcome::failed(e),
    }
}

/// A run with live host values, driven from JavaScript in time slices on the main thread:
/// `pump()` until it reports `finished` (again at once after `paused`, when `wake` fires after
/// `waiting`), then `finish()`.
#[napi]
pub struct LiveRun {
    run: SlicedRun,
    bridge: Option<Rc<NapiBridge>>,
}

#[napi]
impl LiveRun {
    /// Prepares a run with live `globals` on the main thread; it starts at the first `pump()`.
    #[napi(
        factory,
        catch_unwind,
        ts_args_type = "source: string, options: RunOptions, cancel: CancelHandle | null, wake: () => void, world?: NativeWorld | null"
    )]
    pub fn start(
        env: Env,
        source: Unknown,
        options: Unknown,
        cancel: Option<&CancelHandle>,
        wake: Unknown,
        world: Option<&NativeWorld>,
    ) -> LiveRun {
        let h = Host::of(&env);
        let token = cancel.map(|c| c.token()).unwrap_or_default();
        let prepared = options::parse_run(h, source.raw(), Some(options.raw()), None)
            .and_then(|parsed| prepare(h, parsed, Some(wake.raw())))
            .map(|mut p| {
                // A session turn's native `world`, installed once the live globals are bound.
                p.request.extension = world.map(NativeWorld::extension);
                p
            });
        match prepared {
            Ok(p) => {
                let promises = p.bridge.promises.clone();
                LiveRun {
                    run: SlicedRun::start(p.request, &token, p.live, promises),
                    bridge: Some(p.bridge),
                }
            }
            Err(e) => LiveRun {
                run: SlicedRun::ended(RunOutcome::failed(e)),
                bridge: None,
            },
        }
    }

    /// Runs the guest for one time slice at most.
    #[napi(catch_unwind)]
    pub fn pump(&mut self) -> LiveStep {
        self.run.step().into()
    }

    /// Milliseconds until the run's deadline (for the wrapper's timer).
    #[napi(catch_unwind)]
    pub fn remaining_ms(&self) -> f64 {
        self.run.remaining_ms()
    }

    /// Ends the run and returns its result; every host handle is released.
    #[napi(
        catch_unwind,
        ts_return_type = "NativeRunResult | string | [string, Buffer]"
    )]
    pub fn finish(&mut self) -> RunReply {
        let outcome = self.run.finish();
        if let Some(b) = self.bridge.take() {
            b.release();
        }
        outcome.into()
    }
}
