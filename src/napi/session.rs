//! `SessionLedger`: a session's policy decisions, budget, audit log and journal
//! ([`crate::session::Ledger`]) for the JavaScript surface in `lib/session/`. Conversion only.
//! Failures are thrown as errors whose `code` is the session code.

use std::collections::HashMap;

use napi::bindgen_prelude::*;
use napi_derive::napi;

use super::{throw, ErrorClass, Thrown};
use crate::session::{
    AuditEntry, AuditLog, AuditRecord, Budget, BudgetKind, Exceeded, JournalEntry, Ledger,
    OperationPolicy, Replay, SessionCode, SessionError,
};
use crate::workspace::WsError;

fn kind(env: &Env, name: &str) -> Result<BudgetKind> {
    BudgetKind::parse(name).ok_or_else(|| {
        throw(
            env,
            SessionError::new(
                SessionCode::InvalidInput,
                format!("unknown budget kind {name:?}"),
            ),
        )
    })
}

/// An archive failure, thrown with the workspace's code and a message that starts with it.
fn archive_failure(env: &Env, e: WsError) -> Error {
    let message = e.to_string();
    throw(
        env,
        Thrown {
            class: ErrorClass::Error,
            code: e.code,
            message,
        },
    )
}

/// The operation rules of a session policy.
#[napi(object)]
pub struct LedgerPolicy {
    /// Operations that may run (`*` is a wildcard); absent: all not denied.
    pub allowed_operations: Option<Vec<String>>,
    /// Operations that never run; deny wins.
    pub denied_operations: Option<Vec<String>>,
}

fn policy(env: &Env, p: &LedgerPolicy) -> Result<OperationPolicy> {
    let denied = p.denied_operations.clone().unwrap_or_default();
    OperationPolicy::new(p.allowed_operations.as_deref(), &denied).map_err(|e| throw(env, e))
}

/// A refused operation or an exhausted budget.
#[napi(object)]
pub struct LedgerRefusal {
    /// `POLICY_VIOLATION` or `BUDGET_EXCEEDED`.
    pub code: String,
    /// The policy rule, or the budget kind.
    pub rule: String,
    /// For people and models.
    pub message: String,
}

fn exceeded(e: Exceeded) -> LedgerRefusal {
    let err = e.error();
    LedgerRefusal {
        code: err.code.as_str().to_string(),
        rule: e.kind.as_str().to_string(),
        message: err.message,
    }
}

/// One audit entry.
#[napi(object)]
pub struct LedgerAuditEntry {
    pub seq: f64,
    pub timestamp: f64,
    pub turn_number: u32,
    pub operation: String,
    pub args: String,
    pub result: Option<String>,
    pub error: Option<String>,
    pub duration_ms: f64,
    pub tokens_used: Option<f64>,
    pub prev_hash: String,
    pub hash: String,
}

impl From<&AuditEntry> for LedgerAuditEntry {
    fn from(e: &AuditEntry) -> Self {
        let r = &e.record;
        LedgerAuditEntry {
            seq: e.seq as f64,
            timestamp: r.timestamp,
            turn_number: r.turn_number,
            operation: r.operation.clone(),
            args: r.args.clone(),
            result: r.result.clone(),
            error: r.error.clone(),
            duration_ms: r.duration_ms,
            tokens_used: r.tokens_used,
            prev_hash: e.prev_hash.clone(),
            hash: e.hash.clone(),
        }
    }
}

/// What to append to the audit log.
#[napi(object)]
pub struct LedgerAuditRecord {
    pub timestamp: f64,
    pub turn_number: u32,
    pub operation: String,
    pub args: String,
    pub result: Option<String>,
    pub error: Option<String>,
    pub duration_ms: f64,
    pub tokens_used: Option<f64>,
}

/// Totals over the audit log.
#[napi(object)]
pub struct LedgerAuditStats {
    pub total_operations: f64,
    pub operation_counts: HashMap<String, f64>,
    pub total_tokens: f64,
}

/// The answer of the journal for the next call of a re-run turn.
#[napi(object)]
pub struct LedgerReplay {
    /// `recorded`, `live` or `diverged`.
    #[napi(ts_type = "'recorded' | 'live' | 'diverged'")]
    pub kind: String,
    /// The recorded value (JSON text), for `recorded`.
    pub value: Option<String>,
    /// The recorded error, for `recorded`.
    pub error: Option<String>,
    /// The operation the journal expected here, for `diverged`.
    pub expected: Option<String>,
}

/// The outcome of verifying an audit export.
#[napi(object)]
pub struct LedgerVerification {
    pub ok: bool,
    pub entries: Option<u32>,
    pub error: Option<String>,
}

/// A session's ledger (see the module documentation).
#[napi]
pub struct SessionLedger {
    inner: Ledger,
}

