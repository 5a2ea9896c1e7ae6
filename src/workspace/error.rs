//! Error type shared by every workspace operation.
//!
//! Each error carries a stable, machine-readable `code` (one of the constants in
//! [`code`]) and a human-readable `message` written for the person or model that
//! has to fix the call.

use std::fmt;

/// Stable error codes. Callers match on these strings; they never change meaning.
pub mod code {
    /// The path escapes the root, holds a NUL byte, a backslash, a drive letter, is too
    /// long or too deep, or names the hidden history area.
    pub const PATH_INVALID: &str = "PATH_INVALID";
    /// Nothing exists at the path.
    pub const NOT_FOUND: &str = "NOT_FOUND";
    /// Something already exists at the path.
    pub const EXISTS: &str = "EXISTS";
    /// A directory was required but a file was found (also for a file used as a parent).
    pub const NOT_A_DIRECTORY: &str = "NOT_A_DIRECTORY";
    /// A file was required but a directory was found.
    pub const IS_A_DIRECTORY: &str = "IS_A_DIRECTORY";
    /// A non-recursive delete of a directory that still has entries.
    pub const NOT_EMPTY: &str = "NOT_EMPTY";
    /// The archive is malformed, truncated, encrypted, uses an unsupported method, or
    /// holds entries that cannot be imported safely (symlinks, unsafe or colliding names).
    pub const ZIP_INVALID: &str = "ZIP_INVALID";
    /// The archive exceeds an import limit (entry count, sizes, ratio, path length or depth).
    pub const ZIP_LIMIT: &str = "ZIP_LIMIT";
    /// A line patch expected different text than the file holds.
    pub const CONFLICT: &str = "CONFLICT";
    /// A line range is outside the file or malformed.
    pub const RANGE: &str = "RANGE";
    /// The write would exceed the workspace quota.
    pub const QUOTA: &str = "QUOTA";
    /// A history operation cannot be carried out (unknown id, nothing to undo, compacted).
    pub const HISTORY: &str = "HISTORY";
}

/// An error from a workspace operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WsError {
    /// One of the constants in [`code`].
    pub code: &'static str,
    /// What went wrong, phrased so the caller can fix it.
    pub message: String,
}

/// Result alias used throughout the workspace module.
pub type WsResult<T> = Result<T, WsError>;

impl WsError {
    /// Builds an error from a code and a message.
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        WsError {
            code,
            message: message.into(),
        }
    }

    pub(crate) fn path_invalid(message: impl Into<String>) -> Self {
        Self::new(code::PATH_INVALID, message)
    }

    pub(crate) fn not_found(message: impl Into<String>) -> Self {
        Self::new(code::NOT_FOUND, message)
    }

    pub(crate) fn exists(message: impl Into<String>) -> Self {
        Self::new(code::EXISTS, message)
    }

    pub(crate) fn not_a_directory(message: impl Into<String>) -> Self {
        Self::new(code::NOT_A_DIRECTORY, message)
    }

    pub(crate) fn is_a_directory(message: impl Into<String>) -> Self {
        Self::new(code::IS_A_DIRECTORY, message)
    }

    pub(crate) fn not_empty(message: impl Into<String>) -> Self {
        Self::new(code::NOT_EMPTY, message)
    }

    pub(crate) fn zip_invalid(message: impl Into<String>) -> Self {
        Self::new(code::ZIP_INVALID, message)
    }

    pub(crate) fn zip_limit(message: impl Into<String>) -> Self {
        Self::new(code::ZIP_LIMIT, message)
    }

    pub(crate) fn conflict(message: impl Into<String>) -> Self {
        Self::new(code::CONFLICT, message)
    }

    pub(crate) fn range(message: impl Into<String>) -> Self {
        Self::new(code::RANGE, message)
    }

    pub(crate) fn quota(message: impl Into<String>) -> Self {
        Self::new(code::QUOTA, message)
    }

    pub(crate) fn history(message: impl Into<String>) -> Self {
        Self::new(code::HISTORY, message)
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
        let e = WsError::new(code::NOT_FOUND, "~/a.txt does not exist");
        assert_eq!(e.to_string(), "NOT_FOUND: ~/a.txt does not exist");
        let boxed: Box<dyn std::error::Error> = Box::new(e.clone());
        assert_eq!(boxed.to_string(), e.to_string());
    }

    #[test]
    fn helpers_use_their_codes() {
        assert_eq!(WsError::path_invalid("x").code, "PATH_INVALID");
        assert_eq!(WsError::not_found("x").code, "NOT_FOUND");
        assert_eq!(WsError::exists("x").code, "EXISTS");
        assert_eq!(WsError::not_a_directory("x").code, "NOT_A_DIRECTORY");
        assert_eq!(WsError::is_a_directory("x").code, "IS_A_DIRECTORY");
        assert_eq!(WsError::not_empty("x").code, "NOT_EMPTY");
        assert_eq!(WsError::zip_invalid("x").code, "ZIP_INVALID");
        assert_eq!(WsError::zip_limit("x").code, "ZIP_LIMIT");
        assert_eq!(WsError::conflict("x").code, "CONFLICT");
        assert_eq!(WsError::range("x").code, "RANGE");
        assert_eq!(WsError::quota("x").code, "QUOTA");
        assert_eq!(WsError::history("x").code, "HISTORY");
    }
}
