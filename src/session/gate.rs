//! The gate of a turn: every call the guest makes (`world.*` or a host operation) is admitted
//! here before it runs and settled here after. `admit` checks the policy (operation lists, the
//! `llmRules` and `executionRules`), the per-turn call cap and the budget, answers a re-run
//! from the journal or notices that it diverged, and audits refusals; `settle` audits the call
//! and journals what an operation answered. The caller runs what is admitted and nothing else.

use std::collections::{BTreeSet, HashMap};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value as Json;
use sha2::{Digest, Sha256};

use super::audit::AuditRecord;
use super::budget::{BudgetKind, Exceeded};
use super::journal::{JournalEntry, Replay};
use super::Ledger;

/// The rules of a policy beyond its operation lists.
#[derive(Debug, Clone)]
pub struct CallRules {
    /// `llmRules.allowComplete`.
    pub allow_complete: bool,
    /// `llmRules.maxTokensPerCall`.
    pub max_tokens_per_call: Option<f64>,
    /// `executionRules.allowExec`.
    pub allow_exec: bool,
    /// `executionRules.allowNetworkCalls`.
    pub allow_network: bool,
    /// Operations declared as making network calls.
    pub network_operations: BTreeSet<String>,
}

impl Default for CallRules {
    fn default() -> Self {
        CallRules {
            allow_complete: true,
            max_tokens_per_call: None,
            allow_exec: true,
            allow_network: true,
            network_operations: BTreeSet::new(),
        }
    }
}

/// Token-count fields `maxTokensPerCall` reads, compared without case, `_` or `-`: the
/// spellings of the common model APIs.
const TOKEN_FIELDS: [&str; 5] = [
    "maxtokens",
    "maxcompletiontokens",
    "maxoutputtokens",
    "maxnewtokens",
    "maxtokenstosample",
];

fn is_token_field(key: &str) -> bool {
    let folded: String = key
        .chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect();
    TOKEN_FIELDS.contains(&folded.as_str())
}

/// The largest token count any argument asks for, at any depth; a value that is not a finite
/// number asks for no bound (JSON turns `Infinity` into `null`).
fn requested_tokens(args: &Json) -> Option<f64> {
    let mut asked: Option<f64> = None;
    let mut pending = vec![args];
    while let Some(value) = pending.pop() {
        match value {
            Json::Array(items) => pending.extend(items.iter()),
            Json::Object(map) => {
                for (key, v) in map {
                    if !is_token_field(key) {
                        pending.push(v);
                        continue;
                    }
                    let n = v
                        .as_f64()
                        .filter(|n| n.is_finite())
                        .unwrap_or(f64::INFINITY);
                    asked = Some(asked.map_or(n, |a| a.max(n)));
                }
            }
            _ => {}
        }
    }
    asked
}

fn number(n: f64) -> String {
    // As JavaScript prints numbers: no `.0` on whole ones.
    if n.is_finite() && n.fract() == 0.0 && n.abs() < 1e21 {
        format!("{}", n as i64)
    } else if n.is_infinite() {
        if n > 0.0 { "Infinity" } else { "-Infinity" }.to_string()
    } else {
        format!("{n}")
    }
}

impl CallRules {
    /// The rule that refuses `operation(args)`, with its message.
    fn refusal(&self, operation: &str, args: &str) -> Option<(String, String)> {
        if operation == "llm.complete" {
            if !self.allow_complete {
                return Some((
                    "llmRules.allowComplete".into(),
                    "llm.complete is not allowed by the session policy (llmRules.allowComplete is false)".into(),
                ));
            }
            if let Some(max) = self.max_tokens_per_call {
                let parsed: Json = serde_json::from_str(args).unwrap_or(Json::Null);
                if let Some(asked) = requested_tokens(&parsed).filter(|&a| a > max) {
                    return Some((
                        "llmRules.maxTokensPerCall".into(),
                        format!(
                            "llm.complete asked for {} tokens; the session policy allows at most {} per call (llmRules.maxTokensPerCall)",
                            number(asked),
                            number(max)
                        ),
                    ));
                }
            }
        }
        if operation == "world.exec" && !self.allow_exec {
            return Some((
                "executionRules.allowExec".into(),
                "world.exec is not allowed by the session policy (executionRules.allowExec is false)"
                    .into(),
            ));
        }
        if !self.allow_network && self.network_operations.contains(operation) {
            return Some((
                "executionRules.allowNetworkCalls".into(),
                format!("{operation} makes network calls, which the session policy does not allow (executionRules.allowNetworkCalls is false)"),
            ));
        }
        None
    }
}

