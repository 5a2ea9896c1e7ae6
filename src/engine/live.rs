//! Runs with live host values. Such a run may await host promises: it then pauses, the host
//! goes on with its event loop, and the run resumes when a promise settles. This module decides
//! when a run has finished and when it is waiting; the host side only delivers settlements and
//! calls [`LiveRun::step`] again.

use super::errors::ErrorInfo;
use super::limits::CancelToken;
use super::limits::MAX_STACK_BYTES;
use super::membrane::{FromHost, HostFailure};
use super::membrane::{GuestHandle, HostBridge, HostResult, Key, ToHost};
use super::run::{guarded, ActiveRun, LiveGlobals, Pump, RunOutcome, RunRequest};
use super::slicer::Resume;
pub(crate) use super::slicer::Slicer;
pub use super::slicer::Step;
use super::stack;
use corosensei::stack::{DefaultStack, Stack};
use corosensei::{Coroutine, CoroutineResult, Yielder};
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;
use std::time::{Duration, Instant};

/// A settled host promise on its way to the guest: the settle id and the outcome.
type Settlement = (u32, Result<FromHost, HostFailure>);

/// The host promises a live run awaits. The host bridge records each promise it hands out
/// (`awaiting`) and each settlement (`settled`); the run consumes them in `step`.
#[derive(Default)]
pub struct HostPromises {
    settled: RefCell<VecDeque<Settlement>>,
    outstanding: Cell<usize>,
}

impl HostPromises {
    /// One more host promise the guest waits for.
    pub fn awaiting(&self) {
        self.outstanding.set(self.outstanding.get() + 1);
    }

    /// A host promise settled; it is delivered at the next step.
    pub fn settled(&self, settle: u32, outcome: Result<FromHost, HostFailure>) {
        self.outstanding
            .set(self.outstanding.get().saturating_sub(1));
        self.settled.borrow_mut().push_back((settle, outcome));
    }

    /// Whether anything could still settle: a promise still out, or one not yet delivered.
    fn any_pending(&self) -> bool {
        self.outstanding.get() > 0 || !self.settled.borrow().is_empty()
    }

    /// Hands every settlement received so far to the run.
    fn deliver(&self, active: &mut ActiveRun) {
        while let Some((settle, outcome)) = self.settled.borrow_mut().pop_front() {
            active.settle(settle, outcome);
        }
    }
}

/// Runs a live run to its end on the calling thread, without waiting for host promises
/// (`runSync`): host values are read and called directly, with no time slices.
pub fn run_to_end(
    request: RunRequest,
    cancel: &CancelToken,
    live: LiveGlobals,
    promises: &HostPromises,
) -> RunOutcome {
    let mut active = match ActiveRun::start(request, cancel, Some(live)) {
        Ok(active) => active,
        Err(outcome) => return outcome,
    };
    promises.deliver(&mut active);
    let mut waiting = false;
    if let Pump::Waiting(_) = active.pump(true) {
        waiting = promises.any_pending();
        if !waiting {
            // Runs the guest's timers as they fall due, waiting for them on this thread.
            active.pump(false);
        }
    }
    let mut outcome = guarded(|| active.finish());
    // Still waiting means the guest awaits a host promise: finishing now reports it as a
    // promise that can never settle, but the real cause is the caller's choice of runSync.
    if waiting {
        outcome.ok = false;
        outcome.value = None;
        outcome.error = Some(ErrorInfo::invalid(
            "the code awaits a host promise, which runSync cannot wait for; use run()",
        ));
    }
    outcome
}

/// How long a time-sliced run holds the thread before it hands it back to the host's event loop.
const SLICE: Duration = Duration::from_millis(4);
/// Stack a time-sliced run gets beyond its guest allowance: the margin [`stack`] keeps free,
/// and room for the run's own frames above the guest.
const RUN_STACK_EXTRA: usize = stack::STACK_MARGIN + (256 << 10);

/// Finished runs' stacks a thread keeps for the next runs: mapping a stack of megabytes and
/// faulting its pages in again cost more than a short run.
const KEPT_STACKS: usize = 2;

thread_local! {
    static STACKS: std::cell::RefCell<Vec<DefaultStack>> = const { std::cell::RefCell::new(Vec::new()) };
}

fn stack_size(stack: &DefaultStack) -> usize {
    stack.base().get() - stack.limit().get()
}

