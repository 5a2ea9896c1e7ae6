//! What a run writes: `emit()` output and captured console lines under one byte cap, and the
//! per-run slot that a realm's bindings and interrupt handler read.

use super::console::clip;
use super::limits::{StopReason, Watchdog};
use super::slicer::Slicer;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConsoleMode {
    /// Console output is captured into the run's logs (and counts toward the output cap).
    Capture,
    /// `console` exists but prints nowhere.
    Discard,
    /// No `console` global at all (deny-by-default profile).
    Absent,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogEntry {
    pub level: &'static str,
    pub message: String,
}

/// Told about every console line as it is captured (on the run's thread, so it must be quick).
#[derive(Clone)]
pub struct LogListener(pub Arc<dyn Fn(&LogEntry) + Send + Sync>);

impl std::fmt::Debug for LogListener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LogListener")
    }
}

/// Output shared by `emit()` and console capture, bounded by one byte cap.
#[derive(Debug)]
pub(crate) struct OutputSink {
    pub(crate) output: String,
    pub(crate) logs: Vec<LogEntry>,
    used: usize,
    cap: usize,
    pub(crate) overflowed: bool,
    listener: Option<LogListener>,
}

impl OutputSink {
    pub(crate) fn new(cap: usize) -> Self {
        OutputSink {
            output: String::new(),
            logs: Vec::new(),
            used: 0,
            cap,
            overflowed: false,
            listener: None,
        }
    }

    /// The same sink, telling `listener` about each console line as it is captured.
    pub(crate) fn with_listener(mut self, listener: Option<LogListener>) -> Self {
        self.listener = listener;
        self
    }

    /// Appends to the emitted output; false once the cap is exceeded (the rest is dropped).
    pub(crate) fn emit(&mut self, s: &str) -> bool {
        let room = self.cap - self.used;
        if s.len() <= room {
            self.output.push_str(s);
            self.used += s.len();
            return true;
        }
        let kept = clip(s, room);
        self.output.push_str(kept);
        self.used += kept.len();
        self.overflowed = true;
        false
    }

    pub(crate) fn log(&mut self, level: &'static str, message: String) -> bool {
        let room = self.cap - self.used;
        let cost = message.len();
        let fits = cost <= room;
        let message = if fits {
            message
        } else {
            clip(&message, room).to_string()
        };
        self.used += message.len();
        self.logs.push(LogEntry { level, message });
        if let (Some(listener), Some(entry)) = (&self.listener, self.logs.last()) {
            (listener.0)(entry);
        }
        self.overflowed |= !fits;
        fits
    }
}

/// Per-run state read by a realm's host bindings and interrupt handler, so a realm prepared
/// ahead of time can be handed to the run that takes it.
pub(crate) struct RunSlot {
    pub(crate) input: RefCell<String>,
    pub(crate) capture: Cell<bool>,
    pub(crate) sink: RefCell<OutputSink>,
    pub(crate) watchdog: RefCell<Arc<Watchdog>>,
    /// The guest's stack allowance and the absolute limit in force (see `engine::stack`).
    pub(crate) stack_bytes: Cell<usize>,
    pub(crate) stack_limit: Cell<usize>,
    /// Set for a time-sliced run: the interrupt handler hands the thread back through it.
    pub(crate) slicer: RefCell<Option<Rc<Slicer>>>,
    /// Spaces before each console line: two per open `console.group`.
    pub(crate) group_indent: Cell<usize>,
    /// Set once the run scheduled a timer or used a console counter or timer: state the
    /// template's helpers keep, which must be reset before the template serves another run.
    pub(crate) helpers_touched: Cell<bool>,
}

impl RunSlot {
    pub(crate) fn new(watchdog: Arc<Watchdog>) -> Rc<RunSlot> {
        Rc::new(RunSlot {
            input: RefCell::new(String::new()),
            capture: Cell::new(true),
            sink: RefCell::new(OutputSink::new(0)),
            watchdog: RefCell::new(watchdog),
            stack_bytes: Cell::new(0),
            stack_limit: Cell::new(0),
            slicer: RefCell::new(None),
            group_indent: Cell::new(0),
            helpers_touched: Cell::new(false),
        })
    }

    /// The native `touch()` the template's helpers call before they keep per-run state.
    pub(crate) fn touch_function<'js>(
        self: &Rc<Self>,
        ctx: &rquickjs::Ctx<'js>,
    ) -> rquickjs::Result<rquickjs::Function<'js>> {
        let slot = self.clone();
        rquickjs::Function::new(ctx.clone(), move || slot.helpers_touched.set(true))
    }

    pub(crate) fn stop(&self, reason: StopReason) {
        self.watchdog.borrow().stop(reason);
    }

    /// The interrupt handler's answer: true stops the guest. A time-sliced run whose slice is
    /// spent pauses here, and is checked again when it resumes.
    pub(crate) fn should_interrupt(&self) -> bool {
        if self.watchdog.borrow().should_stop() {
            return true;
        }
        let slicer = self.slicer.borrow().clone();
        if let Some(slicer) = slicer {
            if slicer.pause_if_due() {
                return self.watchdog.borrow().should_stop();
            }
        }
        false
    }

    /// Whether guest code may be entered now: not while a time-sliced run is paused between
    /// slices, in the middle of whatever it was doing.
    pub(crate) fn paused(&self) -> bool {
        self.slicer.borrow().as_ref().is_some_and(|s| s.is_paused())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emit_and_logs_share_one_cap_and_never_split_a_character() {
        let mut sink = OutputSink::new(8);
        assert!(sink.emit("ab"));
        assert!(sink.log("log", "cd".into()));
        assert!(sink.emit("é"));
        assert!(!sink.overflowed);
        // 3 bytes with 2 left: the 'x' fits, half an 'é' would not.
        assert!(!sink.emit("xé"));
        assert_eq!(sink.output, "abéx");
        assert!(sink.overflowed);
        assert!(!sink.log("warn", "é".into()));
        assert_eq!(sink.logs.last().unwrap().message, "");
        assert_eq!(sink.used, 7);
    }
}
