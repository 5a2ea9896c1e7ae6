//! The session layer's errors, each with a stable code.

use std::fmt;

/// What went wrong, as the JavaScript surface reports it: the session's part of the crate's
/// one vocabulary ([`crate::codes::ErrorCode`]).
pub use crate::codes::ErrorCode as SessionCode;

/// An error of the session layer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionError {
    /// Its code.
    pub code: SessionCode,
    /// What happened, for people and models.
    pub message: String,
}

impl SessionError {
    /// Builds an error.
    pub fn new(code: SessionCode, message: impl Into<String>) -> Self {
        SessionError {
            code,
            message: message.into(),
        }
    }
}

impl fmt::Display for SessionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)
    }
}

impl std::error::Error for SessionError {}
