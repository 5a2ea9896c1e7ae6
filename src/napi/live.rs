//! Live host values for runs on the main thread: the N-API side of the membrane (`HostBridge`),
//! host functions that call back into the guest, and `LiveRun`, the resumable run the
//! JavaScript wrapper drives across event-loop turns while host promises settle.
// `napi_value`s are opaque handles that N-API itself validates; passing one is not a dereference.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

use super::host::{write, Host, Raw};
use super::options::{self, ParsedRun};
use super::results::NativeRunResult;
use super::CancelHandle;
use crate::engine::errors::ErrorInfo;
use crate::engine::live::{HostPromises, LiveRun as EngineLiveRun};
use crate::engine::marshal::Data;
use crate::engine::membrane::{
    FromHost, GuestHandle, HostBridge, HostFailure, HostResult, Key, RefKind, ToHost,
};
use crate::engine::run::LiveGlobals;
use crate::engine::{CancelToken, RunOutcome};
use napi::bindgen_prelude::{Env, JsValue, Unknown};
use napi::sys;
use napi_derive::napi;
use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::c_void;
use std::ptr;
use std::rc::{Rc, Weak};

/// Host values the guest must never obtain, whatever path leads to them.
const DENIED_GLOBAL_PATHS: &[&[&str]] = &[
    &[],
    &["Function"],
    &["eval"],
    &["process"],
    &["require"],
    &["Object", "prototype"],
    &["Function", "prototype"],
    &["Array", "prototype"],
];
const DENIED_BY_SYNTAX: &str = "[Object.getPrototypeOf(async function(){}).constructor, \
    Object.getPrototypeOf(function*(){}).constructor, Object.getPrototypeOf(async function*(){}).constructor]";

pub struct NapiBridge {
    env: sys::napi_env,
    /// Handle id -> reference; id 0 is the "denied" sentinel and never handed out.
    handles: RefCell<Vec<sys::napi_ref>>,
    /// Host `Map` from object to handle id (identity), pre-seeded with denied values -> 0.
    identity: sys::napi_ref,
    map_get: sys::napi_ref,
    map_set: sys::napi_ref,
    describe: sys::napi_ref,
    symbols: HashMap<&'static str, sys::napi_ref>,
    callbacks: RefCell<HashMap<u32, sys::napi_ref>>,
    guest: RefCell<Weak<GuestHandle>>,
    promises: Rc<HostPromises>,
    wake: RefCell<Option<sys::napi_ref>>,
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

/// A scope for napi values created during one crossing.
struct Scope {
    env: sys::napi_env,
    scope: sys::napi_handle_scope,
}

impl Scope {
    fn open(env: sys::napi_env) -> Scope {
        let mut scope = ptr::null_mut();
        unsafe { sys::napi_open_handle_scope(env, &mut scope) };
        Scope { env, scope }
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        if !self.scope.is_null() {
            unsafe { sys::napi_close_handle_scope(self.env, self.scope) };
        }
    }
}

impl NapiBridge {
    fn host(&self) -> Host {
        Host::new(self.env)
    }

    fn reference(&self, v: Raw) -> Result<sys::napi_ref, String> {
        let mut r = ptr::null_mut();
        let s = unsafe { sys::napi_create_reference(self.env, v, 1, &mut r) };
        if s != sys::Status::napi_ok {
            return Err("could not keep a host value".into());
        }
        Ok(r)
    }

    fn deref(&self, r: sys::napi_ref) -> Result<Raw, String> {
        let mut v = ptr::null_mut();
        let s = unsafe { sys::napi_get_reference_value(self.env, r, &mut v) };
        if s != sys::Status::napi_ok || v.is_null() {
            return Err("a host handle is no longer valid".into());
        }
        Ok(v)
    }