/// A kept stack of exactly `size` usable bytes, if there is one.
fn reused_stack(size: usize) -> Option<DefaultStack> {
    STACKS
        .try_with(|kept| {
            let mut kept = kept.try_borrow_mut().ok()?;
            let i = kept
                .iter()
                .position(|s| stack_size(s) >= size && stack_size(s) < size + (64 << 10))?;
            Some(kept.swap_remove(i))
        })
        .ok()
        .flatten()
}

fn keep_stack(stack: DefaultStack) {
    let _ = STACKS.try_with(|kept| {
        if let Ok(mut kept) = kept.try_borrow_mut() {
            if kept.len() < KEPT_STACKS {
                kept.push(stack);
            }
        }
    });
}

type RunCoroutine = Coroutine<Resume, Step, RunOutcome, DefaultStack>;

/// The host bridge of a time-sliced run: every crossing runs on the thread's own stack.
struct OnHostStack {
    inner: Rc<dyn HostBridge>,
    slicer: Rc<Slicer>,
}

impl HostBridge for OnHostStack {
    fn get(&self, id: u32, key: &Key) -> HostResult<FromHost> {
        self.slicer.on_host(|| self.inner.get(id, key))
    }
    fn set(&self, id: u32, key: &Key, value: ToHost) -> HostResult<()> {
        self.slicer.on_host(|| self.inner.set(id, key, value))
    }
    fn has(&self, id: u32, key: &Key) -> HostResult<bool> {
        self.slicer.on_host(|| self.inner.has(id, key))
    }
    fn delete(&self, id: u32, key: &str) -> HostResult<bool> {
        self.slicer.on_host(|| self.inner.delete(id, key))
    }
    fn own_keys(&self, id: u32) -> HostResult<Vec<String>> {
        self.slicer.on_host(|| self.inner.own_keys(id))
    }
    fn describe(&self, id: u32, key: &str) -> HostResult<Option<bool>> {
        self.slicer.on_host(|| self.inner.describe(id, key))
    }
    fn call(&self, id: u32, this: Option<u32>, args: Vec<ToHost>) -> HostResult<FromHost> {
        self.slicer.on_host(|| self.inner.call(id, this, args))
    }
    fn construct(&self, id: u32, args: Vec<ToHost>) -> HostResult<FromHost> {
        self.slicer.on_host(|| self.inner.construct(id, args))
    }
    fn call_method(&self, method: u32, this: u32, args: Vec<ToHost>) -> HostResult<FromHost> {
        self.slicer
            .on_host(|| self.inner.call_method(method, this, args))
    }
    fn then(&self, id: u32, settle: u32) -> HostResult<()> {
        self.slicer.on_host(|| self.inner.then(id, settle))
    }
    fn attach(&self, guest: &Rc<GuestHandle>) {
        self.slicer.on_host(|| self.inner.attach(guest))
    }
}

/// A run with live host values that shares the host's thread in slices (`run()`): each step
/// runs the guest for at most about [`SLICE`], so the host's event loop keeps turning, and an
/// abort takes effect at the next slice.
pub struct SlicedRun {
    coroutine: Option<RunCoroutine>,
    slicer: Option<Rc<Slicer>>,
    cancel: CancelToken,
    deadline: Instant,
    outcome: Option<RunOutcome>,
    stepping: bool,
}

impl SlicedRun {
    /// Prepares the run; nothing of it runs before the first `step`.
    pub fn start(
        request: RunRequest,
        cancel: &CancelToken,
        live: LiveGlobals,
        promises: Rc<HostPromises>,
    ) -> SlicedRun {
        let deadline = Instant::now() + Duration::from_millis(request.limits.timeout_ms);
        let size = request.limits.stack_bytes.min(MAX_STACK_BYTES) + RUN_STACK_EXTRA;
        let stack = match reused_stack(size).map_or_else(|| DefaultStack::new(size), Ok) {
            Ok(stack) => stack,
            Err(e) => {
                return SlicedRun::ended(RunOutcome::failed(ErrorInfo::internal(format!(
                    "could not allocate the run's stack: {e}"
                ))))
            }
        };
        let slicer = Rc::new(Slicer {
            yielder: Cell::new(std::ptr::null()),
            on_run_stack: Cell::new(false),
            paused: Cell::new(false),
            slice_end: Cell::new(Instant::now()),
            floor: stack.limit().get(),
            parent_floor: Cell::new(None),
            timer_due: Cell::new(None),
        });
        let shared = slicer.clone();
        let token = cancel.clone();
        let coroutine = Coroutine::with_stack(stack, move |yielder, first: Resume| {
            shared.yielder.set(yielder);
            if first == Resume::Abandon {
                token.cancel();
            }
            let live = LiveGlobals {
                bridge: Rc::new(OnHostStack {
                    inner: live.bridge,
                    slicer: shared.clone(),
                }),
                slicer: Some(shared.clone()),
                ..live
            };
            let outcome =
                guarded(|| drive_sliced(yielder, &shared, request, &token, live, &promises));
            shared.yielder.set(std::ptr::null());
            outcome
        });
        SlicedRun {
            coroutine: Some(coroutine),
            slicer: Some(slicer),
            cancel: cancel.clone(),
            deadline,
            outcome: None,
            stepping: false,
        }
    }

