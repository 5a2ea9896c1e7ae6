//! `SessionLedger`: a session's policy decisions, budget, audit log and journal
//! ([`crate::session::Ledger`]) and the gate of its turn in progress
//! ([`crate::session::TurnGate`]) for the JavaScript surface in `lib/session/`; the turn's
//! working copies ([`turn`]) and the snapshot container ([`snapshot`]). Conversion only.
//! Failures are thrown as errors whose `code` is the session code.

pub mod snapshot;
pub mod turn;
pub mod world;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use napi::bindgen_prelude::*;
use napi_derive::napi;

use super::throw;
use crate::session::{
    lock_session, Admission, Approval, AuditEntry, AuditLog, AuditRecord, Budget, BudgetKind, Call,
    CallKind, CallRules, Decided, Exceeded, JournalEntry, Ledger, OperationPolicy, Outcome,
    SessionError, SessionState, SharedSession, Stop, TurnGate,
};

/// What a budget limits, as JavaScript names it.
#[napi(string_enum)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BudgetName {
    #[napi(value = "turns")]
    Turns,
    #[napi(value = "wallMs")]
    WallMs,
    #[napi(value = "hostCalls")]
    HostCalls,
    #[napi(value = "bytesWritten")]
    BytesWritten,
    #[napi(value = "tokens")]
    Tokens,
    #[napi(value = "cost")]
    Cost,
}

impl From<BudgetName> for BudgetKind {
    fn from(n: BudgetName) -> Self {
        match n {
            BudgetName::Turns => BudgetKind::Turns,
            BudgetName::WallMs => BudgetKind::WallMs,
            BudgetName::HostCalls => BudgetKind::HostCalls,
            BudgetName::BytesWritten => BudgetKind::BytesWritten,
            BudgetName::Tokens => BudgetKind::Tokens,
            BudgetName::Cost => BudgetKind::Cost,
        }
    }
}

fn kind(env: &Env, name: &str) -> Result<BudgetKind> {
    BudgetKind::parse(name).ok_or_else(|| {
        throw(
            env,
            SessionError::new(
                crate::session::SessionCode::InvalidInput,
                format!("unknown budget kind {name:?}"),
            ),
        )
    })
}

/// One figure per budget kind (`undefined`: unlimited, for what is left).
#[napi(object)]
pub struct BudgetFigures {
    pub turns: Option<f64>,
    pub wall_ms: Option<f64>,
    pub host_calls: Option<f64>,
    pub bytes_written: Option<f64>,
    pub tokens: Option<f64>,
    pub cost: Option<f64>,
}

fn figures(of: impl Fn(BudgetKind) -> Option<f64>) -> BudgetFigures {
    BudgetFigures {
        turns: of(BudgetKind::Turns),
        wall_ms: of(BudgetKind::WallMs),
        host_calls: of(BudgetKind::HostCalls),
        bytes_written: of(BudgetKind::BytesWritten),
        tokens: of(BudgetKind::Tokens),
        cost: of(BudgetKind::Cost),
    }
}

/// The rules of a session policy the gate enforces.
#[napi(object)]
pub struct LedgerPolicy {
    /// Operations that may run (`*` is a wildcard); absent: all not denied.
    pub allowed_operations: Option<Vec<String>>,
    /// Operations that never run; deny wins.
    pub denied_operations: Option<Vec<String>>,
    /// `llmRules.allowComplete` (default true).
    pub allow_complete: Option<bool>,
    /// `llmRules.maxTokensPerCall`.
    pub max_tokens_per_call: Option<f64>,
    /// `executionRules.allowExec` (default true).
    pub allow_exec: Option<bool>,
    /// `executionRules.allowNetworkCalls` (default true).
    pub allow_network_calls: Option<bool>,
    /// Operations declared as making network calls.
    pub network_operations: Option<Vec<String>>,
}

