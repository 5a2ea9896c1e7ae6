//! One template realm per thread. A run with the standard shape (console present, no extension;
//! live values allowed, their membrane installed per run; deterministic allowed, its virtual
//! clock and seeds set on the derived context) gets a fresh context derived from it: the frozen
//! intrinsics are shared, the global object, lexical scope, `Math.random` state, clock and job
//! queue are the run's own (patch 0021). Creating one costs a copy of the global's bindings
//! instead of a runtime, a context and a lockdown.
//!
//! One run at a time per thread uses the template; a run that starts while another holds it
//! (a nested run from a log listener) takes a realm of its own. After a run that hit a limit,
//! was stopped, or left more memory behind than a collection frees, the template is discarded
//! and rebuilt for the next run: nothing a stopped guest left half-done is ever reused.

use super::ffi;
use super::limits::{CancelToken, Limits, Watchdog};
use super::raw;
use super::realm::{BuildError, Realm};
use rquickjs::{qjs, Ctx, Value};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::time::Duration;

/// Garbage (objects in cycles, which reference counting cannot free) that runs may leave
/// behind before the runtime is collected. A collection visits the template too, so collecting
/// after every run would cost more than the run; this bounds the heap a thread keeps to the
/// template plus 2 MiB.
const COLLECT_ABOVE: usize = 2 << 20;
/// Heap still held after a collection that makes the template not worth keeping.
const DISCARD_ABOVE: usize = 4 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// No run holds the template.
    Idle,
    /// A run holds it.
    Running,
    /// A run's context was freed without `retire` (a panic or an abandoned run).
    Ended,
    /// A run's per-run state could not be reset: the template must not serve another run.
    Broken,
}

struct Template {
    /// Dropped before the realm: its entries are values of the realm's runtime.
    compiled: CompileCache,
    realm: Realm,
    /// Heap in use by the template alone, after it was built (its compiled scripts included).
    baseline: usize,
}

/// Sources longer than this are compiled per run, not kept.
const CACHE_SOURCE_BYTES: usize = 64 << 10;
/// Heap the compiled scripts a thread keeps may take, about.
const CACHE_HEAP_BYTES: usize = 1 << 20;
const CACHE_ENTRIES: usize = 64;

/// Scripts compiled in the template, kept for the runs that evaluate the same source again:
/// their functions' realm is the template, so each runs in the realm of the run that evaluates
/// it (patch 0021), and a compiled script holds nothing of any run. The least recently used
/// is dropped first.
struct CompileCache {
    rt: *mut qjs::JSRuntime,
    entries: VecDeque<Compiled>,
    heap: usize,
}

struct Compiled {
    /// Compiled with top-level `await` (a persistent realm's cell).
    cell: bool,
    filename: String,
    source: String,
    /// A compiled global script (tag FUNCTION_BYTECODE), owned by the cache.
    script: qjs::JSValue,
    /// Heap the compilation kept.
    heap: usize,
}

impl Drop for CompileCache {
    fn drop(&mut self) {
        for e in self.entries.drain(..) {
            // SAFETY: the cache owns one reference to each script, and is dropped before the
            // template's runtime (field order of `Template`).
            unsafe { qjs::JS_FreeValueRT(self.rt, e.script) };
        }
    }
}

struct Slot {
    template: Option<Template>,
    state: State,
}

thread_local! {
    static SLOT: RefCell<Slot> = const {
        RefCell::new(Slot {
            template: None,
            state: State::Idle,
        })
    };
}