/// What kind of call the guest made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallKind {
    /// `world.*`: re-executed on a re-run (it only touches the turn's working copy).
    World,
    /// A host operation: answered from the journal on a re-run.
    Operation,
}

/// Whether an operation waits for a person's decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Approval {
    /// It runs when admitted.
    Never,
    /// It always waits.
    Always,
    /// A host predicate decides; the gate answers [`Admission::Ask`] and is asked again with
    /// `Never` or `Always`.
    Ask,
}

/// One call, as the gate sees it.
#[derive(Debug, Clone)]
pub struct Call<'a> {
    /// World call or operation.
    pub kind: CallKind,
    /// As the guest called it (`world.read`, `llm.complete`).
    pub operation: &'a str,
    /// Its arguments as JSON text (audited, journalled and compared on a re-run).
    pub args: &'a str,
    /// Bytes the call is about to write (charged to `bytesWritten` before it runs).
    pub bytes: f64,
    /// Whether it waits for approval (operations only).
    pub approval: Approval,
    /// What identifies a world call on a re-run when `args` is cut for the audit log
    /// (default: [`world_key`] of `args`).
    pub key: Option<&'a str>,
}

impl<'a> Call<'a> {
    /// A call that writes nothing and needs no approval.
    pub fn new(kind: CallKind, operation: &'a str, args: &'a str) -> Self {
        Call {
            kind,
            operation,
            args,
            bytes: 0.0,
            approval: Approval::Never,
            key: None,
        }
    }
}

/// Why the turn stops. Once a gate has stopped, it admits nothing more.
#[derive(Debug, Clone, PartialEq)]
pub enum Stop {
    /// The policy refused a call.
    Policy { rule: String, message: String },
    /// A budget ran out.
    Budget { kind: BudgetKind, message: String },
    /// The turn made more calls than `callsPerTurn`.
    CallLimit { message: String },
    /// A re-run called something else than the run it repeats.
    Diverged { message: String },
    /// An operation answered with something that cannot be kept.
    Invalid { message: String },
    /// An operation waits for approval.
    Approval { request_id: String },
}

impl Stop {
    /// The error code the turn's outcome carries (none for an approval pause).
    pub fn code(&self) -> &'static str {
        match self {
            Stop::Policy { .. } => "POLICY_VIOLATION",
            Stop::Budget { .. } => "BUDGET_EXCEEDED",
            Stop::CallLimit { .. } => "HOST_CALL_LIMIT",
            Stop::Diverged { .. } => "REPLAY_DIVERGED",
            Stop::Invalid { .. } => "INVALID_INPUT",
            Stop::Approval { .. } => "",
        }
    }

    /// For people and models.
    pub fn message(&self) -> &str {
        match self {
            Stop::Policy { message, .. }
            | Stop::Budget { message, .. }
            | Stop::CallLimit { message }
            | Stop::Diverged { message }
            | Stop::Invalid { message } => message,
            Stop::Approval { .. } => "",
        }
    }
}

