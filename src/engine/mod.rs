//! The engine: one run is one fresh QuickJS runtime and context, with hard limits.

pub mod alloc;
pub mod bigint;
pub mod console;
pub mod errors;
pub mod ffi;
pub mod limits;
pub mod live;
pub mod marshal;
pub mod membrane;
pub mod raw;
pub mod realm;
pub mod realm_pool;
pub mod run;
pub mod settings;
pub mod workers;

pub use errors::{ErrorCode, ErrorInfo};
pub use limits::{CancelToken, LimitOverrides, Limits};
pub use marshal::Data;
pub use realm::{ConsoleMode, LogEntry};
pub use run::{execute, Extension, Mode, RealmExtension, RunOutcome, RunRequest};
#[cfg(test)]
mod deadline_tests;
#[cfg(test)]
mod tests;