// Templates built and scripts compiled on this thread (tests check that runs reuse them).
#[cfg(test)]
thread_local! {
    pub(crate) static BUILDS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    pub(crate) static COMPILES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

fn build() -> Result<Template, BuildError> {
    #[cfg(test)]
    BUILDS.with(|b| b.set(b.get() + 1));
    let realm = Realm::build_template()?;
    realm.rt.run_gc();
    let baseline = realm.meter.used();
    let rt = realm.context.with(|ctx| {
        // SAFETY: a live context.
        unsafe { qjs::JS_GetRuntime(ctx.as_raw().as_ptr()) }
    });
    Ok(Template {
        compiled: CompileCache {
            rt,
            entries: VecDeque::new(),
            heap: 0,
        },
        realm,
        baseline,
    })
}

/// The global script `source` compiled in this thread's template (strict; with top-level
/// `await` when `cell`, as a persistent realm's cells are), for `ctx`, a context derived from
/// it, to evaluate: from the cache, or compiled now and kept. `None` when it is not kept (too
/// long, the template is not this run's) or does not compile: the caller compiles it in its own
/// context, which reports the error.
pub(crate) fn compiled_script<'js>(
    ctx: &Ctx<'js>,
    source: &str,
    filename: &str,
    cell: bool,
) -> Option<Value<'js>> {
    if source.len() > CACHE_SOURCE_BYTES {
        return None;
    }
    SLOT.with(|slot| {
        let mut slot = slot.try_borrow_mut().ok()?;
        if slot.state != State::Running {
            return None;
        }
        let t = slot.template.as_mut()?;
        let found = t.compiled.entries.iter().position(|e| {
            e.source.len() == source.len()
                && e.cell == cell
                && e.filename == filename
                && e.source == source
        });
        let script = match found {
            Some(i) => {
                let e = t.compiled.entries.remove(i)?;
                let script = e.script;
                t.compiled.entries.push_front(e);
                script
            }
            None => {
                let before = t.realm.meter.used();
                // The runtime is in use (by `ctx`), so the template's context is entered raw.
                let script = compile(t.realm.context.as_raw().as_ptr(), source, filename, cell)?;
                let heap = t.realm.meter.used().saturating_sub(before);
                t.compiled.entries.push_front(Compiled {
                    cell,
                    filename: filename.to_string(),
                    source: source.to_string(),
                    script,
                    heap,
                });
                t.compiled.heap += heap;
                t.baseline += heap;
                while t.compiled.entries.len() > CACHE_ENTRIES
                    || (t.compiled.heap > CACHE_HEAP_BYTES && t.compiled.entries.len() > 1)
                {
                    let Some(old) = t.compiled.entries.pop_back() else {
                        break;
                    };
                    t.compiled.heap = t.compiled.heap.saturating_sub(old.heap);
                    t.baseline = t.baseline.saturating_sub(old.heap);
                    // SAFETY: the cache's own reference, given back once.
                    unsafe { qjs::JS_FreeValueRT(t.compiled.rt, old.script) };
                }
                script
            }
        };
        // SAFETY: a value of this runtime that the cache keeps alive; the caller gets a
        // reference of its own.
        Some(unsafe {
            Value::from_raw(ctx.clone(), qjs::JS_DupValue(ctx.as_raw().as_ptr(), script))
        })
    })
}

/// Compiles a strict global script in the template's context `c`, without running it; a
/// compile error is dropped (`None`). Called while the runtime is entered for a derived context.
fn compile(
    c: *mut qjs::JSContext,
    source: &str,
    filename: &str,
    cell: bool,
) -> Option<qjs::JSValue> {
    #[cfg(test)]
    COMPILES.with(|n| n.set(n.get() + 1));
    let mut name = filename.as_bytes().to_vec();
    name.push(0);
    let mut text = source.as_bytes().to_vec();
    text.push(0);
    let mut flags =
        qjs::JS_EVAL_TYPE_GLOBAL | qjs::JS_EVAL_FLAG_STRICT | qjs::JS_EVAL_FLAG_COMPILE_ONLY;
    if cell {
        flags |= qjs::JS_EVAL_FLAG_ASYNC;
    }
    // SAFETY: the template's live context, on the thread that has its runtime entered; the
    // source is NUL-terminated as JS_Eval requires, and both buffers outlive the call.
    let script = unsafe {
        qjs::JS_Eval(
            c,
            text.as_ptr().cast(),
            source.len() as _,
            name.as_ptr().cast(),
            flags as _,
        )
    };
    // SAFETY: an owned value JS_Eval returned; on failure the pending exception is taken and
    // freed.
    unsafe {
        if qjs::JS_IsException(script) {
            qjs::JS_FreeValue(c, qjs::JS_GetException(c));
            return None;
        }
    }
    Some(script)
}

