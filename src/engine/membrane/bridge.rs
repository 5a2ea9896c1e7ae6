//! The host bridge: what the host side provides (`HostBridge`, implemented by the napi layer on
//! the thread that owns the host objects), and the guest's side of a live run that host
//! callbacks call back in through (`GuestHandle`), with its host-call budget.

use super::super::limits::StopReason;
use super::super::realm::RunSlot;
use super::super::stack;
use super::guest::{GuestHalf, Serving};
use super::protocol::*;
use rquickjs::{Array, Ctx, Function, Value};
use std::cell::{Cell, RefCell};
use std::ptr::NonNull;
use std::rc::Rc;

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
    pub(super) ctx: Cell<Option<NonNull<rquickjs::qjs::JSContext>>>,
    /// The realm's guest half and this run's state in it, both handed to every call into it.
    pub(super) guest: RefCell<Option<GuestHalf>>,
    /// The membrane this run is attached to; released with the run.
    pub(super) serving: Rc<Serving>,
    pub host_calls: Cell<u64>,
    pub(super) budget: u64,
    pub(super) slot: Rc<RunSlot>,
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

    pub(super) fn ctx<'js>(&self) -> Option<Ctx<'js>> {
        // SAFETY: the pointer is cleared (release) before the context is freed, and all use is on
        // the one thread that owns the run.
        self.ctx.get().map(|p| unsafe { Ctx::from_raw(p) })
    }

    /// Counts one crossing; false when the run must stop (deadline, cancel, or budget).
    pub(super) fn cross(&self) -> Result<(), &'static str> {
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

    pub(super) fn invoke_here(
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
pub(super) fn guest_failure(ctx: &Ctx<'_>, e: rquickjs::Error) -> HostFailure {
    if matches!(e, rquickjs::Error::Exception) {
        let exc = ctx.catch();
        if exc.is_uncatchable_error() {
            // Put it back so the guest run keeps unwinding once control returns to it.
            let _ = ctx.throw(exc);
            return HostFailure::new("Error", "the sandbox run was stopped");
        }
        let (name, message, _) = super::super::errors::describe_exception(ctx, &exc);
        HostFailure::new(&name, message)
    } else {
        HostFailure::new("Error", e.to_string())
    }
}
