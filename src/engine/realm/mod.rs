//! A realm: one QuickJS runtime and context with quickrealm's setup (intrinsics without code
//! generation, host bindings, optional membrane), locked down before guest code runs.
//!
//! - [`intrinsics`]: no `eval`/`Function`, inert error hooks, guarded array built-ins.
//! - [`bindings`]: `emit`, `read_input`, `console`.
//! - `engine::output`: the byte-capped output sink and the per-run slot (below the realm).
//! - [`lockdown`]: freezing everything reachable.

mod bindings;
mod intl;
mod intl_text;
pub(crate) mod intrinsics;
pub(crate) mod lockdown;
pub(crate) mod timers;
mod url_api;
mod web;

pub use super::output::{ConsoleMode, LogEntry, LogListener};
pub(crate) use super::output::{OutputSink, RunSlot};

use super::alloc::{HeapMeter, MeteredAllocator};
use super::errors::{describe_exception, ErrorInfo};
use super::ffi;
use super::limits::{CancelToken, Limits, Watchdog};
use super::membrane::{self, FromHost, GuestHandle, HostBridge, Membrane};
use super::raw;
use super::request::{Deterministic, Extension, MAX_UNHANDLED_REPORTED};
use super::slicer::Slicer;
use super::stack;
use rquickjs::function::Constructor;
use rquickjs::{qjs, Context, Ctx, Function, Persistent, Runtime, Value};
use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;
use timers::Timers;

pub use super::raw::{INTERNAL_FILENAME, INTERNAL_FILENAME_C};
/// GC threshold while a realm is built: a fresh realm holds no garbage worth collecting.
const BUILD_GC_THRESHOLD: usize = 8 << 20;

/// A failed step of setting up a realm's context.
enum SetupError {
    Collision(String),
    Js(rquickjs::Error),
}

impl From<rquickjs::Error> for SetupError {
    fn from(e: rquickjs::Error) -> Self {
        SetupError::Js(e)
    }
}

/// Why a realm could not be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BuildError {
    /// A live global is named like a built-in global: the caller's mistake.
    GlobalCollision(String),
    /// The engine could not create or set up the realm.
    Engine(String),
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BuildError::GlobalCollision(name) => {
                write!(f, "global '{name}' collides with a built-in global")
            }
            BuildError::Engine(message) => f.write_str(message),
        }
    }
}

impl From<BuildError> for ErrorInfo {
    fn from(e: BuildError) -> ErrorInfo {
        match e {
            BuildError::GlobalCollision(_) => ErrorInfo::invalid(e.to_string()),
            BuildError::Engine(message) => ErrorInfo::internal(message),
        }
    }
}

/// Throws an error the guest cannot catch; the watchdog already records why.
pub(crate) fn throw_uncatchable<'js>(ctx: &Ctx<'js>, message: &str) -> rquickjs::Error {
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

pub(crate) struct Unhandled {
    pub entries: Vec<(usize, String)>,
    pub dropped: usize,
}

/// Live host values for a run: the bridge to the host, and the globals to bind.
pub struct LiveGlobals {
    pub bridge: Rc<dyn HostBridge>,
    pub globals: Vec<(String, FromHost)>,
    pub budget: u64,
    /// Set for a run that is time-sliced on the host's thread.
    pub slicer: Option<Rc<Slicer>>,
}

/// What shapes a realm before lockdown.
pub(crate) struct RealmSpec<'a> {
    pub with_console: bool,
    pub extension: Option<&'a Extension>,
    pub live: Option<LiveGlobals>,
    pub deterministic: Option<Deterministic>,
}

impl RealmSpec<'_> {
    /// The standard shape: console present, nothing else.
    pub(crate) fn standard() -> RealmSpec<'static> {
        RealmSpec {
            with_console: true,
            extension: None,
            live: None,
            deterministic: None,
        }
    }

    /// The shape every pooled realm has: console present, nothing else.
    pub(crate) fn is_standard(&self) -> bool {
        self.live.is_none() && self.deterministic.is_none() && self.derivable()
    }

    /// A realm a thread's template can serve: the standard shape, maybe with live values
    /// (their membrane is installed in the derived context) or deterministic (the derived
    /// context gets the virtual clock and the seeded randomness, see [`Realm::make_deterministic`]).
    pub(crate) fn derivable(&self) -> bool {
        self.with_console && self.extension.is_none_or(|e| e.0.derivable())
    }
}

