//! Every error code quickrealm reports, from every layer, in one vocabulary: the engine's run
//! failures, the workspace's, the session's, the tools' and the components'. A leaf module so
//! that each layer can use it (the workspace depends on nothing else in the crate).
//!
//! JavaScript receives it as the generated `ErrorCode` string union (and, at run time, an
//! object from member names to codes: `ErrorCode.InvalidInput === 'INVALID_INPUT'`); the
//! JavaScript layers use its members rather than string literals.

use std::fmt;

use napi_derive::napi;

/// Stable error codes, as JavaScript sees them (`err.code`, `result.error.code`). A code's
/// string never changes meaning.
#[napi(string_enum = "UPPER_SNAKE")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    // ----- runs (the engine) -----
    /// The guest threw, or the source did not parse (`name` says which).
    EvalError,
    /// The run passed `limits.timeoutMs`.
    Timeout,
    /// The run passed `limits.memoryBytes`.
    MemoryLimit,
    /// `emit()` and console output passed `limits.outputBytes`.
    OutputLimit,
    /// An AbortSignal fired.
    Cancelled,
    /// Bad options or arguments, source too large, data that cannot be copied (thrown as a
    /// TypeError, or a RangeError for a number out of range).
    InvalidInput,
    /// A rule refuses the call: a workspace's access rules, a session's policy.
    PolicyViolation,
    /// The run passed `limits.hostCalls`.
    HostCallLimit,
    /// The guest used up `limits.steps`.
    StepLimit,
    /// Nothing exists where the caller pointed: a file, an exec entry point, an id.
    NotFound,
    /// A bug in quickrealm; never the caller's fault.
    Internal,
    /// A host function called a guest callback that failed, or after its run ended.
    SandboxCallback,

    // ----- the workspace -----
    /// The path escapes the root, holds a NUL byte, a backslash, a drive letter, is too long or
    /// too deep, or names the hidden history area.
    PathInvalid,
    /// Something already exists at the path.
    Exists,
    /// A directory was required but a file was found (also for a file used as a parent).
    NotADirectory,
    /// A file was required but a directory was found.
    IsADirectory,
    /// A non-recursive delete of a directory that still has entries.
    NotEmpty,
    /// The archive is malformed, truncated, encrypted, uses an unsupported method, or holds
    /// entries that cannot be imported safely (symlinks, unsafe or colliding names).
    ZipInvalid,
    /// The archive exceeds an import limit (entry count, sizes, ratio, path length or depth).
    ZipLimit,
    /// A patch expected different text than the file holds, or a path changed meanwhile.
    Conflict,
    /// A line range is outside the file or malformed.
    Range,
    /// The write would exceed the workspace quota.
    Quota,
    /// A history operation cannot be carried out (unknown id, nothing to undo, compacted).
    History,
    /// An imported archive's history cannot be trusted: its ids leave no room to grow, or its
    /// entries do not fit the archive's files. A log that cannot be read at all is `ZIP_INVALID`.
    HistoryInvalid,
    /// A file read as text is not valid UTF-8.
    NotText,
    /// The host file system failed (opening or saving an archive).
    Io,
    /// Text matching (a patch's context lines) would cost more than its work budget.
    TooComplex,
    /// The workspace was disposed: every later call is refused.
    Disposed,

    // ----- sessions -----
    /// A budget is used up.
    BudgetExceeded,
    /// A saved audit log does not verify.
    AuditTampered,
    /// The session is not in a state that allows the call (ended, waiting for approval, ...).
    SessionState,
    /// Another writer saved the session first.
    SessionConflict,
    /// A snapshot's signature or binding does not verify.
    SnapshotTampered,
    /// Authentic state from another engine build or format version, which this build cannot read.
    SnapshotVersion,
    /// A re-run turn called something else than the recorded turn did at the same point.
    ReplayDiverged,
    /// The session's state could not be stored.
    SaveFailed,

    // ----- tools for models -----
    /// A patch is malformed.
    PatchInvalid,
    /// A patch's context does not match the file.
    PatchMismatch,
    /// A patch could not be applied.
    PatchFailed,
    /// The text to replace does not occur in the file.
    NoMatch,
    /// The text to replace occurs more than once.
    AmbiguousMatch,
    /// There is no edit to undo.
    NoHistory,
    /// The tool cannot work here (running code in a workspace that does not allow it).
    Unavailable,
    /// No tool has the name called.
    UnknownTool,
    /// Running a workspace program failed without a code of its own.
    ExecFailed,
    /// A chat log cannot be read.
    ChatLogInvalid,

    // ----- components -----
    /// A component script tried to run where its permissions do not allow it.
    ScriptRefused,
    /// A component script wrote state it may not write.
    WriteRefused,
    /// A component's state is larger than its limit.
    StateTooLarge,
    /// A component's state does not validate against its type.
    ValidationFailed,

    // ----- the package -----
    /// The native addon for this platform could not be loaded.
    AddonNotFound,
    /// An optional peer package is not installed.
    ModuleNotFound,

    // ----- servers -----
    /// A request to a server of the package (the review console, MCP over HTTP) lacks valid
    /// credentials.
    Unauthorized,
}

