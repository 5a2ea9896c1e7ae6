//! Realms prepared ahead of time. Building a realm (runtime, intrinsics, bindings, lockdown) is
//! the expensive part of a run, so plain runs take a realm that a background thread already built
//! and froze, use it exactly once, and hand it to another background thread for teardown.

use super::alloc::{HeapMeter, MeteredAllocator};
use super::errors::describe_exception;
use super::limits::{CancelToken, Limits, StopReason, Watchdog, DEFAULT_MEMORY_BYTES};
use super::membrane::{self, FromHost, GuestHandle, HostBridge};
use super::raw;
use super::realm::{self, OutputSink, RunSlot};
use super::run::{Extension, MAX_UNHANDLED_REPORTED};
use rquickjs::{qjs, Context, Ctx, Runtime, Value};
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, SyncSender, TrySendError};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::Duration;

pub struct Unhandled {
    pub entries: Vec<(usize, String)>,
    pub dropped: usize,
}

/// Live host values for a run: the bridge to the host, and the globals to bind.
pub struct LiveGlobals {
    pub bridge: Rc<dyn HostBridge>,
    pub globals: Vec<(String, FromHost)>,
    pub budget: u64,
}

/// What shapes a realm before lockdown.
pub struct RealmSpec<'a> {
    pub with_console: bool,
    /// Arrays longer than this are refused by the guarded built-ins.
    pub max_elements: f64,
    pub extension: Option<&'a Extension>,
    pub live: Option<LiveGlobals>,
}

impl RealmSpec<'_> {
    pub fn max_elements_for(memory_bytes: usize) -> f64 {
        // No dense array can hold more elements than the heap has 16-byte slots for.
        (memory_bytes / 16).max(1 << 16) as f64
    }
}

/// A built, frozen realm, used by exactly one run.
pub struct Realm {
    // Field order is drop order: the context goes before its runtime.
    pub context: Context,
    pub rt: Runtime,
    pub slot: Rc<RunSlot>,
    pub meter: Arc<HeapMeter>,
    pub unhandled: Rc<RefCell<Unhandled>>,
    pub guest: Option<Rc<GuestHandle>>,
    /// Built with the shape every pooled realm has (console present, default memory cap).
    pub standard: bool,
}