/// A built, frozen realm, used by exactly one run.
pub(crate) struct Realm {
    // Field order is drop order: guest values held here, then the context, then its runtime.
    /// Present in realms of the standard profile (see `RealmSpec::with_console`).
    pub(crate) timers: Option<Timers>,
    /// Where `crypto` draws from (standard profile); a template's is seeded per run.
    pub(crate) random: Option<web::RandomSource>,
    /// Forgets the console's counters and timers (standard realms).
    pub(crate) console_reset: Option<Persistent<Function<'static>>>,
    /// The membrane, made once per realm: a template's serves the live runs of every realm
    /// derived from it.
    pub(crate) membrane: Option<Rc<Membrane>>,
    pub(crate) context: Context,
    pub(crate) rt: Runtime,
    pub(crate) slot: Rc<RunSlot>,
    pub(crate) meter: Arc<HeapMeter>,
    pub(crate) unhandled: Rc<RefCell<Unhandled>>,
    pub(crate) guest: Option<Rc<GuestHandle>>,
    /// Built with the shape every pooled realm has (console present, no extension, no live values).
    pub(crate) standard: bool,
    /// A context derived from this thread's template realm (see `engine::template`): the
    /// runtime, slot, meter and timers are the template's, shared with the runs before it.
    pub(crate) derived: bool,
    /// Heap bytes in use when the run began: a derived realm's run is measured from there.
    pub(crate) heap_base: Cell<usize>,
    /// A template's (and its derived realms'): the objects its lockdown froze, which
    /// [`lockdown::freeze_added`] need not walk again.
    pub(crate) hardened: Option<Rc<HashSet<usize>>>,
}

impl Realm {
    pub(crate) fn build(spec: RealmSpec<'_>) -> Result<Realm, BuildError> {
        Realm::build_as(spec, false)
    }

    /// The standard realm a thread's runs derive their contexts from: the Intl implementation
    /// loaded and frozen with the rest, and the global object closed (runs get copies of it).
    pub(crate) fn build_template() -> Result<Realm, BuildError> {
        Realm::build_as(RealmSpec::standard(), true)
    }

