//! The journal of a turn: the result of every host operation in the order the guest called
//! them. A turn re-run after an approval is deterministic up to its next operation call, so the
//! calls that already ran are answered from here instead of running again.

use serde::{Deserialize, Serialize};

/// One operation call and how it ended, both as JSON text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JournalEntry {
    /// The operation's name.
    pub operation: String,
    /// Its arguments.
    pub args: String,
    /// The value it answered with (when `error` is `None`).
    pub value: Option<String>,
    /// The error it threw.
    pub error: Option<String>,
}

/// What to do with the next call of a re-run turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Replay<'a> {
    /// It ran before: answer with this.
    Recorded(&'a JournalEntry),
    /// It is past the end of the journal: run it (and record it).
    Live,
    /// The re-run called something else than the recorded run at this point.
    Diverged {
        /// What the journal holds here.
        expected: &'a JournalEntry,
    },
}

/// The calls of one turn, and how far a re-run has got.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Journal {
    entries: Vec<JournalEntry>,
    /// The world calls of the turn, in call order, as [`super::gate::world_key`] identifies
    /// them: a re-run re-executes them and must make the same ones.
    #[serde(default)]
    world: Vec<String>,
    #[serde(skip)]
    cursor: usize,
}

impl Journal {
    /// Starts a re-run from the first call.
    pub fn rewind(&mut self) {
        self.cursor = 0;
    }

    /// Empties the journal (a turn ended for good).
    pub fn clear(&mut self) {
        self.entries.clear();
        self.world.clear();
        self.cursor = 0;
    }

    /// The next call, `operation(args)`: answered from the journal, to be run, or diverging
    /// from the recorded run. A recorded answer moves the cursor on.
    pub fn next(&mut self, operation: &str, args: &str) -> Replay<'_> {
        match self.entries.get(self.cursor) {
            None => Replay::Live,
            Some(e) if e.operation == operation && e.args == args => {
                self.cursor += 1;
                Replay::Recorded(e)
            }
            Some(e) => Replay::Diverged { expected: e },
        }
    }

    /// Records a call that ran (after [`Journal::next`] said [`Replay::Live`]).
    pub fn record(&mut self, entry: JournalEntry) {
        self.entries.push(entry);
        self.cursor = self.entries.len();
    }

    /// Replaces the recorded calls with `entries` (kept elsewhere, e.g. a database written as
    /// each call completed) and starts a re-run from the first; world keys stay as they were.
    pub fn seed(&mut self, entries: Vec<JournalEntry>) {
        self.entries = entries;
        self.cursor = 0;
    }

    /// The recorded calls.
    pub fn entries(&self) -> &[JournalEntry] {
        &self.entries
    }

    /// The key of the `index`th world call of the recorded run.
    pub fn world_key(&self, index: usize) -> Option<&str> {
        self.world.get(index).map(String::as_str)
    }

    /// Records the key of a world call made past the end of the recorded run.
    pub fn push_world_key(&mut self, key: String) {
        self.world.push(key);
    }

    /// How many calls a re-run has answered so far.
    pub fn position(&self) -> usize {
        self.cursor
    }
}
