//! The engine: one run is one fresh QuickJS runtime and context, with hard limits.

pub(crate) mod alloc;
pub(crate) mod bigint;
pub(crate) mod console;
pub(crate) mod errors;
pub(crate) mod ffi;
pub(crate) mod json;
pub(crate) mod limits;
pub(crate) mod live;
pub(crate) mod marshal;
pub(crate) mod membrane;
pub(crate) mod raw;
pub(crate) mod realm;
pub(crate) mod realm_pool;
pub(crate) mod reply;
pub(crate) mod run;
pub(crate) mod settings;
pub(crate) mod stack;
pub(crate) mod template;
pub(crate) mod workers;

pub use errors::{ErrorCode, ErrorInfo};
pub use json::read_data_text;
pub use limits::{CancelToken, LimitOverrides, Limits};
pub use marshal::Data;
pub use realm::{ConsoleMode, LogEntry, LogListener};
pub use reply::reply_text;
pub use run::{execute, Deterministic, Extension, Mode, RealmExtension, RunOutcome, RunRequest};
#[cfg(test)]
mod deadline_tests;
#[cfg(test)]
mod template_tests;
#[cfg(test)]
mod tests;