impl ErrorCode {
    /// Every code, in declaration order.
    pub const ALL: [ErrorCode; 53] = [
        ErrorCode::EvalError,
        ErrorCode::Timeout,
        ErrorCode::MemoryLimit,
        ErrorCode::OutputLimit,
        ErrorCode::Cancelled,
        ErrorCode::InvalidInput,
        ErrorCode::PolicyViolation,
        ErrorCode::HostCallLimit,
        ErrorCode::StepLimit,
        ErrorCode::NotFound,
        ErrorCode::Internal,
        ErrorCode::SandboxCallback,
        ErrorCode::PathInvalid,
        ErrorCode::Exists,
        ErrorCode::NotADirectory,
        ErrorCode::IsADirectory,
        ErrorCode::NotEmpty,
        ErrorCode::ZipInvalid,
        ErrorCode::ZipLimit,
        ErrorCode::Conflict,
        ErrorCode::Range,
        ErrorCode::Quota,
        ErrorCode::History,
        ErrorCode::HistoryInvalid,
        ErrorCode::NotText,
        ErrorCode::Io,
        ErrorCode::TooComplex,
        ErrorCode::Disposed,
        ErrorCode::BudgetExceeded,
        ErrorCode::AuditTampered,
        ErrorCode::SessionState,
        ErrorCode::SessionConflict,
        ErrorCode::SnapshotTampered,
        ErrorCode::SnapshotVersion,
        ErrorCode::ReplayDiverged,
        ErrorCode::SaveFailed,
        ErrorCode::PatchInvalid,
        ErrorCode::PatchMismatch,
        ErrorCode::PatchFailed,
        ErrorCode::NoMatch,
        ErrorCode::AmbiguousMatch,
        ErrorCode::NoHistory,
        ErrorCode::Unavailable,
        ErrorCode::UnknownTool,
        ErrorCode::ExecFailed,
        ErrorCode::ChatLogInvalid,
        ErrorCode::ScriptRefused,
        ErrorCode::WriteRefused,
        ErrorCode::StateTooLarge,
        ErrorCode::ValidationFailed,
        ErrorCode::AddonNotFound,
        ErrorCode::ModuleNotFound,
        ErrorCode::Unauthorized,
    ];