    pub fn new(env: sys::napi_env) -> Result<Rc<NapiBridge>, String> {
        let h = Host::new(env);
        let global = h.global()?;
        let map_ctor = h.get_named(global, "Map")?;
        let identity_map = h.new_instance(map_ctor, &[])?;
        let map_proto = h.get_named(map_ctor, "prototype")?;
        let object_ctor = h.get_named(global, "Object")?;
        let symbol_ctor = h.get_named(global, "Symbol")?;
        let mk = |v: Raw| -> Result<sys::napi_ref, String> {
            let mut r = ptr::null_mut();
            unsafe { sys::napi_create_reference(env, v, 1, &mut r) };
            if r.is_null() {
                Err("could not keep a host value".into())
            } else {
                Ok(r)
            }
        };
        let mut symbols = HashMap::new();
        for name in [
            "iterator",
            "asyncIterator",
            "toPrimitive",
            "toStringTag",
            "hasInstance",
        ] {
            symbols.insert(name, mk(h.get_named(symbol_ctor, name)?)?);
        }
        let bridge = Rc::new(NapiBridge {
            env,
            handles: RefCell::new(vec![ptr::null_mut()]),
            identity: mk(identity_map)?,
            map_get: mk(h.get_named(map_proto, "get")?)?,
            map_set: mk(h.get_named(map_proto, "set")?)?,
            describe: mk(h.get_named(object_ctor, "getOwnPropertyDescriptor")?)?,
            symbols,
            callbacks: RefCell::new(HashMap::new()),
            guest: RefCell::new(Weak::new()),
            promises: Rc::default(),
            wake: RefCell::new(None),
            me: RefCell::new(Weak::new()),
        });
        *bridge.me.borrow_mut() = Rc::downgrade(&bridge);
        // Seed the identity map with values the guest must never reach.
        let set = bridge.deref(bridge.map_set)?;
        let zero = h.create_number(0.0)?;
        for path in DENIED_GLOBAL_PATHS {
            let mut v = global;
            let mut found = true;
            for part in *path {
                match h.get_named(v, part) {
                    Ok(next) if !h.is_nullish(next) => v = next,
                    _ => {
                        found = false;
                        break;
                    }
                }
            }
            if found {
                h.call(identity_map, set, &[v, zero])?;
            }
        }
        let script = h.create_str(DENIED_BY_SYNTAX)?;
        let mut ctors = ptr::null_mut();
        if unsafe { sys::napi_run_script(env, script, &mut ctors) } == sys::Status::napi_ok {
            for i in 0..h.array_length(ctors)? {
                h.call(identity_map, set, &[h.element(ctors, i)?, zero])?;
            }
        } else {
            let _ = h.take_exception();
        }
        Ok(bridge)
    }

    fn pending_failure(&self) -> HostFailure {
        let h = self.host();
        let mut exc = ptr::null_mut();
        let mut pending = false;
        unsafe { sys::napi_is_exception_pending(self.env, &mut pending) };
        if pending {
            unsafe { sys::napi_get_and_clear_last_exception(self.env, &mut exc) };
            return failure_from_host(h, exc);
        }
        HostFailure::new("Error", "a host operation failed")
    }

    fn check(&self, status: sys::napi_status) -> HostResult<()> {
        if status == sys::Status::napi_ok {
            Ok(())
        } else {
            Err(self.pending_failure())
        }
    }

    fn value(&self, id: u32) -> HostResult<Raw> {
        let r = self
            .handles
            .borrow()
            .get(id as usize)
            .copied()
            .filter(|r| !r.is_null());
        let r = r.ok_or_else(|| HostFailure::new("TypeError", "unknown host handle"))?;
        self.deref(r).map_err(|e| HostFailure::new("Error", e))
    }

