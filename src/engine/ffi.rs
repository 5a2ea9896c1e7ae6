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
