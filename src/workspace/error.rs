//! Errors of workspace operations.
//!
//! Each error carries a stable, machine-readable [`WsCode`] and a human-readable `message`
//! written for the person or model that has to fix the call. The codes are the whole error
//! vocabulary of the workspace as JavaScript sees it (`err.code` of a `ZipWorkspace` error).

use std::fmt;

/// Stable error codes. Callers match on them; their strings ([`WsCode::as_str`]) never change
/// meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WsCode {
    /// An argument has the wrong type or is out of range (thrown as a `TypeError`).
    InvalidInput,
    /// The path escapes the root, holds a NUL byte, a backslash, a drive letter, is too
    /// long or too deep, or names the hidden history area.
    PathInvalid,
    /// Nothing exists at the path.
    NotFound,
    /// Something already exists at the path.
    Exists,
    /// A directory was required but a file was found (also for a file used as a parent).
    NotADirectory,
    /// A file was required but a directory was found.
    IsADirectory,
    /// A non-recursive delete of a directory that still has entries.
    NotEmpty,
    /// The archive is malformed, truncated, encrypted, uses an unsupported method, or
    /// holds entries that cannot be imported safely (symlinks, unsafe or colliding names).
    ZipInvalid,
    /// The archive exceeds an import limit (entry count, sizes, ratio, path length or depth).
    ZipLimit,
    /// A line patch expected different text than the file holds.
    Conflict,
    /// A line range is outside the file or malformed.
    Range,
    /// The write would exceed the workspace quota.
    Quota,
    /// A history operation cannot be carried out (unknown id, nothing to undo, compacted).
    History,
    /// An imported archive's history cannot be trusted: its ids leave no room to grow, or its
    /// entries do not fit the archive's files (undoing or redoing them would not find the
    /// states they expect, or would leave a file inside a file or without its folder). A log
    /// that cannot be read at all is `ZIP_INVALID`.
    HistoryInvalid,
    /// A file read as text is not valid UTF-8.
    NotText,
    /// The host file system failed (opening or saving an archive).
    Io,
    /// The workspace's access rules (`setAccessRules`) refuse the path.
    PolicyViolation,
    /// Text matching (a patch's context lines) would cost more than its work budget.
    TooComplex,
    /// A failure of quickrealm itself (should not happen).
    Internal,
}

impl WsCode {
    /// The code as JavaScript sees it: `"NOT_FOUND"`, `"PATH_INVALID"`, ...
    pub const fn as_str(self) -> &'static str {
        match self {
            WsCode::InvalidInput => "INVALID_INPUT",
            WsCode::PathInvalid => "PATH_INVALID",
            WsCode::NotFound => "NOT_FOUND",
            WsCode::Exists => "EXISTS",
            WsCode::NotADirectory => "NOT_A_DIRECTORY",
            WsCode::IsADirectory => "IS_A_DIRECTORY",
            WsCode::NotEmpty => "NOT_EMPTY",
            WsCode::ZipInvalid => "ZIP_INVALID",
            WsCode::ZipLimit => "ZIP_LIMIT",
            WsCode::Conflict => "CONFLICT",
            WsCode::Range => "RANGE",
            WsCode::Quota => "QUOTA",
            WsCode::History => "HISTORY",
            WsCode::HistoryInvalid => "HISTORY_INVALID",
            WsCode::NotText => "NOT_TEXT",
            WsCode::Io => "IO",
            WsCode::PolicyViolation => "POLICY_VIOLATION",
            WsCode::TooComplex => "TOO_COMPLEX",
            WsCode::Internal => "INTERNAL",
        }
    }
}

impl fmt::Display for WsCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An error from a workspace operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WsError {
    /// What kind of failure this is.
    pub code: WsCode,
    /// What went wrong, phrased so the caller can fix it.
    pub message: String,
}

/// Result alias used throughout the workspace module.
pub type WsResult<T> = Result<T, WsError>;

impl WsError {
    /// Builds an error from a code and a message.
    pub fn new(code: WsCode, message: impl Into<String>) -> Self {
        WsError {
            code,
            message: message.into(),
        }
    }