/// The gate's answer to [`TurnGate::admit`].
#[derive(Debug, Clone, PartialEq)]
pub enum Admission {
    /// Run it, then [`TurnGate::settle`] with this id. `fresh` is false for a world call that
    /// ran before the pause (it is not charged or audited again). `request` names the decided
    /// approval request the call carries out. `seq` is an operation's place in the turn's
    /// journal (stable across re-runs, so a durable journal and an idempotency key can use it).
    Run {
        call_id: u64,
        fresh: bool,
        request: Option<String>,
        seq: Option<usize>,
    },
    /// It ran before: answer with the recorded value (JSON text) or error.
    Replay {
        value: Option<String>,
        error: Option<String>,
    },
    /// Ask the operation's predicate, then admit again with its answer.
    Ask,
    /// The turn stops (refusal, budget, call cap, divergence, approval).
    Stop(Stop),
}

/// How a call that ran ended.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// Its result as JSON text (audited, cut to [`super::ARG_LIMIT`]).
    pub result: Option<String>,
    /// Why it failed.
    pub error: Option<String>,
    /// What the journal keeps for an operation: its value and usage as JSON text; `None`
    /// journals `error`.
    pub journal: Option<String>,
    /// Tokens and cost it reported.
    pub tokens: Option<f64>,
    pub cost: Option<f64>,
    /// Bytes it wrote that were not charged before it ran (a program's writes).
    pub bytes_written: f64,
    /// Its answer cannot be kept (`error` says why): audited, not journalled, and the turn
    /// stops with `INVALID_INPUT`.
    pub invalid: bool,
}

/// What a turn has used so far, counted the same way on a re-run (replayed calls included),
/// so the guest's `session.budgetRemaining` answers the same at the same point.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TurnUse {
    pub host_calls: f64,
    pub bytes_written: f64,
    pub tokens: f64,
    pub cost: f64,
}

/// A decided approval request of a paused turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decided {
    pub id: String,
    pub operation: String,
    pub args: String,
}

#[derive(Debug, Clone)]
struct Open {
    operation: String,
    args: String,
    kind: CallKind,
    fresh: bool,
    timestamp: f64,
    started: Instant,
}

/// How much JSON the results of one turn's operations may hold (the journal keeps them).
pub const MAX_JOURNAL_BYTES: usize = 64 << 20;

/// Arguments longer than this are identified by their SHA-256 in the world log.
const KEY_TEXT_LIMIT: usize = 256;

/// The gate of one turn (see the module documentation).
#[derive(Debug)]
pub struct TurnGate {
    turn_number: u32,
    calls_per_turn: u32,
    calls: u32,
    used: TurnUse,
    /// What was left of each budget when the turn started (`None`: unlimited).
    at_start: [Option<f64>; 6],
    decided: Vec<Decided>,
    world_cursor: usize,
    journal_bytes: usize,
    open: HashMap<u64, Open>,
    next_id: u64,
    stop: Option<Stop>,
}

fn now_ms() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64() * 1000.0)
        .unwrap_or(0.0)
        .floor()
}