#[napi]
impl SessionLedger {
    /// A fresh ledger. `budget` maps kinds (`turns`, `wallMs`, `hostCalls`, `bytesWritten`,
    /// `tokens`, `cost`) to limits.
    #[napi(constructor, catch_unwind)]
    pub fn new(env: Env, policy_rules: LedgerPolicy, budget: HashMap<String, f64>) -> Result<Self> {
        let mut limits = Vec::new();
        for (name, limit) in &budget {
            limits.push((kind(&env, name)?, *limit));
        }
        let budget = Budget::new(&limits).map_err(|e| throw(&env, e))?;
        Ok(SessionLedger {
            inner: Ledger::new(policy(&env, &policy_rules)?, budget),
        })
    }

    /// A ledger from `save()`'s text; refuses a tampered audit log (`AUDIT_TAMPERED`).
    #[napi(factory, catch_unwind)]
    pub fn restore(env: Env, policy_rules: LedgerPolicy, saved: String) -> Result<Self> {
        Ok(SessionLedger {
            inner: Ledger::restore(policy(&env, &policy_rules)?, &saved)
                .map_err(|e| throw(&env, e))?,
        })
    }

    /// Budget use, audit log and journal as JSON text.
    #[napi(catch_unwind)]
    pub fn save(&self) -> String {
        self.inner.save()
    }

    /// A copy (to put back if a turn's result cannot be stored).
    #[napi(catch_unwind)]
    pub fn copy(&self) -> SessionLedger {
        SessionLedger {
            inner: self.inner.clone(),
        }
    }

    /// Takes over the state of `other` (a copy made earlier).
    #[napi(js_name = "resetTo", catch_unwind)]
    pub fn reset_to(&mut self, other: &SessionLedger) {
        self.inner = other.inner.clone();
    }

    /// `null` when the policy allows `operation`; otherwise the rule that refuses it.
    #[napi(catch_unwind)]
    pub fn check(&self, operation: String) -> Option<LedgerRefusal> {
        self.inner
            .policy
            .check(&operation)
            .err()
            .map(|r| LedgerRefusal {
                code: "POLICY_VIOLATION".into(),
                rule: r.rule,
                message: r.message,
            })
    }

    /// Takes `amount` of a budget if it stays within the limit (`null`), or takes nothing.
    #[napi(catch_unwind)]
    pub fn take(&mut self, env: Env, budget: String, amount: f64) -> Result<Option<LedgerRefusal>> {
        Ok(self
            .inner
            .budget
            .take(kind(&env, &budget)?, amount)
            .err()
            .map(exceeded))
    }

    /// Records `amount` already spent; a refusal when a limit is now passed.
    #[napi(catch_unwind)]
    pub fn record(
        &mut self,
        env: Env,
        budget: String,
        amount: f64,
    ) -> Result<Option<LedgerRefusal>> {
        Ok(self
            .inner
            .budget
            .record(kind(&env, &budget)?, amount)
            .err()
            .map(exceeded))
    }

    /// The first budget whose use has passed its limit.
    #[napi(catch_unwind)]
    pub fn exceeded(&self) -> Option<LedgerRefusal> {
        self.inner.budget.exceeded().map(exceeded)
    }

    /// What is left of a budget (`null`: unlimited).
    #[napi(catch_unwind)]
    pub fn remaining(&self, env: Env, budget: String) -> Result<Option<f64>> {
        Ok(self.inner.budget.remaining(kind(&env, &budget)?))
    }

    /// What has been used of a budget.
    #[napi(catch_unwind)]
    pub fn used(&self, env: Env, budget: String) -> Result<f64> {
        Ok(self.inner.budget.used(kind(&env, &budget)?))
    }

    /// Appends an audit record (read the entries back with `auditEntries`).
    #[napi(catch_unwind)]
    pub fn audit(&mut self, record: LedgerAuditRecord) {
        // Non-finite numbers have no JSON form: the saved entry would not hash as written.
        let finite = |n: f64| if n.is_finite() { n } else { 0.0 };
        self.inner.audit.append(AuditRecord {
            timestamp: finite(record.timestamp),
            turn_number: record.turn_number,
            operation: record.operation,
            args: record.args,
            result: record.result,
            error: record.error,
            duration_ms: finite(record.duration_ms),
            tokens_used: record.tokens_used.filter(|t| t.is_finite()),
        });
    }

    /// Audit entries, optionally only those of one turn and/or one operation.
    #[napi(js_name = "auditEntries", catch_unwind)]
    pub fn audit_entries(
        &self,
        turn: Option<u32>,
        operation: Option<String>,
    ) -> Vec<LedgerAuditEntry> {
        self.inner
            .audit
            .entries()
            .iter()
            .filter(|e| turn.is_none_or(|t| e.record.turn_number == t))
            .filter(|e| operation.as_ref().is_none_or(|o| &e.record.operation == o))
            .map(LedgerAuditEntry::from)
            .collect()
    }