    /// Converts a host value for the guest: primitives copied, objects by handle (one id per
    /// object, so identity holds), promises as promise handles.
    pub fn incoming(&self, v: Raw) -> HostResult<FromHost> {
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
                let mut reader = super::host::HostReader::new(h, Default::default());
                Some(reader.read(v, "value").map_err(fail)?)
            }
            sys::ValueType::napi_symbol => Some(Data::Undefined),
            _ => None,
        };
        if let Some(d) = prim {
            return Ok(FromHost::Prim(d));
        }
        let map = self.deref(self.identity).map_err(fail)?;
        let get = self.deref(self.map_get).map_err(fail)?;
        let known = h.call(map, get, &[v]).map_err(fail)?;
        if h.type_of(known) == sys::ValueType::napi_number {
            let id = h.number(known).map_err(fail)? as u32;
            if id == 0 {
                return Err(HostFailure::new(
                    "TypeError",
                    "this host value is not reachable from the sandbox",
                ));
            }
            return Ok(FromHost::Ref(id, self.kind_of(v)));
        }
        let id = {
            let mut handles = self.handles.borrow_mut();
            handles.push(self.reference(v).map_err(fail)?);
            (handles.len() - 1) as u32
        };
        let set = self.deref(self.map_set).map_err(fail)?;
        h.call(map, set, &[v, h.create_number(id as f64).map_err(fail)?])
            .map_err(fail)?;
        Ok(FromHost::Ref(id, self.kind_of(v)))
    }

    fn kind_of(&self, v: Raw) -> RefKind {
        let h = self.host();
        let mut is_promise = false;
        unsafe { sys::napi_is_promise(self.env, v, &mut is_promise) };
        if is_promise {
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
                let r = self.symbols.get(name.as_str()).copied();
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
        let f = self.host_function("sandboxCallback", call_guest, data)?;
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

    /// Drops every reference the run holds; guest callbacks kept by the host go dead.
    pub fn release(&self) {
        for r in self.handles.borrow_mut().drain(..) {
            if !r.is_null() {
                unsafe { sys::napi_delete_reference(self.env, r) };
            }
        }
        for (_, r) in self.callbacks.borrow_mut().drain() {
            unsafe { sys::napi_delete_reference(self.env, r) };
        }
        if let Some(w) = self.wake.borrow_mut().take() {
            unsafe { sys::napi_delete_reference(self.env, w) };
        }
        *self.guest.borrow_mut() = Weak::new();
    }
}

/// Frees the data box of a host function created by `host_function`.
unsafe extern "C" fn free_boxed<T>(_env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
    if !data.is_null() {
        drop(unsafe { Box::from_raw(data as *mut T) });
    }
}

type NativeCallback =
    unsafe extern "C" fn(sys::napi_env, sys::napi_callback_info) -> sys::napi_value;

impl NapiBridge {
    /// A host function backed by `cb`, owning `data` until the function is collected.
    fn host_function<T>(&self, name: &str, cb: NativeCallback, data: T) -> HostResult<Raw> {
        let data = Box::into_raw(Box::new(data));
        let mut f = ptr::null_mut();
        // SAFETY: `data` stays valid until the finalizer registered below frees it.
        let s = unsafe {
            sys::napi_create_function(
                self.env,
                name.as_ptr() as *const _,
                name.len() as isize,
                Some(cb),
                data as *mut c_void,
                &mut f,
            )
        };
        if s != sys::Status::napi_ok {
            drop(unsafe { Box::from_raw(data) });
            return Err(self.pending_failure());
        }
        unsafe {
            sys::napi_add_finalizer(
                self.env,
                f,
                data as *mut c_void,
                Some(free_boxed::<T>),
                ptr::null_mut(),
                ptr::null_mut(),
            )
        };
        Ok(f)
    }
}

struct CallbackData {
    bridge: Weak<NapiBridge>,
    cb: u32,
}

fn throw_host(env: sys::napi_env, f: &HostFailure) {
    let h = Host::new(env);
    let (Ok(msg), Ok(code)) = (h.create_str(&f.message), h.create_str("SANDBOX_CALLBACK")) else {
        return;
    };
    let mut err = ptr::null_mut();
    unsafe { sys::napi_create_error(env, code, msg, &mut err) };
    if let Ok(name) = h.create_str(&f.name) {
        let _ = h.set_own(err, "name", name);
    }
    unsafe { sys::napi_throw(env, err) };
}

/// A host call into a guest callback.
unsafe extern "C" fn call_guest(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| unsafe {
        call_guest_inner(env, info)
    }));
    match result {
        Ok(Ok(v)) => v,
        Ok(Err(f)) => {
            throw_host(env, &f);
            ptr::null_mut()
        }
        Err(_) => {
            throw_host(
                env,
                &HostFailure::new("Error", "quickrealm: internal error in a sandbox callback"),
            );
            ptr::null_mut()
        }
    }
}