/// The world log's key of a call: its name and arguments, long ones by their digest.
pub fn world_key(operation: &str, args: &str) -> String {
    if args.len() <= KEY_TEXT_LIMIT {
        return format!("{operation}\n{args}");
    }
    let digest = Sha256::digest(args.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("{operation}\n#{hex}")
}

/// The message of a re-run that called `operation` where the first run called `expected`.
fn divergence(operation: &str, expected: &str) -> String {
    if expected == operation {
        format!("the resumed turn called {operation} with other arguments than the first time; the turn is not deterministic (it read something that changed), so nothing more was run")
    } else {
        format!("the resumed turn called {operation} where it had called {expected}; the turn is not deterministic (it read something that changed), so nothing more was run")
    }
}

impl TurnGate {
    /// The gate of turn `turn_number` over `ledger` (whose journal is rewound for a re-run),
    /// with the decided approval requests of the turn when it is resumed.
    pub fn begin(
        ledger: &mut Ledger,
        turn_number: u32,
        calls_per_turn: u32,
        decided: Vec<Decided>,
    ) -> Self {
        let mut at_start = [None; 6];
        for kind in BudgetKind::ALL {
            at_start[kind as usize] = ledger.budget.remaining(kind);
        }
        Self::resume(ledger, turn_number, calls_per_turn, decided, at_start)
    }

    /// [`TurnGate::begin`] for a re-run, counting from what was left when the turn first
    /// started (in [`BudgetKind::ALL`]'s order), so the guest sees the same figures.
    pub fn resume(
        ledger: &mut Ledger,
        turn_number: u32,
        calls_per_turn: u32,
        decided: Vec<Decided>,
        at_start: [Option<f64>; 6],
    ) -> Self {
        ledger.journal.rewind();
        TurnGate {
            turn_number,
            calls_per_turn: calls_per_turn.max(1),
            calls: 0,
            used: TurnUse::default(),
            at_start,
            decided,
            world_cursor: 0,
            journal_bytes: 0,
            open: HashMap::new(),
            next_id: 0,
            stop: None,
        }
    }

    /// Why the turn stopped, if it did.
    pub fn stop(&self) -> Option<&Stop> {
        self.stop.as_ref()
    }

    /// Stops the turn (the first reason wins) and returns the reason in force.
    pub fn halt(&mut self, stop: Stop) -> Stop {
        self.stop.get_or_insert(stop).clone()
    }

    /// What is left of `kind` at this point of the turn: what was left when it started, less
    /// what the turn has used (the same on a re-run); wall time and turns as at the start.
    pub fn remaining(&self, kind: BudgetKind) -> Option<f64> {
        let start = self.at_start[kind as usize]?;
        let used = match kind {
            BudgetKind::HostCalls => self.used.host_calls,
            BudgetKind::BytesWritten => self.used.bytes_written,
            BudgetKind::Tokens => self.used.tokens,
            BudgetKind::Cost => self.used.cost,
            BudgetKind::Turns | BudgetKind::WallMs => 0.0,
        };
        Some((start - used).max(0.0))
    }

    fn audit(&self, ledger: &mut Ledger, call: &Call<'_>, error: String) {
        ledger.audit.append(AuditRecord {
            timestamp: now_ms(),
            turn_number: self.turn_number,
            operation: call.operation.to_string(),
            args: call.args.to_string(),
            result: None,
            error: Some(error),
            duration_ms: 0.0,
            tokens_used: None,
        });
    }

    fn refuse(
        &mut self,
        ledger: &mut Ledger,
        call: &Call<'_>,
        audit: bool,
        stop: Stop,
    ) -> Admission {
        if audit {
            self.audit(ledger, call, stop.message().to_string());
        }
        Admission::Stop(self.halt(stop))
    }

    fn budget_stop(e: Exceeded) -> Stop {
        Stop::Budget {
            kind: e.kind,
            message: e.error().message,
        }
    }

    /// Decides whether `call` runs (see [`Admission`]).
    pub fn admit(&mut self, ledger: &mut Ledger, call: &Call<'_>) -> Admission {
        if let Some(stop) = &self.stop {
            return Admission::Stop(stop.clone());
        }
        match call.kind {
            CallKind::World => self.admit_world(ledger, call),
            CallKind::Operation => self.admit_operation(ledger, call),
        }
    }

    fn policy_refusal(&self, ledger: &Ledger, call: &Call<'_>) -> Option<Stop> {
        if let Err(r) = ledger.policy.check(call.operation) {
            return Some(Stop::Policy {
                rule: r.rule,
                message: r.message,
            });
        }
        ledger
            .rules
            .refusal(call.operation, call.args)
            .map(|(rule, message)| Stop::Policy { rule, message })
    }

    /// Counts one call against `callsPerTurn` and the `hostCalls` budget.
    fn charge(&mut self, ledger: &mut Ledger, call: &Call<'_>) -> Option<Admission> {
        self.calls += 1;
        if self.calls > self.calls_per_turn {
            let message = format!(
                "the turn made more than {} operation calls (callsPerTurn)",
                self.calls_per_turn
            );
            return Some(self.refuse(ledger, call, true, Stop::CallLimit { message }));
        }
        if let Err(e) = ledger.budget.take(BudgetKind::HostCalls, 1.0) {
            return Some(self.refuse(ledger, call, true, Self::budget_stop(e)));
        }
        None
    }

    fn open(&mut self, call: &Call<'_>, fresh: bool) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.open.insert(
            id,
            Open {
                operation: call.operation.to_string(),
                args: call.args.to_string(),
                kind: call.kind,
                fresh,
                timestamp: now_ms(),
                started: Instant::now(),
            },
        );
        id
    }

    fn admit_world(&mut self, ledger: &mut Ledger, call: &Call<'_>) -> Admission {
        let key = match call.key {
            Some(key) => key.to_string(),
            None => world_key(call.operation, call.args),
        };
        let index = self.world_cursor;
        self.world_cursor += 1;
        let fresh = match ledger.journal.world_key(index) {
            Some(recorded) if recorded != key => {
                let expected = recorded.split('\n').next().unwrap_or_default().to_string();
                let message = divergence(call.operation, &expected);
                return Admission::Stop(self.halt(Stop::Diverged { message }));
            }
            Some(_) => false,
            None => {
                ledger.journal.push_world_key(key);
                true
            }
        };
        if let Some(stop) = self.policy_refusal(ledger, call) {
            return self.refuse(ledger, call, fresh, stop);
        }
        self.used.host_calls += 1.0;
        if fresh {
            if let Some(refused) = self.charge(ledger, call) {
                return refused;
            }
        }
        if call.bytes > 0.0 {
            self.used.bytes_written += call.bytes;
            if fresh {
                if let Err(e) = ledger.budget.take(BudgetKind::BytesWritten, call.bytes) {
                    return Admission::Stop(self.halt(Self::budget_stop(e)));
                }
            }
        }
        Admission::Run {
            call_id: self.open(call, fresh),
            fresh,
            request: None,
            seq: None,
        }
    }

    fn admit_operation(&mut self, ledger: &mut Ledger, call: &Call<'_>) -> Admission {
        match ledger.journal.next(call.operation, call.args) {
            Replay::Recorded(entry) => {
                let (value, error) = (entry.value.clone(), entry.error.clone());
                self.used.host_calls += 1.0;
                if let Some(usage) = value
                    .as_deref()
                    .and_then(|v| serde_json::from_str::<Json>(v).ok())
                    .and_then(|v| v.get("usage").cloned())
                {
                    self.used.tokens += usage.get("tokens").and_then(Json::as_f64).unwrap_or(0.0);
                    self.used.cost += usage.get("cost").and_then(Json::as_f64).unwrap_or(0.0);
                }
                return Admission::Replay { value, error };
            }
            Replay::Diverged { expected } => {
                let message = divergence(call.operation, &expected.operation);
                return Admission::Stop(self.halt(Stop::Diverged { message }));
            }
            Replay::Live => {}
        }
        if let Some(at) = proto_key_path(call.args) {
            // Refused like a failed call (journalled, so a re-run meets it at the same place):
            // the guest may catch it; nothing ran.
            let message = format!("{}: {at} holds a __proto__ key, which host code would read as a prototype; operations take plain data without one", call.operation);
            let error = serde_json::json!({ "name": "TypeError", "message": message }).to_string();
            ledger.journal.record(JournalEntry {
                operation: call.operation.to_string(),
                args: call.args.to_string(),
                value: None,
                error: Some(error.clone()),
            });
            self.audit(ledger, call, message);
            return Admission::Replay {
                value: None,
                error: Some(error),
            };
        }
        if let Some(stop) = self.policy_refusal(ledger, call) {
            return self.refuse(ledger, call, true, stop);
        }
        let id = format!("{}.{}", self.turn_number, ledger.journal.entries().len());
        let request = self.decided.iter().find(|r| r.id == id).cloned();
        if let Some(r) = &request {
            if r.operation != call.operation || r.args != call.args {
                let clip = |s: &str| s.chars().take(200).collect::<String>();
                let message = format!(
                    "the resumed turn called {}({}) where approval request {id} was for {}({}); nothing was run",
                    call.operation,
                    clip(call.args),
                    r.operation,
                    clip(&r.args)
                );
                return Admission::Stop(self.halt(Stop::Diverged { message }));
            }
        }
        if request.is_none() {
            match call.approval {
                Approval::Ask => return Admission::Ask,
                Approval::Always => {
                    let error = format!("awaiting approval (request {id})");
                    self.audit(ledger, call, error);
                    return Admission::Stop(self.halt(Stop::Approval { request_id: id }));
                }
                Approval::Never => {}
            }
        }
        if let Some(refused) = self.charge(ledger, call) {
            return refused;
        }
        self.used.host_calls += 1.0;
        Admission::Run {
            call_id: self.open(call, true),
            fresh: true,
            request: request.map(|r| r.id),
            seq: Some(ledger.journal.entries().len()),
        }
    }

    /// Audits a call that ran and, for an operation, journals its answer and charges what it
    /// reported. Returns the stop it caused (a budget passed, a journal too large), if any. A
    /// call settled after the turn stopped only has its usage counted.
    pub fn settle(&mut self, ledger: &mut Ledger, call_id: u64, outcome: Outcome) -> Option<Stop> {
        let open = self.open.remove(&call_id)?;
        let duration_ms = open.started.elapsed().as_secs_f64() * 1000.0;
        if outcome.invalid {
            let message = outcome.error.clone().unwrap_or_default();
            self.audit_open(
                ledger,
                &open,
                None,
                Some(message.clone()),
                duration_ms,
                None,
            );
            return Some(self.halt(Stop::Invalid { message }));
        }
        if open.kind == CallKind::Operation {
            if let Some(journal) = &outcome.journal {
                self.journal_bytes += journal.len();
                if self.journal_bytes > MAX_JOURNAL_BYTES {
                    let message = format!(
                        "the results of this turn's operations exceed {} MiB of JSON",
                        MAX_JOURNAL_BYTES >> 20
                    );
                    self.audit_open(
                        ledger,
                        &open,
                        None,
                        Some(message.clone()),
                        duration_ms,
                        None,
                    );
                    return Some(self.halt(Stop::Invalid { message }));
                }
            }
            ledger.journal.record(JournalEntry {
                operation: open.operation.clone(),
                args: open.args.clone(),
                value: outcome.journal.clone(),
                error: if outcome.journal.is_none() {
                    outcome.error.clone()
                } else {
                    None
                },
            });
        }
        if open.fresh {
            self.audit_open(
                ledger,
                &open,
                outcome.result.clone(),
                outcome.error.as_deref().map(|e| {
                    if open.kind == CallKind::Operation {
                        journal_error_message(e)
                    } else {
                        e.to_string()
                    }
                }),
                duration_ms,
                outcome.tokens,
            );
        }
        self.spend(ledger, open.fresh, &outcome)
    }

    fn audit_open(
        &self,
        ledger: &mut Ledger,
        open: &Open,
        result: Option<String>,
        error: Option<String>,
        duration_ms: f64,
        tokens: Option<f64>,
    ) {
        ledger.audit.append(AuditRecord {
            timestamp: open.timestamp,
            turn_number: self.turn_number,
            operation: open.operation.clone(),
            args: open.args.clone(),
            result,
            error,
            duration_ms,
            tokens_used: tokens,
        });
    }

    fn spend(&mut self, ledger: &mut Ledger, fresh: bool, outcome: &Outcome) -> Option<Stop> {
        let mut over = None;
        if outcome.bytes_written > 0.0 {
            self.used.bytes_written += outcome.bytes_written;
            if fresh {
                over = over.or(ledger
                    .budget
                    .record(BudgetKind::BytesWritten, outcome.bytes_written)
                    .err());
            }
        }
        for (kind, amount) in [
            (BudgetKind::Tokens, outcome.tokens),
            (BudgetKind::Cost, outcome.cost),
        ] {
            let Some(amount) = amount else { continue };
            match kind {
                BudgetKind::Tokens => self.used.tokens += amount,
                _ => self.used.cost += amount,
            }
            over = over.or(ledger.budget.record(kind, amount).err());
        }
        over.map(|e| self.halt(Self::budget_stop(e)))
    }

    /// Ends the turn: operations still running are audited as such (their results are not
    /// used); usage they report later is recorded with [`TurnGate::late_usage`].
    pub fn close(&mut self, ledger: &mut Ledger) {
        let mut open: Vec<(u64, Open)> = self.open.drain().collect();
        open.sort_by_key(|(id, _)| *id);
        for (_, o) in open {
            if o.kind == CallKind::Operation {
                self.audit_open(
                    ledger,
                    &o,
                    None,
                    Some("still running when the turn ended; its result was not used".into()),
                    0.0,
                    None,
                );
            }
        }
    }

    /// Tokens and cost an operation reported after its turn ended.
    pub fn late_usage(ledger: &mut Ledger, tokens: f64, cost: f64) {
        let _ = ledger.budget.record(BudgetKind::Tokens, tokens);
        let _ = ledger.budget.record(BudgetKind::Cost, cost);
    }
}