/// A fresh realm for one standard run, derived from this thread's template (built on first
/// use); `None` when the template is in use or cannot be built or derived from.
pub(crate) fn derive() -> Option<Realm> {
    SLOT.with(|slot| {
        let mut slot = slot.try_borrow_mut().ok()?;
        match slot.state {
            State::Running => return None,
            State::Ended | State::Broken => {
                slot.template = None;
                slot.state = State::Idle;
            }
            State::Idle => {}
        }
        if slot.template.is_none() {
            slot.template = Some(build().ok()?);
        }
        let t = slot.template.as_ref()?;
        // The slot and the meter still hold the last run's watchdog and memory limit, which
        // may have stopped that run: deriving and the membrane's set-up (before
        // `Realm::begin`) must not see them.
        idle(&t.realm);
        let Some(context) = ffi::derive_context(&t.realm.context) else {
            slot.template = None;
            return None;
        };
        let seed = fresh_seed();
        context.with(|ctx| ffi::seed_random(&ctx, seed));
        let realm = Realm {
            timers: t.realm.timers.clone(),
            random: t.realm.random.clone(),
            context,
            rt: t.realm.rt.clone(),
            slot: t.realm.slot.clone(),
            meter: t.realm.meter.clone(),
            unhandled: t.realm.unhandled.clone(),
            guest: None,
            standard: false,
            derived: true,
            console_reset: t.realm.console_reset.clone(),
            membrane: t.realm.membrane.clone(),
            heap_base: std::cell::Cell::new(0),
            hardened: t.realm.hardened.clone(),
        };
        slot.state = State::Running;
        Some(realm)
    })
}

/// Gives the template's runtime a watchdog that never stops and the default memory limit on top
/// of what it holds: the state between runs.
fn idle(realm: &Realm) {
    *realm.slot.watchdog.borrow_mut() =
        Watchdog::new(Duration::from_secs(3600), CancelToken::new());
    realm.meter.set_limit(
        realm
            .meter
            .used()
            .saturating_add(Limits::default().memory_bytes),
    );
}

/// Seeds drawn from the OS at a time: one system call per this many runs.
const SEEDS_PER_DRAW: usize = 32;

thread_local! {
    /// Seeds drawn from the OS random source and not used yet; each run takes one.
    static SEEDS: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

fn fresh_seed() -> u64 {
    let drawn = SEEDS.try_with(|seeds| {
        let mut seeds = seeds.try_borrow_mut().ok()?;
        if seeds.is_empty() {
            let mut bytes = [0u8; 8 * SEEDS_PER_DRAW];
            getrandom::fill(&mut bytes).ok()?;
            seeds.extend(
                bytes
                    .chunks_exact(8)
                    .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default())),
            );
        }
        seeds.pop()
    });
    if let Ok(Some(seed)) = drawn {
        return seed;
    }
    let mut bytes = [0u8; 8];
    if getrandom::fill(&mut bytes).is_err() {
        // The clock is a weak seed, but `Math.random` promises no more than the engine's own.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1);
        return nanos;
    }
    u64::from_le_bytes(bytes)
}

/// Called while a derived realm is dropped, before its context is freed: closes the context
/// (nothing of the run is queued or run later, not even a FinalizationRegistry callback of an
/// object freed by a later run), forgets the run's timers and console state, which live in the
/// template's helpers, and drops the run's queued jobs.
pub(crate) fn release(realm: &Realm) {
    // The run's deadline or abort must not interrupt the resets.
    idle(realm);
    // A deterministic run's seeded `crypto` stream ends with it.
    if let Some(random) = realm.random.as_ref() {
        random.seed(None);
    }
    // Only a run that used them changed the helpers' state.
    let touched = realm.slot.helpers_touched.replace(false);
    let reset = realm.context.with(|ctx| {
        ffi::close_context(&ctx);
        let mut reset = true;
        if let Some(t) = realm.timers.as_ref().filter(|_| touched) {
            if t.reset(&ctx).is_err() {
                let _ = ctx.catch();
                reset = false;
            }
        }
        if let Some(f) = realm.console_reset.clone().filter(|_| touched) {
            let done = f
                .restore(&ctx)
                .and_then(|f| raw::rebind(&ctx, f))
                .and_then(|f| f.call::<_, ()>(()));
            if done.is_err() {
                let _ = ctx.catch();
                reset = false;
            }
        }
        ffi::discard_jobs(&ctx);
        // The global object refers to itself: emptied, the run's context and what only it
        // reached are freed with the context instead of waiting for a collection.
        ffi::clear_globals(&ctx);
        reset
    });
    realm.slot.group_indent.set(0);
    *realm.slot.slicer.borrow_mut() = None;
    {
        let mut u = realm.unhandled.borrow_mut();
        u.entries.clear();
        u.dropped = 0;
    }
    // `try_with`: a realm dropped while its thread exits must not panic in a destructor.
    let _ = SLOT.try_with(|slot| {
        if let Ok(mut slot) = slot.try_borrow_mut() {
            slot.state = if reset { State::Ended } else { State::Broken };
        }
    });
}

