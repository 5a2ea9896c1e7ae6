//! The engine: one run is one fresh QuickJS runtime and context, with hard limits.
//!
//! Dependency order, each module using only those on lines above it (leaves first):
//! - `macros`, `locks`, `stack`, `alloc`, `bigint`, `ffi`: leaves.
//! - `raw` (every raw QuickJS call), `limits`, `workers`, `slicer` (a time-sliced run's pause
//!   point, shared by the realm and the driver of sliced runs).
//! - `marshal` (copies, `CopyBudget`), `json` (JSON text to and from `Data`, charged like a copy),
//!   `console` (the printer), `errors`.
//! - `output` (output sink and run slot), `request` (what a run is asked for and gives back).
//! - `realm`, `membrane`, `template`, `realm_pool`: the realm and what it installs (these still
//!   refer to each other: a realm installs the membrane, whose natives reach the run's slot and
//!   throw through the realm's helpers, and a template realm is built as a realm).
//! - `run` (one run), `live` (a run with live host values, time-sliced), `reply` (a run's
//!   outcome as the reply text `lib/run.js` reads), `settings`.
//! - `snapshot` (the engine's realm-state writer and reader), `state` (sealed state bytes),
//!   `persist` (a run over a persistent realm's state), used by `run`.

pub(crate) mod alloc;
pub(crate) mod bigint;
pub(crate) mod console;
pub(crate) mod errors;
pub(crate) mod ffi;
pub(crate) mod json;
pub(crate) mod limits;
pub(crate) mod live;
pub(crate) mod locks;
pub(crate) mod macros;
pub(crate) mod marshal;
pub(crate) mod membrane;
pub(crate) mod output;
pub(crate) mod persist;
pub(crate) mod raw;
pub(crate) mod realm;
pub(crate) mod realm_pool;
pub(crate) mod reply;
pub(crate) mod request;
pub(crate) mod run;
pub(crate) mod settings;
pub(crate) mod slicer;
pub(crate) mod snapshot;
pub(crate) mod stack;
pub(crate) mod state;
pub(crate) mod template;
pub(crate) mod workers;

pub use errors::{ErrorCode, ErrorInfo};
pub use json::read_data_text;
pub use limits::{CancelToken, LimitOverrides, Limits};
pub use marshal::Data;
pub use realm::{ConsoleMode, LogEntry, LogListener};
pub use reply::reply_text;
pub use run::{
    execute, Deterministic, Extension, Mode, PersistState, RealmExtension, RunOutcome, RunRequest,
};
pub use state::reseal as reseal_state;
#[cfg(test)]
mod deadline_tests;
#[cfg(test)]
mod snapshot_tests;
#[cfg(test)]
mod template_tests;
#[cfg(test)]
mod tests;
