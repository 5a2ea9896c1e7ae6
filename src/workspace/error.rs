//! Errors of workspace operations.
//!
//! Each error carries a stable, machine-readable [`WsCode`] and a human-readable `message`
//! written for the person or model that has to fix the call (`err.code` and `err.message` of a
//! `ZipWorkspace` error in JavaScript).

use std::fmt;

/// Stable error codes: the workspace's part of the crate's one vocabulary
/// ([`crate::codes::ErrorCode`]). Callers match on them; their strings never change meaning.
pub use crate::codes::ErrorCode as WsCode;

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
