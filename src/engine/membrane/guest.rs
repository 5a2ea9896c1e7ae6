//! Installing the membrane in a realm: the guest half (`guest.js`) built once per
//! realm over the native functions it crosses into the host with, and each live run attached
//! to it with its own bridge and its own state in the guest half.

use super::super::raw;
use super::super::realm::{throw_uncatchable, RunSlot};
use super::bridge::{GuestHandle, HostBridge};
use super::protocol::*;
use super::trap::{native_get_trap, Generic, GenericMagic};
use rquickjs::{qjs, Array, Ctx, Function, Object, Persistent, Value};
use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};

pub(super) const GUEST_HALF: &str = include_str!("guest.js");

/// The guest half and this run's state object in it (see `guest.js`), saved in the
/// run's own context.
#[derive(Clone)]
pub(super) struct GuestHalf {
    pub(super) kernel: Persistent<Object<'static>>,
    pub(super) run: Persistent<Object<'static>>,
}

impl GuestHalf {
    pub(super) fn restore<'js>(
        self,
        ctx: &Ctx<'js>,
    ) -> rquickjs::Result<(Object<'js>, Object<'js>)> {
        Ok((self.kernel.restore(ctx)?, self.run.restore(ctx)?))
    }
}

/// The bridge of the run attached to a membrane, and its guest handle.
pub(super) type Attached = (Rc<dyn HostBridge>, Rc<GuestHandle>);

/// The live run a realm's membrane serves now. The natives are made once per realm; the run
/// they cross into is looked up here on every call.
#[derive(Default)]
pub(super) struct Serving {
    pub(super) run: RefCell<Option<Attached>>,
    /// The key a proxy's handler holds its host id under (handed over by the guest half).
    pub(super) id_key: RefCell<Option<Persistent<rquickjs::Symbol<'static>>>>,
    /// The atom of `id_key`, valid while `id_key` holds the symbol (a symbol is its own atom).
    pub(super) id_atom: Cell<Option<qjs::JSAtom>>,
}

thread_local! {
    /// The membranes of this thread's realms, indexed by the number (`magic`) their native
    /// `get` trap was made with: the trap is a plain C function and finds its membrane here.
    static SERVINGS: RefCell<Vec<Weak<Serving>>> = const { RefCell::new(Vec::new()) };
}

/// Registers a membrane for its native trap; a slot whose membrane is gone is reused.
pub(super) fn register(serving: &Rc<Serving>) -> Option<i32> {
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

pub(super) fn registered(magic: i32) -> Option<Rc<Serving>> {
    let index = usize::try_from(magic).ok()?;
    SERVINGS
        .try_with(|all| all.borrow().get(index).and_then(Weak::upgrade))
        .ok()
        .flatten()
}

impl Serving {
    pub(super) fn now(&self) -> Option<Attached> {
        self.run.borrow().clone()
    }

    pub(super) fn end(&self) {
        // Taken out first: dropping the bridge may run host code that looks here again.
        let ended = self.run.borrow_mut().take();
        drop(ended);
    }

    /// Ends `guest`'s run if it is the one attached; a handle of an earlier run, released
    /// late, must not detach the run that came after it.
    pub(super) fn end_for(&self, guest: &GuestHandle) {
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
    pub(super) kernel: Persistent<Object<'static>>,
    pub(super) serving: Rc<Serving>,
}

impl Membrane {
    pub(crate) fn new(ctx: &Ctx<'_>) -> rquickjs::Result<Membrane> {
        let serving = Rc::new(Serving::default());
        let natives = natives(ctx, &serving)?;
        let build: Function =
            raw::eval_helper(ctx, GUEST_HALF, super::super::realm::INTERNAL_FILENAME_C)?.get()?;
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

/// The native functions the guest half crosses into the host with (`N` in `guest.js`).
/// Each serves whichever run is attached to the membrane; none works between runs.
pub(super) fn natives<'js>(ctx: &Ctx<'js>, serving: &Rc<Serving>) -> rquickjs::Result<Object<'js>> {
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
    raw::freeze(ctx, &n);
    Ok(n)
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
        if !raw::define_data(ctx, &global, name, v) {
            return Ok(Some(name.clone()));
        }
    }
    Ok(None)
}
