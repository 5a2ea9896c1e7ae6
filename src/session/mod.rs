//! Sessions: the host-side bookkeeping of a model's turns — which operations the policy allows,
//! what the budget has left, the hash-chained audit log, and the journal that lets a paused turn
//! be re-run without repeating a side effect.
//!
//! The facade is [`Ledger`], which holds one session's [`OperationPolicy`], [`Budget`],
//! [`AuditLog`] and current [`Journal`], and saves and restores them as one JSON document. Path
//! rules are not here: they are the workspace's access rules, enforced where every read and
//! write passes ([`crate::workspace::Workspace::set_path_rules`]). Each call of a turn passes
//! the [`TurnGate`]: admitted (policy, call cap, budget, replay) before it runs and settled
//! (audit, journal) after. Running the guest and the approval flow are composed by the
//! JavaScript surface over `run()`.

mod audit;
mod budget;
mod error;
mod gate;
mod journal;
mod policy;
mod world;
mod world_args;

pub use audit::{AuditEntry, AuditLog, AuditRecord, AuditStats, ARG_LIMIT};
pub use budget::{Budget, BudgetKind, Exceeded};
pub use error::{SessionCode, SessionError};
pub use gate::{
    world_key, Admission, Approval, Call, CallKind, CallRules, Decided, Outcome, Stop, TurnGate,
    TurnUse,
};
pub use journal::{Journal, JournalEntry, Replay};
pub use policy::{OperationPolicy, Refusal};
pub use world::{fingerprint, lock_session, SessionState, SharedSession, TurnWorld};

use serde::{Deserialize, Serialize};

/// One session's policy decisions, budget, audit log and the journal of the turn in progress.
#[derive(Debug, Clone)]
pub struct Ledger {
    /// Which operations may run.
    pub policy: OperationPolicy,
    /// The policy's rules beyond its operation lists.
    pub rules: CallRules,
    /// Limits and what has been used.
    pub budget: Budget,
    /// Every operation attempted, refused ones included.
    pub audit: AuditLog,
    /// The recorded results of the turn in progress (empty between turns).
    pub journal: Journal,
}

#[derive(Serialize, Deserialize)]
struct Saved {
    budget: Budget,
    audit: Vec<AuditEntry>,
    #[serde(rename = "auditHead")]
    audit_head: String,
    journal: Journal,
}

impl Ledger {
    /// A fresh ledger: nothing used, an empty log and journal.
    pub fn new(policy: OperationPolicy, budget: Budget) -> Self {
        Ledger {
            policy,
            rules: CallRules::default(),
            budget,
            audit: AuditLog::default(),
            journal: Journal::default(),
        }
    }

    /// The budget (limits and use), audit log and journal as one JSON document; the policy is
    /// saved by its owner, in the form it was written.
    pub fn save(&self) -> String {
        let saved = Saved {
            budget: self.budget.clone(),
            audit: self.audit.entries().to_vec(),
            audit_head: self.audit.head().to_string(),
            journal: self.journal.clone(),
        };
        serde_json::to_string(&saved).unwrap_or_default()
    }

    /// A ledger from [`Ledger::save`]'s document and the session's policy. The audit chain is
    /// checked: a log that was edited, reordered or cut is refused with `AUDIT_TAMPERED`.
    pub fn restore(policy: OperationPolicy, saved: &str) -> Result<Self, SessionError> {
        let saved: Saved = serde_json::from_str(saved).map_err(|e| {
            SessionError::new(
                SessionCode::InvalidInput,
                format!("not a saved session ledger: {e}"),
            )
        })?;
        let audit = AuditLog::from_entries(saved.audit, &saved.audit_head)?;
        saved.budget.check()?;
        Ok(Ledger {
            policy,
            rules: CallRules::default(),
            budget: saved.budget,
            audit,
            journal: saved.journal,
        })
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod world_tests;