/// Where JSON arguments hold a `__proto__` key, as a path (`args[1].options`): host code reads
/// such a key as a prototype when it merges the data, so an operation never receives one.
fn proto_key_path(args: &str) -> Option<String> {
    if !args.contains("__proto__") {
        return None;
    }
    let parsed: Json = serde_json::from_str(args).ok()?;
    let Json::Array(list) = &parsed else {
        return None;
    };
    // Each container remembers its parent and label, so a path is spelled out only once found.
    let mut nodes: Vec<(Option<usize>, String)> = Vec::new();
    let mut pending: Vec<(&Json, usize)> = Vec::new();
    for (i, v) in list.iter().enumerate().rev() {
        nodes.push((None, format!("args[{i}]")));
        pending.push((v, nodes.len() - 1));
    }
    while let Some((value, node)) = pending.pop() {
        let children: Vec<(String, &Json)> = match value {
            Json::Object(map) => {
                if map.contains_key("__proto__") {
                    let mut labels = Vec::new();
                    let mut at = Some(node);
                    while let Some(n) = at {
                        labels.push(nodes[n].1.clone());
                        at = nodes[n].0;
                    }
                    labels.reverse();
                    return Some(labels.concat().chars().take(200).collect());
                }
                map.iter()
                    .map(|(k, v)| (format!(".{}", k.chars().take(40).collect::<String>()), v))
                    .collect()
            }
            Json::Array(items) => items
                .iter()
                .enumerate()
                .map(|(i, v)| (format!("[{i}]"), v))
                .collect(),
            _ => continue,
        };
        for (label, v) in children {
            if v.is_object() || v.is_array() {
                nodes.push((Some(node), label));
                pending.push((v, nodes.len() - 1));
            }
        }
    }
    None
}

/// The message of a journalled error (`{"name","message"}` JSON text), for the audit log.
fn journal_error_message(error: &str) -> String {
    serde_json::from_str::<Json>(error)
        .ok()
        .and_then(|v| v.get("message").and_then(Json::as_str).map(str::to_string))
        .unwrap_or_else(|| error.to_string())
}

#[cfg(test)]
#[path = "gate_tests.rs"]
mod tests;
