//! The state a time-sliced run shares with its realm: the realm's interrupt handler pauses the
//! run through it when a slice is spent, and host crossings switch to the thread's own stack.
//! Below both `realm` and `live` (the driver of sliced runs, which owns the coroutine).

use super::stack;
use corosensei::Yielder;
use std::cell::Cell;
use std::time::Instant;

/// Where a time-sliced run stands after a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// The run has its outcome: take it with `finish`.
    Finished,
    /// The guest awaits a host promise: step again when one settles (or at the deadline).
    Waiting,
    /// The run's time slice is spent: step again soon, after the host's event loop had a turn.
    Paused,
}

/// What the driver tells the run when it resumes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Resume {
    Continue,
    /// The driver is going away: stop as soon as possible.
    Abandon,
}

/// The state a time-sliced run shares with its realm's interrupt handler and host bridge.
///
/// The guest runs on a stack of its own (a coroutine), so that a pause between slices can
/// leave it in the middle of anything. Host code must run on the thread's own stack (the host
/// engine checks it is there), so every crossing into the host switches back for its duration.
pub(crate) struct Slicer {
    pub(crate) yielder: Cell<*const Yielder<Resume, Step>>,
    /// True while the run's own stack executes (not a host call made from it).
    pub(crate) on_run_stack: Cell<bool>,
    pub(crate) paused: Cell<bool>,
    pub(crate) slice_end: Cell<Instant>,
    /// The lowest usable address of the run's stack.
    pub(crate) floor: usize,
    /// The stack floor in force where the run was resumed (see `engine::stack`).
    pub(crate) parent_floor: Cell<Option<usize>>,
    /// While the run waits: when its next timer is due.
    pub(crate) timer_due: Cell<Option<Instant>>,
}

/// Hands a closure to `Yielder::on_parent_stack`, which asks for `Send` only to keep the
/// yielder itself from escaping to the parent stack; the closure runs on the same thread.
struct OnThisThread<F>(F);

// SAFETY: the closure never leaves this thread (it runs on another stack of the same thread),
// and the closures wrapped here do not capture the yielder.
unsafe impl<F> Send for OnThisThread<F> {}

impl<F: FnOnce() -> R, R> OnThisThread<F> {
    fn run(self) -> R {
        (self.0)()
    }
}

impl Slicer {
    /// Called by the interrupt handler: pauses the run when its slice is spent. True when it
    /// paused (and has now been resumed).
    pub(crate) fn pause_if_due(&self) -> bool {
        if !self.on_run_stack.get() || Instant::now() < self.slice_end.get() {
            return false;
        }
        let yielder = self.yielder.get();
        if yielder.is_null() {
            return false;
        }
        self.paused.set(true);
        // SAFETY: the yielder is set for the coroutine's whole life and cleared before it
        // returns; `on_run_stack` says this code runs on the coroutine's own stack.
        // An abandoning driver cancelled the run first: the caller's next check stops it.
        let _ = unsafe { &*yielder }.suspend(Step::Paused);
        self.paused.set(false);
        true
    }

    pub(crate) fn is_paused(&self) -> bool {
        self.paused.get()
    }

    /// Runs host code on the thread's own stack when called from the run's stack.
    pub(crate) fn on_host<R>(&self, f: impl FnOnce() -> R) -> R {
        let yielder = self.yielder.get();
        if !self.on_run_stack.get() || yielder.is_null() {
            return f();
        }
        self.on_run_stack.set(false);
        let mine = stack::set_run_stack_floor(self.parent_floor.get());
        let job = OnThisThread(f);
        // SAFETY: as in `pause_if_due`: the yielder is live while the coroutine runs.
        let result = unsafe { &*yielder }.on_parent_stack(move || job.run());
        stack::set_run_stack_floor(mine);
        self.on_run_stack.set(true);
        result
    }
}
