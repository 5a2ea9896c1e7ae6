//! What a run writes: `emit()` output and captured console lines under one byte cap, and the
//! per-run slot that a realm's bindings and interrupt handler read.

use super::super::limits::{StopReason, Watchdog};
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

/// Output shared by `emit()` and console capture, bounded by one byte cap.
#[derive(Debug)]
pub struct OutputSink {
    pub output: String,
    pub logs: Vec<LogEntry>,
    used: usize,
    cap: usize,
    pub overflowed: bool,
}

pub(crate) fn floor_boundary(s: &str, max: usize) -> usize {
    let mut end = max.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    end
}

impl OutputSink {
    pub fn new(cap: usize) -> Self {
        OutputSink {
            output: String::new(),
            logs: Vec::new(),
            used: 0,
            cap,
            overflowed: false,
        }
    }

    /// Appends to the emitted output; false once the cap is exceeded (the rest is dropped).
    pub fn emit(&mut self, s: &str) -> bool {
        let room = self.cap - self.used;
        if s.len() <= room {
            self.output.push_str(s);
            self.used += s.len();
            return true;
        }
        let end = floor_boundary(s, room);
        self.output.push_str(&s[..end]);
        self.used += end;
        self.overflowed = true;
        false
    }

    pub fn log(&mut self, level: &'static str, message: String) -> bool {
        let room = self.cap - self.used;
        let cost = message.len();
        if cost <= room {
            self.used += cost;
            self.logs.push(LogEntry { level, message });
            return true;
        }
        let end = floor_boundary(&message, room);
        self.used += end;
        self.logs.push(LogEntry {
            level,
            message: message[..end].to_string(),
        });
        self.overflowed = true;
        false
    }
}

/// Per-run state read by a realm's host bindings and interrupt handler, so a realm prepared
/// ahead of time can be handed to the run that takes it.
pub struct RunSlot {
    pub input: RefCell<String>,
    pub capture: Cell<bool>,
    pub sink: RefCell<OutputSink>,
    pub watchdog: RefCell<Arc<Watchdog>>,
}

impl RunSlot {
    pub fn new(watchdog: Arc<Watchdog>) -> Rc<RunSlot> {
        Rc::new(RunSlot {
            input: RefCell::new(String::new()),
            capture: Cell::new(true),
            sink: RefCell::new(OutputSink::new(0)),
            watchdog: RefCell::new(watchdog),
        })
    }

    pub(crate) fn stop(&self, reason: StopReason) {
        self.watchdog.borrow().stop(reason);
    }
}