    /// A run that ended before it started (bad input, a failed setup).
    pub fn ended(outcome: RunOutcome) -> SlicedRun {
        SlicedRun {
            coroutine: None,
            slicer: None,
            cancel: CancelToken::new(),
            deadline: Instant::now(),
            outcome: Some(outcome),
            stepping: false,
        }
    }

    /// Runs the guest for one slice at most.
    pub fn step(&mut self) -> Step {
        self.resume(Resume::Continue)
    }

    fn resume(&mut self, input: Resume) -> Step {
        // Stepping from inside a step (host code the guest called) would resume a running run.
        if self.stepping {
            return Step::Waiting;
        }
        let (Some(coroutine), Some(slicer)) = (self.coroutine.as_mut(), self.slicer.as_ref())
        else {
            return Step::Finished;
        };
        self.stepping = true;
        slicer.slice_end.set(Instant::now() + SLICE);
        slicer
            .parent_floor
            .set(stack::set_run_stack_floor(Some(slicer.floor)));
        slicer.on_run_stack.set(true);
        let result = coroutine.resume(input);
        slicer.on_run_stack.set(false);
        stack::set_run_stack_floor(slicer.parent_floor.get());
        self.stepping = false;
        match result {
            CoroutineResult::Yield(step) => step,
            CoroutineResult::Return(outcome) => {
                self.outcome = Some(outcome);
                if let Some(done) = self.coroutine.take() {
                    keep_stack(done.into_stack());
                }
                Step::Finished
            }
        }
    }

    /// Milliseconds until the run must be stepped again though nothing woke it: its next
    /// timer, or its deadline.
    pub fn remaining_ms(&self) -> f64 {
        let timer = self.slicer.as_ref().and_then(|s| s.timer_due.get());
        let wake = timer.map_or(self.deadline, |t| t.min(self.deadline));
        wake.saturating_duration_since(Instant::now()).as_secs_f64() * 1000.0
    }

    /// The run's outcome, once a step returned `Finished`; a run still in progress is
    /// cancelled and run to its end first.
    pub fn finish(&mut self) -> RunOutcome {
        self.stop();
        self.outcome
            .take()
            .unwrap_or_else(|| RunOutcome::failed(ErrorInfo::internal("the run already finished")))
    }

    /// Cancels a run in progress and resumes it until it has ended: a coroutine suspended in
    /// the middle of the guest must never be dropped (unwinding it would cross the engine's C
    /// frames).
    fn stop(&mut self) {
        if self.coroutine.is_none() || self.stepping {
            return;
        }
        self.cancel.cancel();
        while self.coroutine.is_some() {
            self.resume(Resume::Abandon);
        }
    }
}

impl Drop for SlicedRun {
    fn drop(&mut self) {
        self.stop();
        if self.coroutine.is_some() {
            // Dropped from inside its own step (which cannot happen through the public API):
            // leaking the stack is the only safe choice left.
            std::mem::forget(self.coroutine.take());
        }
    }
}

