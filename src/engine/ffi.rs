//! C functions that our QuickJS patches add (vendor/rquickjs-sys/patches), which the bindings
//! rquickjs-sys generated from the upstream headers do not declare, with safe wrappers.

use rquickjs::{qjs, Ctx};
use std::os::raw::c_int;

extern "C" {
    /// Patch 0002: counts `units` of work (about one per value visited, or per KiB copied)
    /// against the budget the engine spends between two calls of the interrupt handler, and
    /// calls the handler once that budget is spent. Returns -1 with an uncatchable
    /// "interrupted" error pending when the handler asks to stop, 0 otherwise.
    fn JS_PollInterrupts(ctx: *mut qjs::JSContext, units: usize) -> c_int;
    /// Patch 0009: marks a frozen intrinsic, so that assigning a property an object inherits
    /// from it as a non-writable data property defines an own property on the object (the
    /// override mistake) instead of throwing.
    fn JS_MarkHardened(ctx: *mut qjs::JSContext, obj: qjs::JSValue);
    /// Patch 0012: Date and performance read a clock of the context's own, starting at
    /// `epoch_ms`, which only `JS_AdvanceVirtualClock` moves.
    fn JS_SetVirtualClock(ctx: *mut qjs::JSContext, epoch_ms: f64);
    fn JS_AdvanceVirtualClock(ctx: *mut qjs::JSContext, ms: f64);
    /// Patch 0012: Math.random's state from a seed.
    fn JS_SetRandomSeed(ctx: *mut qjs::JSContext, seed: u64);
    /// Patch 0019: a budget of interpreter steps (backward jumps and calls); negative: none.
    fn JS_SetStepLimit(ctx: *mut qjs::JSContext, limit: i64);
    fn JS_GetStepsTaken(ctx: *mut qjs::JSContext) -> i64;
    fn JS_StepsExhausted(ctx: *mut qjs::JSContext) -> bool;
    /// Patch 0020: removes every queued job of `ctx` without running it.
    fn JS_DiscardJobs(ctx: *mut qjs::JSContext) -> c_int;
    /// Patch 0022: the context's work is over: its jobs are dropped, now and later.
    fn JS_CloseContext(ctx: *mut qjs::JSContext);
    /// Patch 0025: every global binding of `ctx` set to undefined, what they held freed.
    fn JS_ClearGlobals(ctx: *mut qjs::JSContext);
    /// Patch 0021: a context sharing the frozen intrinsics of `tmpl`, with a global object of
    /// its own; NULL when out of memory or when `tmpl`'s globals cannot be copied.
    fn JS_NewContextFromTemplate(tmpl: *mut qjs::JSContext) -> *mut qjs::JSContext;
}

/// A context derived from `template` (see [`JS_NewContextFromTemplate`]), owned by the returned
/// handle; `None` when the engine refused.
pub fn derive_context(template: &rquickjs::Context) -> Option<rquickjs::Context> {
    // SAFETY: `template` is a live context; the new context belongs to the same runtime and
    // starts with one reference, which the returned `Context` owns and frees on drop.
    unsafe {
        let raw = JS_NewContextFromTemplate(template.as_raw().as_ptr());
        let raw = std::ptr::NonNull::new(raw)?;
        Some(rquickjs::Context::from_raw(raw, template.runtime().clone()))
    }
}

/// Ends the work of `ctx`: no job of it is queued or run from now on (see `JS_CloseContext`).
pub fn close_context(ctx: &Ctx<'_>) {
    // SAFETY: `ctx` is a live context entered on the current thread; the call only sets a flag.
    unsafe { JS_CloseContext(ctx.as_raw().as_ptr()) };
}

/// Empties the global bindings of a context whose work is over, so that freeing the context
/// frees what only it reached (see `JS_ClearGlobals`).
pub fn clear_globals(ctx: &Ctx<'_>) {
    // SAFETY: `ctx` is a live context entered on the current thread; only its own global
    // objects are changed, and no JavaScript runs.
    unsafe { JS_ClearGlobals(ctx.as_raw().as_ptr()) };
}