unsafe fn call_guest_inner(env: sys::napi_env, info: sys::napi_callback_info) -> HostResult<Raw> {
    let mut argc: usize = 16;
    let mut argv = [ptr::null_mut(); 16];
    let mut this = ptr::null_mut();
    let mut data: *mut c_void = ptr::null_mut();
    unsafe {
        sys::napi_get_cb_info(
            env,
            info,
            &mut argc,
            argv.as_mut_ptr(),
            &mut this,
            &mut data,
        )
    };
    let dead = || HostFailure::new("Error", "a sandbox callback was called after its run ended");
    let data = unsafe { (data as *const CallbackData).as_ref() }.ok_or_else(dead)?;
    let bridge = data.bridge.upgrade().ok_or_else(dead)?;
    let guest = bridge.guest.borrow().upgrade().ok_or_else(dead)?;
    if !guest.is_alive() {
        return Err(dead());
    }
    let mut scope = ptr::null_mut();
    unsafe { sys::napi_open_escapable_handle_scope(env, &mut scope) };
    let result = (|| {
        let this_in = if Host::new(env).is_nullish(this) {
            FromHost::Prim(Data::Undefined)
        } else {
            bridge
                .incoming(this)
                .unwrap_or(FromHost::Prim(Data::Undefined))
        };
        let mut args = Vec::with_capacity(argc.min(16));
        for a in argv.iter().take(argc.min(16)) {
            args.push(bridge.incoming(*a)?);
        }
        let out = guest.invoke(data.cb, this_in, args)?;
        let v = bridge.outgoing(out)?;
        let mut escaped = ptr::null_mut();
        unsafe { sys::napi_escape_handle(env, scope, v, &mut escaped) };
        Ok(escaped)
    })();
    unsafe { sys::napi_close_escapable_handle_scope(env, scope) };
    result
}

struct SettleData {
    bridge: Weak<NapiBridge>,
    settle: u32,
    ok: bool,
}

unsafe extern "C" fn on_settle(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut argc: usize = 1;
        let mut argv = [ptr::null_mut(); 1];
        let mut data: *mut c_void = ptr::null_mut();
        unsafe {
            sys::napi_get_cb_info(
                env,
                info,
                &mut argc,
                argv.as_mut_ptr(),
                ptr::null_mut(),
                &mut data,
            )
        };
        let Some(data) = (unsafe { (data as *const SettleData).as_ref() }) else {
            return;
        };
        let Some(bridge) = data.bridge.upgrade() else {
            return;
        };
        let h = Host::new(env);
        let value = if argc >= 1 {
            argv[0]
        } else {
            h.undefined().unwrap_or(ptr::null_mut())
        };
        let outcome = if data.ok {
            bridge.incoming(value)
        } else {
            Err(failure_from_host(h, value))
        };
        bridge.settled(data.settle, outcome);
    }));
    ptr::null_mut()
}

impl HostBridge for NapiBridge {
    fn get(&self, id: u32, key: &Key) -> HostResult<FromHost> {
        let _scope = Scope::open(self.env);
        let obj = self.value(id)?;
        let k = self.key(key)?;
        let mut out = ptr::null_mut();
        self.check(unsafe { sys::napi_get_property(self.env, obj, k, &mut out) })?;
        self.incoming(out)
    }