    fn build_as(spec: RealmSpec<'_>, template: bool) -> Result<Realm, BuildError> {
        let meter = HeapMeter::new(Limits::default().memory_bytes);
        let rt = Runtime::new_with_alloc(MeteredAllocator::new(meter.clone()))
            .map_err(|e| BuildError::Engine(format!("runtime creation failed: {e}")))?;
        // A fresh realm holds no garbage worth collecting: skip collections while building.
        rt.set_gc_threshold(BUILD_GC_THRESHOLD);
        let idle = Watchdog::new(Duration::from_secs(3600), CancelToken::new());
        let slot = RunSlot::new(idle);
        {
            let slot = slot.clone();
            let meter = meter.clone();
            rt.set_interrupt_handler(Some(Box::new(move || {
                meter.exhausted() || slot.should_interrupt()
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
                    if handled {
                        unhandled.borrow_mut().entries.retain(|(p, _)| *p != id);
                        return;
                    }
                    if unhandled.borrow().entries.len() >= MAX_UNHANDLED_REPORTED {
                        unhandled.borrow_mut().dropped += 1;
                        return;
                    }
                    // Describing the reason may run guest code (a `message` getter) that
                    // rejects another promise and re-enters this tracker: no borrow is held
                    // while it runs.
                    let (name, message, _) = describe_exception(&ctx, &reason);
                    let mut u = unhandled.borrow_mut();
                    if u.entries.len() < MAX_UNHANDLED_REPORTED {
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
        let context = Context::full(&rt)
            .map_err(|e| BuildError::Engine(format!("context creation failed: {e}")))?;
        let standard = spec.is_standard();
        let mut timers = None;
        let mut random = None;
        let mut hardened = None;
        let mut console_reset = None;
        let mut membrane = None;
        let guest = context.with(|ctx| -> Result<Option<Rc<GuestHandle>>, BuildError> {
            let mut guest = None;
            let setup = || -> Result<(), SetupError> {
                if let Some(d) = spec.deterministic {
                    ffi::make_deterministic(&ctx, d.now_ms, d.seed);
                }
                intrinsics::disable_codegen(&ctx)?;
                intrinsics::tame_error_hooks(&ctx)?;
                console_reset = bindings::install_bindings(&ctx, &slot, spec.with_console)?
                    .map(|f| Persistent::save(&ctx, f));
                if spec.with_console {
                    timers = Some(Timers::install(&ctx, &slot)?);
                    random = Some(web::install(&ctx, spec.deterministic.map(|d| d.seed))?);
                    url_api::install(&ctx)?;
                    intl::install(&ctx, template)?;
                } else {
                    bindings::remove_host_globals(&ctx)?;
                }
                if let Some(ext) = spec.extension {
                    ext.0.install(&ctx)?;
                }
                let live_globals = match spec.live {
                    Some(live) => {
                        *slot.slicer.borrow_mut() = live.slicer;
                        let made = Membrane::new(&ctx)?;
                        guest = Some(made.attach(&ctx, live.bridge, slot.clone(), live.budget)?);
                        membrane = Some(Rc::new(made));
                        live.globals
                    }
                    None => Vec::new(),
                };
                let shape = spec.extension.is_none().then_some(lockdown::Shape {
                    with_console: spec.with_console,
                    live: guest.is_some(),
                });
                let frozen = lockdown::lockdown(&ctx, shape)?;
                if spec.with_console {
                    bindings::alias_global(&ctx)?;
                }
                if template {
                    if !raw::prevent_extensions(&ctx, &ctx.globals()) {
                        return Err(SetupError::Js(ctx.throw(ctx.catch())));
                    }
                    membrane = Some(Rc::new(Membrane::new(&ctx)?));
                }
                if let Some(g) = guest.as_ref() {
                    if let Some(name) = membrane::bind_globals(&ctx, g, &live_globals)? {
                        return Err(SetupError::Collision(name));
                    }
                }
                if spec.extension.is_some() || template {
                    let frozen: HashSet<usize> = frozen.into_iter().collect();
                    if let Some(ext) = spec.extension {
                        extension_bound(&ctx, ext, &frozen)?;
                    }
                    if template {
                        hardened = Some(Rc::new(frozen));
                    }
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
                    Err(match e {
                        SetupError::Collision(name) => BuildError::GlobalCollision(name),
                        SetupError::Js(e) => BuildError::Engine(format!(
                            "realm setup failed: {}",
                            super::errors::exception_text(&ctx, e)
                        )),
                    })
                }
            }
        })?;
        Ok(Realm {
            timers,
            random,
            context,
            rt,
            slot,
            meter,
            unhandled,
            guest,
            standard,
            derived: false,
            console_reset,
            membrane,
            heap_base: Cell::new(0),
            hardened,
        })
    }

    /// Installs a derivable extension's globals on a derived realm's fresh global object, after
    /// its live globals are bound, and freezes them as lockdown would (see
    /// [`RealmExtension::derivable`](super::request::RealmExtension::derivable)).
    pub(crate) fn attach_extension(&self, ext: &Extension) -> Result<(), BuildError> {
        let Some(frozen) = self.hardened.clone() else {
            return Err(BuildError::Engine(
                "realm setup failed: the realm is not derived from a template".into(),
            ));
        };
        self.enter(Limits::default().stack_bytes);
        self.context.with(|ctx| {
            let installed = (|| {
                let before = own_global_keys(&ctx);
                ext.0.install(&ctx)?;
                let added = added_keys(&ctx, &before);
                lockdown::freeze_added(&ctx, &added, &frozen)?;
                extension_bound(&ctx, ext, &frozen)
            })();
            installed.map_err(|e| {
                BuildError::Engine(format!(
                    "realm setup failed: {}",
                    super::errors::exception_text(&ctx, e)
                ))
            })
        })
    }

    /// Makes a derived realm's run deterministic, as a realm built with `d` is: `Date` and
    /// `performance` read a virtual clock of the run's context that starts at `d.now_ms`,
    /// `Math.random` (the context's own state) and `crypto` (the template's source, emptied
    /// again when the context is released) draw from `d.seed`.
    pub(crate) fn make_deterministic(&self, d: Deterministic) {
        self.context
            .with(|ctx| ffi::make_deterministic(&ctx, d.now_ms, d.seed));
        if let Some(random) = self.random.as_ref() {
            random.seed(Some(d.seed));
        }
    }

    /// Attaches a live run to the template's membrane from a derived realm and binds the live
    /// globals; the run's state in the guest half is its own, and nothing of it is reachable
    /// from the global object but the bound proxies.
    pub(crate) fn attach_live(&mut self, live: LiveGlobals) -> Result<(), BuildError> {
        // The runtime's stack limit was measured for the last run, maybe with a smaller stack
        // or from a deeper frame: measure it here.
        self.enter(Limits::default().stack_bytes);
        let slot = self.slot.clone();
        let guest = self
            .context
            .with(|ctx| -> Result<Rc<GuestHandle>, BuildError> {
                let engine = |e: rquickjs::Error| {
                    BuildError::Engine(format!(
                        "realm setup failed: {}",
                        super::errors::exception_text(&ctx, e)
                    ))
                };
                let Some(made) = self.membrane.as_ref() else {
                    return Err(BuildError::Engine(
                        "realm setup failed: the realm has no membrane".into(),
                    ));
                };
                let guest = made
                    .attach(&ctx, live.bridge, slot, live.budget)
                    .map_err(engine)?;
                match membrane::bind_globals(&ctx, &guest, &live.globals) {
                    Ok(None) => Ok(guest),
                    Ok(Some(name)) => {
                        guest.release();
                        Err(BuildError::GlobalCollision(name))
                    }
                    Err(e) => {
                        guest.release();
                        Err(engine(e))
                    }
                }
            })?;
        self.guest = Some(guest);
        // Only now: a slicer's interrupt would pause the set-up, which is not the guest's time.
        *self.slot.slicer.borrow_mut() = live.slicer;
        Ok(())
    }

    /// Prepares the realm for the run that takes it: limits, output budget, input, console mode.
    /// Must be called on the thread that executes the run.
    pub(crate) fn begin(
        &self,
        limits: &Limits,
        watchdog: Arc<Watchdog>,
        input: Option<&str>,
        capture_console: bool,
        listener: Option<LogListener>,
    ) {
        *self.slot.watchdog.borrow_mut() = watchdog;
        *self.slot.sink.borrow_mut() = OutputSink::new(limits.output_bytes).with_listener(listener);
        *self.slot.input.borrow_mut() = input.unwrap_or_default().to_string();
        self.slot.capture.set(capture_console);
        // A derived realm shares its runtime with the template: the run's limit is on top of
        // what the runtime already holds, and its peak is measured from there.
        let base = if self.derived { self.meter.used() } else { 0 };
        self.heap_base.set(base);
        self.meter.reset_peak();
        self.meter
            .set_limit(base.saturating_add(limits.memory_bytes));
        // Collect only once a run has allocated a meaningful share of its budget; short runs
        // then never pay for a full mark of the intrinsics.
        self.rt.set_gc_threshold(
            (limits.memory_bytes / 8).clamp(1 << 20, 16 << 20) + self.meter.used(),
        );
        self.enter(limits.stack_bytes);
        // Counted from here, so the budget and the count cover the guest's code only.
        self.context
            .with(|ctx| ffi::set_step_limit(&ctx, limits.steps));
    }

    /// Measures the stack from the current frame; call at every top-level entry into the realm.
    /// The guest gets `stack_bytes`, but never more than the stack in use has left (see
    /// [`stack::stack_allowance`]): a limit past the real stack would let QuickJS overflow it.
    pub(crate) fn enter(&self, stack_bytes: usize) {
        let rt = self.context.with(|ctx| {
            // SAFETY: `ctx` is this realm's live context, entered on the current thread.
            unsafe { qjs::JS_GetRuntime(ctx.as_raw().as_ptr()) }
        });
        self.slot.stack_bytes.set(stack_bytes);
        // SAFETY: the runtime is alive and used only by this thread.
        let limit = unsafe { stack::limit_here(rt, stack_bytes) };
        self.slot.stack_limit.set(limit);
    }
}

/// The global object's own keys: names, and symbols.
struct GlobalKeys<'js> {
    names: HashSet<String>,
    symbols: Vec<Value<'js>>,
}

fn own_global_keys<'js>(ctx: &Ctx<'js>) -> GlobalKeys<'js> {
    let mut keys = GlobalKeys {
        names: HashSet::new(),
        symbols: Vec::new(),
    };
    for k in raw::own_keys(ctx, &ctx.globals(), true, false).unwrap_or_default() {
        match k.as_string().and_then(|s| s.to_string().ok()) {
            Some(name) => {
                keys.names.insert(name);
            }
            None => keys.symbols.push(k),
        }
    }
    keys
}

/// The global object's own keys that are not in `before`.
fn added_keys<'js>(ctx: &Ctx<'js>, before: &GlobalKeys<'js>) -> Vec<Value<'js>> {
    raw::own_keys(ctx, &ctx.globals(), true, false)
        .unwrap_or_default()
        .into_iter()
        .filter(|k| match k.as_string().and_then(|s| s.to_string().ok()) {
            Some(name) => !before.names.contains(&name),
            None => !before.symbols.contains(k),
        })
        .collect()
}

/// Calls the extension's `bound` hook once the live globals are bound, then freezes what it
/// added.
fn extension_bound<'js>(
    ctx: &Ctx<'js>,
    ext: &Extension,
    frozen: &HashSet<usize>,
) -> rquickjs::Result<()> {
    let before = own_global_keys(ctx);
    ext.0.bound(ctx, &ctx.globals())?;
    let added = added_keys(ctx, &before);
    if !added.is_empty() {
        lockdown::freeze_added(ctx, &added, frozen)?;
    }
    Ok(())
}

/// Bytes one fresh, frozen realm of the standard shape holds, as its allocator counts them.
pub fn measure_fresh_realm() -> Result<usize, BuildError> {
    let realm = Realm::build(RealmSpec::standard())?;
    Ok(realm.meter.used())
}

impl Drop for Realm {
    fn drop(&mut self) {
        // The membrane's guest half and its native functions refer to each other; a realm
        // dropped without its run finishing (a panic, an abandoned run) must still break that
        // cycle, or the runtime cannot be freed.
        if let Some(g) = self.guest.take() {
            g.release();
        }
        if self.derived {
            super::template::release(self);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::limits::CancelToken;
    use crate::engine::run::{execute, RunRequest};

    fn unhandled_lines(source: &str) -> Vec<String> {
        let outcome = execute(&RunRequest::new(source), &CancelToken::new());
        assert!(outcome.ok, "{:?}", outcome.error);
        outcome
            .logs
            .into_iter()
            .filter(|l| l.message.starts_with("Unhandled promise rejection"))
            .map(|l| l.message)
            .collect()
    }

    #[test]
    fn a_rejection_reported_while_another_is_described_is_kept() {
        // The first reason's `message` getter rejects another promise while the tracker is
        // describing the first one: both are reported, nothing panics.
        let lines = unhandled_lines(
            "const reason = new Error('outer');
             Object.defineProperty(reason, 'message', { get() { Promise.reject(new Error('inner')); return 'outer' } });
             Promise.reject(reason);
             await null; await null;
             return 1",
        );
        assert!(lines.iter().any(|l| l.contains("outer")), "{lines:?}");
        assert!(lines.iter().any(|l| l.contains("inner")), "{lines:?}");
    }

    #[test]
    fn unhandled_rejections_beyond_the_cap_are_counted() {
        let outcome = execute(
            &RunRequest::new(
                "for (let i = 0; i < 50; i++) Promise.reject(new Error('e' + i)); return 1",
            ),
            &CancelToken::new(),
        );
        let more = outcome
            .logs
            .iter()
            .find(|l| l.message.contains("more unhandled rejections"));
        assert!(more.is_some(), "{:?}", outcome.logs);
    }

    #[test]
    fn a_stack_limit_larger_than_the_thread_is_clamped_not_fatal() {
        // A thread with 2 MiB of stack and a 64 MiB request: without the clamp QuickJS would
        // overflow the real stack and the process would die with SIGSEGV.
        let handle = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(|| {
                let mut req = RunRequest::new("const f = (n) => f(n + 1) + 1; return f(0)");
                req.limits.stack_bytes = 64 << 20;
                execute(&req, &CancelToken::new())
            })
            .expect("spawn");
        let outcome = handle.join().expect("the thread survives");
        let error = outcome.error.expect("a stack overflow error");
        assert_eq!(error.name, "RangeError", "{error:?}");
    }

    #[test]
    fn the_default_stack_allows_thousands_of_frames() {
        let handle = std::thread::Builder::new()
            .stack_size(crate::engine::workers::WORKER_STACK_BYTES)
            .spawn(|| {
                let req = RunRequest::new(
                    "const dfs = (n) => (n === 0 ? 0 : 1 + dfs(n - 1)); return dfs(5000)",
                );
                execute(&req, &CancelToken::new())
            })
            .expect("spawn");
        let outcome = handle.join().expect("the thread survives");
        assert!(outcome.ok, "{:?}", outcome.error);
    }
}