/// Drops every promise job `ctx` still has queued; returns how many.
pub fn discard_jobs(ctx: &Ctx<'_>) -> usize {
    // SAFETY: `ctx` is a live context entered on the current thread, and holds a reference to
    // itself for the duration of the call.
    let n = unsafe { JS_DiscardJobs(ctx.as_raw().as_ptr()) };
    usize::try_from(n).unwrap_or(0)
}

/// Seeds `Math.random` of `ctx` (see [`JS_SetRandomSeed`]).
pub fn seed_random(ctx: &Ctx<'_>, seed: u64) {
    // SAFETY: `ctx` is a live context entered on the current thread; the call only sets a
    // field of the context.
    unsafe { JS_SetRandomSeed(ctx.as_raw().as_ptr(), seed) };
}

/// Gives the context `limit` steps from now (`None`: no budget) and restarts the step count.
pub fn set_step_limit(ctx: &Ctx<'_>, limit: Option<u64>) {
    let limit = limit.map_or(-1, |n| i64::try_from(n).unwrap_or(i64::MAX));
    // SAFETY: `ctx` is a live context entered on the current thread; the call only sets fields
    // of the context.
    unsafe { JS_SetStepLimit(ctx.as_raw().as_ptr(), limit) };
}

/// Steps taken since the last [`set_step_limit`], and whether the budget stopped the guest.
pub fn steps(ctx: &Ctx<'_>) -> (u64, bool) {
    // SAFETY: `ctx` is a live context entered on the current thread; the calls only read
    // fields of the context.
    let (taken, exhausted) = unsafe {
        let raw = ctx.as_raw().as_ptr();
        (JS_GetStepsTaken(raw), JS_StepsExhausted(raw))
    };
    (u64::try_from(taken).unwrap_or(0), exhausted)
}

/// Gives the context a virtual clock at `epoch_ms` and seeds `Math.random` (deterministic runs).
pub fn make_deterministic(ctx: &Ctx<'_>, epoch_ms: f64, seed: u64) {
    // SAFETY: `ctx` is a live context entered on the current thread; the calls only set fields
    // of the context.
    unsafe {
        JS_SetVirtualClock(ctx.as_raw().as_ptr(), epoch_ms);
        JS_SetRandomSeed(ctx.as_raw().as_ptr(), seed);
    }
}

/// Moves a virtual clock forward (no effect on a context without one).
pub fn advance_virtual_clock(ctx: &Ctx<'_>, ms: f64) {
    // SAFETY: `ctx` is a live context entered on the current thread; the call only updates a
    // field of the context.
    unsafe { JS_AdvanceVirtualClock(ctx.as_raw().as_ptr(), ms) };
}

/// Marks `obj` (frozen by lockdown) as a hardened intrinsic; see [`JS_MarkHardened`].
pub fn mark_hardened(ctx: &Ctx<'_>, obj: &rquickjs::Object<'_>) {
    // SAFETY: `ctx` is a live context entered on the current thread and `obj` a live object
    // of it; the call only sets a flag on the object.
    unsafe { JS_MarkHardened(ctx.as_raw().as_ptr(), obj.as_raw()) };
}

/// Counts host work done for the guest (copying a result out, formatting console output) as
/// the engine counts its own, so the deadline and an abort stop it too. `Err(Exception)` means
/// the run must stop: the uncatchable error is pending in `ctx`.
pub fn poll_interrupts(ctx: &Ctx<'_>, units: usize) -> rquickjs::Result<()> {
    // SAFETY: `ctx` is a live context, entered on the current thread; the call only touches
    // the context's interrupt counter, runs the runtime's interrupt handler and may throw.
    let rc = unsafe { JS_PollInterrupts(ctx.as_raw().as_ptr(), units) };
    if rc < 0 {
        Err(rquickjs::Error::Exception)
    } else {
        Ok(())
    }
}