    fn set(&self, id: u32, key: &Key, value: ToHost) -> HostResult<()> {
        let _scope = Scope::open(self.env);
        let obj = self.value(id)?;
        let k = self.key(key)?;
        let v = self.outgoing(value)?;
        self.check(unsafe { sys::napi_set_property(self.env, obj, k, v) })
    }

    fn has(&self, id: u32, key: &Key) -> HostResult<bool> {
        let _scope = Scope::open(self.env);
        let obj = self.value(id)?;
        let k = self.key(key)?;
        let mut r = false;
        self.check(unsafe { sys::napi_has_property(self.env, obj, k, &mut r) })?;
        Ok(r)
    }

    fn delete(&self, id: u32, key: &str) -> HostResult<bool> {
        let _scope = Scope::open(self.env);
        let obj = self.value(id)?;
        let k = self.key(&Key::Name(key.into()))?;
        let mut r = false;
        self.check(unsafe { sys::napi_delete_property(self.env, obj, k, &mut r) })?;
        Ok(r)
    }

    fn own_keys(&self, id: u32) -> HostResult<Vec<String>> {
        let _scope = Scope::open(self.env);
        let obj = self.value(id)?;
        let h = self.host();
        let keys = h
            .own_string_keys(obj, false)
            .map_err(|_| self.pending_failure())?;
        keys.into_iter()
            .map(|k| h.string(k).map_err(|e| HostFailure::new("Error", e)))
            .collect()
    }

    fn describe(&self, id: u32, key: &str) -> HostResult<Option<bool>> {
        let _scope = Scope::open(self.env);
        let obj = self.value(id)?;
        let h = self.host();
        let f = self
            .deref(self.describe)
            .map_err(|e| HostFailure::new("Error", e))?;
        let k = h
            .create_str(key)
            .map_err(|e| HostFailure::new("Error", e))?;
        let undef = h.undefined().map_err(|e| HostFailure::new("Error", e))?;
        let d = h
            .call(undef, f, &[obj, k])
            .map_err(|_| self.pending_failure())?;
        if h.is_nullish(d) {
            return Ok(None);
        }
        let e = h
            .get_named(d, "enumerable")
            .and_then(|v| h.boolean(v))
            .unwrap_or(false);
        Ok(Some(e))
    }

    fn call(&self, id: u32, this: Option<u32>, args: Vec<ToHost>) -> HostResult<FromHost> {
        let _scope = Scope::open(self.env);
        let f = self.value(id)?;
        let h = self.host();
        let this = match this {
            Some(t) => self.value(t)?,
            None => h.undefined().map_err(|e| HostFailure::new("Error", e))?,
        };
        let argv = args
            .into_iter()
            .map(|a| self.outgoing(a))
            .collect::<HostResult<Vec<_>>>()?;
        let mut out = ptr::null_mut();
        self.check(unsafe {
            sys::napi_call_function(self.env, this, f, argv.len(), argv.as_ptr(), &mut out)
        })?;
        self.incoming(out)
    }

    fn construct(&self, id: u32, args: Vec<ToHost>) -> HostResult<FromHost> {
        let _scope = Scope::open(self.env);
        let f = self.value(id)?;
        let argv = args
            .into_iter()
            .map(|a| self.outgoing(a))
            .collect::<HostResult<Vec<_>>>()?;
        let mut out = ptr::null_mut();
        self.check(unsafe {
            sys::napi_new_instance(self.env, f, argv.len(), argv.as_ptr(), &mut out)
        })?;
        self.incoming(out)
    }