    /// The code as JavaScript sees it: `"NOT_FOUND"`, `"PATH_INVALID"`, ...
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorCode::EvalError => "EVAL_ERROR",
            ErrorCode::Timeout => "TIMEOUT",
            ErrorCode::MemoryLimit => "MEMORY_LIMIT",
            ErrorCode::OutputLimit => "OUTPUT_LIMIT",
            ErrorCode::Cancelled => "CANCELLED",
            ErrorCode::InvalidInput => "INVALID_INPUT",
            ErrorCode::PolicyViolation => "POLICY_VIOLATION",
            ErrorCode::HostCallLimit => "HOST_CALL_LIMIT",
            ErrorCode::StepLimit => "STEP_LIMIT",
            ErrorCode::NotFound => "NOT_FOUND",
            ErrorCode::Internal => "INTERNAL",
            ErrorCode::SandboxCallback => "SANDBOX_CALLBACK",
            ErrorCode::PathInvalid => "PATH_INVALID",
            ErrorCode::Exists => "EXISTS",
            ErrorCode::NotADirectory => "NOT_A_DIRECTORY",
            ErrorCode::IsADirectory => "IS_A_DIRECTORY",
            ErrorCode::NotEmpty => "NOT_EMPTY",
            ErrorCode::ZipInvalid => "ZIP_INVALID",
            ErrorCode::ZipLimit => "ZIP_LIMIT",
            ErrorCode::Conflict => "CONFLICT",
            ErrorCode::Range => "RANGE",
            ErrorCode::Quota => "QUOTA",
            ErrorCode::History => "HISTORY",
            ErrorCode::HistoryInvalid => "HISTORY_INVALID",
            ErrorCode::NotText => "NOT_TEXT",
            ErrorCode::Io => "IO",
            ErrorCode::TooComplex => "TOO_COMPLEX",
            ErrorCode::Disposed => "DISPOSED",
            ErrorCode::BudgetExceeded => "BUDGET_EXCEEDED",
            ErrorCode::AuditTampered => "AUDIT_TAMPERED",
            ErrorCode::SessionState => "SESSION_STATE",
            ErrorCode::SessionConflict => "SESSION_CONFLICT",
            ErrorCode::SnapshotTampered => "SNAPSHOT_TAMPERED",
            ErrorCode::SnapshotVersion => "SNAPSHOT_VERSION",
            ErrorCode::ReplayDiverged => "REPLAY_DIVERGED",
            ErrorCode::SaveFailed => "SAVE_FAILED",
            ErrorCode::PatchInvalid => "PATCH_INVALID",
            ErrorCode::PatchMismatch => "PATCH_MISMATCH",
            ErrorCode::PatchFailed => "PATCH_FAILED",
            ErrorCode::NoMatch => "NO_MATCH",
            ErrorCode::AmbiguousMatch => "AMBIGUOUS_MATCH",
            ErrorCode::NoHistory => "NO_HISTORY",
            ErrorCode::Unavailable => "UNAVAILABLE",
            ErrorCode::UnknownTool => "UNKNOWN_TOOL",
            ErrorCode::ExecFailed => "EXEC_FAILED",
            ErrorCode::ChatLogInvalid => "CHAT_LOG_INVALID",
            ErrorCode::ScriptRefused => "SCRIPT_REFUSED",
            ErrorCode::WriteRefused => "WRITE_REFUSED",
            ErrorCode::StateTooLarge => "STATE_TOO_LARGE",
            ErrorCode::ValidationFailed => "VALIDATION_FAILED",
            ErrorCode::AddonNotFound => "ADDON_NOT_FOUND",
            ErrorCode::ModuleNotFound => "MODULE_NOT_FOUND",
            ErrorCode::Unauthorized => "UNAUTHORIZED",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `NotADirectory` -> `NOT_A_DIRECTORY`: the rule napi-rs applies to export the members.
    fn upper_snake(name: &str) -> String {
        let mut out = String::new();
        for (i, c) in name.chars().enumerate() {
            if c.is_ascii_uppercase() && i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_uppercase());
        }
        out
    }

    #[test]
    fn every_code_reads_as_its_member_name_in_upper_snake_case() {
        let mut seen = std::collections::HashSet::new();
        for code in ErrorCode::ALL {
            assert_eq!(code.as_str(), upper_snake(&format!("{code:?}")));
            assert_eq!(code.to_string(), code.as_str());
            assert!(seen.insert(code.as_str()), "{code:?} listed twice");
        }
    }
}
