//! The guest's stack limit. Guest code runs on the thread's own stack or, for runs that are
//! time-sliced on the host's main thread, on a stack of their own (see `live.rs`); host code and
//! nested guest callbacks then run back on the thread's stack. QuickJS checks one limit per
//! runtime, so every entry into guest code sets it for the stack it is on, and leaving restores
//! the limit that was in force before.

use rquickjs::qjs;
use std::cell::Cell;

/// Stack kept free below the guest's limit: QuickJS checks the stack only at its own calls, and
/// native frames (built-ins, copying, host code the guest calls) go deeper than the last check.
pub(crate) const STACK_MARGIN: usize = 1 << 20;
/// Smallest limit ever set: QuickJS reads 0 as "no limit".
pub(crate) const MIN_STACK_LIMIT: usize = 4 << 10;

thread_local! {
    /// The lowest usable address of the run stack the current code executes on, or `None` on
    /// the thread's own stack.
    static RUN_STACK_FLOOR: Cell<Option<usize>> = const { Cell::new(None) };
}

/// Records which stack the current code executes on; returns what was recorded before.
pub(crate) fn set_run_stack_floor(floor: Option<usize>) -> Option<usize> {
    RUN_STACK_FLOOR.with(|f| f.replace(floor))
}

/// An address in the current frame: close enough to the stack pointer for limit arithmetic.
#[inline(never)]
pub(crate) fn stack_position() -> usize {
    let marker = 0u8;
    std::hint::black_box(&marker) as *const u8 as usize
}

/// Bytes left below the current frame on the stack in use, when it can be told.
pub(crate) fn remaining() -> Option<usize> {
    match RUN_STACK_FLOOR.with(Cell::get) {
        Some(floor) => Some(stack_position().saturating_sub(floor)),
        None => stacker::remaining_stack(),
    }
}

/// The guest's stack allowance: what was asked, clamped to the stack left below the current
/// frame (`left`, when the platform tells) less [`STACK_MARGIN`].
pub(crate) fn stack_allowance(requested: usize, left: Option<usize>) -> usize {
    let fits = match left {
        Some(left) => requested.min(left.saturating_sub(STACK_MARGIN)),
        None => requested,
    };
    fits.max(MIN_STACK_LIMIT)
}

/// Lets the guest use `requested` bytes below the current frame (clamped to what this stack
/// has); returns the absolute address of the limit, for [`restore_limit`].
///
/// # Safety
/// `rt` is a live runtime used only by the current thread.
pub(crate) unsafe fn limit_here(rt: *mut qjs::JSRuntime, requested: usize) -> usize {
    let allowance = stack_allowance(requested, remaining());
    // SAFETY: the caller guarantees `rt` is live and owned by this thread.
    unsafe {
        qjs::JS_UpdateStackTop(rt);
        qjs::JS_SetMaxStackSize(rt, allowance as _);
    }
    stack_position().saturating_sub(allowance)
}

/// Puts back an absolute limit returned by [`limit_here`], possibly set on another stack.
///
/// # Safety
/// `rt` is a live runtime used only by the current thread.
pub(crate) unsafe fn restore_limit(rt: *mut qjs::JSRuntime, limit: usize) {
    let size = stack_position().saturating_sub(limit).max(MIN_STACK_LIMIT);
    // SAFETY: the caller guarantees `rt` is live and owned by this thread.
    unsafe {
        qjs::JS_UpdateStackTop(rt);
        qjs::JS_SetMaxStackSize(rt, size as _);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stack_allowance_never_exceeds_what_the_thread_has() {
        let mib = 1 << 20;
        assert_eq!(stack_allowance(8 * mib, Some(64 * mib)), 8 * mib);
        assert_eq!(
            stack_allowance(64 * mib, Some(8 * mib)),
            8 * mib - STACK_MARGIN
        );
        assert_eq!(stack_allowance(8 * mib, None), 8 * mib);
        assert_eq!(
            stack_allowance(8 * mib, Some(STACK_MARGIN / 2)),
            MIN_STACK_LIMIT
        );
    }

    #[test]
    fn remaining_is_measured_from_the_recorded_run_stack() {
        let here = stack_position();
        let before = set_run_stack_floor(Some(here - (3 << 20)));
        let left = remaining().expect("known on a run stack");
        set_run_stack_floor(before);
        // The measuring frame is a little below this one.
        assert!(left <= 3 << 20 && left > (3 << 20) - 4096, "{left}");
    }
}
