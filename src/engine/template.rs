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
use super::limits::{CancelToken, Watchdog};
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
            State::Ended => {
                slot.template = None;
                slot.state = State::Idle;
            }
            State::Idle => {}
        }
        if slot.template.is_none() {
            slot.template = Some(build().ok()?);
        }
        let t = slot.template.as_ref()?;
        // The slot still holds the last run's watchdog, which may have stopped that run: the
        // membrane's set-up for this one (before `Realm::begin`) must not see it.
        *t.realm.slot.watchdog.borrow_mut() =
            Watchdog::new(Duration::from_secs(3600), CancelToken::new());
        let context = ffi::derive_context(&t.realm.context)?;
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
            guest_factory: t.realm.guest_factory.clone(),
            heap_base: std::cell::Cell::new(0),
        };
        slot.state = State::Running;
        Some(realm)
    })
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

/// Called while a derived realm is dropped, before its context is freed: forgets the run's
/// timers and console state, which live in the template's helpers, and the run's queued jobs.
pub(crate) fn release(realm: &Realm) {
    realm.context.with(|ctx| {
        if let Some(t) = realm.timers.as_ref() {
            if t.reset(&ctx).is_err() {
                let _ = ctx.catch();
            }
        }
        if let Some(reset) = realm.console_reset.clone() {
            let done = reset
                .restore(&ctx)
                .and_then(|f| raw::rebind(&ctx, f))
                .and_then(|f| f.call::<_, ()>(()));
            if done.is_err() {
                let _ = ctx.catch();
            }
        }
        ffi::discard_jobs(&ctx);
    });
    realm.slot.group_indent.set(0);
    *realm.slot.slicer.borrow_mut() = None;
    {
        let mut u = realm.unhandled.borrow_mut();
        u.entries.clear();
        u.dropped = 0;
    }
    SLOT.with(|slot| {
        if let Ok(mut slot) = slot.try_borrow_mut() {
            slot.state = State::Ended;
        }
    });
}

/// Ends a derived realm's run: frees its context, then keeps the template for the next run
/// when the run ended cleanly and its garbage is collectable, or discards it otherwise.
pub(crate) fn retire(realm: Realm, clean: bool) {
    let rt = realm.rt.clone();
    let meter = realm.meter.clone();
    drop(realm);
    SLOT.with(|slot| {
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
