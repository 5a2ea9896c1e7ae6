//! The session layer's errors, each with a stable code.

use std::fmt;

/// What went wrong, as the JavaScript surface reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionCode {
    /// A policy, budget or saved document is malformed.
    InvalidInput,
    /// The policy refuses the operation.
    PolicyViolation,
    /// A budget is used up.
    BudgetExceeded,
    /// A saved audit log does not verify.
    AuditTampered,
}

impl SessionCode {
    /// The stable code string.
    pub fn as_str(self) -> &'static str {
        match self {
            SessionCode::InvalidInput => "INVALID_INPUT",
            SessionCode::PolicyViolation => "POLICY_VIOLATION",
            SessionCode::BudgetExceeded => "BUDGET_EXCEEDED",
            SessionCode::AuditTampered => "AUDIT_TAMPERED",
        }
    }
}

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
