//! What a run is asked for (source, mode, limits, a deterministic start, realm extensions) and
//! what it gives back. Below `realm` (which reads the extension hooks and the deterministic
//! start) and `run` (which carries a request out).

use super::errors::ErrorInfo;
use super::limits::Limits;
use super::marshal::Data;
use super::output::{ConsoleMode, LogEntry, LogListener};
use rquickjs::{Ctx, Object, Runtime};
use std::sync::Arc;

/// Most unhandled rejections a run reports.
pub const MAX_UNHANDLED_REPORTED: usize = 10;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The body of an async function: `return` and top-level `await` both work.
    Function,
    /// A classic script; the result is its completion value.
    Script,
    /// An ES module; the result is its exports namespace.
    Module,
    /// A cell of a persistent realm: a classic script whose top-level declarations are the
    /// realm's state, with top-level `await`; the result is its completion value.
    Repl,
}

/// A run over a persistent realm's state (see `state.rs`): the sealed state it starts from
/// (none: an empty realm) and the key that seals it, in and out.
#[derive(Clone)]
pub struct PersistState {
    pub sealed: Option<Arc<Vec<u8>>>,
    pub key: Arc<Vec<u8>>,
    /// Keep the state only when the run succeeds; otherwise a failed run keeps what its
    /// completed statements left.
    pub transactional: bool,
}

impl std::fmt::Debug for PersistState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PersistState")
            .field("bytes", &self.sealed.as_ref().map(|s| s.len()))
            .field("transactional", &self.transactional)
            .finish()
    }
}

/// Hooks for layers that extend a realm (workspace execution, sessions). Every hook runs on the
/// thread that executes the run.
pub trait RealmExtension: Send + Sync {
    /// Called on the fresh runtime before its context exists (e.g. to install a module loader).
    /// Not called for a run whose context is derived from the thread's template (see
    /// [`RealmExtension::derivable`]).
    fn configure_runtime(&self, _rt: &Runtime) {}
    /// Installs extra globals. In a realm built for the run this happens before lockdown, so
    /// they are frozen with the realm; in a context derived from the thread's template they
    /// are frozen the same way once installed.
    fn install(&self, _ctx: &Ctx<'_>) -> rquickjs::Result<()> {
        Ok(())
    }
    /// Called once the run's live globals are bound (also when there are none), with the
    /// global object: the extension may read them and add globals of its own, which are then
    /// frozen as lockdown freezes the rest.
    fn bound<'js>(&self, _ctx: &Ctx<'js>, _global: &Object<'js>) -> rquickjs::Result<()> {
        Ok(())
    }
    /// Whether the run's context may be derived from the thread's frozen template instead of
    /// built from scratch. Only an extension that needs no `configure_runtime` (the runtime is
    /// the template's, shared with later runs), keeps nothing in the runtime (no userdata, no
    /// module loader) and only adds globals that are not built-in ones (a derived context's
    /// built-in bindings are already read-only) may say yes.
    fn derivable(&self) -> bool {
        false
    }
    /// Sees (and may adjust) the outcome before it is returned.
    fn finish(&self, _outcome: &mut RunOutcome) {}
}

#[derive(Clone)]
pub struct Extension(pub Arc<dyn RealmExtension>);

impl std::fmt::Debug for Extension {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Extension")
    }
}

#[derive(Debug, Clone)]
pub struct RunRequest {
    pub source: String,
    pub mode: Mode,
    pub filename: String,
    pub input: Option<String>,
    pub data: Vec<(String, Data)>,
    pub limits: Limits,
    pub console: ConsoleMode,
    pub extension: Option<Extension>,
    /// A reproducible run: virtual time from `now_ms`, randomness from `seed`.
    pub deterministic: Option<Deterministic>,
    /// Told about each captured console line as the run prints it.
    pub on_log: Option<LogListener>,
    /// The run reads and writes a persistent realm's state.
    pub state: Option<PersistState>,
}

/// What a deterministic run starts from: the same code with the same values gives the same
/// result, byte for byte. `Date` reads a virtual clock that starts at `now_ms` and moves only
/// when a timer fires (timers fire at once, in order, without waiting); `performance.now()`
/// starts at 0; `Math.random`, `crypto.getRandomValues` and `crypto.randomUUID` draw from
/// `seed` (not cryptographically secure in this mode).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Deterministic {
    pub seed: u64,
    pub now_ms: f64,
}

impl RunRequest {
    pub fn new(source: impl Into<String>) -> Self {
        RunRequest {
            source: source.into(),
            mode: Mode::Function,
            filename: "sandbox.js".into(),
            input: None,
            data: Vec::new(),
            limits: Limits::default(),
            console: ConsoleMode::Capture,
            extension: None,
            deterministic: None,
            on_log: None,
            state: None,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stats {
    pub wall_ms: f64,
    pub heap_bytes: usize,
    pub host_calls: u64,
    /// Interpreter steps the guest took (see [`Limits::steps`]).
    pub steps: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RunOutcome {
    pub ok: bool,
    pub value: Option<Data>,
    pub output: String,
    pub logs: Vec<LogEntry>,
    pub error: Option<ErrorInfo>,
    pub stats: Stats,
    /// The realm's state after the run, sealed (runs with [`RunRequest::state`] only); `None`
    /// leaves the state the run started from.
    pub state: Option<Vec<u8>>,
}

impl RunOutcome {
    pub fn failed(error: ErrorInfo) -> Self {
        RunOutcome {
            ok: false,
            value: None,
            output: String::new(),
            logs: Vec::new(),
            error: Some(error),
            stats: Stats::default(),
            state: None,
        }
    }
}