    /// Totals over the audit log.
    #[napi(js_name = "auditStats", catch_unwind)]
    pub fn audit_stats(&self) -> LedgerAuditStats {
        let s = self.inner.audit.stats();
        LedgerAuditStats {
            total_operations: s.total_operations as f64,
            operation_counts: s
                .operation_counts
                .into_iter()
                .map(|(k, v)| (k, v as f64))
                .collect(),
            total_tokens: s.total_tokens,
        }
    }

    /// The audit log as JSON lines.
    #[napi(js_name = "auditExport", catch_unwind)]
    pub fn audit_export(&self) -> String {
        self.inner.audit.export()
    }

    /// Checks the audit chain up to the recorded head.
    #[napi(js_name = "auditVerify", catch_unwind)]
    pub fn audit_verify(&self) -> LedgerVerification {
        verification(
            self.inner
                .audit
                .verify()
                .map(|()| self.inner.audit.entries().len()),
        )
    }

    /// Checks an exported audit log's chain.
    #[napi(js_name = "verifyAuditExport", catch_unwind)]
    pub fn verify_audit_export(text: String) -> LedgerVerification {
        verification(AuditLog::verify_export(&text))
    }

    /// The answer for the next operation call of a (re-)run turn.
    #[napi(js_name = "journalNext", catch_unwind)]
    pub fn journal_next(&mut self, operation: String, args: String) -> LedgerReplay {
        let (kind, entry, expected) = match self.inner.journal.next(&operation, &args) {
            Replay::Recorded(e) => ("recorded", Some(e.clone()), None),
            Replay::Live => ("live", None, None),
            Replay::Diverged { expected } => ("diverged", None, Some(expected.operation.clone())),
        };
        LedgerReplay {
            kind: kind.into(),
            value: entry.as_ref().and_then(|e| e.value.clone()),
            error: entry.and_then(|e| e.error),
            expected,
        }
    }

    /// Records an operation call that ran.
    #[napi(js_name = "journalRecord", catch_unwind)]
    pub fn journal_record(
        &mut self,
        operation: String,
        args: String,
        value: Option<String>,
        error: Option<String>,
    ) {
        self.inner.journal.record(JournalEntry {
            operation,
            args,
            value,
            error,
        });
    }

    /// Starts a re-run of the turn from its first call.
    #[napi(js_name = "journalRewind", catch_unwind)]
    pub fn journal_rewind(&mut self) {
        self.inner.journal.rewind();
    }

    /// Empties the journal (the turn ended for good).
    #[napi(js_name = "journalClear", catch_unwind)]
    pub fn journal_clear(&mut self) {
        self.inner.journal.clear();
    }

    /// How many calls the journal holds.
    #[napi(js_name = "journalLength", catch_unwind)]
    pub fn journal_length(&self) -> u32 {
        self.inner.journal.entries().len() as u32
    }
}

fn verification(r: std::result::Result<usize, SessionError>) -> LedgerVerification {
    match r {
        Ok(n) => LedgerVerification {
            ok: true,
            entries: Some(n as u32),
            error: None,
        },
        Err(e) => LedgerVerification {
            ok: false,
            entries: None,
            error: Some(e.message),
        },
    }
}

/// One entry of a container archive.
#[napi(object)]
pub struct ArchiveEntry {
    pub name: String,
    pub data: Buffer,
}

/// Writes entries as an archive of stored entries (a session snapshot's container).
#[napi(js_name = "packArchive", catch_unwind)]
pub fn pack_archive(env: Env, entries: Vec<ArchiveEntry>) -> Result<Buffer> {
    let parts: Vec<(&str, &[u8])> = entries
        .iter()
        .map(|e| (e.name.as_str(), &e.data[..]))
        .collect();
    crate::workspace::pack(&parts)
        .map(Buffer::from)
        .map_err(|e| archive_failure(&env, e))
}

/// Reads a container archive: at most `maxEntries` entries and `maxTotalBytes` bytes.
#[napi(js_name = "unpackArchive", catch_unwind)]
pub fn unpack_archive(
    env: Env,
    bytes: Buffer,
    max_entries: u32,
    max_total_bytes: f64,
) -> Result<Vec<ArchiveEntry>> {
    let max_total = if max_total_bytes.is_finite() && max_total_bytes > 0.0 {
        max_total_bytes as u64
    } else {
        0
    };
    crate::workspace::unpack(&bytes, max_entries as usize, max_total)
        .map(|list| {
            list.into_iter()
                .map(|(name, data)| ArchiveEntry {
                    name,
                    data: data.into(),
                })
                .collect()
        })
        .map_err(|e| archive_failure(&env, e))
}