/// The body of a time-sliced run, on its own stack.
fn drive_sliced(
    yielder: &Yielder<Resume, Step>,
    slicer: &Slicer,
    request: RunRequest,
    cancel: &CancelToken,
    live: LiveGlobals,
    promises: &HostPromises,
) -> RunOutcome {
    let mut active = match ActiveRun::start(request, cancel, Some(live)) {
        Ok(active) => active,
        Err(outcome) => return outcome,
    };
    loop {
        promises.deliver(&mut active);
        match active.pump(true) {
            Pump::Finished => break,
            Pump::Waiting(timer) if timer.is_some() || promises.any_pending() => {
                slicer
                    .timer_due
                    .set(timer.map(|wait| Instant::now() + wait));
                let resumed = yielder.suspend(Step::Waiting);
                slicer.timer_due.set(None);
                if resumed == Resume::Abandon {
                    cancel.cancel();
                }
            }
            Pump::Waiting(_) => {
                active.pump(false);
                break;
            }
        }
    }
    active.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::membrane::RefKind;
    use crate::engine::{Data, ErrorCode};

    /// A host with one global: a promise (handle 1) whose settlement the test controls.
    struct PromiseHost {
        promises: Rc<HostPromises>,
        asked: Cell<Option<u32>>,
        /// Where on the stack the last host function call ran.
        calls_from: Cell<Option<usize>>,
    }

    impl HostBridge for PromiseHost {
        fn get(&self, _: u32, _: &Key) -> HostResult<FromHost> {
            Ok(FromHost::Prim(Data::Undefined))
        }
        fn set(&self, _: u32, _: &Key, _: ToHost) -> HostResult<()> {
            Ok(())
        }
        fn has(&self, _: u32, _: &Key) -> HostResult<bool> {
            Ok(false)
        }
        fn delete(&self, _: u32, _: &str) -> HostResult<bool> {
            Ok(false)
        }
        fn own_keys(&self, _: u32) -> HostResult<Vec<String>> {
            Ok(Vec::new())
        }
        fn describe(&self, _: u32, _: &str) -> HostResult<Option<bool>> {
            Ok(None)
        }
        fn call(&self, _: u32, _: Option<u32>, _: Vec<ToHost>) -> HostResult<FromHost> {
            self.calls_from.set(Some(stack::stack_position()));
            Ok(FromHost::Prim(Data::Undefined))
        }
        fn construct(&self, _: u32, _: Vec<ToHost>) -> HostResult<FromHost> {
            Ok(FromHost::Prim(Data::Undefined))
        }
        fn then(&self, _: u32, settle: u32) -> HostResult<()> {
            self.promises.awaiting();
            self.asked.set(Some(settle));
            Ok(())
        }
    }

    fn start(source: &str) -> (SlicedRun, Rc<PromiseHost>, Rc<HostPromises>) {
        start_with(
            RunRequest::new(source),
            vec![("later".into(), FromHost::Ref(1, RefKind::Promise))],
            &CancelToken::new(),
        )
    }

    fn live_globals(
        globals: Vec<(String, FromHost)>,
    ) -> (LiveGlobals, Rc<PromiseHost>, Rc<HostPromises>) {
        let promises = Rc::new(HostPromises::default());
        let host = Rc::new(PromiseHost {
            promises: promises.clone(),
            asked: Cell::new(None),
            calls_from: Cell::new(None),
        });
        let live = LiveGlobals {
            bridge: host.clone(),
            globals,
            budget: 1_000_000,
            slicer: None,
        };
        (live, host, promises)
    }

    fn start_with(
        request: RunRequest,
        globals: Vec<(String, FromHost)>,
        cancel: &CancelToken,
    ) -> (SlicedRun, Rc<PromiseHost>, Rc<HostPromises>) {
        let (live, host, promises) = live_globals(globals);
        let run = SlicedRun::start(request, cancel, live, promises.clone());
        (run, host, promises)
    }

    /// Steps until the run finishes; returns how many times it paused.
    fn step_to_end(run: &mut SlicedRun) -> usize {
        let mut pauses = 0;
        loop {
            match run.step() {
                Step::Finished => return pauses,
                Step::Paused => pauses += 1,
                Step::Waiting => panic!("nothing to wait for"),
            }
        }
    }

    #[test]
    fn finished_runs_hand_their_stack_to_the_next_run_and_it_still_stops_deep_recursion() {
        std::thread::spawn(|| {
            let kept = || STACKS.with(|k| k.borrow().len());
            assert_eq!(kept(), 0);
            let (mut first, _, _) = start("return 1");
            step_to_end(&mut first);
            assert!(first.finish().ok);
            assert_eq!(kept(), 1, "the finished run's stack is kept");
            let (mut second, _, _) = start("const f = (n) => f(n + 1) + 1; return f(0)");
            assert_eq!(kept(), 0, "the next run takes it");
            step_to_end(&mut second);
            let error = second.finish().error.expect("a stack overflow");
            assert_eq!(error.name, "RangeError", "{error:?}");
            assert_eq!(kept(), 1);
            // A run with another stack size maps a stack of its own.
            let mut small = RunRequest::new("return 2");
            small.limits.stack_bytes = 256 << 10;
            let (mut third, _, _) = start_with(small, Vec::new(), &CancelToken::new());
            assert_eq!(kept(), 1);
            step_to_end(&mut third);
            assert!(third.finish().ok);
            assert_eq!(kept(), 2);
        })
        .join()
        .expect("the thread survives");
    }

    #[test]
    fn waits_for_a_host_promise_and_resumes_when_it_settles() {
        let (mut run, host, promises) = start("return (await later) + 1");
        assert_eq!(
            run.step(),
            Step::Waiting,
            "the run waits while the promise is out"
        );
        let settle = host.asked.get().expect("the guest asked for the promise");
        promises.settled(settle, Ok(FromHost::Prim(Data::Number(41.0))));
        assert_eq!(run.step(), Step::Finished);
        let outcome = run.finish();
        assert!(outcome.ok, "{:?}", outcome.error);
        assert_eq!(outcome.value, Some(Data::Number(42.0)));
    }

    #[test]
    fn a_host_rejection_reaches_the_guest_as_an_error() {
        let (mut run, host, promises) =
            start("try { await later } catch (e) { return e.name + ': ' + e.message }");
        assert_eq!(run.step(), Step::Waiting);
        let settle = host.asked.get().expect("asked");
        promises.settled(settle, Err(HostFailure::new("RangeError", "no")));
        assert_eq!(run.step(), Step::Finished);
        let outcome = run.finish();
        assert_eq!(
            outcome.value,
            Some(Data::String(crate::engine::marshal::Text::Utf8(
                "RangeError: no".into()
            )))
        );
    }

    #[test]
    fn run_to_end_refuses_to_wait_for_a_host_promise() {
        let (live, _, promises) =
            live_globals(vec![("later".into(), FromHost::Ref(1, RefKind::Promise))]);
        let outcome = run_to_end(
            RunRequest::new("return await later"),
            &CancelToken::new(),
            live,
            &promises,
        );
        let error = outcome.error.expect("an error");
        assert_eq!(error.code, ErrorCode::InvalidInput);
        assert!(error.message.contains("use run()"), "{}", error.message);
    }

    #[test]
    fn a_run_that_awaits_nothing_pending_finishes_at_once() {
        let (mut run, _, _) = start_with(
            RunRequest::new("await new Promise(() => {}); return 1"),
            Vec::new(),
            &CancelToken::new(),
        );
        assert_eq!(
            run.step(),
            Step::Finished,
            "nothing could ever settle the guest's own promise"
        );
        let error = run.finish().error.expect("an error");
        assert_eq!(error.code, ErrorCode::Timeout);
    }

    #[test]
    fn an_abandoned_waiting_run_releases_its_realm() {
        let (mut run, _, _) = start("return await later");
        assert_eq!(run.step(), Step::Waiting);
        // Dropped while waiting: the run is stopped and its runtime freed cleanly.
        drop(run);
    }

    #[test]
    fn a_busy_run_hands_the_thread_back_in_slices() {
        let (mut run, _, _) = start_with(
            RunRequest::new("let n = 0; const end = Date.now() + 60; while (Date.now() < end) n++; return n > 0"),
            Vec::new(),
            &CancelToken::new(),
        );
        let mut longest = Duration::ZERO;
        let mut pauses = 0;
        loop {
            let began = Instant::now();
            let step = run.step();
            longest = longest.max(began.elapsed());
            match step {
                Step::Paused => pauses += 1,
                Step::Finished => break,
                Step::Waiting => panic!("nothing to wait for"),
            }
        }
        assert!(
            pauses >= 5,
            "60 ms of work in 4 ms slices paused {pauses} times"
        );
        // The first step also builds the realm; none may hold the thread for long.
        assert!(longest < Duration::from_millis(40), "{longest:?}");
        assert_eq!(run.finish().value, Some(Data::Bool(true)));
    }

    #[test]
    fn a_run_cancelled_between_slices_stops_at_the_next_one() {
        let cancel = CancelToken::new();
        let (mut run, _, _) = start_with(RunRequest::new("for (;;) {}"), Vec::new(), &cancel);
        assert_eq!(run.step(), Step::Paused);
        cancel.cancel();
        assert_eq!(run.step(), Step::Finished);
        assert_eq!(
            run.finish().error.map(|e| e.code),
            Some(ErrorCode::Cancelled)
        );
    }

    #[test]
    fn a_run_dropped_in_the_middle_of_the_guest_is_stopped_cleanly() {
        let (mut run, _, _) = start_with(
            RunRequest::new("const a = []; for (;;) a.push({ x: [1, 2, 3] })"),
            Vec::new(),
            &CancelToken::new(),
        );
        assert_eq!(run.step(), Step::Paused);
        drop(run);
        // The thread goes on: a new run works.
        let (mut next, _, _) =
            start_with(RunRequest::new("return 7"), Vec::new(), &CancelToken::new());
        step_to_end(&mut next);
        assert_eq!(next.finish().value, Some(Data::Number(7.0)));
    }

    #[test]
    fn host_calls_run_on_the_threads_own_stack() {
        let (mut run, host, _) = start_with(
            RunRequest::new("f(); return 1"),
            vec![("f".into(), FromHost::Ref(2, RefKind::Function))],
            &CancelToken::new(),
        );
        let here = stack::stack_position();
        step_to_end(&mut run);
        assert!(run.finish().ok);
        let there = host.calls_from.get().expect("the host function was called");
        // The run's own stack is a separate mapping; the host call ran near this frame.
        assert!(here.abs_diff(there) < (1 << 20), "{here:#x} vs {there:#x}");
    }

    #[test]
    fn deep_recursion_on_the_run_stack_fails_cleanly() {
        for stack_bytes in [256 << 10, 8 << 20, 32 << 20] {
            let mut request = RunRequest::new(
                "let depth = 0; const f = (n) => { depth = n; return f(n + 1) + 1 };
                 try { f(0) } catch (e) { return [e.name, depth] }",
            );
            request.limits.stack_bytes = stack_bytes;
            let (mut run, _, _) = start_with(request, Vec::new(), &CancelToken::new());
            step_to_end(&mut run);
            let outcome = run.finish();
            let Some(Data::Array(items)) = outcome.value else {
                panic!("{outcome:?}")
            };
            assert_eq!(
                items[0],
                Data::String(crate::engine::marshal::Text::Utf8("RangeError".into()))
            );
            let Data::Number(depth) = items[1] else {
                panic!("{items:?}")
            };
            assert!(
                depth > (stack_bytes / 2048) as f64,
                "{stack_bytes}: {depth}"
            );
        }
    }

    /// Adds `summary` once the live globals are bound: it reads the live `hostTitle` and keeps
    /// the live `later` (a proxy, which must stay live).
    struct SummaryExtension {
        derivable: bool,
    }

    impl crate::engine::RealmExtension for SummaryExtension {
        fn bound<'js>(
            &self,
            ctx: &rquickjs::Ctx<'js>,
            global: &rquickjs::Object<'js>,
        ) -> rquickjs::Result<()> {
            let title: String = global.get("hostTitle")?;
            let summary = rquickjs::Object::new(ctx.clone())?;
            summary.set("title", format!("{title}!"))?;
            let nested = rquickjs::Object::new(ctx.clone())?;
            nested.set("depth", 1)?;
            summary.set("nested", nested)?;
            summary.set("later", global.get::<_, rquickjs::Value>("later")?)?;
            global.set("summary", summary)
        }

        fn derivable(&self) -> bool {
            self.derivable
        }
    }

    #[test]
    fn an_extension_reads_the_live_globals_of_its_run_and_its_globals_are_frozen() {
        for derivable in [true, false] {
            let mut request = RunRequest::new(
                "'use strict';
                 const tries = [() => { summary.title = 'x' }, () => { summary.nested.depth = 2 },
                   () => { summary.added = 1 }, () => { summary = 1 }, () => { delete globalThis.summary }];
                 const refused = tries.map((f) => { try { f(); return false } catch (e) { return e instanceof TypeError } });
                 return [summary.title, summary.nested.depth, summary.later === later,
                   Object.isFrozen(summary), Object.isFrozen(summary.nested), refused.join()].join('|')",
            );
            request.extension = Some(crate::engine::Extension(std::sync::Arc::new(
                SummaryExtension { derivable },
            )));
            let (live, _, promises) = live_globals(vec![
                ("hostTitle".into(), FromHost::Prim(Data::str("from host"))),
                ("later".into(), FromHost::Ref(1, RefKind::Promise)),
            ]);
            let outcome = run_to_end(request, &CancelToken::new(), live, &promises);
            assert!(outcome.ok, "derivable {derivable}: {:?}", outcome.error);
            assert_eq!(
                outcome.value,
                Some(Data::str(
                    "from host!|1|true|true|true|true,true,true,true,true"
                )),
                "derivable {derivable}"
            );
            // The next run on the thread has neither.
            let next = crate::engine::execute(
                &RunRequest::new("return [typeof summary, typeof hostTitle].join()"),
                &CancelToken::new(),
            );
            assert_eq!(next.value, Some(Data::str("undefined,undefined")));
        }
    }
}