impl Realm {
    pub fn build(spec: RealmSpec<'_>) -> Result<Realm, String> {
        let meter = HeapMeter::new(Limits::default().memory_bytes);
        let rt = Runtime::new_with_alloc(MeteredAllocator::new(meter.clone()))
            .map_err(|e| format!("runtime creation failed: {e}"))?;
        // A fresh realm holds no garbage worth collecting: skip collections while building.
        rt.set_gc_threshold(BUILD_GC_THRESHOLD);
        let idle = Watchdog::new(Duration::from_secs(3600), CancelToken::new());
        let slot = RunSlot::new(idle);
        {
            let slot = slot.clone();
            let meter = meter.clone();
            rt.set_interrupt_handler(Some(Box::new(move || {
                meter.exhausted() || slot.watchdog.borrow().should_stop()
            })));
        }
        let unhandled = Rc::new(RefCell::new(Unhandled {
            entries: Vec::new(),
            dropped: 0,
        }));
        {
            let unhandled = unhandled.clone();
            rt.set_host_promise_rejection_tracker(Some(Box::new(
                move |ctx: Ctx<'_>, promise: Value<'_>, reason: Value<'_>, handled: bool| {
                    let id = raw::identity(&promise);
                    let mut u = unhandled.borrow_mut();
                    if handled {
                        u.entries.retain(|(p, _)| *p != id);
                    } else if u.entries.len() < MAX_UNHANDLED_REPORTED {
                        let (name, message, _) = describe_exception(&ctx, &reason);
                        u.entries.push((id, format!("{name}: {message}")));
                    } else {
                        u.dropped += 1;
                    }
                },
            )));
        }
        if let Some(ext) = spec.extension {
            ext.0.configure_runtime(&rt);
        }
        let context = Context::full(&rt).map_err(|e| format!("context creation failed: {e}"))?;
        let standard = spec.with_console
            && spec.extension.is_none()
            && spec.live.is_none()
            && spec.max_elements == RealmSpec::max_elements_for(DEFAULT_MEMORY_BYTES);
        let guest = context.with(|ctx| -> Result<Option<Rc<GuestHandle>>, String> {
            let mut guest = None;
            let setup = || -> rquickjs::Result<()> {
                realm::disable_codegen(&ctx)?;
                realm::tame_error_hooks(&ctx)?;
                realm::guard_unbounded_builtins(&ctx, spec.max_elements)?;
                realm::install_bindings(&ctx, &slot, spec.with_console)?;
                if let Some(ext) = spec.extension {
                    ext.0.install(&ctx)?;
                }
                let live_globals = match spec.live {
                    Some(live) => {
                        guest = Some(membrane::install(
                            &ctx,
                            live.bridge,
                            slot.clone(),
                            live.budget,
                        )?);
                        live.globals
                    }
                    None => Vec::new(),
                };
                realm::lockdown(&ctx, standard)?;
                if let Some(g) = guest.as_ref() {
                    membrane::bind_globals(&ctx, g, &live_globals)?;
                }
                Ok(())
            };
            let result = setup();
            match result {
                Ok(()) => Ok(guest),
                Err(e) => {
                    // The membrane's guest half and its native functions refer to each other;
                    // break the cycle or the runtime cannot be freed.
                    if let Some(g) = guest.take() {
                        g.release();
                    }
                    let text = super::run::exception_text(&ctx, e);
                    if text.contains(COLLISION) {
                        Err(format!(
                            "{INVALID_PREFIX}{}",
                            text.trim_start_matches("TypeError: ")
                        ))
                    } else {
                        Err(format!("realm setup failed: {text}"))
                    }
                }
            }
        })?;
        Ok(Realm {
            context,
            rt,
            slot,
            meter,
            unhandled,
            guest,
            standard,
        })
    }

    /// Prepares the realm for the run that takes it: limits, output budget, input, console mode.
    /// Must be called on the thread that executes the run.
    pub fn begin(
        &self,
        limits: &Limits,
        watchdog: Arc<Watchdog>,
        input: Option<&str>,
        capture_console: bool,
    ) {
        *self.slot.watchdog.borrow_mut() = watchdog;
        *self.slot.sink.borrow_mut() = OutputSink::new(limits.output_bytes);
        *self.slot.input.borrow_mut() = input.unwrap_or_default().to_string();
        self.slot.capture.set(capture_console);
        self.meter.set_limit(limits.memory_bytes);
        // Collect only once a run has allocated a meaningful share of its budget; short runs
        // then never pay for a full mark of the intrinsics.
        self.rt.set_gc_threshold(
            (limits.memory_bytes / 8).clamp(1 << 20, 16 << 20) + self.meter.used(),
        );
        self.enter(limits.stack_bytes);
    }

    /// Measures the stack from the current frame; call at every top-level entry into the realm.
    pub fn enter(&self, stack_bytes: usize) {
        let rt = self
            .context
            .with(|ctx| unsafe { qjs::JS_GetRuntime(ctx.as_raw().as_ptr()) });
        // SAFETY: the runtime is alive and used only by this thread.
        unsafe { qjs::JS_UpdateStackTop(rt) };
        self.rt.set_max_stack_size(stack_bytes);
    }

    pub fn stop_reason(&self) -> StopReason {
        self.slot.watchdog.borrow().reason()
    }
}

/// A realm moved to another thread as a whole. Every `Rc` it holds is shared only with objects
/// inside the same realm (its runtime's closures), so exactly one thread ever touches it.
struct Transfer(Realm);
// SAFETY: see above; the pool and the teardown thread only move realms, never share them.
unsafe impl Send for Transfer {}

pub const DEFAULT_POOL_SIZE: usize = 2;
const TEARDOWN_QUEUE: usize = 4;
const BUILD_GC_THRESHOLD: usize = 8 << 20;
/// Marks a build error caused by the caller's input rather than by quickrealm.
pub const INVALID_PREFIX: &str = "INVALID_INPUT: ";
pub const COLLISION: &str = "collides with a built-in global";

struct Pool {
    ready: Mutex<Vec<Transfer>>,
    wanted: AtomicUsize,
    refill: Condvar,
    teardown: Mutex<SyncSender<Transfer>>,
    taken: AtomicUsize,
    built: AtomicUsize,
}

