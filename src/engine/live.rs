//! Runs with live host values. Such a run may await host promises: it then pauses, the host
//! goes on with its event loop, and the run resumes when a promise settles. This module decides
//! when a run has finished and when it is waiting; the host side only delivers settlements and
//! calls [`LiveRun::step`] again.

use super::errors::ErrorInfo;
use super::limits::CancelToken;
use super::membrane::{FromHost, HostFailure};
use super::run::{guarded, ActiveRun, LiveGlobals, Pump, RunOutcome, RunRequest};
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;
use std::time::Instant;

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

    fn next(&self) -> Option<Settlement> {
        self.settled.borrow_mut().pop_front()
    }
}

/// One live run, from start to its outcome.
pub struct LiveRun {
    active: Option<ActiveRun>,
    promises: Rc<HostPromises>,
    outcome: Option<RunOutcome>,
}

impl LiveRun {
    /// Starts the guest code; a run that cannot start has its outcome already.
    pub fn start(
        request: RunRequest,
        cancel: &CancelToken,
        live: LiveGlobals,
        promises: Rc<HostPromises>,
    ) -> LiveRun {
        match ActiveRun::start(request, cancel, Some(live)) {
            Ok(active) => LiveRun {
                active: Some(active),
                promises,
                outcome: None,
            },
            Err(outcome) => LiveRun::ended(outcome),
        }
    }

    /// A run that ended before it started (bad input, a failed setup).
    pub fn ended(outcome: RunOutcome) -> LiveRun {
        LiveRun {
            active: None,
            promises: Rc::default(),
            outcome: Some(outcome),
        }
    }

    /// Delivers settled host promises and runs the guest's jobs. True when the run has
    /// finished (take its outcome with `finish`), false while it waits for a host promise.
    pub fn step(&mut self) -> bool {
        self.advance(true)
    }

    fn advance(&mut self, can_wait: bool) -> bool {
        let Some(active) = self.active.as_mut() else {
            return true;
        };
        while let Some((settle, outcome)) = self.promises.next() {
            active.settle(settle, outcome);
        }
        // Whether anything could still settle the result is known only after the queued jobs
        // ran: resuming after one host promise may await the next.
        match active.pump(can_wait) {
            Pump::Finished => true,
            Pump::Waiting if self.promises.any_pending() => false,
            Pump::Waiting => active.pump(false) == Pump::Finished,
        }
    }

    /// Milliseconds until the run's deadline (0 once it has ended).
    pub fn remaining_ms(&self) -> f64 {
        match &self.active {
            Some(active) => {
                active
                    .watchdog()
                    .deadline
                    .saturating_duration_since(Instant::now())
                    .as_secs_f64()
                    * 1000.0
            }
            None => 0.0,
        }
    }

    /// Ends the run: copies the result out and releases the realm.
    pub fn finish(&mut self) -> RunOutcome {
        if let Some(outcome) = self.outcome.take() {
            return outcome;
        }
        match self.active.take() {
            Some(active) => guarded(|| active.finish()),
            None => RunOutcome::failed(ErrorInfo::internal("the run already finished")),
        }
    }