/// Ends a derived realm's run: frees its context, then keeps the template for the next run
/// when the run ended cleanly and its garbage is collectable, or discards it otherwise.
pub(crate) fn retire(realm: Realm, clean: bool) {
    let rt = realm.rt.clone();
    let meter = realm.meter.clone();
    drop(realm);
    let _ = SLOT.try_with(|slot| {
        let Ok(mut slot) = slot.try_borrow_mut() else {
            return;
        };
        let keep = clean
            && slot.state == State::Ended
            && !meter.exhausted()
            && slot.template.as_ref().is_some_and(|t| {
                if meter.used() > t.baseline + COLLECT_ABOVE {
                    rt.run_gc();
                }
                meter.used() <= t.baseline + DISCARD_ABOVE
            });
        if !keep {
            slot.template = None;
        }
        slot.state = State::Idle;
    });
}

/// Heap bytes this thread's template runtime holds after a full collection (tests check that
/// runs leave nothing behind).
#[cfg(test)]
pub(crate) fn collected_heap() -> Option<usize> {
    SLOT.with(|slot| {
        let slot = slot.try_borrow().ok()?;
        let t = slot.template.as_ref()?;
        t.realm.rt.run_gc();
        Some(t.realm.meter.used())
    })
}

/// Heap bytes of this thread's template realm, and of one context derived from it (what a
/// standard run's realm costs on top of the template: the median of nine, since the one that
/// happens to grow a runtime-wide table, such as the atom hash, is charged for all of it);
/// `None` while the template is in use.
pub(crate) fn measure() -> Option<(usize, usize)> {
    let template = SLOT.with(|slot| {
        let mut slot = slot.try_borrow_mut().ok()?;
        if slot.template.is_none() && slot.state == State::Idle {
            slot.template = Some(build().ok()?);
        }
        slot.template
            .as_ref()
            .map(|t| (t.baseline, t.realm.meter.clone()))
    });
    let (baseline, meter) = template?;
    let mut sizes = Vec::with_capacity(9);
    for _ in 0..9 {
        let before = meter.used();
        let realm = derive()?;
        sizes.push(meter.used().saturating_sub(before));
        retire(realm, true);
    }
    sizes.sort_unstable();
    Some((baseline, sizes[sizes.len() / 2]))
}

/// Heap the template's runtime holds beyond the template and its compiled scripts, without
/// collecting: what the runs since it was built left behind (tests).
#[cfg(test)]
pub(crate) fn heap_left_behind() -> Option<usize> {
    SLOT.with(|slot| {
        let slot = slot.try_borrow().ok()?;
        let t = slot.template.as_ref()?;
        Some(t.realm.meter.used().saturating_sub(t.baseline))
    })
}

/// Compiled scripts this thread keeps, and the heap they hold (tests).
#[cfg(test)]
pub(crate) fn compiled_stats() -> Option<(usize, usize)> {
    SLOT.with(|slot| {
        let slot = slot.try_borrow().ok()?;
        let t = slot.template.as_ref()?;
        Some((t.compiled.entries.len(), t.compiled.heap))
    })
}

/// Whether this thread holds a template realm now (tests).
#[cfg(test)]
pub(crate) fn is_built() -> bool {
    SLOT.with(|slot| slot.borrow().template.is_some())
}