static POOL: OnceLock<Pool> = OnceLock::new();

fn build_standard() -> Option<Realm> {
    Realm::build(RealmSpec {
        with_console: true,
        max_elements: RealmSpec::max_elements_for(DEFAULT_MEMORY_BYTES),
        extension: None,
        live: None,
    })
    .ok()
}

fn pool() -> &'static Pool {
    POOL.get_or_init(|| {
        // Bounded: when teardown falls behind, callers tear down themselves instead of letting
        // used realms pile up in memory.
        let (tx, rx) = sync_channel::<Transfer>(TEARDOWN_QUEUE);
        let _ = std::thread::Builder::new()
            .name("quickrealm-teardown".into())
            .spawn(move || {
                for realm in rx {
                    drop(realm);
                }
            });
        let _ = std::thread::Builder::new()
            .name("quickrealm-builder".into())
            .spawn(builder_loop);
        Pool {
            ready: Mutex::new(Vec::new()),
            wanted: AtomicUsize::new(DEFAULT_POOL_SIZE),
            refill: Condvar::new(),
            teardown: Mutex::new(tx),
            taken: AtomicUsize::new(0),
            built: AtomicUsize::new(0),
        }
    })
}

fn builder_loop() {
    let pool = pool();
    loop {
        {
            let Ok(mut ready) = pool.ready.lock() else {
                return;
            };
            while ready.len() >= pool.wanted.load(Ordering::Relaxed) {
                ready = match pool.refill.wait(ready) {
                    Ok(r) => r,
                    Err(_) => return,
                };
            }
        }
        let built = std::panic::catch_unwind(build_standard).ok().flatten();
        match built {
            Some(realm) => {
                pool.built.fetch_add(1, Ordering::Relaxed);
                let surplus = match pool.ready.lock() {
                    // The size may have shrunk while this realm was being built.
                    Ok(mut ready) if ready.len() < pool.wanted.load(Ordering::Relaxed) => {
                        ready.push(Transfer(realm));
                        None
                    }
                    _ => Some(realm),
                };
                if let Some(realm) = surplus {
                    retire(realm);
                }
            }
            None => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

/// A prepared standard realm, or a freshly built one when the pool is empty (construction is
/// then part of the run, as it would be without a pool).
pub fn take_standard() -> Option<Realm> {
    let pool = pool();
    pool.taken.fetch_add(1, Ordering::Relaxed);
    let ready = pool.ready.lock().ok().and_then(|mut r| r.pop());
    pool.refill.notify_one();
    match ready {
        Some(Transfer(realm)) => Some(realm),
        None => build_standard(),
    }
}

/// Hands a used realm to the teardown thread (never back to the pool). On a worker thread the
/// realm is torn down in place: nobody waits on that thread, and the work stays on the core that
/// the worker count accounts for.
pub fn retire(realm: Realm) {
    if super::workers::on_worker_thread() {
        drop(realm);
        return;
    }
    let rejected = match POOL.get().and_then(|p| p.teardown.lock().ok()) {
        Some(tx) => match tx.try_send(Transfer(realm)) {
            Ok(()) => None,
            Err(TrySendError::Full(t)) | Err(TrySendError::Disconnected(t)) => Some(t),
        },
        None => Some(Transfer(realm)),
    };
    drop(rejected);
}

/// Sets how many prepared realms the pool keeps ready (0 disables preparation ahead of time).
pub fn set_pool_size(n: usize) {
    let pool = pool();
    pool.wanted.store(n, Ordering::Relaxed);
    if let Ok(mut ready) = pool.ready.lock() {
        while ready.len() > n {
            if let Some(r) = ready.pop() {
                retire(r.0);
            }
        }
    }
    pool.refill.notify_one();
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RealmPoolStats {
    pub ready: usize,
    pub wanted: usize,
    pub taken: usize,
    pub built: usize,
}

pub fn pool_stats() -> RealmPoolStats {
    let pool = pool();
    RealmPoolStats {
        ready: pool.ready.lock().map(|r| r.len()).unwrap_or(0),
        wanted: pool.wanted.load(Ordering::Relaxed),
        taken: pool.taken.load(Ordering::Relaxed),
        built: pool.built.load(Ordering::Relaxed),
    }
}
