//! One template realm per thread. A run with the standard shape (console present, no extension,
//! not deterministic; live values allowed, their membrane installed per run) gets a fresh
//! context derived from it: the frozen intrinsics are shared, the global object, lexical scope,
//! `Math.random` state, clock origin and job queue are the run's own (patch 0021). Creating one costs a copy of the global's bindings instead of a runtime,
//! a context and a lockdown.
//!
//! One run at a time per thread uses the template; a run that starts while another holds it
//! (a nested run from a log listener) takes a realm of its own. After a run that hit a limit,
//! was stopped, or left more memory behind than a collection frees, the template is discarded
//! and rebuilt for the next run: nothing a stopped guest left half-done is ever reused.

use super::ffi;
use super::limits::{CancelToken, Limits, Watchdog};
use super::raw;
use super::realm::{BuildError, Realm};
use std::cell::RefCell;
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
    realm: Realm,
    /// Heap in use by the template alone, after it was built.
    baseline: usize,
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

// Templates built on this thread (tests check that runs reuse one).
#[cfg(test)]
thread_local! {
    pub(crate) static BUILDS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

fn build() -> Result<Template, BuildError> {
    #[cfg(test)]
    BUILDS.with(|b| b.set(b.get() + 1));
    let realm = Realm::build_template()?;
    realm.rt.run_gc();
    let baseline = realm.meter.used();
    Ok(Template { realm, baseline })
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

fn fresh_seed() -> u64 {
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
    let reset = realm.context.with(|ctx| {
        ffi::close_context(&ctx);
        let mut reset = true;
        if let Some(t) = realm.timers.as_ref() {
            if t.reset(&ctx).is_err() {
                let _ = ctx.catch();
                reset = false;
            }
        }
        if let Some(f) = realm.console_reset.clone() {
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
/// standard run's realm costs on top of the template); `None` while the template is in use.
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
    let before = meter.used();
    let realm = derive()?;
    let derived = meter.used().saturating_sub(before);
    retire(realm, true);
    Some((baseline, derived))
}

/// Whether this thread holds a template realm now (tests).
#[cfg(test)]
pub(crate) fn is_built() -> bool {
    SLOT.with(|slot| slot.borrow().template.is_some())
}