fn policy(env: &Env, p: &LedgerPolicy) -> Result<(OperationPolicy, CallRules)> {
    let denied = p.denied_operations.clone().unwrap_or_default();
    let ops = OperationPolicy::new(p.allowed_operations.as_deref(), &denied)
        .map_err(|e| throw(env, &e))?;
    let rules = CallRules {
        allow_complete: p.allow_complete.unwrap_or(true),
        max_tokens_per_call: p.max_tokens_per_call,
        allow_exec: p.allow_exec.unwrap_or(true),
        allow_network: p.allow_network_calls.unwrap_or(true),
        network_operations: p
            .network_operations
            .clone()
            .unwrap_or_default()
            .into_iter()
            .collect(),
    };
    Ok((ops, rules))
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

/// Why a turn stops.
#[napi(object)]
pub struct GateStop {
    /// `policy`, `budget`, `limit`, `diverged`, `invalid` or `approval`.
    #[napi(ts_type = "'policy' | 'budget' | 'limit' | 'diverged' | 'invalid' | 'approval'")]
    pub kind: String,
    /// The error code of the turn's outcome (empty for `approval`).
    pub code: String,
    /// For people and models.
    pub message: String,
    /// The policy rule that refused (`policy`).
    pub rule: Option<String>,
    /// The budget that ran out (`budget`).
    pub budget: Option<BudgetName>,
    /// The approval request the turn waits for (`approval`).
    pub request_id: Option<String>,
}

fn budget_name(k: BudgetKind) -> BudgetName {
    match k {
        BudgetKind::Turns => BudgetName::Turns,
        BudgetKind::WallMs => BudgetName::WallMs,
        BudgetKind::HostCalls => BudgetName::HostCalls,
        BudgetKind::BytesWritten => BudgetName::BytesWritten,
        BudgetKind::Tokens => BudgetName::Tokens,
        BudgetKind::Cost => BudgetName::Cost,
    }
}

impl From<Stop> for GateStop {
    fn from(s: Stop) -> Self {
        let code = s.code().to_string();
        let message = s.message().to_string();
        let mut out = GateStop {
            kind: String::new(),
            code,
            message,
            rule: None,
            budget: None,
            request_id: None,
        };
        out.kind = match s {
            Stop::Policy { rule, .. } => {
                out.rule = Some(rule);
                "policy"
            }
            Stop::Budget { kind, .. } => {
                out.budget = Some(budget_name(kind));
                "budget"
            }
            Stop::CallLimit { .. } => "limit",
            Stop::Diverged { .. } => "diverged",
            Stop::Invalid { .. } => "invalid",
            Stop::Approval { request_id } => {
                out.request_id = Some(request_id);
                "approval"
            }
        }
        .into();
        out
    }
}

/// One recorded operation call of a turn's journal, as JSON text.
#[napi(object)]
pub struct LedgerJournalEntry {
    pub operation: String,
    pub args: String,
    /// `{ value?, usage }` when it answered.
    pub value: Option<String>,
    /// `{ name, message }` when it threw.
    pub error: Option<String>,
}

/// The gate's answer for one call.
#[napi(object)]
pub struct GateAdmission {
    /// `run` (then `settle(callId, …)`), `replay` (answer with `value` or `error`), `ask` (call
    /// the operation's `needsApproval` predicate and admit again with its answer) or `stop`.
    #[napi(ts_type = "'run' | 'replay' | 'ask' | 'stop'")]
    pub kind: String,
    pub call_id: Option<u32>,
    /// False for a world call that ran before the pause of a re-run turn.
    pub fresh: Option<bool>,
    /// The decided approval request the call carries out.
    pub request: Option<String>,
    /// An operation's place in the turn's journal (the same on every re-run).
    pub seq: Option<u32>,
    /// The recorded value, as JSON text `{ value?, usage }`.
    pub value: Option<String>,
    /// The recorded error, as JSON text `{ name, message }`.
    pub error: Option<String>,
    pub stop: Option<GateStop>,
}

/// One call for the gate.
#[napi(object)]
pub struct GateCall {
    /// `world` or `operation`.
    #[napi(ts_type = "'world' | 'operation'")]
    pub kind: String,
    pub operation: String,
    /// The arguments as JSON text.
    pub args: String,
    /// Bytes the call is about to write.
    pub bytes: Option<f64>,
    /// `never` (default), `always` or `ask`.
    #[napi(ts_type = "'never' | 'always' | 'ask'")]
    pub approval: Option<String>,
    /// What identifies a world call on a re-run, when `args` is cut for the audit log.
    pub key: Option<String>,
}

/// How a call that ran ended.
#[napi(object)]
pub struct GateOutcome {
    /// The result as JSON text, for the audit log.
    pub result: Option<String>,
    /// The error: for an operation as JSON text `{ name, message }` (journalled); for a world
    /// call its message.
    pub error: Option<String>,
    /// What the journal keeps of an operation's answer (`{ value?, usage }` JSON text).
    pub journal: Option<String>,
    pub tokens: Option<f64>,
    pub cost: Option<f64>,
    /// Bytes written that were not charged before the call ran.
    pub bytes_written: Option<f64>,
    /// The answer cannot be kept (`error` says why): the turn stops with `INVALID_INPUT`.
    pub invalid: Option<bool>,
}

/// A turn's start: refused, or what was left of every budget when it started.
#[napi(object)]
pub struct TurnStart {
    pub refusal: Option<LedgerRefusal>,
    pub remaining: BudgetFigures,
}

/// A turn's end: the budget its wall time passed, if any, and what is left of every budget.
#[napi(object)]
pub struct TurnEnd {
    pub wall_over: Option<LedgerRefusal>,
    pub remaining: BudgetFigures,
    /// Why the gate stopped the turn, if it did (a native `world` call stops it on the guest's
    /// thread, out of JavaScript's sight).
    pub stop: Option<GateStop>,
}

/// A decided approval request of the turn being resumed.
#[napi(object)]
pub struct GateRequest {
    pub id: String,
    pub operation: String,
    /// The arguments as JSON text.
    pub args: String,
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

/// The outcome of verifying an audit export.
#[napi(object)]
pub struct LedgerVerification {
    pub ok: bool,
    pub entries: Option<u32>,
    pub error: Option<String>,
}

/// A session's ledger (see the module documentation) and the gate of its turn in progress.
#[napi]
pub struct SessionLedger {
    /// Shared with the native `world` of the turn in progress, whose calls pass the same gate.
    pub(crate) state: SharedSession,
}

impl SessionLedger {
    fn of(ledger: Ledger) -> Self {
        SessionLedger {
            state: Arc::new(Mutex::new(SessionState { ledger, turn: None })),
        }
    }
}

fn admission(a: Admission) -> GateAdmission {
    let mut out = GateAdmission {
        kind: String::new(),
        call_id: None,
        fresh: None,
        request: None,
        seq: None,
        value: None,
        error: None,
        stop: None,
    };
    out.kind = match a {
        Admission::Run {
            call_id,
            fresh,
            request,
            seq,
        } => {
            out.call_id = Some(call_id as u32);
            out.fresh = Some(fresh);
            out.request = request;
            out.seq = seq.map(|n| n as u32);
            "run"
        }
        Admission::Replay { value, error } => {
            out.value = value;
            out.error = error;
            "replay"
        }
        Admission::Ask => "ask",
        Admission::Stop(stop) => {
            out.stop = Some(stop.into());
            "stop"
        }
    }
    .into();
    out
}

fn not_in_turn() -> GateStop {
    GateStop {
        kind: "invalid".into(),
        code: "SESSION_STATE".into(),
        message: "no turn is running".into(),
        rule: None,
        budget: None,
        request_id: None,
    }
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
        let budget = Budget::new(&limits).map_err(|e| throw(&env, &e))?;
        let (ops, rules) = policy(&env, &policy_rules)?;
        let mut inner = Ledger::new(ops, budget);
        inner.rules = rules;
        Ok(SessionLedger::of(inner))
    }

    /// A ledger from `save()`'s text; refuses a tampered audit log (`AUDIT_TAMPERED`).
    #[napi(factory, catch_unwind)]
    pub fn restore(env: Env, policy_rules: LedgerPolicy, saved: String) -> Result<Self> {
        let (ops, rules) = policy(&env, &policy_rules)?;
        let mut inner = Ledger::restore(ops, &saved).map_err(|e| throw(&env, &e))?;
        inner.rules = rules;
        Ok(SessionLedger::of(inner))
    }

    /// Budget use, audit log and journal as JSON text.
    #[napi(catch_unwind)]
    pub fn save(&self) -> String {
        let mut guard = lock_session(&self.state);
        let st = &mut *guard;
        st.ledger.save()
    }

    /// A copy (to put back if a turn's result cannot be stored).
    #[napi(catch_unwind)]
    pub fn copy(&self) -> SessionLedger {
        SessionLedger::of(lock_session(&self.state).ledger.clone())
    }

    /// Takes over the state of `other` (a copy made earlier).
    #[napi(js_name = "resetTo", catch_unwind)]
    pub fn reset_to(&self, other: &SessionLedger) {
        // Copied before this ledger is locked: `other` may be this very ledger.
        let ledger = lock_session(&other.state).ledger.clone();
        lock_session(&self.state).ledger = ledger;
    }

    /// `null` when the policy's operation lists allow `operation`; otherwise the rule that
    /// refuses it.
    #[napi(catch_unwind)]
    pub fn check(&self, operation: String) -> Option<LedgerRefusal> {
        let mut guard = lock_session(&self.state);
        let st = &mut *guard;
        st.ledger
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
    /// The kind is read as a string so an unknown one is refused with `INVALID_INPUT` like
    /// every other session error.
    #[napi(catch_unwind, ts_args_type = "budget: BudgetName, amount: number")]
    pub fn take(&mut self, env: Env, budget: String, amount: f64) -> Result<Option<LedgerRefusal>> {
        let kind = kind(&env, &budget)?;
        let mut guard = lock_session(&self.state);
        Ok(guard.ledger.budget.take(kind, amount).err().map(exceeded))
    }

    /// Records `amount` already spent; a refusal when a limit is now passed.
    /// The kind is read as a string so an unknown one is refused with `INVALID_INPUT` like
    /// every other session error.
    #[napi(catch_unwind, ts_args_type = "budget: BudgetName, amount: number")]
    pub fn record(
        &mut self,
        env: Env,
        budget: String,
        amount: f64,
    ) -> Result<Option<LedgerRefusal>> {
        let kind = kind(&env, &budget)?;
        let mut guard = lock_session(&self.state);
        Ok(guard.ledger.budget.record(kind, amount).err().map(exceeded))
    }

    /// The first budget whose use has passed its limit.
    #[napi(catch_unwind)]
    pub fn exceeded(&self) -> Option<LedgerRefusal> {
        let mut guard = lock_session(&self.state);
        let st = &mut *guard;
        st.ledger.budget.exceeded().map(exceeded)
    }

    /// What is left of every budget (`undefined`: unlimited).
    #[napi(js_name = "remainingAll", catch_unwind)]
    pub fn remaining_all(&self) -> BudgetFigures {
        let mut guard = lock_session(&self.state);
        let st = &mut *guard;
        figures(|k| st.ledger.budget.remaining(k))
    }

    /// What has been used of every budget.
    #[napi(js_name = "usedAll", catch_unwind)]
    pub fn used_all(&self) -> BudgetFigures {
        let mut guard = lock_session(&self.state);
        let st = &mut *guard;
        figures(|k| Some(st.ledger.budget.used(k)))
    }

    /// Starts a turn: refused (the budget that is used up) when a budget is already passed or
    /// no turn is left; otherwise one turn is taken, the journal emptied and the gate opened.
    /// Returns what was left of every budget when the turn started.
    #[napi(js_name = "startTurn", catch_unwind)]
    pub fn start_turn(&mut self, turn_number: u32, calls_per_turn: u32) -> TurnStart {
        let mut guard = lock_session(&self.state);
        let st = &mut *guard;
        let refused = match st.ledger.budget.exceeded() {
            Some(over) => Some(over),
            None => st.ledger.budget.take(BudgetKind::Turns, 1.0).err(),
        };
        if refused.is_none() {
            st.ledger.journal.clear();
            st.turn = Some(TurnGate::begin(
                &mut st.ledger,
                turn_number,
                calls_per_turn,
                Vec::new(),
            ));
        }
        TurnStart {
            refusal: refused.map(exceeded),
            remaining: figures(|k| st.ledger.budget.remaining(k)),
        }
    }

    /// Opens the gate again for a turn paused for approval: the journal is rewound (the turn
    /// re-runs from its first call), `requests` are its decided approval requests, and
    /// `atStart` what was left of every budget when it first started.
    #[napi(js_name = "resumeTurn", catch_unwind)]
    pub fn resume_turn(
        &mut self,
        turn_number: u32,
        calls_per_turn: u32,
        requests: Vec<GateRequest>,
        at_start: BudgetFigures,
    ) {
        let mut guard = lock_session(&self.state);
        let st = &mut *guard;
        let decided = requests
            .into_iter()
            .map(|r| Decided {
                id: r.id,
                operation: r.operation,
                args: r.args,
            })
            .collect();
        let a = &at_start;
        let at_start = [
            a.turns,
            a.wall_ms,
            a.host_calls,
            a.bytes_written,
            a.tokens,
            a.cost,
        ];
        st.turn = Some(TurnGate::resume(
            &mut st.ledger,
            turn_number,
            calls_per_turn,
            decided,
            at_start,
        ));
    }

    /// Admits one call of the turn (policy, call cap, budget, replay, approval).
    #[napi(catch_unwind)]
    pub fn admit(&mut self, call: GateCall) -> GateAdmission {
        let mut guard = lock_session(&self.state);
        let st = &mut *guard;
        let Some(turn) = st.turn.as_mut() else {
            return GateAdmission {
                kind: "stop".into(),
                call_id: None,
                fresh: None,
                request: None,
                seq: None,
                value: None,
                error: None,
                stop: Some(not_in_turn()),
            };
        };
        let approval = match call.approval.as_deref() {
            Some("always") => Approval::Always,
            Some("ask") => Approval::Ask,
            _ => Approval::Never,
        };
        let kind = if call.kind == "world" {
            CallKind::World
        } else {
            CallKind::Operation
        };
        let gate_call = Call {
            kind,
            operation: &call.operation,
            args: &call.args,
            bytes: call.bytes.unwrap_or(0.0),
            approval,
            key: call.key.as_deref(),
        };
        admission(turn.admit(&mut st.ledger, &gate_call))
    }

    /// Audits and journals a call that ran; the stop it caused, if any.
    #[napi(catch_unwind)]
    pub fn settle(&mut self, call_id: u32, outcome: GateOutcome) -> Option<GateStop> {
        let mut guard = lock_session(&self.state);
        let st = &mut *guard;
        let turn = st.turn.as_mut()?;
        let outcome = Outcome {
            result: outcome.result,
            error: outcome.error,
            journal: outcome.journal,
            tokens: outcome.tokens,
            cost: outcome.cost,
            bytes_written: outcome.bytes_written.unwrap_or(0.0),
            invalid: outcome.invalid.unwrap_or(false),
        };
        turn.settle(&mut st.ledger, u64::from(call_id), outcome)
            .map(GateStop::from)
    }

    /// What is left of every budget at this point of the turn, counted from its start (the
    /// same on a re-run).
    #[napi(js_name = "turnRemaining", catch_unwind)]
    pub fn turn_remaining(&self) -> BudgetFigures {
        let mut guard = lock_session(&self.state);
        let st = &mut *guard;
        match &st.turn {
            Some(t) => figures(|k| t.remaining(k)),
            None => figures(|k| st.ledger.budget.remaining(k)),
        }
    }

    /// Ends the turn's gate: operations still running are audited as such, `wallMs` (the
    /// turn's wall time) is recorded, and the journal is kept when `keepJournal` (the turn waits
    /// for approval), emptied otherwise. Answers with the budget `wallMs` passed, if it did, and
    /// what is left of every budget.
    #[napi(js_name = "endTurn", catch_unwind)]
    pub fn end_turn(&mut self, wall_ms: f64, keep_journal: bool) -> TurnEnd {
        let mut guard = lock_session(&self.state);
        let st = &mut *guard;
        let mut stop = None;
        if let Some(mut t) = st.turn.take() {
            stop = t.stop().cloned().map(GateStop::from);
            t.close(&mut st.ledger);
        }
        if !keep_journal {
            st.ledger.journal.clear();
        }
        let wall_over = st
            .ledger
            .budget
            .record(BudgetKind::WallMs, wall_ms)
            .err()
            .map(exceeded);
        TurnEnd {
            wall_over,
            remaining: figures(|k| st.ledger.budget.remaining(k)),
            stop,
        }
    }

    /// Tokens and cost an operation reported after its turn ended.
    #[napi(js_name = "lateUsage", catch_unwind)]
    pub fn late_usage(&mut self, tokens: f64, cost: f64) {
        let mut guard = lock_session(&self.state);
        let st = &mut *guard;
        TurnGate::late_usage(&mut st.ledger, tokens, cost);
    }

    /// Appends an audit record (read the entries back with `auditEntries`).
    #[napi(catch_unwind)]
    pub fn audit(&mut self, record: LedgerAuditRecord) {
        let mut guard = lock_session(&self.state);
        let st = &mut *guard;
        // Non-finite numbers have no JSON form: the saved entry would not hash as written.
        let finite = |n: f64| if n.is_finite() { n } else { 0.0 };
        st.ledger.audit.append(AuditRecord {
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
        let mut guard = lock_session(&self.state);
        let st = &mut *guard;
        st.ledger
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
        let mut guard = lock_session(&self.state);
        let st = &mut *guard;
        let s = st.ledger.audit.stats();
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
        let mut guard = lock_session(&self.state);
        let st = &mut *guard;
        st.ledger.audit.export()
    }

    /// Checks the audit chain up to the recorded head.
    #[napi(js_name = "auditVerify", catch_unwind)]
    pub fn audit_verify(&self) -> LedgerVerification {
        let mut guard = lock_session(&self.state);
        let st = &mut *guard;
        verification(
            st.ledger
                .audit
                .verify()
                .map(|()| st.ledger.audit.entries().len()),
        )
    }

    /// Checks an exported audit log's chain.
    #[napi(js_name = "verifyAuditExport", catch_unwind)]
    pub fn verify_audit_export(text: String) -> LedgerVerification {
        verification(AuditLog::verify_export(&text))
    }

    /// Replaces the running turn's recorded operation calls with `entries` (a durable copy
    /// written as each call completed) for a re-run after a crash; call after `startTurn` or
    /// `resumeTurn`.
    #[napi(js_name = "journalSeed", catch_unwind)]
    pub fn journal_seed(&mut self, entries: Vec<LedgerJournalEntry>) {
        let mut guard = lock_session(&self.state);
        let st = &mut *guard;
        st.ledger.journal.seed(
            entries
                .into_iter()
                .map(|e| JournalEntry {
                    operation: e.operation,
                    args: e.args,
                    value: e.value,
                    error: e.error,
                })
                .collect(),
        );
    }

    /// Empties the journal (the turn ended for good).
    #[napi(js_name = "journalClear", catch_unwind)]
    pub fn journal_clear(&mut self) {
        let mut guard = lock_session(&self.state);
        let st = &mut *guard;
        st.ledger.journal.clear();
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
