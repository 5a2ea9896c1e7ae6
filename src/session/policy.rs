//! Which operations a session may run: `allowedOperations` and `deniedOperations`, deny first.
//!
//! A name is an operation as the guest calls it (`world.read`, `llm.complete`). In a rule, `*`
//! stands for any run of characters (`world.*`, `*`); every other character is literal, so
//! names such as `fact?` need no escaping. Matching goes through `globset` with the separator
//! rule off, since operation names have no path separators.

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use super::error::{SessionCode, SessionError};

/// The compiled operation rules of a policy.
#[derive(Debug, Clone)]
pub struct OperationPolicy {
    /// `None`: every operation not denied is allowed.
    allowed: Option<Rules>,
    denied: Rules,
}

#[derive(Debug, Clone)]
struct Rules {
    written: Vec<String>,
    set: GlobSet,
}

/// Why an operation was refused: the rule that refused it and a message naming both.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The rule, as written: a `deniedOperations` entry, or `allowedOperations` when the name
    /// matched none of its entries.
    pub rule: String,
    /// For people and models.
    pub message: String,
}

impl Rules {
    fn new(list: &[String], field: &str) -> Result<Self, SessionError> {
        let mut builder = GlobSetBuilder::new();
        for rule in list {
            if rule.is_empty() {
                return Err(SessionError::new(
                    SessionCode::InvalidInput,
                    format!("{field}: an operation name cannot be empty"),
                ));
            }
            let pattern: Vec<String> = rule.split('*').map(globset::escape).collect();
            let glob = GlobBuilder::new(&pattern.join("*"))
                .literal_separator(false)
                .backslash_escape(true)
                .build()
                .map_err(|e| {
                    SessionError::new(SessionCode::InvalidInput, format!("{field}: {rule:?}: {e}"))
                })?;
            builder.add(glob);
        }
        let set = builder
            .build()
            .map_err(|e| SessionError::new(SessionCode::InvalidInput, format!("{field}: {e}")))?;
        Ok(Rules {
            written: list.to_vec(),
            set,
        })
    }

    fn first_match(&self, op: &str) -> Option<&str> {
        self.set
            .matches(op)
            .first()
            .and_then(|&i| self.written.get(i))
            .map(String::as_str)
    }
}

impl OperationPolicy {
    /// Compiles the rules. `allowed: None` allows every operation that is not denied.
    pub fn new(allowed: Option<&[String]>, denied: &[String]) -> Result<Self, SessionError> {
        Ok(OperationPolicy {
            allowed: allowed
                .map(|a| Rules::new(a, "allowedOperations"))
                .transpose()?,
            denied: Rules::new(denied, "deniedOperations")?,
        })
    }

    /// An operation is allowed when no denied rule matches it and, if there is an allow list,
    /// one of its rules does.
    pub fn check(&self, op: &str) -> Result<(), Refusal> {
        if let Some(rule) = self.denied.first_match(op) {
            return Err(Refusal {
                rule: rule.to_string(),
                message: format!(
                    "operation {op} is denied by the session policy (deniedOperations: {rule:?})"
                ),
            });
        }
        match &self.allowed {
            Some(allowed) if allowed.first_match(op).is_none() => Err(Refusal {
                rule: "allowedOperations".to_string(),
                message: format!(
                    "operation {op} is not allowed by the session policy (not in allowedOperations)"
                ),
            }),
            _ => Ok(()),
        }
    }

    /// Whether [`OperationPolicy::check`] would allow `op`.
    pub fn allows(&self, op: &str) -> bool {
        self.check(op).is_ok()
    }
}