    pub(crate) fn invalid_input(message: impl Into<String>) -> Self {
        Self::new(WsCode::InvalidInput, message)
    }

    pub(crate) fn policy_violation(message: impl Into<String>) -> Self {
        Self::new(WsCode::PolicyViolation, message)
    }

    pub(crate) fn path_invalid(message: impl Into<String>) -> Self {
        Self::new(WsCode::PathInvalid, message)
    }

    pub(crate) fn not_found(message: impl Into<String>) -> Self {
        Self::new(WsCode::NotFound, message)
    }

    pub(crate) fn exists(message: impl Into<String>) -> Self {
        Self::new(WsCode::Exists, message)
    }

    pub(crate) fn not_a_directory(message: impl Into<String>) -> Self {
        Self::new(WsCode::NotADirectory, message)
    }

    pub(crate) fn is_a_directory(message: impl Into<String>) -> Self {
        Self::new(WsCode::IsADirectory, message)
    }

    pub(crate) fn not_empty(message: impl Into<String>) -> Self {
        Self::new(WsCode::NotEmpty, message)
    }

    pub(crate) fn zip_invalid(message: impl Into<String>) -> Self {
        Self::new(WsCode::ZipInvalid, message)
    }

    pub(crate) fn zip_limit(message: impl Into<String>) -> Self {
        Self::new(WsCode::ZipLimit, message)
    }

    pub(crate) fn conflict(message: impl Into<String>) -> Self {
        Self::new(WsCode::Conflict, message)
    }

    pub(crate) fn range(message: impl Into<String>) -> Self {
        Self::new(WsCode::Range, message)
    }

    pub(crate) fn quota(message: impl Into<String>) -> Self {
        Self::new(WsCode::Quota, message)
    }

    pub(crate) fn history(message: impl Into<String>) -> Self {
        Self::new(WsCode::History, message)
    }

    pub(crate) fn history_invalid(message: impl Into<String>) -> Self {
        Self::new(WsCode::HistoryInvalid, message)
    }

    pub(crate) fn not_text(message: impl Into<String>) -> Self {
        Self::new(WsCode::NotText, message)
    }

    pub(crate) fn io(message: impl Into<String>) -> Self {
        Self::new(WsCode::Io, message)
    }

    pub(crate) fn too_complex(message: impl Into<String>) -> Self {
        Self::new(WsCode::TooComplex, message)
    }

    pub(crate) fn internal(message: impl Into<String>) -> Self {
        Self::new(WsCode::Internal, message)
    }
}

impl fmt::Display for WsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for WsError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_shows_code_and_message() {
        let e = WsError::new(WsCode::NotFound, "~/a.txt does not exist");
        assert_eq!(e.to_string(), "NOT_FOUND: ~/a.txt does not exist");
        let boxed: Box<dyn std::error::Error> = Box::new(e.clone());
        assert_eq!(boxed.to_string(), e.to_string());
    }

    #[test]
    fn helpers_use_their_codes() {
        let cases = [
            (WsError::invalid_input("x"), "INVALID_INPUT"),
            (WsError::path_invalid("x"), "PATH_INVALID"),
            (WsError::not_found("x"), "NOT_FOUND"),
            (WsError::exists("x"), "EXISTS"),
            (WsError::not_a_directory("x"), "NOT_A_DIRECTORY"),
            (WsError::is_a_directory("x"), "IS_A_DIRECTORY"),
            (WsError::not_empty("x"), "NOT_EMPTY"),
            (WsError::zip_invalid("x"), "ZIP_INVALID"),
            (WsError::zip_limit("x"), "ZIP_LIMIT"),
            (WsError::conflict("x"), "CONFLICT"),
            (WsError::range("x"), "RANGE"),
            (WsError::quota("x"), "QUOTA"),
            (WsError::history("x"), "HISTORY"),
            (WsError::history_invalid("x"), "HISTORY_INVALID"),
            (WsError::not_text("x"), "NOT_TEXT"),
            (WsError::io("x"), "IO"),
            (WsError::internal("x"), "INTERNAL"),
        ];
        for (e, code) in cases {
            assert_eq!(e.code.as_str(), code);
            assert_eq!(e.code.to_string(), code);
        }
    }
}