    fn then(&self, id: u32, settle: u32) -> HostResult<()> {
        let _scope = Scope::open(self.env);
        let promise = self.value(id)?;
        let h = self.host();
        let then = h
            .get_named(promise, "then")
            .map_err(|_| self.pending_failure())?;
        let mut fns = [ptr::null_mut(); 2];
        for (i, ok) in [true, false].into_iter().enumerate() {
            let data = SettleData {
                bridge: self.me.borrow().clone(),
                settle,
                ok,
            };
            fns[i] = self.host_function("settle", on_settle, data)?;
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

/// A run with live host values, driven from JavaScript: `pump()` until it reports completion,
/// calling it again whenever `wake` fires (a host promise settled), then `finish()`.
#[napi]
pub struct LiveRun {
    run: EngineLiveRun,
    bridge: Option<Rc<NapiBridge>>,
}

impl LiveRun {
    fn ended(outcome: RunOutcome) -> LiveRun {
        LiveRun {
            run: EngineLiveRun::ended(outcome),
            bridge: None,
        }
    }

    fn start_parsed(
        env: sys::napi_env,
        parsed: ParsedRun,
        cancel: CancelToken,
        wake: Option<Raw>,
    ) -> LiveRun {
        let failed = |e: ErrorInfo| LiveRun::ended(RunOutcome::failed(e));
        if parsed.wants_workspace {
            return failed(ErrorInfo::invalid(
                "workspace and globals cannot be combined in one run",
            ));
        }
        let bridge = match NapiBridge::new(env) {
            Ok(b) => b,
            Err(e) => return failed(ErrorInfo::internal(e)),
        };
        if let Some(w) = wake {
            match bridge.reference(w) {
                Ok(r) => *bridge.wake.borrow_mut() = Some(r),
                Err(e) => return failed(ErrorInfo::internal(e)),
            }
        }
        let mut globals = Vec::new();
        for (name, raw) in &parsed.globals {
            match bridge.incoming(*raw) {
                Ok(v) => globals.push((name.clone(), v)),
                Err(f) => {
                    bridge.release();
                    return failed(ErrorInfo::invalid(format!("globals.{name}: {}", f.message)));
                }
            }
        }
        let live = LiveGlobals {
            bridge: bridge.clone(),
            globals,
            budget: parsed.request.limits.host_calls,
        };
        let run = EngineLiveRun::start(parsed.request, &cancel, live, bridge.promises.clone());
        LiveRun {
            run,
            bridge: Some(bridge),
        }
    }

    /// The run's outcome; every host handle is released.
    fn outcome(&mut self) -> RunOutcome {
        let outcome = self.run.finish();
        if let Some(b) = self.bridge.take() {
            b.release();
        }
        outcome
    }

    /// Runs a live run to completion on the calling thread (runSync with globals).
    pub fn run_to_end(env: sys::napi_env, parsed: ParsedRun, cancel: CancelToken) -> RunOutcome {
        let LiveRun { run, bridge } = LiveRun::start_parsed(env, parsed, cancel, None);
        let outcome = run.run_to_end();
        if let Some(b) = bridge {
            b.release();
        }
        outcome
    }
}

#[napi]
impl LiveRun {
    /// Starts a run with live `globals` on the main thread.
    #[napi(
        factory,
        catch_unwind,
        ts_args_type = "source: string, options: object, cancel: CancelHandle | null, wake: () => void"
    )]
    pub fn start(
        env: Env,
        source: Unknown,
        options: Unknown,
        cancel: Option<&CancelHandle>,
        wake: Unknown,
    ) -> LiveRun {
        let h = Host::new(env.raw());
        let token = cancel.map(|c| c.token()).unwrap_or_default();
        match options::parse_run(h, source.raw(), Some(options.raw())) {
            Ok(parsed) => LiveRun::start_parsed(env.raw(), parsed, token, Some(wake.raw())),
            Err(e) => LiveRun::ended(RunOutcome::failed(e)),
        }
    }

    /// Advances the run; true when it has finished (call `finish`), false while it waits.
    #[napi(catch_unwind)]
    pub fn pump(&mut self) -> bool {
        self.run.step()
    }

    /// Milliseconds until the run's deadline (for the wrapper's timer).
    #[napi(catch_unwind)]
    pub fn remaining_ms(&self) -> f64 {
        self.run.remaining_ms()
    }

    /// Ends the run and returns its result; every host handle is released.
    #[napi(catch_unwind)]
    pub fn finish(&mut self) -> NativeRunResult {
        self.outcome().into()
    }
}