    /// Runs to the end on the calling thread, without waiting for host promises (`runSync`).
    pub fn run_to_end(mut self) -> RunOutcome {
        let waiting = !self.advance(true);
        let mut outcome = self.finish();
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::membrane::{HostBridge, HostResult, Key, RefKind, ToHost};
    use crate::engine::ErrorCode;

    /// A host with one global: a promise (handle 1) whose settlement the test controls.
    struct PromiseHost {
        promises: Rc<HostPromises>,
        asked: Cell<Option<u32>>,
    }

    impl HostBridge for PromiseHost {
        fn get(&self, _: u32, _: &Key) -> HostResult<FromHost> {
            Ok(FromHost::Prim(crate::engine::Data::Undefined))
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
            Ok(FromHost::Prim(crate::engine::Data::Undefined))
        }
        fn construct(&self, _: u32, _: Vec<ToHost>) -> HostResult<FromHost> {
            Ok(FromHost::Prim(crate::engine::Data::Undefined))
        }
        fn then(&self, _: u32, settle: u32) -> HostResult<()> {
            self.promises.awaiting();
            self.asked.set(Some(settle));
            Ok(())
        }
    }

    fn start(source: &str) -> (LiveRun, Rc<PromiseHost>, Rc<HostPromises>) {
        start_with(
            source,
            vec![("later".into(), FromHost::Ref(1, RefKind::Promise))],
        )
    }

    fn start_with(
        source: &str,
        globals: Vec<(String, FromHost)>,
    ) -> (LiveRun, Rc<PromiseHost>, Rc<HostPromises>) {
        let promises = Rc::new(HostPromises::default());
        let host = Rc::new(PromiseHost {
            promises: promises.clone(),
            asked: Cell::new(None),
        });
        let live = LiveGlobals {
            bridge: host.clone(),
            globals,
            budget: 1000,
        };
        let run = LiveRun::start(
            RunRequest::new(source),
            &CancelToken::new(),
            live,
            promises.clone(),
        );
        (run, host, promises)
    }

    #[test]
    fn waits_for_a_host_promise_and_resumes_when_it_settles() {
        let (mut run, host, promises) = start("return (await later) + 1");
        assert!(!run.step(), "the run waits while the host promise is out");
        let settle = host.asked.get().expect("the guest asked for the promise");
        promises.settled(
            settle,
            Ok(FromHost::Prim(crate::engine::Data::Number(41.0))),
        );
        assert!(run.step(), "the run finishes once the promise settled");
        let outcome = run.finish();
        assert!(outcome.ok, "{:?}", outcome.error);
        assert_eq!(outcome.value, Some(crate::engine::Data::Number(42.0)));
    }

    #[test]
    fn a_host_rejection_reaches_the_guest_as_an_error() {
        let (mut run, host, promises) =
            start("try { await later } catch (e) { return e.name + ': ' + e.message }");
        assert!(!run.step());
        let settle = host.asked.get().expect("asked");
        promises.settled(settle, Err(HostFailure::new("RangeError", "no")));
        assert!(run.step());
        let outcome = run.finish();
        assert_eq!(
            outcome.value,
            Some(crate::engine::Data::String(
                crate::engine::marshal::Text::Utf8("RangeError: no".into())
            ))
        );
    }

    #[test]
    fn run_to_end_refuses_to_wait_for_a_host_promise() {
        let (run, _, _) = start("return await later");
        let outcome = run.run_to_end();
        let error = outcome.error.expect("an error");
        assert_eq!(error.code, ErrorCode::InvalidInput);
        assert!(error.message.contains("use run()"), "{}", error.message);
    }

    #[test]
    fn a_run_that_awaits_nothing_pending_finishes_at_once() {
        let (mut run, _, _) = start_with("await new Promise(() => {}); return 1", Vec::new());
        assert!(
            run.step(),
            "nothing could ever settle the guest's own promise"
        );
        let error = run.finish().error.expect("an error");
        assert_eq!(error.code, ErrorCode::Timeout);
    }

    #[test]
    fn an_abandoned_run_releases_its_realm() {
        let (mut run, _, _) = start("return await later");
        assert!(!run.step());
        // Dropped while waiting: the runtime must still be freed cleanly (no leaked objects).
        drop(run);
    }

    #[test]
    fn an_ended_run_reports_its_outcome_once() {
        let mut run = LiveRun::ended(RunOutcome::failed(ErrorInfo::invalid("bad")));
        assert!(run.step());
        assert_eq!(run.finish().error.map(|e| e.message), Some("bad".into()));
        assert_eq!(
            run.finish().error.map(|e| e.code),
            Some(ErrorCode::Internal)
        );
    }
}
